//! The walls on macOS: a judge's [`Policy`] as a Seatbelt profile (SBPL), which its supervisor
//! runs the harness under with `/usr/bin/sandbox-exec -p PROFILE -- PROGRAM …`. The profile is
//! made here from the same [`super::grants::Reach`] Landlock holds on Linux, by [`profile`],
//! which reads nothing (golden files of it for every built-in row and mode are under
//! `golden/seatbelt/`).
//!
//! What it says: nothing is allowed but what it names. The judge reads and runs the system's
//! programs and libraries and its CLI's installation; reads the granted folders; reads and
//! writes its private folder and `--sandbox-write`'s; connects by TCP to its proxy's port (and
//! its loopback endpoints') on the loopback, and to nothing else; listens nowhere; signals and
//! looks at the processes of its own sandbox alone; reaches none of the system's services that
//! hold the user's secrets or start programs outside (the Keychain's `securityd`, the
//! pasteboard, Launch Services, preferences). The metadata of any file (`stat`) it may read,
//! as Landlock lets it on Linux: its contents and its folder's listing it may not.
//!
//! This text is type-checked and golden-tested on Linux, and run on a Mac only by
//! `scripts/macos-selftest`.

// On Linux only its tests (the golden profiles) use it.
#![cfg_attr(target_os = "linux", allow(dead_code))]

use std::path::{Path, PathBuf};

use super::{Policy, Setting, Walls};

/// The program that puts a profile on a process and runs another in it.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The system's services a judge may ask: the user database (`getpwuid`), notifications,
/// logging, the temporary folder's name, and the verification of certificates (a CLI that
/// trusts through the system asks `trustd`, which holds no secret). Never `securityd` (the
/// Keychain), the pasteboard, Launch Services, `cfprefsd` (other programs' preferences) or
/// FSEvents (every file's name as it changes).
const SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.notification_center",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.bsd.dirhelper",
    "com.apple.trustd.agent",
];
/// The facts of the machine a runtime asks for (its processors, its memory, the system's
/// version), none of another process.
const SYSCTLS: &[&str] = &[
    "hw.",
    "machdep.cpu.",
    "kern.ostype",
    "kern.osrelease",
    "kern.osversion",
    "kern.osproductversion",
    "kern.version",
    "kern.hostname",
    "kern.argmax",
    "kern.maxfilesperproc",
    "kern.maxproc",
    "kern.usrstack64",
    "kern.secure_kernel",
    "sysctl.proc_cputype",
    "vm.loadavg",
];

/// What a judge's walls cannot hold on macOS, said by `--doctor` (docs/design.md §8).
pub const NOT_HELD: &[&str] = &[
    "memory and processes: no cgroups, and macOS's RLIMIT_DATA and RLIMIT_NPROC bound no one judge",
    "a process that leaves the judge's session and loses its parent within a second of its start outlives the judge (still walled in)",
    "any file's metadata (stat) can be read, as under Landlock; never its contents or its folder's listing",
    "a loopback endpoint is reached directly: a credential for one is not swapped in (the judge's placeholder fails there)",
];

/// Whether this machine can put a profile on a process.
pub fn available() -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(SANDBOX_EXEC) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => Ok(()),
        Ok(_) => Err(format!("{SANDBOX_EXEC} is not a program")),
        Err(e) => Err(format!("{SANDBOX_EXEC}: {e}")),
    }
}

/// The walls `mode` gets where Seatbelt is `seatbelt` (this machine's, or why not), for a
/// caller that is `root` or not.
pub fn walls_on(mode: Setting, seatbelt: &Result<(), String>, root: bool) -> anyhow::Result<Walls> {
    let said = match (mode, seatbelt) {
        (Setting::Off, _) => return Ok(Walls::off()),
        (Setting::Landlock, _) => anyhow::bail!(
            "--sandbox landlock: macOS has no Landlock (its walls are Seatbelt's: --sandbox auto); nothing was launched"
        ),
        (Setting::Required, Err(why)) => {
            anyhow::bail!("--sandbox required: no Seatbelt: {why}; nothing was launched")
        }
        (_, Ok(())) => "seatbelt".to_string(),
        (Setting::Auto, Err(why)) => format!("unavailable: no Seatbelt: {why}"),
    };
    let seatbelt = seatbelt.is_ok();
    Ok(Walls {
        said,
        landlock: None,
        jail: false,
        seatbelt,
        ids: (root && seatbelt).then_some((NOBODY, NOBODY)),
    })
}

