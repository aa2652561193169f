//! `panel-tally` over pairwise records (`panel-judge --contract pairwise`): the panel's
//! preference between two answers, each judge's answer in each order it was shown, and the
//! judges whose preference followed the order (position-inconsistent), as text, one
//! `preference` record (`--json`) or Markdown.
//!
//! A panel prefers the answer that `--agree N` of its judges prefer, by default more than half
//! (`rules::decision::preference`); without one it has no preference, exit 3. A
//! position-inconsistent judge counts as an abstention, or with `--inconsistent exclude` not at
//! all.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::records::input::Source;
use crate::records::pairwise::{
    PairwiseRecord, Preference, PreferenceCounts, PreferenceJudge, PreferenceTally, ShownAnswer,
};
use crate::records::printable::{inline, markdown as md, markdown_name as name, shown};
use crate::records::{Decision, Status, exit_status};
use crate::rules::decision::{self, Inconsistent};
use crate::tools::tally::markdown::{details, mark, table};
use crate::tools::tally::report::{CAUSE_WIDTH, cut};
use crate::tools::tally::report::{Format, Report};

/// How the records are counted.
pub struct PairwiseRules {
    pub agree: Option<usize>,
    pub inconsistent: Inconsistent,
    pub last_wins: bool,
}

/// Reads the records of one pairwise panel: one pair, each judge once (by its later run's
/// record with `last_wins`).
fn read(inputs: Vec<Source>, last_wins: bool) -> Result<Vec<PairwiseRecord>> {
    let mut recs: Vec<PairwiseRecord> = Vec::new();
    crate::records::for_each_in::<PairwiseRecord>(inputs, &["pairwise"], |r, at| {
        if let Some(first) = recs.first()
            && first.candidate != r.candidate
        {
            bail!(
                "{at}: a record about pair {}, but the records before it are about {}: one \
                    pairwise panel at a time",
                inline(&r.candidate),
                inline(&first.candidate)
            );
        }
        match recs.iter().position(|x| x.judge == r.judge) {
            Some(i) if recs[i].run == r.run => bail!(
                "{at}: judge {:?} of run {:?} is already counted",
                inline(&r.judge),
                inline(&r.run)
            ),
            Some(i) if last_wins => recs[i] = r,
            Some(i) => bail!(
                "{at}: judge {:?} has records from two runs ({} and {}); --last-wins counts its \
                    later one",
                inline(&r.judge),
                inline(&recs[i].run),
                inline(&r.run)
            ),
            None => recs.push(r),
        }
        Ok(())
    })?;
    if recs.is_empty() {
        bail!("no pairwise records");
    }
    recs.sort_by(|x, y| x.judge.as_bytes().cmp(y.judge.as_bytes()));
    Ok(recs)
}

/// Counts the panel by `rules`.
pub fn count(recs: Vec<PairwiseRecord>, rules: &PairwiseRules) -> Result<PreferenceTally> {
    let size = recs
        .iter()
        .map(|r| r.panel_size)
        .max()
        .unwrap_or(0)
        .max(recs.len());
    let required = decision::preference_required(rules.agree, size)?;
    let mut c = PreferenceCounts {
        judges: size,
        ..PreferenceCounts::default()
    };
    let (mut first_shown, mut answers) = (0, 0);
    for r in &recs {
        match (r.verdict, r.status) {
            (Some(Preference::A), _) => c.a += 1,
            (Some(Preference::B), _) => c.b += 1,
            (None, Status::PositionInconsistent) => c.position_inconsistent += 1,
            (None, _) => c.abstained += 1,
        }
        for o in &r.orders {
            if let Some(v) = o.verdict {
                answers += 1;
                first_shown += u64::from(v == o.shown.first());
            }
        }
    }
    c.abstained += size - recs.len();
    let preferred = decision::preference(
        (c.a, c.b, c.position_inconsistent),
        size,
        required,
        rules.inconsistent,
    );
    let mut runs: Vec<String> = recs.iter().map(|r| r.run.clone()).collect();
    runs.dedup();
    Ok(PreferenceTally {
        kind: "preference",
        candidate: recs[0].candidate.clone(),
        a: recs[0].a.clone(),
        b: recs[0].b.clone(),
        name: recs[0].name.clone(),
        preferred,
        decided: preferred.is_some(),
        threshold: required,
        inconsistent: rules.inconsistent.as_str(),
        counts: c,
        first_shown,
        answers,
        judges: recs.into_iter().map(judge).collect(),
        runs,
    })
}

fn judge(r: PairwiseRecord) -> PreferenceJudge {
    PreferenceJudge {
        orders: r
            .orders
            .iter()
            .map(|o| ShownAnswer {
                shown: o.shown,
                verdict: o.verdict,
            })
            .collect(),
        judge: r.judge,
        lens: r.lens,
        seat: r.seat,
        family: r.family,
        verdict: r.verdict,
        status: r.status,
        reason: r.reason.or(r.cause),
        confidence: r.confidence,
    }
}

/// The answer the panel prefers, with the name the user gave it.
fn named(t: &PreferenceTally, p: Preference) -> String {
    let name = match p {
        Preference::A => &t.a,
        Preference::B => &t.b,
    };
    format!("{} ({})", p.as_str(), inline(name))
}

