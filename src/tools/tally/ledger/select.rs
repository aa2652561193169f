//! The ledger kept to some panels of its history (`--since`, `--seat`, `--run`,
//! `--candidate`). Whether a panel is kept depends on all its records (a seat may sit on its
//! last one), so the inputs are read twice: once for each panel's facts, once to count the
//! records of the panels kept. A file is read again by its path; standard input (or a pipe
//! named as a file) is copied once into an unnamed temporary file.

use std::collections::{HashMap, HashSet};
use std::io::{Seek, SeekFrom};

use anyhow::{Context, Result};

use crate::records::input::Source;
use crate::records::view::{LEDGER, VerdictView};
use crate::tools::tally::ledger::read;
use crate::tools::tally::select::{self, Select};

/// An input that can be read more than once.
enum Again {
    Path(String),
    Copied { name: String, file: std::fs::File },
}

impl Again {
    fn of(source: Source) -> Result<Again> {
        if let Source::Path(p) = &source
            && p != "-"
            && std::fs::metadata(p).is_ok_and(|m| m.is_file())
        {
            return Ok(Again::Path(p.clone()));
        }
        let (name, mut reader) = source.open()?;
        let mut file =
            tempfile::tempfile().context("a temporary file to read standard input twice")?;
        std::io::copy(&mut reader, &mut file).with_context(|| format!("{name}: cannot read"))?;
        Ok(Again::Copied { name, file })
    }

    fn source(&self) -> Result<Source> {
        Ok(match self {
            Again::Path(p) => Source::Path(p.clone()),
            Again::Copied { name, file } => {
                let mut file = file.try_clone()?;
                file.seek(SeekFrom::Start(0))?;
                Source::Open {
                    name: name.clone(),
                    reader: Box::new(file),
                }
            }
        })
    }
}

/// The panel a record belongs to, as the ledger's count keys it.
fn key<'a>(rec: &'a VerdictView) -> &'a str {
    if rec.run.is_empty() {
        &rec.candidate
    } else {
        &rec.run
    }
}

/// What the first reading learns of a panel.
#[derive(Default)]
struct Facts {
    run: String,
    candidate: String,
    seated: bool,
}

/// Calls `each` with every record of the panels `select` keeps; returns how many. Panels left
/// out by `--since` for want of a time are said on standard error.
pub fn each_kept(
    inputs: Vec<Source>,
    select: &Select,
    mut skip: Option<&mut dyn FnMut(anyhow::Error)>,
    mut each: impl FnMut(&VerdictView, &dyn Fn() -> String) -> Result<()>,
) -> Result<u64> {
    let inputs = inputs
        .into_iter()
        .map(Again::of)
        .collect::<Result<Vec<_>>>()?;
    let sources = || inputs.iter().map(Again::source).collect::<Result<Vec<_>>>();
    let mut panels: HashMap<String, Facts> = HashMap::new();
    // A line skipped is counted once, on the second reading.
    let mut pass = |_: anyhow::Error| {};
    let first: Option<&mut dyn FnMut(anyhow::Error)> = match skip {
        Some(_) => Some(&mut pass),
        None => None,
    };
    read::each_line(sources()?, LEDGER, first, |rec, _, _| {
        let facts = panels.entry(key(rec).to_string()).or_default();
        if facts.run.is_empty() {
            facts.run = rec.run.to_string();
        }
        if rec.canary.is_none() && facts.candidate.is_empty() {
            facts.candidate = rec.candidate.to_string();
        }
        facts.seated |= select.seat(&rec.seat);
        Ok(())
    })?;
    let mut untimed = 0;
    let kept: HashSet<String> = panels
        .into_iter()
        .filter(|(_, f)| {
            let facts = select::Panel {
                run: &f.run,
                time: select.timed().then(|| select::run_time(&f.run)).flatten(),
                candidate: &f.candidate,
                seated: f.seated,
            };
            select.keeps(&facts, &mut untimed)
        })
        .map(|(k, _)| k)
        .collect();
    if untimed > 0 {
        eprintln!(
            "panel-tally: ledger: {untimed} panel(s) left out by --since: their run folders are \
                gone and not named by panel, so their times are unknown"
        );
    }
    let mut n = 0;
    read::each_line(sources()?, LEDGER, skip.take(), |rec, _, at| {
        if kept.contains(key(rec)) {
            n += 1;
            each(rec, at)?;
        }
        Ok(())
    })?;
    Ok(n)
}
