//! How far judges agree beyond chance: Cohen's kappa for two judges, Fleiss' kappa for many,
//! Krippendorff's alpha for many when some abstain, and Wilson's interval on a share.
//! A panel is worth its cost only if its judges disagree for reasons of their own; two judges
//! whose answers always match are one judge paid twice.
//!
//! Both kappas are `(po - pe) / (1 - pe)`: observed agreement against the agreement chance
//! alone would give. When chance alone gives full agreement (`pe = 1`: every answer fell in
//! one category) the ratio is 0/0 and says nothing: the functions return `None`, shown as
//! `n/a` in reports and `null` in records, never a number made up for it. With no items at
//! all they return `None` too.

/// Cohen's kappa of two raters from their confusion table: `table[a][b]` counts the items
/// rater one put in category `a` and rater two in category `b`.
pub fn cohen_kappa<const K: usize>(table: &[[u64; K]; K]) -> Option<f64> {
    let n: u64 = table.iter().flatten().sum();
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let agreed: u64 = (0..K).map(|i| table[i][i]).sum();
    let po = agreed as f64 / n;
    let pe: f64 = (0..K)
        .map(|i| {
            let row: u64 = table[i].iter().sum();
            let col: u64 = table.iter().map(|r| r[i]).sum();
            (row as f64 / n) * (col as f64 / n)
        })
        .sum();
    kappa(po, pe)
}

/// `(po - pe) / (1 - pe)`, or `None` when chance alone agrees fully.
fn kappa(po: f64, pe: f64) -> Option<f64> {
    // pe is a sum of products of shares: a hair past 1 is rounding, not information.
    if 1.0 - pe <= 1e-12 {
        None
    } else {
        Some((po - pe) / (1.0 - pe))
    }
}

/// Fleiss' kappa, gathered one subject at a time (bounded memory: a running sum per category).
///
/// Each subject may have its own number of raters (a panel where a judge abstained has one
/// fewer): the subject's agreement `P_i` is taken over its own raters, the category shares over
/// all ratings; with the same number of raters everywhere this is Fleiss' own formula.
/// A subject with fewer than two raters has no pair to agree and is left out.
#[derive(Clone, Debug)]
pub struct Fleiss<const K: usize> {
    subjects: u64,
    agreement: f64,
    totals: [u64; K],
}

impl<const K: usize> Default for Fleiss<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const K: usize> Fleiss<K> {
    pub fn new() -> Self {
        Fleiss {
            subjects: 0,
            agreement: 0.0,
            totals: [0; K],
        }
    }

    /// Adds one subject: how many raters put it in each category.
    pub fn add(&mut self, counts: &[u64; K]) {
        self.add_times(counts, 1);
    }

    /// Adds `times` subjects rated alike (a bootstrap replicate draws a subject many times).
    pub fn add_times(&mut self, counts: &[u64; K], times: u64) {
        let n: u64 = counts.iter().sum();
        if n < 2 || times == 0 {
            return;
        }
        let pairs: u64 = counts.iter().map(|&c| c * c.saturating_sub(1)).sum();
        self.agreement += times as f64 * (pairs as f64 / (n * (n - 1)) as f64);
        self.subjects += times;
        for (t, c) in self.totals.iter_mut().zip(counts) {
            *t += c * times;
        }
    }

    /// Subjects counted (those with two raters or more).
    pub fn subjects(&self) -> u64 {
        self.subjects
    }

    pub fn kappa(&self) -> Option<f64> {
        let ratings: u64 = self.totals.iter().sum();
        if self.subjects == 0 || ratings == 0 {
            return None;
        }
        let po = self.agreement / self.subjects as f64;
        let pe: f64 = self
            .totals
            .iter()
            .map(|&t| {
                let p = t as f64 / ratings as f64;
                p * p
            })
            .sum();
        kappa(po, pe)
    }
}

/// Krippendorff's alpha at the nominal level, gathered one unit at a time (bounded memory: a
/// running sum per category).
///
/// A rater who abstained on a unit is missing from it, never a category of its own: a unit is
/// the counts of the values it was given, and only units with two values or more are pairable.
/// `alpha = 1 - D_o / D_e`, from the coincidence matrix: the observed disagreement `D_o` sums,
/// per unit, the pairs of unlike values over `m_u - 1`; the expected `D_e` pairs all values
/// alike. Unlike Fleiss' kappa it corrects for the sample (`n - 1`), and it is the figure to
/// read when panels have lost judges. `None` when every value fell in one category.
#[derive(Clone, Debug)]
pub struct Alpha<const K: usize> {
    units: u64,
    /// Values in pairable units.
    values: u64,
    /// `sum over units of (m_u^2 - sum_c n_uc^2) / (m_u - 1)`: unlike ordered pairs, weighted.
    disagreement: f64,
    totals: [u64; K],
}

