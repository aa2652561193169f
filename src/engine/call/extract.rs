//! Reading an answer out of what a harness printed: the harness's jq filter, then code fences
//! stripped, then the reply as one JSON object, else the last object in it that meets the
//! contract (docs/design.md §4). The only module that touches jaq.
//!
//! The work is bounded by the size of the output, whatever a model prints: JSON is read only
//! where a linear scan finds it shallow enough (jaq's parser recurses without a limit) and
//! holding few enough values (a DOM of millions of tiny values costs far more than the bytes).

use anyhow::{Result, anyhow};
use jaq_core::load::{Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Vars, data, unwrap_valr};
use jaq_json::Val;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::call::sieve::Sieve;

type Compiled = jaq_core::Filter<data::JustLut<Val>>;

/// A jq filter, compiled once and run as often as needed (it is `Send + Sync`).
pub struct Filter {
    code: String,
    compiled: Compiled,
    /// The lines it may read something from.
    sieve: Sieve,
    /// Values it was run over: what the bounds are checked by.
    runs: AtomicU64,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Filter({:?})", self.code)
    }
}

impl Filter {
    /// Compiles a filter; a syntax error or an unknown function says where it is.
    pub fn compile(code: &str) -> Result<Filter> {
        let defs = jaq_core::defs()
            .chain(jaq_std::defs())
            .chain(jaq_json::defs());
        let funs = jaq_core::funs()
            .chain(jaq_std::funs())
            .chain(jaq_json::funs());
        let arena = Arena::default();
        let modules = Loader::new(defs)
            .load(&arena, File { code, path: () })
            .map_err(|errs| {
                let first = errs.into_iter().next().map(|(_, e)| format!("{e:?}"));
                anyhow!(
                    "jq filter {code:?} does not parse: {}",
                    first.unwrap_or_default()
                )
            })?;
        let compiled = Compiler::default()
            .with_funs(funs)
            .compile(modules)
            .map_err(|errs| {
                let names: Vec<String> = errs
                    .into_iter()
                    .flat_map(|(_, es)| es.into_iter().map(|(name, _)| name.to_string()))
                    .collect();
                anyhow!("jq filter {code:?}: undefined {}", names.join(", "))
            })?;
        Ok(Filter {
            code: code.into(),
            compiled,
            sieve: Sieve::of(code),
            runs: AtomicU64::new(0),
        })
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// How many values it has been run over.
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    /// Runs the filter over one JSON value; every output, or the first error.
    pub fn run(&self, input: &Value) -> Result<Vec<Value>> {
        let input = jaq_json::read::parse_single(input.to_string().as_bytes())
            .map_err(|e| anyhow!("jq input: {e:?}"))?;
        self.run_val(input)
    }

    fn run_val(&self, input: Val) -> Result<Vec<Value>> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        let ctx = Ctx::<data::JustLut<Val>>::new(&self.compiled.lut, Vars::new([]));
        let mut out = Vec::new();
        for v in self.compiled.id.run((ctx, input)).map(unwrap_valr) {
            let v = v.map_err(|e| anyhow!("jq: {e}"))?;
            // jaq prints NaN and infinities, which are not JSON: those outputs read as null.
            out.push(serde_json::from_str(&v.to_string()).unwrap_or(Value::Null));
        }
        Ok(out)
    }

