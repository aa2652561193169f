//! Panels that stop when they are decided (`panel-judge --stop-when-decided`), cascades that
//! ask only whom they need (`--cascade`), and how panel-tally and the ledger count the judges
//! left out. Issue: "a panel is decided when its outcome is the same whatever the judges still
//! out answer".

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::tool::{Ran, Tool};
use crate::util::{Checked, TempDir, bin, marked, pids_in, root, stderr, stdout};

const HOLDS: &str = r#"{"verdict":"holds","reason":"fine","confidence":0.7}"#;
const BREAKS: &str = r#"{"verdict":"breaks","reason":"line 3 fails","confidence":0.7}"#;

/// One lens on each seat (`exec:` scripts), about examples/answer.md, with `more` options; what
/// a seat writes down for the test goes under `tmp`.
fn panel(tmp: &Path, seats: &[String], more: &[&str]) -> Ran {
    let mut cmd = Tool::new("panel-judge");
    for s in seats {
        cmd.args(["--seat", &format!("exec:{s}")]);
    }
    if !more.contains(&"--history") {
        cmd.arg("--no-history");
    }
    if !more.contains(&"review") {
        cmd.args(["--lens", "a=Q?"]);
    }
    cmd.arg("--allow-correlated")
        .args(["--out", tmp.join("run").to_str().unwrap()])
        .args(more)
        .arg("examples/answer.md")
        .judges_write(tmp)
        .current_dir(root());
    cmd.run()
}

/// A seat that answers at once with `answer`; `n` tells apart seats that answer alike.
fn quick(answer: &str, n: usize) -> String {
    format!("echo '{answer}'{}", " ".repeat(n))
}

/// A seat that writes its pid and the pid of a process it sends out of its group (`setsid`) to
/// `pids`, then sleeps on `mark` and would break: the judge a decided panel must end.
fn slow(pids: &Path, mark: &str) -> String {
    format!(
        "setsid sleep {mark} & echo $! >> {p}; echo $$ >> {p}; sleep {mark}; echo '{BREAKS}'",
        p = pids.display()
    )
}

fn statuses(recs: &[Value]) -> Vec<&str> {
    recs.iter().map(|r| r["status"].as_str().unwrap()).collect()
}

