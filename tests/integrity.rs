//! Nothing is lost, nothing is counted twice, nothing misread: the tools against inputs and
//! processes that do not play fair. Each test failed before the fix it guards.

use crate::util::Checked;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::tool::{Tool, records};
use crate::util::{TempDir, bin, root, stderr, stdout};

const HOLDS: &str = r#"{"verdict":"holds","reason":"fine","confidence":0.7}"#;
const BREAKS: &str = r#"{"verdict":"breaks","reason":"xs[0] on an empty list","confidence":0.9}"#;

fn judge(args: &[&str]) -> Tool {
    let mut tool = Tool::new("panel-judge");
    tool.args(args).current_dir(root());
    tool
}

/// panel-judge with one honest exec judge (it answers `holds`) on examples/answer.md, and `extra`.
fn holding_judge(extra: &[&str]) -> Tool {
    let seat = format!("exec:echo '{HOLDS}'");
    let family = format!("{seat}=x");
    let mut args = vec!["--seat", &seat, "--family", &family, "examples/answer.md"];
    args.extend(extra);
    judge(&args)
}

/// The one line of an error, checked to be one line.
fn error_line(out: &Output) -> String {
    let err = stderr(out);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.contains("no model family"))
        .collect();
    assert_eq!(lines.len(), 1, "not one line: {err:?}");
    lines[0].to_string()
}

/// `--timeout 1e20` overflowed a Duration: exit 101 and a panic, in every launching tool.
#[test]
fn a_deadline_past_any_use_is_a_usage_error() {
    for (tool, args) in [
        (
            "panel-judge",
            vec!["--seat", "exec:cat", "examples/answer.md"],
        ),
        ("panel-vote", vec!["--candidate", "examples/answer.md"]),
        ("panel-merge", vec!["--seat", "exec:cat"]),
    ] {
        let out = Command::new(bin(tool))
            .args(&args)
            .args(["--timeout", "1e20"])
            .stdin(Stdio::null())
            .current_dir(root())
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{tool}: {}", stderr(&out));
        let line = error_line(&out);
        assert!(
            line.starts_with(&format!("{tool}: --timeout "))
                && line.contains(": at most 2592000 seconds (30 days)"),
            "{tool}: {line}"
        );
    }
}

/// A UTF-8 byte-order mark before the first record (Windows tools write one) was read as part
/// of the first line: "not a JSON record".
#[test]
fn a_byte_order_mark_before_the_first_record_is_skipped() {
    let rec = |judge: &str| {
        format!(
            r#"{{"type":"verdict","judge":"{judge}","lens":"{judge}","seat":"s","harness":"s","candidate":"sha256:ab","verdict":"holds","reason":"r","confidence":0.5,"status":"ok","panelSize":2,"run":"/r"}}"#
        )
    };
    let stream = format!("\u{feff}{}\n{}\n", rec("a"), rec("b"));
    let out = Tool::new("panel-tally").stdin(stream).run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("PANEL: unanimous — all 2 say holds."));
    // A BOM anywhere else is not skipped: it is not the start of the input.
    let late = format!("{}\n\u{feff}{}\n", rec("a"), rec("b"));
    let out = Tool::new("panel-tally").stdin(late).run();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
}

/// A NUL byte in the candidate cannot reach a judge through argv: every judge failed and the
/// tally said "rerun the abstainers". It is refused before anything starts, naming the offset.
#[test]
fn a_nul_byte_in_the_candidate_is_refused_before_launching() {
    let tmp = TempDir::new("nul");
    let file = tmp.path().join("candidate.txt");
    std::fs::write(&file, b"def f(xs):\n    return xs[0]\x00 # here\n").unwrap();
    let log = tmp.path().join("ran");
    let out = judge(&[
        "--seat",
        &format!("exec:touch {}; cat", log.display()),
        "--family",
        &format!("exec:touch {}; cat=x", log.display()),
        file.to_str().unwrap(),
    ])
    .run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        error_line(&out).ends_with("a NUL byte at offset 27: no judge's command line can carry it"),
        "{}",
        stderr(&out)
    );
    assert!(!log.exists(), "a judge was launched");
}

