//! Shared helpers of the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The path of one of our binaries, built by cargo for this test run.
pub fn bin(name: &str) -> PathBuf {
    match name {
        "panel-judge" => env!("CARGO_BIN_EXE_panel-judge").into(),
        "panel-tally" => env!("CARGO_BIN_EXE_panel-tally").into(),
        "panel-merge" => env!("CARGO_BIN_EXE_panel-merge").into(),
        "panel-vote" => env!("CARGO_BIN_EXE_panel-vote").into(),
        "pr-classify" => env!("CARGO_BIN_EXE_pr-classify").into(),
        other => panic!("no binary {other}"),
    }
}

/// The repository's top folder.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh temporary folder, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "panel-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("KEEP_TMP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `dir`, made the judges' to write: run as root, the tests' judges are never root, so a
/// folder granted with `--sandbox-write` (`PANEL_SANDBOX_WRITE`) is made theirs, as a user's own
/// folder is a user's judges'.
pub fn judges_may_write(dir: &Path) -> &Path {
    if nix::unistd::geteuid().is_root() {
        let (uid, gid) = panel::internals::unprivileged_ids();
        std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
    }
    dir
}

/// `file` (an absolute path), where a user who is not its owner can read it (and run it, if
/// its owner may): itself when every folder above it lets others through, else a copy in `dir`
/// (a test's folder that the test opened to all), under its own name. For a test that runs our
/// tools as another id (nobody): the checkout, and the target folder with our binaries, may sit
/// where only their owner passes (a clone in a 0700 folder, the target folder inside it).
pub fn readable_by_others(dir: &Path, file: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .permissions()
            .mode()
    };
    let run = mode(file) & 0o100 != 0;
    let need = if run { 0o005 } else { 0o004 };
    let open = mode(file) & need == need && file.ancestors().skip(1).all(|d| mode(d) & 0o001 != 0);
    if open {
        return file.to_path_buf();
    }
    let copy = dir.join(file.file_name().unwrap());
    if run {
        // Copied by cp, never here: a descriptor of the copy open for writing in this process is
        // inherited by whatever another test forks meanwhile, until that child execs, and the
        // copy cannot be run then ("Text file busy", seen in a clone in a 0700 folder).
        let cp = Command::new("cp").arg("--").arg(file).arg(&copy).status();
        assert!(cp.is_ok_and(|s| s.success()), "cp {}", file.display());
    } else {
        std::fs::copy(file, &copy).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
    let bits = if run { 0o755 } else { 0o644 };
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(bits)).unwrap();
    copy
}

/// What others cannot reach (a file in a 0700 folder) is copied where they can; what they can
/// reach is left where it is.
#[test]
fn what_others_cannot_reach_is_copied_where_they_can() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = TempDir::new("others");
    let (shut, open) = (tmp.path().join("shut"), tmp.path().join("open"));
    for (dir, mode) in [(tmp.path(), 0o755), (&shut, 0o700), (&open, 0o777)] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let (hidden, seen) = (shut.join("answer.md"), open.join("seen.md"));
    for file in [&hidden, &seen] {
        std::fs::write(file, "an answer\n").unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let copy = readable_by_others(&open, &hidden);
    assert_eq!(copy, open.join("answer.md"));
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "an answer\n");
    let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    assert_eq!(readable_by_others(&open, &seen), seen);
}

/// Runs a command with `stdin` fed on a thread, and returns its output.
pub fn run_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let _ = pipe.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    feeder.join().unwrap();
    if ours(cmd) {
        check_records(&describe(cmd), &out.stdout);
    }
    out
}

/// Files under a folder, as paths relative to it.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Pids of the live processes with an environment entry (`NAME=VALUE`) that starts with
/// `prefix`: a marker every descendant of a launch inherits, to find what outlived it.
pub fn processes_with_env(prefix: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() || !alive(pid) {
            continue;
        }
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env
            .split(|&b| b == 0)
            .any(|kv| kv.starts_with(prefix.as_bytes()))
        {
            found.push(pid);
        }
    }
    found
}

/// Which of a command's outputs is a terminal.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tty {
    Stdout,
    Stderr,
}

