//! Runs our `panel-judge` with each real coding-agent CLI (from `scripts/install-harnesses`)
//! against the stand-in model server, through the built-in harness rows as a user would:
//! the CLI's bin folder first on PATH, a fake user HOME holding only what a user keeps there
//! to reach their own endpoint, and the variables a user would export. A CLI that is not
//! installed is skipped with a note; `PANEL_REAL_CLI=0` skips them all; each test records
//! whether it ran in the tests' ledger (`scripts/test-summary` counts them).
//!
//! Each test checks the verdict record (and the usage the CLI reports), that the model
//! requests offered no tool but the schema tool (read from the server's log, so the lockdown
//! is proven), that the fake HOME is byte for byte as before, that `--dry-run` prints the argv
//! the run used, and the status each failure the server plays (prose, fenced JSON, 429, 500,
//! no answer) becomes. `--nocapture` prints `BYTES` rows: what the first model request carries
//! beyond the prompt with our row's argv and with the seed's (from `real_cli`), and `MODE`
//! rows. The table in docs/testing.md of the statuses asserted is rendered from [`CASES`]:
//!
//!     UPDATE_GENERATED=1 cargo test --test real real_judge

use crate::util::Checked;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Instant, SystemTime};

use serde_json::Value;

use crate::mockserver::{Logged, MockServer, Mode};
use crate::real_cli::{real_cli, seed_bytes};
use crate::util::{TempDir, bin};

/// The work the judge reads; a `MOCK-MODE:` marker is appended to play a failure.
const WORK: &str = "# first\n\n`first(xs)` returns `xs[0]` and never raises.\n";
const LENS: &str = "correctness=Does the work do what it claims?";

/// What a user has in place for one CLI, and what the test expects of it.
pub(crate) struct Case {
    /// The harness row, which is also the executable.
    pub(crate) harness: &'static str,
    pub(crate) model: Option<&'static str>,
    /// Writes the user's own files under the fake HOME; returns the variables a user exports.
    pub(crate) user: fn(home: &Path, url: &str) -> Vec<(&'static str, String)>,
    /// Tools the model may see: the schema tool, or what the CLI cannot drop.
    pub(crate) tools: &'static [&'static str],
    /// The usage fields the record must carry (the CLI reports them).
    pub(crate) usage: &'static [&'static str],
    /// The record's status for each failure mode.
    expect: fn(Mode) -> &'static str,
    /// Failure modes the CLI retries for a long time: they run with a short deadline, and a
    /// timeout is as right as the status its words give when it does give up in time.
    endless: &'static [Mode],
}

/// One panel-judge run and what it left.
pub(crate) struct Run {
    pub(crate) record: Value,
    pub(crate) requests: Vec<Logged>,
    prompt: String,
    /// `attempt-1/argv.json`, private paths and the nonce normalised.
    argv: Vec<String>,
    /// The dry run's argv, normalised alike.
    dry: Vec<String>,
    pub(crate) stderr: String,
    /// The CLI's own stdout and stderr (its first attempt).
    pub(crate) said: String,
    secs: f64,
}

fn s(x: &str) -> String {
    x.to_string()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every path under `root` with its size and mtime.
fn listing(root: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        out.insert(p.clone(), (meta.len(), meta.modified().ok()));
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(e.path());
            }
        }
    }
    out
}

/// Replaces what differs between two launches of the same judge: the private folders
/// (`$TMPDIR/panel-sandbox.XXXXXX`, in a run and in a pasted dry run) and the fence
/// nonce (32 random hex digits).
fn normalise(arg: &str, tmp: &str, run: &str) -> String {
    let t = arg.replace(&format!("{run}/.sandbox"), "<private>");
    crate::util::hide_private(&t, Path::new(tmp))
}

