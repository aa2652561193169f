//! `panel-tally`: count the verdicts of a panel in code and report them.
//!
//! The pieces, so that other streams (reviews, a synthesis, PR verdicts) can be added later:
//! a *source* turns one input record into a [`Ballot`]; a [`Panel`] keeps the counts and one
//! short [`Row`] per judge; a [`Batch`] routes ballots to panels and closes each one into a
//! [`Tally`]; a [`Sink`] writes tallies as text or JSON. The rules themselves (outcome,
//! threshold, exit status, the report's lines) are small named functions below.

use std::cmp::Ordering;
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};
use serde::Serialize;

use crate::docs::ToolDoc;
use crate::input::{Input, paths_or_stdin};
use crate::record::{self, Status, Usage, Verdict, VerdictRecord};
use crate::run::exit;

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
    /// A panel closes as soon as it has as many records as its `panelSize`; panels of unknown
    /// size close when the candidate changes; the rest close at the end of input.
    #[arg(long)]
    pub each: bool,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: &[
        (
            "0",
            "Passed: at least N judges said holds (--agree N; by default every judge). With --each: every panel passed.",
        ),
        (
            "1",
            "The panel decided against: too few holds even if every abstainer had said holds. With --each: at least one panel did.",
        ),
        (
            "2",
            "Usage or input error: one line on standard error names the file and line.",
        ),
        (
            "3",
            "No decision: the missing answers (abstentions, missing judges) could have changed the outcome; rerun the abstainers. With --each: no panel decided against, but at least one is undecided.",
        ),
    ],
    examples: &[
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

/// The clap definition of `panel-tally`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.agree == Some(0) {
        bail!("--agree 0: a panel needs at least one hold to pass");
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
    let mut any = false;
    for path in &inputs {
        let mut input = Input::open(path)?;
        let mut line = String::new();
        while input.next_line(&mut line)? {
            if line.trim().is_empty() {
                continue;
            }
            let at = || input.at();
            let ballot = verdict_ballot(parse_verdict(&line, &at)?, &at)?;
            any = true;
            batch.add(ballot, &at, &mut sink)?;
        }
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

/// What the counter needs from one record, whatever stream it came from.
#[derive(Debug)]
pub struct Ballot {
    /// The seal of the candidate; a panel is about one candidate.
    pub candidate: String,
    /// How many judges the panel has; 0 when unknown.
    pub panel_size: usize,
    pub usage: Option<Usage>,
    pub row: Row,
}

/// Parses a verdict record with one pass over the line; only a bad line is read again, to say
/// precisely what is wrong with it.
fn parse_verdict(line: &str, at: &dyn Fn() -> String) -> Result<VerdictRecord> {
    match serde_json::from_str::<VerdictRecord>(line) {
        Ok(rec) if rec.kind == "verdict" => Ok(rec),
        Ok(rec) => bail!(
            "{}: a {} record; {}",
            at(),
            rec.kind,
            record::destination(&rec.kind)
        ),
        Err(_) => record::parse(line, at, &["verdict"]),
    }
}

/// A verdict record as a ballot. A verdict with an abstainer's status, or an `ok` without a
/// verdict, contradicts itself and is refused rather than guessed.
fn verdict_ballot(rec: VerdictRecord, at: &dyn Fn() -> String) -> Result<Ballot> {
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
    Ok(Ballot {
        candidate: rec.candidate,
        panel_size: rec.panel_size,
        usage: rec.usage,
        row: Row {
            judge: rec.judge,
            lens: rec.lens,
            seat: rec.seat,
            family: rec.family,
            verdict: rec.verdict,
            status: rec.status,
            reason: rec.reason,
            confidence: rec.confidence,
            cause: rec.cause,
            run: rec.run,
        },
    })
}

fn input_names(inputs: &[String]) -> String {
    inputs
        .iter()
        .map(|p| if p == "-" { "<stdin>" } else { p.as_str() })
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------------------------
// Counting one panel.

/// One judge's answer, cut down to what a tally reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub judge: String,
    pub lens: String,
    pub seat: String,
    pub family: Option<String>,
    pub verdict: Option<Verdict>,
    pub status: Status,
    pub reason: Option<String>,
    pub confidence: Option<f64>,
    /// Reported in `abstentions`, not per judge.
    #[serde(skip)]
    pub cause: Option<String>,
    /// Reported in `runs`; kept here to tell a judge counted twice from a rerun.
    #[serde(skip)]
    pub run: String,
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

/// One panel being counted: counts and one row per judge, never the whole records.
#[derive(Debug)]
pub struct Panel {
    candidate: String,
    /// Declared by the records; 0 when unknown.
    size: usize,
    counts: Counts,
    rows: Vec<Row>,
    /// Hashes of (judge, run) seen, to refuse a judge counted twice without scanning the rows.
    seen: HashSet<u64>,
    by_lens: BTreeMap<String, Counts>,
    by_family: BTreeMap<String, Counts>,
    runs: Vec<String>,
    usage: Option<Usage>,
}

impl Panel {
    pub fn new(candidate: String, size: usize) -> Panel {
        Panel {
            candidate,
            size,
            counts: Counts::default(),
            rows: Vec::new(),
            seen: HashSet::new(),
            by_lens: BTreeMap::new(),
            by_family: BTreeMap::new(),
            runs: Vec::new(),
            usage: None,
        }
    }

    /// Counts one ballot of this panel's candidate.
    pub fn add(&mut self, b: Ballot, at: &dyn Fn() -> String) -> Result<()> {
        if b.candidate != self.candidate {
            bail!(
                "{}: a record about candidate {}, but the records before it are about {}",
                at(),
                short_seal(&b.candidate),
                short_seal(&self.candidate)
            );
        }
        if b.panel_size != 0 {
            if self.size == 0 {
                self.size = b.panel_size;
            } else if self.size != b.panel_size {
                bail!(
                    "{}: panelSize {} here, but {} in the records before it",
                    at(),
                    b.panel_size,
                    self.size
                );
            }
        }
        let row = b.row;
        if !self.seen.insert(seat_hash(&row.judge, &row.run)) && self.counted(&row) {
            bail!(
                "{}: judge {:?} of run {:?} is already counted",
                at(),
                row.judge,
                row.run
            );
        }
        self.counts.add(row.verdict);
        count_in(&mut self.by_lens, &row.lens, row.verdict);
        count_in(
            &mut self.by_family,
            row.family.as_deref().unwrap_or("unknown"),
            row.verdict,
        );
        if !self.runs.contains(&row.run) {
            self.runs.push(row.run.clone());
        }
        if let Some(u) = &b.usage {
            self.usage.get_or_insert_with(Usage::default).add(u);
        }
        self.rows.push(row);
        Ok(())
    }

    fn counted(&self, row: &Row) -> bool {
        self.rows
            .iter()
            .any(|r| r.judge == row.judge && r.run == row.run)
    }

    /// True when every judge the records announced has been counted.
    pub fn is_full(&self) -> bool {
        self.size != 0 && self.counts.judges >= self.size
    }

    /// Closes the panel into its tally. `agree` is checked against the panel's size here,
    /// because the size is known only once the records are read.
    pub fn close(self, agree: Option<usize>) -> Result<Tally> {
        let missing = missing(self.size, self.counts.judges);
        let mut counts = self.counts;
        counts.judges += missing;
        counts.abstained += missing;
        let threshold = threshold(agree, counts.judges)?;
        let status = exit_status(counts.holds, counts.abstained, threshold);
        let mut judges = self.rows;
        judges.sort_by(|a, b| glob_order(&a.judge, &b.judge));
        let abstentions = judges
            .iter()
            .filter(|r| r.verdict.is_none())
            .map(|r| Abstention {
                judge: r.judge.clone(),
                status: r.status,
                cause: r.cause.clone(),
            })
            .collect();
        Ok(Tally {
            kind: "tally",
            candidate: self.candidate,
            outcome: outcome(&counts),
            passed: status == exit::PASSED,
            decided: status != exit::UNDECIDED,
            threshold,
            counts,
            missing,
            judges,
            by_lens: self.by_lens,
            by_family: self.by_family,
            abstentions,
            runs: self.runs.into_iter().filter(|r| !r.is_empty()).collect(),
            usage: self.usage.filter(|u| !u.is_empty()),
        })
    }
}

fn count_in(map: &mut BTreeMap<String, Counts>, key: &str, verdict: Option<Verdict>) {
    match map.get_mut(key) {
        Some(c) => c.add(verdict),
        None => {
            let mut c = Counts::default();
            c.add(verdict);
            map.insert(key.to_string(), c);
        }
    }
}

fn seat_hash(judge: &str, run: &str) -> u64 {
    let mut h = DefaultHasher::new();
    judge.hash(&mut h);
    run.hash(&mut h);
    h.finish()
}

/// A judge who gave no verdict, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Abstention {
    pub judge: String,
    pub status: Status,
    pub cause: Option<String>,
}

/// One panel counted: the `tally` record.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub candidate: String,
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
    pub judges: Vec<Row>,
    pub by_lens: BTreeMap<String, Counts>,
    pub by_family: BTreeMap<String, Counts>,
    pub abstentions: Vec<Abstention>,
    pub runs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl Tally {
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

/// Judges the records announced but never sent.
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
pub fn status_column(row: &Row) -> &str {
    match row.verdict {
        Some(v) => v.as_str(),
        None => row.status.as_str(),
    }
}

/// What the reason column says. The script printed an unreadable judge's `reason` (usually
/// none); for the other abstentions we print the cause it could not know.
pub fn reason_column(row: &Row) -> &str {
    let text = match (row.verdict, row.status) {
        (Some(_), _) | (None, Status::Unreadable) => row.reason.as_deref(),
        (None, _) => row.cause.as_deref(),
    };
    // `$(jq -r …)` drops trailing newlines.
    text.unwrap_or("").trim_end_matches('\n')
}

/// One judge's line, as `printf '%-12s %-10s %s\n'` pads it: by bytes, never cut.
pub fn judge_line(row: &Row) -> Vec<u8> {
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
pub struct Batch {
    each: bool,
    agree: Option<usize>,
    /// Open panels by candidate, with the order they were first seen in.
    open: HashMap<String, (u64, Panel)>,
    next: u64,
    /// The candidate of the previous ballot: a panel of unknown size closes when it changes.
    last: Option<String>,
    /// The one panel when not `each`.
    single: Option<Panel>,
}

impl Batch {
    pub fn new(each: bool, agree: Option<usize>) -> Batch {
        Batch {
            each,
            agree,
            open: HashMap::new(),
            next: 0,
            last: None,
            single: None,
        }
    }

    pub fn add<W: Write>(
        &mut self,
        b: Ballot,
        at: &dyn Fn() -> String,
        sink: &mut Sink<W>,
    ) -> Result<()> {
        if !self.each {
            // One panel: it closes only at the end, and Panel::add refuses another candidate.
            let panel = self
                .single
                .get_or_insert_with(|| Panel::new(b.candidate.clone(), b.panel_size));
            return panel.add(b, at);
        }
        if self.last.as_deref() != Some(b.candidate.as_str()) {
            if let Some(prev) = self.last.take() {
                let size_unknown = self.open.get(&prev).is_some_and(|(_, p)| p.size == 0);
                if size_unknown {
                    let (_, panel) = self.open.remove(&prev).expect("open panel");
                    sink.tally(panel.close(self.agree)?)?;
                }
            }
            self.last = Some(b.candidate.clone());
        }
        let full = match self.open.entry(b.candidate.clone()) {
            Entry::Occupied(mut e) => {
                let panel = &mut e.get_mut().1;
                panel.add(b, at)?;
                panel.is_full().then(|| e.remove().1)
            }
            Entry::Vacant(e) => {
                let mut panel = Panel::new(b.candidate.clone(), b.panel_size);
                panel.add(b, at)?;
                if panel.is_full() {
                    Some(panel)
                } else {
                    e.insert((self.next, panel));
                    self.next += 1;
                    None
                }
            }
        };
        if let Some(panel) = full {
            sink.tally(panel.close(self.agree)?)?;
        }
        Ok(())
    }

    /// Closes the panels still open, in the order they were first seen.
    pub fn finish<W: Write>(&mut self, sink: &mut Sink<W>) -> Result<()> {
        if let Some(panel) = self.single.take() {
            sink.tally(panel.close(self.agree)?)?;
        }
        let mut rest: Vec<(u64, Panel)> = self.open.drain().map(|(_, v)| v).collect();
        rest.sort_by_key(|(seq, _)| *seq);
        for (_, panel) in rest {
            sink.tally(panel.close(self.agree)?)?;
        }
        self.last = None;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Writing tallies.

/// Writes each tally as it closes, and keeps the totals for the summary.
pub struct Sink<W: Write> {
    pub out: W,
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
            json,
            eager,
            totals: Totals::default(),
            last_status: exit::PASSED,
        }
    }

    pub fn tally(&mut self, t: Tally) -> Result<()> {
        let status = t.status();
        if self.json {
            write_json(&mut self.out, &t)?;
        } else {
            if self.totals.panels > 0 {
                writeln!(self.out)?;
            }
            write_report(&mut self.out, &t)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> String {
        "in: line 7".into()
    }

    fn ballot(judge: &str, verdict: Option<Verdict>, status: Status) -> Ballot {
        Ballot {
            candidate: "sha256:aaaa".into(),
            panel_size: 0,
            usage: None,
            row: Row {
                judge: judge.into(),
                lens: "edges".into(),
                seat: "claude:haiku".into(),
                family: Some("claude".into()),
                verdict,
                status,
                reason: Some("because".into()),
                confidence: Some(0.5),
                cause: Some("no answer in 60 s".into()),
                run: "/tmp/run".into(),
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

    fn abstained(status: Status) -> Abstention {
        Abstention {
            judge: "j".into(),
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
        let mut b = ballot("édges", Some(Verdict::Holds), Status::Ok).row;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "édges       holds      because\n"
        );
        b.judge = "a-very-long-judge-name".into();
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
        let mut p = Panel::new("sha256:aaaa".into(), 0);
        p.add(ballot("edges", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap();
        let err = p
            .add(ballot("edges", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "in: line 7: judge \"edges\" of run \"/tmp/run\" is already counted"
        );
        let mut rerun = ballot("edges", None, Status::Timeout);
        rerun.row.run = "/tmp/run2".into();
        p.add(rerun, &at).unwrap();
        let mut other = ballot("x", Some(Verdict::Holds), Status::Ok);
        other.candidate = "sha256:bbbb".into();
        assert!(p.add(other, &at).unwrap_err().to_string().contains(
            "about candidate sha256:bbbb, but the records before it are about sha256:aaaa"
        ));
    }

    #[test]
    fn a_closed_panel_counts_missing_judges_as_abstained() {
        let mut p = Panel::new("sha256:aaaa".into(), 3);
        p.add(ballot("b", Some(Verdict::Holds), Status::Ok), &at)
            .unwrap();
        p.add(ballot("a", None, Status::Timeout), &at).unwrap();
        assert!(!p.is_full());
        let t = p.close(None).unwrap();
        assert_eq!(t.counts, counts(1, 0, 2));
        assert_eq!(t.missing, 1);
        assert_eq!(t.outcome, Outcome::Inconclusive);
        assert_eq!(t.status(), exit::UNDECIDED);
        assert!(!t.decided && !t.passed);
        assert_eq!(t.judges[0].judge, "a");
        assert_eq!(t.abstentions.len(), 1);
        assert_eq!(t.runs, ["/tmp/run"]);
        assert_eq!(t.by_lens["edges"], counts(1, 0, 1));
    }

    #[test]
    fn a_record_that_contradicts_itself_is_refused() {
        let line = r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","status":"timeout"}"#;
        let rec = parse_verdict(line, &at).unwrap();
        assert_eq!(
            verdict_ballot(rec, &at).unwrap_err().to_string(),
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
