//! The estimate record (`--estimate --json`): what each judge of a run is estimated to cost
//! before anything is launched, and what a budget would let in.

use serde::{Deserialize, Serialize};

/// panel-judge or panel-vote `--estimate --json`: the run's estimate, launching nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct EstimateRecord {
    #[serde(rename = "type")]
    pub kind: String,
    /// Each judge, in the order it would be asked.
    pub judges: Vec<JudgeEstimate>,
    /// The judges priced; those without a price are left out of it (`unpriced`).
    #[serde(serialize_with = "crate::records::usd_total")]
    pub total_usd: f64,
    /// The budget (`--budget-usd`, `PANEL_BUDGET_USD`); null without one.
    pub budget_usd: Option<f64>,
}

/// One judge's estimate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct JudgeEstimate {
    pub judge: String,
    pub seat: String,
    /// The model priced: the price table's name for it (`replay` for recorded answers); null
    /// when it has no price.
    pub model: Option<String>,
    /// Its prompt's and its harness's overhead bytes at 4 bytes a token, every request's; null
    /// unpriced.
    pub input_tokens: Option<u64>,
    /// The history's median answer for its seat, else 500; null unpriced.
    pub output_tokens: Option<u64>,
    /// Every input token at the uncached price, the output at the output price; null when its
    /// model has no price (`unpriced` says why).
    #[serde(serialize_with = "crate::records::usd")]
    pub usd: Option<f64>,
    /// Why it has no price, and what gives it one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unpriced: Option<String>,
    /// Whether the budget lets it in, every judge asked at once in this order (never when it
    /// has no price); absent without a budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fits: Option<bool>,
}
