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

type Compiled = jaq_core::Filter<data::JustLut<Val>>;

/// A jq filter, compiled once and run as often as needed (it is `Send + Sync`).
pub struct Filter {
    code: String,
    compiled: Compiled,
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
        })
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// Runs the filter over one JSON value; every output, or the first error.
    pub fn run(&self, input: &Value) -> Result<Vec<Value>> {
        let input = jaq_json::read::parse_single(input.to_string().as_bytes())
            .map_err(|e| anyhow!("jq input: {e:?}"))?;
        self.run_val(input)
    }

    fn run_val(&self, input: Val) -> Result<Vec<Value>> {
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
    /// JSON lines where lines that are not JSON are passed over. `None` when no JSON is there.
    /// A document or line too deep or too large to read (see [`parseable`]) is passed over.
    pub fn run_text(&self, text: &str) -> Option<Vec<Value>> {
        let whole: Result<Vec<Val>, _> = if parseable(text.as_bytes()) {
            jaq_json::read::parse_many(text.as_bytes()).collect()
        } else {
            Ok(Vec::new())
        };
        let values = match whole {
            Ok(vs) if !vs.is_empty() => vs,
            _ => text
                .lines()
                .filter(|l| l.trim_start().starts_with(['{', '[']))
                .filter(|l| parseable(l.as_bytes()))
                .filter_map(|l| jaq_json::read::parse_single(l.as_bytes()).ok())
                .collect(),
        };
        if values.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        for v in values {
            // A value the filter cannot index is not the one carrying the answer.
            if let Ok(vs) = self.run_val(v) {
                out.extend(vs.into_iter().filter(|v| !v.is_null()));
            }
        }
        Some(out)
    }
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

/// Reading an event stream line by line: memory bounded by the longest event read, whatever
/// the length of the stream.
#[derive(Debug, Default)]
pub struct Events {
    filters: EventFilters,
    /// The last line over which the answer filter gave an output: run again at the end, so
    /// that the output is converted once (and what is held can cross threads).
    last: Option<Vec<u8>>,
    /// Lines that were JSON values.
    pub json_lines: u64,
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
        let f = &self.filters;
        if f.answer.is_none() && f.usage.is_none() && f.tool_calls.is_none() {
            return;
        }
        let t = line.trim_ascii();
        if !t.starts_with(b"{") && !t.starts_with(b"[") {
            return;
        }
        if !parseable(t) {
            self.passed_over += 1;
            return;
        }
        let Ok(v) = jaq_json::read::parse_single(t) else {
            return;
        };
        self.json_lines += 1;
        if let Some(f) = &self.filters.usage {
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
        if let Some(f) = &self.filters.tool_calls {
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
        if let Some(f) = &self.filters.answer
            && !f.outputs(v).is_empty()
        {
            let last = self.last.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(t);
        }
    }

    /// A line longer than [`MAX_EVENT`], passed over unread.
    pub fn too_long(&mut self) {
        self.passed_over += 1;
    }

    /// The answer filter's last output over the stream, if it gave one.
    pub fn last_answer(&self) -> Option<Value> {
        let line = self.last.as_deref()?;
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
    let last = filter
        .and_then(|f| f.run_text(raw))
        .and_then(|outputs| outputs.into_iter().last());
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
    let mut valid: Vec<Map<String, Value>> = Vec::new();
    for obj in objects(&text) {
        if meets(&obj) {
            if !valid.contains(&obj) {
                valid.push(obj);
            }
        } else {
            last = Some(obj);
        }
    }
    match valid.len() {
        0 => last.map_or(Found::Text(text), Found::Object),
        1 => Found::Object(valid.pop().expect("one")),
        n => Found::Conflict(n),
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
    let (mut depth, mut values) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        i += 1;
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                // The rest of a string up to its next quote or backslash says nothing.
                _ => i = memchr::memchr2(b'"', b'\\', &text[i..]).map_or(text.len(), |n| i + n),
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                values += 1;
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
    object_spans(text.as_bytes())
        .into_iter()
        .filter_map(move |(a, b)| {
            let span = &text[a..b];
            if parseable(span.as_bytes()) {
                serde_json::from_str::<Map<String, Value>>(span).ok()
            } else {
                None
            }
        })
}

/// Byte ranges of the brace-balanced spans of a text that start at a `{` outside any span.
fn object_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in text.iter().enumerate() {
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
                    spans.push((start, i + 1));
                }
            }
            _ => {}
        }
        if depth > MAX_DEPTH {
            // Nothing this deep is an answer; scanning on from here keeps the work linear.
            (depth, in_string, escaped) = (0, false, false);
        }
    }
    spans
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
