//! `panel-tally --ledger`: is this panel worth what it costs? A history of verdict records from
//! many panels, read as a ledger of its judges: are they decorrelated, which one adds nothing,
//! which one rubber-stamps, and what a smaller panel would have decided.
//!
//! [`read`] reads the records, [`count`] keeps bounded counts as they stream, this module turns
//! the counts into records (`judge-stats`, `pair-agreement`, `ledger-summary`) with their
//! flags, [`text`] draws the terminal report and [`svg`] the picture. The kappas and alpha are
//! `stats::agreement`, their intervals `stats::bootstrap`, the lines a flag is raised past
//! `stats::thresholds`; a panel's outcome is `rules::decision`.
//!
//! A flag on a figure is raised only when its whole 95 % interval is past the threshold, and
//! its evidence names the interval: a point past the line on few panels is no finding.

pub mod count;
pub mod gold;
pub mod gold_report;
pub mod markdown;
pub mod position;
pub mod read;
pub mod select;
pub mod svg;
pub mod text;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::records::input::Source;
pub use crate::records::ledger::{
    CanaryScore, Flag, JudgeStats, LedgerReport, LedgerSummary, LensKappa, PairAgreement,
    PositionStats, StoppedEarly, SubPanel,
};
use crate::records::view::LEDGER;
use crate::stats::agreement::{cohen_kappa, wilson};
use crate::stats::bootstrap::{self, Ci};
use crate::stats::thresholds::{
    ABSTAINS, CONTRARIAN, MIN_PANELS, POSITION_BIAS, REDUNDANT_KAPPA, RUBBER_STAMP, SUB_PANEL_MATCH,
};
use crate::tools::tally::report::Format;
use crate::tools::tally::report::Report;
use count::{CanaryCounts, Ledger, Position, STATUSES, Shape, Stats};
use gold_report::Require;

/// Panel shapes the report scores sub-panels for, most frequent first.
pub const SHAPES_SHOWN: usize = 5;

