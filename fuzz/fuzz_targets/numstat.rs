#![no_main]

// The properties live in the library (panel::fuzz::numstat), where cargo test checks them too.
libfuzzer_sys::fuzz_target!(|data: &[u8]| panel::fuzz::numstat(data));
