//! The `run-folder` record: one run folder, as `panel-tally --runs` lists it
//! (`engine::runs` reads the folders).

/// What one run folder holds, as `panel-tally --runs` shows it (a `run-folder` record).
#[derive(Clone, Debug, serde::Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RunFolder {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub path: String,
    /// When its run started (UTC, from its name).
    pub started: String,
    pub age_secs: u64,
    /// The bytes of its files.
    pub bytes: u64,
    /// The judges it keeps (folders with a prompt).
    pub judges: u64,
    /// Its ledger (`verdicts.jsonl`, `reviews.jsonl`, `pr-verdicts.jsonl`), the records in it
    /// and its sha256, as the run's closing line named them; null in a run with no ledger
    /// (panel-merge's, panel-vote's).
    pub ledger: Option<String>,
    pub records: Option<u64>,
    pub seal: Option<String>,
    /// A live run holds it: never removed.
    pub live: bool,
    /// Removed by `--keep`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}
