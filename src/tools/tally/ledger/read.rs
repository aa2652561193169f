//! Reading a history of verdict (or pairwise) records for the ledger, one line at a time, text
//! borrowed from the line: only what the ledger counts is kept.
//!
//! A ledger reads verdict records, or pairwise records (panel-judge --contract pairwise), one
//! kind a history. Another record type in the history stops it at that line with the tool's
//! own words for a record of the wrong type (exit 2): a history that mixes record types is
//! filtered first (`jq -c 'select(.type == "verdict")'`).

use std::borrow::Cow;

use anyhow::{Result, bail};
use serde::Deserialize;

use crate::records::input::{Input, Source};
use crate::records::pairwise::{Preference, Shown};
use crate::records::{self, Status, Usage, Verdict, VerdictRecord};

/// The fields of a verdict record the ledger counts, and the canary's expected answer.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub judge: Cow<'a, str>,
    #[serde(borrow)]
    pub lens: Cow<'a, str>,
    #[serde(borrow)]
    pub seat: Cow<'a, str>,
    #[serde(borrow)]
    #[allow(dead_code)]
    harness: Cow<'a, str>,
    #[serde(default, borrow)]
    pub family: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub candidate: Cow<'a, str>,
    /// The name given for the candidate (`panel-judge --name`).
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    pub verdict: Option<Said>,
    pub status: Status,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub panel_size: usize,
    #[serde(default, borrow)]
    pub run: Cow<'a, str>,
    /// `holds` or `breaks` on a canary's record (a candidate whose answer is known): what the
    /// judge should have said. A canary is scored, never counted in a panel.
    #[serde(default, borrow)]
    pub canary: Option<Cow<'a, str>>,
    /// A pairwise record's answer in each order it was shown.
    #[serde(default)]
    pub orders: Option<Vec<OrderSeen>>,
}

/// A verdict or a preference, as a record says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Said {
    #[serde(rename = "holds")]
    Holds,
    #[serde(rename = "breaks")]
    Breaks,
    A,
    B,
}

impl Said {
    fn pairwise(self) -> bool {
        matches!(self, Said::A | Said::B)
    }

    fn as_str(self) -> &'static str {
        match self {
            Said::Holds => "holds",
            Said::Breaks => "breaks",
            Said::A => "A",
            Said::B => "B",
        }
    }
}

/// A pairwise record's answer in one order.
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct OrderSeen {
    pub shown: Shown,
    pub verdict: Option<Preference>,
}

impl Seen<'_> {
    /// Whether it is a pairwise record.
    pub fn pairwise(&self) -> bool {
        self.kind == "pairwise"
    }

    /// The answer as the ledger counts it, a category: holds or A is 0 (`Verdict::Holds`),
    /// breaks or B is 1.
    pub fn answer(&self) -> Option<Verdict> {
        self.verdict.map(|s| match s {
            Said::Holds | Said::A => Verdict::Holds,
            Said::Breaks | Said::B => Verdict::Breaks,
        })
    }

    /// A pairwise judge's answers: how many preferred the answer shown first, of how many it
    /// gave (0, 1 or 2).
    pub fn first_shown(&self) -> (u8, u8) {
        let mut out = (0, 0);
        for o in self.orders.iter().flatten() {
            if let Some(v) = o.verdict {
                out.1 += 1;
                out.0 += u8::from(v == o.shown.first());
            }
        }
        out
    }

    /// The canary's expected answer, if this record is a canary's.
    pub fn expected(&self, at: &dyn Fn() -> String) -> Result<Option<Verdict>> {
        match self.canary.as_deref() {
            None => Ok(None),
            Some("holds") => Ok(Some(Verdict::Holds)),
            Some("breaks") => Ok(Some(Verdict::Breaks)),
            Some(other) => bail!(
                "{}: judge {:?} has canary {:?}: it must be holds or breaks",
                at(),
                other_text(&self.judge),
                other_text(other)
            ),
        }
    }
}

fn other_text(s: &str) -> Cow<'_, str> {
    crate::records::text::inline(s)
}

/// The record types the history of `panel-tally --history` holds.
pub const VERDICTS: &[&str] = &["verdict"];
/// The record types a ledger reads.
pub const LEDGER: &[&str] = &["verdict", "pairwise"];

