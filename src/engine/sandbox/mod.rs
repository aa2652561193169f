//! How a judge's process runs: under a small supervisor (our own binary, run again) that sees
//! to it that nothing the judge starts outlives the tool, however the tool ends; and, on a
//! kernel that can, in a world of its own (the second wall, docs/design.md §8).
//!
//! ```text
//! tool ── supervisor (`__panel-supervise`) ─┬─ jail: PID 1 (ours) ── harness     (--sandbox auto)
//!          └ egress proxy (threads)         └─ confine stage ─exec─ harness      (Landlock alone)
//! ```
//!
//! The supervisor ([`supervise`]) is a child subreaper that watches the tool through a pidfd.
//! It ends every descendant (TERM, a grace, KILL) when the harness exits, when the tool is gone
//! (even SIGKILLed), or when the tool's TERM reaches it, and then mirrors the harness's exit.
//! It makes the judge's [`jail`] (namespaces, a read-only root of only what the harness needs,
//! no route out but its [`egress`] proxy, which it runs); inside, or in the confine stage
//! ([`confine`]) where the kernel forbids namespaces, the harness takes the limits of its
//! [`share`] (memory, processes, disk, files, inotify, CPU, a keyring of its own, in its own
//! [`cgroup`] where the run has them) and puts on the [`grants`] of what it may touch
//! ([`walls`]: Landlock, and seccomp for what Landlock cannot yet see).
//! What it puts around a judge is one value, its [`Policy`], made by [`policy`] from the seat's
//! facts.

pub mod authority;
pub mod cgroup;
#[cfg(target_os = "linux")]
pub mod confine;
pub mod egress;
pub mod endpoint;
#[allow(unsafe_code)]
pub mod fds;
pub mod grants;
#[allow(unsafe_code)]
pub mod jail;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod keeper;
pub mod policy;
pub mod refused;
#[allow(unsafe_code)]
pub mod seatbelt;
pub mod share;
#[allow(unsafe_code)]
pub mod supervise;
pub mod swap;
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub mod walls;

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::records::exit_status;

/// The hidden first argument that runs a binary as a judge's supervisor.
pub const SUPERVISE: &str = "__panel-supervise";
/// The hidden first argument of the stage that becomes the harness.
#[cfg(target_os = "linux")]
pub const CONFINE: &str = "__panel-confine";

/// What a judge's supervisor needs, carried on its command line as JSON (paths, ids, hosts
/// and ports only: a command line is readable by every user of the machine, so never a secret).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Policy {
    /// How long descendants have between TERM and KILL.
    pub grace_ms: u64,
    /// The judge's private folder, removed by the supervisor when the tool is gone.
    #[serde(default)]
    pub private: Option<PathBuf>,
    /// What the judge may touch, under Landlock (Linux) or its Seatbelt profile (macOS);
    /// `None`: no such wall.
    #[serde(default)]
    pub confine: Option<grants::Reach>,
    /// Its world, where the kernel can make one; `None`: none.
    #[serde(default)]
    pub jail: Option<jail::Jail>,
    /// Its one door out, when it is confined at all.
    #[serde(default)]
    pub egress: Option<egress::Egress>,
    /// The ids it runs as when they are not the caller's (a root caller's judges').
    #[serde(default)]
    pub ids: Option<(u32, u32)>,
    /// Its share of what everyone shares: its cgroup and limits.
    #[serde(default)]
    pub share: share::Limits,
    /// The confine stage's descriptor to hand its supervisor the listener of its connections
    /// on ([`keeper`]), where no network namespace holds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keeper: Option<i32>,
    /// The descriptor its supervisor reads its [`swap::Secrets`] from, once, at its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<i32>,
    /// The descriptor its supervisor writes one byte to once a model has begun to answer the
    /// judge ([`swap::Began`]): the tool starts the seat's other judges then, when the
    /// provider's cache holds what they share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub began: Option<i32>,
}

