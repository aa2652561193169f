//! JSON Schemas of every record the tools write, and of a harness row, generated from the
//! record types with schemars. The files under `schemas/` are these, committed; a test renders
//! them and fails when they drift, and the integration tests validate every record a tool
//! prints against the schema of its `type`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::engine::harness::Harness;
use crate::records::VerdictRecord;
use crate::records::class::PrClass;
use crate::records::doctor::{HarnessStatus, SandboxStatus};
use crate::records::facts::PrFacts;
use crate::records::gold::GoldLabel;
use crate::records::ledger::{
    GoldAgreement, GoldSummary, JudgeStats, LedgerSummary, PairAgreement,
};
use crate::records::pairwise::{PairwiseRecord, PreferenceTally};
use crate::records::plan::PanelPlan;
use crate::records::pr::{PanelVerdict, PrVerdictRecord};
use crate::records::review::ReviewRecord;
use crate::records::synthesis::{
    DecisionRecord, MergeRecord, MergedFinding, PanelRecord, Reviewer, RouteRecord, SynthesisEntry,
    VoteRecord,
};
use crate::records::tally::Summary;
use crate::records::tally::{SynthesisTally, Tally, ThresholdTally};

/// One schema file: its name under `schemas/` without `.schema.json` (the record's `type`, or
/// `harness`), and the schema.
pub struct SchemaFile {
    pub name: &'static str,
    pub schema: Value,
}

impl SchemaFile {
    /// The file's name under `schemas/`.
    pub fn file_name(&self) -> String {
        format!("{}.schema.json", self.name)
    }

    /// The file's text: pretty JSON and a closing newline.
    pub fn text(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema).expect("a schema is JSON");
        text.push('\n');
        text
    }
}

/// Every schema: one per record type the tools write, then `harness`.
pub fn schemas() -> Vec<SchemaFile> {
    vec![
        record::<VerdictRecord>("verdict", "panel-judge: one judge's verdict"),
        record::<ReviewRecord>(
            "review",
            "panel-judge --contract review: one reviewer's review",
        ),
        record::<Reviewer>("reviewer", "panel-merge: how one reviewer's review ended"),
        record::<MergedFinding>("finding", "panel-merge: one merged finding"),
        record::<MergeRecord>("merge", "panel-merge: how the merge went"),
        record::<VoteRecord>("vote", "panel-vote: one voter on one finding"),
        record::<SynthesisEntry>("synthesis", "panel-vote: what the votes did to one finding"),
        record::<PanelRecord>("panel", "panel-vote: the panel's outcome"),
        record::<DecisionRecord>(
            "decision",
            "panel-vote --judge: the judge's call on one finding",
        ),
        record::<RouteRecord>("route", "panel-vote: where the work goes next"),
        record::<TallyRecord>("tally", "panel-tally --json: one panel counted"),
        record::<Summary>(
            "tally-summary",
            "panel-tally --each --json: how many panels of the stream passed, failed or did not \
                decide",
        ),
        record::<JudgeStats>(
            "judge-stats",
            "panel-tally --ledger --json: one judge's, seat's or family's record over many panels",
        ),
        record::<PairAgreement>(
            "pair-agreement",
            "panel-tally --ledger --json: how far two judges that sat together agreed",
        ),
        record::<LedgerSummary>(
            "ledger-summary",
            "panel-tally --ledger --json: the history as a whole",
        ),
        record::<GoldAgreement>(
            "gold-agreement",
            "panel-tally --ledger --gold --json: a judge's, seat's or lens's answers, or the \
                panel's decisions, against gold labels",
        ),
        record::<GoldSummary>(
            "gold-summary",
            "panel-tally --ledger --gold --json: the labels and the history together, the \
                comparison, the gate and the corrected share",
        ),
        record::<PairwiseRecord>(
            "pairwise",
            "panel-judge --contract pairwise: one judge's preference between two answers, in each \
                order it was shown",
        ),
        record::<PreferenceTally>(
            "preference",
            "panel-tally --json over pairwise records: the panel's preference",
        ),
        record::<crate::records::runs::RunFolder>(
            "run-folder",
            "panel-tally --runs --json: one run folder, or with --keep one removed",
        ),
        record::<PrClass>("pr-class", "pr-classify: the pull request's class"),
        record::<PanelPlan>("plan", "pr-classify --plan: the pull request's panel plan"),
        record::<PrVerdictRecord>(
            "pr-verdict",
            "panel-judge --contract pr: how one plan member ended",
        ),
        record::<PanelVerdict>(
            "pr-panel",
            "panel-tally --pr --json: the PR panel's verdict",
        ),
        record::<HarnessStatus>(
            "harness-status",
            "panel-judge --doctor --json: one harness on this machine (its program, version and \
                login; never a key's value)",
        ),
        record::<SandboxStatus>(
            "sandbox-status",
            "panel-judge --doctor --json: the walls judges can get on this machine",
        ),
        record::<crate::records::estimate::EstimateRecord>(
            "estimate",
            "panel-judge or panel-vote --estimate --json: each judge's estimated cost before \
                anything is launched, and what a budget lets in",
        ),
        facts(),
        gold(),
        harness(),
    ]
}