    /// Runs the filter over every JSON value in `text`: one document (even pretty-printed), or
    /// JSON lines where lines that are not JSON are passed over. `None` when it read no value.
    /// A document or line too deep or too large to read (see [`parseable`]) is passed over, as
    /// is a line its [`Sieve`] says it reads nothing from.
    pub fn run_text(&self, text: &str) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        let mut read = false;
        let run = |v: Val| {
            read = true;
            // A value the filter cannot index is not the one carrying the answer.
            if let Ok(vs) = self.run_val(v) {
                out.extend(vs.into_iter().filter(|v| !v.is_null()));
            }
        };
        match whole(text) {
            Some(values) => values.into_iter().for_each(run),
            None => self
                .lines(text)
                .filter_map(|l| jaq_json::read::parse_single(l).ok())
                .for_each(run),
        }
        read.then_some(out)
    }

    /// The last of the filter's non-null outputs over `text` (as [`Filter::run_text`] reads
    /// it) that `pick` takes: the values are run from the last back, so that only those after
    /// the one that gives it are run.
    pub fn last_output(&self, text: &str, pick: impl Fn(&Value) -> bool) -> Option<Value> {
        let last = |v: Val| {
            let outs = self.run_val(v).ok()?;
            outs.into_iter().filter(|o| !o.is_null() && pick(o)).last()
        };
        match whole(text) {
            Some(values) => values.into_iter().rev().find_map(last),
            None => self
                .lines(text)
                .rev()
                .filter_map(|l| jaq_json::read::parse_single(l).ok())
                .find_map(last),
        }
    }

    /// The lines of `text` that may be JSON the filter reads something from.
    fn lines<'a>(&'a self, text: &'a str) -> impl DoubleEndedIterator<Item = &'a [u8]> + 'a {
        text.lines()
            .map(|l| l.as_bytes().trim_ascii())
            .filter(|l| l.starts_with(b"{") || l.starts_with(b"["))
            .filter(|l| {
                let mut holds = self.sieve.needle().is_none();
                scan(l, |raw| holds = holds || self.sieve.matches(raw)) && holds
            })
    }
}

/// `text` as JSON values when it is nothing else (one document, or values one after another),
/// shallow and small enough to read whole.
fn whole(text: &str) -> Option<Vec<Val>> {
    if !parseable(text.as_bytes()) {
        return None;
    }
    let values: Vec<Val> = jaq_json::read::parse_many(text.as_bytes())
        .collect::<Result<_, _>>()
        .ok()?;
    (!values.is_empty()).then_some(values)
}

/// The longest event (one line of an event stream) read; a longer one is passed over with a
/// note, never held whole.
pub const MAX_EVENT: usize = 16 << 20;
/// The most tool calls kept of one event stream (each at most [`MAX_CALL_CHARS`]); the rest
/// are counted.
pub const MAX_TOOL_CALLS: usize = 10_000;
pub const MAX_CALL_CHARS: usize = 1_000;

/// The filters run over each event of a stream as it arrives, so that what is kept is what the
/// answer needs, not the stream: the answer filter's last output, the usage summed, the tool
/// calls.
#[derive(Clone, Debug, Default)]
pub struct EventFilters {
    pub answer: Option<std::sync::Arc<Filter>>,
    pub usage: Option<std::sync::Arc<Filter>>,
    pub tool_calls: Option<std::sync::Arc<Filter>>,
}

/// Lines the answer filter may read, held unread until this many bytes: only the last of them
/// that gives an output counts, so they are run from the last back, and most never are.
pub(crate) const PENDING: usize = if cfg!(test) { 4 << 10 } else { 4 << 20 };

/// Reading an event stream line by line: memory bounded by the longest event read, whatever
/// the length of the stream, and work linear in its bytes: a line no filter can read anything
/// from (see [`Sieve`]) is never parsed.
#[derive(Debug, Default)]
pub struct Events {
    filters: EventFilters,
    /// The last line over which the answer filter gave an output: run again at the end, so
    /// that the output is converted once (and what is held can cross threads).
    last: Option<Vec<u8>>,
    /// Lines after `last` the answer filter may read, not run yet, each ended by a newline.
    pending: Vec<u8>,
    /// Lines passed over for their length (past [`MAX_EVENT`]) or their depth or size.
    pub passed_over: u64,
    pub usage: Option<crate::records::Usage>,
    pub tool_calls: Vec<String>,
    /// Tool calls past [`MAX_TOOL_CALLS`], counted.
    pub more_tool_calls: u64,
}

impl Events {
    pub fn new(filters: EventFilters) -> Events {
        Events {
            filters,
            ..Events::default()
        }
    }

