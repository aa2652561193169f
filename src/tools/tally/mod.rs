//! `panel-tally`: count the verdicts of a panel in code and report them.
//!
//! The input's first record says what it is, and each mode has its room, where it is read,
//! counted and written as text, JSON and Markdown: verdicts are counted as they stream
//! ([`reader`] → [`batch`] → [`count`] → [`report`], whose folder holds the JSON and Markdown
//! forms), review records make the threshold panel ([`reviews`]), panel-vote's stream the
//! synthesis report ([`synthesis`]), and `--pr` the pull request's verdict ([`pr`]). What the
//! reports share: [`words`] (the PANEL line, a judge's columns, the g10 bar) and [`markdown`]
//! (a table, a collapsible section). The rules the counts are read by live in
//! `rules::decision` and `rules::consensus`.

pub mod batch;
pub mod count;
pub mod history;
pub mod ledger;
pub mod markdown;
pub mod pairwise;
pub mod pr;
pub mod reader;
pub mod report;
pub mod reviews;
pub mod runs;
pub mod select;
pub mod synthesis;
pub mod wording;

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::records::input::{Source, first_record_type, sources};
use crate::records::printable::shown;
use crate::records::review::ReviewRecord;
use crate::records::{self, synthesis as stream};
use crate::rules::decision::{self, Inconsistent};
use crate::tools::docs::ToolDoc;
use batch::Batch;
use report::{Format, Report, Sink};

/// Count the verdicts of a panel in code: unanimous, split or abstained.
///
/// Reads verdict records (panel-judge's output) and prints one line per judge, sorted by name,
/// then the panel's outcome and the run folders; or, with --json, one tally record. A judge that
/// gave no verdict (unreadable, timeout, …) abstains: it is never counted as holds or breaks.
/// A judge that answered a word other than holds or breaks (its record's `said`, e.g. `maybe`)
/// is shown by that word, as the seed's script prints it, and abstains likewise.
///
/// Canary records (panel-judge --canary; a record with "canary", the expected verdict) are
/// about another candidate and never counted in the panel: each is reported after the PANEL
/// line (`canary NAME (SEAT): VERDICT, expected V: hit` or `MISSED`), with a `CANARY MISSED by
/// SEATS` line naming the seats that gave the other verdict or none; the JSON tally carries them
/// as `canaries` (judge, seat, canary, verdict, status, hit) and `canaryMissed` (seats), both
/// absent without canaries. With --require-canaries such a seat's verdicts do not count.
///
/// Where the script's report broke, it differs on purpose: the name column is the script's 12
/// bytes or, in a panel with a longer name, that name's width; a split is followed by a
/// `sides:` line naming the judges on each side; an unreadable judge that gave no reason shows
/// its record's cause where the script's field was empty; an abstention's cause is cut at 160
/// bytes on its judge's line (the record keeps it whole). `--format seed` prints the script's
/// own report byte for byte (bin/judge-panel's, a drop-in): none of these lines or columns,
/// every judge without a verdict `unreadable`, only control characters still escaped.
///
/// Judges left out (panel-judge --stop-when-decided or --cascade: status `cancelled`) count as
/// missing, and the decision is made again with them missing: a cancelled judge never decides.
/// A panel the answers in decide says so in place of the seed's PANEL line (whose panels never
/// left a judge out): `PANEL: holds, decided 2-0 with --agree 2; 1 judge not needed
/// (cancelled).` One the answers in do not decide (a forged or edited stream, or an --agree
/// other than the panel ran under) is no decision, exit 3, with a `CANCELLED WITHOUT CAUSE:`
/// line naming the judges. The JSON tally carries `cancelled` (judges) and `decidedEarly`,
/// both absent when none was cancelled; the ledger counts cancelled judges apart from
/// abstentions and says what stopping saved.
///
/// In panel-vote's stream, a voter left out (panel-vote --stop-when-decided) is no missing
/// vote: the report names it `not needed (cancelled)`. Each is checked against the votes its
/// findings' entries count: one whose vote could have changed a finding's fate (a forged or
/// edited stream) is no decision, exit 3, with a `CANCELLED WITHOUT CAUSE:` line naming the
/// voters. The JSON tally carries `cancelled`, `decidedEarly` and `cancelledWithoutCause`, absent
/// when none was left out.
///
/// Pairwise records (panel-judge --contract pairwise) are counted into the panel's preference:
/// the answer more than half of its judges prefer (--agree N: N of them, past half), each
/// judge's answer in each order it was shown, the judges whose answers followed the order
/// (position-inconsistent: an abstention, or with --inconsistent exclude not counted at all),
/// and how many answers preferred the one shown first. Exit 0 with a preference, 3 without;
/// --json writes one preference record.
///
/// In a PR panel (--pr), a member left out (panel-judge --contract pr --stop-when-decided:
/// status `cancelled`) is no verdict and never decides. A blocking FIX_FIRST among the answers
/// fails the panel, and a `not needed (cancelled):` line names the members left out, whose
/// findings were never raised; with no blocking FIX_FIRST among them (a forged or edited
/// stream) the panel is no-verdict, exit 3, with a `CANCELLED WITHOUT CAUSE:` line naming them.
/// The pr-panel record carries `cancelled` and `cancelledWithoutCause`, absent when none was.
#[derive(Parser, Debug)]
#[command(name = "panel-tally", version)]
// What --since, --seat, --run and --candidate keep to: the history's panels, or the ledger's.
#[command(group(clap::ArgGroup::new("reading").args(["history", "ledger"]).multiple(true)))]
pub struct Args {
    /// Input files of verdict records (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,

