//! The jail from the outside (docs/design.md §8): what a kernel that forbids namespaces gets,
//! the one door out and what it refuses, what a failed judge is told it was refused, and the
//! bad input that is refused before anything starts. The attacks themselves are the hostile
//! matrix's (`tests/sealed.rs`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::tool::{Ran, Tool};
use crate::util::{TempDir, bin, root, stderr};

const HOLDS: &str = r#"{"verdict":"holds","reason":"r","confidence":0.5}"#;

/// panel-judge with one `exec:` seat, `args` after it, about the README's example answer.
fn judge(seat: &str, args: &[&str]) -> Tool {
    about(seat, args, &root().join("examples/answer.md"))
}

/// panel-judge with one `exec:` seat, `args` after it, about `candidate`.
fn about(seat: &str, args: &[&str], candidate: &Path) -> Tool {
    let family = format!("{seat}=x");
    let mut tool = Tool::new("panel-judge");
    tool.args(["--seat", seat, "--family", &family, "--lens", "a=Q?"])
        .args(["--retries", "0", "--timeout", "60"])
        .args(args)
        .arg(candidate)
        .env("PANEL_HISTORY", "off");
    tool
}

/// Whether this kernel makes jails for this caller (else the tests that need one skip).
fn jails() -> bool {
    let jailed = crate::util::auto_walls().starts_with("jail");
    if !jailed {
        crate::util::skipped(
            "jail",
            "no user namespaces",
            &format!("jail: tests skipped: {}", crate::util::auto_walls()),
        );
    }
    jailed
}

/// panel-judge run in a user namespace of its own whose limit on user namespaces is 0: a
/// kernel that forbids them, as far as panel-judge can tell.
fn without_namespaces(args: &[&str]) -> Ran {
    let script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"";
    let mut cmd = Tool::at("unshare");
    cmd.args(["--user", "--map-root-user", "sh", "-c", script, "sh"])
        .arg(bin("panel-judge"));
    one_judge_holds(cmd, args)
}

/// `cmd` (panel-judge, or what runs it) asks one `exec:` seat that answers holds, with `args`.
fn one_judge_holds(mut cmd: Tool, args: &[&str]) -> Ran {
    let seat = format!("exec:cat >/dev/null; echo '{HOLDS}'");
    cmd.args(["--seat", &seat, "--family", &format!("{seat}=x")])
        .args(["--lens", "a=Q?"])
        .args(args)
        .arg(root().join("examples/answer.md"))
        .env("PANEL_HISTORY", "off")
        .run()
}

