//! The supervisor on macOS, which has no pidfd, no subreaper and no namespaces. It sees its
//! tool go by its parent changing (within a tick); it knows the judge's processes by the
//! judge's own session and what it saw descend from itself (every tick), and ends them all;
//! it starts the harness under `sandbox-exec` with the policy's Seatbelt profile, its proxy
//! on this machine's loopback.
//!
//! What it cannot catch: a process of the judge that leaves the judge's session (`setsid`)
//! and whose parent exits within one tick, before it was seen, is adopted by `launchd` and
//! not ended. It cannot leave the sandbox, and reaches nothing the profile does not allow.

use std::collections::BTreeSet;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use rustix::process::Pid;

use super::{StartedJudge, Starting, proxy_env, wait_for_a_process};
use crate::engine::sandbox::egress::Door;
use crate::engine::sandbox::seatbelt::{self, SANDBOX_EXEC};
use crate::records::exit_status;

/// No descriptor tells of the tool's end here: the supervisor looks at its parent each tick.
pub(super) fn watch_tool(_tool: Pid) -> Option<OwnedFd> {
    None
}

/// The judge's processes as last seen: the harness leads a session of its own; what
/// descended from this process, or from one of the session, is kept by pid and start time
/// (a pid used again is another process).
pub(super) struct Family {
    me: i32,
    session: Option<i32>,
    seen: BTreeSet<(i32, u64)>,
}

/// What the kernel tells of one process.
struct Process {
    pid: i32,
    parent: i32,
    group: i32,
    start: u64,
}

impl Family {
    pub(super) fn adopt(me: Pid) -> io::Result<Family> {
        Ok(Family {
            me: me.as_raw_nonzero().get(),
            session: None,
            seen: BTreeSet::new(),
        })
    }

    /// The harness started: its pid is its session's and its process group's.
    pub(super) fn started(&mut self, harness: Pid) {
        self.session = Some(harness.as_raw_nonzero().get());
    }

    /// One look, each tick: a process started since the last is seen while its parent lives.
    pub(super) fn look(&mut self) {
        let _ = self.descendants();
    }

    /// Every live process of the judge: in its session or process group, below this process,
    /// or below one seen before.
    pub(super) fn descendants(&mut self) -> Vec<Pid> {
        let all = processes();
        let mut ours: BTreeSet<i32> = BTreeSet::new();
        for p in &all {
            let known = self.seen.contains(&(p.pid, p.start));
            let in_session = self.session.is_some_and(|s| {
                p.group == s || {
                    // SAFETY: getsid only reads; a process gone meanwhile gives -1.
                    unsafe { libc::getsid(p.pid) == s }
                }
            });
            if p.pid != self.me && (known || in_session) {
                ours.insert(p.pid);
            }
        }
        // Below this process or one of the judge's, to any depth.
        loop {
            let before = ours.len();
            for p in &all {
                if p.pid != self.me && (p.parent == self.me || ours.contains(&p.parent)) {
                    ours.insert(p.pid);
                }
            }
            if ours.len() == before {
                break;
            }
        }
        self.seen = all
            .iter()
            .filter(|p| ours.contains(&p.pid))
            .map(|p| (p.pid, p.start))
            .collect();
        ours.into_iter().filter_map(Pid::from_raw).collect()
    }

    /// What the judge left running when its harness exited, in words; `None` when nothing.
    pub(super) fn left_running(&mut self) -> Option<String> {
        let left = self.descendants().len();
        (left > 0).then(|| format!("ended {left} process(es) the judge left running"))
    }
}

/// Every live process of the machine (not a zombie), as the kernel lists them.
fn processes() -> Vec<Process> {
    // SAFETY: a null buffer asks for the count alone.
    let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
    let Ok(n) = usize::try_from(n) else {
        return Vec::new();
    };
    // Room for those started since.
    let mut pids = vec![0 as libc::pid_t; n + 64];
    let bytes = (pids.len() * std::mem::size_of::<libc::pid_t>()) as libc::c_int;
    // SAFETY: the buffer holds `bytes` bytes.
    let n = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
    pids.truncate(usize::try_from(n).unwrap_or(0));
    pids.into_iter().filter_map(process).collect()
}

