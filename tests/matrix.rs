//! The fault matrix: every built-in harness row × every fault, each cell a real pipeline
//! `panel-judge … | tee records.jsonl | panel-tally` over a panel of two judges on one seat:
//! judge `a` answers `holds`, judge `b` meets the fault. Each cell asserts the status `b` gets,
//! the pipeline's exit status, that `a` is untouched, that no process is left behind, that the
//! run folder lost nothing it had written, and that every message is one line a person can act on.
//!
//! The README's fault table is rendered from what the cells observed; it must match the README:
//!
//!     UPDATE_GENERATED=1 cargo test --test integration matrix

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use serde_json::Value;

use crate::util::{TempDir, bin, processes_with_env, root, with_standins};

/// The cell's pipeline, run by bash: `$1` the cell's folder, the rest panel-judge's arguments.
/// ACTION says what happens mid-panel: INT or TERM to panel-judge once judge `b` hangs and
/// `a`'s record is out; `fill` the run folder's disk once `a`'s record is out, then let `b`
/// answer (it waits for the file `go`). DISK is a folder to mount a small tmpfs on (in a private mount namespace,
/// see [`run_cell`]); FULL fills it before the start.
const DRIVER: &str = r#"
w=$1; shift
cd "$w" || exit 90
if [ -n "${DISK:-}" ]; then
  mount -t tmpfs -o size=4m tmpfs "$DISK" || exit 91
  if [ -n "${FULL:-}" ]; then head -c 8m /dev/zero > "$DISK/filler" 2>/dev/null; fi
fi
(
  set -o pipefail
  sh -c 'echo $$ > judge.pid; exec "$@"' sh "$PANEL_JUDGE" "$@" 2> judge.err |
    tee records.jsonl | "$PANEL_TALLY" > tally.txt 2> tally.err
  echo "$? ${PIPESTATUS[*]}" > codes
) &
pipeline=$!
waited=0
case ${ACTION:-} in
  INT|TERM)
    # b is hanging and a's record is out (a must be untouched by the signal).
    until { grep -q '"mode":"hang"' log/calls.jsonl && [ -s records.jsonl ]; } 2>/dev/null ||
      [ $waited -ge 1000 ]; do
      sleep 0.02; waited=$((waited + 1))
    done
    sleep 0.1
    kill -"$ACTION" "$(cat judge.pid)" ;;
  fill)
    until [ -s records.jsonl ] || [ $waited -ge 1000 ]; do sleep 0.02; waited=$((waited + 1)); done
    head -c 8m /dev/zero > "$DISK/filler" 2>/dev/null
    touch go ;;
esac
wait $pipeline
if [ -n "${DISK:-}" ] && [ -d "$DISK/run" ]; then cp -a "$DISK/run" kept-run; fi
exit 0
"#;

/// A fault: its column title, the stand-in mode judge `b` runs in, and what happens around it.
struct Fault {
    title: &'static str,
    mode: &'static str,
    action: Option<&'static str>,
    disk: Disk,
    timeout: &'static str,
}

#[derive(Clone, Copy, PartialEq)]
enum Disk {
    Plain,
    /// The run folder's disk is full before the panel starts.
    Full,
    /// The run folder's disk fills up once judge `a` has answered.
    Fills,
    /// The run folder cannot be created (its parent is a file).
    Uncreatable,
}

const fn fault(title: &'static str, mode: &'static str) -> Fault {
    Fault {
        title,
        mode,
        action: None,
        disk: Disk::Plain,
        timeout: "60",
    }
}

const FAULTS: &[Fault] = &[
    fault("no answer", "empty"),
    fault("prose", "prose"),
    fault("fenced", "fence"),
    fault("wrong schema", "wrongschema"),
    fault("outside the contract", "invalid"),
    fault("error, exit 0", "error0"),
    fault("valid, exit 1", "validfail"),
    Fault {
        timeout: "5",
        ..fault("hang", "hang")
    },
    Fault {
        timeout: "5",
        ..fault("grandchild holds the pipe", "grandchild")
    },
    fault("100 MiB out", "flood"),
    fault("usage limit", "usage-limit"),
    Fault {
        timeout: "5.5",
        ..fault("rate limit", "rate-limit")
    },
    fault("killed by a signal", "killed"),
    Fault {
        action: Some("INT"),
        ..fault("SIGINT mid-panel", "hang")
    },
    Fault {
        action: Some("TERM"),
        ..fault("SIGTERM mid-panel", "hang")
    },
    Fault {
        disk: Disk::Full,
        ..fault("disk full", "holds")
    },
    Fault {
        disk: Disk::Fills,
        action: Some("fill"),
        ..fault("disk fills mid-panel", "waitfor:{cell}/go")
    },
    Fault {
        disk: Disk::Uncreatable,
        ..fault("no run folder", "holds")
    },
];

