//! The JSON-lines records every tool shares, and reading them with line numbers.
//!
//! Every record carries `"type"`. A tool handed a record of another type says which tool it is
//! meant for, naming the file and line.

pub mod candidate;
pub mod class;
pub mod doctor;
pub mod estimate;
pub mod exit_status;
pub mod facts;
pub mod gold;
pub mod input;
pub mod ledger;
pub mod pairwise;
pub mod plan;
pub mod pr;
pub mod printable;
pub mod review;
pub mod runs;
pub mod strict;
pub mod synthesis;
pub mod tally;
pub mod view;

use std::io::Write;

use anyhow::{Result, anyhow, bail};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

use crate::records::input::Input;

/// Which tool reads a record of the given type, as a phrase for error messages.
pub fn destination(kind: &str) -> &'static str {
    match kind {
        "verdict" => "verdicts go through panel-tally",
        "pairwise" => "pairwise preferences go through panel-tally",
        "gold" => "gold labels go to panel-tally --ledger --gold",
        "review" => "reviews go through panel-merge",
        "finding" | "reviewer" | "merge" => "merged findings go through panel-vote",
        "vote" | "synthesis" | "panel" | "decision" | "route" => {
            "votes and their outcome go through panel-tally"
        }
        "tally" => {
            "a tally is panel-tally's output and is read by people and scripts, not by the tools"
        }
        "pr-panel" => {
            "a PR panel's verdict is panel-tally --pr's output and is read by people and scripts, not by the tools"
        }
        "pr-class" | "plan" => "plans go to panel-judge --contract pr and panel-tally --pr",
        "pr-verdict" => "PR verdicts go through panel-tally --pr",
        _ => "no tool of this suite reads it",
    }
}

/// Parses one line as a record of type `want`, or says precisely why it is not one.
pub fn parse<T: DeserializeOwned>(line: &str, at: &dyn Fn() -> String, want: &[&str]) -> Result<T> {
    // The fast path: one parse straight into the record type.
    // A record is an object, and so is every struct inside it (see crate::records::strict).
    let first = match crate::records::strict::from_str::<T>(line) {
        Ok(rec) if line.trim_start().starts_with('{') => return check_kind(line, rec, at, want),
        Ok(_) => bail!("{}: not a JSON object", at()),
        Err(e) => e,
    };
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| anyhow!("{}: not a JSON record: {e}", at()))?;
    let Some(obj) = value.as_object() else {
        bail!("{}: not a JSON object", at());
    };
    let Some(kind) = obj.get("type").and_then(|t| t.as_str()) else {
        bail!("{}: a record without a \"type\"", at());
    };
    if !want.contains(&kind) {
        bail!("{}: a {kind} record; {}", at(), destination(kind));
    }
    bail!("{}: a {kind} record that does not fit: {first}", at())
}

fn check_kind<T: DeserializeOwned>(
    line: &str,
    rec: T,
    at: &dyn Fn() -> String,
    want: &[&str],
) -> Result<T> {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<&'a str>,
    }
    // Records of our types keep "type" first; check it without a second full parse when we can.
    let kind = serde_json::from_str::<Kind>(line)
        .ok()
        .and_then(|k| k.kind.map(str::to_string));
    match kind {
        Some(k) if want.contains(&k.as_str()) => Ok(rec),
        Some(k) => bail!("{}: a {k} record; {}", at(), destination(&k)),
        None => bail!("{}: a record without a \"type\"", at()),
    }
}

/// Reads every record of the inputs, calling `each` with the record and its `file: line N`.
/// Blank lines are skipped; every other bad line is an error naming it.
pub fn for_each<T: DeserializeOwned>(
    inputs: &[String],
    want: &[&str],
    each: impl FnMut(T, &str) -> Result<()>,
) -> Result<()> {
    for_each_in(crate::records::input::sources(inputs), want, each)
}