    /// Print one tally record (JSON) per panel instead of the text report: `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// The report's form: `text` (the seed's report, with what the script could not say),
    /// `seed` (a verdict panel's report as the seed's script prints it, byte for byte: for a
    /// drop-in), `json` (one tally record per panel) or `markdown` (GitHub-flavoured: the
    /// decision, a table, each reason in a <details>; for a pull request's comment or a job
    /// summary). Text read from the records is escaped for Markdown and HTML: it cannot mention
    /// anyone, link an issue or load an image.
    #[arg(long, value_enum, value_name = "FORM")]
    pub format: Option<Form>,

    /// Holds needed to pass [default: every judge of the panel, abstainers included]. With it
    /// the text report ends with the decision: `decision: pass (2 of 3 say holds; --agree 2)`.
    #[arg(long, value_name = "N")]
    pub agree: Option<usize>,

    /// Count many panels in one stream: one tally per candidate, then a summary.
    ///
    /// A panel closes as soon as its run has sent as many records as their `panelSize` says;
    /// a panel of unknown size closes when the candidate changes; the rest close at the end of
    /// input. Judges announced but never sent count as abstentions.
    #[arg(long)]
    pub each: bool,

    /// A judge with records from two runs (a rerun of the abstainers) counts once, by its later
    /// record; without it, a judge counted twice is an error (exit 2) naming both runs.
    #[arg(long)]
    pub last_wins: bool,

    /// Pull requests: aggregate pr-verdict records (panel-judge --contract pr) by the plan
    /// into the panel's MERGE, FIX_FIRST, no-verdict or timeout.
    #[arg(long, requires = "plan", conflicts_with_all = ["agree", "each"])]
    pub pr: bool,

    /// Pull requests: the plan the records answer (pr-classify --plan).
    #[arg(long, value_name = "FILE", requires = "pr")]
    pub plan: Option<String>,

    /// Pull requests: the git repository where an advisory finding's path:line must exist, read
    /// at the plan's head (git cat-file), or in the working tree when the head is not there.
    /// Without it, the git repository the tool runs in; outside one, --pr is refused rather
    /// than dropping every advisory finding as citing nothing.
    #[arg(long, value_name = "DIR")]
    pub repo: Option<std::path::PathBuf>,