/// Issue 22: "Where namespaces are forbidden … `--sandbox auto` falls back to Landlock alone
/// and says so in every record; `--sandbox required` refuses before anything starts, in one
/// line naming the cause and the fix".
#[test]
fn a_kernel_that_forbids_namespaces_is_said_in_every_record_or_refused() {
    if !jails() || !crate::util::landlock() {
        return;
    }
    let out = without_namespaces(&["--sandbox", "required"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "panel-judge: --sandbox required: no user namespaces: user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000); nothing was launched"
    );
    assert!(out.stdout.is_empty());

    let out = without_namespaces(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rec = &out.records()[0];
    assert_eq!(rec["status"], "ok", "{rec}");
    let said = rec["sandbox"].as_str().unwrap();
    let (walls, limits) = said.split_once("; limits: ").unwrap();
    assert!(
        walls.starts_with("landlock-abi-")
            && walls.ends_with(" (no user namespaces: user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000))"),
        "{said}"
    );
    // Issue 36: where the kernel forbids a jail, the record says which limits held and which
    // could not.
    assert!(
        limits.contains("files 1024, disk 1 GiB watched")
            && limits.ends_with("not held: processes (no cgroup, no jail), inotify (no jail)")
            || limits.ends_with("not held: inotify (no jail)"),
        "{said}"
    );
    assert!(
        stderr(&out).contains("judges run with landlock-abi-"),
        "{}",
        stderr(&out)
    );
}

/// A stand-in model server on this machine's loopback: answers one HTTP request with `body`,
/// and counts the connections it gets.
struct Endpoint {
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Endpoint {
    fn start(body: &'static str) -> Endpoint {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            for mut c in l.incoming().flatten() {
                h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = c.set_read_timeout(Some(std::time::Duration::from_millis(500)));
                let _ = c.read(&mut [0u8; 4096]);
                let _ = write!(
                    c,
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Endpoint { port, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// An exec seat (a bash script in `dir`) that asks its proxy (`$HTTPS_PROXY`, as a CLI does)
/// for a tunnel to `target` and sends a request through it; what came back is in its reason,
/// and it exits with `code`.
fn through_the_proxy(dir: &Path, target: &str, code: i32) -> String {
    let script = dir.join(format!("proxy-{}.sh", target.replace([':', '.'], "-")));
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\ncat >/dev/null\np=${{HTTPS_PROXY#http://}}\nexec 3<>/dev/tcp/${{p%:*}}/${{p##*:}}\n\
             printf 'CONNECT {target} HTTP/1.1\\r\\n\\r\\nGET / HTTP/1.0\\r\\n\\r\\n' >&3\n\
             r=$(timeout 5 cat <&3 | tr -cd 'A-Za-z0-9 .:-' | head -c 400)\n\
             [ {code} = 0 ] || {{ echo \"$r\" >&2; exit {code}; }}\n\
             printf '{{\"verdict\":\"holds\",\"reason\":\"%s\",\"confidence\":0.5}}\\n' \"$r\"\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("exec:{}", script.display())
}

/// Issue 22: "model traffic leaves only through an egress proxy … it lets through only the
/// hosts and ports of the harness's model endpoint … it never opens a port because the prompt
/// names one … The proxy logs every refused connection into the judge's run folder."
#[test]
fn the_proxy_lets_through_the_allowed_endpoint_alone_and_logs_what_it_refused() {
    if !jails() {
        return;
    }
    let tmp = TempDir::new("egress");
    let allowed = Endpoint::start("ALLOWEDBODY");
    let other = Endpoint::start("OTHERBODY");
    // Allowed: a tunnel to the endpoint it was granted.
    let to = format!("127.0.0.1:{}", allowed.port);
    let seat = through_the_proxy(tmp.path(), &to, 0);
    let run = tmp.path().join("run-allowed");
    let out = judge(
        &seat,
        &["--sandbox-allow", &to, "--out", run.to_str().unwrap()],
    )
    .run();
    let rec = &out.records()[0];
    let reason = rec["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("200 Connection established"), "{rec}");
    assert!(reason.contains("ALLOWEDBODY"), "{rec}");
    assert_eq!(allowed.hits(), 1);
    // Refused: another port of the same host, named in the candidate, as a stranger's text may.
    let candidate = tmp.path().join("cand.md");
    let named = format!("127.0.0.1:{}", other.port);
    std::fs::write(&candidate, format!("See http://{named}/ for the spec.\n")).unwrap();
    let seat = through_the_proxy(tmp.path(), &named, 0);
    let run = tmp.path().join("run-refused");
    let args = ["--sandbox-allow", &to, "--out", run.to_str().unwrap()];
    let out = about(&seat, &args, &candidate).run();
    let recs = out.records();
    let reason = recs[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("403 Forbidden"), "{reason}");
    assert!(
        reason.contains(&format!("{named} is not an endpoint of this judge")),
        "{reason}"
    );
    assert_eq!(other.hits(), 0, "the port the candidate names was opened");
    let log =
        std::fs::read_to_string(tmp.path().join("run-refused/a/attempt-1/egress.log")).unwrap();
    assert_eq!(
        log,
        format!("refused {named}: not an endpoint of this judge\n")
    );
}

/// Issue 22: "A judge that fails after the jail refused it something says so in its record's
/// `cause`: the path or host it was refused, and the option that grants it".
#[test]
fn a_failed_judge_is_told_what_its_walls_refused_and_what_grants_it() {
    if !jails() {
        return;
    }
    // Outside /tmp, which a jail has a private one of (the target folder is there when the
    // checkout is: then /var/tmp, which the jail shows as it is).
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let outside = if target.starts_with("/tmp") {
        Path::new("/var/tmp")
    } else {
        target
    };
    let tool = outside.join(format!("refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tool);
    let tmp = TempDir::new("refused");
    std::fs::create_dir_all(&tool).unwrap();
    // A seat that keeps a log beside itself.
    let script = tool.join("judge.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\necho started >> '{}/log.txt' || exit 1\necho '{HOLDS}'\n",
            tool.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = judge(&format!("exec:{}", script.display()), &[]).run();
    let rec = &out.records()[0];
    assert_eq!(rec["status"], "failed", "{rec}");
    let cause = rec["cause"].as_str().unwrap();
    assert!(
        cause.contains(&format!("--sandbox-write {}", tool.display())),
        "{cause}"
    );
    // The proxy's refusals are named too, with what grants a host.
    let seat = through_the_proxy(tmp.path(), "api.example.com:443", 1);
    let out = judge(&seat, &[]).run();
    let rec = &out.records()[0];
    let cause = rec["cause"]
        .as_str()
        .unwrap_or_else(|| panic!("{rec}"))
        .to_string();
    assert!(
        cause.contains("its proxy refused api.example.com:443: not an endpoint of this judge (--sandbox-allow HOST:PORT grants a host)"),
        "{cause}"
    );
    // With what it needs granted, it runs.
    let write = crate::util::judges_may_write(&tool)
        .to_str()
        .unwrap()
        .to_string();
    let out = judge(
        &format!("exec:{}", script.display()),
        &["--sandbox-write", &write],
    )
    .run();
    assert_eq!(out.records()[0]["status"], "ok", "{}", stderr(&out));
    std::fs::remove_dir_all(&tool).unwrap();
}

/// Issue 22: "Bad input gets a clear one-line error, never a quieter sandbox: an unknown
/// `--sandbox-allow` form; a `--sandbox-write` folder that holds the checkout or HOME; a harness
/// installed inside HOME's top folder."
#[test]
fn what_would_weaken_the_walls_is_refused_in_one_line() {
    let tmp = TempDir::new("weaken");
    let seat = format!("exec:cat >/dev/null; echo '{HOLDS}'");
    let run = |cmd: &mut Tool| {
        let out = cmd.run();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    for bad in ["api.example.com", "https://api.example.com", "*:443", "h:0"] {
        let err = run(&mut judge(&seat, &["--sandbox-allow", bad]));
        assert!(
            err.starts_with("panel-judge: --sandbox-allow ") && err.contains("want HOST:PORT"),
            "{bad}: {err}"
        );
    }
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let err =
        run(judge(&seat, &["--sandbox-write", tmp.path().to_str().unwrap()]).env("HOME", &home));
    assert!(err.contains("it holds your HOME"), "{err}");
    // A CLI installed at the top of HOME (its package tree is the HOME itself).
    let cli = home.join("node_modules/.bin/claude");
    std::fs::create_dir_all(cli.parent().unwrap()).unwrap();
    std::fs::write(&cli, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = run(Tool::new("panel-judge")
        .args(["--seat", "claude:haiku", "--lens", "a=Q?"])
        .arg(root().join("examples/answer.md"))
        .env("HOME", &home)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", cli.parent().unwrap().display()),
        ));
    assert!(
        err.contains("installed in the top folder of your HOME"),
        "{err}"
    );
}

/// Issue 22: "a root caller's judges are not root on the host: map them to an unprivileged id,
/// so root-owned secrets are out of reach even where they are mounted".
#[test]
fn a_root_callers_judge_is_not_root() {
    if !nix::unistd::geteuid().is_root() {
        crate::util::skipped(
            "jail",
            "not root",
            "jail: the root caller's test needs root",
        );
        return;
    }
    let seat = "exec:cat >/dev/null; printf '{\"verdict\":\"holds\",\"reason\":\"uid %s\",\"confidence\":0.5}\\n' $(id -u)";
    for sandbox in ["auto", "landlock"] {
        let out = judge(seat, &["--sandbox", sandbox]).run();
        let rec = &out.records()[0];
        let (uid, _) = panel::internals::unprivileged_ids();
        assert_eq!(rec["reason"], format!("uid {uid}"), "{sandbox}: {rec}");
        assert_ne!(uid, 0);
    }
}

/// The filter makes the machine it says: `unshare -U` is refused under it, and `--doctor`
/// says what it says on Ubuntu 24.04 or in Docker.
#[test]
fn a_machine_that_refuses_user_namespaces_is_made_here() {
    let out = crate::util::Refused::UserNamespaces
        .on(Command::new("unshare").args(["--user", "true"]))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Operation not permitted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let walls = |refused: crate::util::Refused| {
        let out = refused
            .on(Command::new(bin("panel-judge")).args(["--doctor", "--json"]))
            .env("PANEL_HISTORY", "off")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let said = walls(crate::util::Refused::UserNamespaces);
    if crate::util::landlock() {
        assert!(said.contains("(no user namespaces: "), "{said}");
    }
    let said = walls(crate::util::Refused::UserNamespacesAndLandlock);
    assert!(said.contains("no Landlock"), "{said}");
    // Issue 44: with neither, `--sandbox auto` says so on every record, and `--sandbox
    // required` refuses.
    let judge = |args: &[&str]| {
        let mut cmd = Tool::new("panel-judge");
        crate::util::Refused::UserNamespacesAndLandlock.on(cmd.command());
        one_judge_holds(cmd, args)
    };
    let out = judge(&["--sandbox", "required"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let out = judge(&[]);
    let rec = &out.records()[0];
    assert_eq!(rec["status"], "ok", "{rec}");
    let said = rec["sandbox"].as_str().unwrap();
    assert!(
        said.starts_with("unavailable: no user namespaces: ") && said.contains("no Landlock"),
        "{said}"
    );
    // No seccomp stands: what only it holds is said not to.
    if said.contains("a process") {
        assert!(
            said.contains("memfd and shared memory (no seccomp)"),
            "{said}"
        );
    }
    if !said.contains("cpu weight") {
        assert!(said.contains("cpu nice (no seccomp"), "{said}");
    }
}
