//! Every login a user has, through the walls, and still theirs afterwards (issue 35): each real
//! CLI × each kind of login its users have × {jail, Landlock alone, `--sandbox off`}, as a real
//! login runs: the CLI's own hosts (`api.anthropic.com`, `platform.claude.com`, …) reached over
//! TLS through the user's `HTTPS_PROXY` (a stand-in that tunnels every host to the stand-in
//! server, tests/tls.rs), trusting the test's authority through `NODE_EXTRA_CA_CERTS` and
//! `SSL_CERT_FILE`; stand-in token endpoints that rotate and refuse reuse, revoking the login
//! (tests/tokens.rs); every model request held to a live access token.
//!
//! Each cell runs one panel of three judges at once on the CLI (a forced retry among them: the
//! second lens's first answer is prose), with the access token expired an hour ago (the user
//! last ran the CLI yesterday) and fresh. Each cell holds:
//! - every judge answered;
//! - no spent refresh token was presented again (no reuse), and an expired login was refreshed
//!   once for the run, a fresh one never;
//! - the user's store afterwards holds the live refresh token, and the user's own CLI, run once
//!   afterwards outside panel, answers without a login error;
//! - no refresh token the login ever had, nor anything else of the user's that a judge must
//!   not get (`World::hidden`: their other accounts' tokens, the variables the CLI does not
//!   use, the way to their credential store), appeared in a judge's files, environment or argv
//!   (watched while the panel ran), nor in a record, the run folder, standard output or error.
//!
//! And once per login: four `panel-judge` processes started at once on one expired login
//! refresh it once between them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::mockserver::{MockServer, Mode};
use crate::real_cli::real_cli;
use crate::tls::{ConnectProxy, TestCa};
use crate::tokens::{Family, Tokens};
use crate::util::{TempDir, bin};

const WORK: &str = "# first\n\n`first(xs)` returns `xs[0]` and never raises.\n";
const LENSES: [&str; 3] = [
    "correctness=Does the work do what it claims?",
    "edges=Is there an input it claims to handle that breaks it?",
    "evidence=Is every claim it makes supported by the text?",
];
/// The second lens's first model request fails: its judge is asked again.
const RETRIED: &str = "Is there an input it claims to handle";

/// The walls a cell's judges run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walls {
    Jail,
    Landlock,
    Off,
}

impl Walls {
    fn flag(self) -> &'static str {
        match self {
            Walls::Jail => "required",
            Walls::Landlock => "landlock",
            Walls::Off => "off",
        }
    }
}

/// The world of one cell: a user's HOME, the stand-in services, the user's proxy and authority.
pub(crate) struct World {
    _tmp: TempDir,
    pub(crate) home: PathBuf,
    pub(crate) scratch: PathBuf,
    pub(crate) run: PathBuf,
    pub(crate) candidate: PathBuf,
    pub(crate) server: MockServer,
    /// The user's HTTPS_PROXY, alive as long as the world.
    _proxy: ConnectProxy,
    pub(crate) tokens: Arc<Tokens>,
    bindir: PathBuf,
    /// What the user exports.
    pub(crate) env: Vec<(String, String)>,
    /// What the user has that no judge may see (the tokens of the user's other accounts and
    /// variables, the way to their credential store): looked for as the refresh tokens are.
    pub(crate) hidden: Vec<String>,
    /// What lives as long as the world (a session bus and its keyring), ended when it goes.
    pub(crate) keep: Vec<Box<dyn std::any::Any>>,
}

impl World {
    pub(crate) fn new(tag: &str, bindir: &Path) -> World {
        let tmp = TempDir::new(tag);
        let root = tmp.path().canonicalize().unwrap();
        let (home, scratch) = (root.join("home"), root.join("tmp"));
        for d in [&home, &scratch] {
            std::fs::create_dir_all(d).unwrap();
        }
        // Where a root caller's judges (unprivileged ids) can read the authority's file.
        let ca_dir = root.join("ca");
        std::fs::create_dir_all(&ca_dir).unwrap();
        for d in [&root, &ca_dir] {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let ca = TestCa::new(&ca_dir);
        let server = MockServer::start();
        server.speak_tls(&ca);
        let tokens = Tokens::new();
        server.set_front(tokens.front());
        let proxy = ConnectProxy::start(server.addr());
        let candidate = root.join("work.md");
        std::fs::write(&candidate, WORK).unwrap();
        let ca_file = ca.pem().display().to_string();
        let env = vec![
            ("HTTPS_PROXY".to_string(), proxy.url()),
            ("NODE_EXTRA_CA_CERTS".to_string(), ca_file.clone()),
            ("SSL_CERT_FILE".to_string(), ca_file),
        ];
        World {
            _tmp: tmp,
            home,
            scratch,
            run: root.join("run"),
            candidate,
            server,
            _proxy: proxy,
            tokens,
            bindir: bindir.to_path_buf(),
            env,
            hidden: Vec::new(),
            keep: Vec::new(),
        }
    }

    /// The folder the world lives in.
    pub(crate) fn root(&self) -> &Path {
        self.home.parent().unwrap()
    }

    /// A program as the user runs it: their HOME, temporary folder and variables, the CLI's
    /// folder first on PATH.
    pub(crate) fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        let own = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let env = std::iter::once(("PANEL_HISTORY", "off")).chain(own);
        crate::util::as_a_user(&mut c, &self.bindir, (&self.home, &self.scratch), env);
        c
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // What lives in its folder ends before the folder goes.
        self.keep.clear();
    }
}