/// `>&-`: Rust's runtime reopens a closed fd 1 on /dev/null, so every record went nowhere and
/// panel-judge exited 0. It is refused before any judge starts.
#[test]
fn a_closed_standard_output_is_refused_before_launching() {
    let tmp = TempDir::new("closed-stdout");
    let log = tmp.path().join("ran");
    let script = format!(
        "{} --seat 'exec:touch {}; echo {HOLDS}' --lens a=Q? examples/answer.md >&-",
        crate::util::sh_word(&bin("panel-judge")),
        log.display()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(root())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("panel-judge: standard output is closed"));
    assert!(!log.exists(), "a judge was launched");
    // `>/dev/null` on purpose is the user's choice: the run folder keeps the records.
    let script = script.replace(">&-", ">/dev/null");
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(root())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A relative PATH entry passed the install check, then every judge was not-found: it ran in
/// another folder. The program is found to an absolute path first.
#[test]
fn a_relative_path_entry_still_finds_the_harness() {
    let tmp = TempDir::new("relative-path");
    std::fs::create_dir(tmp.path().join("tools")).unwrap();
    let tool = tmp.path().join("tools/answer");
    std::fs::write(&tool, format!("#!/bin/sh\necho '{HOLDS}'\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let candidate = root().join("examples/answer.md");
    let path = format!("tools:{}", std::env::var("PATH").unwrap());
    // A row found through PATH's `tools`, and a row whose executable is `./tools/answer`.
    let harness = tmp.path().join("answer.json");
    std::fs::write(
        &harness,
        r#"[{"name": "answer", "executable": "answer", "prompt": "stdin", "argv": [], "family": "x"},
            {"name": "local", "executable": "./tools/answer", "prompt": "stdin", "argv": [], "family": "y"}]"#,
    )
    .unwrap();
    for seat in ["answer", "local"] {
        let out = Command::new(bin("panel-judge"))
            .args(["--harness-file", harness.to_str().unwrap()])
            .args([
                "--seat",
                seat,
                "--lens",
                "a=Q?",
                "--family",
                &format!("{seat}=x"),
            ])
            .arg(&candidate)
            .env("PATH", &path)
            .current_dir(tmp.path())
            .stdin(Stdio::null())
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{seat}: {}", stderr(&out));
        assert_eq!(records(&out)[0]["status"], "ok", "{seat}: {}", stdout(&out));
    }
}

/// Two exec seats that differ by a trailing space are one judge in two costumes; an exec seat
/// without a family is named on standard error.
#[test]
fn exec_seats_are_compared_without_their_spacing() {
    let out = judge(&[
        "--seat",
        &format!("exec:echo '{HOLDS}'"),
        "--seat",
        &format!("exec:echo  '{HOLDS}' "),
        "--lens",
        "a=Q?",
        "examples/answer.md",
    ])
    .run();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("one judge in two costumes"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("no model family"), "{}", stderr(&out));
}

/// A model that quotes the candidate's own JSON verdict before giving its own: the quoted
/// `holds` was recorded. Two answers that disagree are unreadable (docs/design.md §4).
#[test]
fn a_quoted_verdict_does_not_decide() {
    let reply = format!("The work claims {HOLDS}, but {BREAKS}");
    let out = judge(&[
        "--seat",
        &format!("exec:printf '%s' '{reply}'"),
        "--family",
        &format!("exec:printf '%s' '{reply}'=x"),
        "--lens",
        "a=Q?",
        "--retries",
        "0",
        "examples/answer.md",
    ])
    .run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rec = &out.records()[0];
    assert_eq!(rec["verdict"], Value::Null, "{rec}");
    assert_eq!(rec["status"], "unreadable");
    assert_eq!(rec["cause"], "2 answers in the reply that disagree");
}

/// 20,000 `[` overflowed the stack in the extraction (jaq's parser, behind a harness's filter):
/// panel-judge died with exit 134, every record lost, the other judges orphaned.
#[test]
fn a_reply_nested_past_any_answer_is_unreadable_not_a_crash() {
    let tmp = TempDir::new("deep");
    let deep = tmp.path().join("deep");
    std::fs::write(&deep, "[".repeat(20_000)).unwrap();
    let rows = tmp.path().join("deep.json");
    std::fs::write(
        &rows,
        serde_json::json!({"name": "deep", "executable": "sh", "prompt": "stdin",
            "argv": ["-c", format!("cat {}", deep.display())], "filter": ".result", "family": "x"})
        .to_string(),
    )
    .unwrap();
    let out = judge(&[
        "--harness-file",
        rows.to_str().unwrap(),
        "--seat",
        "deep",
        "--seat",
        &format!("exec:echo '{HOLDS}'"),
        "--family",
        &format!("exec:echo '{HOLDS}'=y"),
        "--lens",
        "a=Q?",
        "--retries",
        "0",
        "examples/answer.md",
    ])
    .judges_write(tmp.path())
    .run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = out.records();
    assert_eq!(recs.len(), 2);
    let statuses: Vec<&str> = recs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert!(
        statuses.contains(&"unreadable") && statuses.contains(&"ok"),
        "{statuses:?}"
    );
}

// ── Nothing outlives the run ────────────────────────────────────────────────

/// An exec seat that records that it started, starts a `setsid` escapee that records it too
/// and sleeps for `mark` seconds, then answers (`then`).
fn escaping_seat(pids: &std::path::Path, mark: &str, then: &str) -> String {
    format!(
        "exec:echo $$ >> {p}; setsid sh -c 'echo $$ >> {p}; exec sleep {mark}' & {then}",
        p = pids.display()
    )
}

/// Nothing that sleeps for `mark` seconds is left, seen from this machine (a jail numbers its
/// processes its own way): else the ones left.
fn all_gone(mark: &str) -> Result<(), Vec<u32>> {
    let alive = crate::util::marked(mark);
    if alive.is_empty() { Ok(()) } else { Err(alive) }
}

/// A process that left its judge's process group (`setsid`) outlived the judge after a normal
/// exit, a timeout, and every signal to panel-judge; SIGKILL to panel-judge (or the OOM killer)
/// left every judge running. Each judge's supervisor now ends them all.
#[test]
fn nothing_a_judge_starts_outlives_it_whichever_way_it_ends() {
    use crate::util::{kill, pids_in, wait_until};
    use std::time::Duration;
    for how in ["exit", "timeout", "TERM", "HUP", "QUIT", "KILL"] {
        let tmp = TempDir::new("outlive");
        let pids = tmp.path().join("pids");
        let mark = crate::util::mark();
        let then = if how == "exit" {
            format!("sleep 0.2; echo '{HOLDS}'")
        } else {
            format!("exec sleep {mark}")
        };
        let seat = escaping_seat(&pids, &mark, &then);
        let family = format!("{seat}=x");
        let mut args = vec!["--seat", &seat, "--family", &family, "--lens", "a=Q?"];
        args.extend(["--retries", "0", "--timeout"]);
        args.push(if how == "timeout" { "2" } else { "60" });
        args.push("examples/answer.md");
        let mut child = judge(&args)
            .judges_write(tmp.path())
            .env("TMPDIR", tmp.path())
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert!(
            wait_until(Duration::from_secs(20), || pids_in(&pids).len() >= 2),
            "{how}: the judge never started"
        );
        if !["exit", "timeout"].contains(&how) {
            kill(child.id(), how);
        }
        let status = child.wait().unwrap();
        let want = match how {
            "exit" | "timeout" => Some(0),
            "TERM" => Some(143),
            "HUP" => Some(129),
            "QUIT" => Some(131),
            _ => None,
        };
        assert_eq!(status.code(), want, "{how}");
        // A SIGKILLed panel-judge cannot wait: its judges' supervisors notice, and end them.
        assert!(
            wait_until(Duration::from_secs(5), || all_gone(&mark).is_ok()),
            "{how}: {:?} outlived panel-judge",
            all_gone(&mark)
        );
    }
}

/// A `setsid` descendant that kept the judge's stdout open: the valid `breaks` the judge wrote
/// was thrown away as "no answer", the judge asked again, and a second orphan started. The
/// bytes are kept, the holder ended, and the answer counts at once.
#[test]
fn an_escaped_holder_of_the_pipe_costs_no_answer() {
    let tmp = TempDir::new("holder");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    // It answers once its escapee has written down that it started.
    let then = format!(
        "while [ $(wc -l < {}) -lt 2 ]; do sleep 0.01; done; echo '{BREAKS}'",
        pids.display()
    );
    let seat = escaping_seat(&pids, &mark, &then);
    let t = std::time::Instant::now();
    let out = judge(&[
        "--seat",
        &seat,
        "--family",
        &format!("{seat}=x"),
        "--lens",
        "a=Q?",
        "--timeout",
        "30",
        "examples/answer.md",
    ])
    .judges_write(tmp.path())
    .run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rec = &out.records()[0];
    assert_eq!(rec["verdict"], "breaks", "{rec}");
    assert_eq!(rec["attempts"], 1, "{rec}");
    let said = std::fs::read_to_string(
        std::path::Path::new(rec["run"].as_str().unwrap()).join("a/attempt-1/stderr"),
    )
    .unwrap();
    assert!(said.contains("1 held its output open"), "{said}");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(
        crate::util::pids_in(&pids).len(),
        2,
        "both wrote down that they started"
    );
    assert_eq!(all_gone(&mark), Ok(()));
}

/// A run killed with SIGKILL cannot remove its judges' private folders (with the logins copied
/// into them); the next run removes them, once their owner is gone.
#[test]
fn a_sandbox_left_by_a_killed_run_is_removed_by_the_next() {
    use crate::util::{pids_in, wait_until};
    use std::time::{Duration, SystemTime};
    let tmp = TempDir::new("leftover");
    let pids = tmp.path().join("pids");
    let mark = crate::util::mark();
    let seat = format!("exec:echo $$ >> {}; exec sleep {mark}", pids.display());
    let family = format!("{seat}=x");
    let mut child = judge(&[
        "--seat",
        &seat,
        "--family",
        &family,
        "--lens",
        "a=Q?",
        "examples/answer.md",
    ])
    .judges_write(tmp.path())
    .env("TMPDIR", tmp.path())
    .command()
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    assert!(wait_until(Duration::from_secs(20), || !pids_in(&pids).is_empty()));
    crate::util::kill(child.id(), "KILL");
    child.wait().unwrap();
    let sandboxes = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("panel-sandbox.")
            })
            .collect()
    };
    let left = sandboxes();
    assert_eq!(left.len(), 1, "{left:?}");
    // Its owner is gone once the judge is, and the judge's supervisor has removed the judge's
    // folder (which touches the sandbox): wait for both, then age it past the settling time.
    assert!(wait_until(Duration::from_secs(5), || all_gone(&mark).is_ok()));
    let emptied = || std::fs::read_dir(&left[0]).is_ok_and(|mut d| d.next().is_none());
    assert!(wait_until(Duration::from_secs(5), emptied));
    std::fs::File::open(&left[0])
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(120))
        .unwrap();
    let out = judge(&[
        "--seat",
        &format!("exec:echo '{HOLDS}'"),
        "--family",
        &format!("exec:echo '{HOLDS}'=x"),
        "--lens",
        "a=Q?",
        "examples/answer.md",
    ])
    .judges_write(tmp.path())
    .env("TMPDIR", tmp.path())
    .run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!left[0].exists(), "the abandoned sandbox is still there");
    assert!(sandboxes().is_empty(), "{:?}", sandboxes());
}

