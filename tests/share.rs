//! A judge takes only its share (issue 36, docs/design.md §8): of memory, processes, disk, the
//! caller's own counts (inotify, open files), CPU and the kernel keyring, and it opens no
//! socket outside its network; the proxy's log and what the tool reads back stay bounded. Each
//! test is the attack an `exec:` seat made on the code before, as root here and as an
//! unprivileged user through `scripts/sealed-as-user` (which runs `share::` too). Every
//! experiment is bounded: a few hundred MiB, a few hundred processes, each ended by the judge's
//! supervisor when the judge ends.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::tool::{Tool, records};
use crate::util::{Refused, TempDir, root, stderr};

/// A seat that reads its prompt and runs `body` (bash; what it writes on stderr is the judge's
/// stderr) and, when `body` does not exit, answers `holds` with what `body` printed on stdout
/// (cut to its letters, digits and a few signs) as its reason.
fn attacker(dir: &Path, name: &str, body: &str) -> String {
    let script = dir.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\ncat >/dev/null\nout=\"$TMPDIR/said\"\n{{\n{body}\n}} >\"$out\"\n\
             printf '{{\"verdict\":\"holds\",\"reason\":\"%s\",\"confidence\":0.5}}\\n' \
             \"$(tr '\\n' ' ' <\"$out\" | tr -cd '[:alnum:] =:/._,-' | head -c 1500)\"\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The test's folder is passed through by the judges' ids (a root caller's are not root).
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("exec:{}", script.display())
}

/// A bash body that runs a Python program (Python's quoting kept), `arg` its argument (a
/// marker to find it by).
fn python(program: &str, arg: &str) -> String {
    format!("python3 - {arg} <<'PY'\n{program}\nPY")
}

/// panel-judge with one `exec:` seat and `args`, its run folder `run`, about the README's
/// example answer.
/// `--sandbox no-userns` is `auto` on a machine that refuses user namespaces
/// ([`Refused::UserNamespaces`]).
fn judge(seat: &str, run: &Path, args: &[&str]) -> Tool {
    let family = format!("{seat}=x");
    let mut cmd = Tool::new("panel-judge");
    let refused = args.windows(2).any(|w| w == ["--sandbox", NO_USERNS]);
    if refused {
        Refused::UserNamespaces.on(cmd.command());
    }
    let args: Vec<&str> = args
        .iter()
        .map(|&a| if a == NO_USERNS { "auto" } else { a })
        .collect();
    let args = &args[..];
    if !args.contains(&"--retries") {
        cmd.args(["--retries", "0"]);
    }
    cmd.args(["--seat", seat, "--family", &family, "--lens", "a=Q?"])
        .args(["--timeout", "60", "--out"])
        .arg(run)
        .args(args)
        .arg(root().join("examples/answer.md"))
        .env("PANEL_HISTORY", "off");
    cmd
}

/// `--sandbox auto` where user namespaces are refused.
const NO_USERNS: &str = "no-userns";

/// `seat` judged in each of `modes` with `args` (`--sandbox MODE` first): each mode, its run
/// folder and its record.
fn judged(
    tmp: &Path,
    seat: &str,
    modes: Vec<&'static str>,
    args: &[&str],
) -> Vec<(&'static str, PathBuf, Value)> {
    let mut out = Vec::new();
    for mode in modes {
        let run = tmp.join(format!("run-{mode}"));
        let all: Vec<&str> = ["--sandbox", mode].iter().chain(args).copied().collect();
        let o = judge(seat, &run, &all).run();
        let rec = o.records().remove(0);
        out.push((mode, run, rec));
    }
    out
}

/// The walls this machine gives each `--sandbox` mode asked for: auto (the jail where it can
/// be), landlock where the kernel has it, and auto where user namespaces are refused (Landlock
/// alone, as on Ubuntu 24.04, GitHub's runners and in Docker).
fn modes() -> Vec<&'static str> {
    let mut m = vec!["auto"];
    if crate::util::landlock() && crate::util::auto_walls().starts_with("jail") {
        m.extend(["landlock", NO_USERNS]);
    }
    m
}

