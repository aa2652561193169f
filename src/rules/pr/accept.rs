//! Acceptance: whether a reviewer's last message is a verdict this panel counts.
//!
//! A verdict counts only when its block is whole and names this PR at this head, and when the
//! reviewer read something before it judged. Anything else is no verdict, with the reason.

use crate::contracts::pr::block::{self, Block, Target};
use crate::contracts::pr::followups::{self, FollowUps};
use crate::records::pr::FollowUp;
use crate::records::pr::{CiPolicy, PrFinding, PrStatus, PrVerdict};

/// The reason of a verdict from a reviewer that read nothing.
pub const DEPTH_FLOOR_REASON: &str =
    "a verdict without one investigative call: the reviewer judged code it did not read";
/// The reason of a member stopped by its harness's usage limit.
pub const USAGE_LIMIT_REASON: &str = "the harness reported its usage limit before a verdict";

/// At most this many findings of one FIX_FIRST are kept.
pub const MAX_FINDINGS: usize = 30;
/// At most this many characters of one FIX_FIRST's findings are kept.
pub const MAX_FIX_FIRST_TEXT_CHARS: usize = 16_000;

/// A verdict that counts, with what rides along with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Accepted {
    pub verdict: PrVerdict,
    pub ci_policy: Option<CiPolicy>,
    pub defect_class: Option<String>,
    pub findings: Vec<PrFinding>,
    pub findings_truncated: bool,
    pub follow_ups: Vec<FollowUp>,
    pub follow_ups_warning: Option<&'static str>,
    /// The reviewer's OWNER-BRIEF block, whichever the verdict.
    pub owner_brief: Option<String>,
}

/// A reply that is no verdict, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    pub status: PrStatus,
    pub reason: String,
}

/// isInvestigativeCall (docs/rules.md): a call that reads the code. Claude's read tools by name;
/// a shell command line (codex reads through its shell) when a program in it reads files.
pub fn is_investigative_call(call: &str) -> bool {
    const TOOLS: &[&str] = &[
        "read",
        "grep",
        "glob",
        "ls",
        "notebookread",
        "bash",
        "view",
        "search",
    ];
    const PROGRAMS: &[&str] = &[
        "cat", "sed", "head", "tail", "less", "more", "nl", "rg", "grep", "egrep", "ag", "find",
        "fd", "ls", "tree", "git", "wc", "awk", "jq", "diff", "stat", "file", "bat", "cut", "sort",
        "xxd", "od",
    ];
    let call = call.trim();
    if !call.contains(char::is_whitespace) {
        return TOOLS.contains(&call.to_ascii_lowercase().as_str())
            || PROGRAMS.contains(&call.rsplit('/').next().unwrap_or(call));
    }
    // `bash -lc 'cat a | head'`: look inside the quoted script too.
    call.split(|c: char| "|;&()'\"\n".contains(c))
        .filter_map(|seg| seg.split_whitespace().next())
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .any(|w| PROGRAMS.contains(&w))
}

/// Whether a reply is a short usage-limit notice: the words a harness prints when it stops.
pub fn is_usage_limit_notice(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    t.len() <= 400
        && [
            "usage limit",
            "hit your limit",
            "limit reached",
            "limit will reset",
        ]
        .iter()
        .any(|w| t.contains(w))
}

