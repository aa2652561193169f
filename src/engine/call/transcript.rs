//! A judge's standard output as it arrives: written to its run folder byte for byte up to the
//! run's `--max-output` budget, and read on the way with memory that does not grow with it.
//!
//! Output up to [`TEXT_CAP`] is held whole and read afterwards as it always was (the harness's
//! filter over the whole text, one JSON document included). Past it the transcript is read as
//! an event stream, line by line ([`crate::engine::call::extract::Events`]): the answer filter's last
//! output, the usage, the tool calls; a line longer than [`MAX_EVENT`] is passed over with a
//! note. What is held then is the first [`HEAD`] bytes (for excerpts), the last [`TAIL`] bytes
//! (the text read when no event carries the answer, and where a harness's own words are looked
//! for), and the line being read.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::engine::call::extract::{EventFilters, Events, MAX_EVENT};

/// Output up to this size is held whole and read as one text.
pub const TEXT_CAP: usize = 16 << 20;
/// The start of a long transcript kept for excerpts.
pub const HEAD: usize = 64 << 10;
/// The end of a long transcript kept as text.
pub const TAIL: usize = 4 << 20;
/// The default budget of one attempt's standard output (`--max-output`).
pub const DEFAULT_MAX_OUTPUT: u64 = 1 << 30;

/// One attempt's standard output, read as it arrives.
#[derive(Debug)]
pub struct Transcript {
    /// The run folder's copy, and where it is; `None` once it could not be written.
    file: Option<(File, PathBuf)>,
    budget: u64,
    /// Bytes the judge wrote (read, counted, past the budget too).
    pub bytes: u64,
    /// Bytes within the budget (written to the run folder when it has a copy).
    pub kept: u64,
    /// The judge wrote more than the budget.
    pub over: bool,
    /// All of it while it fits in [`TEXT_CAP`]; then the line being read.
    buf: Vec<u8>,
    whole: bool,
    /// The line being read passed [`MAX_EVENT`]: the rest of it is dropped.
    skipping: bool,
    head: Vec<u8>,
    tail: Vec<u8>,
    events: Events,
}

impl Transcript {
    /// A transcript written to `file` (the run folder's `stdout`), read with `filters`, stopped
    /// at `budget` bytes.
    pub fn new(file: Option<(File, PathBuf)>, filters: EventFilters, budget: u64) -> Transcript {
        Transcript {
            file,
            budget,
            bytes: 0,
            kept: 0,
            over: false,
            buf: Vec::new(),
            whole: true,
            skipping: false,
            head: Vec::new(),
            tail: Vec::new(),
            events: Events::new(filters),
        }
    }

    /// A transcript held in memory only, with no budget (unit tests, recorded answers).
    pub fn of(bytes: &[u8]) -> Transcript {
        let mut t = Transcript::new(None, EventFilters::default(), u64::MAX);
        t.feed(bytes);
        t.finish();
        t
    }

    /// Takes the next bytes the judge wrote; false once it has passed its budget (it is to be
    /// stopped; what follows is counted and dropped).
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        self.bytes += bytes.len() as u64;
        if self.over {
            return false;
        }
        let room = self.budget.saturating_sub(self.kept);
        let within = &bytes[..bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        self.kept += within.len() as u64;
        self.keep(within);
        self.read(within);
        if within.len() < bytes.len() {
            self.over = true;
        }
        !self.over
    }

