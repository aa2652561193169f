//! Live progress through a real pseudo-terminal: a launching tool whose standard error is a
//! terminal draws its status line there (judges running and done, elapsed time, tokens and
//! cost), in colour unless `NO_COLOR` is set; with standard error in a file it writes no
//! progress at all; standard output keeps only records either way.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::{TempDir, Tty, bin, on_a_terminal, root, stderr, stdout, with_standins};

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
    // The line is gone before the closing words.
    let (before, _) = shown.rsplit_once("verdicts: ").unwrap();
    let last = before.rfind(" running, ").unwrap();
    assert!(before[last..].contains("\r\x1b[2K"), "{shown:?}");
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
