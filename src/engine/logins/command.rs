//! The login commands the broker runs outside the walls (`gh auth token`, `security …`): found
//! on the user's PATH, given no terminal, their input written whole, their output read to a
//! bound, their standard error never read (it may echo what they were given), and stopped with
//! everything they started when they outlast [`COMMAND_TIMEOUT`].

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use wait_timeout::ChildExt;

use super::{COMMAND_TIMEOUT, User};

/// What a command printed, and how it ended.
pub struct Ran {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Its standard output, at most the bound asked for.
    pub out: Vec<u8>,
}

/// Runs `program` with `args` in the user's HOME, `input` on its standard
/// input; says `what` it was in an error (never its input or output). More than `cap` bytes
/// of output, or no end within [`COMMAND_TIMEOUT`], is an error, the command stopped.
pub fn run(
    program: &Path,
    args: &[&str],
    input: &[u8],
    user: &User,
    cap: usize,
    what: &str,
) -> Result<Ran> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("HOME", user.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // Its own process group: what it starts is stopped with it.
        .process_group(0);
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow!("{what}: cannot run it: {e}"))?;
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let stop = || {
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    };
    let (mut stdin, stdout) = (child.stdin.take(), child.stdout.take());
    let input = input.to_vec();
    // Written and read beside the wait: a command that reads nothing, or prints much, never
    // holds the broker past its time.
    std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(o) = stdout {
            let _ = o.take(cap as u64 + 1).read_to_end(&mut out);
        }
        let _ = tx.send(out);
    });
    let start = Instant::now();
    let Some(status) = child.wait_timeout(COMMAND_TIMEOUT)? else {
        stop();
        let _ = child.wait();
        bail!("{what} gave no answer in {} s", COMMAND_TIMEOUT.as_secs());
    };
    let left = COMMAND_TIMEOUT.saturating_sub(start.elapsed());
    let out = match rx.recv_timeout(left) {
        Ok(out) => out,
        // What it left running holds its output open: stopped with it.
        Err(_) => {
            stop();
            rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default()
        }
    };
    if out.len() > cap {
        bail!("{what} printed more than {} KiB", cap >> 10);
    }
    Ok(Ran {
        code: status.code(),
        out,
    })
}

/// A login command's token: its first line, run with the user's environment and no input,
/// within [`COMMAND_TIMEOUT`].
pub fn token(command: &[String], user: &User) -> Result<String> {
    let (program, args) = command.split_first().ok_or_else(|| anyhow!("no command"))?;
    let path = (user.env)("PATH").unwrap_or_default();
    let program = crate::engine::harness::find_on_path(program, &path)
        .ok_or_else(|| anyhow!("{program} not found on PATH"))?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let said = command.join(" ");
    let ran = run(&program, &args, b"", user, 64 << 10, &said)?;
    let out = String::from_utf8_lossy(&ran.out);
    let token = out.lines().next().unwrap_or_default().trim().to_string();
    if ran.code != Some(0) || token.is_empty() {
        bail!("{said} gave no token");
    }
    Ok(token)
}
