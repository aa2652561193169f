//! The ledger's text report: the judges, seats and families, the canaries, the pairwise kappa
//! as a heat map, Fleiss' kappa, the flags and the smaller panels. Every name read from a
//! record is shown with its control characters escaped, a newline too.

use std::fmt::Write;

use crate::records::ledger::{JudgeStats, LedgerReport, LedgerSummary, StoppedEarly};
use crate::records::printable::inline;
use crate::tools::tally::ledger::figure;

/// Whether the terminal report may use colour: stdout is a terminal and `NO_COLOR` is unset
/// or empty.
pub fn colour(stdout_is_terminal: bool) -> bool {
    stdout_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The heat map's steps: the lowest kappa of each, its glyph and its 256-colour background.
const STEPS: [(f64, &str, u8); 6] = [
    (0.8, "██", 196),
    (0.6, "▓▓", 208),
    (0.4, "▒▒", 178),
    (0.2, "░░", 107),
    (0.0, "··", 67),
    (f64::NEG_INFINITY, "--", 17),
];

/// A cell of the heat map: two columns.
fn cell(kappa: Option<f64>, shared: bool, paint: bool) -> String {
    let Some(k) = kappa else {
        // Never on one panel together: blank; on panels together but kappa undefined: n/a.
        return if shared { "??".into() } else { "  ".into() };
    };
    let (_, glyph, colour) = STEPS
        .iter()
        .find(|(low, _, _)| k >= *low)
        .copied()
        .unwrap_or(STEPS[STEPS.len() - 1]);
    if paint {
        format!("\x1b[48;5;{colour}m\x1b[38;5;{colour}m{glyph}\x1b[0m")
    } else {
        glyph.to_string()
    }
}

fn ms(ms: Option<u64>) -> String {
    match ms {
        None => "-".into(),
        Some(m) if m < 1000 => format!("{m} ms"),
        Some(m) if m < 60_000 => format!("{:.1} s", m as f64 / 1000.0),
        Some(m) => format!("{:.1} min", m as f64 / 60_000.0),
    }
}

fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{:.0}%", x * 100.0))
}

/// Each pairwise judge's and seat's answers against the order it was shown them in.
fn position(out: &mut String, r: &LedgerReport) {
    let rows: Vec<&JudgeStats> = r
        .judges
        .iter()
        .chain(&r.seats)
        .filter(|j| j.position.is_some())
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Position (each answer against the order the two were shown in)"
    );
    for j in rows {
        let p = j.position.as_ref().expect("filtered");
        let consistency = match (p.consistency, p.consistency_ci95) {
            (Some(c), Some(ci)) => format!(
                "consistent on {} of {} panels shown both orders ({:.0}% [{:.0}, {:.0}])",
                p.consistent,
                p.both_orders,
                c * 100.0,
                ci[0] * 100.0,
                ci[1] * 100.0
            ),
            _ => "never answered both orders".into(),
        };
        let first = match (p.first_shown_rate, p.first_shown_rate_ci95) {
            (Some(f), ci) => format!(
                "preferred the first shown in {} of {} answers ({})",
                p.first_shown,
                p.answers,
                match ci {
                    Some(ci) => format!(
                        "{:.0}% [{:.0}, {:.0}]",
                        f * 100.0,
                        ci[0] * 100.0,
                        ci[1] * 100.0
                    ),
                    None => format!("{:.0}%", f * 100.0),
                }
            ),
            (None, _) => "no answer".into(),
        };
        let _ = writeln!(
            out,
            "  {} {}: {consistency}; {first}",
            j.scope,
            inline(&j.name)
        );
    }
    out.push('\n');
}

fn table(out: &mut String, title: &str, rows: &[JudgeStats], numbered: bool, heads: (&str, &str)) {
    let width = rows
        .iter()
        .map(|r| inline(&r.name).chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 48);
    let _ = writeln!(out, "{title}");
    // Under a budget, each row's estimate beside what it cost.
    let estimated = rows.iter().any(|r| r.estimate_usd.is_some());
    let _ = writeln!(
        out,
        "  {}{:<width$}  panels  {:>5}  {:>6}  abstained  median      p90   tokens      cost{}",
        if numbered { "  # " } else { "" },
        "name",
        heads.0,
        heads.1,
        if estimated { "  estimate" } else { "" }
    );
    for r in rows {
        let name: String = inline(&r.name).chars().take(width).collect();
        let number = match (numbered, r.index) {
            (true, Some(i)) => format!("{i:>3} "),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {number}{name:<width$}  {:>6}  {:>5}  {:>6}  {:>9}  {:>6}  {:>7}  {:>7}  {:>8}",
            r.panels,
            pct(r.holds_rate),
            pct(r.holds_rate.map(|h| 1.0 - h)),
            pct(r.abstention_rate),
            ms(r.median_ms),
            ms(r.p90_ms),
            tokens(r.input_tokens + r.output_tokens),
            format!("${:.2}", r.cost_usd),
        );
        if estimated {
            out.pop();
            let e = r.estimate_usd.map_or("-".into(), |e| format!("${e:.4}"));
            let _ = writeln!(out, "  {e:>8}");
        }
    }
    out.push('\n');
}

