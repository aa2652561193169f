//! The `tally` record's three shapes: the verdict panel, the threshold panel over reviews and
//! the synthesised panel. panel-tally serializes these types and `schemas/tally.schema.json` is
//! generated from them, so the writer and the schema cannot drift. What computes them stays
//! in its layer: `rules::consensus` counts, `tools::tally::count` closes a panel into a
//! [`Tally`].
//!
//! Doc comments here are schema descriptions: a new one changes `schemas/`.

use serde::Serialize;

use crate::records::review::{Finding, Severity};
use crate::records::synthesis::{DecisionRecord, FindingResult, RouteKind, SynthesisEntry};
use crate::records::{Decision, Status, Usage, Verdict};

/// A judge who gave no verdict, and why.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct Abstention<'a> {
    pub judge: &'a str,
    pub status: Status,
    pub cause: Option<&'a str>,
}

/// One panel counted: the `tally` record.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Tally<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub candidate: &'a str,
    pub outcome: Consensus,
    pub passed: bool,
    /// False when the missing answers could have changed the result (exit 3).
    pub decided: bool,
    pub threshold: usize,
    /// Whether `--agree` set the threshold (the text report then says the decision, a line the
    /// seed's script has none of).
    #[serde(skip)]
    pub agreed: bool,
    /// Missing judges count as judges who abstained.
    pub counts: Counts,
    /// Judges the records announced (`panelSize`) but that never sent a record.
    pub missing: usize,
    /// In the order the seed script's glob lists their files.
    pub judges: Vec<JudgeRow<'a>>,
    #[serde(serialize_with = "counts_map")]
    #[cfg_attr(
        feature = "schemas",
        schemars(with = "std::collections::BTreeMap<String, Counts>")
    )]
    pub by_lens: Vec<(&'a str, Counts)>,
    #[serde(serialize_with = "counts_map")]
    #[cfg_attr(
        feature = "schemas",
        schemars(with = "std::collections::BTreeMap<String, Counts>")
    )]
    pub by_family: Vec<(&'a str, Counts)>,
    pub abstentions: Vec<Abstention<'a>>,
    pub runs: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The seats' answers about their canaries (absent when there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canaries: Vec<CanaryRow<'a>>,
    /// The seats that missed a canary: gave the other verdict, or none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canary_missed: Vec<&'a str>,
    /// The judges its panel-judge left out as not needed (`--stop-when-decided`), counted as
    /// missing (absent when there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled: Vec<&'a str>,
    /// With judges cancelled: whether the answers in decide the panel without them. False is
    /// a panel cancelled without cause (a forged or edited stream, or another threshold):
    /// no decision. Absent when none was cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_early: Option<bool>,
}

fn counts_map<S: serde::Serializer>(groups: &[(&str, Counts)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(groups.iter().map(|(k, c)| (k, c)))
}

/// One judge's answer, its text as `T`: borrowed from a record ([`JudgeRow`]), or kept as
/// pieces of a panel's one buffer while the panel counts. The one shape of a verdict from the
/// record read to the tally written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schemas",
    schemars(
        rename = "JudgeRow",
        description = "One judge's answer as a tally reports it."
    )
)]
pub struct JudgeOf<T> {
    pub judge: T,
    pub lens: T,
    pub seat: T,
    pub family: Option<T>,
    pub verdict: Option<Verdict>,
    pub status: Status,
    pub reason: Option<T>,
    pub confidence: Option<f64>,
    /// Reported in `abstentions`, not per judge.
    #[serde(skip)]
    pub cause: Option<T>,
    /// The word an unreadable judge gave outside holds and breaks (`maybe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<T>,
}

/// One judge's answer as a tally reports it.
pub type JudgeRow<'a> = JudgeOf<&'a str>;

impl<T: Copy> JudgeOf<T> {
    /// The same answer with its text turned by `f` (kept in a buffer, or read back from it).
    pub fn map<S>(self, mut f: impl FnMut(T) -> S) -> JudgeOf<S> {
        JudgeOf {
            judge: f(self.judge),
            lens: f(self.lens),
            seat: f(self.seat),
            family: self.family.map(&mut f),
            verdict: self.verdict,
            status: self.status,
            reason: self.reason.map(&mut f),
            confidence: self.confidence,
            cause: self.cause.map(&mut f),
            said: self.said.map(&mut f),
        }
    }
}

/// A canary's answer as a tally reports it: `canary` is the verdict it is known to deserve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct CanaryRow<'a> {
    pub judge: &'a str,
    pub seat: &'a str,
    pub canary: Verdict,
    pub verdict: Option<Verdict>,
    pub status: Status,
    pub hit: bool,
}

/// Holds, breaks and abstentions of a group of judges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct Counts {
    pub judges: usize,
    pub holds: usize,
    pub breaks: usize,
    pub abstained: usize,
}

/// The panel's verdicts taken together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Consensus {
    /// Every judge answered, and all the same way.
    Unanimous,
    /// Every judge answered, and they disagree.
    Split,
    /// At least one judge gave no verdict.
    Inconclusive,
}

impl Consensus {
    pub fn as_str(self) -> &'static str {
        match self {
            Consensus::Unanimous => "unanimous",
            Consensus::Split => "split",
            Consensus::Inconclusive => "inconclusive",
        }
    }
}

