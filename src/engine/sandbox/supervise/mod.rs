//! The process that stays beside a judge, one per judge, single-threaded and idle in `poll`.
//! What differs by platform is in one module each ([`linux`], [`macos`]): how it watches its
//! tool, how it knows the judge's processes, and how it puts the policy's walls around it.
//!
//! 1. It watches its parent (the tool): on Linux as a pidfd, which wakes it however the tool
//!    ends (a normal exit, a panic, SIGKILL, the OOM killer); on macOS by its parent changing.
//! 2. It knows every process of the judge: on Linux as a child subreaper, every orphan below it,
//!    a `setsid` and double-forked one too, becomes its child instead of init's; on macOS by
//!    the judge's session and process group and what it saw descend from it ([`Family`]).
//! 3. It starts the judge: on Linux in a [`super::jail`] of its own, whose first process dies
//!    with this one and reports how the harness ended, or, where there is no jail, the confine
//!    stage (its own binary again), which becomes the harness and dies with this process; in
//!    the judge's own [`super::cgroup`] where the run has them, before it starts anything. On
//!    macOS under `sandbox-exec` with the policy's Seatbelt profile ([`super::seatbelt`]).
//!    Everywhere with the judge's [`super::egress`] proxy on threads of its own.
//! 4. When the harness exits, the tool is gone, the tool's TERM reaches it, or the judge's CLI
//!    keeps failing to reach an endpoint (its proxy gave up), it ends every descendant (TERM,
//!    the policy's grace, KILL until none is left), then exits as the harness did (the same
//!    code, or the same signal), so the tool reads the harness's own ending; what the judge met
//!    of its share ([`ShareReport`]) it writes beside the private folder.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, WaitOptions, getpid, getppid, wait};

use super::Policy;
use super::cgroup::Leaf;
use super::egress::{Proxy, Swaps, Upstream};
use super::jail::{self, Ending};
use super::share::ShareReport;
use super::swap::{self, Secrets};
use crate::records::exit_status;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as os;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as os;
use os::Family;

pub fn main(policy: Policy, program: Vec<OsString>) -> i32 {
    let me = getpid();
    let Some(tool) = getppid() else { return 129 };
    // Where there is no pidfd, the tool's death is seen by polling getppid().
    let tool_fd = os::watch_tool(tool);
    if getppid() != Some(tool) {
        return 129;
    }
    let mut family = match Family::adopt(me) {
        Ok(family) => family,
        Err(e) => {
            eprintln!("panel: cannot adopt the judge's orphans: {e}");
            return exit_status::CANNOT_RUN;
        }
    };
    let Some((mut stops, mut children)) = signals() else {
        return exit_status::CANNOT_RUN;
    };
    // The judge's own cgroup, made before anything of it starts.
    let leaf = match &policy.share.cgroup {
        Some(judge) => match Leaf::make(judge, &format!("j{}", me.as_raw_nonzero())) {
            Ok(leaf) => Some(leaf),
            Err(e) => {
                eprintln!("panel: cannot make the judge's cgroup: {e}");
                return exit_status::CANNOT_RUN;
            }
        },
        None => None,
    };
    let started = match start(&policy, &program, &stops, tool, leaf.as_ref()) {
        Ok(Some(started)) => started,
        Ok(None) => {
            leaf.inspect(Leaf::remove);
            return raise(signal_hook::consts::SIGTERM);
        }
        Err(code) => {
            leaf.inspect(Leaf::remove);
            return code;
        }
    };
    let (harness, mut report, proxy) = started;
    family.started(harness);
    let mut met = Vec::new();
    let mut ending = None;
    // Without a jail, whose first process watches them, its rlimits are watched from here.
    let watched = policy.jail.is_none() && policy.share.sampled();
    let mut looked = Instant::now();
    let stopped = loop {
        ending = ending.or_else(|| reap(harness));
        if ending.is_some() {
            ending = reported(ending, &mut report, &mut met);
            break None;
        }
        // Its CLI keeps failing to reach one endpoint: ended now, not at its deadline.
        if proxy.as_ref().is_some_and(|p| p.given_up().is_some()) {
            break None;
        }
        if watched && looked.elapsed() >= Duration::from_secs(1) {
            looked = Instant::now();
            watch(&policy, &mut family, &mut met);
        }
        family.look();
        if let Some(sig) = wait_a_tick(&mut stops, &mut children, tool_fd.as_ref(), tool) {
            break Some(sig);
        }
    };
    let grace = Duration::from_millis(policy.grace_ms);
    let gave_up = proxy.as_ref().is_some_and(|p| p.given_up().is_some());
    if stopped.is_none() && !gave_up {
        // Kept in the judge's stderr.txt: why its answer came at once though its pipe was held.
        if let Some(line) = family.left_running() {
            eprintln!("panel: {line}");
        }
    }
    end_descendants(&mut family, harness, grace, &mut ending);
    ending = reported(ending, &mut report, &mut met);
    if let Some(p) = &proxy {
        p.finish();
    }
    afterwards(&policy, stopped, &met, leaf.as_ref());
    match (stopped, ending) {
        // Stopped by the tool's signal: end the same way, as a process group of ours would.
        (Some(sig), _) => raise(sig),
        (None, Some(Ending::Code(c))) => c,
        (None, Some(Ending::Signal(s))) => raise(s),
        (None, None) => exit_status::signalled(signal_hook::consts::SIGKILL),
    }
}

