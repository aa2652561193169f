//! Reading inputs: a file argument or standard input (`-` or absent), line by line, with
//! line numbers and a bound on the length of one line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

/// The longest line any tool reads: a longer one is an error, never an allocation.
pub const MAX_LINE: usize = 64 << 20;

/// The rules every tool reads a line of records by: a trailing `\r` is dropped, the line holds
/// at most [`MAX_LINE`] bytes, and it is UTF-8. `at` names the line (`file: line N`).
pub fn line_text<'a>(line: &'a [u8], at: &dyn Fn() -> String) -> Result<&'a str> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > MAX_LINE {
        return Err(too_long(&at()));
    }
    std::str::from_utf8(line).map_err(|_| not_utf8(&at()))
}

/// A line past [`MAX_LINE`], as every reader says it.
pub fn too_long(at: &str) -> anyhow::Error {
    anyhow!("{at}: longer than {} MiB", MAX_LINE >> 20)
}

fn not_utf8(at: &str) -> anyhow::Error {
    anyhow!("{at}: not UTF-8")
}

/// An input as messages name it: its path, or `<stdin>` for `-`.
pub fn display_name(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Where one input comes from: a path (`-` for standard input), or a reader already open.
pub enum Source {
    Path(String),
    Open {
        name: String,
        reader: Box<dyn Read + Send>,
    },
}

impl Source {
    /// The input as messages name it.
    pub fn name(&self) -> &str {
        match self {
            Source::Path(p) => display_name(p),
            Source::Open { name, .. } => name,
        }
    }

    /// Its name and its records' bytes: without a UTF-8 byte-order mark at the start (some
    /// Windows tools write one before the first record).
    pub fn open(self) -> Result<(String, Box<dyn Read + Send>)> {
        if let Source::Open { name, reader } = self {
            return Ok((name, reader));
        }
        let (name, reader) = self.open_as_is()?;
        let reader = skip_bom(reader).with_context(|| format!("{name}: cannot read"))?;
        Ok((name, reader))
    }

    /// Its name and its bytes, every one of them (a candidate's seal covers what was given).
    pub fn open_as_is(self) -> Result<(String, Box<dyn Read + Send>)> {
        match self {
            Source::Path(p) if p == "-" => Ok(("<stdin>".into(), Box::new(io::stdin()))),
            Source::Path(p) => {
                let file =
                    File::open(Path::new(&p)).with_context(|| format!("{p}: cannot open"))?;
                Ok((p, Box::new(file)))
            }
            Source::Open { name, reader } => Ok((name, reader)),
        }
    }
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// `reader` without a byte-order mark at its start.
fn skip_bom(mut reader: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    let mut head = Vec::with_capacity(BOM.len());
    while head.len() < BOM.len() && BOM.starts_with(&head) {
        let mut b = [0u8; 3];
        match reader.read(&mut b[..BOM.len() - head.len()]) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if head == BOM {
        head.clear();
    }
    Ok(Box::new(io::Cursor::new(head).chain(reader)))
}

/// Whether `fd` is a pipe.
pub fn is_pipe(fd: &impl std::os::fd::AsFd) -> bool {
    nix::sys::stat::fstat(fd.as_fd())
        .is_ok_and(|st| st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFIFO)
}

/// The inputs named on a command line as sources: none means standard input.
pub fn sources(paths: &[String]) -> Vec<Source> {
    paths_or_stdin(paths)
        .into_iter()
        .map(Source::Path)
        .collect()
}

/// The `"type"` of the first record of the first input, read with serde, and the inputs as
/// they were: what was read to find it is read again by whoever reads them next. `None` when
/// the first input holds no line that parses as a JSON object with a string `"type"`.
pub fn first_record_type(mut sources: Vec<Source>) -> Result<(Option<String>, Vec<Source>)> {
    #[derive(serde::Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: Option<String>,
    }
    if sources.is_empty() {
        return Ok((None, sources));
    }
    let (name, mut reader) = sources.remove(0).open()?;
    // `head` holds what was read; `start` is where the first line not known to be blank
    // begins, and `head[seen..]` is what has not been searched for a newline yet.
    let (mut head, mut start, mut seen) = (Vec::new(), 0, 0);
    let mut buf = vec![0u8; 1 << 16];
    let end = loop {
        while let Some(i) = head[seen..].iter().position(|&b| b == b'\n') {
            let end = seen + i;
            if !head[start..end].trim_ascii().is_empty() {
                break;
            }
            (start, seen) = (end + 1, end + 1);
        }
        if let Some(i) = head[seen..].iter().position(|&b| b == b'\n') {
            break seen + i;
        }
        seen = head.len();
        if head.len() - start > MAX_LINE {
            break head.len();
        }
        match reader.read(&mut buf) {
            Ok(0) => break head.len(),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("{name}: cannot read")),
        }
    };
    let line = &head[start..end];
    let kind = std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line))
        .ok()
        .and_then(|text| serde_json::from_str::<Typed>(text).ok())
        .and_then(|t| t.kind);
    let reader = Box::new(io::Cursor::new(head).chain(reader));
    sources.insert(0, Source::Open { name, reader });
    Ok((kind, sources))
}

