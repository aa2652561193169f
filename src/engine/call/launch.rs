//! Running one harness process. *Launch* names that one process, from its start to its end:
//! its own process group, stdin closed or fed then closed, stdout and stderr read at once
//! (stdout into its [`Transcript`], which writes it to the run folder within its budget; stderr
//! capped), a deadline, and the whole group killed afterwards (TERM, a grace period, KILL), after
//! a normal exit too, so nothing of ours outlives the tool. A judge whose stdout passes its
//! budget is stopped at once, through its group as at the deadline.

use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, bounded};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

use crate::engine::call::cancel::Cancel;
use crate::engine::call::transcript::Transcript;
use crate::engine::lifecycle::{GRACE, register, signal_group, stopped, unregister};
use crate::engine::sandbox::{self, Policy};

#[derive(Clone, Debug)]
pub struct Spec {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The whole environment: nothing else of ours is inherited.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Written to stdin, which is then closed; `None` is `/dev/null`. Shared with the caller,
    /// since a prompt may be as large as the candidate in it.
    pub stdin: Option<std::sync::Arc<String>>,
    pub timeout: Duration,
    /// Bytes of stderr kept; the rest is read, counted and dropped. (Stdout goes to the
    /// [`Transcript`] given to [`run`], within its budget.)
    pub cap: usize,
    /// Run it under a supervisor (see [`crate::engine::sandbox`]); `None` runs it as it is,
    /// for the unit tests, whose binary is no supervisor.
    pub supervised: Option<Policy>,
    /// The panel's token that ends this process once the panel is decided without it.
    pub cancel: Option<Arc<Cancel>>,
    /// What its supervisor holds and the judge must not (live credentials, the run's
    /// authority), handed over through a pipe: never on a command line.
    pub secrets: Option<Arc<Vec<u8>>>,
    /// Opened once its supervisor says a model has begun to answer it (the first judge of a
    /// seat, whose cache the others wait for).
    pub began: Option<Arc<crate::engine::call::warm::Warm>>,
}

/// How it ended.
#[derive(Debug)]
pub struct ProcessOutcome {
    /// `None` when it could not be waited for (it was killed and reaped elsewhere).
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    /// A signal to panel-judge stopped it.
    pub interrupted: bool,
    /// Why its panel ended it, decided without it ([`Spec::cancel`]).
    pub cancelled: Option<String>,
    /// Stdout as read; `stdout.over` when it passed its budget and the judge was stopped.
    pub stdout: Transcript,
    pub stderr: Vec<u8>,
    pub stderr_bytes: u64,
    pub duration: Duration,
    /// What its proxy refused it, one line each.
    pub refused: Vec<String>,
    /// What it met of its share and what it used, as its supervisor said.
    pub share: crate::engine::sandbox::share::ShareReport,
    /// The size of the answer file it wrote, when its answer is a file.
    pub answer_bytes: Option<u64>,
    /// Why it held its login's live credential behind walls, where it did.
    pub live: Option<String>,
    /// The service tier its provider was asked for, where not the standard one.
    pub tier: Option<crate::records::Tier>,
}

impl ProcessOutcome {
    pub fn exit_code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    pub fn signal(&self) -> Option<i32> {
        self.status.and_then(|s| s.signal())
    }
}

