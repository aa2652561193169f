//! A pull request panel's records: how each member ended (`pr-verdict`), with the parts of a
//! reviewer's verdict block that a record keeps, and the panel's verdict (`pr-panel`, which
//! `rules::pr::aggregate::aggregate` decides).

use serde::{Deserialize, Serialize};

use crate::records::Usage;

/// The two verdicts a reviewer can give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum PrVerdict {
    #[serde(rename = "MERGE")]
    Merge,
    #[serde(rename = "FIX_FIRST")]
    FixFirst,
}

impl PrVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            PrVerdict::Merge => "MERGE",
            PrVerdict::FixFirst => "FIX_FIRST",
        }
    }
}

/// What the fix-proof check said of the PR's tests (a `fix-proof/v1` line's verdict).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum FixProof {
    Ok,
    Vacuous,
    NoTests,
    Error,
    /// The check ran where its result cannot be trusted.
    Untrusted,
    /// A proof was asked for but none could be read for this head.
    Unread,
}

impl FixProof {
    pub fn as_str(self) -> &'static str {
        match self {
            FixProof::Ok => "ok",
            FixProof::Vacuous => "vacuous",
            FixProof::NoTests => "no-tests",
            FixProof::Error => "error",
            FixProof::Untrusted => "untrusted",
            FixProof::Unread => "unread",
        }
    }
}

/// A later round's answer to the earlier rounds' findings (its `Earlier findings:` checklist).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct EarlierChecklist {
    #[serde(default)]
    pub fixed: Vec<String>,
    #[serde(default)]
    pub not_fixed: Vec<String>,
}

/// How a member ended; everything but `ok` is no verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PrStatus {
    Ok,
    /// The block was refused or names another PR or head (after one correction and a fresh
    /// reviewer).
    Malformed,
    /// A verdict from a reviewer that made no investigative call.
    DepthFloor,
    /// The harness itself said its usage limit was reached.
    UsageLimit,
    /// The reviewer changed its checkout.
    CheckoutChanged,
    /// Silent past the deadline, and so was the fresh reviewer after it.
    Timeout,
    Failed,
    NotFound,
    RateLimited,
    /// The harness refused the member's model, and its sonnet profile too when it has one: "An
    /// opus spawn the dispatch refuses is tried once at its sonnet profile and the member is
    /// degraded; a second refusal is a none with SPAWN_REFUSED_REASON" (seed 002).
    ModelRefused,
    Interrupted,
    /// The reviewer's standard output passed `--max-output`; it was stopped.
    OutputLimit,
    /// Left out (`panel-judge --stop-when-decided`): another member's blocking FIX_FIRST
    /// decided the panel, so this one was ended or never launched; `reason` says which member.
    Cancelled,
}

impl PrStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PrStatus::Ok => "ok",
            PrStatus::Malformed => "malformed",
            PrStatus::DepthFloor => "depth-floor",
            PrStatus::UsageLimit => "usage-limit",
            PrStatus::CheckoutChanged => "checkout-changed",
            PrStatus::Timeout => "timeout",
            PrStatus::Failed => "failed",
            PrStatus::NotFound => "not-found",
            PrStatus::RateLimited => "rate-limited",
            PrStatus::ModelRefused => "model-refused",
            PrStatus::Interrupted => "interrupted",
            PrStatus::OutputLimit => "output-limit",
            PrStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the reviewer answered, so a repeat run keeps its record instead of asking again.
    pub fn answered(self) -> bool {
        matches!(
            self,
            PrStatus::Ok | PrStatus::Malformed | PrStatus::DepthFloor | PrStatus::CheckoutChanged
        )
    }
}

/// The CI-policy line of a MERGE.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CiPolicy {
    /// `unchanged` or `weakened`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

/// One finding of a FIX_FIRST: a reviewer's `- path:LINE — what` line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PrFinding {
    /// The cited file, when the finding cites `path:line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub text: String,
}

/// A task a reviewer proposes beside its verdict (its `Follow-ups:` block).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct FollowUp {
    pub title: String,
    pub done_when: String,
    pub severity: String,
}

/// What the brief shows of the change: the changed files, the symbolic links among them, and
/// the diff when it is small.
#[derive(Clone, Debug, Default)]
pub struct Change {
    pub base: Option<String>,
    /// `git diff --stat`-like lines, one per file.
    pub files: Vec<String>,
    pub diff: Option<String>,
    /// The changed paths that are symbolic links at the head, at most [`MAX_LINKS`].
    pub links: Vec<Link>,
    /// How many more there are.
    pub more_links: usize,
}

/// The most symbolic links a brief names one by one.
pub const MAX_LINKS: usize = 50;

/// A changed path that is a symbolic link at the head, and its target as git holds it: text
/// from the PR, shown escaped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    pub path: String,
    /// The target's text, or `None` when it is too long to show (or cannot be read).
    pub target: Option<String>,
    /// The target's length in bytes.
    pub size: u64,
    /// The path inside the repository that the target names, when the head holds it.
    pub inside: Option<String>,
}