fn rate(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

/// A figure and its interval as the reports show them: `0.28 [0.19, 0.37]`, or `n/a`.
pub fn figure(x: Option<f64>, ci: Option<Ci>) -> String {
    match (x, ci) {
        (None, _) => "n/a".into(),
        (Some(x), None) => format!("{x:.2}"),
        (Some(x), Some([lo, hi])) => format!("{x:.2} [{lo:.2}, {hi:.2}]"),
    }
}

/// An interval as evidence: `95 % interval 0.91–0.98`.
fn interval(ci: Ci, show: impl Fn(f64) -> String) -> String {
    format!("95 % interval {}–{}", show(ci[0]), show(ci[1]))
}

/// A pairwise judge's consistency (Wilson's interval: one item a panel) and first-shown rate
/// (a bootstrap over panels: its two answers on one panel go together).
fn position(name: &str, p: &Position, replicates: u32) -> PositionStats {
    let (answers, first) = p.answers();
    let kinds: Vec<(u64, u64)> = (0..3u64)
        .flat_map(|n| (0..=n).map(move |f| (f, n)))
        .collect();
    let weights: Vec<u64> = kinds
        .iter()
        .map(|&(f, n)| p.kinds[f as usize][n as usize])
        .collect();
    let panels = weights.iter().sum();
    let [first_ci] = bootstrap::intervals(
        &format!("first\0{name}"),
        replicates,
        panels,
        &weights,
        |d| {
            let (mut a, mut f) = (0, 0);
            for (&(kf, kn), &times) in kinds.iter().zip(d) {
                a += kn * times;
                f += kf * times;
            }
            [rate(f, a)]
        },
    );
    PositionStats {
        both_orders: p.both,
        consistent: p.consistent,
        consistency: rate(p.consistent, p.both),
        consistency_ci95: wilson(p.consistent, p.both),
        answers,
        first_shown: first,
        first_shown_rate: rate(first, answers),
        first_shown_rate_ci95: first_ci,
    }
}

/// Position bias: the whole interval of a pairwise judge's first-shown rate is
/// [`POSITION_BIAS`] or more from one half.
fn position_bias(p: &PositionStats) -> Option<Flag> {
    let ci = p.first_shown_rate_ci95?;
    let off = ci[0] >= 0.5 + POSITION_BIAS || ci[1] <= 0.5 - POSITION_BIAS;
    (off && p.answers >= MIN_PANELS).then(|| Flag {
        flag: "position-bias",
        evidence: format!(
            "preferred the answer shown first in {} of {} answers ({}, {}); consistent on {} of {} \
                panels shown both orders",
            p.first_shown,
            p.answers,
            percent(p.first_shown_rate.unwrap_or(0.0)),
            interval(ci, percent),
            p.consistent,
            p.both_orders
        ),
    })
}

fn stats_record(scope: &'static str, name: String, s: &Stats) -> JudgeStats {
    let abstentions = STATUSES
        .iter()
        .zip(&s.abstained)
        .filter(|(_, n)| **n > 0)
        .map(|(st, n)| (st.as_str(), *n))
        .collect();
    let canary = (s.canary.seen > 0).then(|| canary_score(&s.canary));
    JudgeStats {
        kind: "judge-stats",
        scope,
        name,
        index: None,
        seat: None,
        lens: None,
        family: None,
        panels: s.panels,
        holds: s.holds,
        breaks: s.breaks,
        abstained: s.abstentions(),
        cancelled: s.cancelled,
        abstentions,
        holds_rate: rate(s.holds, s.answered()),
        holds_rate_ci95: wilson(s.holds, s.answered()),
        abstention_rate: rate(s.abstentions(), s.panels - s.cancelled),
        median_ms: s.durations.quantile(0.5),
        p90_ms: s.durations.quantile(0.9),
        input_tokens: s.spend.input_tokens,
        output_tokens: s.spend.output_tokens,
        cached_tokens: s.spend.cached_tokens,
        cost_usd: s.spend.cost_usd,
        estimate_usd: s.spend.estimate_usd,
        majority_panels: s.majority_panels,
        against_majority: s.against,
        canary,
        position: None,
        flags: Vec::new(),
    }
}

fn canary_score(c: &CanaryCounts) -> CanaryScore {
    CanaryScore {
        seen: c.seen,
        hits: c.hits,
        wrong: c.wrong,
        abstained: c.abstained,
        hit_rate: rate(c.hits, c.seen).unwrap_or(0.0),
        hit_rate_ci95: wilson(c.hits, c.seen).unwrap_or([0.0, 1.0]),
    }
}

/// Rubber-stamp: the judge holds so often that even the low end of its interval does.
fn rubber_stamp(r: &JudgeStats) -> Option<Flag> {
    let answered = r.holds + r.breaks;
    let ci = r.holds_rate_ci95.filter(|ci| ci[0] >= RUBBER_STAMP)?;
    (answered >= MIN_PANELS).then(|| Flag {
        flag: "rubber-stamp",
        evidence: format!(
            "holds on {} of {answered} verdicts ({}, {})",
            r.holds,
            percent(r.holds_rate.unwrap_or(0.0)),
            interval(ci, percent)
        ),
    })
}

/// A judge's flags: rubber-stamp (a verdict's judge) or position-bias (a pairwise one),
/// abstains, contrarian, each with its numbers.
fn judge_flags(r: &JudgeStats) -> Vec<Flag> {
    let mut flags: Vec<Flag> = match &r.position {
        Some(p) => position_bias(p).into_iter().collect(),
        None => rubber_stamp(r).into_iter().collect(),
    };
    if let Some(a) = r.abstention_rate.filter(|a| *a >= ABSTAINS) {
        let by: Vec<String> = r
            .abstentions
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect();
        flags.push(Flag {
            flag: "abstains",
            evidence: format!(
                "no verdict on {} of {} panels ({}): {}",
                r.abstained,
                r.panels,
                percent(a),
                by.join(", ")
            ),
        });
    }
    if let Some(c) = rate(r.against_majority, r.majority_panels).filter(|c| *c >= CONTRARIAN) {
        flags.push(Flag {
            flag: "contrarian",
            evidence: format!(
                "against the others' majority on {} of {} panels ({})",
                r.against_majority,
                r.majority_panels,
                percent(c)
            ),
        });
    }
    flags
}

/// `[kappa, agreement]` intervals of a pair: each of the history's panels filled one cell of
/// the pair's table, or none (not both answered, or not both on it).
fn pair_intervals(l: &Ledger, name: &str, p: &count::Pair, replicates: u32) -> [Option<Ci>; 2] {
    let t = &p.table;
    let weights = [
        t[0][0],
        t[0][1],
        t[1][0],
        t[1][1],
        l.panels.saturating_sub(p.both_answered()),
    ];
    bootstrap::intervals(name, replicates, l.panels, &weights, |d| {
        let both = d[0] + d[1] + d[2] + d[3];
        [
            cohen_kappa(&[[d[0], d[1]], [d[2], d[3]]]),
            rate(d[0] + d[3], both),
        ]
    })
}

/// Redundant: two judges agree so far beyond chance that even the low end of the kappa's
/// interval is past [`REDUNDANT_KAPPA`].
fn redundant(p: &count::Pair, kappa: Option<f64>, ci: Option<Ci>) -> Option<Flag> {
    let (k, ci) = (kappa?, ci.filter(|ci| ci[0] >= REDUNDANT_KAPPA)?);
    (p.both_answered() >= MIN_PANELS).then(|| Flag {
        flag: "redundant",
        evidence: format!(
            "kappa {k:.2} ({}) over {} panels both answered (agreed on {})",
            interval(ci, |x| format!("{x:.2}")),
            p.both_answered(),
            p.agreed()
        ),
    })
}

fn pair_record(
    l: &Ledger,
    (a, b): (usize, usize),
    p: &count::Pair,
    replicates: u32,
) -> PairAgreement {
    let kappa = cohen_kappa(&p.table);
    let name = format!("pair\0{}\0{}", l.judges[a].label(), l.judges[b].label());
    let [kappa_ci95, agreement_ci95] = pair_intervals(l, &name, p, replicates);
    let flags = redundant(p, kappa, kappa_ci95).into_iter().collect();
    PairAgreement {
        kind: "pair-agreement",
        a: l.judges[a].label(),
        b: l.judges[b].label(),
        a_index: a + 1,
        b_index: b + 1,
        shared_panels: p.shared,
        both_answered: p.both_answered(),
        agreed: p.agreed(),
        agreement: rate(p.agreed(), p.both_answered()),
        agreement_ci95,
        kappa,
        kappa_ci95,
        table: p.table,
        flags,
    }
}

/// The smallest sub-panel of `shape` (fewest judges; then the best match; then the cheapest)
/// whose outcome matched the full panel's on at least [`SUB_PANEL_MATCH`] of its panels, by
/// the low end of the match rate's interval.
fn smallest(l: &Ledger, shape: &Shape) -> SubPanel {
    let n = shape.judges.len();
    let full = (1u32 << n) - 1;
    let cost = |mask: u32| -> f64 {
        (0..n)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| shape.spend[i].cost_usd + shape.spend[i].tokens() as f64 * 1e-9)
            .sum()
    };
    let best = (1..=full)
        .filter(|&m| {
            wilson(shape.matched[m as usize], shape.panels)
                .is_some_and(|ci| ci[0] >= SUB_PANEL_MATCH)
        })
        .min_by(|&x, &y| {
            x.count_ones()
                .cmp(&y.count_ones())
                .then(shape.matched[y as usize].cmp(&shape.matched[x as usize]))
                .then(cost(x).total_cmp(&cost(y)))
                .then(x.cmp(&y))
        })
        .unwrap_or(full);
    let mut saved = count::Spend::default();
    for i in (0..n).filter(|i| best & (1 << i) == 0) {
        saved.add(&shape.spend[i]);
    }
    let labels = |mask: u32| -> Vec<String> {
        (0..n)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| l.judges[shape.judges[i]].label())
            .collect()
    };
    let matched = shape.matched[best as usize];
    SubPanel {
        panel: labels(full),
        panels: shape.panels,
        keep: labels(best),
        matched,
        match_rate: rate(matched, shape.panels).unwrap_or(0.0),
        match_rate_ci95: wilson(matched, shape.panels).unwrap_or([0.0, 1.0]),
        saved_input_tokens: saved.input_tokens,
        saved_output_tokens: saved.output_tokens,
        saved_cost_usd: saved.cost_usd,
        saved_judge_ms: saved.ms,
    }
}