/// With 64 descriptors (`ulimit -n 64`) and 40 lenses, 27 judges failed to start and were
/// counted as abstentions. Judges now wait for descriptors: every one answers.
#[test]
fn judges_wait_for_descriptors_rather_than_abstain() {
    let tmp = TempDir::new("descriptors");
    let answer = tmp.path().join("answer.sh");
    std::fs::write(&answer, format!("sleep 0.05; echo '{HOLDS}'\n")).unwrap();
    let seat = format!("exec:sh {}", answer.display());
    let mut script = format!(
        "ulimit -n 64 && exec {} --seat '{seat}' --family '{seat}=x' --timeout 60",
        crate::util::sh_word(&bin("panel-judge"))
    );
    for i in 0..40 {
        script.push_str(&format!(" --lens l{i}=Q{i}?"));
    }
    script.push_str(" examples/answer.md");
    let out = Command::new("sh")
        .args(["-c", &script])
        // The seat's command names a script of the test's: granted to read.
        .env("PANEL_SANDBOX_READ", tmp.path())
        .current_dir(root())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = records(&out);
    assert_eq!(recs.len(), 40);
    let unanswered: Vec<&Value> = recs.iter().filter(|r| r["verdict"] != "holds").collect();
    assert!(unanswered.is_empty(), "{unanswered:?}");
}

