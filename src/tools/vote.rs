//! `panel-vote`: Cross-review merged findings, apply the vote rules, and let a judge act on or
//! skip each one.
//!
//! Reads `panel-merge`'s stream (reviewer, finding and merge records). Each reviewer whose
//! review was readable votes once, in a fresh call, on the merged findings it did not raise.
//! The votes are applied by the rules below, in plain code; each rule is one function. Then a
//! judge, when one is given, acts on or skips each finding left; with none, a `block` goes
//! straight back. Writes `vote` records, one `synthesis` entry per finding, one `panel` record,
//! the judge's `decision` records and one `route` record: everything `panel-tally` reports.
//!
//! The vote rules are in `rules::votes`, the routes in `rules::routes`; this is the command:
//! it reads the stream, asks the voters and the judge, and writes what they decided.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser, Subcommand};
use serde_json::{Map, Value};

use crate::contracts::Contract;
use crate::contracts::decisions::{DecisionContract, check_decisions, judge_prompt};
use crate::contracts::votes::{CheckedVote, VoteContract, vote_prompt};
use crate::engine::call::{Asker, Done, Question, ask_each, ask_one};
use crate::engine::call::{Cancel, Pace};
use crate::records::Status;
use crate::records::synthesis::{
    self, APPLY_TYPES, DecisionRecord, MergedFinding, MergedPanel, Record, Reviewer, RouteRecord,
    VoteRecord,
};
use crate::rules::routes::{route_with_judge, route_without_judge};
use crate::rules::votes::{Applied, apply, not_needed, to_ask};

/// Cross-review merged findings, apply the vote rules, and let a judge act on or skip each one.
#[derive(Parser, Debug)]
#[command(
    name = "panel-vote",
    version,
    args_conflicts_with_subcommands = true,
    long_about = crate::tools::about::VOTE
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Sub>,
    /// Merged findings (JSON lines, from panel-merge); standard input when none or `-`.
    pub inputs: Vec<String>,
    /// The work under review, shown to every voter and to the judge.
    #[arg(long, value_name = "FILE")]
    pub candidate: Option<String>,
    /// The brief the work was written to, shown to every voter and to the judge.
    #[arg(long, value_name = "FILE")]
    pub brief: Option<String>,
    /// A seat the reviewers sat on, HARNESS[:MODEL] (repeatable): the --seat options panel-judge
    /// was given. Each reviewer votes on its own seat, which must be one of these; a reviewer
    /// record on any other seat is an input error, and nothing is launched.
    #[arg(long = "seat", value_name = "SEAT")]
    pub seats: Vec<String>,
    /// A voter's seat that declares read tools (repeatable; one of the --seat options): its
    /// voter works in a folder holding a copy of the work, with its harness's read tools (its
    /// reviewer mode: claude, codex), and may read the work to check a claim before it votes.
    #[arg(long = "reads", value_name = "SEAT")]
    pub reads: Vec<String>,
    /// Once the votes in fix the fate of every finding a voter still out was shown, whatever
    /// it would vote, end that voter (its whole group, as at the deadline) or never launch it.
    /// Its vote records say cancelled, their cause what the votes in fixed; a voter left out
    /// is no missing vote, so it disputes nothing. Never the default: a split's reasons are
    /// the finding, and a voter left out gives none.
    #[arg(long)]
    pub stop_when_decided: bool,
    /// Ask voters only as they are needed (implies --stop-when-decided): at first, for each
    /// finding, as many of the voters shown it, in reviewer order, as could fix its fate; then
    /// more only while a fate is open. Cost can fall while wall time grows.
    #[arg(long)]
    pub cascade: bool,
    #[command(flatten)]
    pub rules: Rules,
    /// With --estimate, one JSON object instead of the table.
    #[arg(long, requires = "estimate")]
    pub json: bool,
    #[command(flatten)]
    pub launch: crate::tools::launch_args::LaunchArgs,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Apply votes already collected: reviewer, finding, merge and vote records in, the same
    /// output out. Launches nothing; a judge must be replay:FILE.
    Apply(ApplyArgs),
}

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// Reviewer, finding, merge and vote records (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,
    #[command(flatten)]
    pub rules: Rules,
}