    /// One line of the stream (without its newline). A line that is not a JSON value is
    /// passed over, as [`Filter::run_text`] passes it over.
    pub fn line(&mut self, line: &[u8]) {
        let t = line.trim_ascii();
        if !t.starts_with(b"{") && !t.starts_with(b"[") {
            return;
        }
        if self.repeats_pending(t) {
            // The same bytes as the last line held: read the same way, it adds nothing.
            return;
        }
        let f = &self.filters;
        let sieves = [&f.answer, &f.usage, &f.tool_calls].map(|f| f.as_ref().map(|f| &f.sieve));
        // Which filters may read the line: those without a needle, or whose needle it holds.
        let mut read = sieves.map(|s| s.is_some_and(|s| s.needle().is_none()));
        if sieves.iter().all(Option::is_none) {
            return;
        }
        let ok = scan(t, |raw| {
            for (r, s) in read.iter_mut().zip(&sieves) {
                *r = *r || s.is_some_and(|s| s.matches(raw));
            }
        });
        if !ok {
            self.passed_over += 1;
            return;
        }
        let [answer, usage, calls] = read;
        if !usage && !calls {
            if answer {
                self.defer(t);
            }
            return;
        }
        let Ok(v) = jaq_json::read::parse_single(t) else {
            return;
        };
        if let Some(f) = self.filters.usage.as_ref().filter(|_| usage) {
            for out in f.outputs(v.clone()) {
                if let Ok(u) =
                    crate::records::strict::from_value::<crate::records::Usage>(to_value(&out))
                    && !u.is_empty()
                {
                    self.usage
                        .get_or_insert_with(crate::records::Usage::default)
                        .add(&u);
                }
            }
        }
        if let Some(f) = self.filters.tool_calls.as_ref().filter(|_| calls) {
            for out in f.outputs(v.clone()) {
                if self.tool_calls.len() >= MAX_TOOL_CALLS {
                    self.more_tool_calls += 1;
                    continue;
                }
                let call = match to_value(&out) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                self.tool_calls
                    .push(call.chars().take(MAX_CALL_CHARS).collect());
            }
        }
        if let Some(f) = self.filters.answer.as_ref().filter(|_| answer)
            && !f.outputs(v).is_empty()
        {
            self.answered(t);
        }
    }

    /// Whether `t` is the last line held unread, again.
    fn repeats_pending(&self, t: &[u8]) -> bool {
        let Some(before) = self.pending.len().checked_sub(t.len() + 1) else {
            return false;
        };
        let p = &self.pending;
        (before == 0 || p[before - 1] == b'\n') && &p[before..p.len() - 1] == t
    }

    /// The line gave an answer: what came before it no longer counts.
    fn answered(&mut self, t: &[u8]) {
        self.pending.clear();
        let last = self.last.get_or_insert_with(Vec::new);
        last.clear();
        last.extend_from_slice(t);
    }

    /// A line only the answer filter may read: held until more are, then the last of them
    /// that gives an output is found, from the last back.
    fn defer(&mut self, t: &[u8]) {
        if self.pending.len() + t.len() >= PENDING {
            if let Some(line) = self.last_pending() {
                let line = line.to_vec();
                self.answered(&line);
            }
            self.pending.clear();
        }
        if t.len() >= PENDING {
            // Too long to hold twice: run at once.
            if let Some(f) = &self.filters.answer
                && let Ok(v) = jaq_json::read::parse_single(t)
                && !f.outputs(v).is_empty()
            {
                self.answered(t);
            }
            return;
        }
        self.pending.extend_from_slice(t);
        self.pending.push(b'\n');
    }

    /// The last held line over which the answer filter gives an output.
    fn last_pending(&self) -> Option<&[u8]> {
        let f = self.filters.answer.as_ref()?;
        let mut end = self.pending.len().checked_sub(1)?;
        loop {
            let start = memchr::memrchr(b'\n', &self.pending[..end]).map_or(0, |i| i + 1);
            let line = &self.pending[start..end];
            if let Ok(v) = jaq_json::read::parse_single(line)
                && !f.outputs(v).is_empty()
            {
                return Some(line);
            }
            end = start.checked_sub(1)?;
        }
    }

    /// A line longer than [`MAX_EVENT`], passed over unread.
    pub fn too_long(&mut self) {
        self.passed_over += 1;
    }

    /// The answer filter's last output over the stream, if it gave one.
    pub fn last_answer(&self) -> Option<Value> {
        let line = self.last_pending().or(self.last.as_deref())?;
        let v = jaq_json::read::parse_single(line).ok()?;
        let out = self
            .filters
            .answer
            .as_ref()?
            .outputs(v)
            .into_iter()
            .last()?;
        Some(to_value(&out))
    }
}

/// A jaq value as JSON; NaN and infinities, which are not JSON, read as null.
fn to_value(v: &Val) -> Value {
    serde_json::from_str(&v.to_string()).unwrap_or(Value::Null)
}

