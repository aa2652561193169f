//! How far a judge or a panel agrees with the people it stands in for: its answers against
//! gold labels (accuracy, sensitivity, specificity, Cohen's kappa with the labels), a gate on
//! one of them, and the share of positives over an unlabelled history corrected for the
//! panel's errors (Rogan and Gladen).
//!
//! One label is the positive one and the reports say which: `holds` for verdicts, `A` for a
//! pairwise preference (the answer given first). An answer is counted only when it was given:
//! an abstention, a cancelled judge or an undecided panel is counted apart, never as wrong.

use crate::stats::agreement::{cohen_kappa, wilson};
use crate::stats::bootstrap::{self, Ci, Rng};

/// Answers against gold labels: `table[gold][said]`, 0 the positive label, 1 the negative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Confusion {
    pub table: [[u64; 2]; 2],
}

impl Confusion {
    /// One answer `said` about a candidate labelled `gold` (0 positive, 1 negative).
    pub fn add(&mut self, gold: usize, said: usize) {
        self.table[gold][said] += 1;
    }

    pub fn merge(&mut self, o: &Confusion) {
        for (a, b) in self
            .table
            .iter_mut()
            .flatten()
            .zip(o.table.iter().flatten())
        {
            *a += b;
        }
    }

    /// Answers counted.
    pub fn n(&self) -> u64 {
        self.table.iter().flatten().sum()
    }

    pub fn correct(&self) -> u64 {
        self.table[0][0] + self.table[1][1]
    }

    /// Candidates labelled positive, and those labelled negative.
    pub fn positives(&self) -> u64 {
        self.table[0][0] + self.table[0][1]
    }

    pub fn negatives(&self) -> u64 {
        self.table[1][0] + self.table[1][1]
    }

    /// The share of answers that match the label.
    pub fn accuracy(&self) -> Option<f64> {
        share(self.correct(), self.n())
    }

    /// The share of positive candidates answered positive (the true positive rate).
    pub fn sensitivity(&self) -> Option<f64> {
        share(self.table[0][0], self.positives())
    }

    /// The share of negative candidates answered negative (the true negative rate).
    pub fn specificity(&self) -> Option<f64> {
        share(self.table[1][1], self.negatives())
    }

    /// Cohen's kappa of the answers with the labels; `None` when chance alone agrees fully.
    pub fn kappa(&self) -> Option<f64> {
        cohen_kappa(&self.table)
    }
}

fn share(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

/// Every figure against the labels, each with its 95 % interval: Wilson's for the shares, a
/// bootstrap over the labelled candidates for kappa.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    pub accuracy: Option<f64>,
    pub accuracy_ci: Option<Ci>,
    pub sensitivity: Option<f64>,
    pub sensitivity_ci: Option<Ci>,
    pub specificity: Option<f64>,
    pub specificity_ci: Option<Ci>,
    pub kappa: Option<f64>,
    pub kappa_ci: Option<Ci>,
}

/// The figures of `c`, whose answers come from `labelled` labelled candidates (those the
/// judge or panel gave no answer on included): the bootstrap draws that many candidates, each
/// answered in one cell of the table or not at all. Its stream is named by what it draws
/// from, so the same answers give the same interval wherever they are shown (a judge alone on
/// its seat, a panel of one shape).
pub fn figures(c: &Confusion, labelled: u64, replicates: u32) -> Figures {
    let t = &c.table;
    let weights = [
        t[0][0],
        t[0][1],
        t[1][0],
        t[1][1],
        labelled.saturating_sub(c.n()),
    ];
    let n = labelled.max(c.n());
    let name = format!("gold {weights:?}");
    let [kappa_ci] = bootstrap::intervals(&name, replicates, n, &weights, |d| {
        [cohen_kappa(&[[d[0], d[1]], [d[2], d[3]]])]
    });
    Figures {
        accuracy: c.accuracy(),
        accuracy_ci: wilson(c.correct(), c.n()),
        sensitivity: c.sensitivity(),
        sensitivity_ci: wilson(t[0][0], c.positives()),
        specificity: c.specificity(),
        specificity_ci: wilson(t[1][1], c.negatives()),
        kappa: c.kappa(),
        kappa_ci,
    }
}

/// Rogan and Gladen's (1978) correction of an observed share of positives `p` by a test's
/// sensitivity and specificity: `(p + sp - 1) / (se + sp - 1)`, clipped to 0..1. `None` when
/// `se + sp <= 1`: a panel no better than a coin at telling the labels apart corrects nothing.
pub fn rogan_gladen(p: f64, se: f64, sp: f64) -> Option<f64> {
    let youden = se + sp - 1.0;
    (youden > 1e-12).then(|| ((p + sp - 1.0) / youden).clamp(0.0, 1.0))
}

