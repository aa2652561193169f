//! A panel that pays for its candidate once (issue 47): each judge is sent what the panel
//! shares first and its lens last, claude's shared part in its system prompt file; the first
//! judge of a seat starts, and the others of that seat once it can serve them from the cache.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{bin, stderr, with_standins};

/// The stand-in CLIs' calls, in the order they were logged.
fn calls(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log.join("calls.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let mut call: Value = serde_json::from_str(l).unwrap();
            if let Some(f) = call["promptFile"].as_str() {
                call["prompt"] = std::fs::read_to_string(f).unwrap().into();
            }
            call
        })
        .collect()
}

/// The text a call was given as its prompt (`-p`), and all the model read (system first).
fn prompts(call: &Value) -> (String, String) {
    let argv: Vec<&str> = call["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = argv.iter().position(|a| *a == "-p").unwrap();
    let read = call["prompt"].as_str().unwrap().to_string();
    (argv[at + 1].to_string(), read)
}

/// A panel of three lenses through the stand-in claude on `seats`, the judge with the lens
/// `Q1?` taking two seconds; the calls it made.
fn panel(candidate_bytes: usize, seats: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let candidate = dir.path().join("candidate.txt");
    let line = "the function returns xs[0] and says it returns None when xs is empty\n";
    let text = line.repeat(candidate_bytes / line.len() + 1);
    std::fs::write(&candidate, &text).unwrap();
    let mut cmd = Command::new(bin("panel-judge"));
    with_standins(&mut cmd, &log, &[]);
    for seat in seats {
        cmd.args(["--seat", seat]);
    }
    let out = cmd
        .args([
            "--lens",
            "one=Q1?",
            "--lens",
            "two=Q2?",
            "--lens",
            "three=Q3?",
        ])
        .args(["--sandbox", "off", "--retries", "0"])
        .arg(&candidate)
        .env("STANDIN_RULES", "Q1?=>sleep:2\n")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let calls = calls(&log);
    assert_eq!(calls.len(), 3, "{calls:?}");
    for call in &calls {
        let (own, read) = prompts(call);
        // The lens alone is its own; the candidate is read from the shared system prompt.
        assert!(
            own.starts_with("Your lens, and the only question you answer: Q"),
            "{own}"
        );
        assert!(!own.contains(line), "{own}");
        assert!(read.contains(line) && read.ends_with(&own), "{read}");
        let i = read.find(line).unwrap();
        assert!(!read[..i].contains("Q1?") && !read[..i].contains("Q2?"));
    }
    calls
}

/// When the call that asked `lens` started, and the others.
fn started(calls: &[Value], lens: &str) -> (u64, Vec<u64>) {
    let ts = |c: &Value| c["ts"].as_u64().unwrap();
    let (first, rest): (Vec<&Value>, Vec<&Value>) =
        calls.iter().partition(|c| prompts(c).0.contains(lens));
    (ts(first[0]), rest.into_iter().map(ts).collect())
}

/// Issue 47: "the first judge of each seat starts, and the others of that seat start once it
/// has begun to answer (or after a short bound), where the shared part is long enough for the
/// provider to cache (a short candidate fans out at once, as today)". With no proxy to read
/// the model's answer (`--sandbox off`), the others start when the first has ended.
#[test]
fn a_seats_other_judges_start_once_its_first_can_serve_them_from_the_cache() {
    let (first, others) = started(&panel(6000, &["claude:haiku"]), "Q1?");
    for t in others {
        assert!(
            t >= first + 1500,
            "started {} ms after the first",
            t - first
        );
    }
}

#[test]
fn a_short_candidate_fans_out_at_once() {
    let (first, others) = started(&panel(1000, &["claude:haiku"]), "Q1?");
    for t in others {
        assert!(t.abs_diff(first) < 1500, "{t} against {first}");
    }
}

/// Different seats are different caches: their first judges start together.
#[test]
fn the_first_judges_of_different_seats_start_together() {
    let calls = panel(6000, &["claude:haiku", "claude:sonnet", "claude:opus"]);
    let (first, others) = started(&calls, "Q1?");
    for t in others {
        assert!(t.abs_diff(first) < 1500, "{t} against {first}");
    }
}