/// Runs `cmd` with its standard output or error (`tty`) on a new pseudo-terminal, the other
/// piped; its output, and everything the terminal showed (a newline shown as `\r\n`).
pub fn on_a_terminal(cmd: &mut Command, tty: Tty) -> (Output, String) {
    on_a_terminal_while(cmd, tty, |_| {})
}

/// [`on_a_terminal`], with `during` called with the child's pid once it has started (to signal
/// it, or to watch it) before it is waited for.
pub fn on_a_terminal_while(
    cmd: &mut Command,
    tty: Tty,
    during: impl FnOnce(u32),
) -> (Output, String) {
    use std::io::Read;
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    let mut master = std::fs::File::from(pty.master);
    let slave: std::os::fd::OwnedFd = pty.slave;
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        // Linux ends a pty's reads with EIO once the last holder of the other side is gone.
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&shown).into_owned()
    });
    cmd.stdin(Stdio::null());
    let child = match tty {
        Tty::Stderr => cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::from(slave))
            .spawn(),
        Tty::Stdout => cmd
            .stderr(Stdio::piped())
            .stdout(Stdio::from(slave))
            .spawn(),
    }
    .unwrap();
    // The Command holds our copy of the terminal's side: replaced, it closes, and the reads
    // end when the tool's copies are gone.
    match tty {
        Tty::Stderr => cmd.stderr(Stdio::null()),
        Tty::Stdout => cmd.stdout(Stdio::null()),
    };
    during(child.id());
    let out = child.wait_with_output().unwrap();
    let shown = reader.join().unwrap();
    (out, shown)
}

/// Sets `cmd` up to run against the stand-in harness CLIs: tests/standins, then `more` folders,
/// first on PATH; the stand-ins' call log in `log`; no wait for stdin; every STANDIN_ variable
/// carried into the judges' cleared environment; no API key that would change claude's argv.
/// The built-in rows whose CLI answers only with a login: every stand-in is launched without.
pub const STANDIN_ROWS: &str = "claude,codex,copilot,gemini,qwen,kimi,cursor,agy";

pub fn with_standins<'a>(cmd: &'a mut Command, log: &Path, more: &[PathBuf]) -> &'a mut Command {
    let mut path = vec![root().join("tests/standins")];
    path.extend(more.iter().cloned());
    let rest = std::env::var_os("PATH").unwrap_or_default();
    path.extend(std::env::split_paths(&rest));
    // The stand-ins keep their call log outside the judges' folders: granted to them.
    std::fs::create_dir_all(log).unwrap();
    cmd.env("PATH", std::env::join_paths(path).unwrap())
        .env("STANDIN_LOG", log)
        .env("PANEL_SANDBOX_WRITE", judges_may_write(log))
        // An `exec:` seat's program is granted alone; the stand-ins share lib.sh beside them.
        .env("PANEL_SANDBOX_READ", root().join("tests/standins"))
        .env("STANDIN_STDIN_WAIT", "0")
        // The stand-ins need no login: each CLI's is its own.
        .env("PANEL_LOGIN_ELSEWHERE", STANDIN_ROWS)
        .env(
            "PANEL_PASS_ENV",
            "STANDIN_LOG,STANDIN_MODE,STANDIN_RULES,STANDIN_VERDICT,STANDIN_STDIN_WAIT,STANDIN_LOCKDOWN,STANDIN_SLEEP,STANDIN_DO",
        )
        .env_remove("ANTHROPIC_API_KEY")
}

