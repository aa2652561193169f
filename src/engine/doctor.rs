//! `panel-judge --doctor`: what each harness has on this machine (its program on PATH, its
//! version, a login) and what the judges' walls can be here. A harness's `--version` runs as
//! one launch does ([`crate::engine::call::launch`]: its own process group, stdin from /dev/null,
//! output within a budget, a deadline, the group killed after), without the user's keys in its
//! environment; every harness is asked at once, so a hanging one costs its deadline alone.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use crate::engine::call::context::Context;
use crate::engine::call::launch::{self, Spec};
use crate::engine::call::transcript::Transcript;
use crate::engine::carried::is_login_var;
use crate::engine::harness::{Harness, HarnessKind, Login, Table, find_on_path};
use crate::engine::logins;
use crate::engine::sandbox::{self, Setting};
use crate::records::doctor::{HarnessStatus, LoginStatus, SandboxStatus};
use crate::records::printable::inline;

/// How long a harness has to answer `--version`.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(5);
/// What of its output is read; past it the harness is stopped.
const VERSION_BYTES: usize = 64 << 10;
/// What of its version line is kept.
const VERSION_CHARS: usize = 200;

/// Every row of `table`, in its order, each checked on its own thread; on a terminal, a line
/// on standard error says which it still waits for (a CLI may take its 5 s).
pub fn harnesses(table: &Table, ctx: &Context) -> Vec<HarnessStatus> {
    let rows = table.rows();
    let shown = Asking::new(rows, std::io::stderr().is_terminal());
    let found = std::thread::scope(|s| {
        let asked: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let shown = &shown;
                std::thread::Builder::new()
                    .spawn_scoped(s, move || {
                        let status = harness(row, ctx);
                        shown.answered(i);
                        status
                    })
                    .map_err(|_| row)
            })
            .collect();
        asked
            .into_iter()
            .map(|a| match a {
                Ok(thread) => thread
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
                // No thread to be had: asked here instead.
                Err(row) => harness(row, ctx),
            })
            .collect()
    });
    shown.clear();
    found
}

/// The doctor's line on a terminal while it asks: how many CLIs answered, which it waits for.
struct Asking {
    names: Vec<String>,
    done: Option<std::sync::Mutex<Vec<bool>>>,
}

impl Asking {
    fn new(rows: &[Harness], on: bool) -> Asking {
        let names: Vec<String> = rows.iter().map(|r| inline(&r.name).into_owned()).collect();
        let shown = Asking {
            done: on.then(|| std::sync::Mutex::new(vec![false; names.len()])),
            names,
        };
        shown.draw(&vec![false; shown.names.len()]);
        shown
    }

    fn answered(&self, i: usize) {
        if let Some(done) = &self.done {
            let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(d) = done.get_mut(i) {
                *d = true;
            }
            self.draw(&done);
        }
    }

    fn draw(&self, done: &[bool]) {
        if self.done.is_some() {
            eprint!("\r\x1b[2K{}", asking_line(&self.names, done));
        }
    }

    fn clear(&self) {
        if self.done.is_some() {
            eprint!("\r\x1b[2K");
        }
    }
}

/// `panel-judge: asking each CLI its version: 3 of 8 answered; waiting for gemini, qwen`.
fn asking_line(names: &[String], done: &[bool]) -> String {
    let answered = done.iter().filter(|d| **d).count();
    let waiting: Vec<&str> = names
        .iter()
        .zip(done)
        .filter(|(_, d)| !**d)
        .map(|(n, _)| n.as_str())
        .collect();
    format!(
        "panel-judge: asking each CLI its version: {answered} of {} answered; waiting for {}",
        names.len(),
        waiting.join(", ")
    )
}

