//! `panel-tally --history`: the panels of the history panel-judge appends to, read back like
//! `llm logs`, each printed as panel-tally prints its records alone, after a header line.
//!
//! A verdict record carries no time and no panel id of its own: a panel is the records of one
//! run folder (`run`), grouped by it wherever parallel runs interleaved their lines, in the
//! order each panel's first line was appended; its time is when its run started, as the run
//! folder's name says (else the folder's modification time, unknown once the folder is gone).
//! Which panels are shown is [`select`]'s, which `--ledger` shares. The history is others' writing:
//! a line that is not a
//! verdict record (a torn line a killed writer left) is skipped and counted in a note, only a
//! FIFO or device is refused (never opened to block), and every text shown is escaped.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use crate::engine::clock;
use anyhow::{Result, bail};

use crate::records::input::Source;
use crate::records::printable::{inline, markdown as md, one_line};
use crate::tools::tally::batch::Batch;
use crate::tools::tally::count::short_seal;
use crate::tools::tally::ledger::read;
use crate::tools::tally::reader;
use crate::tools::tally::report::{Format, Report, Sink};
use crate::tools::tally::select::{self, Filters, Select};

fn format_time(t: i64) -> String {
    clock::format_rfc3339(t)
}

/// One panel of the history: its records' lines, as they were appended.
#[derive(Debug, Default)]
struct HistoryPanel {
    run: String,
    /// The candidate of its first record that is not a canary's; empty when all are.
    candidate: String,
    judges: Vec<String>,
    /// Whether a judge of a seat `--seat` names sat on it.
    seated: bool,
    lines: String,
    time: Option<i64>,
}

/// The history to read: FILE, else where panel-judge writes it.
pub fn path(file: Option<&Path>) -> Result<PathBuf> {
    if let Some(file) = file {
        return Ok(file.to_path_buf());
    }
    let var = |name: &str| std::env::var(name).ok();
    match crate::engine::history::location(None, false, &var) {
        None => bail!("history: none is kept (PANEL_HISTORY=off); --history FILE names one"),
        Some(Err(why)) => bail!("history: {why}"),
        Some(Ok(path)) => Ok(path),
    }
}

/// Opens the history to read: through a symbolic link the user made, but only a regular
/// file, and never waiting on a FIFO's writer.
pub fn open(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = one_line(&path.display().to_string());
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            bail!(
                "history: {shown}: no history there (panel-judge writes one; --history FILE names \
                    another)"
            )
        }
        Err(e) => bail!(
            "history: {shown}: cannot open: {}",
            one_line(&e.to_string())
        ),
    };
    if !file.metadata()?.is_file() {
        bail!("history: {shown}: not a regular file");
    }
    Ok(file)
}

/// Reads the history into its panels, in the order their first lines were appended.
fn panels(
    name: &str,
    file: File,
    select: &Select,
) -> Result<(Vec<HistoryPanel>, u64, Option<String>)> {
    let mut panels: Vec<HistoryPanel> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let (mut skipped, mut first_skipped) = (0u64, None);
    let mut skip = |e: anyhow::Error| {
        skipped += 1;
        first_skipped.get_or_insert_with(|| one_line(&e.to_string()));
    };
    let source = Source::Open {
        name: name.into(),
        reader: Box::new(file),
    };
    read::each_line(
        vec![source],
        crate::records::view::VERDICTS,
        Some(&mut skip),
        |rec, line, _| {
            // Records without a run folder (not panel-judge's) are grouped by their candidate.
            let key = match rec.run.is_empty() {
                true => format!("\0{}", rec.candidate),
                false => rec.run.to_string(),
            };
            let i = *index.entry(key).or_insert_with(|| {
                panels.push(HistoryPanel {
                    run: rec.run.to_string(),
                    time: select::run_time(&rec.run),
                    ..HistoryPanel::default()
                });
                panels.len() - 1
            });
            let p = &mut panels[i];
            if rec.canary.is_none() && p.candidate.is_empty() {
                p.candidate = rec.candidate.to_string();
            }
            p.judges.push(rec.judge.to_string());
            p.seated |= select.seat(&rec.seat);
            p.lines.push_str(line);
            p.lines.push('\n');
            Ok(())
        },
    )?;
    Ok((panels, skipped, first_skipped))
}