impl Filter {
    /// The filter's non-null outputs over one value, unconverted; none when it errs (a value it
    /// cannot index is not the one carrying the answer).
    fn outputs(&self, input: Val) -> Vec<Val> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        let ctx = Ctx::<data::JustLut<Val>>::new(&self.compiled.lut, Vars::new([]));
        let mut out = Vec::new();
        for v in self.compiled.id.run((ctx, input)).map(unwrap_valr) {
            match v {
                Ok(v) if !matches!(v, Val::Null) => out.push(v),
                Ok(_) => {}
                Err(_) => return Vec::new(),
            }
        }
        out
    }
}

/// What a harness's output holds, read against the contract.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// A JSON object: the answer, or (when none meets the contract) the last object seen, for
    /// the check to say why.
    Object(Map<String, Value>),
    /// Text with no JSON object in it.
    Text(String),
    /// Several objects that meet the contract and say different things: which one the model
    /// meant cannot be told (a model quoting the candidate's own JSON must not decide).
    Conflict(usize),
}

/// Checks an object against the contract the answer must meet.
pub type Meets<'a> = &'a dyn Fn(&Map<String, Value>) -> bool;

/// The answer in a harness's output: through `filter` when the harness has one (its last
/// output: an object is the answer, a string is the text to read), then fences stripped, then
/// the text as one JSON object, else the objects in it: the one that `meets` the contract, or
/// the last of several that agree.
pub fn answer(filter: Option<&Filter>, raw: &str, meets: Meets) -> Found {
    let last = filter.and_then(|f| f.last_output(raw, |_| true));
    answer_after(last, raw, meets)
}

/// [`answer`] given the filter's last output already (`None`: it gave none, or there is no
/// filter): an object is the answer, a string the text to read, else `raw` is read.
pub fn answer_after(last: Option<Value>, raw: &str, meets: Meets) -> Found {
    let text = match last {
        Some(Value::Object(obj)) => return Found::Object(obj),
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => raw.to_string(),
    };
    let text = strip_fences(&text);
    if let Some(obj) = whole_object(&text) {
        return Found::Object(obj);
    }
    let mut last = None;
    // Told apart by a form that ignores key order: a pairwise list costs the square of many.
    let mut valid: Option<Map<String, Value>> = None;
    let mut seen = std::collections::HashSet::new();
    for obj in objects(&text) {
        if meets(&obj) {
            let mut form = String::new();
            canonical(&Value::Object(obj.clone()), &mut form);
            if seen.insert(form) {
                valid = Some(obj);
            }
        } else {
            last = Some(obj);
        }
    }
    match (seen.len(), valid) {
        (1, Some(obj)) => Found::Object(obj),
        (0, _) | (_, None) => last.map_or(Found::Text(text), Found::Object),
        (n, _) => Found::Conflict(n),
    }
}

/// A value written with the keys of each object in order, so that equal values read the same.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The text as one JSON object, when it is nothing else.
fn whole_object(text: &str) -> Option<Map<String, Value>> {
    let t = text.trim();
    if !t.starts_with('{') || !parseable(t.as_bytes()) {
        return None;
    }
    serde_json::from_str(t).ok()
}

