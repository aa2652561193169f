//! The synthesised review (seed 000) through each real coding-agent CLI, against the stand-in
//! model server, with the built-in harness rows and the user's own setup as `real_judge` has
//! it: a review (`panel-judge --contract review`), the grouping seat (`panel-merge --seat`),
//! the voters and the judge (`panel-vote --seat … --judge …`). The server gives each stage its
//! contract's answer (by the words of our prompt for that stage), the seed's worked example:
//! each test checks the records our tools write from what the CLI printed (status, the parsed
//! content, the usage the CLI reports) and that the model was offered no tool but the schema
//! tool. A voter whose seat reads (`--reads`) reads the work through a real tool call before
//! it votes, proven by the tool result the server received.
//!
//! The table in docs/testing.md of what each CLI is held to here is rendered from [`CASES`]:
//!
//!     UPDATE_GENERATED=1 cargo test --test real real_synth

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Map, Value, json};

use crate::mockserver::{Logged, Script, ScriptCall};
use crate::real_cli::real_cli;
use crate::real_judge::{Case, Slot, Stage, case, input_within};
use crate::util::root;

/// The words each stage's prompt holds, which choose the server's answer.
const REVIEW: &str = "You are one reviewer on a panel.";
const GROUP: &str = "Group the findings that name the same problem";
const VOTE: &str = "For each finding, check it against the work itself";
const JUDGE: &str = "You are the judge";
/// What the prompt of a voter that reads says about the file.
const READS: &str = "The work is also the file ";

/// Seconds one call may take: a CLI takes up to half a minute to start on a busy machine.
const TIMEOUT: &str = "120";

/// What each CLI is proven to do here.
pub(crate) struct Synth {
    pub(crate) harness: &'static str,
    /// A voter on this CLI reads the work with its read tool.
    pub(crate) reads: Option<Reads>,
}

/// How a voter's CLI reads a file: the tool, and its arguments for the file's path.
pub(crate) struct Reads {
    pub(crate) tool: &'static str,
    pub(crate) args: fn(&str) -> Value,
}

/// Every installed CLI: those with a schema flag (claude, codex, qwen, llm) and those that are
/// asked in the prompt only (copilot, opencode, gemini, kimi).
pub(crate) const CASES: [Synth; 8] = [
    Synth {
        harness: "claude",
        reads: Some(Reads {
            tool: "Read",
            args: |file| json!({"file_path": file}),
        }),
    },
    Synth {
        harness: "codex",
        // It reads through its shell; its reviewer mode lets it read the folder only.
        reads: Some(Reads {
            tool: "exec_command",
            args: |file| json!({"cmd": format!("cat {file}")}),
        }),
    },
    Synth {
        harness: "copilot",
        reads: None,
    },
    Synth {
        harness: "opencode",
        reads: None,
    },
    Synth {
        harness: "gemini",
        reads: None,
    },
    Synth {
        harness: "qwen",
        reads: None,
    },
    Synth {
        harness: "kimi",
        reads: None,
    },
    Synth {
        harness: "llm",
        reads: None,
    },
];

fn fixture(name: &str) -> std::path::PathBuf {
    root().join("tests/fixtures/synthesis").join(name)
}

fn text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// The recorded answers of the seed's worked example, by asker (`merge`, `vote-write-1`, …).
fn answers() -> Map<String, Value> {
    let all: Map<String, Value> = serde_json::from_str(&text("answers.json")).unwrap();
    all.into_iter()
        .map(|(k, v)| match v {
            Value::Array(mut rounds) => (k, rounds.remove(0)),
            v => (k, v),
        })
        .collect()
}

/// The worked example's review records, every reviewer on `seat` unless `seat_of` names one.
fn reviews(seat: &str, seat_of: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text("reviews-1.jsonl").lines() {
        let mut rec: Value = serde_json::from_str(line).unwrap();
        let who = rec["reviewer"].as_str().unwrap().to_string();
        let s = seat_of
            .iter()
            .find(|(r, _)| *r == who)
            .map_or(seat, |(_, s)| s);
        rec["seat"] = json!(s);
        out.extend(rec.to_string().into_bytes());
        out.push(b'\n');
    }
    out
}

