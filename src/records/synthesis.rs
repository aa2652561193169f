//! The synthesis stream: what `panel-merge` writes (`reviewer`, `finding`, `merge`) and what
//! `panel-vote` writes (`vote`, `synthesis`, `panel`, `decision`, `route`), and the panel read
//! back from it, checked once.

use std::collections::HashSet;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::records::review::{Finding, ReviewDecision, ReviewRecord, Severity, name_order};
use crate::records::{Decision, Status, Usage};

/// Every record of the synthesis stream: `panel-merge`'s output and `panel-vote`'s.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    Reviewer(Reviewer),
    Finding(MergedFinding),
    Merge(MergeRecord),
    Vote(VoteRecord),
    Synthesis(SynthesisEntry),
    Panel(PanelRecord),
    Decision(DecisionRecord),
    Route(RouteRecord),
}

impl<'de> Deserialize<'de> for Record {
    /// By hand: serde's derived form of a tagged enum reads the variant from a buffer of its
    /// own, which would read a nested struct by position; the variant is read strictly here.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Record, D::Error> {
        use serde::de::Error;
        const TYPES: &[&str] = &[
            "reviewer",
            "finding",
            "merge",
            "vote",
            "synthesis",
            "panel",
            "decision",
            "route",
        ];
        let mut map = crate::records::strict::object(d)?;
        let kind = match map.remove("type") {
            Some(Value::String(kind)) => kind,
            Some(_) => return Err(D::Error::custom("\"type\" is not a string")),
            None => return Err(D::Error::missing_field("type")),
        };
        let body = Value::Object(map);
        fn read<T: serde::de::DeserializeOwned>(body: Value) -> serde_json::Result<T> {
            crate::records::strict::from_value(body)
        }
        let rec = match kind.as_str() {
            "reviewer" => read(body).map(Record::Reviewer),
            "finding" => read(body).map(Record::Finding),
            "merge" => read(body).map(Record::Merge),
            "vote" => read(body).map(Record::Vote),
            "synthesis" => read(body).map(Record::Synthesis),
            "panel" => read(body).map(Record::Panel),
            "decision" => read(body).map(Record::Decision),
            "route" => read(body).map(Record::Route),
            other => return Err(D::Error::unknown_variant(other, TYPES)),
        };
        rec.map_err(D::Error::custom)
    }
}

/// The record types `panel-vote` reads.
pub const INPUT_TYPES: &[&str] = &["reviewer", "finding", "merge"];
/// The record types `panel-vote apply` reads.
pub const APPLY_TYPES: &[&str] = &["reviewer", "finding", "merge", "vote"];
/// The record types `panel-vote` writes, which [`report`] reads.
pub const OUTPUT_TYPES: &[&str] = &["vote", "synthesis", "panel", "decision", "route"];

/// A voter's answer on one finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum VoteKind {
    #[serde(rename = "agree")]
    Agree,
    #[serde(rename = "disagree")]
    Disagree,
    #[serde(rename = "better fix")]
    BetterFix,
}

impl VoteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VoteKind::Agree => "agree",
            VoteKind::Disagree => "disagree",
            VoteKind::BetterFix => "better fix",
        }
    }

    /// Reads a vote, forgiving case and the joiner of `better fix`.
    pub fn parse(text: &str) -> Option<VoteKind> {
        match text
            .trim()
            .to_ascii_lowercase()
            .replace(['-', '_'], " ")
            .as_str()
        {
            "agree" => Some(VoteKind::Agree),
            "disagree" => Some(VoteKind::Disagree),
            "better fix" => Some(VoteKind::BetterFix),
            _ => None,
        }
    }
}

