//! Reading an answer out of what a harness printed: the harness's jq filter, then code fences
//! stripped, then the first JSON object. The only module that touches jaq.

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
    pub fn run_text(&self, text: &str) -> Option<Vec<Value>> {
        let whole: Result<Vec<Val>, _> = jaq_json::read::parse_many(text.as_bytes()).collect();
        let values = match whole {
            Ok(vs) if !vs.is_empty() => vs,
            _ => text
                .lines()
                .filter(|l| l.trim_start().starts_with(['{', '[']))
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

/// What a harness's output holds, before the contract is checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// A JSON object: the candidate answer.
    Object(Map<String, Value>),
    /// Text with no JSON object in it.
    Text(String),
}

/// The answer in a harness's output: through `filter` when the harness has one (its last
/// output: an object is the answer, a string is the text to read), then fences stripped, then
/// the first JSON object in the text.
pub fn answer(filter: Option<&Filter>, raw: &str) -> Found {
    let text = match filter.and_then(|f| f.run_text(raw)) {
        Some(outputs) => match outputs.into_iter().last() {
            Some(Value::Object(obj)) => return Found::Object(obj),
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
            None => raw.to_string(),
        },
        None => raw.to_string(),
    };
    let text = strip_fences(&text);
    match first_object(&text) {
        Some(obj) => Found::Object(obj),
        None => Found::Text(text),
    }
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

/// How many `{` a scan tries before it gives up on a text.
const MAX_OBJECT_STARTS: usize = 4096;

/// The first complete JSON object in a text, wherever it starts.
pub fn first_object(text: &str) -> Option<Map<String, Value>> {
    for (tried, (at, _)) in text.match_indices('{').enumerate() {
        if tried >= MAX_OBJECT_STARTS {
            return None;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(obj))) = stream.next() {
            return Some(obj);
        }
    }
    None
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
        assert_eq!(answer(Some(&f), raw), obj(json!({"verdict": "holds"})));
    }

    #[test]
    fn a_string_field_is_read_for_fences_and_the_first_object() {
        let f = Filter::compile(".result").unwrap();
        let raw = r#"{"result":"Sure.\n```json\n{\"verdict\":\"breaks\"}\n```"}"#;
        assert_eq!(answer(Some(&f), raw), obj(json!({"verdict": "breaks"})));
    }

    #[test]
    fn json_lines_keep_the_last_answer_and_pass_over_other_lines() {
        let f = Filter::compile(r#"select(.role == "assistant") | .content"#).unwrap();
        let raw = "{\"role\":\"assistant\",\"content\":\"thinking\"}\nnot json\n{\"role\":\"assistant\",\"content\":\"{\\\"verdict\\\":\\\"holds\\\"}\"}\n";
        assert_eq!(answer(Some(&f), raw), obj(json!({"verdict": "holds"})));
    }

    #[test]
    fn pretty_printed_documents_are_read_whole() {
        let f = Filter::compile(".response").unwrap();
        let raw = "{\n  \"response\": \"{\\\"verdict\\\":\\\"holds\\\"}\"\n}\n";
        assert_eq!(answer(Some(&f), raw), obj(json!({"verdict": "holds"})));
    }

    #[test]
    fn output_that_is_not_json_falls_back_to_the_text() {
        let f = Filter::compile(".result").unwrap();
        assert_eq!(
            answer(Some(&f), "API Error: Connection refused"),
            Found::Text("API Error: Connection refused".into())
        );
    }

    #[test]
    fn first_object_skips_braces_that_are_not_json() {
        let text = "I think {this} is fine: {\"verdict\":\"holds\",\"n\":{\"a\":1}} and {\"x\":2}";
        assert_eq!(
            first_object(text),
            Some(
                json!({"verdict":"holds","n":{"a":1}})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        assert_eq!(first_object("no braces"), None);
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