/// One input: its name for messages and a buffered reader.
pub struct Input {
    pub name: String,
    reader: Box<dyn BufRead>,
    line: u64,
}

impl Input {
    /// Opens `path`, or standard input when it is `-`.
    pub fn open(path: &str) -> Result<Input> {
        Input::from_source(Source::Path(path.into()))
    }

    /// Opens a source.
    pub fn from_source(source: Source) -> Result<Input> {
        let (name, reader) = source.open()?;
        Ok(Input {
            name,
            reader: Box::new(BufReader::with_capacity(1 << 16, reader)),
            line: 0,
        })
    }

    /// Opens `path` (`-`: standard input) to be read line by line to `limit` bytes in all: past
    /// it, [`Input::next_line`] fails naming the input and the bound (a plan of endless empty
    /// lines is refused, never read on).
    pub fn open_bounded(path: &str, limit: usize) -> Result<Input> {
        let (name, reader) = Source::Path(path.into()).open()?;
        let reader = CappedReader {
            inner: reader,
            left: limit as u64,
            limit,
        };
        Ok(Input {
            name,
            reader: Box::new(BufReader::with_capacity(1 << 16, reader)),
            line: 0,
        })
    }

    /// Wraps any reader (tests, in-memory input).
    pub fn from_reader(name: &str, reader: impl Read + 'static) -> Input {
        Input {
            name: name.into(),
            reader: Box::new(BufReader::new(reader)),
            line: 0,
        }
    }

    /// The number of the line last returned by [`Input::next_line`].
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// `file:line` of the line last read, for messages.
    pub fn at(&self) -> String {
        format!("{}: line {}", self.name, self.line)
    }

    /// Reads the next line into `buf` (without its newline). `Ok(false)` at the end.
    /// The rules of [`line_text`] hold, and a line is refused once it passes [`MAX_LINE`],
    /// before the rest of it is read.
    pub fn next_line(&mut self, buf: &mut String) -> Result<bool> {
        buf.clear();
        let mut bytes = std::mem::take(buf).into_bytes();
        let more = read_bounded_line(&mut self.reader, &mut bytes, MAX_LINE);
        self.line += 1;
        match more {
            Ok(false) => {
                *buf = String::new();
                Ok(false)
            }
            Ok(true) => match String::from_utf8(bytes) {
                Ok(s) => {
                    *buf = s;
                    Ok(true)
                }
                Err(_) => Err(not_utf8(&self.at())),
            },
            Err(e) if e.kind() == io::ErrorKind::InvalidData => Err(too_long(&self.at())),
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Err(anyhow!("{}: {e}", self.name)),
            Err(e) => Err(e).with_context(|| format!("{}: cannot read", self.at())),
        }
    }

