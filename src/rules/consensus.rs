//! Seed 001's report of a verdict panel: unanimous and split are told apart, and a panel where
//! anyone abstained is neither. The disagreement is the finding; it is never settled in code.

use serde::Serialize;

use crate::records::Verdict;

/// Holds, breaks and abstentions of a group of judges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Counts {
    pub judges: usize,
    pub holds: usize,
    pub breaks: usize,
    pub abstained: usize,
}

impl Counts {
    pub fn add(&mut self, verdict: Option<Verdict>) {
        self.judges += 1;
        match verdict {
            Some(Verdict::Holds) => self.holds += 1,
            Some(Verdict::Breaks) => self.breaks += 1,
            None => self.abstained += 1,
        }
    }

    /// Takes back one [`Counts::add`] of `verdict` (a judge's record replaced by its rerun).
    pub fn remove(&mut self, verdict: Option<Verdict>) {
        self.judges -= 1;
        match verdict {
            Some(Verdict::Holds) => self.holds -= 1,
            Some(Verdict::Breaks) => self.breaks -= 1,
            None => self.abstained -= 1,
        }
    }
}

/// The panel's verdicts taken together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Consensus {
    /// Every judge answered, and all the same way.
    Unanimous,
    /// Every judge answered, and they disagree.
    Split,
    /// At least one judge gave no verdict.
    Inconclusive,
}

impl Consensus {
    pub fn as_str(self) -> &'static str {
        match self {
            Consensus::Unanimous => "unanimous",
            Consensus::Split => "split",
            Consensus::Inconclusive => "inconclusive",
        }
    }
}

/// Unanimous or split when everyone answered; inconclusive as soon as anyone did not.
pub fn consensus(c: &Counts) -> Consensus {
    if c.abstained > 0 {
        Consensus::Inconclusive
    } else if c.holds == 0 || c.breaks == 0 {
        Consensus::Unanimous
    } else {
        Consensus::Split
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(holds: usize, breaks: usize, abstained: usize) -> Counts {
        Counts {
            judges: holds + breaks + abstained,
            holds,
            breaks,
            abstained,
        }
    }

    #[test]
    fn consensus_is_inconclusive_as_soon_as_anyone_abstains() {
        assert_eq!(consensus(&counts(3, 0, 0)), Consensus::Unanimous);
        assert_eq!(consensus(&counts(0, 3, 0)), Consensus::Unanimous);
        assert_eq!(consensus(&counts(2, 1, 0)), Consensus::Split);
        assert_eq!(consensus(&counts(3, 0, 1)), Consensus::Inconclusive);
    }
}