/// The first attempt's `exit.json` of judge `a` in `run`.
fn exit_json(run: &Path) -> Value {
    let text = std::fs::read_to_string(run.join("a/attempt-1/exit.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn attempt_file(run: &Path, file: &str) -> String {
    std::fs::read_to_string(run.join("a/attempt-1").join(file)).unwrap_or_default()
}

/// The number after `key=` in `text` (the largest, when it is there more than once).
fn number(text: &str, key: &str) -> Option<u64> {
    text.split([' ', ';', '\n'])
        .filter_map(|w| w.strip_prefix(key)?.parse().ok())
        .max()
}

/// Issue 36, finding 1: "one judge held 3 GiB (4 GiB in another try); nothing bounds it. A
/// panel of nine such judges takes a 24 GiB machine down." A judge that grows past its memory
/// (and keeps asking, as a leaking CLI does) gets no more than its share, and is recorded with
/// that cause, never as an unreadable answer.
#[test]
fn a_judge_past_its_memory_gets_no_more_and_is_recorded_with_that_cause() {
    let tmp = TempDir::new("share-memory");
    let body = python(
        "import sys, time\n\
         held, got = [], 0\n\
         for i in range(16):\n\
         \x20   try:\n\
         \x20       held.append(bytearray(b'x') * (64 << 20)); got += 64\n\
         \x20   except MemoryError:\n\
         \x20       break\n\
         \x20   print('got=%d' % got, file=sys.stderr, flush=True)\n\
         # At its limit it keeps asking for more, as a leak does.\n\
         end = time.time() + 2.5\n\
         while time.time() < end:\n\
         \x20   try:\n\
         \x20       held.append(bytearray(b'x') * (8 << 20))\n\
         \x20   except MemoryError:\n\
         \x20       time.sleep(0.05)\n\
         sys.exit(1)",
        "",
    ) + "\nexit 1";
    let seat = attacker(tmp.path(), "memory", &body);
    for (mode, run, rec) in judged(tmp.path(), &seat, modes(), &["--judge-memory", "256M"]) {
        assert_eq!(rec["status"], "failed", "{mode}: {rec}");
        let cause = rec["cause"].as_str().unwrap();
        assert!(
            cause.starts_with("memory limit 256 MiB reached (--judge-memory raises it)"),
            "{mode}: {cause}"
        );
        let said = rec["sandbox"].as_str().unwrap();
        assert!(said.contains("limits: memory 256 MiB"), "{said}");
        // It never held the 1 GiB it asked for.
        let got = number(&attempt_file(&run, "stderr"), "got=").unwrap_or(0);
        assert!(got < 1024, "{mode}: it got {got} MiB");
        let exit = exit_json(&run);
        assert_eq!(
            exit["limitsReached"],
            serde_json::json!(["memory"]),
            "{exit}"
        );
        // Counted as one where a cgroup holds it: the whole judge, its files too.
        if !said.contains("memory 256 MiB a process") {
            let peak = exit["memoryPeak"].as_u64().unwrap();
            assert!(peak <= 256 << 20, "{mode}: peak {peak}");
        }
    }
}

/// Issue 36, finding 2: "one judge ran 1,500 processes at once (2,000 in another try); the PID
/// namespace does not bound the machine's `pid_max`. A fork bomb inside a judge stops every fork
/// on the machine." A judge's forks stop at its share.
#[test]
fn a_fork_bomb_stops_at_the_judges_share() {
    let tmp = TempDir::new("share-processes");
    let body = python(
        "import os, sys, time\n\
         n = 0\n\
         for i in range(400):\n\
         \x20   try:\n\
         \x20       pid = os.fork()\n\
         \x20   except OSError:\n\
         \x20       break\n\
         \x20   if pid == 0:\n\
         \x20       time.sleep(30); os._exit(0)\n\
         \x20   n += 1\n\
         print('forked=%d' % n, file=sys.stderr, flush=True)\n\
         time.sleep(2.5)\n\
         sys.exit(1)",
        "",
    ) + "\nexit 1";
    let seat = attacker(tmp.path(), "fork", &body);
    for (mode, run, rec) in judged(tmp.path(), &seat, modes(), &["--judge-processes", "64"]) {
        let said = rec["sandbox"].as_str().unwrap();
        if said.contains("not held: processes") {
            // Landlock alone, without a cgroup: said so, and the test has nothing to bound.
            assert!(mode == "landlock" || mode == NO_USERNS, "{said}");
            continue;
        }
        assert!(said.contains("processes 64"), "{said}");
        let forked = number(&attempt_file(&run, "stderr"), "forked=").unwrap();
        assert!(forked < 64, "{mode}: it forked {forked}");
        assert_eq!(rec["status"], "failed", "{mode}: {rec}");
        let cause = rec["cause"].as_str().unwrap();
        assert!(
            cause.starts_with(
                "process limit 64 reached (processes and threads; --judge-processes raises it)"
            ),
            "{mode}: {cause}"
        );
    }
}

/// Issue 36, finding 3: "a judge wrote 1.5 GiB into its private HOME on the caller's disk. The
/// jail's `/tmp` and `/dev/shm` are capped; HOME is not. `/dev/shm` has no inode limit." A
/// jailed judge writes into a file system of its own size, never the caller's disk, and
/// `/dev/shm` runs out of inodes too.
#[test]
fn a_judge_fills_a_disk_of_its_own_never_the_callers() {
    if !crate::util::auto_walls().starts_with("jail") {
        crate::util::skipped("jail", "no user namespaces", "share: disk: no jail here");
        return;
    }
    let tmp = TempDir::new("share-disk");
    let body = "echo fs=$(stat -f -c %T \"$HOME\") >&2\n\
                dd if=/dev/zero of=\"$HOME/fill\" bs=1M count=300 2>/dev/null\n\
                echo home=$(( $(stat -c %s \"$HOME/fill\") >> 20 )) >&2\n\
                rm -f \"$HOME/fill\"\n\
                i=0; while [ $i -lt 20000 ] && : > /dev/shm/f$i 2>/dev/null; do i=$((i+1)); done\n\
                echo shm=$i >&2\n\
                dd if=/dev/zero of=\"$TMPDIR/fill\" bs=1M count=300 2>/dev/null\n\
                exit 1";
    let seat = attacker(tmp.path(), "disk", body);
    let run = tmp.path().join("run");
    let out = judge(&seat, &run, &["--judge-disk", "64M"]).run();
    let rec = &out.records()[0];
    let said = attempt_file(&run, "stderr");
    assert!(said.contains("fs=tmpfs"), "{said}");
    let home = number(&said, "home=").unwrap();
    assert!(home <= 64, "{said}");
    // One inode per 16 KiB, at least 4,096: /dev/shm shares them.
    let shm = number(&said, "shm=").unwrap();
    assert!(shm < 4096, "{said}");
    assert_eq!(rec["status"], "failed", "{rec}");
    let cause = rec["cause"].as_str().unwrap();
    assert!(
        cause.starts_with("disk limit 64 MiB reached (--judge-disk raises it)"),
        "{cause}"
    );
    assert!(rec["sandbox"].as_str().unwrap().contains("disk 64 MiB"));
    let peak = exit_json(&run)["diskPeak"].as_u64().unwrap();
    assert!(peak <= 64 << 20, "{peak}");
}

/// What a process of the caller's can still open now: an inotify instance, or the error.
fn inotify_now() -> Result<(), std::io::Error> {
    // SAFETY: inotify_init1 returns a new descriptor, closed at once.
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made.
    unsafe { libc::close(fd) };
    Ok(())
}

/// The pids of the live processes whose command line holds `marker`.
fn marked(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .collect()
}

/// Issue 36, finding 5: "a judge holding 128 inotify instances made the caller's
/// `inotify_init1` fail with EMFILE while it ran (the jail's user namespace counts against the
/// caller's limit; as root, that starves systemd and udev). Judges also inherit the tool's
/// raised open-file limit (20,000)". A judge takes its namespace's share of inotify, and opens
/// files under its own limit.
#[test]
fn a_judge_leaves_the_caller_its_inotify_and_open_files() {
    if !crate::util::auto_walls().starts_with("jail") {
        crate::util::skipped("jail", "no user namespaces", "share: inotify: no jail here");
        return;
    }
    let tmp = TempDir::new("share-inotify");
    let marker = format!("PANELINOTIFY{}", std::process::id());
    let body = python(
        "import ctypes, resource, sys, time\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         held = []\n\
         while len(held) < 200:\n\
         \x20   fd = libc.inotify_init1(0)\n\
         \x20   if fd < 0:\n\
         \x20       break\n\
         \x20   held.append(fd)\n\
         print('inotify=%d' % len(held), 'nofile=%d' % resource.getrlimit(resource.RLIMIT_NOFILE)[1], file=sys.stderr, flush=True)\n\
         time.sleep(6)",
        &marker,
    );
    let seat = attacker(tmp.path(), "inotify", &body);
    let run = tmp.path().join("run");
    let child = judge(&seat, &run, &[])
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While the judge holds all it could take, the caller opens one more.
    let holding = crate::util::wait_until(Duration::from_secs(30), || {
        marked(&marker).iter().any(|p| {
            std::fs::read_dir(format!("/proc/{p}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|l| l.to_string_lossy().contains("inotify"))
                })
                .count()
                >= 16
        })
    });
    let mine = inotify_now();
    let out = child.wait_with_output().unwrap();
    assert!(
        holding,
        "the judge never held its inotify: {}",
        stderr(&out)
    );
    assert!(mine.is_ok(), "the caller's inotify_init1: {mine:?}");
    let said = attempt_file(&run, "stderr");
    assert_eq!(number(&said, "inotify="), Some(16), "{said}");
    let caller = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .maximum
        .unwrap_or(u64::MAX);
    assert_eq!(number(&said, "nofile="), Some(caller.min(1024)), "{said}");
    let rec = &records(&out)[0];
    assert!(
        rec["sandbox"]
            .as_str()
            .unwrap()
            .contains("inotify 16/16384")
    );
}

/// A session keyring of this test's own process, holding a key named `name` with `payload`.
fn key_of_the_caller(name: &str, payload: &str) {
    use std::ffi::CString;
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
    let (kind, desc) = (c"user", CString::new(name).unwrap());
    // SAFETY: keyctl and add_key with NUL-terminated strings and a live buffer; the new
    // session keyring is this thread's, which the judge it starts inherits.
    let id = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        );
        libc::syscall(
            libc::SYS_add_key,
            kind.as_ptr(),
            desc.as_ptr(),
            payload.as_ptr(),
            payload.len(),
            KEY_SPEC_SESSION_KEYRING,
        )
    };
    assert!(id > 0, "add_key: {}", std::io::Error::last_os_error());
}

