//! `panel-judge --contract pairwise A B`: which of two answers to one question (the brief) is
//! better, each judge shown the two in both orders (`--orders both`) or the orders alternating
//! across the panel's judges (`--orders alternate`). One `pairwise` record per judge, written
//! once its orders are answered; a judge whose two answers disagree followed the order, not
//! the answers, and is recorded `position-inconsistent` with no preference.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::contracts::{Contract, fence, pairwise};
use crate::engine::call::Launcher;
use crate::engine::call::{Done, Job, Prompt};
use crate::records::candidate::{Candidate, pair_seal};
use crate::records::pairwise::{OrderAnswer, PairwiseRecord, Shown, combined};
use crate::records::{Status, Usage};
use crate::tools::judge::panel::{self, Judge, LensFlags};
use crate::tools::judge::{Args, Orders};

/// The texts a pairwise panel reads: the question and the two answers, as given.
struct PairTexts {
    question: Candidate,
    a: Candidate,
    b: Candidate,
    names: [String; 2],
    seal: String,
}

impl PairTexts {
    fn read(args: &Args) -> Result<PairTexts> {
        let (Some(a), Some(b)) = (&args.candidate, &args.second) else {
            bail!("--contract pairwise takes two answers, A and B (files, or - for one of them)");
        };
        if a == "-" && b == "-" {
            bail!("A and B cannot both be standard input");
        }
        let Some(brief) = &args.brief else {
            bail!("--contract pairwise needs --brief FILE: the question both answers answer");
        };
        let question = Candidate::read(&brief.to_string_lossy())?;
        let (a_text, b_text) = (Candidate::read(a)?, Candidate::read(b)?);
        let seal = pair_seal(&question.text, &a_text.text, &b_text.text);
        Ok(PairTexts {
            question,
            a: a_text,
            b: b_text,
            names: [a.clone(), b.clone()],
            seal,
        })
    }

    /// The two answers in the order `shown`.
    fn shown(&self, shown: Shown) -> (Arc<String>, Arc<String>) {
        match shown {
            Shown::AB => (self.a.text.clone(), self.b.text.clone()),
            Shown::BA => (self.b.text.clone(), self.a.text.clone()),
        }
    }
}

/// The orders judge `i` of the panel is shown: both, or one, alternating from `AB`.
fn orders_of(orders: Orders, i: usize) -> Vec<Shown> {
    match orders {
        Orders::Both => vec![Shown::AB, Shown::BA],
        Orders::Alternate if i.is_multiple_of(2) => vec![Shown::AB],
        Orders::Alternate => vec![Shown::BA],
    }
}

/// A judge's job for one order: its name and the order's suffix.
fn job_name(judge: &str, shown: Shown) -> String {
    format!("{judge}.{}", shown.as_str().to_ascii_lowercase())
}

/// The flags a pairwise panel does not take.
fn flags(args: &Args) -> Result<()> {
    if args.stop_when_decided || args.cascade || args.agree.is_some() {
        bail!(
            "--stop-when-decided, --cascade and --agree are for verdict and review panels; \
                panel-tally --agree N counts a pairwise panel"
        );
    }
    if !args.canaries.is_empty() {
        bail!("--canary is for --contract verdict");
    }
    if args.plan.is_some() || !args.earlier.is_empty() || args.fix_proof.is_some() {
        bail!("--plan, --earlier and --fix-proof are for --contract pr");
    }
    Ok(())
}