/// One voter on one finding it was shown. `vote` is null when the voter's seat failed or sent
/// no readable reply: `status` and `cause` say why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct VoteRecord {
    pub reviewer: String,
    #[serde(default)]
    pub seat: String,
    /// The merged finding's id (`F1`, …).
    pub finding: String,
    pub vote: Option<VoteKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The fix offered with `better fix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// What the seat ran under, when one was launched: `landlock-abi-N`, `off`, `unavailable: …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// What the voter's one call used, as its harness reports it: on the first of its vote
    /// records only (one call gave them all), so a sum over the records counts each call once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A vote as the synthesis shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct FindingVote {
    pub reviewer: String,
    pub vote: VoteKind,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// What the votes did to a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum FindingResult {
    #[serde(rename = "kept")]
    Kept,
    #[serde(rename = "better fix")]
    BetterFix,
    #[serde(rename = "disputed")]
    Disputed,
    #[serde(rename = "dropped")]
    Dropped,
}

impl FindingResult {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingResult::Kept => "kept",
            FindingResult::BetterFix => "better fix",
            FindingResult::Disputed => "disputed",
            FindingResult::Dropped => "dropped",
        }
    }
}

/// The finding as the synthesis carries it: the merged finding (with the winning fix) and its votes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SynthesisFinding {
    #[serde(flatten)]
    pub finding: MergedFinding,
    /// One per voter that answered, in reviewer order.
    pub votes: Vec<FindingVote>,
    /// The finding's own fix, when a better fix replaced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_fix: Option<String>,
}

/// One entry per merged finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SynthesisEntry {
    pub result: FindingResult,
    pub finding: SynthesisFinding,
    /// Which rule decided, in one line.
    pub why: String,
    /// Voters shown this finding whose vote is missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_votes_from: Vec<String>,
}

/// The panel's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PanelRecord {
    /// `pass`, `fail`, or `no-decision` when missing reviews kept it from its threshold.
    pub status: Decision,
    pub reason: String,
    /// Reviewers that passed the work.
    pub passed: usize,
    /// How many must pass (`--agree`).
    pub required: usize,
    pub reviewers: usize,
    /// True when the panel passed only because the votes dropped every finding it had.
    pub every_finding_dropped: bool,
    pub merge_failed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_cause: Option<String>,
    /// Voters whose votes are missing.
    pub no_votes_from: Vec<String>,
    /// Voters left out (`panel-vote --stop-when-decided`): the votes in fixed the fate of every
    /// finding they were shown, so they count as no missing vote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled: Vec<String>,
    /// Voters recorded as left out whose vote could have changed a finding's fate (a forged or
    /// edited stream): counted as missing, and the panel has no decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled_without_cause: Vec<String>,
    /// Reviewers that sent no readable review (engine errors, not rejections).
    pub no_review_from: Vec<String>,
    pub findings: usize,
    pub kept: usize,
    pub better_fix: usize,
    pub disputed: usize,
    pub dropped: usize,
    pub candidate: String,
}

/// The judge's decision on one finding left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum JudgeCall {
    Act,
    Skip,
}

impl JudgeCall {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeCall::Act => "act",
            JudgeCall::Skip => "skip",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// The merged finding's id.
    pub finding: String,
    /// The key the judge answered under: `finding-1`, `finding-2`, … in synthesis order.
    pub label: String,
    pub decision: JudgeCall,
    pub reason: String,
    /// The judge's seat, or `replay:FILE`.
    pub judge: String,
    pub severity: Severity,
    pub evidence: String,
    pub fix: String,
    pub raised_by: Vec<String>,
    /// What the seat ran under, when one was launched: `landlock-abi-N`, `off`, `unavailable: …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

/// Where the work goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RouteKind {
    /// Back to the writer with findings.
    Again,
    /// The work stands.
    Pass,
}

