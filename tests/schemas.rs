//! The record schemas (schemas/, rendered from the record types by `panel::tools::schemas`):
//! every pipeline's records meet them, the harness rows meet harness.schema.json, and the
//! validation the run helpers apply to every tool's output can fail.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::tool::Tool;
use crate::util::{TempDir, bin, root, run_with_stdin, schema_errors, stderr, stdout};

/// The `type` of every JSON line of a tool's output (each already checked against its schema
/// by the run helpers).
fn types(out: &Output) -> Vec<String> {
    stdout(out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["type"].as_str().map(str::to_string))
        .collect()
}

fn ok(out: &Output, codes: &[i32]) {
    assert!(
        codes.contains(&out.status.code().unwrap_or(-1)),
        "{:?}: {}",
        out.status,
        stderr(out)
    );
}

fn example(path: &str) -> String {
    root().join(path).display().to_string()
}

/// Runs a tool through the helpers that check its records, and keeps the types it wrote.
fn run(seen: &mut BTreeSet<String>, cmd: &mut Command, stdin: &[u8], codes: &[i32]) -> Output {
    let out = run_with_stdin(cmd, stdin);
    ok(&out, codes);
    seen.extend(types(&out));
    out
}

#[test]
fn every_pipeline_writes_records_that_meet_their_schemas() {
    let tmp = TempDir::new("schemas");
    let out_dir = |name: &str| tmp.path().join(name).display().to_string();
    let mut seen = BTreeSet::new();

    // A verdict panel, counted one panel and many at once.
    let verdicts = run(
        &mut seen,
        Command::new(bin("panel-judge")).args([
            "--out",
            &out_dir("verdicts"),
            "--seat",
            &format!("replay:{}", example("examples/answers.json")),
            &example("examples/answer.md"),
        ]),
        b"",
        &[0],
    );
    run(
        &mut seen,
        Command::new(bin("panel-tally")).arg("--json"),
        &verdicts.stdout,
        &[1],
    );
    run(
        &mut seen,
        Command::new(bin("panel-tally")).args(["--json", "--each"]),
        &verdicts.stdout,
        &[1],
    );

    // The synthesised review: reviews, merged by a seat, voted, judged, counted; and the
    // reviews counted by the threshold panel.
    let battery = root().join("examples/review-battery");
    let answers = format!("replay:{}", battery.join("answers.json").display());
    let page = battery.join("page.md").display().to_string();
    let seats = ["--seat", &answers, "--seat", &answers, "--seat", &answers];
    let reviews = run(
        &mut seen,
        Command::new(bin("panel-judge"))
            .args(["--contract", "review", "--stage", "write", "--out"])
            .arg(out_dir("reviews"))
            .args(seats)
            .args(["--brief", &battery.join("brief.md").display().to_string()])
            .arg(&page),
        b"",
        &[0],
    );
    run(
        &mut seen,
        Command::new(bin("panel-tally")).arg("--json"),
        &reviews.stdout,
        &[0, 1, 3],
    );
    let merged = run(
        &mut seen,
        Command::new(bin("panel-merge"))
            .args(["--seat", &answers, "--out"])
            .arg(out_dir("merge")),
        &reviews.stdout,
        &[0],
    );
    let voted = run(
        &mut seen,
        Command::new(bin("panel-vote"))
            .args(seats)
            .args(["--candidate", &page, "--out"])
            .arg(out_dir("vote"))
            .args([
                "--judge",
                &format!("replay:{}", battery.join("judge.json").display()),
            ]),
        &merged.stdout,
        &[0, 1, 3],
    );
    run(
        &mut seen,
        Command::new(bin("panel-tally")).arg("--json"),
        &voted.stdout,
        &[0, 1, 3],
    );

    // A pull request: its class, its plan, and its panel's verdict counted.
    let facts =
        json!({"repo": "acme/app", "pr": 7, "head": "0123456789abcdef", "base": "fedcba9876543210",
        "changedFiles": [{"path": "src/a.rs", "additions": 10, "deletions": 2},
                         {"path": "Cargo.lock", "additions": 3, "deletions": 1}]})
        .to_string();
    run(
        &mut seen,
        Command::new(bin("pr-classify")).arg("--print-facts"),
        facts.as_bytes(),
        &[0],
    );
    run(
        &mut seen,
        &mut Command::new(bin("pr-classify")),
        facts.as_bytes(),
        &[0],
    );
    let plan = run(
        &mut seen,
        Command::new(bin("pr-classify")).arg("--plan"),
        facts.as_bytes(),
        &[0],
    );
    let plan_file = tmp.path().join("plan.json");
    std::fs::write(&plan_file, &plan.stdout).unwrap();
    let plan: Value = stdout(&plan)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["type"] == "plan")
        .unwrap();
    // Each member's record as panel-judge --contract pr writes it; their schema holds them
    // here and in the PR tests, which run panel-judge --contract pr itself.
    let members: Vec<String> = plan["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let rec = json!({"type": "pr-verdict", "member": m["name"], "reviewer": m["name"],
                "shape": m["shape"], "briefId": m["briefId"], "briefHash": "sha256:00",
                "profile": m["profile"], "seat": m["seat"], "harness": "claude",
                "blocking": m["blocking"], "degraded": false, "repo": "acme/app", "pr": 7,
                "head": "0123456789abcdef", "verdict": "MERGE", "status": "ok",
                "ciPolicy": {"state": "unchanged"}, "toolCalls": ["Read"], "corrected": false,
                "launches": 1, "durationMs": 5, "run": "/tmp/r"});
            let errors = schema_errors("pr-verdict", &rec);
            assert!(errors.is_empty(), "{errors:?}");
            rec.to_string()
        })
        .collect();
    run(
        &mut seen,
        Command::new(bin("panel-tally"))
            .args(["--pr", "--json", "--plan"])
            .arg(&plan_file),
        (members.join("\n") + "\n").as_bytes(),
        &[0, 1, 3],
    );

    // The ledger over a recorded history.
    let history = std::fs::read(root().join("examples/history.jsonl")).unwrap();
    run(
        &mut seen,
        Command::new(bin("panel-tally")).args(["--ledger", "--json", "-"]),
        &history,
        &[0],
    );

    // A pairwise panel, replayed and counted; a generated history read against its labels.
    let pairwise = run(
        &mut seen,
        Command::new(bin("panel-judge")).args([
            "--contract",
            "pairwise",
            "--out",
            &out_dir("pairwise"),
            "--brief",
            &example("examples/pairwise/question.md"),
            "--seat",
            &format!("replay:{}", example("examples/pairwise/answers.json")),
            &example("examples/pairwise/a.md"),
            &example("examples/pairwise/b.md"),
        ]),
        b"",
        &[0],
    );
    run(
        &mut seen,
        Command::new(bin("panel-tally")).arg("--json"),
        &pairwise.stdout,
        &[0],
    );
    let labels = tmp.path().join("labels.jsonl");
    let history = Command::new("awk")
        .args(["-v", "panels=50", "-v", "labelled=0.6", "-v"])
        .arg(format!("labels={}", labels.display()))
        .arg("-f")
        .arg(root().join("benches/gold-gen.awk"))
        .output()
        .unwrap();
    let mut gold = Command::new(bin("panel-tally"));
    gold.args(["--ledger", "--json", "--require-kappa", "0", "--gold"])
        .arg(&labels)
        .arg("-");
    run(&mut seen, &mut gold, &history.stdout, &[0, 1, 3]);
    // Every label the file holds meets the gold schema.
    for line in std::fs::read_to_string(&labels).unwrap().lines() {
        let label: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            schema_errors("gold", &label),
            Vec::<String>::new(),
            "{line}"
        );
    }
    assert!(!schema_errors("gold", &json!({"label": "holds"})).is_empty());

    // What this machine has: each harness (the stand-ins on PATH), then the walls.
    let mut doctor = Command::new(bin("panel-judge"));
    doctor.args(["--doctor", "--json"]);
    run(
        &mut seen,
        crate::util::with_standins(&mut doctor, &tmp.path().join("log"), &[]),
        b"",
        &[0],
    );
    // What a run would cost, launching nothing.
    let mut estimate = Command::new(bin("panel-judge"));
    estimate.args([
        "--estimate",
        "--json",
        "--no-history",
        "--budget-usd",
        "0.01",
    ]);
    estimate.args(["--seat", "claude:haiku", &example("examples/answer.md")]);
    run(&mut seen, &mut estimate, b"", &[0]);
    // The run folders, listed and removed, in a cache of the test's own.
    let cache = tmp.path().join("cache");
    let mut judge = Command::new(bin("panel-judge"));
    judge.env("XDG_CACHE_HOME", &cache).args([
        "--seat",
        &format!("replay:{}", example("examples/answers.json")),
        &example("examples/answer.md"),
    ]);
    run(&mut seen, &mut judge, b"", &[0]);
    for args in [
        &["--runs", "--json"][..],
        &["--runs", "--keep", "0", "--json"],
    ] {
        let mut tally = Command::new(bin("panel-tally"));
        let out = run(
            &mut seen,
            tally.env("XDG_CACHE_HOME", &cache).args(args),
            b"",
            &[0],
        );
        assert_eq!(
            stdout(&out).lines().count(),
            1,
            "{args:?}: {}",
            stdout(&out)
        );
    }

    // Every record type was written, and so checked, at least once.
    let want: BTreeSet<String> = panel::tools::schemas::schemas()
        .iter()
        .map(|s| s.name.to_string())
        .filter(|n| !["harness", "pr-facts", "pr-verdict", "gold"].contains(&n.as_str()))
        .collect();
    let missing: Vec<&String> = want.difference(&seen).collect();
    assert!(missing.is_empty(), "no record of {missing:?} was written");
}