/// Runs `spec` to its end, its deadline, or the end of its stdout's budget, reading its stdout
/// into `stdout`. `Err` only when it could not be started.
pub fn run(spec: &Spec, stdout: Transcript) -> io::Result<ProcessOutcome> {
    let stdout = Arc::new(Mutex::new(stdout));
    let started = Instant::now();
    let secrets = match (&spec.supervised, &spec.secrets) {
        (Some(_), Some(bytes)) => Some(secret_pipe(bytes)?),
        _ => None,
    };
    let began = match (&spec.supervised, &spec.began) {
        (Some(_), Some(warm)) => Some(began_pipe(Arc::clone(warm))?),
        _ => None,
    };
    let (program, args) = match &spec.supervised {
        Some(policy) => {
            let mut policy = policy.clone();
            policy.secrets = secrets.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
            policy.began = began.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
            sandbox::supervised(&policy, &spec.program, &spec.args)?
        }
        None => (spec.program.clone(), spec.args.clone()),
    };
    let mut cmd = Command::new(&program);
    for fd in secrets.iter().chain(&began) {
        sandbox::fds::inherited(&mut cmd, std::os::fd::AsRawFd::as_raw_fd(fd));
    }
    cmd.args(&args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // A shortage of descriptors, processes or threads on our side is waited out while other
    // judges run (they end and free theirs), up to the deadline; with none running it lasts.
    let Running {
        mut child,
        pgid,
        feeder,
        out,
        err,
    } = crate::engine::lifecycle::through_shortage(started + spec.timeout, || {
        start(spec, &mut cmd, &stdout)
    })?;

    // The supervisor has its copy of the pipes.
    drop(secrets);
    drop(began);
    let (status, timed_out) = wait(&mut child, spec.timeout.saturating_sub(started.elapsed()));
    end_group(pgid, &mut child, status.is_none());
    unregister(pgid);
    if let Some(c) = &spec.cancel {
        c.unregister(pgid);
    }
    let status = status.or_else(|| child.try_wait().ok().flatten());
    // Stopped while it ran: whatever it exited with (a CLI may trap SIGTERM and exit 143), it
    // was cut short; a valid answer it managed to give still counts (see ask::read_answer).
    let interrupted = stopped().is_some();
    let cancelled = match &spec.cancel {
        Some(c) if !interrupted => c.why().map(str::to_string),
        _ => None,
    };

    // The pipes close when the last holder dies; one that escaped the group may hold them.
    collect(&out);
    collect(&err);
    drop(out);
    let mut stdout = std::mem::replace(
        &mut *stdout.lock().unwrap_or_else(|e| e.into_inner()),
        Transcript::of(b""),
    );
    stdout.finish();
    let Capped {
        kept: stderr,
        bytes: stderr_bytes,
        ..
    } = take(err.read);
    if let Some(f) = feeder {
        let _ = f.join();
    }
    Ok(ProcessOutcome {
        status,
        timed_out: timed_out && !interrupted && cancelled.is_none(),
        interrupted,
        cancelled,
        stdout,
        stderr,
        stderr_bytes,
        duration: started.elapsed(),
        refused: Vec::new(),
        share: Default::default(),
        answer_bytes: None,
        live: None,
        tier: None,
    })
}

/// The writing end of a pipe for the supervisor, whose one byte opens `warm`: read by a thread
/// of its own, which ends when the supervisor does.
fn began_pipe(warm: Arc<crate::engine::call::warm::Warm>) -> io::Result<std::os::fd::OwnedFd> {
    let (mut read, write) = io::pipe()?;
    thread::Builder::new().name("began".into()).spawn(move || {
        let mut byte = [0u8; 1];
        if matches!(read.read(&mut byte), Ok(1)) {
            warm.open();
        }
    })?;
    Ok(write.into())
}

/// The reading end of a pipe that holds `bytes` and is closed behind them.
fn secret_pipe(bytes: &[u8]) -> io::Result<std::os::fd::OwnedFd> {
    // A pipe holds 64 KiB before a write waits: what is written here is never waited on.
    if bytes.len() > 60 << 10 {
        return Err(io::Error::other("a judge's secrets past 60 KiB"));
    }
    let (read, mut write) = io::pipe()?;
    write.write_all(bytes)?;
    Ok(read.into())
}

/// A started harness: its process group, and the threads that feed and read it.
struct Running {
    child: Child,
    pgid: i32,
    feeder: Option<thread::JoinHandle<()>>,
    out: Captured<Transcript>,
    err: Captured<Capped>,
}

/// Starts the process and the threads it needs; with no thread to be had it is ended at once
/// (a shortage: the caller waits and tries again).
fn start(
    spec: &Spec,
    cmd: &mut Command,
    transcript: &Arc<Mutex<Transcript>>,
) -> io::Result<Running> {
    let mut child = cmd.spawn()?;
    let pgid = child.id() as i32;
    register(pgid);
    let wanted = spec.cancel.as_ref().is_none_or(|c| c.register(pgid));
    if stopped().is_some() || !wanted {
        signal_group(pgid, Signal::SIGKILL);
    }
    let stdin = spec.stdin.clone().zip(child.stdin.take());
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let threads = (|| {
        let feeder = match stdin {
            Some((bytes, mut pipe)) => Some(thread::Builder::new().spawn(move || {
                // A child that exits without reading gives EPIPE here: that is its choice.
                let _ = pipe.write_all(bytes.as_bytes());
            })?),
            None => None,
        };
        Ok((
            feeder,
            reader(stdout, Arc::clone(transcript), Some(pgid))?,
            reader(stderr, Arc::new(Mutex::new(Capped::new(spec.cap))), None)?,
        ))
    })();
    match threads {
        Ok((feeder, out, err)) => Ok(Running {
            child,
            pgid,
            feeder,
            out,
            err,
        }),
        Err(e) => {
            end_group(pgid, &mut child, true);
            unregister(pgid);
            if let Some(c) = &spec.cancel {
                c.unregister(pgid);
            }
            Err(e)
        }
    }
}

/// Waits for the child until the deadline; `(status, timed_out)`.
fn wait(child: &mut Child, timeout: Duration) -> (Option<ExitStatus>, bool) {
    let until = Instant::now() + timeout;
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => (Some(status), false),
        Ok(None) => (None, true),
        // Our own waiting failed (it needs a descriptor, and the table may be full): poll
        // instead, rather than kill a healthy judge.
        Err(_) => loop {
            if let Ok(Some(status)) = child.try_wait() {
                return (Some(status), false);
            }
            if Instant::now() >= until {
                return (None, true);
            }
            thread::sleep(Duration::from_millis(20));
        },
    }
}

