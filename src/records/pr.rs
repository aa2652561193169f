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

/// What panel-judge's man page says of `--contract pr` and the verdict block.
pub const JUDGE_DOC: &str = "PULL REQUESTS (--contract pr --plan FILE --repo DIR): one reviewer per plan member, all at once, each in its own detached git worktree of the head (made under the temporary folder and removed afterwards) and with its harness's reviewer mode: read tools only, no writes and no commands where the harness allows it (claude; codex keeps its shell in a read-only sandbox). Each member ends in one pr-verdict record, on standard output and in the run folder.

The verdict block: the reviewer's last message carries one key per line. Verdict: MERGE or Verdict: FIX_FIRST. PR: OWNER/REPO#N (OWNER/REPO when the plan has no PR number; the repository's case is ignored). Head: the head commit, whole or its first 8 or more hex digits. A MERGE adds CI-policy: unchanged, or CI-policy: weakened KEY, … (required-checks, triggers, permissions, pinning, thresholds, secrets). A FIX_FIRST adds Defect class: (a few words) and Findings: with one `- path:LINE — what is wrong` line per finding. An optional Follow-ups: heading, before or after the verdict lines, holds `- title | done_when | severity` lines (severity low, medium or high; at most 5), or reads Follow-ups: none; a faulty block is dropped whole with one warning (multiple_blocks, bad_item, bad_severity, too_many, too_long, placeholder) and never changes the verdict. Lines inside code fences or HTML comments are not read.

Acceptance: a block that is missing, repeats a key, gives another verdict, lacks PR: or Head:, or names another PR or head is refused; the reviewer is asked once to correct it (the brief again, with the reason and the rule), and a second refusal makes the member malformed. A verdict from a reviewer whose event stream shows no investigative call (Read, Grep, Glob, LS, or a shell command that reads files) is depth-floor. A usage-limit notice is the harness's own (usage-limit, with resetsAt when the notice gives one) only when the harness also exited non-zero; the same words from the reviewer are malformed. A reviewer that changed its checkout (a file, or HEAD) is checkout-changed. A reviewer silent past --timeout is replaced once by a fresh reviewer named MEMBER-r2, and the member is timeout when that one is silent too. With --out DIR, a member whose record there answered (ok, malformed, depth-floor, checkout-changed) for the same repository, PR, head and brief hash is not launched again and its record is written again; the others run again.";
