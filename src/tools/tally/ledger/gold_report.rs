//! The ledger against gold labels (`--gold`): the records (`gold-agreement` per judge, seat,
//! lens and for the panel, one `gold-summary`), the gate, and their text and Markdown.
//!
//! Shares (accuracy, sensitivity, specificity) take Wilson's interval; kappa a bootstrap over
//! the labelled panels, as the ledger's other kappas (`rules::gold`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::records::ledger::{
    Compared, Comparison, CorrectedShare, GoldAgreement, GoldGate, GoldReport, GoldSummary,
};
use crate::records::printable::{inline, markdown as md, markdown_name as name};
use crate::rules::gold::{self, Confusion, Gate};
use crate::tools::tally::ledger::count::{Ledger, Shape};
use crate::tools::tally::ledger::figure;
use crate::tools::tally::ledger::gold::{GoldCounts, JudgeGold, NAMED};

/// Sets of judges compared with their own panel, the most labelled first.
pub const COMPARED: usize = 5;

/// The figure a gate reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Require {
    Kappa(f64),
    Accuracy(f64),
}

fn agreement(
    scope: &'static str,
    name: String,
    positive: &'static str,
    j: &JudgeGold,
    replicates: u32,
) -> GoldAgreement {
    let f = gold::figures(&j.vs, j.labelled, replicates);
    GoldAgreement {
        kind: "gold-agreement",
        scope,
        name,
        positive,
        labelled: j.labelled,
        answered: j.vs.n(),
        abstained: j.abstained,
        cancelled: j.cancelled,
        correct: j.vs.correct(),
        table: j.vs.table,
        accuracy: f.accuracy,
        accuracy_ci95: f.accuracy_ci,
        sensitivity: f.sensitivity,
        sensitivity_ci95: f.sensitivity_ci,
        specificity: f.specificity,
        specificity_ci95: f.specificity_ci,
        kappa: f.kappa,
        kappa_ci95: f.kappa_ci,
    }
}

fn add(a: &mut JudgeGold, b: &JudgeGold) {
    a.labelled += b.labelled;
    a.vs.merge(&b.vs);
    a.abstained += b.abstained;
    a.cancelled += b.cancelled;
}

/// A sub-panel (`mask` of `shape`'s judges) compared with the labels.
fn compared(l: &Ledger, shape: &Shape, mask: usize, replicates: u32) -> Compared {
    let judges: Vec<String> = (0..shape.judges.len())
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| l.judges[shape.judges[i]].label())
        .collect();
    let c = &shape.vs_gold[mask];
    let f = gold::figures(c, shape.labelled, replicates);
    Compared {
        judges,
        decided: c.n(),
        correct: c.correct(),
        accuracy: f.accuracy,
        accuracy_ci95: f.accuracy_ci,
        kappa: f.kappa,
        kappa_ci95: f.kappa_ci,
    }
}

/// The best of `masks` by kappa (an undefined kappa last), then accuracy, then decisions.
fn best(shape: &Shape, masks: impl Iterator<Item = usize>) -> Option<usize> {
    let key = |m: usize| {
        let c: &Confusion = &shape.vs_gold[m];
        (
            c.kappa().unwrap_or(f64::NEG_INFINITY),
            c.accuracy().unwrap_or(-1.0),
            c.n(),
        )
    };
    masks.max_by(|&x, &y| {
        let (a, b) = (key(x), key(y));
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(y.cmp(&x))
    })
}

fn comparison(l: &Ledger, shape: &Shape, replicates: u32) -> Comparison {
    let n = shape.judges.len();
    let full = (1usize << n) - 1;
    let of_size = |k: u32| (1..full).filter(move |m| m.count_ones() == k);
    Comparison {
        labelled: shape.labelled,
        panel: compared(l, shape, full, replicates),
        best_judge: best(shape, of_size(1)).map(|m| compared(l, shape, m, replicates)),
        sub_panels: (2..n as u32)
            .filter_map(|k| best(shape, of_size(k)))
            .map(|m| compared(l, shape, m, replicates))
            .collect(),
    }
}