/// Each judge's record, numbered as the heat map numbers it, with its flags.
fn judge_records(l: &Ledger, replicates: u32) -> Vec<JudgeStats> {
    l.judges
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let mut r = stats_record("judge", j.label(), &j.stats);
            r.index = Some(i + 1);
            r.seat = Some(j.seat.clone());
            r.lens = Some(j.lens.clone());
            r.family = Some(j.family.clone());
            // A canary is scored per seat.
            r.canary = None;
            if l.pairwise == Some(true) {
                let name = format!("judge\0{}", r.name);
                r.position = Some(position(&name, &j.stats.position, replicates));
            }
            r.flags = judge_flags(&r);
            r
        })
        .collect()
}

/// Turns the counts into the report's records, with intervals from `replicates` bootstrap
/// replicates.
pub fn report(l: &Ledger, replicates: u32) -> LedgerReport {
    let pairwise = l.pairwise == Some(true);
    let judges = judge_records(l, replicates);
    let rollup = |scope: &'static str, key: &dyn Fn(&count::LedgerJudge) -> &str| {
        let mut by: BTreeMap<&str, Stats> = BTreeMap::new();
        for j in &l.judges {
            by.entry(key(j)).or_default().merge(&j.stats);
        }
        by.into_iter()
            .map(|(name, s)| {
                let mut r = stats_record(scope, name.to_string(), &s);
                if scope == "family" {
                    r.canary = None;
                }
                if pairwise && scope == "seat" {
                    r.position = Some(position(&format!("seat\0{name}"), &s.position, replicates));
                }
                r
            })
            .collect::<Vec<_>>()
    };
    let seats = rollup("seat", &|j| &j.seat);
    let families = rollup("family", &|j| &j.family);
    let mut keys: Vec<&(usize, usize)> = l.pairs.keys().collect();
    keys.sort();
    let pairs: Vec<PairAgreement> = keys
        .into_iter()
        .map(|k| pair_record(l, *k, &l.pairs[k], replicates))
        .collect();
    let mut shapes: Vec<&Shape> = l.shapes.values().filter(|s| s.judges.len() > 1).collect();
    shapes.sort_by(|a, b| b.panels.cmp(&a.panels).then(a.judges.cmp(&b.judges)));
    let sub_panels = shapes
        .into_iter()
        .take(SHAPES_SHOWN)
        .map(|s| smallest(l, s))
        .collect();
    let flags = judges.iter().map(|j| j.flags.len()).sum::<usize>()
        + pairs.iter().map(|p| p.flags.len()).sum::<usize>();
    let overall = l.overall.units.intervals("overall", replicates, l.panels);
    let summary = LedgerSummary {
        kind: "ledger-summary",
        records: l.records,
        panels: l.panels,
        canaries: l.canaries,
        judges: l.judges.len(),
        agree: l.agree,
        pass: l.decisions[0],
        fail: l.decisions[1],
        no_decision: l.decisions[2],
        fleiss_kappa: l.overall.fleiss.kappa(),
        fleiss_kappa_ci95: overall[0],
        fleiss_panels: l.overall.fleiss.subjects(),
        alpha: l.overall.alpha.alpha(),
        alpha_ci95: overall[1],
        bootstrap_replicates: replicates,
        bootstrap_seed: bootstrap::SEED,
        by_lens: l
            .lenses
            .iter()
            .map(|(lens, f)| {
                let [kappa_ci95, alpha_ci95] =
                    f.units
                        .intervals(&format!("lens\0{lens}"), replicates, l.panels);
                LensKappa {
                    lens: lens.clone(),
                    kappa: f.fleiss.kappa(),
                    kappa_ci95,
                    alpha: f.alpha.alpha(),
                    alpha_ci95,
                    panels: f.fleiss.subjects(),
                }
            })
            .collect(),
        sub_panels,
        unscored_panels: l.unshaped,
        closed_early: l.evicted,
        flags: flags as u64,
        stopped_early: stopped_early(l),
        pairwise,
    };
    LedgerReport {
        judges,
        seats,
        families,
        pairs,
        summary,
        gold: None,
    }
}