impl RouteKind {
    /// The word the record carries.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteKind::Again => "again",
            RouteKind::Pass => "pass",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RouteRecord {
    /// `again`, `pass`, or null when missing answers leave it undecided.
    pub route: Option<RouteKind>,
    pub reason: String,
    /// The judge's seat; null when there is none.
    pub judge: Option<String>,
    /// How the judge's answer ended (`ok` when no judge was asked).
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The findings that go back to the writer.
    pub findings: Vec<String>,
    /// The findings the judge skipped.
    pub skipped: Vec<String>,
    /// What the judge's call used, as its harness reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl RouteRecord {
    /// Where the work goes, as a decision: again is the panel deciding against the work.
    pub fn decision(&self) -> Decision {
        match self.route {
            Some(RouteKind::Pass) => Decision::Pass,
            Some(RouteKind::Again) => Decision::Fail,
            None => Decision::NoDecision,
        }
    }
}

/// review ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Reviewer {
    pub name: String,
    pub seat: String,
    #[serde(default)]
    pub harness: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub family: Option<String>,
    /// `pass`, `revise`, or null when the review was missing or unreadable.
    pub decision: Option<ReviewDecision>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub candidate: String,
    #[serde(default)]
    pub stage: String,
    /// How many findings the review listed.
    #[serde(default)]
    pub findings: usize,
    #[serde(default)]
    pub run: String,
}

impl Reviewer {
    pub fn of(r: &ReviewRecord) -> Reviewer {
        Reviewer {
            name: r.reviewer.clone(),
            seat: r.seat.clone(),
            harness: r.harness.clone(),
            model: r.model.clone(),
            family: r.family.clone(),
            decision: r.decision,
            status: r.status,
            cause: r.cause.clone(),
            candidate: r.candidate.clone(),
            stage: r.stage.clone(),
            findings: r.findings.len(),
            run: r.run.clone(),
        }
    }
}

/// One finding after the merge: one per problem, crediting every reviewer who raised it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MergedFinding {
    /// `F1`, `F2`, … in the order of the first source.
    pub id: String,
    /// The strongest severity in the group.
    pub severity: Severity,
    pub evidence: String,
    pub fix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Every reviewer who raised it, in reviewer order.
    pub raised_by: Vec<String>,
    /// The ids of the reviewers' findings it was made from.
    pub sources: Vec<String>,
    /// Merged findings that may name the same problem, kept apart because the signals disagreed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub possible_duplicate_of: Vec<String>,
}

/// A group of source findings (indices into the list being merged), with the members whose
/// evidence and fix are kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub members: Vec<usize>,
    pub evidence: usize,
    pub fix: usize,
}

/// A source finding with the reviewer who raised it.
#[derive(Clone, Debug)]
pub struct SourceFinding {
    pub reviewer: String,
    pub finding: Finding,
}

/// How the merge went: the last record `panel-merge` writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MergeRecord {
    /// `code`, `seat`, or `none` when there was nothing to merge.
    pub how: MergeHow,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<String>,
    /// True when the merging seat failed or answered badly: the findings went on unmerged.
    pub merge_failed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    pub candidate: String,
    pub reviews: usize,
    /// Findings read.
    pub findings: usize,
    /// Findings written.
    pub merged: usize,
    /// What the seat ran under, when one was launched: `landlock-abi-N`, `off`, `unavailable: …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// What the merging seat's call used, as its harness reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// How the findings were grouped, as the merge record says. A record read back with any other
/// word is refused: nothing downstream could tell what such a merge did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum MergeHow {
    /// By the code's own signals.
    Code,
    /// By a seat's answer (`seat` names it).
    Seat,
    /// Not at all: fewer than two reviewers raised findings.
    None,
}

// ── The panel read from the stream ─────────────────────────────────────────

/// What `panel-merge` handed on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MergedPanel {
    pub reviewers: Vec<Reviewer>,
    pub findings: Vec<MergedFinding>,
    pub merge: Option<MergeRecord>,
}

