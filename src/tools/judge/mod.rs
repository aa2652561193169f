//! `panel-judge`: launch sealed judges in parallel, one per lens or seat, and write one record
//! each, as each finishes. What differs between a verdict panel and a review panel is in
//! [`kinds`]; a pull request's panel is in [`pr`].

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser, ValueEnum};

pub mod kinds;
pub mod panel;
pub mod pr;

use crate::contracts::fence;
use crate::engine::ask::{Job, Prompt};
use crate::engine::launcher::Launcher;
use crate::records::candidate::Candidate;
use crate::tools::docs::ToolDoc;
use crate::tools::launch_args::LaunchArgs;
use kinds::{Kind, Reviews, Verdicts};
use panel::LensFlags;

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
/// Built-in harnesses (--list-harnesses prints each row): claude, codex, copilot, opencode,
/// gemini, qwen, kimi and llm, each proven against the real CLI; cursor (Cursor's `agent`) and
/// agy (Antigravity), UNVERIFIED: built from their documentation, never run against the real
/// CLI; exec:COMMAND (any program: the prompt on stdin, the answer on stdout); replay:FILE
/// (recorded answers by judge name).
#[derive(Parser, Debug)]
#[command(name = "panel-judge", version)]
pub struct Args {
    /// The work to judge: a file, or standard input when `-` or absent.
    pub candidate: Option<String>,

    /// A seat, HARNESS[:MODEL] (repeatable), e.g. claude:haiku, codex:gpt-5.6-luna, exec:'llm -m gpt-4o-mini', replay:answers.json.
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
    #[arg(long, value_enum, default_value_t = Contract::Verdict)]
    pub contract: Contract,

    /// Run two judges that share a lens and a model family anyway (one opinion paid for twice).
    #[arg(long)]
    pub allow_correlated: bool,

    /// Reviews: the stage the reviewers are named after (<stage>-1, <stage>-2, … in seat order).
    #[arg(long, value_name = "NAME", default_value = "review", value_parser = folder_name)]
    pub stage: String,

    /// Reviews: the brief the work was written to, shown to every reviewer.
    #[arg(long, value_name = "FILE")]
    pub brief: Option<PathBuf>,

    /// Reviews: the writer's model family; a reviewer of the same family is refused.
    #[arg(long, value_name = "FAMILY")]
    pub writer_family: Option<String>,

    /// Pull requests: the plan from pr-classify --plan (its pr-class record may come first); `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<String>,

    /// Pull requests: the git repository that holds the head; each reviewer reads a detached checkout of it.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,

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

    /// Print the harness table as JSON and exit.
    #[arg(long)]
    pub list_harnesses: bool,
}

/// The contract the judges answer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Contract {
    /// {"verdict": "holds"|"breaks", "reason", "confidence"}: one verdict record per judge.
    Verdict,
    /// {"decision": "pass"|"revise", "findings": [...]}: one review record per reviewer, for panel-merge.
    Review,
    /// A pull request's planned panel (--plan, --repo): one pr-verdict record per member, for panel-tally --pr.
    Pr,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Every judge ran and has a record (a verdict or an abstention); the records are on standard output.",
        ),
        (
            "2",
            "Usage or input error, a harness not installed, correlated judges, or a prompt too large for its harness: nothing was launched. Also when the judges ran but the run folder could not keep everything (a full disk): the records on standard output are whole, and the last line on standard error names the first file not kept.",
        ),
        (
            "130",
            "Stopped by SIGINT: every judge's process group was killed, the finished records written, the rest recorded as interrupted.",
        ),
        ("143", "Stopped by SIGTERM, likewise."),
    ],
    examples: &[
        (
            "Three lenses on one Claude seat, counted",
            "panel-judge --seat claude:haiku answer.md | panel-tally",
        ),
        (
            "One lens across three model families",
            "panel-judge --lens 'correctness=Does it do what it claims?' --seat claude:haiku --seat codex:gpt-5.6-luna --seat exec:'llm -m gemini-2.5-flash' answer.md",
        ),
        (
            "The commands, for pasting into a script",
            "panel-judge --dry-run --seat codex answer.md",
        ),
        (
            "Offline, with recorded answers",
            "panel-judge --seat replay:examples/answers.json examples/answer.md | panel-tally",
        ),
        (
            "Review a pull request with its planned panel",
            "gh pr view 7 --json number,headRefOid,baseRefOid,files,changedFiles,url | pr-classify --gh --plan > plan.json; panel-judge --contract pr --plan plan.json --repo . > verdicts.jsonl",
        ),
        (
            "Copy a harness row to change it",
            "panel-judge --list-harnesses | jq '.[] | select(.name == \"claude\")'",
        ),
    ],
};