/// `gold`: one line of the gold labels panel-tally --ledger --gold reads, a candidate by its
/// seal or its name; `"type": "gold"` may be given.
fn gold() -> SchemaFile {
    let mut schema = generator().into_root_schema_for::<GoldLabel>().to_value();
    close(&mut schema);
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        props.insert("type".into(), json!({"const": "gold"}));
    }
    if let Value::Object(obj) = &mut schema {
        obj.insert(
            "oneOf".into(),
            json!([{"required": ["candidate"]}, {"required": ["name"]}]),
        );
    }
    let schema = head(
        schema,
        "panel gold label",
        "panel-tally --ledger --gold LABELS: one candidate's gold label, one JSON object a line",
    );
    SchemaFile {
        name: "gold",
        schema,
    }
}

/// The schema of one schema file by its name, for validating a record of that `type`.
pub fn schema(name: &str) -> Option<Value> {
    schemas()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.schema)
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// A record's schema: its type's, with `type` pinned to `kind` and first, and every object
/// closed to fields the writer does not write.
fn record<T: JsonSchema>(kind: &'static str, title: &str) -> SchemaFile {
    let mut schema = generator().into_root_schema_for::<T>().to_value();
    close(&mut schema);
    pin_type(&mut schema, kind);
    let schema = head(schema, &format!("panel {kind} record"), title);
    SchemaFile { name: kind, schema }
}

/// `pr-facts`: what pr-classify reads as PR facts (docs/rules.md) and `--print-facts` writes,
/// the one shape without a `type`.
fn facts() -> SchemaFile {
    let mut schema = generator().into_root_schema_for::<PrFacts>().to_value();
    close(&mut schema);
    let schema = head(
        schema,
        "panel PR facts",
        "pr-classify --print-facts: the facts of one pull request, as pr-classify reads them",
    );
    SchemaFile {
        name: "pr-facts",
        schema,
    }
}

/// `harness`: what `--harness-file` accepts, one row or an array of rows; `--list-harnesses`
/// prints the array. A row may name this schema in `"$schema"` for an editor.
fn harness() -> SchemaFile {
    let mut generator = generator();
    let row = generator.subschema_for::<Harness>().to_value();
    let mut defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    if let Some(Value::Object(row_def)) = defs.get_mut("Harness")
        && let Some(Value::Object(props)) = row_def.get_mut("properties")
    {
        let mut with = Map::new();
        with.insert(
            "$schema".into(),
            json!({"description": "The schema an editor checks the row against; panel ignores \
                it.", "type": "string"}),
        );
        with.extend(std::mem::take(props));
        *props = with;
    }
    let mut schema = json!({
        "oneOf": [row.clone(), {"type": "array", "items": row}],
        "$defs": defs,
    });
    close(&mut schema);
    let schema = head(
        schema,
        "panel harness rows",
        "A harness row (panel-judge --harness-file FILE, $XDG_CONFIG_HOME/panel/harnesses/*.json), \
            or an array of rows (what panel-judge --list-harnesses --json prints)",
    );
    SchemaFile {
        name: "harness",
        schema,
    }
}

/// `$schema`, `title` and `description` first, then the rest.
fn head(schema: Value, title: &str, description: &str) -> Value {
    let Value::Object(mut rest) = schema else {
        unreachable!("a root schema is an object")
    };
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    out.insert("title".into(), json!(title));
    out.insert("description".into(), json!(description));
    rest.remove("$schema");
    rest.remove("title");
    rest.remove("description");
    out.extend(rest);
    Value::Object(out)
}

/// Pins `type` to `kind`, the record's first field and a required one.
fn pin_type(schema: &mut Value, kind: &str) {
    let Value::Object(obj) = schema else { return };
    let mut props = Map::new();
    props.insert("type".into(), json!({"const": kind}));
    if let Some(Value::Object(old)) = obj.remove("properties") {
        props.extend(old.into_iter().filter(|(k, _)| k != "type"));
    }
    obj.insert("properties".into(), Value::Object(props));
    let mut required = vec![json!("type")];
    if let Some(Value::Array(old)) = obj.remove("required") {
        required.extend(old.into_iter().filter(|r| r != "type"));
    }
    obj.insert("required".into(), Value::Array(required));
}

