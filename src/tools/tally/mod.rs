//! `panel-tally`: count the verdicts of a panel in code and report them.
//!
//! The pieces, so that other streams (reviews, a synthesis, PR verdicts) can be added later:
//! a *source* turns one input record into a [`Ballot`]; a [`Panel`] keeps the counts and one
//! short row per judge; a [`Batch`] routes ballots to panels and closes each one into a
//! [`Tally`]; a [`Sink`] writes tallies as text or JSON. The rules themselves (outcome,
//! threshold, exit status, the report's lines) are small named functions below.
//!
//! Reading and parsing run on threads of their own, a few blocks of lines ahead of the
//! counting, and hand their ballots back in input order: the counting sees one ordered stream.
//! Memory grows with the panels open at once, never with the length of the stream: a panel
//! keeps one short row per judge, its text in one buffer that the next panel reuses.

pub mod pr;
pub mod reviews;
pub mod synthesis;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser};
use crossbeam_channel::Sender;
use serde::{Deserialize, Serialize};

use crate::records::input::{
    MAX_LINE, display_name, find_newline, line_text, paths_or_stdin, too_long,
};
use crate::records::{self, Status, Usage, Verdict, VerdictRecord};
use crate::tools::docs::ToolDoc;
use crate::tools::exit;

/// Count the verdicts of a panel in code: unanimous, split or abstained.
///
/// Reads verdict records (panel-judge's output) and prints one line per judge, sorted by name,
/// then the panel's outcome and the run folders; or, with --json, one tally record. A judge that
/// gave no verdict (unreadable, timeout, …) abstains: it is never counted as holds or breaks.
#[derive(Parser, Debug)]
#[command(name = "panel-tally", version)]
pub struct Args {
    /// Input files of verdict records (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,

    /// Print one tally record (JSON) per panel instead of the text report.
    #[arg(long)]
    pub json: bool,

    /// Holds needed to pass [default: every judge of the panel, abstainers included].
    #[arg(long, value_name = "N")]
    pub agree: Option<usize>,

    /// Count many panels in one stream: one tally per candidate, then a summary.
    ///
    /// A panel closes as soon as its run has sent as many records as their `panelSize` says;
    /// a panel of unknown size closes when the candidate changes; the rest close at the end of
    /// input. Judges announced but never sent count as abstentions.
    #[arg(long)]
    pub each: bool,

    /// Pull requests: aggregate pr-verdict records (panel-judge --contract pr) by the plan
    /// into the panel's MERGE, FIX_FIRST, no-verdict or timeout.
    #[arg(long, requires = "plan", conflicts_with_all = ["agree", "each"])]
    pub pr: bool,

    /// Pull requests: the plan the records answer (pr-classify --plan).
    #[arg(long, value_name = "FILE", requires = "pr")]
    pub plan: Option<String>,

    /// Pull requests: the git repository where an advisory finding's path:line must exist, read
    /// at the plan's head (git cat-file), or in the working tree when the head is not there.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: std::path::PathBuf,

    /// Pull requests: what the fix-proof check said of the tests; vacuous, no-tests and error
    /// make the tests member block.
    #[arg(long, value_enum, value_name = "PROOF")]
    pub fix_proof: Option<crate::rules::pr::aggregate::FixProof>,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Passed: at least N judges said holds (--agree N; by default every judge). With --each: every panel passed. With --pr: MERGE.",
        ),
        (
            "1",
            "The panel decided against: too few holds even if every abstainer had said holds. With --each: at least one panel did. With --pr: FIX_FIRST.",
        ),
        (
            "2",
            "Usage or input error: one line on standard error names the file and line.",
        ),
        (
            "3",
            "No decision: the missing answers (abstentions, missing judges) could have changed the outcome; rerun the abstainers. With --each: no panel decided against, but at least one is undecided. With --pr: no-verdict or timeout (a blocking member without a counted verdict).",
        ),
    ],
    examples: &[
        (
            "The verdict of a pull request's planned panel",
            "panel-judge --contract pr --plan plan.json --repo . | panel-tally --pr --plan plan.json",
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
            "Judge many documents at once, one tally per document and a summary",
            "parallel panel-judge ::: docs/*.md | panel-tally --each --json",
        ),
    ],
};

/// The type of the first record of the first input, read without consuming it: verdicts are
/// counted as they stream, the other streams this tool reads are small and read whole.
fn stream_kind(inputs: &[String]) -> Result<Option<String>> {
    use std::io::{BufRead, Read};
    let Some(first) = inputs.first() else {
        return Ok(None);
    };
    let mut head = Vec::new();
    if first == "-" {
        let stdin = io::stdin();
        let mut lock = stdin.lock();
        // fill_buf leaves what it read in stdin's buffer for the reader that follows.
        head.extend_from_slice(lock.fill_buf().context("<stdin>: cannot read")?);
    } else if let Ok(file) = std::fs::File::open(first) {
        file.take(8192).read_to_end(&mut head).ok();
    }
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    // Our records carry "type" first; a partial first line still shows it.
    let kind = line
        .split_once("\"type\":\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(kind, _)| kind.to_string());
    Ok(kind)
}

/// Review records: the threshold panel counts acceptances.
fn threshold_panel(args: &Args) -> Result<ExitCode> {
    let mut reviews = Vec::new();
    records::for_each::<crate::records::review::ReviewRecord>(
        &args.inputs,
        &["review"],
        |r, _| {
            reviews.push(r);
            Ok(())
        },
    )?;
    let outcome = reviews::threshold(&reviews, args.agree)?;
    let mut out = io::stdout().lock();
    if args.json {
        records::write(&mut out, &outcome.json())?;
    } else {
        out.write_all(outcome.text().as_bytes())?;
    }
    out.flush()?;
    Ok(outcome.status.into())
}

/// panel-vote's stream: the findings the writer gets, the split votes, the route.
fn synthesis(args: &Args) -> Result<ExitCode> {
    let records: Vec<_> =
        crate::records::synthesis::read(&args.inputs, crate::records::synthesis::OUTPUT_TYPES)?
            .into_iter()
            .map(|(r, _)| r)
            .collect();
    let report = synthesis::report(&records)?;
    let mut out = io::stdout().lock();
    if args.json {
        records::write(&mut out, &report.json)?;
    } else {
        out.write_all(report.text.as_bytes())?;
    }
    out.flush()?;
    Ok(report.decision.into())
}

/// The clap definition of `panel-tally`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(args: Args) -> Result<ExitCode> {
    if let (true, Some(plan)) = (args.pr, &args.plan) {
        return crate::tools::tally::pr::tally(&crate::tools::tally::pr::TallyInput {
            plan,
            inputs: &args.inputs,
            repo: &args.repo,
            fix_proof: args.fix_proof,
            json: args.json,
        });
    }
    if args.fix_proof.is_some() {
        bail!("--fix-proof is for --pr");
    }
    if args.agree == Some(0) {
        bail!("--agree 0: a panel needs at least one hold to pass");
    }
    match stream_kind(&paths_or_stdin(&args.inputs))?.as_deref() {
        Some("review") => return threshold_panel(&args),
        Some(kind) if crate::records::synthesis::OUTPUT_TYPES.contains(&kind) => {
            return synthesis(&args);
        }
        _ => {}
    }
    let stdout = io::stdout();
    // Like stdio: flush each report at once on a terminal, in blocks into a pipe or file.
    let eager = stdout.is_terminal();
    let mut sink = Sink::new(
        BufWriter::with_capacity(1 << 16, stdout.lock()),
        args.json,
        eager,
    );
    let mut batch = Batch::new(args.each, args.agree);
    let inputs = paths_or_stdin(&args.inputs);
    let names: Vec<&str> = inputs.iter().map(|p| display_name(p)).collect();
    let mut any = false;
    let mut complete = false;
    for chunk in read_ahead(inputs.clone(), BLOCK) {
        for o in &chunk.ballots {
            let at = || format!("{}: line {}", names[o.input], o.line);
            batch.add(&o.ballot(&chunk.text), &at, &mut sink)?;
            any = true;
        }
        if let Some(err) = chunk.error {
            return Err(err);
        }
        if chunk.last {
            complete = true;
            break;
        }
    }
    if !complete {
        bail!("reading the input stopped before its end");
    }
    if !any {
        bail!("no verdict records in {}", input_names(&inputs));
    }
    batch.finish(&mut sink)?;
    let code = if args.each {
        sink.summary()?;
        batch_exit(&sink.totals)
    } else {
        sink.last_status
    };
    sink.out.flush()?;
    Ok(ExitCode::from(code))
}