/// macOS's `nobody` and `nogroup` (-2): a root caller's judges run as them.
pub const NOBODY: u32 = 4294967294;

/// The profile of a judge with `policy`, its proxy listening on the loopback at `proxy`;
/// `real` gives a path's real path where it differs (`/tmp` is `/private/tmp`): Seatbelt
/// matches the real one. `None` when the policy confines nothing. Refused: a granted path
/// that is not text, or holds a control character (no profile can name it for sure).
pub fn profile(
    policy: &Policy,
    proxy: Option<u16>,
    real: &dyn Fn(&Path) -> Option<PathBuf>,
) -> Result<Option<String>, String> {
    let Some(rules) = &policy.confine else {
        return Ok(None);
    };
    let paths = |list: &[PathBuf]| -> Result<String, String> {
        let mut out = Vec::new();
        for p in list {
            for p in std::iter::once(p.clone()).chain(real(p).filter(|r| r != p)) {
                let filter = format!("(subpath {})", quoted(&p)?);
                if !out.contains(&filter) {
                    out.push(filter);
                }
            }
        }
        Ok(out.join("\n  "))
    };
    let mut text = String::from(HEAD);
    text.push_str(&services());
    let section = |text: &mut String, why: &str, rule: &str, list: String| {
        if !list.is_empty() {
            text.push_str(&format!("\n; {why}\n({rule}\n  {list})\n"));
        }
    };
    section(
        &mut text,
        "code the loader maps: the system's, its CLI's",
        "allow file-map-executable",
        paths(&rules.rx)?,
    );
    section(
        &mut text,
        "read and run: the system's programs and libraries, its CLI's installation",
        "allow file-read* process-exec",
        paths(&rules.rx)?,
    );
    section(
        &mut text,
        "read: the system's files, a reviewer's checkout",
        "allow file-read*",
        paths(&rules.ro)?,
    );
    section(
        &mut text,
        "read and write: its private folder, --sandbox-write's",
        "allow file-read* file-write*",
        paths(&rules.rw)?,
    );
    let devices: Vec<String> = rules
        .devices
        .iter()
        .map(|d| quoted(d).map(|q| format!("(literal {q})")))
        .collect::<Result<_, _>>()?;
    section(
        &mut text,
        "devices",
        "allow file-read* file-write-data",
        devices.join("\n  "),
    );
    let mut ports: Vec<u16> = rules.tcp.iter().copied().chain(proxy).collect();
    ports.sort_unstable();
    ports.dedup();
    let remote: Vec<String> = ports
        .iter()
        .map(|p| format!("(remote tcp \"localhost:{p}\")"))
        .collect();
    section(
        &mut text,
        "out: its proxy on the loopback, and its loopback endpoints; nothing else",
        "allow network-outbound",
        remote.join("\n  "),
    );
    Ok(Some(text))
}

/// What every profile says first: deny what is not named; a process of the sandbox may start
/// others (which inherit it), signal and look at those of its own sandbox, read any file's
/// metadata, ask the services and facts a runtime needs.
const HEAD: &str = concat!(
    "(version 1)\n",
    "(deny default)\n",
    "\n; its own processes\n",
    "(allow process-fork)\n",
    "(allow signal (target same-sandbox))\n",
    "(allow process-info* (target same-sandbox))\n",
    "\n; a file's metadata (stat), as Landlock allows it: never its contents\n",
    "(allow file-read-metadata)\n",
    "(allow file-read-data (literal \"/\"))\n",
    "\n; pseudo-terminals and POSIX semaphores, for the commands a CLI runs\n",
    "(allow pseudo-tty)\n",
    "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\") (regex #\"^/dev/ttys[0-9]+$\"))\n",
    "(allow file-read* file-write-data (subpath \"/dev/fd\"))\n",
    "(allow ipc-posix-sem)\n",
    "(allow mach-host*)\n",
);

