//! `panel-tally --runs`: the run folders panel's tools made where none was named
//! ([`crate::engine::runs`]), listed newest first, or with `--keep DAYS` pruned at once.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::{Result, bail};

use crate::engine::runs::{Runs, RunsHome, age_shown, size_shown};
use crate::records::printable::shown;
use crate::records::runs::RunFolder;
use crate::tools::tally::report::Format;

/// Lists the run folders, or removes those older than `keep` days and lists those it removed:
/// a table, on a terminal or through a pipe alike; one `run-folder` record a line only with
/// `--json` (a report that changed shape when piped surprised `| less`).
pub fn run(format: Option<Format>, keep: Option<u32>) -> Result<ExitCode> {
    let table = match format {
        None | Some(Format::Text) => true,
        Some(Format::Json) => false,
        Some(_) => bail!("--runs: the run folders are listed as text or JSON"),
    };
    let place = RunsHome::here();
    if let RunsHome::Temp(tmp) = &place {
        eprintln!(
            "panel-tally: no XDG_CACHE_HOME or HOME: the run folders are in {}",
            shown(&tmp.display().to_string())
        );
    }
    let now = SystemTime::now();
    let runs = Runs::open(&place, false)?;
    let (rows, pruned) = match (&runs, keep) {
        (None, _) => (Vec::new(), None),
        (Some(runs), None) => (runs.list(now), None),
        (Some(runs), Some(days)) => {
            let mut pruned = runs.prune(Duration::from_secs(u64::from(days) * 86400), now, true);
            (std::mem::take(&mut pruned.removed), Some(pruned))
        }
    };
    let mut out = crate::engine::output::stdout();
    if table {
        out.write_all(render(&rows).as_bytes())?;
    } else {
        for row in &rows {
            crate::records::write(&mut out, row)?;
        }
    }
    out.flush()?;
    let dir = shown(&place.dir().display().to_string()).into_owned();
    let Some(days) = keep else {
        if rows.is_empty() {
            eprintln!("panel-tally: no run folders in {dir}");
        }
        return Ok(ExitCode::SUCCESS);
    };
    let pruned = pruned.unwrap_or_default();
    let freed: u64 = rows.iter().map(|r| r.bytes).sum();
    eprintln!(
        "panel-tally: removed {} run folder(s) ({}) of runs started {days} or more days ago from \
            {dir}; kept {} in use, {} newer",
        rows.len(),
        size_shown(freed),
        pruned.in_use,
        pruned.newer
    );
    if let Some((path, why)) = pruned.failed.first() {
        bail!(
            "{}: cannot remove: {why}{}",
            shown(path),
            match pruned.failed.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The table: one line a folder under a header, the columns sized to what they hold.
fn render(rows: &[RunFolder]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let header = ["AGE", "SIZE", "JUDGES", "LEDGER", "STATE", "PATH"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let ledger = match (&r.ledger, r.records) {
                (Some(l), Some(n)) => format!("{l} ({n})"),
                _ => "-".into(),
            };
            let state = match (r.removed, r.live) {
                (true, _) => "removed",
                (_, true) => "live",
                _ => "-",
            };
            [
                age_shown(r.age_secs),
                size_shown(r.bytes),
                r.judges.to_string(),
                ledger,
                state.into(),
                shown(&r.path).into_owned(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, row: [&str; 6]| {
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                out.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                out.push_str(cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push('\n');
    };
    line(&mut out, header);
    for row in &cells {
        line(&mut out, row.each_ref().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sizes_its_columns_and_escapes_the_path() {
        let row = RunFolder {
            kind: "run-folder",
            path: "/c/panel/runs/20261202T173135Z-0123456789ab\x1b[2J".into(),
            started: "2026-12-02T17:31:35Z".into(),
            age_secs: 3 * 86400,
            bytes: 1536,
            judges: 3,
            ledger: Some("verdicts.jsonl".into()),
            records: Some(3),
            seal: None,
            live: true,
            removed: false,
        };
        let text = render(&[row]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "AGE  SIZE  JUDGES  LEDGER              STATE  PATH"
        );
        assert!(
            lines[1].starts_with("3d   1.5K  3       verdicts.jsonl (3)  live   /c/panel/runs/"),
            "{text}"
        );
        assert!(!text.contains('\x1b'), "{text:?}");
        assert_eq!(render(&[]), "");
    }
}
