//! The pairwise contract (`panel-judge --contract pairwise A B`) through real CLIs against the
//! stand-in model server, with the user's own setup as `real_judge` has it. A model that always
//! prefers the answer shown first, asked in both orders, is position-inconsistent in every
//! judge's record and panel-tally says so, with no preference: the panel's decision does not
//! follow the order; in alternating orders its two judges split. A model that prefers the
//! answer that holds the haiku, whichever order it saw them in, gives the haiku's name as the
//! panel's preference however the two were given. Kept to two CLIs (claude, codex: the two
//! schema flags), ten calls in all: the suite's time matters more than a third CLI.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::real_cli::real_cli;
use crate::real_judge::{Slot, Stage, case};
use crate::tool::{Tool, records};
use crate::util::Checked;

const QUESTION: &str =
    "Write a haiku about the sea: three lines, five, seven and five syllables.\n";
const HAIKU: &str =
    "Grey waves fold and break,\nsalt wind carries the gulls' cry,\nthe tide keeps its time.\n";
const PROSE: &str =
    "The sea is vast and endlessly fascinating, and many poets have tried to capture it.\n";
const LENSES: [&str; 4] = [
    "--lens",
    "instruction=Which answer does what the question asks?",
    "--lens",
    "form=Which answer keeps the form the question sets?",
];

/// A stage for `harness` whose work is the haiku (`a.md`), with the prose (`b.md`) and the
/// question beside it.
fn stage(harness: &str, tag: &str) -> Option<Stage> {
    let exe = real_cli(harness)?;
    let stage = Stage::with_work(case(harness), exe.parent().unwrap(), tag, HAIKU, "a.md");
    let dir = stage.candidate.parent().unwrap();
    std::fs::write(dir.join("b.md"), PROSE).unwrap();
    std::fs::write(dir.join("question.md"), QUESTION).unwrap();
    Some(stage)
}

/// panel-judge --contract pairwise on the stage's seat, the answers given in the order
/// `given`.
fn pairwise(stage: &Stage, run: &str, given: [&str; 2], extra: &[&str]) -> Output {
    let dir = stage.candidate.parent().unwrap();
    let _slot = Slot::take();
    stage
        .command("panel-judge")
        .args([
            "--contract",
            "pairwise",
            "--seat",
            &stage.seat,
            "--retries",
            "0",
            "--timeout",
            "120",
        ])
        .args(LENSES)
        .args(extra)
        .arg("--brief")
        .arg(dir.join("question.md"))
        .arg("--out")
        .arg(dir.join(run))
        .args(given.map(|f| dir.join(f)))
        .checked_output()
        .unwrap()
}

/// Every request offered the model the schema tool alone, or no tool (the contract in the
/// prompt), and each showed both answers.
fn asked(stage: &Stage, calls: usize) {
    let requests = stage.server.generations();
    assert_eq!(requests.len(), calls, "{}", stage.seat);
    for r in &requests {
        assert!(r.tools.len() <= 1, "{}: tools {:?}", stage.seat, r.tools);
        let body = r.body.to_string();
        assert!(
            body.contains("Grey waves") && body.contains("The sea is vast"),
            "{body}"
        );
    }
}

fn check_dir(dir: &Path, judges: &[Value]) {
    for j in judges {
        for order in ["ab", "ba"] {
            let job = format!("{}.{order}", j["judge"].as_str().unwrap());
            assert!(dir.join(&job).join("prompt.txt").is_file(), "{job}");
        }
    }
}

#[test]
fn a_model_that_prefers_the_first_shown_decides_nothing() {
    let Some(stage) = stage("claude", "pairwise-first") else {
        return;
    };
    stage.server.answer_when(
        &["SECOND-"],
        json!({"preferred": "first", "reason": "The first answer reads better.", "confidence": 0.9}),
    );
    let out = pairwise(&stage, "both", ["a.md", "b.md"], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "{recs:?}");
    for r in &recs {
        assert_eq!(r["status"], "position-inconsistent", "{r}");
        assert_eq!(r["orders"][0]["verdict"], "A", "{r}");
        assert_eq!(r["orders"][1]["verdict"], "B", "{r}");
        assert!(r["usage"]["inputTokens"].as_u64().unwrap_or(0) > 0, "{r}");
    }
    check_dir(&stage.candidate.parent().unwrap().join("both"), &recs);
    asked(&stage, 4);
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    let (code, text) = (t.code(), t.stdout());
    assert_eq!(code, Some(3), "{text}");
    assert!(text.contains("PANEL: no preference: A 0, B 0 of 2 judge(s) (2 needed); 2 position-inconsistent (abstained)."), "{text}");
    assert!(
        text.contains("POSITION-INCONSISTENT: form, instruction"),
        "{text}"
    );
    // In turns, AB for one judge and BA for the other: the two split, and nothing is decided.
    let out = pairwise(
        &stage,
        "alternate",
        ["a.md", "b.md"],
        &["--orders", "alternate"],
    );
    let said: Vec<(String, String)> = records(&out)
        .iter()
        .map(|r| {
            (
                r["orders"][0]["shown"].as_str().unwrap().into(),
                r["verdict"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        said.contains(&("AB".into(), "A".into())) && said.contains(&("BA".into(), "B".into())),
        "{said:?}"
    );
    asked(&stage, 6);
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    let (code, text) = (t.code(), t.stdout());
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains("PANEL: no preference: A 1, B 1 of 2 judge(s) (2 needed)."),
        "{text}"
    );
}

#[test]
fn a_model_that_reads_the_answers_prefers_the_same_one_in_both_orders() {
    let Some(stage) = stage("codex", "pairwise-content") else {
        return;
    };
    // The haiku's last line, then the fence that closes the first answer, or the second.
    stage.server.answer_when(
        &["keeps its time.\nFIRST-"],
        json!({"preferred": "first", "reason": "Only this one is a haiku.", "confidence": 0.9}),
    );
    stage.server.answer_when(
        &["keeps its time.\nSECOND-"],
        json!({"preferred": "second", "reason": "Only this one is a haiku.", "confidence": 0.9}),
    );
    for (given, preferred) in [(["a.md", "b.md"], "A"), (["b.md", "a.md"], "B")] {
        let out = pairwise(&stage, &format!("given-{preferred}"), given, &[]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for r in records(&out) {
            assert_eq!(
                (r["status"].as_str(), r["verdict"].as_str()),
                (Some("ok"), Some(preferred)),
                "{r}"
            );
        }
        let t = Tool::new("panel-tally").stdin(&out.stdout).run();
        let (code, text) = (t.code(), t.stdout());
        assert_eq!(code, Some(0), "{text}");
        assert!(
            text.contains(&format!("PANEL: prefers {preferred} (")),
            "{text}"
        );
        assert!(text.contains("a.md), 2 of 2 judge(s)"), "{text}");
    }
    asked(&stage, 8);
}
