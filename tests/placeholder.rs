//! No live secret in a jail (issue 46): a judge holds a placeholder where its CLI reads its
//! credential, and its proxy swaps the live one in on its model's own requests alone, in
//! every place judges run (the jail, Landlock alone, a machine that refuses user namespaces).
//! The judge here is the attacker: it looks for the live key everywhere it can, and sends its
//! placeholder where it should not.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::tool::Tool;
#[cfg(target_os = "linux")]
use crate::util::Refused;
use crate::util::{TempDir, root};

const LIVE: &str = "sk-keyed-LIVE0123456789abcdefLIVE";
const OTHER: &str = "other-account-token-0123456789";

/// A model server on this machine's loopback that keeps every request head it gets, and
/// answers each `200 ok`.
struct Model {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Model {
    fn start() -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&heads);
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || serve(conn, &kept));
            }
        });
        Model { port, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

fn serve(mut conn: TcpStream, kept: &Mutex<Vec<String>>) {
    loop {
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match conn.read(&mut b) {
                Ok(1) => head.push(b[0]),
                _ => return,
            }
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let len: usize = text
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(String::from)
            })
            .map_or(0, |n| n.trim().parse().unwrap_or(0));
        let mut body = vec![0u8; len];
        if conn.read_exact(&mut body).is_err() {
            return;
        }
        kept.lock().unwrap().push(text);
        let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
}

/// The attacker's CLI: it reads everything it can see (its environment, argv, every file
/// under its HOME and its private folder), asks its model once as its CLI would, then sends
/// its placeholder to another path and another credential to the model's path, and writes
/// what it saw and what each request was answered to `$KEYED_OUT`.
const CLI: &str = r#"#!/usr/bin/env python3
import json, os, socket, sys
sys.stdin.read()
key = os.environ.get('KEYED_API_KEY', '')
base = os.environ['KEYED_BASE_URL'][len('http://'):].rstrip('/')
host, port = base.rsplit(':', 1)
def ask(path, cred):
    try:
        s = socket.create_connection((host, int(port)), timeout=20)
        s.sendall(('POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}' % (path, host, cred)).encode())
        data = b''
        while b'\r\n\r\n' not in data:
            c = s.recv(4096)
            if not c:
                break
            data += c
        s.close()
        return data.split(b'\r\n')[0].decode()
    except OSError as e:
        return 'error: %s' % e
seen = {'env': dict(os.environ), 'argv': sys.argv, 'files': {}, 'key': key, 'fds': {}}
for fd in os.listdir('/proc/self/fd'):
    try:
        seen['fds'][fd] = os.readlink('/proc/self/fd/' + fd)
    except OSError:
        pass
for top in (os.environ['HOME'], os.path.dirname(os.environ['HOME'])):
    for root, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(root, f)
            try:
                with open(p, 'rb') as fh:
                    seen['files'][p] = fh.read(1 << 20).decode('utf-8', 'replace')
            except OSError:
                pass
seen['model'] = ask('/v1/messages', key)
seen['other_path'] = ask('/v1/files', key)
seen['other_key'] = ask('/v1/messages', 'sk-keyed-guess')
with open(os.environ['KEYED_OUT'] + '.' + os.urandom(8).hex(), 'w') as out:
    json.dump(seen, out)
print(json.dumps({'verdict': 'holds', 'reason': 'looked', 'confidence': 0.5}))
"#;

/// A row of the CLI's: its key in `KEYED_API_KEY`, sent as `Authorization: Bearer`, to
/// `/v1/messages` alone; another login of the row's (another account's token) beside it.
fn row() -> Value {
    json!({
        "name": "keyed",
        "executable": "keyed-cli",
        "argv": [],
        "prompt": "stdin",
        "passEnv": ["KEYED_API_KEY", "KEYED_OTHER_TOKEN", "KEYED_BASE_URL", "KEYED_OUT"],
        "logins": [
            {"kind": "api-key", "env": ["KEYED_API_KEY"],
             "swap": {"header": "authorization", "scheme": "Bearer ", "endpoints": [
                {"base": "https://api.keyed.example", "baseEnv": "KEYED_BASE_URL",
                 "methods": ["POST"], "paths": ["/v1/messages"]}]}},
            {"kind": "other", "env": ["KEYED_OTHER_TOKEN"], "live": "a test's other account"}
        ]
    })
}

/// The walls this machine gives: the jail where it can be, Landlock alone, and auto where
/// user namespaces are refused.
fn modes() -> Vec<&'static str> {
    let mut m = vec!["auto"];
    if crate::util::landlock() && crate::util::auto_walls().starts_with("jail") {
        m.extend(["landlock", "no-userns"]);
    }
    m
}