// ── Nothing is lost ─────────────────────────────────────────────────────────

/// `--out` into a folder holding a planted `candidate` link overwrote the link's target. A
/// folder that is not empty is refused, and nothing is written.
#[test]
fn an_out_folder_that_is_not_empty_is_refused_and_its_links_not_followed() {
    let tmp = TempDir::new("planted");
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "mine\n").unwrap();
    let out_dir = tmp.path().join("run");
    std::fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::symlink(&victim, out_dir.join("candidate")).unwrap();
    std::os::unix::fs::symlink(&victim, out_dir.join("verdicts.jsonl")).unwrap();
    let out = holding_judge(&["--lens", "a=Q?", "--out", out_dir.to_str().unwrap()]).run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(error_line(&out).contains("not empty"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
}

/// A run folder of another user is not written into (run as root, the test gives one away).
#[test]
fn an_out_folder_of_another_user_is_refused() {
    if !crate::util::another_user(false) {
        return;
    }
    let tmp = TempDir::new("theirs");
    let out_dir = tmp.path().join("run");
    std::fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::chown(&out_dir, Some(65534), Some(65534)).unwrap();
    let out = holding_judge(&["--out", out_dir.to_str().unwrap()]).run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        error_line(&out).contains("another user"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0);
}

/// `setpriv` arguments that run what follows as nobody, without root's groups.
const AS_NOBODY: [&str; 4] = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"];

/// setpriv's arguments for a user no other process has: a limit on processes (`ulimit -u`)
/// counts every process of the user's on the machine, and nobody's are many (a root caller's
/// judges run as nobody, in every other test and in a second suite run beside this one). The
/// id is this test run's own (`n` tells a run's tests apart).
fn as_a_user_of_its_own(n: u32) -> Vec<String> {
    let mut args = vec![format!("--reuid={}", crate::util::own_uid(n))];
    args.extend(AS_NOBODY[1..].iter().map(|a| a.to_string()));
    args
}

/// `script` in bash as that user, in `tmp` (its HOME, TMPDIR and state), standard input closed.
fn run_as_a_user_of_its_own(n: u32, tmp: &TempDir, script: &str) -> std::process::Output {
    Command::new("setpriv")
        .args(as_a_user_of_its_own(n))
        .args(["bash", "-c", script])
        .env("TMPDIR", tmp.path())
        .env("HOME", tmp.path())
        .env("XDG_STATE_HOME", tmp.path().join("state"))
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .env("PANEL_SANDBOX_READ", tmp.path())
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap()
}

/// `file` where nobody can read it, in `tmp` (a folder of the test's, opened to all) when the
/// checkout or the target folder is not: a test run as nobody reads nothing through the folders
/// around the checkout (a clone in a 0700 folder), and runs there, with its state, in `tmp`.
fn for_nobody(tmp: &TempDir, file: &std::path::Path) -> std::path::PathBuf {
    crate::util::readable_by_others(tmp.path(), file)
}

/// Under `umask 000` the run folder was 0777 and its files 0666: anyone could read the prompts
/// and rewrite the ledger. Folders are 0700 and files 0600, whatever the umask.
#[test]
fn a_run_folder_is_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("umask");
    let out_dir = tmp.path().join("runs/today");
    let script = format!(
        "umask 000 && exec {} --seat \"exec:echo '{HOLDS}'\" --family 'exec:x=x' --out {} examples/answer.md",
        crate::util::sh_word(&bin("panel-judge")),
        out_dir.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(root())
        .stdin(Stdio::null())
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut seen = 0;
    let mut todo = vec![tmp.path().join("runs")];
    while let Some(p) = todo.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "{}", p.display());
            todo.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if p.ends_with("candidate") {
            assert_eq!(mode, 0o400, "{}", p.display());
        } else {
            assert_eq!(mode, 0o600, "{}", p.display());
        }
        seen += 1;
    }
    assert!(seen > 10, "{seen}");
}

