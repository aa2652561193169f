//! Reading verdict records into ballots. Reading and parsing run on threads of their own, a
//! few blocks of lines ahead of the counting, and hand their ballots back in input order: the
//! counting sees one ordered stream. `--reader plain` reads line by line on one thread instead;
//! `benches/tally.sh` times both.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use crossbeam_channel::Sender;

use crate::records::Usage;
use crate::records::input::{Input, MAX_LINE, Source, find_newline, line_text, too_long};
use crate::records::tally::JudgeRow;
use crate::records::view::{self, VerdictView};
use crate::tools::tally::count::{Ballot, BallotOf, Span, keep};

/// How verdict records are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Reader {
    Threads,
    Plain,
}

/// Reads the ballots of every input in order, calling `each` with each ballot and where it
/// was read (`file: line N`). The first bad line stops the reading with an error naming it.
pub fn ballots(
    inputs: Vec<Source>,
    how: Reader,
    mut each: impl FnMut(&Ballot, &dyn Fn() -> String) -> Result<()>,
) -> Result<()> {
    let names: Vec<String> = inputs.iter().map(|s| s.name().to_string()).collect();
    let chunks = match how {
        Reader::Plain => return plain(inputs, each),
        // No thread to be had (a limit on processes): read on this one.
        Reader::Threads => match read_ahead(inputs, BLOCK) {
            Ok(chunks) => chunks,
            Err(inputs) => return plain(inputs, each),
        },
    };
    for chunk in chunks {
        for o in &chunk.ballots {
            let at = || format!("{}: line {}", names[o.input], o.line);
            each(&o.ballot(&chunk.text), &at)?;
        }
        if let Some(err) = chunk.error {
            return Err(err);
        }
        if chunk.last {
            return Ok(());
        }
    }
    bail!("reading the input stopped before its end")
}

/// Parses a verdict record with one pass over the line; only a bad line is read again, to say
/// precisely what is wrong with it.
fn parse_verdict<'a>(line: &'a str, at: &dyn Fn() -> String) -> Result<VerdictView<'a>> {
    view::parse(line, at, view::VERDICTS, None)
}

/// A verdict record as a ballot. A verdict with an abstainer's status, or an `ok` without a
/// verdict, contradicts itself and is refused rather than guessed.
fn verdict_ballot<'a>(rec: &'a VerdictView<'_>, at: &dyn Fn() -> String) -> Result<Ballot<'a>> {
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
        canary: rec.expected(at)?,
        judge: JudgeRow {
            judge: &rec.judge,
            lens: &rec.lens,
            seat: &rec.seat,
            family: rec.family.as_deref(),
            verdict: rec.answer(),
            status: rec.status,
            reason: rec.reason.as_deref(),
            confidence: rec.confidence,
            cause: rec.cause.as_deref(),
            said: rec.said.as_deref(),
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

/// A ballot of a [`Chunk`], with where it was read: its text kept in the chunk's buffer.
struct Parsed {
    input: usize,
    line: u64,
    ballot: BallotOf<Span, Option<Usage>>,
}

impl Parsed {
    fn new(b: &Ballot, text: &mut String, input: usize, line: u64) -> Parsed {
        let candidate = keep(text, b.candidate);
        let run = keep(text, b.run);
        Parsed {
            input,
            line,
            ballot: BallotOf {
                candidate,
                panel_size: b.panel_size,
                usage: b.usage.cloned(),
                judge: b.judge.map(|s| keep(text, s)),
                run,
                canary: b.canary,
            },
        }
    }

    fn ballot<'a>(&'a self, text: &'a str) -> Ballot<'a> {
        let b = &self.ballot;
        Ballot {
            candidate: b.candidate.of(text),
            panel_size: b.panel_size,
            usage: b.usage.as_ref(),
            judge: b.judge.map(|s| s.of(text)),
            run: b.run.of(text),
            canary: b.canary,
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

/// [`ballots`] line by line on this thread.
fn plain(
    inputs: Vec<Source>,
    mut each: impl FnMut(&Ballot, &dyn Fn() -> String) -> Result<()>,
) -> Result<()> {
    let mut buf = String::new();
    for source in inputs {
        let mut input = Input::from_source(source)?;
        while input.next_line(&mut buf)? {
            if buf.trim().is_empty() {
                continue;
            }
            let at = || input.at();
            let rec = parse_verdict(&buf, &at)?;
            each(&verdict_ballot(&rec, &at)?, &at)?;
        }
    }
    Ok(())
}

/// Reads the inputs on one thread and parses them on a few more, ahead of the counting:
/// parsing is most of the work of a long stream. The chunks come out in input order. The
/// threads are left to end with the process, so that a broken pipe never waits for an input
/// that has not finished. The inputs come back when no thread can be had.
fn read_ahead(inputs: Vec<Source>, block: usize) -> Result<InOrder, Vec<Source>> {
    let names: Arc<Vec<String>> = Arc::new(inputs.iter().map(|s| s.name().into()).collect());
    let parsers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4));
    let (work_tx, work_rx) = crossbeam_channel::bounded::<Work>(parsers);
    let (done_tx, done_rx) = crossbeam_channel::bounded::<Chunk>(parsers);
    let mut started = 0;
    for _ in 0..parsers {
        let (rx, tx, names) = (work_rx.clone(), done_tx.clone(), Arc::clone(&names));
        let parser = std::thread::Builder::new().spawn(move || {
            for work in rx {
                if tx.send(parse_block(work, &names)).is_err() {
                    break;
                }
            }
        });
        if parser.is_err() {
            break;
        }
        started += 1;
    }
    // The reader takes the inputs from here, so that they come back if it cannot start.
    let held = Arc::new(std::sync::Mutex::new(Some(inputs)));
    let taken = Arc::clone(&held);
    let reader_names = Arc::clone(&names);
    let reader = (started > 0).then(|| {
        std::thread::Builder::new().spawn(move || {
            let inputs = taken.lock().ok().and_then(|mut i| i.take());
            split_inputs(inputs.unwrap_or_default(), &reader_names, block, &work_tx)
        })
    });
    match reader {
        Some(Ok(_)) => Ok(InOrder {
            rx: done_rx,
            pending: BTreeMap::new(),
            next: 0,
        }),
        _ => Err(held
            .lock()
            .ok()
            .and_then(|mut i| i.take())
            .unwrap_or_default()),
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
fn split_inputs(inputs: Vec<Source>, names: &[String], block: usize, tx: &Sender<Work>) {
    let mut seq = 0;
    for (input, source) in inputs.into_iter().enumerate() {
        match split_input(input, source, &names[input], block, &mut seq, tx) {
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
    source: Source,
    name: &str,
    block: usize,
    seq: &mut u64,
    tx: &Sender<Work>,
) -> Result<bool> {
    let (_, mut reader) = source.open()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{self, VerdictRecord};
    use crate::tools::tally::count::tests::at;

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
        for chunk in read_ahead(
            vec![Source::Path(path.to_str().unwrap().to_string())],
            block,
        )
        .ok()
        .unwrap()
        {
            for p in &chunk.ballots {
                got.push((p.ballot.judge.judge.of(&chunk.text).to_string(), p.line));
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
    fn a_record_that_contradicts_itself_is_refused() {
        let line = r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","status":"timeout"}"#;
        assert_eq!(
            parse_verdict(line, &at).unwrap_err().to_string(),
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
