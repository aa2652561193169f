//! `panel-tally --pr --format markdown`: the pull request's verdict as Markdown.

use std::fmt::Write as _;

use crate::records::pr::{PanelVerdict, PrOutcome};
use crate::records::printable::markdown as md;
use crate::rules::pr::aggregate;
use crate::tools::tally::markdown::{details, mark, table};
use crate::tools::tally::wording::{cancelled_line, g10_bar};

/// The mark of a pull request's verdict.
fn pr_mark(v: PrOutcome) -> &'static str {
    mark(v.decision())
}

/// `panel-tally --pr`: the verdict, the members, the findings, the follow-ups, the briefs.
pub fn pr(v: &PanelVerdict) -> String {
    let mut out = String::new();
    let pr = v.pr_name();
    let _ = writeln!(
        out,
        "### {} {} — {} at {}\n",
        pr_mark(v.verdict),
        v.verdict.as_str(),
        md(&pr),
        md(&v.head.chars().take(12).collect::<String>())
    );
    for (list, words) in [(&v.dissent, "Dissent"), (&v.missing, "Missing")] {
        if !list.is_empty() {
            let names: Vec<String> = list.iter().map(|n| md(n)).collect();
            let _ = writeln!(out, "**{words}:** {}\n", names.join(", "));
        }
    }
    if let Some(line) = cancelled_line(v) {
        let _ = writeln!(out, "{}\n", md(&line));
    }
    let rows: Vec<Vec<String>> = v
        .members
        .iter()
        .map(|m| {
            vec![
                md(&m.shape),
                if m.blocking { "blocking" } else { "advisory" }.into(),
                format!(
                    "**{}**",
                    m.verdict.map_or("no verdict", |verdict| verdict.as_str())
                ),
                match &m.reason {
                    Some(why) => format!("{}: {}", md(&m.status), md(why)),
                    None => md(&m.status),
                },
            ]
        })
        .collect();
    table(&mut out, &["member", "role", "verdict", "status"], &rows);
    if !v.findings.is_empty() {
        out.push_str("#### Findings\n\n");
    }
    for f in &v.findings {
        let at = match (&f.path, f.line) {
            (Some(p), Some(l)) => format!(" <code>{}:{l}</code>", md(p)),
            _ => String::new(),
        };
        let role = if f.blocking { "" } else { ", non-blocking" };
        let summary = format!("<b>{}</b>{role}{at}", md(&f.shape));
        details(&mut out, &summary, &md(&f.text));
    }
    if v.findings_dropped > 0 {
        let _ = writeln!(
            out,
            "{} advisory finding(s) dropped: the path:line cited does not exist at the head.\n",
            v.findings_dropped
        );
    }
    if v.findings_truncated {
        let _ = writeln!(
            out,
            "The findings were cut to {} characters.\n",
            aggregate::MAX_PANEL_FINDINGS_CHARS
        );
    }
    if !v.follow_ups.is_empty() {
        out.push_str("#### Follow-ups\n\n");
        let rows: Vec<Vec<String>> = v
            .follow_ups
            .iter()
            .map(|f| vec![md(&f.title), md(&f.done_when), md(&f.severity)])
            .collect();
        table(&mut out, &["follow-up", "done when", "severity"], &rows);
    }
    for b in &v.owner_briefs {
        let summary = format!("Owner brief — <b>{}</b>", md(&b.shape));
        details(&mut out, &summary, &md(&b.text));
    }
    let _ = writeln!(out, "<sub>{}</sub>", md(&g10_bar(v)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pull request's verdict whose every field of text is hostile: a head that is not hex
    /// (cut by characters, never inside one), names and findings with tags and mentions.
    #[test]
    fn a_hostile_pr_verdict_stays_inert() {
        let v: PanelVerdict = serde_json::from_value(serde_json::json!({
            "type": "pr-panel", "repo": "a/b<img src=x>", "pr": 7, "head": "aéééééééééééééé",
            "verdict": "FIX_FIRST", "dissent": ["@owner"], "missing": [],
            "findings": [{"member": "m", "shape": "</summary>", "blocking": true,
                          "path": "a|b", "line": 3, "text": "</details>@x #9"}],
            "findingsDropped": 0, "findingsTruncated": false,
            "followUps": [{"member": "m", "title": "t | u", "doneWhen": "`x`", "severity": "low"}],
            "satisfiesG10": false,
            "members": [{"member": "m", "shape": "s|t", "blocking": true, "verdict": "FIX_FIRST",
                         "status": "ok", "reason": "<b>"}],
        }))
        .unwrap();
        // The text report cuts the same head by characters too.
        assert!(
            crate::tools::tally::pr::text(&v)
                .starts_with("a/b<img src=x>#7 at aééééééé: FIX_FIRST\n")
        );
        let out = pr(&v);
        assert!(
            out.starts_with(
                "### ❌ FIX_FIRST — a/b&#60;img src=x&#62;&#35;&#8203;7 at aééééééééééé\n"
            ),
            "{out}"
        );
        assert_eq!(out.matches("<details>").count(), 1, "{out}");
        assert_eq!(out.matches("</details>").count(), 1, "{out}");
        assert_eq!(out.matches("</summary>").count(), 1, "{out}");
        assert!(
            out.contains("ok: &#60;b&#62;") && out.contains("&#35;&#8203;9"),
            "{out}"
        );
        for live in [
            "@owner", "@x", "&#35;9", "<img", "a|b", "s|t", "t | u", "`x`",
        ] {
            assert!(!out.contains(live), "{live} in {out}");
        }
    }
}
