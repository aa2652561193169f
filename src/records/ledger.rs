//! The ledger's records (`judge-stats`, `pair-agreement`, `ledger-summary`) and the report
//! they make together, as the text and the picture draw them.

use std::collections::BTreeMap;

use serde::Serialize;

/// A flag and the numbers that raised it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct Flag {
    pub flag: &'static str,
    pub evidence: String,
}

/// A canary's score as recorded.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
    /// What a budget estimated those answers would cost before they were launched
    /// (`--budget-usd`), beside `costUsd`; absent when no record carried an estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_usd: Option<f64>,
    /// Panels where the other judges who answered had a majority, and how often this one
    /// answered against it.
    pub majority_panels: u64,
    pub against_majority: u64,
    /// Canaries (known answers) this seat was given: kept per seat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryScore>,
    /// A pairwise judge's answers against the order it was shown them in (pairwise records
    /// only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<PositionStats>,
    pub flags: Vec<Flag>,
}

/// A pairwise judge's position consistency and first-shown rate.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PositionStats {
    /// Panels where it answered in both orders, and those where its two answers agreed.
    pub both_orders: u64,
    pub consistent: u64,
    pub consistency: Option<f64>,
    /// Wilson's 95 % interval on the consistency (one item a panel).
    pub consistency_ci95: Option<[f64; 2]>,
    /// Answers it gave in any order, and those that preferred the answer shown first.
    pub answers: u64,
    pub first_shown: u64,
    pub first_shown_rate: Option<f64>,
    /// 95 % interval on the first-shown rate, by a bootstrap over panels (a judge's two
    /// answers on one panel are not independent).
    pub first_shown_rate_ci95: Option<[f64; 2]>,
}

/// `pair-agreement`: two judges that sat on the same panels.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
    #[cfg_attr(feature = "schemas", schemars(range(min = 1)))]
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
    /// Whether the history is of pairwise records: holds and breaks then read A and B, pass
    /// and fail a preference for A and for B (absent for verdicts).
    #[serde(default, skip_serializing_if = "is_false")]
    pub pairwise: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `gold-agreement`: a judge's, seat's or lens's answers, or the panel's decisions, against
/// gold labels (`--gold`).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoldAgreement {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `judge`, `seat`, `lens` or `panel`.
    pub scope: &'static str,
    pub name: String,
    /// The label counted as positive: `holds`, or `A` for pairwise preferences.
    pub positive: &'static str,
    /// Labelled panels it sat on (a judge, seat or lens: once per judge), and those it gave
    /// an answer on.
    pub labelled: u64,
    pub answered: u64,
    /// No answer (a panel: no decision), counted apart, never as wrong.
    pub abstained: u64,
    /// Judges left out of panels decided without them (cancelled), counted apart.
    pub cancelled: u64,
    pub correct: u64,
    /// `[[positive/positive, positive/negative], [negative/positive, negative/negative]]`,
    /// the label first, then the answer.
    pub table: [[u64; 2]; 2],
    pub accuracy: Option<f64>,
    /// Wilson's 95 % interval, as for sensitivity and specificity.
    pub accuracy_ci95: Option<[f64; 2]>,
    /// Of the positive labels, the share answered positive.
    pub sensitivity: Option<f64>,
    pub sensitivity_ci95: Option<[f64; 2]>,
    /// Of the negative labels, the share answered negative.
    pub specificity: Option<f64>,
    pub specificity_ci95: Option<[f64; 2]>,
    /// Cohen's kappa with the labels; null when chance alone agrees fully.
    pub kappa: Option<f64>,
    /// 95 % interval on the kappa, by a bootstrap over the labelled panels.
    pub kappa_ci95: Option<[f64; 2]>,
}

/// A decider compared with the gold labels, on the labelled panels of one set of judges.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Compared {
    /// Its judges (one: a single judge; all of the set: the panel).
    pub judges: Vec<String>,
    /// Panels it decided (a sub-panel at the same share of its judges as the panel's
    /// threshold), of the set's labelled panels.
    pub decided: u64,
    pub correct: u64,
    pub accuracy: Option<f64>,
    pub accuracy_ci95: Option<[f64; 2]>,
    pub kappa: Option<f64>,
    pub kappa_ci95: Option<[f64; 2]>,
}

/// The comparison PoLL made, on one set of judges' labelled panels: the panel against its
/// best single judge and the best sub-panel of each smaller size (best by kappa, then
/// accuracy).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub labelled: u64,
    pub panel: Compared,
    pub best_judge: Option<Compared>,
    pub sub_panels: Vec<Compared>,
}

/// The gate (`--require-kappa`, `--require-accuracy`) on the panel's figure.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoldGate {
    /// `kappa` or `accuracy`.
    pub figure: &'static str,
    pub threshold: f64,
    pub value: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    /// `clears` (exit 0: the interval's low end reaches the threshold), `fails` (exit 1: its
    /// high end is below it) or `straddles` (exit 3: not enough labels to tell).
    pub result: &'static str,
    /// When it straddles: about how many more labelled candidates would settle it, the figure
    /// staying as observed (null: it sits on the threshold, and no number would).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_labels: Option<u64>,
}

/// The share of positives over the history's unlabelled panels, corrected for the panel's
/// errors on the labelled ones (Rogan and Gladen).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct CorrectedShare {
    /// Unlabelled panels decided, and those that decided positive.
    pub decided: u64,
    pub positive: u64,
    pub observed: f64,
    /// Wilson's 95 % interval on the observed share.
    pub observed_ci95: [f64; 2],
    /// The panel's sensitivity and specificity on the labelled panels.
    pub sensitivity: Option<f64>,
    pub specificity: Option<f64>,
    /// `(observed + specificity - 1) / (sensitivity + specificity - 1)`, clipped to 0..1;
    /// null when the panel is no better than a coin on the labels.
    pub corrected: Option<f64>,
    /// 95 % interval by a bootstrap that draws the labelled and the unlabelled panels alike.
    pub corrected_ci95: Option<[f64; 2]>,
}

/// `gold-summary`: the labels and the history together.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct GoldSummary {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub positive: &'static str,
    pub labels: u64,
    pub labelled_panels: u64,
    /// Labels no panel was about: how many, and the first of them.
    pub labels_without_records: u64,
    pub labels_without_records_named: Vec<String>,
    /// Panels with no label: how many, and the first of their candidates.
    pub panels_without_label: u64,
    pub panels_without_label_named: Vec<String>,
    /// The panel against its best single judge and smaller sub-panels, per set of judges
    /// (the five most labelled).
    pub comparisons: Vec<Comparison>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GoldGate>,
    /// Absent when no unlabelled panel was decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrected: Option<CorrectedShare>,
}

/// What the ledger reports against gold labels.
pub struct GoldReport {
    pub judges: Vec<GoldAgreement>,
    pub seats: Vec<GoldAgreement>,
    pub lenses: Vec<GoldAgreement>,
    pub panel: GoldAgreement,
    pub summary: GoldSummary,
}

/// What stopping panels once decided saved (`panel-judge --stop-when-decided`).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
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
pub struct LedgerReport {
    pub judges: Vec<JudgeStats>,
    pub seats: Vec<JudgeStats>,
    pub families: Vec<JudgeStats>,
    pub pairs: Vec<PairAgreement>,
    pub summary: LedgerSummary,
    pub gold: Option<GoldReport>,
}
