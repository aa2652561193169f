//! `panel-judge`: launch sealed judges in parallel, one per lens or seat, and write one record
//! each, as each finishes. What differs between a verdict panel and a review panel is in
//! [`kinds`]; a pull request's panel is in [`pr`].

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser, ValueEnum};

pub mod canary;
pub mod harnesses;
pub mod pairwise;
pub mod panel;
pub mod panel_kind;
pub mod pr;
pub mod stopping;

use crate::contracts::{Contract, fence};
use crate::engine::call::Cancel;
use crate::engine::call::Launcher;
use crate::engine::call::{Job, Prompt};
use crate::engine::harness::Seat;
use crate::records::candidate::Candidate;
use crate::tools::launch_args::LaunchArgs;
use panel::LensFlags;
use panel_kind::{PanelKind, Reviews, Verdicts};

/// Launch sealed LLM judges in parallel and write one verdict record per judge.
///
/// Each judge gets one lens (one question) about the frozen candidate, runs in private empty
/// folders with its harness's lockdown flags and stdin closed, in its own process group, under
/// a deadline. Its answer is read and checked against the verdict contract; an answer that does
/// not meet it is asked for once more, then recorded as an abstention, never guessed.
///
/// As in the seed's tally, the verdict is what counts: a missing reason is recorded as empty, a
/// confidence given in percent (1 < c <= 100) as c/100, and any other confidence out of range
/// (negative, above 100, not a number) as null, with the record's `note` saying what was read
/// differently (`note` is absent when nothing was). A verdict other than holds or breaks
/// (`maybe`) is unreadable: the record's `said` keeps the word, which panel-tally shows and
/// counts as an abstention.
///
/// {built-in harnesses}
///
/// History: every verdict record (canaries too) is also appended to
/// $XDG_STATE_HOME/panel/history.jsonl (~/.local/state when XDG_STATE_HOME is unset, empty or
/// relative), or to $PANEL_HISTORY, or --history FILE; --no-history or PANEL_HISTORY=off keeps
/// none. Each record is one whole line written under an exclusive flock, so panels writing at
/// once never interleave; the file is created 0600 (its folders 0700), never through a symbolic
/// link, never another user's. Review and pull-request records keep no history. A history that
/// cannot be written loses nothing: the records still go to standard output and the run folder,
/// one line on standard error says so, and the exit status is unchanged.
///
/// Canaries: --canary FILE=holds|breaks asks each seat, once per run and beside the panel, about
/// a candidate whose answer is known, on the panel's first lens, under the same seat, sandbox
/// and lockdown. Its record is a verdict record about FILE's own seal with "canary" the expected
/// verdict; its judge is canary-N (canary-N@SEAT with several seats), a name no lens may start
/// with, and FILE is kept in the run folder as canary-N.candidate. One verdict record is held
/// back until the canaries are answered, so a stream has them before the panel's last record.
#[derive(Parser, Debug)]
#[command(name = "panel-judge", version)]
#[command(group(clap::ArgGroup::new("info").args(["list_harnesses", "doctor", "estimate"])))]
pub struct Args {
    /// The work to judge: a file, or standard input when `-` or absent. Pairwise: the first
    /// answer, A.
    pub candidate: Option<String>,

    /// Pairwise: the second answer, B (a file, or `-` when A is a file).
    #[arg(value_name = "B")]
    pub second: Option<String>,

