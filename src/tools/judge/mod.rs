//! `panel-judge`: launch sealed judges in parallel, one per lens or seat, and write one verdict
//! record each, as each finishes.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser, ValueEnum};

pub mod pr;

use crate::contracts::prompt::{self, Lens};
use crate::contracts::verdict;
use crate::engine::ask::{Done, Job, LaunchArgs, Launcher};
use crate::engine::harness::Seat;
use crate::records::candidate::Candidate;
use crate::records::review::{self, ReviewRecord};
use crate::records::{Status, VerdictRecord};
use crate::tools::docs::ToolDoc;

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
    cmd.long_about(format!("{about}\n\n{}", crate::records::pr::JUDGE_DOC))
        .after_long_help(DOC.help())
}

/// One judge of the panel: a lens on a seat, under a unique name.
#[derive(Clone, Debug)]
pub struct Judge {
    pub name: String,
    pub lens: Lens,
    pub seat: Seat,
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
    if args.contract == Contract::Pr {
        let Some(plan) = &args.plan else {
            bail!("--contract pr needs --plan FILE (pr-classify --plan writes one)");
        };
        if args.candidate.is_some() {
            bail!("--contract pr reviews the plan's head in --repo; it takes no candidate file");
        }
        return crate::tools::judge::pr::judge(plan, &args.repo, args.dry_run, launcher);
    }
    if args.plan.is_some() {
        bail!("--plan is for --contract pr");
    }
    let seats = args
        .seats
        .iter()
        .map(|s| launcher.seat(s))
        .collect::<Result<Vec<_>>>()?;
    let judges = match args.contract {
        Contract::Verdict => pair(&lenses(&args)?, &seats, args.cross)?,
        Contract::Review | Contract::Pr => reviewers(&args, &seats)?,
    };
    if !args.allow_correlated {
        let clash = match args.contract {
            Contract::Verdict => correlated(&judges),
            Contract::Review | Contract::Pr => family_clash(&judges, args.writer_family.as_deref()),
        };
        if let Some(msg) = clash {
            bail!("{msg}");
        }
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
    let nonce = review::fence_nonce(&[&candidate.text, brief.as_deref().unwrap_or("")]);
    let jobs: Vec<Job> = judges
        .iter()
        .map(|j| {
            let (prompt, schema) = match args.contract {
                Contract::Verdict => (
                    prompt::verdict_prompt(&j.lens, &candidate.text, &nonce),
                    verdict::verdict_schema(),
                ),
                Contract::Review | Contract::Pr => (
                    review::prompt(brief.as_deref(), &candidate.text, &nonce, None),
                    review::schema(),
                ),
            };
            Job::sealed(&j.name, j.seat.clone(), prompt, schema)
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
    crate::engine::launch::handle_signals().context("cannot handle SIGINT and SIGTERM")?;
    crate::engine::launch::stop_when_stdout_closes();

    let ledger_name = match args.contract {
        Contract::Verdict => "verdicts.jsonl",
        Contract::Review | Contract::Pr => "reviews.jsonl",
    };
    let mut out = crate::records::Emitter::new(&run_dir.join(ledger_name))?;
    let progress = std::io::stderr().is_terminal();
    let contract = args.contract;
    let check = move |obj: &serde_json::Map<String, serde_json::Value>| match contract {
        Contract::Verdict => verdict::check_verdict(obj).map(|_| ()),
        Contract::Review | Contract::Pr => review::check(obj).map(|_| ()),
    };
    let size = judges.len();
    let mut write_line = |name: &str, line: String, what: &str, ms: u64| -> Result<()> {
        crate::engine::run_folder::file(
            &run_dir.join(name).join("record.json"),
            format!("{line}\n"),
        );
        if progress {
            eprintln!("panel-judge: {name} {what} ({:.1}s)", ms as f64 / 1000.0);
        }
        out.emit(&line)
    };
    let mut failure = None;
    launcher.ask_each(&jobs, &check, |i, done| {
        let judge = &judges[i];
        let ms = done.duration.as_millis() as u64;
        let written = match args.contract {
            Contract::Verdict => {
                let rec = verdict_record(judge, &candidate.seal, size, &run_dir, done);
                let what = rec
                    .verdict
                    .map(|v| v.as_str())
                    .unwrap_or(rec.status.as_str());
                serde_json::to_string(&rec)
                    .map_err(Into::into)
                    .and_then(|l| write_line(&judge.name, l, what, ms))
            }
            Contract::Review | Contract::Pr => {
                let rec = review_record(judge, &args.stage, &candidate.seal, size, &run_dir, done);
                let what = rec
                    .decision
                    .map(|d| d.as_str())
                    .unwrap_or(rec.status.as_str());
                serde_json::to_string(&rec)
                    .map_err(Into::into)
                    .and_then(|l| write_line(&judge.name, l, what, ms))
            }
        };
        if let Err(e) = written {
            failure.get_or_insert(e);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let label = match args.contract {
        Contract::Verdict => "verdicts",
        Contract::Review | Contract::Pr => "reviews",
    };
    eprintln!("{label}: {}", run_dir.display());
    Ok(match crate::engine::launch::stopped() {
        Some(crate::engine::launch::SIGPIPE) | None => ExitCode::SUCCESS,
        Some(sig) => ExitCode::from(128 + sig as u8),
    })
}

/// Reviewers, `<stage>-1`, `<stage>-2`, … in seat order; the lens flags are for verdicts.
fn reviewers(args: &Args, seats: &[Seat]) -> Result<Vec<Judge>> {
    if !args.lenses.is_empty() || args.lenses_file.is_some() || args.cross {
        bail!("--lens, --lenses and --cross are for verdicts; reviewers review the whole work");
    }
    let lens = Lens::new("review", "the whole work");
    Ok(seats
        .iter()
        .enumerate()
        .map(|(i, seat)| Judge {
            name: review::reviewer_name(&args.stage, i + 1),
            lens: lens.clone(),
            seat: seat.clone(),
        })
        .collect())
}

/// The family rule of a review panel. Replayed seats stand for recorded reviewers and never clash.
fn family_clash(reviewers: &[Judge], writer: Option<&str>) -> Option<String> {
    let families: Vec<(String, String)> = reviewers
        .iter()
        .filter(|r| r.seat.harness.kind != crate::engine::harness::Kind::Replay)
        .map(|r| (r.name.clone(), r.seat.family_or_seat()))
        .collect();
    let pairs: Vec<(&str, &str)> = families
        .iter()
        .map(|(n, f)| (n.as_str(), f.as_str()))
        .collect();
    review::family_clash(&pairs, writer)
}

fn review_record(
    judge: &Judge,
    stage: &str,
    seal: &str,
    size: usize,
    run: &std::path::Path,
    done: Done,
) -> ReviewRecord {
    let mut rec = ReviewRecord::new(&judge.name, &judge.seat.spec, seal, stage);
    rec.harness = judge.seat.harness.name.clone();
    rec.model = judge.seat.model.clone();
    rec.family = judge.seat.family.clone();
    rec = match done.answer.as_ref().map(review::check) {
        Some(Ok(review)) => rec.answered(&review),
        Some(Err(why)) => rec.abstained(Status::Unreadable, &why),
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
    rec.panel_size = size;
    rec.attempts = done.attempts;
    rec.duration_ms = done.duration.as_millis() as u64;
    rec.usage = done.usage;
    rec.run = run.display().to_string();
    rec
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
        out = prompt::default_lenses();
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

/// Two judges with the same lens and the same model family are one judge in two costumes.
pub fn correlated(judges: &[Judge]) -> Option<String> {
    for (i, a) in judges.iter().enumerate() {
        for b in &judges[i + 1..] {
            if a.lens.question == b.lens.question
                && a.seat.family_or_seat() == b.seat.family_or_seat()
            {
                let family = match &a.seat.family {
                    Some(f) => format!("the model family {f}"),
                    None => format!(
                        "the seat {} (its family is unknown: state it with --family)",
                        a.seat.spec
                    ),
                };
                return Some(format!(
                    "judges {} and {} share the lens {:?} and {family}: one judge in two costumes. Give them different lenses or families, or pass --allow-correlated to pay twice for one opinion",
                    a.name, b.name, a.lens.name
                ));
            }
        }
    }
    None
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

/// The record of one judge's end.
fn verdict_record(
    judge: &Judge,
    seal: &str,
    size: usize,
    run: &std::path::Path,
    done: Done,
) -> VerdictRecord {
    let answer = done
        .answer
        .as_ref()
        .and_then(|a| verdict::check_verdict(a).ok());
    let status = if answer.is_some() {
        Status::Ok
    } else if done.status == Status::Ok {
        Status::Unreadable
    } else {
        done.status
    };
    VerdictRecord {
        kind: "verdict".into(),
        judge: judge.name.clone(),
        lens: judge.lens.name.clone(),
        seat: judge.seat.spec.clone(),
        harness: judge.seat.harness.name.clone(),
        model: judge.seat.model.clone(),
        family: judge.seat.family.clone(),
        candidate: seal.to_string(),
        verdict: answer.as_ref().map(|a| a.verdict),
        reason: answer.as_ref().map(|a| a.reason.clone()),
        confidence: answer.as_ref().map(|a| a.confidence),
        status,
        cause: if answer.is_some() { None } else { done.cause },
        excerpt: if answer.is_some() { None } else { done.excerpt },
        attempts: done.attempts,
        duration_ms: done.duration.as_millis() as u64,
        exit_code: done.exit_code,
        usage: done.usage,
        panel_size: size,
        run: run.display().to_string(),
    }
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
        let three = prompt::default_lenses();
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
        let one = vec![prompt::default_lenses()[0].clone()];
        let judges = pair(&one, &[seat("claude:haiku"), seat("claude:sonnet")], false).unwrap();
        let msg = correlated(&judges).unwrap();
        assert!(
            msg.contains("share the lens \"correctness\" and the model family anthropic"),
            "{msg}"
        );
        let judges = pair(&one, &[seat("claude:haiku"), seat("codex:gpt-5")], false).unwrap();
        assert_eq!(correlated(&judges), None);
        let judges = pair(&prompt::default_lenses(), &[seat("claude:haiku")], false).unwrap();
        assert_eq!(correlated(&judges), None);
    }

    #[test]
    fn identical_seats_get_distinct_names() {
        let one = vec![prompt::default_lenses()[0].clone()];
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