#[test]
fn the_validation_refuses_records_that_do_not_meet_their_schema() {
    let verdict = json!({"type": "verdict", "judge": "correctness", "lens": "correctness",
        "seat": "claude:haiku", "harness": "claude", "model": "haiku", "family": "claude",
        "candidate": "sha256:ab", "verdict": "holds", "reason": "r", "confidence": 0.5,
        "status": "ok", "attempts": 1, "durationMs": 3, "panelSize": 3, "run": "/tmp/r"});
    assert_eq!(schema_errors("verdict", &verdict), Vec::<String>::new());
    let mut bad = Vec::new();
    for (key, value) in [
        ("verdict", json!("maybe")),
        ("status", json!("fine")),
        ("type", json!("review")),
        ("confidence", json!("high")),
        ("attempts", json!(-1)),
        ("surprise", json!(1)),
    ] {
        let mut rec = verdict.clone();
        rec[key] = value;
        bad.push((key, rec));
    }
    let mut rec = verdict.clone();
    rec.as_object_mut().unwrap().remove("candidate");
    bad.push(("candidate", rec));
    for (key, rec) in bad {
        assert!(
            !schema_errors("verdict", &rec).is_empty(),
            "a verdict with a bad {key} passed: {rec}"
        );
    }
    // The run helpers fail the test that saw such a line, naming the record.
    let line = format!("{}\n", json!({"type": "verdict", "judge": "j"}));
    let caught = std::panic::catch_unwind(|| crate::util::check_records("a tool", line.as_bytes()));
    let why = caught.unwrap_err();
    let why = why.downcast_ref::<String>().unwrap();
    assert!(
        why.contains("stdout line 1: the verdict record does not meet schemas/verdict.schema.json"),
        "{why}"
    );
    // A type with no schema, and a JSON object without a type, fail too.
    for line in [r#"{"type":"verdikt"}"#, r#"{"judge":"j"}"#] {
        assert!(
            std::panic::catch_unwind(|| crate::util::check_records("a tool", line.as_bytes()))
                .is_err(),
            "{line}"
        );
    }
}