/// The share of positives over an unlabelled history, corrected for the panel's errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corrected {
    /// The panels' own share of positive decisions, and Wilson's interval on it.
    pub observed: f64,
    pub observed_ci: Ci,
    /// [`rogan_gladen`] at the panel's measured sensitivity and specificity.
    pub share: Option<f64>,
    /// A bootstrap that draws the labelled candidates (the sensitivity and specificity) and the
    /// unlabelled decisions alike; a replicate where the panel is no better than a coin is
    /// left out.
    pub share_ci: Option<Ci>,
}

/// The share of positives among `decided` unlabelled panels, `positive` of which decided
/// positive, corrected by the panel's answers on gold, `gold`. `None` when none was decided.
pub fn corrected(
    gold: &Confusion,
    positive: u64,
    decided: u64,
    replicates: u32,
) -> Option<Corrected> {
    let observed = share(positive, decided)?;
    let rg = |c: &Confusion, p: f64| rogan_gladen(p, c.sensitivity()?, c.specificity()?);
    let mut rng = Rng::for_figure("corrected share");
    let cells: Vec<u64> = gold.table.iter().flatten().copied().collect();
    let mut draw = [0u64; 4];
    let mut seen = Vec::with_capacity(replicates as usize);
    for _ in 0..replicates {
        rng.multinomial(gold.n(), &cells, &mut draw);
        let c = Confusion {
            table: [[draw[0], draw[1]], [draw[2], draw[3]]],
        };
        let p = rng.binomial(decided, observed) as f64 / decided as f64;
        seen.extend(rg(&c, p));
    }
    Some(Corrected {
        observed,
        observed_ci: wilson(positive, decided).expect("decided > 0"),
        share: rg(gold, observed),
        share_ci: bootstrap::percentile_interval(seen),
    })
}

/// What a gate says of a figure's interval against its threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The interval's low end reaches the threshold: the figure clears it (exit 0).
    Clears,
    /// The interval's high end is below it: the figure does not (exit 1).
    Fails,
    /// The interval straddles it, or there is no figure: not enough labels to tell (exit 3).
    Straddles,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Clears => "clears",
            Gate::Fails => "fails",
            Gate::Straddles => "straddles",
        }
    }
}

/// The gate on a figure's 95 % interval.
pub fn gate(ci: Option<Ci>, threshold: f64) -> Gate {
    match ci {
        Some([lo, _]) if lo >= threshold => Gate::Clears,
        Some([_, hi]) if hi < threshold => Gate::Fails,
        _ => Gate::Straddles,
    }
}

/// The most items the searches below look at; past it a figure is said not to settle.
pub const MAX_SETTLE: u64 = 1 << 40;

/// The fewest answers at which Wilson's interval on a share observed at `hits` of `n` would no
/// longer straddle `threshold`, the share staying as observed. `None` when it never would (the
/// share sits on the threshold) or nothing was observed.
pub fn settle_share(hits: u64, n: u64, threshold: f64) -> Option<u64> {
    let p = share(hits, n)?;
    let settled = |m: u64| {
        let h = (p * m as f64).round() as u64;
        wilson(h, m).is_some_and(|ci| gate(Some(ci), threshold) != Gate::Straddles)
    };
    if settled(n) {
        return Some(n);
    }
    let mut hi = n.max(1);
    while !settled(hi) {
        hi = hi.checked_mul(2).filter(|&h| h <= MAX_SETTLE)?;
    }
    let mut lo = hi / 2;
    // settled(hi); not settled(lo) unless lo < n, where it does not matter.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if settled(mid) { hi = mid } else { lo = mid }
    }
    Some(hi.max(n))
}

