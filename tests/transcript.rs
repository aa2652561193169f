//! Transcripts of any size: a judge's stdout is written to its run folder as it arrives, within
//! `--max-output`, and its events are read as they come, so a verdict in the last event of a
//! transcript far past what is held in memory still counts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::Rig;
use crate::util::bin;

const MIB: usize = 1 << 20;

/// Writes a claude stream-json transcript of about `mib` MiB: an init event, then a Read call
/// and its result echoing a file (as a reviewer's transcript does) over and over, then the
/// model's message and the result event that carries the verdict.
fn claude_transcript(path: &Path, mib: usize, verdict: &str) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        f,
        "{}",
        json!({"type": "system", "subtype": "init", "session_id": "s", "tools": ["Read"]})
    )
    .unwrap();
    let content: String = "fn main() { println!(\"a line of the file being read\"); }\n"
        .repeat(4096)
        .chars()
        .take(256 << 10)
        .collect();
    let call = json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/src/main.rs"}}]}});
    let result = json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": content}]}});
    let (call, result) = (call.to_string(), result.to_string());
    let mut written = 0;
    while written < mib * MIB {
        writeln!(f, "{call}\n{result}").unwrap();
        written += call.len() + result.len() + 2;
    }
    let answer =
        json!({"verdict": verdict, "reason": "read to the end", "confidence": 0.8}).to_string();
    let text = json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": answer}]}});
    let last = json!({"type": "result", "subtype": "success", "is_error": false,
        "result": answer, "usage": {"input_tokens": 7, "output_tokens": 11}, "total_cost_usd": 0.5});
    writeln!(f, "{text}\n{last}").unwrap();
    f.flush().unwrap();
}

/// panel-judge with one stand-in claude judge that prints `transcript`.
fn judge_transcript(rig: &Rig, transcript: &Path, more: &[&str]) -> (Value, PathBuf) {
    let dir = transcript.parent().unwrap().to_str().unwrap();
    let mode = format!("transcript:{}", transcript.display());
    let mut args = vec![
        "--seat",
        "claude:haiku",
        "--lens",
        "a=Q?",
        "--sandbox-read",
        dir,
    ];
    args.extend(more);
    let out = rig.judge(&args, &[("STANDIN_MODE", &mode)]);
    let r = out.records().remove(0);
    let run = PathBuf::from(r["run"].as_str().unwrap());
    (r, run)
}

/// The seed's reviewers echo every file they read: a review passes 16 MiB easily. Only the
/// first 16 MiB were read, so the last event, with the verdict, was lost (unreadable).
#[test]
fn a_verdict_in_the_last_event_of_a_transcript_past_16_mib_counts() {
    let rig = Rig::new("transcript-long");
    let file = rig.tmp.path().join("stream.jsonl");
    claude_transcript(&file, 24, "holds");
    let (r, run) = judge_transcript(&rig, &file, &[]);
    assert_eq!(
        (r["status"].as_str(), r["verdict"].as_str()),
        (Some("ok"), Some("holds")),
        "{r}"
    );
    assert_eq!(r["reason"], "read to the end");
    assert_eq!(r["usage"]["outputTokens"], 11, "{r}");
    // The run folder keeps it byte for byte.
    let kept = std::fs::read(run.join("a/attempt-1/stdout")).unwrap();
    assert!(
        kept == std::fs::read(&file).unwrap(),
        "the run folder's copy differs"
    );
}

/// Past --max-output the judge is stopped and abstains, and the run folder holds exactly the
/// budget; panel-tally counts it as an abstention.
#[test]
fn past_max_output_the_judge_is_stopped_and_abstains_with_output_limit() {
    let rig = Rig::new("transcript-limit");
    let file = rig.tmp.path().join("stream.jsonl");
    claude_transcript(&file, 24, "holds");
    let (r, run) = judge_transcript(&rig, &file, &["--max-output", "3M"]);
    assert_eq!(r["status"], "output-limit", "{r}");
    assert_eq!(r["verdict"], Value::Null);
    assert_eq!(r["attempts"], 1, "asking again would cost as much: {r}");
    let cause = r["cause"].as_str().unwrap();
    assert!(cause.contains("--max-output 3 MiB"), "{cause}");
    let kept = std::fs::read(run.join("a/attempt-1/stdout")).unwrap();
    assert_eq!(kept.len(), 3 * MIB);
    assert!(kept[..] == std::fs::read(&file).unwrap()[..3 * MIB]);
    let exit: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("a/attempt-1/exit.json")).unwrap())
            .unwrap();
    assert_eq!(exit["outputLimit"], true, "{exit}");
    assert_eq!(exit["stdoutKept"], 3 * MIB as u64);

    let line = format!("{r}\n");
    let mut tally = std::process::Command::new(bin("panel-tally"))
        .arg("--json")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    tally
        .stdin
        .take()
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let out = tally.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "no decision without the answer");
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t["counts"]["abstained"], 1, "{t}");
}

/// A bad size is a usage error with one line.
#[test]
fn a_bad_max_output_is_refused() {
    let rig = Rig::new("transcript-bad-size");
    let out = rig.judge(
        &["--seat", "claude:haiku", "--max-output", "12 parsecs"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-output"), "{err}");
}

/// One line far past what is read of an event (a model that never prints a newline) is passed
/// over, not held, and the events after it are read.
#[test]
fn a_giant_line_is_passed_over_and_the_events_after_it_count() {
    let rig = Rig::new("transcript-giant");
    let file = rig.tmp.path().join("giant.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    let block = vec![b'x'; MIB];
    for _ in 0..36 {
        f.write_all(&block).unwrap();
    }
    let answer = json!({"verdict": "holds", "reason": "after the flood", "confidence": 0.7});
    let last = json!({"type": "result", "result": answer.to_string()});
    write!(f, "\n{last}\n").unwrap();
    drop(f);
    let (r, _) = judge_transcript(&rig, &file, &[]);
    assert_eq!(
        (r["status"].as_str(), r["verdict"].as_str()),
        (Some("ok"), Some("holds")),
        "{r}"
    );

    // With no newline ever, nothing is an answer: unreadable, its excerpt short.
    let endless = rig.tmp.path().join("endless.txt");
    std::fs::write(&endless, vec![b'{'; 36 * MIB]).unwrap();
    let (r, run) = judge_transcript(
        &rig,
        &endless,
        &[
            "--retries",
            "0",
            "--out",
            rig.tmp.path().join("run2").to_str().unwrap(),
        ],
    );
    assert_eq!(r["status"], "unreadable", "{r}");
    assert!(r["excerpt"].as_str().unwrap().len() < 1024);
    let cause = r["cause"].as_str().unwrap();
    assert!(
        cause.contains("1 line(s) of its output past 16 MiB"),
        "{cause}"
    );
    let kept = std::fs::metadata(run.join("a/attempt-1/stdout"))
        .unwrap()
        .len();
    assert_eq!(kept, 36 * MIB as u64);
}
