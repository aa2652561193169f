//! `scripts/apparmor`: the AppArmor profile that gives panel's binaries user namespaces where
//! Ubuntu 24.04 and GitHub's runners refuse them, naming the binaries' real paths; checked by
//! AppArmor's own parser (`apparmor_parser -Q -K` compiles without loading, so no kernel
//! AppArmor is needed), and refused in one line for a path it cannot name.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::{TempDir, root, stderr, stdout};

const GROUP: &str = "apparmor";
/// The binaries that launch judges: the ones that make namespaces.
const LAUNCHERS: [&str; 3] = ["panel-judge", "panel-merge", "panel-vote"];

fn apparmor(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(root().join("scripts/apparmor"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The parser: on PATH, or in /sbin where Debian puts it (not on a user's PATH).
fn parser() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain([PathBuf::from("/sbin"), PathBuf::from("/usr/sbin")])
        .map(|d| d.join("apparmor_parser"))
        .find(|p| p.is_file())
}

/// `apparmor_parser -Q -K` on `file`: Ok, or what it said.
fn parses(parser: &Path, file: &Path) -> Result<(), String> {
    let out = Command::new(parser)
        .args(["-Q", "-K"])
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    match out.status.success() {
        true => Ok(()),
        false => Err(format!("{}: {}", out.status, stderr(&out))),
    }
}

/// Issue: "Ship an AppArmor profile for panel's binaries at their installed paths
/// (`abi <abi/4.0>`, `userns,`)" — a profile for a prefix whose path has a space, reached
/// through a link, names the real path of each binary that launches judges, and AppArmor's
/// parser compiles it.
#[test]
fn the_profile_names_the_real_paths_and_apparmor_parses_it() {
    let tmp = TempDir::new("apparmor");
    let real = tmp.path().join("real prefix");
    std::fs::create_dir_all(real.join("bin")).unwrap();
    let linked = tmp.path().join("linked prefix");
    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let out = apparmor(&["--prefix".as_ref(), linked.as_os_str(), "--print".as_ref()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("abi <abi/4.0>,\ninclude <tunables/global>\n"),
        "{text}"
    );
    for t in LAUNCHERS {
        let head = format!(
            "\n\"{}\" flags=(unconfined) {{\n  userns,\n",
            real.join("bin").join(t).display()
        );
        assert!(text.contains(&head), "no {head:?} in {text}");
        assert!(
            text.contains(&format!("  include if exists <local/{t}>\n}}\n")),
            "{text}"
        );
    }
    for t in ["panel-tally", "pr-classify"] {
        assert!(!text.contains(t), "{t} launches no judge: {text}");
    }
    assert!(!text.contains("linked prefix"), "{text}");

    let Some(parser) = parser() else {
        crate::util::skipped(
            GROUP,
            "no apparmor_parser",
            "apparmor: the profile was not parsed: no apparmor_parser (apt-get install apparmor)",
        );
        return;
    };
    let file = tmp.path().join("panel");
    // A parser older than AppArmor 4 has neither abi/4.0 nor `userns`: it checks the rest (the
    // quoted paths, the flags, the includes) and the test says what it could not check.
    let text = if Path::new("/etc/apparmor.d/abi/4.0").is_file() {
        crate::util::ran(GROUP);
        text
    } else {
        crate::util::skipped(
            GROUP,
            "apparmor_parser predates AppArmor 4: userns not parsed",
            "apparmor: this apparmor_parser predates AppArmor 4: the profile was parsed without abi 4.0's userns rule",
        );
        text.replace("abi <abi/4.0>,", "abi <abi/3.0>,")
            .replace("  userns,\n", "")
    };
    std::fs::write(&file, &text).unwrap();
    if let Err(why) = parses(&parser, &file) {
        panic!("apparmor_parser refused the profile: {why}\n{text}");
    }
}

/// A path AppArmor cannot write in a quoted string (a quote, a newline), or that it would read
/// as a pattern, is refused: exit 2, one line, nothing printed.
#[test]
fn a_path_apparmor_cannot_name_is_refused_in_one_line() {
    let tmp = TempDir::new("apparmor-bad");
    for name in ["a\"b", "a\nb", "a*b", "a\\b"] {
        let prefix = tmp.path().join(name);
        let out = apparmor(&["--prefix".as_ref(), prefix.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{name:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{name:?}: {}", stdout(&out));
        let said = stderr(&out);
        assert_eq!(said.lines().count(), 1, "{name:?}: {said}");
        assert!(
            said.starts_with("apparmor: ") && said.contains("AppArmor cannot name a path"),
            "{said}"
        );
    }
    for args in [&["--prefix"][..], &["--prefix", ""], &["--nope"]] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let out = apparmor(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// Where AppArmor does not restrict user namespaces, installing is nothing to do: exit 0, no
/// sudo asked, nothing written.
#[test]
fn install_where_nothing_restricts_namespaces_does_nothing() {
    let restricted =
        std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
            .is_ok_and(|s| s.trim() == "1");
    if restricted {
        crate::util::skipped(
            GROUP,
            "AppArmor restricts user namespaces here",
            "apparmor: install's nothing-to-do case not checked: this machine restricts user namespaces",
        );
        return;
    }
    let tmp = TempDir::new("apparmor-none");
    let out = apparmor(&[
        "--prefix".as_ref(),
        tmp.path().as_os_str(),
        "--install".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).ends_with(": nothing to do\n"),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

/// Issue: "`--doctor` recognises the restriction … and prints the one command that fixes it":
/// in a container whose seccomp profile refuses user namespaces (made here by `util::Refused`),
/// the doctor names that profile and its fix, in one line.
#[test]
fn the_doctor_names_a_container_s_seccomp_profile_and_its_fix() {
    let setting = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .ok()
    };
    // A kernel setting that forbids them is named before the filter (its fix comes first).
    let said_first = [
        (
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            "1",
        ),
        ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
        ("/proc/sys/user/max_user_namespaces", "0"),
    ]
    .into_iter()
    .find(|(p, v)| setting(p).as_deref() == Some(*v));
    if let Some((p, v)) = said_first {
        crate::util::skipped(
            GROUP,
            "a kernel setting forbids user namespaces",
            &format!("apparmor: the doctor's container case not checked: {p} is {v} here"),
        );
        return;
    }
    let tmp = TempDir::new("apparmor-doctor");
    let mut cmd = Command::new(crate::util::bin("panel-judge"));
    cmd.args(["--doctor", "--json"])
        .env("HOME", tmp.path())
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null());
    crate::util::Refused::UserNamespaces.on(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let walls: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|r: &serde_json::Value| r["type"] == "sandbox-status")
        .unwrap_or_else(|| panic!("no sandbox-status in {text}"));
    assert_eq!(walls["jail"], false, "{walls}");
    let note = walls["jailNote"].as_str().unwrap();
    assert!(
        note.starts_with("a seccomp filter refuses unshare and clone with CLONE_NEWUSER")
            && note.contains("--security-opt seccomp=unconfined")
            && note.contains("--sandbox landlock")
            && !note.contains('\n'),
        "{note}"
    );
}
