//! 95 % intervals by a bootstrap over panels: the panel is the unit that was sampled, so it is
//! the unit that is resampled, never a single record.
//!
//! A replicate draws as many panels as the history has, with replacement. A figure depends on
//! a panel only through a small summary (how many judges said each word; which cell of a
//! pair's table it filled), so drawing panels amounts to drawing how many times each kind of
//! summary comes up: a multinomial over the kinds, weighted by how often each kind was seen.
//! That is the same distribution as drawing panel by panel, at a cost bounded by the kinds
//! (judges × categories), never by the panels or records.
//!
//! The interval is the percentile one: the 2.5th and 97.5th percentiles of the replicates'
//! figures (linear between order statistics); a replicate whose figure is undefined (chance
//! alone agrees fully) is left out. Every figure draws from its own stream, seeded from
//! [`SEED`] and the figure's name, so the same history gives the same intervals byte for byte,
//! and a figure's interval does not move when another figure joins the report.

use std::collections::BTreeMap;

use crate::stats::agreement::{Alpha, Fleiss};

/// The bootstrap's fixed seed (the ASCII of `panel`).
pub const SEED: u64 = 0x70_61_6e_65_6c;
/// Replicates unless `--bootstrap` says otherwise.
pub const REPLICATES: u32 = 1000;

/// A 95 % interval, `[low, high]`.
pub type Ci = [f64; 2];

/// splitmix64: small, fast and the same everywhere; one stream per figure.
pub struct Rng(u64);

impl Rng {
    /// The stream of the figure named `name`: [`SEED`] mixed with the name's FNV-1a hash.
    pub fn for_figure(name: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        Rng(SEED ^ h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on `0..n` (`n` > 0; the modulo's bias is no matter for the tests' inputs).
    #[cfg(test)]
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `xs` (not empty), uniformly.
    #[cfg(test)]
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    /// Uniform on [0, 1), 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A binomial draw: `n` trials of chance `p`. Exact: inversion when `np` is small, else
    /// Hörmann's BTRD (1993), whose cost does not grow with `n`.
    pub fn binomial(&mut self, n: u64, p: f64) -> u64 {
        if n == 0 || p <= 0.0 {
            return 0;
        }
        if p >= 1.0 {
            return n;
        }
        if p > 0.5 {
            return n - self.binomial(n, 1.0 - p);
        }
        if n as f64 * p < 10.0 {
            self.inversion(n, p)
        } else {
            self.btrd(n, p)
        }
    }

    fn inversion(&mut self, n: u64, p: f64) -> u64 {
        let q = 1.0 - p;
        let s = p / q;
        let a = (n + 1) as f64 * s;
        let mut r = q.powf(n as f64);
        let mut u = self.uniform();
        let mut x = 0;
        while u > r {
            u -= r;
            x += 1;
            // Rounding can leave a sliver of u past the last term.
            if x >= n {
                return n;
            }
            r *= a / x as f64 - s;
        }
        x
    }

    /// BTRD: transformed rejection with a decomposition, for `np >= 10` and `p <= 0.5`.
    fn btrd(&mut self, n: u64, p: f64) -> u64 {
        let nf = n as f64;
        let q = 1.0 - p;
        let m = ((nf + 1.0) * p).floor();
        let r = p / q;
        let nr = (nf + 1.0) * r;
        let npq = nf * p * q;
        let sq = npq.sqrt();
        let b = 1.15 + 2.53 * sq;
        let a = -0.0873 + 0.0248 * b + 0.01 * p;
        let c = nf * p + 0.5;
        let alpha = (2.83 + 5.1 / b) * sq;
        let vr = 0.92 - 4.2 / b;
        let urvr = 0.86 * vr;
        loop {
            let mut v = self.uniform();
            let mut u;
            if v <= urvr {
                u = v / vr - 0.43;
                return ((2.0 * a / (0.5 - u.abs()) + b) * u + c).floor() as u64;
            }
            if v >= vr {
                u = self.uniform() - 0.5;
            } else {
                u = v / vr - 0.93;
                u = 0.5f64.copysign(u) - u;
                v = self.uniform() * vr;
            }
            let us = 0.5 - u.abs();
            let k = ((2.0 * a / us + b) * u + c).floor();
            if k < 0.0 || k > nf {
                continue;
            }
            v = v * alpha / (a / (us * us) + b);
            let km = (k - m).abs();
            if km <= 15.0 {
                // The density's ratio to its mode, step by step.
                let mut f = 1.0;
                if m < k {
                    let mut i = m;
                    while i < k {
                        i += 1.0;
                        f *= nr / i - r;
                    }
                } else if m > k {
                    let mut i = k;
                    while i < m {
                        i += 1.0;
                        v *= nr / i - r;
                    }
                }
                if v <= f {
                    return k as u64;
                }
                continue;
            }
            // Squeeze, then the final test with Stirling's corrections.
            v = v.ln();
            let rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5);
            let t = -km * km / (2.0 * npq);
            if v < t - rho {
                return k as u64;
            }
            if v > t + rho {
                continue;
            }
            let nm = nf - m + 1.0;
            let h = (m + 0.5) * ((m + 1.0) / (r * nm)).ln() + fc(m) + fc(nf - m);
            let nk = nf - k + 1.0;
            if v <= h + (nf + 1.0) * (nm / nk).ln() + (k + 0.5) * (nk * r / (k + 1.0)).ln()
                - fc(k)
                - fc(nf - k)
            {
                return k as u64;
            }
        }
    }

    /// Draws `n` items among kinds seen `weights` times each: `out[i]` of kind `i`.
    pub fn multinomial(&mut self, n: u64, weights: &[u64], out: &mut [u64]) {
        let mut left_n = n;
        let mut left_w: u64 = weights.iter().sum();
        for (o, &w) in out.iter_mut().zip(weights) {
            let x = if left_n == 0 || w == 0 {
                0
            } else if w >= left_w {
                left_n
            } else {
                self.binomial(left_n, w as f64 / left_w as f64)
            };
            *o = x;
            left_n -= x;
            left_w -= w;
        }
    }
}

/// Stirling's correction `ln k! - ((k + 1/2) ln(k + 1) - (k + 1) + ln(2 pi)/2)`.
fn fc(k: f64) -> f64 {
    const TABLE: [f64; 10] = [
        0.081_061_466_795_327_26,
        0.041_340_695_955_409_29,
        0.027_677_925_684_998_34,
        0.020_790_672_103_765_09,
        0.016_644_691_189_821_19,
        0.013_876_128_823_070_75,
        0.011_896_709_945_891_77,
        0.010_411_265_261_972_09,
        0.009_255_462_182_712_733,
        0.008_330_563_433_362_87,
    ];
    if k < 10.0 {
        return TABLE[k as usize];
    }
    let i = 1.0 / (k + 1.0);
    (1.0 / 12.0 - (1.0 / 360.0 - i * i / 1260.0) * i * i) * i
}

/// The percentile interval of some replicates' figures; `None` when none was defined.
pub fn percentile_interval(mut figures: Vec<f64>) -> Option<Ci> {
    if figures.is_empty() {
        return None;
    }
    figures.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let h = (figures.len() - 1) as f64 * q;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(figures.len() - 1);
        figures[lo] + (h - lo as f64) * (figures[hi] - figures[lo])
    };
    Some([at(0.025), at(0.975)])
}