/// A harness row and the seat that runs it; `None` for the replay row, which launches nothing.
const ROWS: &[(&str, Option<&str>)] = &[
    ("claude", Some("claude:haiku")),
    ("codex", Some("codex:gpt-5")),
    ("copilot", Some("copilot:gpt-5")),
    ("opencode", Some("opencode:mock/mock-model")),
    ("gemini", Some("gemini:gemini-2.5-flash")),
    ("qwen", Some("qwen:mock-model")),
    ("kimi", Some("kimi:mock")),
    ("cursor", Some("cursor:gpt-5")),
    ("agy", Some("agy:gemini-3-pro")),
    ("llm", Some("llm:gpt-4o-mini")),
    ("exec", Some("exec:plain")),
    ("replay", None),
];

const HOLDS: &str = r#"{"verdict":"holds","reason":"the claim is right","confidence":0.8}"#;

/// What a replayed judge `b` answers for a fault about the answer itself; `None` for faults that
/// need a process (replay launches none).
fn replayed(mode: &str) -> Option<Value> {
    let obj = |v: &str| Value::String(v.to_string());
    Some(match mode {
        "empty" => obj(""),
        "prose" => obj("The claim holds: the function checks for an empty list first."),
        "fence" => obj(&format!("```json\n{HOLDS}\n```")),
        "wrongschema" => serde_json::json!({"answer": "yes"}),
        "invalid" => serde_json::json!({"verdict": "maybe", "reason": "r", "confidence": 0.5}),
        "holds" => serde_json::from_str(HOLDS).unwrap(),
        _ => return None,
    })
}

/// What one cell observed.
struct Cell {
    /// Judge `b`'s status, or "none" when no judge ran.
    status: String,
    /// The pipeline's exit status under `set -o pipefail`.
    pipeline: i32,
}

impl Cell {
    fn render(&self) -> String {
        format!("{} {}", self.status, self.pipeline)
    }
}