    /// A seat, HARNESS[:MODEL] (repeatable), e.g. claude:haiku, codex:gpt-5.6-luna, exec:'llm -m
    /// gpt-4o-mini', replay:answers.json.
    #[arg(
        long = "seat",
        value_name = "HARNESS[:MODEL]",
        default_value = "claude:haiku"
    )]
    pub seats: Vec<String>,

    /// A lens, NAME=QUESTION (repeatable). Default: correctness, edges, evidence.
    #[arg(long = "lens", value_name = "NAME=QUESTION")]
    pub lenses: Vec<String>,

    /// A file of lenses, one NAME=QUESTION (or the seed script's NAME|QUESTION) per line.
    #[arg(long = "lenses", value_name = "FILE")]
    pub lenses_file: Option<PathBuf>,

    /// Run every lens on every seat.
    #[arg(long)]
    pub cross: bool,

    /// What the judges answer.
    #[arg(long, value_enum, default_value_t = ContractKind::Verdict)]
    pub contract: ContractKind,

    /// Run two judges that share a lens and a model family anyway (one opinion paid for twice).
    #[arg(long)]
    pub allow_correlated: bool,

    /// Reviews: the stage the reviewers are named after (<stage>-1, <stage>-2, … in seat order).
    #[arg(long, value_name = "NAME", default_value = "review", value_parser = folder_name)]
    pub stage: String,

    /// Reviews: the brief the work was written to, shown to every reviewer. Pairwise: the
    /// question both answers answer (required).
    #[arg(long, value_name = "FILE")]
    pub brief: Option<PathBuf>,

    /// Pairwise: the orders each judge is shown the two answers in: both (each judge sees A
    /// then B, and B then A; one whose two answers disagree is position-inconsistent), or
    /// alternate (half the calls: the panel's judges take turns, AB, BA, AB, …, so the first
    /// shown is balanced across the panel, not within a judge) [default: both].
    #[arg(long, value_enum, value_name = "ORDERS")]
    pub orders: Option<Orders>,

    /// Verdicts and pairwise: a name for the candidate, recorded in every record as `name`
    /// (gold labels may name a candidate by it: panel-tally --ledger --gold).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Reviews: the writer's model family; a reviewer of the same family is refused.
    #[arg(long, value_name = "FAMILY")]
    pub writer_family: Option<String>,

    /// Pull requests: the plan from pr-classify --plan (its pr-class record may come first); `-`
    /// reads standard input.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<String>,

    /// Pull requests: the git repository that holds the head; each reviewer reads a detached
    /// checkout of it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

    /// Pull requests: pr-verdict records of this PR's earlier rounds (repeatable; JSON lines,
    /// oldest first): their FIX_FIRSTs are shown to every reviewer, who answers with an Earlier
    /// findings: checklist.
    #[arg(long = "earlier", value_name = "FILE")]
    pub earlier: Vec<String>,

    /// Pull requests: what the fix-proof check said of the tests: a verdict (ok, vacuous, no-tests,
    /// error, untrusted, unread) or its fix-proof/v1 line. The tests brief shows its verdict,
    /// counts and flags; error, untrusted or unread asks every reviewer for FIX_FIRST unless it
    /// names an added test that fails on the base.
    #[arg(long, value_name = "PROOF")]
    pub fix_proof: Option<String>,

    /// Verdicts: ask each seat, beside the panel, about FILE, whose answer is known to be
    /// holds or breaks (repeatable). One canary judge per seat and canary, on the panel's first
    /// lens; its record carries `"canary"`, the expected verdict, and panel-tally reports a seat
    /// that missed it.
    #[arg(long = "canary", value_name = "FILE=VERDICT")]
    pub canaries: Vec<String>,

    /// Verdicts: append every verdict record (canaries too) to FILE [default: $PANEL_HISTORY,
    /// else $XDG_STATE_HOME/panel/history.jsonl, with ~/.local/state when XDG_STATE_HOME is
    /// unset, empty or relative; PANEL_HISTORY=off keeps none]. A panel of `replay:` seats
    /// alone keeps none unless FILE or PANEL_HISTORY names one.
    #[arg(long, value_name = "FILE", conflicts_with = "no_history")]
    pub history: Option<PathBuf>,

    /// Keep no history of this run.
    #[arg(long)]
    pub no_history: bool,

    /// Verdicts and reviews: N holds (or passes) pass the panel, as for panel-tally --agree N;
    /// what --stop-when-decided and --cascade stop by [default: every judge].
    #[arg(long, value_name = "N")]
    pub agree: Option<usize>,

    /// Once the answers in decide the panel whatever the judges still out say, end those
    /// judges (their whole group, as at the deadline) and launch no more. Each judge left out
    /// gets a record, status cancelled, verdict null, its cause saying what decided the panel;
    /// canaries are always asked. Never the default: a split's reasons are the finding. A PR
    /// panel (--contract pr) stops on its first blocking FIX_FIRST, which fails it whatever the
    /// others say; each member left out is a pr-verdict record, status cancelled, its reason
    /// naming the member that decided. There stopping costs the findings the members left out
    /// would have raised, which the fix needs: a second round may find what they would have.
    #[arg(long)]
    pub stop_when_decided: bool,

    /// Launch, in the order given, only as many judges as could decide the panel (for --agree
    /// N, the smaller of N and size + 1 - N), then more only while it is undecided; implies
    /// --stop-when-decided. Cost falls; wall time can grow, since a later judge waits for the
    /// earlier ones.
    #[arg(long)]
    pub cascade: bool,

    /// --cascade's order: given (the judges' order), or cost: the seats by their mean cost per
    /// answer in the history (PANEL_HISTORY, --history), cheapest first, where it has them.
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = CascadeOrder::Given, requires = "cascade")]
    pub cascade_order: CascadeOrder,

    #[command(flatten)]
    pub launch: LaunchArgs,

    /// Print each judge as a bash block to paste into a script, and launch nothing. A block
    /// makes what the launch makes (a private folder from mktemp -d with HOME, TMPDIR and a
    /// working folder; the prompt, schema and answer files; the harness's own files, which
    /// hold the lockdown of gemini, qwen and kimi; the logins, copied the owner's alone), runs
    /// the exact command with the same environment and prompt, prints the answer (the answer
    /// file where the harness writes one, else its output) and removes the folder however it
    /// ends; its status is the harness's. Blocks are separated by a blank line. A pasted
    /// block runs outside panel's Landlock walls and says so: it is the unconfined command
    /// (codex shows its own permission profile, which inside panel's walls gives way).
    #[arg(long)]
    pub dry_run: bool,

    /// Print the harness table and exit: a table, on a terminal or through a pipe (each row's
    /// program, found on PATH or not, its model family, whether it was proven against the real
    /// CLI, its measured overhead, the bytes of its first model request and its requests, its
    /// lockdown); with --json the rows as JSON, what a harness file holds.
    #[arg(long)]
    pub list_harnesses: bool,

    /// Check this machine and exit 0 (2 on bad input), launching no judge: for each harness,
    /// whether its program is on PATH, the first line of its `--version` (5 seconds each, all
    /// at once), and whether a login is there: which of its key variables are set (their names,
    /// never a value) and which of its credential files are present; then the walls judges
    /// get here under --sandbox: the Landlock ABI, whether a jail can be made, and if not why
    /// and the one command that fixes it (AppArmor's restriction on Ubuntu 24.04 and GitHub's
    /// runners: scripts/apparmor --install; a container's seccomp profile). A table; with
    /// --json one harness-status record per harness and a sandbox-status record.
    #[arg(long)]
    pub doctor: bool,

    /// With --list-harnesses, the rows as JSON instead of the table; with --doctor, records
    /// instead of the table; with --estimate, one JSON object instead of the table.
    #[arg(long, requires = "info")]
    pub json: bool,
}