/// Intervals for `M` figures of one resampling: each replicate draws `n` panels among kinds
/// seen `weights` times each, and `figures` turns the draw into the figures.
pub fn intervals<const M: usize>(
    name: &str,
    replicates: u32,
    n: u64,
    weights: &[u64],
    mut figures: impl FnMut(&[u64]) -> [Option<f64>; M],
) -> [Option<Ci>; M] {
    let mut rng = Rng::for_figure(name);
    let mut draw = vec![0u64; weights.len()];
    let mut seen: [Vec<f64>; M] = std::array::from_fn(|_| Vec::with_capacity(replicates as usize));
    for _ in 0..replicates {
        rng.multinomial(n, weights, &mut draw);
        for (s, f) in seen.iter_mut().zip(figures(&draw)) {
            s.extend(f);
        }
    }
    seen.map(percentile_interval)
}

/// The panels of a Fleiss' kappa and an alpha, kept as kinds: how many panels had each count
/// of answers per category. Panels with fewer than two answers weigh in the draw without a
/// kind of their own.
#[derive(Clone, Debug)]
pub struct Units<const K: usize> {
    kinds: BTreeMap<[u64; K], u64>,
}

impl<const K: usize> Default for Units<K> {
    fn default() -> Self {
        Units {
            kinds: BTreeMap::new(),
        }
    }
}

impl<const K: usize> Units<K> {
    pub fn add(&mut self, counts: &[u64; K]) {
        if counts.iter().sum::<u64>() >= 2 {
            *self.kinds.entry(*counts).or_default() += 1;
        }
    }

