#![no_main]

use libfuzzer_sys::fuzz_target;
use panel::records::review;

fuzz_target!(|data: &[u8]| {
    let Ok(serde_json::Value::Object(answer)) = serde_json::from_slice(data) else {
        return;
    };
    if let Ok(r) = review::check(&answer) {
        for f in &r.findings {
            assert!(!f.evidence.trim().is_empty() && !f.fix.trim().is_empty());
            assert!(f.line != Some(0));
        }
    }
});