/// The server's answers: the second reviewer's review, the recorded grouping, each voter's
/// votes (told apart by the findings its prompt shows), the judge's decisions.
fn answer_each_stage(stage: &Stage) {
    let a = answers();
    let s = &stage.server;
    let second: Value =
        serde_json::from_str(text("reviews-1.jsonl").lines().nth(1).unwrap()).unwrap();
    let findings: Vec<Value> = second["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| json!({"severity": f["severity"], "evidence": f["evidence"], "fix": f["fix"], "file": null, "line": null}))
        .collect();
    s.answer_when(
        &[REVIEW],
        json!({"decision": "revise", "findings": findings}),
    );
    s.answer_when(&[GROUP], a["merge"].clone());
    // write-3 is shown F1 and F2, write-1 F2, F3 and F4, write-2 F3 and F4: told apart by
    // the evidence of F1 and of F2, in plain words (a CLI may rewrite quotes and brackets).
    s.answer_when(&[VOTE, "The reader has not met"], a["vote-write-3"].clone());
    s.answer_when(
        &[VOTE, "never says what happens"],
        a["vote-write-1"].clone(),
    );
    s.answer_when(&[VOTE], a["vote-write-2"].clone());
    s.answer_when(&[JUDGE], a["judge"].clone());
}

/// Runs `cmd` with `stdin`, holding a slot.
fn run(mut cmd: Command, stdin: &[u8]) -> Output {
    let _slot = Slot::take();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_type<'a>(recs: &'a [Value], ty: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["type"] == ty).collect()
}

/// The usage a call's record carries: each field the CLI reports, and where it reports tokens
/// the server's 20 out per request (`requests` of them in the call) and the input the server
/// reported for `asked`, the requests the call was among ([`input_within`]).
fn check_usage(case: &Case, what: &str, usage: &Value, requests: u64, asked: &[Logged]) {
    for field in case.usage {
        assert!(
            usage[field].as_f64().is_some_and(|x| x > 0.0),
            "{} {what}: usage.{field} not recorded: {usage}",
            case.harness
        );
    }
    if case.usage.contains(&"inputTokens") {
        input_within(&format!("{} {what}", case.harness), usage, asked);
        assert_eq!(
            usage["outputTokens"],
            20 * requests,
            "{} {what}: {usage}",
            case.harness
        );
    }
}

/// The lockdown, on the wire: every request since `from` offered the sealed tools only.
fn sealed_since(case: &Case, stage: &Stage, from: usize, what: &str) -> usize {
    let all = stage.server.generations();
    assert!(
        all.len() > from,
        "{} {what}: no model request",
        case.harness
    );
    for q in &all[from..] {
        assert_eq!(
            q.tools, case.tools,
            "{} {what}: tools offered",
            case.harness
        );
    }
    all.len()
}