/// The threshold the ledger decided each panel at, in words.
pub fn threshold(agree: Option<usize>, pairwise: bool) -> String {
    match (agree, pairwise) {
        (None, false) => "every judge must hold".to_string(),
        (Some(n), false) => format!("--agree {n}: {n} judges must hold, all of a smaller panel"),
        (None, true) => "more than half must prefer one answer".to_string(),
        (Some(n), true) => format!(
            "--agree {n}: {n} judges must prefer one answer, more than half of a smaller panel"
        ),
    }
}

/// What stopping early left out and saved, and the panels it leaves undecided here.
fn stopped_early(out: &mut String, e: &StoppedEarly, agree: Option<usize>, pairwise: bool) {
    let _ = writeln!(
        out,
        "Stopped early: {} judge(s) left out (cancelled), not abstentions; {} panel(s) decided \
            early without them, {} not decided at this threshold; saved about {:.1} judge-seconds, \
            {} tokens, ${:.4} (each at its judge's mean)\n",
        e.cancelled,
        e.decided_early,
        e.cancelled_without_cause,
        e.judge_ms as f64 / 1000.0,
        e.tokens,
        e.cost_usd
    );
    if e.cancelled_without_cause > 0 {
        let _ = writeln!(
            out,
            "CANCELLED WITHOUT CAUSE: {} panel(s) with a judge left out that the answers in do not \
                decide ({}): counted as no decision; read the ledger with the --agree the panels \
                ran under\n",
            e.cancelled_without_cause,
            threshold(agree, pairwise)
        );
    }
}

/// The report's head: what was read, the outcomes, what stopping early saved, and the judges,
/// seats and families (for pairwise records, their answers against the order shown too).
fn head(out: &mut String, r: &LedgerReport) {
    let s = &r.summary;
    let _ = writeln!(
        out,
        "LEDGER: {} {} records, {} panels, {} judges (seat × lens), {} canaries",
        s.records,
        if s.pairwise { "pairwise" } else { "verdict" },
        s.panels,
        s.judges,
        s.canaries
    );
    let words = if s.pairwise {
        (
            "A",
            "B",
            "no preference",
            "A and B: of the preferences given",
        )
    } else {
        (
            "pass",
            "fail",
            "no decision",
            "holds and breaks: of the verdicts given",
        )
    };
    let _ = writeln!(
        out,
        "Outcomes ({}): {} {}, {} {}, {} {}\n",
        threshold(s.agree, s.pairwise),
        words.0,
        s.pass,
        words.1,
        s.fail,
        words.2,
        s.no_decision
    );
    if let Some(e) = &s.stopped_early {
        stopped_early(out, e, s.agree, s.pairwise);
    }
    let heads = if s.pairwise {
        ("A", "B")
    } else {
        ("holds", "breaks")
    };
    table(
        out,
        &format!("Judges ({})", words.3),
        &r.judges,
        true,
        heads,
    );
    table(out, "Seats", &r.seats, false, heads);
    table(out, "Families", &r.families, false, heads);
    position(out, r);
}

/// The report as text; `paint` draws the heat map in ANSI colour.
pub fn render(r: &LedgerReport, paint: bool) -> String {
    let mut out = String::new();
    head(&mut out, r);
    canaries(&mut out, r);
    heat_map(&mut out, r, paint);
    agreement(&mut out, &r.summary);
    flags(&mut out, r);
    smaller_panels(&mut out, &r.summary);
    out
}

/// Each canary seat's hits on the known answers.
fn canaries(out: &mut String, r: &LedgerReport) {
    let canaries: Vec<&JudgeStats> = r.seats.iter().filter(|x| x.canary.is_some()).collect();
    if !canaries.is_empty() {
        let _ = writeln!(out, "Canaries (known answers, not counted in panels)");
        for seat in canaries {
            let c = seat.canary.as_ref().expect("filtered");
            let _ = writeln!(
                out,
                "  {}: {} of {} hit ({:.0}% [{:.0}, {:.0}]), {} wrong, {} abstained",
                inline(&seat.name),
                c.hits,
                c.seen,
                c.hit_rate * 100.0,
                c.hit_rate_ci95[0] * 100.0,
                c.hit_rate_ci95[1] * 100.0,
                c.wrong,
                c.abstained
            );
        }
        out.push('\n');
    }
}

/// Fleiss' kappa and Krippendorff's alpha, overall and by lens.
fn agreement(out: &mut String, s: &LedgerSummary) {
    let _ = writeln!(
        out,
        "Agreement of the panel (95 % intervals, {} bootstrap replicates over panels)",
        s.bootstrap_replicates
    );
    let _ = writeln!(
        out,
        "  overall: Fleiss' kappa {}, Krippendorff's alpha {}, over {} panels",
        figure(s.fleiss_kappa, s.fleiss_kappa_ci95),
        figure(s.alpha, s.alpha_ci95),
        s.fleiss_panels
    );
    for l in &s.by_lens {
        let _ = writeln!(
            out,
            "  {}: Fleiss' kappa {}, Krippendorff's alpha {}, over {} panels",
            inline(&l.lens),
            figure(l.kappa, l.kappa_ci95),
            figure(l.alpha, l.alpha_ci95),
            l.panels
        );
    }
    let _ = writeln!(
        out,
        "  (alpha counts an abstention as missing: read it when judges abstain)\n"
    );
}

