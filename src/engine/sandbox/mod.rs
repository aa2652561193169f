//! How a judge's process runs: under a small supervisor (our own binary, run again) that sees
//! to it that nothing the judge starts outlives the tool, however the tool ends; and, on a
//! kernel that can, confined to its own folders (the second wall, docs/design.md §8).
//!
//! ```text
//! tool ── supervisor (`__panel-supervise`) ── confine stage (`__panel-confine`) ─exec─ harness
//! ```
//!
//! The supervisor ([`supervise`]) is a child subreaper that watches the tool through a pidfd.
//! It ends every
//! descendant (TERM, a grace, KILL) when the harness exits, when the tool is gone (even
//! SIGKILLed), or when the tool's TERM reaches it, and then mirrors the harness's exit.
//! The confine stage ([`confine`]) leaves the tool's session, dies with the supervisor, keeps
//! only descriptors 0–2, puts on itself the [`rules`] of what the judge may touch ([`walls`]:
//! Landlock, and seccomp for what Landlock cannot yet see), and then becomes the harness.

pub mod confine;
pub mod rules;
pub mod supervise;
pub mod walls;

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The hidden first argument that runs a binary as a judge's supervisor.
pub const SUPERVISE: &str = "__panel-supervise";
/// The hidden first argument of the stage that becomes the harness.
pub const CONFINE: &str = "__panel-confine";

/// What a judge's supervisor needs, carried on its command line as JSON (paths only: a
/// command line is readable by every user of the machine, so never a secret).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Policy {
    /// How long descendants have between TERM and KILL.
    pub grace_ms: u64,
    /// The judge's private folder, removed by the supervisor when the tool is gone.
    #[serde(default)]
    pub private: Option<PathBuf>,
    /// What the judge may touch; `None` runs it unconfined (`--sandbox off`, or no Landlock).
    #[serde(default)]
    pub confine: Option<rules::Rules>,
}

/// `--sandbox`: whether judges are confined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Confine where the kernel can; else run them with one warning line.
    #[default]
    Auto,
    /// Confine, or launch nothing (exit 2).
    Required,
    /// Do not confine.
    Off,
}

/// What this run's judges run under, as every record says it: `landlock-abi-N`, `off`, or
/// `unavailable: why`; and the ABI to confine at, when they are confined.
pub fn walls(mode: Mode) -> anyhow::Result<(String, Option<u8>)> {
    walls_on(mode, walls::kernel())
}

fn walls_on(mode: Mode, kernel: &Result<u8, String>) -> anyhow::Result<(String, Option<u8>)> {
    match (mode, kernel) {
        (Mode::Off, _) => Ok(("off".into(), None)),
        (_, Ok(abi)) => Ok((format!("landlock-abi-{abi}"), Some(*abi))),
        (Mode::Required, Err(why)) => {
            anyhow::bail!("--sandbox required: {why}; nothing was launched")
        }
        (Mode::Auto, Err(why)) => Ok((format!("unavailable: {why}"), None)),
    }
}

/// What every tool does first: its environment is not readable through `/proc` by other
/// processes of the user (a judge on a kernel without Landlock, among them), and descriptors
/// its caller left open reach no program it runs.
pub fn harden_tool() {
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    let _ = walls::close_inherited_on_exec();
}

/// Runs the stage named by the first argument, if it names one; never returns then.
pub fn stage_entry() {
    let mut args = std::env::args_os().skip(1);
    let stage = args.next();
    let run = match stage.as_deref().and_then(|s| s.to_str()) {
        Some(SUPERVISE) => supervise::main,
        Some(CONFINE) => confine::main,
        _ => return,
    };
    let rest: Vec<OsString> = args.collect();
    let code = match parse(&rest) {
        Some((policy, program)) => run(policy, program),
        None => {
            eprintln!(
                "panel: {}: bad arguments",
                stage.unwrap_or_default().to_string_lossy()
            );
            126
        }
    };
    std::process::exit(code);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_without_landlock_is_a_warning_or_a_refusal_as_asked() {
        let none: Result<u8, String> = Err("this kernel has no Landlock".into());
        let seven: Result<u8, String> = Ok(7);
        let said = |m, k| walls_on(m, k).map_err(|e| e.to_string());
        assert_eq!(
            said(Mode::Auto, &none),
            Ok(("unavailable: this kernel has no Landlock".into(), None))
        );
        assert_eq!(
            said(Mode::Required, &none),
            Err("--sandbox required: this kernel has no Landlock; nothing was launched".into())
        );
        assert_eq!(said(Mode::Off, &none), Ok(("off".into(), None)));
        assert_eq!(said(Mode::Off, &seven), Ok(("off".into(), None)));
        assert_eq!(
            said(Mode::Auto, &seven),
            Ok(("landlock-abi-7".into(), Some(7)))
        );
        assert_eq!(
            said(Mode::Required, &seven),
            Ok(("landlock-abi-7".into(), Some(7)))
        );
    }
}
