//! `panel-judge --dry-run` pasted into bash: for every built-in harness, the block runs the
//! stand-in CLI as the launch runs it (the same argv, environment, working folder shape and
//! prompt), with its lockdown in place (each stand-in refuses to answer without its flags,
//! config files or agent file, unless `STANDIN_LOCKDOWN=off`), and gets the answer the launch
//! gets.
//! A candidate made to break out of shell quoting reaches the CLI byte for byte and runs
//! nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::{TempDir, bin, skipped, stderr, stdout, with_standins};

/// The rows whose dry-run block is pasted: every built-in CLI row proven against its real CLI
/// (`verified`), read from the table, so a new row is pasted without being listed here. Left
/// out: exec (its command is the user's) and replay (it launches nothing).
fn harnesses() -> Vec<String> {
    let table = panel::internals::Table::builtin();
    table
        .rows()
        .iter()
        .filter(|h| h.verified && !["exec", "replay"].contains(&h.name.as_str()))
        .map(|h| h.name.clone())
        .collect()
}

/// A candidate that tries every way out of a shell word; `PWNED` becomes a path that exists
/// afterwards only if some of it ran.
const HOSTILE: &str = "# claim\n\nIt's `touch PWNED.1` and $(touch PWNED.2) and ${HOME} and \"q\" \\ '\\''\n\
                       \x01\x07\x1b[2K\t\r\u{85}\u{2028} $'\\x41' !! *\n";

fn panel_judge(tmp: &Path, log: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin("panel-judge"));
    cmd.args(args).stdin(Stdio::null());
    with_standins(&mut cmd, log, &[])
        .env("TMPDIR", tmp)
        .env_remove("NO_COLOR");
    cmd
}

/// Runs a dry run's block in bash, as a script it was pasted into would.
fn paste(block: &str, tmp: &Path, log: &Path) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(block).stdin(Stdio::null());
    with_standins(&mut cmd, log, &[]).env("TMPDIR", tmp);
    cmd.output().unwrap()
}