/// The order a cascade asks its judges in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CascadeOrder {
    /// As the judges are listed (lens by seat, as given).
    Given,
    /// Cheapest seat first, by the history's mean cost per answer.
    Cost,
}

/// The contract the judges answer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ContractKind {
    /// {"verdict": "holds"|"breaks", "reason", "confidence"}: one verdict record per judge.
    Verdict,
    /// {"decision": "pass"|"revise", "findings": [...]}: one review record per reviewer, for
    /// panel-merge.
    Review,
    /// A pull request's planned panel (--plan, --repo): one pr-verdict record per member, for
    /// panel-tally --pr.
    Pr,
    /// Two answers A and B to one question (--brief): which is better, "first" or "second" as
    /// shown; one pairwise record per judge, its preference A or B, for panel-tally.
    Pairwise,
}

/// The orders a pairwise panel shows the two answers in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Orders {
    /// Every judge sees both orders.
    #[default]
    Both,
    /// The panel's judges take turns: AB, BA, AB, …
    Alternate,
}

pub use crate::tools::about::JUDGE_DOC as DOC;

/// The clap definition of `panel-judge`.
pub fn command() -> clap::Command {
    let cmd = Args::command();
    let about = cmd
        .get_long_about()
        .map(|a| a.to_string())
        .unwrap_or_default();
    // The harness table names its rows: a new row is in the help without an edit here.
    let rows = crate::engine::harness::Table::builtin().help();
    let about = about.replace("{built-in harnesses}", &rows);
    cmd.long_about(format!("{about}\n\n{}", crate::tools::about::JUDGE_PR))
        .after_long_help(DOC.help())
}