/// What decides the panel and the route.
#[derive(clap::Args, Debug, Clone)]
pub struct Rules {
    /// How many reviewers must pass the work for the panel to pass (default: all).
    #[arg(long, value_name = "N")]
    pub agree: Option<usize>,
    /// A judge that acts on or skips each finding left: a seat (HARNESS[:MODEL]), or
    /// replay:FILE to replay recorded decisions.
    #[arg(long, value_name = "SEAT|replay:FILE")]
    pub judge: Option<String>,
    /// The round, counting from 1: picks the answer a replay:FILE judge gives.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub round: usize,
}

pub use crate::tools::about::VOTE_DOC as DOC;

/// The clap definition of `panel-vote`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

/// The seat of `seats`, the command line's, that a reviewer sat on; an error when none is:
/// the records "never choose a program to run" (docs/design.md, the threat model).
fn given_seat<'a>(seats: &'a [String], reviewer: &Reviewer) -> Result<&'a str> {
    match seats.iter().find(|s| **s == reviewer.seat) {
        Some(seat) => Ok(seat),
        None => bail!(
            "reviewer {:?} sits on seat {:?}, which the command line did not give (--seat)",
            reviewer.name,
            reviewer.seat
        ),
    }
}

/// The cross-review round: each voter is asked once, on its seat as `seats` (the command
/// line) gives it, about the findings it did not raise. Returns one vote record per voter and
/// finding shown; a voter with no readable reply gets records with a null vote saying why.
/// A voter on a seat `seats` does not give is an error, and nothing is asked.
pub fn collect_votes(
    panel: &MergedPanel,
    seats: &[String],
    asker: &dyn Asker,
    brief: Option<&str>,
    candidate: &str,
) -> Result<Vec<VoteRecord>> {
    collect_votes_reading(panel, seats, asker, brief, candidate, None)
}

/// Voters on seats that read: those seats, and the file holding the work in its folder.
pub struct ReadingSeats<'a> {
    pub seats: &'a [String],
    pub file: &'a Path,
}

/// [`collect_votes`], where the voters on `reading`'s seats may read the work with their read
/// tools, in the folder holding its file.
pub fn collect_votes_reading(
    panel: &MergedPanel,
    seats: &[String],
    asker: &dyn Asker,
    brief: Option<&str>,
    candidate: &str,
    reading: Option<&ReadingSeats>,
) -> Result<Vec<VoteRecord>> {
    collect_votes_until(panel, seats, asker, (brief, candidate), reading, Pace::All)
}

