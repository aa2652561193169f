//! The supervisor on Linux: a child subreaper holding its tool as a pidfd, which starts the
//! judge in its jail or the confine stage.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::Command;

use rustix::process::{Pid, PidfdFlags, pidfd_open};

use super::{StartedJudge, Starting, proxy_env, wait_for_a_process};
use crate::engine::sandbox::egress::Door;
use crate::engine::sandbox::{CONFINE, Policy, fds, jail, keeper};
use crate::records::exit_status;

/// The tool as a pidfd, which polls readable once it is gone; `None` before Linux 5.3.
pub(super) fn watch_tool(tool: Pid) -> Option<OwnedFd> {
    pidfd_open(tool, PidfdFlags::empty()).ok()
}

/// The judge's processes: this supervisor's descendants, which every orphan of the judge's
/// stays among (it is their subreaper).
pub(super) struct Family {
    me: Pid,
}

impl Family {
    /// Makes this process the subreaper of everything it starts.
    pub(super) fn adopt(me: Pid) -> std::io::Result<Family> {
        rustix::process::set_child_subreaper(Some(me))?;
        Ok(Family { me })
    }

    /// Nothing to learn of the harness, nor to look at each tick: its orphans come to us.
    pub(super) fn started(&mut self, _harness: Pid) {}

    pub(super) fn look(&mut self) {}

    /// Every live process of the judge.
    pub(super) fn descendants(&mut self) -> Vec<Pid> {
        descendants(self.me)
    }

    /// What the judge left running when its harness exited, in words; `None` when nothing.
    pub(super) fn left_running(&mut self) -> Option<String> {
        left_running(self.me)
    }
}