/// A name that becomes a folder of the run folder.
fn folder_name(name: &str) -> Result<String, String> {
    crate::records::printable::check_folder_name(name).map(|()| name.to_string())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut opts = args.launch.options()?;
    opts.history = answer_history(&args);
    let launcher = Launcher::new(opts)?;
    if args.list_harnesses {
        return harnesses::list(&launcher.table, &launcher.ctx, args.json);
    }
    if args.doctor {
        let mode = launcher.ctx.opts.sandbox;
        return harnesses::doctor(&launcher.table, &launcher.ctx, mode, args.json);
    }
    early_flags(&args)?;
    match args.contract {
        ContractKind::Verdict => ask_panel(&args, launcher, Arc::new(Verdicts)),
        ContractKind::Review => {
            let reviews = Reviews {
                stage: args.stage.clone(),
                writer_family: args.writer_family.clone(),
            };
            ask_panel(&args, launcher, Arc::new(reviews))
        }
        ContractKind::Pr => judge_pr(&args, launcher),
        ContractKind::Pairwise => pairwise::judge(&args, launcher),
    }
}

/// A verdict or a review panel: its judges and canaries, checked, then asked (or, with
/// --estimate or --dry-run, only shown).
fn ask_panel<K: Kind>(args: &Args, mut launcher: Launcher, kind: Arc<K>) -> Result<ExitCode> {
    panel_flags(args)?;
    let verdicts = args.contract == ContractKind::Verdict;
    let canaries = args
        .canaries
        .iter()
        .map(|c| canary::parse(c))
        .collect::<Result<Vec<_>>>()?;
    let seats = args
        .seats
        .iter()
        .map(|s| launcher.seat(s))
        .collect::<Result<Vec<_>>>()?;
    let flags = LensFlags {
        lens: &args.lenses,
        file: args.lenses_file.as_deref(),
        cross: args.cross,
    };
    let judges = kind.judges(&flags, &seats)?;
    let required = crate::rules::decision::required(args.agree, judges.len())?;
    let early = stopping::Early::new(pace(args), judges.len(), required, kind.words());
    // The canary judges come after the panel's, on its first lens, one per seat and canary.
    let canary_judges = match judges.first() {
        Some(first) if !canaries.is_empty() => canary::judges(&first.lens, &seats, canaries.len())?,
        _ => Vec::new(),
    };
    say_unnamed_families(&seats);
    if !args.allow_correlated
        && let Some(msg) = kind.clash(&judges)
    {
        bail!("{msg}");
    }
    if !(args.dry_run || args.launch.estimate) {
        launcher.check_executables(judges.iter().map(|j| &j.seat))?;
    }
    let launches = !(args.dry_run || args.launch.estimate);
    let history = (verdicts && launches && !is_replay(args, &judges)).then(|| {
        crate::engine::history::Keeper::start(
            "panel-judge",
            args.history.as_deref(),
            args.no_history,
        )
    });
    let candidate = Candidate::read(args.candidate.as_deref().unwrap_or("-"))?;
    let brief = read_brief(args.brief.as_deref())?;
    let asked = Asked {
        kind: &kind,
        judges: &judges,
        canary_judges: &canary_judges,
        canaries: &canaries,
        candidate: &candidate,
    };
    let jobs = asked.jobs(brief, &early.token);
    launcher.check_prompts(&jobs)?;
    if args.launch.estimate {
        return crate::tools::estimate::print(&launcher, &jobs, args.json);
    }
    if args.dry_run {
        return print_commands(&launcher, &jobs);
    }
    if let Some(b) = args.launch.max_budget_usd {
        say_unenforced_budget(b, &judges);
    }
    ask_judges(args, &mut launcher, &asked, &jobs, early, history)
}