    /// Pull requests: what the fix-proof check said of the tests: a verdict (ok, vacuous,
    /// no-tests, error, untrusted, unread) or its fix-proof/v1 line (a line that does not parse
    /// or names another head is ignored: unread). Vacuous, no-tests and error make the tests
    /// member block.
    #[arg(long, value_name = "PROOF")]
    pub fix_proof: Option<String>,

    /// panel-vote's stream: print one part of it instead of the report, and exit 0: `writer`
    /// (the findings that go back, each with the judge's reason), `skips` (the findings the
    /// judge skipped, with its reasons) or `decisions` (the judge's decision records, JSON lines).
    #[arg(long, value_enum, value_name = "PART", conflicts_with_all = ["json", "format"])]
    pub view: Option<View>,

    /// A seat that missed its canary (panel-judge --canary), or has no canary record, does
    /// not count: its verdicts become abstentions (status canary-missed), and the panel may
    /// become undecided (exit 3).
    #[arg(long, conflicts_with_all = ["pr", "view"])]
    pub require_canaries: bool,

    /// Read a history of verdict records from many panels as a ledger of its judges (the files
    /// given, `-` for standard input; with none, standard input when it is a pipe or a file, else
    /// the history panel-judge appends to, where --history reads it; --since, --seat, --run and
    /// --candidate keep to some of its panels): their
    /// agreement (Cohen's and Fleiss' kappa, drawn as a heat map, and Krippendorff's alpha),
    /// who adds nothing, who rubber-stamps, who abstains, and the smallest sub-panel that
    /// decided as the full one, each figure with its 95 % interval. Fleiss' kappa applies when
    /// every panel kept all its judges; when judges abstain (timeouts, unreadable replies),
    /// read Krippendorff's alpha, which counts an abstention as missing rather than as a
    /// smaller panel. A flag is raised only when its whole interval is past the threshold.
    /// Each panel is decided as panel-tally decides it: every judge must hold, or N of them
    /// with --agree N (all of a panel smaller than N), and a sub-panel at the same share of its
    /// judges, rounded up. A judge left out of a panel decided early (cancelled) counts as
    /// missing, so read a history of --stop-when-decided panels with the --agree they ran
    /// under. With --json: judge-stats, pair-agreement and ledger-summary records. Exit 0.
    #[arg(long, conflicts_with_all = ["pr", "each", "view", "last_wins"])]
    pub ledger: bool,

    /// With --ledger: gold labels, JSON lines of {"candidate": SEAL, "label": L} or
    /// {"name": NAME, "label": L} (the name panel-judge --name recorded), L holds or breaks
    /// (verdicts) or A or B (pairwise preferences). The report adds, per judge, seat and lens
    /// and for the panel's decision at its --agree: accuracy, sensitivity and specificity (the
    /// positive label is holds, or A) and Cohen's kappa with the labels, each with its 95 %
    /// interval (Wilson's for shares, a bootstrap over labelled panels for kappa); the panel
    /// against its best single judge and best smaller panels on the same labelled panels
    /// (PoLL's comparison); abstentions, cancelled judges and undecided panels counted apart,
    /// never as wrong; the labels without records and the panels without a label, counted and
    /// named; and the share of the positive label over the unlabelled panels, corrected for the
    /// panel's errors on the labelled ones (Rogan-Gladen). With --json: gold-agreement and
    /// gold-summary records after the ledger's.
    #[arg(long, value_name = "LABELS", requires = "ledger")]
    pub gold: Option<String>,

