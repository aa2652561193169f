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
    let pid = unsafe { super::run::clone_namespaces() };
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
        return Err(why_not(
            &Refusal::Clone(errno.raw_os_error().unwrap_or(0)),
            &Settings::read(),
            &apparmor_fix(),
        ));
    }
    let mut status = 0;
    // SAFETY: waits for the child just made.
    unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    match libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        true => Ok(()),
        false => Err(why_not(
            &Refusal::Inside,
            &Settings::read(),
            &apparmor_fix(),
        )),
    }
}

/// Where the namespaces were refused.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    /// `clone` with the namespaces' flags failed with this errno.
    Clone(i32),
    /// They were made, and a mount in them was refused (what AppArmor's restriction does: the
    /// namespace is made, with no capability in it).
    Inside,
}

/// The kernel's settings that forbid user namespaces, as read (absent where the kernel has
/// none of that name).
#[derive(Clone, Debug, Default)]
struct Settings {
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10 and later).
    apparmor_restrict: Option<String>,
    /// `kernel.unprivileged_userns_clone` (Debian's and Ubuntu's older kernels).
    userns_clone: Option<String>,
    /// `user.max_user_namespaces`.
    max_user_namespaces: Option<String>,
}

impl Settings {
    fn read() -> Settings {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .ok()
        };
        Settings {
            apparmor_restrict: read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            userns_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
        }
    }
}

/// The one command that gives this binary's installation the AppArmor profile, from where
/// this binary is.
fn apparmor_fix() -> String {
    let exe = std::env::current_exe().ok();
    let folder = exe.as_deref().and_then(std::path::Path::parent);
    let script = folder
        .and_then(std::path::Path::parent)
        .map(|p| p.join("share/panel/apparmor"))
        .filter(|p| p.is_file());
    fix_command(folder, script.as_deref())
}

/// `scripts/apparmor` with the folder of panel's binaries (`--prefix P` for `P/bin`, else
/// `--bin DIR`), shell-quoted; `script` is its installed copy, when there is one.
fn fix_command(folder: Option<&std::path::Path>, script: Option<&std::path::Path>) -> String {
    use crate::engine::call::argv::shell_quote;
    let quote = |p: &std::path::Path| shell_quote(&p.to_string_lossy());
    let run = match script {
        Some(s) => quote(s),
        None => "scripts/apparmor".into(),
    };
    let whence = match folder {
        Some(f) if f.file_name().is_some_and(|n| n == "bin") => match f.parent() {
            Some(p) if !p.as_os_str().is_empty() => format!("--prefix {}", quote(p)),
            _ => format!("--bin {}", quote(f)),
        },
        Some(f) => format!("--bin {}", quote(f)),
        None => "--prefix DIR".into(),
    };
    let from = if script.is_some() {
        ""
    } else {
        " (from panel's source)"
    };
    format!("{run} {whence} --install{from}")
}