/// The argv of a `--dry-run` block, as bash runs it in the user's environment (`env`, the
/// variables the run had: a block decides its `whenEnv` groups when it runs): `timeout`
/// becomes a function that prints the arguments after the executable (the block's folder is
/// made in `tmp`, as the launch's is, and removed).
fn dry_words(block: &str, tmp: &Path, home: &Path, env: &[(&'static str, String)]) -> Vec<String> {
    let out = Command::new("bash")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .arg("-c")
        .arg(
            "timeout() { shift 3; shift 3; while [[ $1 == *=* ]]; do shift; done; shift; printf '%s\\0' \"$@\"; }; eval \"$1\"",
        )
        .arg("_")
        .arg(block)
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    assert!(out.status.success(), "bash could not run {block}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut words: Vec<String> = text.split('\0').map(String::from).collect();
    words.pop();
    words
}

/// How many judges start at once across these tests: the CLIs take seconds of CPU to start,
/// and on two cores a dozen at once would not reach the server within their deadline.
const AT_ONCE: usize = 3;
static SLOTS: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// Holds one of the [`AT_ONCE`] slots while alive.
pub(crate) struct Slot;

impl Slot {
    pub(crate) fn take() -> Slot {
        let mut n = SLOTS.lock().unwrap();
        while *n >= AT_ONCE {
            n = FREED.wait(n).unwrap();
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.lock().unwrap() -= 1;
        FREED.notify_one();
    }
}

/// One run's world, as a user has it: a model server of its own, their HOME, the temporary
/// folder (where the judges' private folders go), what they export, the CLI's bin folder first
/// on PATH, and the work the judge reads (with `mode`'s marker to play a failure).
pub(crate) struct Stage {
    pub(crate) server: MockServer,
    _tmp: TempDir,
    pub(crate) home: PathBuf,
    pub(crate) scratch: PathBuf,
    pub(crate) run: PathBuf,
    env: Vec<(&'static str, String)>,
    pub(crate) candidate: PathBuf,
    pub(crate) seat: String,
    bindir: PathBuf,
}

impl Stage {
    fn new(case: &Case, bindir: &Path, tag: &str, mode: Mode) -> Stage {
        let work = match mode {
            Mode::Ok => WORK.to_string(),
            m => format!("{WORK}\n{}\n", m.marker()),
        };
        Stage::with_work(case, bindir, tag, &work, "work.md")
    }

    /// A world whose work is `work`, in a file named `name`.
    pub(crate) fn with_work(
        case: &Case,
        bindir: &Path,
        tag: &str,
        work: &str,
        name: &str,
    ) -> Stage {
        let server = MockServer::start();
        let tmp = TempDir::new(&format!("{tag}-{}", case.harness));
        let root = tmp.path().canonicalize().unwrap();
        let (home, scratch) = (root.join("home"), root.join("tmp"));
        for d in [&home, &scratch] {
            std::fs::create_dir_all(d).unwrap();
        }
        let env = (case.user)(&home, &server.url());
        let candidate = root.join(name);
        std::fs::write(&candidate, work).unwrap();
        let seat = match case.model {
            Some(m) => format!("{}:{m}", case.harness),
            None => case.harness.to_string(),
        };
        Stage {
            server,
            _tmp: tmp,
            home,
            scratch,
            run: root.join("run"),
            env,
            candidate,
            seat,
            bindir: bindir.to_path_buf(),
        }
    }

    pub(crate) fn panel_judge(&self, timeout: f64, extra: &[&str]) -> Command {
        let mut c = self.command("panel-judge");
        c.args(["--seat", &self.seat, "--lens", LENS, "--retries", "0"])
            .args(["--timeout", &timeout.to_string()])
            .arg("--out")
            .arg(&self.run)
            .args(extra)
            .arg(&self.candidate);
        c
    }

    /// One of our tools as the user runs it: their HOME, temporary folder and variables, the
    /// CLI's bin folder first on PATH, standard input closed.
    pub(crate) fn command(&self, tool: &str) -> Command {
        let mut c = Command::new(bin(tool));
        // The history is panel's own file in the user's state folder: kept out of the HOME
        // whose every byte the tests compare.
        let own = self.env.iter().map(|(k, v)| (*k, v.as_str()));
        let env = std::iter::once(("PANEL_HISTORY", "off")).chain(own);
        crate::util::as_a_user(&mut c, &self.bindir, (&self.home, &self.scratch), env);
        c
    }
}

/// SIGINT to panel-judge while the CLI waits on a model that never answers: exit 130, the
/// judge recorded as interrupted, and nothing the CLI started still running (no process
/// carries a HOME inside the judges' private folders). Returns what went wrong.
fn interrupted(case: &Case, bindir: &Path) -> Vec<String> {
    let _slot = Slot::take();
    let stage = Stage::new(case, bindir, "sigint", Mode::Hang);
    let server = &stage.server;
    let child = stage
        .panel_judge(120.0, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let asked = crate::util::wait_until(std::time::Duration::from_secs(90), || {
        !server.generations().is_empty()
    });
    crate::util::kill(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let name = case.harness;
    let mut wrong = Vec::new();
    if !asked {
        wrong.push(format!("{name}: never reached the server in 90 s"));
    }
    if out.status.code() != Some(130) {
        wrong.push(format!(
            "{name}: SIGINT: exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let record: Value =
        serde_json::from_str(stdout.lines().next().unwrap_or_default()).unwrap_or(Value::Null);
    if record["status"] != "interrupted" {
        wrong.push(format!("{name}: SIGINT: {record}"));
    }
    let left = crate::util::processes_with_env(&format!("HOME={}/", stage.scratch.display()));
    if !left.is_empty() {
        wrong.push(format!(
            "{name}: SIGINT: pids {left:?} outlived panel-judge"
        ));
    }
    wrong
}

/// A panel of three lenses on the CLI, stopped once decided: `--cascade --agree 2` asks two
/// judges, whose two breaks decide it, and never launches the third; `--stop-when-decided` at
/// every judge's agreement launches all three and the first breaks decides it. Either way
/// three records, the judges left out cancelled, and panel-tally decides as the full panel
/// would (the server always answers breaks).
fn decided_early(case: &Case, bindir: &Path) -> Vec<String> {
    let _slot = Slot::take();
    let name = case.harness;
    let lenses = [
        "--lens",
        "edges=Is there an input it claims to handle that breaks it?",
        "--lens",
        "evidence=Is every claim it makes supported by the text?",
    ];
    let mut wrong = Vec::new();
    for (how, flags, required) in [
        ("cascade", &["--agree", "2", "--cascade"][..], "2"),
        ("stop", &["--stop-when-decided"][..], "3"),
    ] {
        let stage = Stage::new(case, bindir, how, Mode::Ok);
        let mut args = lenses.to_vec();
        args.extend_from_slice(flags);
        let out = stage.panel_judge(90.0, &args).checked_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let recs: Vec<Value> = stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let statuses: Vec<&str> = recs
            .iter()
            .map(|r| r["status"].as_str().unwrap_or("?"))
            .collect();
        let cancelled = statuses.iter().filter(|s| **s == "cancelled").count();
        let answered = recs.iter().filter(|r| r["verdict"] == "breaks").count();
        let fits = match how {
            "cascade" => answered == 2 && cancelled == 1 && recs.iter().any(|r| r["attempts"] == 0),
            _ => answered >= 1 && answered + cancelled == 3,
        };
        if out.status.code() != Some(0) || recs.len() != 3 || !fits {
            wrong.push(format!(
                "{name} {how}: exit {:?}, {statuses:?}: {stdout}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let tally = crate::util::run_with_stdin(
            Command::new(bin("panel-tally")).args(["--agree", required]),
            stdout.as_bytes(),
        );
        if tally.status.code() != Some(1) {
            wrong.push(format!(
                "{name} {how}: panel-tally --agree {required}: exit {:?}: {}",
                tally.status.code(),
                String::from_utf8_lossy(&tally.stdout)
            ));
        }
        let left = crate::util::processes_with_env(&format!("HOME={}/", stage.scratch.display()));
        if !left.is_empty() {
            wrong.push(format!("{name} {how}: pids {left:?} outlived the decision"));
        }
    }
    wrong
}

/// Runs panel-judge once (and its dry run) for `case` against a server of its own.
pub(crate) fn judge(case: &Case, bindir: &Path, mode: Mode, timeout: f64) -> Run {
    let _slot = Slot::take();
    let stage = Stage::new(case, bindir, "judge", mode);
    let (home, scratch, run) = (&stage.home, &stage.scratch, &stage.run);
    let cmd = |extra: &[&str]| stage.panel_judge(timeout, extra);
    let before = listing(home);
    let dry: Output = cmd(&["--dry-run"]).checked_output().unwrap();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let line = String::from_utf8(dry.stdout).unwrap();
    let started = Instant::now();
    let out = cmd(&[]).checked_output().unwrap();
    let secs = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", case.harness);
    assert_eq!(
        listing(home),
        before,
        "{}: something wrote under the user's HOME",
        case.harness
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let record: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}: {stdout}\n{stderr}", case.harness));
    let judge_dir = run.join(record["judge"].as_str().unwrap());
    let prompt = std::fs::read_to_string(judge_dir.join("prompt.txt")).unwrap();
    let argv: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(judge_dir.join("attempt-1/argv.json")).unwrap(),
    )
    .unwrap();
    let said = ["stdout", "stderr"]
        .map(|f| std::fs::read_to_string(judge_dir.join("attempt-1").join(f)).unwrap_or_default())
        .join("\n");
    let (t, r) = (scratch.display().to_string(), run.display().to_string());
    let norm = |v: Vec<String>| -> Vec<String> { v.iter().map(|a| normalise(a, &t, &r)).collect() };
    let words = dry_words(line.trim_end(), scratch, home, &stage.env);
    Run {
        record,
        requests: stage.server.generations(),
        prompt,
        argv: norm(argv),
        dry: norm(words),
        stderr,
        said,
        secs,
    }
}

const MODES: [Mode; 6] = [
    Mode::Prose,
    Mode::Fence,
    Mode::RateLimit,
    Mode::UsageLimit,
    Mode::Error500,
    Mode::Hang,
];

/// Seconds for a failure mode the CLI would retry past any deadline.
const ENDLESS: f64 = 20.0;

/// Seconds a failure mode may take, from launch: long enough for a CLI that gives up on its
/// own to do so on a busy two-core machine, where a CLI takes up to 30 s to start.
fn timeout_of(mode: Mode) -> f64 {
    match mode {
        Mode::Hang => 8.0,
        Mode::Prose | Mode::Fence => 60.0,
        _ => 50.0,
    }
}

fn check(case: &Case) {
    let name = case.harness;
    let Some(exe) = real_cli(name) else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();

    // The modes run beside the verdict run: most of their time is waiting.
    let (ok, modes, seed, stopped) = std::thread::scope(|sc| {
        let modes: Vec<_> = MODES
            .iter()
            .map(|&m| {
                let bindir = &bindir;
                let t = if case.endless.contains(&m) {
                    ENDLESS
                } else {
                    timeout_of(m)
                };
                sc.spawn(move || (m, judge(case, bindir, m, t)))
            })
            .collect();
        let stopped = sc.spawn(|| interrupted(case, &bindir));
        let early = sc.spawn(|| decided_early(case, &bindir));
        let ok = judge(case, &bindir, Mode::Ok, 90.0);
        let seed = {
            let _slot = Slot::take();
            seed_bytes(name)
        };
        let modes: Vec<(Mode, Run)> = modes.into_iter().map(|h| h.join().unwrap()).collect();
        let mut stopped = stopped.join().unwrap();
        stopped.extend(early.join().unwrap());
        (ok, modes, seed, stopped)
    });

    // (1) the verdict record and its usage.
    let r = &ok.record;
    assert_eq!(r["status"], "ok", "{name}: {r}\n{}", ok.stderr);
    assert_eq!(r["verdict"], "breaks", "{name}: {r}");
    assert_eq!(r["confidence"], 0.9, "{name}: {r}");
    assert_eq!(r["harness"], name);
    for field in case.usage {
        let v = &r["usage"][field];
        assert!(
            v.as_f64().is_some_and(|x| x > 0.0),
            "{name}: usage.{field} not recorded: {r}"
        );
    }
    if case.usage.contains(&"inputTokens") {
        // The server reports 20 out on every API, and the input its caches say.
        input_within(name, &r["usage"], &ok.requests);
        assert_eq!(r["usage"]["outputTokens"], 20, "{name}: {r}");
    }
    // (2) the lockdown, on the wire.
    assert!(!ok.requests.is_empty(), "{name}: no model request");
    for q in &ok.requests {
        assert_eq!(q.tools, case.tools, "{name}: tools offered to the model");
    }
    // (5) the dry run shows the command that ran; inside panel's sandbox, codex's own
    // file-restricting one (which cannot nest in it) gives way, and the dry run, which is
    // pasted outside it, keeps it.
    let confined = r["sandbox"]
        .as_str()
        .is_some_and(|s| s.starts_with("landlock") || s.starts_with("jail"));
    if name == "codex" && confined {
        assert!(
            has_words(&ok.argv, &["--sandbox", "danger-full-access"]),
            "{name}: {:?}",
            ok.argv
        );
        assert!(
            has_words(&ok.dry, &["-c", "default_permissions=\"panel_judge\""]),
            "{name}"
        );
        assert_eq!(
            without_walls(&ok.dry),
            without_walls(&ok.argv),
            "{name}: --dry-run differs from the run"
        );
    } else {
        assert_eq!(ok.dry, ok.argv, "{name}: --dry-run differs from the run");
    }

    // The prompt as sent; a CLI that reworded it (opencode) is measured from the longest
    // string holding its first line, marked `*`.
    let first = |rs: &[Logged], prompt: &str| -> Option<String> {
        let head = prompt.lines().next().unwrap_or_default();
        rs.iter().find_map(|q| {
            let (b, mark) = match q.bytes_beyond_prompt(prompt.trim()) {
                Some(b) => (b, ""),
                None => (q.bytes_beyond_marked(head)?, "*"),
            };
            Some(format!("{b}{mark} B, {} tools", q.tools.len()))
        })
    };
    let show =
        |x: Option<(usize, usize)>| x.map_or("-".to_string(), |(b, t)| format!("{b} B, {t} tools"));
    let mut report = format!(
        "BYTES {name:9} ours {:>16} ({} req)  seed {:>16} ({} req, largest {})\n",
        first(&ok.requests, &ok.prompt).unwrap_or_else(|| "-".into()),
        ok.requests.len(),
        show(seed.as_ref().map(|s| s.first)),
        seed.as_ref().map_or(0, |s| s.requests),
        show(seed.as_ref().map(|s| s.largest)),
    );
    report.push_str(&format!(
        "MODE  {name:9} {:10} {:>12} {:5.1}s req {}\n",
        "ok",
        "ok",
        ok.secs,
        ok.requests.len()
    ));

    // (4) each failure mode's status.
    let mut wrong = Vec::new();
    for (mode, run) in &modes {
        let status = run.record["status"].as_str().unwrap_or("?");
        report.push_str(&format!(
            "MODE  {name:9} {:10} {:>12} {:5.1}s req {} | {}\n",
            mode.name(),
            status,
            run.secs,
            run.requests.len(),
            run.record["cause"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(90)
                .collect::<String>()
        ));
        let want = (case.expect)(*mode);
        // A CLI still starting when its deadline came never met the server: the deadline, not
        // the mapping under test, decided that run, so only a timeout is asked of it.
        let never_asked = run.requests.is_empty() && status == "timeout";
        let still_retrying = case.endless.contains(mode) && status == "timeout";
        if status != want && !never_asked && !still_retrying {
            wrong.push(format!(
                "{name} {}: expected {want}, got {}",
                mode.name(),
                run.record
            ));
        }
        for q in &run.requests {
            assert_eq!(
                q.tools,
                case.tools,
                "{name} {}: tools offered in {}",
                mode.name(),
                q.body.to_string().chars().take(1500).collect::<String>()
            );
        }
        assert_eq!(
            without_walls(&run.dry),
            without_walls(&run.argv),
            "{name} {}: --dry-run differs",
            mode.name()
        );
    }
    wrong.extend(stopped);
    println!("{report}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The status each failure mode gets from a CLI that says what happened in its own words.
fn usual(mode: Mode) -> &'static str {
    match mode {
        Mode::Prose => "unreadable",
        Mode::Fence => "ok",
        Mode::RateLimit => "rate-limited",
        Mode::UsageLimit => "usage-limit",
        Mode::Error500 => "failed",
        _ => "timeout",
    }
}

// ---------------------------------------------------------------- what a user has in place

fn claude_user(_: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", s(url)),
        ("ANTHROPIC_API_KEY", s("dummy")),
        // Else a 429 or a 500 is retried for minutes.
        ("CLAUDE_CODE_MAX_RETRIES", s("0")),
    ]
}

fn codex_user(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    // Codex reads no base URL from the environment: a user names their endpoint in config.toml.
    write(
        &home.join(".codex/config.toml"),
        &format!(
            "model_provider = \"mine\"\n\n[model_providers.mine]\nname = \"Mine\"\n\
             base_url = \"{url}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n"
        ),
    );
    vec![("OPENAI_API_KEY", s("dummy"))]
}

fn copilot_user(_: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("COPILOT_OFFLINE", s("true")),
        ("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1")),
        ("COPILOT_PROVIDER_API_KEY", s("dummy")),
        ("COPILOT_MODEL", s("mock-model")),
    ]
}

fn opencode_user(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    let file = home.join(".config/opencode/mock.json");
    let config = serde_json::json!({
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
            "options": {"baseURL": format!("{url}/v1"), "apiKey": "dummy"},
            "models": {"mock-model": {"name": "Mock model"}}}}
    });
    write(&file, &config.to_string());
    vec![
        ("OPENCODE_CONFIG", file.display().to_string()),
        // Its first run looks its plugin up on the npm registry: the user's registry.
        ("npm_config_registry", format!("{url}/npm/")),
    ]
}

fn gemini_user(_: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GEMINI_API_KEY", s("dummy")),
        ("GOOGLE_GEMINI_BASE_URL", s(url)),
    ]
}

fn qwen_user(_: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_API_KEY", s("dummy")),
        ("OPENAI_BASE_URL", format!("{url}/v1")),
    ]
}

fn kimi_user(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    write(
        &home.join(".kimi/config.toml"),
        &format!(
            "default_model = \"mock\"\n\n[models.mock]\nprovider = \"mock\"\nmodel = \"mock-model\"\n\
             max_context_size = 128000\n\n[providers.mock]\ntype = \"openai_legacy\"\n\
             base_url = \"{url}/v1\"\napi_key = \"dummy\"\n"
        ),
    );
    vec![]
}

fn llm_user(home: &Path, url: &str) -> Vec<(&'static str, String)> {
    write(
        &home.join(".config/io.datasette.llm/extra-openai-models.yaml"),
        &format!(
            "- model_id: mock\n  model_name: mock-model\n  api_base: \"{url}/v1\"\n  supports_schema: true\n"
        ),
    );
    vec![]
}

// ---------------------------------------------------------------- one test per CLI

/// Every installed CLI, what a user has in place for it and what the test holds it to.
const CASES: [Case; 8] = [
    Case {
        harness: "claude",
        model: Some("haiku"),
        user: claude_user,
        tools: &["StructuredOutput"],
        usage: &["inputTokens", "outputTokens", "costUsd"],
        expect: usual,
        endless: &[],
    },
    Case {
        harness: "codex",
        model: Some("mock-model"),
        user: codex_user,
        // The schema alone: the catalog in the row and the request_user_input setting leave no tool.
        tools: &[],
        usage: &["inputTokens", "outputTokens"],
        expect: usual,
        endless: &[],
    },
    Case {
        harness: "copilot",
        model: None,
        user: copilot_user,
        tools: &[],
        usage: &[],
        expect: usual,
        endless: &[],
    },
    Case {
        harness: "opencode",
        model: Some("mock/mock-model"),
        user: opencode_user,
        tools: &[],
        usage: &["inputTokens", "outputTokens"],
        expect: usual,
        // It backs off and retries a 429 for half a minute, a 500 or a quota error for longer.
        endless: &[Mode::RateLimit, Mode::UsageLimit, Mode::Error500],
    },
    Case {
        harness: "gemini",
        model: Some("gemini-2.5-flash"),
        user: gemini_user,
        tools: &[],
        usage: &["inputTokens", "outputTokens"],
        expect: usual,
        endless: &[],
    },
    Case {
        harness: "qwen",
        model: Some("mock-model"),
        user: qwen_user,
        tools: &["structured_output"],
        usage: &["inputTokens", "outputTokens"],
        expect: qwen_status,
        endless: &[Mode::UsageLimit, Mode::Error500],
    },
    Case {
        harness: "kimi",
        model: None,
        user: kimi_user,
        tools: &[],
        usage: &[],
        expect: usual,
        endless: &[],
    },
    Case {
        harness: "llm",
        model: Some("mock"),
        user: llm_user,
        tools: &[],
        usage: &[],
        expect: usual,
        endless: &[],
    },
];

/// qwen answers text instead of its schema tool call with an error of its own (exit 1).
fn qwen_status(mode: Mode) -> &'static str {
    match mode {
        Mode::Prose | Mode::Fence => "failed",
        m => usual(m),
    }
}

pub(crate) fn case(harness: &str) -> &'static Case {
    CASES.iter().find(|c| c.harness == harness).unwrap()
}

#[test]
fn claude_judge() {
    check(case("claude"));
}

#[test]
fn codex_judge() {
    check(case("codex"));
}

#[test]
fn copilot_judge() {
    check(case("copilot"));
}

#[test]
fn opencode_judge() {
    check(case("opencode"));
}

#[test]
fn gemini_judge() {
    check(case("gemini"));
}

#[test]
fn qwen_judge() {
    check(case("qwen"));
}

#[test]
fn kimi_judge() {
    check(case("kimi"));
}

#[test]
fn llm_judge() {
    check(case("llm"));
}

const BEGIN: &str = "<!-- real CLIs: begin (tests/real_judge.rs renders it) -->\n";
const END: &str = "<!-- real CLIs: end -->";

/// The table in docs/testing.md of what each real CLI's test holds it to: rendered from [`CASES`], so
/// it says what the tests assert, whether or not the CLIs are installed where it runs.
#[test]
fn readme_says_what_each_real_cli_is_held_to() {
    let mut out = String::from(
        "| CLI | verdict | prose | fenced | rate limit (429) | usage limit | server error (500) | no answer | SIGINT mid-panel |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for c in &CASES {
        out.push_str(&format!("| {} | ok |", c.harness));
        for mode in MODES {
            let status = (c.expect)(mode);
            let or = if c.endless.contains(&mode) && status != "timeout" {
                " or timeout"
            } else {
                ""
            };
            out.push_str(&format!(" {status}{or} |"));
        }
        out.push_str(" interrupted, exit 130 |\n");
    }
    crate::util::doc_section(BEGIN, END, &out, "real_judge");
}

fn has_words(argv: &[String], words: &[&str]) -> bool {
    argv.windows(words.len())
        .any(|w| w.iter().zip(words).all(|(a, b)| a == b))
}

/// Codex's argv without the words that choose its own sandbox.
fn without_walls(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let next = argv.get(i + 1).map_or("", String::as_str);
        let wall = (argv[i] == "--sandbox")
            || (argv[i] == "-c"
                && (next.starts_with("default_permissions=") || next.starts_with("permissions.")));
        if wall {
            i += 2;
        } else {
            out.push(argv[i].clone());
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------- codex's endpoint

/// A codex user who names their endpoint as the OpenAI SDK reads it, with no config.toml.
fn codex_base_url_user(_: &Path, url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_BASE_URL", format!("{url}/v1")),
        ("OPENAI_API_KEY", s("dummy")),
    ]
}

/// The same user, their endpoint down (a port nothing listens on).
fn codex_dead_endpoint_user(_: &Path, _: &str) -> Vec<(&'static str, String)> {
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    vec![
        ("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1")),
        ("OPENAI_API_KEY", s("dummy")),
    ]
}

/// A codex user with a key and nothing else: codex goes to api.openai.com.
fn codex_key_only_user(_: &Path, _: &str) -> Vec<(&'static str, String)> {
    vec![("CODEX_API_KEY", s("dummy"))]
}

/// Issue 45: "codex 0.171 ignores `OPENAI_BASE_URL` … so it went to api.openai.com through
/// panel's proxy; … codex retried … until the 300 s deadline". A user's OPENAI_BASE_URL
/// reaches codex as a provider of its configuration; an endpoint codex cannot reach stops its
/// judge early, with a cause naming the endpoint and what to look at.
#[test]
fn codex_takes_the_users_openai_base_url_and_a_dead_endpoint_stops_it_early() {
    let Some(exe) = real_cli("codex") else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let with = |user| Case {
        user,
        ..*case("codex")
    };
    let ok = judge(&with(codex_base_url_user), &bindir, Mode::Ok, 90.0);
    assert_eq!(ok.record["status"], "ok", "{}\n{}", ok.record, ok.stderr);
    assert_eq!(ok.record["verdict"], "breaks", "{}", ok.record);
    assert!(!ok.requests.is_empty(), "the stand-in was never asked");
    let dead = judge(&with(codex_dead_endpoint_user), &bindir, Mode::Ok, 120.0);
    let cause = dead.record["cause"].as_str().unwrap_or_default();
    assert_eq!(dead.record["status"], "failed", "{}", dead.record);
    assert!(
        cause.starts_with("stopped early: its CLI could not reach 127.0.0.1:")
            && cause.contains("(is the endpoint up, at that address?)"),
        "{cause}"
    );
    // api.openai.com, out of reach here (no network but the registries): stopped early too,
    // its cause naming the variable that points codex elsewhere.
    let away = judge(&with(codex_key_only_user), &bindir, Mode::Ok, 120.0);
    let cause = away.record["cause"].as_str().unwrap_or_default();
    assert_eq!(away.record["status"], "failed", "{}", away.record);
    if cause.contains("api.openai.com") {
        assert!(
            cause.starts_with("stopped early: its CLI could not reach api.openai.com:443")
                && cause.contains("another endpoint: set OPENAI_BASE_URL"),
            "{cause}"
        );
    }
}

/// Issue 47: "`--tier flex` for seats whose provider has a flex tier (codex with an API key:
/// `service_tier="flex"`)": the real codex puts it on the wire, with the row's model catalog,
/// and the record says so.
#[test]
fn codex_with_an_api_key_asks_for_flex_when_told() {
    let Some(exe) = real_cli("codex") else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let with = Case {
        user: codex_base_url_user,
        ..*case("codex")
    };
    let _slot = Slot::take();
    let stage = Stage::new(&with, &bindir, "flex", Mode::Ok);
    let out = stage
        .panel_judge(90.0, &["--tier", "flex"])
        .checked_output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let record: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(record["status"], "ok", "{record}");
    assert_eq!(record["usage"]["tier"], "flex", "{record}");
    let asked = stage.server.generations();
    assert!(!asked.is_empty());
    for q in &asked {
        assert_eq!(q.body["service_tier"], "flex", "{}", q.body);
    }
}

/// A record's `inputTokens` is what the server reported for the call's requests: at least the
/// uncached input of the smallest (a CLI may count only that, or only the last request), at
/// most every request's whole input (a CLI that sums them, cache reads and writes included).
pub(crate) fn input_within(what: &str, usage: &Value, requests: &[Logged]) {
    let used: Vec<_> = requests.iter().filter_map(|q| q.usage).collect();
    let low = used.iter().map(|u| u.uncached()).min().unwrap_or(0);
    let high: u64 = used.iter().map(|u| u.input).sum();
    let got = usage["inputTokens"].as_u64().unwrap_or(0);
    assert!(
        (low..=high).contains(&got),
        "{what}: inputTokens {got} not within the server's {low}..={high}: {usage}"
    );
}