    /// With --gold: a gate on the panel's kappa with the labels: exit 0 when its 95 %
    /// interval's low end reaches K, 1 when its high end is below K, 3 when the interval
    /// straddles K (not enough labels to tell: the report says about how many more labelled
    /// candidates would settle it at the observed kappa).
    #[arg(
        long,
        value_name = "K",
        requires = "gold",
        conflicts_with = "require_accuracy",
        allow_negative_numbers = true
    )]
    pub require_kappa: Option<f64>,

    /// With --gold: the same gate on the panel's accuracy (a share from 0 to 1).
    #[arg(
        long,
        value_name = "A",
        requires = "gold",
        allow_negative_numbers = true
    )]
    pub require_accuracy: Option<f64>,

    /// Pairwise records: how a judge whose answers in the two orders disagree
    /// (position-inconsistent) counts in the panel's preference: abstain (as a judge that gave
    /// no preference) or exclude (not at all: the panel needs the same share of the judges
    /// left).
    #[arg(long, value_enum, value_name = "HOW", default_value_t = Inconsistent::Abstain)]
    pub inconsistent: Inconsistent,

    /// With --ledger: also write the heat map and a bar per judge as a standalone SVG picture.
    #[arg(long, value_name = "FILE", requires = "ledger")]
    pub svg: Option<std::path::PathBuf>,

    /// With --ledger: bootstrap replicates for the kappas' and alpha's 95 % intervals
    /// (panels resampled with replacement, from the fixed seed 0x70616e656c, so the same
    /// history gives the same intervals). Shares (holds, canary hits, sub-panel matches) take
    /// Wilson's interval.
    #[arg(long, value_name = "N", requires = "ledger", default_value_t = crate::stats::bootstrap::REPLICATES,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub bootstrap: u32,

    /// List the run folders the tools that launch judges made where no --out named one
    /// ($XDG_CACHE_HOME/panel/runs, ~/.cache when XDG_CACHE_HOME is unset, empty or relative),
    /// newest first: age, size, judges, the ledger and its records, whether a live run holds
    /// it, and its path. A table, on a terminal or through a pipe; with --json one run-folder
    /// record per line. Exit 0.
    #[arg(long, conflicts_with_all = ["inputs", "pr", "each", "agree", "last_wins", "view", "require_canaries", "ledger", "history"])]
    pub runs: bool,

    /// With --runs: remove now the run folders whose runs started DAYS or more days ago (0:
    /// every one), and list those removed. A folder a live run holds, a name panel does not
    /// give, a symbolic link or another user's folder is never removed. Exit 2 when one could
    /// not be removed.
    #[arg(long, value_name = "DAYS", requires = "runs", allow_negative_numbers = true, value_parser = crate::engine::runs::parse_days)]
    pub keep: Option<u32>,

    #[command(flatten)]
    pub log: select::Filters,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Passed: at least N judges said holds (--agree N; by default every judge). With \
                --each: every panel passed. With --pr: MERGE. With --view: the part was printed, \
                whatever the panel decided. With --ledger: the report was printed; a ledger \
                decides nothing, but with --gold and --require-kappa or --require-accuracy the \
                panel's figure clears the gate (its 95 % interval's low end reaches it). Pairwise \
                records: the panel prefers one answer. With --runs: the run folders were listed, \
                or pruned. With --history: the history was read (even when no panel matched, said \
                on standard error), whatever its panels decided.",
        ),
        (
            "1",
            "The panel decided against: too few holds even if every abstainer had said holds. With \
                --each: at least one panel did. With --pr: FIX_FIRST. With --ledger and a gate on \
                gold labels: the panel's figure is below it (its interval's high end is).",
        ),
        (
            "2",
            "Usage or input error: one line on standard error names the file and line. With \
                --runs: the runs' folder is a symbolic link or not the user's, or with --keep a \
                run folder could not be removed.",
        ),
        (
            "3",
            "No decision: the missing answers (abstentions, missing judges) could have changed the \
                outcome; rerun the abstainers. With --each: no panel decided against, but at least \
                one is undecided. With --pr: no-verdict or timeout (a blocking member without a \
                counted verdict). In panel-vote's stream: also a voter left out (cancelled) whose \
                vote could have changed a finding's fate. Pairwise records: no answer has the \
                judges a preference needs. With --ledger and a gate on gold labels: the interval \
                straddles it (the report says about how many more labelled candidates would settle \
                it).",
        ),
    ],
    examples: &[
        (
            "The verdict of a pull request's planned panel",
            "panel-judge --contract pr --plan plan.json --repo . | panel-tally --pr --plan \
                plan.json",
        ),
        (
            "Post a pull request's verdict as a comment, its reasons escaped for Markdown and HTML",
            "panel-tally --pr --plan plan.json --format markdown verdicts.jsonl | gh pr comment 7 \
                --body-file -",
        ),
        (
            "Judge an answer with one seat and read the report",
            "panel-judge --seat claude:haiku answer.md | panel-tally",
        ),
        (
            "Pass when two judges hold; print the tally as JSON",
            "panel-tally --json --agree 2 verdicts.jsonl",
        ),
        (
            "Is the panel worth what it costs? Its judges' ledger over a history, and the picture",
            "panel-tally --ledger --svg ledger.svg history.jsonl",
        ),
        (
            "Does the panel agree with people? Its history against gold labels, gated for CI",
            "panel-tally --ledger --gold labels.jsonl --agree 2 --require-kappa 0.6 history.jsonl",
        ),
        (
            "Which of two answers the panel prefers, each judge asked in both orders",
            "panel-judge --contract pairwise --brief question.md a.md b.md | panel-tally",
        ),
        (
            "The ledger of the past week's panels about this folder's work, from the history",
            "panel-tally --ledger --since 7d --candidate .",
        ),
        (
            "The last three panels of the history where judge a-claude sat, of the past week",
            "panel-tally --history --since 7d --judge a-claude --last 3",
        ),
        (
            "Judge many documents at once, one tally per document and a summary",
            "parallel panel-judge ::: docs/*.md | panel-tally --each --json",
        ),
        (
            "The run folders, newest first; then remove those of runs a week old or more",
            "panel-tally --runs && panel-tally --runs --keep 7",
        ),
    ],
};

