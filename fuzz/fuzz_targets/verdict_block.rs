#![no_main]

use libfuzzer_sys::fuzz_target;
use panel::contracts::pr::block;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = block::parse_verdict_block(text);
    for line in block::visible_lines(text) {
        let _ = block::key_value(line);
        let _ = block::parse_finding(line);
        let _ = block::parse_ci_policy(line);
    }
});