/// Ends every process of the group: TERM, up to [`GRACE`] for the leader, then KILL.
fn end_group(pgid: i32, child: &mut Child, leader_alive: bool) {
    if !signal_group(pgid, Signal::SIGTERM) {
        return; // the group is already gone
    }
    if leader_alive {
        let _ = child.wait_timeout(GRACE);
    } else {
        // The leader is gone; give the rest of the group a moment to go on TERM.
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline && group_has_live_members(pgid) {
            thread::sleep(Duration::from_millis(10));
        }
    }
    signal_group(pgid, Signal::SIGKILL);
    if leader_alive {
        let _ = child.wait();
    }
    // A killed process is gone only once the kernel has torn it down: wait (briefly) until no
    // member runs, so that "no process left behind" holds when we return.
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline && group_has_live_members(pgid) {
        thread::sleep(Duration::from_millis(5));
    }
}

/// Whether any process of the group still runs (zombies do not count: they are dead and only
/// wait for whoever reaps them).
fn group_has_live_members(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return signal_group_probe(pgid);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            && let Some((state, group)) = stat_state_and_group(&stat)
            && group == pgid
            && state != 'Z'
            && state != 'X'
        {
            return true;
        }
    }
    false
}

fn signal_group_probe(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None).is_ok()
}

/// The state letter and the process group of a `/proc/PID/stat` line.
pub fn stat_state_and_group(stat: &str) -> Option<(char, i32)> {
    // The command name is in parentheses and may hold spaces: read after the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Where a pipe's bytes go as they are read.
trait PipeSink: Send + 'static {
    /// Takes the next bytes; false when the process must be stopped.
    fn take(&mut self, bytes: &[u8]) -> bool;
}

impl PipeSink for Transcript {
    fn take(&mut self, bytes: &[u8]) -> bool {
        self.feed(bytes)
    }
}

/// The first `cap` bytes of a pipe, and how many it carried.
#[derive(Default)]
struct Capped {
    kept: Vec<u8>,
    bytes: u64,
    cap: usize,
}

impl Capped {
    fn new(cap: usize) -> Capped {
        Capped {
            kept: Vec::new(),
            bytes: 0,
            cap,
        }
    }
}

impl PipeSink for Capped {
    fn take(&mut self, bytes: &[u8]) -> bool {
        self.bytes += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
        true
    }
}

/// A pipe being read on its own thread into its sink, and a signal when it ends.
struct Captured<S> {
    read: Arc<Mutex<S>>,
    done: Receiver<()>,
}

