//! Reading verdict records into ballots, line by line, each record read in place
//! ([`VerdictView`]) and handed to the counting as it is read.

use anyhow::{Result, bail};

use crate::records::input::{Input, Source};
use crate::records::tally::JudgeRow;
use crate::records::view::{self, VerdictView};
use crate::tools::tally::count::CountedRecord;

/// Reads the ballots of every input in order, calling `each` with each ballot and where it
/// was read (`file: line N`). The first bad line stops the reading with an error naming it.
pub fn ballots(
    inputs: Vec<Source>,
    mut each: impl FnMut(&CountedRecord, &dyn Fn() -> String) -> Result<()>,
) -> Result<()> {
    let mut buf = String::new();
    for source in inputs {
        let mut input = Input::from_source(source)?;
        while input.next_line(&mut buf)? {
            if buf.trim().is_empty() {
                continue;
            }
            let at = || input.at();
            let rec = parse_verdict(&buf, &at)?;
            each(&verdict_ballot(&rec, &at)?, &at)?;
        }
    }
    Ok(())
}

/// Parses a verdict record with one pass over the line; only a bad line is read again, to say
/// precisely what is wrong with it.
fn parse_verdict<'a>(line: &'a str, at: &dyn Fn() -> String) -> Result<VerdictView<'a>> {
    view::parse(line, at, view::VERDICTS, None)
}

/// A verdict record as a ballot. A verdict with an abstainer's status, or an `ok` without a
/// verdict, contradicts itself and is refused rather than guessed.
fn verdict_ballot<'a>(
    rec: &'a VerdictView<'_>,
    at: &dyn Fn() -> String,
) -> Result<CountedRecord<'a>> {
    if let Some(c) = rec.confidence.filter(|c| !(0.0..=1.0).contains(c)) {
        bail!(
            "{}: judge {:?} has confidence {c}, outside 0 to 1",
            at(),
            rec.judge
        );
    }
    Ok(CountedRecord {
        candidate: &rec.candidate,
        panel_size: rec.panel_size,
        usage: rec.usage.as_ref(),
        run: &rec.run,
        canary: rec.expected(at)?,
        judge: JudgeRow {
            judge: &rec.judge,
            lens: &rec.lens,
            seat: &rec.seat,
            family: rec.family.as_deref(),
            verdict: rec.answer(),
            status: rec.status,
            reason: rec.reason.as_deref(),
            confidence: rec.confidence,
            cause: rec.cause.as_deref(),
            said: rec.said.as_deref(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{self, VerdictRecord};
    use crate::tools::tally::count::tests::at;

    fn verdict_line(judge: &str) -> String {
        format!(
            r#"{{"type":"verdict","judge":"{judge}","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","status":"ok"}}"#
        )
    }

    /// What the reader makes of `text`, as (judge, line) pairs and the error, if any.
    fn read_through(text: &[u8]) -> (Vec<(String, u64)>, Option<String>) {
        let source = Source::Open {
            name: "t".into(),
            reader: Box::new(std::io::Cursor::new(text.to_vec())),
        };
        let mut got = Vec::new();
        let error = ballots(vec![source], |b, at| {
            let line = at().rsplit_once("line ").unwrap().1.parse().unwrap();
            got.push((b.judge.judge.to_string(), line));
            Ok(())
        })
        .err()
        .map(|e| e.to_string());
        (got, error)
    }

    #[test]
    fn lines_are_read_in_order_with_their_numbers() {
        let text = format!(
            "{}\r\n{}\n\n  \n{}\n{}",
            verdict_line("a"),
            verdict_line("b"),
            verdict_line("c"),
            verdict_line("d")
        );
        let want: Vec<(String, u64)> = [("a", 1), ("b", 2), ("c", 5), ("d", 6)]
            .iter()
            .map(|(j, n)| (j.to_string(), *n))
            .collect();
        assert_eq!(read_through(text.as_bytes()), (want, None));
        let many: String = (0..500)
            .map(|i| verdict_line(&format!("j{i}")) + "\n")
            .collect();
        let (got, err) = read_through(many.as_bytes());
        assert_eq!(err, None);
        assert_eq!(got.len(), 500);
        assert!(
            got.iter()
                .enumerate()
                .all(|(i, (j, n))| *j == format!("j{i}") && *n == i as u64 + 1)
        );
    }

    #[test]
    fn a_bad_line_stops_the_reading_after_the_lines_before_it() {
        let mut text = format!("{}\n{}\n", verdict_line("a"), verdict_line("b")).into_bytes();
        text.extend_from_slice(b"\xff\n");
        text.extend_from_slice(verdict_line("c").as_bytes());
        let (got, err) = read_through(&text);
        assert_eq!(got.len(), 2);
        assert_eq!(err.as_deref(), Some("t: line 3: not UTF-8"));
        let (got, err) = read_through(b"\n{\"type\":\"review\"}\n");
        assert!(got.is_empty());
        assert_eq!(
            err.as_deref(),
            Some("t: line 2: a review record; reviews go through panel-merge")
        );
        assert_eq!(read_through(b""), (vec![], None));
    }

    #[test]
    fn the_view_reads_what_the_record_reads() {
        let lines = [
            r#"{"type":"verdict","judge":"j\n","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","reason":"a \"b\"","status":"ok","usage":{"inputTokens":3},"panelSize":2,"run":"r"}"#,
            r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":null,"status":"timeout","cause":"slow"}"#,
        ];
        for line in lines {
            let rec: VerdictRecord = records::parse(line, &at, &["verdict"]).unwrap();
            let view = parse_verdict(line, &at).unwrap();
            let b = verdict_ballot(&view, &at).unwrap();
            assert_eq!(b.judge.judge, rec.judge);
            assert_eq!(b.judge.reason, rec.reason.as_deref());
            assert_eq!(b.judge.cause, rec.cause.as_deref());
            assert_eq!(b.usage, rec.usage.as_ref());
            assert_eq!((b.panel_size, b.run), (rec.panel_size, rec.run.as_str()));
        }
        // Wrong types are refused as VerdictRecord refuses them.
        let bad = r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":null,"status":"timeout","attempts":-1}"#;
        assert!(records::parse::<VerdictRecord>(bad, &at, &["verdict"]).is_err());
        let err = parse_verdict(bad, &at).unwrap_err().to_string();
        assert!(
            err.starts_with("in: line 7: a verdict record that does not fit: invalid value"),
            "{err}"
        );
    }

    #[test]
    fn a_record_that_contradicts_itself_is_refused() {
        let line = r#"{"type":"verdict","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":"holds","status":"timeout"}"#;
        assert_eq!(
            parse_verdict(line, &at).unwrap_err().to_string(),
            "in: line 7: judge \"j\" says holds but its status is timeout"
        );
    }

    #[test]
    fn a_record_of_another_type_names_its_tool() {
        let line = r#"{"type":"tally","judge":"j","lens":"l","seat":"s","harness":"h","candidate":"c","verdict":null,"status":"ok"}"#;
        let err = parse_verdict(line, &at).unwrap_err().to_string();
        assert!(err.starts_with("in: line 7: a tally record; "), "{err}");
        let err = parse_verdict(r#"{"type":"review"}"#, &at)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "in: line 7: a review record; reviews go through panel-merge"
        );
    }
}