/// The `pr-verdict` record: how one plan member ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PrVerdictRecord {
    #[serde(rename = "type")]
    pub kind: String,
    /// The plan member's name.
    pub member: String,
    /// The reviewer whose reply this is: the member, or its fresh `-r2`.
    pub reviewer: String,
    pub shape: String,
    pub brief_id: String,
    pub brief_hash: String,
    pub profile: String,
    pub seat: String,
    #[serde(default)]
    pub harness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub blocking: bool,
    pub degraded: bool,
    pub repo: String,
    pub pr: Option<u64>,
    pub head: String,
    /// MERGE or FIX_FIRST; any other value reads as none, a missing member (docs/rules.md).
    #[serde(default, deserialize_with = "verdict_or_none")]
    #[cfg_attr(feature = "schemas", schemars(with = "Option<PrVerdict>"))]
    pub verdict: Option<PrVerdict>,
    pub status: PrStatus,
    /// Why there is no verdict, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_policy: Option<CiPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect_class: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<PrFinding>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub findings_truncated: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<FollowUp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_ups_warning: Option<String>,
    /// The reviewer's OWNER-BRIEF block, as it wrote it: text from a model, shown escaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_brief: Option<String>,
    /// Its `Earlier findings:` checklist, when earlier rounds' findings were in its brief.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_findings: Option<EarlierChecklist>,
    /// When a usage limit resets, as the harness said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<String>,
    /// The start of an answer that was not a verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// The calls the reviewer made, as its event stream shows them.
    #[serde(default)]
    pub tool_calls: Vec<String>,
    /// The reviewer was asked once to correct its block.
    #[serde(default)]
    pub corrected: bool,
    /// How the correction reached it: `resumed` (its own session, which had read the code, was
    /// resumed with the short correction) or `fresh` (a new call with the brief and the
    /// correction, where the harness cannot resume or gave no session id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correction: Option<Correction>,
    /// How many harness runs this member took (first, correction, fresh reviewer).
    #[serde(default)]
    pub launches: u32,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The run folder that keeps every prompt, argv and output of this member.
    #[serde(default)]
    pub run: String,
    /// What the judge ran under: `landlock-abi-N`, `off`, or `unavailable: why`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

/// How a reviewer's correction was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Correction {
    Resumed,
    Fresh,
}

/// A record's `verdict`: exactly `MERGE` or `FIX_FIRST`, else none. "Only a verdict of exactly
/// MERGE or FIX_FIRST naming input.head counts; any other value is a missing member" (seed 002),
/// so a record saying `LGTM`, `merge` or `1` is read, and its member counts as missing.
fn verdict_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<PrVerdict>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(match value.as_str() {
        Some("MERGE") => Some(PrVerdict::Merge),
        Some("FIX_FIRST") => Some(PrVerdict::FixFirst),
        _ => None,
    })
}

/// The panel's outcome, in Shepherd's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum PrOutcome {
    #[serde(rename = "MERGE")]
    Merge,
    #[serde(rename = "FIX_FIRST")]
    FixFirst,
    #[serde(rename = "no-verdict")]
    NoVerdict,
    #[serde(rename = "timeout")]
    Timeout,
}

impl PrOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            PrOutcome::Merge => "MERGE",
            PrOutcome::FixFirst => "FIX_FIRST",
            PrOutcome::NoVerdict => "no-verdict",
            PrOutcome::Timeout => "timeout",
        }
    }

    /// MERGE passes, FIX_FIRST fails, no verdict or a timeout leaves no decision.
    pub fn decision(self) -> crate::records::Decision {
        use crate::records::Decision;
        match self {
            PrOutcome::Merge => Decision::Pass,
            PrOutcome::FixFirst => Decision::Fail,
            PrOutcome::NoVerdict | PrOutcome::Timeout => Decision::NoDecision,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PanelFinding {
    pub member: String,
    pub shape: String,
    pub blocking: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PanelFollowUp {
    pub member: String,
    pub title: String,
    pub done_when: String,
    pub severity: String,
}

/// A counted verdict's OWNER-BRIEF block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PanelOwnerBrief {
    pub member: String,
    pub shape: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemberResult {
    pub member: String,
    pub shape: String,
    pub blocking: bool,
    /// MERGE or FIX_FIRST naming the head, or absent.
    pub verdict: Option<PrVerdict>,
    /// How it ended; `missing` when no record came.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The member's answer to the earlier rounds' findings, when its verdict counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_findings: Option<EarlierChecklist>,
}

/// The `pr-panel` record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PanelVerdict {
    #[serde(rename = "type")]
    pub kind: String,
    pub repo: String,
    pub pr: Option<u64>,
    pub head: String,
    pub verdict: PrOutcome,
    /// The blocking members whose FIX_FIRST decided it.
    pub dissent: Vec<String>,
    /// Blocking seats without a counted verdict.
    pub missing: Vec<String>,
    pub findings: Vec<PanelFinding>,
    /// Advisory findings dropped because the `path:line` they cite does not exist.
    pub findings_dropped: usize,
    pub findings_truncated: bool,
    pub follow_ups: Vec<PanelFollowUp>,
    /// Each counted verdict's OWNER-BRIEF block, in plan order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owner_briefs: Vec<PanelOwnerBrief>,
    pub satisfies_g10: bool,
    /// What the g10 bar missed (empty when it is satisfied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub g10_unmet: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_proof: Option<FixProof>,
    /// The members left out (panel-judge --stop-when-decided: status `cancelled`); absent when
    /// none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled: Vec<String>,
    /// The members left out with no blocking FIX_FIRST to decide the panel without them (a
    /// forged or edited stream): the panel then has no verdict. Absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cancelled_without_cause: Vec<String>,
    pub members: Vec<MemberResult>,
}

impl PanelVerdict {
    /// The pull request as its reports name it: `OWNER/REPO#N`, or the repository alone
    /// without a PR number.
    pub fn pr_name(&self) -> String {
        match self.pr {
            Some(n) => format!("{}#{n}", self.repo),
            None => self.repo.clone(),
        }
    }
}

/// The record type panel-judge --contract pr writes.
pub const VERDICT_TYPE: &str = "pr-verdict";
/// The record type panel-tally --pr --json writes.
pub const PANEL_TYPE: &str = "pr-panel";
