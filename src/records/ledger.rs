//! The ledger's records (`judge-stats`, `pair-agreement`, `ledger-summary`) and the report
//! they make together, as the text and the picture draw them.

use std::collections::BTreeMap;

use serde::Serialize;

/// A flag and the numbers that raised it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Flag {
    pub flag: &'static str,
    pub evidence: String,
}

/// A canary's score as recorded.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CanaryScore {
    pub seen: u64,
    pub hits: u64,
    pub wrong: u64,
    pub abstained: u64,
    pub hit_rate: f64,
    /// Wilson's 95 % interval on the hit rate.
    pub hit_rate_ci95: [f64; 2],
}

/// `judge-stats`: one judge (seat × lens), or one seat's or family's judges together.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JudgeStats {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `judge`, `seat` or `family`.
    pub scope: &'static str,
    /// `lens@seat`, the seat, or the family.
    pub name: String,
    /// The judge's number in the agreement matrix (judges only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub panels: u64,
    pub holds: u64,
    pub breaks: u64,
    pub abstained: u64,
    /// Panels decided without this judge (status cancelled), apart from abstentions; absent
    /// when none was.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cancelled: u64,
    /// Abstentions by status.
    pub abstentions: BTreeMap<&'static str, u64>,
    /// Holds among the verdicts given (abstentions left out).
    pub holds_rate: Option<f64>,
    /// Wilson's 95 % interval on the holds rate (a judge answers once a panel).
    pub holds_rate_ci95: Option<[f64; 2]>,
    pub abstention_rate: Option<f64>,
    /// Read from fixed buckets: within 4.5 %.
    pub median_ms: Option<u64>,
    pub p90_ms: Option<u64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// Panels where the other judges who answered had a majority, and how often this one
    /// answered against it.
    pub majority_panels: u64,
    pub against_majority: u64,
    /// Canaries (known answers) this seat was given: kept per seat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryScore>,
    pub flags: Vec<Flag>,
}

/// `pair-agreement`: two judges that sat on the same panels.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PairAgreement {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub a: String,
    pub b: String,
    pub a_index: usize,
    pub b_index: usize,
    pub shared_panels: u64,
    /// Panels where both gave a verdict: the kappa's items.
    pub both_answered: u64,
    pub agreed: u64,
    pub agreement: Option<f64>,
    /// 95 % interval on the agreement, by a bootstrap over panels.
    pub agreement_ci95: Option<[f64; 2]>,
    /// Cohen's kappa; null when chance alone agrees fully (both always said the same word).
    pub kappa: Option<f64>,
    /// 95 % interval on the kappa, by a bootstrap over panels.
    pub kappa_ci95: Option<[f64; 2]>,
    /// `[[holds/holds, holds/breaks], [breaks/holds, breaks/breaks]]`, a's answer first.
    pub table: [[u64; 2]; 2],
    pub flags: Vec<Flag>,
}

/// Fleiss' kappa and Krippendorff's alpha of one lens's judges on the same panels.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LensKappa {
    pub lens: String,
    pub kappa: Option<f64>,
    /// 95 % interval on the kappa, by a bootstrap over panels.
    pub kappa_ci95: Option<[f64; 2]>,
    /// Krippendorff's alpha (nominal; an abstention is missing).
    pub alpha: Option<f64>,
    /// 95 % interval on the alpha, by a bootstrap over panels.
    pub alpha_ci95: Option<[f64; 2]>,
    /// Panels with at least two of the lens's judges answering.
    pub panels: u64,
}

/// The smallest sub-panel of one panel shape whose outcome matched the full panel's.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubPanel {
    /// The full panel's judges, and the panels with exactly these judges.
    pub panel: Vec<String>,
    pub panels: u64,
    /// The sub-panel kept, and how often its outcome matched the full panel's.
    pub keep: Vec<String>,
    pub matched: u64,
    pub match_rate: f64,
    /// Wilson's 95 % interval on the match rate: the sub-panel is kept only when its low end
    /// reaches 95 %.
    pub match_rate_ci95: [f64; 2],
    /// What the judges left out spent on these panels (judge time: their durations summed).
    pub saved_input_tokens: u64,
    pub saved_output_tokens: u64,
    pub saved_cost_usd: f64,
    pub saved_judge_ms: u64,
}

/// `ledger-summary`: the history as a whole.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerSummary {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub records: u64,
    pub panels: u64,
    /// Canary records: scored per seat, never counted in a panel.
    pub canaries: u64,
    pub judges: usize,
    /// The holds a panel needed (`--agree N`; absent: every judge, panel-tally's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub agree: Option<usize>,
    /// The panels' outcomes by panel-tally's rule at that threshold.
    pub pass: u64,
    pub fail: u64,
    pub no_decision: u64,
    /// Fleiss' kappa over panels with two answers or more (each panel's own raters).
    pub fleiss_kappa: Option<f64>,
    /// 95 % interval on Fleiss' kappa, by a bootstrap over panels.
    pub fleiss_kappa_ci95: Option<[f64; 2]>,
    pub fleiss_panels: u64,
    /// Krippendorff's alpha (nominal; an abstention is missing, never a category) over every
    /// panel with two answers or more.
    pub alpha: Option<f64>,
    /// 95 % interval on the alpha, by a bootstrap over panels.
    pub alpha_ci95: Option<[f64; 2]>,
    /// The bootstrap's replicates (`--bootstrap`) and fixed seed: the same history and
    /// replicates give the same intervals.
    pub bootstrap_replicates: u32,
    pub bootstrap_seed: u64,
    pub by_lens: Vec<LensKappa>,
    pub sub_panels: Vec<SubPanel>,
    /// Panels whose sub-panels were not scored (more than 12 judges, or past 64 shapes).
    pub unscored_panels: u64,
    /// Panels closed before their last record because too many were open at once.
    pub closed_early: u64,
    pub flags: u64,
    /// Judges left out of panels decided without them, and what they would have spent, each
    /// at its judge's mean over the panels it was asked to the end (absent when none was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<StoppedEarly>,
}

/// What stopping panels once decided saved (`panel-judge --stop-when-decided`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoppedEarly {
    pub cancelled: u64,
    /// Panels with a judge left out that the answers in decided at the ledger's threshold.
    pub decided_early: u64,
    /// Panels with a judge left out that they did not: no decision, since a judge left out
    /// counts as missing (read with the --agree the panels ran under).
    pub cancelled_without_cause: u64,
    pub judge_ms: u64,
    pub tokens: u64,
    pub cost_usd: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Everything the ledger reports.
pub struct Report {
    pub judges: Vec<JudgeStats>,
    pub seats: Vec<JudgeStats>,
    pub families: Vec<JudgeStats>,
    pub pairs: Vec<PairAgreement>,
    pub summary: LedgerSummary,
}
