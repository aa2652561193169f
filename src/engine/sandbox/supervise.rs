//! The process that stays beside a judge, one per judge, single-threaded and idle in `poll`.
//!
//! 1. It holds its parent (the tool) as a pidfd, which wakes it however the tool ends (a normal
//!    exit, a panic, SIGKILL, the OOM killer) and whichever thread started it.
//! 2. It is a child subreaper: every orphan below it, a `setsid` and double-forked one too,
//!    becomes its child instead of init's, so it can end them.
//! 3. It starts the confine stage (its own binary again), which becomes the harness and dies
//!    with this process.
//! 4. When the harness exits, the tool is gone, or the tool's TERM reaches it, it ends every
//!    descendant (TERM, the policy's grace, KILL until none is left), then exits as the harness
//!    did (the same code, or the same signal), so the tool reads the harness's own ending.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags, WaitOptions, getpid, getppid, pidfd_open, wait};

use super::{CONFINE, Policy};

/// How the harness ended, as the tool must read it.
enum Ending {
    Code(i32),
    Signal(i32),
}

pub fn main(policy: Policy, program: Vec<OsString>) -> i32 {
    let me = getpid();
    let Some(tool) = getppid() else { return 129 };
    // A kernel before 5.3 has no pidfd: the tool's death is then seen by polling getppid().
    let tool_fd = pidfd_open(tool, PidfdFlags::empty()).ok();
    if getppid() != Some(tool) {
        return 129;
    }
    if let Err(e) = rustix::process::set_child_subreaper(Some(me)) {
        eprintln!("panel: cannot adopt the judge's orphans: {e}");
        return 126;
    }
    // Signals arrive as bytes on sockets polled below: no thread, no handler that does work.
    let Ok((mut stops, stop_tx)) = UnixStream::pair() else {
        return 126;
    };
    let Ok((mut children, child_tx)) = UnixStream::pair() else {
        return 126;
    };
    let _ = stops.set_nonblocking(true);
    let _ = children.set_nonblocking(true);
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGQUIT,
    ] {
        let Ok(tx) = stop_tx.try_clone() else {
            return 126;
        };
        if signal_hook::low_level::pipe::register(sig, tx).is_err() {
            return 126;
        }
    }
    if signal_hook::low_level::pipe::register(signal_hook::consts::SIGCHLD, child_tx).is_err() {
        return 126;
    }
    let Ok(exe) = std::env::current_exe() else {
        return 126;
    };
    let Ok(policy_json) = serde_json::to_string(&policy) else {
        return 126;
    };
    let mut confine = Command::new(exe);
    confine
        .arg(CONFINE)
        .arg(policy_json)
        .arg("--")
        .args(&program);
    let harness = loop {
        match confine.spawn() {
            Ok(child) => break child.id(),
            // No process to be had yet (a limit the judges share): wait for one, as the tool
            // does, until it says stop or is gone. Never the judge's failure.
            Err(e) if crate::engine::lifecycle::is_shortage(&e) => {
                std::thread::sleep(Duration::from_millis(50));
                if stops.read(&mut [0u8; 16]).is_ok_and(|n| n > 0) {
                    return raise(signal_hook::consts::SIGTERM);
                }
                if getppid() != Some(tool) {
                    return raise(signal_hook::consts::SIGKILL);
                }
            }
            Err(e) => {
                eprintln!("panel: cannot start {}: {e}", program[0].to_string_lossy());
                return 126;
            }
        }
    };
    let harness = Pid::from_raw(harness as i32).expect("a child's pid is positive");
    let mut ending = None;
    let stopped = loop {
        ending = ending.or_else(|| reap(harness));
        if ending.is_some() {
            break None;
        }
        let tick = Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        let mut fds = vec![
            PollFd::new(&stops, PollFlags::IN),
            PollFd::new(&children, PollFlags::IN),
        ];
        if let Some(fd) = &tool_fd {
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
            break Some(signal_hook::consts::SIGTERM);
        }
        if tool_gone || (tool_fd.is_none() && getppid() != Some(tool)) {
            break Some(signal_hook::consts::SIGKILL);
        }
    };
    let grace = Duration::from_millis(policy.grace_ms);
    if stopped.is_none() {
        // Kept in the judge's stderr.txt: why its answer came at once though its pipe was held.
        if let Some(line) = left_running(me) {
            eprintln!("panel: {line}");
        }
    }
    end_descendants(me, harness, grace, &mut ending);
    // The tool is gone and cannot remove the judge's private folder (the copied logins are in
    // it): nothing runs there any more, so it goes now.
    if stopped == Some(signal_hook::consts::SIGKILL)
        && let Some(private) = &policy.private
    {
        let _ = std::fs::remove_dir_all(private);
    }
    match (stopped, ending) {
        // Stopped by the tool's signal: end the same way, as a process group of ours would.
        (Some(sig), _) => raise(sig),
        (None, Some(Ending::Code(c))) => c,
        (None, Some(Ending::Signal(s))) => raise(s),
        (None, None) => 128 + signal_hook::consts::SIGKILL,
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
    128 + sig
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

/// TERM to every descendant, up to `grace` for them to go, then KILL until none is left (the
/// orphans of a killed process come to us, and are seen on the next round); every child is
/// reaped, the harness's ending kept.
fn end_descendants(me: Pid, harness: Pid, grace: Duration, ending: &mut Option<Ending>) {
    use rustix::process::{Signal, kill_process};
    for p in descendants(me) {
        let _ = kill_process(p, Signal::TERM);
    }
    let until = Instant::now() + grace;
    loop {
        if let Some(e) = reap(harness) {
            *ending = Some(e);
        }
        if descendants(me).is_empty() {
            break;
        }
        if Instant::now() >= until {
            for p in descendants(me) {
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
