//! Live progress through a real pseudo-terminal: a launching tool whose standard error is a
//! terminal draws its status line there (judges running and done, elapsed time, tokens and
//! cost), in colour unless `NO_COLOR` is set; with standard error in a file it writes no
//! progress at all; standard output keeps only records either way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{
    TempDir, Tty, bin, on_a_terminal, on_a_terminal_while, processes_with_env, root, stderr,
    stdout, wait_until, with_standins,
};

fn panel_judge(tmp: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin("panel-judge"));
    cmd.args(args);
    with_standins(&mut cmd, &tmp.join("log"), &[])
        .env("STANDIN_MODE", "sleep:1.2")
        .env("TMPDIR", tmp)
        .env_remove("NO_COLOR");
    cmd
}

const JUDGE: [&str; 6] = [
    "--seat",
    "claude:haiku",
    "--seat",
    "codex:gpt-5",
    "--cross",
    "examples/answer.md",
];

#[test]
fn panel_judge_draws_its_status_line_on_a_terminal() {
    let t = TempDir::new("progress-tty");
    let (out, shown) = on_a_terminal(
        panel_judge(t.path(), &JUDGE).current_dir(root()),
        Tty::Stderr,
    );
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // Six judges, drawn as they start, run and end; the stand-in claude reports its cost.
    for want in [
        "panel-judge: \x1b[33m6\x1b[0m running, \x1b[32m0/6\x1b[0m done, ",
        "\x1b[32m5/6\x1b[0m done, ",
        " tokens in, ",
        ", $0.0",
        "panel-judge: correctness@claude-haiku breaks (",
    ] {
        assert!(shown.contains(want), "{want:?} not in {shown:?}");
    }
    // A judge's ending line starts on a line of its own: the status line is erased first, or an
    // ending line just before it ended its line (two judges ending together).
    for (at, _) in shown.match_indices(" breaks (") {
        let start = shown[..at].rfind("panel-judge: ").unwrap();
        let before = &shown[..start];
        assert!(
            before.ends_with("\r\x1b[2K") || before.ends_with("\r\n"),
            "{shown:?}"
        );
    }
    assert!(shown.contains("1s,") || shown.contains("2s,"), "{shown:?}");
    // The line is gone at the end.
    let last = shown.rfind(" running, ").unwrap();
    assert!(shown[last..].contains("\r\x1b[2K"), "{shown:?}");
    // Issue 45: "`verdicts:` is printed twice in a pipeline". Its records going down a pipe,
    // panel-judge leaves the run folder to the tool that reports them on the same screen.
    assert!(!shown.contains("verdicts: "), "{shown:?}");
    assert!(!stdout(&out).contains("running"));
    assert_eq!(stdout(&out).lines().count(), 6);

    let (out, shown) = on_a_terminal(
        panel_judge(t.path(), &JUDGE)
            .current_dir(root())
            .env("NO_COLOR", "1"),
        Tty::Stderr,
    );
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("panel-judge: 6 running, 0/6 done, "),
        "{shown:?}"
    );
    assert!(
        !shown.contains("\x1b[3"),
        "colour under NO_COLOR: {shown:?}"
    );
}