/// Runs one cell and checks what must hold in every cell; failures are pushed to `bad`.
fn run_cell(row: &str, seat: Option<&str>, f: &Fault, bad: &Mutex<Vec<String>>) -> Option<Cell> {
    let fail = |what: String| {
        bad.lock()
            .unwrap()
            .push(format!("{row} × {}: {what}", f.title))
    };
    let answers;
    let seat = match seat {
        Some(s) => s.to_string(),
        None => {
            let b = replayed(f.mode)?;
            answers =
                serde_json::json!({"a": serde_json::from_str::<Value>(HOLDS).unwrap(), "b": b});
            format!("replay:{answers}")
        }
    };
    let tmp = TempDir::new(&format!("matrix-{row}"));
    let w = tmp.path();
    for d in ["log", "home", "tmp", "disk"] {
        std::fs::create_dir_all(w.join(d)).unwrap();
    }
    let seat = match seat.strip_prefix("replay:") {
        Some(json) => {
            std::fs::write(w.join("answers.json"), json).unwrap();
            format!("replay:{}", w.join("answers.json").display())
        }
        None => seat,
    };
    let run = match f.disk {
        Disk::Plain => w.join("run"),
        Disk::Full | Disk::Fills => w.join("disk/run"),
        Disk::Uncreatable => {
            std::fs::write(w.join("afile"), "").unwrap();
            w.join("afile/run")
        }
    };
    let judge_args: Vec<String> = [
        "--seat",
        &seat,
        "--lens",
        "a=Is the first claim of the answer right?",
        "--lens",
        "b=FAULTY: is the second claim of the answer right?",
        "--timeout",
        f.timeout,
        "--out",
        run.to_str().unwrap(),
        root().join("examples/answer.md").to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let in_namespace = matches!(f.disk, Disk::Full | Disk::Fills);
    let mut cmd = if in_namespace {
        // A private mount namespace (root inside a user namespace when not root) for the tmpfs.
        let mut c = Command::new("unshare");
        c.args(["--user", "--map-root-user", "--mount", "bash", "-c", DRIVER]);
        c
    } else {
        let mut c = Command::new("bash");
        c.args(["-c", DRIVER]);
        c
    };
    with_standins(&mut cmd, &w.join("log"), &[])
        .arg("driver")
        .arg(w)
        .args(&judge_args)
        .env("HOME", w.join("home"))
        .env("TMPDIR", w.join("tmp"))
        .env("PANEL_JUDGE", bin("panel-judge"))
        .env("PANEL_TALLY", bin("panel-tally"))
        .env("STANDIN_MODE", "holds")
        .env("STANDIN_VERDICT", "holds")
        .env(
            "STANDIN_RULES",
            format!("FAULTY=>{}", f.mode.replace("{cell}", w.to_str().unwrap())),
        )
        .env_remove("PANEL_ROUND");
    if let Some(a) = f.action {
        cmd.env("ACTION", a);
    }
    if in_namespace {
        cmd.env("DISK", w.join("disk"));
        if f.disk == Disk::Full {
            cmd.env("FULL", "1");
        }
    }
    let t0 = std::time::Instant::now();
    let out = cmd.output().unwrap();
    eprintln!(
        "cell {row} × {}: {:.1}s",
        f.title,
        t0.elapsed().as_secs_f64()
    );
    if !out.status.success() {
        fail(format!(
            "the cell's driver failed ({:?}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
        return None;
    }
    let read = |name: &str| std::fs::read_to_string(w.join(name)).unwrap_or_default();
    let codes: Vec<i32> = read("codes")
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect();
    let [pipeline, judge_code, _tee, tally_code] = codes[..] else {
        fail(format!("no exit statuses: {:?}", read("codes")));
        return None;
    };
    let records: Vec<Value> = read("records.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{row}: {e}: {l}")))
        .collect();
    let by = |name: &str| records.iter().find(|r| r["judge"] == name);

    // What panel-judge says on stderr: one line each, ours, no panic.
    let judge_err = read("judge.err");
    for line in judge_err.lines() {
        if !(line.starts_with("panel-judge: ") || line.starts_with("verdicts: ")) {
            fail(format!("a stray line on stderr: {line:?}"));
        }
    }
    if judge_err.contains("panicked") || read("tally.err").contains("panicked") {
        fail(format!("a panic: {judge_err}"));
    }
    let last_err = judge_err.lines().last().unwrap_or_default().to_string();

    // The status of `b`, and `a` untouched.
    let status = match f.disk {
        Disk::Full | Disk::Uncreatable => {
            if !records.is_empty() || !read("log/calls.jsonl").is_empty() {
                fail("a judge ran without a run folder".into());
            }
            let why = if f.disk == Disk::Full {
                "No space left on device"
            } else {
                "Not a directory"
            };
            if !(last_err.contains(why) && last_err.contains(run.to_str().unwrap())) {
                fail(format!(
                    "the message does not name the folder and {why:?}: {last_err:?}"
                ));
            }
            "none".to_string()
        }
        _ => {
            match by("a") {
                Some(a) if a["status"] == "ok" && a["verdict"] == "holds" => {}
                other => fail(format!("judge a was touched: {other:?}")),
            }
            let Some(b) = by("b") else {
                fail(format!("no record for b: {records:?}"));
                return None;
            };
            if b["status"] == "ok" {
                if b["verdict"] != "holds" {
                    fail(format!("b's verdict is not the one it gave: {b}"));
                }
            } else {
                if !b["verdict"].is_null() {
                    fail(format!("an abstention with a verdict: {b}"));
                }
                let cause = b["cause"].as_str().unwrap_or_default();
                if cause.is_empty() || cause.chars().any(char::is_control) || cause.len() > 400 {
                    fail(format!(
                        "b's cause is not one line a person can act on: {cause:?}"
                    ));
                }
            }
            b["status"].as_str().unwrap_or("?").to_string()
        }
    };

    // The exit statuses: panel-judge's own, and the pipeline's (pipefail: the last non-zero).
    let want_judge = match (f.action, f.disk) {
        (Some("INT"), _) => 130,
        (Some("TERM"), _) => 143,
        (_, Disk::Plain) => 0,
        _ => 2,
    };
    if judge_code != want_judge {
        fail(format!(
            "panel-judge exited {judge_code}, not {want_judge}: {judge_err}"
        ));
    }
    let want_tally = match status.as_str() {
        "none" => 2,
        "ok" => 0,
        _ => 3,
    };
    if tally_code != want_tally {
        fail(format!("panel-tally exited {tally_code}, not {want_tally}"));
    }
    let want_pipeline = if want_tally != 0 {
        want_tally
    } else {
        want_judge
    };
    if pipeline != want_pipeline {
        fail(format!(
            "the pipeline exited {pipeline}, not {want_pipeline}"
        ));
    }
    if matches!(f.disk, Disk::Fills) && !last_err.contains("No space left on device") {
        fail(format!("a full run folder went unreported: {last_err:?}"));
    }

    // No process left behind: nothing still running carries this cell's STANDIN_LOG.
    let marker = format!("STANDIN_LOG={}", w.join("log").display());
    let left = processes_with_env(&marker);
    if !left.is_empty() {
        let cmds: Vec<String> = left
            .iter()
            .map(|p| std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default())
            .collect();
        fail(format!("pids {left:?} outlived the panel: {cmds:?}"));
    }
    let left: Vec<_> = std::fs::read_dir(w.join("tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    if !left.is_empty() {
        fail(format!("private folders left behind: {left:?}"));
    }

    // Nothing already written lost: the ledger is what went to stdout (a prefix of it when the
    // disk filled), each record.json is its record, each attempt kept its output.
    let kept = match f.disk {
        Disk::Fills => w.join("kept-run"),
        _ => run.clone(),
    };
    if status != "none" {
        check_kept(
            &kept,
            &read("records.jsonl"),
            f.disk == Disk::Fills,
            seat.starts_with("replay:"),
        )
        .unwrap_or_else(fail);
    }
    Some(Cell { status, pipeline })
}

/// The run folder holds, whole, what it was given; `prefix` when its disk filled mid-run.
fn check_kept(run: &Path, stdout: &str, prefix: bool, replay: bool) -> Result<(), String> {
    let ledger = std::fs::read_to_string(run.join("verdicts.jsonl"))
        .map_err(|e| format!("no ledger: {e}"))?;
    let whole = if prefix {
        stdout.starts_with(&ledger)
    } else {
        ledger == stdout
    };
    if !whole || ledger.is_empty() || !ledger.ends_with('\n') {
        return Err(format!(
            "the ledger is not what went to stdout:\n{ledger}\n---\n{stdout}"
        ));
    }
    let seal = panel::records::candidate::seal(
        &std::fs::read(run.join("candidate")).map_err(|e| e.to_string())?,
    );
    for line in ledger.lines() {
        let rec: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if rec["candidate"] != seal {
            return Err(format!("the kept candidate is not the sealed one: {line}"));
        }
        let name = rec["judge"].as_str().unwrap();
        let judge = run.join(name);
        let kept = std::fs::read_to_string(judge.join("record.json"));
        // Once the disk is full, what could not be kept is missing, never torn.
        if prefix && name == "b" {
            if kept.is_ok_and(|k| k != format!("{line}\n")) {
                return Err(format!("{name}/record.json is torn"));
            }
            continue;
        }
        if kept.unwrap_or_default() != format!("{line}\n") {
            return Err(format!("{name}/record.json is not its record"));
        }
        if !judge.join("prompt.txt").is_file() {
            return Err(format!("{name}/prompt.txt is missing"));
        }
        for n in 1..=rec["attempts"].as_u64().unwrap_or(0) {
            let attempt = judge.join(format!("attempt-{n}"));
            let want: &[&str] = if replay {
                &["stdout", "exit.json"]
            } else {
                &["argv.json", "stdout", "stderr", "exit.json"]
            };
            for file in want {
                if !attempt.join(file).is_file() {
                    return Err(format!("{name}/attempt-{n}/{file} is missing"));
                }
            }
        }
    }
    Ok(())
}

/// The README's fault table, rows the harnesses and columns the faults.
fn table(cells: &[Vec<Option<Cell>>]) -> String {
    let mut out = String::from("| harness |");
    for f in FAULTS {
        out.push_str(&format!(" {} |", f.title));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(FAULTS.len()));
    out.push('\n');
    for ((row, _), cells) in ROWS.iter().zip(cells) {
        out.push_str(&format!("| {row} |"));
        for c in cells {
            let text = c.as_ref().map_or("n/a".to_string(), Cell::render);
            out.push_str(&format!(" {text} |"));
        }
        out.push('\n');
    }
    out
}

const BEGIN: &str = "<!-- fault matrix: begin (tests/matrix.rs renders it) -->\n";
const END: &str = "<!-- fault matrix: end -->";

#[test]
fn every_harness_row_meets_every_fault_honestly() {
    let probe = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .output();
    assert!(
        probe.is_ok_and(|o| o.status.success()),
        "the disk columns need a private mount namespace: `unshare --user --map-root-user --mount true` fails here"
    );
    let bad = Mutex::new(Vec::new());
    // A few rows at a time: the cells mostly wait, but their stand-ins need the CPU on time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Vec<Option<Cell>>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&(row, seat)) = ROWS.get(i) else {
                        break;
                    };
                    let cells = FAULTS
                        .iter()
                        .map(|f| run_cell(row, seat, f, &bad))
                        .collect();
                    done.lock().unwrap().push((i, cells));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    let cells: Vec<Vec<Option<Cell>>> = done.into_iter().map(|(_, c)| c).collect();
    let bad = bad.into_inner().unwrap();
    assert!(
        bad.is_empty(),
        "{} cells failed:\n{}",
        bad.len(),
        bad.join("\n")
    );

    crate::util::readme_section(BEGIN, END, &table(&cells), "matrix");
}