/// A second's wait for a signal, a child's ending or the tool's: the signal to end the judge
/// with when the tool stopped it (TERM) or is gone (KILL).
fn wait_a_tick(
    stops: &mut UnixStream,
    children: &mut UnixStream,
    tool_fd: Option<&std::os::fd::OwnedFd>,
    tool: Pid,
) -> Option<i32> {
    let tick = Timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    let mut fds = vec![
        PollFd::new(stops, PollFlags::IN),
        PollFd::new(children, PollFlags::IN),
    ];
    if let Some(fd) = tool_fd {
        fds.push(PollFd::new(fd, PollFlags::IN));
    }
    let _ = poll(&mut fds, Some(&tick));
    let ready = |i: usize| fds.get(i).is_some_and(|f| !f.revents().is_empty());
    let (stop, child, tool_gone) = (ready(0), ready(1), ready(2));
    if child {
        let _ = children.read(&mut [0u8; 64]);
    }
    if stop {
        // Only the tool signals its judges' supervisors (they are in process groups of
        // their own, away from the terminal), and it sends TERM.
        let _ = stops.read(&mut [0u8; 16]);
        return Some(signal_hook::consts::SIGTERM);
    }
    if tool_gone || (tool_fd.is_none() && getppid() != Some(tool)) {
        return Some(signal_hook::consts::SIGKILL);
    }
    None
}

/// The sockets signals arrive on as bytes, polled by the supervisor: the tool's TERM (and INT,
/// HUP, QUIT), and a child's ending. No thread, no handler that does work.
fn signals() -> Option<(UnixStream, UnixStream)> {
    let (stops, stop_tx) = UnixStream::pair().ok()?;
    let (children, child_tx) = UnixStream::pair().ok()?;
    let _ = stops.set_nonblocking(true);
    let _ = children.set_nonblocking(true);
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGQUIT,
    ] {
        signal_hook::low_level::pipe::register(sig, stop_tx.try_clone().ok()?).ok()?;
    }
    signal_hook::low_level::pipe::register(signal_hook::consts::SIGCHLD, child_tx).ok()?;
    Some((stops, children))
}