/// What `--format` names: a report's form, or the seed script's own text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Form {
    Text,
    Seed,
    Json,
    Markdown,
}

impl Args {
    /// The report's form: `--format`, or `--json`, else text (the seed's form is text).
    pub fn format(&self) -> Format {
        match (self.format, self.json) {
            (Some(Form::Text | Form::Seed), _) | (None, false) => Format::Text,
            (Some(Form::Json), _) | (None, true) => Format::Json,
            (Some(Form::Markdown), _) => Format::Markdown,
        }
    }

    /// `--format seed`: only a verdict panel's report has the script's form.
    fn seed(&self) -> bool {
        self.format == Some(Form::Seed)
    }
}

/// A part of panel-vote's stream, for a script that hands it on (bin/review-battery does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    Writer,
    Skips,
    Decisions,
}

/// Review records: the threshold panel counts acceptances.
fn threshold_panel(args: &Args, inputs: Vec<Source>) -> Result<ExitCode> {
    let mut reviews = Vec::new();
    records::for_each_in::<ReviewRecord>(inputs, &["review"], |r, _| {
        reviews.push(r);
        Ok(())
    })?;
    let outcome = reviews::threshold(&reviews, args.agree)?;
    let mut out = crate::engine::output::stdout();
    outcome.write(args.format(), &mut out)?;
    out.flush()?;
    Ok(outcome.status.into())
}

