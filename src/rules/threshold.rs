//! The threshold panel over review records: count the acceptances.

use anyhow::{Result, bail};

use crate::records::review::{self, Finding, ReviewDecision, ReviewRecord, name_order};
use crate::rules::decision::{self, Decision};

/// What the threshold panel decided: counts of acceptances against `agree`.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdOutcome {
    /// `pass`, `fail`, or `no-decision` when missing reviews kept it from the threshold.
    pub status: Decision,
    /// Reviewers that passed the work.
    pub passed: usize,
    /// How many must pass.
    pub required: usize,
    pub reviewers: usize,
    /// Reviewers that passed the work, by name.
    pub accepted: Vec<String>,
    /// Reviewers that asked for a revision.
    pub rejected: Vec<String>,
    /// `(reviewer, why)` for each reviewer that returned no decision: engine errors.
    pub errors: Vec<(String, String)>,
    /// The rejecting reviewers' findings, in reviewer order: they go back when the panel does
    /// not pass, and stay on the record when it does.
    pub findings: Vec<Finding>,
}

/// The threshold panel: counts acceptances (`pass`); a review with no decision is an engine
/// error, not an acceptance and not a rejection. `agree` defaults to every reviewer.
///
/// Below the threshold, the panel fails when the missing reviews could not have reached it
/// either, and has no decision (exit 3) when they could.
pub fn threshold(reviews: &[ReviewRecord], agree: Option<usize>) -> Result<ThresholdOutcome> {
    if reviews.is_empty() {
        bail!("no review records");
    }
    review::check_panel(reviews.iter().map(|r| (r, "")))?;
    let n = reviews.len();
    let required = decision::required(agree, n)?;
    let mut sorted: Vec<&ReviewRecord> = reviews.iter().collect();
    sorted.sort_by(|a, b| name_order(&a.reviewer, &b.reviewer));
    let mut accepted = Vec::new();
    let mut rejected = Vec::new();
    let mut errors = Vec::new();
    let mut findings = Vec::new();
    for r in sorted {
        match r.decision {
            Some(ReviewDecision::Pass) => accepted.push(r.reviewer.clone()),
            Some(ReviewDecision::Revise) => {
                rejected.push(r.reviewer.clone());
                findings.extend(r.findings.iter().cloned());
            }
            None => errors.push((r.reviewer.clone(), r.no_decision_reason())),
        }
    }
    let passed = accepted.len();
    let status = decision::decide(passed, errors.len(), required);
    Ok(ThresholdOutcome {
        status,
        passed,
        required,
        reviewers: n,
        accepted,
        rejected,
        errors,
        findings,
    })
}
