#![no_main]

use libfuzzer_sys::fuzz_target;
use panel::records::facts::{self, Format};

fuzz_target!(|data: &[u8]| {
    for format in [Format::Gh, Format::Facts, Format::Detect] {
        match facts::parse("fuzz", data, format) {
            Ok(f) => {
                // Facts we accept print as JSON and read back as facts.
                let printed = serde_json::to_vec(&f).unwrap();
                facts::parse("again", &printed, Format::Facts).unwrap();
            }
            Err(e) => assert!(e.to_string().starts_with("fuzz: "), "{e}"),
        }
    }
});
