//! `panel-tally --format markdown`: each report as GitHub-flavoured Markdown, for a pull
//! request's comment (`gh pr comment --body-file -`) or a job summary (`$GITHUB_STEP_SUMMARY`).
//!
//! Every report has the same shape: the decision first (a heading), a table (of judges,
//! reviewers, findings or members), then each reason or finding in a collapsible `<details>`.
//! Only our own words are written as they are; every piece of text read from a record (a
//! reason, a finding, a name, a lens, a path) goes through [`records::text::markdown`], which
//! leaves it no syntax: it cannot close a `<details>`, mention anyone, link an issue or load an
//! image.
//!
//! A report kind added to panel-tally adds one function here that returns its Markdown, and its
//! arm where mod.rs picks the format.

use std::fmt::Write as _;

use serde_json::Value;

use crate::records::Decision;
use crate::records::text::markdown as md;
use crate::rules::pr::aggregate::{self, PanelVerdict, PrOutcome};
use crate::tools::tally::count::{Tally, Totals};
use crate::tools::tally::reviews::ThresholdOutcome;
use crate::tools::tally::words::{
    cancelled_line, early_panel_line, g10_bar, panel_line, panels_line, reason_column,
    status_column, uncaused_line,
};

/// The mark a decision's heading starts with.
fn mark(d: Decision) -> &'static str {
    match d {
        Decision::Pass => "✅",
        Decision::Fail => "❌",
        Decision::NoDecision => "⚠️",
    }
}

/// A table with our own headers; the cells are Markdown already.
pub(crate) fn table(out: &mut String, headers: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let _ = writeln!(out, "|{}", " --- |".repeat(headers.len()));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

/// A collapsible section: `summary` is Markdown-escaped text and our words, `body` a paragraph.
/// The blank lines let GitHub read the body as Markdown; `body` is one line, so nothing in it
/// can end the section.
pub(crate) fn details(out: &mut String, summary: &str, body: &str) {
    let body = if body.is_empty() {
        "<i>(none)</i>"
    } else {
        body
    };
    let _ = write!(
        out,
        "<details><summary>{summary}</summary>\n\n{body}\n\n</details>\n\n"
    );
}

/// A judge's confidence, or a dash when it gave none.
fn confidence(c: Option<f64>) -> String {
    c.map_or_else(|| "–".into(), |c| format!("{c:.2}"))
}

/// One panel of verdicts: the decision and the PANEL line, the judges, each reason.
pub fn verdicts(t: &Tally) -> String {
    let mut out = String::new();
    let d = t.decision();
    let _ = writeln!(
        out,
        "### {} Panel: {} ({} of {} judges hold, {} needed)\n",
        mark(d),
        d.as_str(),
        t.counts.holds,
        t.counts.judges,
        t.threshold
    );
    let panel = early_panel_line(t);
    let panel = panel.unwrap_or_else(|| panel_line(&t.counts, &t.abstentions, t.missing));
    let _ = writeln!(out, "**{panel}**\n");
    if let Some(line) = uncaused_line(t, &|j| md(j)) {
        let _ = writeln!(out, "{line}\n");
    }
    let rows: Vec<Vec<String>> = t
        .judges
        .iter()
        .map(|j| {
            vec![
                md(j.judge),
                md(j.lens),
                md(j.seat),
                format!("**{}**", md(status_column(j))),
                confidence(j.confidence),
            ]
        })
        .collect();
    table(
        &mut out,
        &["judge", "lens", "seat", "verdict", "confidence"],
        &rows,
    );
    for j in &t.judges {
        let summary = format!("<b>{}</b> — {}", md(j.judge), md(status_column(j)));
        details(&mut out, &summary, &md(reason_column(j)));
    }
    if t.missing > 0 {
        let _ = writeln!(
            out,
            "{} judge(s) announced by their run never sent a record.\n",
            t.missing
        );
    }
    let _ = write!(out, "<sub>candidate {}", md(t.candidate));
    for run in &t.runs {
        let _ = write!(out, " · verdicts: {}", md(run));
    }
    out.push_str("</sub>\n");
    out
}

/// The head of a stream of many panels (`--each`): the decision over all of them first.
pub fn each(totals: &Totals) -> String {
    let d = totals.decision();
    format!(
        "## {} Panels: {}\n\n**{}**\n\n",
        mark(d),
        d.as_str(),
        panels_line(totals)
    )
}

/// The threshold panel over review records.
pub fn threshold(o: &ThresholdOutcome) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### {} Review panel: {} ({} of {} reviewers passed the work, {} needed)\n",
        mark(o.status),
        o.status.as_str(),
        o.passed,
        o.reviewers,
        o.required
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    rows.extend(o.accepted.iter().map(|r| vec![md(r), "**pass**".into()]));
    rows.extend(o.rejected.iter().map(|r| vec![md(r), "**revise**".into()]));
    rows.extend(
        o.errors
            .iter()
            .map(|(r, why)| vec![md(r), format!("no decision: {}", md(why))]),
    );
    table(&mut out, &["reviewer", "decision"], &rows);
    if !o.findings.is_empty() {
        let _ = writeln!(
            out,
            "#### {}\n",
            if o.status == Decision::Pass {
                "Findings on the record (not sent back)"
            } else {
                "Findings that go back to the writer"
            }
        );
        for f in &o.findings {
            let summary = format!("<b>{}</b> {}", f.severity.as_str(), md(&f.id));
            let body = format!("{}<br><b>fix:</b> {}", md(&f.evidence), md(&f.fix));
            details(&mut out, &summary, &body);
        }
    }
    out
}