/// The attacker's row and CLI written under `dir`: the rows file, and the folder of the CLI.
fn install(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let bindir = dir.join("bin");
    std::fs::create_dir_all(&bindir).unwrap();
    let cli = bindir.join("keyed-cli");
    std::fs::write(&cli, CLI).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rows = dir.join("rows.json");
    std::fs::write(&rows, row().to_string()).unwrap();
    (rows, bindir)
}

/// The attacker judged in `mode`, the user's key `key` (none: only the row's other login):
/// its record, what it saw, and its egress log.
fn judge(dir: &Path, model: &Model, mode: &str, key: Option<&str>) -> (Value, Value, String) {
    let (recs, seen, log) = judges(
        dir,
        model,
        mode,
        key,
        &root().join("examples/answer.md"),
        &["a=Q?"],
    );
    let rec = recs.into_iter().next().unwrap_or(Value::Null);
    (rec, seen.into_iter().next().unwrap_or(Value::Null), log)
}

/// The attacker as a panel of `lenses` on `candidate`, in `mode`: its records, what each
/// judge saw, and the first judge's egress log.
fn judges(
    dir: &Path,
    model: &Model,
    mode: &str,
    key: Option<&str>,
    candidate: &Path,
    lenses: &[&str],
) -> (Vec<Value>, Vec<Value>, String) {
    use std::os::unix::fs::PermissionsExt;
    let (rows, bindir) = install(dir);
    let outdir = dir.join(format!("out-{mode}"));
    std::fs::create_dir_all(&outdir).unwrap();
    for d in [dir, &bindir, &outdir] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let out = outdir.join("seen.json");
    let run = dir.join(format!("run-{mode}"));
    let mut cmd = Tool::new("panel-judge");
    #[cfg(target_os = "linux")]
    if mode == "no-userns" {
        Refused::UserNamespaces.on(cmd.command());
    }
    let path = format!(
        "{}:{}",
        bindir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.args(["--harness-file", rows.to_str().unwrap(), "--seat", "keyed"])
        .args(lenses.iter().flat_map(|l| ["--lens", l]))
        .args(["--retries", "0", "--timeout", "60"])
        .args(["--sandbox", if mode == "no-userns" { "auto" } else { mode }])
        .args(["--sandbox-write", outdir.to_str().unwrap(), "--out"])
        .arg(&run)
        .arg(candidate)
        .env("PATH", path)
        .env("PANEL_HISTORY", "off")
        .env("KEYED_OTHER_TOKEN", OTHER)
        .env("KEYED_BASE_URL", format!("http://127.0.0.1:{}", model.port))
        .env("KEYED_OUT", &out);
    match key {
        Some(k) => cmd.env("KEYED_API_KEY", k),
        None => cmd.env_remove("KEYED_API_KEY"),
    };
    let o = cmd.run();
    let seen = std::fs::read_dir(&outdir)
        .unwrap()
        .flatten()
        .filter_map(|f| std::fs::read_to_string(f.path()).ok())
        .filter_map(|t| serde_json::from_str(&t).ok())
        .collect();
    let first = lenses[0].split('=').next().unwrap();
    let log =
        std::fs::read_to_string(run.join(first).join("attempt-1/egress.log")).unwrap_or_default();
    (o.records(), seen, log)
}

/// Issue 46: "Each judge gets a random placeholder, per run, in the place and form its CLI
/// reads, and never a live token or key … A request to another path, or carrying anything but
/// the placeholder, is refused and logged in `egress.log`", and "a judge learns nothing of …
/// what the caller has": its row's other login is not in its environment.
#[test]
fn a_judge_holds_a_placeholder_and_its_model_alone_gets_the_live_key() {
    for mode in modes() {
        let tmp = TempDir::new(&format!("placeholder-{mode}"));
        let model = Model::start();
        let (rec, seen, log) = judge(tmp.path(), &model, mode, Some(LIVE));
        assert_eq!(rec["status"], "ok", "{mode}: {rec}");
        let everything = seen.to_string();
        assert!(
            seen["key"].as_str().is_some_and(|k| k.starts_with("sk-")),
            "{mode}: {seen}"
        );
        assert!(
            !everything.contains(LIVE),
            "{mode}: the judge saw the live key"
        );
        assert!(
            !everything.contains(OTHER),
            "{mode}: the judge saw the other login"
        );
        let placeholder = seen["key"].as_str().unwrap().to_string();
        assert_ne!(placeholder, LIVE);
        // Its model request went on with the live key; the others never reached the model.
        assert_eq!(seen["model"], "HTTP/1.1 200 OK", "{mode}: {seen}");
        assert!(
            seen["other_path"]
                .as_str()
                .unwrap()
                .starts_with("HTTP/1.1 403"),
            "{mode}"
        );
        assert!(
            seen["other_key"]
                .as_str()
                .unwrap()
                .starts_with("HTTP/1.1 403"),
            "{mode}"
        );
        let heads = model.heads();
        assert_eq!(heads.len(), 1, "{mode}: {heads:?}");
        assert!(
            heads[0].starts_with("POST /v1/messages "),
            "{mode}: {heads:?}"
        );
        assert!(
            heads[0].contains(&format!("Bearer {LIVE}\r\n")),
            "{mode}: {heads:?}"
        );
        assert!(!heads.concat().contains(&placeholder));
        assert!(
            log.contains("POST /v1/files is not a model request of 127.0.0.1:"),
            "{mode}: {log}"
        );
        assert!(
            log.contains("its Authorization header holds something other than its placeholder"),
            "{mode}: {log}"
        );
        assert!(
            !log.contains(LIVE) && !log.contains(&placeholder),
            "{mode}: {log}"
        );
    }
}

/// Issue 47: the first judge of a seat (a candidate long enough to cache, two lenses on one
/// seat) has its supervisor tell the tool when its model begins to answer, through a pipe the
/// supervisor holds. In every place, no judge holds a descriptor but its standard ones: the
/// pipe reaches no judge, and both are answered.
#[test]
fn the_first_judge_of_a_seat_holds_no_descriptor_of_its_supervisors() {
    for mode in modes() {
        let tmp = TempDir::new(&format!("began-{mode}"));
        let model = Model::start();
        let candidate = tmp.path().join("candidate.md");
        std::fs::write(&candidate, "A long answer under review.\n".repeat(300)).unwrap();
        let lenses = ["a=Q1?", "b=Q2?"];
        let (recs, seen, _) = judges(tmp.path(), &model, mode, Some(LIVE), &candidate, &lenses);
        assert_eq!(recs.len(), 2, "{mode}: {recs:?}");
        assert!(recs.iter().all(|r| r["status"] == "ok"), "{mode}: {recs:?}");
        assert_eq!(seen.len(), 2, "{mode}");
        for s in &seen {
            let fds = s["fds"].as_object().unwrap();
            let open: Vec<_> = fds
                .iter()
                .filter(|(fd, to)| {
                    fd.parse::<u32>().unwrap() > 2 && !to.as_str().unwrap().starts_with("/proc/")
                })
                .collect();
            assert!(open.is_empty(), "{mode}: a judge holds {open:?}");
        }
        assert_eq!(model.heads().len(), 2, "{mode}");
    }
}

/// Issue 46: "a CLI that cannot take a placeholder … says so in its row, its records and
/// `--doctor`, and keeps today's behaviour": the row's other login is kept live, and said so.
#[test]
fn a_login_its_row_keeps_live_is_said_in_the_record_and_by_the_doctor() {
    let tmp = TempDir::new("placeholder-live");
    let model = Model::start();
    let (rec, seen, _) = judge(tmp.path(), &model, "auto", None);
    assert_eq!(rec["status"], "ok", "{rec}");
    assert_eq!(seen["env"]["KEYED_OTHER_TOKEN"], OTHER, "{seen}");
    let sandbox = rec["sandbox"].as_str().unwrap_or_default();
    assert!(
        sandbox.ends_with("; its login held live: a test's other account"),
        "{sandbox}"
    );
    // The doctor says what a judge holds of the login it would get.
    let (rows, _) = install(tmp.path());
    let doctor = |env: (&str, &str)| {
        let o = Tool::new("panel-judge")
            .args([
                "--harness-file",
                rows.to_str().unwrap(),
                "--doctor",
                "--json",
            ])
            .env_remove("KEYED_API_KEY")
            .env_remove("KEYED_OTHER_TOKEN")
            .env(env.0, env.1)
            .run();
        let keyed = o
            .records()
            .into_iter()
            .find(|r| r["name"] == "keyed")
            .unwrap_or(Value::Null);
        keyed["loginUsed"]["judgeHolds"].clone()
    };
    assert_eq!(doctor(("KEYED_API_KEY", LIVE)), "placeholder");
    assert_eq!(
        doctor(("KEYED_OTHER_TOKEN", OTHER)),
        "live: a test's other account"
    );
}
