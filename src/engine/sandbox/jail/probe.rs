//! Whether this kernel lets this caller make a jail, asked once; else why not, and the fix.

use std::io;

/// Whether this kernel lets this caller make a jail; else why not and how to allow it. Asked
/// once, by a child that makes the namespaces and a mount in them and exits at once.
pub fn available() -> &'static Result<(), String> {
    static AVAILABLE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    AVAILABLE.get_or_init(probe)
}

fn probe() -> Result<(), String> {
    // SAFETY: a fork whose child makes only system calls and `_exit`s (this process may have
    // threads: the child touches nothing they may hold).
    let pid = unsafe { super::clone_namespaces() };
    if pid == 0 {
        let (tmpfs, tmp) = (c"tmpfs", c"/tmp");
        // SAFETY: async-signal-safe system calls, then _exit.
        unsafe {
            let root = c"/";
            let r = libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            );
            let r = if r == 0 {
                libc::mount(
                    tmpfs.as_ptr(),
                    tmp.as_ptr(),
                    tmpfs.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    std::ptr::null(),
                )
            } else {
                r
            };
            libc::_exit(if r == 0 { 0 } else { 1 })
        }
    }
    let errno = io::Error::last_os_error();
    if pid < 0 {
        return Err(why_not(errno.raw_os_error().unwrap_or(0)));
    }
    let mut status = 0;
    // SAFETY: waits for the child just made.
    unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    match libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        true => Ok(()),
        false => Err(why_not(libc::EPERM)),
    }
}

/// Why user namespaces are refused, and the fix, from what the kernel says.
fn why_not(errno: i32) -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .ok()
    };
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return "AppArmor restricts unprivileged user namespaces (sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile that allows userns for panel's binaries)".into();
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return "kernel.unprivileged_userns_clone is 0 (sysctl -w kernel.unprivileged_userns_clone=1)".into();
    }
    if errno == libc::ENOSPC || read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000)".into();
    }
    if errno == libc::EINVAL || errno == libc::ENOSYS {
        return "this kernel has no user namespaces (CONFIG_USER_NS)".into();
    }
    format!(
        "the kernel refuses them ({}; a container's seccomp profile or a missing capability may forbid unshare)",
        io::Error::from_raw_os_error(errno)
    )
}
