//! Which lines of a judge's output a jq filter can read something from, told by one linear scan
//! before any parse: a line passed over costs its bytes, never a parse or a run of jq.
//!
//! The rule is derived from the filter's text only where that is sound, and only for two shapes
//! the harness rows use: `select(.p == "LIT" and …) | …`, which outputs nothing unless the
//! value holds the string LIT, and a bare path `.a.b`, which outputs null (dropped) unless the
//! value holds the key `b`. Any other filter reads every line.

/// What a line must hold, as a JSON string (a key or a value), for a filter to output anything
/// that is not null; `None` when the filter reads every line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sieve {
    needle: Option<Vec<u8>>,
}

impl Sieve {
    /// The sieve of a filter's code.
    pub fn of(code: &str) -> Sieve {
        Sieve {
            needle: needle(code.trim()).map(|s| s.as_bytes().to_vec()),
        }
    }

    /// The string a line must hold, if there is one.
    pub fn needle(&self) -> Option<&[u8]> {
        self.needle.as_deref()
    }

    /// Whether the JSON string `raw` (its bytes between the quotes, escapes as written) may be
    /// the needle. True when there is no needle.
    pub fn matches(&self, raw: &[u8]) -> bool {
        self.needle.as_deref().is_none_or(|n| json_str_eq(raw, n))
    }
}

/// The string the filter needs, for the two shapes read; a shape not recognised gives none.
fn needle(code: &str) -> Option<&str> {
    if let Some(segments) = path(code)
        && segments.len() == code.len()
    {
        return code.rsplit('.').next().filter(|s| !s.is_empty());
    }
    let rest = code.strip_prefix("select(")?;
    let (lit, rest) = atom(rest)?;
    // Only `and` may join the first test to the rest, and nothing may follow select but a
    // pipe: `or`, `//` or `,` would let a line that fails the test through.
    let mut rest = rest.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix(')') {
            let after = after.trim_start();
            return (after.is_empty() || after.starts_with('|')).then_some(lit);
        }
        rest = rest.strip_prefix("and")?;
        if !rest.starts_with([' ', '(', '.']) {
            return None;
        }
        rest = rest.trim_start();
        rest = match atom(rest) {
            Some((_, after)) => after,
            None => group(rest)?,
        }
        .trim_start();
    }
}

/// The length of a path `.a.b` (identifiers only) at the start of `code`.
fn path(code: &str) -> Option<&str> {
    let bytes = code.as_bytes();
    let mut i = 0;
    while bytes.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut end = start;
        while bytes
            .get(end)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            end += 1;
        }
        if end == start || bytes[start].is_ascii_digit() {
            return None;
        }
        i = end;
    }
    (i > 0).then(|| &code[..i])
}

/// A test `.p == "LIT"` at the start of `code` (LIT plain printable ASCII, no escapes): LIT and
/// what follows the test.
fn atom(code: &str) -> Option<(&str, &str)> {
    let p = path(code)?;
    let rest = code[p.len()..].trim_start().strip_prefix("==")?;
    let rest = rest.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    let lit = &rest[..end];
    let plain = lit
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'\\');
    (plain && !lit.is_empty()).then(|| (lit, &rest[end + 1..]))
}