/// The clap definition of `panel-judge`.
pub fn command() -> clap::Command {
    let cmd = Args::command();
    let about = cmd
        .get_long_about()
        .map(|a| a.to_string())
        .unwrap_or_default();
    cmd.long_about(format!("{about}\n\n{}", pr::JUDGE_DOC))
        .after_long_help(DOC.help())
}

/// A name that becomes a folder of the run folder.
fn folder_name(name: &str) -> Result<String, String> {
    crate::records::text::check_folder_name(name).map(|()| name.to_string())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let opts = args.launch.options()?;
    let mut launcher = Launcher::new(opts)?;
    if args.list_harnesses {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, launcher.table.rows())?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let kind: Arc<dyn Kind + Send + Sync> = match args.contract {
        Contract::Verdict => Arc::new(Verdicts),
        Contract::Review => Arc::new(Reviews {
            stage: args.stage.clone(),
            writer_family: args.writer_family.clone(),
        }),
        Contract::Pr => {
            let Some(plan) = &args.plan else {
                bail!("--contract pr needs --plan FILE (pr-classify --plan writes one)");
            };
            if args.candidate.is_some() {
                bail!(
                    "--contract pr reviews the plan's head in --repo; it takes no candidate file"
                );
            }
            return pr::judge(plan, &args.repo, args.dry_run, launcher);
        }
    };
    if args.plan.is_some() {
        bail!("--plan is for --contract pr");
    }
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
    for seat in &seats {
        if seat.harness.name == "exec" && seat.family.is_none() {
            eprintln!(
                "panel-judge: {}: no model family (--family '{}=FAMILY'): it is told apart from other seats only by its command",
                seat.spec, seat.spec
            );
        }
    }
    if !args.allow_correlated
        && let Some(msg) = kind.clash(&judges)
    {
        bail!("{msg}");
    }
    if !args.dry_run {
        launcher.check_executables(judges.iter().map(|j| &j.seat))?;
    }
    let candidate = Candidate::read(args.candidate.as_deref().unwrap_or("-"))?;
    let brief: Option<Arc<str>> = match &args.brief {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the brief", path.display()))?
                .into(),
        ),
        None => None,
    };
    let nonce: Arc<str> = fence::nonce(&[&candidate.text, brief.as_deref().unwrap_or("")]).into();
    let schema = kind.contract().schema();
    let jobs: Vec<Job> = judges
        .iter()
        .map(|j| {
            // Built when the judge's attempt starts: the candidate is held once.
            let (kind, judge, text) = (kind.clone(), j.clone(), candidate.text.clone());
            let (brief, nonce) = (brief.clone(), nonce.clone());
            let prompt =
                Prompt::built_by(move || kind.prompt(&judge, &text, brief.as_deref(), &nonce));
            Job::sealed(&j.name, j.seat.clone(), prompt, schema.clone())
        })
        .collect();
    launcher.check_prompts(&jobs)?;
    if args.dry_run {
        let mut out = std::io::stdout().lock();
        for (i, job) in jobs.iter().enumerate() {
            let gap = if i == 0 { "" } else { "\n" };
            writeln!(out, "{gap}{}", launcher.command_line(job)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(b) = args.launch.max_budget_usd {
        let loose: Vec<&str> = unique(
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
    let run_dir = launcher.start()?.to_path_buf();
    crate::engine::run_folder::freeze(&run_dir, &candidate)?;

    let label = kind.label();
    let mut out = crate::engine::run_folder::Emitter::new(&run_dir.join(format!("{label}.jsonl")))?;
    let contract = kind.contract();
    let check = |obj: &serde_json::Map<String, serde_json::Value>| contract.check(obj);
    let panel = kinds::Panel {
        seal: &candidate.seal,
        size: judges.len(),
        run: &run_dir,
        sandbox: launcher.sandbox(),
    };
    let mut failure = None;
    launcher.ask_each(&jobs, &check, |i, done| {
        let judge = &judges[i];
        let ms = done.duration.as_millis() as u64;
        let (line, what) = kind.record(judge, &panel, done);
        crate::engine::run_folder::file(
            &run_dir.join(&judge.name).join("record.json"),
            format!("{line}\n"),
        );
        launcher.progress.say(&format!(
            "panel-judge: {} {what} ({:.1}s)",
            judge.name,
            ms as f64 / 1000.0
        ));
        if let Err(e) = out.emit(&line) {
            failure.get_or_insert(e);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    if crate::engine::lifecycle::failure().is_none() {
        eprintln!("{}", out.closing_line(label, &run_dir));
    }
    Ok(ExitCode::SUCCESS)
}

fn unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}