/// The panel's jobs asked, canaries first, each finished judge's record written as it comes.
fn ask_judges<K: Kind>(
    args: &Args,
    launcher: &mut Launcher,
    asked: &Asked<K>,
    jobs: &[Job],
    mut early: stopping::Early,
    history: Option<crate::engine::history::Keeper>,
) -> Result<ExitCode> {
    let (kind, judges, canary_judges) = (asked.kind, asked.judges, asked.canary_judges);
    let run_dir = launcher.start()?.to_path_buf();
    asked.freeze(&run_dir)?;

    let label = kind.label();
    let out = crate::engine::run_folder::Emitter::new(&run_dir.join(format!("{label}.jsonl")))?;
    let mut records = Records {
        out,
        history,
        waiting_canaries: canary_judges.len(),
        last: None,
        failure: None,
    };
    let panel = panel_kind::RunFacts {
        seal: &asked.candidate.seal,
        name: args.name.as_deref(),
        size: judges.len(),
        run: &run_dir,
        sandbox: launcher.sandbox(),
        canary: None,
    };
    // Canaries first, always; then the panel's judges in the order they are to be asked.
    let order: Vec<usize> = (judges.len()..jobs.len())
        .chain(stopping::order(
            judges,
            args.cascade_order,
            &history_costs(args),
        ))
        .collect();
    let paced: Vec<Job> = order.iter().map(|&i| jobs[i].clone()).collect();
    let first = canary_judges.len() + early.first();
    launcher.ask_paced(&paced, &kind.contract(), first, |k, done| {
        let i = order[k];
        let ms = done.duration.as_millis() as u64;
        let (judge, rec) = asked.record(i, &panel, done);
        let more = if i < judges.len() {
            early.answered(rec.yes)
        } else {
            0
        };
        let (line, what) = (rec.line, rec.what);
        // A judge its panel never launched has no folder yet.
        let dir = run_dir.join(&judge.name);
        if crate::engine::run_folder::dir(&dir) {
            crate::engine::run_folder::file(&dir.join("record.json"), format!("{line}\n"));
        }
        launcher.progress.say(&format!(
            "panel-judge: {} {what} ({:.1}s)",
            judge.name,
            ms as f64 / 1000.0
        ));
        records.write(i < judges.len(), line);
        more
    });
    let out = records.finish()?;
    if crate::engine::lifecycle::failure().is_none() {
        out.close(label, &run_dir);
    }
    Ok(ExitCode::SUCCESS)
}

/// A verdict or a review panel, as the rest of `run` asks it.
trait Kind: PanelKind + Send + Sync + 'static {}

impl<K: PanelKind + Send + Sync + 'static> Kind for K {}