/// [`collect_votes_reading`] at a pace. Stopping when decided (`--stop-when-decided`), a
/// voter still out is ended, or never launched, once the votes in fix the fate of every
/// finding it was shown whatever it would vote ([`crate::rules::votes::not_needed`]): its
/// records say `cancelled`, with what fixed them. A cascade (`--cascade`) also holds every
/// voter back until a fate it was shown needs its vote ([`crate::rules::votes::to_ask`]).
pub fn collect_votes_until(
    panel: &MergedPanel,
    seats: &[String],
    asker: &dyn Asker,
    (brief, candidate): (Option<&str>, &str),
    reading: Option<&ReadingSeats>,
    pace: Pace,
) -> Result<Vec<VoteRecord>> {
    let stop = pace != Pace::All;
    let mut asked: Vec<(&Reviewer, Vec<&MergedFinding>)> = Vec::new();
    let mut questions: Vec<(Question, VoteContract)> = Vec::new();
    let mut tokens: Vec<Option<Arc<Cancel>>> = Vec::new();
    for voter in panel.voters() {
        let seat = given_seat(seats, voter)?;
        let shown: Vec<&MergedFinding> = panel.shown_to(&voter.name).collect();
        if shown.is_empty() {
            continue;
        }
        let contract = VoteContract {
            ids: shown.iter().map(|f| f.id.clone()).collect(),
        };
        let file = reading
            .filter(|r| r.seats.iter().any(|s| s == seat))
            .map(|r| r.file);
        let question = Question {
            name: format!("vote-{}", voter.name),
            seat: seat.into(),
            prompt: vote_prompt(brief, candidate, &shown, file),
            schema: contract.schema(),
            reads: file.and_then(Path::parent).map(Path::to_path_buf),
            cancel: None,
        };
        let token = stop.then(Arc::<Cancel>::default);
        let question = Question {
            cancel: token.clone(),
            ..question
        };
        questions.push((question, contract));
        tokens.push(token);
        asked.push((voter, shown));
    }
    // Each voter's records once its reply is in: what the fates are fixed by.
    let mut done: Vec<Option<Vec<VoteRecord>>> = vec![None; asked.len()];
    // A cascade's voters wait at a gate until asked (a send) or left out (the sender dropped).
    let (mut opens, gates): (Vec<_>, Vec<_>) = (0..asked.len())
        .map(|_| match pace {
            Pace::Cascade => {
                let (open, gate) = crate::engine::call::gate();
                (Some(open), Some(gate))
            }
            _ => (None, None),
        })
        .unzip();
    let release = |done: &[Option<Vec<VoteRecord>>],
                   opens: &mut [Option<crossbeam_channel::Sender<()>>]| {
        let released: Vec<bool> = opens.iter().map(Option::is_none).collect();
        for i in to_ask(&asked, done, &released) {
            if let Some(open) = opens[i].take() {
                let _ = open.send(());
            }
        }
    };
    release(&done, &mut opens);
    let replies = ask_each(asker, &questions, gates, |i, reply| {
        if !stop {
            return;
        }
        done[i] = Some(vote_records(asked[i].0, &asked[i].1, reply, asker));
        if crate::engine::lifecycle::stopped().is_some() {
            // A signal ended the run: the voters still out are interrupted, not left out (the
            // interrupted votes, missing, would "fix" every fate disputed). Through their
            // gates to launches that start nothing.
            opens.iter_mut().for_each(|open| *open = None);
            return;
        }
        for (j, (_, shown)) in asked.iter().enumerate() {
            let Some(token) = tokens[j]
                .as_ref()
                .filter(|t| done[j].is_none() && t.why().is_none())
            else {
                continue;
            };
            if let Some(why) = not_needed(&asked, &done, shown) {
                token.cancel(why);
                // Never asked: through its gate to its cancelled launch, which starts nothing.
                opens[j] = None;
            }
        }
        release(&done, &mut opens);
    });
    // The records the stop already made of a reply, else made now.
    let mut out = Vec::new();
    for (((voter, shown), reply), made) in asked.iter().zip(replies).zip(done) {
        out.extend(made.unwrap_or_else(|| vote_records(voter, shown, &reply, asker)));
    }
    Ok(out)
}