impl MergedPanel {
    /// Sorts the records into a panel and checks, once, that they fit together: each error
    /// names the record's `file: line N`. Vote records come back separately (for `apply`).
    pub fn read(records: Vec<(Record, String)>) -> Result<(MergedPanel, Vec<VoteRecord>)> {
        let mut panel = MergedPanel::default();
        let mut votes = Vec::new();
        let mut names = HashSet::new();
        let mut ids = HashSet::new();
        let mut found_at = Vec::new();
        for (rec, at) in records {
            match rec {
                Record::Reviewer(r) => {
                    if let Err(why) = crate::records::printable::check_folder_name(&r.name) {
                        bail!("{at}: reviewer {why}");
                    }
                    if !names.insert(r.name.clone()) {
                        bail!("{at}: a second reviewer record for {}", r.name);
                    }
                    if let Some(first) = panel.reviewers.first()
                        && first.candidate != r.candidate
                    {
                        bail!(
                            "{at}: {} and {} reviewed different candidates",
                            first.name,
                            r.name
                        );
                    }
                    panel.reviewers.push(r);
                }
                Record::Finding(f) => {
                    if !ids.insert(f.id.clone()) {
                        bail!("{at}: a second finding with the id {}", f.id);
                    }
                    if f.raised_by.is_empty() {
                        bail!("{at}: finding {} names no reviewer in raisedBy", f.id);
                    }
                    panel.findings.push(f);
                    found_at.push(at);
                }
                Record::Merge(_) if panel.merge.is_some() => {
                    bail!("{at}: a second merge record: one panel at a time")
                }
                Record::Merge(m) => panel.merge = Some(m),
                Record::Vote(v) => votes.push((v, at)),
                other => bail!(
                    "{at}: a {} record is panel-vote's output, not its input",
                    kind_of(&other)
                ),
            }
        }
        if panel.reviewers.is_empty() {
            bail!("no reviewer records: panel-vote reads panel-merge's output");
        }
        // Findings and votes may name reviewers and findings that come later in the stream.
        for (f, at) in panel.findings.iter().zip(&found_at) {
            if let Some(who) = f.raised_by.iter().find(|w| !names.contains(w.as_str())) {
                bail!(
                    "{at}: finding {} is raised by {who}, who is not a reviewer of this panel",
                    f.id
                );
            }
        }
        panel.check_votes(votes.iter().map(|(v, at)| (v, at.as_str())))?;
        panel.reviewers.sort_by(|a, b| name_order(&a.name, &b.name));
        Ok((panel, votes.into_iter().map(|(v, _)| v).collect()))
    }

    /// [`MergedPanel::read`] for records from elsewhere than a file: errors name them `record N`.
    pub fn of(records: Vec<Record>) -> Result<(MergedPanel, Vec<VoteRecord>)> {
        MergedPanel::read(
            records
                .into_iter()
                .enumerate()
                .map(|(i, r)| (r, format!("record {}", i + 1)))
                .collect(),
        )
    }

