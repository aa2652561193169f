//! What a judge must answer: one contract per answer kind, each with its prompt (in our words),
//! its JSON Schema (for the harnesses that take one) and the check every answer passes.
//!
//! | contract | asked by | answer |
//! | --- | --- | --- |
//! | [`verdict`] | panel-judge | `holds` or `breaks`, a reason, a confidence |
//! | [`review`] | panel-judge --contract review | `pass` or `revise`, findings by severity |
//! | [`grouping`] | panel-merge --seat | groups of findings that name one problem |
//! | [`votes`] | panel-vote's voters | agree, disagree or better fix on each finding shown |
//! | [`decisions`] | panel-vote's judge | act or skip on each finding left |
//! | [`pr`] | panel-judge --contract pr | the verdict block a reviewer ends its reply with |
//! | [`pairwise`] | panel-judge --contract pairwise | which of two answers, as shown, is better |

pub mod decisions;
pub mod fence;
pub mod grouping;
pub mod pairwise;
pub mod pr;
pub mod review;
pub mod verdict;
pub mod votes;

use serde_json::{Map, Value};

/// A prompt's text, and where the judge's own part of it begins: the first `shared` bytes are
/// sent alike to every judge of its panel (the rules, the answer's shape, the candidate), the
/// rest is this judge's (its lens, the order it is shown). Shared first, so a provider's prompt
/// cache can serve the candidate to every judge after the first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub text: String,
    pub shared: usize,
}

impl Split {
    /// `shared` then `own`.
    pub fn new(shared: String, own: &str) -> Split {
        let at = shared.len();
        let mut text = shared;
        text.push_str(own);
        Split { text, shared: at }
    }

    /// What every judge is sent alike.
    pub fn shared(&self) -> &str {
        &self.text[..self.shared]
    }

    /// What is this judge's own.
    pub fn own(&self) -> &str {
        &self.text[self.shared..]
    }
}

/// An answer kind: the schema passed to harnesses that take one, and the check every answer
/// passes whatever the harness promised. The check returns what it read, or how the answer
/// missed, so the reader of an answer never reads it a second way: a call hands its caller
/// the contract's typed answer or its typed miss (`engine::call::Done`).
pub trait Contract: Sync {
    /// What an answer that meets the contract says.
    type Answer: Send;
    /// How an answer misses the contract: its one line (`Display`), and what a record keeps
    /// of a judge's own words in it.
    type Miss: std::fmt::Display + Send;
    fn schema(&self) -> Value;
    fn check(&self, answer: &Map<String, Value>) -> Result<Self::Answer, Self::Miss>;
}