/// The gate on the panel's figure, and how many more labels would settle it when it straddles.
fn gate(panel: &GoldAgreement, require: Require) -> GoldGate {
    let (figure, threshold, value, ci) = match require {
        Require::Kappa(t) => ("kappa", t, panel.kappa, panel.kappa_ci95),
        Require::Accuracy(t) => ("accuracy", t, panel.accuracy, panel.accuracy_ci95),
    };
    let result = gold::gate(ci, threshold);
    let answers = match (result, require, value, ci) {
        (Gate::Straddles, Require::Kappa(_), Some(v), Some(ci)) => {
            gold::settle_scaled(v, ci, panel.answered, threshold)
        }
        (Gate::Straddles, Require::Accuracy(_), Some(_), _) => {
            gold::settle_share(panel.correct, panel.answered, threshold)
        }
        _ => None,
    };
    // Answers come from decided panels: more labels, at the share decided so far.
    let more_labels = answers.map(|m| {
        let more = m.saturating_sub(panel.answered) as f64;
        (more * panel.labelled as f64 / panel.answered.max(1) as f64).ceil() as u64
    });
    GoldGate {
        figure,
        threshold,
        value,
        ci95: ci,
        result: result.as_str(),
        more_labels,
    }
}

/// The exit status of a gate's result (docs/design.md §3).
pub fn gate_status(g: &GoldGate) -> u8 {
    match g.result {
        "clears" => crate::records::exit_status::PASS,
        "fails" => crate::records::exit_status::FAIL,
        _ => crate::records::exit_status::NO_DECISION,
    }
}

/// The report against the labels.
pub fn report(l: &Ledger, g: &GoldCounts, replicates: u32, require: Option<Require>) -> GoldReport {
    let positive = if l.pairwise == Some(true) {
        "A"
    } else {
        "holds"
    };
    let of = |i: usize| g.judges.get(i).copied().unwrap_or_default();
    let judges = (0..l.judges.len())
        .map(|i| agreement("judge", l.judges[i].label(), positive, &of(i), replicates))
        .collect();
    let rollup = |scope: &'static str, key: &dyn Fn(usize) -> String| {
        let mut by: BTreeMap<String, JudgeGold> = BTreeMap::new();
        for i in 0..l.judges.len() {
            add(by.entry(key(i)).or_default(), &of(i));
        }
        by.into_iter()
            .map(|(name, j)| agreement(scope, name, positive, &j, replicates))
            .collect()
    };
    let seats = rollup("seat", &|i| l.judges[i].seat.clone());
    let lenses = rollup("lens", &|i| l.judges[i].lens.clone());
    let whole = JudgeGold {
        labelled: g.labelled_panels,
        vs: g.panel,
        abstained: g.undecided,
        cancelled: 0,
    };
    let panel = agreement(
        "panel",
        super::text::threshold(l.agree, l.pairwise == Some(true)),
        positive,
        &whole,
        replicates,
    );
    let mut shapes: Vec<&Shape> = l
        .shapes
        .values()
        .filter(|s| s.labelled > 0 && s.judges.len() > 1)
        .collect();
    shapes.sort_by(|a, b| b.labelled.cmp(&a.labelled).then(a.judges.cmp(&b.judges)));
    let comparisons = shapes
        .into_iter()
        .take(COMPARED)
        .map(|s| comparison(l, s, replicates))
        .collect();
    let (unseen, unseen_n) = g.labels.unseen(NAMED);
    let [pos, neg, _] = g.unlabelled;
    let corrected = gold::corrected(&g.panel, pos, pos + neg, replicates).map(|c| CorrectedShare {
        decided: pos + neg,
        positive: pos,
        observed: c.observed,
        observed_ci95: c.observed_ci,
        sensitivity: g.panel.sensitivity(),
        specificity: g.panel.specificity(),
        corrected: c.share,
        corrected_ci95: c.share_ci,
    });
    let summary = GoldSummary {
        kind: "gold-summary",
        positive,
        labels: g.labels.len() as u64,
        labelled_panels: g.labelled_panels,
        labels_without_records: unseen_n,
        labels_without_records_named: unseen.into_iter().map(|(k, _)| k).collect(),
        panels_without_label: g.unlabelled_panels(),
        panels_without_label_named: g.unlabelled_named.clone(),
        comparisons,
        gate: require.map(|r| gate(&panel, r)),
        corrected,
    };
    GoldReport {
        judges,
        seats,
        lenses,
        panel,
        summary,
    }
}