/// `--contract pr`: the plan's panel, judged by [`pr::judge`].
fn judge_pr(args: &Args, launcher: Launcher) -> Result<ExitCode> {
    let Some(plan) = &args.plan else {
        bail!("--contract pr needs --plan FILE (pr-classify --plan writes one)");
    };
    if args.candidate.is_some() || args.second.is_some() {
        bail!("--contract pr reviews the plan's head in --repo; it takes no candidate file");
    }
    if args.orders.is_some() || args.name.is_some() {
        bail!("--orders and --name are for verdicts and pairwise preferences");
    }
    if args.launch.estimate {
        bail!(
            "--estimate is for verdict, review and pairwise panels: a PR panel's reviewers read a \
                checkout, so their cost is not their prompt's (--budget-usd still holds them)"
        );
    }
    let rounds = pr::PrInputs {
        earlier: &args.earlier,
        fix_proof: args.fix_proof.as_deref(),
        stop_when_decided: args.stop_when_decided,
    };
    pr::judge(plan, &args.repo, &rounds, args.dry_run, launcher)
}

/// The history whose answer lengths a budget's estimates read: --history, else none with
/// --no-history, else the default one.
fn answer_history(args: &Args) -> Option<PathBuf> {
    let var = |k: &str| std::env::var(k).ok();
    crate::engine::history::location(args.history.as_deref(), args.no_history, &var)
        .and_then(Result::ok)
        .or_else(|| args.no_history.then(|| PathBuf::from("/dev/null")))
}

/// How the panel is asked: all at once, stopping once decided, or one cascade at a time.
fn pace(args: &Args) -> stopping::Pace {
    stopping::Pace::of(args.stop_when_decided, args.cascade)
}

/// Recorded answers are no panel's new judgement: a replay keeps no history unless one is
/// named (--history, PANEL_HISTORY).
fn is_replay(args: &Args, judges: &[panel::Judge]) -> bool {
    judges.iter().all(|j| j.seat.harness.name == "replay")
        && args.history.is_none()
        && std::env::var_os("PANEL_HISTORY").is_none()
}

/// What a verdict or review panel asks: its judges, then its canaries, about their candidates.
struct Asked<'a, K> {
    kind: &'a Arc<K>,
    judges: &'a [panel::Judge],
    canary_judges: &'a [(usize, panel::Judge)],
    canaries: &'a [canary::Canary],
    candidate: &'a Candidate,
}