/// panel-vote's stream: the findings the writer gets, the split votes, the route.
fn synthesis(args: &Args, inputs: Vec<Source>) -> Result<ExitCode> {
    let records: Vec<_> = stream::read_in(inputs, stream::OUTPUT_TYPES)?
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    let report = synthesis::report(&records)?;
    let mut out = crate::engine::output::stdout();
    let part = match args.view {
        Some(View::Writer) => shown(&report.writer),
        Some(View::Skips) => shown(&report.skips),
        Some(View::Decisions) => report.decisions.as_str().into(),
        None => {
            report.write(args.format(), &mut out)?;
            out.flush()?;
            return Ok(report.decision.into());
        }
    };
    // A part is handed on, not decided on: it exits 0 like any filter.
    out.write_all(part.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// How `--ledger` reads its history: the gold labels read now (a bad file is exit 2 before
/// any record is), the gate on them, and the panels kept.
fn ledger_reading(args: &Args) -> Result<ledger::Reading> {
    let select = select::Select::new(&args.log, std::time::SystemTime::now())?;
    let gold = match &args.gold {
        Some(path) if path == "-" && args.inputs.iter().any(|i| i == "-") => {
            bail!("--gold -: the records are read from standard input already")
        }
        Some(path) => Some(crate::records::gold::Gold::read(Source::Path(
            path.clone(),
        ))?),
        None => None,
    };
    let require = match (args.require_kappa, args.require_accuracy) {
        (Some(k), _) if !(-1.0..=1.0).contains(&k) => {
            bail!("--require-kappa {k}: a kappa is from -1 to 1")
        }
        (_, Some(a)) if !(0.0..=1.0).contains(&a) => {
            bail!("--require-accuracy {a}: a share is from 0 to 1")
        }
        (Some(k), _) => Some(ledger::gold_report::Require::Kappa(k)),
        (_, Some(a)) => Some(ledger::gold_report::Require::Accuracy(a)),
        _ => None,
    };
    Ok(ledger::Reading {
        agree: args.agree,
        inconsistent: args.inconsistent,
        gold,
        require,
        select,
        history: false,
    })
}

/// What `--ledger` reads: the files given (`-` standard input), else standard input when it
/// is a pipe or a file (as ripgrep decides), else the history panel-judge appends to, as
/// `--history` finds it: a ledger typed at a terminal reads the history.
fn ledger_inputs(args: &Args) -> Result<(Vec<Source>, bool)> {
    if !args.inputs.is_empty() {
        return Ok((sources(&args.inputs), false));
    }
    // Standard input read for the gold labels (`--gold -`) is not read again.
    if stdin_holds_data() && args.gold.as_deref() != Some("-") {
        return Ok((sources(&["-".to_string()]), false));
    }
    let path = history::path(None)?;
    let file = history::open(&path)?;
    let source = match path.to_str() {
        // By its path, so that a filtered ledger can read it twice.
        Some(p) => Source::Path(p.to_string()),
        None => Source::Open {
            name: path.display().to_string(),
            reader: Box::new(file),
        },
    };
    Ok((vec![source], true))
}

/// Whether standard input is a pipe or a file: records a user may have meant for the ledger.
fn stdin_holds_data() -> bool {
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    let Ok(stat) = nix::sys::stat::fstat(stdin.as_fd()) else {
        return false;
    };
    let kind = stat.st_mode & nix::libc::S_IFMT;
    [nix::libc::S_IFIFO, nix::libc::S_IFREG].contains(&kind)
}

/// The clap definition of `panel-tally`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

/// The tool panel-tally is asked to be, read from its flags once and matched once.
enum Mode<'a> {
    /// `--runs`: the run folders.
    Runs,
    /// `--pr --plan FILE`: a PR panel against its plan.
    Pr(&'a str),
    /// `--history`: views of the history.
    History,
    /// `--ledger`: the judges' ledger.
    Ledger,
    /// The panel the records are: verdicts, reviews, pairwise, or panel-vote's stream.
    Records,
}

impl Mode<'_> {
    fn of(args: &Args) -> Result<Mode<'_>> {
        let mode = match (args.runs, args.pr, &args.plan) {
            (true, ..) => Mode::Runs,
            (_, true, Some(plan)) => Mode::Pr(plan),
            _ if args.log.history.is_some() => Mode::History,
            _ if args.ledger => Mode::Ledger,
            _ => Mode::Records,
        };
        if args.seed() && (args.pr || !matches!(mode, Mode::Records)) {
            bail!("--format seed: only a verdict panel's report has the seed script's form");
        }
        Ok(mode)
    }
}

/// The panel a stream of records is, by its first record's type.
enum StreamKind {
    /// panel-vote's stream (synthesis, route, vote records).
    Synthesis,
    Pairwise,
    /// Review records: the threshold panel.
    Reviews,
    Verdicts,
}