/// Reads a pipe on its own thread into `sink`. When the sink refuses more, the process group
/// `stop` (when given) is sent TERM, as at the deadline: its supervisor ends every process of
/// the judge; the pipe is read on to its end, counted and dropped.
fn reader<S: PipeSink>(
    mut pipe: impl Read + Send + 'static,
    sink: Arc<Mutex<S>>,
    stop: Option<i32>,
) -> io::Result<Captured<S>> {
    let (tx, done) = bounded(1);
    let shared = Arc::clone(&sink);
    thread::Builder::new().spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut stopped = false;
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let more = shared
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .take(&buf[..n]);
                    if !more
                        && !stopped
                        && let Some(pgid) = stop
                    {
                        stopped = true;
                        signal_group(pgid, Signal::SIGTERM);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = tx.send(());
    })?;
    Ok(Captured { read: sink, done })
}

/// Waits for a reader to end. A pipe still held open (by a process that escaped its
/// supervisor) is given up on after a while, with every byte read until then kept.
fn collect<S>(c: &Captured<S>) {
    let _ = c.done.recv_timeout(GRACE * 2);
}

/// What a sink holds now (a reader given up on keeps its own share, and stops at its pipe's end).
fn take<S: Default>(sink: Arc<Mutex<S>>) -> S {
    std::mem::take(&mut *sink.lock().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: f64) -> ProcessOutcome {
        sh_with(
            script,
            timeout,
            Transcript::new(None, Default::default(), u64::MAX),
        )
    }

    fn sh_with(script: &str, timeout: f64, stdout: Transcript) -> ProcessOutcome {
        run(
            &Spec {
                program: "sh".into(),
                args: vec!["-c".into(), script.into()],
                env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
                cwd: std::env::temp_dir(),
                stdin: None,
                timeout: Duration::from_secs_f64(timeout),
                cap: 1024,
                supervised: None,
                cancel: None,
                secrets: None,
                began: None,
            },
            stdout,
        )
        .unwrap()
    }

    #[test]
    fn stderr_is_capped_and_counted_and_stdout_read_whole() {
        let o = sh(
            "head -c 100000 /dev/zero; head -c 5000 /dev/zero >&2; exit 3",
            10.0,
        );
        assert_eq!(o.exit_code(), Some(3));
        assert_eq!(o.stdout.bytes, 100000);
        assert_eq!(o.stdout.text().len(), 100000);
        assert_eq!((o.stderr.len(), o.stderr_bytes), (1024, 5000));
        assert!(!o.timed_out);
    }

    /// An endless stream is stopped at its budget through its process group, not read to
    /// the deadline.
    #[test]
    fn stdout_past_its_budget_stops_the_group() {
        let t = Instant::now();
        let o = sh_with(
            "sleep 30 & yes",
            30.0,
            Transcript::new(None, Default::default(), 1 << 20),
        );
        assert!(o.stdout.over);
        assert_eq!(o.stdout.kept, 1 << 20);
        assert!(!o.timed_out);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn the_deadline_kills_the_group_and_a_grandchild_holding_the_pipe() {
        let t = Instant::now();
        let o = sh("sleep 30 & echo started; sleep 30", 0.3);
        assert!(o.timed_out);
        assert_eq!(o.stdout.text(), "started\n");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn a_grandchild_left_after_a_normal_exit_is_ended_too() {
        let t = Instant::now();
        let o = sh("sleep 30 & echo done", 10.0);
        assert_eq!(o.exit_code(), Some(0));
        assert_eq!(o.stdout.text(), "done\n");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn stdin_is_fed_then_closed() {
        let o = run(
            &Spec {
                program: "cat".into(),
                args: vec![],
                env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
                cwd: std::env::temp_dir(),
                stdin: Some(std::sync::Arc::new("hello".into())),
                timeout: Duration::from_secs(5),
                cap: 1024,
                supervised: None,
                cancel: None,
                secrets: None,
                began: None,
            },
            Transcript::of(b""),
        )
        .unwrap();
        assert_eq!(o.stdout.text(), "hello");
    }

    #[test]
    fn stat_lines_with_spaces_in_the_name_parse() {
        assert_eq!(
            stat_state_and_group("12 (a b) S 1 42 42 0"),
            Some(('S', 42))
        );
    }
}