/// Holds the text between `begin` and `end` (in the README or a page of docs/) to `want`, a table
/// a test renders: with `UPDATE_GENERATED` set the page is rewritten, otherwise a drift fails the test and says
/// how to refresh it (`filter`, the test's name filter).
pub fn doc_section(begin: &str, end: &str, want: &str, filter: &str) {
    // Two tables may be refreshed at once: one read-and-rewrite at a time.
    static DOCS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = DOCS.lock().unwrap_or_else(|e| e.into_inner());
    // The README or a page of docs/ holds the markers, wherever the table was moved.
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let found: Vec<(PathBuf, String)> = pages
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .filter(|(_, text)| text.contains(begin))
        .collect();
    let [(path, page)] = &found[..] else {
        panic!(
            "`{}` should mark one table in README.md or docs/*.md, not {}",
            begin.trim(),
            found.len()
        );
    };
    let (Some(b), Some(e)) = (page.find(begin), page.find(end)) else {
        panic!("{} has no `{}` end marker", path.display(), end.trim());
    };
    let from = b + begin.len();
    if page[from..e] == *want {
        return;
    }
    if std::env::var_os("UPDATE_GENERATED").is_some() {
        std::fs::write(path, format!("{}{want}{}", &page[..from], &page[e..])).unwrap();
    } else {
        panic!(
            "{}'s table after `{}` is not what the test renders; if the change is right, run `UPDATE_GENERATED=1 cargo test --test {} {filter}`:\n{want}",
            path.display(),
            begin.trim(),
            env!("CARGO_CRATE_NAME")
        );
    }
}

/// What `panel-judge --sandbox auto` records as its judges' walls on this machine
/// (`jail+landlock-abi-7`, `landlock-abi-7 (no user namespaces: …)`, `unavailable: …`).
pub fn auto_walls() -> &'static str {
    static SAID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SAID.get_or_init(|| probe_walls(&root().join("examples/answer.md")))
}

