#![no_main]

use libfuzzer_sys::fuzz_target;
use panel::contracts::pr::followups::{self, FollowUps};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // A block is filed whole within its limits, or not at all.
    if let FollowUps::Tasks(tasks) = followups::parse_follow_ups(text) {
        assert!(tasks.len() <= followups::MAX_FOLLOW_UPS);
        for t in &tasks {
            assert!(t.title.chars().count() <= followups::MAX_TITLE_CHARS);
            assert!(t.done_when.chars().count() <= followups::MAX_DONE_WHEN_CHARS);
            assert!(["low", "medium", "high"].contains(&t.severity.as_str()));
        }
    }
});