/// The threshold panel over review records (`panel-tally` reading reviews).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ThresholdTally<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub panel: ThresholdPanel,
    pub status: Decision,
    /// Reviewers that passed the work.
    pub passed: usize,
    /// How many must pass.
    pub required: usize,
    pub reviewers: usize,
    /// Reviewers that asked for a revision.
    pub rejected_by: &'a [String],
    /// Reviewers that returned no decision.
    pub errors: Vec<EngineError<'a>>,
    /// The findings that go back to the writer: none when the panel passed.
    pub findings: &'a [Finding],
    /// The rejecting reviewers' findings, whatever the outcome.
    pub findings_on_record: &'a [Finding],
    /// How many findings of each severity, for those with any.
    // A list, not a map keyed by `Severity`: the writer's order (strongest first) is not
    // `Severity`'s `Ord`.
    #[serde(serialize_with = "as_map")]
    #[cfg_attr(
        feature = "schemas",
        schemars(with = "std::collections::BTreeMap<Severity, usize>")
    )]
    pub severity_counts: Vec<(Severity, usize)>,
}

#[derive(Clone, Copy, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum ThresholdPanel {
    #[serde(rename = "threshold")]
    Threshold,
}

/// A reviewer that returned no decision.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct EngineError<'a> {
    pub kind: EngineErrorKind,
    pub name: &'a str,
    pub reason: &'a str,
}

#[derive(Clone, Copy, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum EngineErrorKind {
    #[serde(rename = "engine-error")]
    EngineError,
}

/// The synthesised panel (`panel-tally` reading panel-vote's output).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SynthesisTally<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub panel: SynthesisPanel,
    /// `pass`, `again` (back to the writer) or `no-decision`.
    pub status: SynthesisStatus,
    /// The panel record's status.
    pub panel_status: Decision,
    pub reason: &'a str,
    /// Where the route sent the work; null without a route record or when it is undecided.
    pub route: Option<Option<RouteKind>>,
    pub route_reason: Option<&'a str>,
    /// The findings that go back to the writer.
    pub findings: Vec<WriterFinding<'a>>,
    /// The findings the judge skipped.
    pub skipped: Vec<SkippedFinding<'a>>,
    /// The findings whose votes split.
    pub split: Vec<SplitFinding<'a>>,
    pub merge_failed: bool,
    pub no_votes_from: &'a [String],
    pub no_review_from: &'a [String],
    /// Voters left out (panel-vote --stop-when-decided); absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled: Vec<String>,
    /// With voters left out: whether the votes in fixed every fate without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_early: Option<bool>,
    /// Voters left out whose vote could have changed a finding's fate: no decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled_without_cause: Vec<String>,
    pub synthesis: Vec<&'a SynthesisEntry>,
    pub judge: Vec<&'a DecisionRecord>,
}

#[derive(Clone, Copy, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum SynthesisPanel {
    #[serde(rename = "synthesis")]
    Synthesis,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SynthesisStatus {
    Pass,
    Again,
    NoDecision,
}

impl SynthesisStatus {
    /// The word the record carries.
    pub fn as_str(self) -> &'static str {
        match self {
            SynthesisStatus::Pass => "pass",
            SynthesisStatus::Again => "again",
            SynthesisStatus::NoDecision => "no-decision",
        }
    }
}

impl From<Decision> for SynthesisStatus {
    fn from(d: Decision) -> Self {
        match d {
            Decision::Pass => SynthesisStatus::Pass,
            Decision::Fail => SynthesisStatus::Again,
            Decision::NoDecision => SynthesisStatus::NoDecision,
        }
    }
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct WriterFinding<'a> {
    pub id: &'a str,
    pub result: FindingResult,
    pub severity: Severity,
    pub evidence: &'a str,
    pub fix: &'a str,
    pub raised_by: &'a [String],
    /// The judge's reason, when a judge decided.
    pub judge: Option<&'a str>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct SkippedFinding<'a> {
    pub id: &'a str,
    pub severity: Severity,
    pub evidence: &'a str,
    /// The judge's reason for skipping it.
    pub judge: &'a str,
}

#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct SplitFinding<'a> {
    pub id: &'a str,
    pub result: FindingResult,
    pub why: &'a str,
    /// `REVIEWER VOTE: REASON`, one per vote.
    pub votes: Vec<String>,
}

fn as_map<S: serde::Serializer>(counts: &[(Severity, usize)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(counts.iter().map(|(k, n)| (k, n)))
}

/// How many panels of a stream passed, failed, or could not decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct Totals {
    pub panels: usize,
    pub passed: usize,
    pub failed: usize,
    pub undecided: usize,
}

impl Totals {
    /// Counts one panel's decision.
    pub fn add(&mut self, d: Decision) {
        self.panels += 1;
        match d {
            Decision::Pass => self.passed += 1,
            Decision::Fail => self.failed += 1,
            Decision::NoDecision => self.undecided += 1,
        }
    }

    /// What many panels decided: any that failed makes the stream a failure no rerun can turn;
    /// otherwise any undecided one leaves it undecided.
    pub fn decision(&self) -> Decision {
        if self.failed > 0 {
            Decision::Fail
        } else if self.undecided > 0 {
            Decision::NoDecision
        } else {
            Decision::Pass
        }
    }
}

/// The closing record of `--each --json`.
#[derive(Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct Summary<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    #[serde(flatten)]
    pub totals: &'a Totals,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words the Markdown report shows are the ones the record carries.
    #[test]
    fn each_word_is_the_one_the_record_carries() {
        for s in [
            SynthesisStatus::Pass,
            SynthesisStatus::Again,
            SynthesisStatus::NoDecision,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for k in [RouteKind::Again, RouteKind::Pass] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}
