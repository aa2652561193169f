//! `panel-tally --format markdown`: each report as GitHub-flavoured Markdown, for a pull
//! request's comment (`gh pr comment --body-file -`) or a job summary (`$GITHUB_STEP_SUMMARY`).
//!
//! Every report has the same shape: the decision first (a heading), a table (of judges,
//! reviewers, findings or members), then each reason or finding in a collapsible `<details>`.
//! Only our own words are written as they are; every piece of text read from a record (a
//! reason, a finding, a name, a lens, a path) goes through [`records::printable::markdown`], which
//! leaves it no syntax: it cannot close a `<details>`, mention anyone, link an issue or load an
//! image. A judge's name goes through [`records::printable::markdown_name`] instead: the same
//! escaping inside `<code>`, where GitHub reads no mention, so the name copied is the name.
//!
//! Here are the pieces every report's Markdown shares: the decision's mark, a table, a
//! collapsible section. Each report's own Markdown lives beside its text, in its mode's room:
//! [`report::markdown`](crate::tools::tally::report::markdown) (verdicts),
//! [`reviews`](crate::tools::tally::reviews) (the threshold panel),
//! [`synthesis::markdown`](crate::tools::tally::synthesis::markdown) and
//! [`pr::markdown`](crate::tools::tally::pr::markdown). A report kind added to panel-tally adds
//! its own, and its arm where mod.rs picks the format.

use std::fmt::Write as _;

use crate::records::Decision;

/// The mark a decision's heading starts with.
pub(crate) fn mark(d: Decision) -> &'static str {
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