fn pct(x: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (x, ci) {
        (None, _) => "n/a".into(),
        (Some(x), None) => format!("{:.0}%", x * 100.0),
        (Some(x), Some([lo, hi])) => {
            format!("{:.0}% [{:.0}, {:.0}]", x * 100.0, lo * 100.0, hi * 100.0)
        }
    }
}

/// A list of names, the first few, and how many more.
fn named(names: &[String], all: u64) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(5)
        .map(|n| inline(n).into_owned())
        .collect();
    let more = all.saturating_sub(shown.len() as u64);
    match more {
        0 => shown.join(", "),
        n => format!("{}, and {n} more", shown.join(", ")),
    }
}

fn row(out: &mut String, a: &GoldAgreement, width: usize) {
    let name = format!("{} {}", a.scope, inline(&a.name));
    let _ = writeln!(
        out,
        "  {name:<width$} {:>8} {:>8} {:>9} {:>9}  {:<16} {:<16} {:<16} {}",
        a.labelled,
        a.answered,
        a.abstained,
        a.cancelled,
        pct(a.accuracy, a.accuracy_ci95),
        pct(a.sensitivity, a.sensitivity_ci95),
        pct(a.specificity, a.specificity_ci95),
        figure(a.kappa, a.kappa_ci95),
    );
}

fn compared_line(what: &str, c: &Compared) -> String {
    let judges: Vec<String> = c.judges.iter().map(|j| inline(j).into_owned()).collect();
    format!(
        "    {what} ({}): kappa {}, accuracy {}, decided {}",
        judges.join(", "),
        figure(c.kappa, c.kappa_ci95),
        pct(c.accuracy, c.accuracy_ci95),
        c.decided
    )
}

/// The gate's line.
pub fn gate_line(g: &GoldGate) -> String {
    let flag = format!("--require-{} {}", g.figure, g.threshold);
    let value = figure(g.value, g.ci95);
    match g.result {
        "clears" => format!(
            "GATE: {flag}: the panel's {} {value} clears it (exit 0)",
            g.figure
        ),
        "fails" => format!(
            "GATE: {flag}: the panel's {} {value} is below it (exit 1)",
            g.figure
        ),
        _ => {
            let more = match g.more_labels {
                Some(n) => format!(
                    "about {n} more labelled candidates would settle it at the observed {}",
                    g.figure
                ),
                None if g.value.is_some() => {
                    "the observed figure sits on the threshold: no number of labels would settle it"
                        .into()
                }
                None => "no labelled panel was decided".into(),
            };
            format!(
                "GATE: {flag}: the panel's {} {value} straddles it: {more} (exit 3)",
                g.figure
            )
        }
    }
}

/// The text section against the labels.
pub fn text(r: &GoldReport, replicates: u32) -> String {
    let s = &r.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Against the gold labels (positive: {}; 95 % intervals: Wilson's for shares, {replicates} \
            bootstrap replicates over the labelled panels for kappa)",
        s.positive
    );
    let _ = writeln!(
        out,
        "  {} labels, {} labelled panels; {} labels without records{}; {} panels without a label{}",
        s.labels,
        s.labelled_panels,
        s.labels_without_records,
        match s.labels_without_records {
            0 => String::new(),
            n => format!(" ({})", named(&s.labels_without_records_named, n)),
        },
        s.panels_without_label,
        match s.panels_without_label {
            0 => String::new(),
            n => format!(" ({})", named(&s.panels_without_label_named, n)),
        },
    );
    let all: Vec<&GoldAgreement> = std::iter::once(&r.panel)
        .chain(&r.judges)
        .chain(&r.seats)
        .chain(&r.lenses)
        .collect();
    let width = all
        .iter()
        .map(|a| a.scope.len() + 1 + inline(&a.name).chars().count())
        .max()
        .unwrap_or(4)
        .min(60);
    let _ = writeln!(
        out,
        "  {:<width$} labelled answered abstained cancelled  {:<16} {:<16} {:<16} kappa",
        "", "accuracy", "sensitivity", "specificity"
    );
    for a in all {
        row(&mut out, a, width);
    }
    out.push_str(
        "  (abstained: no answer, or for the panel no decision; neither is counted as wrong)\n\n",
    );
    if !s.comparisons.is_empty() {
        let _ = writeln!(
            out,
            "The panel against its best single judge and its best smaller panels, on the same \
                labelled panels"
        );
        for c in &s.comparisons {
            let _ = writeln!(
                out,
                "  {} judges, {} labelled panels:",
                c.panel.judges.len(),
                c.labelled
            );
            let _ = writeln!(out, "{}", compared_line("panel", &c.panel));
            if let Some(j) = &c.best_judge {
                let _ = writeln!(out, "{}", compared_line("best single judge", j));
            }
            for p in &c.sub_panels {
                let what = format!("best {} of {}", p.judges.len(), c.panel.judges.len());
                let _ = writeln!(out, "{}", compared_line(&what, p));
            }
        }
        out.push('\n');
    }
    if let Some(c) = &s.corrected {
        let _ = writeln!(
            out,
            "Corrected share of {} over the {} unlabelled panels decided: observed {}; corrected \
                for the panel's sensitivity {} and specificity {} (Rogan-Gladen): {}\n",
            s.positive,
            c.decided,
            pct(Some(c.observed), Some(c.observed_ci95)),
            figure(c.sensitivity, None),
            figure(c.specificity, None),
            match c.corrected {
                Some(_) => pct(c.corrected, c.corrected_ci95),
                None => "n/a (the panel is no better than a coin on the labels)".into(),
            }
        );
    }
    if let Some(g) = &s.gate {
        let _ = writeln!(out, "{}", gate_line(g));
    }
    out
}