/// A string field of a JSON record, or nothing.
fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

/// A list of names in a JSON record, escaped and joined.
fn names(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|n| md(n.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// panel-vote's stream, from the tally record the synthesis report makes of it.
pub fn synthesis(tally: &Value, decision: Decision) -> String {
    let mut out = String::new();
    let status = field(tally, "status");
    let _ = writeln!(out, "### {} Synthesis: {}\n", mark(decision), md(status));
    let _ = writeln!(
        out,
        "**panel: {}** — {}\n",
        md(field(tally, "panelStatus")),
        md(field(tally, "reason"))
    );
    if let Some(route) = tally["route"].as_str() {
        let _ = writeln!(
            out,
            "**route: {}** — {}\n",
            md(route),
            md(field(tally, "routeReason"))
        );
    }
    if tally["mergeFailed"] == true {
        out.push_str("The merge failed: the findings are unmerged.\n\n");
    }
    for (key, words) in [
        ("noReviewFrom", "No review from"),
        ("noVotesFrom", "No votes from"),
    ] {
        if tally[key].as_array().is_some_and(|a| !a.is_empty()) {
            let _ = writeln!(out, "{words}: {}\n", names(&tally[key]));
        }
    }
    let empty = Vec::new();
    let list = |key: &str| tally[key].as_array().unwrap_or(&empty).clone();
    let findings = list("findings");
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            vec![
                md(field(f, "id")),
                md(field(f, "severity")),
                md(field(f, "result")),
                names(&f["raisedBy"]),
            ]
        })
        .collect();
    if !rows.is_empty() {
        out.push_str("#### For the writer\n\n");
    }
    table(
        &mut out,
        &["finding", "severity", "result", "raised by"],
        &rows,
    );
    for f in &findings {
        let summary = format!(
            "<b>{}</b> {}, {}",
            md(field(f, "id")),
            md(field(f, "severity")),
            md(field(f, "result"))
        );
        let mut body = format!(
            "{}<br><b>fix:</b> {}",
            md(field(f, "evidence")),
            md(field(f, "fix"))
        );
        if let Some(judge) = f["judge"].as_str() {
            let _ = write!(body, "<br><b>judge:</b> {}", md(judge));
        }
        details(&mut out, &summary, &body);
    }
    let skipped = list("skipped");
    if !skipped.is_empty() {
        out.push_str("#### Skipped by the judge\n\n");
    }
    for s in &skipped {
        let summary = format!("<b>{}</b> {}", md(field(s, "id")), md(field(s, "severity")));
        let body = format!(
            "{}<br><b>judge:</b> {}",
            md(field(s, "evidence")),
            md(field(s, "judge"))
        );
        details(&mut out, &summary, &body);
    }
    let split = list("split");
    if !split.is_empty() {
        out.push_str("#### Split votes\n\n");
    }
    for s in &split {
        let summary = format!(
            "<b>{}</b> {} — {}",
            md(field(s, "id")),
            md(field(s, "result")),
            md(field(s, "why"))
        );
        let votes: Vec<String> = s["votes"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .map(|v| md(v.as_str().unwrap_or("")))
            .collect();
        details(&mut out, &summary, &votes.join("<br>"));
    }
    out
}

/// The mark of a pull request's verdict.
fn pr_mark(v: PrOutcome) -> &'static str {
    mark(v.decision())
}

/// `panel-tally --pr`: the verdict, the members, the findings, the follow-ups, the briefs.
pub fn pr(v: &PanelVerdict) -> String {
    let mut out = String::new();
    let pr = match v.pr {
        Some(n) => format!("{}#{n}", v.repo),
        None => v.repo.clone(),
    };
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
