//! The fault matrix: every built-in harness row × every fault, each cell a real pipeline
//! `panel-judge … | tee records.jsonl | panel-tally` over a panel of two judges on one seat:
//! judge `a` answers `holds`, judge `b` meets the fault. Each cell is a test of its own,
//! `matrix::ROW::FAULT` (`cargo test --test integration matrix::claude::hang`), and asserts the
//! status `b` gets and the exit statuses that [`FAULTS`] expect of it, that `a` is untouched,
//! that no process is left behind, that the run folder lost nothing it had written, and that
//! every message is one line a person can act on. The disk cells need a private mount
//! namespace; where user namespaces are forbidden they skip, say why and record it in the
//! tests' ledger (`scripts/test-summary`).
//!
//! The fault table in docs/testing.md is rendered from the expectations in [`FAULTS`]; it must match the
//! docs/testing.md:
//!
//!     UPDATE_GENERATED=1 cargo test --test integration matrix::readme

use crate::util::Checked;
use std::path::Path;
use std::process::Command;
use std::sync::{Condvar, Mutex, OnceLock};

use serde_json::Value;

use crate::util::{TempDir, bin, processes_with_env, root, with_standins};

/// The cell's pipeline, run by bash: `$1` the cell's folder, the rest panel-judge's arguments.
/// ACTION says what happens mid-panel: a signal (INT, TERM, HUP, KILL) to panel-judge once judge `b` hangs and
/// `a`'s record is out; `fill` the run folder's disk once `a`'s record is out, then let `b`
/// answer (it waits for the file `signal/go`, in a folder the judges are granted). DISK is a folder to mount a small tmpfs on (in a private mount namespace,
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
  sh -c 'echo $$ > judge.pid; if [ -n "${NOFILE:-}" ]; then ulimit -n "$NOFILE"; fi; exec "$@"' \
    sh "$PANEL_JUDGE" "$@" 2> judge.err |
    tee records.jsonl | "$PANEL_TALLY" > tally.txt 2> tally.err
  echo "$? ${PIPESTATUS[*]}" > codes
) &
pipeline=$!
waited=0
case ${ACTION:-} in
  INT|TERM|HUP|KILL)
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
    touch signal/go ;;
esac
wait $pipeline
if [ -n "${DISK:-}" ] && [ -d "$DISK/run" ]; then cp -a "$DISK/run" kept-run; fi
exit 0
"#;

