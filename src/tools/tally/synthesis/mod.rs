//! `panel-tally` over `panel-vote`'s stream: the findings the writer gets, each with the judge's
//! reason, the split votes, what the votes dropped, and what went missing.

pub mod markdown;

use std::collections::HashMap;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::records::Decision;
use crate::records::synthesis::{
    DecisionRecord, FindingResult, JudgeCall, PanelRecord, Record, RouteKind, RouteRecord,
    SynthesisEntry, VoteRecord, kind_of,
};
use crate::records::tally::{
    SkippedFinding, SplitFinding, SynthesisPanel, SynthesisTally, WriterFinding,
};
use crate::rules::votes::Count;

/// What `panel-tally` prints for a synthesis stream.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthesisReport {
    pub text: String,
    /// The tally record, for `--json`.
    pub json: Value,
    /// The report as Markdown (`--format markdown`), from the same tally record.
    pub markdown: String,
    /// Pass, again (fail), or no decision when missing answers decided it.
    pub decision: Decision,
    /// `--view writer`: the findings that go back, as the writer reads them, each with the
    /// judge's reason.
    pub writer: String,
    /// `--view skips`: the findings the judge skipped, with its reasons, for the next round's
    /// reviewers.
    pub skips: String,
    /// `--view decisions`: the judge's decision records, one JSON line each.
    pub decisions: String,
}

impl crate::tools::tally::report::Report for SynthesisReport {
    fn write_json(&self, out: &mut dyn std::io::Write) -> Result<()> {
        crate::records::write(out, &self.json)
    }

    fn write_text(&self, out: &mut dyn std::io::Write) -> Result<()> {
        Ok(out.write_all(crate::records::printable::shown(&self.text).as_bytes())?)
    }

    fn write_markdown(&self, out: &mut dyn std::io::Write) -> Result<()> {
        Ok(out.write_all(self.markdown.as_bytes())?)
    }
}

/// One panel-vote stream, read: its records by kind.
struct Stream<'a> {
    entries: Vec<&'a SynthesisEntry>,
    panel: &'a PanelRecord,
    decisions: Vec<&'a DecisionRecord>,
    route: Option<&'a RouteRecord>,
    votes: Vec<&'a VoteRecord>,
}

/// Sorts the records by kind: one panel record, at most one route, no records of earlier steps.
fn read_stream(records: &[Record]) -> Result<Stream<'_>> {
    let mut entries = Vec::new();
    let mut panel = None;
    let mut decisions = Vec::new();
    let mut route = None;
    let mut votes = Vec::new();
    for r in records {
        match r {
            Record::Synthesis(e) => entries.push(e),
            Record::Panel(p) => {
                if panel.replace(p).is_some() {
                    bail!("two panel records: one panel at a time");
                }
            }
            Record::Decision(d) => decisions.push(d),
            Record::Route(rt) => {
                if route.replace(rt).is_some() {
                    bail!("two route records: one panel at a time");
                }
            }
            Record::Vote(v) => votes.push(v),
            other => bail!(
                "a {} record; merged findings go through panel-vote",
                kind_of(other)
            ),
        }
    }
    let Some(panel) = panel else {
        bail!("no panel record: the stream does not come from panel-vote");
    };
    Ok(Stream {
        entries,
        panel,
        decisions,
        route,
        votes,
    })
}

