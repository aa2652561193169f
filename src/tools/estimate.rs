//! `--estimate`: each judge's estimated cost, the total, and what a budget would let in,
//! printed before anything is launched (and instead of it).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::engine::call::Job;
use crate::engine::call::Launcher;
use crate::records::estimate::{EstimateRecord, JudgeEstimate};
use crate::records::printable::inline;

/// Which judges a budget of `limit` lets in, asked at once in this order: each whose estimate
/// fits beside those let in before it (a judge left out leaves room for a cheaper one); one
/// without a price never.
pub fn fits(estimates: &[Option<f64>], limit: Option<f64>) -> Vec<Option<bool>> {
    let mut held = 0.0;
    estimates
        .iter()
        .map(|usd| {
            let limit = limit?;
            let ok = usd.is_some_and(|usd| held + usd <= limit * (1.0 + 1e-9));
            if ok {
                held += usd.unwrap_or(0.0);
            }
            Some(ok)
        })
        .collect()
}

/// Prints the estimate of `jobs` (a table, or an estimate record), and launches nothing. A
/// judge whose model has no price is shown unknown, the rest priced.
pub fn print(launcher: &Launcher, jobs: &[Job], json: bool) -> Result<ExitCode> {
    let estimates = launcher.estimates(jobs);
    let limit = launcher.ctx.opts.budget_usd;
    let usd: Vec<Option<f64>> = estimates
        .iter()
        .map(|e| e.as_ref().ok().map(|e| e.usd))
        .collect();
    let fit = fits(&usd, limit);
    let judges: Vec<JudgeEstimate> = jobs
        .iter()
        .zip(&estimates)
        .zip(&fit)
        .map(|((j, e), f)| {
            let known = e.as_ref().ok();
            JudgeEstimate {
                judge: j.name.clone(),
                seat: j.seat.spec.clone(),
                model: known.map(|e| e.model.clone()),
                input_tokens: known.map(|e| e.input_tokens),
                output_tokens: known.map(|e| e.output_tokens),
                usd: known.map(|e| e.usd),
                unpriced: e.as_ref().err().cloned(),
                fits: *f,
            }
        })
        .collect();
    let record = EstimateRecord {
        kind: "estimate".into(),
        total_usd: usd.iter().flatten().sum(),
        budget_usd: limit,
        judges,
    };
    let mut out = crate::engine::output::stdout();
    if json {
        writeln!(out, "{}", serde_json::to_string(&record)?)?;
    } else {
        out.write_all(table(&record).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The estimate as a table, its total and what the budget lets in below, then why each
/// unpriced seat has no price.
fn table(r: &EstimateRecord) -> String {
    let mut rows =
        vec![["JUDGE", "SEAT", "MODEL", "INPUT", "OUTPUT", "USD", "BUDGET"].map(String::from)];
    let unknown = || "unknown".to_string();
    for j in &r.judges {
        let fits = match j.fits {
            Some(true) => "launched",
            Some(false) => "cancelled",
            None => "",
        };
        rows.push([
            inline(&j.judge).into_owned(),
            inline(&j.seat).into_owned(),
            j.model
                .as_deref()
                .map_or_else(unknown, |m| inline(m).into_owned()),
            j.input_tokens.map_or_else(unknown, |n| n.to_string()),
            j.output_tokens.map_or_else(unknown, |n| n.to_string()),
            j.usd.map_or_else(unknown, |u| format!("{u:.6}")),
            fits.into(),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let n = r.judges.len();
    let unpriced: Vec<&str> = unique(r.judges.iter().filter_map(|j| j.unpriced.as_deref()));
    out.push_str(&format!("total ${:.6} for {n} judges", r.total_usd));
    if !unpriced.is_empty() {
        let priced = r.judges.iter().filter(|j| j.usd.is_some()).count();
        out.push_str(&format!(" ({priced} priced)"));
    }
    if let Some(b) = r.budget_usd {
        let let_in = r.judges.iter().filter(|j| j.fits == Some(true)).count();
        out.push_str(&format!("; a budget of ${b} launches {let_in}"));
    }
    out.push('\n');
    for why in unpriced {
        out.push_str(&format!("unknown: {}\n", inline(why)));
    }
    out
}

/// The distinct items of `items`, in their first order.
pub(crate) fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// An [`Asker`](crate::engine::call::Asker) that launches nothing: it keeps each question as a
/// job, to be estimated, and answers none (`panel-vote --estimate`).
pub struct Recorder<'a> {
    pub launcher: &'a Launcher,
    pub jobs: std::sync::Mutex<Vec<(String, Job)>>,
}

impl crate::engine::call::Asker for Recorder<'_> {
    fn ask_all(
        &self,
        questions: &[crate::engine::call::Question],
        _: &crate::engine::call::Check,
    ) -> Vec<crate::engine::call::Done> {
        use crate::engine::call::{Done, Prompt};
        let mut kept = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        questions
            .iter()
            .map(|q| {
                if let Ok(seat) = self.launcher.seat(&q.seat) {
                    let prompt = Prompt::text(q.prompt.clone());
                    let job = Job::sealed(&q.name, seat, prompt, q.schema.clone());
                    kept.push((q.name.clone(), job));
                }
                Done::unasked(
                    crate::records::Status::Cancelled,
                    "an estimate launches nothing",
                )
            })
            .collect()
    }
}

impl Recorder<'_> {
    /// The jobs kept, by name (the order the questions were asked in is the threads').
    pub fn jobs(self) -> Vec<Job> {
        let mut kept = self.jobs.into_inner().unwrap_or_else(|e| e.into_inner());
        kept.sort_by(|a, b| a.0.cmp(&b.0));
        kept.into_iter().map(|(_, j)| j).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_past_the_budget_leaves_room_for_a_cheaper_one() {
        let ests = [Some(0.4), Some(0.5), Some(0.1)];
        assert_eq!(
            fits(&ests, Some(0.5)),
            [Some(true), Some(false), Some(true)]
        );
        assert_eq!(fits(&ests, None), [None, None, None]);
    }

    /// Issue 45: "`--estimate --seat codex:gpt-5.4` exits 2 … instead of pricing the rest and
    /// marking that seat unknown": a judge without a price is never let in, and takes no room.
    #[test]
    fn a_judge_without_a_price_is_never_let_in_and_takes_no_room() {
        assert_eq!(
            fits(&[None, Some(0.5)], Some(0.5)),
            [Some(false), Some(true)]
        );
    }
}
