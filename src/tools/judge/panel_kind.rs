//! What differs between a verdict panel and a review panel: who the judges are, which of them
//! are one opinion twice, the prompt, the contract, and the record each judge ends in.

use std::path::Path;

use anyhow::{Result, bail};

use crate::contracts::{Contract, Split, review, verdict};
use crate::engine::call::Done;
use crate::engine::harness::Seat;
use crate::records::review::{ReviewDecision, ReviewRecord, reviewer_name};
use crate::records::{Status, Verdict, VerdictRecord};
use crate::rules::decorrelation;
use crate::tools::judge::panel::{Judge, LensFlags, correlated, lenses, pair};

/// What every record of one run shares.
pub struct RunFacts<'a> {
    /// The frozen candidate's seal.
    pub seal: &'a str,
    /// The name given for it (`--name`).
    pub name: Option<&'a str>,
    pub size: usize,
    pub run: &'a Path,
    /// What its judges run under.
    pub sandbox: &'a str,
    /// A canary's record: the verdict its candidate (`seal`) is known to deserve.
    pub canary: Option<Verdict>,
}

/// How one judge's call ended, its answer read by its panel's contract.
pub type Judged<K> = Done<
    <<K as PanelKind>::Contract as Contract>::Answer,
    <<K as PanelKind>::Contract as Contract>::Miss,
>;

/// A kind of panel `panel-judge` runs.
pub trait PanelKind {
    /// What its judges answer.
    type Contract: Contract;
    /// The judges: a lens on a seat each, named.
    fn judges(&self, flags: &LensFlags, seats: &[Seat]) -> Result<Vec<Judge>>;
    /// Why two of the judges are one opinion counted twice, if they are.
    fn clash(&self, judges: &[Judge]) -> Option<String>;
    /// Its contract: the schema for harnesses that take one, the check at the call's door.
    fn contract(&self) -> Self::Contract;
    fn prompt(&self, judge: &Judge, candidate: &str, brief: Option<&str>, nonce: &str) -> Split;
    /// The record of one judge's end (a canary's, when `panel.canary` says so).
    fn record(&self, judge: &Judge, panel: &RunFacts, done: Judged<Self>) -> Recorded;
    /// The words of its yes and no answers, as a cancelled judge's cause says them.
    fn words(&self) -> crate::rules::decision::Words;
    /// What the records are called: the run folder's ledger and the closing line.
    fn label(&self) -> &'static str;
}

/// Judges that answer holds or breaks, one lens each.
pub struct Verdicts;

impl PanelKind for Verdicts {
    type Contract = verdict::VerdictContract;

    fn judges(&self, flags: &LensFlags, seats: &[Seat]) -> Result<Vec<Judge>> {
        pair(&lenses(flags)?, seats, flags.cross)
    }

    fn clash(&self, judges: &[Judge]) -> Option<String> {
        correlated(judges)
    }

    fn contract(&self) -> verdict::VerdictContract {
        verdict::VerdictContract
    }

    fn prompt(&self, judge: &Judge, candidate: &str, _: Option<&str>, nonce: &str) -> Split {
        verdict::verdict_prompt(&judge.lens, candidate, nonce)
    }

    fn record(&self, judge: &Judge, panel: &RunFacts, done: Judged<Self>) -> Recorded {
        Recorded::verdict(&verdict_record(judge, panel, done))
    }

    fn words(&self) -> crate::rules::decision::Words {
        ("holds", "breaks")
    }

    fn label(&self) -> &'static str {
        "verdicts"
    }
}

/// Reviewers that pass or revise the whole work, named after the stage.
pub struct Reviews {
    pub stage: String,
    pub writer_family: Option<String>,
}

impl PanelKind for Reviews {
    type Contract = review::ReviewContract;

    fn judges(&self, flags: &LensFlags, seats: &[Seat]) -> Result<Vec<Judge>> {
        if flags.given() {
            bail!("--lens, --lenses and --cross are for verdicts; reviewers review the whole work");
        }
        let lens = verdict::Lens::new("review", "the whole work");
        Ok(seats
            .iter()
            .enumerate()
            .map(|(i, seat)| Judge {
                name: reviewer_name(&self.stage, i + 1),
                lens: lens.clone(),
                seat: seat.clone(),
            })
            .collect())
    }

    /// The family rule of a review panel. Replayed seats stand for recorded reviewers and
    /// never clash.
    fn clash(&self, judges: &[Judge]) -> Option<String> {
        let families: Vec<(String, String)> = judges
            .iter()
            .filter(|r| r.seat.harness.kind != crate::engine::harness::HarnessKind::Replay)
            .map(|r| (r.name.clone(), r.seat.family_or_seat()))
            .collect();
        let pairs: Vec<(&str, &str)> = families
            .iter()
            .map(|(n, f)| (n.as_str(), f.as_str()))
            .collect();
        decorrelation::family_clash(&pairs, self.writer_family.as_deref())
    }