/// A voter's records from its reply: one per finding shown, the vote it gave, or none, saying
/// why.
fn vote_records(
    voter: &Reviewer,
    shown: &[&MergedFinding],
    reply: &Done<Vec<CheckedVote>, String>,
    asker: &dyn Asker,
) -> Vec<VoteRecord> {
    let ids: Vec<&str> = shown.iter().map(|f| f.id.as_str()).collect();
    let ballots = match &reply.answer {
        Some(votes) => Ok(votes),
        None => Err((
            reply.status,
            reply
                .cause
                .clone()
                .unwrap_or_else(|| "no readable reply".into()),
        )),
    };
    // One record per finding shown: the vote it gave, or none, saying why.
    let no_vote = |id: &str, status: Status, cause: String| VoteRecord {
        reviewer: voter.name.clone(),
        seat: voter.seat.clone(),
        finding: id.into(),
        vote: None,
        reason: None,
        fix: None,
        status,
        cause: Some(cause),
        sandbox: asker.sandbox().map(String::from),
        usage: None,
    };
    let mut out = Vec::new();
    match ballots {
        Ok(ballots) => {
            // The votes it gave count; a finding its reply left out has no vote from it.
            for id in ids {
                out.push(match ballots.iter().find(|b| b.0 == id) {
                    Some((_, vote, reason, fix)) => VoteRecord {
                        vote: Some(*vote),
                        reason: Some(reason.clone()),
                        fix: fix.clone(),
                        status: Status::Ok,
                        cause: None,
                        ..no_vote(id, Status::Ok, String::new())
                    },
                    None => no_vote(
                        id,
                        Status::Unreadable,
                        format!("its reply gave no vote on {id}"),
                    ),
                });
            }
        }
        Err((status, cause)) => {
            let status = if status == Status::Ok {
                Status::Unreadable
            } else {
                status
            };
            for id in ids {
                out.push(no_vote(id, status, cause.clone()));
            }
        }
    }
    if let Some(rec) = out.first_mut() {
        rec.usage = reply.usage.clone();
    }
    out
}

// ── The judge ──────────────────────────────────────────────────────────────

/// The judge: none, a seat asked through the launcher, or recorded decisions.
#[derive(Clone, Debug, PartialEq)]
pub enum JudgeSeat {
    None,
    Seat(String),
    /// `replay:FILE`: a JSON array with one answer object per round, the last repeated for
    /// later rounds, or one answer object for every round.
    Replay(String),
}

impl JudgeSeat {
    pub fn parse(spec: Option<&str>) -> JudgeSeat {
        match spec {
            None => JudgeSeat::None,
            Some(s) => match s.strip_prefix("replay:") {
                Some(file) => JudgeSeat::Replay(file.into()),
                None => JudgeSeat::Seat(s.into()),
            },
        }
    }

    fn name(&self) -> Option<String> {
        match self {
            JudgeSeat::None => None,
            JudgeSeat::Seat(s) => Some(s.clone()),
            JudgeSeat::Replay(f) => Some(format!("replay:{f}")),
        }
    }
}

/// The recorded answer of a `replay:FILE` judge for a round (from 1).
pub fn replay_answer(file: &Path, round: usize) -> Result<Map<String, Value>, String> {
    let text = crate::engine::call::read_replay(file, &file.display().to_string())
        .map_err(|e| format!("{e:#}"))?;
    let value = crate::records::strict::value(&text)
        .map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
    let pick = match &value {
        Value::Array(rounds) if !rounds.is_empty() => {
            rounds[round.clamp(1, rounds.len()) - 1].clone()
        }
        Value::Array(_) => return Err(format!("{}: no recorded answers", file.display())),
        other => other.clone(),
    };
    match pick {
        Value::Object(obj) => Ok(obj),
        _ => Err(format!(
            "{}: round {round}: the recorded answer is not an object",
            file.display()
        )),
    }
}

