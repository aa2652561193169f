//! panel-tally, run as a user runs it.

use crate::util::Checked;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::tool::{Ran, Tool};
use crate::util::{TempDir, bin, root, stderr, stdout};

const SEAL: &str = "sha256:1f0a9c6d2b7e4c3a8f5d9e0b1c2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a";
const OTHER: &str = "sha256:9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";

/// One judge's answer: a verdict, or an abstention with its status.
#[derive(Clone, Copy)]
enum A {
    Holds(&'static str),
    Breaks(&'static str),
    Abstains(&'static str),
    /// Unreadable: a word outside holds and breaks, and a reason (`said`).
    Said(&'static str, &'static str),
}

fn record(judge: &str, answer: A, candidate: &str, size: usize, run: &str) -> Value {
    let (verdict, status, reason) = match answer {
        A::Holds(r) => (json!("holds"), "ok", json!(r)),
        A::Breaks(r) => (json!("breaks"), "ok", json!(r)),
        A::Abstains(s) => (Value::Null, s, Value::Null),
        A::Said(_, r) => (Value::Null, "unreadable", json!(r)),
    };
    let mut rec = json!({
        "type": "verdict", "judge": judge, "lens": judge, "seat": "claude:haiku",
        "harness": "claude", "model": "haiku", "family": "claude", "candidate": candidate,
        "verdict": verdict, "reason": reason, "confidence": 0.75, "status": status,
        "cause": if status == "ok" { Value::Null } else { json!(format!("{status} after 1 attempt")) },
        "attempts": 1, "durationMs": 10, "usage": {"inputTokens": 10, "outputTokens": 2},
        "panelSize": size, "run": run,
    });
    if let A::Said(word, _) = answer {
        rec["said"] = json!(word);
    }
    rec
}

fn lines(records: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for r in records {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

fn panel(answers: &[(&str, A)]) -> Vec<u8> {
    let recs: Vec<Value> = answers
        .iter()
        .map(|(j, a)| record(j, *a, SEAL, answers.len(), "/tmp/run"))
        .collect();
    lines(&recs)
}

fn tally(args: &[&str], input: &[u8]) -> Ran {
    Tool::new("panel-tally").args(args).stdin(input).run()
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("exited")
}

/// The one line of an error, checked to be one line.
fn error_line(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    err.trim_end().to_string()
}

#[test]
fn exit_status_says_passed_against_error_or_undecided() {
    let holds = panel(&[("a", A::Holds("ok")), ("b", A::Holds("ok"))]);
    let breaks = panel(&[("a", A::Holds("ok")), ("b", A::Breaks("no"))]);
    let abstains = panel(&[("a", A::Holds("ok")), ("b", A::Abstains("timeout"))]);
    let both = panel(&[
        ("a", A::Breaks("no")),
        ("b", A::Abstains("unreadable")),
        ("c", A::Holds("ok")),
    ]);
    assert_eq!(code(&tally(&[], &holds)), 0);
    assert_eq!(code(&tally(&[], &breaks)), 1);
    assert_eq!(code(&tally(&[], &abstains)), 3);
    assert_eq!(code(&tally(&[], &both)), 1);
    assert_eq!(code(&tally(&["--agree", "1"], &breaks)), 0);
    assert_eq!(code(&tally(&["--agree", "1"], &abstains)), 0);
    assert_eq!(code(&tally(&["--agree", "2"], &both)), 3);
    assert_eq!(code(&tally(&["--agree", "3"], &both)), 1);
    let out = tally(&[], b"{not json\n");
    assert_eq!(code(&out), 2);
}

#[test]
fn agree_out_of_range_is_a_usage_error() {
    let holds = panel(&[("a", A::Holds("ok")), ("b", A::Holds("ok"))]);
    let out = tally(&["--agree", "0"], &holds);
    assert_eq!(code(&out), 2);
    assert!(error_line(&out).starts_with("panel-tally: --agree 0: "));
    let out = tally(&["--agree", "3"], &holds);
    assert_eq!(code(&out), 2);
    assert_eq!(
        error_line(&out),
        "panel-tally: --agree 3: must be from 1 to the panel's size (2)"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn no_records_is_not_a_pass() {
    let out = tally(&[], b"\n\n");
    assert_eq!(code(&out), 2);
    assert_eq!(
        error_line(&out),
        "panel-tally: no verdict records in <stdin>"
    );
    let dir = TempDir::new("tally-empty");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = tally(&[empty.to_str().unwrap()], b"");
    assert_eq!(code(&out), 2);
    assert_eq!(
        error_line(&out),
        format!("panel-tally: no verdict records in {}", empty.display())
    );
}

#[test]
fn records_about_two_candidates_are_refused() {
    let recs = [
        record("a", A::Holds("ok"), SEAL, 2, "/tmp/run"),
        record("b", A::Holds("ok"), OTHER, 2, "/tmp/run"),
    ];
    let dir = TempDir::new("tally-mixed");
    let file = dir.path().join("v.jsonl");
    std::fs::write(&file, lines(&recs)).unwrap();
    let out = tally(&[file.to_str().unwrap()], b"");
    assert_eq!(code(&out), 2);
    assert_eq!(
        error_line(&out),
        format!(
            "panel-tally: {}: line 2: a record about candidate sha256:9e8d7c6b5a4f…, but the records before it are about sha256:1f0a9c6d2b7e…",
            file.display()
        )
    );
}

#[test]
fn a_judge_counted_twice_is_refused() {
    let rec = record("a", A::Holds("ok"), SEAL, 0, "/tmp/run");
    let out = tally(&[], &lines(&[rec.clone(), rec]));
    assert_eq!(code(&out), 2);
    assert_eq!(
        error_line(&out),
        "panel-tally: <stdin>: line 2: judge \"a\" of run \"/tmp/run\" is already counted"
    );
}

/// "Rerun the abstainers" invites a second run; with `--agree 2` a judge of both runs counted
/// twice and turned a FAIL into a PASS. Refused, naming both runs, or the later record counts.
#[test]
fn a_judge_of_two_runs_counts_once() {
    let first = [
        record("a", A::Holds("fine"), SEAL, 3, "/tmp/run1"),
        record("b", A::Breaks("no"), SEAL, 3, "/tmp/run1"),
        record("c", A::Breaks("no"), SEAL, 3, "/tmp/run1"),
    ];
    let rerun = record("a", A::Holds("still fine"), SEAL, 1, "/tmp/run2");
    let mut both = first.to_vec();
    both.push(rerun);
    let out = tally(&["--agree", "2"], &lines(&both));
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert_eq!(
        error_line(&out),
        "panel-tally: <stdin>: line 4: judge \"a\" of run \"/tmp/run2\" is counted already, from run \"/tmp/run1\": one judge counts once (--last-wins counts the later record in place of the earlier)"
    );
    let out = tally(&["--agree", "2", "--last-wins", "--json"], &lines(&both));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let t: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(t["counts"]["holds"], 1, "{t}");
    assert_eq!(t["counts"]["judges"], 3, "{t}");
    // With --each, a record about a panel already tallied would make a second tally of it.
    let out = tally(&["--each"], &lines(&both));
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        error_line(&out).contains("line 4: a record about candidate sha256:1f0a"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_review_record_is_sent_to_panel_merge() {
    let mut input = panel(&[("a", A::Holds("ok"))]);
    input.extend_from_slice(b"{\"type\":\"review\",\"reviewer\":\"x\"}\n");
    let out = tally(&[], &input);
    assert_eq!(code(&out), 2);
    assert_eq!(
        error_line(&out),
        "panel-tally: <stdin>: line 2: a review record; reviews go through panel-merge"
    );
}

#[test]
fn a_malformed_line_is_named_by_file_and_line() {
    let dir = TempDir::new("tally-malformed");
    let file = dir.path().join("v.jsonl");
    let mut input = panel(&[("a", A::Holds("ok")), ("b", A::Holds("ok"))]);
    input.extend_from_slice(b"\n{\"type\": \"verdict\", \"judge\": \n");
    std::fs::write(&file, input).unwrap();
    let out = tally(&[file.to_str().unwrap()], b"");
    assert_eq!(code(&out), 2);
    let line = error_line(&out);
    let want = format!(
        "panel-tally: {}: line 4: not a JSON record: ",
        file.display()
    );
    assert!(line.starts_with(&want), "{line}");
}

/// Writes the answers as the seed script's judges left them in `$OUT`, runs the script's
/// counting lines on them (tests/fixtures/seed-tally.sh), and returns what they printed. The
/// one independent oracle of panel-tally's report: jq, which the script runs, is needed.
fn seed_report(out_dir: &Path, answers: &[(&str, A)]) -> Vec<u8> {
    crate::util::need("jq");
    for (judge, answer) in answers {
        let body = match answer {
            A::Holds(r) => json!({"verdict": "holds", "reason": r, "confidence": 0.75}).to_string(),
            A::Breaks(r) => {
                json!({"verdict": "breaks", "reason": r, "confidence": 0.75}).to_string()
            }
            A::Abstains(_) => "Sorry, I cannot judge this: {verdict".into(),
            A::Said(w, r) => json!({"verdict": w, "reason": r, "confidence": 0.5}).to_string(),
        };
        std::fs::write(out_dir.join(format!("{judge}.json")), body).unwrap();
    }
    let out = Command::new("bash")
        .arg(root().join("tests/fixtures/seed-tally.sh"))
        .arg(out_dir)
        .env("LC_ALL", "C")
        .checked_output()
        .expect("bash");
    assert!(out.status.success(), "seed script: {}", stderr(&out));
    out.stdout
}

/// The seed's script the tests and benches/baseline-judge-panel.sh run is the one of seed 001
/// byte for byte (`scripts/judge-panel.sh`, and a newline closing its last line): its sha256,
/// taken from the seed document.
#[test]
fn the_seed_script_kept_is_the_seeds_own() {
    let script = std::fs::read(root().join("tests/fixtures/seed-judge-panel.sh")).unwrap();
    assert_eq!(
        crate::util::sha256_hex(&script),
        "e6c8003fb768f59cae16a4040241d1dcb4f3c53dcf6be5deea946df511a4b9e4"
    );
}

/// Seed 001: `printf '%-12s %-10s %s\n' "$(basename "$f" .json)" "$verdict" "$reason"`, then
/// one of its three PANEL lines and `verdicts: $OUT`. `--format seed` (bin/judge-panel's) prints
/// that report byte for byte, split panels and unreadable judges included.
#[test]
fn the_report_is_byte_for_byte_the_seed_scripts() {
    let cases: &[&[(&str, A)]] = &[
        &[
            ("correctness", A::Holds("It does what it says.")),
            ("edges", A::Holds("Empty input returns 0, as stated.")),
            ("evidence", A::Holds("Every claim is shown.")),
        ],
        &[
            ("correctness", A::Breaks("Off by one in the loop bound.")),
            ("edges-null", A::Breaks("null → crash")),
            ("edges", A::Breaks("Dies on an empty list — “[]”.")),
        ],
        &[
            ("a-judge-with-a-long-name", A::Holds("Fine.")),
            ("Zeta", A::Breaks("Claims 3x faster; no numbers.")),
            ("edges", A::Breaks("100% CPU with \\n in names")),
        ],
        &[
            ("correctness", A::Breaks("Wrong sign.")),
            ("edges", A::Abstains("unreadable")),
            ("evidence", A::Breaks("Unsupported claim.")),
        ],
        &[
            ("correctness", A::Abstains("unreadable")),
            ("evidence", A::Holds("")),
        ],
    ];
    for answers in cases {
        let dir = TempDir::new("tally-seed");
        let want = seed_report(dir.path(), answers);
        let run = dir.path().to_str().unwrap();
        let recs: Vec<Value> = answers
            .iter()
            .map(|(j, a)| record(j, *a, SEAL, answers.len(), run))
            .collect();
        let out = tally(&["--format", "seed"], &lines(&recs));
        assert!(code(&out) != 2, "{}", stderr(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want)
        );
        assert_eq!(out.stdout, want);
    }
}

/// The seed's tally: `verdict=$(jq -r '.verdict // "unreadable"' "$f")`, printed beside the
/// reason, and `*) abstained=$((abstained + 1))`: a judge that answers `maybe` is shown by
/// its word and counted as an abstention, never as holds or breaks.
#[test]
fn a_word_outside_holds_and_breaks_is_shown_and_counted_as_an_abstention() {
    let answers = [
        ("correctness", A::Breaks("Wrong sign.")),
        ("edges", A::Said("maybe", "Hard to say.")),
        ("evidence", A::Breaks("Unsupported claim.")),
    ];
    let text = tally(&[], &panel(&answers));
    assert_eq!(code(&text), 1, "{}", stderr(&text));
    let report = stdout(&text);
    assert!(
        report.contains("edges        maybe      Hard to say.\n"),
        "{report}"
    );
    assert!(
        report.contains("PANEL: 2 breaks / 0 holds, and 1 judge(s) came back unreadable."),
        "{report}"
    );
    let json = tally(&["--json"], &panel(&answers));
    let t: Value = serde_json::from_str(stdout(&json).trim()).unwrap();
    let edges = &t["judges"][1];
    assert_eq!(
        (&edges["said"], &edges["verdict"]),
        (&json!("maybe"), &Value::Null)
    );
    let dir = TempDir::new("tally-said");
    let want = seed_report(dir.path(), &answers);
    let run = dir.path().to_str().unwrap();
    let recs: Vec<Value> = answers
        .iter()
        .map(|(j, a)| record(j, *a, SEAL, answers.len(), run))
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&tally(&[], &lines(&recs)).stdout),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn other_abstentions_say_what_they_were() {
    let input = panel(&[
        ("correctness", A::Breaks("Wrong.")),
        ("edges", A::Abstains("timeout")),
        ("evidence", A::Holds("Fine.")),
        ("style", A::Abstains("unreadable")),
    ]);
    let out = tally(&[], &input);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "correctness  breaks     Wrong.\n\
         edges        timeout    timeout after 1 attempt\n\
         evidence     holds      Fine.\n\
         style        unreadable unreadable after 1 attempt\n\
         \n\
         PANEL: 1 breaks / 1 holds, and 2 judge(s) gave no verdict (1 timeout, 1 unreadable).\n\
         sides: breaks: correctness; holds: evidence\n\
         verdicts: /tmp/run\n"
    );
}

#[test]
fn json_tally_counts_and_names_everything() {
    let input = panel(&[
        ("b", A::Holds("fine")),
        ("a", A::Abstains("usage-limit")),
        ("c", A::Holds("fine")),
    ]);
    let out = tally(&["--json", "--agree", "2"], &input);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1);
    let t: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(t["type"], "tally");
    assert_eq!(t["candidate"], SEAL);
    assert_eq!(t["outcome"], "inconclusive");
    assert_eq!(t["passed"], true);
    assert_eq!(t["decided"], true);
    assert_eq!(t["threshold"], 2);
    assert_eq!(
        t["counts"],
        json!({"judges": 3, "holds": 2, "breaks": 0, "abstained": 1})
    );
    assert_eq!(t["judges"][0]["judge"], "a");
    assert_eq!(t["judges"][0]["status"], "usage-limit");
    assert_eq!(t["judges"][0]["verdict"], Value::Null);
    assert_eq!(t["byLens"]["b"]["holds"], 1);
    assert_eq!(t["byFamily"]["claude"]["abstained"], 1);
    assert_eq!(
        t["abstentions"],
        json!([{"judge": "a", "status": "usage-limit", "cause": "usage-limit after 1 attempt"}])
    );
    assert_eq!(t["runs"], json!(["/tmp/run"]));
    assert_eq!(t["usage"], json!({"inputTokens": 30, "outputTokens": 6}));

    let undecided = tally(&["--json"], &input);
    assert_eq!(code(&undecided), 3);
    let t: Value = serde_json::from_str(&stdout(&undecided)).unwrap();
    assert_eq!(
        (t["passed"].clone(), t["decided"].clone()),
        (json!(false), json!(false))
    );
}

#[test]
fn each_closes_interleaved_panels_as_they_complete() {
    let c1 = "sha256:1111111111111111";
    let c2 = "sha256:2222222222222222";
    let c3 = "sha256:3333333333333333";
    let recs = [
        record("a", A::Holds("ok"), c1, 2, "/r1"),
        record("a", A::Breaks("no"), c2, 3, "/r2"),
        record("a", A::Holds("ok"), c3, 2, "/r3"),
        record("b", A::Abstains("timeout"), c2, 3, "/r2"),
        record("b", A::Holds("ok"), c1, 2, "/r1"),
        record("b", A::Abstains("failed"), c3, 2, "/r3"),
        record("c", A::Holds("ok"), c2, 3, "/r2"),
    ];
    let out = tally(&["--each", "--json"], &lines(&recs));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let got: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let order: Vec<&str> = got
        .iter()
        .map(|t| t["candidate"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(order, [c1, c3, c2, ""]);
    assert_eq!(got[0]["passed"], true);
    assert_eq!(got[1]["decided"], false);
    assert_eq!(got[2]["counts"]["judges"], 3);
    assert_eq!(
        got[3],
        json!({"type": "tally-summary", "panels": 3, "passed": 1, "failed": 1, "undecided": 1})
    );
}

#[test]
fn each_closes_panels_of_unknown_size_when_the_candidate_changes() {
    let recs = [
        record("a", A::Holds("ok"), SEAL, 0, "/r1"),
        record("b", A::Holds("ok"), SEAL, 0, "/r1"),
        record("a", A::Abstains("timeout"), OTHER, 0, "/r2"),
    ];
    let out = tally(&["--each"], &lines(&recs));
    assert_eq!(code(&out), 3);
    assert_eq!(
        stdout(&out),
        "a            holds      ok\n\
         b            holds      ok\n\
         \n\
         PANEL: unanimous — all 2 say holds.\n\
         verdicts: /r1\n\
         \n\
         a            timeout    timeout after 1 attempt\n\
         \n\
         PANEL: 0 breaks / 0 holds, and 1 judge(s) gave no verdict (1 timeout).\n\
         verdicts: /r2\n\
         \n\
         PANELS: 1 passed, 0 failed, 1 undecided\n"
    );
}

#[test]
fn a_missing_judge_is_an_abstention() {
    let recs = [
        record("a", A::Holds("ok"), SEAL, 3, "/r"),
        record("b", A::Holds("ok"), SEAL, 3, "/r"),
    ];
    let out = tally(&["--json"], &lines(&recs));
    assert_eq!(code(&out), 3);
    let t: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(t["missing"], 1);
    assert_eq!(t["counts"]["abstained"], 1);
    assert_eq!(t["threshold"], 3);
}

#[test]
fn a_broken_pipe_is_a_quiet_exit() {
    let dir = TempDir::new("tally-pipe");
    let file = dir.path().join("v.jsonl");
    // About 2 MB of reports, past what any pipe holds (1 MiB at most by default): panel-tally
    // is still writing when head has gone.
    let mut recs = Vec::new();
    for i in 0..2_000 {
        let seal = format!("sha256:{i:064x}");
        for judge in ["a", "b", "c"] {
            recs.push(record(judge, A::Holds("fine"), &seal, 3, "/r"));
        }
    }
    std::fs::write(&file, lines(&recs)).unwrap();
    let err = dir.path().join("err");
    let script = format!(
        "{} --each --json {} 2>{} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}",
        crate::util::sh_word(&bin("panel-tally")),
        file.display(),
        err.display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .checked_output()
        .unwrap();
    assert_eq!(stdout(&out).trim(), "0");
    assert_eq!(std::fs::read_to_string(&err).unwrap(), "");
}

#[test]
fn several_inputs_are_one_stream_and_a_missing_one_is_named() {
    let dir = TempDir::new("tally-inputs");
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    // Three runs about one candidate: the first, and two reruns of one judge each.
    let first = [
        record("x", A::Holds("ok"), SEAL, 2, "/r/1"),
        record("y", A::Abstains("timeout"), SEAL, 2, "/r/1"),
    ];
    std::fs::write(&a, lines(&first)).unwrap();
    std::fs::write(&b, lines(&[record("y", A::Holds("ok"), SEAL, 1, "/r/3")])).unwrap();
    let stdin = lines(&[record("y", A::Abstains("failed"), SEAL, 1, "/r/2")]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = tally(
        &["--json", "--agree", "2", "--last-wins", a, "-", b],
        &stdin,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let t: Value = serde_json::from_str(&stdout(&out)).unwrap();
    // y counts once, by its last record (b's, read last).
    assert_eq!(
        t["counts"],
        json!({"judges": 2, "holds": 2, "breaks": 0, "abstained": 0})
    );
    assert_eq!(t["runs"], json!(["/r/1", "/r/2", "/r/3"]));
    let gone = dir.path().join("gone.jsonl");
    let out = tally(&[a, gone.to_str().unwrap()], b"");
    assert_eq!(code(&out), 2);
    assert!(
        error_line(&out).starts_with(&format!("panel-tally: {}: cannot open", gone.display())),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_stream_is_counted_panel_by_panel_and_its_bad_line_named() {
    let mut stream = Vec::new();
    for (i, seal) in [SEAL, OTHER].iter().enumerate() {
        let run = format!("/tmp/run{i}");
        let recs = [
            record("a", A::Holds("ok"), seal, 3, &run),
            record("b", A::Breaks("no"), seal, 3, &run),
            record("c", A::Abstains("timeout"), seal, 3, &run),
        ];
        stream.extend(lines(&recs));
    }
    let out = tally(&["--each", "--json"], &stream);
    assert_eq!(code(&out), 1);
    let panels: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(panels.len(), 3, "two panels and the summary: {panels:?}");
    stream.extend(b"{\"type\":\"verdict\"}\n");
    let out = tally(&["--each"], &stream);
    assert_eq!(code(&out), 2);
    assert!(error_line(&out).starts_with("panel-tally: <stdin>: line 7: "));
}

/// The record's type is read as JSON, whatever its spacing or key order: Python's json.dumps
/// writes `"type": "review"`, with a space, and not always first.
#[test]
fn the_record_type_is_read_as_json_not_as_text() {
    let review = json!({
        "reviewer": "review-1", "seat": "claude:haiku", "harness": "claude",
        "candidate": SEAL, "decision": "pass", "status": "ok", "findings": [],
        "type": "review"
    });
    let python = serde_json::to_string_pretty(&review)
        .unwrap()
        .replace('\n', "")
        .replace("  ", "");
    assert!(python.contains("\"type\": \"review\""), "{python}");
    let out = tally(&[], format!("\n{python}\n").as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("review panel: pass: 1 of 1"),
        "{}",
        stdout(&out)
    );
}

/// Issue 25: "Under `--agree 2` the report never says pass or fail, or what the threshold was
/// … add a last line where the seed has none, e.g. `decision: pass (2 of 3 say holds; --agree
/// 2)`." The default panel keeps the seed's lines alone.
#[test]
fn under_agree_the_report_says_the_decision_and_its_threshold() {
    let last_two = |out: &Output| {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines[lines.len().saturating_sub(2)..].join("\n")
    };
    let both = panel(&[
        ("a", A::Breaks("no")),
        ("b", A::Holds("ok")),
        ("c", A::Holds("ok")),
    ]);
    let out = tally(&["--agree", "2"], &both);
    assert_eq!(code(&out), 0);
    assert!(
        last_two(&out).contains("decision: pass (2 of 3 say holds; --agree 2)"),
        "{}",
        last_two(&out)
    );
    let out = tally(&["--agree", "3"], &both);
    assert_eq!(code(&out), 1);
    assert!(last_two(&out).contains("decision: fail (2 of 3 say holds; --agree 3)"));
    let open = panel(&[
        ("a", A::Holds("ok")),
        ("b", A::Abstains("timeout")),
        ("c", A::Breaks("no")),
    ]);
    let out = tally(&["--agree", "2"], &open);
    assert_eq!(code(&out), 3);
    assert!(
        last_two(&out).contains(
            "decision: none (1 of 3 say holds and 1 gave no verdict, which could decide it; --agree 2)"
        ),
        "{}",
        last_two(&out)
    );
    assert!(!String::from_utf8_lossy(&tally(&[], &both).stdout).contains("decision:"));
}

#[test]
fn a_split_says_which_side_is_which_and_long_names_keep_the_columns() {
    // Issue 25: "split 1-2" does not say which side is which; a long judge name breaks the
    // columns. The seed's PANEL line stays as its script prints it; a line follows it.
    let out = tally(
        &[],
        &panel(&[
            ("correctness", A::Holds("fine")),
            ("edges-on-a-very-long-seat-name", A::Breaks("empty input")),
            ("evidence", A::Holds("shown")),
        ]),
    );
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(
        text.contains("PANEL: split 1-2 — read the reasons yourself. The disagreement is the finding.\nsides: breaks: edges-on-a-very-long-seat-name; holds: correctness, evidence\n"),
        "{text}"
    );
    let starts: Vec<usize> = text
        .lines()
        .take(3)
        .map(|l| l.find("holds").or_else(|| l.find("breaks")).unwrap())
        .collect();
    assert_eq!(starts, [31, 31, 31], "{text}");
    // A panel of short names is the script's, byte for byte.
    let out = tally(
        &[],
        &panel(&[("a", A::Holds("fine")), ("b", A::Holds("ok"))]),
    );
    assert_eq!(
        stdout(&out).lines().next(),
        Some("a            holds      fine")
    );
}

#[test]
fn an_unreadable_judge_without_a_reason_shows_its_cause_escaped_and_cut() {
    // Issue 25: an unreadable judge showed an empty reason while its record had a `cause`.
    let mut recs = vec![
        record("correctness", A::Breaks("Wrong sign."), SEAL, 3, "/tmp/run"),
        record("edges", A::Abstains("unreadable"), SEAL, 3, "/tmp/run"),
        record("evidence", A::Abstains("unreadable"), SEAL, 3, "/tmp/run"),
    ];
    recs[1]["cause"] = json!("no JSON object in the reply\u{1b}[2J\nafter 2 attempts");
    recs[2]["cause"] = json!("x".repeat(500));
    let out = tally(&[], &lines(&recs));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().take(3).collect();
    assert_eq!(
        rows[1],
        "edges        unreadable no JSON object in the reply\\x1b[2J\\x0aafter 2 attempts"
    );
    assert!(rows[2].starts_with("evidence     unreadable xxx"), "{text}");
    assert!(rows[2].ends_with("x…") && rows[2].len() < 200, "{text}");
    // The PANEL line is still the script's.
    assert!(
        text.contains("\nPANEL: 1 breaks / 0 holds, and 2 judge(s) came back unreadable.\n"),
        "{text}"
    );
}
