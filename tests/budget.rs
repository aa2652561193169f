//! A budget for a whole run (`--budget-usd`, `--estimate`, `--prices`), through the stand-in
//! CLIs. Issue: "no judge is launched whose estimate would take spent + in flight past the
//! budget; those judges are recorded cancelled with the cause, and the panel is decided (or
//! not) without them"; "`--estimate` prints it and launches nothing".

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::tool::{Tool, records};
use crate::util::{Checked, TempDir, bin, root, stderr, stdout, with_standins};

/// panel-judge on claude:haiku stand-ins (answering `ok`, unless a test sets `STANDIN_MODE`)
/// about `args`, in `tmp`, keeping no history unless asked, its runs under `tmp/cache`.
fn judge(tmp: &Path, args: &[&str]) -> Tool {
    let mut tool = Tool::new("panel-judge");
    tool.env("STANDIN_MODE", "ok")
        .standins(&tmp.join("log"), &[]);
    if !args.contains(&"--history") {
        tool.arg("--no-history");
    }
    tool.args(["--seat", "claude:haiku"])
        .args(args)
        .env("XDG_CACHE_HOME", tmp.join("cache"))
        .env_remove("PANEL_BUDGET_USD")
        .env_remove("PANEL_BUDGET_FILE")
        .env_remove("PANEL_PRICES")
        .current_dir(root());
    tool
}