pub fn ask_judge(
    applied: &Applied,
    judge: &JudgeSeat,
    round: usize,
    asker: Option<&dyn Asker>,
    brief: Option<&str>,
    candidate: Option<&str>,
) -> (Vec<DecisionRecord>, RouteRecord) {
    let Some(name) = judge.name() else {
        return (Vec::new(), route_without_judge(applied));
    };
    let left = applied.left();
    let n = left.len();
    let mut usage = None;
    let answer = if n == 0 {
        Ok(Vec::new())
    } else {
        match judge {
            JudgeSeat::Replay(file) => replay_answer(Path::new(file), round)
                .and_then(|a| check_decisions(&a, n).map_err(|why| format!("round {round}: {why}")))
                .map_err(|why| (Status::Unreadable, why)),
            JudgeSeat::Seat(seat) => match asker {
                None => Err((Status::Failed, "no launcher to ask the judge".to_string())),
                Some(asker) => {
                    let question = Question {
                        name: "judge".into(),
                        seat: seat.clone(),
                        prompt: judge_prompt(brief, candidate, &left),
                        schema: DecisionContract { n }.schema(),
                        reads: None,
                        cancel: None,
                    };
                    let contract = DecisionContract { n };
                    let reply = ask_one(asker, question, contract);
                    usage = reply.usage;
                    match reply.answer {
                        Some(decisions) => Ok(decisions),
                        None => Err((
                            reply.status,
                            reply.cause.unwrap_or_else(|| "no readable reply".into()),
                        )),
                    }
                }
            },
            JudgeSeat::None => unreachable!("a judge with a name"),
        }
    };
    let (mut decisions, mut route) = route_with_judge(applied, &name, answer);
    route.usage = usage;
    if let (JudgeSeat::Seat(_), Some(asker)) = (judge, asker) {
        for d in &mut decisions {
            d.sandbox = asker.sandbox().map(String::from);
        }
    }
    (decisions, route)
}

/// Everything `panel-vote` writes, and its exit status.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcomes {
    pub applied: Applied,
    pub decisions: Vec<DecisionRecord>,
    pub route: RouteRecord,
}

impl Outcomes {
    pub fn records(&self) -> Vec<Record> {
        let mut out: Vec<Record> = self
            .applied
            .votes
            .iter()
            .cloned()
            .map(Record::Vote)
            .collect();
        out.extend(self.applied.entries.iter().cloned().map(Record::Synthesis));
        out.push(Record::Panel(self.applied.panel.clone()));
        out.extend(self.decisions.iter().cloned().map(Record::Decision));
        out.push(Record::Route(self.route.clone()));
        out
    }

    /// The route's decision; none when a voter was left out without cause (its vote could
    /// have changed a finding's fate).
    pub fn decision(&self) -> crate::records::Decision {
        if !self.applied.panel.cancelled_without_cause.is_empty() {
            return crate::records::Decision::NoDecision;
        }
        self.route.decision()
    }
}

// ── The report panel-tally prints ──────────────────────────────────────────
// ── The command ────────────────────────────────────────────────────────────

/// A copy of the work for the voters that read it, in `reads/` of the run folder, under the
/// candidate's own file name when that is one plain name (else `work`); its path.
fn reading_copy(
    launched: &crate::engine::call::Launcher,
    path: &str,
    text: &str,
) -> Result<std::path::PathBuf> {
    let run = launched
        .run_dir()
        .context("the reading voters need a run folder")?;
    let dir = run.join("reads");
    crate::engine::run_folder::make_dir(&dir)
        .with_context(|| format!("{}: cannot make the reading voters' folder", dir.display()))?;
    let name = Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| crate::records::printable::check_folder_name(n).is_ok())
        .unwrap_or("work");
    let file = dir.join(name);
    crate::engine::run_folder::write_private(&file, text.as_bytes())
        .with_context(|| format!("{}: cannot write the work", file.display()))?;
    if let Some(ids) = launched.ctx.walls.ids {
        crate::engine::call::give(&dir, ids)
            .with_context(|| format!("{}: cannot give the work to the judges", dir.display()))?;
    }
    Ok(file)
}

fn read_text(path: &str, what: &str) -> Result<String> {
    let mut input = crate::records::input::Input::open(path)?;
    input
        .read_to_string(crate::records::candidate::MAX_CANDIDATE)
        .with_context(|| format!("reading the {what}"))
}