/// What stopping early saved over the whole history, judge by judge.
fn stopped_early(l: &Ledger) -> Option<StoppedEarly> {
    let mut saved = count::Spend::default();
    let mut cancelled = 0;
    for j in &l.judges {
        cancelled += j.stats.cancelled;
        saved.add(&j.stats.saved());
    }
    (cancelled > 0).then(|| StoppedEarly {
        cancelled,
        decided_early: l.decided_early,
        cancelled_without_cause: l.cancelled_without_cause,
        judge_ms: saved.ms,
        tokens: saved.tokens(),
        cost_usd: saved.cost_usd,
    })
}

/// How a ledger reads its history: the threshold, how a position-inconsistent pairwise judge
/// counts, the gold labels and the gate on them, and the panels it keeps to.
#[derive(Default)]
pub struct Reading {
    pub agree: Option<usize>,
    pub inconsistent: crate::rules::decision::Inconsistent,
    pub gold: Option<crate::records::gold::Gold>,
    pub require: Option<Require>,
    pub select: crate::tools::tally::select::Select,
    /// Reading the history panel-judge appends to: a line that is not a verdict record (torn)
    /// is skipped and counted on standard error, as `--history` does.
    pub history: bool,
}

/// Reads the inputs into a ledger: every record, or with filters those of the panels kept.
pub fn read(inputs: Vec<Source>, how: &mut Reading) -> Result<Ledger> {
    let mut ledger = Ledger::new(how.agree);
    ledger.inconsistent = how.inconsistent;
    ledger.gold = how.gold.take().map(gold::GoldCounts::new);
    let names: Vec<String> = inputs.iter().map(|s| s.name().to_string()).collect();
    let mut torn = 0u64;
    let mut count = |_: anyhow::Error| torn += 1;
    let skip: Option<&mut dyn FnMut(anyhow::Error)> = how.history.then_some(&mut count);
    let n = if how.select.any() {
        select::each_kept(inputs, &how.select, skip, |rec, at| ledger.add(rec, at))?
    } else {
        read::each_line(inputs, LEDGER, skip, |rec, _, at| ledger.add(rec, at))?
    };
    if torn > 0 {
        eprintln!(
            "panel-tally: ledger: {torn} line(s) of the history skipped: not verdict records (torn)"
        );
    }
    if n == 0 && how.select.any() {
        bail!(
            "{}: no panel kept by --since, --seat, --run or --candidate",
            names.join(", ")
        );
    }
    if n == 0 {
        bail!("no verdict records to read");
    }
    if let Some(g) = &ledger.gold
        && g.labels.pairwise != (ledger.pairwise == Some(true))
    {
        bail!(
            "--gold: the labels are {} but the records are {}",
            if g.labels.pairwise {
                "A/B preferences"
            } else {
                "holds/breaks verdicts"
            },
            if ledger.pairwise == Some(true) {
                "pairwise preferences"
            } else {
                "verdicts"
            }
        );
    }
    ledger.finish();
    Ok(ledger)
}