const KEYCTL_SEARCH: libc::c_long = 10;
const KEY_SPEC_USER_KEYRING: libc::c_long = -4;

/// The key named `name` in the caller's user keyring, if there is one.
fn user_key(name: &str) -> Option<libc::c_long> {
    let desc = std::ffi::CString::new(name).unwrap();
    // SAFETY: keyctl(SEARCH) with NUL-terminated strings.
    let id = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_SEARCH,
            KEY_SPEC_USER_KEYRING,
            c"user".as_ptr(),
            desc.as_ptr(),
            0,
        )
    };
    (id > 0).then_some(id)
}

/// Whether the caller's user keyring holds a key named `name` now.
fn in_the_callers_user_keyring(name: &str) -> bool {
    user_key(name).is_some()
}

/// Takes a key named `name` out of the caller's user keyring.
fn unlink_from_the_callers_user_keyring(name: &str) {
    const KEYCTL_UNLINK: libc::c_long = 9;
    if let Some(id) = user_key(name) {
        // SAFETY: keyctl(UNLINK) with two ids.
        unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_UNLINK, id, KEY_SPEC_USER_KEYRING) };
    }
}

/// Issue 36, finding 6: "a judge read a key from the caller's session keyring, and a key it
/// added was still there after the run. Nothing walls off `keyctl`, `add_key` and
/// `request_key`." A judge's session keyring is its own; where the walls stand, the keyring
/// calls are refused (as Docker's default seccomp profile refuses them).
#[test]
fn a_judge_has_a_keyring_of_its_own_and_no_keyring_calls() {
    let tmp = TempDir::new("share-keyring");
    let name = format!("panel-canary-{}", std::process::id());
    let note = format!("panel-note-{}", std::process::id());
    let body = python(
        &format!(
            "import ctypes\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.syscall.restype = ctypes.c_long\n\
         def errno(r):\n\
         \x20   return 0 if r >= 0 else ctypes.get_errno()\n\
         found = libc.syscall(250, 10, -3, b'user', b'{name}', 0)\n\
         print('search=%d' % errno(found))\n\
         added = libc.syscall(248, b'user', b'{note}', b'x', 1, -4)\n\
         print('add=%d' % errno(added))"
        ),
        "",
    );
    let seat = attacker(tmp.path(), "keyring", &body);
    // Joined in a thread of its own: the test's other threads keep their session keyring.
    let (name2, note2) = (name.clone(), note.clone());
    let outs = std::thread::spawn(move || {
        key_of_the_caller(&name2, "CALLERKEY");
        let mut outs = Vec::new();
        for mode in modes() {
            let run = tmp.path().join(format!("run-{mode}"));
            let o = judge(&seat, &run, &["--sandbox", mode]).run();
            outs.push((mode, o));
        }
        // Nothing a walled judge added is in the caller's keyrings.
        let left = in_the_callers_user_keyring(&note2);
        // Without walls, no seccomp; the session keyring is still the judge's own.
        let run = tmp.path().join("run-off");
        let o = judge(&seat, &run, &["--sandbox", "off"]).run();
        outs.push(("off", o));
        // Off, a judge that runs as the caller reaches the caller's user keyring: not left.
        unlink_from_the_callers_user_keyring(&note2);
        (outs, left)
    })
    .join()
    .unwrap();
    let (outs, left) = outs;
    assert!(
        !left,
        "a walled judge's key is in the caller's user keyring"
    );
    for (mode, out) in &outs {
        let rec = &records(out)[0];
        let reason = rec["reason"].as_str().unwrap_or_default();
        let search = number(reason, "search=").unwrap();
        if *mode == "off" {
            assert_eq!(search, libc::ENOKEY as u64, "{mode}: {reason}");
            continue;
        }
        assert_eq!(search, libc::EACCES as u64, "{mode}: {reason}");
        assert_eq!(
            number(reason, "add="),
            Some(libc::EACCES as u64),
            "{mode}: {reason}"
        );
    }
}