    /// `[Fleiss' kappa, alpha]` intervals over `panels` panels (all of the history's, those
    /// without a pairable unit here too: they are drawn like any other).
    pub fn intervals(&self, name: &str, replicates: u32, panels: u64) -> [Option<Ci>; 2] {
        let kinds: Vec<&[u64; K]> = self.kinds.keys().collect();
        let mut weights: Vec<u64> = self.kinds.values().copied().collect();
        let pairable: u64 = weights.iter().sum();
        weights.push(panels.saturating_sub(pairable));
        intervals(name, replicates, panels.max(pairable), &weights, |draw| {
            let mut f = Fleiss::<K>::new();
            let mut a = Alpha::<K>::new();
            for (kind, &times) in kinds.iter().zip(draw) {
                f.add_times(kind, times);
                a.add_times(kind, times);
            }
            [f.kappa(), a.alpha()]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_draws_follow_the_binomial_law() {
        let mut rng = Rng::for_figure("test");
        // Inversion (np < 10), BTRD near and far from its mode, and p past one half.
        for (n, p) in [
            (20u64, 0.1),
            (100, 0.3),
            (5000, 0.02),
            (200_000, 0.37),
            (60, 0.9),
        ] {
            let draws = 40_000;
            let mut counts = vec![0u64; n as usize + 1];
            for _ in 0..draws {
                let x = rng.binomial(n, p);
                assert!(x <= n);
                counts[x as usize] += 1;
            }
            let (np, var) = (n as f64 * p, n as f64 * p * (1.0 - p));
            let mean = counts
                .iter()
                .enumerate()
                .map(|(k, &c)| k as f64 * c as f64)
                .sum::<f64>()
                / draws as f64;
            let sd = (var / draws as f64).sqrt();
            assert!((mean - np).abs() < 5.0 * sd, "n {n} p {p}: mean {mean}");
            // Chi-square over the cells that expect at least 20 draws: a wrong density shows.
            let (mut chi, mut cells) = (0.0, 0);
            // ln k! for every k up to n.
            let mut lf = vec![0.0f64; n as usize + 1];
            for i in 1..=n as usize {
                lf[i] = lf[i - 1] + (i as f64).ln();
            }
            for (k, &c) in counts.iter().enumerate() {
                let j = n as usize - k;
                let pk = (lf[n as usize] - lf[k] - lf[j]
                    + k as f64 * p.ln()
                    + j as f64 * (1.0 - p).ln())
                .exp();
                let e = pk * draws as f64;
                if e >= 20.0 {
                    chi += (c as f64 - e).powi(2) / e;
                    cells += 1;
                }
            }
            // Far past the 99.9th percentile of chi-square for these degrees of freedom.
            assert!(
                chi < cells as f64 + 6.0 * (2.0 * cells as f64).sqrt(),
                "n {n} p {p}: chi {chi} over {cells}"
            );
        }
        assert_eq!((rng.binomial(0, 0.5), rng.binomial(7, 1.0)), (0, 7));
    }

    #[test]
    fn a_multinomial_draw_spends_every_item() {
        let mut rng = Rng::for_figure("m");
        let mut out = [0u64; 4];
        for _ in 0..100 {
            rng.multinomial(1000, &[500, 0, 300, 200], &mut out);
            assert_eq!(out.iter().sum::<u64>(), 1000);
            assert_eq!(out[1], 0);
        }
    }

    /// Panels of three judges: kinds of (holds, breaks) with their counts, times `scale`.
    fn units(scale: u64) -> (Units<2>, u64, Fleiss<2>, Alpha<2>) {
        let mut u = Units::default();
        let (mut f, mut a) = (Fleiss::new(), Alpha::new());
        let mut panels = 0;
        for (kind, times) in [
            ([3, 0], 30),
            ([2, 1], 12),
            ([1, 2], 8),
            ([0, 3], 10),
            ([1, 1], 6),
            ([1, 0], 4),
        ] {
            for _ in 0..times * scale {
                u.add(&kind);
                f.add(&kind);
                a.add(&kind);
                panels += 1;
            }
        }
        (u, panels, f, a)
    }

    #[test]
    fn an_interval_holds_its_estimate_and_narrows_as_panels_grow() {
        let mut widths = Vec::new();
        for scale in [1, 4, 16] {
            let (u, panels, f, a) = units(scale);
            let [kci, aci] = u.intervals("overall", 1000, panels);
            let (kci, aci) = (kci.unwrap(), aci.unwrap());
            let (k, al) = (f.kappa().unwrap(), a.alpha().unwrap());
            assert!(kci[0] < k && k < kci[1], "{k} in {kci:?}");
            assert!(aci[0] < al && al < aci[1], "{al} in {aci:?}");
            widths.push(aci[1] - aci[0]);
            // Byte for byte the same on a second run.
            assert_eq!(u.intervals("overall", 1000, panels), [Some(kci), Some(aci)]);
        }
        // Four times the panels, about half the width.
        for w in widths.windows(2) {
            assert!(w[1] < 0.65 * w[0] && w[1] > 0.35 * w[0], "{widths:?}");
        }
    }

    #[test]
    fn percentiles_interpolate_and_undefined_figures_are_left_out() {
        let v: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(percentile_interval(v), Some([2.5, 97.5]));
        assert_eq!(percentile_interval(Vec::new()), None);
        // Every panel said holds: kappa is undefined in every replicate.
        let mut u = Units::<2>::default();
        for _ in 0..50 {
            u.add(&[3, 0]);
        }
        assert_eq!(u.intervals("x", 100, 50), [None, None]);
    }
}
