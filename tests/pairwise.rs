//! `panel-judge --contract pairwise A B` and `panel-tally` over its records, through the
//! stand-in CLIs: each judge asked in both orders (or the orders alternating across the
//! panel), a judge that always prefers the answer shown first recorded position-inconsistent,
//! and the panel's preference following the answers, never the order they were given in.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::tool::{Ran, Tool, records};
use crate::util::{Checked, TempDir, bin, judges_may_write, root, stderr, stdout, with_standins};

const EXAMPLE: &str = "examples/pairwise";

fn example(name: &str) -> PathBuf {
    root().join(EXAMPLE).join(name)
}

/// panel-judge --contract pairwise on stand-in seats, answering as `mode` says, about the
/// example's question and its two answers given in the order `a`, `b`.
fn judge(tmp: &Path, mode: &str, seats: &[&str], a: &str, b: &str, extra: &[&str]) -> Ran {
    judge_in(
        tmp,
        &tmp.join(format!("run-{}", crate::util::mark())),
        mode,
        seats,
        (a, b),
        extra,
    )
}

/// [`judge`], its run folder `run`.
fn judge_in(
    tmp: &Path,
    run: &Path,
    mode: &str,
    seats: &[&str],
    (a, b): (&str, &str),
    extra: &[&str],
) -> Ran {
    let log = tmp.join("log");
    std::fs::create_dir_all(&log).unwrap();
    judges_may_write(&log);
    Tool::new("panel-judge")
        .standins(&log, &[])
        .env("STANDIN_MODE", mode)
        .args(["--contract", "pairwise", "--brief"])
        .arg(example("question.md"))
        .args(["--out"])
        .arg(run)
        .args(seats.iter().flat_map(|s| ["--seat", s]))
        .args(extra)
        .arg(example(a))
        .arg(example(b))
        .run()
}

const SEATS: [&str; 3] = ["claude:haiku", "codex:gpt-5", "gemini"];

