//! `--estimate`: each judge's estimated cost, the total, and what a budget would let in,
//! printed before anything is launched (and instead of it).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::engine::ask::Job;
use crate::engine::budget::Estimate;
use crate::engine::launcher::Launcher;
use crate::records::estimate::{EstimateRecord, JudgeEstimate};

/// Which judges a budget of `limit` lets in, asked at once in this order: each whose estimate
/// fits beside those let in before it (a judge left out leaves room for a cheaper one).
pub fn fits(estimates: &[Estimate], limit: Option<f64>) -> Vec<Option<bool>> {
    let mut held = 0.0;
    estimates
        .iter()
        .map(|e| {
            let limit = limit?;
            let ok = held + e.usd <= limit * (1.0 + 1e-9);
            if ok {
                held += e.usd;
            }
            Some(ok)
        })
        .collect()
}

/// Prints the estimate of `jobs` (a table, or an estimate record), and launches nothing.
pub fn print(launcher: &Launcher, jobs: &[Job], json: bool) -> Result<ExitCode> {
    let estimates = launcher.estimates(jobs)?;
    let limit = launcher.ctx.opts.budget_usd;
    let fit = fits(&estimates, limit);
    let judges: Vec<JudgeEstimate> = jobs
        .iter()
        .zip(&estimates)
        .zip(&fit)
        .map(|((j, e), f)| JudgeEstimate {
            judge: j.name.clone(),
            seat: j.seat.spec.clone(),
            model: e.model.clone(),
            input_tokens: e.input_tokens,
            output_tokens: e.output_tokens,
            usd: e.usd,
            fits: *f,
        })
        .collect();
    let record = EstimateRecord {
        kind: "estimate".into(),
        total_usd: estimates.iter().map(|e| e.usd).sum(),
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

/// The estimate as a table, its total and what the budget lets in below.
fn table(r: &EstimateRecord) -> String {
    let mut rows =
        vec![["JUDGE", "SEAT", "MODEL", "INPUT", "OUTPUT", "USD", "BUDGET"].map(String::from)];
    for j in &r.judges {
        let fits = match j.fits {
            Some(true) => "launched",
            Some(false) => "cancelled",
            None => "",
        };
        rows.push([
            j.judge.clone(),
            j.seat.clone(),
            j.model.clone(),
            j.input_tokens.to_string(),
            j.output_tokens.to_string(),
            format!("{:.6}", j.usd),
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
    out.push_str(&format!("total ${:.6} for {n} judges", r.total_usd));
    if let Some(b) = r.budget_usd {
        let let_in = r.judges.iter().filter(|j| j.fits == Some(true)).count();
        out.push_str(&format!("; a budget of ${b} launches {let_in}"));
    }
    out.push('\n');
    out
}

/// An [`Asker`](crate::engine::ask::Asker) that launches nothing: it keeps each question as a
/// job, to be estimated, and answers none (`panel-vote --estimate`).
pub struct Recorder<'a> {
    pub launcher: &'a Launcher,
    pub jobs: std::sync::Mutex<Vec<(String, Job)>>,
}

impl crate::engine::ask::Asker for Recorder<'_> {
    fn ask_all(
        &self,
        questions: &[crate::engine::ask::Question],
        _: &crate::engine::ask::Check,
    ) -> Vec<crate::engine::ask::Reply> {
        use crate::engine::ask::{Prompt, Reply};
        let mut kept = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        questions
            .iter()
            .map(|q| {
                if let Ok(seat) = self.launcher.seat(&q.seat) {
                    let prompt = Prompt::text(q.prompt.clone());
                    let job = Job::sealed(&q.name, seat, prompt, q.schema.clone());
                    kept.push((q.name.clone(), job));
                }
                Reply::abstained(
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

    fn e(usd: f64) -> Estimate {
        Estimate {
            model: "m".into(),
            input_tokens: 1,
            output_tokens: 1,
            usd,
        }
    }

    #[test]
    fn a_judge_past_the_budget_leaves_room_for_a_cheaper_one() {
        let ests = [e(0.4), e(0.5), e(0.1)];
        assert_eq!(
            fits(&ests, Some(0.5)),
            [Some(true), Some(false), Some(true)]
        );
        assert_eq!(fits(&ests, None), [None, None, None]);
    }
}