/// One look at the judge's processes (its supervisor's descendants) for the limits its rlimits
/// hold, and at its private folder for its disk; those met are added to `met`. A judge past
/// its disk is ended at once: nothing else stops it writing.
fn watch(policy: &Policy, family: &mut Family, met: &mut Vec<String>) {
    let pids: Vec<u32> = family
        .descendants()
        .into_iter()
        .map(|p| p.as_raw_nonzero().get() as u32)
        .collect();
    let mut now = policy.share.reached_now(pids.iter().copied());
    if let Some(private) = &policy.private
        && policy.share.disk_full(private, &pids)
    {
        now.push("disk");
        for p in pids.iter().filter_map(|&p| Pid::from_raw(p as i32)) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    for w in now {
        if !met.iter().any(|m| m == w) {
            met.push(w.to_string());
        }
    }
}

/// Once nothing of the judge runs: what it met goes beside its private folder, its cgroup
/// goes; when the tool is gone (`stopped` by KILL), which cannot remove the judge's private
/// folder (the copied logins are in it), that goes now too.
fn afterwards(policy: &Policy, stopped: Option<i32>, met: &[String], leaf: Option<&Leaf>) {
    let gone = stopped == Some(signal_hook::consts::SIGKILL);
    if let Some(path) = &policy.share.report
        && !gone
    {
        let _ = what_it_met(met, leaf).write(path);
    }
    if let Some(leaf) = leaf {
        leaf.remove();
    }
    if gone {
        if let Some(private) = &policy.private {
            let _ = crate::engine::beneath::remove_tree(private);
        }
        if let Some(e) = &policy.egress {
            let _ = std::fs::remove_file(&e.log);
        }
    }
}

/// What a judge started is: the process to watch, for a jail the pipe its first process
/// reports the harness's ending through, and its proxy.
type StartedJudge = (Pid, Option<std::os::fd::OwnedFd>, Option<Arc<Proxy>>);

/// What a judge met of its share: the limits its first process saw it meet, and what the
/// kernel counted in its cgroup.
fn what_it_met(met: &[String], leaf: Option<&Leaf>) -> ShareReport {
    let mut r = ShareReport::default();
    for w in met {
        match w.strip_prefix(jail::DISK_PEAK) {
            Some(n) => r.disk_peak = n.parse().ok(),
            None => r.met(w),
        }
    }
    if let Some(c) = leaf.map(Leaf::counted) {
        if c.memory_reached {
            r.met("memory");
        }
        if c.tasks_reached {
            r.met("processes");
        }
        r.memory_peak = c.memory_peak;
        r.processes_peak = c.tasks_peak;
    }
    r
}

/// Starts the judge, jailed or in the confine stage (in its cgroup `leaf`), with its proxy.
/// `Ok(None)`: the tool stopped it while it waited for a process; `Err`: the code to exit with.
fn start(
    policy: &Policy,
    program: &[OsString],
    stops: &UnixStream,
    tool: Pid,
    leaf: Option<&Leaf>,
) -> Result<Option<StartedJudge>, i32> {
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let ids = policy.ids.unwrap_or_else(|| {
        (
            rustix::process::getuid().as_raw(),
            rustix::process::getgid().as_raw(),
        )
    });
    let began = swap::Began::new(policy.began.and_then(super::fds::adopt));
    let swaps = match policy.secrets.and_then(super::fds::adopt) {
        Some(file) => match swaps(file, &env, began) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("panel: cannot hold the judge's credentials: {e}");
                return Err(exit_status::CANNOT_RUN);
            }
        },
        None => None,
    };
    let proxy = policy.egress.as_ref().map(|e| {
        let get = |k: &str| env_of(&env, k);
        Proxy::swapping(e, Upstream::from_env(&get), swaps)
    });
    let starting = Starting {
        policy,
        program,
        stops,
        tool,
        leaf,
        env,
        proxy,
    };
    starting.start(ids)
}

/// What the judge's proxy swaps in, read from the tool's pipe, and the TLS it reads and sends
/// on the model's requests with: as the model's hosts, by the run's authority; onwards,
/// trusting what the user trusts.
fn swaps(
    file: std::fs::File,
    env: &[(OsString, OsString)],
    began: swap::Began,
) -> Result<Swaps, String> {
    let secrets = Secrets::read_from(file)?;
    let over_tls = secrets.swaps.iter().any(|s| s.models.iter().any(|m| m.tls));
    let tls = match &secrets.authority {
        Some(keys) if over_tls => {
            let get = |k: &str| env_of(env, k);
            let mut client =
                crate::engine::logins::https::client_config(&get).map_err(|e| format!("{e:#}"))?;
            client.alpn_protocols = vec![b"http/1.1".to_vec()];
            Some(swap::Tls {
                issuer: super::authority::Issuer::new(keys)?,
                client: Arc::new(client),
            })
        }
        _ => None,
    };
    Ok(Swaps {
        secrets,
        tls,
        began,
    })
}

/// What [`start`] starts a judge with: its policy, program, environment and proxy, and the
/// tool it waits on while no process is to be had.
struct Starting<'a> {
    policy: &'a Policy,
    program: &'a [OsString],
    stops: &'a UnixStream,
    tool: Pid,
    leaf: Option<&'a Leaf>,
    env: Vec<(OsString, OsString)>,
    proxy: Option<Arc<Proxy>>,
}