    /// The end of the output: the last line, when it had no newline, is read too.
    pub fn finish(&mut self) {
        if !self.whole && !self.skipping && !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.events.line(&line);
        }
        if let Some((file, path)) = &mut self.file
            && let Err(e) = file.flush()
        {
            crate::engine::run_folder::lose(path, &e);
        }
    }

    /// Writes to the run folder's copy; a copy that cannot be written whole is removed (a file
    /// there is a file kept whole) and the loss reported.
    fn keep(&mut self, bytes: &[u8]) {
        if let Some((file, path)) = &mut self.file
            && let Err(e) = file.write_all(bytes)
        {
            let _ = std::fs::remove_file(&*path);
            crate::engine::run_folder::lose(path, &e);
            self.file = None;
        }
    }

    fn read(&mut self, bytes: &[u8]) {
        if self.whole {
            if self.buf.len() + bytes.len() <= TEXT_CAP {
                self.buf.extend_from_slice(bytes);
                return;
            }
            self.spill();
        }
        self.remember_tail(bytes);
        let mut rest = bytes;
        while let Some(n) = newline(rest) {
            let piece = &rest[..n];
            rest = &rest[n + 1..];
            if self.skipping {
                // The end of a line past the bound.
                self.skipping = false;
            } else if self.buf.len() + piece.len() > MAX_EVENT {
                self.events.too_long();
                self.buf = Vec::new();
            } else if self.buf.is_empty() {
                // A whole line in what arrived: read where it lies, not copied.
                self.events.line(piece);
            } else {
                self.buf.extend_from_slice(piece);
                self.events.line(&self.buf);
                self.buf.clear();
                if self.buf.capacity() > (1 << 20) {
                    // A long line read: its room is not kept for the short ones after it.
                    self.buf = Vec::new();
                }
            }
        }
        // The line still being written.
        if !self.skipping {
            if self.buf.len() + rest.len() > MAX_EVENT {
                self.events.too_long();
                self.skipping = true;
                self.buf = Vec::new();
            } else {
                self.buf.extend_from_slice(rest);
            }
        }
    }

    /// The output has outgrown [`TEXT_CAP`]: read what is held as lines, and keep its head, its
    /// tail and its last (unfinished) line only.
    fn spill(&mut self) {
        self.whole = false;
        let held = std::mem::take(&mut self.buf);
        self.head = held[..held.len().min(HEAD)].to_vec();
        self.read(&held);
    }

    fn remember_tail(&mut self, bytes: &[u8]) {
        let bytes = &bytes[bytes.len().saturating_sub(TAIL)..];
        if self.tail.len() + bytes.len() > 2 * TAIL {
            let drop = self.tail.len() + bytes.len() - TAIL;
            self.tail.drain(..drop.min(self.tail.len()));
        }
        self.tail.extend_from_slice(bytes);
    }

    /// Whether all of it was held and read as one text.
    pub fn whole(&self) -> bool {
        self.whole
    }

    /// The text read: all of it, or (past [`TEXT_CAP`]) its last [`TAIL`] bytes from the first
    /// line that starts in them.
    pub fn text(&self) -> String {
        if self.whole {
            return String::from_utf8_lossy(&self.buf).into_owned();
        }
        let tail = &self.tail[self.tail.len().saturating_sub(TAIL)..];
        let from = match tail.iter().position(|&b| b == b'\n') {
            Some(i) if self.bytes > tail.len() as u64 => i + 1,
            _ => 0,
        };
        String::from_utf8_lossy(&tail[from..]).into_owned()
    }

    /// The start of it, for an excerpt.
    pub fn head(&self) -> String {
        let head = if self.whole { &self.buf } else { &self.head };
        String::from_utf8_lossy(&head[..head.len().min(HEAD)]).into_owned()
    }

    /// Where a harness's own words are looked for: all of it, or its head and its tail.
    pub fn searchable(&self) -> String {
        if self.whole {
            self.text()
        } else {
            format!("{}\n{}", self.head(), self.text())
        }
    }

    /// What the line-by-line reading found (meaningful past [`TEXT_CAP`] only).
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// The budget it was given.
    pub fn budget(&self) -> u64 {
        self.budget
    }
}

/// Where the next newline is: the first bytes looked at one by one, since a call of memchr
/// for each short line costs more than the line.
fn newline(bytes: &[u8]) -> Option<usize> {
    let near = &bytes[..bytes.len().min(32)];
    near.iter()
        .position(|&b| b == b'\n')
        .or_else(|| memchr::memchr(b'\n', &bytes[near.len()..]).map(|i| i + near.len()))
}

/// The ends of a job's last attempt's standard error and output, as the run folder keeps them:
/// where a harness's closing notice stands (a usage limit's reset time), though the transcript
/// may be as long as `--max-output`.
pub fn last_words(run: &Path, job: &str, attempts: u32) -> Vec<String> {
    let dir = run.join(job).join(format!("attempt-{}", attempts.max(1)));
    ["stderr", "stdout"]
        .iter()
        .filter_map(|f| crate::engine::run_folder::read_end(&dir.join(f), TAIL as u64))
        .collect()
}

/// A size as the user writes it: bytes, or with a suffix K, M, G, T (powers of 1024; an
/// optional `i`, `B` or `iB` after it), e.g. `64M`, `1G`, `1.5GiB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?}: expected a size such as 64M or 1G"))?;
    let unit: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "ki" | "kib" => 1 << 10,
        "m" | "mb" | "mi" | "mib" => 1 << 20,
        "g" | "gb" | "gi" | "gib" => 1 << 30,
        "t" | "tb" | "ti" | "tib" => 1 << 40,
        other => return Err(format!("{text:?}: unknown unit {other:?} (K, M, G or T)")),
    };
    let bytes = number * unit as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?}: must be at least one byte"));
    }
    Ok(bytes as u64)
}