/// `--sandbox`: how judges are walled in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Setting {
    /// A jail of its own with Landlock inside where the kernel can; else Landlock alone, or
    /// nothing, each with one warning line and said in every record. On macOS a Seatbelt
    /// profile.
    #[default]
    Auto,
    /// The jail (on macOS Seatbelt), or launch nothing (exit 2).
    Required,
    /// Landlock alone, as auto falls back to where the kernel forbids namespaces (Linux).
    Landlock,
    /// No walls of ours (the supervisor still ends what a judge leaves running).
    Off,
}

/// What this run's judges run under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walls {
    /// As every record says it: `jail+landlock-abi-N`, `landlock-abi-N (no user namespaces:
    /// why)`, `off`, `unavailable: why`.
    pub said: String,
    /// The Landlock ABI to confine at, when Landlock confines.
    pub landlock: Option<u8>,
    /// Whether each judge gets a jail.
    pub jail: bool,
    /// Whether each judge runs under a Seatbelt profile (macOS).
    pub seatbelt: bool,
    /// The ids a judge runs as when they are not the caller's: a root caller's judges are
    /// never root.
    pub ids: Option<(u32, u32)>,
}

impl Walls {
    /// No walls: a dry run's, and `--sandbox off`'s.
    pub fn off() -> Walls {
        Walls {
            said: "off".into(),
            landlock: None,
            jail: false,
            seatbelt: false,
            ids: None,
        }
    }

    /// Whether any wall of ours stands.
    pub fn confined(&self) -> bool {
        self.jail || self.landlock.is_some() || self.seatbelt
    }

    /// The Landlock ABI its judges' rules are made at, when rules confine them (0 under
    /// Seatbelt, which reads the same rules).
    pub fn rules_abi(&self) -> Option<u8> {
        self.landlock.or(self.seatbelt.then_some(0))
    }
}

/// The walls of this run's judges, or why `mode` cannot have them (nothing is launched then):
/// on Linux a jail and Landlock, or Landlock alone; on macOS Seatbelt.
#[cfg(target_os = "linux")]
pub fn walls(mode: Setting) -> anyhow::Result<Walls> {
    walls_on(mode, walls::kernel(), jail::available(), host_root())
}

#[cfg(target_os = "macos")]
pub fn walls(mode: Setting) -> anyhow::Result<Walls> {
    let root = rustix::process::geteuid().is_root();
    seatbelt::walls_on(mode, &seatbelt::available(), root)
}

/// What this machine's walls can be, as `--doctor` says it.
pub struct Here {
    /// Landlock's ABI, or why there is none.
    pub landlock: Result<u8, String>,
    /// Whether a jail can be made, or why not.
    pub jail: Result<(), String>,
    /// On macOS, whether a Seatbelt profile can be put on a judge, or why not.
    pub seatbelt: Option<Result<(), String>>,
    /// What the walls here cannot hold, whatever the mode.
    pub not_held: &'static [&'static str],
}

#[cfg(target_os = "linux")]
pub fn here() -> Here {
    Here {
        landlock: walls::kernel().clone(),
        jail: jail::available().clone(),
        seatbelt: None,
        not_held: &[],
    }
}

#[cfg(target_os = "macos")]
pub fn here() -> Here {
    Here {
        landlock: Err("macOS has no Landlock; its walls are Seatbelt's".into()),
        jail: Err("macOS has no namespaces; its walls are Seatbelt's".into()),
        seatbelt: Some(seatbelt::available()),
        not_held: seatbelt::NOT_HELD,
    }
}

/// How `walls`' judges are held to `ask`, the run's cgroups made where they can be; their
/// words join the walls' (`jail+landlock-abi-7; limits: memory 2 GiB, …`).
pub fn share(walls: &mut Walls, ask: share::Ask) -> share::Plan {
    let wanted = ask.memory.is_some() || ask.processes.is_some();
    let run = wanted.then(cgroup::Run::make).and_then(Result::ok);
    let plan = share::plan(ask, walls.jail, walls.confined(), run);
    walls.said = format!("{}; {}", walls.said, plan.said);
    plan
}

