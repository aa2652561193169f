//! The stage that becomes the harness where there is no jail: it dies with its supervisor (a
//! parent-death signal, which `exec` keeps), enters the judge's cgroup, leaves the tool's
//! session (no controlling terminal to read or write) unless its niceness weighs its CPU
//! (`Limits::own_session`), keeps descriptors 0–2 only, takes its
//! share's limits, becomes the unprivileged ids of a root caller's judges, confines itself when
//! the policy says so, and replaces itself with the harness.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::{Signal, getppid, set_parent_process_death_signal, setsid};

use super::{Policy, keeper, walls};
use crate::records::exit_status;

pub fn main(policy: Policy, program: Vec<OsString>) -> i32 {
    let parent = getppid();
    if set_parent_process_death_signal(Some(Signal::KILL)).is_err() {
        return exit_status::CANNOT_RUN;
    }
    // The supervisor may have died before the signal was set: we were then given to another
    // parent. (In a new PID namespace the parent is outside it and reads as none.)
    if getppid() != parent {
        return exit_status::CANNOT_RUN;
    }
    if let Err(e) = super::cgroup::enter_self(&policy.share.enter) {
        eprintln!("panel: cannot enter the judge's cgroup: {e}");
        return exit_status::CANNOT_RUN;
    }
    if policy.share.own_session(policy.confine.is_some()) {
        let _ = setsid();
    }
    if let Err(e) = super::fds::close_inherited_on_exec() {
        eprintln!("panel: cannot close inherited descriptors: {e}");
        return exit_status::CANNOT_RUN;
    }
    if let Err(e) = policy.share.take() {
        eprintln!("panel: cannot limit the judge: {e}");
        return exit_status::CANNOT_RUN;
    }
    walls::own_keyring();
    if let Some(ids) = policy.ids
        && let Err(e) = walls::become_unprivileged(ids)
    {
        eprintln!("panel: cannot run the judge as {}:{}: {e}", ids.0, ids.1);
        return exit_status::CANNOT_RUN;
    }
    if let Some(rules) = &policy.confine {
        let confined = match rustix::process::geteuid().is_root() {
            true => walls::drop_capabilities(),
            false => Ok(()),
        }
        .and_then(|()| walls::restrict(rules, policy.share.refuse(false)));
        if let Err(e) = confined {
            eprintln!("panel: cannot confine the judge: {e}");
            return exit_status::CANNOT_RUN;
        }
        // Its connections, made by its supervisor (Landlock's ports hold any address).
        if let Some(fd) = policy.keeper {
            let kept = keeper::notify_connects()
                .and_then(|l| keeper::send_fd(fd, &l).map_err(|e| format!("keeper: {e}")));
            if let Err(e) = kept {
                eprintln!("panel: cannot confine the judge: {e}");
                return exit_status::CANNOT_RUN;
            }
        }
    }
    let err = Command::new(&program[0]).args(&program[1..]).exec();
    eprintln!("panel: cannot run {}: {err}", program[0].to_string_lossy());
    if err.kind() == std::io::ErrorKind::NotFound {
        exit_status::NOT_FOUND
    } else {
        exit_status::CANNOT_RUN
    }
}