fn check(synth: &Synth) {
    let c = case(synth.harness);
    let name = c.harness;
    let Some(exe) = real_cli(name) else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let stage = Stage::with_work(c, &bindir, "synth", &text("page.md"), "page.md");
    answer_each_stage(&stage);
    let seat = stage.seat.clone();
    let run_dir = |n: &str| stage.run.with_file_name(n);
    let launch = |tool: &str, run: &Path| {
        let mut cmd = stage.command(tool);
        cmd.args(["--retries", "0", "--timeout", TIMEOUT, "--out"])
            .arg(run);
        cmd
    };

    // (1) A review: pass or revise with findings.
    let mut cmd = launch("panel-judge", &run_dir("review"));
    cmd.args(["--contract", "review", "--seat", &seat])
        .arg(&stage.candidate);
    let out = run(cmd, b"");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{name} review: {err}");
    let recs = lines(&out);
    let r = &recs[0];
    assert_eq!(
        (&r["type"], &r["status"]),
        (&json!("review"), &json!("ok")),
        "{name}: {r}\n{err}"
    );
    assert_eq!(r["decision"], "revise", "{name}: {r}");
    let second: Value =
        serde_json::from_str(text("reviews-1.jsonl").lines().nth(1).unwrap()).unwrap();
    let got: Vec<(&Value, &Value, &Value)> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (&f["severity"], &f["evidence"], &f["fix"]))
        .collect();
    let want: Vec<(&Value, &Value, &Value)> = second["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (&f["severity"], &f["evidence"], &f["fix"]))
        .collect();
    assert_eq!(got, want, "{name}: the findings as the model gave them");
    let asked = sealed_since(c, &stage, 0, "review");
    let all = stage.server.generations();
    check_usage(c, "review", &r["usage"], asked as u64, &all[..asked]);

    // (2) The grouping seat groups as the model answered.
    let mut cmd = launch("panel-merge", &run_dir("merge"));
    cmd.args(["--seat", &seat]);
    let out = run(cmd, &reviews(&seat, &[]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{name} merge: {err}");
    let merged = lines(&out);
    let m = of_type(&merged, "merge")[0];
    assert_eq!(m["how"], "seat", "{name}: {m}\n{err}");
    assert_eq!(m["mergeFailed"], false, "{name}: {m}\n{err}");
    assert_eq!(
        (m["findings"].as_u64(), m["merged"].as_u64()),
        (Some(5), Some(4)),
        "{name}: {m}"
    );
    let f: Vec<&Value> = of_type(&merged, "finding");
    assert_eq!(
        f[0]["raisedBy"],
        json!(["write-1", "write-2"]),
        "{name}: {}",
        f[0]
    );
    assert_eq!(
        f[0]["sources"],
        json!(["write-1/1", "write-2/1"]),
        "{name}: {}",
        f[0]
    );
    assert!(
        f[0]["fix"]
            .as_str()
            .unwrap()
            .starts_with("Explain the term"),
        "{name}: {}",
        f[0]
    );
    let before = asked;
    let asked = sealed_since(c, &stage, before, "merge");
    let all = stage.server.generations();
    check_usage(
        c,
        "merge",
        &m["usage"],
        (asked - before) as u64,
        &all[before..asked],
    );

    // (3) The voters and the judge.
    let mut cmd = launch("panel-vote", &run_dir("vote"));
    cmd.args([
        "--seat",
        &seat,
        "--judge",
        &seat,
        "--jobs",
        "2",
        "--candidate",
    ])
    .arg(&stage.candidate);
    let out = run(cmd, &out.stdout);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let recs = lines(&out);
    let causes: Vec<&Value> = of_type(&recs, "vote").iter().map(|v| &v["cause"]).collect();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{name} vote: the judge acts: {err}\n{causes:?}"
    );
    check_votes(c, &recs, &err);
    let before = asked;
    let asked = sealed_since(c, &stage, before, "vote");
    // Each voter's and the judge's call made at least one request; a CLI reporting tokens
    // reports them per call: the server's 20 out for a call of one request.
    let calls = 4;
    let all = stage.server.generations();
    let votes = &all[before..asked];
    assert!(
        asked - before >= calls,
        "{name}: {} requests",
        asked - before
    );
    if asked - before == calls {
        for v in of_type(&recs, "vote")
            .iter()
            .filter(|v| v.get("usage").is_some())
        {
            check_usage(c, "vote", &v["usage"], 1, votes);
        }
        check_usage(c, "judge", &of_type(&recs, "route")[0]["usage"], 1, votes);
    }
}

/// The votes as the model gave them, the seed's outcome (F1 and F2 kept, F3 dropped, F4
/// disputed), the judge's decisions (act, act, skip) and where the usage is.
fn check_votes(c: &Case, recs: &[Value], err: &str) {
    let name = c.harness;
    let a = answers();
    let votes = of_type(recs, "vote");
    assert_eq!(votes.len(), 7, "{name}: {votes:?}\n{err}");
    for v in &votes {
        assert_eq!(v["status"], "ok", "{name}: {v}\n{err}");
        let given = a[&format!("vote-{}", v["reviewer"].as_str().unwrap())]["votes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["finding"] == v["finding"])
            .unwrap();
        assert_eq!(
            (&v["vote"], &v["reason"]),
            (&given["vote"], &given["reason"]),
            "{name}: {v}"
        );
    }
    // Usage on the first vote record of each voter, and there only.
    for voter in ["write-1", "write-2", "write-3"] {
        let mine: Vec<&&Value> = votes.iter().filter(|v| v["reviewer"] == voter).collect();
        if !c.usage.is_empty() {
            assert!(
                mine[0].get("usage").is_some(),
                "{name}: {voter}: no usage: {}",
                mine[0]
            );
        }
        assert!(
            mine[1..].iter().all(|v| v.get("usage").is_none()),
            "{name}: {voter}"
        );
    }
    let results: Vec<(&str, &str)> = of_type(recs, "synthesis")
        .iter()
        .map(|e| {
            (
                e["finding"]["id"].as_str().unwrap(),
                e["result"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("F1", "kept"),
            ("F2", "kept"),
            ("F3", "dropped"),
            ("F4", "disputed")
        ],
        "{name}"
    );
    let decisions: Vec<(&str, &str)> = of_type(recs, "decision")
        .iter()
        .map(|d| {
            (
                d["finding"].as_str().unwrap(),
                d["decision"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [("F1", "act"), ("F2", "act"), ("F4", "skip")],
        "{name}"
    );
    let route = of_type(recs, "route")[0];
    assert_eq!(
        (&route["route"], &route["status"]),
        (&json!("again"), &json!("ok")),
        "{name}: {route}"
    );
    if !c.usage.is_empty() {
        assert!(
            route.get("usage").is_some(),
            "{name}: the judge's usage: {route}"
        );
    }
}

/// A voter whose seat reads (`--reads`) reads the work with its read tool before it votes: the
/// server asks for the call, the CLI runs it in the voter's folder and sends the file's text
/// back; the other voters stay sealed; every vote is read as before.
fn reads(synth: &Synth) {
    let c = case(synth.harness);
    let (name, Some(how)) = (c.harness, synth.reads.as_ref()) else {
        return;
    };
    let (tool, args) = (how.tool, how.args);
    let Some(exe) = real_cli(name) else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let stage = Stage::with_work(c, &bindir, "reads", &text("page.md"), "page.md");
    answer_each_stage(&stage);
    let tool_name = tool.to_string();
    stage.server.set_script_when(
        READS,
        Script {
            plan: Box::new(move |_, body| {
                let prompt =
                    crate::mockserver::longest_string_with(body, READS).unwrap_or_default();
                let file = prompt
                    .split(READS)
                    .nth(1)
                    .and_then(|rest| rest.split(" in your working folder").next())
                    .unwrap_or_default()
                    .to_string();
                vec![vec![ScriptCall {
                    label: "the work".into(),
                    tool: tool_name.clone(),
                    args: args(&file),
                }]]
            }),
            final_text: None,
            when: Vec::new(),
        },
    );
    // write-3 (shown F1 and F2) sits on a seat that reads; the others on the sealed one.
    let reader = format!("{}-reader", stage.seat);
    let reader = if c.model.is_some() {
        reader
    } else {
        format!("{name}:reader")
    };
    let input = {
        let merge = {
            let mut cmd = stage.command("panel-merge");
            cmd.arg("-");
            run(cmd, &reviews(&stage.seat, &[("write-3", &reader)]))
        };
        assert_eq!(merge.status.code(), Some(0));
        merge.stdout
    };
    let mut cmd = stage.command("panel-vote");
    cmd.args([
        "--retries",
        "0",
        "--timeout",
        TIMEOUT,
        "--jobs",
        "2",
        "--out",
    ])
    .arg(stage.run.with_file_name("vote"))
    .args(["--seat", &stage.seat, "--seat", &reader, "--reads", &reader])
    .args(["--judge", &stage.seat, "--candidate"])
    .arg(&stage.candidate);
    let out = run(cmd, &input);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{name} vote: {err}");
    check_votes(c, &lines(&out), &err);
    let issued = stage.server.issued();
    assert_eq!(issued.len(), 1, "{name}: the calls asked for: {issued:?}");
    assert!(
        issued[0].offered,
        "{name}: {tool} was not offered to the reading voter"
    );
    let results = stage.server.tool_results();
    assert_eq!(results.len(), 1, "{name}: {results:?}");
    assert!(!results[0].error, "{name}: {:?}", results[0]);
    assert!(
        results[0]
            .text
            .contains("The client uses exponential backoff between attempts."),
        "{name}: the tool result is not the work: {:?}",
        results[0]
    );
    // The sealed voters and the judge were offered the sealed tools only.
    for q in stage.server.generations() {
        let reading = q.prompt_containing(READS).is_some();
        if !reading {
            assert_eq!(q.tools, c.tools, "{name}: a sealed call was offered tools");
        } else {
            assert!(q.tools.iter().any(|t| t == tool), "{name}: {:?}", q.tools);
        }
    }
}

fn synth(harness: &str) -> &'static Synth {
    CASES.iter().find(|c| c.harness == harness).unwrap()
}

#[test]
fn claude_synth() {
    check(synth("claude"));
}

#[test]
fn claude_voter_reads_the_work() {
    reads(synth("claude"));
}

#[test]
fn codex_voter_reads_the_work() {
    reads(synth("codex"));
}

#[test]
fn codex_synth() {
    check(synth("codex"));
}

#[test]
fn copilot_synth() {
    check(synth("copilot"));
}

#[test]
fn opencode_synth() {
    check(synth("opencode"));
}

#[test]
fn gemini_synth() {
    check(synth("gemini"));
}

#[test]
fn qwen_synth() {
    check(synth("qwen"));
}

#[test]
fn kimi_synth() {
    check(synth("kimi"));
}

#[test]
fn llm_synth() {
    check(synth("llm"));
}

const BEGIN: &str = "<!-- real CLIs, synthesis: begin (tests/real_synth.rs renders it) -->\n";
const END: &str = "<!-- real CLIs, synthesis: end -->";

/// The table in docs/testing.md of what each real CLI is held to in the synthesised review: rendered
/// from [`CASES`] and `real_judge`'s cases (the usage each CLI reports).
#[test]
fn readme_says_what_each_real_cli_is_held_to_in_the_synthesis() {
    let mut out = String::from(
        "| CLI | review (`panel-judge --contract review`) | merging seat (`panel-merge --seat`) | voters (`panel-vote --seat`) | judge (`panel-vote --judge`) | a voter that reads (`--reads`) |\n|---|---|---|---|---|---|\n",
    );
    for s in &CASES {
        let c = case(s.harness);
        let usage = if c.usage.is_empty() {
            String::new()
        } else {
            format!("; usage: {}", c.usage.join(", "))
        };
        let reads = s.reads.as_ref().map_or("-".to_string(), |r| {
            format!("reads the work with {}, then votes", r.tool)
        });
        out.push_str(&format!(
            "| {} | ok, revise, findings{usage} | ok, grouped as answered{usage} | ok, votes read; kept, dropped, disputed{usage} | ok, act/skip read, route again{usage} | {reads} |\n",
            s.harness
        ));
    }
    crate::util::doc_section(BEGIN, END, &out, "real_synth");
}
