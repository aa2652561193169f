//! The `plan` record: the panel pr-classify --plan gives a pull request
//! (`rules::plan::plan_panel` plans it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::records::class::Class;

/// Whether opus can be spawned now (the seed's headroom port, asked once).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct Headroom {
    pub opus: bool,
}

/// One planned reviewer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// `rp-<owner>-<repo>-<pr>-<head 8>-<shape>`: the same input always names the same member.
    pub name: String,
    pub shape: String,
    pub brief_id: String,
    pub profile: String,
    /// `HARNESS:MODEL` for panel-judge.
    pub seat: String,
    pub blocking: bool,
    /// Planned at the sonnet profile because opus had no headroom.
    pub degraded: bool,
    /// The opus profile the member would have had, when it was planned at its sonnet one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downgraded_from: Option<String>,
    /// Why the shape is on the panel.
    pub reason: String,
}

/// The `plan` record: the panel and what a later stage needs to run it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PanelPlan {
    #[serde(rename = "type")]
    pub record_type: String,
    pub repo: String,
    pub pr: Option<u64>,
    pub head: String,
    pub base: Option<String>,
    pub kind: Option<String>,
    pub class: Class,
    pub headroom: Headroom,
    pub members: Vec<Member>,
    /// Agent-chat points, an estimate and never a cap.
    pub spend_estimate: u64,
    /// The policy's opus-to-sonnet map, which the aggregate needs to judge the g10 bar.
    pub sonnet_for: BTreeMap<String, String>,
    /// The seat of each sonnet profile in `sonnetFor`, for panel-judge: "An opus spawn the
    /// dispatch refuses is tried once at its sonnet profile and the member is degraded"
    /// (seed 002).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sonnet_seats: BTreeMap<String, String>,
    /// The class's symbolic links: changed paths that are links at the head.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}
