//! `panel-judge`: launch sealed judges in parallel, one per lens or seat, and write one record
//! each, as each finishes. What differs between a verdict panel and a review panel is in
//! [`kinds`]; a pull request's panel is in [`pr`].

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser, ValueEnum};

pub mod kinds;
pub mod pr;

use crate::contracts::fence;
use crate::contracts::verdict::{self, Lens};
use crate::engine::ask::Job;
use crate::engine::harness::Seat;
use crate::engine::launcher::Launcher;
use crate::records::candidate::Candidate;
use crate::rules::decorrelation::{self, Sitting};
use crate::tools::docs::ToolDoc;
use crate::tools::launch_args::LaunchArgs;
use kinds::{Kind, Reviews, Verdicts};

/// Launch sealed LLM judges in parallel and write one verdict record per judge.
///
/// Each judge gets one lens (one question) about the frozen candidate, runs in private empty
/// folders with its harness's lockdown flags and stdin closed, in its own process group, under
/// a deadline. Its answer is read and checked against the verdict contract; an answer that does
/// not meet it is asked for once more, then recorded as an abstention, never guessed.
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
    #[arg(long, value_name = "NAME", default_value = "review")]
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

    /// Print each judge's exact command, shell-quoted, one per line, and launch nothing.
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
            "gh pr view 7 --json number,headRefOid,baseRefOid,files,url | pr-classify --gh --plan > plan.json; panel-judge --contract pr --plan plan.json --repo . > verdicts.jsonl",
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

/// One judge of the panel: a lens on a seat, under a unique name.
#[derive(Clone, Debug)]
pub struct Judge {
    pub name: String,
    pub lens: Lens,
    pub seat: Seat,
}