/// A fault: the name of its cells' tests, its column title, the stand-in mode judge `b` runs
/// in, what happens around it, and what every row must observe.
struct Fault {
    /// Each row's cell is the test `matrix::ROW::ID`.
    id: &'static str,
    title: &'static str,
    mode: &'static str,
    action: Option<&'static str>,
    disk: Disk,
    timeout: &'static str,
    /// panel-judge's limit on open files (`ulimit -n`), when the fault is a shortage of them.
    nofile: Option<&'static str>,
    /// panel-judge's exit status, in every row.
    judge: i32,
    /// What the cell shows in the table of docs/testing.md, in every row but those of `except`: `b`'s
    /// status (`none` when no judge was started) and the pipeline's exit status.
    expect: &'static str,
    /// The rows whose cell differs, and that cell; `n/a` where the fault cannot be played.
    except: &'static [(&'static str, &'static str)],
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

const fn fault(
    id: &'static str,
    title: &'static str,
    mode: &'static str,
    expect: &'static str,
) -> Fault {
    Fault {
        id,
        title,
        mode,
        action: None,
        disk: Disk::Plain,
        timeout: "60",
        nofile: None,
        judge: 0,
        expect,
        except: &[],
    }
}

/// The replay row launches nothing, so only the faults of an answer apply to it.
const NO_PROCESS: &[(&str, &str)] = &[("replay", "n/a")];

/// qwen under `--json-schema` fails with its own error (exit 1) when the model answers text
/// instead of calling its schema tool: an empty answer, prose or a fenced object.
const QWEN_TEXT: &[(&str, &str)] = &[("qwen", "failed 3")];

const FAULTS: &[Fault] = &[
    Fault {
        except: QWEN_TEXT,
        ..fault("no_answer", "no answer", "empty", "unreadable 3")
    },
    Fault {
        except: QWEN_TEXT,
        ..fault("prose", "prose", "prose", "unreadable 3")
    },
    Fault {
        except: QWEN_TEXT,
        ..fault("fenced", "fenced", "fence", "ok 0")
    },
    fault(
        "wrong_schema",
        "wrong schema",
        "wrongschema",
        "unreadable 3",
    ),
    fault(
        "outside_the_contract",
        "outside the contract",
        "invalid",
        "unreadable 3",
    ),
    Fault {
        // exec's program exits 0, so its error text is an answer that cannot be read.
        except: &[("exec", "unreadable 3"), ("replay", "n/a")],
        ..fault("error_exit_0", "error, exit 0", "error0", "failed 3")
    },
    Fault {
        except: NO_PROCESS,
        ..fault("valid_exit_1", "valid, exit 1", "validfail", "ok 0")
    },
    Fault {
        timeout: "5",
        except: NO_PROCESS,
        ..fault("hang", "hang", "hang", "timeout 3")
    },
    Fault {
        timeout: "5",
        except: NO_PROCESS,
        ..fault(
            "grandchild",
            "grandchild holds the pipe",
            "grandchild",
            "timeout 3",
        )
    },
    Fault {
        except: NO_PROCESS,
        ..fault("flood", "100 MiB out", "flood", "unreadable 3")
    },
    Fault {
        // exec's program fails in no harness's words: only its exit status tells.
        except: &[("exec", "failed 3"), ("replay", "n/a")],
        ..fault("usage_limit", "usage limit", "usage-limit", "usage-limit 3")
    },
    Fault {
        // Waited out with backoff (1 s, 2 s, …) within the deadline; exec as for a usage limit.
        timeout: "5.5",
        except: &[("exec", "failed 3"), ("replay", "n/a")],
        ..fault("rate_limit", "rate limit", "rate-limit", "rate-limited 3")
    },
    Fault {
        except: NO_PROCESS,
        ..fault("killed", "killed by a signal", "killed", "failed 3")
    },
    Fault {
        action: Some("INT"),
        judge: 130,
        except: NO_PROCESS,
        ..fault("sigint", "SIGINT mid-panel", "hang", "interrupted 3")
    },
    Fault {
        action: Some("TERM"),
        judge: 143,
        except: NO_PROCESS,
        ..fault("sigterm", "SIGTERM mid-panel", "hang", "interrupted 3")
    },
    Fault {
        action: Some("HUP"),
        judge: 129,
        except: NO_PROCESS,
        ..fault("sighup", "SIGHUP mid-panel", "hang", "interrupted 3")
    },
    Fault {
        // Nothing of panel-judge's runs after SIGKILL: b sends no record (panel-tally counts
        // it missing), and its supervisor ends it and removes its private folder.
        action: Some("KILL"),
        judge: 137,
        except: NO_PROCESS,
        ..fault("sigkill", "SIGKILL of panel-judge", "hang", "missing 3")
    },
    Fault {
        except: NO_PROCESS,
        ..fault("escaped", "escaped setsid child", "escaped", "ok 0")
    },
    Fault {
        except: NO_PROCESS,
        ..fault(
            "escaped_holder",
            "escaped pipe holder",
            "escaped-holder",
            "ok 0",
        )
    },
    Fault {
        // Room for one judge's pipes at a time: the judges wait their turn.
        nofile: Some("20"),
        ..fault("fd_exhaustion", "fd exhaustion", "holds", "ok 0")
    },
    Fault {
        disk: Disk::Full,
        judge: 2,
        ..fault("disk_full", "disk full", "holds", "none 2")
    },
    Fault {
        disk: Disk::Fills,
        action: Some("fill"),
        judge: 2,
        except: NO_PROCESS,
        ..fault(
            "disk_fills",
            "disk fills mid-panel",
            "waitfor:{cell}/signal/go",
            "ok 2",
        )
    },
    Fault {
        disk: Disk::Uncreatable,
        judge: 2,
        ..fault("no_run_folder", "no run folder", "holds", "none 2")
    },
];

/// What a cell must observe.
struct Want {
    /// Judge `b`'s status, or "none" when no judge may start.
    status: &'static str,
    judge: i32,
    /// panel-tally's exit status: 0 when `b` answered, 2 without records, else 3 (a panel of
    /// two cannot decide without `b`).
    tally: i32,
    /// The pipeline's exit status under `set -o pipefail`: the last non-zero one.
    pipeline: i32,
}

/// What a row's cell must observe for a fault; `None` where the fault does not apply.
fn expected(row: &str, f: &Fault) -> Option<Want> {
    let cell = f
        .except
        .iter()
        .find(|(r, _)| *r == row)
        .map_or(f.expect, |(_, c)| c);
    if cell == "n/a" {
        return None;
    }
    let parsed = cell
        .split_once(' ')
        .and_then(|(status, code)| Some((status, code.parse().ok()?)));
    let Some((status, pipeline)) = parsed else {
        panic!("{row} × {}: a cell is `STATUS CODE`, not {cell:?}", f.title);
    };
    // panel-tally counts a judge with no record as missing: an abstention.
    let tally = match status {
        "ok" => 0,
        "none" => 2,
        _ => 3,
    };
    let pipefail = if tally != 0 { tally } else { f.judge };
    assert_eq!(
        pipeline, pipefail,
        "{row} × {}: the table says the pipeline exits {pipeline}, but panel-judge's {} and panel-tally's {tally} make it {pipefail}",
        f.title, f.judge
    );
    Some(Want {
        status,
        judge: f.judge,
        tally,
        pipeline,
    })
}

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

/// One test per cell, `matrix::ROW::FAULT`; the lists must be [`ROWS`] and the ids of
/// [`FAULTS`], in their order (checked by `every_cell_is_a_test`).
macro_rules! cells {
    ($faults:tt $($row:ident)*) => {
        const CELL_ROWS: &[&str] = &[$(stringify!($row)),*];
        cells!(@faults $faults);
        $( cells!(@row $row $faults); )*
    };
    (@faults [$($fault:ident)*]) => {
        const CELL_FAULTS: &[&str] = &[$(stringify!($fault)),*];
    };
    (@row $row:ident [$($fault:ident)*]) => {
        mod $row {
            $(
                #[test]
                fn $fault() {
                    super::cell(stringify!($row), stringify!($fault));
                }
            )*
        }
    };
}

cells! {
    [
        no_answer prose fenced wrong_schema outside_the_contract error_exit_0 valid_exit_1 hang
        grandchild flood usage_limit rate_limit killed sigint sigterm sighup sigkill escaped
        escaped_holder fd_exhaustion disk_full disk_fills no_run_folder
    ]
    claude codex copilot opencode gemini qwen kimi cursor agy llm exec replay
}

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

/// Runs one cell and checks that it observes `want` and what must hold in every cell; failures
/// are pushed to `bad`.
fn run_cell(row: &str, seat: Option<&str>, f: &Fault, want: &Want, bad: &Mutex<Vec<String>>) {
    let fail = |what: String| {
        bad.lock()
            .unwrap()
            .push(format!("{row} × {}: {what}", f.title))
    };
    let answers;
    let seat = match seat {
        Some(s) => s.to_string(),
        None => {
            let Some(b) = replayed(f.mode) else {
                fail("the replay row cannot play this fault".into());
                return;
            };
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
    // The file judge `b` waits for is in a folder of its own, which the judges may read.
    std::fs::create_dir_all(w.join("signal")).unwrap();
    let read = std::env::join_paths([root().join("tests/standins"), w.join("signal")]).unwrap();
    with_standins(&mut cmd, &w.join("log"), &[])
        .env("PANEL_SANDBOX_READ", read)
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
    if let Some(n) = f.nofile {
        cmd.env("NOFILE", n);
    }
    if in_namespace {
        cmd.env("DISK", w.join("disk"));
        if f.disk == Disk::Full {
            cmd.env("FULL", "1");
        }
    }
    let t0 = std::time::Instant::now();
    let out = cmd.checked_output().unwrap();
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
        return;
    }
    let read = |name: &str| std::fs::read_to_string(w.join(name)).unwrap_or_default();
    let codes: Vec<i32> = read("codes")
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect();
    let [pipeline, judge_code, _tee, tally_code] = codes[..] else {
        fail(format!("no exit statuses: {:?}", read("codes")));
        return;
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
            // No record for b: `missing`, as panel-tally counts it (only SIGKILL may do that).
            match by("b") {
                None => "missing".to_string(),
                Some(b) => {
                    if b["status"] == "ok" {
                        if b["verdict"] != "holds" {
                            fail(format!("b's verdict is not the one it gave: {b}"));
                        }
                    } else {
                        if !b["verdict"].is_null() {
                            fail(format!("an abstention with a verdict: {b}"));
                        }
                        let cause = b["cause"].as_str().unwrap_or_default();
                        if cause.is_empty()
                            || cause.chars().any(char::is_control)
                            || cause.len() > 400
                        {
                            fail(format!(
                                "b's cause is not one line a person can act on: {cause:?}"
                            ));
                        }
                    }
                    b["status"].as_str().unwrap_or("?").to_string()
                }
            }
        }
    };

    // `b`'s status and the exit statuses: panel-judge's own, panel-tally's, and the pipeline's
    // (pipefail: the last non-zero).
    if status != want.status {
        fail(format!("b's status is {status}, not {}", want.status));
    }
    if judge_code != want.judge {
        fail(format!(
            "panel-judge exited {judge_code}, not {}: {judge_err}",
            want.judge
        ));
    }
    if tally_code != want.tally {
        fail(format!(
            "panel-tally exited {tally_code}, not {}",
            want.tally
        ));
    }
    if pipeline != want.pipeline {
        fail(format!(
            "the pipeline exited {pipeline}, not {}",
            want.pipeline
        ));
    }
    if matches!(f.disk, Disk::Fills) && !last_err.contains("No space left on device") {
        fail(format!("a full run folder went unreported: {last_err:?}"));
    }

    // No process left behind: nothing still running carries this cell's STANDIN_LOG.
    let marker = format!("STANDIN_LOG={}", w.join("log").display());
    if f.action == Some("KILL") {
        // No one waits for a SIGKILLed tool: its judges' supervisors see it gone and end them
        // (TERM, half a second, KILL).
        let gone = || processes_with_env(&marker).is_empty();
        crate::util::wait_until(std::time::Duration::from_secs(5), gone);
    }
    let left = processes_with_env(&marker);
    if !left.is_empty() {
        let cmds: Vec<String> = left
            .iter()
            .map(|p| std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default())
            .collect();
        fail(format!("pids {left:?} outlived the panel: {cmds:?}"));
    }
    // After SIGKILL the judges' private folders are gone (their supervisors remove the
    // running ones'); the empty sandbox that held them is the next run's to remove.
    let left: Vec<_> = std::fs::read_dir(w.join("tmp"))
        .unwrap()
        .flatten()
        .filter(|e| {
            let empty = std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_none());
            !(f.action == Some("KILL") && empty)
        })
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
    let seal =
        panel::internals::seal(&std::fs::read(run.join("candidate")).map_err(|e| e.to_string())?);
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

/// Runs the cell of `row` and the fault `id`: the body of the test `matrix::ROW::ID`.
fn cell(row: &str, id: &str) {
    let &(_, seat) = ROWS.iter().find(|(r, _)| *r == row).unwrap();
    let f = FAULTS.iter().find(|f| f.id == id).unwrap();
    let Some(want) = expected(row, f) else {
        // Only an answer can be replayed; any other fault needs a process.
        assert!(
            seat.is_none() && replayed(f.mode).is_none(),
            "{row} × {}: the table says n/a, but the fault can be played",
            f.title
        );
        return;
    };
    if matches!(f.disk, Disk::Full | Disk::Fills) {
        // Where user namespaces are forbidden, the disk cells skip and say why.
        const GROUP: &str = "matrix disk cells";
        if let Err(why) = private_mounts() {
            let note = format!("matrix: {row} × {}: skipped: {why}", f.title);
            crate::util::skipped(GROUP, &why, &note);
            return;
        }
        crate::util::ran(GROUP);
    }
    let _slot = Slot::take();
    let bad = Mutex::new(Vec::new());
    run_cell(row, seat, f, &want, &bad);
    let bad = bad.into_inner().unwrap();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Whether this machine lets the tests mount a tmpfs in a private mount namespace (as root in a
/// user namespace of their own); why not (`unshare --user: Operation not permitted`).
fn private_mounts() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let out = Command::new("unshare")
                .args(["--user", "--map-root-user", "--mount", "true"])
                .checked_output()
                .map_err(|e| format!("unshare --user: {e}"))?;
            if out.status.success() {
                return Ok(());
            }
            // `unshare: unshare failed: Operation not permitted`: the last part says why.
            let err = String::from_utf8_lossy(&out.stderr);
            let last = err
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or_default();
            let why = last.rsplit(": ").next().unwrap_or_default().trim();
            Err(if why.is_empty() {
                format!("unshare --user: {}", out.status)
            } else {
                format!("unshare --user: {why}")
            })
        })
        .clone()
}