/// `panel-tally --ledger`: reads the history and prints the report (or the records, `--json`),
/// or Markdown, and writes the picture to `svg` when asked. Decides nothing (exit 0), but for a
/// gate on gold labels: 0 it clears, 1 it fails, 3 it straddles.
pub fn run(
    inputs: Vec<Source>,
    format: Format,
    svg_path: Option<&Path>,
    replicates: u32,
    mut how: Reading,
) -> Result<ExitCode> {
    let ledger = read(inputs, &mut how)?;
    let mut report = report(&ledger, replicates);
    report.gold = ledger
        .gold
        .as_ref()
        .map(|g| gold_report::report(&ledger, g, replicates, how.require));
    if let Some(path) = svg_path {
        write_svg(path, &svg::render(&report))?;
    }
    let shown = LedgerShown {
        report: &report,
        replicates,
        paint: text::colour(io::stdout().is_terminal()),
    };
    let mut out = BufWriter::new(crate::engine::output::stdout());
    shown.write(format, &mut out)?;
    out.flush()?;
    let gate = report.gold.as_ref().and_then(|g| g.summary.gate.as_ref());
    Ok(ExitCode::from(gate.map_or(0, gold_report::gate_status)))
}

/// The ledger as shown: its report, with the gold labels' where they were given.
struct LedgerShown<'a> {
    report: &'a LedgerReport,
    replicates: u32,
    /// Colour on a terminal.
    paint: bool,
}

impl Report for LedgerShown<'_> {
    fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        let r = self.report;
        for j in r.judges.iter().chain(&r.seats).chain(&r.families) {
            crate::records::write(out, j)?;
        }
        for p in &r.pairs {
            crate::records::write(out, p)?;
        }
        crate::records::write(out, &r.summary)?;
        if let Some(g) = &r.gold {
            for a in std::iter::once(&g.panel)
                .chain(&g.judges)
                .chain(&g.seats)
                .chain(&g.lenses)
            {
                crate::records::write(out, a)?;
            }
            crate::records::write(out, &g.summary)?;
        }
        Ok(())
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<()> {
        out.write_all(text::render(self.report, self.paint).as_bytes())?;
        if let Some(g) = &self.report.gold {
            out.write_all(b"\n")?;
            out.write_all(gold_report::text(g, self.replicates).as_bytes())?;
        }
        Ok(())
    }

    fn write_markdown(&self, out: &mut dyn Write) -> Result<()> {
        out.write_all(markdown::ledger(self.report).as_bytes())?;
        if let Some(g) = &self.report.gold {
            out.write_all(gold_report::markdown(g).as_bytes())?;
        }
        Ok(())
    }
}

/// Writes the picture: 0600 when new, never through a symbolic link.
fn write_svg(path: &Path, svg: &str) -> Result<()> {
    crate::engine::run_folder::write_private(path, svg.as_bytes())
        .with_context(|| format!("--svg {}: cannot write it", path.display()))
}