/// A parenthesised group at the start of `code` (strings in it without escapes): what follows.
fn group(code: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut in_string = false;
    for (i, b) in code.bytes().enumerate() {
        match b {
            b'\\' => return None,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'(' => depth += 1,
            b')' if depth == 0 => return None,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&code[i + 1..]);
                }
            }
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Whether the JSON string `raw` (between its quotes, escapes as written) decodes to `lit`
/// (printable ASCII). An escape JSON does not have is taken as a possible match: the parser
/// decides.
pub fn json_str_eq(raw: &[u8], lit: &[u8]) -> bool {
    // Each escape is longer than what it stands for: a shorter string cannot be the needle.
    if raw.len() < lit.len() {
        return false;
    }
    if !raw.contains(&b'\\') {
        return raw == lit;
    }
    let (mut i, mut j) = (0, 0);
    while i < raw.len() {
        let c = if raw[i] == b'\\' {
            let Some(&e) = raw.get(i + 1) else {
                return true;
            };
            i += 2;
            match e {
                b'"' | b'\\' | b'/' => e,
                b'b' => 8,
                b'f' => 12,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    let hex = raw.get(i..i + 4).and_then(|h| std::str::from_utf8(h).ok());
                    let Some(code) = hex.and_then(|h| u32::from_str_radix(h, 16).ok()) else {
                        return true;
                    };
                    i += 4;
                    // Past ASCII it is none of the needle's characters.
                    match u8::try_from(code) {
                        Ok(c) if c.is_ascii() => c,
                        _ => return false,
                    }
                }
                _ => return true,
            }
        } else {
            i += 1;
            raw[i - 1]
        };
        if lit.get(j) != Some(&c) {
            return false;
        }
        j += 1;
    }
    j == lit.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::Rng;

    fn needle_of(code: &str) -> Option<String> {
        Sieve::of(code)
            .needle()
            .map(|n| String::from_utf8(n.to_vec()).unwrap())
    }

    #[test]
    fn the_rows_filters_have_the_needles_they_test_for() {
        let cases = [
            (r#"select(.type == "result") | .result"#, Some("result")),
            (
                r#"select(.type == "item.completed" and .item.type == "agent_message") | .item.text"#,
                Some("item.completed"),
            ),
            (
                r#"select(.type == "item.completed" and (.item.type == "command_execution" or .item.type == "file_change")) | (.item.command // .item.type)"#,
                Some("item.completed"),
            ),
            (
                r#"select(.type == "assistant") | .message.content[]? | select(.type == "tool_use") | .name"#,
                Some("assistant"),
            ),
            (".response", Some("response")),
            (".a.b_c", Some("b_c")),
            // Every line may give an output: no needle.
            (
                r#"if type == "object" and .type == "result" then (.structured_output // .result) else . end"#,
                None,
            ),
            (r#"select(.type == "result" or true)"#, None),
            (r#"select(.type == "result" and .x or true)"#, None),
            (r#"select(.type == "result" and .x // true)"#, None),
            (r#"select(.type == "result"), 1"#, None),
            (r#"select(.type == "result") // 1"#, None),
            (r#"select(.type == "res\u0074")"#, None),
            (r#"select(.type == "result" | not)"#, None),
            (r#"select(.type == "result" and (.a) or true)"#, None),
            (".response // .x", None),
            (".", None),
            (".[0]", None),
            (".a | 5", None),
        ];
        for (code, want) in cases {
            assert_eq!(needle_of(code).as_deref(), want, "{code}");
        }
    }

    #[test]
    fn escaped_strings_are_compared_decoded() {
        assert!(json_str_eq(b"result", b"result"));
        assert!(json_str_eq(br"r\u0065sult", b"result"));
        assert!(json_str_eq(br"\/", b"/"));
        assert!(!json_str_eq(br"\n", b"result"));
        assert!(!json_str_eq(br"resul\u00e9", b"result"));
        assert!(!json_str_eq(b"results", b"result"));
        // What JSON does not have is left to the parser.
        assert!(json_str_eq(br"resul\q", b"result"));
    }

    use crate::engine::call::extract::{EventFilters, Events, Filter, Found, answer};
    use crate::engine::harness::Table;
    use serde_json::Value;
    use std::sync::Arc;

    /// The filters of the builtin rows an event stream is read with: claude sealed, claude
    /// reviewing, codex sealed and reviewing.
    fn row_filters() -> Vec<EventFilters> {
        let table = Table::builtin();
        let f = |code: &Option<String>| {
            code.as_deref()
                .map(|c| Arc::new(Filter::compile(c).unwrap()))
        };
        let mut all = Vec::new();
        for name in ["claude", "codex"] {
            let h = table.get(name).unwrap();
            let r = h.reviewer.as_ref().unwrap();
            all.push(EventFilters {
                answer: f(&h.filter),
                usage: f(&h.usage),
                tool_calls: None,
            });
            all.push(EventFilters {
                answer: f(&r.filter),
                usage: f(&h.usage),
                tool_calls: f(&r.tool_calls),
            });
        }
        all
    }

    /// A random JSON value written out, from the words the rows' filters test for (some of
    /// them escaped), or sometimes a broken one.
    fn value(rng: &mut Rng, depth: usize, out: &mut String) {
        const KEYS: &[&str] = &[
            "type",
            r"t\u0079pe",
            "result",
            "item",
            "message",
            "content",
            "usage",
            "structured_output",
            "name",
            "text",
            "output_tokens",
            "input_tokens",
            "command",
        ];
        const STRINGS: &[&str] = &[
            "result",
            r"r\u0065sult",
            "assistant",
            "item.completed",
            "agent_message",
            "tool_use",
            "turn.completed",
            "command_execution",
            "x",
            r"\n",
            "{\"verdict\":\"holds\"}",
        ];
        match rng.below(if depth >= 4 { 3 } else { 6 }) {
            0 => out.push_str(&format!("\"{}\"", rng.pick(STRINGS))),
            1 => out.push_str(rng.pick(&["1", "7", "null", "true", "0.5"])),
            2 => out.push_str(rng.pick(&["{}", "[]", "[[[]]]", "{\"a\":}"])),
            3 => {
                out.push('[');
                for i in 0..rng.below(3) {
                    if i > 0 {
                        out.push(',');
                    }
                    value(rng, depth + 1, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&format!("\"{}\":", rng.pick(KEYS)));
                    value(rng, depth + 1, out);
                }
                out.push('}');
            }
        }
    }

    /// What reading every line whole gives: the usage summed, the calls, the last answer.
    fn exhaustive(
        f: &EventFilters,
        lines: &[String],
    ) -> (Option<crate::records::Usage>, Vec<String>, Option<Value>) {
        let outs = |f: &Option<Arc<Filter>>, v: &Value| -> Vec<Value> {
            let Some(f) = f else { return Vec::new() };
            f.run(v)
                .unwrap_or_default()
                .into_iter()
                .filter(|o| !o.is_null())
                .collect()
        };
        let (mut usage, mut calls, mut last) = (None, Vec::new(), None);
        for line in lines {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if !v.is_object() && !v.is_array() {
                continue;
            }
            for u in outs(&f.usage, &v) {
                if let Ok(u) = crate::records::strict::from_value::<crate::records::Usage>(u)
                    && !u.is_empty()
                {
                    usage
                        .get_or_insert_with(crate::records::Usage::default)
                        .add(&u);
                }
            }
            for c in outs(&f.tool_calls, &v) {
                calls.push(match c {
                    Value::String(s) => s,
                    other => other.to_string(),
                });
            }
            if let Some(a) = outs(&f.answer, &v).pop() {
                last = Some(a);
            }
        }
        (usage, calls, last)
    }

    /// A line the sieve passes over gives the same answer, usage and tool calls as reading it
    /// would: random lines through each row's filters, against every line read whole.
    #[test]
    fn the_sieve_is_sound() {
        let mut rng = Rng::for_figure("the sieve");
        let mut found = [0; 3];
        for f in row_filters() {
            for _ in 0..40 {
                let mut lines: Vec<String> = Vec::new();
                for _ in 0..rng.below(400) {
                    let line = match (rng.below(8), lines.last()) {
                        // A line again, as a flood repeats one.
                        (1, Some(last)) => last.clone(),
                        (0, _) => rng.pick(EVENTS).to_string(),
                        _ => {
                            let mut s = String::new();
                            value(&mut rng, 0, &mut s);
                            s
                        }
                    };
                    lines.push(line);
                }
                let mut events = Events::new(f.clone());
                for l in &lines {
                    events.line(l.as_bytes());
                }
                let (usage, calls, last) = exhaustive(&f, &lines);
                found[0] += usize::from(usage.is_some());
                found[1] += calls.len();
                found[2] += usize::from(last.is_some());
                assert_eq!(events.usage, usage, "{lines:?}");
                assert_eq!(events.tool_calls, calls, "{lines:?}");
                assert_eq!(events.last_answer(), last, "{lines:?}");
            }
        }
        // The lines did give usage, calls and answers to compare.
        assert!(found.iter().all(|n| *n > 10), "{found:?}");
    }

    /// Events of the rows' own shapes, some with their words escaped.
    const EVENTS: &[&str] = &[
        r#"{"type":"result","result":"{\"verdict\":\"holds\"}","usage":{"output_tokens":3}}"#,
        r#"{"t\u0079pe":"r\u0065sult","result":"escaped","usage":{"input_tokens":5}}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read"}]}}"#,
        r#"{"type":"item.completed","item":{"type":"agent_message","text":"done"}}"#,
        r#"{"type":"item.completed","item":{"type":"command_execution","command":"ls"}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":2,"output_tokens":1}}"#,
        r#"{"type":"result","structured_output":{"verdict":"breaks"}}"#,
    ];

    fn runs(f: &EventFilters) -> u64 {
        [&f.answer, &f.usage, &f.tool_calls]
            .into_iter()
            .flatten()
            .map(|f| f.runs())
            .sum()
    }

    /// Lines of `{}` and of brackets 48 deep cost a run of jq each (1.2-1.8 GB and minutes for
    /// a reply of 256 MiB): now almost none is run, and the answer after them still counts.
    #[test]
    fn a_flood_of_empty_or_nested_lines_is_not_run_through_jq() {
        let flood = [
            "{}".to_string(),
            format!("{}{}", "[".repeat(48), "]".repeat(48)),
        ];
        let result =
            r#"{"type":"result","result":"{\"verdict\":\"holds\"}","usage":{"output_tokens":3}}"#;
        for f in row_filters() {
            let mut events = Events::new(f.clone());
            let mut bytes = 0;
            for i in 0..200_000 {
                events.line(flood[i % 2].as_bytes());
                bytes += flood[i % 2].len() + 1;
            }
            events.line(result.as_bytes());
            // About one run for each PENDING bytes held unread, none for the others.
            let most = 2 * bytes / crate::engine::call::extract::PENDING + 4;
            assert!(runs(&f) <= most as u64, "{} runs", runs(&f));
            let (usage, _, last) = exhaustive(&f, &[result.to_string()]);
            assert_eq!((events.usage.clone(), events.last_answer()), (usage, last));
        }
        // Read whole (a reply within what is held), the same.
        let claude = Table::builtin().get("claude").unwrap().clone();
        let f = Filter::compile(claude.filter.as_deref().unwrap()).unwrap();
        let text = format!("{}{result}\n", "{}\n".repeat(200_000));
        let found = answer(Some(&f), &text, &|_| true);
        assert_eq!(
            found,
            Found::Object(serde_json::from_str(r#"{"verdict":"holds"}"#).unwrap())
        );
        assert!(f.runs() <= 2, "{} runs", f.runs());
        let usage = Filter::compile(claude.usage.as_deref().unwrap()).unwrap();
        assert_eq!(usage.run_text(&text).map(|o| o.len()), Some(1));
        assert_eq!(usage.runs(), 1);
    }

    /// A value deeper or larger than an answer can be never reaches jq.
    #[test]
    fn deep_or_huge_lines_never_reach_jq() {
        for f in row_filters() {
            let mut events = Events::new(f.clone());
            let deep = format!("{}\"result\"{}", "[".repeat(200), "]".repeat(200));
            let many = format!(
                "[{}]",
                vec!["\"result\""; crate::engine::call::extract::MAX_VALUES + 1].join(",")
            );
            events.line(deep.as_bytes());
            events.line(many.as_bytes());
            assert_eq!(events.last_answer(), None);
            assert_eq!((runs(&f), events.passed_over), (0, 2));
        }
    }
}