impl<K: Kind> Asked<'_, K> {
    /// One sealed job per judge, the panel's (which an early decision may cancel) before the
    /// canaries'; every prompt fenced by one nonce that none of the texts holds.
    fn jobs(&self, brief: Option<Arc<str>>, cancel: &Option<Arc<Cancel>>) -> Vec<Job> {
        let (kind, candidate, canaries) = (self.kind, self.candidate, self.canaries);
        let mut texts: Vec<&str> = vec![&candidate.text, brief.as_deref().unwrap_or("")];
        texts.extend(canaries.iter().map(|c| c.candidate.text.as_str()));
        let nonce: Arc<str> = fence::nonce(&texts).into();
        let schema = kind.contract().schema();
        let canary_jobs = self.canary_judges.iter().map(|(n, j)| {
            let (kind, judge, text) =
                (kind.clone(), j.clone(), canaries[*n].candidate.text.clone());
            let nonce = nonce.clone();
            let prompt = Prompt::split_by(move || kind.prompt(&judge, &text, None, &nonce));
            Job::sealed(&j.name, j.seat.clone(), prompt, schema.clone())
        });
        self.judges
            .iter()
            .map(|j| {
                // Built when the judge's attempt starts: the candidate is held once.
                let (kind, judge, text) = (kind.clone(), j.clone(), candidate.text.clone());
                let (brief, nonce) = (brief.clone(), nonce.clone());
                let prompt =
                    Prompt::split_by(move || kind.prompt(&judge, &text, brief.as_deref(), &nonce));
                let mut job = Job::sealed(&j.name, j.seat.clone(), prompt, schema.clone());
                job.cancel = cancel.clone();
                job
            })
            .chain(canary_jobs)
            .collect()
    }

    /// The run folder keeps the candidate and each canary's, as the judges read them.
    fn freeze(&self, run_dir: &Path) -> Result<()> {
        crate::engine::run_folder::freeze(run_dir, self.candidate)?;
        for (n, c) in self.canaries.iter().enumerate() {
            let name = format!("{}{}.candidate", panel::CANARY_PREFIX, n + 1);
            crate::engine::run_folder::file(&run_dir.join(name), c.candidate.text.as_bytes());
        }
        Ok(())
    }

    /// Job `i`'s judge and record: a panel judge's (the jobs' first), or a canary's, sealed
    /// with its own candidate's seal and checked against the answer it knows.
    fn record(
        &self,
        i: usize,
        panel: &panel_kind::RunFacts,
        done: panel_kind::Judged<K>,
    ) -> (&panel::Judge, panel_kind::Recorded) {
        match i.checked_sub(self.judges.len()) {
            None => {
                let judge = &self.judges[i];
                (judge, self.kind.record(judge, panel, done))
            }
            Some(c) => {
                let (n, judge) = &self.canary_judges[c];
                let canary = &self.canaries[*n];
                let own = panel_kind::RunFacts {
                    seal: &canary.candidate.seal,
                    name: None,
                    canary: Some(canary.expected),
                    ..*panel
                };
                (judge, self.kind.record(judge, &own, done))
            }
        }
    }
}