impl<const K: usize> Default for Alpha<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const K: usize> Alpha<K> {
    pub fn new() -> Self {
        Alpha {
            units: 0,
            values: 0,
            disagreement: 0.0,
            totals: [0; K],
        }
    }

    /// Adds one unit: how many raters gave it each value (abstainers not counted).
    pub fn add(&mut self, counts: &[u64; K]) {
        self.add_times(counts, 1);
    }

    /// Adds `times` units valued alike.
    pub fn add_times(&mut self, counts: &[u64; K], times: u64) {
        let m: u64 = counts.iter().sum();
        if m < 2 || times == 0 {
            return;
        }
        let alike: u64 = counts.iter().map(|&c| c * c).sum();
        self.disagreement += times as f64 * ((m * m - alike) as f64 / (m - 1) as f64);
        self.units += times;
        self.values += m * times;
        for (t, c) in self.totals.iter_mut().zip(counts) {
            *t += c * times;
        }
    }

    /// Pairable units counted (those with two values or more).
    pub fn units(&self) -> u64 {
        self.units
    }

    pub fn alpha(&self) -> Option<f64> {
        let n = self.values as f64;
        let alike: f64 = self.totals.iter().map(|&t| t as f64 * t as f64).sum();
        let expected = n * n - alike;
        // No unlike pair to expect: one category only (or no values), 0/0.
        if self.units == 0 || expected <= 0.0 {
            return None;
        }
        Some(1.0 - (n - 1.0) * self.disagreement / expected)
    }
}

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson's 95 % score interval on `hits` of `n`: unlike the normal one it stays within 0..1
/// and is not empty at 0 or `n` hits. `None` when `n` is 0.
pub fn wilson(hits: u64, n: u64) -> Option<[f64; 2]> {
    if n == 0 {
        return None;
    }
    let (n, p, z2) = (n as f64, hits as f64 / n as f64, Z95 * Z95);
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some([(centre - half).max(0.0), (centre + half).min(1.0)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round3(x: f64) -> f64 {
        (x * 1000.0).round() / 1000.0
    }

    #[test]
    fn cohen_reproduces_the_textbook_example() {
        // Two raters, 50 items: both yes 20, A yes B no 5, A no B yes 10, both no 15.
        let k = cohen_kappa(&[[20, 5], [10, 15]]).unwrap();
        assert_eq!(round3(k), 0.4);
    }

    #[test]
    fn fleiss_reproduces_the_published_table() {
        // 10 subjects, 14 raters each, 5 categories (Fleiss 1971, as Wikipedia gives it).
        let rows: [[u64; 5]; 10] = [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ];
        let mut f = Fleiss::<5>::new();
        for r in &rows {
            f.add(r);
        }
        assert_eq!(f.subjects(), 10);
        assert_eq!(round3(f.kappa().unwrap()), 0.21);
    }

    #[test]
    fn cohen_reproduces_the_published_paradox_tables() {
        // Wikipedia's "same percentage, different kappa" pair: 60 % agreement both times.
        let round4 = |x: f64| (x * 1e4).round() / 1e4;
        assert_eq!(round4(cohen_kappa(&[[45, 15], [25, 15]]).unwrap()), 0.1304);
        assert_eq!(round4(cohen_kappa(&[[25, 35], [5, 35]]).unwrap()), 0.2593);
    }

    /// Values 1..=5 per rater and unit (0: missing) as counts per unit.
    fn units(raters: &[&[u8]]) -> Vec<[u64; 5]> {
        (0..raters[0].len())
            .map(|u| {
                let mut c = [0u64; 5];
                for r in raters {
                    if r[u] > 0 {
                        c[r[u] as usize - 1] += 1;
                    }
                }
                c
            })
            .collect()
    }

    fn alpha_of(units: &[[u64; 5]]) -> f64 {
        let mut a = Alpha::<5>::new();
        for u in units {
            a.add(u);
        }
        a.alpha().unwrap()
    }

    #[test]
    fn alpha_reproduces_krippendorffs_published_example() {
        // Krippendorff (2011), "Computing Krippendorff's alpha-reliability": four observers,
        // twelve units, values missing; nominal alpha 0.743 (0.743421052631579 by the
        // `krippendorff` package, whose own example below gives 0.691358024691358).
        let k = units(&[
            &[1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0],
            &[1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3],
            &[0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0],
            &[1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0],
        ]);
        assert!((alpha_of(&k) - 0.743421052631579).abs() < 1e-12);
        let p = units(&[
            &[0, 0, 0, 0, 0, 3, 4, 1, 2, 1, 1, 3, 3, 0, 3],
            &[1, 0, 2, 1, 3, 3, 4, 3, 0, 0, 0, 0, 0, 0, 0],
            &[0, 0, 2, 1, 3, 4, 4, 0, 2, 1, 1, 3, 3, 0, 4],
        ]);
        assert!((alpha_of(&p) - 0.691358024691358).abs() < 1e-12);
        // Units with one value are not pairable; adding them changes nothing.
        let mut more = p.clone();
        more.push([0, 1, 0, 0, 0]);
        assert_eq!(alpha_of(&more), alpha_of(&p));
        // One category only: nothing to expect, nothing to say.
        let mut one = Alpha::<2>::new();
        one.add(&[3, 0]);
        assert_eq!(one.alpha(), None);
    }

    #[test]
    fn wilson_reproduces_newcombes_table() {
        // Newcombe (1998), Table I, method 3 (score interval without continuity correction).
        let round4 = |x: [f64; 2]| x.map(|v| (v * 1e4).round() / 1e4);
        assert_eq!(round4(wilson(81, 263).unwrap()), [0.2553, 0.3662]);
        assert_eq!(round4(wilson(15, 148).unwrap()), [0.0624, 0.1605]);
        assert_eq!(round4(wilson(0, 20).unwrap()), [0.0, 0.1611]);
        assert_eq!(round4(wilson(1, 29).unwrap()), [0.0061, 0.1718]);
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn full_chance_agreement_says_nothing() {
        // Both raters always said yes: po = pe = 1.
        assert_eq!(cohen_kappa(&[[30, 0], [0, 0]]), None);
        assert_eq!(cohen_kappa::<2>(&[[0, 0], [0, 0]]), None);
        let mut f = Fleiss::<2>::new();
        f.add(&[3, 0]);
        f.add(&[2, 0]);
        assert_eq!(f.kappa(), None);
        // A subject with one rater has no pair: left out.
        let mut f = Fleiss::<2>::new();
        f.add(&[1, 0]);
        assert_eq!((f.subjects(), f.kappa()), (0, None));
    }

    #[test]
    fn perfect_disagreement_is_minus_one() {
        assert_eq!(cohen_kappa(&[[0, 10], [10, 0]]), Some(-1.0));
    }

    /// A small seeded generator (xorshift64*), so the property runs are the same every time.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn kappa_is_at_most_one_symmetric_and_one_for_identical_raters() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let items = 1 + rng.below(60) as usize;
            let bias_a = rng.below(100);
            let bias_b = rng.below(100);
            let a: Vec<usize> = (0..items)
                .map(|_| (rng.below(100) < bias_a) as usize)
                .collect();
            let b: Vec<usize> = (0..items)
                .map(|_| (rng.below(100) < bias_b) as usize)
                .collect();
            let table = |x: &[usize], y: &[usize]| {
                let mut t = [[0u64; 2]; 2];
                for (&i, &j) in x.iter().zip(y) {
                    t[i][j] += 1;
                }
                t
            };
            let ab = cohen_kappa(&table(&a, &b));
            let ba = cohen_kappa(&table(&b, &a));
            assert_eq!(ab.is_some(), ba.is_some());
            if let (Some(ab), Some(ba)) = (ab, ba) {
                assert!((-1.0 - 1e-12..=1.0 + 1e-12).contains(&ab), "{ab}");
                assert!((ab - ba).abs() < 1e-12, "{ab} {ba}");
            }
            match cohen_kappa(&table(&a, &a)) {
                Some(k) => assert!((k - 1.0).abs() < 1e-12, "{k}"),
                // Identical raters with one category only: pe = 1, nothing to say.
                None => assert!(a.iter().all(|&x| x == a[0])),
            }
            // Fleiss over the same two raters: at most 1, and 1 when they agree on all.
            let mut f = Fleiss::<2>::new();
            let mut same = Fleiss::<2>::new();
            for (&i, &j) in a.iter().zip(&b) {
                let mut c = [0u64; 2];
                c[i] += 1;
                c[j] += 1;
                f.add(&c);
                same.add(&[2 * (1 - i as u64), 2 * i as u64]);
            }
            if let Some(k) = f.kappa() {
                assert!(k <= 1.0 + 1e-12, "{k}");
            }
            if let Some(k) = same.kappa() {
                assert!((k - 1.0).abs() < 1e-12, "{k}");
            }
        }
    }
}