#[test]
fn a_panel_decided_by_two_holds_ends_its_third_judge_and_everything_it_started() {
    let tmp = TempDir::new("early-stop");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    // The two quick judges answer only once the slow one runs: it is ended, not skipped.
    let wait = format!("while [ ! -s {} ]; do sleep 0.05; done; ", pids.display());
    let seats = [
        format!("{wait}{}", quick(HOLDS, 0)),
        format!("{wait}{}", quick(HOLDS, 1)),
        slow(&pids, &mark),
    ];
    let out = panel(tmp.path(), &seats, &["--agree", "2", "--stop-when-decided"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(recs.len(), 3, "a panel always has panelSize records");
    assert_eq!(statuses(&recs), ["ok", "ok", "cancelled"]);
    let cancelled = &recs[2];
    assert_eq!(cancelled["verdict"], Value::Null);
    assert_eq!(cancelled["attempts"], 1, "it was launched, then ended");
    assert_eq!(
        cancelled["cause"],
        "the panel was decided without it: 2 of 2 needed say holds"
    );
    assert_eq!(pids_in(&pids).len(), 2, "the slow judge ran");
    let left = marked(&mark);
    assert!(left.is_empty(), "{left:?} outlived the panel's decision");
    // Every record is kept in the run folder too.
    let kept = std::fs::read_to_string(tmp.path().join("run/verdicts.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 3);

    // panel-tally: the judge left out counts as missing, and decides nothing.
    let t = Tool::new("panel-tally")
        .args(["--agree", "2"])
        .stdin(&out.stdout)
        .run();
    assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
    let text = stdout(&t);
    assert!(
        text.contains("PANEL: holds, decided 2-0 with --agree 2; 1 judge not needed (cancelled)."),
        "{text}"
    );
    let j = Tool::new("panel-tally")
        .args(["--agree", "2", "--json"])
        .stdin(&out.stdout)
        .run();
    let v: Value = serde_json::from_str(stdout(&j).trim()).unwrap();
    assert_eq!(v["cancelled"], serde_json::json!([cancelled["judge"]]));
    assert_eq!(v["decidedEarly"], true);
    assert_eq!(v["passed"], true);
    crate::util::check_records("tally", stdout(&j).as_bytes());
}

#[test]
fn two_breaks_decide_a_fail_and_the_cause_says_a_pass_is_out_of_reach() {
    let tmp = TempDir::new("early-fail");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    let seats = [quick(BREAKS, 0), quick(BREAKS, 1), slow(&pids, &mark)];
    let out = panel(tmp.path(), &seats, &["--agree", "2", "--cascade"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(statuses(&recs), ["ok", "ok", "cancelled"]);
    assert_eq!(
        recs[2]["cause"],
        "the panel was decided without it: 2 say breaks; 2 holds are no longer possible"
    );
    assert_eq!(recs[2]["attempts"], 0, "a cascade never launched it");
    assert!(pids_in(&pids).is_empty(), "the third judge never started");
    let t = Tool::new("panel-tally")
        .args(["--agree", "2"])
        .stdin(&out.stdout)
        .run();
    assert_eq!(t.status.code(), Some(1), "{}", stdout(&t));
}

#[test]
fn a_cascade_asks_the_third_judge_only_when_the_first_two_split() {
    let tmp = TempDir::new("early-split");
    let seats = [quick(HOLDS, 0), quick(BREAKS, 1), quick(HOLDS, 2)];
    let out = panel(tmp.path(), &seats, &["--agree", "2", "--cascade"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(statuses(&recs), ["ok", "ok", "ok"]);
    let t = Tool::new("panel-tally")
        .args(["--agree", "2"])
        .stdin(&out.stdout)
        .run();
    assert_eq!(t.status.code(), Some(0), "{}", stdout(&t));
    assert!(!stdout(&t).contains("cancelled"), "{}", stdout(&t));
}

#[test]
fn without_stopping_every_judge_is_asked_whatever_the_first_answers_say() {
    let tmp = TempDir::new("early-all");
    let seats = [
        quick(HOLDS, 0),
        quick(HOLDS, 1),
        format!("sleep 1; echo '{BREAKS}'"),
    ];
    let out = panel(tmp.path(), &seats, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(statuses(&recs), ["ok", "ok", "ok"]);
    assert_eq!(
        recs[2]["verdict"], "breaks",
        "a split's reasons are the finding"
    );
}

#[test]
fn a_canary_is_never_cancelled() {
    let tmp = TempDir::new("early-canary");
    let seats = [
        quick(HOLDS, 0),
        quick(HOLDS, 1),
        format!("sleep 2; echo '{HOLDS}'"),
    ];
    let canary = format!("{}=holds", root().join("examples/answer.md").display());
    let out = panel(
        tmp.path(),
        &seats,
        &["--agree", "2", "--stop-when-decided", "--canary", &canary],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(recs.len(), 6, "three judges and a canary per seat");
    let canaries: Vec<&Value> = recs.iter().filter(|r| r["canary"].is_string()).collect();
    assert_eq!(canaries.len(), 3);
    for c in canaries {
        assert_eq!(c["status"], "ok", "{c}");
    }
}

#[test]
fn panel_tally_never_lets_a_cancelled_judge_decide_a_forged_stream() {
    let tmp = TempDir::new("early-forged");
    let seats = [quick(HOLDS, 0), quick(HOLDS, 1), quick(BREAKS, 2)];
    let out = panel(tmp.path(), &seats, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Two judges' records rewritten as cancelled: one holds is left, which decides nothing
    // under --agree 2 (the third could have held).
    let mut recs = out.records();
    for r in recs.iter_mut().skip(1) {
        r["status"] = "cancelled".into();
        r["verdict"] = Value::Null;
        r["cause"] = "the panel was decided without it: 2 of 2 needed say holds".into();
    }
    let stream: String = recs.iter().map(|r| format!("{r}\n")).collect();
    let t = Tool::new("panel-tally")
        .args(["--agree", "2"])
        .stdin(&stream)
        .run();
    assert_eq!(t.status.code(), Some(3), "no decision: {}", stdout(&t));
    let text = stdout(&t);
    assert!(text.contains("CANCELLED WITHOUT CAUSE: "), "{text}");
    let j = Tool::new("panel-tally")
        .args(["--agree", "2", "--json"])
        .stdin(&stream)
        .run();
    let v: Value = serde_json::from_str(stdout(&j).trim()).unwrap();
    assert_eq!(v["decidedEarly"], false);
    assert_eq!(v["decided"], false);
    // A cancelled judge that claims a verdict is refused outright.
    let mut lying = out.records();
    lying[2]["status"] = "cancelled".into();
    let stream: String = lying.iter().map(|r| format!("{r}\n")).collect();
    let t = Tool::new("panel-tally")
        .args(["--agree", "2"])
        .stdin(&stream)
        .run();
    assert_eq!(t.status.code(), Some(2), "{}", stderr(&t));
}

#[test]
fn the_ledger_counts_cancelled_judges_apart_and_says_what_stopping_saved() {
    let tmp = TempDir::new("early-ledger");
    let history = tmp.path().join("history.jsonl");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    let seats = [quick(HOLDS, 0), quick(HOLDS, 1), slow(&pids, &mark)];
    let mut cmd = Command::new(bin("panel-judge"));
    for s in &seats {
        cmd.args(["--seat", &format!("exec:{s}")]);
    }
    let out = cmd
        .args([
            "--lens",
            "a=Q?",
            "--allow-correlated",
            "--agree",
            "2",
            "--cascade",
        ])
        .args(["--history", history.to_str().unwrap()])
        .arg("examples/answer.md")
        .current_dir(root())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ledger = |args: &[&str]| {
        Command::new(bin("panel-tally"))
            .arg("--ledger")
            .args(args)
            .arg(&history)
            .checked_output()
            .unwrap()
    };
    // The first JSON record of `out` that `pick` picks.
    let record = |out: &Output, pick: &dyn Fn(&Value) -> bool| -> Option<Value> {
        stdout(out)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| pick(v))
    };
    let is_summary = |v: &Value| v["type"] == "ledger-summary";
    let l = ledger(&[]);
    assert_eq!(l.status.code(), Some(0), "{}", stderr(&l));
    let text = stdout(&l);
    assert!(
        text.contains("Stopped early: 1 judge(s) left out (cancelled), not abstentions"),
        "{text}"
    );
    let j = ledger(&["--json"]);
    let summary = record(&j, &is_summary).unwrap();
    assert_eq!(summary["stoppedEarly"]["cancelled"], 1);
    let slow_judge = record(&j, &|v| v["type"] == "judge-stats" && v["cancelled"] == 1)
        .expect("the judge left out, counted as cancelled");
    assert_eq!(slow_judge["abstained"], 0, "never an abstention");
    // At the default threshold the panel decided early is no decision, and says why; at the
    // --agree it ran under it passed, decided early.
    assert!(
        text.contains("Outcomes (every judge must hold): pass 0, fail 0, no decision 1"),
        "{text}"
    );
    assert!(
        text.contains("CANCELLED WITHOUT CAUSE: 1 panel(s)"),
        "{text}"
    );
    assert_eq!(summary["stoppedEarly"]["cancelledWithoutCause"], 1);
    let at2 = ledger(&["--agree", "2"]);
    assert_eq!(at2.status.code(), Some(0), "{}", stderr(&at2));
    let text = stdout(&at2);
    assert!(
        text.contains("Outcomes (--agree 2: 2 judges must hold, all of a smaller panel): pass 1, fail 0, no decision 0"),
        "{text}"
    );
    assert!(
        text.contains("1 panel(s) decided early without them, 0 not decided"),
        "{text}"
    );
    assert!(!text.contains("WITHOUT CAUSE"), "{text}");
    let summary = record(&ledger(&["--json", "--agree", "2"]), &is_summary).unwrap();
    assert_eq!(summary["agree"], 2);
    assert_eq!(summary["pass"], 1);
    assert_eq!(summary["stoppedEarly"]["decidedEarly"], 1);
    assert_eq!(summary["stoppedEarly"]["cancelledWithoutCause"], 0);
    let zero = ledger(&["--agree", "0"]);
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
}

#[test]
fn stopping_options_out_of_place_are_one_line_and_exit_2() {
    for args in [
        &["--agree", "2"][..],
        &["--cascade-order", "cost"],
        &["--agree", "0", "--cascade"],
        &["--agree", "4", "--stop-when-decided"],
        &["--contract", "pr", "--plan", "-", "--cascade"],
        &["--contract", "pr", "--plan", "-", "--agree", "1"],
    ] {
        let out = Command::new(bin("panel-judge"))
            .args(["--seat", "replay:examples/answers.json"])
            .args(args)
            .arg("examples/answer.md")
            .current_dir(root())
            .stdin(Stdio::null())
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}: nothing launched");
    }
}

#[test]
fn a_cascade_by_cost_asks_the_seat_the_history_finds_cheapest_first() {
    let tmp = TempDir::new("early-cost");
    let dear = quick(HOLDS, 0);
    let cheap = quick(HOLDS, 1);
    let history = tmp.path().join("history.jsonl");
    // Records as panel-judge --history keeps them.
    let line = |seat: &str, cost: f64| {
        serde_json::json!({"type": "verdict", "judge": "j", "lens": "l", "harness": "exec",
            "candidate": "sha256:1", "verdict": "holds", "seat": format!("exec:{seat}"),
            "status": "ok", "usage": {"costUsd": cost}})
        .to_string()
    };
    let text = [
        line(&dear, 0.50),
        line(&cheap, 0.01),
        line(&dear, 0.70),
        "a torn line".into(),
    ]
    .join("\n");
    std::fs::write(&history, text).unwrap();
    // Listed dearest first; one hold of two decides, so only the cheaper is asked.
    let seats = [dear, cheap];
    let out = panel(
        tmp.path(),
        &seats,
        &[
            "--agree",
            "1",
            "--cascade",
            "--cascade-order",
            "cost",
            "--history",
            history.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(statuses(&recs), ["ok", "cancelled"]);
    assert_eq!(recs[0]["seat"], format!("exec:{}", seats[1]));
    assert_eq!(recs[1]["seat"], format!("exec:{}", seats[0]));
}

#[test]
fn a_review_panel_stops_once_enough_reviewers_pass() {
    let tmp = TempDir::new("early-review");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    let pass = r#"{"decision":"pass","findings":[]}"#;
    let seats = [quick(pass, 0), quick(pass, 1), slow(&pids, &mark)];
    let out = panel(
        tmp.path(),
        &seats,
        &["--contract", "review", "--agree", "2", "--cascade"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(statuses(&recs), ["ok", "ok", "cancelled"]);
    assert_eq!(
        recs[2]["cause"],
        "the panel was decided without it: 2 of 2 needed say pass"
    );
    assert!(pids_in(&pids).is_empty());
    let t = Tool::new("panel-tally")
        .args(["--agree", "2"])
        .stdin(&out.stdout)
        .run();
    assert_eq!(t.status.code(), Some(0), "{}{}", stdout(&t), stderr(&t));
}
