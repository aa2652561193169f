//! Reviewing a pull request with its planned panel: the briefs, the verdict block and its
//! acceptance, the follow-ups, the run that launches the reviewers in a checkout of the head,
//! and the aggregate that turns their verdicts into the panel's.

use serde::{Deserialize, Serialize};

pub use crate::contracts::pr::block::{CiPolicy, Finding, PrVerdict};
pub use crate::contracts::pr::followups::FollowUp;
use crate::records::Usage;
pub use crate::rules::pr::accept::PrStatus;

/// The `pr-verdict` record: how one plan member ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub findings_truncated: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<FollowUp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_ups_warning: Option<String>,
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
}

/// The record type panel-judge --contract pr writes.
pub const VERDICT_TYPE: &str = "pr-verdict";
/// The record type panel-tally --pr --json writes.
pub const PANEL_TYPE: &str = "pr-panel";