/// `--lens '..=Q'` wrote the judge's prompt.txt and schema.json into the folder above the run
/// folder. Every name that becomes a path is one plain component, and not one the run folder
/// keeps for itself.
#[test]
fn a_name_that_would_leave_the_run_folder_is_refused() {
    let seat = format!("exec:echo '{HOLDS}'");
    let family = format!("{seat}=x");
    for (flag, value) in [
        ("--lens", "..=Q?"),
        ("--lens", ".=Q?"),
        ("--lens", "candidate=Q?"),
        ("--lens", "verdicts.jsonl=Q?"),
        ("--stage", "../up"),
    ] {
        let tmp = TempDir::new("names");
        let mut args = vec!["--seat", &seat, "--family", &family, flag, value];
        if flag == "--stage" {
            args.extend(["--contract", "review"]);
        }
        let out_dir = tmp.path().join("run");
        args.extend(["--out", out_dir.to_str().unwrap()]);
        args.push("examples/answer.md");
        let out = judge(&args).run();
        assert_eq!(out.status.code(), Some(2), "{value}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot name a folder"),
            "{value}: {}",
            stderr(&out)
        );
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            0,
            "{value}: something was written"
        );
    }
}

/// A review record whose reviewer is `../../x` made panel-vote write `vote-../../x` outside
/// its run folder.
#[test]
fn a_reviewer_named_like_a_path_is_refused() {
    let review = |who: &str| {
        serde_json::json!({"type": "review", "reviewer": who, "seat": "first", "harness": "exec",
            "candidate": "sha256:00", "stage": "review", "decision": "pass", "findings": [],
            "status": "ok"})
        .to_string()
    };
    let input = format!("{}\n{}\n", review("alice"), review("../../x"));
    let out = Tool::new("panel-merge").stdin(input).run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        error_line(&out).contains("cannot name a folder"),
        "{}",
        stderr(&out)
    );
    // And in panel-merge's output, as panel-vote reads it.
    let input = format!("{}\n{}\n", review("alice"), review("bob"));
    let merged = Tool::new("panel-merge").stdin(input).run();
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    let planted = stdout(&merged).replace("\"bob\"", "\"../../x\"");
    let out = Tool::new("panel-vote")
        .args(["--seat", "first", "--candidate", "examples/answer.md"])
        .stdin(planted)
        .run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        error_line(&out).contains("cannot name a folder"),
        "{}",
        stderr(&out)
    );
}

/// A harness whose answer file is replaced (renamed over, as another judge could) had the
/// replacement read as its answer. Only the file made for the judge is read.
#[test]
fn an_answer_file_put_in_place_of_the_judges_is_not_read() {
    let tmp = TempDir::new("swap");
    for (how, want) in [
        ("printf '%s' \"$0\" > \"$1\"", "ok"),
        (
            "printf '%s' \"$0\" > \"$1.new\" && mv \"$1.new\" \"$1\"",
            "unreadable",
        ),
    ] {
        let rows = tmp.path().join("swap.json");
        std::fs::write(
            &rows,
            serde_json::json!({"name": "swap", "executable": "sh", "prompt": "stdin",
                "argv": ["-c", how, HOLDS, "{answer_file}"], "answer": "file", "family": "x"})
            .to_string(),
        )
        .unwrap();
        let out = judge(&[
            "--harness-file",
            rows.to_str().unwrap(),
            "--seat",
            "swap",
            "--lens",
            "a=Q?",
            "--retries",
            "0",
            "examples/answer.md",
        ])
        .run();
        assert_eq!(out.status.code(), Some(0), "{how}: {}", stderr(&out));
        assert_eq!(out.records()[0]["status"], want, "{how}: {}", stdout(&out));
    }
}

/// The closing line names the ledger's sha256, so a run folder changed afterwards can be told.
#[test]
fn the_closing_line_seals_the_ledger() {
    let tmp = TempDir::new("seal");
    let out_dir = tmp.path().join("run");
    let out = holding_judge(&[
        "--lens",
        "a=Q?",
        "--lens",
        "b=R?",
        "--out",
        out_dir.to_str().unwrap(),
    ])
    .run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ledger = std::fs::read(out_dir.join("verdicts.jsonl")).unwrap();
    assert_eq!(ledger, out.stdout);
    let sum = Command::new("sha256sum")
        .arg(out_dir.join("verdicts.jsonl"))
        .checked_output()
        .unwrap();
    let hex = String::from_utf8_lossy(&sum.stdout)
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let want = format!(
        "verdicts: {} (verdicts.jsonl sha256:{hex})",
        out_dir.canonicalize().unwrap().display()
    );
    assert!(
        stderr(&out).lines().any(|l| l == want),
        "{}\n{want}",
        stderr(&out)
    );
}