// ---------------------------------------------------------------------------------------------
// Sources: one input record becomes one ballot.

/// What the counter needs from one record, whatever stream it came from. It borrows from the
/// parsed line; a panel copies what it keeps.
#[derive(Clone, Debug)]
pub struct Ballot<'a> {
    /// The seal of the candidate; a panel is about one candidate.
    pub candidate: &'a str,
    /// How many judges the panel has; 0 when unknown.
    pub panel_size: usize,
    pub usage: Option<&'a Usage>,
    pub judge: Judge<'a>,
    /// The run folder the answer is kept in.
    pub run: &'a str,
}

/// A [`VerdictRecord`] read in place: the same fields and types, but text borrowed from the
/// line wherever it has no escapes, so counting a record allocates nothing it does not keep.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerdictView<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    judge: Cow<'a, str>,
    #[serde(borrow)]
    lens: Cow<'a, str>,
    #[serde(borrow)]
    seat: Cow<'a, str>,
    #[serde(borrow)]
    #[allow(dead_code)]
    harness: Cow<'a, str>,
    #[serde(default, borrow)]
    #[allow(dead_code)]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    family: Option<Cow<'a, str>>,
    #[serde(borrow)]
    candidate: Cow<'a, str>,
    verdict: Option<Verdict>,
    #[serde(default, borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(default)]
    confidence: Option<f64>,
    status: Status,
    #[serde(default, borrow)]
    cause: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    #[allow(dead_code)]
    excerpt: Option<Cow<'a, str>>,
    #[serde(default)]
    #[allow(dead_code)]
    attempts: u32,
    #[serde(default)]
    #[allow(dead_code)]
    duration_ms: u64,
    #[serde(default)]
    #[allow(dead_code)]
    exit_code: Option<i32>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    panel_size: usize,
    #[serde(default, borrow)]
    run: Cow<'a, str>,
}

/// Parses a verdict record with one pass over the line; only a bad line is read again, by
/// [`records::parse`], to say precisely what is wrong with it.
fn parse_verdict<'a>(line: &'a str, at: &dyn Fn() -> String) -> Result<VerdictView<'a>> {
    match crate::records::strict::from_str::<VerdictView>(line) {
        Ok(rec) if rec.kind == "verdict" => Ok(rec),
        Ok(rec) => bail!(
            "{}: a {} record; {}",
            at(),
            rec.kind,
            records::destination(&rec.kind)
        ),
        Err(e) => {
            records::parse::<VerdictRecord>(line, at, &["verdict"])?;
            bail!("{}: a verdict record that does not fit: {e}", at())
        }
    }
}

/// A verdict record as a ballot. A verdict with an abstainer's status, or an `ok` without a
/// verdict, contradicts itself and is refused rather than guessed.
fn verdict_ballot<'a>(rec: &'a VerdictView<'_>, at: &dyn Fn() -> String) -> Result<Ballot<'a>> {
    match (rec.verdict, rec.status) {
        (Some(v), s) if s != Status::Ok => bail!(
            "{}: judge {:?} says {} but its status is {}",
            at(),
            rec.judge,
            v.as_str(),
            s.as_str()
        ),
        (None, Status::Ok) => bail!(
            "{}: judge {:?} has status ok but no verdict",
            at(),
            rec.judge
        ),
        _ => {}
    }
    if let Some(c) = rec.confidence.filter(|c| !(0.0..=1.0).contains(c)) {
        bail!(
            "{}: judge {:?} has confidence {c}, outside 0 to 1",
            at(),
            rec.judge
        );
    }
    Ok(Ballot {
        candidate: &rec.candidate,
        panel_size: rec.panel_size,
        usage: rec.usage.as_ref(),
        run: &rec.run,
        judge: Judge {
            judge: &rec.judge,
            lens: &rec.lens,
            seat: &rec.seat,
            family: rec.family.as_deref(),
            verdict: rec.verdict,
            status: rec.status,
            reason: rec.reason.as_deref(),
            confidence: rec.confidence,
            cause: rec.cause.as_deref(),
        },
    })
}

/// Ballots read ahead of the counting, their text in one buffer.
#[derive(Default)]
struct Chunk {
    seq: u64,
    text: String,
    ballots: Vec<Parsed>,
    /// What stopped the reading early, after the ballots before it.
    error: Option<anyhow::Error>,
    /// The end of the inputs: without it, the reading thread died and the count is short.
    last: bool,
}

/// A ballot of a [`Chunk`], with where it was read.
struct Parsed {
    input: usize,
    line: u64,
    candidate: Span,
    panel_size: usize,
    usage: Option<Usage>,
    judge: Span,
    lens: Span,
    seat: Span,
    family: Option<Span>,
    verdict: Option<Verdict>,
    status: Status,
    reason: Option<Span>,
    confidence: Option<f64>,
    cause: Option<Span>,
    run: Span,
}

impl Parsed {
    fn new(b: &Ballot, text: &mut String, input: usize, line: u64) -> Parsed {
        let j = &b.judge;
        Parsed {
            input,
            line,
            candidate: keep(text, b.candidate),
            panel_size: b.panel_size,
            usage: b.usage.cloned(),
            judge: keep(text, j.judge),
            lens: keep(text, j.lens),
            seat: keep(text, j.seat),
            family: j.family.map(|s| keep(text, s)),
            verdict: j.verdict,
            status: j.status,
            reason: j.reason.map(|s| keep(text, s)),
            confidence: j.confidence,
            cause: j.cause.map(|s| keep(text, s)),
            run: keep(text, b.run),
        }
    }

    fn ballot<'a>(&'a self, text: &'a str) -> Ballot<'a> {
        let opt = |s: Option<Span>| s.map(|s| s.of(text));
        Ballot {
            candidate: self.candidate.of(text),
            panel_size: self.panel_size,
            usage: self.usage.as_ref(),
            run: self.run.of(text),
            judge: Judge {
                judge: self.judge.of(text),
                lens: self.lens.of(text),
                seat: self.seat.of(text),
                family: opt(self.family),
                verdict: self.verdict,
                status: self.status,
                reason: opt(self.reason),
                confidence: self.confidence,
                cause: opt(self.cause),
            },
        }
    }
}

/// At most this many bytes are read at once; a parser takes the whole lines among them.
const BLOCK: usize = 1 << 16;

/// Whole lines of one input, handed from the reading thread to a parser.
#[derive(Default)]
struct Work {
    seq: u64,
    input: usize,
    /// The number of the first line in `bytes`.
    first: u64,
    bytes: Vec<u8>,
    error: Option<anyhow::Error>,
    last: bool,
}