/// Cells at once, at most: they mostly wait, but their stand-ins need the CPU on time (judge `a`
/// must answer within the 5 s deadline of the hang cells), so a run with more test threads than
/// cores does not starve them.
fn at_once() -> usize {
    std::thread::available_parallelism().map_or(3, |n| n.get().max(3))
}

static RUNNING: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// Holds one of the [`at_once`] places while alive.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut n = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= at_once() {
            n = FREED.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        FREED.notify_one();
    }
}

/// The fault table in docs/testing.md, rows the harnesses and columns the faults: what the cells expect.
fn table() -> String {
    let mut out = String::from("| harness |");
    for f in FAULTS {
        out.push_str(&format!(" {} |", f.title));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(FAULTS.len()));
    out.push('\n');
    for (row, _) in ROWS {
        out.push_str(&format!("| {row} |"));
        for f in FAULTS {
            let text = expected(row, f).map_or("n/a".to_string(), |w| {
                format!("{} {}", w.status, w.pipeline)
            });
            out.push_str(&format!(" {text} |"));
        }
        out.push('\n');
    }
    out
}

const BEGIN: &str = "<!-- fault matrix: begin (tests/matrix.rs renders it) -->\n";
const END: &str = "<!-- fault matrix: end -->";

#[test]
fn readme_table() {
    crate::util::doc_section(BEGIN, END, &table(), "matrix::readme");
}

/// Every row and fault has its cells' tests, and every exception names a row.
#[test]
fn every_cell_is_a_test() {
    let rows: Vec<&str> = ROWS.iter().map(|(r, _)| *r).collect();
    let faults: Vec<&str> = FAULTS.iter().map(|f| f.id).collect();
    // A row added to the harness table is a row of the matrix, or this fails.
    let table = panel::internals::Table::builtin();
    assert_eq!(
        rows,
        table.names(),
        "ROWS are not the built-in table's rows"
    );
    assert_eq!(CELL_ROWS, rows, "the rows of `cells!` are not ROWS");
    assert_eq!(
        CELL_FAULTS, faults,
        "the faults of `cells!` are not FAULTS' ids"
    );
    for f in FAULTS {
        for (row, _) in f.except {
            assert!(rows.contains(row), "{}: no row {row}", f.title);
        }
        for row in &rows {
            expected(row, f);
        }
    }
}