/// The stand-ins' calls, one a line of their log (none: no log written).
fn calls(tmp: &Path) -> usize {
    let log = tmp.join("log/calls.jsonl");
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

#[test]
fn a_run_past_its_budget_launches_only_what_fits_and_records_the_rest_cancelled() {
    let tmp = TempDir::new("budget-run");
    // One judge at a time: each estimated at about $0.00034 (claude-haiku-5-5, the row's
    // measured overhead, 500 output tokens), each reporting about $0.00012 spent (the
    // stand-in's figure for what it sent). The first fits; the second fits beside the first's
    // actual cost; the third would pass $0.0005.
    let out = judge(
        tmp.path(),
        &[
            "--jobs",
            "1",
            "--budget-usd",
            "0.0005",
            "examples/answer.md",
        ],
    )
    .run();
    assert!(out.status.success(), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(recs.len(), 3);
    let (ran, left): (Vec<&Value>, Vec<&Value>) =
        recs.iter().partition(|r| r["status"] != "cancelled");
    assert_eq!((ran.len(), left.len()), (2, 1), "{recs:?}");
    assert_eq!(calls(tmp.path()), 2, "only what fits is launched");
    let cause = left[0]["cause"].as_str().unwrap();
    assert!(
        cause.starts_with("not launched: over budget: its estimate $0.000344")
            && cause.contains(
                "with $0.000244 spent and $0.000000 in flight passes the budget of $0.0005"
            ),
        "{cause}"
    );
    assert_eq!(left[0]["attempts"], 0);
    assert!(left[0]["usage"]["estimateUsd"].as_f64().unwrap() > 0.0003);
    for r in &ran {
        assert_eq!(r["status"], "ok");
        let cost = r["usage"]["costUsd"].as_f64().unwrap();
        assert!(
            (0.00012..0.000125).contains(&cost),
            "the harness's own figure: {r}"
        );
        assert!(r["usage"]["estimateUsd"].as_f64().unwrap() > 0.0003, "{r}");
    }
    crate::util::check_records("verdict", &out.stdout);
    // Decided without it: two breaks fail a panel every judge must pass.
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    assert_eq!(t.status.code(), Some(1), "{}", stdout(&t));
    assert!(
        stdout(&t).contains(
            "PANEL: breaks, decided 2-0 with 3 of 3 needed; 1 judge not launched (over budget)."
        ),
        "{}",
        stdout(&t)
    );
    // The tally and the ledger set the estimate of the judges launched against their cost.
    assert!(
        stdout(&t).contains("COST: $0.000244 spent against $0.000688"),
        "{}",
        stdout(&t)
    );
    let ledger = crate::util::run_with_stdin(
        Command::new(bin("panel-tally")).args(["--ledger", "--json", "-"]),
        &out.stdout,
    );
    let seat = stdout(&ledger)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["type"] == "judge-stats" && r["scope"] == "seat")
        .unwrap();
    assert!(
        (seat["costUsd"].as_f64().unwrap() - 0.000244).abs() < 1e-9,
        "{seat}"
    );
    let est = seat["estimateUsd"].as_f64().unwrap();
    assert!((0.000688..0.000689).contains(&est), "{seat}");
    crate::util::check_records("judge-stats", &ledger.stdout);
}

#[test]
fn a_panel_the_budget_leaves_undecided_has_no_decision() {
    let tmp = TempDir::new("budget-undecided");
    let mut cmd = Command::new(bin("panel-judge"));
    with_standins(&mut cmd, &tmp.path().join("log"), &[]);
    let out = cmd
        .args(["--no-history", "--seat", "claude:haiku", "--jobs", "1"])
        .args(["--budget-usd", "0.0004", "examples/answer.md"])
        .env("STANDIN_MODE", "holds")
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env_remove("PANEL_BUDGET_FILE")
        .current_dir(root())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(calls(tmp.path()), 1);
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    // One holds of three needed: the answers in do not decide it.
    assert_eq!(t.status.code(), Some(3), "{}", stdout(&t));
    assert!(
        stdout(&t).contains("OVER BUDGET: edges, evidence: not launched"),
        "{}",
        stdout(&t)
    );
}

#[test]
fn an_estimate_launches_nothing() {
    let tmp = TempDir::new("budget-estimate");
    let out = judge(
        tmp.path(),
        &[
            "--estimate",
            "--json",
            "--budget-usd",
            "0.0009",
            "examples/answer.md",
        ],
    )
    .run();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(calls(tmp.path()), 0, "the stand-ins' call log is empty");
    assert!(
        !tmp.path().join("cache/panel/runs").exists(),
        "no run folder"
    );
    let est: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let judges = est["judges"].as_array().unwrap();
    assert_eq!(judges.len(), 3);
    let fits: Vec<bool> = judges
        .iter()
        .map(|j| j["fits"].as_bool().unwrap())
        .collect();
    assert_eq!(fits, [true, true, false]);
    assert_eq!(judges[0]["model"], "claude-haiku-5-5");
    assert_eq!(judges[0]["outputTokens"], 500, "no history: the default");
    assert_eq!(est["budgetUsd"], 0.0009);
    // The table says the same, and so does the history's answer length when there is one.
    let out = judge(
        tmp.path(),
        &[
            "--estimate",
            "--history",
            "examples/history.jsonl",
            "examples/answer.md",
        ],
    )
    .run();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(calls(tmp.path()), 0);
    let text = stdout(&out);
    assert!(text.starts_with("JUDGE"), "{text}");
    assert!(text.contains("claude-haiku-5-5"), "{text}");
    assert!(
        text.contains("  116  "),
        "the history's median answer: {text}"
    );
    assert!(text.ends_with("for 3 judges\n"), "{text}");
}

/// Every estimate of a run on the shipped examples is within a quarter of the tokens the
/// stand-in reported for that judge (what claude sends with panel's row: the prompt and 2,769
/// bytes of its own; 40 output tokens).
#[test]
fn estimates_are_within_a_quarter_of_the_standins_usage_on_the_shipped_examples() {
    // The verdict example only: claude's stand-in gives the pairwise contract no preference
    // (unreadable, asked again), so that run's tokens are not one call's.
    for (args, mode) in [(&["examples/answer.md"][..], "ok")] {
        let tmp = TempDir::new("budget-near");
        // The run first, into a history of its own; then the estimate, which reads the
        // seat's typical answer from that history, as a user's second run would.
        let history = tmp.path().join("history.jsonl");
        let mut run = vec!["--history", history.to_str().unwrap()];
        run.extend(args);
        let out = judge(tmp.path(), &run).env("STANDIN_MODE", mode).run();
        assert!(out.status.success(), "{}", stderr(&out));
        let mut est = vec!["--estimate", "--json"];
        est.extend(&run);
        let estimated = judge(tmp.path(), &est).run();
        assert!(estimated.status.success(), "{}", stderr(&estimated));
        let est: Value = serde_json::from_str(stdout(&estimated).trim()).unwrap();
        let recs = out.records();
        assert!(!recs.is_empty());
        for rec in &recs {
            let name = rec["judge"].as_str().unwrap();
            // A pairwise judge is asked once in each order (`NAME.ab`, `NAME.ba`): its record
            // sums both.
            let guessed: f64 = est["judges"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|j| {
                    let j = j["judge"].as_str().unwrap();
                    j == name || j.strip_prefix(name).is_some_and(|o| o.starts_with('.'))
                })
                .map(|j| j["inputTokens"].as_f64().unwrap() + j["outputTokens"].as_f64().unwrap())
                .sum();
            let used = rec["usage"]["inputTokens"].as_f64().unwrap()
                + rec["usage"]["outputTokens"].as_f64().unwrap();
            let off = (guessed - used).abs() / used;
            assert!(off <= 0.25, "{args:?}: {name}: {guessed} for {used}");
        }
    }
}

#[test]
fn bad_budgets_and_price_files_are_one_line_and_exit_2() {
    let tmp = TempDir::new("budget-bad");
    let write = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let negative = write(
        "neg.json",
        r#"{"models":{"m":{"input":-1,"cacheRead":0,"output":0,"date":"2026-01-01","source":"x"}}}"#,
    );
    let malformed = write("bad.json", "{\"models\": [");
    let unknown = write(
        "unknown.json",
        r#"{"families":{"anthropic":"claude-nine"}}"#,
    );
    let cases: [(&[&str], &str); 5] = [
        (
            &["--budget-usd", "-1"],
            "--budget-usd \"-1\": a budget is a number of USD above 0",
        ),
        (
            &["--budget-usd", "NaN"],
            "--budget-usd \"NaN\": a budget is a number of USD above 0",
        ),
        (
            &["--estimate", "--prices", &negative],
            "input -1 is not a price",
        ),
        (&["--estimate", "--prices", &malformed], "not a price table"),
        (
            &["--estimate", "--prices", &unknown],
            "names the unknown model \"claude-nine\"",
        ),
    ];
    for (args, says) in cases {
        let mut all = args.to_vec();
        all.push("examples/answer.md");
        let out = judge(tmp.path(), &all).run();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(calls(tmp.path()), 0);
}

#[test]
fn a_shared_budget_file_holds_many_runs_to_one_budget() {
    let tmp = TempDir::new("budget-shared");
    let file = tmp.path().join("budget.json");
    let run = || {
        let mut cmd = Command::new(bin("panel-judge"));
        with_standins(&mut cmd, &tmp.path().join("log"), &[]);
        cmd.args(["--no-history", "--seat", "claude:haiku", "--jobs", "1"])
            .args(["--lens", "a=Q?", "examples/answer.md"])
            .env("PANEL_BUDGET_USD", "0.0005")
            .env("PANEL_BUDGET_FILE", &file)
            .env("XDG_CACHE_HOME", tmp.path().join("cache"))
            .current_dir(root())
            .stdin(Stdio::null())
            .checked_output()
            .unwrap()
    };
    let statuses: Vec<String> = (0..3)
        .map(|_| {
            let out = run();
            assert!(out.status.success(), "{}", stderr(&out));
            records(&out)[0]["status"].as_str().unwrap().to_string()
        })
        .collect();
    // About $0.000119 each, estimated at $0.00035: the third run finds $0.000238 spent.
    assert_eq!(statuses, ["ok", "ok", "cancelled"]);
    let sums: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(sums["inFlight"], 0.0);
    assert!(
        (sums["spent"].as_f64().unwrap() - 0.000238).abs() < 1e-9,
        "{sums}"
    );
}

/// panel-vote takes the same budget: its estimate prices each voter's question (a price file
/// overlaid for a model the shipped table lacks) and launches nothing.
#[test]
fn panel_vote_estimates_its_voters_and_launches_nothing() {
    let tmp = TempDir::new("budget-vote");
    let merged = Command::new(bin("panel-merge"))
        .arg("examples/markdown/reviews.jsonl")
        .current_dir(root())
        .checked_output()
        .unwrap();
    assert!(merged.status.success(), "{}", stderr(&merged));
    let prices = tmp.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"models":{"gemini-2.5-pro":{"input":1.25,"cacheRead":0.125,"output":10,"date":"2026-12-03","source":"this test"}}}"#,
    )
    .unwrap();
    let mut cmd = Command::new(bin("panel-vote"));
    with_standins(&mut cmd, &tmp.path().join("log"), &[]);
    cmd.args(["--estimate", "--json", "--budget-usd", "0.01"])
        .args(["--prices", prices.to_str().unwrap()])
        .args([
            "--seat",
            "claude:claude-sonnet-4-5",
            "--seat",
            "codex:gpt-5.6-luna",
        ])
        .args(["--seat", "opencode:google/gemini-2.5-pro"])
        .args(["--candidate", "examples/review-battery/page.md"])
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env_remove("PANEL_BUDGET_FILE")
        .current_dir(root());
    let out = crate::util::run_with_stdin(&mut cmd, &merged.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(calls(tmp.path()), 0);
    let est: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let seen: Vec<(&str, &str, bool)> = est["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["judge"].as_str().unwrap(),
                j["model"].as_str().unwrap(),
                j["fits"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("vote-write-1", "claude-sonnet-4-5", false),
            ("vote-write-2", "gpt-5.6-luna", true),
            ("vote-write-3", "gemini-2.5-pro", true),
        ]
    );
}

/// panel-fleet holds every panel to one budget: here through OUT/budget.json.
#[test]
fn a_fleet_spends_one_budget_across_its_panels() {
    crate::util::need("parallel");
    let tmp = TempDir::new("budget-fleet");
    let mut cands = Vec::new();
    for n in 1..=3 {
        let c = tmp.path().join(format!("c{n}.md"));
        let text = std::fs::read_to_string(root().join("examples/answer.md")).unwrap();
        std::fs::write(&c, format!("{text}\nversion {n}\n")).unwrap();
        cands.push(c.to_str().unwrap().to_string());
    }
    let mut cmd = Command::new(root().join("bin/panel-fleet"));
    let bins = bin("panel-judge").parent().unwrap().to_path_buf();
    with_standins(&mut cmd, &tmp.path().join("log"), &[bins]);
    let out = cmd
        .args([
            "--no-progress",
            "-o",
            tmp.path().join("out").to_str().unwrap(),
            "-j",
            "1",
        ])
        .args(&cands)
        .args([
            "--",
            "--budget-usd",
            "0.0005",
            "--seat",
            "claude:haiku",
            "--lens",
            "a=Q?",
        ])
        .args(["--no-history", "--jobs", "1"])
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env_remove("PANEL_BUDGET_FILE")
        .env_remove("PANEL_BUDGET_USD")
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    // Two panels decided (they fail: the stand-in says breaks), the third left undecided.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains(r#""panels":3,"passed":0,"failed":2,"undecided":1"#));
    assert_eq!(calls(tmp.path()), 2);
    let sums = std::fs::read_to_string(tmp.path().join("out/budget.json")).unwrap();
    assert_eq!(sums, r#"{"spent":0.000238,"inFlight":0.0}"#);
}

/// panel-judge on one claude:haiku lens, in `tmp`, with `env` set; a run that has not ended
/// within a minute is killed and fails the test (a budget file or a price file that is read
/// without end).
fn judge_bounded(tmp: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Output {
    let mut tool = Tool::new("panel-judge");
    tool.standins(&tmp.join("log"), &[])
        .args(["--no-history", "--seat", "claude:haiku", "--lens", "a=Q?"])
        .args(args)
        .arg("examples/answer.md")
        .env("XDG_CACHE_HOME", tmp.join("cache"))
        .env_remove("PANEL_BUDGET_USD")
        .env_remove("PANEL_BUDGET_FILE")
        .env_remove("PANEL_PRICES")
        .envs(env.iter().copied())
        .current_dir(root());
    let child = tool
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("panel-judge {args:?} did not end within a minute");
        }
    }
}

/// Issue 47: "A budget file that is a symlink or a FIFO cancels every judge and exits 0." A
/// budget file that is not a regular file (a link, never followed; a FIFO, never waited on; a
/// folder) is one line and exit 2 before any judge starts, and what a link points to is
/// untouched.
#[test]
fn a_budget_file_that_is_not_a_regular_file_is_one_line_and_exit_2() {
    let tmp = TempDir::new("budget-link");
    let target = tmp.path().join("precious");
    // Empty: a budget file followed through the link would be written there.
    std::fs::write(&target, "").unwrap();
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = tmp.path().join("fifo.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let folder = tmp.path().join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    for (file, says) in [
        (&link, "a symbolic link, never followed"),
        (&fifo, "a FIFO: a budget file is a regular file"),
        (&folder, "a folder: a budget file is a regular file"),
    ] {
        let out = judge_bounded(
            tmp.path(),
            &["--budget-usd", "1"],
            &[("PANEL_BUDGET_FILE", file.as_os_str())],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{file:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let want = format!("panel-judge: PANEL_BUDGET_FILE {}: {says}", file.display());
        assert_eq!(err.trim_end(), want);
        assert_eq!(stdout(&out), "", "no judge recorded");
    }
    assert_eq!(calls(tmp.path()), 0);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

/// Issue 47: a budget file that holds no budget's sums (`null`, a negative sum, text) is one
/// line and exit 2, and is left as the user had it.
#[test]
fn a_budget_file_that_holds_no_sums_is_one_line_and_exit_2_and_kept() {
    let tmp = TempDir::new("budget-garbage");
    let file = tmp.path().join("budget.json");
    for (text, says) in [
        (r#"{"spent":null,"inFlight":0.0}"#, "invalid type: null"),
        (r#"{"spent":-5,"inFlight":0.0}"#, "spent -5"),
        ("so far so good", "not a budget's sums"),
    ] {
        std::fs::write(&file, text).unwrap();
        let out = judge_bounded(
            tmp.path(),
            &["--budget-usd", "1"],
            &[("PANEL_BUDGET_FILE", file.as_os_str())],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(says) && err.contains("PANEL_BUDGET_FILE"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
    assert_eq!(calls(tmp.path()), 0);
}

/// Issue 47: "`--prices /dev/zero` reads a gigabyte before failing." A file the user names is
/// read to its bound and no further: one line, exit 2, naming the file and the bound.
#[test]
fn a_price_or_harness_file_without_end_is_refused_at_its_bound() {
    let tmp = TempDir::new("budget-zero");
    for (args, says) in [
        (
            &["--estimate", "--prices", "/dev/zero"][..],
            "panel-judge: --prices /dev/zero: larger than 4 MiB, the most read",
        ),
        (
            &["--budget-usd", "1", "--prices", "/dev/zero"][..],
            "panel-judge: --prices /dev/zero: larger than 4 MiB, the most read",
        ),
        (
            &["--harness-file", "/dev/zero"][..],
            "panel-judge: /dev/zero: larger than 4 MiB, the most read",
        ),
        (
            &["--lenses", "/dev/zero"][..],
            "panel-judge: --lenses /dev/zero: larger than 4 MiB, the most read",
        ),
    ] {
        let started = std::time::Instant::now();
        let out = judge_bounded(tmp.path(), args, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end(), says, "{args:?}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{args:?}: {:?}",
            started.elapsed()
        );
    }
    // A reviewers' brief is read to a candidate's bound.
    let mut brief = Command::new(bin("panel-judge"));
    with_standins(&mut brief, &tmp.path().join("log"), &[]);
    let out = brief
        .args([
            "--no-history",
            "--seat",
            "claude:haiku",
            "--contract",
            "review",
        ])
        .args(["--brief", "/dev/zero", "examples/answer.md"])
        .current_dir(root())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        "panel-judge: --brief /dev/zero: larger than 64 MiB, the most read"
    );
    // PANEL_PRICES is read the same way.
    let out = judge_bounded(
        tmp.path(),
        &["--estimate"],
        &[("PANEL_PRICES", std::ffi::OsStr::new("/dev/zero"))],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("larger than 4 MiB"),
        "{}",
        stderr(&out)
    );
    assert_eq!(calls(tmp.path()), 0);
}

/// A claude transcript of one answer whose CLI says it cost `cost` USD for 1 + 1 tokens, in
/// `tmp/answers` (which the judges are let read: `--sandbox-read`).
fn costly(tmp: &Path, cost: &str) -> String {
    std::fs::create_dir_all(tmp.join("answers")).unwrap();
    let file = tmp.join(format!("answers/costly-{cost}.json"));
    std::fs::write(
        &file,
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"result":"","structured_output":{{"verdict":"breaks","reason":"r","confidence":0.9}},"total_cost_usd":{cost},"usage":{{"input_tokens":1,"output_tokens":1}}}}"#
        ),
    )
    .unwrap();
    format!("transcript:{}", file.display())
}

/// Issue 47: "Two judges that report `total_cost_usd` 1e308 for 1+1 tokens leave a shared
/// `PANEL_BUDGET_FILE` at `{"spent": null}`, every later run sharing it is refused, and the
/// ledger shows `$inf`." As the attacker: two runs whose judge says 1e308, a third run on the
/// same file, and the ledger of all three.
#[test]
fn a_judge_that_reports_an_absurd_cost_cannot_spend_a_shared_budget() {
    let tmp = TempDir::new("budget-absurd");
    let file = tmp.path().join("budget.json");
    let answers = tmp.path().join("answers");
    let read = ["--sandbox-read", answers.to_str().unwrap()];
    let run = |mode: &str| {
        let out = judge(
            tmp.path(),
            &[
                &read[..],
                &[
                    "--lens",
                    "a=Q?",
                    "--budget-usd",
                    "0.01",
                    "examples/answer.md",
                ],
            ]
            .concat(),
        )
        .env("STANDIN_MODE", mode)
        .env("PANEL_BUDGET_FILE", &file)
        .run();
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    let absurd = costly(tmp.path(), "1e308");
    costly(tmp.path(), "-1");
    let mut stream = Vec::new();
    for _ in 0..2 {
        let out = run(&absurd);
        let rec = &out.records()[0];
        assert_eq!(rec["status"], "ok", "{rec}");
        // Its tokens priced (Haiku 5.5: $0.10 in, $0.50 out a million), and why.
        let usage = &rec["usage"];
        assert_eq!(usage["costUsd"], 0.0000006, "{rec}");
        let note = usage["costNote"].as_str().unwrap();
        assert!(
            note.starts_with("the reported cost 1e308 USD was not taken: more than 10 times")
                && note.ends_with("its tokens priced instead"),
            "{note}"
        );
        stream.extend(&out.stdout);
    }
    let sums: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        (sums["spent"].as_f64().unwrap() - 0.0000012).abs() < 1e-12,
        "{sums}"
    );
    // A third run on the same file is let in.
    let out = run("ok");
    let rec = &out.records()[0];
    assert_eq!(rec["status"], "ok", "{rec}");
    assert!(rec["usage"].get("costNote").is_none(), "{rec}");
    stream.extend(&out.stdout);
    let sums: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(sums["spent"].as_f64().unwrap().is_finite(), "{sums}");
    // The ledger counts what was taken: no `inf` anywhere.
    for args in [&["--ledger", "-"][..], &["--ledger", "--json", "-"]] {
        let ledger =
            crate::util::run_with_stdin(Command::new(bin("panel-tally")).args(args), &stream);
        assert!(ledger.status.success(), "{}", stderr(&ledger));
        let text = stdout(&ledger);
        assert!(!text.contains("inf"), "{text}");
        assert!(
            text.contains("$0.00") || text.contains("\"costUsd\":0.0001"),
            "{text}"
        );
    }
    // Without a budget the record takes the same rule: NaN cannot be written, a negative cost
    // and 1e308 are not taken.
    for cost in ["1e308", "-1"] {
        let args = [&read[..], &["--lens", "a=Q?", "examples/answer.md"]].concat();
        let out = judge(tmp.path(), &args)
            .env("STANDIN_MODE", costly(tmp.path(), cost))
            .run();
        let rec = &out.records()[0];
        assert_eq!(rec["usage"]["costUsd"], 0.0000006, "{rec}");
        assert!(rec["usage"]["costNote"].is_string(), "{rec}");
    }
}
/// Issue 45: "One unpriced model stops the estimate and the budget: `--estimate --seat
/// codex:gpt-5.4` exits 2 … instead of pricing the rest and marking that seat unknown." An
/// estimate shows it unknown and prices the rest (exit 0); a budget names it once and leaves its
/// judges out, each cancelled with why, and launches the rest.
#[test]
fn an_unpriced_seat_is_unknown_and_the_rest_are_priced_and_launched() {
    let tmp = TempDir::new("budget-unpriced");
    let seats = [
        "--seat",
        "claude:zzz",
        "--allow-correlated",
        "--lens",
        "a=Q?",
    ];
    let mut args = seats.to_vec();
    args.extend(["--estimate", "examples/answer.md"]);
    let out = judge(tmp.path(), &args).run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = stdout(&out);
    let unknown = table.lines().find(|l| l.contains("claude:zzz")).unwrap();
    assert!(unknown.contains("unknown"), "{table}");
    let priced = table.lines().find(|l| l.contains("claude:haiku")).unwrap();
    assert!(priced.contains("claude-haiku"), "{table}");
    assert!(
        table.contains("total $0.00") && table.contains(" (1 priced)"),
        "{table}"
    );
    assert!(
        table.contains("unknown: --seat claude:zzz: no price for the model \"zzz\""),
        "{table}"
    );
    let mut args = seats.to_vec();
    args.extend(["--estimate", "--json", "examples/answer.md"]);
    let rec: Value = serde_json::from_str(&stdout(&judge(tmp.path(), &args).run())).unwrap();
    let zzz = rec["judges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["seat"] == "claude:zzz")
        .unwrap();
    assert_eq!(
        (&zzz["usd"], &zzz["model"]),
        (&Value::Null, &Value::Null),
        "{rec}"
    );
    let mut args = seats.to_vec();
    args.extend(["--budget-usd", "5", "examples/answer.md"]);
    let out = judge(tmp.path(), &args).run();
    let recs = out.records();
    let by = |seat: &str| recs.iter().find(|r| r["seat"] == seat).unwrap().clone();
    assert_eq!(by("claude:haiku")["status"], "ok", "{recs:?}");
    let left = by("claude:zzz");
    assert_eq!(left["status"], "cancelled", "{left}");
    assert!(
        left["cause"]
            .as_str()
            .unwrap()
            .contains("no price for the model \"zzz\""),
        "{left}"
    );
    let err = stderr(&out);
    assert_eq!(err.matches("no price for the model").count(), 1, "{err}");
    assert_eq!(calls(tmp.path()), 1);
}

/// A codex judge with an API key (`CODEX_API_KEY`) or with `LOGIN` (a ChatGPT login's file),
/// `--tier TIER`, under a budget: its record and the argv its CLI got.
fn codex_at(tier: &str, chatgpt: bool) -> (Value, Vec<String>) {
    let tmp = TempDir::new("tier");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let mut cmd = Command::new(bin("panel-judge"));
    with_standins(&mut cmd, &tmp.path().join("log"), &[]);
    // codex's login is the user's own here: an API key, or a ChatGPT login's file.
    let elsewhere = crate::util::STANDIN_ROWS.replace("codex,", "");
    cmd.env("PANEL_LOGIN_ELSEWHERE", elsewhere)
        .env("HOME", &home);
    match chatgpt {
        true => {
            let jwt = "eyJhbGciOiJub25lIn0.eyJleHAiOjQxMDI0NDQ4MDB9.c2ln";
            let auth = serde_json::json!({"tokens": {"access_token": jwt, "refresh_token": "r", "id_token": jwt}, "last_refresh": "2026-12-06T00:00:00Z"});
            std::fs::write(home.join(".codex/auth.json"), auth.to_string()).unwrap();
            cmd.env_remove("CODEX_API_KEY");
        }
        false => {
            cmd.env("CODEX_API_KEY", "sk-panel-test-key");
        }
    }
    let out = cmd
        .args([
            "--no-history",
            "--seat",
            "codex:gpt-5.6-sol",
            "--lens",
            "a=Q?",
        ])
        .args(["--tier", tier, "--budget-usd", "1", "--sandbox", "off"])
        .arg("examples/answer.md")
        .env_remove("OPENAI_API_KEY")
        .env_remove("PANEL_BUDGET_FILE")
        .env_remove("PANEL_PRICES")
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .current_dir(root())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    let recs = records(&out);
    assert_eq!(recs.len(), 1, "{}", stderr(&out));
    let log = std::fs::read_to_string(tmp.path().join("log/calls.jsonl")).unwrap();
    let call: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    let argv = call["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    (recs[0].clone(), argv)
}

/// Issue 47: "`--tier flex` for seats whose provider has a flex tier (codex with an API key:
/// `service_tier="flex"`), priced at its half and recorded"; a login without one (ChatGPT)
/// runs at the standard tier, and says nothing of flex.
#[test]
fn flex_is_asked_where_the_login_offers_it_priced_at_half_and_recorded() {
    let flex_arg = "service_tier=\"flex\"".to_string();
    let (standard, argv) = codex_at("standard", false);
    assert!(!argv.contains(&flex_arg), "{argv:?}");
    assert_eq!(standard["status"], "ok", "{standard}");
    assert!(standard["usage"].get("tier").is_none(), "{standard}");
    let (flex, argv) = codex_at("flex", false);
    assert!(
        argv.windows(2).any(|w| w[0] == "-c" && w[1] == flex_arg),
        "{argv:?}"
    );
    assert_eq!(flex["usage"]["tier"], "flex", "{flex}");
    let cost = |r: &Value| r["usage"]["costUsd"].as_f64().unwrap();
    assert_eq!(
        flex["usage"]["inputTokens"],
        standard["usage"]["inputTokens"]
    );
    assert!(
        (cost(&flex) * 2.0 - cost(&standard)).abs() < 1e-9,
        "{flex} {standard}"
    );
    let (chatgpt, argv) = codex_at("flex", true);
    assert!(!argv.contains(&flex_arg), "{argv:?}");
    assert_eq!(chatgpt["status"], "ok", "{chatgpt}");
    assert!(chatgpt["usage"].get("tier").is_none(), "{chatgpt}");
}
