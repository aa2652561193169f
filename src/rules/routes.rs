//! Where the work goes after the votes: with no judge, a `block` goes straight back and
//! otherwise the panel decides; with a judge, it goes back when the judge acts on any finding.

use crate::contracts::decisions::label;
use crate::records::Decision;
use crate::records::Status;
use crate::records::review::Severity;
use crate::records::synthesis::{
    DecisionRecord, JudgeCall, RouteKind, RouteRecord, SynthesisEntry,
};
use crate::rules::votes::Applied;

/// Where the work goes with no judge: a `block` goes straight back; otherwise the panel decides.
pub fn route_without_judge(applied: &Applied) -> RouteRecord {
    let left = applied.left();
    let ids = |es: &[&SynthesisEntry]| -> Vec<String> {
        es.iter().map(|e| e.finding.finding.id.clone()).collect()
    };
    let blocks: Vec<&SynthesisEntry> = left
        .iter()
        .copied()
        .filter(|e| e.finding.finding.severity == Severity::Block)
        .collect();
    let (route, reason, findings) = match applied.panel.status {
        Decision::Fail => (
            Some(RouteKind::Again),
            format!(
                "the panel failed: {}; {} findings go back",
                applied.panel.reason,
                left.len()
            ),
            ids(&left),
        ),
        _ if !blocks.is_empty() => (
            Some(RouteKind::Again),
            format!("no judge: {} blocks go straight back", blocks.len()),
            ids(&blocks),
        ),
        Decision::Pass => (
            Some(RouteKind::Pass),
            format!("the panel passed: {}", applied.panel.reason),
            Vec::new(),
        ),
        _ => (
            None,
            format!("no decision: {}", applied.panel.reason),
            Vec::new(),
        ),
    };
    RouteRecord {
        route,
        reason,
        judge: None,
        status: Status::Ok,
        cause: None,
        findings,
        skipped: Vec::new(),
        usage: None,
    }
}

/// Turns the judge's answer into decisions and the route. `answer` is the checked answer, or
/// why there is none (the route is then undecided).
pub fn route_with_judge(
    applied: &Applied,
    judge: &str,
    answer: Result<Vec<(JudgeCall, String)>, (Status, String)>,
) -> (Vec<DecisionRecord>, RouteRecord) {
    let left = applied.left();
    if left.is_empty() {
        let mut route = route_without_judge(applied);
        route.judge = Some(judge.into());
        route.reason = format!("nothing left for the judge; {}", route.reason);
        return (Vec::new(), route);
    }
    let calls = match answer {
        Ok(calls) => calls,
        Err((status, cause)) => {
            return (Vec::new(), unanswered(judge, left.len(), status, cause));
        }
    };
    let decisions = decisions_on(&left, calls, judge);
    let of = |c: JudgeCall| -> Vec<String> {
        decisions
            .iter()
            .filter(|d| d.decision == c)
            .map(|d| d.finding.clone())
            .collect()
    };
    let (acted, skipped) = (of(JudgeCall::Act), of(JudgeCall::Skip));
    let (route, reason, findings) = if acted.is_empty() {
        (
            RouteKind::Pass,
            format!("the judge skips all {} findings", decisions.len()),
            acted,
        )
    } else if every_reviewer_passed(applied) {
        (
            RouteKind::Pass,
            format!(
                "every reviewer passed the work, which ends the rounds; the judge would act on {} of {} findings, kept on the record",
                acted.len(),
                decisions.len()
            ),
            Vec::new(),
        )
    } else {
        (
            RouteKind::Again,
            format!(
                "the judge acts on {} of {} findings",
                acted.len(),
                decisions.len()
            ),
            acted,
        )
    };
    let route = RouteRecord {
        route: Some(route),
        reason,
        judge: Some(judge.into()),
        status: Status::Ok,
        cause: None,
        findings,
        skipped,
        usage: None,
    };
    (decisions, route)
}

/// The route when the judge sent no readable decisions on the `left` findings left: undecided,
/// with the judge's status (`unreadable` when the call itself went well) and the cause.
fn unanswered(judge: &str, left: usize, status: Status, cause: String) -> RouteRecord {
    RouteRecord {
        route: None,
        reason: format!("the judge sent no readable decisions on the {left} findings left"),
        judge: Some(judge.into()),
        status: if status == Status::Ok {
            Status::Unreadable
        } else {
            status
        },
        cause: Some(cause),
        findings: Vec::new(),
        skipped: Vec::new(),
        usage: None,
    }
}

/// The judge's calls as decision records, one per finding left, labelled in order.
fn decisions_on(
    left: &[&SynthesisEntry],
    calls: Vec<(JudgeCall, String)>,
    judge: &str,
) -> Vec<DecisionRecord> {
    left.iter()
        .zip(calls)
        .enumerate()
        .map(|(k, (e, (call, reason)))| {
            let f = &e.finding.finding;
            DecisionRecord {
                finding: f.id.clone(),
                label: label(k + 1),
                decision: call,
                reason,
                judge: judge.into(),
                severity: f.severity,
                evidence: f.evidence.clone(),
                fix: f.fix.clone(),
                raised_by: f.raised_by.clone(),
                sandbox: None,
            }
        })
        .collect()
}

/// With a judge, the rounds end when it skips every finding or when every reviewer
/// passes the work (docs/rules.md, "The synthesised panel").
pub fn every_reviewer_passed(applied: &Applied) -> bool {
    let p = &applied.panel;
    p.reviewers > 0 && p.passed == p.reviewers
}