/// Whether this process is the machine's root: uid 0 in the first user namespace. (Uid 0 in a
/// namespace of its own is some user of the machine already, with its ids alone mapped.)
fn host_root() -> bool {
    let whole = |file: &str| {
        std::fs::read_to_string(file).is_ok_and(|m| {
            let f: Vec<&str> = m.split_whitespace().collect();
            f == ["0", "0", "4294967295"]
        })
    };
    rustix::process::geteuid().is_root() && whole("/proc/self/uid_map")
}

fn walls_on(
    mode: Setting,
    landlock: &Result<u8, String>,
    jail: &Result<(), String>,
    root: bool,
) -> anyhow::Result<Walls> {
    let abi = landlock.as_ref().ok().copied();
    let (said, jail) = match (mode, jail, landlock) {
        (Setting::Off, _, _) => return Ok(Walls::off()),
        (Setting::Landlock, _, Ok(abi)) => (format!("landlock-abi-{abi}"), false),
        (Setting::Landlock, _, Err(why)) => {
            anyhow::bail!("--sandbox landlock: {why}; nothing was launched")
        }
        (Setting::Required, Err(why), _) => {
            anyhow::bail!("--sandbox required: no user namespaces: {why}; nothing was launched")
        }
        (_, Ok(()), Ok(abi)) => (format!("jail+landlock-abi-{abi}"), true),
        (_, Ok(()), Err(why)) => (format!("jail (no Landlock: {why})"), true),
        (Setting::Auto, Err(ns), Ok(abi)) => (
            format!("landlock-abi-{abi} (no user namespaces: {ns})"),
            false,
        ),
        (Setting::Auto, Err(ns), Err(why)) => (
            format!("unavailable: no user namespaces: {ns}; {why}"),
            false,
        ),
    };
    let confined = jail || abi.is_some();
    Ok(Walls {
        said,
        landlock: abi,
        jail,
        seatbelt: false,
        ids: (root && confined).then(unprivileged_ids),
    })
}

/// The ids a root caller's judges run as: root's first subordinate ids (`/etc/subuid`,
/// `/etc/subgid`), which no process of the machine has, else nobody's.
pub fn unprivileged_ids() -> (u32, u32) {
    let first = |file: &str| -> Option<u32> {
        let text = std::fs::read_to_string(file).ok()?;
        text.lines().find_map(|l| {
            let mut f = l.split(':');
            match (f.next()?, f.next()?.parse::<u32>().ok()) {
                ("root" | "0", Some(id)) if id > 0 => Some(id),
                _ => None,
            }
        })
    };
    first("/etc/subuid")
        .zip(first("/etc/subgid"))
        .unwrap_or((65534, 65534))
}

/// What every tool does first: its environment is not readable through `/proc` by other
/// processes of the user (a judge on a kernel without Landlock, among them), and descriptors
/// its caller left open reach no program it runs.
pub fn harden_tool() {
    // On macOS no process of another sandbox, nor one of the same user without the debugger's
    // entitlement, reads a process's environment.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    let _ = fds::close_inherited_on_exec();
}

/// Runs the stage named by the first argument, if it names one, and gives its exit status;
/// `None` when the binary was run as its tool.
pub fn stage_entry() -> Option<i32> {
    let mut args = std::env::args_os().skip(1);
    let stage = args.next();
    let run = match stage.as_deref().and_then(|s| s.to_str()) {
        Some(SUPERVISE) => supervise::main,
        #[cfg(target_os = "linux")]
        Some(CONFINE) => confine::main,
        _ => return None,
    };
    let rest: Vec<OsString> = args.collect();
    let code = match parse(&rest) {
        Some((policy, program)) => run(policy, program),
        None => {
            eprintln!(
                "panel: {}: bad arguments",
                stage.unwrap_or_default().to_string_lossy()
            );
            exit_status::CANNOT_RUN
        }
    };
    Some(code)
}