/// [`for_each`] over sources.
pub fn for_each_in<T: DeserializeOwned>(
    sources: Vec<crate::records::input::Source>,
    want: &[&str],
    mut each: impl FnMut(T, &str) -> Result<()>,
) -> Result<()> {
    let mut buf = String::new();
    for source in sources {
        let mut input = Input::from_source(source)?;
        while input.next_line(&mut buf)? {
            if buf.trim().is_empty() {
                continue;
            }
            let rec = parse::<T>(&buf, &|| input.at(), want)?;
            each(rec, &input.at())?;
        }
    }
    Ok(())
}

/// Writes one record as a compact JSON line.
pub fn write<W: Write + ?Sized, T: Serialize>(out: &mut W, rec: &T) -> Result<()> {
    // Keep an I/O error an I/O error, so a closed pipe is still seen as one.
    serde_json::to_writer(&mut *out, rec).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// What a panel decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Enough yes answers: holds, pass, MERGE.
    Pass,
    /// Too few yes answers even if every missing one had been yes: breaks, revise, FIX_FIRST.
    Fail,
    /// The missing answers could have changed the outcome.
    NoDecision,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Pass => "pass",
            Decision::Fail => "fail",
            Decision::NoDecision => "no-decision",
        }
    }

    /// The exit status of every tool that decides (docs/design.md §3): 0, 1 or 3.
    pub fn exit_status(self) -> u8 {
        match self {
            Decision::Pass => exit_status::PASS,
            Decision::Fail => exit_status::FAIL,
            Decision::NoDecision => exit_status::NO_DECISION,
        }
    }

    /// Many panels in one stream: one that failed outweighs any that did not decide, since no
    /// rerun can turn it; no decision outweighs a pass.
    pub fn worst(self, other: Decision) -> Decision {
        use Decision::*;
        match (self, other) {
            (Fail, _) | (_, Fail) => Fail,
            (NoDecision, _) | (_, NoDecision) => NoDecision,
            (Pass, Pass) => Pass,
        }
    }
}

impl From<Decision> for ExitCode {
    fn from(d: Decision) -> ExitCode {
        ExitCode::from(d.exit_status())
    }
}

/// The two verdicts of the contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Holds,
    Breaks,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Breaks => "breaks",
        }
    }
}

/// How a judge's answer ended. Everything but `ok` is an abstention: no verdict, never a guess.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A verdict that meets the contract.
    Ok,
    /// An answer came back but did not meet the contract.
    Unreadable,
    /// No answer within the deadline.
    Timeout,
    /// The harness failed (non-zero exit, an error it printed) with no readable answer.
    Failed,
    /// The harness executable was not found.
    NotFound,
    /// The harness reported its usage limit.
    UsageLimit,
    /// The harness reported a rate limit.
    RateLimited,
    /// The harness said the model it was asked for is not available to it (not allowed, no
    /// access, no quota for that model).
    ModelRefused,
    /// Stopped by SIGINT or SIGTERM to panel-judge.
    Interrupted,
    /// Stopped because its standard output passed `--max-output`.
    OutputLimit,
    /// Not needed: its panel was decided without it (`panel-judge --stop-when-decided`), so it
    /// was ended or never launched. Counted as missing, never as a verdict.
    Cancelled,
    /// Set by panel-tally --require-canaries, never by a judge: the verdict was given, but the
    /// judge's seat missed its canary (or has none), so it does not count.
    CanaryMissed,
    /// A pairwise judge shown the two answers in both orders preferred a different one in
    /// each: it followed the order, not the answers.
    PositionInconsistent,
}

impl Status {
    /// Whether asking once more may bring an answer.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Status::Unreadable | Status::Failed | Status::RateLimited
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unreadable => "unreadable",
            Status::Timeout => "timeout",
            Status::Failed => "failed",
            Status::NotFound => "not-found",
            Status::UsageLimit => "usage-limit",
            Status::RateLimited => "rate-limited",
            Status::ModelRefused => "model-refused",
            Status::Interrupted => "interrupted",
            Status::OutputLimit => "output-limit",
            Status::CanaryMissed => "canary-missed",
            Status::Cancelled => "cancelled",
            Status::PositionInconsistent => "position-inconsistent",
        }
    }
}

/// How the cause of a judge a budget left out begins (`--budget-usd`): it was never launched.
pub const OVER_BUDGET: &str = "not launched: over budget";