fn write_out(outcomes: &Outcomes) -> Result<ExitCode> {
    let p = &outcomes.applied.panel;
    if p.merge_failed {
        eprintln!("panel-vote: the findings came unmerged: the merge failed");
    }
    if !p.no_votes_from.is_empty() {
        eprintln!(
            "panel-vote: no votes from {}: the findings they were shown cannot be dropped",
            p.no_votes_from.join(", ")
        );
    }
    if !p.cancelled_without_cause.is_empty() {
        eprintln!(
            "panel-vote: left out without cause: {}: a vote of theirs could have changed a \
                finding's fate; counted as missing, no decision",
            p.cancelled_without_cause.join(", ")
        );
    } else if !p.cancelled.is_empty() {
        eprintln!(
            "panel-vote: not needed (cancelled): {}: the votes in fixed the fate of every finding \
                they were shown",
            p.cancelled.join(", ")
        );
    }
    if let Some(cause) = &outcomes.route.cause {
        eprintln!("panel-vote: the judge sent no readable decisions: {cause}");
    }
    let mut out = BufWriter::new(crate::engine::output::stdout());
    for rec in outcomes.records() {
        crate::records::write(&mut out, &rec)?;
    }
    out.flush()?;
    Ok(outcomes.decision().into())
}

/// Under a budget or for an estimate: every seat (the judge's too) has a price, else an
/// error before anything runs; `--estimate` prints each voter's question's estimate (the
/// judge's is asked only after the votes, so it is not among them) and launches nothing.
fn priced(
    args: &Args,
    opts: &crate::engine::call::LaunchOptions,
    judge: &JudgeSeat,
    panel: &MergedPanel,
    work: (Option<&str>, &str),
) -> Result<Option<ExitCode>> {
    if opts.budget_usd.is_none() && !opts.estimate {
        return Ok(None);
    }
    let l = crate::engine::call::Launcher::new(opts.clone())?;
    let judge_seat = match judge {
        JudgeSeat::Seat(s) => Some(s.as_str()),
        _ => None,
    };
    let seats = args.seats.iter().map(String::as_str).chain(judge_seat);
    let seats = seats.map(|s| l.seat(s)).collect::<Result<Vec<_>>>()?;
    l.check_prices(&seats)?;
    if !opts.estimate {
        return Ok(None);
    }
    let rec = crate::tools::estimate::Recorder {
        launcher: &l,
        jobs: Default::default(),
    };
    collect_votes_until(panel, &args.seats, &rec, work, None, Pace::All)?;
    crate::tools::estimate::print(&l, &rec.jobs(), args.json).map(Some)
}

pub fn run(args: Args) -> Result<ExitCode> {
    if let Some(Sub::Apply(a)) = &args.command {
        return apply_collected(a);
    }
    // Usage errors first, before any input is read.
    let opts = args.launch.options()?;
    check_reads(&args, &opts)?;
    let panel = read_panel(&args)?;
    let judge = JudgeSeat::parse(args.rules.judge.as_deref());
    // Check the rules before launching anything.
    apply(&panel, &[], args.rules.agree)?;
    let brief = args
        .brief
        .as_deref()
        .map(|p| read_text(p, "brief"))
        .transpose()?;
    let candidate = read_candidate(&args, &panel)?;
    let needs_votes = panel
        .voters()
        .any(|v| panel.shown_to(&v.name).next().is_some());
    let needs_launcher = needs_votes || matches!(judge, JudgeSeat::Seat(_));
    if needs_launcher && candidate.is_none() {
        bail!("--candidate FILE is needed: the voters and the judge are shown the work");
    }
    let work = (brief.as_deref(), candidate.as_deref().unwrap_or(""));
    if let Some(code) = priced(&args, &opts, &judge, &panel, work)? {
        return Ok(code);
    }
    let launched = if needs_launcher {
        Some(crate::engine::call::started(&opts)?)
    } else {
        None
    };
    let asker = launched.as_ref().map(|l| l as &dyn Asker);
    // The work the reading voters read: a copy in a folder of its own in the run folder.
    let work_file = match (&launched, &candidate) {
        (Some(l), Some(text)) if !args.reads.is_empty() => Some(reading_copy(
            l,
            args.candidate.as_deref().unwrap_or(""),
            text,
        )?),
        _ => None,
    };
    let reading = work_file.as_deref().map(|file| ReadingSeats {
        seats: &args.reads,
        file,
    });
    let votes = match asker {
        Some(asker) if needs_votes => collect_votes_until(
            &panel,
            &args.seats,
            asker,
            work,
            reading.as_ref(),
            Pace::of(args.stop_when_decided, args.cascade),
        )?,
        _ => Vec::new(),
    };
    let applied = apply(&panel, &votes, args.rules.agree)?;
    let (decisions, route) = ask_judge(
        &applied,
        &judge,
        args.rules.round,
        asker,
        brief.as_deref(),
        candidate.as_deref(),
    );
    let code = write_out(&Outcomes {
        applied,
        decisions,
        route,
    });
    if let Some(run) = launched.as_ref().and_then(|l| l.run_dir()) {
        eprintln!("votes: {}", run.display());
    }
    code
}