/// Reads the inputs on one thread and parses them on a few more, ahead of the counting:
/// parsing is most of the work of a long stream. The chunks come out in input order. The
/// threads are left to end with the process, so that a broken pipe never waits for an input
/// that has not finished.
fn read_ahead(inputs: Vec<String>, block: usize) -> InOrder {
    let names: Arc<Vec<String>> = Arc::new(inputs.iter().map(|p| display_name(p).into()).collect());
    let parsers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4));
    let (work_tx, work_rx) = crossbeam_channel::bounded::<Work>(parsers);
    let (done_tx, done_rx) = crossbeam_channel::bounded::<Chunk>(parsers);
    let reader_names = Arc::clone(&names);
    std::thread::spawn(move || split_inputs(&inputs, &reader_names, block, &work_tx));
    for _ in 0..parsers {
        let (rx, tx, names) = (work_rx.clone(), done_tx.clone(), Arc::clone(&names));
        std::thread::spawn(move || {
            for work in rx {
                if tx.send(parse_block(work, &names)).is_err() {
                    break;
                }
            }
        });
    }
    InOrder {
        rx: done_rx,
        pending: BTreeMap::new(),
        next: 0,
    }
}

/// The parsed chunks in the order their lines were read.
struct InOrder {
    rx: crossbeam_channel::Receiver<Chunk>,
    /// Chunks that came before their turn; bounded by the chunks in flight.
    pending: BTreeMap<u64, Chunk>,
    next: u64,
}

impl Iterator for InOrder {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        loop {
            if let Some(chunk) = self.pending.remove(&self.next) {
                self.next += 1;
                return Some(chunk);
            }
            let chunk = self.rx.recv().ok()?;
            self.pending.insert(chunk.seq, chunk);
        }
    }
}

/// The reading thread: cuts each input into blocks of whole lines. An error goes down the
/// same road, in its place.
fn split_inputs(inputs: &[String], names: &[String], block: usize, tx: &Sender<Work>) {
    let mut seq = 0;
    for (input, path) in inputs.iter().enumerate() {
        match split_input(input, path, &names[input], block, &mut seq, tx) {
            Ok(true) => {}
            // Nobody counts any more.
            Ok(false) => return,
            Err(err) => {
                let _ = tx.send(Work {
                    seq,
                    error: Some(err),
                    ..Work::default()
                });
                return;
            }
        }
    }
    let _ = tx.send(Work {
        seq,
        last: true,
        ..Work::default()
    });
}

/// Sends one input's blocks; false when nobody receives them any more. A block is sent as
/// soon as a read brings whole lines, so a slow pipe is counted as it comes.
fn split_input(
    input: usize,
    path: &str,
    name: &str,
    block: usize,
    seq: &mut u64,
    tx: &Sender<Work>,
) -> Result<bool> {
    let mut reader: Box<dyn io::Read> = if path == "-" {
        Box::new(io::stdin())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("{path}: cannot open"))?)
    };
    let mut buf: Vec<u8> = Vec::new();
    // The number of the first line in `buf`.
    let mut line: u64 = 1;
    loop {
        let start = buf.len();
        buf.resize(start + block, 0);
        let n = loop {
            match reader.read(&mut buf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        let at = line + newlines(&buf[..start]);
                        format!("{name}: line {at}: cannot read")
                    });
                }
            }
        };
        buf.truncate(start + n);
        let end = n == 0;
        let cut = match buf[start..].iter().rposition(|&b| b == b'\n') {
            _ if end => buf.len(),
            Some(i) => start + i + 1,
            None if buf.len() > MAX_LINE => return Err(too_long(&format!("{name}: line {line}"))),
            None => continue,
        };
        if cut > 0 {
            let rest = buf.split_off(cut);
            let bytes = std::mem::replace(&mut buf, rest);
            let first = line;
            line += newlines(&bytes);
            let work = Work {
                seq: *seq,
                input,
                first,
                bytes,
                ..Work::default()
            };
            *seq += 1;
            if tx.send(work).is_err() {
                return Ok(false);
            }
        }
        if end {
            return Ok(true);
        }
    }
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// A parser thread's work: the ballots of a block's lines, up to the first bad one, each line
/// read by [`line_text`]'s rules; blank lines are skipped.
fn parse_block(work: Work, names: &[String]) -> Chunk {
    let mut chunk = Chunk {
        seq: work.seq,
        error: work.error,
        last: work.last,
        ..Chunk::default()
    };
    if chunk.error.is_some() || chunk.last {
        return chunk;
    }
    let name = &names[work.input];
    let mut rest = &work.bytes[..];
    let mut number = work.first;
    while !rest.is_empty() {
        let (line, next) = match find_newline(rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        let at = || format!("{name}: line {number}");
        let parsed = match line_text(line, &at) {
            Err(err) => Err(err),
            Ok(text) if text.trim().is_empty() => Ok(()),
            Ok(text) => parse_verdict(text, &at).and_then(|rec| {
                let b = verdict_ballot(&rec, &at)?;
                chunk
                    .ballots
                    .push(Parsed::new(&b, &mut chunk.text, work.input, number));
                Ok(())
            }),
        };
        if let Err(err) = parsed {
            chunk.error = Some(err);
            break;
        }
        number += 1;
    }
    chunk
}

fn input_names(inputs: &[String]) -> String {
    inputs
        .iter()
        .map(|p| display_name(p))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// Counting one panel.

/// One judge's answer as a tally reports it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Judge<'a> {
    pub judge: &'a str,
    pub lens: &'a str,
    pub seat: &'a str,
    pub family: Option<&'a str>,
    pub verdict: Option<Verdict>,
    pub status: Status,
    pub reason: Option<&'a str>,
    pub confidence: Option<f64>,
    /// Reported in `abstentions`, not per judge.
    #[serde(skip)]
    pub cause: Option<&'a str>,
}

/// Holds, breaks and abstentions of a group of judges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub judges: usize,
    pub holds: usize,
    pub breaks: usize,
    pub abstained: usize,
}

impl Counts {
    fn add(&mut self, verdict: Option<Verdict>) {
        self.judges += 1;
        match verdict {
            Some(Verdict::Holds) => self.holds += 1,
            Some(Verdict::Breaks) => self.breaks += 1,
            None => self.abstained += 1,
        }
    }
}

/// The panel's verdicts taken together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every judge answered, and all the same way.
    Unanimous,
    /// Every judge answered, and they disagree.
    Split,
    /// At least one judge gave no verdict.
    Inconclusive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Unanimous => "unanimous",
            Outcome::Split => "split",
            Outcome::Inconclusive => "inconclusive",
        }
    }
}

/// A piece of a panel's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    fn of(self, text: &str) -> &str {
        &text[self.start..self.end]
    }
}

fn keep(text: &mut String, s: &str) -> Span {
    let start = text.len();
    text.push_str(s);
    Span {
        start,
        end: text.len(),
    }
}

/// One judge of a panel, its text kept in the panel's one buffer.
#[derive(Clone, Copy, Debug)]
struct Row {
    judge: Span,
    lens: Span,
    seat: Span,
    family: Option<Span>,
    verdict: Option<Verdict>,
    status: Status,
    reason: Option<Span>,
    confidence: Option<f64>,
    cause: Option<Span>,
    /// Index into the panel's runs.
    run: usize,
}

/// Rows and groups are searched one by one up to this many; past it, through a hash.
const SCAN: usize = 32;

/// Counts by a key (lens, family), in first-seen order until reported.
#[derive(Debug, Default)]
struct Groups {
    keys: Vec<(Span, Counts)>,
    /// Filled only once there are more than [`SCAN`] keys.
    index: HashMap<String, usize>,
}

impl Groups {
    fn add(&mut self, text: &mut String, key: &str, verdict: Option<Verdict>) {
        let found = if self.keys.len() <= SCAN {
            self.keys.iter().position(|(k, _)| k.of(text) == key)
        } else {
            self.index.get(key).copied()
        };
        let i = match found {
            Some(i) => i,
            None => {
                self.keys.push((keep(text, key), Counts::default()));
                if self.keys.len() > SCAN {
                    for (i, (k, _)) in self.keys.iter().enumerate().skip(self.index.len()) {
                        self.index.insert(k.of(text).to_string(), i);
                    }
                }
                self.keys.len() - 1
            }
        };
        self.keys[i].1.add(verdict);
    }