/// One row: its program, its version, its login.
pub fn harness(row: &Harness, ctx: &Context) -> HarnessStatus {
    let logins = logins_of(row);
    let (login_used, looked_at, login_fix) = ctx.with_user(|user| {
        let looked: Vec<String> = logins
            .iter()
            .map(|l| format!("{}: {}", l.kind, where_kept(l, user)))
            .collect();
        let checked = Harness {
            logins: logins.clone(),
            ..row.clone()
        };
        let used = login_status(&checked, user);
        // What a judge's launch would say: a row whose CLI answers only with a login, and
        // none found nor one of its own named.
        let fix = (used.is_none() && logins::none_for(&checked, None, user).is_some())
            .then(|| logins::how_to_log_in(&checked, None, user));
        (used, looked, fix)
    });
    let login = (!logins.is_empty()).then_some(login_used.is_some());
    let mut status = HarnessStatus {
        kind: "harness-status",
        name: row.name.clone(),
        executable: row.executable.clone(),
        installed: false,
        path: None,
        install: None,
        version: None,
        version_note: None,
        login,
        login_used,
        looked_at,
        login_fix,
        sandbox_note: None,
    };
    if row.kind == HarnessKind::Replay {
        status.installed = true;
        status.version_note = Some("launches nothing".into());
        return status;
    }
    let Some(path) = find_on_path(&row.executable, ctx.path_var()) else {
        status.install = row.install.clone();
        status.version_note = Some("not installed".into());
        return status;
    };
    status.installed = true;
    status.path = Some(path.display().to_string());
    // An exec seat runs a command of its own; `sh --version` says nothing of it.
    if row.name == "exec" {
        status.version_note = Some("not asked: an exec seat runs its own command".into());
        return status;
    }
    status.sandbox_note = sandbox::grants::installed_in_home(&path, &ctx.user_home);
    match version(&path, ctx) {
        Ok(v) => status.version = Some(v),
        Err(why) => status.version_note = Some(why),
    }
    status
}

/// The row's logins; a row of the user's that names none has the login variables it carries and
/// its configuration files for logins, as before logins were rows.
fn logins_of(row: &Harness) -> Vec<Login> {
    if !row.logins.is_empty() {
        return row.logins.clone();
    }
    let plain = |kind: &str| Login {
        kind: kind.to_string(),
        ..Login::default()
    };
    let vars = row
        .pass_env
        .iter()
        .filter(|v| is_login_var(v))
        .map(|v| Login {
            env: vec![v.clone()],
            ..plain("key")
        });
    let files = row.config.iter().map(|c| Login {
        file: Some(c.from.clone()),
        ..plain("file")
    });
    vars.chain(files).collect()
}

/// Where a login is looked for, in words (a variable, a path with the user's HOME as `~`,
/// a command).
fn where_kept(l: &Login, user: &crate::engine::logins::User) -> String {
    if !l.env.is_empty() {
        return l
            .env
            .iter()
            .map(|v| format!("${v}"))
            .collect::<Vec<_>>()
            .join(" or ");
    }
    if let Some(f) = &l.file {
        return crate::engine::harness::expand_user_path(f, user.home, user.env)
            .display()
            .to_string();
    }
    let said = format!("`{}`", l.command.join(" "));
    let program = l.command.first().map(String::as_str).unwrap_or_default();
    let path = (user.env)("PATH").unwrap_or_default();
    match find_on_path(program, &path) {
        Some(_) => said,
        None => format!("{said} ({program} is not on PATH)"),
    }
}

/// The login `row`'s judges would get, as `--doctor` says it: found, not refreshed.
fn login_status(row: &Harness, user: &crate::engine::logins::User) -> Option<LoginStatus> {
    let f = logins::found(row, user)?;
    let login = row.logins.iter().find(|l| l.kind == f.kind)?;
    let margin = login.refresh.as_ref().map_or(0, |r| r.margin);
    let now = std::time::SystemTime::now();
    let live = f
        .expires
        .is_none_or(|t| t > now + std::time::Duration::from_secs(margin));
    let usable = (live || f.refreshable) && f.unusable.is_none();
    let unverified = !row.verified && Table::builtin().get(&row.name).is_some();
    let state = match (&f.unusable, live, f.refreshable) {
        (Some(why), _, _) => Some(why.clone()),
        (None, false, true) => {
            Some("expired: panel refreshes it once before the judges start".into())
        }
        (None, false, false) => Some("expired, and panel cannot refresh it".into()),
        (None, true, _) if unverified => {
            Some("unverified: this row was built from the CLI's documentation, not run".into())
        }
        (None, true, _) => None,
    };
    Some(LoginStatus {
        kind: f.kind,
        at: f.place.to_string(),
        usable,
        expires: f.expires.map(|t| {
            logins::store::write_time(t, crate::engine::harness::login::TimeAs::Rfc3339)
                .as_str()
                .unwrap_or_default()
                .to_string()
        }),
        refresh: f.refreshable,
        fix: (!usable).then(|| login.fix.clone()).flatten(),
        state,
        unverified,
        judge_holds: f.unusable.is_none().then(|| logins::judge_holds(login)),
        note: login.notes.clone(),
    })
}