/// The one call a stand-in logged: argv (long arguments read back from their files), the
/// environment it saw, how stdin came, and the prompt, with the private folder and the
/// fence's nonce normalised.
fn call(log: &Path, tmp: &Path) -> Value {
    let text = std::fs::read_to_string(log.join("calls.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let c: Value = serde_json::from_str(lines[0]).unwrap();
    let file = |v: &Value| -> Value {
        match v.as_str().and_then(|s| s.strip_prefix("@file:")) {
            Some(p) => std::fs::read_to_string(p).unwrap().into(),
            None => v.clone(),
        }
    };
    let prompt = match c.get("promptFile") {
        Some(p) => std::fs::read_to_string(p.as_str().unwrap()).unwrap(),
        None => c["prompt"].as_str().unwrap().to_string(),
    };
    let argv: Vec<Value> = c["argv"].as_array().unwrap().iter().map(file).collect();
    let env: serde_json::Map<String, Value> = c["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), file(v)))
        .collect();
    let shown = serde_json::json!({
        "argv": argv, "env": env, "stdin": c["stdin"], "prompt": prompt,
    });
    crate::util::hide_private(&shown.to_string(), tmp)
        .parse()
        .unwrap()
}

/// The answer in a block's output, read as the launch reads it: the harness row's jq filter
/// over its output, unless the answer lands in a file (which the block prints).
fn answer(row: &Value, out: &str) -> Value {
    let text = match (&row["filter"], row["answer"].as_str()) {
        (Value::String(filter), Some("stdout")) => {
            let mut jq = Command::new("jq");
            jq.args(["-c", filter]);
            let got = crate::util::run_with_stdin(&mut jq, out.as_bytes());
            assert!(got.status.success(), "jq {filter}: {}", stderr(&got));
            let first = stdout(&got).lines().next().unwrap_or_default().to_string();
            match serde_json::from_str::<Value>(&first) {
                Ok(Value::String(s)) => s,
                _ => first,
            }
        }
        _ => out.to_string(),
    };
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A folder with a stand-ins' log in it and a plain candidate.
fn scene(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let t = TempDir::new(tag);
    let (log, candidate) = (t.path().join("log"), t.path().join("c.md"));
    std::fs::write(&candidate, "# claim\n").unwrap();
    (t, log, candidate)
}

fn rows() -> Vec<Value> {
    let out = Command::new(bin("panel-judge"))
        .args(["--list-harnesses", "--json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_dry_run_block_runs_as_pasted_sealed_and_answers_as_the_launch() {
    if Command::new("jq").arg("--version").output().is_err() {
        skipped(
            "tools",
            "jq is not installed",
            "paste tests: skipped: jq is not installed",
        );
        return;
    }
    let rows = rows();
    for harness in harnesses() {
        let harness = harness.as_str();
        let t = TempDir::new(&format!("paste-{harness}"));
        let dir = |n: &str| -> PathBuf {
            let d = t.path().join(n);
            std::fs::create_dir_all(&d).unwrap();
            d
        };
        let (run_tmp, paste_tmp) = (dir("run-tmp"), dir("paste-tmp"));
        let (run_log, paste_log) = (t.path().join("run-log"), t.path().join("paste-log"));
        let pwned = t.path().join("pwned");
        let candidate = t.path().join("candidate.md");
        std::fs::write(
            &candidate,
            HOSTILE.replace("PWNED", pwned.to_str().unwrap()),
        )
        .unwrap();
        let args = [
            "--seat",
            harness,
            "--lens",
            "a=Does it hold? It's \"$(id)\"",
            "--retries",
            "0",
            "--sandbox",
            "off",
            candidate.to_str().unwrap(),
        ];

        let launched = panel_judge(&run_tmp, &run_log, &args).output().unwrap();
        assert_eq!(launched.status.code(), Some(0), "{}", stderr(&launched));
        let record: Value = serde_json::from_str(stdout(&launched).trim()).unwrap();
        assert_eq!(record["status"], "ok", "{harness}: {record}");

        let mut dry_args = vec!["--dry-run"];
        dry_args.extend(args);
        let dry = panel_judge(&paste_tmp, &paste_log, &dry_args)
            .output()
            .unwrap();
        assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
        let block = stdout(&dry);
        assert!(
            block.contains("# Unconfined: panel's Landlock walls do not reach a pasted command"),
            "{block}"
        );
        let pasted = paste(&block, &paste_tmp, &paste_log);
        assert_eq!(
            pasted.status.code(),
            Some(0),
            "{harness}: {}\n{block}",
            stderr(&pasted)
        );

        // The answer the launch recorded.
        let row = rows.iter().find(|r| r["name"] == harness).unwrap();
        let got = answer(row, &stdout(&pasted));
        for field in ["verdict", "reason", "confidence"] {
            assert_eq!(got[field], record[field], "{harness}: {field}: {got}");
        }
        // The same call: argv, environment, stdin and prompt byte for byte.
        assert_eq!(
            call(&paste_log, &paste_tmp),
            call(&run_log, &run_tmp),
            "{harness}: the pasted call differs from the launch's"
        );
        assert!(
            !pwned.with_extension("1").exists() && !pwned.with_extension("2").exists(),
            "{harness}: the candidate ran a command"
        );
        // The private folder is gone.
        let left: Vec<_> = std::fs::read_dir(&paste_tmp).unwrap().flatten().collect();
        assert!(left.is_empty(), "{harness}: left behind: {left:?}");
    }
}

#[test]
fn a_block_without_its_lockdown_files_is_refused_by_the_stand_in() {
    // The control for the test above: the stand-ins' lockdown check bites.
    let (t, log, candidate) = scene("paste-unlocked");
    for (harness, lockdown) in [
        ("gemini", ".gemini/settings.json"),
        ("qwen", ".qwen/settings.json"),
        ("kimi", "judge-agent/judge.yaml"),
    ] {
        let dry = panel_judge(
            t.path(),
            &log,
            &[
                "--dry-run",
                "--seat",
                harness,
                "--lens",
                "a=Q?",
                candidate.to_str().unwrap(),
            ],
        )
        .output()
        .unwrap();
        let block = stdout(&dry);
        let unlocked: Vec<&str> = block
            .lines()
            .filter(|l| !(l.starts_with("printf") && l.ends_with(lockdown)))
            .collect();
        assert_eq!(
            unlocked.len() + 1,
            block.lines().count(),
            "{harness}: {block}"
        );
        let out = paste(&unlocked.join("\n"), t.path(), &log);
        assert_ne!(out.status.code(), Some(0), "{harness}: ran unlocked");
        assert!(
            stderr(&out).contains("lockdown missing") || stderr(&out).contains("does not exist"),
            "{harness}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_dry_run_prints_one_block_per_judge() {
    let (t, log, candidate) = scene("paste-blocks");
    let dry = panel_judge(
        t.path(),
        &log,
        &[
            "--dry-run",
            "--seat",
            "codex:gpt-5",
            "--seat",
            "replay:answers.json",
            "--cross",
            candidate.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    let text = stdout(&dry);
    let blocks: Vec<&str> = text.trim_end().split("\n\n").collect();
    // Three lenses on two seats; a replay seat runs nothing.
    assert_eq!(blocks.len(), 6, "{text}");
    for b in &blocks {
        assert!(b.starts_with("# judge "), "{b}");
        if b.contains("replay") {
            assert!(b.contains("# replays answers.json: nothing to run"), "{b}");
            continue;
        }
        assert!(b.contains("\nprintf '%s' '{\"type\":\"object\""), "{b}");
        assert!(
            b.contains("a=(exec \"$prompt\" --model gpt-5 --output-schema"),
            "{b}"
        );
        assert!(b.ends_with("exit \"$status\"\n)"), "{b}");
        // Bash reads each block whole.
        let parsed = Command::new("bash").args(["-n", "-c", b]).output().unwrap();
        assert!(parsed.status.success(), "{}", stderr(&parsed));
    }
    assert!(
        std::fs::read_dir(&log).unwrap().next().is_none(),
        "a dry run launched something"
    );
}