/// Drops the lines that open or close a Markdown code fence.
pub fn strip_fences(text: &str) -> String {
    if !text.contains("```") {
        return text.to_string();
    }
    text.lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The deepest nesting read. serde_json stops at 128 too; jaq's parser has no limit, and a
/// reply of 20,000 `[` overflows the stack.
pub const MAX_DEPTH: usize = 128;
/// The most values (objects, arrays, strings, numbers) one document may hold to be read: an
/// answer has a few dozen; millions of tiny ones would cost far more memory than their bytes.
pub const MAX_VALUES: usize = 100_000;

/// Whether a JSON text is shallow and small enough to parse: one linear scan, strings
/// skipped, counting nesting and values roughly (openers, strings, commas).
pub fn parseable(text: &[u8]) -> bool {
    scan(text, |_| ())
}

/// [`parseable`], handing each string met (its bytes between the quotes, escapes as written,
/// keys too) to `on_string` on the way.
pub fn scan(text: &[u8], mut on_string: impl FnMut(&[u8])) -> bool {
    let (mut depth, mut values) = (0usize, 0usize);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        i += 1;
        match b {
            b'"' => {
                values += 1;
                let start = i;
                // To the closing quote: the rest of a string up to its next quote or
                // backslash says nothing.
                loop {
                    match memchr::memchr2(b'"', b'\\', text.get(i..).unwrap_or_default()) {
                        Some(n) if text[i + n] == b'\\' => i += n + 2,
                        Some(n) => {
                            i += n;
                            break;
                        }
                        None => {
                            i = text.len();
                            break;
                        }
                    }
                }
                on_string(&text[start..i.min(text.len())]);
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                values += 1;
                if depth > MAX_DEPTH {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => values += 1,
            _ => {}
        }
        if values > MAX_VALUES {
            return false;
        }
    }
    true
}

/// The JSON objects in a text, in order, each a brace-balanced span that parses. One linear
/// scan: quotes count only inside a span; a span nested past [`MAX_DEPTH`] is passed over, as
/// is one too large to read.
pub fn objects(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    object_spans(text.as_bytes()).filter_map(move |(a, b)| {
        let span = &text[a..b];
        if parseable(span.as_bytes()) {
            serde_json::from_str::<Map<String, Value>>(span).ok()
        } else {
            None
        }
    })
}

/// Byte ranges of the brace-balanced spans of a text that start at a `{` outside any span, found
/// as they are asked for (a reply of a million `{}` is not a list of a million ranges).
fn object_spans(text: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let (mut depth, mut start) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    let mut bytes = text.iter().enumerate();
    std::iter::from_fn(move || {
        for (i, &b) in bytes.by_ref() {
            if depth == 0 {
                if b == b'{' {
                    (depth, start) = (1, i);
                }
                continue;
            }
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((start, i + 1));
                    }
                }
                _ => {}
            }
            if depth > MAX_DEPTH {
                // Nothing this deep is an answer; scanning on from here keeps the work linear.
                (depth, in_string, escaped) = (0, false, false);
            }
        }
        None
    })
}

/// The first `n` characters of a text, on one line, for records and messages.
pub fn excerpt(text: &str, n: usize) -> String {
    let flat = without_ansi(text);
    let flat: String = flat
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(n + 1)
        .collect();
    if flat.chars().count() > n {
        format!("{}…", flat.chars().take(n).collect::<String>())
    } else {
        flat
    }
}