/// What the kernel tells of `pid`; `None` when it is gone, a zombie, or not to be seen.
fn process(pid: libc::pid_t) -> Option<Process> {
    const ZOMBIE: u32 = 5;
    // SAFETY: a zeroed plain struct the kernel fills.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: the buffer is `size` bytes of the struct PROC_PIDTBSDINFO fills.
    let got =
        unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size) };
    (got == size && info.pbi_status != ZOMBIE && pid > 0).then(|| Process {
        pid,
        parent: info.pbi_ppid as i32,
        group: info.pbi_pgid as i32,
        start: info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec,
    })
}

impl Starting<'_> {
    /// The harness under `sandbox-exec` with its profile (none under `--sandbox off`), in a
    /// session of its own, its share's rlimits and niceness on, as `ids` when a root caller's;
    /// its proxy on this machine's loopback, serving once the harness has started (the fork
    /// happens while this process has one thread).
    pub(super) fn start(mut self, ids: (u32, u32)) -> Result<Option<StartedJudge>, i32> {
        let listener = match self.proxy.is_some() {
            true => match std::net::TcpListener::bind(("127.0.0.1", 0)) {
                Ok(l) => Some(l),
                Err(e) => {
                    eprintln!("panel: cannot start the judge's proxy: {e}");
                    return Err(exit_status::CANNOT_RUN);
                }
            },
            false => None,
        };
        let port = listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port());
        if let Some(port) = port {
            proxy_env(&mut self.env, port);
        }
        let real = |p: &Path| std::fs::canonicalize(p).ok();
        let profile = match seatbelt::profile(self.policy, port, &real) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("panel: cannot wall the judge in: {e}");
                return Err(exit_status::CANNOT_RUN);
            }
        };
        let mut cmd = match &profile {
            Some(profile) => {
                let mut cmd = Command::new(SANDBOX_EXEC);
                cmd.arg("-p").arg(profile).arg("--").args(self.program);
                cmd
            }
            None => {
                let mut cmd = Command::new(&self.program[0]);
                cmd.args(&self.program[1..]);
                cmd
            }
        };
        cmd.env_clear().envs(self.env.iter().map(|(k, v)| (k, v)));
        let limits = self.policy.share.clone();
        let become_ids = self.policy.ids.map(|_| ids);
        // SAFETY: between fork and exec of a process with one thread: system calls alone.
        unsafe {
            cmd.pre_exec(move || {
                rustix::process::setsid()?;
                limits.take().map_err(io::Error::other)?;
                if let Some((uid, gid)) = become_ids {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(gid) != 0
                        || libc::setuid(uid) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            })
        };
        let child = loop {
            match cmd.spawn() {
                Ok(child) => break child,
                Err(e) if crate::engine::lifecycle::is_shortage(&e) => {
                    if let Some(stop) = wait_for_a_process(self.stops, self.tool) {
                        return stop;
                    }
                }
                // As a shell says a program it cannot find.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(exit_status::NOT_FOUND);
                }
                Err(e) => {
                    let program = self.program[0].to_string_lossy();
                    eprintln!("panel: cannot start {program}: {e}");
                    return Err(exit_status::CANNOT_RUN);
                }
            }
        };
        if let (Some(proxy), Some(listener)) = (self.proxy.clone(), listener) {
            let _ = std::thread::Builder::new().spawn(move || {
                for conn in listener.incoming().flatten() {
                    proxy.serve(conn, Door::Proxy);
                }
            });
        }
        let pid = Pid::from_raw(child.id() as i32).expect("a child's pid is positive");
        Ok(Some((pid, None, self.proxy)))
    }
}
