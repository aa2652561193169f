//! The words every form of a verdict report shares (text, Markdown): what a judge's status and
//! reason columns say, the PANEL line, the PANELS line, and a pull request's g10 bar and members
//! left out.

use std::collections::BTreeMap;

use crate::records::pr::PanelVerdict;
use crate::records::tally::Totals;
use crate::records::tally::{Abstention, Counts, JudgeRow, Tally};
use crate::records::{Decision, Status};

/// What the status column says: the verdict, or the way the judge abstained. An unreadable
/// judge that gave a word outside holds and breaks is shown by that word, as the seed's script
/// prints it; it is still counted as an abstention.
pub fn status_column<'a>(row: &JudgeRow<'a>) -> &'a str {
    match (row.verdict, row.status, row.said) {
        (Some(v), _, _) => v.as_str(),
        (None, Status::Unreadable, Some(said)) if !said.is_empty() => said,
        (None, status, _) => status.as_str(),
    }
}

/// What the reason column says. The script printed an unreadable judge's `reason` (usually
/// none); for the other abstentions, and for an unreadable judge that gave no reason, we print
/// the cause it could not know (a deliberate difference: the script's field was empty there).
pub fn reason_column<'a>(row: &JudgeRow<'a>) -> &'a str {
    reason_or_cause(row).0
}

/// The reason column's text, and whether it is our cause of an abstention rather than the
/// judge's own words (a cause is ours to cut to a width; a judge's reason is shown whole).
pub fn reason_or_cause<'a>(row: &JudgeRow<'a>) -> (&'a str, bool) {
    // `$(jq -r …)` drops trailing newlines.
    let trim = |text: Option<&'a str>| text.unwrap_or("").trim_end_matches('\n');
    let reason = trim(row.reason);
    match (row.verdict, row.status) {
        (Some(_), _) => (reason, false),
        (None, Status::Unreadable) if !reason.is_empty() => (reason, false),
        (None, _) => (trim(row.cause), true),
    }
}

/// The PANEL line. The script's three forms, and when a judge abstained other than by an
/// unreadable answer, a fourth that says how each abstained.
pub fn panel_line(c: &Counts, abstentions: &[Abstention], missing: usize) -> String {
    let (breaks, holds, abstained) = (c.breaks, c.holds, c.abstained);
    if abstained > 0 {
        let only_unreadable =
            missing == 0 && abstentions.iter().all(|a| a.status == Status::Unreadable);
        if only_unreadable {
            format!(
                "PANEL: {breaks} breaks / {holds} holds, and {abstained} judge(s) came back \
                    unreadable."
            )
        } else {
            format!(
                "PANEL: {breaks} breaks / {holds} holds, and {abstained} judge(s) gave no verdict \
                    ({}).",
                abstention_kinds(abstentions, missing)
            )
        }
    } else if breaks == 0 || holds == 0 {
        let said = if breaks > 0 { "breaks" } else { "holds" };
        format!("PANEL: unanimous — all {} say {said}.", breaks + holds)
    } else {
        format!(
            "PANEL: split {breaks}-{holds} — read the reasons yourself. The disagreement is the \
                finding."
        )
    }
}