/// `--harness-cap`: a judge that waited 3 s for a slot still had its whole `--timeout 1` after
/// it. The wait counts against the deadline; a judge that gets no slot in time is a timeout.
/// The slot is held until the test lets go (a file, not a clock), so the judge can only end by
/// its own deadline, however slow the machine.
#[test]
fn the_wait_for_a_harness_slot_counts_against_the_deadline() {
    use crate::util::{pids_in, wait_until};
    use std::time::{Duration, Instant};
    use wait_timeout::ChildExt;
    let tmp = TempDir::new("slots");
    let pids = tmp.path().join("pids");
    let release = tmp.path().join("release");
    let slow = format!(
        "exec:echo $$ >> {}; while [ ! -e {} ]; do sleep 0.05; done; echo '{HOLDS}'",
        pids.display(),
        release.display()
    );
    let quick = format!("exec:echo '{HOLDS}'");
    let run = |seat: &str, timeout: &str| {
        judge(&[
            "--seat",
            seat,
            "--family",
            &format!("{seat}=x"),
            "--lens",
            "a=Q?",
            "--harness-cap",
            "exec=1",
            "--retries",
            "0",
            "--timeout",
            timeout,
            "examples/answer.md",
        ])
        .judges_write(tmp.path())
        .env("XDG_RUNTIME_DIR", tmp.path())
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    };
    let holder = run(&slow, "60");
    assert!(wait_until(Duration::from_secs(20), || !pids_in(&pids).is_empty()));
    let t = Instant::now();
    let mut quick = run(&quick, "1");
    // Its deadline, not the holder's release: the holder lets go only after this.
    let ended = quick.wait_timeout(Duration::from_secs(20)).unwrap();
    let waited = t.elapsed();
    std::fs::write(&release, "").unwrap();
    let out = quick.wait_with_output().unwrap();
    assert!(
        ended.is_some(),
        "a --timeout 1 judge still waits for a slot after 20 s"
    );
    assert!(
        waited >= Duration::from_secs(1),
        "it ended before its deadline: {waited:?}"
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rec = &records(&out)[0];
    assert_eq!(rec["status"], "timeout", "{rec}");
    assert!(rec["cause"].as_str().unwrap().contains("slot"), "{rec}");
    let held = holder.wait_with_output().unwrap();
    assert_eq!(records(&held)[0]["status"], "ok");
}

/// A slot folder another user can write lets them hold every slot or plant links: refused.
#[test]
fn a_slot_folder_open_to_others_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("open-slots");
    let slots = tmp.path().join(format!("panel-slots-{}", nix_uid()));
    std::fs::create_dir(&slots).unwrap();
    std::fs::set_permissions(&slots, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = holding_judge(&["--lens", "a=Q?", "--harness-cap", "exec=1"])
        .env("XDG_RUNTIME_DIR", tmp.path())
        .run();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        error_line(&out).contains("open to other users"),
        "{}",
        stderr(&out)
    );
}

fn nix_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap_or(0)
}

// ── Nothing is misread ──────────────────────────────────────────────────────

/// A reason with `\r` and `ESC[2K` redrew "breaks" as "holds" on a terminal, and one with a
/// newline printed a PANEL line of its own. Text reports show both escaped.
#[test]
fn a_reason_cannot_redraw_or_forge_a_line_of_the_report() {
    let rec = |judge: &str, verdict: &str, reason: &str| {
        serde_json::json!({
            "type": "verdict", "judge": judge, "lens": judge, "seat": "claude:haiku",
            "harness": "claude", "model": "haiku", "family": "claude",
            "candidate": "sha256:00", "verdict": verdict, "reason": reason, "confidence": 0.7,
            "status": "ok", "attempts": 1, "durationMs": 1, "panelSize": 2, "run": "/tmp/r\u{1b}[8m",
        })
        .to_string()
    };
    let input = format!(
        "{}\n{}\n",
        rec(
            "a\u{9b}2J",
            "breaks",
            "\r\u{1b}[2Ka         holds      fine"
        ),
        rec("b", "holds", "ok\n\nPANEL: unanimous — all 2 say holds.")
    );
    let out = Tool::new("panel-tally").stdin(input).run();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    let panels: Vec<&str> = text.lines().filter(|l| l.starts_with("PANEL")).collect();
    assert_eq!(
        panels,
        ["PANEL: split 1-1 — read the reasons yourself. The disagreement is the finding."]
    );
    assert!(text.contains("\\x0d\\x1b[2Ka"), "{text}");
}

/// The same in a review panel's report and in an error naming a path.
#[test]
fn control_characters_in_reviews_and_errors_are_shown_escaped() {
    let review = serde_json::json!({"type": "review", "reviewer": "alice", "seat": "first",
        "harness": "exec", "candidate": "sha256:00", "stage": "review", "decision": "revise",
        "findings": [{"id": "alice-1", "severity": "block", "evidence": "x\u{1b}[2K\ry",
            "fix": "z\u{7f}"}], "status": "ok"});
    let out = Tool::new("panel-tally")
        .args(["--agree", "1"])
        .stdin(format!("{review}\n"))
        .run();
    let text = stdout(&out);
    assert!(text.contains("x\\x1b[2K\\x0dy"), "{text}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    let out = Command::new(bin("panel-tally"))
        .arg("no\u{1b}[2Jsuch")
        .checked_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        error_line(&out).contains("no\\x1b[2Jsuch"),
        "{}",
        stderr(&out)
    );
}

