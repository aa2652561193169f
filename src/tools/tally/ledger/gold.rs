//! The ledger's counts against gold labels (`--gold LABELS`), kept as panels close: each
//! judge's answers on labelled panels, the panels' decisions, and what is left without a
//! label. Bounded by the judges and the labels, never by the records.
//!
//! An abstention, a cancelled judge and an undecided panel are counted apart, never as wrong.

use crate::records::gold::Gold;
use crate::records::{Decision, Status};
use crate::rules::gold::Confusion;

/// Candidates named in a report of those left without a label.
pub const NAMED: usize = 20;

/// One judge's answers on the labelled panels it sat on.
#[derive(Clone, Copy, Debug, Default)]
pub struct JudgeGold {
    pub labelled: u64,
    pub vs: Confusion,
    pub abstained: u64,
    pub cancelled: u64,
}

/// The history's answers against its labels.
pub struct GoldCounts {
    pub labels: Gold,
    /// By judge, as the ledger numbers them.
    pub judges: Vec<JudgeGold>,
    /// The panels' decisions on labelled candidates, and those undecided.
    pub panel: Confusion,
    pub undecided: u64,
    pub labelled_panels: u64,
    /// The panels without a label: how many decided each way, pass (positive) then fail, and
    /// how many did not; the first [`NAMED`] candidates, as named.
    pub unlabelled: [u64; 3],
    pub unlabelled_named: Vec<String>,
}

impl GoldCounts {
    pub fn new(labels: Gold) -> GoldCounts {
        GoldCounts {
            labels,
            judges: Vec::new(),
            panel: Confusion::default(),
            undecided: 0,
            labelled_panels: 0,
            unlabelled: [0; 3],
            unlabelled_named: Vec::new(),
        }
    }

    /// The row of the label of a panel about `seal`, recorded as `name`: 0 positive, 1 not.
    pub fn label(&mut self, seal: &str, name: Option<&str>) -> Option<usize> {
        self.labels.label(seal, name).map(|l| l.index())
    }

    /// One judge's answer (`said`: 0 positive, 1 not, none) on a panel labelled `gold`.
    pub fn judge(&mut self, judge: usize, gold: usize, said: Option<usize>, status: Status) {
        if self.judges.len() <= judge {
            self.judges.resize(judge + 1, JudgeGold::default());
        }
        let j = &mut self.judges[judge];
        j.labelled += 1;
        match (said, status) {
            (Some(s), _) => j.vs.add(gold, s),
            (None, Status::Cancelled) => j.cancelled += 1,
            (None, _) => j.abstained += 1,
        }
    }

    /// A panel's decision; `label` its label's row, when it has one.
    pub fn panel(&mut self, label: Option<usize>, d: Decision) {
        let Some(gold) = label else {
            self.unlabelled[match d {
                Decision::Pass => 0,
                Decision::Fail => 1,
                Decision::NoDecision => 2,
            }] += 1;
            return;
        };
        self.labelled_panels += 1;
        match d {
            Decision::Pass => self.panel.add(gold, 0),
            Decision::Fail => self.panel.add(gold, 1),
            Decision::NoDecision => self.undecided += 1,
        }
    }

    /// Names a panel that had no label, while fewer than [`NAMED`] are.
    pub fn unlabelled(&mut self, seal: &str, name: Option<&str>) {
        if self.unlabelled_named.len() < NAMED {
            let named = match name {
                Some(n) => format!("{seal} (name {n:?})"),
                None => seal.to_string(),
            };
            self.unlabelled_named.push(named);
        }
    }

    /// Panels without a label.
    pub fn unlabelled_panels(&self) -> u64 {
        self.unlabelled.iter().sum()
    }
}