/// Reports a `panel-vote` stream: the findings the writer gets, each with the judge's reason,
/// the split votes, and what went missing.
pub fn report(records: &[Record]) -> Result<SynthesisReport> {
    let Stream {
        entries,
        panel,
        decisions,
        route,
        votes,
    } = read_stream(records)?;
    // A voter left out never decides: one whose vote could have changed a fate leaves none.
    let (cancelled, without_cause) = crate::rules::votes::left_out(&entries, &votes);
    let decision = match route {
        _ if !without_cause.is_empty() => Decision::NoDecision,
        Some(r) => r.decision(),
        None => panel.status,
    };
    let mut text = String::new();
    panel_lines(&mut text, panel, &cancelled, &without_cause);
    if let Some(r) = route {
        route_lines(&mut text, r);
    }
    let (findings, writer) = for_the_writer(&mut text, route, &entries, &decisions)?;
    let skipped = skipped_lines(&mut text, &decisions);
    let split = split_lines(&mut text, &entries);
    dropped_lines(&mut text, &entries);
    let record = SynthesisTally {
        kind: "tally",
        panel: SynthesisPanel::Synthesis,
        status: decision.into(),
        panel_status: panel.status,
        reason: &panel.reason,
        route: route.map(|r| r.route),
        route_reason: route.map(|r| r.reason.as_str()),
        findings,
        skipped: skipped
            .iter()
            .map(|d| SkippedFinding {
                id: &d.finding,
                severity: d.severity,
                evidence: &d.evidence,
                judge: &d.reason,
            })
            .collect(),
        split: split
            .iter()
            .map(|e| SplitFinding {
                id: &e.finding.finding.id,
                result: e.result,
                why: &e.why,
                votes: e
                    .finding
                    .votes
                    .iter()
                    .map(|v| format!("{} {}: {}", v.reviewer, v.vote.as_str(), v.reason))
                    .collect(),
            })
            .collect(),
        merge_failed: panel.merge_failed,
        no_votes_from: &panel.no_votes_from,
        no_review_from: &panel.no_review_from,
        decided_early: (!cancelled.is_empty()).then_some(without_cause.is_empty()),
        cancelled,
        cancelled_without_cause: without_cause,
        synthesis: entries,
        judge: decisions.clone(),
    };
    let json = serde_json::to_value(&record)?;
    let markdown = markdown::synthesis(&record, decision);
    let skips = skipped
        .iter()
        .map(|d| format!("- {} (skipped: {})\n", d.evidence, d.reason))
        .collect();
    let decisions = decisions
        .iter()
        .map(|d| serde_json::to_string(&Record::Decision((*d).clone())).map(|l| l + "\n"))
        .collect::<serde_json::Result<String>>()?;
    Ok(SynthesisReport {
        text,
        json,
        markdown,
        decision,
        writer,
        skips,
        decisions,
    })
}

/// The panel's lines: its status, what went missing, the voters left out, the findings' count.
fn panel_lines(
    text: &mut String,
    panel: &PanelRecord,
    cancelled: &[String],
    without_cause: &[String],
) {
    let _ = writeln!(text, "panel: {}: {}", panel.status.as_str(), panel.reason);
    if panel.merge_failed {
        let _ = writeln!(
            text,
            "merge failed, findings unmerged: {}",
            panel.merge_cause.as_deref().unwrap_or("no reason given")
        );
    }
    if !panel.no_review_from.is_empty() {
        let _ = writeln!(text, "no review from: {}", panel.no_review_from.join(", "));
    }
    if !panel.no_votes_from.is_empty() {
        let _ = writeln!(text, "no votes from: {}", panel.no_votes_from.join(", "));
    }
    if !without_cause.is_empty() {
        let _ = writeln!(
            text,
            "CANCELLED WITHOUT CAUSE: {}: a vote of theirs could have changed a finding's fate, \
                and a voter left out decides nothing: no decision",
            without_cause.join(", ")
        );
    } else if !cancelled.is_empty() {
        let _ = writeln!(
            text,
            "not needed (cancelled): {}: the votes in fixed the fate of every finding they were \
                shown",
            cancelled.join(", ")
        );
    }
    let _ = writeln!(
        text,
        "findings: {} kept, {} better fix, {} disputed, {} dropped",
        panel.kept, panel.better_fix, panel.disputed, panel.dropped
    );
}

/// The route's line, and the judge's trouble if it had any.
fn route_lines(text: &mut String, r: &RouteRecord) {
    let word = r.route.map(RouteKind::as_str);
    let _ = writeln!(
        text,
        "route: {}: {}",
        word.unwrap_or("no decision"),
        r.reason
    );
    if let Some(cause) = &r.cause {
        let _ = writeln!(text, "  judge {}: {cause}", r.status.as_str());
    }
}