/// The first line `program --version` prints (its standard error's when its standard output
/// has none), escaped and cut; else what went wrong.
fn version(program: &Path, ctx: &Context) -> Result<String, String> {
    let env = ctx
        .user_env
        .iter()
        .filter(|(k, _)| !is_login_var(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let spec = Spec {
        program: program.to_path_buf(),
        args: vec!["--version".into()],
        env,
        cwd: "/".into(),
        stdin: None,
        timeout: VERSION_TIMEOUT,
        cap: VERSION_BYTES,
        supervised: None,
        cancel: None,
        secrets: None,
        began: None,
    };
    let stdout = Transcript::new(None, Default::default(), VERSION_BYTES as u64);
    let out = launch::run(&spec, stdout).map_err(|e| format!("cannot run it: {e}"))?;
    if out.timed_out {
        return Err(format!(
            "no answer to --version in {} s: stopped",
            VERSION_TIMEOUT.as_secs()
        ));
    }
    if out.interrupted {
        return Err("stopped by a signal".into());
    }
    if out.stdout.over {
        return Err(format!(
            "--version printed over {} KiB: stopped",
            VERSION_BYTES >> 10
        ));
    }
    let text = out.stdout.text();
    let line = first_line(&text).or_else(|| first_line(&String::from_utf8_lossy(&out.stderr)));
    match (out.exit_code(), line) {
        (Some(0), Some(line)) => Ok(line),
        (Some(0), None) => Err("--version printed nothing".into()),
        (code, line) => {
            let how = match (code, out.signal()) {
                (Some(c), _) => format!("--version exited {c}"),
                (None, Some(s)) => format!("--version was killed by signal {s}"),
                (None, None) => "--version ended unseen".into(),
            };
            Err(match line {
                Some(l) => format!("{how}: {l}"),
                None => how,
            })
        }
    }
}

/// The first line with text in it, trimmed, escaped, at most [`VERSION_CHARS`] characters.
fn first_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let shown = crate::records::printable::inline(line);
    Some(match shown.char_indices().nth(VERSION_CHARS) {
        Some((at, _)) => format!("{}…", &shown[..at]),
        None => shown.into_owned(),
    })
}

/// What the walls can be here: the kernel's Landlock, whether a jail can be made, and what
/// `mode` gives (the probes a run makes, asked once).
pub fn sandbox(mode: Setting) -> SandboxStatus {
    let here = sandbox::here();
    let (landlock_abi, landlock_note) = match here.landlock {
        Ok(abi) => (Some(abi), None),
        Err(why) => (None, Some(why)),
    };
    let jail_note = here.jail.err();
    let name = clap::ValueEnum::to_possible_value(&mode)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default();
    let (walls, refused, runs_as) = match sandbox::walls(mode) {
        Ok(mut w) => {
            // With the default share, its cgroups made and removed again.
            sandbox::share(&mut w, Default::default());
            (Some(w.said), None, w.ids.map(|(u, g)| [u, g]))
        }
        Err(why) => (None, Some(format!("{why:#}")), None),
    };
    SandboxStatus {
        kind: "sandbox-status",
        landlock_abi,
        landlock_note,
        jail: jail_note.is_none(),
        jail_note,
        mode: name,
        walls,
        refused,
        runs_as,
        seatbelt: here.seatbelt.as_ref().map(Result::is_ok),
        seatbelt_note: here.seatbelt.and_then(Result::err),
        not_held: here.not_held.iter().map(|s| s.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 45: `--doctor` "waits 5 s on `gemini --version` with nothing on screen".
    #[test]
    fn the_line_while_it_asks_says_which_it_waits_for() {
        let names = ["claude", "gemini", "qwen"].map(String::from);
        assert_eq!(
            asking_line(&names, &[true, false, false]),
            "panel-judge: asking each CLI its version: 1 of 3 answered; waiting for gemini, qwen"
        );
    }

    #[test]
    fn a_version_line_is_the_first_with_text_escaped_and_cut() {
        assert_eq!(
            first_line("\n  \n 1.2.3 (x) \nmore").as_deref(),
            Some("1.2.3 (x)")
        );
        assert_eq!(first_line(" \n\t\n"), None);
        assert_eq!(
            first_line("v1\x1b[2K\r\x07").as_deref(),
            Some("v1\\x1b[2K\\x0d\\x07")
        );
        let long = first_line(&"é".repeat(500)).unwrap();
        assert_eq!(long.chars().count(), VERSION_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
