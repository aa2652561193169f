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
pub mod svg;
pub mod text;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::records::input::Source;
use crate::rules::agreement::cohen_kappa;
use count::{Canary, Ledger, STATUSES, Shape, Stats};

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

/// A flag and the numbers that raised it.
#[derive(Clone, Debug, Serialize)]
pub struct Flag {
    pub flag: &'static str,
    pub evidence: String,
}

/// A canary's score as recorded.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryScore {
    pub seen: u64,
    pub hits: u64,
    pub wrong: u64,
    pub abstained: u64,
    pub hit_rate: f64,
}

/// `judge-stats`: one judge (seat × lens), or one seat's or family's judges together.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeStats {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `judge`, `seat` or `family`.
    pub scope: &'static str,
    /// `lens@seat`, the seat, or the family.
    pub name: String,
    /// The judge's number in the agreement matrix (judges only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub panels: u64,
    pub holds: u64,
    pub breaks: u64,
    pub abstained: u64,
    /// Abstentions by status.
    pub abstentions: BTreeMap<&'static str, u64>,
    /// Holds among the verdicts given (abstentions left out).
    pub holds_rate: Option<f64>,
    pub abstention_rate: Option<f64>,
    /// Read from fixed buckets: within 4.5 %.
    pub median_ms: Option<u64>,
    pub p90_ms: Option<u64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// Panels where the other judges who answered had a majority, and how often this one
    /// answered against it.
    pub majority_panels: u64,
    pub against_majority: u64,
    /// Canaries (known answers) this seat was given: kept per seat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanaryScore>,
    pub flags: Vec<Flag>,
}

/// `pair-agreement`: two judges that sat on the same panels.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairAgreement {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub a: String,
    pub b: String,
    pub a_index: usize,
    pub b_index: usize,
    pub shared_panels: u64,
    /// Panels where both gave a verdict: the kappa's items.
    pub both_answered: u64,
    pub agreed: u64,
    pub agreement: Option<f64>,
    /// Cohen's kappa; null when chance alone agrees fully (both always said the same word).
    pub kappa: Option<f64>,
    /// `[[holds/holds, holds/breaks], [breaks/holds, breaks/breaks]]`, a's answer first.
    pub table: [[u64; 2]; 2],
    pub flags: Vec<Flag>,
}

/// Fleiss' kappa of one lens's judges on the same panels.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LensKappa {
    pub lens: String,
    pub kappa: Option<f64>,
    /// Panels with at least two of the lens's judges answering.
    pub panels: u64,
}

/// The smallest sub-panel of one panel shape whose outcome matched the full panel's.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubPanel {
    /// The full panel's judges, and the panels with exactly these judges.
    pub panel: Vec<String>,
    pub panels: u64,
    /// The sub-panel kept, and how often its outcome matched the full panel's.
    pub keep: Vec<String>,
    pub matched: u64,
    pub match_rate: f64,
    /// What the judges left out spent on these panels (judge time: their durations summed).
    pub saved_input_tokens: u64,
    pub saved_output_tokens: u64,
    pub saved_cost_usd: f64,
    pub saved_judge_ms: u64,
}

/// `ledger-summary`: the history as a whole.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerSummary {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub records: u64,
    pub panels: u64,
    /// Canary records: scored per seat, never counted in a panel.
    pub canaries: u64,
    pub judges: usize,
    /// The panels' outcomes by panel-tally's rule at its default (every judge holds).
    pub pass: u64,
    pub fail: u64,
    pub no_decision: u64,
    pub fleiss_kappa: Option<f64>,
    pub fleiss_panels: u64,
    pub by_lens: Vec<LensKappa>,
    pub sub_panels: Vec<SubPanel>,
    /// Panels whose sub-panels were not scored (more than 12 judges, or past 64 shapes).
    pub unscored_panels: u64,
    /// Panels closed before their last record because too many were open at once.
    pub closed_early: u64,
    pub flags: u64,
}

/// Everything the ledger reports.
pub struct Report {
    pub judges: Vec<JudgeStats>,
    pub seats: Vec<JudgeStats>,
    pub families: Vec<JudgeStats>,
    pub pairs: Vec<PairAgreement>,
    pub summary: LedgerSummary,
}

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

/// Whether the terminal report may use colour: stdout is a terminal and `NO_COLOR` is unset
/// or empty.
pub fn colour(stdout_is_terminal: bool) -> bool {
    stdout_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `panel-tally --ledger`: reads the history and prints the report (or the records, `--json`),
/// and writes the picture to `svg` when asked. Decides nothing: exit 0.
pub fn run(inputs: Vec<Source>, json: bool, svg_path: Option<&Path>) -> Result<ExitCode> {
    let ledger = read(inputs)?;
    let report = report(&ledger);
    if let Some(path) = svg_path {
        write_svg(path, &svg::render(&report))?;
    }
    let stdout = io::stdout();
    let paint = colour(stdout.is_terminal());
    let mut out = BufWriter::new(stdout.lock());
    if json {
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