/// A moment's wait for a process to be had (a limit the judges share), as the tool waits:
/// never the judge's failure. What to return instead when the tool says stop or is gone.
fn wait_for_a_process(stops: &UnixStream, tool: Pid) -> Option<Result<Option<StartedJudge>, i32>> {
    std::thread::sleep(Duration::from_millis(50));
    if (&*stops).read(&mut [0u8; 16]).is_ok_and(|n| n > 0) {
        return Some(Ok(None));
    }
    (getppid() != Some(tool)).then(|| Err(raise(signal_hook::consts::SIGKILL)))
}

/// A variable of `env`, as text.
fn env_of(env: &[(OsString, OsString)], name: &str) -> Option<String> {
    env.iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.to_str().map(String::from))
}

/// Points every proxy variable a CLI honours at the judge's proxy on `port`; loopback stays
/// direct (in a jail, the endpoint's own door).
fn proxy_env(env: &mut Vec<(OsString, OsString)>, port: u16) {
    const NAMES: [&str; 4] = ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"];
    env.retain(|(k, _)| {
        !NAMES
            .iter()
            .any(|n| k.to_str().is_some_and(|k| k.eq_ignore_ascii_case(n)))
    });
    let url = format!("http://127.0.0.1:{port}");
    for name in &NAMES[..3] {
        env.push((name.into(), url.clone().into()));
        env.push((name.to_ascii_lowercase().into(), url.clone().into()));
    }
    let direct = "localhost,127.0.0.1,::1";
    env.push(("NO_PROXY".into(), direct.into()));
    env.push(("no_proxy".into(), direct.into()));
    // Node's own fetch reads the proxy variables only when told to.
    env.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
}

/// The harness's ending, as a jail's first process reported it, in place of that process's own
/// (read once); the limits it met go to `met`.
fn reported(
    ending: Option<Ending>,
    report: &mut Option<std::os::fd::OwnedFd>,
    met: &mut Vec<String>,
) -> Option<Ending> {
    match (ending, report.take()) {
        (Some(Ending::Code(0)), Some(fd)) => {
            let (said, words) = jail::read_ending(&fd);
            met.extend(words);
            said.or(ending)
        }
        (_, fd) => {
            *report = fd;
            ending
        }
    }
}

/// Reaps every child that has ended (the harness, or an orphan given to us); the harness's
/// ending when it was among them.
fn reap(harness: Pid) -> Option<Ending> {
    let mut ending = None;
    while let Ok(Some((pid, status))) = wait(WaitOptions::NOHANG) {
        if pid == harness {
            ending = Some(match status.terminating_signal() {
                Some(sig) => Ending::Signal(sig),
                None => Ending::Code(status.exit_status().unwrap_or(1)),
            });
        }
    }
    ending
}

/// Ends this process by `sig`, as its default action does (the tool reads a judge killed by a
/// signal); 128 + the signal when the signal does not end a process.
fn raise(sig: i32) -> i32 {
    let _ = signal_hook::low_level::emulate_default_handler(sig);
    exit_status::signalled(sig)
}

/// TERM to every descendant, up to `grace` for them to go, then KILL until none is left (the
/// orphans of a killed process come to us, and are seen on the next round); every child is
/// reaped, the harness's ending kept.
fn end_descendants(
    family: &mut Family,
    harness: Pid,
    grace: Duration,
    ending: &mut Option<Ending>,
) {
    use rustix::process::{Signal, kill_process};
    for p in family.descendants() {
        let _ = kill_process(p, Signal::TERM);
    }
    let until = Instant::now() + grace;
    loop {
        if let Some(e) = reap(harness) {
            *ending = Some(e);
        }
        let left = family.descendants();
        if left.is_empty() {
            break;
        }
        if Instant::now() >= until {
            for p in left {
                let _ = kill_process(p, Signal::KILL);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Block until the last child is reaped.
    while let Ok(Some((pid, status))) = wait(WaitOptions::empty()) {
        if pid == harness {
            *ending = Some(match status.terminating_signal() {
                Some(sig) => Ending::Signal(sig),
                None => Ending::Code(status.exit_status().unwrap_or(1)),
            });
        }
    }
}