    /// The whole rest of the input as text, bounded by `limit` bytes.
    pub fn read_to_string(&mut self, limit: usize) -> Result<String> {
        let mut bytes = Vec::new();
        (&mut self.reader)
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("{}: cannot read", self.name))?;
        if bytes.len() > limit {
            bail!("{}: larger than {} MiB", self.name, limit >> 20);
        }
        String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8", self.name))
    }
}

/// The most of a price table, a harness file, a rules file or another small file of settings a
/// tool reads: far past any real one, and a file past it (`/dev/zero`) is refused once the
/// bound is crossed, never read on.
pub const MAX_SETTINGS: usize = 4 << 20;

/// A whole file the user named (`--prices`, `--harness`, a rules file, recorded answers), read
/// as UTF-8 and at most `limit` bytes: one byte past it is an error that names `what` (the
/// option and the file, as messages name it) and the bound, so that a file with no end
/// (`/dev/zero`, a FIFO fed forever) costs no more than the bound to refuse.
pub fn read_bounded(path: &Path, limit: usize, what: &str) -> Result<String> {
    let file = File::open(path).with_context(|| format!("{what}: cannot read"))?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("{what}: cannot read"))?;
    if bytes.len() > limit {
        bail!("{what}: larger than {}, the most read", size(limit));
    }
    String::from_utf8(bytes).map_err(|_| anyhow!("{what}: not UTF-8"))
}

/// A reader that gives `limit` bytes and then fails (`FileTooLarge`) where more follow.
struct CappedReader<R> {
    inner: R,
    left: u64,
    limit: usize,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            let mut one = [0u8; 1];
            return match self.inner.read(&mut one)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    format!("larger than {}, the most read", size(self.limit)),
                )),
            };
        }
        let most = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..most])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// A bound in bytes as messages say it: whole MiB or KiB where it is one.
fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Appends one line (newline and a preceding `\r` dropped) to `out`; `Ok(false)` at the end
/// of input. A line past `cap` bytes fails with `InvalidData` once the cap is crossed, so memory
/// stays bounded however long the line is.
fn read_bounded_line(r: &mut dyn BufRead, out: &mut Vec<u8>, cap: usize) -> io::Result<bool> {
    let mut any = false;
    loop {
        let (done, used) = {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            any = true;
            match find_newline(buf) {
                Some(i) => {
                    out.extend_from_slice(&buf[..i]);
                    (true, i + 1)
                }
                None => {
                    out.extend_from_slice(buf);
                    (false, buf.len())
                }
            }
        };
        r.consume(used);
        // One byte more for a `\r`, which does not count.
        if out.len() > cap + 1 {
            return Err(too_long_io());
        }
        if done {
            break;
        }
    }
    if out.last() == Some(&b'\r') {
        out.pop();
    }
    if out.len() > cap {
        return Err(too_long_io());
    }
    Ok(any)
}

fn too_long_io() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "line too long")
}

/// The first `\n`, eight bytes at a time (long streams of records spend their time here).
pub fn find_newline(hay: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = ONES * b'\n' as u64;
    let mut chunks = hay.chunks_exact(8);
    for (n, chunk) in chunks.by_ref().enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ NL;
        // A zero byte of `w` is a newline; the lowest flagged byte is the first one.
        let found = w.wrapping_sub(ONES) & !w & HIGH;
        if found != 0 {
            return Some(n * 8 + (found.trailing_zeros() / 8) as usize);
        }
    }
    let done = hay.len() - chunks.remainder().len();
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| done + i)
}

