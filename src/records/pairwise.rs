//! Pairwise preferences: `panel-judge --contract pairwise A B` writes one `pairwise` record per
//! judge, with the answer of each order it was shown; `panel-tally` counts them into one
//! `preference` record.
//!
//! A preference is always in the names the user gave (`A`, the first answer given; `B`, the
//! second), never in the order a judge was shown them: a judge shown B first that prefers what
//! it saw first prefers `B`.

use serde::{Deserialize, Serialize};

use crate::records::{Status, Usage};

/// Which of the two answers a judge prefers, by the order the user gave them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum Preference {
    A,
    B,
}

impl Preference {
    pub fn as_str(self) -> &'static str {
        match self {
            Preference::A => "A",
            Preference::B => "B",
        }
    }

    pub fn other(self) -> Preference {
        match self {
            Preference::A => Preference::B,
            Preference::B => Preference::A,
        }
    }
}

/// The order a judge was shown the two answers in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub enum Shown {
    /// A first, then B.
    AB,
    /// B first, then A.
    BA,
}

impl Shown {
    pub fn as_str(self) -> &'static str {
        match self {
            Shown::AB => "AB",
            Shown::BA => "BA",
        }
    }

    /// The answer shown first.
    pub fn first(self) -> Preference {
        match self {
            Shown::AB => Preference::A,
            Shown::BA => Preference::B,
        }
    }

    /// The preference of a judge that picked the first shown (`true`) or the second.
    pub fn picked(self, first: bool) -> Preference {
        if first {
            self.first()
        } else {
            self.first().other()
        }
    }
}

/// What a judge answered when shown the two in one order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct OrderAnswer {
    pub shown: Shown,
    /// The answer it preferred, in the user's names; null when it gave none.
    pub verdict: Option<Preference>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
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
}

/// One judge's preference between two answers to one question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PairwiseRecord {
    #[serde(rename = "type")]
    pub kind: String,
    /// The judge's name: unique within its panel.
    pub judge: String,
    pub lens: String,
    pub seat: String,
    pub harness: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub family: Option<String>,
    /// The seal of the pair: the question and both answers, `sha256:<hex>`.
    pub candidate: String,
    /// The two answers as the user named them (their files, `-` for standard input).
    pub a: String,
    pub b: String,
    /// The name given for the pair (`--name`), which gold labels may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `A` or `B`: the answer it preferred in every order it was shown; null when it gave no
    /// answer in one of them, or two that disagree (status `position-inconsistent`).
    pub verdict: Option<Preference>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Its answer in each order it was shown: both (`--orders both`) or one (`alternate`).
    pub orders: Vec<OrderAnswer>,
    #[serde(default)]
    pub attempts: u32,
    /// Its orders' durations summed: judge time.
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub panel_size: usize,
    #[serde(default)]
    pub run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

/// A judge's preference over the orders it answered: the one they agree on; else why none.
pub fn combined(orders: &[OrderAnswer]) -> Result<Preference, Status> {
    let mut said = None;
    for o in orders {
        match (o.verdict, said) {
            (None, _) => return Err(o.status),
            (Some(v), None) => said = Some(v),
            (Some(v), Some(s)) if v != s => return Err(Status::PositionInconsistent),
            _ => {}
        }
    }
    said.ok_or(Status::Unreadable)
}

/// One judge in a `preference` record.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PreferenceJudge {
    pub judge: String,
    pub lens: String,
    pub seat: String,
    pub family: Option<String>,
    pub verdict: Option<Preference>,
    pub status: Status,
    /// Each order it was shown, and what it preferred there.
    pub orders: Vec<ShownAnswer>,
    pub reason: Option<String>,
    pub confidence: Option<f64>,
}

/// An order and the preference given in it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
pub struct ShownAnswer {
    pub shown: Shown,
    pub verdict: Option<Preference>,
}

/// How many judges preferred each answer and how many gave none.
#[derive(Clone, Copy, Debug, Default, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PreferenceCounts {
    pub judges: usize,
    pub a: usize,
    pub b: usize,
    /// Judges whose answers in the two orders disagree.
    pub position_inconsistent: usize,
    /// Judges that gave no preference for another reason (timeouts, unreadable answers),
    /// and judges the records announced but never sent.
    pub abstained: usize,
}

/// `panel-tally` over pairwise records: the panel's preference.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PreferenceTally {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub candidate: String,
    pub a: String,
    pub b: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The answer the panel prefers; null when no answer has the judges it needs.
    pub preferred: Option<Preference>,
    pub decided: bool,
    /// The judges an answer needs: `--agree N`, by default more than half of the panel.
    pub threshold: usize,
    /// How a position-inconsistent judge counts: `abstain` (missing: the panel may be left
    /// undecided) or `tie` (present, preferring neither).
    pub inconsistent: &'static str,
    pub counts: PreferenceCounts,
    /// Answers that preferred the one shown first, of all the answers given in any order.
    pub first_shown: u64,
    pub answers: u64,
    pub judges: Vec<PreferenceJudge>,
    pub runs: Vec<String>,
}
