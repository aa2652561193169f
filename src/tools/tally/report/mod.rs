//! The text report, as the seed's judge-panel script prints it, and the sink that writes each
//! tally as it closes, as text, JSON or Markdown.

pub mod json;
pub mod markdown;

use std::io::{self, Write};

use anyhow::Result;
use serde::Serialize;

use crate::records::Decision;
use crate::records::printable::inline;
use crate::records::tally::{JudgeRow, Tally};
use crate::records::tally::{Summary, Totals};
pub use crate::tools::tally::wording::{
    early_panel_line, panel_line, panels_line, reason_column, reason_or_cause, status_column,
    uncaused_line,
};
use json::tally_json;

/// The form of a report: `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

impl Format {
    /// What stands between two reports of one stream (many panels, a history's panels).
    pub fn between(self) -> &'static str {
        match self {
            Format::Text => "\n",
            Format::Json => "",
            Format::Markdown => "\n---\n\n",
        }
    }
}

/// A report of panel-tally, in each form `--format` names: the one place a form is chosen.
/// A new form is a method here and its arm in [`Report::write`] (and [`Format::between`]);
/// then each report renders it, or takes a default the method gives from its other forms.
pub trait Report {
    /// Its records, one compact JSON line each.
    fn write_json(&self, out: &mut dyn Write) -> Result<()>;
    /// Its text for people, control characters escaped (a record's text is hostile).
    fn write_text(&self, out: &mut dyn Write) -> Result<()>;
    /// GitHub Markdown, record text escaped.
    fn write_markdown(&self, out: &mut dyn Write) -> Result<()>;

    fn write(&self, format: Format, out: &mut dyn Write) -> Result<()> {
        match format {
            Format::Json => self.write_json(out),
            Format::Text => self.write_text(out),
            Format::Markdown => self.write_markdown(out),
        }
    }
}

/// One judge's line, as `printf '%-12s %-10s %s\n'` pads it: by bytes, never cut.
/// A name or reason with a newline or an escape sequence in it is shown escaped: no field
/// starts a line of its own or redraws the line (a deliberate difference from the script).
pub fn judge_line(row: &JudgeRow) -> Vec<u8> {
    judge_line_in(row, NAME_WIDTH)
}

/// The script's width of the name column; a panel with a longer name is padded to that name
/// (a deliberate difference: the script's columns broke there).
const NAME_WIDTH: usize = 12;

/// One judge's line with the name column `width` bytes wide.
fn judge_line_in(row: &JudgeRow, width: usize) -> Vec<u8> {
    let name = inline(row.judge.trim_end_matches('\n'));
    let mut line = Vec::with_capacity(64);
    pad(&mut line, &name, width);
    line.push(b' ');
    pad(&mut line, &inline(status_column(row)), 10);
    line.push(b' ');
    let (text, ours) = reason_or_cause(row);
    let reason = inline(text);
    // A judge's own reason is the finding, shown whole; our cause of an abstention is cut.
    match ours {
        true => line.extend_from_slice(cut(&reason, CAUSE_WIDTH).as_bytes()),
        false => line.extend_from_slice(reason.as_bytes()),
    }
    line.push(b'\n');
    line
}

/// Bytes of an abstention's cause shown on its judge's line; the record keeps it whole.
pub(crate) const CAUSE_WIDTH: usize = 160;