/// One kind of login of one CLI, as its users have it.
pub(crate) struct Case {
    /// The harness row (and its executable).
    pub(crate) cli: &'static str,
    /// The row's name for this login.
    pub(crate) kind: &'static str,
    pub(crate) model: Option<&'static str>,
    /// The token family the login is (none for a key that never expires).
    pub(crate) family: Option<fn() -> Family>,
    /// Puts the user's login in place (files in HOME, variables in `world.env`) from what the
    /// token service issued; `expired`: its access token expired an hour ago.
    pub(crate) user: fn(&mut World, expired: bool),
    /// The user's store and the pointer of its refresh token, under HOME.
    pub(crate) store: Option<(&'static str, &'static str)>,
    /// The user's own CLI, run afterwards: its arguments.
    pub(crate) own: &'static [&'static str],
    /// What the retried judge's first model request meets: a failure the CLI gives up on at
    /// once, so that panel asks again.
    pub(crate) fail_once: Mode,
}

/// The folders and files under `dir` (small ones), for a token that must not be there.
fn texts_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file()
                && e.metadata().is_ok_and(|m| m.len() < 4 << 20)
                && let Ok(b) = std::fs::read(e.path())
            {
                out.push((e.path(), b));
            }
        }
    }
    out
}

fn holds_any(bytes: &[u8], secrets: &[String]) -> Option<String> {
    secrets
        .iter()
        .find(|s| memchr::memmem::find(bytes, s.as_bytes()).is_some())
        .cloned()
}

/// Watches, while a panel runs, every process whose HOME is one of its judges' private HOMEs
/// (its environment and argv) and every file under the temporary folder where those live,
/// for any of `secrets`; says where one was seen.
struct Watch {
    stop: Arc<AtomicBool>,
    seen: std::thread::JoinHandle<Vec<String>>,
}

impl Watch {
    /// `secrets` is asked again at each look: a token issued meanwhile is looked for too.
    fn start(scratch: &Path, secrets: impl Fn() -> Vec<String> + Send + 'static) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let (s, scratch) = (Arc::clone(&stop), scratch.to_path_buf());
        let seen = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let home = format!("HOME={}/", scratch.display());
            loop {
                let last = s.load(Ordering::SeqCst);
                let secrets = secrets();
                for pid in crate::util::processes_with_env(&home) {
                    for what in ["environ", "cmdline"] {
                        let b = std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
                        if let Some(t) = holds_any(&b, &secrets) {
                            seen.push(format!("pid {pid}'s {what} holds {t}"));
                        }
                    }
                }
                for (path, b) in texts_under(&scratch) {
                    if let Some(t) = holds_any(&b, &secrets) {
                        seen.push(format!("{} holds {t}", path.display()));
                    }
                }
                if last {
                    break;
                }
                std::thread::sleep(Duration::from_millis(150));
            }
            seen.sort();
            seen.dedup();
            seen
        });
        Watch { stop, seen }
    }

    fn finish(self) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        self.seen.join().unwrap()
    }
}

pub(crate) fn panel_judge(
    world: &World,
    case: &Case,
    walls: Walls,
    lenses: &[&str],
    out: &Path,
) -> Command {
    let seat = match case.model {
        Some(m) => format!("{}:{m}", case.cli),
        None => case.cli.to_string(),
    };
    let mut c = world.command(&bin("panel-judge"));
    c.args([
        "--seat",
        &seat,
        "--timeout",
        "120",
        "--sandbox",
        walls.flag(),
    ]);
    for l in lenses {
        c.args(["--lens", l]);
    }
    c.arg("--out").arg(out).arg(&world.candidate);
    c
}

