//! Seed 001's report of a verdict panel: unanimous and split are told apart, and a panel where
//! anyone abstained is neither. The disagreement is the finding; it is never settled in code.

use crate::records::Verdict;
use crate::records::tally::{Consensus, Counts};

// The counts are a record type (`records::tally`); counting into them is this rule's.
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