#[test]
fn a_judge_that_always_prefers_the_first_shown_is_position_inconsistent() {
    let tmp = TempDir::new("pairwise-first");
    let run = tmp.path().join("run");
    let out = judge_in(tmp.path(), &run, "first", &SEATS, ("a.md", "b.md"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert_eq!(
            (r["type"].as_str(), r["status"].as_str()),
            (Some("pairwise"), Some("position-inconsistent")),
            "{r}"
        );
        assert_eq!(r["verdict"], Value::Null);
        let orders: Vec<(&str, &str)> = r["orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["shown"].as_str().unwrap(), o["verdict"].as_str().unwrap()))
            .collect();
        assert_eq!(orders, [("AB", "A"), ("BA", "B")]);
        assert!(r["a"].as_str().unwrap().ends_with("a.md"), "{r}");
        assert_eq!(r["panelSize"], 3);
    }
    // Each judge was asked twice, once in each order, the answers in the order shown; the
    // prompt never names them A or B.
    let calls = std::fs::read_to_string(tmp.path().join("log/calls.jsonl")).unwrap();
    assert_eq!(calls.lines().count(), 6, "{calls}");
    for r in &recs {
        for (order, haiku_first) in [("ab", true), ("ba", false)] {
            let job = format!("{}.{order}", r["judge"].as_str().unwrap());
            let p = std::fs::read_to_string(run.join(&job).join("prompt.txt")).unwrap();
            let (first, second) = p.split_once("<<<SECOND-").unwrap();
            let first = &first[first.find("<<<FIRST-").unwrap()..];
            assert_eq!(first.contains("Grey waves"), haiku_first, "{job}: {p}");
            assert_eq!(second.contains("Grey waves"), !haiku_first, "{job}");
            assert!(!p.contains("a.md") && !p.contains("\"A\""), "{job}: {p}");
        }
    }
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    assert_eq!(t.status.code(), Some(3), "{}", stderr(&t));
    let text = stdout(&t);
    assert!(text.contains("PANEL: no preference: A 0, B 0 of 3 judge(s) (2 needed); 3 position-inconsistent (abstained)."), "{text}");
    assert!(text.contains("POSITION-INCONSISTENT: instruction@claude-haiku, instruction@codex-gpt-5, instruction@gemini"), "{text}");
    assert!(text.contains("first shown: 6 of 6 answers"), "{text}");
    // Given in the other order, the panel decides the same: nothing.
    let swapped = judge(tmp.path(), "first", &SEATS, "b.md", "a.md", &[]);
    let t = Tool::new("panel-tally")
        .args(["--json"])
        .stdin(&swapped.stdout)
        .run();
    assert_eq!(t.status.code(), Some(3));
    let rec: Value = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(
        (
            rec["preferred"].clone(),
            rec["counts"]["positionInconsistent"].as_u64()
        ),
        (Value::Null, Some(3))
    );
}

/// Issue 46: "A judge learns nothing of its order". A hostile judge looks at everything it can
/// see (its working folder, argv, stdin, environment, host, mounts, every name and text under
/// its private folder) for the order it was shown, to prefer A in both and be recorded
/// consistent. It finds none, and its two orders look alike but for the answers' texts.
#[test]
fn a_judge_sees_the_same_in_both_orders_but_the_answers() {
    let tmp = TempDir::new("pairwise-look");
    let log = tmp.path().join("log");
    std::fs::create_dir_all(&log).unwrap();
    let mut cmd = Command::new(bin("panel-judge"));
    with_standins(&mut cmd, judges_may_write(&log), &[]);
    let out = cmd
        .env("STANDIN_MODE", "first")
        .env("STANDIN_DO", "look")
        .args(["--contract", "pairwise", "--brief"])
        .arg(example("question.md"))
        .args(["--seat", "claude:haiku", "--seat", "exec:plain", "--out"])
        .arg(tmp.path().join("run"))
        .arg(example("a.md"))
        .arg(example("b.md"))
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let texts: Vec<String> = ["a.md", "b.md"]
        .map(|f| {
            std::fs::read_to_string(example(f))
                .unwrap()
                .trim_end()
                .to_string()
        })
        .into();
    let mut looks: Vec<String> = std::fs::read_dir(log.join("looks"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(looks.len(), 4, "two judges, two orders each");
    for look in &looks {
        assert!(look.starts_with("order: unknown\n"), "{look}");
        // It saw the answers, in its prompt and its files: the look is worth comparing.
        assert!(texts.iter().all(|t| look.contains(t.as_str())), "{look}");
    }
    // Each judge's two looks are one, once the texts are made alike.
    looks = looks.iter().map(|l| alike(l, &texts)).collect();
    looks.sort();
    assert!(looks[0] != looks[2], "the two judges look alike");
    assert_eq!(looks[0], looks[1], "one judge's orders differ");
    assert_eq!(looks[2], looks[3], "one judge's orders differ");
}

/// A judge's look with what may differ between two launches of it made alike: the two answers'
/// texts, what is random (16 hex digits or more: a folder's name, a CLI's session id) and the
/// clock a CLI writes down (`2026-01-02T03:04:05.678Z`).
fn alike(look: &str, texts: &[String]) -> String {
    let mut look = look.to_string();
    for t in texts {
        look = look.replace(t.as_str(), "<answer>");
    }
    let clock = "0000-00-00T00:00:00.000Z".as_bytes();
    let (mut out, b) = (String::new(), look.as_bytes());
    let mut i = 0;
    while i < b.len() {
        let hex = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            .count();
        let stamp = b.len() - i >= clock.len()
            && clock.iter().zip(&b[i..]).all(|(w, c)| match w {
                b'0' => c.is_ascii_digit(),
                w => w == c,
            });
        let (word, n) = if stamp {
            ("<clock>", clock.len())
        } else if hex >= 16 {
            ("<random>", hex)
        } else {
            let n = look[i..].chars().next().map_or(1, char::len_utf8);
            (&look[i..i + n], n)
        };
        out.push_str(word);
        i += n;
    }
    out
}

#[test]
fn a_consistent_panel_prefers_the_same_answer_whichever_order_it_was_given_in() {
    let tmp = TempDir::new("pairwise-content");
    for (a, b, preferred) in [("a.md", "b.md", "A"), ("b.md", "a.md", "B")] {
        let out = judge(tmp.path(), "prefer:Grey waves", &SEATS, a, b, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let t = Tool::new("panel-tally")
            .args(["--json"])
            .stdin(&out.stdout)
            .run();
        assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
        let rec: Value = serde_json::from_slice(&t.stdout).unwrap();
        assert_eq!(rec["preferred"], preferred, "{rec}");
        // The preferred answer is the haiku, named as the user gave it.
        let name = rec[preferred.to_lowercase()].as_str().unwrap();
        assert!(name.ends_with("a.md"), "{rec}");
        assert_eq!(
            (rec["firstShown"].as_u64(), rec["answers"].as_u64()),
            (Some(3), Some(6))
        );
        let md = Tool::new("panel-tally")
            .args(["--format", "markdown"])
            .stdin(&out.stdout)
            .run();
        assert!(
            stdout(&md).starts_with(&format!("### ✅ Pairwise panel: prefers {preferred}")),
            "{}",
            stdout(&md)
        );
    }
}

#[test]
fn alternating_orders_ask_half_as_often_and_balance_the_first_shown() {
    let tmp = TempDir::new("pairwise-alternate");
    let out = judge(
        tmp.path(),
        "first",
        &SEATS[..2],
        "a.md",
        "b.md",
        &["--orders", "alternate"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    let shown: Vec<(&str, &str, &str)> = recs
        .iter()
        .map(|r| {
            (
                r["judge"].as_str().unwrap(),
                r["orders"][0]["shown"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    let mut shown = shown;
    shown.sort();
    assert_eq!(
        shown,
        [
            ("instruction@claude-haiku", "AB", "A"),
            ("instruction@codex-gpt-5", "BA", "B")
        ]
    );
    assert!(
        recs.iter()
            .all(|r| r["orders"].as_array().unwrap().len() == 1 && r["status"] == "ok")
    );
    // One A, one B: the order did not decide the panel.
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    assert_eq!(t.status.code(), Some(3));
    assert!(
        stdout(&t).contains("PANEL: no preference: A 1, B 1 of 2 judge(s) (2 needed)."),
        "{}",
        stdout(&t)
    );
}

#[test]
fn an_order_without_an_answer_leaves_its_judge_without_a_preference() {
    let tmp = TempDir::new("pairwise-timeout");
    // The judge answers prose when the haiku is shown second: unreadable in that order alone.
    let log = tmp.path().join("log");
    std::fs::create_dir_all(&log).unwrap();
    judges_may_write(&log);
    let mut cmd = Command::new(bin("panel-judge"));
    with_standins(&mut cmd, &log, &[]);
    let out = cmd
        .env("STANDIN_RULES", "The sea is vast=>prose\n")
        .env("STANDIN_MODE", "prefer:Grey waves")
        .args(["--contract", "pairwise", "--retries", "0", "--brief"])
        .arg(example("question.md"))
        .args(["--seat", "claude:haiku", "--out"])
        .arg(tmp.path().join("run"))
        .arg(example("a.md"))
        .arg(example("b.md"))
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    // Every prompt holds "The sea is vast": both orders are prose.
    assert_eq!(
        (r["status"].as_str(), r["verdict"].clone()),
        (Some("unreadable"), Value::Null),
        "{r}"
    );
    assert!(
        r["cause"].as_str().unwrap().starts_with("shown AB: "),
        "{r}"
    );
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    assert_eq!(t.status.code(), Some(3));
    assert!(
        stdout(&t).contains("1 gave no preference"),
        "{}",
        stdout(&t)
    );
}

#[test]
fn recorded_answers_replay_the_example_offline() {
    let tmp = TempDir::new("pairwise-replay");
    let out = Command::new(bin("panel-judge"))
        .args([
            "--contract",
            "pairwise",
            "--brief",
            "examples/pairwise/question.md",
            "--seat",
            "replay:examples/pairwise/answers.json",
            "--out",
        ])
        .arg(tmp.path().join("run"))
        .args(["examples/pairwise/a.md", "examples/pairwise/b.md"])
        .current_dir(root())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for f in [
        "question.candidate",
        "a.candidate",
        "b.candidate",
        "pairwise.jsonl",
        "instruction.ab",
        "instruction.ba",
    ] {
        assert!(tmp.path().join("run").join(f).exists(), "{f}");
    }
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    assert_eq!(t.status.code(), Some(0));
    assert!(
        stdout(&t)
            .contains("PANEL: prefers A (examples/pairwise/a.md), 1 of 1 judge(s) (1 needed)."),
        "{}",
        stdout(&t)
    );
    // The seal covers the question and both answers in their order.
    let seal = records(&out)[0]["candidate"].as_str().unwrap().to_string();
    let swapped = Command::new(bin("panel-judge"))
        .args([
            "--contract",
            "pairwise",
            "--brief",
            "examples/pairwise/question.md",
            "--seat",
            "replay:examples/pairwise/answers.json",
            "--out",
        ])
        .arg(tmp.path().join("run2"))
        .args(["examples/pairwise/b.md", "examples/pairwise/a.md"])
        .current_dir(root())
        .checked_output()
        .unwrap();
    assert_ne!(records(&swapped)[0]["candidate"].as_str().unwrap(), seal);
}

#[test]
fn a_pairwise_panel_refuses_what_it_cannot_do() {
    let q = example("question.md");
    let (a, b) = (example("a.md"), example("b.md"));
    let q = q.to_str().unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for (args, says) in [
        (
            vec!["--contract", "pairwise", a, b],
            "--contract pairwise needs --brief FILE",
        ),
        (
            vec!["--contract", "pairwise", "--brief", q, a],
            "--contract pairwise takes two answers, A and B",
        ),
        (
            vec!["--contract", "pairwise", "--brief", q, "-", "-"],
            "A and B cannot both be standard input",
        ),
        (
            vec!["--contract", "pairwise", "--brief", q, "--cascade", a, b],
            "--stop-when-decided, --cascade and --agree are for verdict and review panels",
        ),
        (
            vec![
                "--contract",
                "pairwise",
                "--brief",
                q,
                "--canary",
                "x=holds",
                a,
                b,
            ],
            "--canary is for --contract verdict",
        ),
        (
            vec!["--orders", "both", a],
            "a second answer and --orders are for --contract pairwise",
        ),
        (
            vec![a, b],
            "a second answer and --orders are for --contract pairwise",
        ),
        (
            vec!["--contract", "review", "--name", "x", a],
            "--name is for verdicts and pairwise preferences",
        ),
        (
            vec![
                "--contract",
                "pr",
                "--plan",
                "plan.json",
                "--orders",
                "both",
            ],
            "--orders and --name are for verdicts and pairwise preferences",
        ),
    ] {
        let out = Command::new(bin("panel-judge"))
            .args(["--seat", "replay:examples/pairwise/answers.json"])
            .args(&args)
            .current_dir(root())
            .stdin(Stdio::null())
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // panel-tally: one pair at a time, and --agree past half.
    let out = Command::new(bin("panel-judge"))
        .args([
            "--contract",
            "pairwise",
            "--brief",
            q,
            "--seat",
            "replay:examples/pairwise/answers.json",
            a,
            b,
        ])
        .current_dir(root())
        .checked_output()
        .unwrap();
    for (args, says) in [
        (&["--agree", "0"][..], "--agree 0"),
        (&["--each"], "a pairwise panel is counted alone"),
    ] {
        let t = Tool::new("panel-tally").args(args).stdin(&out.stdout).run();
        assert_eq!(t.status.code(), Some(2), "{args:?}");
        assert!(stderr(&t).contains(says), "{}", stderr(&t));
    }
    let mut two = stdout(&out);
    two.push_str(&two.replace("sha256:", "sha256:0"));
    let t = Tool::new("panel-tally").stdin(two.as_bytes()).run();
    assert_eq!(t.status.code(), Some(2));
    assert!(
        stderr(&t).contains("one pairwise panel at a time"),
        "{}",
        stderr(&t)
    );
}

#[test]
fn sigint_mid_panel_records_every_judge_and_leaves_nothing_running() {
    let tmp = TempDir::new("pairwise-signal");
    let pids = tmp.path().join("pids");
    let answered = tmp.path().join("answered");
    let mark = crate::util::mark();
    // One judge answers at once (AB) and hangs in the other order (BA): its record must still
    // be written, interrupted, with the answer it gave kept beside.
    let seat = format!(
        "exec:prompt=$(cat); case $prompt in *'<<<FIRST-'*'Grey waves'*'<<<SECOND-'*) echo '{{\"preferred\":\"first\",\"reason\":\"r\",\"confidence\":0.5}}'; : > {a} ;; *) echo $$ >> {p}; exec sleep {mark} ;; esac",
        p = pids.display(),
        a = answered.display()
    );
    let child = Command::new(bin("panel-judge"))
        .args(["--contract", "pairwise", "--brief"])
        .arg(example("question.md"))
        .args(["--seat", &seat, "--out"])
        .arg(tmp.path().join("run"))
        .arg(example("a.md"))
        .arg(example("b.md"))
        // What the seat writes down for the test lies outside its folders.
        .env(
            "PANEL_SANDBOX_WRITE",
            crate::util::judges_may_write(tmp.path()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both orders start at once: the signal comes once BA hangs and AB has answered (and the
    // tool has had a moment to read it, however loaded the machine).
    assert!(crate::util::wait_until(
        std::time::Duration::from_secs(30),
        || !crate::util::pids_in(&pids).is_empty() && answered.exists()
    ));
    std::thread::sleep(std::time::Duration::from_millis(500));
    crate::util::kill(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let recs: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 1, "{recs:?}");
    let r = &recs[0];
    assert_eq!(
        (r["status"].as_str(), r["verdict"].clone()),
        (Some("interrupted"), Value::Null),
        "{r}"
    );
    assert_eq!(r["orders"][0]["verdict"], "A", "{r}");
    let kept = std::fs::read_to_string(tmp.path().join("run/pairwise.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 1);
    let left = crate::util::marked(&mark);
    assert!(left.is_empty(), "{left:?} outlived panel-judge");
}