/// One cell: what went wrong, in words (empty: it held).
fn cell(case: &Case, bindir: &Path, walls: Walls, expired: bool) -> Vec<String> {
    let _slot = crate::real_judge::Slot::take();
    let name = format!(
        "{} {} {walls:?} {}",
        case.cli,
        case.kind,
        if expired { "expired" } else { "fresh" }
    );
    let mut w = World::new(&format!("login-{}-{}", case.cli, case.kind), bindir);
    (case.user)(&mut w, expired);
    w.server.mode_once(RETRIED, case.fail_once);
    let family = case.family.map(|f| f().name);
    let mut secrets = family
        .as_deref()
        .map(|f| w.tokens.all_refresh(f))
        .unwrap_or_default();
    secrets.extend(w.hidden.iter().cloned());
    // Issue 46: behind walls, a judge holds a placeholder and no live token or key; the model
    // service (its front holds every request to a live credential) got the live one.
    let (watched, tokens) = (secrets.clone(), Arc::clone(&w.tokens));
    let live = walls != Walls::Off && swapped(case);
    let watch = Watch::start(&w.scratch, move || {
        let issued = live.then(|| tokens.all_credentials());
        watched
            .iter()
            .cloned()
            .chain(issued.into_iter().flatten())
            .collect()
    });
    let out = panel_judge(&w, case, walls, &LENSES, &w.run)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let mut wrong: Vec<String> = watch
        .finish()
        .into_iter()
        .map(|s| format!("{name}: while it ran, {s}"))
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let records: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let answered = records.iter().filter(|r| r["status"] == "ok").count();
    if out.status.code() != Some(0) || answered != 3 {
        wrong.push(format!(
            "{name}: exit {:?}, {answered} of 3 answered: {stdout}{stderr}",
            out.status.code()
        ));
    }
    if !records.iter().any(|r| r["attempts"] == 2) {
        wrong.push(format!("{name}: no judge was asked again: {stdout}"));
    }
    let login_said = records
        .iter()
        .all(|r| r["sandbox"].as_str().is_some_and(|s| !s.is_empty()));
    if !login_said {
        wrong.push(format!("{name}: a record says no walls: {stdout}"));
    }
    // Every request the CLI sent its credential with was a model request of its row's: the
    // row's endpoints are what the real CLI uses (a refusal the CLI got past is still one).
    for (path, b) in texts_under(&w.run) {
        let log = String::from_utf8_lossy(&b);
        let refused = log.lines().filter(|l| l.starts_with("refused on "));
        for line in path
            .ends_with("egress.log")
            .then_some(refused)
            .into_iter()
            .flatten()
        {
            wrong.push(format!("{name}: its proxy refused: {line}"));
        }
    }
    wrong.extend(after(case, &w, &name, expired));
    for (path, b) in texts_under(&w.run).into_iter().chain([
        (PathBuf::from("stdout"), out.stdout.clone()),
        (PathBuf::from("stderr"), out.stderr.clone()),
    ]) {
        if let Some(t) = holds_any(&b, &secrets) {
            wrong.push(format!("{name}: {} holds {t}", path.display()));
        }
    }
    wrong
}

/// Whether the case's login is one a judge holds a placeholder of (its row says where to swap
/// the live credential in).
fn swapped(case: &Case) -> bool {
    let path = crate::util::root().join("src/engine/harness/builtin.json");
    let rows: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let row = rows
        .iter()
        .find(|r| r["name"] == case.cli)
        .expect("a built-in row");
    let mut logins = row["logins"].as_array().into_iter().flatten();
    logins.any(|l| l["kind"] == case.kind && l.get("swap").is_some())
}

/// What a cell leaves: the refreshes the endpoint saw, the user's store, the user's own CLI.
fn after(case: &Case, w: &World, name: &str, expired: bool) -> Vec<String> {
    let mut wrong = Vec::new();
    let Some(family) = case.family.map(|f| f().name) else {
        return own(case, w, name);
    };
    let ok = w
        .tokens
        .refreshes()
        .iter()
        .filter(|r| r.outcome == "ok")
        .count();
    let want = usize::from(expired);
    if w.tokens.reuses() > 0 || w.tokens.revoked(&family) || ok != want {
        wrong.push(format!(
            "{name}: {ok} refreshes (want {want}), {} reuses: {:?}",
            w.tokens.reuses(),
            w.tokens.refreshes()
        ));
    }
    if let Some((rel, pointer)) = case.store {
        let text = std::fs::read_to_string(w.home.join(rel)).unwrap_or_default();
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let held = v.pointer(pointer).and_then(Value::as_str);
        if held.is_none() || held != w.tokens.live_refresh(&family).as_deref() {
            wrong.push(format!(
                "{name}: the user's store holds {held:?}, the live refresh token is {:?}",
                w.tokens.live_refresh(&family)
            ));
        }
    }
    wrong.extend(own(case, w, name));
    if w.tokens.reuses() > 0 || w.tokens.revoked(&family) {
        wrong.push(format!(
            "{name}: the user's own CLI spent a dead refresh token: {:?}",
            w.tokens.refreshes()
        ));
    }
    wrong
}

