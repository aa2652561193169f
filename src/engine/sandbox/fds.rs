//! Descriptors across an `exec`: those a caller left open reach no program we run, and those
//! the tool hands a judge's supervisor (its secrets, its `began` pipe) reach it alone.

use std::io;
use std::os::fd::{FromRawFd, RawFd};

/// Every descriptor above 2 is closed when the process next runs a program: a descriptor the
/// caller left open (`exec 7<secret; panel-judge …`) reaches no judge.
pub fn close_inherited_on_exec() -> std::io::Result<()> {
    // SAFETY: CLOSE_RANGE_CLOEXEC only sets a flag; no descriptor anything holds is closed.
    #[cfg(target_os = "linux")]
    if unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) } == 0 {
        return Ok(());
    }
    // Before Linux 5.11, and on macOS: one by one.
    for entry in std::fs::read_dir("/dev/fd")?.flatten() {
        if let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
            && fd > 2
        {
            // SAFETY: F_SETFD on a number that may be stale only sets or fails.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
    Ok(())
}

/// The descriptor its tool handed this process at `fd` (a pipe's end), as a file of its own;
/// `None` when there is none open there.
pub fn adopt(fd: RawFd) -> Option<std::fs::File> {
    // F_GETFD tells an open descriptor from a number that names none.
    // SAFETY: fcntl on a number only reads its flags.
    if fd < 3 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return None;
    }
    // SAFETY: the tool gave this process the descriptor for this alone; owned here once.
    Some(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// `fd` is kept open across the `exec` of `cmd` (the confine stage's end of the socket).
pub fn inherited(cmd: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, fcntl alone.
    unsafe {
        cmd.pre_exec(move || {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            match flags >= 0 && libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) == 0 {
                true => Ok(()),
                false => Err(io::Error::last_os_error()),
            }
        })
    };
}
