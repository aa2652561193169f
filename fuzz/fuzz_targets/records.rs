#![no_main]

use libfuzzer_sys::fuzz_target;
use panel::records::input::Input;
use panel::records::{self, VerdictRecord};
use panel::records::review::ReviewRecord;

fuzz_target!(|data: &[u8]| {
    // The line reader over the raw bytes, then each line as both record kinds.
    let mut input = Input::from_reader("fuzz", std::io::Cursor::new(data.to_vec()));
    let mut buf = String::new();
    let mut lines = 0u64;
    while let Ok(true) = input.next_line(&mut buf) {
        lines += 1;
        assert_eq!(input.line_number(), lines);
        assert!(!buf.contains('\n'));
        let at = || input.at();
        if let Ok(rec) = records::parse::<VerdictRecord>(&buf, &at, &["verdict"]) {
            // A record we accept writes back and reads back the same.
            let mut out = Vec::new();
            records::write(&mut out, &rec).unwrap();
            let line = std::str::from_utf8(&out).unwrap().trim_end();
            let again = records::parse::<VerdictRecord>(line, &at, &["verdict"]).unwrap();
            assert_eq!(again.judge, rec.judge);
            assert_eq!(again.verdict, rec.verdict);
        }
        if let Err(e) = records::parse::<ReviewRecord>(&buf, &at, &["review"]) {
            assert!(e.to_string().starts_with("fuzz: line "), "{e}");
        }
    }
});