/// The user's own CLI, run once outside panel: it answers without a login error. (No
/// arguments: the CLI cannot use this login by itself, and panel's judges are what is tested.)
fn own(case: &Case, w: &World, name: &str) -> Vec<String> {
    if case.own.is_empty() {
        return Vec::new();
    }
    let exe = w.bindir.join(case.cli);
    let refused = w.tokens.refused().len();
    let out = w
        .command(&exe)
        .args(case.own)
        .current_dir(&w.scratch)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A login error is a request the stand-ins refused for the credential it carried (the
    // CLI's side calls with none, telemetry and plugins, are no login's).
    let refused: Vec<String> = w
        .tokens
        .refused()
        .split_off(refused)
        .into_iter()
        .filter(|r| !r.ends_with(": no credential"))
        .collect();
    match out.status.success() && refused.is_empty() && said.contains("breaks") {
        true => Vec::new(),
        false => vec![format!(
            "{name}: the user's own {} afterwards: exit {:?}, refused {refused:?}: {said}",
            case.cli,
            out.status.code()
        )],
    }
}

/// Four panel-judge processes started at once on one expired login refresh it once.
fn four_at_once(case: &Case, bindir: &Path) -> Vec<String> {
    let _slot = crate::real_judge::Slot::take();
    let name = format!("{} {} four at once", case.cli, case.kind);
    let mut w = World::new(&format!("login4-{}", case.cli), bindir);
    (case.user)(&mut w, true);
    let children: Vec<_> = (0..4)
        .map(|i| {
            let out = w.run.with_file_name(format!("run-{i}"));
            panel_judge(&w, case, Walls::Jail, &LENSES[..1], &out)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut wrong = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.code() != Some(0) || !stdout.contains("\"status\":\"ok\"") {
            wrong.push(format!(
                "{name}: exit {:?}: {stdout}{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    wrong.extend(after(case, &w, &name, true));
    wrong
}

/// Every cell of `case`, and the four processes at once for a login that expires.
pub(crate) fn check(case: &Case) {
    let Some(exe) = real_cli(case.cli) else {
        return;
    };
    let bindir = exe.parent().unwrap().to_path_buf();
    let states: &[bool] = match case.family {
        Some(_) => &[true, false],
        None => &[false],
    };
    let mut wrong = Vec::new();
    for walls in [Walls::Jail, Walls::Landlock, Walls::Off] {
        if walls == Walls::Jail && crate::util::auto_walls().starts_with("landlock") {
            continue;
        }
        for &expired in states {
            wrong.extend(cell(case, &bindir, walls, expired));
        }
    }
    if case.family.is_some() {
        wrong.extend(four_at_once(case, &bindir));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Whether the programs a case needs besides the CLI are on PATH; if not, the case's skip is
/// recorded and said, as the real CLIs' are.
pub(crate) fn have(programs: &[&str]) -> bool {
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| !crate::util::on_path(p))
        .collect();
    if missing.is_empty() {
        crate::util::ran("login tools");
        return true;
    }
    let why = format!("{} not on PATH (.ci/run installs them)", missing.join(", "));
    crate::util::skipped("login tools", &why, &format!("login tests: skipped: {why}"));
    false
}

// ---------------------------------------------------------------- what the users have

mod claude;
mod codex;
mod copilot;
mod gemini;
mod kimi;
mod opencode;
mod qwen;

/// Milliseconds since the epoch.
pub(crate) fn ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Every CLI's cases.
fn cases() -> impl Iterator<Item = &'static Case> {
    [
        claude::CASES,
        codex::CASES,
        copilot::CASES,
        gemini::CASES,
        kimi::CASES,
        opencode::CASES,
        qwen::CASES,
    ]
    .into_iter()
    .flatten()
}

pub(crate) fn case(cli: &str, kind: &str) -> &'static Case {
    cases()
        .find(|c| c.cli == cli && c.kind == kind)
        .unwrap_or_else(|| panic!("no case {cli} {kind}"))
}
