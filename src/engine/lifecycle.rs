//! The run's lifecycle, the same for every tool that launches: a signal that ends the tool
//! (SIGINT, SIGTERM, SIGHUP, SIGQUIT and the other terminating ones) or a reader of standard
//! output that goes away ends every judge's process group; the judges not done are recorded as
//! interrupted; and the tool exits with 128 + the signal (see [`crate::tools::main`]).

use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::thread;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long a judge has between TERM and KILL, given by its supervisor.
pub const JUDGE_GRACE: std::time::Duration = std::time::Duration::from_millis(500);
/// How long a process group of ours (a judge's supervisor) has between TERM and KILL: the
/// judge's grace, and time for the supervisor to end every descendant after it.
pub const GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// SIGPIPE's number: what [`stopped`] reports when the reader went away.
pub const SIGPIPE: i32 = 13;

/// The process groups alive now, so a signal to us can end them all.
static GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);
/// The signal that asked us to stop, or 0.
static STOP: AtomicI32 = AtomicI32::new(0);

/// The signal that stopped the run, if one did.
pub fn stopped() -> Option<i32> {
    match STOP.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Starts the lifecycle of a run that launches judges: a terminating signal or a closed
/// standard output stops it. Once per process.
pub fn begin() -> io::Result<()> {
    raise_open_file_limit();
    handle_signals()?;
    stop_when_stdout_closes();
    Ok(())
}

/// Raises our own limit on open files to its hard limit: each running judge holds a few pipes,
/// and the limit is ours to raise (the judges inherit it; a higher soft limit harms nothing).
fn raise_open_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

/// Whether an error is a shortage of our own resources (descriptors, processes, memory), not
/// something about the program: worth waiting out, never the judge's failure.
pub fn is_shortage(e: &io::Error) -> bool {
    use nix::errno::Errno;
    e.raw_os_error().is_some_and(|c| {
        [Errno::EMFILE, Errno::ENFILE, Errno::EAGAIN, Errno::ENOMEM].contains(&Errno::from_raw(c))
    })
}

/// How long a shortage is waited out when no judge of ours runs: our own threads (a judge that
/// just ended, a run-folder write) close what they hold within it.
const SHORTAGE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `f` until it fails for something other than a shortage of our own resources. A
/// shortage is waited out while other judges run (they end and free theirs), or for a moment
/// when none does, never past `deadline` or a stop; then its error is returned.
pub fn through_shortage<T>(
    deadline: std::time::Instant,
    mut f: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    let first = std::time::Instant::now();
    loop {
        match f() {
            Err(e)
                if is_shortage(&e)
                    && (any_running() || first.elapsed() < SHORTAGE_GRACE)
                    && std::time::Instant::now() < deadline
                    && stopped().is_none() =>
            {
                thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// How many judges can run at once within our limits: on open files, each holds three pipes
/// and, while it starts, a few more; on processes (threads count), each takes about eight
/// (our threads for it, its supervisor, its harness and what that starts).
pub fn judges_the_limits_allow() -> usize {
    use rustix::process::{Resource, getrlimit};
    let files = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    let by_files = files.saturating_sub(32) / 8;
    let by_tasks = match getrlimit(Resource::Nproc).current {
        Some(soft) => soft.saturating_sub(tasks_of_ours()) / 8,
        None => u64::MAX,
    };
    by_files.min(by_tasks).max(1) as usize
}

/// How many tasks (threads) the user runs now: what the limit on processes counts.
fn tasks_of_ours() -> u64 {
    let me = nix::unistd::getuid().as_raw().to_string();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let field = |status: &str, name: &str| -> Option<String> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1).map(str::to_string)
    };
    procs
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|s| field(s, "Uid:").as_deref() == Some(me.as_str()))
        .filter_map(|s| field(&s, "Threads:")?.parse::<u64>().ok())
        .sum()
}

/// The exit status a stop gives: 128 + the signal; `None` when nothing stopped the run or the
/// reader went away (a closed pipe is a quiet end).
pub fn exit_status() -> Option<u8> {
    match stopped() {
        None | Some(SIGPIPE) | Some(FAILED) => None,
        Some(sig) => u8::try_from(crate::records::exit_status::signalled(sig)).ok(),
    }
}

/// What [`stopped`] reports when a failure of ours (a panic, no descriptor left) stopped the run.
pub const FAILED: i32 = -1;

/// Why a failure of ours stopped the run, for the tool's one line.
static FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// Stops the run because of a failure of ours: every judge ended at once.
pub fn fail() {
    if claim_failure() {
        end_all_groups();
    }
}

/// Whether this failure is the one that stops the run (a signal or an earlier failure may have).
fn claim_failure() -> bool {
    STOP.compare_exchange(0, FAILED, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// [`fail`], saying why: the tool ends with that line and exit 2, and no judge is blamed.
pub fn fail_with(why: String) {
    FAILURE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(why);
    if claim_failure() {
        in_background(end_all_groups);
    }
}

/// Runs `f` on a thread of its own, or here when no thread can be had.
fn in_background(f: fn()) {
    if thread::Builder::new().spawn(f).is_err() {
        f();
    }
}

/// Why a failure of ours stopped the run, if one did.
pub fn failure() -> Option<String> {
    FAILURE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The signals that end the tool, and with it every judge.
const STOPPING: &[i32] = &[
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
    signal_hook::consts::SIGUSR1,
    signal_hook::consts::SIGUSR2,
    signal_hook::consts::SIGALRM,
    signal_hook::consts::SIGVTALRM,
    signal_hook::consts::SIGPROF,
    signal_hook::consts::SIGXCPU,
    signal_hook::consts::SIGXFSZ,
];

/// On a terminating signal: remember it, then TERM and KILL every group of ours.
fn handle_signals() -> io::Result<()> {
    static INSTALL: Once = Once::new();
    let mut result = Ok(());
    INSTALL.call_once(|| match signal_hook::iterator::Signals::new(STOPPING) {
        Ok(mut signals) => {
            let watcher = thread::Builder::new().spawn(move || {
                for sig in signals.forever() {
                    STOP.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
                        .ok();
                    end_all_groups();
                }
            });
            if let Err(e) = watcher {
                result = Err(e);
            }
        }
        Err(e) => result = Err(e),
    });
    result
}

/// Stops the run as a signal would: every group ended, every judge not yet done recorded as
/// interrupted. `sig` is what [`stopped`] reports afterwards.
pub fn stop_all(sig: i32) {
    if STOP
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        in_background(end_all_groups);
    }
}

/// Watches standard output: when it is a pipe whose reader has gone (`| head -1`), stops the run
/// at once instead of when the next record fails to write.
fn stop_when_stdout_closes() {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    // Without a thread for it, a closed pipe is still seen at the next record written.
    let _ = thread::Builder::new().spawn(|| {
        let stdout = io::stdout();
        loop {
            let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::empty())];
            match poll(&mut fds, PollTimeout::from(200u16)) {
                Ok(n) if n > 0 => {
                    let gone = fds[0]
                        .revents()
                        .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP));
                    if gone {
                        stop_all(SIGPIPE);
                        return;
                    }
                    // Anything else (a regular file is always "ready"): nothing to watch.
                    return;
                }
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
            }
            if stopped().is_some() {
                return;
            }
        }
    });
}

fn live_groups() -> Vec<i32> {
    GROUPS
        .lock()
        .map(|g| {
            g.as_ref()
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

fn end_all_groups() {
    for pgid in live_groups() {
        signal_group(pgid, Signal::SIGTERM);
    }
    thread::sleep(GRACE);
    for pgid in live_groups() {
        signal_group(pgid, Signal::SIGKILL);
    }
}

pub fn signal_group(pgid: i32, sig: Signal) -> bool {
    killpg(Pid::from_raw(pgid), sig).is_ok()
}

/// Whether any judge of ours runs now: one that ends frees what it held.
pub fn any_running() -> bool {
    GROUPS
        .lock()
        .is_ok_and(|g| g.as_ref().is_some_and(|set| !set.is_empty()))
}

pub fn register(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.get_or_insert_with(HashSet::new).insert(pgid);
    }
}

pub fn unregister(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock()
        && let Some(set) = g.as_mut()
    {
        set.remove(&pgid);
    }
}