/// `1 missing, 1 timeout, 2 unreadable`: each way of abstaining, by name.
fn abstention_kinds(abstentions: &[Abstention], missing: usize) -> String {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for a in abstentions {
        *kinds.entry(a.status.as_str()).or_default() += 1;
    }
    if missing > 0 {
        kinds.insert("missing", missing);
    }
    kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closing line of a text stream of many panels.
pub fn panels_line(t: &Totals) -> String {
    format!(
        "PANELS: {} passed, {} failed, {} undecided",
        t.passed, t.failed, t.undecided
    )
}

/// The PANEL line of a panel decided early, in place of the seed's (whose panels never left a
/// judge out): `PANEL: holds, decided 2-0 with --agree 2; 1 judge not needed (cancelled).`
/// `None` when no judge was cancelled, or the answers in do not decide the panel.
pub fn early_panel_line(t: &Tally) -> Option<String> {
    if t.decided_early != Some(true) {
        return None;
    }
    let c = &t.counts;
    let (side, won, lost) = match t.decision() {
        Decision::Pass => ("holds", c.holds, c.breaks),
        _ => ("breaks", c.breaks, c.holds),
    };
    let n = t.cancelled.len();
    let silent = c.abstained - n;
    let others = match silent {
        0 => String::new(),
        k => format!("; {k} gave no verdict"),
    };
    let over = over_budget(t).len();
    let judges = |n: usize| if n == 1 { "judge" } else { "judges" };
    let left_out = match (n - over, over) {
        (k, 0) => format!("{k} {} not needed (cancelled)", judges(k)),
        (0, m) => format!("{m} {} not launched (over budget)", judges(m)),
        (k, m) => format!(
            "{k} {} not needed (cancelled), {m} not launched (over budget)",
            judges(k)
        ),
    };
    Some(format!(
        "PANEL: {side}, decided {won}-{lost} with {}{others}; {left_out}.",
        threshold_words(t)
    ))
}

/// The judges a budget left out (`--budget-usd`): cancelled, their cause saying so.
fn over_budget<'a>(t: &Tally<'a>) -> Vec<&'a str> {
    t.judges
        .iter()
        .filter(|j| j.status == Status::Cancelled)
        .filter(|j| {
            j.cause
                .is_some_and(|c| c.starts_with(crate::records::OVER_BUDGET))
        })
        .map(|j| j.judge)
        .collect()
}

/// The line of a panel whose judges were cancelled without cause: the answers in do not
/// decide it (a forged or edited stream, or a threshold other than the one it ran under).
/// Each name is shown through `show` (escaped for the form).
pub fn uncaused_line(t: &Tally, show: &dyn Fn(&str) -> String) -> Option<String> {
    if t.decided_early != Some(false) {
        return None;
    }
    let names: Vec<String> = t.cancelled.iter().map(|j| show(j)).collect();
    if over_budget(t).len() == t.cancelled.len() {
        return Some(format!(
            "OVER BUDGET: {}: not launched, and the answers in do not decide the panel with {}: no \
                decision (a larger --budget-usd asks them).",
            names.join(", "),
            threshold_words(t)
        ));
    }
    Some(format!(
        "CANCELLED WITHOUT CAUSE: {}: the answers in do not decide the panel with {}, and a judge \
            left out counts as missing (tally with the --agree the panel ran under).",
        names.join(", "),
        threshold_words(t)
    ))
}

/// `--agree 2`, or `3 of 3 needed` when the threshold is the default: words that read after
/// "with" (`decided 1-1 with 3 of 3 needed`).
fn threshold_words(t: &Tally) -> String {
    if t.agreed {
        format!("--agree {}", t.threshold)
    } else {
        format!("{} of {} needed", t.threshold, t.counts.judges)
    }
}

/// The g10 bar's line: satisfied, or what it missed (unescaped: a profile's name is the plan's).
pub fn g10_bar(v: &PanelVerdict) -> String {
    if v.satisfies_g10 {
        "g10 bar: satisfied".to_string()
    } else if v.g10_unmet.is_empty() {
        "g10 bar: not satisfied".to_string()
    } else {
        format!("g10 bar: not satisfied ({})", v.g10_unmet.join("; "))
    }
}

/// The line naming the members left out (panel-judge --stop-when-decided), if any: not needed
/// when a blocking FIX_FIRST decided the panel, else `CANCELLED WITHOUT CAUSE` (no decision).
pub fn cancelled_line(v: &PanelVerdict) -> Option<String> {
    if !v.cancelled_without_cause.is_empty() {
        return Some(format!(
            "CANCELLED WITHOUT CAUSE: {}: no blocking member's FIX_FIRST decided the panel, and a \
                member left out decides nothing: no verdict",
            v.cancelled_without_cause.join(", ")
        ));
    }
    (!v.cancelled.is_empty()).then(|| {
        format!(
            "not needed (cancelled): {}: a blocking FIX_FIRST decided the panel without them, so \
                their findings were never raised",
            v.cancelled.join(", ")
        )
    })
}