impl StreamKind {
    fn of(kind: Option<&str>, args: &Args) -> Result<StreamKind> {
        if args.seed() && !matches!(kind, None | Some("verdict")) {
            bail!("--format seed: only a verdict panel's report has the seed script's form");
        }
        Ok(match kind {
            Some(kind) if stream::OUTPUT_TYPES.contains(&kind) => StreamKind::Synthesis,
            Some("pairwise") if args.each || args.require_canaries || args.view.is_some() => bail!(
                "--each, --require-canaries and --view are for verdicts; a pairwise panel is \
                    counted alone"
            ),
            Some("pairwise") => StreamKind::Pairwise,
            _ if args.view.is_some() => bail!("--view is for panel-vote's stream"),
            Some("review") => StreamKind::Reviews,
            _ => StreamKind::Verdicts,
        })
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    match Mode::of(&args)? {
        Mode::Runs => {
            let format = (args.format.is_some() || args.json).then(|| args.format());
            runs::run(format, args.keep)
        }
        Mode::Pr(plan) => {
            let repo = pr::repository(args.repo.as_deref())?;
            pr::tally(&pr::TallyInput {
                plan,
                inputs: &args.inputs,
                repo: &repo,
                fix_proof: args.fix_proof.as_deref(),
                format: args.format(),
                last_wins: args.last_wins,
            })
        }
        Mode::History => {
            decision::check_agree(args.agree)?;
            let now = std::time::SystemTime::now();
            history::run(&args.log, args.format(), args.agree, now)
        }
        Mode::Ledger => {
            decision::check_agree(args.agree)?;
            let mut how = ledger_reading(&args)?;
            let (inputs, history) = ledger_inputs(&args)?;
            // The history is others' writing: a torn line a killed writer left is skipped.
            how.history = history;
            let (svg, bootstrap) = (args.svg.as_deref(), args.bootstrap);
            ledger::run(inputs, args.format(), svg, bootstrap, how)
        }
        Mode::Records => records_panel(&args),
    }
}

/// A panel of records, whatever kind they are.
fn records_panel(args: &Args) -> Result<ExitCode> {
    if args.fix_proof.is_some() {
        bail!("--fix-proof is for --pr");
    }
    decision::check_agree(args.agree)?;
    let (kind, inputs) = first_record_type(sources(&args.inputs))?;
    match StreamKind::of(kind.as_deref(), args)? {
        StreamKind::Synthesis => synthesis(args, inputs),
        StreamKind::Pairwise => {
            let rules = pairwise::PairwiseRules {
                agree: args.agree,
                inconsistent: args.inconsistent,
                last_wins: args.last_wins,
            };
            pairwise::run(inputs, args.format(), &rules)
        }
        StreamKind::Reviews => threshold_panel(args, inputs),
        StreamKind::Verdicts => verdicts(args, inputs),
    }
}

/// A verdict panel, or a stream of them (`--each`).
fn verdicts(args: &Args, inputs: Vec<Source>) -> Result<ExitCode> {
    let names = inputs
        .iter()
        .map(|s| s.name().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let stdout = io::stdout();
    // Like stdio: flush each report at once on a terminal, in blocks into a pipe or file.
    let eager = stdout.is_terminal();
    let mut sink = Sink::new(
        BufWriter::with_capacity(1 << 16, crate::engine::output::stdout()),
        args.format(),
        eager,
    )
    .seed(args.seed());
    let mut batch =
        Batch::new(args.each, args.agree, args.last_wins).require_canaries(args.require_canaries);
    let mut any = false;
    reader::ballots(inputs, |ballot, at| {
        // A canary's record is about another candidate: it makes no panel.
        any |= ballot.canary.is_none();
        batch.add(ballot, at, &mut sink)
    })?;
    if !any {
        bail!("no verdict records in {names}");
    }
    batch.finish(&mut sink)?;
    let decision = if args.each {
        sink.summary()?;
        sink.totals.decision()
    } else {
        sink.last
    };
    sink.end()?;
    Ok(decision.into())
}