/// Tokens and cost, where the harness reports them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// What the harness says it cost, or, under a budget, its tokens priced by the price table.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "usd"
    )]
    pub cost_usd: Option<f64>,
    /// Under a budget: what it was estimated to cost before it was launched (a judge the budget
    /// left out has this alone).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "usd"
    )]
    pub estimate_usd: Option<f64>,
    /// Why the cost the harness reported was not taken (not a finite number at least 0, or
    /// far past its tokens priced), and what was counted instead: a judge's CLI writes that
    /// figure, and a judge is not trusted to say what it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_note: Option<String>,
    /// The service tier its provider was asked for, where not the standard one (`--tier`):
    /// its tokens are priced at that tier's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
}

/// `--tier`: the service tier a judge's provider is asked for, where its login offers it (a
/// row's login lists it in `tiers`); elsewhere a judge runs at the standard tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The provider's default.
    #[default]
    Standard,
    /// OpenAI's flex processing: the Batch API's price (half), answered synchronously but
    /// slower, and at times refused with 429 "Resource Unavailable" (waited out as a rate
    /// limit).
    Flex,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Standard => "standard",
            Tier::Flex => "flex",
        }
    }
}

/// Adds a cost to a sum of costs: a cost that is not a finite number at least 0 adds nothing
/// (a record's costs are what judges' CLIs said), and a sum that would pass the largest finite
/// number stays at it, so that a sum is always a number and never written `null` or `$inf`.
pub fn add_usd(sum: f64, cost: f64) -> f64 {
    let cost = if cost.is_finite() { cost.max(0.0) } else { 0.0 };
    let s = sum + cost;
    if s.is_finite() { s } else { f64::MAX }
}

/// A sum of dollars as written: to a trillionth of a dollar, so that a sum's float noise
/// (`2.6000000000000002e-05`) is not printed.
pub(crate) fn usd<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_some(&rounded_usd(*x)),
        None => s.serialize_none(),
    }
}

/// [`usd`], of a sum always there.
pub(crate) fn usd_total<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(rounded_usd(*v))
}

fn rounded_usd(x: f64) -> f64 {
    let r = (x * 1e12).round() / 1e12;
    if r.is_finite() { r } else { x }
}

impl Usage {
    /// Adds another judge's usage to a total; a field nobody reported stays absent. Counts a
    /// CLI reports are its own: a sum past u64 stays at the most, never wraps or panics.
    pub fn add(&mut self, other: &Usage) {
        fn sum<T: Copy>(a: Option<T>, b: Option<T>, add: fn(T, T) -> T) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(add(a, b)),
                (a, b) => a.or(b),
            }
        }
        self.input_tokens = sum(self.input_tokens, other.input_tokens, u64::saturating_add);
        self.output_tokens = sum(self.output_tokens, other.output_tokens, u64::saturating_add);
        self.cached_tokens = sum(self.cached_tokens, other.cached_tokens, u64::saturating_add);
        self.cost_usd = sum(self.cost_usd, other.cost_usd, add_usd);
        self.estimate_usd = sum(self.estimate_usd, other.estimate_usd, add_usd);
        self.cost_note = match (self.cost_note.take(), &other.cost_note) {
            (Some(a), Some(b)) if a != *b => Some(format!("{a}; {b}")),
            (a, b) => a.or_else(|| b.clone()),
        };
        self.tier = self.tier.or(other.tier);
    }

    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