/// The findings the route sends back: in the report, as the writer reads them (`--view
/// writer`), and as the tally record's findings.
fn for_the_writer<'a>(
    text: &mut String,
    route: Option<&'a RouteRecord>,
    entries: &[&'a SynthesisEntry],
    decisions: &[&'a DecisionRecord],
) -> Result<(Vec<WriterFinding<'a>>, String)> {
    let entry_of: HashMap<&str, &SynthesisEntry> = entries
        .iter()
        .map(|e| (e.finding.finding.id.as_str(), *e))
        .collect();
    let decision_of: HashMap<&str, &DecisionRecord> =
        decisions.iter().map(|d| (d.finding.as_str(), *d)).collect();
    let writer_gets: Vec<&str> = route
        .map(|r| r.findings.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let mut findings = Vec::new();
    let mut writer = String::new();
    if !writer_gets.is_empty() {
        text.push_str("\nfor the writer:\n");
    }
    for id in writer_gets {
        let Some(e) = entry_of.get(id) else {
            bail!("the route sends back {id}, which has no synthesis entry");
        };
        let f = &e.finding.finding;
        let _ = writeln!(
            text,
            "{id} [{}] {} (raised by {})",
            f.severity.as_str(),
            e.result.as_str(),
            f.raised_by.join(", ")
        );
        let _ = writeln!(text, "  evidence: {}", f.evidence);
        let _ = writeln!(text, "  fix: {}", f.fix);
        let judged = decision_of.get(id).map(|d| d.reason.as_str());
        if let Some(reason) = judged {
            let _ = writeln!(text, "  judge: {reason}");
        }
        let _ = writeln!(writer, "- [{}] {}", f.severity.as_str(), f.evidence);
        let _ = writeln!(writer, "  fix: {}", f.fix);
        if let Some(reason) = judged {
            let _ = writeln!(writer, "  why: {reason}");
        }
        findings.push(WriterFinding {
            id,
            result: e.result,
            severity: f.severity,
            evidence: &f.evidence,
            fix: &f.fix,
            raised_by: &f.raised_by,
            judge: judged,
        });
    }
    Ok((findings, writer))
}

/// The findings the judge skipped, with its reasons.
fn skipped_lines<'a>(
    text: &mut String,
    decisions: &[&'a DecisionRecord],
) -> Vec<&'a DecisionRecord> {
    let skipped: Vec<&DecisionRecord> = decisions
        .iter()
        .copied()
        .filter(|d| d.decision == JudgeCall::Skip)
        .collect();
    if !skipped.is_empty() {
        text.push_str("\nskipped by the judge:\n");
        for d in &skipped {
            let _ = writeln!(
                text,
                "{} [{}] {}",
                d.finding,
                d.severity.as_str(),
                d.evidence
            );
            let _ = writeln!(text, "  judge: {}", d.reason);
        }
    }
    skipped
}

/// The findings the votes split on (disputed, or some voters disagreeing), each vote shown.
fn split_lines<'a>(text: &mut String, entries: &[&'a SynthesisEntry]) -> Vec<&'a SynthesisEntry> {
    let split: Vec<&SynthesisEntry> = entries
        .iter()
        .copied()
        .filter(|e| {
            let c = Count::of(&e.finding.votes);
            e.result == FindingResult::Disputed || (c.disagree > 0 && c.disagree < c.voters())
        })
        .collect();
    if !split.is_empty() {
        text.push_str("\nsplit votes:\n");
        for e in &split {
            let f = &e.finding.finding;
            let _ = writeln!(text, "{} {}: {}", f.id, e.result.as_str(), e.why);
            for v in &e.finding.votes {
                let _ = writeln!(text, "  {} {}: {}", v.reviewer, v.vote.as_str(), v.reason);
            }
            for m in &e.no_votes_from {
                let _ = writeln!(text, "  {m}: no vote");
            }
        }
    }
    split
}

/// The findings the votes dropped, and why.
fn dropped_lines(text: &mut String, entries: &[&SynthesisEntry]) {
    let dropped: Vec<&&SynthesisEntry> = entries
        .iter()
        .filter(|e| e.result == FindingResult::Dropped)
        .collect();
    if !dropped.is_empty() {
        text.push_str("\ndropped by the votes:\n");
        for e in &dropped {
            let f = &e.finding.finding;
            let _ = writeln!(
                text,
                "{} [{}] {}: {}",
                f.id,
                f.severity.as_str(),
                f.evidence,
                e.why
            );
        }
    }
}