/// `panel-tally --history`.
pub fn run(f: &Filters, format: Format, agree: Option<usize>, now: SystemTime) -> Result<ExitCode> {
    let path = path(f.history.as_ref().and_then(|p| p.as_deref()))?;
    let select = Select::new(f, now)?;
    let name = path.display().to_string();
    let (all, skipped, first_skipped) = panels(&name, open(&path)?, &select)?;
    let read = all.len();
    let mut untimed = 0;
    let mut chosen: Vec<HistoryPanel> = all
        .into_iter()
        .filter(|p| !p.candidate.is_empty())
        .filter(|p| f.judges.is_empty() || p.judges.iter().any(|j| f.judges.contains(j)))
        .filter(|p| {
            let facts = select::Panel {
                run: &p.run,
                time: p.time,
                candidate: &p.candidate,
                seated: p.seated,
            };
            select.keeps(&facts, &mut untimed)
        })
        .collect();
    if let Some(n) = f.last {
        chosen.drain(..chosen.len().saturating_sub(n));
    }
    let shown_name = one_line(&name);
    if skipped > 0 {
        eprintln!(
            "panel-tally: history: {shown_name}: {skipped} line(s) skipped, not verdict records; \
                the first: {}",
            first_skipped.unwrap_or_default()
        );
    }
    if untimed > 0 {
        eprintln!(
            "panel-tally: history: {untimed} panel(s) left out by --since: their run folders are \
                gone, so their times are unknown"
        );
    }
    if chosen.is_empty() {
        eprintln!("panel-tally: history: {shown_name}: no panel to show ({read} read)");
    }
    let mut out = io::BufWriter::new(crate::engine::output::stdout());
    let mut shown = 0;
    for p in &chosen {
        match report(p, format, agree) {
            Ok(text) => {
                if shown > 0 {
                    out.write_all(format.between().as_bytes())?;
                }
                Header(p).write(format, &mut out)?;
                out.write_all(&text)?;
                shown += 1;
            }
            Err(e) => eprintln!(
                "panel-tally: history: panel of run {}: not shown: {}",
                inline(&p.run),
                one_line(&e.to_string())
            ),
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The line before a panel's report: its time, candidate and run folder (none in JSON, whose
/// records carry them).
struct Header<'a>(&'a HistoryPanel);

impl Header<'_> {
    fn time_and_seal(&self) -> (String, String) {
        let time = self.0.time.map_or("time unknown".into(), format_time);
        (time, short_seal(&self.0.candidate).to_string())
    }
}

impl Report for Header<'_> {
    fn write_json(&self, _: &mut dyn Write) -> Result<()> {
        Ok(())
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<()> {
        let (time, seal) = self.time_and_seal();
        let (seal, run) = (inline(&seal), inline(&self.0.run));
        Ok(writeln!(out, "== {time} candidate {seal} run {run}")?)
    }

    fn write_markdown(&self, out: &mut dyn Write) -> Result<()> {
        let (time, seal) = self.time_and_seal();
        let (seal, run) = (md(&seal), md(&self.0.run));
        Ok(write!(out, "#### {time}, candidate {seal}, run {run}\n\n")?)
    }
}

/// The panel's report, as `panel-tally` prints its records alone (a rerun's record wins).
fn report(p: &HistoryPanel, format: Format, agree: Option<usize>) -> Result<Vec<u8>> {
    let mut text = Vec::new();
    let mut sink = Sink::new(&mut text, format, false);
    let mut batch = Batch::new(false, agree, true);
    let source = Source::Open {
        name: format!("run {}", inline(&p.run)),
        reader: Box::new(io::Cursor::new(p.lines.clone().into_bytes())),
    };
    reader::ballots(vec![source], |b, at| batch.add(b, at, &mut sink))?;
    batch.finish(&mut sink)?;
    sink.end()?;
    drop(sink);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_rfc_3339_and_read_back() {
        for t in [0, -1, 1_796_115_600, 951_782_400, 4_107_542_399] {
            assert_eq!(
                crate::tools::tally::select::rfc3339(&format_time(t)),
                Some(t),
                "{}",
                format_time(t)
            );
        }
        assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00Z");
    }
}
