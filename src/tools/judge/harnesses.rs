//! What panel-judge says of its harnesses without launching a judge: `--list-harnesses` (a
//! table, or with `--json` the rows as JSON) and `--doctor` (each harness on this machine, and
//! the walls it allows).

use std::io::Write;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::engine::call::Context;
use crate::engine::harness::{HarnessKind, Table, find_on_path};
use crate::engine::sandbox::Setting;
use crate::records::doctor::{HarnessStatus, SandboxStatus};
use crate::records::printable::{columns, inline};

/// `--list-harnesses`: the table, on a terminal or through a pipe alike (a report keeps one
/// shape wherever it goes); with `json` the rows as pretty JSON (what a harness file holds, and
/// what the completions read, byte for byte).
pub fn list(table: &Table, ctx: &Context, json: bool) -> Result<ExitCode> {
    let mut out = crate::engine::output::stdout();
    if json {
        serde_json::to_writer_pretty(&mut out, table.rows())?;
        writeln!(out)?;
    } else {
        out.write_all(list_table(table, ctx).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The harness table for people: one row each, its program found or not.
pub fn list_table(table: &Table, ctx: &Context) -> String {
    let mut rows = vec![heads(&[
        "NAME",
        "EXECUTABLE",
        "ON PATH",
        "FAMILY",
        "VERIFIED",
        "OVERHEAD",
        "LOCKDOWN",
    ])];
    for row in table.rows() {
        let (exe, found) = match row.kind {
            HarnessKind::Replay => ("-".to_string(), "-".to_string()),
            HarnessKind::Process => (
                inline(&row.executable).into_owned(),
                match find_on_path(&row.executable, ctx.path_var()) {
                    Some(p) => short(&p.display().to_string(), &ctx.user_home),
                    None => "not found".into(),
                },
            ),
        };
        rows.push(vec![
            inline(&row.name).into_owned(),
            exe,
            found,
            row.family
                .as_deref()
                .map_or("-".into(), |f| inline(f).into_owned()),
            if row.verified { "yes" } else { "no" }.into(),
            row.overhead.map_or("-".into(), |o| {
                format!("{} B, {} req", o.request_bytes, o.requests)
            }),
            row.lockdown
                .as_deref()
                .map_or("-".into(), |l| inline(l).into_owned()),
        ]);
    }
    columns(&rows)
}

/// `--doctor`: each harness, then the walls; as text, or with `json` one record a line.
pub fn doctor(table: &Table, ctx: &Context, mode: Setting, json: bool) -> Result<ExitCode> {
    // The walls first: the jail's probe forks, best before the harnesses' threads start.
    let walls = crate::engine::doctor::sandbox(mode);
    let found = crate::engine::doctor::harnesses(table, ctx);
    let mut out = crate::engine::output::stdout();
    if json {
        for h in &found {
            writeln!(out, "{}", serde_json::to_string(h)?)?;
        }
        writeln!(out, "{}", serde_json::to_string(&walls)?)?;
    } else {
        out.write_all(doctor_text(&found, &walls, &ctx.user_home).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The doctor's report for people: a table of the harnesses, what is missing and how to
/// install it, and the walls.
pub fn doctor_text(found: &[HarnessStatus], walls: &SandboxStatus, home: &Path) -> String {
    let mut rows = vec![heads(&["HARNESS", "INSTALLED", "VERSION", "LOGIN"])];
    rows.extend(found.iter().map(|h| harness_row(h, home)));
    let mut text = columns(&rows);
    let launching = found.iter().filter(|h| h.path.is_some() || !h.installed);
    let (ready, missing): (Vec<_>, Vec<_>) = launching.partition(|h| h.installed);
    text.push_str(&format!(
        "\n{} of {} harnesses installed",
        ready.len(),
        ready.len() + missing.len()
    ));
    if missing.is_empty() {
        text.push('\n');
    } else {
        let names: Vec<String> = missing
            .iter()
            .map(|h| inline(&h.name).into_owned())
            .collect();
        text.push_str(&format!("; not installed: {}\n", names.join(", ")));
        for h in missing.iter().filter(|h| h.install.is_some()) {
            text.push_str(&format!(
                "  {}: {}\n",
                inline(&h.name),
                inline(h.install.as_deref().unwrap_or_default())
            ));
        }
    }
    for h in found {
        // Installed without a login: what logs in, beneath the table.
        if let (true, Some(fix)) = (h.installed, &h.login_fix) {
            text.push_str(&format!(
                "{} login: none; to log in: {}\n",
                inline(&h.name),
                inline(fix)
            ));
        }
        // A judge that holds the live credential is said beneath the table: a placeholder is
        // the rule.
        if let Some(why) = h
            .login_used
            .as_ref()
            .and_then(|l| l.judge_holds.as_deref()?.strip_prefix("live: "))
        {
            text.push_str(&format!(
                "{} login: a judge holds it live ({})\n",
                inline(&h.name),
                inline(why)
            ));
        }
        // A login that cannot be used, or is unverified, is said beneath the table.
        if let Some(l) = h.login_used.as_ref().filter(|l| !l.usable || l.unverified) {
            let said: Vec<String> = [l.state.clone(), l.fix.as_ref().map(|f| format!("fix: {f}"))]
                .into_iter()
                .flatten()
                .collect();
            if !said.is_empty() {
                text.push_str(&format!(
                    "{} login: {}\n",
                    inline(&h.name),
                    inline(&said.join("; "))
                ));
            }
        }
        if let Some(why) = &h.sandbox_note {
            text.push_str(&format!("{}: {}\n", inline(&h.name), inline(why)));
        }
    }
    text.push_str(&walls_text(walls));
    text
}

/// A harness's row of the doctor's table.
fn harness_row(h: &HarnessStatus, home: &Path) -> Vec<String> {
    let installed = match (&h.path, h.installed) {
        (Some(p), _) => short(p, home),
        (None, true) => "nothing to install".into(),
        (None, false) => "not found".into(),
    };
    let version = match (&h.version, &h.version_note) {
        (Some(v), _) => v.clone(),
        (None, _) if !h.installed || h.path.is_none() => "-".into(),
        (None, Some(why)) => inline(why).into_owned(),
        (None, None) => "-".into(),
    };
    let login = match (h.login, &h.login_used) {
        (None, _) => "-".into(),
        (Some(_), Some(l)) => {
            let state = match (l.usable, &l.expires) {
                (false, _) => "not usable".to_string(),
                (true, Some(t)) => format!("expires {}", inline(t)),
                (true, None) => "usable".to_string(),
            };
            format!("{} ({}, {state})", inline(&l.kind), short(&l.at, home))
        }
        (Some(_), None) => "none".into(),
    };
    vec![inline(&h.name).into_owned(), installed, version, login]
}

/// The doctor's report on the walls: the sandbox, Landlock, the jail, the judges' ids.
fn walls_text(walls: &SandboxStatus) -> String {
    let mut text = String::new();
    text.push_str(&format!(
        "\nsandbox (--sandbox {}): {}\n",
        walls.mode,
        match (&walls.walls, &walls.refused) {
            (Some(w), _) => inline(w).into_owned(),
            (None, Some(why)) => format!("refused: {}", inline(why)),
            (None, None) => "-".into(),
        }
    ));
    text.push_str(&match (walls.landlock_abi, &walls.landlock_note) {
        (Some(abi), _) => format!("  landlock: ABI {abi}\n"),
        (None, why) => format!(
            "  landlock: none: {}\n",
            inline(why.as_deref().unwrap_or(""))
        ),
    });
    text.push_str(&match &walls.jail_note {
        None => "  jail: can be made (user namespaces)\n".to_string(),
        Some(why) => format!("  jail: cannot be made: {}\n", inline(why)),
    });
    match (walls.seatbelt, &walls.seatbelt_note) {
        (Some(true), _) => text.push_str("  seatbelt: sandbox-exec\n"),
        (Some(false), why) => text.push_str(&format!(
            "  seatbelt: cannot be used: {}\n",
            inline(why.as_deref().unwrap_or(""))
        )),
        (None, _) => {}
    }
    for what in &walls.not_held {
        text.push_str(&format!("  not held here: {}\n", inline(what)));
    }
    if let Some([uid, gid]) = walls.runs_as {
        text.push_str(&format!("  judges run as {uid}:{gid}, never root\n"));
    }
    text
}

fn heads(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// A path as shown: escaped, the user's HOME as `~`.
fn short(path: &str, home: &Path) -> String {
    let home = home.to_string_lossy();
    let path = match path.strip_prefix(home.as_ref()) {
        Some(rest) if home != "/" && rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_string(),
    };
    inline(&path).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37: a row's measured overhead "goes into docs/harnesses.md and
    /// `panel-judge --list-harnesses`": the table shows it, and nothing for a row measured by none.
    #[test]
    fn the_table_shows_each_rows_overhead() {
        let ctx = Context::new(Default::default());
        let table = Table::builtin();
        let text = list_table(&table, &ctx);
        let o = table.get("claude").unwrap().overhead.unwrap();
        let line = text.lines().find(|l| l.starts_with("claude ")).unwrap();
        assert!(
            line.contains(&format!("{} B, {} req", o.request_bytes, o.requests)),
            "{text}"
        );
        let llm = text.lines().find(|l| l.starts_with("llm ")).unwrap();
        assert!(!llm.contains(" B, "), "{text}");
    }

    /// Issue 48: "`--doctor` on macOS says `seatbelt` and what it cannot hold", as a Mac's
    /// `sandbox::here` and walls make it (its words escaped as every shown text is).
    #[test]
    fn the_doctor_on_a_mac_says_seatbelt_and_what_it_cannot_hold() {
        use crate::engine::sandbox::{Setting, seatbelt};
        let walls = seatbelt::walls_on(Setting::Auto, &Ok(()), false).unwrap();
        let mut status = SandboxStatus {
            kind: "sandbox-status",
            landlock_abi: None,
            landlock_note: Some("macOS has no Landlock; its walls are Seatbelt's".into()),
            jail: false,
            jail_note: Some("macOS has no namespaces; its walls are Seatbelt's".into()),
            mode: "auto".into(),
            walls: Some(walls.said),
            refused: None,
            runs_as: None,
            seatbelt: Some(true),
            seatbelt_note: None,
            not_held: seatbelt::NOT_HELD.iter().map(|s| s.to_string()).collect(),
        };
        let text = walls_text(&status);
        assert!(
            text.contains("sandbox (--sandbox auto): seatbelt\n"),
            "{text}"
        );
        assert!(text.contains("  seatbelt: sandbox-exec\n"), "{text}");
        assert!(
            text.contains("  not held here: memory and processes: no cgroups"),
            "{text}"
        );
        assert_eq!(
            text.matches("not held here:").count(),
            seatbelt::NOT_HELD.len()
        );
        status.seatbelt = Some(false);
        status.seatbelt_note = Some("/usr/bin/sandbox-exec: gone\x1b[2J".into());
        let text = walls_text(&status);
        assert!(
            text.contains("  seatbelt: cannot be used: /usr/bin/sandbox-exec: gone\\x1b[2J\n"),
            "{text}"
        );
    }
}