/// Issue 36, finding 7: "a judge can open AF_VSOCK sockets, which reach the hypervisor's
/// services on a VM." A walled judge opens unix sockets, TCP over IPv4 and IPv6 (to its proxy)
/// and netlink's routing alone: every other family is refused.
#[test]
fn a_judge_opens_no_socket_but_those_it_needs() {
    let tmp = TempDir::new("share-sockets");
    let body = python(
        "import socket\n\
         def try_(name, *a):\n\
         \x20   try:\n\
         \x20       socket.socket(*a).close(); print(name + '=ok')\n\
         \x20   except OSError as e:\n\
         \x20       print(name + '=' + str(e.errno))\n\
         try_('vsock', 40, socket.SOCK_STREAM)\n\
         try_('alg', 38, socket.SOCK_SEQPACKET)\n\
         try_('packet', 17, socket.SOCK_DGRAM)\n\
         try_('uevent', 16, socket.SOCK_DGRAM, 15)\n\
         try_('sctp', 2, socket.SOCK_SEQPACKET, 132)\n\
         try_('route', 16, socket.SOCK_DGRAM, 0)\n\
         try_('tcp', 2, socket.SOCK_STREAM)\n\
         try_('tcp6', 10, socket.SOCK_STREAM)\n\
         a, b = socket.socketpair(); print('pair=ok')",
        "",
    );
    let seat = attacker(tmp.path(), "sockets", &body);
    for (mode, _, rec) in judged(tmp.path(), &seat, modes(), &[]) {
        let reason = rec["reason"].as_str().unwrap_or_default();
        let refused = format!("={}", libc::EACCES);
        for family in ["vsock", "alg", "packet", "uevent", "sctp"] {
            assert!(
                reason.contains(&format!("{family}{refused}")),
                "{mode}: {family}: {reason}"
            );
        }
        for family in ["route", "tcp", "tcp6", "pair"] {
            assert!(
                reason.contains(&format!("{family}=ok")),
                "{mode}: {family}: {reason}"
            );
        }
    }
}

/// Issue 44, findings 1 and 2: where user namespaces are refused a judge "reaches any host
/// and port past the proxy through an MPTCP socket (`socket(AF_INET, SOCK_STREAM,
/// IPPROTO_MPTCP)`): Landlock's network rules cover TCP alone", and "calls `listen()` without
/// `bind()` and gets an ephemeral port on 0.0.0.0, on every interface of the machine". In every
/// mode a stream of any protocol but TCP is refused, and so is listening.
#[test]
fn a_judge_reaches_no_host_by_another_protocol_and_serves_no_port() {
    let tmp = TempDir::new("share-protocols");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let body = python(
        "import socket, sys\n\
         port = int(sys.argv[1])\n\
         def stream(name, proto):\n\
         \x20   try:\n\
         \x20       s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, proto)\n\
         \x20   except OSError as e:\n\
         \x20       print(name + '=' + str(e.errno)); return\n\
         \x20   try:\n\
         \x20       s.settimeout(3); s.connect(('127.0.0.1', port)); s.sendall(b'leak'); print(name + '=reached')\n\
         \x20   except OSError as e:\n\
         \x20       print(name + '=made,' + str(e.errno))\n\
         stream('mptcp', 262)\n\
         stream('sctp', 132)\n\
         stream('tcp', 6)\n\
         try:\n\
         \x20   l = socket.socket(socket.AF_INET6, socket.SOCK_STREAM); l.listen(); print('listen=port' + str(l.getsockname()[1]))\n\
         except OSError as e:\n\
         \x20   print('listen=' + str(e.errno))",
        &port.to_string(),
    );
    let seat = attacker(tmp.path(), "protocols", &body);
    let refused = format!("={}", libc::EACCES);
    for (mode, _, rec) in judged(tmp.path(), &seat, modes(), &[]) {
        let reason = rec["reason"].as_str().unwrap_or_default();
        for what in ["mptcp", "sctp", "listen"] {
            assert!(
                reason.contains(&format!("{what}{refused}")),
                "{mode}: {what}: {reason}"
            );
        }
        // Plain TCP is made (its connect refused by Landlock, or unreachable in the jail).
        assert!(reason.contains("tcp=made,"), "{mode}: {reason}");
        assert!(
            listener.accept().is_err(),
            "{mode}: the judge reached the test's port: {reason}"
        );
    }
}

