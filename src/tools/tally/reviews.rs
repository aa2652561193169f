//! The threshold panel over review records, reported ([`crate::rules::threshold`] counts it).

use std::fmt::Write as _;
use std::io::Write;

use serde_json::Value;

use crate::records::printable::{markdown as md, shown};
use crate::records::review::Severity;
use crate::records::tally::{EngineError, EngineErrorKind, ThresholdPanel, ThresholdTally};
use crate::rules::decision::Decision;
pub use crate::rules::threshold::{ThresholdOutcome, threshold};
use crate::tools::tally::markdown::{details, mark, table};
use crate::tools::tally::report::Report;

impl Report for ThresholdOutcome {
    fn write_json(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        crate::records::write(out, &self.record())
    }

    fn write_text(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(out.write_all(shown(&self.text()).as_bytes())?)
    }

    fn write_markdown(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        Ok(out.write_all(self.markdown().as_bytes())?)
    }
}

impl ThresholdOutcome {
    /// The report for people.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "review panel: {}: {} of {} reviewers passed the work ({} needed)",
            self.status.as_str(),
            self.passed,
            self.reviewers,
            self.required
        );
        if !self.errors.is_empty() {
            out.push_str("engine errors (not counted as acceptances):\n");
            for (name, why) in &self.errors {
                let _ = writeln!(out, "- {name}: {why}");
            }
        }
        if !self.findings.is_empty() {
            if self.status == Decision::Pass {
                out.push_str(
                    "findings of the reviewers that asked for a revision (on the record, \
                    not sent back):\n",
                );
            } else {
                out.push_str("findings that go back to the writer:\n");
            }
            for f in &self.findings {
                let _ = writeln!(out, "- [{}] {}: {}", f.severity.as_str(), f.id, f.evidence);
                let _ = writeln!(out, "  fix: {}", f.fix);
            }
        }
        out
    }

    /// The report as one `tally` record.
    pub fn record(&self) -> ThresholdTally<'_> {
        let severity_counts = Severity::ALL
            .into_iter()
            .map(|s| (s, self.findings.iter().filter(|f| f.severity == s).count()))
            .filter(|&(_, n)| n > 0)
            .collect();
        ThresholdTally {
            kind: "tally",
            panel: ThresholdPanel::Threshold,
            status: self.status,
            passed: self.passed,
            required: self.required,
            reviewers: self.reviewers,
            rejected_by: &self.rejected,
            errors: self
                .errors
                .iter()
                .map(|(name, reason)| EngineError {
                    kind: EngineErrorKind::EngineError,
                    name,
                    reason,
                })
                .collect(),
            findings: if self.status == Decision::Pass {
                &[]
            } else {
                &self.findings
            },
            findings_on_record: &self.findings,
            severity_counts,
        }
    }

    /// The `tally` record as a JSON value.
    pub fn json(&self) -> Value {
        serde_json::to_value(self.record()).expect("a tally serializes")
    }

    /// The report as Markdown (`--format markdown`).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "### {} Review panel: {} ({} of {} reviewers passed the work, {} needed)\n",
            mark(self.status),
            self.status.as_str(),
            self.passed,
            self.reviewers,
            self.required
        );
        let mut rows: Vec<Vec<String>> = Vec::new();
        rows.extend(self.accepted.iter().map(|r| vec![md(r), "**pass**".into()]));
        rows.extend(
            self.rejected
                .iter()
                .map(|r| vec![md(r), "**revise**".into()]),
        );
        rows.extend(
            self.errors
                .iter()
                .map(|(r, why)| vec![md(r), format!("no decision: {}", md(why))]),
        );
        table(&mut out, &["reviewer", "decision"], &rows);
        if !self.findings.is_empty() {
            let _ = writeln!(
                out,
                "#### {}\n",
                if self.status == Decision::Pass {
                    "Findings on the record (not sent back)"
                } else {
                    "Findings that go back to the writer"
                }
            );
            for f in &self.findings {
                let summary = format!("<b>{}</b> {}", f.severity.as_str(), md(&f.id));
                let body = format!("{}<br><b>fix:</b> {}", md(&f.evidence), md(&f.fix));
                details(&mut out, &summary, &body);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Status;
    use crate::records::review::Review;
    use crate::records::review::{Finding, ReviewDecision, ReviewRecord};

    fn review(name: &str, decision: Option<ReviewDecision>, findings: usize) -> ReviewRecord {
        let base = ReviewRecord::new(name, "claude:haiku", "sha256:ab", "review");
        match decision {
            Some(d) => base.answered(&Review {
                decision: d,
                findings: (0..findings)
                    .map(|i| Finding {
                        id: String::new(),
                        severity: Severity::ShouldFix,
                        evidence: format!("e{i}"),
                        fix: format!("f{i}"),
                        file: None,
                        line: None,
                    })
                    .collect(),
            }),
            None => base.abstained(Status::Unreadable, "no JSON object in the reply"),
        }
    }

    #[test]
    fn seed_threshold_example_passes_on_one_acceptance() {
        let reviews = [
            review("review-1", Some(ReviewDecision::Pass), 0),
            review("review-2", None, 0),
        ];
        let out = threshold(&reviews, Some(1)).unwrap();
        assert_eq!((out.status, out.passed), (Decision::Pass, 1));
        assert_eq!(out.errors.len(), 1);
        assert!(out.findings.is_empty());
        assert!(
            out.text()
                .contains("review-2: reviewer review-2 returned no decision")
        );
        assert_eq!(out.json()["errors"][0]["kind"], "engine-error");
    }

    #[test]
    fn seed_threshold_example_with_agree_two_has_no_decision() {
        let reviews = [
            review("review-1", Some(ReviewDecision::Pass), 0),
            review("review-2", None, 0),
        ];
        let out = threshold(&reviews, Some(2)).unwrap();
        assert_eq!(out.status, Decision::NoDecision);
        // The default is every reviewer.
        assert_eq!(
            threshold(&reviews, None).unwrap().status,
            Decision::NoDecision
        );
    }

    #[test]
    fn threshold_sends_back_the_rejecting_reviewers_findings() {
        let reviews = [
            review("review-1", Some(ReviewDecision::Pass), 1),
            review("review-2", Some(ReviewDecision::Revise), 2),
        ];
        let out = threshold(&reviews, None).unwrap();
        assert_eq!(out.status, Decision::Fail);
        let ids: Vec<_> = out.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["review-2/1", "review-2/2"]);
        assert_eq!(out.json()["findings"].as_array().unwrap().len(), 2);
        let passes = threshold(&reviews, Some(1)).unwrap();
        assert_eq!(passes.status, Decision::Pass);
        assert!(passes.json()["findings"].as_array().unwrap().is_empty());
        assert!(threshold(&reviews, Some(3)).is_err());
        assert!(threshold(&reviews, Some(0)).is_err());
    }
}