/// `panel-vote apply`: votes already collected, applied; nothing is launched.
fn apply_collected(a: &ApplyArgs) -> Result<ExitCode> {
    let (panel, votes) = MergedPanel::read(synthesis::read(&a.inputs, APPLY_TYPES)?)?;
    let judge = JudgeSeat::parse(a.rules.judge.as_deref());
    if let JudgeSeat::Seat(seat) = &judge {
        bail!("panel-vote apply launches nothing: the judge {seat} must be given as replay:FILE");
    }
    let applied = apply(&panel, &votes, a.rules.agree)?;
    let (decisions, route) = ask_judge(&applied, &judge, a.rules.round, None, None, None);
    write_out(&Outcomes {
        applied,
        decisions,
        route,
    })
}

/// `--reads`: each a voter's seat, on a harness with read tools.
fn check_reads(args: &Args, opts: &crate::engine::call::LaunchOptions) -> Result<()> {
    if let Some(seat) = args.reads.iter().find(|s| !args.seats.contains(s)) {
        bail!("--reads {seat}: not one of the --seat options: only a voter's seat reads");
    }
    if !args.reads.is_empty() {
        let table = crate::engine::harness::Table::load(&opts.harness_files)?;
        for spec in &args.reads {
            let seat = crate::engine::harness::Seat::parse(spec, &table, &opts.families)?;
            if seat.harness.reviewer.is_none() {
                bail!(
                    "--reads {spec}: harness {} has no read tools to give a voter (no reviewer \
                        mode)",
                    seat.harness.name
                );
            }
        }
    }
    Ok(())
}

/// The merged panel to vote on: every reviewer on a seat the command line gave, no votes yet.
fn read_panel(args: &Args) -> Result<MergedPanel> {
    let records = synthesis::read(&args.inputs, APPLY_TYPES)?;
    // Every reviewer sits on a seat the command line gave, whether or not it is asked.
    for (rec, at) in &records {
        if let Record::Reviewer(r) = rec {
            given_seat(&args.seats, r).with_context(|| at.clone())?;
        }
    }
    let (panel, votes) = MergedPanel::read(records)?;
    if !votes.is_empty() {
        bail!("vote records in the input: `panel-vote apply` applies votes already collected");
    }
    Ok(panel)
}

/// `--candidate`: the work the reviewers read, by its seal.
fn read_candidate(args: &Args, panel: &MergedPanel) -> Result<Option<String>> {
    let Some(path) = &args.candidate else {
        return Ok(None);
    };
    let c = crate::records::candidate::Candidate::read(path)?;
    if c.seal != panel.candidate() {
        bail!(
            "{path}: not the work the reviewers read (its seal is {}, theirs {})",
            c.seal,
            panel.candidate()
        );
    }
    Ok(Some(std::sync::Arc::unwrap_or_clone(c.text)))
}