/// The flags raised on pairs of judges, then on judges alone.
fn flags(out: &mut String, r: &LedgerReport) {
    let _ = writeln!(out, "Flags");
    let mut any = false;
    for p in &r.pairs {
        for f in &p.flags {
            any = true;
            let _ = writeln!(
                out,
                "  {:<13} {} & {}: {}",
                f.flag,
                inline(&p.a),
                inline(&p.b),
                f.evidence
            );
        }
    }
    for j in &r.judges {
        for f in &j.flags {
            any = true;
            let _ = writeln!(out, "  {:<13} {}: {}", f.flag, inline(&j.name), f.evidence);
        }
    }
    if !any {
        let _ = writeln!(out, "  none");
    }
    out.push('\n');
}

/// The smaller panels that match the full panel's outcomes, and what each saves.
fn smaller_panels(out: &mut String, s: &LedgerSummary) {
    let _ = writeln!(
        out,
        "Smaller panels (the fewest judges whose outcome matched the full panel's on 95% of its \
            panels, by the low end of its interval)"
    );
    if s.sub_panels.is_empty() {
        let _ = writeln!(out, "  none: no panel had two judges or more");
    }
    for p in &s.sub_panels {
        let keep: Vec<String> = p.keep.iter().map(|k| inline(k).into_owned()).collect();
        let _ = writeln!(
            out,
            "  {} judges, {} panels: keep {} ({} of {}), matched {} of {} ({:.1}% [{:.1}, {:.1}]); \
                saves {} tokens, ${:.2}, {} of judge time",
            p.panel.len(),
            p.panels,
            keep.join(", "),
            p.keep.len(),
            p.panel.len(),
            p.matched,
            p.panels,
            p.match_rate * 100.0,
            p.match_rate_ci95[0] * 100.0,
            p.match_rate_ci95[1] * 100.0,
            tokens(p.saved_input_tokens + p.saved_output_tokens),
            p.saved_cost_usd,
            ms(Some(p.saved_judge_ms)),
        );
    }
    if s.unscored_panels > 0 {
        let _ = writeln!(
            out,
            "  ({} panels not scored: more than 12 judges, or past 64 panel shapes)",
            s.unscored_panels
        );
    }
}

fn heat_map(out: &mut String, r: &LedgerReport, paint: bool) {
    let n = r.judges.len();
    let _ = writeln!(
        out,
        "Agreement beyond chance (Cohen's kappa of each pair on the panels they shared)"
    );
    let mut grid = vec![vec![None::<(Option<f64>, bool)>; n]; n];
    for p in &r.pairs {
        let v = Some((p.kappa, p.shared_panels > 0));
        grid[p.a_index - 1][p.b_index - 1] = v;
        grid[p.b_index - 1][p.a_index - 1] = v;
    }
    let _ = write!(out, "     ");
    for j in 1..=n {
        let _ = write!(out, "{:>3}", j % 1000);
    }
    out.push('\n');
    for (i, row) in grid.iter().enumerate() {
        let _ = write!(out, "  {:>3}", i + 1);
        for (j, c) in row.iter().enumerate() {
            let shown = if i == j {
                " \\".to_string()
            } else {
                match c {
                    Some((k, shared)) => cell(*k, *shared, paint),
                    None => cell(None, false, paint),
                }
            };
            let _ = write!(out, " {shown}");
        }
        let _ = writeln!(out, "  {}", inline(&r.judges[i].name));
    }
    let legend: Vec<String> = STEPS
        .iter()
        .map(|(low, _, _)| {
            let label = if low.is_finite() {
                format!(">= {low:.1}")
            } else {
                "< 0".into()
            };
            format!("{} {label}", cell(Some(*low), true, paint))
        })
        .collect();
    let _ = writeln!(
        out,
        "  {}; ?? n/a (both always gave one answer); blank: never on one panel\n",
        legend.join("  ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_a_shade_or_a_colour_by_its_kappa() {
        assert_eq!(cell(Some(0.95), true, false), "██");
        assert_eq!(cell(Some(0.5), true, false), "▒▒");
        assert_eq!(cell(Some(-0.3), true, false), "--");
        assert_eq!(cell(None, true, false), "??");
        assert_eq!(cell(None, false, true), "  ");
        assert_eq!(
            cell(Some(0.95), true, true),
            "\x1b[48;5;196m\x1b[38;5;196m██\x1b[0m"
        );
        assert_eq!(
            cell(Some(0.1), true, true),
            "\x1b[48;5;67m\x1b[38;5;67m··\x1b[0m"
        );
        // Not a terminal: no colour, whatever the environment says.
        assert!(!colour(false));
    }
}