/// `--contract pairwise`: asks every judge in its orders and writes one record per judge.
pub fn judge(args: &Args, mut launcher: Launcher) -> Result<ExitCode> {
    flags(args)?;
    let seats = args
        .seats
        .iter()
        .map(|s| launcher.seat(s))
        .collect::<Result<Vec<_>>>()?;
    let lens_flags = LensFlags {
        lens: &args.lenses,
        file: args.lenses_file.as_deref(),
        cross: args.cross,
    };
    let lenses = if lens_flags.given() {
        panel::lenses(&lens_flags)?
    } else {
        vec![pairwise::default_lens()]
    };
    let judges = panel::pair(&lenses, &seats, args.cross)?;
    if !args.allow_correlated
        && let Some(msg) = panel::correlated(&judges)
    {
        bail!("{msg}");
    }
    if !(args.dry_run || args.launch.estimate) {
        launcher.check_executables(judges.iter().map(|j| &j.seat))?;
    }
    let pair = Arc::new(PairTexts::read(args)?);
    let orders = args.orders.unwrap_or_default();
    let jobs = jobs(&judges, &pair, orders);
    launcher.check_prompts(&jobs)?;
    if args.launch.estimate {
        return crate::tools::estimate::print(&launcher, &jobs, args.json);
    }
    if args.dry_run {
        return super::print_commands(&launcher, &jobs);
    }
    let run_dir = launcher.start()?.to_path_buf();
    for (name, c) in [("question", &pair.question), ("a", &pair.a), ("b", &pair.b)] {
        crate::engine::run_folder::file(
            &run_dir.join(format!("{name}.candidate")),
            c.text.as_bytes(),
        );
    }
    let mut out = crate::engine::run_folder::Emitter::new(&run_dir.join("pairwise.jsonl"))?;
    let whole = Whole {
        pair: &pair,
        name: args.name.as_deref(),
        size: judges.len(),
        run: run_dir.display().to_string(),
        sandbox: launcher.sandbox().to_string(),
    };
    // Each judge's answers by order, until it has them all.
    let owner: Vec<(usize, Shown)> = judges
        .iter()
        .enumerate()
        .flat_map(|(i, _)| orders_of(orders, i).into_iter().map(move |o| (i, o)))
        .collect();
    let mut waiting: HashMap<usize, Vec<(Shown, Preferred)>> = HashMap::new();
    let mut failure = None;
    launcher.ask_each(&jobs, &pairwise::PairwiseContract, |k, done| {
        let (i, shown) = owner[k];
        let got = waiting.entry(i).or_default();
        got.push((shown, done));
        if got.len() < orders_of(orders, i).len() {
            return;
        }
        let mut got = waiting.remove(&i).unwrap_or_default();
        got.sort_by_key(|(s, _)| s.as_str());
        let rec = whole.record(&judges[i], got);
        let what = rec.verdict.map_or(rec.status.as_str(), |v| v.as_str());
        launcher.progress.say(&format!(
            "panel-judge: {} {what} ({:.1}s)",
            rec.judge,
            rec.duration_ms as f64 / 1000.0
        ));
        let line = serde_json::to_string(&rec).expect("records serialise");
        if let Err(e) = out.emit(&line) {
            failure.get_or_insert(e);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if crate::engine::lifecycle::failure().is_none() {
        out.close("pairwise", &run_dir);
    }
    Ok(ExitCode::SUCCESS)
}

/// One sealed job per judge and order, every prompt fenced by one nonce none of the texts
/// holds; each prompt is built when its attempt starts.
fn jobs(judges: &[Judge], pair: &Arc<PairTexts>, orders: Orders) -> Vec<Job> {
    let nonce: Arc<str> = fence::nonce(&[&pair.question.text, &pair.a.text, &pair.b.text]).into();
    let schema = pairwise::PairwiseContract.schema();
    let mut out = Vec::new();
    for (i, j) in judges.iter().enumerate() {
        for shown in orders_of(orders, i) {
            let (pair, lens, nonce) = (pair.clone(), j.lens.clone(), nonce.clone());
            let prompt = Prompt::split_by(move || {
                let (first, second) = pair.shown(shown);
                pairwise::prompt(&lens, &pair.question.text, &first, &second, &nonce)
            });
            out.push(Job::sealed(
                &job_name(&j.name, shown),
                j.seat.clone(),
                prompt,
                schema.clone(),
            ));
        }
    }
    out
}

/// What every record of the run shares.
struct Whole<'a> {
    pair: &'a PairTexts,
    name: Option<&'a str>,
    size: usize,
    run: String,
    sandbox: String,
}

impl Whole<'_> {
    /// The record of a judge whose orders are all answered.
    fn record(&self, judge: &Judge, answered: Vec<(Shown, Preferred)>) -> PairwiseRecord {
        let orders: Vec<OrderAnswer> = answered
            .into_iter()
            .map(|(s, d)| order_answer(s, d))
            .collect();
        let (verdict, status, cause) = match combined(&orders) {
            Ok(v) => (Some(v), Status::Ok, None),
            Err(Status::PositionInconsistent) => (
                None,
                Status::PositionInconsistent,
                Some(inconsistency(&orders)),
            ),
            Err(s) => {
                let failed = orders.iter().find(|o| o.verdict.is_none());
                let why = failed.and_then(|o| o.cause.clone());
                let at = failed.map_or("", |o| o.shown.as_str());
                (None, s, why.map(|w| format!("shown {at}: {w}")))
            }
        };
        let confidences: Vec<f64> = orders.iter().filter_map(|o| o.confidence).collect();
        let mut usage: Option<Usage> = None;
        for u in orders.iter().filter_map(|o| o.usage.as_ref()) {
            usage.get_or_insert_with(Usage::default).add(u);
        }
        PairwiseRecord {
            kind: "pairwise".into(),
            judge: judge.name.clone(),
            lens: judge.lens.name.clone(),
            seat: judge.seat.spec.clone(),
            harness: judge.seat.harness.name.clone(),
            model: judge.seat.model.clone(),
            family: judge.seat.family.clone(),
            candidate: self.pair.seal.clone(),
            a: self.pair.names[0].clone(),
            b: self.pair.names[1].clone(),
            name: self.name.map(str::to_string),
            verdict,
            reason: verdict.and_then(|_| orders[0].reason.clone()),
            confidence: (verdict.is_some() && !confidences.is_empty())
                .then(|| confidences.iter().sum::<f64>() / confidences.len() as f64),
            status,
            cause,
            attempts: orders.iter().map(|o| o.attempts).sum(),
            duration_ms: orders.iter().map(|o| o.duration_ms).sum(),
            usage,
            orders,
            panel_size: self.size,
            run: self.run.clone(),
            sandbox: Some(self.sandbox.clone()),
        }
    }
}

/// Why a judge is position-inconsistent, in one line.
fn inconsistency(orders: &[OrderAnswer]) -> String {
    let said: Vec<String> = orders
        .iter()
        .map(|o| {
            let v = o.verdict.map_or("nothing", |v| v.as_str());
            format!("{v} when shown {}", o.shown.as_str())
        })
        .collect();
    format!(
        "preferred {}: it followed the order, not the answers",
        said.join(" and ")
    )
}

/// How one order's call ended: the preference read by the contract, or none.
type Preferred = Done<pairwise::PairwiseAnswer, String>;

/// One order's answer, read by the contract and named by the order it was shown in.
fn order_answer(shown: Shown, done: Preferred) -> OrderAnswer {
    let answer = done.answer;
    let status = match (&answer, done.status) {
        (Some(_), _) => Status::Ok,
        (None, Status::Ok) => Status::Unreadable,
        (None, s) => s,
    };
    OrderAnswer {
        shown,
        verdict: answer.as_ref().map(|a| shown.picked(a.first)),
        reason: answer.as_ref().map(|a| a.reason.clone()),
        confidence: answer.as_ref().and_then(|a| a.confidence),
        status,
        note: answer.as_ref().and_then(|a| a.note.clone()),
        cause: if answer.is_some() { None } else { done.cause },
        excerpt: if answer.is_some() { None } else { done.excerpt },
        attempts: done.attempts,
        duration_ms: done.duration.as_millis() as u64,
        exit_code: done.exit_code,
        usage: done.usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::pairwise::Preference;

    fn said(shown: Shown, first: bool) -> OrderAnswer {
        let mut done = Done::abstained(Status::Ok, String::new());
        done.answer = serde_json::json!({"preferred": if first {"first"} else {"second"}, "reason": "r", "confidence": 0.5})
            .as_object()
            .cloned();
        order_answer(shown, done.checked(&pairwise::PairwiseContract))
    }

    #[test]
    fn a_preference_is_named_by_the_users_order_never_the_shown_one() {
        assert_eq!(said(Shown::AB, true).verdict, Some(Preference::A));
        assert_eq!(said(Shown::BA, true).verdict, Some(Preference::B));
        assert_eq!(said(Shown::BA, false).verdict, Some(Preference::A));
        // Always the first shown: position-inconsistent.
        let first = [said(Shown::AB, true), said(Shown::BA, true)];
        assert_eq!(combined(&first), Err(Status::PositionInconsistent));
        assert_eq!(
            inconsistency(&first),
            "preferred A when shown AB and B when shown BA: it followed the order, not the answers"
        );
        // The same answer whichever came first.
        assert_eq!(
            combined(&[said(Shown::AB, true), said(Shown::BA, false)]),
            Ok(Preference::A)
        );
        let timeout = order_answer(Shown::BA, Done::abstained(Status::Timeout, "late"));
        assert_eq!(
            combined(&[said(Shown::AB, true), timeout]),
            Err(Status::Timeout)
        );
    }

    #[test]
    fn alternate_orders_take_turns() {
        assert_eq!(orders_of(Orders::Alternate, 0), [Shown::AB]);
        assert_eq!(orders_of(Orders::Alternate, 1), [Shown::BA]);
        assert_eq!(orders_of(Orders::Both, 1), [Shown::AB, Shown::BA]);
        assert_eq!(
            job_name("instruction@claude-haiku", Shown::BA),
            "instruction@claude-haiku.ba"
        );
    }
}