/// The PANEL line.
pub fn panel_line(t: &PreferenceTally) -> String {
    let c = &t.counts;
    let how = match t.inconsistent {
        "exclude" => "excluded",
        _ => "abstained",
    };
    let mut silent = Vec::new();
    if c.position_inconsistent > 0 {
        silent.push(format!(
            "{} position-inconsistent ({how})",
            c.position_inconsistent
        ));
    }
    if c.abstained > 0 {
        silent.push(format!("{} gave no preference", c.abstained));
    }
    let silent = match silent.is_empty() {
        true => String::new(),
        false => format!("; {}", silent.join(", ")),
    };
    match t.preferred {
        Some(p) => format!(
            "PANEL: prefers {}, {} of {} judge(s) ({} needed){silent}.",
            named(t, p),
            if p == Preference::A { c.a } else { c.b },
            c.judges,
            t.threshold
        ),
        None => format!(
            "PANEL: no preference: A {}, B {} of {} judge(s) ({} needed){silent}.",
            c.a, c.b, c.judges, t.threshold
        ),
    }
}

/// A judge's answers by order: `AB: A  BA: B`.
fn orders_column(j: &PreferenceJudge) -> String {
    j.orders
        .iter()
        .map(|o| {
            format!(
                "{}: {}",
                o.shown.as_str(),
                o.verdict.map_or("-", |v| v.as_str())
            )
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// The text report: one line per judge, the PANEL line, the judges that followed the order,
/// the first-shown rate and the run folders.
pub fn text(t: &PreferenceTally) -> String {
    let width = t
        .judges
        .iter()
        .map(|j| inline(&j.judge).chars().count())
        .max()
        .unwrap_or(0)
        .max(12);
    let mut out = String::new();
    for j in &t.judges {
        let said = j.verdict.map_or(j.status.as_str(), |v| v.as_str());
        let reason = j.reason.as_deref().unwrap_or("");
        let reason = match j.verdict {
            Some(_) => inline(reason).into_owned(),
            None => cut(&inline(reason), CAUSE_WIDTH).into_owned(),
        };
        let _ = writeln!(
            out,
            "{:<width$} {said:<21} {:<14} {reason}",
            inline(&j.judge),
            orders_column(j)
        );
    }
    let _ = writeln!(out, "\n{}", panel_line(t));
    let followed: Vec<String> = t
        .judges
        .iter()
        .filter(|j| j.status == Status::PositionInconsistent)
        .map(|j| inline(&j.judge).into_owned())
        .collect();
    if !followed.is_empty() {
        let _ = writeln!(
            out,
            "POSITION-INCONSISTENT: {} (each preferred whichever answer it was shown first)",
            followed.join(", ")
        );
    }
    if t.answers > 0 {
        let _ = writeln!(
            out,
            "first shown: {} of {} answers preferred the answer shown first",
            t.first_shown, t.answers
        );
    }
    for run in &t.runs {
        let _ = writeln!(out, "pairwise: {}", shown(run));
    }
    out
}

/// The Markdown report: the preference as a heading, a table of judges, each reason.
pub fn markdown(t: &PreferenceTally) -> String {
    let decision = if t.decided {
        Decision::Pass
    } else {
        Decision::NoDecision
    };
    let mut out = String::new();
    let head = match t.preferred {
        Some(p) => format!("prefers {}", p.as_str()),
        None => "no preference".into(),
    };
    let _ = writeln!(
        out,
        "### {} Pairwise panel: {head}\n\nA: {} · B: {} · {} of {} answers preferred the one shown \
            first.\n",
        mark(decision),
        md(&t.a),
        md(&t.b),
        t.first_shown,
        t.answers
    );
    let rows: Vec<Vec<String>> = t
        .judges
        .iter()
        .map(|j| {
            vec![
                name(&j.judge),
                md(&j.seat),
                j.verdict.map_or(j.status.as_str(), |v| v.as_str()).into(),
                orders_column(j),
            ]
        })
        .collect();
    table(&mut out, &["judge", "seat", "prefers", "by order"], &rows);
    let reasons: Vec<String> = t
        .judges
        .iter()
        .map(|j| {
            format!(
                "**{}**: {}",
                name(&j.judge),
                md(j.reason.as_deref().unwrap_or(""))
            )
        })
        .collect();
    details(&mut out, "reasons", &reasons.join("<br>"));
    out
}

impl Report for PreferenceTally {
    fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        crate::records::write(out, self)
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<()> {
        Ok(out.write_all(text(self).as_bytes())?)
    }

    fn write_markdown(&self, out: &mut dyn Write) -> Result<()> {
        Ok(out.write_all(markdown(self).as_bytes())?)
    }
}

/// `panel-tally` over pairwise records: prints the report and exits 0 with a preference, 3
/// without one.
pub fn run(inputs: Vec<Source>, format: Format, rules: &PairwiseRules) -> Result<ExitCode> {
    let t = count(read(inputs, rules.last_wins)?, rules)?;
    let mut out = crate::engine::output::stdout();
    t.write(format, &mut out)?;
    out.flush()?;
    Ok(ExitCode::from(if t.decided {
        exit_status::PASS
    } else {
        exit_status::NO_DECISION
    }))
}