/// Issue 44: "Landlock alone holds every network wall the jail holds." Landlock holds TCP by
/// port alone: a judge let through to its endpoint's port (or its proxy's) reached that port on
/// any host. Without a jail its supervisor makes each connection, to its endpoints' own
/// addresses and its proxy's alone (here 127.0.0.2 stands for another host listening on the
/// endpoint's port).
#[test]
fn a_judge_reaches_its_endpoints_at_their_own_addresses_alone() {
    let tmp = TempDir::new("share-addresses");
    let endpoint = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = endpoint.local_addr().unwrap().port();
    let Ok(elsewhere) = std::net::TcpListener::bind(("127.0.0.2", port)) else {
        crate::util::skipped(
            "share",
            "no 127.0.0.2",
            "share: addresses: 127.0.0.2 cannot be bound here",
        );
        return;
    };
    for l in [&endpoint, &elsewhere] {
        l.set_nonblocking(true).unwrap();
    }
    let body = python(
        "import os, socket, sys\n\
         port = int(sys.argv[1])\n\
         proxy = int(os.environ.get('HTTPS_PROXY', ':0').rstrip('/').rsplit(':', 1)[1])\n\
         def reach(name, host, p):\n\
         \x20   s = socket.socket()\n\
         \x20   try:\n\
         \x20       s.settimeout(3); s.connect((host, p)); s.sendall(b'x'); print(name + '=reached')\n\
         \x20   except OSError as e:\n\
         \x20       print(name + '=' + str(e.errno))\n\
         reach('elsewhere', '127.0.0.2', port)\n\
         reach('proxyelsewhere', '127.0.0.2', proxy)\n\
         reach('endpoint', '127.0.0.1', port)\n\
         try:\n\
         \x20   socket.socket().sendto(b'x', 0x20000000, ('127.0.0.2', port)); print('fastopen=reached')\n\
         except OSError as e:\n\
         \x20   print('fastopen=' + str(e.errno))",
        &port.to_string(),
    );
    let seat = attacker(tmp.path(), "addresses", &body);
    let allow = format!("127.0.0.1:{port}");
    for (mode, _, rec) in judged(tmp.path(), &seat, modes(), &["--sandbox-allow", &allow]) {
        let reason = rec["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("endpoint=reached"), "{mode}: {reason}");
        assert!(endpoint.accept().is_ok(), "{mode}: {reason}");
        assert!(!reason.contains("elsewhere=reached"), "{mode}: {reason}");
        assert!(
            reason.contains(&format!("fastopen={}", libc::EACCES)),
            "{mode}: {reason}"
        );
        assert!(
            elsewhere.accept().is_err(),
            "{mode}: another host on the endpoint's port was reached: {reason}"
        );
    }
}

/// Issue 44, found by an attacker's try at the walls without a jail: "System V IPC is open: a
/// judge can read and write the caller's shared memory and message queues", and leave queues
/// that outlive it. Where no IPC namespace is its own, every System V IPC call is refused; in
/// a jail the caller's are not there to find.
#[test]
fn a_judge_finds_no_system_v_ipc_of_the_callers_and_leaves_none() {
    let tmp = TempDir::new("share-ipc");
    // The caller's own: a segment and a queue of its, mode 600 (0o666 where the caller is root,
    // whose judges run as another id: the walls, not the mode, must keep them out).
    // SAFETY: geteuid reads this process's id.
    let mode = if unsafe { libc::geteuid() } == 0 {
        0o666
    } else {
        0o600
    };
    // SAFETY: System V calls with integers; the segment is removed at the end.
    let (shm, msq) = unsafe {
        let shm = libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | mode);
        let msq = libc::msgget(libc::IPC_PRIVATE, libc::IPC_CREAT | mode);
        (shm, msq)
    };
    assert!(shm >= 0 && msq >= 0, "{}", std::io::Error::last_os_error());
    let body = python(
        "import ctypes, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.shmat.restype = ctypes.c_void_p\n\
         shm, msq = int(sys.argv[1]), int(sys.argv[2])\n\
         def call(name, r):\n\
         \x20   print('%s=%d' % (name, ctypes.get_errno() if r in (-1, None, 2**64 - 1) else 0))\n\
         call('shmat', libc.shmat(shm, None, 0))\n\
         buf = ctypes.create_string_buffer(64)\n\
         call('msgrcv', libc.msgrcv(msq, buf, 32, 0, 0o4000))\n\
         call('msgget', libc.msgget(0, 0o1666))",
        &format!("{shm} {msq}"),
    );
    let seat = attacker(tmp.path(), "ipc", &body);
    let queues_before = std::fs::read_to_string("/proc/sysvipc/msg").unwrap_or_default();
    let results = judged(tmp.path(), &seat, modes(), &[]);
    let queues_after = std::fs::read_to_string("/proc/sysvipc/msg").unwrap_or_default();
    // SAFETY: removing what this test made.
    unsafe {
        libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut());
        libc::msgctl(msq, libc::IPC_RMID, std::ptr::null_mut());
    }
    for (mode, _, rec) in results {
        let reason = rec["reason"].as_str().unwrap_or_default();
        // A jail's IPC namespace is its own: what it makes there goes with it.
        let own = rec["sandbox"].as_str().unwrap().starts_with("jail");
        let calls: &[&str] = if own {
            &["shmat", "msgrcv"]
        } else {
            &["shmat", "msgrcv", "msgget"]
        };
        for call in calls {
            let refused = [libc::EACCES, libc::EINVAL, libc::EIDRM]
                .iter()
                .any(|e| reason.contains(&format!("{call}={e}")));
            assert!(refused, "{mode}: {call}: {reason}");
        }
    }
    assert_eq!(
        queues_before.lines().count(),
        queues_after.lines().count(),
        "a judge left a queue behind:\n{queues_after}"
    );
}

/// Issue 44, found by an attacker's try at the walls without a jail: "the keeper handles
/// connects one at a time with no timeout, so one stalled endpoint blocks all of the judge's
/// connections". A connection to an endpoint that does not answer holds up no other: a
/// non-blocking one is in progress at once, and the judge's proxy is reached meanwhile.
#[test]
fn a_stalled_endpoint_holds_up_no_other_connection() {
    let tmp = TempDir::new("share-stalled");
    // A listener that accepts nothing, its queue filled: a connection to it waits.
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = stalled.local_addr().unwrap().port();
    let _filled: Vec<_> = (0..300).map(|_| socket_nonblocking_connect(port)).collect();
    let body = python(
        "import errno, os, socket, sys, time\n\
         port = int(sys.argv[1])\n\
         proxy = int(os.environ['HTTPS_PROXY'].rstrip('/').rsplit(':', 1)[1])\n\
         s = socket.socket(); s.setblocking(False)\n\
         t = time.time(); r = s.connect_ex(('127.0.0.1', port))\n\
         print('stalled=%s' % ('inprogress' if r == errno.EINPROGRESS else r))\n\
         p = socket.socket(); p.settimeout(20)\n\
         p.connect(('127.0.0.1', proxy))\n\
         print('proxy=reached quick=%s' % (time.time() - t < 5))",
        &port.to_string(),
    );
    let seat = attacker(tmp.path(), "stalled", &body);
    let allow = format!("127.0.0.1:{port}");
    // In the jail a loopback endpoint's connection is passed on by its first process.
    let modes = modes().into_iter().filter(|&m| m != "auto").collect();
    for (mode, _, rec) in judged(tmp.path(), &seat, modes, &["--sandbox-allow", &allow]) {
        let reason = rec["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("stalled=inprogress") && reason.contains("proxy=reached quick=True"),
            "{mode}: {reason}"
        );
    }
    drop(stalled);
}

