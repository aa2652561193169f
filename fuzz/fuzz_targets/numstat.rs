#![no_main]

use libfuzzer_sys::fuzz_target;
use panel::records::facts::{self, Format};

fuzz_target!(|data: &[u8]| {
    match facts::parse("fuzz", data, Format::Numstat) {
        // Every file accepted names a path.
        Ok(f) => assert!(f.changed_files.iter().all(|c| !c.path.is_empty()), "{f:?}"),
        Err(e) => assert!(e.to_string().starts_with("fuzz: "), "{e}"),
    }
    if let Ok(line) = std::str::from_utf8(data) {
        let _ = facts::numstat_line(line);
    }
});
