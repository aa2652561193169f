//! A panel of verdicts as Markdown (`--format markdown`), and the head of a stream of many.

use std::fmt::Write as _;

use crate::records::printable::{markdown as md, markdown_name as name};
use crate::records::tally::Tally;
use crate::records::tally::Totals;
use crate::tools::tally::markdown::{details, mark, table};
use crate::tools::tally::wording::{
    early_panel_line, panel_line, panels_line, reason_column, status_column, uncaused_line,
};

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
    if let Some(line) = uncaused_line(t, &|j| name(j)) {
        let _ = writeln!(out, "{line}\n");
    }
    let rows: Vec<Vec<String>> = t
        .judges
        .iter()
        .map(|j| {
            vec![
                name(j.judge),
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
        let summary = format!("<b>{}</b> — {}", name(j.judge), md(status_column(j)));
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