/// Why user namespaces are refused, and the one command that fixes it, from what the kernel
/// said and its settings; `fix` is the command that installs panel's AppArmor profile.
fn why_not(refusal: &Refusal, settings: &Settings, fix: &str) -> String {
    let errno = match refusal {
        Refusal::Clone(e) => *e,
        Refusal::Inside => libc::EPERM,
    };
    if settings.apparmor_restrict.as_deref() == Some("1") {
        return format!(
            "AppArmor refuses user namespaces to programs without a profile (kernel.apparmor_restrict_unprivileged_userns=1); fix: {fix}, or for every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
        );
    }
    if settings.userns_clone.as_deref() == Some("0") {
        return "kernel.unprivileged_userns_clone is 0 (sysctl -w kernel.unprivileged_userns_clone=1)".into();
    }
    if errno == libc::ENOSPC || settings.max_user_namespaces.as_deref() == Some("0") {
        return "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000)".into();
    }
    if errno == libc::EINVAL || errno == libc::ENOSYS {
        return "this kernel has no user namespaces (CONFIG_USER_NS)".into();
    }
    if let Refusal::Clone(libc::EPERM) = refusal {
        return "a seccomp filter refuses unshare and clone with CLONE_NEWUSER, as a container's default profile does; fix: run the container with --security-opt seccomp=unconfined (or a seccomp profile that allows them), or take Landlock alone with --sandbox landlock".into();
    }
    let what = match refusal {
        Refusal::Clone(_) => io::Error::from_raw_os_error(errno).to_string(),
        Refusal::Inside => "a mount in them was refused".into(),
    };
    format!(
        "the kernel refuses them ({what}; a security module or a container's profile may forbid them); --sandbox landlock takes Landlock alone"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const FIX: &str = "scripts/apparmor --prefix /p --install";

    fn settings(apparmor: Option<&str>, clone: Option<&str>, max: Option<&str>) -> Settings {
        Settings {
            apparmor_restrict: apparmor.map(String::from),
            userns_clone: clone.map(String::from),
            max_user_namespaces: max.map(String::from),
        }
    }

    /// Ubuntu 24.04 and GitHub's runners: the namespace is made, a mount in it is refused; or
    /// the clone itself is refused. Either way the profile's command, and the sysctl.
    #[test]
    fn apparmor_s_restriction_names_the_profile_and_the_sysctl() {
        for refusal in [
            Refusal::Inside,
            Refusal::Clone(libc::EPERM),
            Refusal::Clone(libc::EACCES),
        ] {
            let why = why_not(&refusal, &settings(Some("1"), None, Some("15000")), FIX);
            assert_eq!(
                why,
                "AppArmor refuses user namespaces to programs without a profile (kernel.apparmor_restrict_unprivileged_userns=1); fix: scripts/apparmor --prefix /p --install, or for every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
            );
            assert_eq!(why.lines().count(), 1);
        }
    }

    /// A container (Docker's default seccomp profile): EPERM from clone, with AppArmor's
    /// setting absent or 0.
    #[test]
    fn a_container_s_seccomp_profile_is_named_with_its_fix() {
        for apparmor in [None, Some("0")] {
            let why = why_not(
                &Refusal::Clone(libc::EPERM),
                &settings(apparmor, None, Some("15000")),
                FIX,
            );
            assert!(
                why.starts_with("a seccomp filter refuses unshare and clone with CLONE_NEWUSER")
                    && why.contains("--security-opt seccomp=unconfined")
                    && why.contains("--sandbox landlock")
                    && !why.contains("apparmor"),
                "{why}"
            );
        }
    }

    #[test]
    fn the_other_settings_and_errors_each_name_their_own_cause() {
        let cases = [
            (
                Refusal::Clone(libc::EPERM),
                settings(None, Some("0"), None),
                "kernel.unprivileged_userns_clone is 0 (sysctl -w kernel.unprivileged_userns_clone=1)",
            ),
            (
                Refusal::Clone(libc::ENOSPC),
                settings(None, None, Some("15000")),
                "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000)",
            ),
            (
                Refusal::Inside,
                settings(Some("0"), Some("1"), Some("0")),
                "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000)",
            ),
            (
                Refusal::Clone(libc::EINVAL),
                settings(None, None, None),
                "this kernel has no user namespaces (CONFIG_USER_NS)",
            ),
            (
                Refusal::Inside,
                settings(None, None, Some("15000")),
                "the kernel refuses them (a mount in them was refused; a security module or a container's profile may forbid them); --sandbox landlock takes Landlock alone",
            ),
        ];
        for (refusal, settings, want) in cases {
            assert_eq!(why_not(&refusal, &settings, FIX), want, "{refusal:?}");
        }
    }

    /// The command names this installation: its prefix for PREFIX/bin, else its folder, quoted
    /// for a shell; the installed script when there is one.
    #[test]
    fn the_fix_names_this_installation_quoted() {
        assert_eq!(
            fix_command(Some(Path::new("/home/u/.local/bin")), None),
            "scripts/apparmor --prefix /home/u/.local --install (from panel's source)"
        );
        assert_eq!(
            fix_command(
                Some(Path::new("/home/a b/.local/bin")),
                Some(Path::new("/home/a b/.local/share/panel/apparmor"))
            ),
            "'/home/a b/.local/share/panel/apparmor' --prefix '/home/a b/.local' --install"
        );
        assert_eq!(
            fix_command(Some(Path::new("/src/it's/target/release")), None),
            "scripts/apparmor --bin '/src/it'\\''s/target/release' --install (from panel's source)"
        );
        assert_eq!(
            fix_command(None, None),
            "scripts/apparmor --prefix DIR --install (from panel's source)"
        );
    }
}