/// `POLICY -- PROGRAM ARGS…`.
fn parse(args: &[OsString]) -> Option<(Policy, Vec<OsString>)> {
    let policy = serde_json::from_str(args.first()?.to_str()?).ok()?;
    (args.get(1)? == "--" && args.len() > 2).then(|| (policy, args[2..].to_vec()))
}

/// The program and arguments that run `program args` under a supervisor with `policy`.
pub fn supervised(
    policy: &Policy,
    program: &std::path::Path,
    args: &[String],
) -> std::io::Result<(PathBuf, Vec<String>)> {
    let me = std::env::current_exe()?;
    let mut argv = vec![
        SUPERVISE.to_string(),
        serde_json::to_string(policy).map_err(std::io::Error::other)?,
        "--".to_string(),
        program.to_string_lossy().into_owned(),
    ];
    argv.extend(args.iter().cloned());
    Ok((me, argv))
}

/// Compares `text` with the golden file `golden/NAME` beside this module, or writes it there
/// with `UPDATE_GOLDEN` set: what the walls are is read in those files, and a change to them
/// shows in review.
#[cfg(test)]
pub(crate) fn against_golden(name: &str, text: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == text,
        "{} is not what the test makes; if the change is right, run `UPDATE_GOLDEN=1 cargo test --lib sandbox` and commit it:\n{text}",
        path.display()
    );
}

/// `src/engine/sandbox/golden`.
#[cfg(test)]
pub(crate) fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/engine/sandbox/golden")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22: "`--sandbox auto` falls back to Landlock alone and says so in every record;
    /// `--sandbox required` refuses before anything starts, in one line naming the cause and
    /// the fix; the record's `sandbox` names the walls that held".
    #[test]
    fn each_mode_gets_the_walls_the_kernel_allows_or_says_why_not() {
        let no_ll: Result<u8, String> = Err("this kernel has no Landlock".into());
        let seven: Result<u8, String> = Ok(7);
        let ns: Result<(), String> = Ok(());
        let no_ns: Result<(), String> = Err("user.max_user_namespaces is 0 (sysctl …)".into());
        let said = |m, l, j| {
            walls_on(m, l, j, false)
                .map(|w| (w.said, w.landlock, w.jail))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            said(Setting::Auto, &seven, &ns),
            Ok(("jail+landlock-abi-7".into(), Some(7), true))
        );
        assert_eq!(
            said(Setting::Auto, &seven, &no_ns),
            Ok((
                "landlock-abi-7 (no user namespaces: user.max_user_namespaces is 0 (sysctl …))"
                    .into(),
                Some(7),
                false
            ))
        );
        assert_eq!(
            said(Setting::Auto, &no_ll, &no_ns),
            Ok((
                "unavailable: no user namespaces: user.max_user_namespaces is 0 (sysctl …); this kernel has no Landlock".into(),
                None,
                false
            ))
        );
        assert_eq!(
            said(Setting::Required, &seven, &no_ns),
            Err("--sandbox required: no user namespaces: user.max_user_namespaces is 0 (sysctl …); nothing was launched".into())
        );
        assert_eq!(
            said(Setting::Required, &no_ll, &ns),
            Ok((
                "jail (no Landlock: this kernel has no Landlock)".into(),
                None,
                true
            ))
        );
        assert_eq!(
            said(Setting::Landlock, &seven, &ns),
            Ok(("landlock-abi-7".into(), Some(7), false))
        );
        assert_eq!(
            said(Setting::Landlock, &no_ll, &ns),
            Err("--sandbox landlock: this kernel has no Landlock; nothing was launched".into())
        );
        assert_eq!(
            said(Setting::Off, &seven, &ns),
            Ok(("off".into(), None, false))
        );
        // A root caller's confined judges run as someone else; unconfined ones are as they are.
        let root = |m| walls_on(m, &seven, &ns, true).unwrap().ids;
        assert!(root(Setting::Auto).is_some_and(|(u, g)| u != 0 && g != 0));
        assert!(root(Setting::Landlock).is_some());
        assert_eq!(root(Setting::Off), None);
    }
}
