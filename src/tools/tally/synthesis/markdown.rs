//! panel-vote's stream as Markdown (`--format markdown`), from the tally record the synthesis
//! report makes of it.

use std::fmt::Write as _;

use crate::records::Decision;
use crate::records::printable::markdown as md;
use crate::records::tally::SynthesisTally;
use crate::tools::tally::markdown::{details, mark, table};

/// A list of names, escaped and joined.
fn names(list: &[String]) -> String {
    list.iter().map(|n| md(n)).collect::<Vec<_>>().join(", ")
}

/// panel-vote's stream, from the tally record the synthesis report makes of it.
pub fn synthesis(tally: &SynthesisTally, decision: Decision) -> String {
    let mut out = String::new();
    let status = tally.status.as_str();
    let _ = writeln!(out, "### {} Synthesis: {}\n", mark(decision), md(status));
    let _ = writeln!(
        out,
        "**panel: {}** — {}\n",
        md(tally.panel_status.as_str()),
        md(tally.reason)
    );
    if let Some(Some(route)) = tally.route {
        let _ = writeln!(
            out,
            "**route: {}** — {}\n",
            md(route.as_str()),
            md(tally.route_reason.unwrap_or(""))
        );
    }
    if tally.merge_failed {
        out.push_str("The merge failed: the findings are unmerged.\n\n");
    }
    for (list, words) in [
        (tally.no_review_from, "No review from"),
        (tally.no_votes_from, "No votes from"),
    ] {
        if !list.is_empty() {
            let _ = writeln!(out, "{words}: {}\n", names(list));
        }
    }
    let rows: Vec<Vec<String>> = tally
        .findings
        .iter()
        .map(|f| {
            vec![
                md(f.id),
                md(f.severity.as_str()),
                md(f.result.as_str()),
                names(f.raised_by),
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
    for f in &tally.findings {
        let summary = format!(
            "<b>{}</b> {}, {}",
            md(f.id),
            md(f.severity.as_str()),
            md(f.result.as_str())
        );
        let mut body = format!("{}<br><b>fix:</b> {}", md(f.evidence), md(f.fix));
        if let Some(judge) = f.judge {
            let _ = write!(body, "<br><b>judge:</b> {}", md(judge));
        }
        details(&mut out, &summary, &body);
    }
    if !tally.skipped.is_empty() {
        out.push_str("#### Skipped by the judge\n\n");
    }
    for s in &tally.skipped {
        let summary = format!("<b>{}</b> {}", md(s.id), md(s.severity.as_str()));
        let body = format!("{}<br><b>judge:</b> {}", md(s.evidence), md(s.judge));
        details(&mut out, &summary, &body);
    }
    if !tally.split.is_empty() {
        out.push_str("#### Split votes\n\n");
    }
    for s in &tally.split {
        let summary = format!(
            "<b>{}</b> {} — {}",
            md(s.id),
            md(s.result.as_str()),
            md(s.why)
        );
        let votes: Vec<String> = s.votes.iter().map(|v| md(v)).collect();
        details(&mut out, &summary, &votes.join("<br>"));
    }
    out
}