    fn contract(&self) -> review::ReviewContract {
        review::ReviewContract
    }

    fn prompt(&self, _: &Judge, candidate: &str, brief: Option<&str>, nonce: &str) -> Split {
        review::prompt(brief, candidate, nonce, None)
    }

    /// `--canary` is for verdicts, refused beside `--contract review`.
    fn record(&self, judge: &Judge, panel: &RunFacts, done: Judged<Self>) -> Recorded {
        let rec = review_record(judge, &self.stage, panel, done);
        Recorded {
            line: line(&rec),
            what: rec.decision.map_or(rec.status.as_str(), |d| d.as_str()),
            yes: rec.decision.map(|d| d == ReviewDecision::Pass),
        }
    }

    fn words(&self) -> crate::rules::decision::Words {
        ("pass", "revise")
    }

    fn label(&self) -> &'static str {
        "reviews"
    }
}

/// One judge's end: its record as a JSON line, the word progress shows for it, and its
/// answer as a panel counts it (yes, no, or none).
pub struct Recorded {
    pub line: String,
    pub what: &'static str,
    pub yes: Option<bool>,
}

impl Recorded {
    fn verdict(rec: &VerdictRecord) -> Recorded {
        Recorded {
            line: line(rec),
            what: rec.verdict.map_or(rec.status.as_str(), |v| v.as_str()),
            yes: rec.verdict.map(|v| v == Verdict::Holds),
        }
    }
}

fn line<T: serde::Serialize>(rec: &T) -> String {
    serde_json::to_string(rec).expect("records serialise")
}

fn review_record(
    judge: &Judge,
    stage: &str,
    panel: &RunFacts,
    done: Judged<Reviews>,
) -> ReviewRecord {
    let mut rec = ReviewRecord::new(&judge.name, &judge.seat.spec, panel.seal, stage);
    rec.harness = judge.seat.harness.name.clone();
    rec.model = judge.seat.model.clone();
    rec.family = judge.seat.family.clone();
    rec = match &done.answer {
        Some(review) => rec.answered(review),
        None => {
            let cause = done.cause.clone().unwrap_or_else(|| "no answer".into());
            let status = if done.status == Status::Ok {
                Status::Unreadable
            } else {
                done.status
            };
            rec.abstained(status, &cause)
        }
    };
    if rec.status != Status::Ok {
        rec.excerpt = done.excerpt;
    }
    rec.panel_size = panel.size;
    rec.attempts = done.attempts;
    rec.duration_ms = done.duration.as_millis() as u64;
    rec.usage = done.usage;
    rec.run = panel.run.display().to_string();
    rec.sandbox = Some(panel.sandbox.to_string());
    rec
}

/// The record of one judge's end.
fn verdict_record(judge: &Judge, panel: &RunFacts, done: Judged<Verdicts>) -> VerdictRecord {
    let answer = done.answer.as_ref();
    let status = if answer.is_some() {
        Status::Ok
    } else if done.status == Status::Ok {
        Status::Unreadable
    } else {
        done.status
    };
    let walls = crate::engine::call::walls_of(panel.sandbox, &done);
    // The word a judge gave outside holds and breaks, and its reason, as the seed's tally
    // prints them.
    let miss = done
        .refused
        .as_ref()
        .filter(|_| status == Status::Unreadable);
    let said = miss.and_then(verdict::Miss::said);
    VerdictRecord {
        kind: "verdict".into(),
        judge: judge.name.clone(),
        lens: judge.lens.name.clone(),
        seat: judge.seat.spec.clone(),
        harness: judge.seat.harness.name.clone(),
        model: judge.seat.model.clone(),
        family: judge.seat.family.clone(),
        candidate: panel.seal.to_string(),
        name: panel.name.map(str::to_string),
        verdict: answer.map(|a| a.verdict),
        reason: answer
            .map(|a| a.reason.clone())
            .or_else(|| miss.and_then(verdict::Miss::reason).map(str::to_string)),
        confidence: answer.and_then(|a| a.confidence),
        status,
        note: answer.and_then(|a| a.note.clone()),
        said,
        cause: if answer.is_some() { None } else { done.cause },
        excerpt: if answer.is_some() { None } else { done.excerpt },
        attempts: done.attempts,
        duration_ms: done.duration.as_millis() as u64,
        exit_code: done.exit_code,
        usage: done.usage,
        panel_size: panel.size,
        run: panel.run.display().to_string(),
        sandbox: Some(walls),
        canary: panel.canary.map(|v| v.as_str().to_string()),
    }
}