/// A connection to `port` on 127.0.0.1 started and left to wait.
fn socket_nonblocking_connect(port: u16) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: a socket of the test's, connected without waiting; the address is a sockaddr_in.
    unsafe {
        let fd = libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        let mut sin: libc::sockaddr_in = std::mem::zeroed();
        sin.sin_family = libc::AF_INET as libc::sa_family_t;
        sin.sin_port = port.to_be();
        sin.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        libc::connect(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as u32,
        );
        std::os::fd::OwnedFd::from_raw_fd(fd)
    }
}

/// Issue 44, finding 4: a judge "run by an unprivileged user (no cgroup), holds 1 GiB in
/// `memfd` pages under `--judge-memory 512M`: `RLIMIT_DATA` counts neither memfd nor tmpfs
/// pages". Where `RLIMIT_DATA` bounds its memory, `memfd_create` is refused (ENOSYS, as on a
/// kernel without it), and so are shared anonymous mappings and System V shared memory (which
/// it does not count either); where a cgroup does, those pages are counted there, and the
/// judge never holds more than its share.
#[test]
fn a_judge_holds_no_memory_its_limit_does_not_count() {
    let tmp = TempDir::new("share-memfd");
    let body = python(
        "import ctypes, os, sys\n\
         try:\n\
         \x20   fd = os.memfd_create('hoard')\n\
         except OSError as e:\n\
         \x20   print('memfd=%d' % e.errno); fd = None\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         seg = libc.shmget(0, 64 << 20, 0o1600)\n\
         print('shmget=%d' % (ctypes.get_errno() if seg < 0 else 0))\n\
         if seg >= 0:\n\
         \x20   libc.shmctl(seg, 0, None)\n\
         import mmap\n\
         try:\n\
         \x20   shared = mmap.mmap(-1, 512 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\n\
         except OSError as e:\n\
         \x20   print('shared=%d' % e.errno); shared = None\n\
         chunk = b'x' * (16 << 20)\n\
         for i in range(32):\n\
         \x20   if fd is not None:\n\
         \x20       os.write(fd, chunk)\n\
         \x20   elif shared is not None:\n\
         \x20       shared[i * len(chunk):(i + 1) * len(chunk)] = chunk\n\
         \x20   else:\n\
         \x20       break\n\
         \x20   print('held=%d' % (16 * (i + 1)), file=sys.stderr, flush=True)",
        "",
    );
    let seat = attacker(tmp.path(), "memfd", &body);
    for (mode, run, rec) in judged(tmp.path(), &seat, modes(), &["--judge-memory", "256M"]) {
        let said = rec["sandbox"].as_str().unwrap();
        let held = number(&attempt_file(&run, "stderr"), "held=").unwrap_or(0);
        assert!(
            held < 512,
            "{mode}: it held {held} MiB of memfd pages: {said}"
        );
        if said.contains("memory 256 MiB a process") {
            let reason = rec["reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains(&format!("memfd={}", libc::ENOSYS))
                    && reason.contains(&format!("shmget={}", libc::EACCES))
                    && reason.contains(&format!("shared={}", libc::EACCES)),
                "{mode}: {reason}"
            );
        } else {
            // Its cgroup counts them: the hoarder is ended there, and the limit recorded met.
            assert!(held <= 256, "{mode}: it held {held} MiB: {said}");
            let exit = exit_json(&run);
            assert_eq!(
                exit["limitsReached"],
                serde_json::json!(["memory"]),
                "{exit}"
            );
        }
    }
}

/// Issue 44, finding 3: without a jail a judge "writes 1.5 GiB into its private HOME on the
/// caller's disk (the record says `not held: disk`)". Without a jail's disk, no file of a
/// judge grows past its disk (`RLIMIT_FSIZE`), and its supervisor, looking each second at its
/// private folder and at the files it deleted but holds open, ends it once they hold more:
/// recorded with that cause. Each way of writing is tried: plain files, files deleted and held
/// open, files in folders it then makes unreadable.
#[test]
fn a_judge_without_a_jail_is_ended_at_its_disk() {
    let tmp = TempDir::new("share-disk-watched");
    for how in ["plain", "unlinked", "hidden"] {
        let body = python(
            "import os, sys, time\n\
             how, home = sys.argv[1], os.environ['HOME']\n\
             try:\n\
             \x20   with open(os.path.join(home, 'one'), 'wb') as f:\n\
             \x20       for i in range(12):\n\
             \x20           f.write(b'x' * (8 << 20)); f.flush()\n\
             except OSError as e:\n\
             \x20   print('one=%d' % e.errno)\n\
             print('onesize=%d' % (os.path.getsize(os.path.join(home, 'one')) >> 20), file=sys.stderr, flush=True)\n\
             os.remove(os.path.join(home, 'one'))\n\
             wrote, held = 0, []\n\
             for i in range(128):\n\
             \x20   d = os.path.join(home, 'd%d' % i) if how == 'hidden' else home\n\
             \x20   os.makedirs(d, exist_ok=True)\n\
             \x20   f = open(os.path.join(d, 'f%d' % i), 'wb')\n\
             \x20   f.write(b'x' * (4 << 20)); f.flush()\n\
             \x20   if how == 'unlinked':\n\
             \x20       os.remove(f.name); held.append(f)\n\
             \x20   else:\n\
             \x20       f.close()\n\
             \x20   if how == 'hidden':\n\
             \x20       os.chmod(d, 0)\n\
             \x20   wrote += 4\n\
             \x20   print('wrote=%d' % wrote, file=sys.stderr, flush=True)\n\
             \x20   time.sleep(0.05)\n\
             sys.exit(1)",
            how,
        ) + "\nexit 1";
        let seat = attacker(tmp.path(), &format!("disk-{how}"), &body);
        let dir = TempDir::new(&format!("share-disk-{how}"));
        for (mode, run, rec) in judged(
            dir.path(),
            &seat,
            modes().into_iter().filter(|&m| m != "auto").collect(),
            &["--judge-disk", "64M"],
        ) {
            let said = rec["sandbox"].as_str().unwrap();
            assert!(said.contains("disk 64 MiB watched"), "{mode}: {said}");
            let err = attempt_file(&run, "stderr");
            assert!(
                number(&err, "onesize=").unwrap() <= 64,
                "{mode} {how}: {err}"
            );
            let wrote = number(&err, "wrote=").unwrap_or(0);
            assert!(wrote < 512, "{mode} {how}: it wrote {wrote} MiB: {err}");
            assert_eq!(rec["status"], "failed", "{mode} {how}: {rec}");
            let cause = rec["cause"].as_str().unwrap();
            assert!(
                cause.starts_with("disk limit 64 MiB reached (--judge-disk raises it)"),
                "{mode} {how}: {cause}"
            );
        }
    }
}