    /// Sorted by key, bytewise.
    fn report<'a>(&self, text: &'a str) -> Vec<(&'a str, Counts)> {
        let mut out: Vec<(&str, Counts)> =
            self.keys.iter().map(|(k, c)| (k.of(text), *c)).collect();
        out.sort_unstable_by(|a, b| a.0.cmp(b.0));
        out
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.index.clear();
    }
}

/// One panel being counted: counts and one short row per judge, never the whole records.
/// A closed panel's buffers are reused for the next one.
#[derive(Debug, Default)]
pub struct Panel {
    candidate: String,
    /// When it was first seen in the stream.
    seq: u64,
    counts: Counts,
    text: String,
    rows: Vec<Row>,
    /// Hashes of (judge, run), once the rows are too many to scan.
    seen: HashSet<u64>,
    by_lens: Groups,
    by_family: Groups,
    /// The runs (panel-judge invocations) whose records make up the panel.
    runs: Vec<Run>,
    usage: Option<Usage>,
}

/// One run folder: how many judges its records announced (`panelSize`, 0 when unknown) and
/// how many of them were counted.
#[derive(Clone, Copy, Debug)]
struct Run {
    folder: Span,
    size: usize,
    counted: usize,
}

impl Panel {
    pub fn new(candidate: &str) -> Panel {
        let mut p = Panel::default();
        p.start(candidate, 0);
        p
    }

    /// Empties the panel for another candidate, keeping its buffers.
    fn start(&mut self, candidate: &str, seq: u64) {
        self.candidate.clear();
        self.candidate.push_str(candidate);
        self.seq = seq;
        self.counts = Counts::default();
        self.text.clear();
        self.rows.clear();
        self.seen.clear();
        self.by_lens.clear();
        self.by_family.clear();
        self.runs.clear();
        self.usage = None;
    }

    /// Counts one ballot of this panel's candidate.
    pub fn add(&mut self, b: &Ballot, at: &dyn Fn() -> String) -> Result<()> {
        if b.candidate != self.candidate {
            bail!(
                "{}: a record about candidate {}, but the records before it are about {}",
                at(),
                short_seal(b.candidate),
                short_seal(&self.candidate)
            );
        }
        let j = &b.judge;
        let run = self.run(b.run, b.panel_size, at)?;
        if self.counted(j.judge, run) {
            bail!(
                "{}: judge {:?} of run {:?} is already counted",
                at(),
                j.judge,
                b.run
            );
        }
        self.counts.add(j.verdict);
        self.runs[run].counted += 1;
        self.by_lens.add(&mut self.text, j.lens, j.verdict);
        let family = j.family.unwrap_or("unknown");
        self.by_family.add(&mut self.text, family, j.verdict);
        let t = &mut self.text;
        let row = Row {
            judge: keep(t, j.judge),
            lens: keep(t, j.lens),
            seat: keep(t, j.seat),
            family: j.family.map(|s| keep(t, s)),
            verdict: j.verdict,
            status: j.status,
            reason: j.reason.map(|s| keep(t, s)),
            confidence: j.confidence,
            cause: j.cause.map(|s| keep(t, s)),
            run,
        };
        self.rows.push(row);
        if let Some(u) = b.usage {
            self.usage.get_or_insert_with(Usage::default).add(u);
        }
        Ok(())
    }

    /// The index of the ballot's run, checking the size it announces against its run's.
    fn run(&mut self, folder: &str, size: usize, at: &dyn Fn() -> String) -> Result<usize> {
        let Some(i) = self
            .runs
            .iter()
            .position(|r| r.folder.of(&self.text) == folder)
        else {
            let folder = keep(&mut self.text, folder);
            self.runs.push(Run {
                folder,
                size,
                counted: 0,
            });
            return Ok(self.runs.len() - 1);
        };
        let run = &mut self.runs[i];
        if run.size == 0 {
            run.size = size;
        } else if size != 0 && size != run.size {
            bail!(
                "{}: panelSize {size} here, but {} in the records of run {folder:?} before it",
                at(),
                run.size
            );
        }
        Ok(i)
    }

    /// True when this judge of this run is counted already; remembers it otherwise.
    fn counted(&mut self, judge: &str, run: usize) -> bool {
        let text = &self.text;
        let same = |r: &Row| r.run == run && r.judge.of(text) == judge;
        if self.rows.len() < SCAN {
            return self.rows.iter().any(same);
        }
        if self.seen.is_empty() {
            for r in &self.rows {
                self.seen.insert(seat_hash(r.judge.of(text), r.run));
            }
        }
        // A hash seen before is most likely the same judge; the scan makes sure.
        !self.seen.insert(seat_hash(judge, run)) && self.rows.iter().any(same)
    }

    /// True when every judge the records announced has been counted.
    pub fn is_full(&self) -> bool {
        !self.runs.is_empty() && self.runs.iter().all(|r| r.size != 0 && r.counted >= r.size)
    }

    /// True when some run did not say how many judges it has.
    fn size_unknown(&self) -> bool {
        self.runs.iter().any(|r| r.size == 0)
    }

    /// The panel's tally. `agree` is checked against the panel's size here, because the
    /// size is known only once the records are read.
    pub fn close(&self, agree: Option<usize>) -> Result<Tally<'_>> {
        let text = &self.text;
        let missing = self.runs.iter().map(|r| missing(r.size, r.counted)).sum();
        let mut counts = self.counts;
        counts.judges += missing;
        counts.abstained += missing;
        let threshold = threshold(agree, counts.judges)?;
        let status = exit_status(counts.holds, counts.abstained, threshold);
        let opt = |s: Option<Span>| s.map(|s| s.of(text));
        let mut judges: Vec<Judge> = self
            .rows
            .iter()
            .map(|r| Judge {
                judge: r.judge.of(text),
                lens: r.lens.of(text),
                seat: r.seat.of(text),
                family: opt(r.family),
                verdict: r.verdict,
                status: r.status,
                reason: opt(r.reason),
                confidence: r.confidence,
                cause: opt(r.cause),
            })
            .collect();
        judges.sort_by(|a, b| glob_order(a.judge, b.judge));
        let abstentions = judges
            .iter()
            .filter(|j| j.verdict.is_none())
            .map(|j| Abstention {
                judge: j.judge,
                status: j.status,
                cause: j.cause,
            })
            .collect();
        Ok(Tally {
            kind: "tally",
            candidate: &self.candidate,
            outcome: outcome(&counts),
            passed: status == exit::PASSED,
            decided: status != exit::UNDECIDED,
            threshold,
            counts,
            missing,
            judges,
            by_lens: self.by_lens.report(text),
            by_family: self.by_family.report(text),
            abstentions,
            runs: self
                .runs
                .iter()
                .map(|r| r.folder.of(text))
                .filter(|r| !r.is_empty())
                .collect(),
            usage: self.usage.clone().filter(|u| !u.is_empty()),
        })
    }
}

fn seat_hash(judge: &str, run: usize) -> u64 {
    let mut h = DefaultHasher::new();
    judge.hash(&mut h);
    run.hash(&mut h);
    h.finish()
}

/// A judge who gave no verdict, and why.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Abstention<'a> {
    pub judge: &'a str,
    pub status: Status,
    pub cause: Option<&'a str>,
}