/// `--dry-run`: each job's command line, a blank line between, for pasting into a script.
pub(super) fn print_commands(launcher: &Launcher, jobs: &[Job]) -> Result<ExitCode> {
    let mut out = crate::engine::output::stdout();
    for (i, job) in jobs.iter().enumerate() {
        let gap = if i == 0 { "" } else { "\n" };
        writeln!(out, "{gap}{}", launcher.command_line(job)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Where each finished judge's record goes after its folder: the history, then standard output
/// and the run folder's ledger.
struct Records {
    out: crate::engine::run_folder::Emitter,
    history: Option<crate::engine::history::Keeper>,
    /// One verdict record is held back while canaries are asked: a run's canary records come
    /// before its last verdict record, so that a stream of many panels (panel-tally --each),
    /// which closes a panel on its last record, has them in it.
    waiting_canaries: usize,
    last: Option<String>,
    /// The first record the run folder could not keep; every record is still written.
    failure: Option<anyhow::Error>,
}

impl Records {
    /// A panel judge's record, or (`panel` false) a canary's.
    fn write(&mut self, panel: bool, line: String) {
        if !panel {
            self.waiting_canaries -= 1;
        }
        if let Some(h) = &mut self.history {
            h.append("panel-judge", &line);
        }
        let mut lines = vec![line];
        if panel && self.waiting_canaries > 0 && self.last.is_none() {
            self.last = lines.pop();
        } else if self.waiting_canaries == 0 {
            lines.extend(self.last.take());
        }
        for line in lines {
            if let Err(e) = self.out.emit(&line) {
                self.failure.get_or_insert(e);
            }
        }
    }

    /// The record held back, if it still is; the first failure to keep one.
    fn finish(mut self) -> Result<crate::engine::run_folder::Emitter> {
        if let Some(line) = self.last.take()
            && let Err(e) = self.out.emit(&line)
        {
            self.failure.get_or_insert(e);
        }
        match self.failure {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

/// The flags of early decisions: a PR panel takes --stop-when-decided alone.
fn early_flags(args: &Args) -> Result<()> {
    if args.contract == ContractKind::Pr && args.cascade {
        bail!(
            "--cascade is for verdict and review panels: a PR panel's members all review at once, \
                since any blocking member's FIX_FIRST decides it and a MERGE needs every one \
                (--stop-when-decided ends the rest once a FIX_FIRST does)"
        );
    }
    if args.contract == ContractKind::Pr && args.agree.is_some() {
        bail!(
            "--agree is for verdict and review panels: a PR panel is decided by its plan's \
                blocking members (any FIX_FIRST fails it, MERGE needs all of them), not by a count"
        );
    }
    if args.agree.is_some() && !(args.stop_when_decided || args.cascade) {
        bail!(
            "--agree N is what --stop-when-decided and --cascade stop by; panel-tally --agree N \
                counts a panel"
        );
    }
    Ok(())
}

/// The flags only a PR panel, or only a verdict panel, takes.
fn panel_flags(args: &Args) -> Result<()> {
    if !args.earlier.is_empty() || args.fix_proof.is_some() {
        bail!("--earlier and --fix-proof are for --contract pr");
    }
    if args.plan.is_some() {
        bail!("--plan is for --contract pr");
    }
    if args.second.is_some() || args.orders.is_some() {
        bail!("a second answer and --orders are for --contract pairwise");
    }
    if args.name.is_some() && args.contract != ContractKind::Verdict {
        bail!("--name is for verdicts and pairwise preferences");
    }
    if args.contract != ContractKind::Verdict && !args.canaries.is_empty() {
        bail!("--canary is for --contract verdict");
    }
    Ok(())
}

/// An `exec:` seat without `--family` is told apart from other seats only by its command.
fn say_unnamed_families(seats: &[Seat]) {
    for seat in seats {
        if seat.harness.name == "exec" && seat.family.is_none() {
            eprintln!(
                "panel-judge: {}: no model family (--family '{}=FAMILY'): it is told apart from \
                    other seats only by its command",
                seat.spec, seat.spec
            );
        }
    }
}

/// `--max-budget-usd` reaches only the harnesses that cap a budget; the others are named.
fn say_unenforced_budget(b: f64, judges: &[panel::Judge]) {
    let loose: Vec<&str> = crate::tools::estimate::unique(
        judges
            .iter()
            .filter(|j| !j.seat.harness.caps_budget())
            .map(|j| j.seat.harness.name.as_str()),
    );
    if !loose.is_empty() {
        eprintln!(
            "panel-judge: --max-budget-usd {b} is not enforced by {}",
            loose.join(", ")
        );
    }
}

/// The brief every judge reads before the candidate (`--brief FILE`).
fn read_brief(path: Option<&Path>) -> Result<Option<Arc<str>>> {
    let Some(path) = path else { return Ok(None) };
    // As long as a candidate may be: every judge reads it beside one.
    let what = format!("--brief {}", path.display());
    let text =
        crate::records::input::read_bounded(path, crate::records::candidate::MAX_CANDIDATE, &what)?;
    Ok(Some(text.into()))
}

/// The seats' mean costs per answer in the history, for `--cascade-order cost`; none (the
/// order given, said in one line) when there is no history to read.
fn history_costs(args: &Args) -> std::collections::HashMap<String, f64> {
    if args.cascade_order != CascadeOrder::Cost {
        return Default::default();
    }
    let var = |k: &str| std::env::var(k).ok();
    let read =
        match crate::engine::history::location(args.history.as_deref(), args.no_history, &var) {
            Some(Ok(path)) => {
                // `-` is a file here, never standard input (which holds the candidate).
                let path = if path.as_os_str() == "-" {
                    PathBuf::from("./-")
                } else {
                    path
                };
                stopping::mean_costs(&path.to_string_lossy())
            }
            Some(Err(why)) => Err(anyhow::anyhow!("{why}")),
            None => Err(anyhow::anyhow!("no history is kept")),
        };
    read.unwrap_or_else(|e| {
        eprintln!(
            "panel-judge: --cascade-order cost: {e:#}; the judges are asked in the order given"
        );
        Default::default()
    })
}