/// `text` cut to at most `width` bytes at a character's edge, `…` marking the cut.
pub(crate) fn cut(text: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= width {
        return text.into();
    }
    let mut end = width;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

fn pad(out: &mut Vec<u8>, text: &str, width: usize) {
    out.extend_from_slice(text.as_bytes());
    out.resize(out.len() + width.saturating_sub(text.len()), b' ');
}

/// The whole text report of one panel: the judges, a blank line, PANEL, the run folders.
pub fn write_report<W: Write>(out: &mut W, t: &Tally) -> io::Result<()> {
    let width = t
        .judges
        .iter()
        .map(|r| inline(r.judge.trim_end_matches('\n')).len())
        .fold(NAME_WIDTH, usize::max);
    for row in &t.judges {
        out.write_all(&judge_line_in(row, width))?;
    }
    writeln!(out)?;
    let panel = early_panel_line(t);
    let panel = panel.unwrap_or_else(|| panel_line(&t.counts, &t.abstentions, t.missing));
    writeln!(out, "{panel}")?;
    if let Some(line) = uncaused_line(t, &|j| inline(j).into_owned()) {
        writeln!(out, "{line}")?;
    }
    if let Some(line) = sides_line(t) {
        writeln!(out, "{line}")?;
    }
    if t.agreed {
        writeln!(out, "{}", decision_line(t))?;
    }
    if let Some(line) = cost_line(t) {
        writeln!(out, "{line}")?;
    }
    for c in &t.canaries {
        let said = c.verdict.map_or(c.status.as_str(), |v| v.as_str());
        let mark = if c.hit { "hit" } else { "MISSED" };
        writeln!(
            out,
            "canary {} ({}): {said}, expected {}: {mark}",
            inline(c.judge),
            inline(c.seat),
            c.canary.as_str()
        )?;
    }
    if !t.canary_missed.is_empty() {
        let seats: Vec<_> = t.canary_missed.iter().map(|s| inline(s)).collect();
        writeln!(out, "CANARY MISSED by {}", seats.join(", "))?;
    }
    for run in &t.runs {
        writeln!(out, "verdicts: {}", inline(run))?;
    }
    Ok(())
}

/// Under a budget: what the judges launched cost against what they were estimated to.
fn cost_line(t: &Tally) -> Option<String> {
    let u = t.usage.as_ref()?;
    let estimate = u.estimate_usd?;
    let spent = u
        .cost_usd
        .map_or("no figure".to_string(), |c| format!("${c:.6}"));
    Some(format!(
        "COST: {spent} spent against ${estimate:.6} estimated (--budget-usd; the judges launched)"
    ))
}

/// The seed script's own report, byte for byte, for a drop-in (`--format seed`): its judges in
/// the order its `"$OUT"/*.json` lists them (their files' names, as bytes), padded as `printf
/// '%-12s
/// %-10s %s\n'` pads, every judge without a verdict `unreadable` (or the word it said) with the
/// reason only a judge gave, the script's three PANEL lines, the run folders. Nothing the script
/// lacks; control characters in a field are still escaped.
pub fn write_seed_report<W: Write>(out: &mut W, t: &Tally) -> io::Result<()> {
    let mut rows: Vec<&JudgeRow> = t.judges.iter().collect();
    // The glob sorts the files' names: `edges-null.json` before `edges.json`.
    let file = |r: &JudgeRow| [r.judge.as_bytes(), b".json"].concat();
    rows.sort_by_cached_key(|r| file(r));
    for row in rows {
        let word = match (row.verdict, row.said) {
            (Some(v), _) => v.as_str(),
            (None, Some(said)) if !said.is_empty() => said,
            (None, _) => "unreadable",
        };
        let reason = match reason_or_cause(row) {
            (_, true) => "",
            (reason, false) => reason,
        };
        let mut line = Vec::with_capacity(64);
        pad(
            &mut line,
            &inline(row.judge.trim_end_matches('\n')),
            NAME_WIDTH,
        );
        line.push(b' ');
        pad(&mut line, &inline(word), 10);
        line.push(b' ');
        line.extend_from_slice(inline(reason).as_bytes());
        line.push(b'\n');
        out.write_all(&line)?;
    }
    writeln!(out)?;
    // Every judge without a verdict came back unreadable to the script: it had a file for each.
    writeln!(out, "{}", panel_line(&t.counts, &[], 0))?;
    for run in &t.runs {
        writeln!(out, "verdicts: {}", inline(run))?;
    }
    Ok(())
}

/// Which side of a split is which, a line the script has none of: `sides: breaks: edges;
/// holds: correctness, evidence`. Only for a split.
pub fn sides_line(t: &Tally) -> Option<String> {
    use crate::records::Verdict;
    if t.counts.holds == 0 || t.counts.breaks == 0 {
        return None;
    }
    let side = |v: Verdict| {
        let names: Vec<String> = t
            .judges
            .iter()
            .filter(|j| j.verdict == Some(v))
            .map(|j| inline(j.judge).into_owned())
            .collect();
        format!("{}: {}", v.as_str(), names.join(", "))
    };
    Some(format!(
        "sides: {}; {}",
        side(Verdict::Breaks),
        side(Verdict::Holds)
    ))
}

/// Under `--agree N`, what the panel decided and why: `decision: pass (2 of 3 say holds;
/// --agree 2)`. The seed's default panel has no such line, so it is printed only here.
pub fn decision_line(t: &Tally) -> String {
    let c = &t.counts;
    let (word, why) = match t.decision() {
        Decision::Pass => ("pass", format!("{} of {} say holds", c.holds, c.judges)),
        Decision::Fail => ("fail", format!("{} of {} say holds", c.holds, c.judges)),
        Decision::NoDecision => (
            "none",
            format!(
                "{} of {} say holds and {} gave no verdict, which could decide it",
                c.holds, c.judges, c.abstained
            ),
        ),
    };
    format!("decision: {word} ({why}; --agree {})", t.threshold)
}

// ---------------------------------------------------------------------------------------------
// Writing tallies.

/// Writes each tally as it closes, and keeps the totals for the summary.
pub struct Sink<W: Write> {
    pub out: W,
    /// One tally's JSON, reused.
    buf: Vec<u8>,
    format: Format,
    /// Text in the seed script's own form (`--format seed`).
    seed: bool,
    eager: bool,
    /// Markdown panels held back until the end, for the decision over all of them to come first.
    held: String,
    pub totals: Totals,
    /// What the last panel written decided.
    pub last: Decision,
}

impl<W: Write> Sink<W> {
    pub fn new(out: W, format: Format, eager: bool) -> Sink<W> {
        Sink {
            out,
            buf: Vec::new(),
            format,
            seed: false,
            eager,
            held: String::new(),
            totals: Totals::default(),
            last: Decision::Pass,
        }
    }

    /// Text in the seed script's own form.
    pub fn seed(mut self, seed: bool) -> Sink<W> {
        self.seed = seed;
        self
    }

    pub fn tally(&mut self, t: &Tally) -> Result<()> {
        let decision = t.decision();
        match self.format {
            Format::Json => {
                self.buf.clear();
                tally_json(&mut self.buf, t);
                self.out.write_all(&self.buf)?;
            }
            Format::Markdown => {
                if self.totals.panels > 0 {
                    self.held.push_str(self.format.between());
                }
                self.held.push_str(&markdown::verdicts(t));
            }
            Format::Text => {
                if self.totals.panels > 0 {
                    self.out.write_all(self.format.between().as_bytes())?;
                }
                match self.seed {
                    true => write_seed_report(&mut self.out, t)?,
                    false => write_report(&mut self.out, t)?,
                }
            }
        }
        self.totals.add(decision);
        self.last = decision;
        if self.eager {
            self.out.flush()?;
        }
        Ok(())
    }

    /// The summary that closes a stream of many panels.
    pub fn summary(&mut self) -> Result<()> {
        match self.format {
            Format::Json => {
                let summary = Summary {
                    kind: "tally-summary",
                    totals: &self.totals,
                };
                write_json(&mut self.out, &summary)?;
            }
            Format::Markdown => self
                .out
                .write_all(markdown::each(&self.totals).as_bytes())?,
            Format::Text => {
                writeln!(self.out)?;
                writeln!(self.out, "{}", panels_line(&self.totals))?;
            }
        }
        Ok(())
    }

    /// Writes what was held back (Markdown panels, after their summary) and flushes.
    pub fn end(&mut self) -> Result<()> {
        self.out.write_all(self.held.as_bytes())?;
        self.held.clear();
        self.out.flush()?;
        Ok(())
    }
}

/// One compact JSON line. The write error stays an `io::Error`, so that a broken pipe is
/// still recognised as one (a `serde_json::Error` hides it from the error chain).
fn write_json<W: Write, T: Serialize>(out: &mut W, rec: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, rec).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Status, Verdict};
    use crate::tools::tally::count::tests::{abstained, ballot, counts};

    #[test]
    fn panel_line_keeps_the_scripts_three_forms() {
        assert_eq!(
            panel_line(&counts(0, 3, 0), &[], 0),
            "PANEL: unanimous — all 3 say breaks."
        );
        assert_eq!(
            panel_line(&counts(3, 0, 0), &[], 0),
            "PANEL: unanimous — all 3 say holds."
        );
        assert_eq!(
            panel_line(&counts(2, 1, 0), &[], 0),
            "PANEL: split 1-2 — read the reasons yourself. The disagreement is the finding."
        );
        assert_eq!(
            panel_line(&counts(0, 2, 1), &[abstained(Status::Unreadable)], 0),
            "PANEL: 2 breaks / 0 holds, and 1 judge(s) came back unreadable."
        );
    }

    #[test]
    fn panel_line_names_abstentions_the_script_could_not_see() {
        let a = [abstained(Status::Unreadable), abstained(Status::Timeout)];
        assert_eq!(
            panel_line(&counts(1, 1, 2), &a, 0),
            "PANEL: 1 breaks / 1 holds, and 2 judge(s) gave no verdict (1 timeout, 1 unreadable)."
        );
        assert_eq!(
            panel_line(&counts(2, 0, 1), &[], 1),
            "PANEL: 0 breaks / 2 holds, and 1 judge(s) gave no verdict (1 missing)."
        );
    }

    #[test]
    fn judge_lines_pad_by_bytes_and_never_cut() {
        let mut b = ballot("édges", Some(Verdict::Holds), Status::Ok).judge;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "édges       holds      because\n"
        );
        b.judge = "a-very-long-judge-name";
        b.verdict = None;
        b.status = Status::Timeout;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "a-very-long-judge-name timeout    no answer in 60 s\n"
        );
        let why = "no answer ".repeat(40);
        b.cause = Some(&why);
        let line = String::from_utf8(judge_line(&b)).unwrap();
        assert!(line.ends_with("…\n") && line.len() < 200, "{line}");
        b.status = Status::Unreadable;
        b.reason = None;
        b.cause = Some("no JSON object\u{1b}[2J in the reply");
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "a-very-long-judge-name unreadable no JSON object\\x1b[2J in the reply\n"
        );
        b.cause = None;
        assert_eq!(
            String::from_utf8(judge_line(&b)).unwrap(),
            "a-very-long-judge-name unreadable \n"
        );
        // An unreadable judge's own long reason (a word outside holds and breaks) is shown
        // whole, as the script prints it; only our cause is cut.
        let long = "maybe ".repeat(40);
        b.reason = Some(&long);
        b.cause = Some(&why);
        assert!(
            String::from_utf8(judge_line(&b))
                .unwrap()
                .ends_with("maybe \n")
        );
    }
}
