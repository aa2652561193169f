#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use panel::engine::extract::{self, Filter, Found};

// The filters the built-in harnesses use most: a structured field, a JSON-lines select.
fn filters() -> &'static [Filter] {
    static F: OnceLock<Vec<Filter>> = OnceLock::new();
    F.get_or_init(|| {
        [
            ".structured_output // .result",
            r#"select(.role == "assistant") | .content"#,
            ".response",
        ]
        .iter()
        .map(|c| Filter::compile(c).unwrap())
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let which = data.first().map_or(0, |b| *b as usize);
    let filter = &filters()[which % filters().len()];
    for found in [
        extract::answer(Some(filter), text),
        extract::answer(None, text),
    ] {
        if let Found::Object(obj) = found {
            // What was found prints as JSON and reads back with the same keys. Numbers may
            // move by one ulp: serde_json's default float parser is not exact (no
            // float_roundtrip), so compare the second trip with the first.
            let printed = serde_json::to_string(&obj).unwrap();
            let back: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&printed).unwrap();
            assert!(back.keys().eq(obj.keys()));
            let again: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&serde_json::to_string(&back).unwrap()).unwrap();
            assert_eq!(again.len(), back.len());
        }
    }
    let stripped = extract::strip_fences(text);
    assert!(stripped.len() <= text.len());
    if let Some(obj) = extract::first_object(text) {
        assert!(text.contains('{'), "an object found with no brace: {obj:?}");
    }
    let ex = extract::excerpt(text, 40);
    assert!(!ex.contains('\n'));
});
