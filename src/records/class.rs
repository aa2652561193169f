//! The `pr-class` record: what pr-classify makes of a pull request's facts
//! (`rules::classify::classify_pr` decides it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The advisory security-slice flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SecuritySlice {
    /// The counted lines.
    pub lines: u64,
    /// The threshold they passed.
    pub cap: u64,
    /// The non-generated security or authority paths touched (empty when the kind alone set it).
    pub guard_paths: Vec<String>,
}

/// The two classes of the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Class {
    G10,
    Standard,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::G10 => "g10",
            Class::Standard => "standard",
        }
    }
}

/// The `pr-class` record: the class, the size, the touch flags, the security-slice flag and
/// the symbolic links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PrClass {
    #[serde(rename = "type")]
    pub record_type: String,
    pub repo: Option<String>,
    pub pr: Option<u64>,
    pub head: Option<String>,
    pub base: Option<String>,
    pub kind: Option<String>,
    pub class: Class,
    /// Why the class is g10 (`unread`, `large`, `dependency` or another strict flag,
    /// `g10-hold`); empty for standard.
    pub reasons: Vec<String>,
    /// Counted lines; null when unread.
    pub changed_lines: Option<u64>,
    /// Generated lines left out of the count; null when unread.
    pub generated_lines: Option<u64>,
    pub large_lines: u64,
    pub large: bool,
    /// Files whose line counts are unknown (a count missing from the input).
    pub unread_paths: Vec<String>,
    /// Binary files: counted as files of no lines, as GitHub counts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub binary_paths: Vec<String>,
    /// The file list misses files (gh lists at most 100): the size is unread.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list_incomplete: bool,
    pub file_count: usize,
    pub dependency_touch: bool,
    pub g10_hold: bool,
    pub touches: BTreeMap<String, Vec<String>>,
    pub security_slice: Option<SecuritySlice>,
    /// Changed paths that are symbolic links at the head (mode 120000, from `git diff --raw`);
    /// a reviewer's checkout holds each as a plain file with its target's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}

impl PrClass {
    /// Whether a touch flag is set.
    pub fn touched(&self, flag: &str) -> bool {
        self.touches.get(flag).is_some_and(|p| !p.is_empty())
    }
}