#[test]
fn no_progress_when_standard_error_is_not_a_terminal() {
    let t = TempDir::new("progress-file");
    let err = t.path().join("stderr");
    let out = panel_judge(t.path(), &JUDGE)
        .current_dir(root())
        .stdin(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let written = std::fs::read_to_string(&err).unwrap();
    assert!(written.starts_with("verdicts: "), "{written:?}");
    assert_eq!(written.lines().count(), 1, "{written:?}");
    assert!(!written.contains('\x1b') && !written.contains('\r'));
}

#[test]
fn panel_merge_with_a_seat_shows_its_judge_running() {
    let t = TempDir::new("progress-merge");
    let reviews = root().join("tests/fixtures/synthesis/reviews-1.jsonl");
    let mut cmd = Command::new(bin("panel-merge"));
    cmd.args(["--seat", "exec:sleep 1.2", "--retries", "0"])
        .arg(&reviews)
        .env("TMPDIR", t.path())
        .env_remove("NO_COLOR");
    let (out, shown) = on_a_terminal(&mut cmd, Tty::Stderr);
    assert!(
        shown.contains("panel-merge: \x1b[33m1\x1b[0m running, \x1b[32m0/1\x1b[0m done, "),
        "{shown:?}\n{}",
        stderr(&out)
    );
}

/// A fleet over the candidates `names` in `tmp`/c (written if missing), two panels at once, each
/// of three stand-in judges (`mode`); every process of it carries the marker [`fleet_marker`].
fn panel_fleet(tmp: &Path, names: &[&str], mode: &str, more: &[&str]) -> Command {
    let log = tmp.join("log");
    std::fs::create_dir_all(tmp.join("c")).unwrap();
    for n in names {
        let c = tmp.join("c").join(n);
        if !c.exists() {
            std::fs::write(c, format!("Candidate {n}.\n")).unwrap();
        }
    }
    let mut cmd = Command::new(root().join("bin/panel-fleet"));
    let bins: [PathBuf; 1] = [bin("panel-judge").parent().unwrap().to_path_buf()];
    with_standins(&mut cmd, &log, &bins)
        .current_dir(tmp)
        .args(["-o", "out", "-j", "2"])
        .args(more)
        .args(names.iter().map(|n| format!("c/{n}")))
        .args(["--", "--seat", "claude:haiku", "--timeout", "120"])
        .env("STANDIN_MODE", mode)
        .env("PANEL_FLEET_TEST_MARK", format!("{}/", tmp.display()));
    cmd
}

fn fleet_marker(tmp: &Path) -> String {
    // Ended by a slash: no other test's folder starts so.
    format!("PANEL_FLEET_TEST_MARK={}/", tmp.display())
}

/// Once the fleet (`pid`) has exited, nothing of it is left (its status line's drawing loop,
/// its naps, parallel, the panels): checked before the terminal is read to its end, which
/// waits for every holder of it. What is left is killed, and fails the test.
fn nothing_left(tmp: &Path, pid: u32, case: &str) {
    assert!(
        wait_until(Duration::from_secs(60), || !crate::util::alive(pid)),
        "{case}: the fleet did not end"
    );
    let left = || processes_with_env(&fleet_marker(tmp));
    wait_until(Duration::from_secs(5), || left().is_empty());
    let pids = left();
    let what: Vec<String> = pids
        .iter()
        .map(|p| std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default())
        .collect();
    for p in &pids {
        let _ = Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .status();
    }
    assert!(pids.is_empty(), "{case}: left running: {what:?}");
}

/// The status line's last drawing before `next` is erased (`\r\e[K`) before it (other tools'
/// lines, panel-tally's, may come between).
fn erased_before(shown: &str, next: &str) {
    let at = shown
        .rfind(next)
        .unwrap_or_else(|| panic!("{next:?} not in {shown:?}"));
    let drawn = shown[..at]
        .rfind("panels done")
        .expect("a status line before it");
    assert!(
        shown[drawn..at].contains("\r\x1b[K"),
        "not erased before {next:?}: {shown:?}"
    );
}

/// Issue 25: "panel-fleet progress on a terminal (panels done of total, judges running, time
/// left)". One line on standard error, redrawn in place about once a second; the panels a
/// rerun skips as decided count as done from the start; the line is erased before the fleet
/// ends, and nothing of its drawing is left running.
#[test]
fn panel_fleet_draws_its_status_line_on_a_terminal() {
    crate::util::need("parallel");
    let t = TempDir::new("progress-fleet");
    let names = ["1.md", "2.md", "3.md"];
    let (out, shown) = on_a_terminal_while(
        &mut panel_fleet(t.path(), &names, "sleep:2", &[]),
        Tty::Stderr,
        |pid| nothing_left(t.path(), pid, "after a fleet that ended"),
    );
    // The stand-in judges say breaks: the tally's status.
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.starts_with("panel-fleet: 3 panels to run, 0 already decided\r\n"),
        "{shown:?}"
    );
    for want in [
        "\r\x1b[Kpanel-fleet: 0 of 3 panels done, ",
        " of 3 panels done, ",
        " judges running",
        "\r\x1b[Kpanel-fleet: 2 of 3 panels done, ",
    ] {
        assert!(shown.contains(want), "{want:?} not in {shown:?}");
    }
    // Judges are seen running: the first two panels' three each, at most.
    assert!(
        (1..=6).any(|n| shown.contains(&format!(" {n} judges running"))),
        "{shown:?}"
    );
    // The time left once a panel is done, never before.
    let first_done = shown.find("2 of 3 panels done").unwrap();
    assert!(!shown[..first_done].contains(" left"), "{shown:?}");
    assert!(
        shown[first_done..].contains("judges running, about "),
        "{shown:?}"
    );
    assert!(shown.contains("s left"), "{shown:?}");
    // Erased at the end: the last thing shown.
    assert!(shown.ends_with("\r\x1b[K"), "{shown:?}");
    assert!(!stdout(&out).contains("panels done"));
    assert_eq!(stdout(&out).lines().count(), 4, "{}", stdout(&out));

    // A rerun with one more candidate: the three decided count as done from the start.
    let names = ["1.md", "2.md", "3.md", "4.md"];
    let (out, shown) = on_a_terminal_while(
        &mut panel_fleet(t.path(), &names, "sleep:1", &[]),
        Tty::Stderr,
        |pid| nothing_left(t.path(), pid, "after a rerun"),
    );
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("\r\x1b[Kpanel-fleet: 3 of 4 panels done, "),
        "{shown:?}"
    );
    assert!(shown.ends_with("\r\x1b[K"), "{shown:?}");

    // A panel that cannot run: its line (shown by parallel when it ends) starts by erasing
    // the status line, and the fleet's closing line comes after it is erased.
    let t = TempDir::new("progress-fleet-error");
    let (out, shown) = on_a_terminal_while(
        panel_fleet(t.path(), &names[..1], "sleep:1", &[]).arg("--no-such-option"),
        Tty::Stderr,
        |pid| nothing_left(t.path(), pid, "after a fleet whose panel failed"),
    );
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("\r\x1b[Kpanel-fleet: c/1.md: panel-judge exited 2: "),
        "{shown:?}"
    );
    erased_before(&shown, "panel-fleet: 1 panels could not run");
}