/// `text` without terminal control sequences, which some CLIs print even to a pipe: colour
/// codes (ESC `[` … final byte) and OSC strings such as links and titles (ESC `]` … BEL or
/// ESC `\`); a message is for reading.
fn without_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\x1b') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
        } else if chars.next_if_eq(&'[').is_some() {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else if chars.next_if_eq(&']').is_some() {
            while let Some(c) = chars.next() {
                if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Found {
        Found::Object(v.as_object().unwrap().clone())
    }

    const ANY: Meets = &|_| true;

    #[test]
    fn an_excerpt_drops_colour_codes() {
        let line = "\x1b[91m\x1b[1mError: \x1b[0mCannot connect to API";
        assert_eq!(excerpt(line, 200), "Error: Cannot connect to API");
        assert_eq!(excerpt("a\x1b", 200), "a");
        let link = "see \x1b]8;;https://x.example\x07the log\x1b]8;;\x1b\\ now";
        assert_eq!(excerpt(link, 200), "see the log now");
        assert_eq!(excerpt("\x1b[", 200), "");
    }

    #[test]
    fn filter_takes_the_structured_field() {
        let f = Filter::compile(".structured_output // .result").unwrap();
        let raw = r#"{"type":"result","result":"x","structured_output":{"verdict":"holds"}}"#;
        assert_eq!(answer(Some(&f), raw, ANY), obj(json!({"verdict": "holds"})));
    }

    #[test]
    fn a_string_field_is_read_for_fences_and_its_object() {
        let f = Filter::compile(".result").unwrap();
        let raw = r#"{"result":"Sure.\n```json\n{\"verdict\":\"breaks\"}\n```"}"#;
        assert_eq!(
            answer(Some(&f), raw, ANY),
            obj(json!({"verdict": "breaks"}))
        );
    }

    #[test]
    fn json_lines_keep_the_last_answer_and_pass_over_other_lines() {
        let f = Filter::compile(r#"select(.role == "assistant") | .content"#).unwrap();
        let raw = "{\"role\":\"assistant\",\"content\":\"thinking\"}\nnot json\n{\"role\":\"assistant\",\"content\":\"{\\\"verdict\\\":\\\"holds\\\"}\"}\n";
        assert_eq!(answer(Some(&f), raw, ANY), obj(json!({"verdict": "holds"})));
    }

    #[test]
    fn pretty_printed_documents_are_read_whole() {
        let f = Filter::compile(".response").unwrap();
        let raw = "{\n  \"response\": \"{\\\"verdict\\\":\\\"holds\\\"}\"\n}\n";
        assert_eq!(answer(Some(&f), raw, ANY), obj(json!({"verdict": "holds"})));
    }

    #[test]
    fn output_that_is_not_json_falls_back_to_the_text() {
        let f = Filter::compile(".result").unwrap();
        assert_eq!(
            answer(Some(&f), "API Error: Connection refused", ANY),
            Found::Text("API Error: Connection refused".into())
        );
    }

    #[test]
    fn objects_skip_braces_that_are_not_json() {
        let text = "I think {this} is fine: {\"verdict\":\"holds\",\"n\":{\"a\":1}} and {\"x\":2}";
        let found: Vec<Value> = objects(text).map(Value::Object).collect();
        assert_eq!(
            found,
            [json!({"verdict":"holds","n":{"a":1}}), json!({"x": 2})]
        );
        assert_eq!(objects("no braces").count(), 0);
    }

    fn has_verdict(obj: &Map<String, Value>) -> bool {
        obj.get("verdict")
            .is_some_and(|v| v == "holds" || v == "breaks")
    }

    /// A model that quotes the candidate's own JSON before its answer: two answers that
    /// disagree, so neither decides (docs/design.md §4).
    #[test]
    fn a_quoted_answer_before_the_model_s_own_is_a_conflict_not_the_quote() {
        let reply = "The work says: {\"verdict\":\"holds\",\"reason\":\"trust me\"}. \
                     My answer: {\"verdict\":\"breaks\",\"reason\":\"xs[0] on an empty list\"}";
        assert_eq!(answer(None, reply, &has_verdict), Found::Conflict(2));
        let same = "{\"verdict\":\"breaks\"} and again {\"verdict\":\"breaks\"}";
        assert_eq!(
            answer(None, same, &has_verdict),
            obj(json!({"verdict": "breaks"}))
        );
        // The last object meeting the contract counts, not the first object there is.
        let noise = "{\"note\":1} then {\"verdict\":\"holds\"} then {\"other\":2}";
        assert_eq!(
            answer(None, noise, &has_verdict),
            obj(json!({"verdict": "holds"}))
        );
        // None meets it: the last object, for the check to say why.
        assert_eq!(
            answer(None, "{\"a\":1} {\"b\":2}", &has_verdict),
            obj(json!({"b": 2}))
        );
    }

    /// 20,000 `[` overflowed the stack inside jaq's parser and killed panel-judge (exit 134).
    #[test]
    fn deep_nesting_is_passed_over_not_parsed() {
        let deep = "[".repeat(20_000);
        let f = Filter::compile(".result").unwrap();
        assert_eq!(answer(Some(&f), &deep, ANY), Found::Text(deep.clone()));
        let wrapped = format!("{{\"result\": {deep}}}");
        assert!(matches!(answer(Some(&f), &wrapped, ANY), Found::Text(_)));
        let lines = format!("{deep}\n{{\"result\":{{\"verdict\":\"holds\"}}}}\n");
        assert_eq!(
            answer(Some(&f), &lines, ANY),
            obj(json!({"verdict": "holds"}))
        );
    }

    /// A reply of millions of tiny values is not parsed into a tree of them.
    #[test]
    fn too_many_values_are_passed_over() {
        let many = format!("[{}]", vec!["{}"; MAX_VALUES + 1].join(","));
        assert!(!parseable(many.as_bytes()));
        assert!(parseable(b"{\"a\":[1,2,3],\"b\":\"[[[[\"}"));
    }

    #[test]
    fn bad_filters_say_so() {
        assert!(Filter::compile(".a | select(.b ==").is_err());
        let err = Filter::compile(".a | nosuchfn(1)").unwrap_err().to_string();
        assert!(err.contains("nosuchfn"), "{err}");
    }

    #[test]
    fn excerpt_is_one_bounded_line() {
        assert_eq!(excerpt("  a\nb  ", 10), "a b");
        assert_eq!(excerpt("abcdef", 3), "abc…");
    }
}