/// One panel counted: the `tally` record.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub candidate: &'a str,
    pub outcome: Outcome,
    pub passed: bool,
    /// False when the missing answers could have changed the result (exit 3).
    pub decided: bool,
    pub threshold: usize,
    /// Missing judges count as judges who abstained.
    pub counts: Counts,
    /// Judges the records announced (`panelSize`) but that never sent a record.
    pub missing: usize,
    /// In the order the seed script's glob lists their files.
    pub judges: Vec<Judge<'a>>,
    #[serde(serialize_with = "as_map")]
    pub by_lens: Vec<(&'a str, Counts)>,
    #[serde(serialize_with = "as_map")]
    pub by_family: Vec<(&'a str, Counts)>,
    pub abstentions: Vec<Abstention<'a>>,
    pub runs: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

fn as_map<S: serde::Serializer>(groups: &[(&str, Counts)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(groups.iter().map(|(k, c)| (k, c)))
}

impl Tally<'_> {
    /// The exit status this panel alone would give.
    pub fn status(&self) -> u8 {
        exit_status(self.counts.holds, self.counts.abstained, self.threshold)
    }
}

// ---------------------------------------------------------------------------------------------
// The rules.

/// Unanimous or split when everyone answered; inconclusive as soon as anyone did not.
pub fn outcome(c: &Counts) -> Outcome {
    if c.abstained > 0 {
        Outcome::Inconclusive
    } else if c.holds == 0 || c.breaks == 0 {
        Outcome::Unanimous
    } else {
        Outcome::Split
    }
}

/// Holds needed to pass: `--agree N`, or by default every judge of the panel.
pub fn threshold(agree: Option<usize>, judges: usize) -> Result<usize> {
    match agree {
        None => Ok(judges),
        Some(0) => bail!("--agree 0: a panel needs at least one hold to pass"),
        Some(n) if n > judges => bail!("--agree {n}: the panel has only {judges} judge(s)"),
        Some(n) => Ok(n),
    }
}

/// Passed when the holds reach the threshold; undecided when the abstainers alone could still
/// reach it; otherwise the panel decided against.
pub fn exit_status(holds: usize, abstained: usize, threshold: usize) -> u8 {
    if holds >= threshold {
        exit::PASSED
    } else if holds + abstained >= threshold {
        exit::UNDECIDED
    } else {
        exit::AGAINST
    }
}

/// Judges a run announced but never sent.
pub fn missing(size: usize, counted: usize) -> usize {
    size.saturating_sub(counted)
}

/// How many panels of a stream passed, failed, or could not decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub panels: usize,
    pub passed: usize,
    pub failed: usize,
    pub undecided: usize,
}

/// The exit status of many panels. Any panel decided against makes the whole stream a failure
/// that no rerun can turn, so 1 wins over 3; 3 means every panel passed or could still pass.
/// (Input errors never get here: they exit 2 at once.)
pub fn batch_exit(t: &Totals) -> u8 {
    if t.failed > 0 {
        exit::AGAINST
    } else if t.undecided > 0 {
        exit::UNDECIDED
    } else {
        exit::PASSED
    }
}

/// Orders judges as the seed script's `"$OUT"/*.json` glob lists their files in the C locale:
/// bytewise on the file name, so `a-b` (`a-b.json`) comes before `a` (`a.json`).
pub fn glob_order(a: &str, b: &str) -> Ordering {
    a.bytes().chain(*b".json").cmp(b.bytes().chain(*b".json"))
}

/// A seal short enough for a message: `sha256:` and 12 hex digits.
pub fn short_seal(seal: &str) -> String {
    let cut = seal
        .char_indices()
        .nth("sha256:".len() + 12)
        .map_or(seal.len(), |(i, _)| i);
    if cut < seal.len() {
        format!("{}…", &seal[..cut])
    } else {
        seal.to_string()
    }
}

/// What the status column says: the verdict, or the way the judge abstained.
pub fn status_column<'a>(row: &Judge<'a>) -> &'a str {
    match row.verdict {
        Some(v) => v.as_str(),
        None => row.status.as_str(),
    }
}

/// What the reason column says. The script printed an unreadable judge's `reason` (usually
/// none); for the other abstentions we print the cause it could not know.
pub fn reason_column<'a>(row: &Judge<'a>) -> &'a str {
    let text = match (row.verdict, row.status) {
        (Some(_), _) | (None, Status::Unreadable) => row.reason,
        (None, _) => row.cause,
    };
    // `$(jq -r …)` drops trailing newlines.
    text.unwrap_or("").trim_end_matches('\n')
}

/// One judge's line, as `printf '%-12s %-10s %s\n'` pads it: by bytes, never cut.
pub fn judge_line(row: &Judge) -> Vec<u8> {
    let name = row.judge.trim_end_matches('\n');
    let mut line = Vec::with_capacity(64);
    pad(&mut line, name, 12);
    line.push(b' ');
    pad(&mut line, status_column(row), 10);
    line.push(b' ');
    line.extend_from_slice(reason_column(row).as_bytes());
    line.push(b'\n');
    line
}

fn pad(out: &mut Vec<u8>, text: &str, width: usize) {
    out.extend_from_slice(text.as_bytes());
    out.resize(out.len() + width.saturating_sub(text.len()), b' ');
}

/// The PANEL line. The script's three forms, and when a judge abstained other than by an
/// unreadable answer, a fourth that says how each abstained.
pub fn panel_line(c: &Counts, abstentions: &[Abstention], missing: usize) -> String {
    let (breaks, holds, abstained) = (c.breaks, c.holds, c.abstained);
    if abstained > 0 {
        let only_unreadable =
            missing == 0 && abstentions.iter().all(|a| a.status == Status::Unreadable);
        if only_unreadable {
            format!(
                "PANEL: {breaks} breaks / {holds} holds, and {abstained} judge(s) came back unreadable."
            )
        } else {
            format!(
                "PANEL: {breaks} breaks / {holds} holds, and {abstained} judge(s) gave no verdict ({}).",
                abstention_kinds(abstentions, missing)
            )
        }
    } else if breaks == 0 || holds == 0 {
        let said = if breaks > 0 { "breaks" } else { "holds" };
        format!("PANEL: unanimous — all {} say {said}.", breaks + holds)
    } else {
        format!(
            "PANEL: split {breaks}-{holds} — read the reasons yourself. The disagreement is the finding."
        )
    }
}

