//! The verdict block a PR reviewer ends its reply with, and whether it names the PR under review.
//!
//! ```text
//! Verdict: MERGE | FIX_FIRST
//! PR: OWNER/REPO#N
//! Head: <the head commit, 8 or more hex digits>
//! CI-policy: unchanged | weakened KEY[, KEY…]        (MERGE)
//! Defect class: <one line>                           (FIX_FIRST)
//! Findings:                                          (FIX_FIRST)
//! - path/to/file.rs:42 — what is wrong and why
//! ```
//!
//! Lines inside code fences or HTML comments are not read, so a quoted example never counts.

use crate::records::pr::{CiPolicy, PrFinding};

/// The PR and head a verdict must name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `OWNER/NAME`.
    pub repo: String,
    /// `None` for a local diff with no PR number.
    pub pr: Option<u64>,
    /// The full head commit.
    pub head: String,
}

impl Target {
    /// How the block writes the PR: `OWNER/NAME#N`, or `OWNER/NAME` without a number.
    pub fn pr_label(&self) -> String {
        match self.pr {
            Some(n) => format!("{}#{n}", self.repo),
            None => self.repo.clone(),
        }
    }
}

/// The verdict block as read, before acceptance judges it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Block {
    /// The value after `Verdict:`, as written (emphasis stripped).
    pub verdict: Option<String>,
    pub pr: Option<String>,
    pub head: Option<String>,
    pub ci_policy: Option<String>,
    pub defect_class: Option<String>,
    /// `Some` when a `Findings:` heading was read.
    pub findings: Option<Vec<PrFinding>>,
    /// Keys given more than once.
    pub repeated: Vec<&'static str>,
}

/// The keys of the block, as they are spelled in the brief.
pub const KEYS: &[&str] = &[
    "Verdict",
    "PR",
    "Head",
    "CI-policy",
    "Defect class",
    "Findings",
];

/// At most this many characters of a reviewer's OWNER-BRIEF block are kept.
pub const MAX_OWNER_BRIEF_CHARS: usize = 4_000;

/// parseOwnerBrief (docs/rules.md): the visible lines between an `OWNER-BRIEF` line and an
/// `END-OWNER-BRIEF` line (either may end in `:`), trimmed, cut at [`MAX_OWNER_BRIEF_CHARS`];
/// `None` without both markers or with nothing between them. Text from the model: show it
/// escaped.
pub fn parse_owner_brief(text: &str) -> Option<String> {
    let marker = |line: &str, name: &str| line.trim().trim_end_matches(':').trim() == name;
    let lines = visible_lines(text);
    let start = lines.iter().position(|l| marker(l, "OWNER-BRIEF"))?;
    let len = lines[start + 1..]
        .iter()
        .position(|l| marker(l, "END-OWNER-BRIEF"))?;
    let body = lines[start + 1..start + 1 + len].join("\n");
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    let mut kept: String = body.chars().take(MAX_OWNER_BRIEF_CHARS).collect();
    if kept.len() < body.len() {
        kept.pop();
        kept.push('…');
    }
    Some(kept)
}

/// Lines outside code fences and HTML comments: what a reviewer says, not what it quotes.
pub fn visible_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    let mut comment = false;
    for line in text.lines() {
        let t = line.trim_start();
        if comment {
            if t.contains("-->") {
                comment = false;
            }
            continue;
        }
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = Some(&t[..3]);
            continue;
        }
        if let Some(rest) = t.strip_prefix("<!--") {
            if !rest.contains("-->") {
                comment = true;
            }
            continue;
        }
        out.push(line);
    }
    out
}

/// Markdown emphasis and quoting a model may wrap a line in.
fn unwrap_markdown(s: &str) -> &str {
    s.trim()
        .trim_start_matches(['>', '#', ' '])
        .trim_matches(|c| c == '*' || c == '_' || c == '`' || c == ' ')
}

/// `Key: value` for one of the block's keys (any case), or `None`.
pub fn key_value(line: &str) -> Option<(&'static str, String)> {
    let line = unwrap_markdown(line);
    let (key, value) = line.split_once(':')?;
    let key = unwrap_markdown(key);
    let found = KEYS.iter().find(|k| k.eq_ignore_ascii_case(key))?;
    Some((found, unwrap_markdown(value).to_string()))
}

