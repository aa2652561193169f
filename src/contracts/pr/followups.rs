//! The optional `Follow-ups:` block: tasks a reviewer proposes beside its verdict. A block is
//! filed whole or not at all, and never changes the verdict.
//!
//! ```text
//! Follow-ups:
//! - <title> | <done_when> | low|medium|high
//! ```
//!
//! or `Follow-ups: none`. It may stand before or after the verdict lines.

use crate::records::pr::FollowUp;

use crate::contracts::pr::block::visible_lines;

/// At most this many tasks in one block.
pub const MAX_FOLLOW_UPS: usize = 5;
/// The longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// The longest done-when, in characters.
pub const MAX_DONE_WHEN_CHARS: usize = 400;

/// Why a block was dropped: one of these, and only one.
pub const FOLLOW_UPS_WARNINGS: &[&str] = &[
    "multiple_blocks",
    "bad_item",
    "bad_severity",
    "too_many",
    "too_long",
    "placeholder",
];

/// The sentence the brief puts before the verdict lines.
pub const FOLLOW_UPS_RULE: &str = "You may propose work that should not hold this PR back in a \
`Follow-ups:` heading with one `- title | done_when | severity` line per task directly under it \
(severity low, medium or high; at most 5), or write `Follow-ups: none`. A block with any fault is \
dropped whole; it never changes your verdict.";

/// What a reply proposes: nothing (no block, or `none`), tasks, or a warning that dropped them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowUps {
    Absent,
    Tasks(Vec<FollowUp>),
    Dropped(&'static str),
}

/// Words a model leaves in when it copies the template instead of filling it.
fn is_placeholder(s: &str) -> bool {
    let t = s
        .trim()
        .trim_matches(['<', '>', '[', ']', '`'])
        .to_ascii_lowercase();
    matches!(
        t.as_str(),
        "" | "title"
            | "done_when"
            | "done when"
            | "severity"
            | "tbd"
            | "todo"
            | "..."
            | "…"
            | "n/a"
    )
}

fn is_heading(line: &str) -> Option<&str> {
    let t = line.trim().trim_matches(|c| c == '*' || c == '_');
    let (key, rest) = t.split_once(':')?;
    let key = key.trim().trim_matches(|c| c == '*' || c == '_');
    (key.eq_ignore_ascii_case("follow-ups") || key.eq_ignore_ascii_case("followups"))
        .then(|| rest.trim().trim_matches(|c| c == '*' || c == '_').trim())
}

/// parseFollowUps (docs/rules.md) over the visible lines of a reply.
pub fn parse_follow_ups(text: &str) -> FollowUps {
    let lines = visible_lines(text);
    let headings: Vec<usize> = (0..lines.len())
        .filter(|&i| is_heading(lines[i]).is_some())
        .collect();
    let Some(&at) = headings.first() else {
        return FollowUps::Absent;
    };
    if headings.len() > 1 {
        return FollowUps::Dropped("multiple_blocks");
    }
    let inline = is_heading(lines[at]).unwrap_or_default();
    if inline.eq_ignore_ascii_case("none") {
        return FollowUps::Absent;
    }
    if !inline.is_empty() {
        return FollowUps::Dropped("bad_item");
    }
    let items: Vec<&str> = lines[at + 1..]
        .iter()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("- ") || l.starts_with("* "))
        .map(|l| l[2..].trim())
        .collect();
    if items.is_empty() {
        return FollowUps::Dropped("bad_item");
    }
    if items.len() > MAX_FOLLOW_UPS {
        return FollowUps::Dropped("too_many");
    }
    let mut tasks = Vec::new();
    for item in items {
        let parts: Vec<&str> = item.split('|').map(str::trim).collect();
        let [title, done_when, severity] = parts[..] else {
            return FollowUps::Dropped("bad_item");
        };
        if title.is_empty() || done_when.is_empty() {
            return FollowUps::Dropped("bad_item");
        }
        if is_placeholder(title) || is_placeholder(done_when) {
            return FollowUps::Dropped("placeholder");
        }
        let severity = severity.to_ascii_lowercase();
        if !["low", "medium", "high"].contains(&severity.as_str()) {
            return FollowUps::Dropped(if is_placeholder(&severity) {
                "placeholder"
            } else {
                "bad_severity"
            });
        }
        if title.chars().count() > MAX_TITLE_CHARS
            || done_when.chars().count() > MAX_DONE_WHEN_CHARS
        {
            return FollowUps::Dropped("too_long");
        }
        tasks.push(FollowUp {
            title: title.into(),
            done_when: done_when.into(),
            severity,
        });
    }
    FollowUps::Tasks(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(text: &str) -> Vec<FollowUp> {
        match parse_follow_ups(text) {
            FollowUps::Tasks(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_block_before_or_after_the_verdict() {
        let after =
            "Verdict: MERGE\nFollow-ups:\n- Add a fuzz test | cargo fuzz runs in CI | Medium\n";
        let t = tasks(after);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].severity, "medium");
        let before = "Follow-ups:\n- a | b | low\n- c | d | high\n\nVerdict: MERGE";
        assert_eq!(tasks(before).len(), 2);
    }

    #[test]
    fn none_and_absent_propose_nothing() {
        assert_eq!(parse_follow_ups("Verdict: MERGE"), FollowUps::Absent);
        assert_eq!(
            parse_follow_ups("Follow-ups: none\nVerdict: MERGE"),
            FollowUps::Absent
        );
        assert_eq!(
            parse_follow_ups("```\nFollow-ups:\n- a | b | low\n```"),
            FollowUps::Absent
        );
    }

    #[test]
    fn every_fault_drops_the_whole_block_with_one_warning() {
        let d = |t: &str| parse_follow_ups(t);
        assert_eq!(
            d("Follow-ups:\n- a | b | low\nFollow-ups:\n- c | d | low"),
            FollowUps::Dropped("multiple_blocks")
        );
        assert_eq!(d("Follow-ups:\n- a | b"), FollowUps::Dropped("bad_item"));
        assert_eq!(
            d("Follow-ups:\n\n- a | b | low"),
            FollowUps::Dropped("bad_item")
        );
        assert_eq!(d("Follow-ups: later"), FollowUps::Dropped("bad_item"));
        assert_eq!(
            d("Follow-ups:\n- a | b | urgent"),
            FollowUps::Dropped("bad_severity")
        );
        let six = format!("Follow-ups:\n{}", "- a | b | low\n".repeat(6));
        assert_eq!(d(&six), FollowUps::Dropped("too_many"));
        let long = format!("Follow-ups:\n- {} | b | low", "x".repeat(121));
        assert_eq!(d(&long), FollowUps::Dropped("too_long"));
        assert_eq!(
            d("Follow-ups:\n- <title> | <done_when> | low"),
            FollowUps::Dropped("placeholder")
        );
        assert_eq!(
            d("Follow-ups:\n- a | b | severity"),
            FollowUps::Dropped("placeholder")
        );
        for w in [
            "multiple_blocks",
            "bad_item",
            "bad_severity",
            "too_many",
            "too_long",
            "placeholder",
        ] {
            assert!(FOLLOW_UPS_WARNINGS.contains(&w));
        }
    }
}