impl Judge {
    fn sitting(&self) -> Sitting<'_> {
        Sitting {
            name: &self.name,
            lens: &self.lens.name,
            question: &self.lens.question,
            seat: &self.seat.spec,
            family: self.seat.family.as_deref(),
        }
    }
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
    let kind: Box<dyn Kind> = match args.contract {
        Contract::Verdict => Box::new(Verdicts),
        Contract::Review => Box::new(Reviews {
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
    let judges = kind.judges(&args, &seats)?;
    if !args.allow_correlated
        && let Some(msg) = kind.clash(&judges)
    {
        bail!("{msg}");
    }
    if !args.dry_run {
        launcher.check_executables(judges.iter().map(|j| &j.seat))?;
    }
    let candidate = Candidate::read(args.candidate.as_deref().unwrap_or("-"))?;
    let brief = match &args.brief {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read the brief", path.display()))?,
        ),
        None => None,
    };
    let nonce = fence::nonce(&[&candidate.text, brief.as_deref().unwrap_or("")]);
    let schema = kind.contract().schema();
    let jobs: Vec<Job> = judges
        .iter()
        .map(|j| {
            let prompt = kind.prompt(j, &candidate.text, brief.as_deref(), &nonce);
            Job::sealed(&j.name, j.seat.clone(), prompt, schema.clone())
        })
        .collect();
    launcher.check_prompts(&jobs)?;
    if args.dry_run {
        let mut out = std::io::stdout().lock();
        for job in &jobs {
            writeln!(out, "{}", launcher.command_line(job)?)?;
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
    candidate.freeze_into(&run_dir)?;

    let label = kind.label();
    let mut out = crate::engine::run_folder::Emitter::new(&run_dir.join(format!("{label}.jsonl")))?;
    let progress = std::io::stderr().is_terminal();
    let contract = kind.contract();
    let check = |obj: &serde_json::Map<String, serde_json::Value>| contract.check(obj);
    let panel = kinds::Panel {
        seal: &candidate.seal,
        size: judges.len(),
        run: &run_dir,
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
        if progress {
            eprintln!(
                "panel-judge: {} {what} ({:.1}s)",
                judge.name,
                ms as f64 / 1000.0
            );
        }
        if let Err(e) = out.emit(&line) {
            failure.get_or_insert(e);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    eprintln!("{label}: {}", run_dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The lenses: `--lens` and `--lenses FILE`, or the three defaults.
fn lenses(args: &Args) -> Result<Vec<Lens>> {
    let mut out = Vec::new();
    if let Some(path) = &args.lenses_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            out.push(
                parse_lens(line).with_context(|| format!("{}: line {}", path.display(), n + 1))?,
            );
        }
    }
    for l in &args.lenses {
        out.push(parse_lens(l).with_context(|| format!("--lens {l:?}"))?);
    }
    if out.is_empty() {
        out = verdict::default_lenses();
    }
    let mut seen = std::collections::HashSet::new();
    for l in &out {
        if !seen.insert(l.name.as_str()) {
            bail!("lens {:?} is given twice", l.name);
        }
    }
    Ok(out)
}

/// `NAME=QUESTION`, or the seed script's `NAME|QUESTION`.
fn parse_lens(text: &str) -> Result<Lens> {
    let split = match (text.find('='), text.find('|')) {
        (Some(e), Some(b)) => Some(e.min(b)),
        (e, b) => e.or(b),
    };
    let Some(at) = split else {
        bail!("expected NAME=QUESTION");
    };
    let (name, question) = (text[..at].trim(), text[at + 1..].trim());
    if name.is_empty() || question.is_empty() {
        bail!("expected NAME=QUESTION with both parts");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        bail!("the lens name {name:?} may hold only letters, digits, '-', '_' and '.'");
    }
    Ok(Lens::new(name, question))
}

/// Pairs lenses with seats: one seat takes every lens; one lens goes to every seat; equal
/// counts pair in order; `--cross` runs every lens on every seat.
pub fn pair(lenses: &[Lens], seats: &[Seat], cross: bool) -> Result<Vec<Judge>> {
    let pairs: Vec<(&Lens, &Seat)> = if cross {
        lenses
            .iter()
            .flat_map(|l| seats.iter().map(move |s| (l, s)))
            .collect()
    } else if seats.len() == 1 {
        lenses.iter().map(|l| (l, &seats[0])).collect()
    } else if lenses.len() == 1 {
        seats.iter().map(|s| (&lenses[0], s)).collect()
    } else if lenses.len() == seats.len() {
        lenses.iter().zip(seats).collect()
    } else {
        bail!(
            "{} lenses and {} seats do not pair: give one seat, one lens, as many lenses as seats, or --cross for every lens on every seat",
            lenses.len(),
            seats.len()
        );
    };
    let names = judge_names(&pairs);
    Ok(pairs
        .into_iter()
        .zip(names)
        .map(|((lens, seat), name)| Judge {
            name,
            lens: lens.clone(),
            seat: seat.clone(),
        })
        .collect())
}

/// Judges are named after their lens; where a lens runs on several seats, after the seat too.
fn judge_names(pairs: &[(&Lens, &Seat)]) -> Vec<String> {
    let count = |name: &str| pairs.iter().filter(|(l, _)| l.name == name).count();
    let mut names: Vec<String> = pairs
        .iter()
        .map(|(l, s)| {
            if count(&l.name) == 1 {
                l.name.clone()
            } else {
                format!("{}@{}", l.name, sanitize(&s.spec))
            }
        })
        .collect();
    // Two seats written alike (or alike once sanitized) still need distinct names.
    for i in 0..names.len() {
        let dups: Vec<usize> = (0..names.len()).filter(|&j| names[j] == names[i]).collect();
        if dups.len() > 1 {
            for (k, j) in dups.into_iter().enumerate() {
                names[j] = format!("{}-{}", names[j], k + 1);
            }
        }
    }
    names
}

fn sanitize(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.chars().take(60).collect()
}

/// The decorrelation rule over the judges of a verdict panel.
pub fn correlated(judges: &[Judge]) -> Option<String> {
    let sittings: Vec<Sitting> = judges.iter().map(Judge::sitting).collect();
    decorrelation::correlated(&sittings)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::Table;
    use std::collections::BTreeMap;

    fn seat(spec: &str) -> Seat {
        Seat::parse(spec, &Table::builtin(), &BTreeMap::new()).unwrap()
    }

    fn names(j: &[Judge]) -> Vec<&str> {
        j.iter().map(|j| j.name.as_str()).collect()
    }

    #[test]
    fn pairing_follows_the_four_rules() {
        let three = verdict::default_lenses();
        let one = vec![three[0].clone()];
        let seats = vec![seat("claude:haiku"), seat("codex:gpt-5"), seat("exec:x")];
        assert_eq!(
            names(&pair(&three, &seats[..1], false).unwrap()),
            ["correctness", "edges", "evidence"]
        );
        assert_eq!(
            names(&pair(&one, &seats, false).unwrap()),
            [
                "correctness@claude-haiku",
                "correctness@codex-gpt-5",
                "correctness@exec-x"
            ]
        );
        assert_eq!(
            names(&pair(&three, &seats, false).unwrap()),
            ["correctness", "edges", "evidence"]
        );
        assert_eq!(pair(&three, &seats, true).unwrap().len(), 9);
        let err = pair(&three, &seats[..2], false).unwrap_err().to_string();
        assert!(err.contains("--cross"), "{err}");
    }

    #[test]
    fn the_same_lens_on_the_same_family_is_refused() {
        let one = vec![verdict::default_lenses()[0].clone()];
        let judges = pair(&one, &[seat("claude:haiku"), seat("claude:sonnet")], false).unwrap();
        let msg = correlated(&judges).unwrap();
        assert!(
            msg.contains("share the lens \"correctness\" and the model family anthropic"),
            "{msg}"
        );
        let judges = pair(&one, &[seat("claude:haiku"), seat("codex:gpt-5")], false).unwrap();
        assert_eq!(correlated(&judges), None);
        let judges = pair(&verdict::default_lenses(), &[seat("claude:haiku")], false).unwrap();
        assert_eq!(correlated(&judges), None);
    }

    #[test]
    fn identical_seats_get_distinct_names() {
        let one = vec![verdict::default_lenses()[0].clone()];
        let judges = pair(&one, &[seat("exec:x"), seat("exec:x")], false).unwrap();
        assert_eq!(
            names(&judges),
            ["correctness@exec-x-1", "correctness@exec-x-2"]
        );
        assert!(correlated(&judges).is_some());
    }

    #[test]
    fn lenses_parse_in_both_notations() {
        assert_eq!(
            parse_lens("a=Is it? x=y").unwrap(),
            Lens::new("a", "Is it? x=y")
        );
        assert_eq!(
            parse_lens("edges|What input breaks it?").unwrap(),
            Lens::new("edges", "What input breaks it?")
        );
        assert!(parse_lens("nope").is_err());
        assert!(parse_lens("a b=c").is_err());
    }
}