/// The sysctls and services a runtime asks for, in SBPL.
fn services() -> String {
    let names: Vec<String> = SYSCTLS
        .iter()
        .map(|s| match s.ends_with('.') {
            true => format!("(sysctl-name-prefix \"{s}\")"),
            false => format!("(sysctl-name \"{s}\")"),
        })
        .collect();
    let global: Vec<String> = SERVICES
        .iter()
        .map(|s| format!("(global-name \"{s}\")"))
        .collect();
    format!(
        "\n; the machine's facts, none of another process\n(allow sysctl-read\n  {})\n\n; the services a runtime asks\n(allow mach-lookup\n  {})\n",
        names.join("\n  "),
        global.join("\n  ")
    )
}

/// `path` as an SBPL string: quoted, its `\` and `"` escaped; refused when it is not text or
/// holds a control character.
fn quoted(path: &Path) -> Result<String, String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("{}: not text, which Seatbelt cannot name", path.display()))?;
    if text.chars().any(char::is_control) {
        return Err(format!(
            "{}: holds a control character, which Seatbelt cannot name",
            text.escape_debug()
        ));
    }
    Ok(format!(
        "\"{}\"",
        text.replace('\\', "\\\\").replace('"', "\\\"")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sandbox::grants::Reach;

    /// Issue 48: the walls each mode gets on a Mac, or why it launches nothing.
    #[test]
    fn each_mode_gets_seatbelt_or_says_why_not() {
        let here: Result<(), String> = Ok(());
        let gone: Result<(), String> = Err(format!("{SANDBOX_EXEC}: No such file"));
        let said = |m, s: &Result<(), String>| {
            walls_on(m, s, false)
                .map(|w| (w.said.clone(), w.seatbelt, w.confined()))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            said(Setting::Auto, &here),
            Ok(("seatbelt".into(), true, true))
        );
        assert_eq!(
            said(Setting::Required, &here),
            Ok(("seatbelt".into(), true, true))
        );
        assert_eq!(said(Setting::Off, &here), Ok(("off".into(), false, false)));
        assert_eq!(
            said(Setting::Auto, &gone),
            Ok((
                "unavailable: no Seatbelt: /usr/bin/sandbox-exec: No such file".into(),
                false,
                false
            ))
        );
        assert_eq!(
            said(Setting::Required, &gone),
            Err("--sandbox required: no Seatbelt: /usr/bin/sandbox-exec: No such file; nothing was launched".into())
        );
        assert!(
            said(Setting::Landlock, &here)
                .unwrap_err()
                .contains("macOS has no Landlock")
        );
        // A root caller's walled judges run as nobody; unwalled, as they are.
        let ids = |m, s: &Result<(), String>| walls_on(m, s, true).unwrap().ids;
        assert_eq!(ids(Setting::Auto, &here), Some((NOBODY, NOBODY)));
        assert_eq!(ids(Setting::Off, &here), None);
        assert_eq!(ids(Setting::Auto, &gone), None);
    }

    /// SBPL's forms, read as Seatbelt reads them: strings with `\` escapes, `#"…"` regexes.
    #[derive(Debug, PartialEq)]
    enum Form {
        Atom(String),
        Text(String),
        List(Vec<Form>),
    }

    fn read(text: &str) -> Vec<Form> {
        fn form(c: &mut std::iter::Peekable<std::str::Chars>) -> Option<Form> {
            loop {
                match c.peek()? {
                    ';' => while c.next().is_some_and(|ch| ch != '\n') {},
                    ch if ch.is_whitespace() => drop(c.next()),
                    _ => break,
                }
            }
            match c.next()? {
                '(' => {
                    let mut list = Vec::new();
                    loop {
                        while c.peek().is_some_and(|ch| ch.is_whitespace()) {
                            c.next();
                        }
                        if c.peek() == Some(&')') {
                            c.next();
                            return Some(Form::List(list));
                        }
                        list.push(form(c).expect("a list closed"));
                    }
                }
                '"' => {
                    let mut s = String::new();
                    while let Some(ch) = c.next() {
                        match ch {
                            '\\' => s.push(c.next().expect("an escape")),
                            '"' => return Some(Form::Text(s)),
                            ch => s.push(ch),
                        }
                    }
                    panic!("a string closed")
                }
                ch => {
                    let mut s = String::from(ch);
                    if ch == '#' && c.peek() == Some(&'"') {
                        return match form(c) {
                            Some(Form::Text(t)) => Some(Form::Text(format!("#{t}"))),
                            other => panic!("a regex: {other:?}"),
                        };
                    }
                    while c
                        .peek()
                        .is_some_and(|ch| !ch.is_whitespace() && *ch != '(' && *ch != ')')
                    {
                        s.push(c.next().unwrap());
                    }
                    Some(Form::Atom(s))
                }
            }
        }
        let mut c = text.chars().peekable();
        std::iter::from_fn(|| form(&mut c)).collect()
    }

    fn rules(rw: &str) -> Policy {
        Policy {
            confine: Some(Reach {
                rx: vec!["/opt/cli".into()],
                ro: vec!["/srv/data".into()],
                rw: vec![PathBuf::from(rw)],
                devices: vec!["/dev/null".into()],
                tcp: vec![11434],
                ..Reach::default()
            }),
            ..Policy::default()
        }
    }

    /// DESIGN §8: a granted path is the user's, or a row's, or a checkout's: a name that holds
    /// SBPL (`") (allow default) ("`) stays one string of one rule, and a control character
    /// is refused, never written.
    #[test]
    fn a_path_that_holds_sbpl_stays_a_string() {
        let evil = r#"/home/u/x") (allow default) (allow file-write* (subpath "/"#;
        let text = profile(&rules(evil), Some(3128), &|_| None)
            .unwrap()
            .unwrap();
        let forms = read(&text);
        let head = |f: &Form| match f {
            Form::List(l) => match (l.first(), l.get(1)) {
                (Some(Form::Atom(a)), Some(Form::Atom(b))) => format!("{a} {b}"),
                (Some(Form::Atom(a)), _) => a.clone(),
                _ => panic!("{f:?}"),
            },
            _ => panic!("a top-level atom: {f:?}"),
        };
        let heads: Vec<String> = forms.iter().map(head).collect();
        assert_eq!(heads.iter().filter(|h| *h == "deny default").count(), 1);
        assert!(!heads.iter().any(|h| h == "allow default"), "{text}");
        let atom = |a: &str| Form::Atom(a.into());
        let writes: Vec<&Form> = forms
            .iter()
            .filter(|f| {
                matches!(f, Form::List(l) if l.get(2) == Some(&atom("file-write*"))
                    && matches!(l.get(3), Some(Form::List(p)) if p.first() == Some(&atom("subpath"))))
            })
            .collect();
        assert_eq!(writes.len(), 1, "{text}");
        let Form::List(rule) = writes[0] else {
            unreachable!()
        };
        assert_eq!(rule.len(), 4, "one path, one filter: {rule:?}");
        assert_eq!(
            rule[3],
            Form::List(vec![Form::Atom("subpath".into()), Form::Text(evil.into())])
        );
        for bad in ["/home/u/a\nb", "/home/u/\u{1b}[2J", "/tmp/\u{7f}"] {
            let e = profile(&rules(bad), Some(3128), &|_| None).unwrap_err();
            assert!(e.contains("control character"), "{e}");
        }
        use std::os::unix::ffi::OsStrExt;
        let not_text = PathBuf::from(std::ffi::OsStr::from_bytes(b"/home/u/\xff"));
        let mut p = rules("/w");
        p.confine.as_mut().unwrap().rw = vec![not_text];
        assert!(
            profile(&p, None, &|_| None)
                .unwrap_err()
                .contains("not text")
        );
    }

    /// Seatbelt matches a file's real path: a granted path behind a link (`/tmp` is
    /// `/private/tmp` on a Mac) is named both ways; the proxy's port joins the judge's own.
    #[test]
    fn a_grant_is_named_at_its_real_path_too_and_the_proxy_is_reached() {
        let real = |p: &Path| {
            p.strip_prefix("/tmp")
                .ok()
                .map(|r| Path::new("/private/tmp").join(r))
        };
        let text = profile(&rules("/tmp/panel/j.1"), Some(3128), &real)
            .unwrap()
            .unwrap();
        assert!(
            text.contains("(subpath \"/tmp/panel/j.1\")\n  (subpath \"/private/tmp/panel/j.1\")")
        );
        assert!(
            text.contains("(remote tcp \"localhost:3128\")\n  (remote tcp \"localhost:11434\")")
        );
        assert!(!text.contains("network-bind") && !text.contains("network-inbound"));
        assert!(!text.contains("securityd") && !text.contains("SecurityServer"));
        assert_eq!(profile(&Policy::default(), Some(3128), &real), Ok(None));
    }
}
