//! The history every verdict record is appended to, and canaries: seats asked beside the panel
//! about a candidate whose answer is known.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::Rig;
use crate::tool::{Ran, Tool, records};
use crate::util::{TempDir, bin, root, stderr, stdout};

/// An `exec:` seat that answers holds with a reason of `size` bytes, after reading the prompt.
fn holds_seat(size: usize) -> String {
    format!(
        "exec:cat >/dev/null; r=$(head -c {size} /dev/zero | tr '\\0' x); printf '{{\"verdict\":\"holds\",\"reason\":\"%s\",\"confidence\":0.5}}' \"$r\""
    )
}

/// panel-judge with one `exec:` seat and the three default lenses, about examples/answer.md.
fn judge(seat: &str, args: &[&str]) -> Tool {
    let mut tool = Tool::new("panel-judge");
    tool.args(["--seat", seat, "--family", &format!("{seat}=test")])
        .args(args)
        .arg(root().join("examples/answer.md"));
    tool
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: a torn line? {l:.200}")))
        .collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn concurrent_panels_append_whole_lines_to_one_history() {
    let tmp = TempDir::new("history-concurrent");
    let history = tmp.path().join("h/history.jsonl");
    // Records of about 64 KiB each: far more than one write of a pipe or a page.
    let seat = holds_seat(64 * 1024);
    let children: Vec<_> = (0..8)
        .map(|_| {
            judge(&seat, &["--history", history.to_str().unwrap()])
                .command()
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut printed = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(!stderr(&out).contains("history"), "{}", stderr(&out));
        printed.extend(records(&out));
    }
    let kept = lines(&history);
    assert_eq!(kept.len(), 24);
    // Every record printed is kept, once; each run's three judges are there.
    let key = |r: &Value| format!("{} {}", r["run"], r["judge"]);
    let mut a: Vec<String> = printed.iter().map(key).collect();
    let mut b: Vec<String> = kept.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let mut runs: Vec<&str> = kept.iter().map(|r| r["run"].as_str().unwrap()).collect();
    runs.sort();
    runs.dedup();
    assert_eq!(runs.len(), 8);
    assert!(
        kept.iter()
            .all(|r| r["type"] == "verdict" && r["reason"].as_str().unwrap().len() == 64 * 1024)
    );
    assert_eq!(mode(&history), 0o600);
    assert_eq!(mode(history.parent().unwrap()), 0o700);
}

#[test]
fn a_symbolic_link_at_the_history_is_refused_and_the_answers_kept() {
    let tmp = TempDir::new("history-link");
    let target = tmp.path().join("secret");
    std::fs::write(&target, "untouched\n").unwrap();
    let link = tmp.path().join("history.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = judge(&holds_seat(10), &["--history", link.to_str().unwrap()]).run();
    // The panel's answers are not lost, and the status says what the panel said.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.records().len(), 3);
    let err = stderr(&out);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("history"))
        .collect::<Vec<_>>();
    assert_eq!(said.len(), 1, "{}", stderr(&out));
    assert!(
        said[0].starts_with("panel-judge: history: ") && said[0].contains("symbolic link"),
        "{}",
        said[0]
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched\n");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn the_default_history_honours_xdg_state_home_and_can_be_turned_off() {
    let tmp = TempDir::new("history-xdg");
    let state = tmp.path().join("state");
    let home = tmp.path().join("home");
    let run = |env: &[(&str, &Path)], args: &[&str], off: Option<&str>| -> Ran {
        let mut cmd = judge(&holds_seat(10), args);
        cmd.env_remove("XDG_STATE_HOME").env_remove("PANEL_HISTORY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(v) = off {
            cmd.env("PANEL_HISTORY", v);
        }
        let out = cmd.run();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(!stderr(&out).contains("history"), "{}", stderr(&out));
        out
    };
    let default = state.join("panel/history.jsonl");
    // --no-history and PANEL_HISTORY=off keep nothing.
    run(
        &[("XDG_STATE_HOME", &state), ("HOME", &home)],
        &["--no-history"],
        None,
    );
    run(
        &[("XDG_STATE_HOME", &state), ("HOME", &home)],
        &[],
        Some("off"),
    );
    assert!(!state.exists() && !home.exists());
    let out = run(&[("XDG_STATE_HOME", &state), ("HOME", &home)], &[], None);
    assert_eq!(lines(&default), records(&out));
    assert_eq!(mode(&default), 0o600);
    assert_eq!(mode(&state.join("panel")), 0o700);
    // A second run appends.
    run(&[("XDG_STATE_HOME", &state), ("HOME", &home)], &[], None);
    assert_eq!(lines(&default).len(), 6);
    assert!(!home.exists());
    // A relative XDG_STATE_HOME is not a base directory: HOME's .local/state is used.
    run(
        &[("XDG_STATE_HOME", Path::new("rel")), ("HOME", &home)],
        &[],
        None,
    );
    assert_eq!(
        lines(&home.join(".local/state/panel/history.jsonl")).len(),
        3
    );
    // PANEL_HISTORY names the file.
    let named = tmp.path().join("named.jsonl");
    run(&[("HOME", &home)], &[], Some(named.to_str().unwrap()));
    assert_eq!(lines(&named).len(), 3);
}

#[test]
fn review_records_keep_no_history() {
    let tmp = TempDir::new("history-review");
    let history = tmp.path().join("history.jsonl");
    let out = judge(
        "exec:cat >/dev/null; echo '{\"decision\":\"pass\",\"findings\":[]}'",
        &[
            "--contract",
            "review",
            "--history",
            history.to_str().unwrap(),
        ],
    )
    .run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.records()[0]["type"], "review");
    assert!(!history.exists());
}

/// A canary: a candidate with a mark the stand-ins' rules answer to.
const MARK: &str = "CANARY-MARK-7f3a";

fn canary_file(tmp: &TempDir) -> PathBuf {
    // An `=` in the file's name: the argument splits at the last one.
    let path = tmp.path().join("known=bad.md");
    std::fs::write(&path, format!("{MARK}: 2 + 2 = 5, always.\n")).unwrap();
    path
}

/// An `exec:` seat that always holds, and takes a second longer over the canary than over the
/// candidate: its canary record comes after every record of the panel's judges but one.
fn slow_canary_seat() -> String {
    format!(
        "exec:p=$(cat); case $p in *{MARK}*) sleep 1;; esac; echo '{{\"verdict\":\"holds\",\"reason\":\"r\",\"confidence\":0.5}}'"
    )
}

/// A panel of one lens on two seats, the claude stand-in (which answers the canary as
/// `canary_mode` says, everything else holds) and an `exec:` seat that always holds, with one
/// canary known to break.
fn canary_panel(rig: &Rig, canary_mode: &str) -> (Ran, PathBuf) {
    canary_panel_about(rig, canary_mode, &root().join("examples/answer.md"))
}

fn canary_panel_about(rig: &Rig, canary_mode: &str, candidate: &Path) -> (Ran, PathBuf) {
    let canary = canary_file(&rig.tmp);
    let history = rig.tmp.path().join("history.jsonl");
    let spec = format!("{}=breaks", canary.display());
    let exec = slow_canary_seat();
    let mut cmd = Tool::new("panel-judge");
    cmd.standins(&rig.log(), &[])
        .args([
            "--seat",
            "claude:haiku",
            "--seat",
            &exec,
            "--family",
            &format!("{exec}=test"),
            "--lens",
            "a=Does it hold?",
            "--canary",
            &spec,
            "--history",
            history.to_str().unwrap(),
        ])
        .arg(candidate)
        .env("HOME", rig.user_home())
        .env("STANDIN_VERDICT", "holds")
        .env("STANDIN_RULES", format!("{MARK}=>{canary_mode}"));
    let out = cmd.run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (out, history)
}

#[test]
fn a_seat_that_answers_its_canary_rightly_is_reported_as_a_hit() {
    let rig = Rig::new("canary-hit");
    let (out, history) = canary_panel(&rig, "breaks");
    let recs = records(&out);
    assert_eq!(recs.len(), 4, "{}", stdout(&out));
    let canary_seal = panel::internals::seal(&std::fs::read(canary_file(&rig.tmp)).unwrap());
    let canaries: Vec<&Value> = recs.iter().filter(|r| r.get("canary").is_some()).collect();
    assert_eq!(canaries.len(), 2);
    for c in &canaries {
        assert_eq!(c["canary"], "breaks");
        assert_eq!(c["candidate"], canary_seal.as_str());
        // The panel's first lens, the seat's own sandbox.
        assert_eq!(c["lens"], "a");
        assert!(c["judge"].as_str().unwrap().starts_with("canary-1@"));
        assert!(c["sandbox"].is_string());
    }
    let claude = canaries
        .iter()
        .find(|c| c["seat"] == "claude:haiku")
        .unwrap();
    assert_eq!(claude["verdict"], "breaks");
    // The real judges never saw the canary, and the canary judge never saw the candidate.
    assert!(
        recs.iter()
            .filter(|r| r.get("canary").is_none())
            .all(|r| r["verdict"] == "holds")
    );
    // The canary is kept in the run folder, and its records in the history.
    let run = Path::new(recs[0]["run"].as_str().unwrap());
    assert!(
        std::fs::read_to_string(run.join("canary-1.candidate"))
            .unwrap()
            .contains(MARK)
    );
    assert!(
        run.join(claude["judge"].as_str().unwrap())
            .join("record.json")
            .exists()
    );
    let kept = lines(&history);
    assert_eq!(kept.len(), 4);
    assert_eq!(kept.iter().filter(|r| r["canary"] == "breaks").count(), 2);
    // The tally counts the panel only: two holds; the canaries about another candidate are
    // reported, never counted, and never refused as a second candidate.
    let t = Tool::new("panel-tally")
        .args(["--json"])
        .stdin(&out.stdout)
        .run();
    assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
    let t: Value = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(t["counts"]["holds"], 2);
    assert_eq!(t["counts"]["judges"], 2);
    let hit = t["canaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["seat"] == "claude:haiku")
        .unwrap();
    assert_eq!(hit["hit"], true);
    assert_eq!(hit["canary"], "breaks");
    assert_eq!(hit["verdict"], "breaks");
}

#[test]
fn a_seat_that_misses_its_canary_is_reported_and_with_require_canaries_does_not_count() {
    let rig = Rig::new("canary-miss");
    let (out, _) = canary_panel(&rig, "holds");
    let exec = slow_canary_seat();
    // Without --require-canaries the panel passes, and the misses are reported.
    let t = Tool::new("panel-tally").stdin(&out.stdout).run();
    assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
    let text = stdout(&t);
    assert!(
        text.contains(
            "canary canary-1@claude-haiku (claude:haiku): holds, expected breaks: MISSED"
        ),
        "{text}"
    );
    assert!(
        text.contains("CANARY MISSED by claude:haiku, exec:"),
        "{text}"
    );
    let j = Tool::new("panel-tally")
        .args(["--json"])
        .stdin(&out.stdout)
        .run();
    let j: Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(j["canaryMissed"], serde_json::json!(["claude:haiku", exec]));
    assert_eq!(j["passed"], true);
    // "with `--require-canaries` such a seat's verdicts do not count (the panel may become
    // undecided, exit 3)".
    let t = Tool::new("panel-tally")
        .args(["--require-canaries", "--json"])
        .stdin(&out.stdout)
        .run();
    assert_eq!(t.status.code(), Some(3), "{}", stderr(&t));
    let j: Value = serde_json::from_slice(&t.stdout).unwrap();
    assert_eq!(j["counts"]["abstained"], 2);
    assert_eq!(j["counts"]["holds"], 0);
    assert_eq!(j["decided"], false);
    let a = &j["abstentions"][0];
    assert_eq!(a["status"], "canary-missed");
    assert_eq!(a["cause"], "its seat missed its canary");
    assert_eq!(j["byLens"]["a"]["abstained"], 2);
}

#[test]
fn require_canaries_discounts_a_seat_without_one_and_keeps_one_that_hit() {
    let rig = Rig::new("canary-partial");
    let (out, _) = canary_panel(&rig, "breaks");
    // The exec seat holds its canary wrongly; drop its canary record too: with --require-canaries
    // the claude seat counts (it hit), the exec seat does not, whichever way it lacks one.
    let exec = slow_canary_seat();
    let without: Vec<u8> = stdout(&out)
        .lines()
        .filter(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            !(r.get("canary").is_some() && r["seat"] == exec.as_str())
        })
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    for (input, cause) in [
        (out.stdout.clone(), "its seat missed its canary"),
        (without, "its seat answered no canary"),
    ] {
        let t = Tool::new("panel-tally")
            .args(["--require-canaries", "--json", "--agree", "1"])
            .stdin(&input)
            .run();
        assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
        let j: Value = serde_json::from_slice(&t.stdout).unwrap();
        assert_eq!(j["counts"]["holds"], 1);
        assert_eq!(j["abstentions"][0]["cause"], cause);
    }
}

#[test]
fn each_panel_of_a_stream_reports_its_own_canaries() {
    let rig = Rig::new("canary-each");
    let (first, _) = canary_panel(&rig, "breaks");
    let other = rig.tmp.path().join("other.md");
    std::fs::write(&other, "Another answer: the sum of 2 and 2 is 4.\n").unwrap();
    let (second, _) = canary_panel_about(&rig, "holds", &other);
    // The slow canary's record still comes before the panel's last record: one is held back
    // until the canaries are answered, so a stream that closes a panel on its last record
    // (panelSize) has them.
    for out in [&first, &second] {
        let text = stdout(out);
        let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert!(last.get("canary").is_none(), "{text}");
    }
    let both = [&first.stdout[..], &second.stdout[..]].concat();
    let t = Tool::new("panel-tally")
        .args(["--each", "--json"])
        .stdin(&both)
        .run();
    assert_eq!(t.status.code(), Some(0), "{}", stderr(&t));
    let tallies: Vec<Value> = stdout(&t)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(tallies.len(), 3, "{}", stdout(&t));
    assert_eq!(tallies[0]["canaries"].as_array().unwrap().len(), 2);
    assert_eq!(tallies[0]["canaryMissed"].as_array().unwrap().len(), 1);
    assert_eq!(tallies[1]["canaryMissed"].as_array().unwrap().len(), 2);
}

#[test]
fn a_bad_canary_argument_is_one_line_and_exit_2() {
    let tmp = TempDir::new("canary-args");
    let file = tmp.path().join("k.md");
    std::fs::write(&file, "known\n").unwrap();
    let f = file.display();
    for (arg, says) in [
        (format!("{f}"), "expected FILE=holds or FILE=breaks"),
        (format!("{f}=maybe"), "\"maybe\" is not a verdict"),
        (format!("{f}.missing=holds"), "k.md.missing"),
        ("=holds".to_string(), "expected a file"),
    ] {
        let out = judge(&holds_seat(4), &["--canary", &arg, "--no-history"]).run();
        assert_eq!(out.status.code(), Some(2), "{arg}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("panel-judge: --canary ") && err.contains(says),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    // A lens may not take a canary's name.
    let out = judge(&holds_seat(4), &["--lens", "canary-1=Q?"]).run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Issue 23: "Cut an append to `PANEL_HISTORY` short, with a full disk or a file-size limit …
/// Append each panel's records so that a short write never leaves a torn line behind".
#[test]
fn an_append_cut_short_leaves_no_torn_line_and_the_ledger_reads_on() {
    use std::os::unix::process::CommandExt;
    let tmp = TempDir::new("history-torn");
    let history = tmp.path().join("history.jsonl");
    let h = history.to_str().unwrap();
    let whole = |size: usize| {
        let out = judge(&holds_seat(size), &["--history", h]).run();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    };
    // What is there already: records of 400 KiB, so that the limit below leaves room for the
    // run folder's files and what a jail copies.
    whole(400 * 1024);
    let kept = std::fs::metadata(&history).unwrap().len();
    // The next panel's 5 KiB records, under a file-size limit 1000 bytes past the history's end:
    // its first append is cut short.
    let limit = kept + 1000;
    let mut cut = judge(&holds_seat(5 * 1024), &["--history", h]);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cut.command().pre_exec(move || {
            let lim = nix::libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if nix::libc::setrlimit(nix::libc::RLIMIT_FSIZE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = cut.run();
    assert!(stderr(&out).contains("history"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&history).unwrap();
    assert!(
        text.ends_with('\n'),
        "a torn line: {:?}",
        &text[text.len() - 80..]
    );
    assert_eq!(lines(&history).len(), 3, "{}", stderr(&out));
    // A later panel's records go on whole lines, and the ledger reads the history.
    whole(10);
    assert_eq!(lines(&history).len(), 6);
    let ledger = Command::new(bin("panel-tally"))
        .args(["--ledger", h])
        .output()
        .unwrap();
    assert!(
        matches!(ledger.status.code(), Some(0 | 1)),
        "{}",
        stderr(&ledger)
    );
}

/// Issue 25: "Replay runs, the README's first command included, go into the user's real
/// history: keep replays and dry runs out of `PANEL_HISTORY` unless asked."
#[test]
fn a_replay_keeps_no_history_unless_one_is_named() {
    let tmp = TempDir::new("history-replay");
    let state = tmp.path().join("state");
    let replay = format!("replay:{}", root().join("examples/answers.json").display());
    let run = |extra: &[&str], var: Option<&Path>| {
        let mut cmd = judge(&replay, extra);
        cmd.env("XDG_STATE_HOME", &state)
            .env_remove("PANEL_HISTORY");
        if let Some(v) = var {
            cmd.env("PANEL_HISTORY", v);
        }
        let out = cmd.run();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    };
    run(&[], None);
    assert!(!state.join("panel/history.jsonl").exists());
    // Named, it is kept.
    let named = tmp.path().join("named.jsonl");
    run(&["--history", named.to_str().unwrap()], None);
    assert_eq!(lines(&named).len(), 3);
    let var = tmp.path().join("var.jsonl");
    run(&[], Some(&var));
    assert_eq!(lines(&var).len(), 3);
}

// ---------------------------------------------------------------------------------------------
// Issue 25: `panel-tally --history`, the history read back panel by panel, like `llm logs`.

/// A verdict record of judge `judge` about `seal`, in run folder `run` of `size` judges.
fn verdict(judge: &str, answer: &str, seal: &str, run: &Path, size: usize) -> String {
    let (verdict, status) = match answer {
        "holds" | "breaks" => (serde_json::json!(answer), "ok"),
        s => (Value::Null, s),
    };
    let rec = serde_json::json!({
        "type": "verdict", "judge": judge, "lens": "correctness", "seat": "claude:haiku",
        "harness": "claude", "candidate": seal, "verdict": verdict,
        "reason": format!("{judge} read it\u{1b}[2J"), "status": status,
        "panelSize": size, "run": run,
    });
    format!("{rec}\n")
}

/// Three panels in their run folders: `a` and `b` interleaved (parallel runs), then `c`, with a
/// torn line between; `answer.md` is `b`'s candidate. Returns the folder, the history, and
/// each panel's records alone.
fn three_panels(tmp: &TempDir) -> (PathBuf, [String; 3]) {
    let candidate = tmp.path().join("answer.md");
    std::fs::write(&candidate, "the answer\n").unwrap();
    let seal_b = format!("sha256:{}", crate::util::sha256_hex(b"the answer\n"));
    let seal_a = format!("sha256:{}", "a1".repeat(32));
    let seal_c = format!("sha256:{}", "c3".repeat(32));
    let run = |name: &str| {
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let (ra, rb, rc) = (run("run-a"), run("run-b"), run("run-c"));
    let a = [
        verdict("alpha", "holds", &seal_a, &ra, 2),
        verdict("beta", "breaks", &seal_a, &ra, 2),
    ];
    let b = [
        verdict("alpha", "holds", &seal_b, &rb, 3),
        verdict("gamma\u{1b}]0;x\u{7}", "holds", &seal_b, &rb, 3),
        verdict("delta", "timeout", &seal_b, &rb, 3),
    ];
    let c = [verdict("beta", "holds", &seal_c, &rc, 1)];
    let history = tmp.path().join("history.jsonl");
    let text = [
        &a[0],
        &b[0],
        &b[1],
        &a[1],
        "{\"type\":\"verdict\",\"judge\":\"torn\n",
        "\n",
        &b[2],
        &c[0],
    ]
    .concat();
    std::fs::write(&history, text).unwrap();
    (history, [a.concat(), b.concat(), c.concat()])
}

fn history_tally(args: &[&str]) -> Ran {
    Tool::new("panel-tally")
        .arg("--history")
        .args(args)
        .stdin(b"")
        .run()
}

/// What panel-tally prints of one panel's records alone, after the history's header line.
fn alone(records: &str, header: &str, args: &[&str]) -> String {
    let out = Tool::new("panel-tally")
        .args(args)
        .stdin(records.as_bytes())
        .run();
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{}",
        stderr(&out)
    );
    format!("{header}{}", stdout(&out))
}

fn header(tmp: &TempDir, panel: &str, seal: &str) -> String {
    let run = tmp.path().join(format!("run-{panel}"));
    // The run folder's time, as date(1) writes it: never by the code under test.
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ", "-r"])
        .arg(&run)
        .output()
        .unwrap();
    let when = stdout(&date);
    format!(
        "== {} candidate {seal} run {}\n",
        when.trim(),
        run.display()
    )
}

#[test]
fn the_history_prints_each_panel_as_its_records_alone_grouped_by_run() {
    let tmp = TempDir::new("history-read");
    let (history, [a, b, c]) = three_panels(&tmp);
    let h = history.to_str().unwrap();
    let seal_b = format!(
        "sha256:{}…",
        &crate::util::sha256_hex(b"the answer\n")[..12]
    );
    let (ha, hb, hc) = (
        header(&tmp, "a", &format!("sha256:{}…", "a1".repeat(6))),
        header(&tmp, "b", &seal_b),
        header(&tmp, "c", &format!("sha256:{}…", "c3".repeat(6))),
    );
    let (pa, pb, pc) = (
        alone(&a, &ha, &[]),
        alone(&b, &hb, &[]),
        alone(&c, &hc, &[]),
    );
    let out = history_tally(&[h]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{pa}\n{pb}\n{pc}"));
    // The judges' control characters are escaped, as the report escapes them.
    assert!(
        stdout(&out).contains("gamma\\x1b]0;x\\x07"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains('\u{1b}'));
    let err = stderr(&out);
    assert!(
        err.contains("1 line(s) skipped, not verdict records"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let answer = tmp.path().join("answer.md");
    let cases: &[(&[&str], String)] = &[
        (&["--judge", "delta"], pb.clone()),
        (&["--judge", "beta"], format!("{pa}\n{pc}")),
        (
            &["--judge", "delta", "--judge", "beta"],
            format!("{pa}\n{pb}\n{pc}"),
        ),
        (&["--last", "2"], format!("{pb}\n{pc}")),
        (&["--judge", "alpha", "--last", "1"], pb.clone()),
        (&["--candidate", answer.to_str().unwrap()], pb.clone()),
        (&["--candidate", "c3C3"], pc.clone()),
        (
            &["--candidate", &format!("sha256:{}", "a1".repeat(32))],
            pa.clone(),
        ),
        (&["--candidate", "ffff"], String::new()),
        (&["--since", "1h"], format!("{pa}\n{pb}\n{pc}")),
    ];
    for (args, want) in cases {
        let out = history_tally(&[&[h][..], args].concat());
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(&stdout(&out), want, "{args:?}");
    }
    // With --json: the tally records, one per panel, as panel-tally writes them.
    let out = history_tally(&[h, "--json", "--judge", "beta"]);
    let want = [&a, &c]
        .map(|r| {
            stdout(
                &Tool::new("panel-tally")
                    .args(["--json"])
                    .stdin(r.as_bytes())
                    .run(),
            )
        })
        .concat();
    assert_eq!(stdout(&out), want);
    // Markdown: the panels' reports after a heading each.
    let out = history_tally(&[h, "--format", "markdown", "--last", "1"]);
    assert!(stdout(&out).starts_with("#### "), "{}", stdout(&out));
    assert!(
        stdout(&out).ends_with(&stdout(
            &Tool::new("panel-tally")
                .args(["--format", "markdown"])
                .stdin(c.as_bytes())
                .run()
        ))
    );
}

#[test]
fn since_leaves_out_older_panels_and_those_whose_folders_are_gone() {
    let tmp = TempDir::new("history-since");
    let (history, [_, b, c]) = three_panels(&tmp);
    let h = history.to_str().unwrap();
    let touched = Command::new("touch")
        .args(["-d", "2020-01-01T00:00:00Z"])
        .arg(tmp.path().join("run-a"))
        .status()
        .unwrap();
    assert!(touched.success());
    let out = history_tally(&[h, "--since", "2021-06-01T00:00:00+02:00"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let hb = header(
        &tmp,
        "b",
        &format!(
            "sha256:{}…",
            &crate::util::sha256_hex(b"the answer\n")[..12]
        ),
    );
    let hc = header(&tmp, "c", &format!("sha256:{}…", "c3".repeat(6)));
    assert_eq!(
        stdout(&out),
        format!("{}\n{}", alone(&b, &hb, &[]), alone(&c, &hc, &[]))
    );
    let out = history_tally(&[h, "--since", "2019-12-31"]);
    assert_eq!(stdout(&out).matches("\n== ").count() + 1, 3);
    // A run folder that is gone: the panel has no time; --since leaves it out and says so.
    std::fs::remove_dir(tmp.path().join("run-c")).unwrap();
    let out = history_tally(&[h, "--since", "7d"]);
    assert_eq!(stdout(&out), alone(&b, &hb, &[]));
    assert!(
        stderr(&out).contains("1 panel(s) left out by --since"),
        "{}",
        stderr(&out)
    );
    let out = history_tally(&[h, "--candidate", "c3"]);
    assert!(
        stdout(&out).starts_with("== time unknown candidate"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn bad_history_arguments_are_one_line_and_exit_2() {
    let tmp = TempDir::new("history-bad");
    let (history, _) = three_panels(&tmp);
    let h = history.to_str().unwrap();
    let missing = tmp.path().join("none.jsonl");
    let fifo = tmp.path().join("fifo.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let link = tmp.path().join("link.jsonl");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&[h, "--since", "yesterday"], "not an RFC 3339 time"),
        (
            &[h, "--since", "2026-02-30T00:00:00Z"],
            "not an RFC 3339 time",
        ),
        (&[h, "--since", "7y"], "not an RFC 3339 time"),
        (
            &[h, "--candidate", "not-hex"],
            "no such file or folder, and not a seal",
        ),
        (&[h, "--last", "x"], "invalid value"),
        (&[missing.to_str().unwrap()], "none.jsonl: no history there"),
        (&[fifo.to_str().unwrap()], "fifo.jsonl: not a regular file"),
        (&[link.to_str().unwrap()], "link.jsonl: not a regular file"),
        (&[h, "--ledger"], "cannot be used with"),
        (&[h, h], "cannot be used with"),
    ];
    for (args, want) in cases {
        let started = std::time::Instant::now();
        let out = history_tally(args);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{args:?}: it waited"
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
    let out = Command::new(bin("panel-tally"))
        .args(["--since", "7d"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--history"), "{}", stderr(&out));
    // A symbolic link to a history is read as the history.
    let to_history = tmp.path().join("to-history.jsonl");
    std::os::unix::fs::symlink(&history, &to_history).unwrap();
    let out = history_tally(&[to_history.to_str().unwrap(), "--last", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("run-c"));
}

#[test]
fn without_a_file_the_history_is_where_panel_judge_writes_it() {
    let tmp = TempDir::new("history-where");
    let (history, [_, _, c]) = three_panels(&tmp);
    let state = tmp.path().join("state");
    std::fs::create_dir_all(state.join("panel")).unwrap();
    std::fs::copy(&history, state.join("panel/history.jsonl")).unwrap();
    let run = |envs: &[(&str, &Path)]| {
        let mut cmd = Command::new(bin("panel-tally"));
        cmd.args(["--history", "--last", "1"])
            .env_remove("PANEL_HISTORY")
            .env("HOME", tmp.path().join("home"))
            .env("XDG_STATE_HOME", &state);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let hc = header(&tmp, "c", &format!("sha256:{}…", "c3".repeat(6)));
    assert_eq!(stdout(&out), alone(&c, &hc, &[]));
    let out = run(&[("PANEL_HISTORY", Path::new("off"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("none is kept (PANEL_HISTORY=off)"),
        "{}",
        stderr(&out)
    );
    let elsewhere = tmp.path().join("elsewhere.jsonl");
    let out = run(&[("PANEL_HISTORY", &elsewhere)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("elsewhere.jsonl: no history there"),
        "{}",
        stderr(&out)
    );
}