/// `1 missing, 1 timeout, 2 unreadable`: each way of abstaining, by name.
fn abstention_kinds(abstentions: &[Abstention], missing: usize) -> String {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for a in abstentions {
        *kinds.entry(a.status.as_str()).or_default() += 1;
    }
    if missing > 0 {
        kinds.insert("missing", missing);
    }
    kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The whole text report of one panel: the judges, a blank line, PANEL, the run folders.
pub fn write_report<W: Write>(out: &mut W, t: &Tally) -> io::Result<()> {
    for row in &t.judges {
        out.write_all(&judge_line(row))?;
    }
    writeln!(out)?;
    writeln!(out, "{}", panel_line(&t.counts, &t.abstentions, t.missing))?;
    for run in &t.runs {
        writeln!(out, "verdicts: {run}")?;
    }
    Ok(())
}

/// The closing line of a text stream of many panels.
pub fn panels_line(t: &Totals) -> String {
    format!(
        "PANELS: {} passed, {} failed, {} undecided",
        t.passed, t.failed, t.undecided
    )
}

// ---------------------------------------------------------------------------------------------
// Routing a stream of ballots to panels.

/// The panels of one stream. Without `each` there is one panel and a second candidate is an
/// error; with `each`, one open panel per candidate, closed as soon as it is complete.
#[derive(Default)]
pub struct Batch {
    each: bool,
    agree: Option<usize>,
    /// The panel of the previous ballot's candidate: the common case of records that arrive
    /// panel by panel never touches `waiting`.
    current: Option<Panel>,
    /// Other open panels, when panels interleave.
    waiting: HashMap<String, Panel>,
    /// A closed panel whose buffers the next one reuses.
    spare: Option<Panel>,
    next: u64,
}

impl Batch {
    pub fn new(each: bool, agree: Option<usize>) -> Batch {
        Batch {
            each,
            agree,
            ..Batch::default()
        }
    }

    pub fn add<W: Write>(
        &mut self,
        b: &Ballot,
        at: &dyn Fn() -> String,
        sink: &mut Sink<W>,
    ) -> Result<()> {
        if !self.each {
            // One panel: it closes only at the end, and Panel::add refuses another candidate.
            let panel = self.current.get_or_insert_with(|| Panel::new(b.candidate));
            return panel.add(b, at);
        }
        let same = self
            .current
            .as_ref()
            .is_some_and(|p| p.candidate == b.candidate);
        if !same {
            if let Some(prev) = self.current.take() {
                if prev.size_unknown() {
                    // Unknown size: its records are taken to arrive together.
                    self.emit(prev, sink)?;
                } else {
                    self.waiting.insert(prev.candidate.clone(), prev);
                }
            }
            let panel = match self.waiting.remove(b.candidate) {
                Some(p) => p,
                None => {
                    let mut p = self.spare.take().unwrap_or_default();
                    p.start(b.candidate, self.next);
                    self.next += 1;
                    p
                }
            };
            self.current = Some(panel);
        }
        let panel = self.current.as_mut().expect("a current panel");
        panel.add(b, at)?;
        if panel.is_full() {
            let full = self.current.take().expect("a current panel");
            self.emit(full, sink)?;
        }
        Ok(())
    }

    fn emit<W: Write>(&mut self, panel: Panel, sink: &mut Sink<W>) -> Result<()> {
        sink.tally(&panel.close(self.agree)?)?;
        self.spare = Some(panel);
        Ok(())
    }

    /// Closes the panels still open, in the order they were first seen.
    pub fn finish<W: Write>(&mut self, sink: &mut Sink<W>) -> Result<()> {
        let mut rest: Vec<Panel> = self.waiting.drain().map(|(_, p)| p).collect();
        rest.extend(self.current.take());
        rest.sort_by_key(|p| p.seq);
        for panel in rest {
            self.emit(panel, sink)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Writing tallies.

/// Writes each tally as it closes, and keeps the totals for the summary.
pub struct Sink<W: Write> {
    pub out: W,
    /// One tally's JSON, reused.
    buf: Vec<u8>,
    json: bool,
    eager: bool,
    pub totals: Totals,
    /// The exit status of the last panel written.
    pub last_status: u8,
}

/// The closing record of `--each --json`.
#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(flatten)]
    totals: &'a Totals,
}

impl<W: Write> Sink<W> {
    pub fn new(out: W, json: bool, eager: bool) -> Sink<W> {
        Sink {
            out,
            buf: Vec::new(),
            json,
            eager,
            totals: Totals::default(),
            last_status: exit::PASSED,
        }
    }

    pub fn tally(&mut self, t: &Tally) -> Result<()> {
        let status = t.status();
        if self.json {
            self.buf.clear();
            tally_json(&mut self.buf, t);
            self.out.write_all(&self.buf)?;
        } else {
            if self.totals.panels > 0 {
                writeln!(self.out)?;
            }
            write_report(&mut self.out, t)?;
        }
        self.totals.panels += 1;
        match status {
            exit::PASSED => self.totals.passed += 1,
            exit::UNDECIDED => self.totals.undecided += 1,
            _ => self.totals.failed += 1,
        }
        self.last_status = status;
        if self.eager {
            self.out.flush()?;
        }
        Ok(())
    }

    /// The summary that closes a stream of many panels.
    pub fn summary(&mut self) -> Result<()> {
        if self.json {
            let summary = Summary {
                kind: "tally-summary",
                totals: &self.totals,
            };
            write_json(&mut self.out, &summary)?;
        } else {
            writeln!(self.out)?;
            writeln!(self.out, "{}", panels_line(&self.totals))?;
        }
        Ok(())
    }
}

/// One compact JSON line. The write error stays an `io::Error`, so that a broken pipe is
/// still recognised as one (a `serde_json::Error` hides it from the error chain).
fn write_json<W: Write, T: Serialize>(out: &mut W, rec: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, rec).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

// ---------------------------------------------------------------------------------------------
// Fast paths for streams of millions of records.

/// Writes a tally as one compact JSON line, byte for byte what serde_json writes for it (a
/// test holds the two together), but with the keys written whole instead of escaped byte by
/// byte: that escaping was the largest cost of `--each --json`.
pub fn tally_json(buf: &mut Vec<u8>, t: &Tally) {
    buf.extend_from_slice(b"{\"type\":");
    json_str(buf, t.kind);
    buf.extend_from_slice(b",\"candidate\":");
    json_str(buf, t.candidate);
    buf.extend_from_slice(b",\"outcome\":");
    json_str(buf, t.outcome.as_str());
    buf.extend_from_slice(b",\"passed\":");
    buf.extend_from_slice(if t.passed { b"true" } else { b"false" });
    buf.extend_from_slice(b",\"decided\":");
    buf.extend_from_slice(if t.decided { b"true" } else { b"false" });
    buf.extend_from_slice(b",\"threshold\":");
    json_uint(buf, t.threshold);
    buf.extend_from_slice(b",\"counts\":");
    counts_json(buf, &t.counts);
    buf.extend_from_slice(b",\"missing\":");
    json_uint(buf, t.missing);
    buf.extend_from_slice(b",\"judges\":[");
    for (i, j) in t.judges.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"judge\":");
        json_str(buf, j.judge);
        buf.extend_from_slice(b",\"lens\":");
        json_str(buf, j.lens);
        buf.extend_from_slice(b",\"seat\":");
        json_str(buf, j.seat);
        buf.extend_from_slice(b",\"family\":");
        json_opt_str(buf, j.family);
        buf.extend_from_slice(b",\"verdict\":");
        json_opt_str(buf, j.verdict.map(Verdict::as_str));
        buf.extend_from_slice(b",\"status\":");
        json_str(buf, j.status.as_str());
        buf.extend_from_slice(b",\"reason\":");
        json_opt_str(buf, j.reason);
        buf.extend_from_slice(b",\"confidence\":");
        match j.confidence {
            Some(c) => serde_json::to_writer(&mut *buf, &c).expect("a Vec takes any write"),
            None => buf.extend_from_slice(b"null"),
        }
        buf.push(b'}');
    }
    for (key, groups) in [
        (&b"],\"byLens\":{"[..], &t.by_lens),
        (b"},\"byFamily\":{", &t.by_family),
    ] {
        buf.extend_from_slice(key);
        for (i, (name, c)) in groups.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            json_str(buf, name);
            buf.push(b':');
            counts_json(buf, c);
        }
    }
    buf.extend_from_slice(b"},\"abstentions\":[");
    for (i, a) in t.abstentions.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"judge\":");
        json_str(buf, a.judge);
        buf.extend_from_slice(b",\"status\":");
        json_str(buf, a.status.as_str());
        buf.extend_from_slice(b",\"cause\":");
        json_opt_str(buf, a.cause);
        buf.push(b'}');
    }
    buf.extend_from_slice(b"],\"runs\":[");
    for (i, r) in t.runs.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        json_str(buf, r);
    }
    buf.push(b']');
    if let Some(u) = &t.usage {
        buf.extend_from_slice(b",\"usage\":");
        serde_json::to_writer(&mut *buf, u).expect("a Vec takes any write");
    }
    buf.extend_from_slice(b"}\n");
}

fn counts_json(buf: &mut Vec<u8>, c: &Counts) {
    buf.extend_from_slice(b"{\"judges\":");
    json_uint(buf, c.judges);
    buf.extend_from_slice(b",\"holds\":");
    json_uint(buf, c.holds);
    buf.extend_from_slice(b",\"breaks\":");
    json_uint(buf, c.breaks);
    buf.extend_from_slice(b",\"abstained\":");
    json_uint(buf, c.abstained);
    buf.push(b'}');
}