/// What `panel-judge --sandbox auto` records as its walls, one judge run on `candidate`. A
/// probe that wrote no record, or one that names no walls, fails the test with what
/// panel-judge said: a probe that could not run is never read as a kernel without walls (as
/// the hostile matrix, run by a user who could not read the candidate, once did: it dropped
/// its walled columns, gave an empty reason and passed).
fn probe_walls(candidate: &Path) -> String {
    let out = Command::new(bin("panel-judge"))
        .args(["--lens", "a=Q?", "--family", "exec:cat=x"])
        .args(["--seat", "exec:cat", "--retries", "0", "--timeout", "30"])
        .arg(candidate)
        .env("PANEL_HISTORY", "off")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    let why = || {
        format!(
            "the probe of the judges' walls (panel-judge --sandbox auto on {}) wrote no record of them: {}; stdout {:?}; stderr {:?}",
            candidate.display(),
            out.status,
            line,
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let Some(first) = line.lines().next() else {
        panic!("{}", why());
    };
    let rec: serde_json::Value =
        serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: {}", why()));
    match rec["sandbox"].as_str() {
        Some(said) if !said.is_empty() => said.to_string(),
        _ => panic!("{}", why()),
    }
}

/// The probe once read "no record" as "no walls" (an empty `sandbox`).
#[test]
#[should_panic(expected = "wrote no record of them")]
fn a_probe_that_could_not_run_fails_rather_than_finding_no_walls() {
    let tmp = TempDir::new("probe");
    probe_walls(&tmp.path().join("no such candidate.md"));
}

/// Whether this kernel confines judges with Landlock (in a jail or alone).
pub fn landlock() -> bool {
    auto_walls().contains("landlock-abi-")
}

/// Sends `signal` (a name kill(1) knows: INT, TERM, …) to `pid`; the tests need no signal crate.
pub fn kill(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(sent, "kill -{signal} {pid}");
}

/// Polls `ready` until it holds or `within` has passed; whether it held.
pub fn wait_until(within: std::time::Duration, ready: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    while !ready() {
        if start.elapsed() >= within {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// A pid is gone when /proc has no entry for it, or only a zombie waiting to be reaped.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
            state != 'Z' && state != 'X'
        }
        Err(_) => false,
    }
}

/// A number of seconds for `sleep` that no other process of the machine sleeps: the mark by
/// which [`marked`] finds a judge's processes from outside its jail, whose PID namespace gives
/// them numbers of its own.
pub fn mark() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "300.{}{:04}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// The live processes of this machine whose command line holds `mark`, but our own (a
/// judge's supervisor and the first process of its jail carry the judge's command too).
pub fn marked(mark: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let ours = comm.trim() == "panel-judge" || comm.trim().starts_with("panel-");
        if !ours && memchr_find(&cmdline, mark.as_bytes()) && alive(pid) {
            out.push(pid);
        }
    }
    out
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

pub fn pids_in(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Where the tests that need what a machine may lack (the real CLIs, root, user namespaces)
/// record whether they ran: one line each, `GROUP<TAB>ran<TAB>TEST` or
/// `GROUP<TAB>skipped<TAB>TEST<TAB>WHY`, under the target folder; a test may write several
/// (one per CLI, one per mode), and `scripts/test-summary` counts tests, not lines. One ledger
/// per test target (`test-ledger-integration.tsv`, `test-ledger-real.tsv`): each run of a test
/// binary empties its own before any test starts ([`START_LEDGER`]), so a run that records
/// nothing leaves no older ledger to be read as its own, and a run of one target keeps the
/// other's.
pub fn ledger_path() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(concat!(
        "test-ledger-",
        env!("CARGO_CRATE_NAME"),
        ".tsv"
    ))
}

/// Empties the ledger as the test binary starts, before libtest runs any test: no test runs
/// first in every run (a filter picks which run), so no test can do it.
#[used]
#[unsafe(link_section = ".init_array")]
static START_LEDGER: extern "C" fn() = start_ledger;

extern "C" fn start_ledger() {
    let path = ledger_path();
    let _ = std::fs::create_dir_all(path.parent().unwrap());
    let _ = std::fs::File::create(&path);
}

/// Records in the ledger that the running test of `group` ran.
pub fn ran(group: &str) {
    record(&[group, "ran", &test_name()]);
}

/// Records in the ledger that the running test of `group` skipped (all of it, or the part
/// `why` names), and prints `note` (one line) to standard error past the test harness's
/// capture, once per run: a skip is seen even when the run is green. The one way a test skips.
pub fn skipped(group: &str, why: &str, note: &str) {
    record(&[group, "skipped", &test_name(), why]);
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|s| s == note) {
        said.push(note.to_string());
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{note}");
    }
}

/// Fails the running test unless `tool` is on PATH. What a test needs to be a test at all and
/// any machine can install (jq for the seed's script and the stand-in gh, GNU parallel and rsync
/// for panel-fleet; `.ci/run` installs them) is a requirement, never a skip.
#[track_caller]
pub fn need(tool: &str) {
    assert!(
        on_path(tool),
        "{tool} is needed by this test and is not on PATH (apt-get install {tool})"
    );
}

/// Whether the tests run as root: what some of them need, to act as another user.
pub fn is_root() -> bool {
    nix::unistd::getuid().is_root()
}

/// Whether the running test can act as another user: run as root (to give a file away), and
/// with `setpriv` (util-linux) when it runs a command as another id. Else its skip is recorded.
pub fn another_user(setpriv: bool) -> bool {
    const GROUP: &str = "as another user";
    let why = if !is_root() {
        "not run as root"
    } else if setpriv && !on_path("setpriv") {
        "no setpriv on PATH (util-linux)"
    } else if !reachable_by_others(root()) {
        // Its judges run the stand-ins in tests/ as that user (a clone in `mktemp -d`, 0700).
        "a folder above the checkout is closed to other users"
    } else {
        ran(GROUP);
        return true;
    };
    let note = format!("tests that act as another user: skipped: {why}");
    skipped(GROUP, why, &note);
    false
}

/// Whether another user can reach `dir`: every folder from the root down lets others through.
fn reachable_by_others(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors()
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// A user id no other process has, this test run's own (`n` tells a run's users apart, 0 to
/// 3): a limit on processes counts every process of the user's on the machine, and nobody's
/// are many.
pub fn own_uid(n: u32) -> u32 {
    50_000 + (std::process::id() % 5_000) * 4 + n
}

/// The running test's name, as libtest names its thread (`real_cli::claude_code`).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("an unnamed test")
        .to_string()
}

fn record(fields: &[&str]) {
    use std::io::Write;
    static LEDGER: std::sync::Mutex<Option<std::fs::File>> = std::sync::Mutex::new(None);
    let mut ledger = LEDGER.lock().unwrap_or_else(|e| e.into_inner());
    if ledger.is_none() {
        let path = ledger_path();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        *ledger = Some(file);
    }
    let line: Vec<String> = fields
        .iter()
        .map(|f| f.replace(['\t', '\n'], " "))
        .collect();
    writeln!(ledger.as_mut().unwrap(), "{}", line.join("\t")).unwrap();
}

/// The sha256 of `bytes` in hex, computed here (the sha2 crate), never by the code under test.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `name` is an executable on PATH.
pub fn on_path(name: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join(name).is_file())
}

