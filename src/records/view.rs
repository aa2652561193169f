//! A verdict (or pairwise) record read in place: the one shape every reader of verdicts takes —
//! panel-tally's count, the ledger, the history, early stopping's and a budget's costs. Text
//! is borrowed from the line wherever it has no escapes, so reading a record allocates nothing
//! the reader does not keep; the types are [`VerdictRecord`]'s, so a line either tool refuses
//! the other refuses too.

use std::borrow::Cow;

use anyhow::{Result, bail};
use serde::Deserialize;

use crate::records::pairwise::{Preference, Shown};
use crate::records::{self, Status, Usage, Verdict, VerdictRecord};

/// The record types a verdict panel's history holds.
pub const VERDICTS: &[&str] = &["verdict"];
/// The record types a ledger reads.
pub const LEDGER: &[&str] = &["verdict", "pairwise"];

/// A verdict or pairwise record, its text borrowed from the line.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerdictView<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub judge: Cow<'a, str>,
    #[serde(borrow)]
    pub lens: Cow<'a, str>,
    #[serde(borrow)]
    pub seat: Cow<'a, str>,
    #[serde(borrow)]
    pub harness: Cow<'a, str>,
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub family: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub candidate: Cow<'a, str>,
    /// The name given for the candidate (`panel-judge --name`).
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    pub verdict: Option<Said>,
    #[serde(default, borrow)]
    pub reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub confidence: Option<f64>,
    pub status: Status,
    #[serde(default, borrow)]
    pub cause: Option<Cow<'a, str>>,
    /// The word an unreadable judge gave outside holds and breaks.
    #[serde(default, borrow)]
    pub said: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub excerpt: Option<Cow<'a, str>>,
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub exit_code: Option<i32>,
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

impl VerdictView<'_> {
    /// Whether it is a pairwise record.
    pub fn pairwise(&self) -> bool {
        self.kind == "pairwise"
    }

    /// The answer as a category: holds or A is `Verdict::Holds`, breaks or B `Verdict::Breaks`.
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
                shown(&self.judge),
                shown(other)
            ),
        }
    }
}

fn shown(s: &str) -> Cow<'_, str> {
    crate::records::printable::inline(s)
}

/// Parses one line as a record of one of the `kinds` (verdict, pairwise), or says precisely
/// why it is not one; `reader`, when given, names who reads only those kinds. A record that
/// contradicts itself (a verdict with an abstainer's status, `ok` without one, a preference in
/// a verdict record) is refused rather than guessed.
pub fn parse<'a>(
    line: &'a str,
    at: &dyn Fn() -> String,
    kinds: &[&str],
    reader: Option<&str>,
) -> Result<VerdictView<'a>> {
    let rec = match records::strict::from_str::<VerdictView>(line) {
        Ok(rec) if line.trim_start().starts_with('{') => rec,
        Ok(_) => bail!("{}: not a JSON object", at()),
        Err(e) => {
            // Read again, loosely, only to say precisely what is wrong with the line.
            match kinds {
                [_] => drop(records::parse::<VerdictRecord>(line, at, kinds)?),
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
        let only = reader
            .map(|r| format!("; {r} reads {} records only", kinds.join(" and ")))
            .unwrap_or_default();
        bail!(
            "{}: a {} record; {}{only}",
            at(),
            shown(&rec.kind),
            records::destination(&rec.kind),
        );
    }
    if let Some(v) = rec.verdict.filter(|v| v.pairwise() != rec.pairwise()) {
        bail!(
            "{}: judge {:?} of a {} record says {}",
            at(),
            shown(&rec.judge),
            rec.kind,
            v.as_str()
        );
    }
    match (rec.verdict, rec.status) {
        (Some(v), s) if s != Status::Ok => bail!(
            "{}: judge {:?} says {} but its status is {}",
            at(),
            shown(&rec.judge),
            v.as_str(),
            s.as_str()
        ),
        (None, Status::Ok) => bail!(
            "{}: judge {:?} has status ok but no verdict",
            at(),
            shown(&rec.judge)
        ),
        _ => Ok(rec),
    }
}

/// Reads a line as a record if it is one, for a reader that only estimates from a history (a
/// seat's cost, its answers' length): any other line is passed over.
pub fn loosely(line: &str) -> Option<VerdictView<'_>> {
    records::strict::from_str::<VerdictView>(line).ok()
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
        let rec = parse(OK, &at, VERDICTS, None).unwrap();
        assert_eq!(
            (rec.answer(), rec.expected(&at).unwrap()),
            (Some(Verdict::Holds), None)
        );
        let canary = OK.replace("\"run\"", "\"canary\":\"breaks\",\"run\"");
        let rec = parse(&canary, &at, VERDICTS, None).unwrap();
        assert_eq!(rec.expected(&at).unwrap(), Some(Verdict::Breaks));
        let bad = OK.replace("\"run\"", "\"canary\":\"maybe\\u001b\",\"run\"");
        let err = parse(&bad, &at, VERDICTS, None)
            .unwrap()
            .expected(&at)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"h: line 2: judge "a" has canary "maybe\\x1b": it must be holds or breaks"#
        );
    }

    #[test]
    fn another_record_type_is_refused_naming_its_tool() {
        let err = parse(r#"{"type":"review","x":1}"#, &at, VERDICTS, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "h: line 2: a review record; reviews go through panel-merge"
        );
        let tally = OK.replace("\"verdict\",\"judge\"", "\"tally\",\"judge\"");
        let err = parse(&tally, &at, VERDICTS, Some("the ledger")).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("not by the tools; the ledger reads verdict records only"),
            "{err}"
        );
        let err = parse(&OK.replace("\"holds\"", "null"), &at, VERDICTS, None).unwrap_err();
        assert!(
            err.to_string().contains("status ok but no verdict"),
            "{err}"
        );
        let err = parse(&OK.replace("\"holds\"", "\"A\""), &at, LEDGER, None).unwrap_err();
        assert!(
            err.to_string().contains("of a verdict record says A"),
            "{err}"
        );
    }

    #[test]
    fn a_field_of_the_wrong_type_is_refused_by_every_reader() {
        // The view reads VerdictRecord's types: what panel-tally refuses, the ledger refuses.
        let bad = OK.replace("\"run\"", "\"attempts\":\"two\",\"run\"");
        let err = parse(&bad, &at, LEDGER, Some("the ledger")).unwrap_err();
        assert!(err.to_string().contains("does not fit"), "{err}");
        assert!(loosely(&bad).is_none());
        assert_eq!(
            loosely(OK).map(|r| r.seat.into_owned()).as_deref(),
            Some("claude:haiku")
        );
    }
}
