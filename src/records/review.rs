//! A reviewer's review: the decision (`pass` or `revise`), findings tagged by severity, and
//! the `review` record `panel-judge --contract review` writes and `panel-merge` reads.

use std::collections::HashSet;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::records::{Status, Usage};

/// How much a finding matters. The order is strength: `Block` is the strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    NiceToHave,
    ShouldFix,
    Block,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Block, Severity::ShouldFix, Severity::NiceToHave];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Block => "block",
            Severity::ShouldFix => "should-fix",
            Severity::NiceToHave => "nice-to-have",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// A reviewer's decision on the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReviewDecision {
    Pass,
    Revise,
}

impl ReviewDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewDecision::Pass => "pass",
            ReviewDecision::Revise => "revise",
        }
    }
}

/// One finding of one reviewer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// `<reviewer>/<n>`, e.g. `review-1/2`: unique within a panel.
    pub id: String,
    pub severity: Severity,
    /// The line or claim of the work the finding is about, quoted, and what is wrong with it.
    pub evidence: String,
    pub fix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// A review that met the contract, normalised: every finding has a severity.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub decision: ReviewDecision,
    /// Findings in the reviewer's order, without ids yet (see [`Review::findings_for`]).
    pub findings: Vec<Finding>,
}

impl Review {
    /// The findings with their ids, `<reviewer>/1`, `<reviewer>/2`, …
    pub fn findings_for(&self, reviewer: &str) -> Vec<Finding> {
        self.findings
            .iter()
            .enumerate()
            .map(|(i, f)| Finding {
                id: format!("{reviewer}/{}", i + 1),
                ..f.clone()
            })
            .collect()
    }
}

/// The reviewer's name: `<stage>-<index>`, the index counting seats from 1.
pub fn reviewer_name(stage: &str, index: usize) -> String {
    format!("{stage}-{index}")
}

/// One reviewer's review of one frozen candidate: `panel-judge --contract review`'s output,
/// `panel-merge`'s input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReviewRecord {
    /// Always `review`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `<stage>-<n>`: see [`reviewer_name`].
    pub reviewer: String,
    /// `HARNESS[:MODEL]` as given.
    pub seat: String,
    pub harness: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub family: Option<String>,
    /// The seal of the frozen candidate: `sha256:<hex>`.
    pub candidate: String,
    /// `pass`, `revise`, or null when the reviewer sent no readable review.
    pub decision: Option<ReviewDecision>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The stage the reviewers are named after (`review` by default).
    #[serde(default)]
    pub stage: String,
    #[serde(default)]
    pub panel_size: usize,
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The run folder that keeps everything about this reviewer.
    #[serde(default)]
    pub run: String,
    /// What the judge ran under: `landlock-abi-N`, `off`, or `unavailable: why`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

impl ReviewRecord {
    /// A record with the reviewer's identity and no answer yet; set the rest with
    /// [`ReviewRecord::answered`] or [`ReviewRecord::abstained`].
    pub fn new(reviewer: &str, seat: &str, candidate: &str, stage: &str) -> ReviewRecord {
        let (harness, model) = match seat.split_once(':') {
            Some((h, m)) => (h.to_string(), Some(m.to_string())),
            None => (seat.to_string(), None),
        };
        ReviewRecord {
            kind: "review".into(),
            reviewer: reviewer.into(),
            seat: seat.into(),
            harness,
            model,
            family: None,
            candidate: candidate.into(),
            decision: None,
            status: Status::Failed,
            cause: None,
            excerpt: None,
            findings: Vec::new(),
            stage: stage.into(),
            panel_size: 0,
            attempts: 0,
            duration_ms: 0,
            usage: None,
            run: String::new(),
            sandbox: None,
        }
    }

    /// Fills in a review that met the contract.
    pub fn answered(mut self, review: &Review) -> ReviewRecord {
        self.findings = review.findings_for(&self.reviewer);
        self.decision = Some(review.decision);
        self.status = Status::Ok;
        self.cause = None;
        self
    }

    /// Marks the reviewer as having sent no readable review: an engine error, never a rejection.
    pub fn abstained(mut self, status: Status, cause: &str) -> ReviewRecord {
        self.decision = None;
        self.findings.clear();
        self.status = status;
        self.cause = Some(cause.into());
        self
    }

    /// Why there is no decision, in one line.
    pub fn no_decision_reason(&self) -> String {
        match &self.cause {
            Some(c) => format!("reviewer {} returned no decision: {c}", self.reviewer),
            None => format!("reviewer {} returned no decision", self.reviewer),
        }
    }
}

/// Orders reviewer names as people count them: `review-2` before `review-10`.
pub fn name_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn split(s: &str) -> (&str, Option<u64>) {
        match s.rsplit_once('-') {
            Some((stem, n)) => match n.parse() {
                Ok(n) => (stem, Some(n)),
                Err(_) => (s, None),
            },
            None => (s, None),
        }
    }
    split(a).cmp(&split(b)).then_with(|| a.cmp(b))
}

/// Checks, once, that reviews make one panel: one candidate, one review per reviewer, no
/// finding id twice. `at` names where each review was read (`file: line N`), or is empty.
pub fn check_panel<'a>(
    reviews: impl IntoIterator<Item = (&'a ReviewRecord, &'a str)>,
) -> Result<()> {
    let mut first: Option<&ReviewRecord> = None;
    let mut names = HashSet::new();
    let mut ids = HashSet::new();
    for (r, at) in reviews {
        let first = *first.get_or_insert(r);
        let why = if let Err(why) = crate::records::printable::check_folder_name(&r.reviewer) {
            format!("reviewer {why}")
        } else if first.candidate != r.candidate {
            format!(
                "{} reviewed {}, but {} reviewed {}: one candidate at a time",
                r.reviewer, r.candidate, first.reviewer, first.candidate
            )
        } else if !names.insert(r.reviewer.as_str()) {
            format!("a second review from {}", r.reviewer)
        } else if let Some(f) = r.findings.iter().find(|f| !ids.insert(f.id.as_str())) {
            format!("a second finding with the id {}", f.id)
        } else {
            continue;
        };
        match at {
            "" => bail!("{why}"),
            at => bail!("{at}: {why}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn severities_order_by_strength() {
        assert!(Severity::Block > Severity::ShouldFix);
        assert!(Severity::ShouldFix > Severity::NiceToHave);
        assert_eq!(
            serde_json::to_value(Severity::NiceToHave).unwrap(),
            json!("nice-to-have")
        );
    }

    #[test]
    fn names_count_from_one_and_sort_as_numbers() {
        assert_eq!(reviewer_name("write", 1), "write-1");
        let mut names = vec!["review-10", "review-2", "review-1"];
        names.sort_by(|a, b| name_order(a, b));
        assert_eq!(names, ["review-1", "review-2", "review-10"]);
    }
}