/// Issue 44, finding 5: a judge "runs at nice 0 while its record says `cpu nice 10`: … a
/// `setsid()` child gets a fresh autogroup at nice 0". Where niceness alone weighs its CPU,
/// every process of a judge runs at it, in one session (its caller's, where the kernel weighs
/// CPU by session): `setsid()` is refused.
#[test]
fn a_judge_weighed_by_its_niceness_keeps_it_in_every_process() {
    let tmp = TempDir::new("share-setsid");
    let body = python(
        "import os\n\
         sid = os.getsid(0)\n\
         pid = os.fork()\n\
         if pid == 0:\n\
         \x20   try:\n\
         \x20       os.setsid(); print('setsid=ok', flush=True)\n\
         \x20   except OSError as e:\n\
         \x20       print('setsid=%d' % e.errno, flush=True)\n\
         \x20   print('same=%s childnice=%d' % (os.getsid(0) == sid, os.nice(0)), flush=True)\n\
         \x20   os._exit(0)\n\
         os.waitpid(pid, 0)",
        "",
    );
    let seat = attacker(tmp.path(), "setsid", &body);
    for (mode, _, rec) in judged(tmp.path(), &seat, modes(), &[]) {
        let said = rec["sandbox"].as_str().unwrap();
        let reason = rec["reason"].as_str().unwrap_or_default();
        if !said.contains("cpu nice 10") {
            assert!(said.contains("cpu weight"), "{mode}: {said}");
            continue;
        }
        assert!(
            reason.contains(&format!("setsid={}", libc::EPERM))
                && reason.contains("same=True childnice=10"),
            "{mode}: {reason}"
        );
    }
}

/// Issue 36, finding 8: "a judge that sends 1,000 refused requests and no answer makes a 15 MB
/// record, a 15 MB `egress.log` and a 15 MB retry prompt". The log keeps each distinct refusal
/// once up to its bound, then counts; the record and the retry prompt name a few and count
/// the rest (400 requests of 1.5 KiB here, four times the log's bound).
#[test]
fn a_flood_of_refused_requests_leaves_a_bounded_log_record_and_retry() {
    let tmp = TempDir::new("share-flood");
    let body = "p=${HTTPS_PROXY#http://}\n\
                long=$(printf 'x%.0s' $(seq 1 1500))\n\
                for i in $(seq 1 400); do\n\
                \x20 exec 3<>/dev/tcp/${p%:*}/${p##*:} || continue\n\
                \x20 printf 'CONNECT h%s.%s.example:443 HTTP/1.1\\r\\n\\r\\n' $i $long >&3\n\
                \x20 head -c 1 <&3 >/dev/null; exec 3<&-\n\
                done\n\
                exit 1";
    let seat = attacker(tmp.path(), "flood", body);
    for mode in modes() {
        let run = tmp.path().join(format!("run-{mode}"));
        let out = judge(&seat, &run, &["--sandbox", mode, "--retries", "1"]).run();
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(
            line.len() < 8 << 10,
            "{mode}: a record of {} bytes",
            line.len()
        );
        let rec = &out.records()[0];
        let cause = rec["cause"].as_str().unwrap();
        assert!(
            cause.contains("more refusal(s) of its proxy (in egress.log)"),
            "{mode}: {cause}"
        );
        let log = attempt_file(&run, "egress.log");
        assert!(
            log.lines().count() <= 101,
            "{mode}: {} lines",
            log.lines().count()
        );
        assert!(
            log.len() < 128 << 10,
            "{mode}: a log of {} bytes",
            log.len()
        );
        assert!(log.ends_with("more refused (repeats, or past the log's first lines)\n"));
        let first = std::fs::read_to_string(run.join("a/prompt.txt")).unwrap();
        let retry = std::fs::read_to_string(run.join("a/attempt-2/prompt.txt")).unwrap();
        assert!(retry.len() < first.len() + 4096, "{mode}: {}", retry.len());
    }
}

/// The cgroup folders (one per hierarchy) a process of the host is in.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_, list, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        let ours = list.is_empty()
            || list
                .split(',')
                .any(|c| ["memory", "pids", "cpu"].contains(&c));
        if !ours {
            continue;
        }
        for m in mounts.lines() {
            let Some((left, right)) = m.split_once(" - ") else {
                continue;
            };
            let point = left.split(' ').nth(4).unwrap_or("");
            let fs: Vec<&str> = right.split(' ').collect();
            let fits = match list {
                // cgroup v2, where it has ours (not beside v1 hierarchies that hold them).
                "" => {
                    fs[0] == "cgroup2"
                        && std::fs::read_to_string(Path::new(point).join("cgroup.controllers"))
                            .is_ok_and(|c| {
                                c.split_whitespace()
                                    .any(|c| ["memory", "pids", "cpu"].contains(&c))
                            })
                }
                l => fs[0] == "cgroup" && l.split(',').all(|c| fs[2].split(',').any(|o| o == c)),
            };
            if fits {
                out.push(Path::new(point).join(path.trim_start_matches('/')));
            }
        }
    }
    out
}

