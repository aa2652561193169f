//! `panel-tally --ledger --format markdown`: the ledger's report as Markdown.

use std::fmt::Write as _;

use crate::records::ledger::{Flag, LedgerReport, LedgerSummary};
use crate::records::printable::{markdown as md, markdown_name as name};
use crate::tools::tally::ledger::figure;
use crate::tools::tally::markdown::{details, table};

/// A number that may be missing (kappa when chance alone agrees), as a cell.
fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |v| format!("{v:.2}"))
}

/// The flags of a judge or pair: their names in the table, their evidence in a section.
fn flag_names(flags: &[Flag]) -> String {
    flags.iter().map(|f| f.flag).collect::<Vec<_>>().join(", ")
}

/// `panel-tally --ledger --format markdown`: what the history says of the panel (no decision:
/// the ledger decides nothing), a table of judges, the pairs' agreement, each flag's evidence.
pub fn ledger(r: &LedgerReport) -> String {
    let mut out = String::new();
    head(&mut out, &r.summary);
    judges(&mut out, r);
    pairs(&mut out, r);
    flag_evidence(&mut out, r);
    out
}

/// The report's head: the panels and agreement, the outcomes, what stopping early saved.
fn head(out: &mut String, s: &LedgerSummary) {
    let _ = writeln!(
        out,
        "### 📒 Ledger: {} panels, {} judges, Fleiss' kappa {}, Krippendorff's alpha {}\n",
        s.panels,
        s.judges,
        figure(s.fleiss_kappa, s.fleiss_kappa_ci95),
        figure(s.alpha, s.alpha_ci95)
    );
    let at = match s.agree {
        Some(_) => format!(" ({})", super::text::threshold(s.agree, s.pairwise)),
        None => String::new(),
    };
    let words = match s.pairwise {
        true => ["preferred A", "preferred B", "no preference"],
        false => ["passed", "failed", "undecided"],
    };
    let _ = writeln!(
        out,
        "{} {}, {} {}, {} {}{at}; {} flag(s). Intervals: 95 %, {} bootstrap replicates over \
         panels; alpha counts an abstention as missing.\n",
        s.pass,
        words[0],
        s.fail,
        words[1],
        s.no_decision,
        words[2],
        s.flags,
        s.bootstrap_replicates
    );
    if let Some(e) = &s.stopped_early {
        let _ = writeln!(
            out,
            "Stopped early: {} judge(s) left out (cancelled); {} panel(s) decided early without \
             them, {} not decided at this threshold; about {:.1} judge-seconds and ${:.4} saved.\n",
            e.cancelled,
            e.decided_early,
            e.cancelled_without_cause,
            e.judge_ms as f64 / 1000.0,
            e.cost_usd
        );
    }
}

/// The table of judges, one row each.
fn judges(out: &mut String, r: &LedgerReport) {
    let rows: Vec<Vec<String>> = r
        .judges
        .iter()
        .map(|j| {
            vec![
                name(&j.name),
                j.panels.to_string(),
                opt(j.holds_rate),
                j.abstained.to_string(),
                j.median_ms
                    .map_or("–".into(), |m| format!("{:.1}s", m as f64 / 1000.0)),
                format!("{:.4}", j.cost_usd),
                flag_names(&j.flags),
            ]
        })
        .collect();
    table(
        out,
        &[
            "judge",
            "panels",
            "holds rate",
            "abstained",
            "median",
            "cost $",
            "flags",
        ],
        &rows,
    );
}

/// Each pair of judges' agreement and kappa, folded.
fn pairs(out: &mut String, r: &LedgerReport) {
    let pairs: Vec<String> = r
        .pairs
        .iter()
        .map(|p| {
            format!(
                "{} × {}: {} shared panels, agreement {}, kappa {}{}",
                name(&p.a),
                name(&p.b),
                p.shared_panels,
                figure(p.agreement, p.agreement_ci95),
                figure(p.kappa, p.kappa_ci95),
                match flag_names(&p.flags) {
                    f if f.is_empty() => String::new(),
                    f => format!(" ({f})"),
                }
            )
        })
        .collect();
    details(out, "pairs of judges", &pairs.join("<br>"));
}

/// Each flag's evidence, the judges' then the pairs', folded.
fn flag_evidence(out: &mut String, r: &LedgerReport) {
    let evidence: Vec<String> = r
        .judges
        .iter()
        .flat_map(|j| j.flags.iter().map(move |f| (name(&j.name), f)))
        .chain(r.pairs.iter().flat_map(|p| {
            p.flags
                .iter()
                .map(move |f| (format!("{} × {}", name(&p.a), name(&p.b)), f))
        }))
        .map(|(who, f)| format!("**{}** {who}: {}", f.flag, md(&f.evidence)))
        .collect();
    details(out, "flags and their evidence", &evidence.join("<br>"));
}