/// Every object schema that lists its properties admits no others: a field the writer adds
/// without its type saying so is drift, and the record tests catch it.
fn close(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            if obj.contains_key("properties") && !obj.contains_key("additionalProperties") {
                obj.insert("additionalProperties".into(), json!(false));
            }
            obj.values_mut().for_each(close);
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

// ── The tally record ──────────────────────────────────────────────────────────────────────
//
// panel-tally writes one `tally` record in three shapes: a verdict panel's ([`Tally`]), a
// threshold panel of reviews ([`ThresholdTally`]) and a synthesised panel ([`SynthesisTally`]).
// Each writer serializes its own shape; this union exists only for the schema.

/// The `tally` record: one of three panels' counts.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // never built: a writer picks its shape
enum TallyRecord<'a> {
    Verdicts(Tally<'a>),
    Threshold(ThresholdTally<'a>),
    Synthesis(SynthesisTally<'a>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_schema_pins_its_type_first_and_is_closed() {
        let all = schemas();
        let mut names: Vec<&str> = all.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len(), "two schemas share a name");
        for s in all
            .iter()
            .filter(|s| !["harness", "pr-facts", "gold"].contains(&s.name))
        {
            assert_eq!(s.schema["properties"]["type"]["const"], s.name);
            assert_eq!(s.schema["required"][0], "type", "{}", s.name);
            let first = s.schema["properties"].as_object().unwrap().keys().next();
            assert_eq!(first.map(String::as_str), Some("type"), "{}", s.name);
        }
        let verdict = schema("verdict").unwrap();
        assert_eq!(verdict["additionalProperties"], false);
        assert_eq!(
            verdict["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        // The three shapes of a tally, each closed, under the one pinned type.
        let tally = schema("tally").unwrap();
        assert_eq!(tally["anyOf"].as_array().unwrap().len(), 3);
        for def in ["Tally", "ThresholdTally", "SynthesisTally"] {
            assert_eq!(tally["$defs"][def]["additionalProperties"], false, "{def}");
        }
    }

    /// Holds a written record to the one shape it claims: valid against the schema's definition
    /// `def` (so no field the schema lacks, none it requires left out), with its fields in the
    /// definition's order, and the same for every nested object the definition names.
    fn meets(value: &Value, def: &str, root: &Value) {
        let def_schema = &root["$defs"][def];
        let errors: Vec<String> = jsonschema::validator_for(&json!({
            "$ref": format!("#/$defs/{def}"),
            "$defs": root["$defs"],
        }))
        .unwrap()
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
        assert!(errors.is_empty(), "{def}: {errors:?}");
        // The validator holds it to the required fields and no others; this, to their order.
        let props = def_schema["properties"].as_object().unwrap();
        let object = value.as_object().unwrap();
        let keys: Vec<&String> = object.keys().collect();
        let listed: Vec<&String> = props.keys().filter(|k| object.contains_key(*k)).collect();
        assert_eq!(keys, listed, "{def}");
        for (key, prop) in props.iter().filter(|(k, _)| object.contains_key(*k)) {
            let inner = prop["items"]["$ref"].as_str().or(prop["$ref"].as_str());
            let Some(name) = inner.and_then(|r| r.strip_prefix("#/$defs/")) else {
                continue;
            };
            if root["$defs"][name]["properties"].is_null() {
                continue;
            }
            let items = value[key]
                .as_array()
                .map_or(vec![&value[key]], |a| a.iter().collect());
            assert!(
                !items.is_empty(),
                "{def}.{key}: the sample has none to check"
            );
            items.into_iter().for_each(|v| meets(v, name, root));
        }
    }

    #[test]
    fn the_threshold_and_synthesis_tallies_meet_their_schema_field_for_field() {
        use crate::records::review::{Finding, Severity};
        use crate::records::synthesis::{OUTPUT_TYPES, Record};
        use crate::rules::decision::Decision;
        use crate::rules::threshold::ThresholdOutcome;

        let tally = schema("tally").unwrap();
        let finding = Finding {
            id: "review-2/1".into(),
            severity: Severity::Block,
            evidence: "e".into(),
            fix: "f".into(),
            file: Some("src/a.rs".into()),
            line: Some(3),
        };
        let outcome = ThresholdOutcome {
            status: Decision::Fail,
            passed: 1,
            required: 2,
            reviewers: 3,
            accepted: vec!["review-1".into()],
            rejected: vec!["review-2".into()],
            errors: vec![("review-3".into(), "no decision".into())],
            findings: vec![finding],
        };
        meets(&outcome.json(), "ThresholdTally", &tally);

        // The example stream has a finding for the writer, a skipped one and a split one.
        let stream = include_str!("../../examples/markdown/synthesis.jsonl");
        let records: Vec<Record> = stream
            .lines()
            .map(|l| crate::records::parse(l, &|| "example".into(), OUTPUT_TYPES).unwrap())
            .collect();
        let report = crate::tools::tally::synthesis::report(&records).unwrap();
        meets(&report.json, "SynthesisTally", &tally);
    }
}