/// Issue 36, finding 11: "No CPU bound besides the wall-clock deadline." A judge runs nicer
/// than its caller; where panel can make a cgroup, each judge is held in its own, with its
/// memory and tasks bounded there and its run's CPU weighed below the caller's other work.
#[test]
fn a_judge_is_weighed_below_its_caller_and_held_in_a_cgroup_where_there_is_one() {
    let tmp = TempDir::new("share-cpu");
    let marker = format!("PANELCPU{}", std::process::id());
    let body = format!(
        "echo nice=$(nice) >&2\n\
         python3 -c 'import time; time.sleep(4)  # {marker}'\n\
         echo done"
    );
    let seat = attacker(tmp.path(), "cpu", &body);
    let run = tmp.path().join("run");
    let child = judge(
        &seat,
        &run,
        &["--judge-memory", "300M", "--judge-processes", "99"],
    )
    .command()
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let seen = crate::util::wait_until(Duration::from_secs(30), || !marked(&marker).is_empty());
    let groups = marked(&marker)
        .first()
        .map(|p| cgroups_of(*p))
        .unwrap_or_default();
    // Read while the judge runs: its group goes with it.
    let read = |file: &str, up: bool| {
        groups
            .iter()
            .find_map(|g| {
                let dir = if up { g.parent()? } else { g.as_path() };
                std::fs::read_to_string(dir.join(file)).ok()
            })
            .unwrap_or_default()
    };
    let memory = read("memory.max", false) + &read("memory.limit_in_bytes", false);
    let pids = read("pids.max", false);
    let weight = read("cpu.weight", true) + &read("cpu.shares", true);
    let out = child.wait_with_output().unwrap();
    assert!(seen, "{}", stderr(&out));
    let rec = &records(&out)[0];
    let said = rec["sandbox"].as_str().unwrap();
    assert_eq!(number(&attempt_file(&run, "stderr"), "nice="), Some(10));
    if !said.contains("cpu weight") {
        assert!(said.contains("cpu nice 10"), "{said}");
        return;
    }
    assert!(
        !groups.is_empty()
            && groups
                .iter()
                .all(|g| g.to_string_lossy().contains("/panel-")),
        "{groups:?}"
    );
    assert_eq!(
        memory.trim().parse::<u64>().ok(),
        Some(300 << 20),
        "{groups:?}"
    );
    assert_eq!(pids.trim(), "99");
    assert!(matches!(weight.trim(), "50" | "512"), "{weight}");
    // The judge's cgroup goes with it.
    assert!(groups.iter().all(|g| !g.exists()), "{groups:?}");
}

/// Issue 45: "codex retried (\"Proxy connection failed …\") until the 300 s deadline … the
/// record's cause said only `no answer within 300s`." A judge whose CLI keeps failing to reach
/// the same endpoint is stopped early, its cause naming the endpoint and what to look at.
#[test]
fn a_cli_that_keeps_failing_on_a_dead_endpoint_is_stopped_early() {
    let tmp = TempDir::new("share-dead-endpoint");
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    // As a CLI with retries does: ask the proxy again and again; 40 tries, then give an answer.
    let body = python(
        "import os, socket, sys, time\n\
         target = '127.0.0.1:' + sys.argv[1]\n\
         proxy = int(os.environ['HTTPS_PROXY'].rstrip('/').rsplit(':', 1)[1])\n\
         for n in range(40):\n\
         \x20   s = socket.create_connection(('127.0.0.1', proxy), timeout=20)\n\
         \x20   s.sendall(('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (target, target)).encode())\n\
         \x20   s.recv(4096); s.close(); time.sleep(0.3)\n\
         print('tries=40')",
        &port.to_string(),
    );
    let seat = attacker(tmp.path(), "dead", &body);
    let allow = format!("127.0.0.1:{port}");
    // Asked again, it would meet the same endpoint: it is not.
    let args = ["--sandbox-allow", &allow, "--retries", "2"];
    for (mode, run, rec) in judged(tmp.path(), &seat, modes(), &args) {
        assert_eq!(rec["status"], "failed", "{mode}: {rec}");
        assert_eq!(rec["attempts"], 1, "{mode}: {rec}");
        let cause = rec["cause"].as_str().unwrap_or_default();
        assert!(
            cause.starts_with(&format!("stopped early: its CLI could not reach {allow}: "))
                && cause.contains(" 3 times in a row (is the endpoint up, at that address?)"),
            "{mode}: {cause}"
        );
        let log = attempt_file(&run, "egress.log");
        assert!(log.contains("stopped the judge:"), "{mode}: {log}");
    }
}

/// Issue 45, as a CLI reaches a loopback endpoint (`NO_PROXY` names loopback): its own
/// connections, blocking and not, to a dead endpoint stop it early in every place too, where
/// Landlock alone has its supervisor make them as where the jail's doors do.
#[test]
fn a_cli_that_keeps_failing_on_a_dead_loopback_endpoint_itself_is_stopped_early() {
    let tmp = TempDir::new("share-dead-direct");
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let body = python(
        "import select, socket, sys, time\n\
         port = int(sys.argv[1])\n\
         for n in range(40):\n\
         \x20   s = socket.socket()\n\
         \x20   if n % 2:\n\
         \x20       s.setblocking(False); s.connect_ex(('127.0.0.1', port)); select.select([], [s], [], 5)\n\
         \x20   else:\n\
         \x20       s.connect_ex(('127.0.0.1', port))\n\
         \x20   s.close(); time.sleep(0.3)\n\
         print('tries=40')",
        &port.to_string(),
    );
    let seat = attacker(tmp.path(), "dead-direct", &body);
    let allow = format!("127.0.0.1:{port}");
    let args = ["--sandbox-allow", &allow, "--retries", "2"];
    for (mode, _, rec) in judged(tmp.path(), &seat, modes(), &args) {
        assert_eq!(rec["status"], "failed", "{mode}: {rec}");
        assert_eq!(rec["attempts"], 1, "{mode}: {rec}");
        let cause = rec["cause"].as_str().unwrap_or_default();
        assert!(
            cause.starts_with(&format!("stopped early: its CLI could not reach {allow}: ")),
            "{mode}: {cause}"
        );
    }
}