/// The inputs named on a command line: none means standard input.
pub fn paths_or_stdin(paths: &[String]) -> Vec<String> {
    if paths.is_empty() {
        vec!["-".into()]
    } else {
        paths.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &'static [u8]) -> Vec<Result<String>> {
        let mut input = Input::from_reader("t", text);
        let mut out = Vec::new();
        let mut buf = String::new();
        loop {
            match input.next_line(&mut buf) {
                Ok(true) => out.push(Ok(buf.clone())),
                Ok(false) => break,
                Err(e) => {
                    out.push(Err(e));
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn splits_lines_and_drops_carriage_returns() {
        let got: Vec<String> = lines(b"a\r\nb\n\nc")
            .into_iter()
            .map(|l| l.unwrap())
            .collect();
        assert_eq!(got, ["a", "b", "", "c"]);
    }

    #[test]
    fn names_the_line_that_is_not_utf8() {
        let got = lines(b"ok\n\xff\xfe\n");
        let err = got.last().unwrap().as_ref().unwrap_err().to_string();
        assert_eq!(err, "t: line 2: not UTF-8");
    }

    #[test]
    fn newlines_are_found_eight_bytes_at_a_time() {
        let mut hay = vec![b'x'; 40];
        assert_eq!(find_newline(&hay), None);
        for i in 0..hay.len() {
            hay[i] = b'\n';
            assert_eq!(find_newline(&hay), Some(i));
            assert_eq!(find_newline(&hay[..i]), None);
            // Bytes around a newline's value must not be taken for one.
            hay[i] = if i % 2 == 0 { 0x0b } else { 0x8a };
        }
    }

    #[test]
    fn line_text_holds_the_line_rules() {
        let at = || "t: line 3".to_string();
        assert_eq!(line_text(b"a b\r", &at).unwrap(), "a b");
        assert_eq!(line_text(b"a\rb", &at).unwrap(), "a\rb");
        let err = line_text(b"\xff", &at).unwrap_err().to_string();
        assert_eq!(err, "t: line 3: not UTF-8");
        let long = vec![b'x'; MAX_LINE + 1];
        let err = line_text(&long, &at).unwrap_err().to_string();
        assert_eq!(err, "t: line 3: longer than 64 MiB");
        assert!(line_text(&long[..MAX_LINE], &at).is_ok());
    }

    /// Issue 47: "`--prices /dev/zero` reads a gigabyte before failing".
    #[test]
    fn a_file_past_its_bound_is_refused_at_the_bound() {
        let err = read_bounded(Path::new("/dev/zero"), 4 << 20, "--prices /dev/zero")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "--prices /dev/zero: larger than 4 MiB, the most read");
        let dir = std::env::temp_dir().join(format!("read-bounded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("f");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read_bounded(&f, 5, "f").unwrap(), "12345");
        let err = read_bounded(&f, 4, "f").unwrap_err().to_string();
        assert_eq!(err, "f: larger than 4 bytes, the most read");
        std::fs::write(&f, b"\xff").unwrap();
        assert_eq!(
            read_bounded(&f, 4, "f").unwrap_err().to_string(),
            "f: not UTF-8"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_input_past_its_bound_fails_naming_it() {
        let mut input = Input::open_bounded("/dev/zero", 1 << 20).unwrap();
        let mut buf = String::new();
        let err = input.next_line(&mut buf).unwrap_err().to_string();
        assert_eq!(err, "/dev/zero: larger than 1 MiB, the most read");
    }

    #[test]
    fn a_line_past_the_cap_is_an_error_not_an_allocation() {
        let mut r: &[u8] = b"0123456789\n";
        let mut out = Vec::new();
        let err = read_bounded_line(&mut r, &mut out, 4).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        // The cap is the line's, as line_text counts it: a trailing CR is not part of it.
        let mut r: &[u8] = b"0123\r\n01234\n";
        out.clear();
        assert!(read_bounded_line(&mut r, &mut out, 4).unwrap());
        assert_eq!(out, b"0123");
        out.clear();
        assert!(read_bounded_line(&mut r, &mut out, 4).is_err());
    }
}