#[test]
fn listed_harness_rows_meet_the_harness_schema() {
    let out = Tool::new("panel-judge")
        .args(["--list-harnesses", "--json"])
        .run();
    ok(&out, &[0]);
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema_errors("harness", &rows), Vec::<String>::new());
    for row in rows.as_array().unwrap() {
        assert_eq!(schema_errors("harness", row), Vec::<String>::new(), "{row}");
    }
}

fn write(dir: &Path, name: &str, row: &Value) -> String {
    let file = dir.join(name);
    std::fs::write(&file, serde_json::to_string_pretty(row).unwrap()).unwrap();
    file.display().to_string()
}

#[test]
fn a_user_s_harness_row_meets_the_schema_and_may_name_it() {
    let tmp = TempDir::new("harness-schema");
    let row = json!({
        "$schema": "../schemas/harness.schema.json",
        "name": "mine",
        "executable": "my-llm",
        "argv": ["--quiet", ["--model", "{model}"], {"whenEnv": "MY_KEY", "args": ["--key-from-env"]}, "{prompt}"],
        "answer": "stdout",
        "passEnv": ["MY_KEY"],
        "errors": [{"status": "usage-limit", "match": ["quota exceeded"]}],
        "family": "mine"
    });
    assert_eq!(schema_errors("harness", &row), Vec::<String>::new());
    // panel-judge takes the row with its "$schema", and lists it back without it.
    let file = write(tmp.path(), "mine.json", &row);
    let out = Tool::new("panel-judge")
        .args(["--harness-file", &file, "--list-harnesses", "--json"])
        .run();
    ok(&out, &[0]);
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let listed = rows.iter().find(|r| r["name"] == "mine").unwrap();
    assert_eq!(listed["argv"], row["argv"]);
    assert!(listed.get("$schema").is_none(), "{listed}");
    // An array of rows is a harness file too.
    assert_eq!(
        schema_errors("harness", &json!([row.clone(), row.clone()])),
        Vec::<String>::new()
    );

    // A row the schema refuses, panel-judge refuses as well: one line, exit 2.
    for (what, change) in [
        ("an unknown field", json!({"argv_": []})),
        ("an argument that is a number", json!({"argv": [1]})),
        (
            "an unknown status",
            json!({"errors": [{"status": "sad", "match": ["x"]}]}),
        ),
        ("an unknown answer place", json!({"answer": "socket"})),
    ] {
        let mut bad = row.clone();
        for (k, v) in change.as_object().unwrap() {
            bad[k] = v.clone();
        }
        assert!(
            !schema_errors("harness", &bad).is_empty(),
            "the schema took {what}: {bad}"
        );
        let file = write(tmp.path(), "bad.json", &bad);
        let out = Tool::new("panel-judge")
            .args(["--harness-file", &file, "--list-harnesses"])
            .run();
        assert_eq!(out.status.code(), Some(2), "{what}: {}", stdout(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    let mut nameless = row.clone();
    nameless.as_object_mut().unwrap().remove("argv");
    assert!(!schema_errors("harness", &nameless).is_empty());
}