/// The record schemas (`panel::tools::schemas`), compiled once: by the name of each file, which
/// is a record's `type` (and `harness`).
pub fn validators() -> &'static std::collections::HashMap<&'static str, jsonschema::Validator> {
    static COMPILED: std::sync::OnceLock<
        std::collections::HashMap<&'static str, jsonschema::Validator>,
    > = std::sync::OnceLock::new();
    COMPILED.get_or_init(|| {
        panel::tools::schemas::schemas()
            .into_iter()
            .map(|s| {
                let v = jsonschema::validator_for(&s.schema)
                    .unwrap_or_else(|e| panic!("schemas/{}: does not compile: {e}", s.file_name()));
                (s.name, v)
            })
            .collect()
    })
}

/// What is wrong with `value` by the schema `name`, one line per error; empty when it is valid.
pub fn schema_errors(name: &str, value: &serde_json::Value) -> Vec<String> {
    let Some(v) = validators().get(name) else {
        return vec![format!("no schema schemas/{name}.schema.json")];
    };
    v.iter_errors(value)
        .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
        .collect()
}

/// Checks every JSON record among `stdout`'s lines against the schema of its `type`, and fails
/// the test naming the record that does not meet it. Lines that are not one JSON object (a
/// text report, a command line, a line cut short by a killed tool) are not records.
pub fn check_records(what: &str, stdout: &[u8]) {
    for (n, line) in String::from_utf8_lossy(stdout).lines().enumerate() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if !value.is_object() {
            continue;
        }
        // PR facts, pr-classify's input, are the one shape printed without a type.
        let facts = what.starts_with("pr-classify") && what.contains("--print-facts");
        let Some(kind) = value
            .get("type")
            .and_then(|t| t.as_str())
            .or(facts.then_some("pr-facts"))
        else {
            panic!(
                "{what}: stdout line {}: a JSON object without \"type\": {line}",
                n + 1
            );
        };
        let errors = schema_errors(kind, &value);
        assert!(
            errors.is_empty(),
            "{what}: stdout line {}: the {kind} record does not meet schemas/{kind}.schema.json:\n  {}\n{line}",
            n + 1,
            errors.join("\n  ")
        );
    }
}

/// Whether `cmd` runs one of our tools, or a script of bin/ that composes them: their standard
/// output is records (or a text report), checked by [`check_records`].
fn ours(cmd: &Command) -> bool {
    let program = Path::new(cmd.get_program());
    [
        "panel-judge",
        "panel-tally",
        "panel-merge",
        "panel-vote",
        "pr-classify",
    ]
    .iter()
    .any(|b| program == bin(b))
        || program.starts_with(root().join("bin"))
}

/// `Command::output`, with every record our tools print checked against its schema.
pub trait Checked {
    fn checked_output(&mut self) -> std::io::Result<Output>;
}

impl Checked for Command {
    fn checked_output(&mut self) -> std::io::Result<Output> {
        let out = self.output()?;
        if ours(self) {
            check_records(&describe(self), &out.stdout);
        }
        Ok(out)
    }
}