impl Starting<'_> {
    /// The judge in its jail where the policy has one, else in the confine stage.
    pub(super) fn start(self, ids: (u32, u32)) -> Result<Option<StartedJudge>, i32> {
        match &self.policy.jail {
            Some(jail) => self.jailed(jail, ids),
            None => self.confined(),
        }
    }

    /// The judge in a jail of its own, running as `ids`, its proxy serving the jail's doors.
    fn jailed(mut self, jail: &jail::Jail, ids: (u32, u32)) -> Result<Option<StartedJudge>, i32> {
        let (policy, leaf) = (self.policy, self.leaf);
        if let Some(door) = jail.doors.first() {
            proxy_env(&mut self.env, door.at.port());
        }
        let under = jail::Under {
            ids,
            rules: policy.confine.as_ref(),
            limits: &policy.share,
        };
        let enter = |pid: u32| leaf.map_or(Ok(()), |l| l.enter(pid));
        let started = loop {
            match jail::start(jail, &under, self.program, &self.env, &enter) {
                Ok(s) => break s,
                Err(e) if crate::engine::lifecycle::is_shortage(&e) => {
                    if let Some(stop) = wait_for_a_process(self.stops, self.tool) {
                        return stop;
                    }
                }
                Err(e) => {
                    eprintln!("panel: cannot make the judge's jail: {e}");
                    return Err(exit_status::CANNOT_RUN);
                }
            }
        };
        if let Some(proxy) = self.proxy.clone() {
            let doors: Vec<Door> = jail.doors.iter().map(|d| d.door()).collect();
            let socket = started.doors;
            let _ = std::thread::Builder::new().spawn(move || {
                while let Ok((conn, i)) = jail::receive(&socket) {
                    if let Some(door) = doors.get(i) {
                        proxy.serve(conn, door.clone());
                    }
                }
            });
        }
        let pid = Pid::from_raw(started.pid).expect("a child's pid is positive");
        Ok(Some((pid, Some(started.ending), self.proxy)))
    }

    /// The judge in the confine stage (this binary again), its proxy on the loopback.
    /// Where the keeper tells how the judge's own connections ended: to its proxy, which
    /// counts a loopback endpoint's failures as its own (never those to itself).
    fn outcome(&self, own_ports: Vec<u16>) -> keeper::Outcome {
        let proxy = self.proxy.clone();
        std::sync::Arc::new(move |at: std::net::SocketAddr, ended| {
            let own = at.ip().is_loopback() && own_ports.contains(&at.port());
            if let (Some(p), false) = (&proxy, own) {
                p.direct(at, ended);
            }
        })
    }

    /// A door of the judge's proxy on this loopback for the loopback endpoint at `at`, when
    /// the proxy reads its requests (it swaps a credential in there).
    fn door_for(&self, at: &std::net::SocketAddr) -> Option<std::net::SocketAddr> {
        let proxy = self.proxy.clone()?;
        let allow = &self.policy.egress.as_ref()?.allow;
        let e = allow
            .iter()
            .find(|e| e.port == at.port() && e.loopback_addresses().contains(&at.ip()))?
            .clone();
        if !proxy.swaps(&e) {
            return None;
        }
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).ok()?;
        let door = listener.local_addr().ok()?;
        let _ = std::thread::Builder::new().spawn(move || {
            for conn in listener.incoming().flatten() {
                proxy.serve(conn, Door::Direct(e.clone()));
            }
        });
        Some(door)
    }

    /// Without a jail the proxy listens on this machine's loopback, and Landlock lets the judge
    /// connect to its port (and its loopback endpoints') alone: the port, if it has a proxy.
    fn proxy_on_loopback(&mut self, policy: &mut Policy) -> Result<Option<u16>, i32> {
        let Some(proxy) = self.proxy.clone() else {
            return Ok(None);
        };
        let listener = match std::net::TcpListener::bind(("127.0.0.1", 0)) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("panel: cannot start the judge's proxy: {e}");
                return Err(exit_status::CANNOT_RUN);
            }
        };
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        proxy_env(&mut self.env, port);
        if let Some(rules) = &mut policy.confine {
            rules.tcp.push(port);
            rules.to.push((std::net::Ipv4Addr::LOCALHOST, port).into());
        }
        let _ = std::thread::Builder::new().spawn(move || {
            for conn in listener.incoming().flatten() {
                proxy.serve(conn, Door::Proxy);
            }
        });
        Ok(Some(port))
    }

    fn confined(mut self) -> Result<Option<StartedJudge>, i32> {
        let mut policy = self.policy.clone();
        // The stage enters the judge's cgroup itself, before it starts anything.
        policy.share.enter = self.leaf.map(|l| l.dirs().to_vec()).unwrap_or_default();
        let proxy_port = self.proxy_on_loopback(&mut policy)?;
        // The endpoints whose requests its proxy reads get a door of the proxy's on this
        // loopback, where the keeper makes the judge's connections to them instead.
        let mut own_ports: Vec<u16> = proxy_port.into_iter().collect();
        let mut to = Vec::new();
        if let Some(rules) = &policy.confine {
            for at in &rules.to {
                let door = self.door_for(at);
                own_ports.extend(door.map(|d| d.port()));
                to.push((*at, door.unwrap_or(*at)));
            }
        }
        // The stage reads no secrets: they were this process's alone.
        policy.secrets = None;
        policy.began = None;
        // Where Landlock confines it, its connections are made here: a socket for the stage
        // to hand over the listener of them.
        let keeper = match &policy.confine {
            Some(_) => match UnixStream::pair() {
                Ok((ours, theirs)) => {
                    policy.keeper = Some(theirs.as_raw_fd());
                    Some((ours, theirs, to))
                }
                Err(e) => {
                    eprintln!("panel: cannot keep the judge's connections: {e}");
                    return Err(exit_status::CANNOT_RUN);
                }
            },
            None => None,
        };
        let Ok(exe) = std::env::current_exe() else {
            return Err(exit_status::CANNOT_RUN);
        };
        let Ok(policy_json) = serde_json::to_string(&policy) else {
            return Err(exit_status::CANNOT_RUN);
        };
        let program = self.program;
        let outcome = self.outcome(own_ports);
        let mut confine = Command::new(exe);
        if let Some((_, theirs, _)) = &keeper {
            fds::inherited(&mut confine, theirs.as_raw_fd());
        }
        confine
            .arg(CONFINE)
            .arg(policy_json)
            .arg("--")
            .args(program)
            .env_clear()
            .envs(self.env);
        loop {
            match confine.spawn() {
                Ok(child) => {
                    if let Some((ours, theirs, to)) = keeper {
                        drop(theirs);
                        let outcome = outcome.clone();
                        let _ = std::thread::Builder::new().spawn(move || {
                            if let Some(listener) = keeper::receive_fd(&ours.into()) {
                                keeper::keep(listener, to, outcome);
                            }
                        });
                    }
                    let pid = Pid::from_raw(child.id() as i32).expect("a child's pid is positive");
                    return Ok(Some((pid, None, self.proxy)));
                }
                Err(e) if crate::engine::lifecycle::is_shortage(&e) => {
                    if let Some(stop) = wait_for_a_process(self.stops, self.tool) {
                        return stop;
                    }
                }
                Err(e) => {
                    eprintln!("panel: cannot start {}: {e}", program[0].to_string_lossy());
                    return Err(exit_status::CANNOT_RUN);
                }
            }
        }
    }
}

/// Every live descendant of `root`, through `/proc/PID/task/TID/children`.
fn descendants(root: Pid) -> Vec<Pid> {
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", p.as_raw_nonzero())) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in list.split_whitespace().filter_map(|c| c.parse().ok()) {
                if let Some(child) = Pid::from_raw(child) {
                    out.push(child);
                    todo.push(child);
                }
            }
        }
    }
    out
}

/// What the judge left running when its harness exited, in words; `None` when nothing.
fn left_running(me: Pid) -> Option<String> {
    let left = descendants(me);
    if left.is_empty() {
        return None;
    }
    let ours = |fd: u32| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok();
    let pipes = [ours(1), ours(2)];
    let holds = |p: &Pid| {
        std::fs::read_dir(format!("/proc/{}/fd", p.as_raw_nonzero()))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| {
                let target = std::fs::read_link(fd.path()).ok();
                target.is_some() && pipes.contains(&target)
            })
    };
    let holders = left.iter().filter(|p| holds(p)).count();
    Some(match holders {
        0 => format!("ended {} process(es) the judge left running", left.len()),
        n => format!(
            "ended {} process(es) the judge left running; {n} held its output open",
            left.len()
        ),
    })
}