/// Judges' names, each copyable.
fn names(judges: &[String]) -> String {
    judges
        .iter()
        .map(|j| name(j))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Markdown section against the labels.
pub fn markdown(r: &GoldReport) -> String {
    let s = &r.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "#### Against the gold labels (positive: {})\n\n{} labels, {} labelled panels, {} labels \
            without records, {} panels without a label.\n",
        s.positive, s.labels, s.labelled_panels, s.labels_without_records, s.panels_without_label
    );
    let rows: Vec<Vec<String>> = std::iter::once(&r.panel)
        .chain(&r.judges)
        .map(|a| {
            vec![
                format!(
                    "{} {}",
                    a.scope,
                    if a.scope == "judge" {
                        name(&a.name)
                    } else {
                        md(&a.name)
                    }
                ),
                a.labelled.to_string(),
                a.answered.to_string(),
                a.abstained.to_string(),
                pct(a.accuracy, a.accuracy_ci95),
                pct(a.sensitivity, a.sensitivity_ci95),
                pct(a.specificity, a.specificity_ci95),
                figure(a.kappa, a.kappa_ci95),
            ]
        })
        .collect();
    crate::tools::tally::markdown::table(
        &mut out,
        &[
            "",
            "labelled",
            "answered",
            "abstained",
            "accuracy",
            "sensitivity",
            "specificity",
            "kappa",
        ],
        &rows,
    );
    for c in &s.comparisons {
        let mut lines = vec![format!(
            "panel: kappa {}",
            figure(c.panel.kappa, c.panel.kappa_ci95)
        )];
        if let Some(j) = &c.best_judge {
            lines.push(format!(
                "best single judge {}: kappa {}",
                names(&j.judges),
                figure(j.kappa, j.kappa_ci95)
            ));
        }
        for p in &c.sub_panels {
            lines.push(format!(
                "best {} ({}): kappa {}",
                p.judges.len(),
                names(&p.judges),
                figure(p.kappa, p.kappa_ci95)
            ));
        }
        crate::tools::tally::markdown::details(
            &mut out,
            &format!(
                "{} judges against their best single judge and smaller panels, {} labelled panels",
                c.panel.judges.len(),
                c.labelled
            ),
            &lines.join("<br>"),
        );
    }
    if let Some(c) = &s.corrected {
        let _ = writeln!(
            out,
            "Corrected share of {} over {} unlabelled panels: observed {}, corrected \
                (Rogan-Gladen) {}.\n",
            s.positive,
            c.decided,
            pct(Some(c.observed), Some(c.observed_ci95)),
            pct(c.corrected, c.corrected_ci95)
        );
    }
    if let Some(g) = &s.gate {
        let _ = writeln!(out, "**{}**\n", md(&gate_line(g)));
    }
    out
}
