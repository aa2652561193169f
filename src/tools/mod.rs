//! The one place a tool turns its result into an exit status.

use std::ffi::OsString;
use std::io;
use std::process::ExitCode;

use clap::Parser;

pub mod about;
pub mod completions;
pub mod docs;
pub mod estimate;
pub mod judge;
pub mod launch_args;
pub mod merge;
pub mod pr_classify;
#[cfg(feature = "schemas")]
pub mod schemas;
pub mod scripts;
#[cfg(feature = "schemas")]
pub mod suite_page;
pub mod tally;
pub mod vote;

use crate::records::exit_status::USAGE;

/// Parses the arguments with `command` (the tool's clap definition), runs the tool and maps
/// its result to an exit status: a broken pipe is a quiet 0, any other error one line and 2.
pub fn main<A: Parser>(
    command: clap::Command,
    tool: fn(A) -> anyhow::Result<ExitCode>,
) -> ExitCode {
    main_from(command, tool, std::env::args_os().collect())
}

/// The stage a judge's launch runs this binary as (its supervisor, its confine stage), when
/// the first argument names one: its exit status. Each binary asks this first.
pub fn stage() -> Option<ExitCode> {
    let code = crate::engine::sandbox::stage_entry()?;
    Some(ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX)))
}

/// [`main`] with explicit arguments (for tests).
pub fn main_from<A: Parser>(
    command: clap::Command,
    tool: fn(A) -> anyhow::Result<ExitCode>,
    argv: Vec<OsString>,
) -> ExitCode {
    crate::engine::sandbox::harden_tool();
    let name = command.get_name().to_string();
    // Rust's stdout drops writes to a closed fd 1 in silence, and the next file we opened would
    // become fd 1: every record would be lost, or written into that file.
    if !stdout_is_open() {
        eprintln!(
            "{name}: standard output is closed: nothing could be written (run it with `>file` or \
                `| …`)"
        );
        return ExitCode::from(USAGE);
    }
    let args = match command
        .try_get_matches_from(argv)
        .and_then(|m| A::from_arg_matches(&m))
    {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    // A panic anywhere (a worker thread, a failure to start one) ends every judge, keeps what
    // was written, and is one line and exit 2.
    let tool_name = name.clone();
    std::panic::set_hook(Box::new(move |info| {
        // Every judge ends at once; the first panic is the one line said.
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        crate::engine::lifecycle::fail();
        if SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!(
            "{tool_name}: internal error: {}",
            crate::records::printable::one_line(&what)
        );
    }));
    let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool(args))) {
        Ok(result) => result,
        Err(_) => return ExitCode::from(USAGE),
    };
    finish(&name, result)
}

/// Folds what the run left beside the tool's result into the one exit status: a failure a
/// worker or the panic hook reported, a signal that stopped the run, a run folder that could
/// not keep everything. These three are process-wide, not values passed back, because a signal
/// handler, a panic hook and a judge's writer deep in the launch are where they are learned,
/// and none of those can hand a value to the tool's caller.
fn finish(name: &str, result: anyhow::Result<ExitCode>) -> ExitCode {
    if let Some(why) = crate::engine::lifecycle::failure() {
        eprintln!("{name}: {}", crate::records::printable::one_line(&why));
        return ExitCode::from(USAGE);
    }
    match result {
        // A signal that stopped the run decides the status, whatever was decided before it.
        Ok(code) => match crate::engine::run_folder::loss() {
            Some(loss) => run_folder_incomplete(name, &loss, stopped_or(code)),
            None => stopped_or(code),
        },
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!(
                "{name}: {}",
                crate::records::printable::one_line(&format!("{err:#}"))
            );
            ExitCode::from(USAGE)
        }
    }
}

/// Whether file descriptor 1 is open. Rust's runtime puts `/dev/null` in place of a closed fd
/// 1 before `main`, opened read-write; a shell's `>/dev/null` opens it write-only, which stays
/// allowed (the run folder keeps the records).
fn stdout_is_open() -> bool {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let out = io::stdout();
    let stat = out.as_fd().try_clone_to_owned().map(std::fs::File::from);
    let Ok(stat) = stat.and_then(|f| f.metadata()) else {
        return false;
    };
    let null = std::fs::metadata("/dev/null").map(|m| m.rdev());
    let is_null = null.is_ok_and(|rdev| rdev == stat.rdev() && stat.mode() & 0o170000 == 0o020000);
    let read_write = fcntl(out.as_fd(), FcntlArg::F_GETFL)
        .is_ok_and(|fl| OFlag::from_bits_truncate(fl) & OFlag::O_ACCMODE == OFlag::O_RDWR);
    !(is_null && read_write)
}

/// A run stopped by a signal exits with 128 + the signal; otherwise with `code`.
fn stopped_or(code: ExitCode) -> ExitCode {
    crate::engine::lifecycle::exit_status().map_or(code, ExitCode::from)
}

/// The work is done but the run folder could not keep all of it (a full disk): say so, and
/// never exit green. A decision (1, 3) or a signal's status stands; a closed pipe stays quiet.
fn run_folder_incomplete(name: &str, loss: &str, code: ExitCode) -> ExitCode {
    use crate::engine::lifecycle;
    let piped = lifecycle::stopped() == Some(lifecycle::SIGPIPE);
    let whole = if piped {
        ""
    } else {
        "; what went to standard output is whole"
    };
    eprintln!(
        "{name}: the run folder is incomplete: {}{whole}",
        crate::records::printable::one_line(loss)
    );
    if code == ExitCode::SUCCESS && !piped {
        ExitCode::from(USAGE)
    } else {
        code
    }
}

/// True when a broken pipe anywhere in the error's chain caused it, a serde_json writer's too
/// (it wraps the pipe's error, and its chain skips it).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    let pipe = Some(io::ErrorKind::BrokenPipe);
    err.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().map(io::Error::kind) == pipe
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == pipe
    })
}