/// The command's program and arguments, for a failure message.
fn describe(cmd: &Command) -> String {
    let mut words = vec![
        Path::new(cmd.get_program())
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
    ];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

/// Replaces what differs between two launches of one judge: the private folder
/// (`TMP/panel-sandbox.XXXXXX/NAME`, NAME random in a run and `judge` in a pasted dry run) and
/// the fence's nonce (32 hex digits).
pub fn hide_private(text: &str, tmp: &Path) -> String {
    let lead = format!("{}/panel-sandbox.", tmp.display());
    let mut t = text.to_string();
    while let Some(i) = t.find(&lead) {
        let mut end = (i + lead.len() + 6).min(t.len());
        if t[end..].starts_with('/') {
            let name = t[end + 1..]
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            end += 1 + name;
        }
        t.replace_range(i..end, "<private>");
    }
    let mut out = String::new();
    let mut rest = t.as_str();
    while let Some(c) = rest.chars().next() {
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            .count();
        let take = match n {
            32 => {
                out.push_str("<nonce>");
                32
            }
            0 => {
                out.push(c);
                c.len_utf8()
            }
            n => {
                out.push_str(&rest[..n]);
                n
            }
        };
        rest = &rest[take..];
    }
    out
}

/// Git with a fixed identity and no user or system configuration, so it works anywhere.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .checked_output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// `path` as one word of a shell command line, whatever it holds (a clone in a path with a
/// space, a quote).
pub fn sh_word(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// `cmd` as a user runs it: none of the test's environment but PATH (with `bindir` first),
/// their HOME and temporary folder, `LANG`, the variables `env` gives, standard input closed.
pub fn as_a_user<K: AsRef<std::ffi::OsStr>, V: AsRef<std::ffi::OsStr>>(
    cmd: &mut Command,
    bindir: &Path,
    (home, tmp): (&Path, &Path),
    env: impl IntoIterator<Item = (K, V)>,
) {
    cmd.env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                bindir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home)
        .env("TMPDIR", tmp)
        .env("LANG", "C.UTF-8")
        .envs(env)
        .stdin(Stdio::null());
}

/// The machines users run panel on that this one is not, made for one command and all it
/// starts (docs/testing.md, "Where panel runs").
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// User namespaces, as Docker's default seccomp profile refuses them (and Ubuntu 24.04's
    /// AppArmor, GitHub's runners): EPERM to `unshare` and `clone` with `CLONE_NEWUSER`,
    /// ENOSYS to `clone3`.
    UserNamespaces,
    /// Those, and Landlock (ENOSYS, as a kernel before 5.13 or without it at boot).
    UserNamespacesAndLandlock,
}

#[cfg(target_os = "linux")]
impl Refused {
    /// `cmd` runs under a seccomp filter that refuses what `self` names, inherited by every
    /// process it starts.
    pub fn on(self, cmd: &mut Command) -> &mut Command {
        use seccompiler::{
            BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
            SeccompFilter, SeccompRule, TargetArch,
        };
        use std::os::unix::process::CommandExt;
        let arch = if cfg!(target_arch = "aarch64") {
            TargetArch::aarch64
        } else {
            TargetArch::x86_64
        };
        let newuser = libc::CLONE_NEWUSER as u64;
        let with_newuser = || {
            let c = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(newuser),
                newuser,
            )
            .unwrap();
            vec![SeccompRule::new(vec![c]).unwrap()]
        };
        let program = |calls: Vec<(i64, Vec<SeccompRule>)>, errno: i32| -> BpfProgram {
            SeccompFilter::new(
                calls.into_iter().collect(),
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .unwrap()
            .try_into()
            .unwrap()
        };
        let eperm = program(
            vec![
                (libc::SYS_unshare, with_newuser()),
                (libc::SYS_clone, with_newuser()),
            ],
            libc::EPERM,
        );
        let mut enosys = vec![(libc::SYS_clone3, vec![])];
        if self == Refused::UserNamespacesAndLandlock {
            enosys.push((libc::SYS_landlock_create_ruleset, vec![]));
        }
        let programs = [eperm, program(enosys, libc::ENOSYS)];
        // SAFETY: between fork and exec, only prctl and seccomp on programs built before.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                for p in &programs {
                    let prog = libc::sock_fprog {
                        len: p.len() as u16,
                        filter: p.as_ptr() as *mut libc::sock_filter,
                    };
                    let set_mode_filter = 1;
                    if libc::syscall(libc::SYS_seccomp, set_mode_filter, 0, &prog) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            })
        }
    }
}