/// Reads the verdict block's lines out of a reply. Nothing is judged here.
pub fn parse_verdict_block(text: &str) -> Block {
    let lines = visible_lines(text);
    let mut b = Block::default();
    let mut i = 0;
    while i < lines.len() {
        let Some((key, value)) = key_value(lines[i]) else {
            i += 1;
            continue;
        };
        i += 1;
        let slot = match key {
            "Verdict" => &mut b.verdict,
            "PR" => &mut b.pr,
            "Head" => &mut b.head,
            "CI-policy" => &mut b.ci_policy,
            "Defect class" => &mut b.defect_class,
            _ => {
                if b.findings.is_some() {
                    b.repeated.push(key);
                }
                let (items, used) = finding_items(&lines[i..]);
                i += used;
                let mut items = items;
                if !value.is_empty() {
                    items.insert(0, parse_finding(&value));
                }
                b.findings.get_or_insert_with(Vec::new).extend(items);
                continue;
            }
        };
        if slot.is_some() {
            b.repeated.push(key);
        } else {
            *slot = Some(value);
        }
    }
    b
}

/// The `- ` items directly under a `Findings:` heading; an indented line continues the item
/// before it. Returns the items and how many lines they took.
fn finding_items(lines: &[&str]) -> (Vec<PrFinding>, usize) {
    let mut texts: Vec<String> = Vec::new();
    let mut used = 0;
    for line in lines {
        let t = line.trim();
        if let Some(item) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
            texts.push(item.trim().to_string());
        } else if !t.is_empty() && line.starts_with([' ', '\t']) && !texts.is_empty() {
            let last = texts.last_mut().expect("checked");
            last.push(' ');
            last.push_str(t);
        } else {
            break;
        }
        used += 1;
    }
    (texts.iter().map(|t| parse_finding(t)).collect(), used)
}

/// A finding's `path:line` (a range `path:10-12` cites its first line), then its text.
pub fn parse_finding(item: &str) -> PrFinding {
    let item = item.trim();
    let (first, rest) = match item.find(char::is_whitespace) {
        Some(at) => (&item[..at], item[at..].trim_start()),
        None => (item, ""),
    };
    let cite = first
        .trim_end_matches([':', ',', '.'])
        .trim_matches(|c| c == '`' || c == '*')
        .trim_end_matches([':', ',', '.']);
    if let Some((path, line)) = cite.rsplit_once(':') {
        let digits: String = line.chars().take_while(char::is_ascii_digit).collect();
        let tail = &line[digits.len()..];
        let range_ok = tail.is_empty()
            || tail
                .strip_prefix('-')
                .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit()));
        if !path.is_empty() && !digits.is_empty() && range_ok && !path.contains("://") {
            let text = rest
                .trim_start_matches(['—', '–', '-', ':'])
                .trim()
                .to_string();
            return PrFinding {
                path: Some(path.trim_start_matches("./").to_string()),
                line: digits.parse().ok(),
                text,
            };
        }
    }
    PrFinding {
        path: None,
        line: None,
        text: item.to_string(),
    }
}

/// namesTarget (docs/rules.md): the block names this repository (case ignored), this PR number and
/// this head (the full commit, or a prefix of 8 or more hex digits). `Err` says what it names
/// instead.
pub fn names_target(pr: &str, head: &str, target: &Target) -> Result<(), String> {
    let (repo, number) = split_pr(pr).ok_or_else(|| format!("PR: {pr:?} is not OWNER/REPO#N"))?;
    if !repo.eq_ignore_ascii_case(&target.repo) || number != target.pr {
        return Err(format!("it names {pr}, not {}", target.pr_label()));
    }
    let head = head.trim();
    let hex = head.len() >= 8 && head.chars().all(|c| c.is_ascii_hexdigit());
    let (ours, theirs) = (target.head.to_ascii_lowercase(), head.to_ascii_lowercase());
    // Either may be abbreviated (a plan made with a short --head); both name one commit.
    if !hex || !(ours.starts_with(&theirs) || (ours.len() >= 8 && theirs.starts_with(&ours))) {
        return Err(format!(
            "it names head {head}, not {}",
            &target.head[..target.head.len().min(12)]
        ));
    }
    Ok(())
}

/// `OWNER/REPO#N`, `OWNER/REPO/pull/N`, a github.com pull URL, or `OWNER/REPO` alone.
fn split_pr(pr: &str) -> Option<(String, Option<u64>)> {
    let s = pr.trim();
    let s = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"))
        .map(|rest| rest.split_once('/').map_or("", |(_, path)| path))
        .unwrap_or(s);
    let (repo, n) = if let Some((repo, n)) = s.split_once('#') {
        (repo, Some(n))
    } else if let Some((repo, n)) = s.split_once("/pull/") {
        (repo, Some(n))
    } else {
        (s, None)
    };
    let repo = repo.trim_end_matches('/');
    if repo.split('/').count() != 2 || repo.split('/').any(str::is_empty) {
        return None;
    }
    let number = match n {
        Some(n) => Some(n.trim().trim_end_matches('/').parse().ok()?),
        None => None,
    };
    Some((repo.to_string(), number))
}