/// Parses one line as a verdict record, or says precisely why it is not one.
pub fn parse<'a>(line: &'a str, at: &dyn Fn() -> String) -> Result<Seen<'a>> {
    parse_as(line, at, VERDICTS)
}

/// Parses one line as a record of one of the `kinds` (verdict, pairwise), or says precisely
/// why it is not one.
pub fn parse_as<'a>(line: &'a str, at: &dyn Fn() -> String, kinds: &[&str]) -> Result<Seen<'a>> {
    let rec = match records::strict::from_str::<Seen>(line) {
        Ok(rec) if line.trim_start().starts_with('{') => rec,
        Ok(_) => bail!("{}: not a JSON object", at()),
        Err(e) => {
            match kinds.len() {
                1 => drop(records::parse::<VerdictRecord>(line, at, kinds)?),
                _ => drop(records::parse::<serde_json::Value>(line, at, kinds)?),
            }
            bail!(
                "{}: a {} record that does not fit: {e}",
                at(),
                kinds.join(" or ")
            )
        }
    };
    if !kinds.contains(&rec.kind.as_ref()) {
        bail!(
            "{}: a {} record; {}; the ledger reads {} records only",
            at(),
            other_text(&rec.kind),
            records::destination(&rec.kind),
            kinds.join(" and ")
        );
    }
    if let Some(v) = rec.verdict.filter(|v| v.pairwise() != rec.pairwise()) {
        bail!(
            "{}: judge {:?} of a {} record says {}",
            at(),
            other_text(&rec.judge),
            rec.kind,
            v.as_str()
        );
    }
    match (rec.verdict, rec.status) {
        (Some(v), s) if s != Status::Ok => bail!(
            "{}: judge {:?} says {} but its status is {}",
            at(),
            other_text(&rec.judge),
            v.as_str(),
            s.as_str()
        ),
        (None, Status::Ok) => bail!(
            "{}: judge {:?} has status ok but no verdict",
            at(),
            other_text(&rec.judge)
        ),
        _ => Ok(rec),
    }
}

/// Calls `each` with every verdict record of the inputs, in order, with where it was read.
/// Blank lines are skipped; any other bad line stops the reading with an error naming it.
pub fn each_record(
    inputs: Vec<Source>,
    mut each: impl FnMut(&Seen, &dyn Fn() -> String) -> Result<()>,
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
    mut each: impl FnMut(&Seen, &str, &dyn Fn() -> String) -> Result<()>,
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
            let rec = match (parse_as(line, &at, kinds), skip.as_deref_mut()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> String {
        "h: line 2".into()
    }

    const OK: &str = r#"{"type":"verdict","judge":"a","lens":"l","seat":"claude:haiku","harness":"claude","candidate":"sha256:1","verdict":"holds","status":"ok","run":"/r"}"#;

    #[test]
    fn a_verdict_record_is_read_and_its_canary_checked() {
        let rec = parse(OK, &at).unwrap();
        assert_eq!(
            (rec.answer(), rec.expected(&at).unwrap()),
            (Some(Verdict::Holds), None)
        );
        let canary = OK.replace("\"run\"", "\"canary\":\"breaks\",\"run\"");
        let rec = parse(&canary, &at).unwrap();
        assert_eq!(rec.expected(&at).unwrap(), Some(Verdict::Breaks));
        let bad = OK.replace("\"run\"", "\"canary\":\"maybe\\u001b\",\"run\"");
        let err = parse(&bad, &at).unwrap().expected(&at).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"h: line 2: judge "a" has canary "maybe\\x1b": it must be holds or breaks"#
        );
    }

    #[test]
    fn another_record_type_is_refused_naming_its_tool() {
        let err = parse(r#"{"type":"review","x":1}"#, &at).unwrap_err();
        assert_eq!(
            err.to_string(),
            "h: line 2: a review record; reviews go through panel-merge"
        );
        let tally = OK.replace("\"verdict\",\"judge\"", "\"tally\",\"judge\"");
        let err = parse(&tally, &at).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("not by the tools; the ledger reads verdict records only"),
            "{err}"
        );
        let err = parse(&OK.replace("\"holds\"", "null"), &at).unwrap_err();
        assert!(
            err.to_string().contains("status ok but no verdict"),
            "{err}"
        );
    }
}