/// A size for messages: `1 GiB`, `64 MiB`, `1.5 GiB`, `1000 bytes`.
pub fn shown_size(bytes: u64) -> String {
    let units = [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    match units.iter().find(|(unit, _)| bytes >= *unit) {
        Some((unit, name)) if bytes.is_multiple_of(*unit) => format!("{} {name}", bytes / unit),
        Some((unit, name)) => format!("{:.1} {name}", bytes as f64 / *unit as f64),
        None => format!("{bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::call::extract::Filter;
    use std::sync::Arc;

    fn filters(answer: &str) -> EventFilters {
        EventFilters {
            answer: Some(Arc::new(Filter::compile(answer).unwrap())),
            usage: None,
            tool_calls: Some(Arc::new(
                Filter::compile("select(.type == \"tool\") | .name").unwrap(),
            )),
        }
    }

    fn event(kind: &str, pad: usize) -> String {
        format!(
            "{{\"type\":\"{kind}\",\"name\":\"Read\",\"text\":\"{}\"}}\n",
            "x".repeat(pad)
        )
    }

    #[test]
    fn a_short_output_is_held_whole() {
        let t = Transcript::of(b"{\"a\":1}\nlast");
        assert!(t.whole());
        assert_eq!(t.text(), "{\"a\":1}\nlast");
        assert_eq!(t.head(), t.text());
    }

    #[test]
    fn a_long_stream_keeps_its_last_answer_and_counts_its_calls_in_bounded_memory() {
        let mut t = Transcript::new(None, filters("select(.type == \"result\") | .r"), u64::MAX);
        let tool = event("tool", 100_000);
        let mut fed = 0;
        while fed < TEXT_CAP * 2 {
            // Odd-sized pieces, so lines straddle them.
            for piece in tool.as_bytes().chunks(7_777) {
                assert!(t.feed(piece));
            }
            fed += tool.len();
        }
        t.feed(b"{\"type\":\"result\",\"r\":{\"verdict\":\"holds\"}}");
        t.finish();
        assert!(!t.whole());
        assert_eq!(
            t.events().last_answer(),
            Some(serde_json::json!({"verdict": "holds"}))
        );
        assert_eq!(t.events().tool_calls.len(), fed / tool.len());
        assert!(t.buf.capacity() <= MAX_EVENT + (64 << 10));
        assert!(t.tail.len() <= 2 * TAIL);
        assert_eq!(t.head().len(), HEAD);
        assert!(t.text().ends_with("\"verdict\":\"holds\"}}"));
        assert!(t.text().starts_with("{\"type\":\"tool\""));
    }

    #[test]
    fn a_line_past_the_event_bound_is_passed_over_and_the_next_is_read() {
        let mut t = Transcript::new(None, filters(".r"), u64::MAX);
        let giant = vec![b'x'; 4 << 20];
        for _ in 0..((TEXT_CAP + MAX_EVENT) / giant.len() + 2) {
            t.feed(&giant);
        }
        assert!(t.buf.len() <= MAX_EVENT);
        t.feed(b"\n{\"r\":\"after\"}\n");
        t.finish();
        assert_eq!(t.events().passed_over, 1);
        assert_eq!(t.events().last_answer(), Some(serde_json::json!("after")));
    }

    #[test]
    fn the_budget_keeps_exactly_its_bytes_and_asks_for_a_stop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout");
        let file = crate::engine::run_folder::create_private(&path).unwrap();
        let mut t = Transcript::new(Some((file, path.clone())), EventFilters::default(), 10);
        assert!(t.feed(b"12345"));
        assert!(!t.feed(b"6789abcdef"));
        assert!(!t.feed(b"more"));
        t.finish();
        assert!(t.over);
        assert_eq!((t.bytes, t.kept), (19, 10));
        assert_eq!(std::fs::read(&path).unwrap(), b"123456789a");
    }

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("2k"), Ok(2048));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1X").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("1e999").is_err());
        assert_eq!(shown_size(1 << 30), "1 GiB");
        assert_eq!(shown_size(1000), "1000 bytes");
        assert_eq!(shown_size(3 << 29), "1.5 GiB");
    }
}