fn json_uint(buf: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// A JSON string: copied whole when nothing in it needs escaping (the usual case), else
/// escaped by serde_json.
fn json_str(buf: &mut Vec<u8>, s: &str) {
    let plain = s
        .bytes()
        .fold(true, |ok, b| ok & (b >= 0x20 && b != b'"' && b != b'\\'));
    if plain {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        serde_json::to_writer(&mut *buf, s).expect("a Vec takes any write");
    }
}

fn json_opt_str(buf: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => json_str(buf, s),
        None => buf.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> String {
        "in: line 7".into()
    }

    fn ballot(judge: &str, verdict: Option<Verdict>, status: Status) -> Ballot<'_> {
        Ballot {
            candidate: "sha256:aaaa",
            panel_size: 0,
            usage: None,
            run: "/tmp/run",
            judge: Judge {
                judge,
                lens: "edges",
                seat: "claude:haiku",
                family: Some("claude"),
                verdict,
                status,
                reason: Some("because"),
                confidence: Some(0.5),
                cause: Some("no answer in 60 s"),
            },
        }
    }

    fn counts(holds: usize, breaks: usize, abstained: usize) -> Counts {
        Counts {
            judges: holds + breaks + abstained,
            holds,
            breaks,
            abstained,
        }
    }

    fn abstained(status: Status) -> Abstention<'static> {
        Abstention {
            judge: "j",
            status,
            cause: None,
        }
    }

    #[test]
    fn outcome_is_inconclusive_as_soon_as_anyone_abstains() {
        assert_eq!(outcome(&counts(3, 0, 0)), Outcome::Unanimous);
        assert_eq!(outcome(&counts(0, 3, 0)), Outcome::Unanimous);
        assert_eq!(outcome(&counts(2, 1, 0)), Outcome::Split);
        assert_eq!(outcome(&counts(3, 0, 1)), Outcome::Inconclusive);
    }

    #[test]
    fn exit_status_separates_against_from_undecided() {
        assert_eq!(exit_status(3, 0, 3), exit::PASSED);
        assert_eq!(exit_status(2, 1, 2), exit::PASSED);
        assert_eq!(exit_status(2, 1, 3), exit::UNDECIDED);
        assert_eq!(exit_status(1, 1, 3), exit::AGAINST);
        assert_eq!(exit_status(0, 0, 1), exit::AGAINST);
    }

    #[test]
    fn threshold_defaults_to_the_whole_panel_and_stays_within_it() {
        assert_eq!(threshold(None, 3).unwrap(), 3);
        assert_eq!(threshold(Some(2), 3).unwrap(), 2);
        assert!(threshold(Some(0), 3).is_err());
        assert_eq!(
            threshold(Some(4), 3).unwrap_err().to_string(),
            "--agree 4: the panel has only 3 judge(s)"
        );
    }

    #[test]
    fn one_failed_panel_outweighs_undecided_ones() {
        let t = |passed, failed, undecided| Totals {
            panels: passed + failed + undecided,
            passed,
            failed,
            undecided,
        };
        assert_eq!(batch_exit(&t(2, 0, 0)), exit::PASSED);
        assert_eq!(batch_exit(&t(2, 0, 1)), exit::UNDECIDED);
        assert_eq!(batch_exit(&t(0, 1, 1)), exit::AGAINST);
    }

    #[test]
    fn panel_line_keeps_the_scripts_three_forms() {
        assert_eq!(
            panel_line(&counts(0, 3, 0), &[], 0),
            "PANEL: unanimous — all 3 say breaks."
        );
        assert_eq!(
            panel_line(&counts(3, 0, 0), &[], 0),
            "PANEL: unanimous — all 3 say holds."
        );
        assert_eq!(
            panel_line(&counts(2, 1, 0), &[], 0),
            "PANEL: split 1-2 — read the reasons yourself. The disagreement is the finding."
        );
        assert_eq!(
            panel_line(&counts(0, 2, 1), &[abstained(Status::Unreadable)], 0),
            "PANEL: 2 breaks / 0 holds, and 1 judge(s) came back unreadable."
        );
    }

    #[test]
    fn panel_line_names_abstentions_the_script_could_not_see() {
        let a = [abstained(Status::Unreadable), abstained(Status::Timeout)];
        assert_eq!(
            panel_line(&counts(1, 1, 2), &a, 0),
            "PANEL: 1 breaks / 1 holds, and 2 judge(s) gave no verdict (1 timeout, 1 unreadable)."
        );
        assert_eq!(
            panel_line(&counts(2, 0, 1), &[], 1),
            "PANEL: 0 breaks / 2 holds, and 1 judge(s) gave no verdict (1 missing)."
        );
    }

    #[test]
    fn judge_lines_pad_by_bytes_and_never_cut() {
        let mut b = ballot("édges", Some(Verdict::Holds), Status::Ok).judge;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "édges       holds      because\n"
        );
        b.judge = "a-very-long-judge-name";
        b.verdict = None;
        b.status = Status::Timeout;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "a-very-long-judge-name timeout    no answer in 60 s\n"
        );
        b.status = Status::Unreadable;
        b.reason = None;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "a-very-long-judge-name unreadable \n"
        );
    }

    #[test]
    fn judges_sort_as_the_glob_lists_their_files() {
        let mut names = vec!["edges", "Zed", "edges-2", "correctness"];
        names.sort_by(|a, b| glob_order(a, b));
        assert_eq!(names, ["Zed", "correctness", "edges-2", "edges"]);
    }

    #[test]
    fn seals_are_shortened_for_messages() {
        assert_eq!(
            short_seal("sha256:0123456789abcdef0123"),
            "sha256:0123456789ab…"
        );
        assert_eq!(short_seal("sha256:01"), "sha256:01");
    }

    #[test]
    fn a_panel_refuses_a_judge_counted_twice_and_another_candidate() {
        let mut p = Panel::new("sha256:aaaa");
        p.add(&ballot("edges", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap();
        let err = p
            .add(&ballot("edges", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 7: judge \"edges\" of run \"/tmp/run\" is already counted"
        );
        let mut rerun = ballot("edges", None, Status::Timeout);
        rerun.run = "/tmp/run2";
        p.add(&rerun, &at).unwrap();
        let mut other = ballot("x", Some(Verdict::Holds), Status::Ok);
        other.candidate = "sha256:bbbb";
        assert!(p.add(&other, &at).unwrap_err().to_string().contains(
            "about candidate sha256:bbbb, but the records before it are about sha256:aaaa"
        ));
    }

    #[test]
    fn hand_written_json_is_serde_jsons() {
        let seal = "sha256:aa\"bb";
        let mut p = Panel::new(seal);
        let mut b = ballot("j\n1", Some(Verdict::Breaks), Status::Ok);
        b.candidate = seal;
        b.judge.reason = Some("tab\there, “quoted” \\ and \u{1}");
        b.judge.confidence = Some(0.1 + 0.2);
        let usage = Usage {
            input_tokens: Some(12),
            cost_usd: Some(0.0021),
            ..Usage::default()
        };
        b.usage = Some(&usage);
        p.add(&b, &at).unwrap();
        let mut c = ballot("j2", None, Status::RateLimited);
        c.judge.family = None;
        c.judge.confidence = None;
        c.run = "/tmp/other";
        c.candidate = seal;
        p.add(&c, &at).unwrap();
        let mut d = ballot("j3", None, Status::Unreadable);
        d.judge.cause = None;
        d.run = "";
        d.candidate = seal;
        p.add(&d, &at).unwrap();
        for agree in [None, Some(1)] {
            let t = p.close(agree).unwrap();
            let mut ours = Vec::new();
            tally_json(&mut ours, &t);
            let mut theirs = serde_json::to_vec(&t).unwrap();
            theirs.push(b'\n');
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs).unwrap()
            );
        }
        let mut q = Panel::new("sha256:aaaa");
        q.add(&ballot("x", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap();
        let t = q.close(None).unwrap();
        let mut ours = Vec::new();
        tally_json(&mut ours, &t);
        assert_eq!(
            ours,
            [serde_json::to_vec(&t).unwrap(), b"\n".to_vec()].concat()
        );
    }

    fn verdict_line(judge: &str) -> String {
        format!(
            r#"{{"type":"verdict","judge":"{judge}","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","status":"ok"}}"#
        )
    }

    /// What the reading threads make of `text`, as (judge, line) pairs and the error, if any.
    fn read_through(text: &[u8], block: usize) -> (Vec<(String, u64)>, Option<String>) {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "panel-tally-unit-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        std::fs::write(&path, text).unwrap();
        let mut got = Vec::new();
        let mut error = None;
        let mut last = false;
        for chunk in read_ahead(vec![path.to_str().unwrap().to_string()], block) {
            for p in &chunk.ballots {
                got.push((p.judge.of(&chunk.text).to_string(), p.line));
            }
            if let Some(e) = chunk.error {
                error = Some(e.to_string().replace(path.to_str().unwrap(), "t"));
                break;
            }
            last = chunk.last;
        }
        std::fs::remove_file(&path).unwrap();
        assert!(last || error.is_some(), "no end of input");
        (got, error)
    }

    #[test]
    fn lines_are_read_in_order_with_their_numbers() {
        let text = format!(
            "{}\r\n{}\n\n  \n{}\n{}",
            verdict_line("a"),
            verdict_line("b"),
            verdict_line("c"),
            verdict_line("d")
        );
        let want: Vec<(String, u64)> = [("a", 1), ("b", 2), ("c", 5), ("d", 6)]
            .iter()
            .map(|(j, n)| (j.to_string(), *n))
            .collect();
        for block in [1, 7, 100, 1 << 18] {
            assert_eq!(
                read_through(text.as_bytes(), block),
                (want.clone(), None),
                "block {block}"
            );
        }
        let many: String = (0..500)
            .map(|i| verdict_line(&format!("j{i}")) + "\n")
            .collect();
        let (got, err) = read_through(many.as_bytes(), 300);
        assert_eq!(err, None);
        assert_eq!(got.len(), 500);
        assert!(
            got.iter()
                .enumerate()
                .all(|(i, (j, n))| *j == format!("j{i}") && *n == i as u64 + 1)
        );
    }

    #[test]
    fn a_bad_line_stops_the_reading_after_the_lines_before_it() {
        let mut text = format!("{}\n{}\n", verdict_line("a"), verdict_line("b")).into_bytes();
        text.extend_from_slice(b"\xff\n");
        text.extend_from_slice(verdict_line("c").as_bytes());
        for block in [5, 1 << 18] {
            let (got, err) = read_through(&text, block);
            assert_eq!(got.len(), 2);
            assert_eq!(err.as_deref(), Some("t: line 3: not UTF-8"));
        }
        let (got, err) = read_through(b"\n{\"type\":\"review\"}\n", 4);
        assert!(got.is_empty());
        assert_eq!(
            err.as_deref(),
            Some("t: line 2: a review record; reviews go through panel-merge")
        );
        assert_eq!(read_through(b"", 4), (vec![], None));
    }

    #[test]
    fn large_panels_find_a_judge_counted_twice_through_the_hash() {
        let names: Vec<String> = (0..100).map(|i| format!("j{i}")).collect();
        let mut p = Panel::new("sha256:aaaa");
        for (i, name) in names.iter().enumerate() {
            let mut b = ballot(name, Some(Verdict::Holds), Status::Ok);
            let lens = format!("lens{i}");
            b.judge.lens = &lens;
            p.add(&b, &at).unwrap();
        }
        for name in ["j0", "j40", "j99"] {
            assert!(
                p.add(&ballot(name, Some(Verdict::Holds), Status::Ok), &at)
                    .is_err()
            );
        }
        p.add(&ballot("j100", None, Status::Failed), &at).unwrap();
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(100, 0, 1));
        assert_eq!(t.by_lens.len(), 101);
        assert_eq!(t.by_lens[0], ("edges", counts(0, 0, 1)));
        assert_eq!(t.by_lens[1], ("lens0", counts(1, 0, 0)));
    }

    #[test]
    fn the_view_reads_what_the_record_reads() {
        let lines = [
            r#"{"type":"verdict","judge":"j\n","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","reason":"a \"b\"","status":"ok","usage":{"inputTokens":3},"panelSize":2,"run":"r"}"#,
            r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":null,"status":"timeout","cause":"slow"}"#,
        ];
        for line in lines {
            let rec: VerdictRecord = records::parse(line, &at, &["verdict"]).unwrap();
            let view = parse_verdict(line, &at).unwrap();
            let b = verdict_ballot(&view, &at).unwrap();
            assert_eq!(b.judge.judge, rec.judge);
            assert_eq!(b.judge.reason, rec.reason.as_deref());
            assert_eq!(b.judge.cause, rec.cause.as_deref());
            assert_eq!(b.usage, rec.usage.as_ref());
            assert_eq!((b.panel_size, b.run), (rec.panel_size, rec.run.as_str()));
        }
        // Wrong types are refused as VerdictRecord refuses them.
        let bad = r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":null,"status":"timeout","attempts":-1}"#;
        assert!(records::parse::<VerdictRecord>(bad, &at, &["verdict"]).is_err());
        let err = parse_verdict(bad, &at).unwrap_err().to_string();
        assert!(
            err.starts_with("in: line 7: a verdict record that does not fit: invalid value"),
            "{err}"
        );
    }

    #[test]
    fn a_closed_panel_counts_missing_judges_as_abstained() {
        let mut p = Panel::new("sha256:aaaa");
        let sized = |mut b: Ballot<'static>, size| {
            b.panel_size = size;
            b
        };
        p.add(
            &sized(ballot("b", Some(Verdict::Holds), Status::Ok), 3),
            &at,
        )
        .unwrap();
        p.add(&sized(ballot("a", None, Status::Timeout), 0), &at)
            .unwrap();
        assert!(!p.is_full());
        let err = p
            .add(&sized(ballot("c", None, Status::Timeout), 4), &at)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 7: panelSize 4 here, but 3 in the records of run \"/tmp/run\" before it"
        );
        // A rerun of one judge is a run of its own, with its own size.
        let mut rerun = sized(ballot("a", Some(Verdict::Holds), Status::Ok), 1);
        rerun.run = "/tmp/rerun";
        p.add(&rerun, &at).unwrap();
        assert!(!p.is_full());
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(2, 0, 2));
        assert_eq!(t.missing, 1);
        assert_eq!(t.runs, ["/tmp/run", "/tmp/rerun"]);
        let mut p = Panel::new("sha256:aaaa");
        p.add(
            &sized(ballot("b", Some(Verdict::Holds), Status::Ok), 3),
            &at,
        )
        .unwrap();
        p.add(&sized(ballot("a", None, Status::Timeout), 3), &at)
            .unwrap();
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(1, 0, 2));
        assert_eq!(t.missing, 1);
        assert_eq!(t.outcome, Outcome::Inconclusive);
        assert_eq!(t.status(), exit::UNDECIDED);
        assert!(!t.decided && !t.passed);
        assert_eq!(t.judges[0].judge, "a");
        assert_eq!(t.abstentions.len(), 1);
        assert_eq!(t.runs, ["/tmp/run"]);
        assert_eq!(t.by_lens, [("edges", counts(1, 0, 1))]);
    }

    #[test]
    fn a_record_that_contradicts_itself_is_refused() {
        let line = r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","status":"timeout"}"#;
        let rec = parse_verdict(line, &at).unwrap();
        assert_eq!(
            verdict_ballot(&rec, &at).unwrap_err().to_string(),
            "in: line 7: judge \"j\" says holds but its status is timeout"
        );
    }

    #[test]
    fn a_record_of_another_type_names_its_tool() {
        let line = r#"{"type":"tally","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":null,"status":"ok"}"#;
        let err = parse_verdict(line, &at).unwrap_err().to_string();
        assert!(err.starts_with("in: line 7: a tally record; "), "{err}");
        let err = parse_verdict(r#"{"type":"review"}"#, &at)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "in: line 7: a review record; reviews go through panel-merge"
        );
    }
}