// ── Bounded work ────────────────────────────────────────────────────────────

/// Peak resident memory (KiB) of `cmd` run to its end, as the kernel counts it for a waited
/// child (its own and its waited descendants' largest).
#[allow(clippy::zombie_processes)] // wait4 reaps it
fn peak_kib(cmd: &mut Command) -> (std::process::ExitStatus, i64) {
    use std::os::unix::process::ExitStatusExt;
    let child = cmd.spawn().unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 reaps the child we just started and fills both.
    let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { nix::libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (std::process::ExitStatus::from_raw(status), usage.ru_maxrss)
}

/// A 30 MB candidate and 10 judges peaked at 1.6 GB: every judge's prompt was built up front
/// and copied four more times per attempt. The candidate is held once, each prompt built when
/// its attempt starts: about candidate × (2 + running judges).
#[test]
fn a_large_candidate_is_held_once_not_once_per_copy() {
    let tmp = TempDir::new("large");
    let candidate = tmp.path().join("large.md");
    let line = "a line of the candidate, long enough to be counted\n";
    std::fs::write(&candidate, line.repeat((16 << 20) / line.len())).unwrap();
    let seat = format!("exec:cat >/dev/null; echo '{HOLDS}'");
    let family = format!("{seat}=x");
    let mut args = vec!["--seat", &seat, "--family", &family];
    let lenses: Vec<String> = (0..8).map(|i| format!("l{i}=Question {i}?")).collect();
    for l in &lenses {
        args.extend(["--lens", l]);
    }
    args.push(candidate.to_str().unwrap());
    let mut cmd = judge(&args);
    cmd.command().stdout(Stdio::null()).stderr(Stdio::null());
    let (status, kib) = peak_kib(cmd.command());
    assert_eq!(status.code(), Some(0));
    let mib = kib / 1024;
    // 16 MiB × (2 + 8 running judges), and as much again for the tool itself and the moments
    // a prompt is built (it was 711 MiB; 179 MiB on a quiet machine, 252 MiB on a loaded one).
    assert!(mib < 16 * 10 * 2, "peak {mib} MiB");
}

/// Under a limit on processes (`ulimit -u 16`, which counts threads) panel-judge panicked
/// ("failed to spawn thread", exit 101) and left judges running. It now runs as many judges at
/// once as the limit holds, and every one answers. Needs root, to run as another user.
#[test]
fn a_limit_on_processes_runs_judges_in_turn_without_a_panic() {
    if !crate::util::another_user(true) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("nproc");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let answer = tmp.path().join("answer.sh");
    std::fs::write(&answer, format!("sleep 0.2; echo '{HOLDS}'\n")).unwrap();
    let seat = format!("exec:sh {}", answer.display());
    let mut script = format!(
        "ulimit -u 16 && exec {} --seat '{seat}' --family '{seat}=x' --timeout 60",
        crate::util::sh_word(&for_nobody(&tmp, &bin("panel-judge")))
    );
    for i in 0..8 {
        script.push_str(&format!(" --lens l{i}=Q{i}?"));
    }
    let candidate = for_nobody(&tmp, &root().join("examples/answer.md"));
    script.push_str(&format!(" {}", crate::util::sh_word(&candidate)));
    let out = run_as_a_user_of_its_own(0, &tmp, &script);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let recs = records(&out);
    assert_eq!(recs.len(), 8);
    assert!(recs.iter().all(|r| r["status"] == "ok"), "{recs:?}");
}

/// Under a limit on processes panel-vote asked every voter at once, each on threads of its own
/// and none capped by the limit: a judge that could not start held the run until its timeout,
/// and the votes came back interrupted. Its voters now run on the launcher's fan-out, as many at
/// once as the limit holds, and every one is asked. Needs root, to run as another user.
#[test]
fn a_limit_on_processes_asks_every_voter_without_a_stall() {
    if !crate::util::another_user(true) {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("nproc-vote");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let answer = tmp.path().join("answer.sh");
    std::fs::write(&answer, "sleep 0.2; echo '{\"votes\": []}'\n").unwrap();
    let fixtures = root().join("tests/fixtures/synthesis");
    let mut reviews = String::new();
    let mut seats = String::new();
    let text = std::fs::read_to_string(fixtures.join("reviews-1.jsonl")).unwrap();
    for (k, line) in text.lines().enumerate() {
        let mut rec: Value = serde_json::from_str(line).unwrap();
        let seat = format!("exec:sh {} {k}", answer.display());
        seats.push_str(&format!(" --seat '{seat}' --family '{seat}=f{k}'"));
        rec["seat"] = Value::from(seat);
        reviews.push_str(&format!("{rec}\n"));
    }
    let merged = Tool::new("panel-merge").stdin(reviews).run();
    assert_eq!(merged.status.code(), Some(0), "{}", stderr(&merged));
    std::fs::write(tmp.path().join("merged.jsonl"), &merged.stdout).unwrap();
    let candidate = for_nobody(&tmp, &fixtures.join("page.md"));
    let script = format!(
        "ulimit -u 16 && exec {} --timeout 60 --candidate {}{seats} < merged.jsonl",
        crate::util::sh_word(&for_nobody(&tmp, &bin("panel-vote"))),
        crate::util::sh_word(&candidate)
    );
    let t = std::time::Instant::now();
    let out = run_as_a_user_of_its_own(1, &tmp, &script);
    let err = stderr(&out);
    assert!(
        !err.contains("panicked") && !err.contains("cannot start"),
        "{err}"
    );
    let votes: Vec<Value> = records(&out)
        .into_iter()
        .filter(|r| r["type"] == "vote")
        .collect();
    assert!(!votes.is_empty(), "{err}");
    // Asked and read (the stand-in's empty votes are unreadable), never left waiting.
    assert!(
        votes
            .iter()
            .all(|v| !["interrupted", "timeout", "cancelled"]
                .contains(&v["status"].as_str().unwrap())),
        "{votes:?}"
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(30), "{err}");
}

/// `exec 7<~/.aws/credentials; panel-judge …`: descriptor 7 reached every judge, and a judge
/// read the caller's variables in `/proc/<panel-judge>/environ`. A judge now gets descriptors
/// 0–2 only, however it runs; confined, it reads no other process's `/proc` entry (DESIGN §8:
/// "other processes' `/proc` entries" are the model's to try, never to reach). Unconfined,
/// panel-judge's environment is closed to the other processes of its user, not to root: run as
/// root, the test runs the panel as nobody, so that the check means the same.
#[test]
fn a_judge_gets_no_descriptor_and_no_environment_of_its_caller() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("inherit");
    // Room for the panel run as nobody: its HOME, TMPDIR and run folder.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let secret = tmp.path().join("secret");
    std::fs::write(&secret, "FDCANARY\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let nobody = crate::util::is_root() && crate::util::another_user(true);
    let (panel_judge, candidate) = (
        for_nobody(&tmp, &bin("panel-judge")),
        for_nobody(&tmp, &root().join("examples/answer.md")),
    );
    // The judge climbs to panel-judge (its supervisor is panel-judge too: the top one).
    let seat = "exec:a=$(cat <&7 2>&1 | tr -cd A-Z); p=$$; t=0; \
        while [ \"$p\" -gt 1 ]; do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = panel-judge ] && t=$p; \
        p=$(cut -d' ' -f4 /proc/$p/stat 2>/dev/null || echo 1); done; \
        e=$(tr '\\0' ' ' < /proc/$t/environ 2>/dev/null | grep -o ENVCANARY | head -1); \
        printf '{\"verdict\":\"holds\",\"reason\":\"fd=%s env=%s t=%s\",\"confidence\":1}' \"$a\" \"$e\" \"$t\"";
    for sandbox in ["off", "auto"] {
        let script = format!(
            "exec 7<{}; exec {} --sandbox {sandbox} --seat \"$SEAT\" --family \"$SEAT=x\" --lens a=Q? {}",
            crate::util::sh_word(&secret),
            crate::util::sh_word(&panel_judge),
            crate::util::sh_word(&candidate)
        );
        let mut cmd = if nobody {
            let mut c = Command::new("setpriv");
            c.args(AS_NOBODY);
            c
        } else {
            Command::new("env")
        };
        let out = cmd
            .args(["sh", "-c", &script])
            .env("SEAT", seat)
            .env("CALLER_SECRET", "ENVCANARY")
            .env("HOME", tmp.path())
            .env("TMPDIR", tmp.path())
            .env("XDG_STATE_HOME", tmp.path().join("state"))
            .env("XDG_CACHE_HOME", tmp.path().join("cache"))
            .current_dir(tmp.path())
            .stdin(Stdio::null())
            .checked_output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let rec = &records(&out)[0];
        let reason = rec["reason"].as_str().unwrap_or_else(|| panic!("{rec}"));
        assert!(reason.starts_with("fd= "), "{sandbox}: {reason}");
        let confined = sandbox == "auto" && crate::util::landlock();
        // Unconfined, the climb found panel-judge: an empty env= means it could not be read.
        assert!(confined || !reason.ends_with(" t=0"), "{sandbox}: {reason}");
        if confined || !crate::util::is_root() || nobody {
            assert!(reason.contains(" env= "), "{sandbox}: {reason}");
        }
        let want = if sandbox == "auto" {
            crate::util::auto_walls()
        } else {
            "off"
        };
        // The walls as the probe found them; the limits after them depend on the caller (a
        // cgroup for root, none for nobody).
        let said = rec["sandbox"].as_str().unwrap_or_default();
        let walls = |s: &str| s.split("; limits: ").next().unwrap_or_default().to_string();
        assert_eq!(walls(said), walls(want), "{said}");
        assert!(said.contains("; limits: "), "{said}");
    }
}
