//! Reading a history of verdict (or pairwise) records for the ledger, one line at a time, text
//! borrowed from the line: only what the ledger counts is kept.
//!
//! A ledger reads verdict records, or pairwise records (panel-judge --contract pairwise), one
//! kind a history. Another record type in the history stops it at that line with the tool's
//! own words for a record of the wrong type (exit 2): a history that mixes record types is
//! filtered first (`jq -c 'select(.type == "verdict")'`).

use anyhow::Result;

use crate::records::input::{Input, Source};
use crate::records::view::{self, LEDGER, VerdictView};

/// Calls `each` with every verdict record of the inputs, in order, with where it was read.
/// Blank lines are skipped; any other bad line stops the reading with an error naming it.
pub fn each_record(
    inputs: Vec<Source>,
    mut each: impl FnMut(&VerdictView, &dyn Fn() -> String) -> Result<()>,
) -> Result<u64> {
    each_line(inputs, LEDGER, None, |rec, _, at| each(rec, at))
}

/// [`each_record`], with the line each record was read from; a line that is not a verdict
/// record (a torn line, another record type) goes to `skip`, when given, and the reading goes
/// on. A line past the length limit or not UTF-8 still stops it.
pub fn each_line(
    inputs: Vec<Source>,
    kinds: &[&str],
    mut skip: Option<&mut dyn FnMut(anyhow::Error)>,
    mut each: impl FnMut(&VerdictView, &str, &dyn Fn() -> String) -> Result<()>,
) -> Result<u64> {
    let mut buf = String::new();
    let mut n = 0;
    for source in inputs {
        let mut input = Input::from_source(source)?;
        while input.next_line(&mut buf)? {
            let line = buf.strip_suffix('\r').unwrap_or(&buf);
            if line.trim().is_empty() {
                continue;
            }
            let at = || input.at();
            let rec = match (
                view::parse(line, &at, kinds, Some("the ledger")),
                skip.as_deref_mut(),
            ) {
                (Ok(rec), _) => rec,
                (Err(e), Some(skip)) => {
                    skip(e);
                    continue;
                }
                (Err(e), None) => return Err(e),
            };
            each(&rec, line, &at)?;
            n += 1;
        }
    }
    Ok(n)
}