/// The fewest answers at which a bootstrap interval `ci` around `point` over `n` answers would
/// no longer straddle `threshold`, its width shrinking as `1/sqrt(n)` with the figure as
/// observed. `None` when the figure sits on the threshold.
pub fn settle_scaled(point: f64, ci: Ci, n: u64, threshold: f64) -> Option<u64> {
    if gate(Some(ci), threshold) != Gate::Straddles {
        return Some(n);
    }
    // The side of the interval that reaches across the threshold.
    let (reach, gap) = if point > threshold {
        (point - ci[0], point - threshold)
    } else {
        (ci[1] - point, threshold - point)
    };
    if gap <= 0.0 {
        return None;
    }
    let m = (n as f64 * (reach / gap).powi(2)).ceil();
    (m <= MAX_SETTLE as f64).then(|| (m as u64).max(n + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round4(x: f64) -> f64 {
        (x * 1e4).round() / 1e4
    }

    #[test]
    fn the_figures_reproduce_a_hand_computed_table() {
        // 100 candidates: 40 positive answered positive, 10 positive answered negative, 20
        // negative answered positive, 30 negative answered negative.
        let c = Confusion {
            table: [[40, 10], [20, 30]],
        };
        assert_eq!(c.accuracy(), Some(0.7));
        assert_eq!(c.sensitivity(), Some(0.8));
        assert_eq!(c.specificity(), Some(0.6));
        // po = 0.7, pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5: kappa 0.4.
        assert_eq!(round4(c.kappa().unwrap()), 0.4);
        let f = figures(&c, 100, 1000);
        let ci = f.kappa_ci.unwrap();
        assert!(ci[0] < 0.4 && 0.4 < ci[1], "{ci:?}");
        assert_eq!(f.accuracy_ci, wilson(70, 100));
        // No answer at all: nothing to say.
        let none = figures(&Confusion::default(), 10, 100);
        assert_eq!(
            (none.accuracy, none.kappa, none.kappa_ci),
            (None, None, None)
        );
    }

    #[test]
    fn a_judge_that_always_says_the_positive_has_kappa_zero() {
        let c = Confusion {
            table: [[60, 0], [40, 0]],
        };
        assert_eq!((c.sensitivity(), c.specificity()), (Some(1.0), Some(0.0)));
        assert_eq!(c.kappa(), Some(0.0));
    }

    #[test]
    fn rogan_gladen_is_its_closed_form_clipped() {
        // (0.3 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.2 / 0.7.
        assert!((rogan_gladen(0.3, 0.8, 0.9).unwrap() - 0.2 / 0.7).abs() < 1e-15);
        // A perfect test corrects nothing.
        assert!((rogan_gladen(0.42, 1.0, 1.0).unwrap() - 0.42).abs() < 1e-15);
        // Observed below what false positives alone give: clipped to 0, and to 1 above.
        assert_eq!(rogan_gladen(0.05, 0.8, 0.9), Some(0.0));
        assert_eq!(rogan_gladen(0.99, 0.8, 0.9), Some(1.0));
        // No better than a coin.
        assert_eq!(rogan_gladen(0.5, 0.5, 0.5), None);
        assert_eq!(rogan_gladen(0.5, 0.3, 0.4), None);
    }

    #[test]
    fn the_corrected_share_holds_its_estimate() {
        let gold = Confusion {
            table: [[160, 40], [20, 180]],
        };
        let c = corrected(&gold, 300, 1000, 1000).unwrap();
        assert_eq!(c.observed, 0.3);
        let want = rogan_gladen(0.3, 0.8, 0.9).unwrap();
        assert!((c.share.unwrap() - want).abs() < 1e-12);
        let ci = c.share_ci.unwrap();
        assert!(ci[0] < want && want < ci[1], "{ci:?}");
        assert_eq!(corrected(&gold, 0, 0, 10), None);
    }

    #[test]
    fn a_gate_reads_the_whole_interval() {
        assert_eq!(gate(Some([0.7, 0.9]), 0.6), Gate::Clears);
        assert_eq!(gate(Some([0.6, 0.9]), 0.6), Gate::Clears);
        assert_eq!(gate(Some([0.3, 0.59]), 0.6), Gate::Fails);
        assert_eq!(gate(Some([0.5, 0.7]), 0.6), Gate::Straddles);
        assert_eq!(gate(None, 0.6), Gate::Straddles);
    }

    #[test]
    fn more_labels_settle_a_straddling_share() {
        // 18 of 20 (90 %): Wilson's interval [0.699, 0.972] straddles 0.8.
        let m = settle_share(18, 20, 0.8).unwrap();
        assert!(m > 20);
        let h = (0.9 * m as f64).round() as u64;
        assert!(wilson(h, m).unwrap()[0] >= 0.8);
        let h = (0.9 * (m - 1) as f64).round() as u64;
        assert!(wilson(h, m - 1).unwrap()[0] < 0.8, "{m} is the fewest");
        // Already settled: as many as there are.
        assert_eq!(settle_share(95, 100, 0.5), Some(100));
        // Sitting on the threshold: never.
        assert_eq!(settle_share(8, 10, 0.8), None);
        // A kappa of 0.7 in [0.5, 0.9] against 0.6: the low side must come within 0.1, half
        // its reach of 0.2, so four times the items.
        assert_eq!(settle_scaled(0.7, [0.5, 0.9], 40, 0.6), Some(160));
        assert_eq!(settle_scaled(0.6, [0.5, 0.7], 40, 0.6), None);
        assert_eq!(settle_scaled(0.9, [0.8, 0.95], 40, 0.6), Some(40));
    }
}
