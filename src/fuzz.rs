//! The properties the fuzz targets check, one function a target: `fuzz/fuzz_targets/*.rs` call
//! them under libFuzzer, and `cargo test` calls them on the seed inputs and every crash kept
//! under `tests/fixtures/fuzz/`, so the suite checks what the fuzzer checks. Each returns
//! normally or panics naming the property that broke.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::contracts::pr::{block, followups};
use crate::engine::call::extract::{self, Filter, Found};
use crate::records::facts::{self, FactsInput};
use crate::records::input::Input;
use crate::records::review::ReviewRecord;
use crate::records::{self as recs, VerdictRecord};

/// A target's property check over one input.
pub type Property = fn(&[u8]);

/// Every target, by the name of its folder of inputs.
pub const TARGETS: &[(&str, Property)] = &[
    ("extract", extract),
    ("followups", followups),
    ("gh", gh),
    ("numstat", numstat),
    ("records", records),
    ("review_check", review_check),
    ("verdict_block", verdict_block),
];

/// The filters the built-in harnesses use most: a structured field, a JSON-lines select.
fn filters() -> &'static [Filter] {
    static F: OnceLock<Vec<Filter>> = OnceLock::new();
    F.get_or_init(|| {
        [
            ".structured_output // .result",
            r#"select(.role == "assistant") | .content"#,
            ".response",
        ]
        .iter()
        .map(|c| Filter::compile(c).expect("the built-in filters compile"))
        .collect()
    })
}

/// Extraction: an object found prints as JSON and reads back with the same keys; stripping
/// fences never grows the text; an excerpt is one line.
pub fn extract(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let which = data.first().map_or(0, |b| *b as usize);
    let filter = &filters()[which % filters().len()];
    for found in [
        extract::answer(Some(filter), text, &|_| true),
        extract::answer(None, text, &|o| o.contains_key("verdict")),
    ] {
        if let Found::Object(obj) = found {
            // Numbers may move by one ulp: serde_json's default float parser is not exact
            // (no float_roundtrip), so the second trip is compared with the first.
            let printed = serde_json::to_string(&obj).expect("an object prints");
            let back: Map<String, Value> = serde_json::from_str(&printed).expect("reads back");
            assert!(
                back.keys().eq(obj.keys()),
                "the keys changed on a round trip"
            );
            let again: Map<String, Value> =
                serde_json::from_str(&serde_json::to_string(&back).expect("prints"))
                    .expect("reads back");
            assert_eq!(again.len(), back.len());
        }
    }
    assert!(extract::strip_fences(text).len() <= text.len());
    for obj in extract::objects(text) {
        assert!(text.contains('{'), "an object found with no brace: {obj:?}");
    }
    assert!(
        !extract::excerpt(text, 40).contains('\n'),
        "an excerpt of two lines"
    );
}

/// Follow-ups: a block is filed whole within its limits, or not at all.
pub fn followups(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let followups::FollowUps::Tasks(tasks) = followups::parse_follow_ups(text) {
        assert!(tasks.len() <= followups::MAX_FOLLOW_UPS);
        for t in &tasks {
            assert!(t.title.chars().count() <= followups::MAX_TITLE_CHARS);
            assert!(t.done_when.chars().count() <= followups::MAX_DONE_WHEN_CHARS);
            assert!(["low", "medium", "high"].contains(&t.severity.as_str()));
        }
    }
}

/// PR facts as JSON (the seed's facts, gh's output): what is accepted prints and reads back as
/// facts; what is refused is one error naming the input.
pub fn gh(data: &[u8]) {
    for format in [FactsInput::Gh, FactsInput::Facts, FactsInput::Detect] {
        match facts::parse("fuzz", data, format) {
            Ok(f) => {
                let printed = serde_json::to_vec(&f).expect("facts print");
                if let Err(e) = facts::parse("again", &printed, FactsInput::Facts) {
                    panic!("accepted facts do not read back: {e}");
                }
            }
            Err(e) => assert_one_line(&e.to_string(), "fuzz: "),
        }
    }
}

/// `git diff --numstat`: every file accepted names a path; a refusal is one error naming the
/// input.
pub fn numstat(data: &[u8]) {
    match facts::parse("fuzz", data, FactsInput::Numstat) {
        Ok(f) => assert!(
            f.changed_files.iter().all(|c| !c.path.is_empty()),
            "a file without a path: {f:?}"
        ),
        Err(e) => assert_one_line(&e.to_string(), "fuzz: "),
    }
    if let Ok(line) = std::str::from_utf8(data) {
        let _ = facts::numstat::numstat_line(line);
    }
}

/// Records: lines are counted and never hold a newline; a verdict record accepted writes back
/// and reads back the same; a refusal names the line, in one line.
pub fn records(data: &[u8]) {
    let mut input = Input::from_reader("fuzz", std::io::Cursor::new(data.to_vec()));
    let mut buf = String::new();
    let mut lines = 0u64;
    while let Ok(true) = input.next_line(&mut buf) {
        lines += 1;
        assert_eq!(input.line_number(), lines);
        assert!(!buf.contains('\n'));
        let at = || input.at();
        if let Ok(rec) = recs::parse::<VerdictRecord>(&buf, &at, &["verdict"]) {
            let mut out = Vec::new();
            recs::write(&mut out, &rec).expect("a record writes");
            let line = std::str::from_utf8(&out).expect("UTF-8").trim_end();
            let again = recs::parse::<VerdictRecord>(line, &at, &["verdict"])
                .expect("a record written reads back");
            assert_eq!(again.judge, rec.judge);
            assert_eq!(again.verdict, rec.verdict);
        }
        if let Err(e) = recs::parse::<ReviewRecord>(&buf, &at, &["review"]) {
            assert_one_line(&e.to_string(), "fuzz: line ");
        }
    }
}

/// The review contract: every finding it accepts has evidence, a fix, and no line 0.
pub fn review_check(data: &[u8]) {
    let Ok(Value::Object(answer)) = serde_json::from_slice(data) else {
        return;
    };
    if let Ok(r) = crate::contracts::review::check(&answer) {
        for f in &r.findings {
            assert!(!f.evidence.trim().is_empty() && !f.fix.trim().is_empty());
            assert!(f.line != Some(0));
        }
    }
}

/// The PR verdict block and its lines: nothing in a reviewer's reply makes the parsers panic.
pub fn verdict_block(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = block::parse_verdict_block(text);
    for line in block::visible_lines(text) {
        let _ = block::key_value(line);
        let _ = block::parse_finding(line);
        let _ = block::parse_ci_policy(line);
    }
}

/// An error is one line that starts with `prefix`.
fn assert_one_line(error: &str, prefix: &str) {
    assert!(error.starts_with(prefix), "{error}");
    assert!(
        !error.contains(['\n', '\r']),
        "an error of two lines: {error:?}"
    );
}