/// One judge's answer about one frozen candidate: `panel-judge`'s output, `panel-tally`'s input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct VerdictRecord {
    #[serde(rename = "type")]
    pub kind: String,
    /// The judge's name: unique within its panel.
    pub judge: String,
    pub lens: String,
    /// `HARNESS[:MODEL]` as given.
    pub seat: String,
    pub harness: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub family: Option<String>,
    /// The seal of the frozen candidate: `sha256:<hex>`.
    pub candidate: String,
    /// The name given for the candidate (`panel-judge --name`), which gold labels may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `holds`, `breaks`, or null for an abstention.
    pub verdict: Option<Verdict>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    pub status: Status,
    /// What was read differently from what the judge gave, in one line: a confidence given in
    /// percent, or one out of range recorded as null. Absent when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The verdict word an unreadable judge gave when it was neither `holds` nor `breaks`
    /// (`maybe`): shown by panel-tally, never counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
    /// Why the judge abstained, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The start of what came back, when it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// How many judges the panel has, so a stream of many panels can close each one.
    #[serde(default)]
    pub panel_size: usize,
    /// The run folder that keeps everything about this judge.
    #[serde(default)]
    pub run: String,
    /// What the judge ran under: `landlock-abi-N`, `off`, or `unavailable: why`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// A canary's expected verdict (`holds` or `breaks`): the record is a seat's answer about a
    /// candidate whose answer is known, asked beside the panel and never counted in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 45: "`costUsd` prints `2.6000000000000002e-05`".
    #[test]
    fn a_cost_is_written_without_a_sums_float_noise() {
        let mut u = Usage {
            cost_usd: Some(0.1),
            ..Usage::default()
        };
        u.add(&Usage {
            cost_usd: Some(0.2),
            estimate_usd: Some(1.3e-5 + 1.3e-5),
            ..Usage::default()
        });
        let text = serde_json::to_string(&u).unwrap();
        assert_eq!(text, r#"{"costUsd":0.3,"estimateUsd":0.000026}"#);
    }

    fn at() -> String {
        "in: line 3".into()
    }

    #[test]
    fn a_record_of_another_type_names_its_tool() {
        let err =
            parse::<VerdictRecord>(r#"{"type":"review","x":1}"#, &at, &["verdict"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 3: a review record; reviews go through panel-merge"
        );
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let err = parse::<VerdictRecord>("{\"type\":", &at, &["verdict"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("in: line 3: not a JSON record: "),
            "{err}"
        );
        let err = parse::<VerdictRecord>("[1]", &at, &["verdict"]).unwrap_err();
        assert_eq!(err.to_string(), "in: line 3: not a JSON object");
        // A struct's positional form is not a record.
        let err = parse::<Usage>("[1,2,3,0.5]", &at, &["verdict"]).unwrap_err();
        assert_eq!(err.to_string(), "in: line 3: not a JSON object");
        let err = parse::<VerdictRecord>(r#"{"a":1}"#, &at, &["verdict"]).unwrap_err();
        assert_eq!(err.to_string(), "in: line 3: a record without a \"type\"");
        let err = parse::<VerdictRecord>(r#"{"type":"verdict"}"#, &at, &["verdict"]).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("in: line 3: a verdict record that does not fit: missing field"),
            "{err}"
        );
    }

    #[test]
    fn a_nested_object_given_as_an_array_is_refused() {
        let line = r#"{"type":"verdict","judge":"a","lens":"a","seat":"s","harness":"s","candidate":"c","verdict":null,"status":"timeout","usage":[]}"#;
        let err = parse::<VerdictRecord>(line, &at, &["verdict"]).unwrap_err();
        assert!(err.to_string().contains("invalid type: sequence"), "{err}");
        let ok = line.replace("[]", r#"{"inputTokens":3}"#);
        let rec = parse::<VerdictRecord>(&ok, &at, &["verdict"]).unwrap();
        assert_eq!(rec.usage.unwrap().input_tokens, Some(3));
    }

    #[test]
    fn a_closed_pipe_while_writing_stays_a_broken_pipe() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let err = write(&mut Closed, &serde_json::json!({"type": "x"})).unwrap_err();
        assert!(crate::tools::is_broken_pipe(&err), "{err:#}");
    }

    #[test]
    fn usage_totals_keep_unreported_fields_absent() {
        let mut total = Usage::default();
        total.add(&Usage {
            input_tokens: Some(3),
            ..Usage::default()
        });
        total.add(&Usage {
            input_tokens: Some(4),
            cost_usd: Some(0.5),
            ..Usage::default()
        });
        assert_eq!(
            total,
            Usage {
                input_tokens: Some(7),
                cost_usd: Some(0.5),
                ..Usage::default()
            }
        );
    }
}