/// With standard error in a file nothing of the status line is written, with --no-progress or
/// without: the fleet's own lines, byte for byte.
#[test]
fn panel_fleet_draws_nothing_when_standard_error_is_not_a_terminal() {
    crate::util::need("parallel");
    for more in [&[][..], &["--no-progress"][..]] {
        let t = TempDir::new("progress-fleet-file");
        let err = t.path().join("stderr");
        let out = panel_fleet(t.path(), &["1.md", "2.md", "3.md"], "sleep:1", more)
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .output()
            .unwrap();
        let written = std::fs::read_to_string(&err).unwrap();
        assert_eq!(out.status.code(), Some(1), "{more:?}: {written}");
        assert_eq!(
            written, "panel-fleet: 3 panels to run, 0 already decided\n",
            "{more:?}"
        );
        assert_eq!(stdout(&out).lines().count(), 4, "{more:?}");
    }
    // A PANEL_FLEET_DRAWING left in the environment (a fleet run from a fleet's panel) draws
    // nothing either: a panel's error line starts with no erasing.
    let t = TempDir::new("progress-fleet-inherited");
    let err = t.path().join("stderr");
    let out = panel_fleet(t.path(), &["1.md"], "sleep:0", &[])
        .arg("--no-such-option")
        .env("PANEL_FLEET_DRAWING", "1")
        .stdin(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .output()
        .unwrap();
    let written = std::fs::read_to_string(&err).unwrap();
    assert_eq!(out.status.code(), Some(2), "{written}");
    assert!(
        written.contains("\npanel-fleet: c/1.md: panel-judge exited 2: "),
        "{written:?}"
    );
    assert!(!written.contains('\x1b'), "{written:?}");
}

/// `--no-progress`: on a terminal too, nothing is drawn.
#[test]
fn panel_fleet_no_progress_draws_nothing_on_a_terminal() {
    crate::util::need("parallel");
    let t = TempDir::new("progress-fleet-off");
    let (out, shown) = on_a_terminal(
        &mut panel_fleet(
            t.path(),
            &["1.md", "2.md", "3.md"],
            "sleep:1",
            &["--no-progress"],
        ),
        Tty::Stderr,
    );
    assert_eq!(out.status.code(), Some(1), "{shown}\n{}", stderr(&out));
    assert_eq!(shown, "panel-fleet: 3 panels to run, 0 already decided\r\n");
    assert_eq!(stdout(&out).lines().count(), 4);
}

/// SIGINT to a fleet drawing its line: the line is erased before the fleet's last words, it
/// stops as it did (130, at once), and its drawing loop is gone with it.
#[test]
fn panel_fleet_stopped_by_a_signal_erases_its_line_and_leaves_nothing() {
    crate::util::need("parallel");
    let t = TempDir::new("progress-fleet-stop");
    let log = t.path().join("log");
    let calls = || {
        std::fs::read_to_string(log.join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let mut cmd = panel_fleet(t.path(), &["1.md", "2.md", "3.md"], "hang", &[]);
    let mut stopped_in = Duration::ZERO;
    let (out, shown) = on_a_terminal_while(&mut cmd, Tty::Stderr, |pid| {
        assert!(
            wait_until(Duration::from_secs(60), || calls() >= 6),
            "the first two panels' judges did not start"
        );
        // A drawing or two with the judges running.
        std::thread::sleep(Duration::from_millis(2500));
        // The marker finds the fleet's processes (so that none found later means none left).
        assert!(
            processes_with_env(&fleet_marker(t.path())).contains(&pid),
            "the marker does not find the fleet"
        );
        let start = std::time::Instant::now();
        crate::util::kill(pid, "INT");
        let gone = || !crate::util::alive(pid);
        wait_until(Duration::from_secs(30), gone);
        stopped_in = start.elapsed();
        nothing_left(t.path(), pid, "after SIGINT");
    });
    assert_eq!(out.status.code(), Some(130), "{shown}");
    assert!(stopped_in < Duration::from_secs(30), "{stopped_in:?}");
    assert!(
        shown.contains("panel-fleet: 0 of 3 panels done, 6 judges running"),
        "{shown:?}"
    );
    erased_before(&shown, "panel-fleet: stopped by a signal");
}

/// Issue 25's progress across machines: a panel on another machine (`-S`, through a real
/// sshd that passes on none of the fleet's environment) knows the fleet draws, so its error
/// line, brought back by parallel, erases the status line first. Without the fleet sending
/// PANEL_FLEET_DRAWING with each panel (`parallel --env`), the line came over the status line.
#[test]
fn a_panel_on_another_machine_erases_the_status_line_before_its_error() {
    crate::util::need("parallel");
    crate::util::need("rsync");
    const GROUP: &str = "ssh fleet";
    let t = TempDir::new("progress-ssh");
    let (local, remote) = (t.path().join("local"), t.path().join("remote-home"));
    std::fs::create_dir_all(local.join("c")).unwrap();
    std::fs::create_dir_all(&remote).unwrap();
    let bins = bin("panel-judge").parent().unwrap().to_path_buf();
    let remote_path = crate::sshd::remote_path(&bins);
    let sshd = match crate::sshd::start(&t.path().join("sshd"), &remote, &remote_path) {
        Ok(sshd) => {
            crate::util::ran(GROUP);
            sshd
        }
        Err(why) => {
            // The stand-in ssh keeps the client's environment: it could not tell.
            crate::util::skipped(GROUP, &why, &format!("progress over ssh: no sshd: {why}"));
            return;
        }
    };
    std::fs::write(local.join("c/1.md"), "Candidate 1.\n").unwrap();
    let mut cmd = Command::new(root().join("bin/panel-fleet"));
    with_standins(&mut cmd, &t.path().join("log"), &[sshd.bin.clone(), bins])
        .current_dir(&local)
        .args(["-o", "out", "-j", "1", "-S", "fakehost", "c/1.md"])
        .args(["--", "--seat", "claude:haiku", "--no-such-option"])
        .env("FAKE_SSH_LOG", t.path().join("ssh.log"))
        .env("PANEL_FLEET_TEST_MARK", format!("{}/", t.path().display()));
    let (out, shown) = on_a_terminal_while(&mut cmd, Tty::Stderr, |pid| {
        nothing_left(t.path(), pid, "after a fleet over ssh")
    });
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("\r\x1b[Kpanel-fleet: c/1.md: panel-judge exited 2: "),
        "{shown:?}"
    );
    erased_before(&shown, "panel-fleet: 1 panels could not run");
}