/// The CI-policy line: `unchanged`, or `weakened` and the keys it names.
pub fn parse_ci_policy(value: &str) -> Option<CiPolicy> {
    let v = value.trim();
    let (state, rest) = match v.find(char::is_whitespace) {
        Some(at) => (&v[..at], v[at..].trim()),
        None => (v, ""),
    };
    match state.to_ascii_lowercase().as_str() {
        "unchanged" if rest.is_empty() => Some(CiPolicy {
            state: "unchanged".into(),
            keys: Vec::new(),
        }),
        "weakened" => {
            let keys: Vec<String> = rest
                .split([',', ' '])
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(str::to_string)
                .collect();
            (!keys.is_empty()).then(|| CiPolicy {
                state: "weakened".into(),
                keys,
            })
        }
        _ => None,
    }
}

/// The PR the contracts' tests review: acme/app#7 at 0123456789abcdef….
#[cfg(test)]
pub(crate) fn sample_target() -> Target {
    Target {
        repo: "acme/app".into(),
        pr: Some(7),
        head: "0123456789abcdef0123456789abcdef01234567".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        sample_target()
    }

    #[test]
    fn fenced_and_commented_lines_are_not_read() {
        let text = "a\n```\nVerdict: MERGE\n```\n<!-- Verdict: MERGE\n-->\n<!-- x -->\nb\n~~~md\nc\n~~~\nd";
        assert_eq!(visible_lines(text), ["a", "b", "d"]);
    }

    #[test]
    fn the_block_is_read_with_emphasis_and_any_key_case() {
        let b = parse_verdict_block(
            "I read it.\n\n**Verdict:** FIX_FIRST\npr: acme/app#7\nHead: 01234567\n\
             Defect class: missing bound check\nFindings:\n- src/a.rs:12 — overflow\n  on empty input\n\
             - `src/b.rs:3-5`: wrong\n- no location here\n\nThanks.",
        );
        assert_eq!(b.verdict.as_deref(), Some("FIX_FIRST"));
        assert_eq!(b.pr.as_deref(), Some("acme/app#7"));
        assert_eq!(b.defect_class.as_deref(), Some("missing bound check"));
        let f = b.findings.unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[0],
            PrFinding {
                path: Some("src/a.rs".into()),
                line: Some(12),
                text: "overflow on empty input".into()
            }
        );
        assert_eq!(
            (f[1].path.as_deref(), f[1].line),
            (Some("src/b.rs"), Some(3))
        );
        assert_eq!(f[2].path, None);
        assert!(b.repeated.is_empty());
    }

    #[test]
    fn a_repeated_key_is_noted() {
        let b = parse_verdict_block("Verdict: MERGE\nVerdict: FIX_FIRST");
        assert_eq!(b.verdict.as_deref(), Some("MERGE"));
        assert_eq!(b.repeated, ["Verdict"]);
    }

    #[test]
    fn names_target_ignores_repo_case_and_wants_this_head() {
        let t = target();
        assert!(names_target("Acme/App#7", "0123456789ABCDEF", &t).is_ok());
        assert!(names_target("https://github.com/acme/app/pull/7", &t.head, &t).is_ok());
        assert!(
            names_target("acme/app#8", &t.head, &t)
                .unwrap_err()
                .contains("acme/app#8")
        );
        assert!(names_target("acme/other#7", &t.head, &t).is_err());
        assert!(
            names_target("acme/app#7", "0123456", &t).is_err(),
            "too short"
        );
        assert!(
            names_target("acme/app#7", "fedcba9876", &t)
                .unwrap_err()
                .contains("head")
        );
        assert!(names_target("app", &t.head, &t).is_err());
        let short = Target {
            head: "01234567".into(),
            ..target()
        };
        assert!(names_target("acme/app#7", &t.head, &short).is_ok());
        assert!(names_target("acme/app#7", "0123456f", &short).is_err());
        let local = Target {
            pr: None,
            ..target()
        };
        assert!(names_target("acme/app", &t.head, &local).is_ok());
        assert!(names_target("acme/app#7", &t.head, &local).is_err());
    }

    #[test]
    fn ci_policy_lines() {
        assert_eq!(parse_ci_policy("unchanged").unwrap().state, "unchanged");
        assert_eq!(
            parse_ci_policy("weakened required-checks, triggers")
                .unwrap()
                .keys,
            ["required-checks", "triggers"]
        );
        assert_eq!(parse_ci_policy("weakened"), None);
        assert_eq!(parse_ci_policy("maybe"), None);
    }

    #[test]
    fn findings_without_a_line_number_cite_nothing() {
        assert_eq!(parse_finding("src/a.rs: bad").path, None);
        assert_eq!(parse_finding("see https://x.io:443 now").path, None);
        assert_eq!(
            parse_finding("./src/a.rs:9 bad").path.as_deref(),
            Some("src/a.rs")
        );
    }
}