/// The reset time a usage-limit notice gives: claude's `…|<unix seconds>`, codex's
/// `try again at 3:15 PM`, or `resets 3pm (UTC)`.
pub fn reset_time(notice: &str) -> Option<String> {
    if let Some(at) = notice.find("limit reached|") {
        let digits: String = notice[at + "limit reached|".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !digits.is_empty() {
            return Some(digits);
        }
    }
    for lead in ["try again at ", "resets "] {
        if let Some(at) = notice.find(lead) {
            let rest = &notice[at + lead.len()..];
            let end = rest.find(['"', '\n', '\\']).unwrap_or(rest.len());
            let when = rest[..end].trim().trim_end_matches('.').trim();
            if !when.is_empty() {
                return Some(when.chars().take(60).collect());
            }
        }
    }
    None
}

/// readMalformed (docs/rules.md): the block's refusal, if any, as `code: detail`.
pub fn read_malformed(b: &Block, target: &Target) -> Result<PrVerdict, String> {
    let Some(verdict) = &b.verdict else {
        return Err("no-verdict: the reply has no `Verdict:` line".into());
    };
    if let Some(key) = b.repeated.first() {
        return Err(format!("repeated-key: `{key}:` is given more than once"));
    }
    let v = match verdict.as_str() {
        "MERGE" => PrVerdict::Merge,
        "FIX_FIRST" => PrVerdict::FixFirst,
        other => {
            return Err(format!(
                "bad-verdict: `Verdict: {other}` is neither MERGE nor FIX_FIRST"
            ));
        }
    };
    let (Some(pr), Some(head)) = (&b.pr, &b.head) else {
        return Err("no-target: the block needs both a `PR:` and a `Head:` line".into());
    };
    block::names_target(pr, head, target).map_err(|why| format!("wrong-target: {why}"))?;
    if v == PrVerdict::FixFirst {
        if b.defect_class.as_deref().is_none_or(str::is_empty) {
            return Err("no-defect-class: a FIX_FIRST needs a `Defect class:` line".into());
        }
        if b.findings.as_ref().is_none_or(Vec::is_empty) {
            return Err(
                "no-findings: a FIX_FIRST needs `Findings:` with `- path:line — …` items".into(),
            );
        }
    }
    Ok(v)
}

/// boundedFindings (docs/rules.md): the first findings that fit in the bound, the one that crosses
/// it cut short; `true` when anything was cut.
pub fn bounded_findings(
    findings: &[PrFinding],
    max_chars: usize,
    max_items: usize,
) -> (Vec<PrFinding>, bool) {
    let mut out = Vec::new();
    let mut left = max_chars;
    for f in findings.iter().take(max_items) {
        let n = f.text.chars().count();
        if n <= left {
            left -= n;
            out.push(f.clone());
        } else {
            if left > 0 {
                let mut cut = f.clone();
                cut.text = f
                    .text
                    .chars()
                    .take(left.saturating_sub(1))
                    .collect::<String>()
                    + "…";
                out.push(cut);
            }
            return (out, true);
        }
    }
    (out, findings.len() > max_items)
}

/// acceptVerdict (docs/rules.md) over a reviewer's last message and the calls it made (`None`:
/// the harness shows none).
pub fn accept_verdict(
    text: &str,
    target: &Target,
    tool_calls: Option<&[String]>,
) -> Result<Accepted, Refused> {
    let malformed = |reason: String| Refused {
        status: PrStatus::Malformed,
        reason,
    };
    if is_usage_limit_notice(text) {
        return Err(malformed(
            "usage-limit-words: the reviewer wrote a usage-limit notice; the harness did not report one"
                .into(),
        ));
    }
    let b = block::parse_verdict_block(text);
    let verdict = read_malformed(&b, target).map_err(malformed)?;
    if !tool_calls.is_some_and(|calls| calls.iter().any(|c| is_investigative_call(c))) {
        return Err(Refused {
            status: PrStatus::DepthFloor,
            reason: DEPTH_FLOOR_REASON.into(),
        });
    }
    let (findings, findings_truncated) = match verdict {
        PrVerdict::FixFirst => bounded_findings(
            b.findings.as_deref().unwrap_or_default(),
            MAX_FIX_FIRST_TEXT_CHARS,
            MAX_FINDINGS,
        ),
        PrVerdict::Merge => (Vec::new(), false),
    };
    let (follow_ups, follow_ups_warning) = match followups::parse_follow_ups(text) {
        FollowUps::Absent => (Vec::new(), None),
        FollowUps::Tasks(t) => (t, None),
        FollowUps::Dropped(w) => (Vec::new(), Some(w)),
    };
    Ok(Accepted {
        verdict,
        ci_policy: match verdict {
            PrVerdict::Merge => b.ci_policy.as_deref().and_then(block::parse_ci_policy),
            PrVerdict::FixFirst => None,
        },
        defect_class: match verdict {
            PrVerdict::FixFirst => b.defect_class.map(|d| d.chars().take(200).collect()),
            PrVerdict::Merge => None,
        },
        findings,
        findings_truncated,
        follow_ups,
        follow_ups_warning,
        owner_brief: block::parse_owner_brief(text),
    })
}

/// The reason of a member whose model the harness refused, at its sonnet profile too when it
/// has one (the seed's SPAWN_REFUSED_REASON).
pub const SPAWN_REFUSED_REASON: &str = "spawn-refused: the harness refused the reviewer's model";

/// "An opus spawn the dispatch refuses is tried once at its sonnet profile and the member is
/// degraded; a second refusal is a none with SPAWN_REFUSED_REASON" (seed 002): the sonnet
/// profile and seat a member goes to after a refused spawn. Only a profile the plan's
/// `sonnetFor` maps (an opus one) has one, at the seat the plan gives that sonnet profile
/// (`sonnetSeats`, else the seat of a member planned at it).
pub fn sonnet_fallback(
    plan: &crate::records::plan::PanelPlan,
    m: &crate::records::plan::Member,
) -> Option<(String, String)> {
    let profile = plan.sonnet_for.get(&m.profile)?;
    let seat = plan.sonnet_seats.get(profile).cloned().or_else(|| {
        plan.members
            .iter()
            .find(|o| &o.profile == profile)
            .map(|o| o.seat.clone())
    })?;
    Some((profile.clone(), seat))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ways a block is refused, by code: each malformed record's reason starts with one.
    pub const MALFORMED_REFUSALS: &[&str] = &[
        "no-verdict",
        "bad-verdict",
        "repeated-key",
        "no-target",
        "wrong-target",
        "no-defect-class",
        "no-findings",
        "usage-limit-words",
    ];

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

    fn target() -> Target {
        Target {
            repo: "acme/app".into(),
            pr: Some(7),
            head: HEAD.into(),
        }
    }

    fn read() -> Vec<String> {
        vec!["Read".into()]
    }

    fn accept(text: &str) -> Result<Accepted, Refused> {
        accept_verdict(text, &target(), Some(&read()))
    }

    fn code(r: Result<Accepted, Refused>) -> String {
        let r = r.unwrap_err();
        assert_eq!(r.status, PrStatus::Malformed, "{r:?}");
        r.reason.split(':').next().unwrap().to_string()
    }

    #[test]
    fn a_merge_naming_this_pr_and_head_is_accepted() {
        let a = accept(&format!(
            "Looks right.\nVerdict: MERGE\nPR: ACME/app#7\nHead: {HEAD}\nCI-policy: unchanged\n"
        ))
        .unwrap();
        assert_eq!(a.verdict, PrVerdict::Merge);
        assert_eq!(a.ci_policy.unwrap().state, "unchanged");
        assert!(a.findings.is_empty());
    }

    #[test]
    fn a_fix_first_keeps_its_findings_and_defect_class() {
        let a = accept(&format!(
            "Verdict: FIX_FIRST\nPR: acme/app#7\nHead: {HEAD}\nDefect class: unchecked input\n\
             Findings:\n- src/a.rs:3 — panics on empty\nFollow-ups:\n- Fuzz it | a fuzz target runs | low"
        ))
        .unwrap();
        assert_eq!(a.verdict, PrVerdict::FixFirst);
        assert_eq!(a.defect_class.as_deref(), Some("unchecked input"));
        assert_eq!(a.findings[0].path.as_deref(), Some("src/a.rs"));
        assert_eq!(a.follow_ups.len(), 1);
    }

    #[test]
    fn a_bad_follow_ups_block_never_changes_the_verdict() {
        let a = accept(&format!(
            "Verdict: MERGE\nPR: acme/app#7\nHead: {HEAD}\nFollow-ups:\n- a | b | urgent"
        ))
        .unwrap();
        assert_eq!(a.verdict, PrVerdict::Merge);
        assert_eq!(a.follow_ups_warning, Some("bad_severity"));
    }

    #[test]
    fn refused_and_misaimed_blocks_are_malformed() {
        assert_eq!(code(accept("I think it is fine.")), "no-verdict");
        assert_eq!(
            code(accept(&format!(
                "Verdict: LGTM\nPR: acme/app#7\nHead: {HEAD}"
            ))),
            "bad-verdict"
        );
        assert_eq!(code(accept("Verdict: MERGE\nPR: acme/app#7")), "no-target");
        assert_eq!(
            code(accept(&format!(
                "Verdict: MERGE\nPR: acme/app#8\nHead: {HEAD}"
            ))),
            "wrong-target"
        );
        assert_eq!(
            code(accept("Verdict: MERGE\nPR: acme/app#7\nHead: ffffffffffff")),
            "wrong-target"
        );
        assert_eq!(
            code(accept(&format!(
                "Verdict: MERGE\nVerdict: MERGE\nPR: acme/app#7\nHead: {HEAD}"
            ))),
            "repeated-key"
        );
        let ff = format!("Verdict: FIX_FIRST\nPR: acme/app#7\nHead: {HEAD}\n");
        assert_eq!(
            code(accept(&format!("{ff}Findings:\n- a.rs:1 x"))),
            "no-defect-class"
        );
        assert_eq!(code(accept(&format!("{ff}Defect class: x"))), "no-findings");
        for c in [
            "no-verdict",
            "bad-verdict",
            "no-target",
            "wrong-target",
            "repeated-key",
            "no-findings",
            "no-defect-class",
            "usage-limit-words",
        ] {
            assert!(MALFORMED_REFUSALS.contains(&c));
        }
    }

    #[test]
    fn a_verdict_from_a_reviewer_that_read_nothing_is_under_the_depth_floor() {
        let text = format!("Verdict: MERGE\nPR: acme/app#7\nHead: {HEAD}");
        for calls in [
            None,
            Some(vec![]),
            Some(vec!["TodoWrite".to_string(), "file_change".into()]),
        ] {
            let r = accept_verdict(&text, &target(), calls.as_deref()).unwrap_err();
            assert_eq!(r.status, PrStatus::DepthFloor);
            assert_eq!(r.reason, DEPTH_FLOOR_REASON);
        }
        let codex = vec!["/bin/bash -lc 'cat src/lib.rs'".to_string()];
        assert!(accept_verdict(&text, &target(), Some(&codex)).is_ok());
    }

    #[test]
    fn investigative_calls() {
        for yes in [
            "Read",
            "Grep",
            "Glob",
            "LS",
            "bash -lc 'rg foo src | head'",
            "sed -n 1,40p a.rs",
            "/usr/bin/git show HEAD",
        ] {
            assert!(is_investigative_call(yes), "{yes}");
        }
        for no in [
            "Write",
            "Edit",
            "TodoWrite",
            "StructuredOutput",
            "bash -lc 'echo MERGE'",
            "file_change",
            "mcp_tool_call",
        ] {
            assert!(!is_investigative_call(no), "{no}");
        }
    }

    #[test]
    fn usage_limit_words_from_the_reviewer_are_malformed() {
        assert_eq!(
            code(accept("Claude AI usage limit reached|1767225600")),
            "usage-limit-words"
        );
        assert!(!is_usage_limit_notice(
            &"a review that mentions the usage limit code. ".repeat(20)
        ));
    }

    #[test]
    fn reset_times_of_each_harness() {
        assert_eq!(
            reset_time("Claude AI usage limit reached|1767225600").as_deref(),
            Some("1767225600")
        );
        assert_eq!(
            reset_time("ERROR: You've hit your usage limit. Upgrade … or try again at 3:15 PM.")
                .as_deref(),
            Some("3:15 PM")
        );
        assert_eq!(
            reset_time("You've hit your limit · resets 3pm (UTC)").as_deref(),
            Some("3pm (UTC)")
        );
        assert_eq!(reset_time("usage limit"), None);
    }

    #[test]
    fn findings_are_bounded() {
        let f = |t: &str| PrFinding {
            path: None,
            line: None,
            text: t.into(),
        };
        let (kept, cut) = bounded_findings(&[f("aaaa"), f("bbbb"), f("cccc")], 10, 30);
        assert!(cut);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[2].text, "c…");
        let (kept, cut) = bounded_findings(&[f("a"), f("b")], 100, 1);
        assert_eq!((kept.len(), cut), (1, true));
        assert_eq!(bounded_findings(&[f("a")], 100, 5), (vec![f("a")], false));
    }
}