    /// Checks that votes fit this panel: each from a voter of it, on a finding of it that the
    /// voter did not raise, a better fix with its fix, and one vote per voter and finding.
    /// `at` names where a vote was read (`file: line N`), or is empty.
    pub fn check_votes<'a>(
        &self,
        votes: impl IntoIterator<Item = (&'a VoteRecord, &'a str)>,
    ) -> Result<()> {
        let mut seen = HashSet::new();
        for (v, at) in votes {
            let why = if let Some(why) = self.misfit(v) {
                why
            } else if !seen.insert((v.reviewer.as_str(), v.finding.as_str())) {
                format!("a second vote from {} on {}", v.reviewer, v.finding)
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

    /// Why a vote does not fit this panel, if it does not.
    fn misfit(&self, v: &VoteRecord) -> Option<String> {
        let Some(f) = self.findings.iter().find(|f| f.id == v.finding) else {
            return Some(format!(
                "{} voted on {}, which is not a finding of this panel",
                v.reviewer, v.finding
            ));
        };
        if !self.voters().any(|r| r.name == v.reviewer) {
            return Some(format!(
                "a vote from {}, who is not a voter of this panel",
                v.reviewer
            ));
        }
        if f.raised_by.contains(&v.reviewer) {
            return Some(format!(
                "{} voted on {}, which it raised",
                v.reviewer, v.finding
            ));
        }
        let no_fix = v.fix.as_deref().is_none_or(|f| f.trim().is_empty());
        if v.vote == Some(VoteKind::BetterFix) && no_fix {
            return Some(format!(
                "{}'s better fix on {} gives no fix",
                v.reviewer, v.finding
            ));
        }
        None
    }

    pub fn candidate(&self) -> &str {
        &self.reviewers[0].candidate
    }

    /// The reviewers that vote: those with a readable review.
    pub fn voters(&self) -> impl Iterator<Item = &Reviewer> {
        self.reviewers.iter().filter(|r| r.decision.is_some())
    }

    /// The findings a voter is shown: those it did not raise.
    pub fn shown_to<'a>(&'a self, voter: &'a str) -> impl Iterator<Item = &'a MergedFinding> {
        self.findings
            .iter()
            .filter(move |f| !f.raised_by.iter().any(|r| r == voter))
    }
}

pub fn kind_of(rec: &Record) -> &'static str {
    match rec {
        Record::Reviewer(_) => "reviewer",
        Record::Finding(_) => "finding",
        Record::Merge(_) => "merge",
        Record::Vote(_) => "vote",
        Record::Synthesis(_) => "synthesis",
        Record::Panel(_) => "panel",
        Record::Decision(_) => "decision",
        Record::Route(_) => "route",
    }
}

/// Reads records of the given types, each with its `file: line N`.
pub fn read(inputs: &[String], want: &[&str]) -> Result<Vec<(Record, String)>> {
    read_in(crate::records::input::sources(inputs), want)
}

/// [`read`] over sources.
pub fn read_in(
    sources: Vec<crate::records::input::Source>,
    want: &[&str],
) -> Result<Vec<(Record, String)>> {
    let mut out = Vec::new();
    crate::records::for_each_in::<Record>(sources, want, |r, at| {
        out.push((r, at.to_string()));
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(reviewer: &str, vote: VoteKind) -> FindingVote {
        FindingVote {
            reviewer: reviewer.into(),
            vote,
            reason: "r".into(),
            fix: None,
        }
    }

    #[test]
    fn records_refuse_nested_structs_given_by_position() {
        let at = || "in: line 2".to_string();
        let entry = Record::Synthesis(SynthesisEntry {
            result: FindingResult::Kept,
            finding: SynthesisFinding {
                finding: MergedFinding {
                    id: "F1".into(),
                    severity: Severity::Block,
                    evidence: "e".into(),
                    fix: "f".into(),
                    file: None,
                    line: None,
                    raised_by: vec!["review-1".into()],
                    sources: vec!["review-1/1".into()],
                    possible_duplicate_of: vec![],
                },
                votes: vec![v("review-2", VoteKind::Agree)],
                original_fix: None,
            },
            why: "w".into(),
            no_votes_from: vec![],
        });
        let line = serde_json::to_string(&entry).unwrap();
        let back: Record = crate::records::parse(&line, &at, OUTPUT_TYPES).unwrap();
        assert_eq!(back, entry);
        // The vote, then the finding, as its values in a JSON array.
        let by_position = [
            line.replace(
                r#"{"reviewer":"review-2","vote":"agree","reason":"r"}"#,
                r#"["review-2","agree","r"]"#,
            ),
            r#"{"type":"synthesis","result":"kept","finding":["F1","block","e","f",null,null,["review-1"],["review-1/1"],[],[]],"why":"w"}"#.to_string(),
        ];
        for bad in by_position {
            assert_ne!(bad, line);
            let err = crate::records::parse::<Record>(&bad, &at, OUTPUT_TYPES).unwrap_err();
            // A struct with a flattened part is read as a map, which serde never reads by
            // position: its message names the struct instead.
            assert!(
                err.to_string().starts_with(
                    "in: line 2: a synthesis record that does not fit: invalid type: sequence, expected "
                ),
                "{bad}: {err}"
            );
        }
        let err = crate::records::parse::<Record>(r#"{"type":"route","x":1}"#, &at, OUTPUT_TYPES)
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("in: line 2: a route record that does not fit: missing field"),
            "{err}"
        );
    }
}
