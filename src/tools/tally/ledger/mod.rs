//! `panel-tally --ledger`: is this panel worth what it costs? A history of verdict records from
//! many panels, read as a ledger of its judges: are they decorrelated, which one adds nothing,
//! which one rubber-stamps, and what a smaller panel would have decided.
//!
//! [`read`] reads the records, [`count`] keeps bounded counts as they stream, this module turns
//! the counts into records (`judge-stats`, `pair-agreement`, `ledger-summary`) with their
//! flags, [`text`] draws the terminal report and [`svg`] the picture. The kappas are
//! `rules::agreement`; a panel's outcome is `rules::decision`.

pub mod count;
pub mod read;
pub mod stats;
pub mod svg;
pub mod text;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::records::input::Source;
use crate::rules::agreement::cohen_kappa;
use crate::tools::tally::report::Format;
use count::{Canary, Ledger, STATUSES, Shape, Stats};
pub use stats::{
    CanaryScore, Flag, JudgeStats, LedgerSummary, LensKappa, PairAgreement, Report, SubPanel,
};

/// Flags need this many panels (or shared panels) before they are raised on a rate.
pub const MIN_PANELS: u64 = 30;
/// Two judges agreeing this far beyond chance are one judge paid twice.
pub const REDUNDANT_KAPPA: f64 = 0.8;
/// A judge that holds this often is not reading.
pub const RUBBER_STAMP: f64 = 0.95;
/// A judge that abstains this often costs without answering.
pub const ABSTAINS: f64 = 0.2;
/// A judge against the others' majority this often.
pub const CONTRARIAN: f64 = 0.4;
/// A sub-panel is as good as the panel when its outcome matched on this share of panels.
pub const SUB_PANEL_MATCH: f64 = 0.95;
/// Panel shapes the report scores sub-panels for, most frequent first.
pub const SHAPES_SHOWN: usize = 5;

fn rate(n: u64, of: u64) -> Option<f64> {
    (of > 0).then(|| n as f64 / of as f64)
}

fn percent(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
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
        abstentions,
        holds_rate: rate(s.holds, s.answered()),
        abstention_rate: rate(s.abstentions(), s.panels),
        median_ms: s.durations.quantile(0.5),
        p90_ms: s.durations.quantile(0.9),
        input_tokens: s.spend.input_tokens,
        output_tokens: s.spend.output_tokens,
        cached_tokens: s.spend.cached_tokens,
        cost_usd: s.spend.cost_usd,
        majority_panels: s.majority_panels,
        against_majority: s.against,
        canary,
        flags: Vec::new(),
    }
}

fn canary_score(c: &Canary) -> CanaryScore {
    CanaryScore {
        seen: c.seen,
        hits: c.hits,
        wrong: c.wrong,
        abstained: c.abstained,
        hit_rate: rate(c.hits, c.seen).unwrap_or(0.0),
    }
}

/// A judge's flags: rubber-stamp, abstains, contrarian, each with its numbers.
fn judge_flags(r: &JudgeStats) -> Vec<Flag> {
    let mut flags = Vec::new();
    let answered = r.holds + r.breaks;
    if answered >= MIN_PANELS && r.holds_rate.is_some_and(|h| h >= RUBBER_STAMP) {
        flags.push(Flag {
            flag: "rubber-stamp",
            evidence: format!(
                "holds on {} of {answered} verdicts ({})",
                r.holds,
                percent(r.holds_rate.unwrap_or(0.0))
            ),
        });
    }
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

fn pair_record(l: &Ledger, (a, b): (usize, usize), p: &count::Pair) -> PairAgreement {
    let kappa = cohen_kappa(&p.table);
    let mut flags = Vec::new();
    if let Some(k) = kappa.filter(|k| *k >= REDUNDANT_KAPPA && p.both_answered() >= MIN_PANELS) {
        flags.push(Flag {
            flag: "redundant",
            evidence: format!(
                "kappa {k:.2} over {} panels both answered (agreed on {})",
                p.both_answered(),
                p.agreed()
            ),
        });
    }
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
        kappa,
        table: p.table,
        flags,
    }
}

/// The smallest sub-panel of `shape` (fewest judges; then the best match; then the cheapest)
/// whose outcome matched the full panel's on at least [`SUB_PANEL_MATCH`] of its panels.
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
        .filter(|&m| shape.matched[m as usize] as f64 >= SUB_PANEL_MATCH * shape.panels as f64)
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
        saved_input_tokens: saved.input_tokens,
        saved_output_tokens: saved.output_tokens,
        saved_cost_usd: saved.cost_usd,
        saved_judge_ms: saved.ms,
    }
}

/// Turns the counts into the report's records.
pub fn report(l: &Ledger) -> Report {
    let judges: Vec<JudgeStats> = l
        .judges
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
            r.flags = judge_flags(&r);
            r
        })
        .collect();
    let rollup = |scope: &'static str, key: &dyn Fn(&count::Judge) -> &str| {
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
        .map(|k| pair_record(l, *k, &l.pairs[k]))
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
    let summary = LedgerSummary {
        kind: "ledger-summary",
        records: l.records,
        panels: l.panels,
        canaries: l.canaries,
        judges: l.judges.len(),
        pass: l.decisions[0],
        fail: l.decisions[1],
        no_decision: l.decisions[2],
        fleiss_kappa: l.overall.kappa(),
        fleiss_panels: l.overall.subjects(),
        by_lens: l
            .lenses
            .iter()
            .map(|(lens, f)| LensKappa {
                lens: lens.clone(),
                kappa: f.kappa(),
                panels: f.subjects(),
            })
            .collect(),
        sub_panels,
        unscored_panels: l.unshaped,
        closed_early: l.evicted,
        flags: flags as u64,
    };
    Report {
        judges,
        seats,
        families,
        pairs,
        summary,
    }
}

/// Reads the inputs into a ledger.
pub fn read(inputs: Vec<Source>) -> Result<Ledger> {
    let mut ledger = Ledger::new();
    let n = read::each_record(inputs, |rec, at| ledger.add(rec, at))?;
    if n == 0 {
        bail!("no verdict records to read");
    }
    ledger.finish();
    Ok(ledger)
}

/// `panel-tally --ledger`: reads the history and prints the report (or the records, `--json`),
/// or Markdown, and writes the picture to `svg` when asked. Decides nothing: exit 0.
pub fn run(inputs: Vec<Source>, format: Format, svg_path: Option<&Path>) -> Result<ExitCode> {
    let ledger = read(inputs)?;
    let report = report(&ledger);
    if let Some(path) = svg_path {
        write_svg(path, &svg::render(&report))?;
    }
    let stdout = io::stdout();
    let paint = text::colour(stdout.is_terminal());
    let mut out = BufWriter::new(crate::engine::output::stdout());
    if format == Format::Markdown {
        out.write_all(crate::tools::tally::markdown::ledger(&report).as_bytes())?;
    } else if format == Format::Json {
        for r in report
            .judges
            .iter()
            .chain(&report.seats)
            .chain(&report.families)
        {
            crate::records::write(&mut out, r)?;
        }
        for p in &report.pairs {
            crate::records::write(&mut out, p)?;
        }
        crate::records::write(&mut out, &report.summary)?;
    } else {
        out.write_all(text::render(&report, paint).as_bytes())?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the picture: 0600 when new, never through a symbolic link.
fn write_svg(path: &Path, svg: &str) -> Result<()> {
    crate::engine::run_folder::write_private(path, svg.as_bytes())
        .with_context(|| format!("--svg {}: cannot write it", path.display()))
}
