//! `panel-tally --pr`: the plan and its members' records in, the panel's verdict out, as text
//! for a person or one `pr-panel` record.

pub mod markdown;

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::engine::checkout;
use crate::records::pr::{PanelVerdict, PrVerdictRecord, VERDICT_TYPE};
use crate::rules::pr::aggregate;
use crate::tools::tally::report::{Format, Report};
use crate::tools::tally::wording::{cancelled_line, g10_bar};

/// What `panel-tally --pr` is given.
pub struct TallyInput<'a> {
    pub plan: &'a str,
    pub inputs: &'a [String],
    /// Where a cited `path:line` is looked up.
    pub repo: &'a Path,
    /// What `--fix-proof` was given: a verdict or a fix-proof/v1 line.
    pub fix_proof: Option<&'a str>,
    pub format: Format,
    /// A member's later record replaces its earlier one; else a second record is refused.
    pub last_wins: bool,
}

/// Reads the records, aggregates them, writes the verdict; the exit status is the verdict's.
pub fn tally(input: &TallyInput) -> Result<ExitCode> {
    let plan = crate::rules::plan::read::read_plan(input.plan)?;
    let mut records: Vec<PrVerdictRecord> = Vec::new();
    let mut read_at: Vec<String> = Vec::new();
    crate::records::for_each::<PrVerdictRecord>(input.inputs, &[VERDICT_TYPE], |rec, at| {
        if !plan.members.iter().any(|m| m.name == rec.member) {
            bail!(
                "{at}: member {} is not in the plan {} (another PR or head?)",
                rec.member,
                input.plan
            );
        }
        match records.iter().position(|r| r.member == rec.member) {
            Some(i) if input.last_wins => {
                records[i] = rec;
                read_at[i] = at.to_string();
            }
            Some(i) => bail!(
                "{at}: a second record of member {}, after {}: one member counts once (--last-wins \
                    counts the later record in place of the earlier)",
                rec.member,
                read_at[i]
            ),
            None => {
                records.push(rec);
                read_at.push(at.to_string());
            }
        }
        Ok(())
    })?;
    let cites = |path: &str, line: u64| checkout::cites(input.repo, &plan.head, path, line);
    let proof = match input.fix_proof {
        None => None,
        Some(given) => {
            let (proof, warning) = crate::contracts::pr::fix_proof::resolve(given, &plan.head)
                .map_err(anyhow::Error::msg)?;
            if let Some(w) = warning {
                eprintln!("panel-tally: {w}");
            }
            Some(proof.verdict)
        }
    };
    let v = aggregate::aggregate(&plan, &records, proof, &cites);
    let mut out = crate::engine::output::stdout();
    v.write(input.format, &mut out)?;
    out.flush()?;
    Ok(v.verdict.decision().into())
}

impl Report for PanelVerdict {
    fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        crate::records::write(out, self)
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<()> {
        Ok(out.write_all(crate::records::printable::shown(&text(self)).as_bytes())?)
    }

    fn write_markdown(&self, out: &mut dyn Write) -> Result<()> {
        Ok(out.write_all(markdown::pr(self).as_bytes())?)
    }
}

/// The verdict for a person: the outcome, each member, the findings and the follow-ups.
pub fn text(v: &PanelVerdict) -> String {
    let mut s = String::new();
    let pr = v.pr_name();
    let _ = writeln!(
        s,
        "{pr} at {}: {}",
        v.head.chars().take(8).collect::<String>(),
        v.verdict.as_str()
    );
    let width = v.members.iter().map(|m| m.shape.len()).max().unwrap_or(0);
    for m in &v.members {
        let said = match (m.verdict, m.reason.as_deref()) {
            (Some(verdict), _) => verdict.as_str().to_string(),
            (None, Some(why)) => format!("no verdict ({}: {why})", m.status),
            (None, None) => format!("no verdict ({})", m.status),
        };
        let role = if m.blocking { "blocking" } else { "advisory" };
        let _ = writeln!(s, "  {:width$}  {role}  {said}", m.shape);
    }
    if !v.dissent.is_empty() {
        let _ = writeln!(s, "  dissent: {}", v.dissent.join(", "));
    }
    if !v.missing.is_empty() {
        let _ = writeln!(s, "  missing: {}", v.missing.join(", "));
    }
    if let Some(line) = cancelled_line(v) {
        let _ = writeln!(s, "  {line}");
    }
    if !v.findings.is_empty() {
        let _ = writeln!(s, "\nfindings:");
        for f in &v.findings {
            let at = match (&f.path, f.line) {
                (Some(p), Some(l)) => format!("{p}:{l} "),
                _ => String::new(),
            };
            let role = if f.blocking { "" } else { ", non-blocking" };
            let _ = writeln!(s, "  [{}{role}] {at}{}", f.shape, f.text);
        }
    }
    if v.findings_dropped > 0 {
        let _ = writeln!(
            s,
            "  ({} advisory finding{} dropped: the path:line cited does not exist at the head)",
            v.findings_dropped,
            if v.findings_dropped == 1 { "" } else { "s" }
        );
    }
    if v.findings_truncated {
        let _ = writeln!(
            s,
            "  (findings cut to {} characters)",
            aggregate::MAX_PANEL_FINDINGS_CHARS
        );
    }
    if !v.follow_ups.is_empty() {
        let _ = writeln!(s, "\nfollow-ups:");
        for f in &v.follow_ups {
            let _ = writeln!(s, "  - {} | {} | {}", f.title, f.done_when, f.severity);
        }
    }
    for m in &v.members {
        // Text from a model: escaped, one item a line.
        let Some(list) = m
            .earlier_findings
            .as_ref()
            .filter(|l| !l.not_fixed.is_empty())
        else {
            continue;
        };
        let _ = writeln!(s, "\nearlier findings not fixed [{}]:", m.shape);
        for item in &list.not_fixed {
            let _ = writeln!(s, "  - {}", crate::records::printable::inline(item));
        }
    }
    for b in &v.owner_briefs {
        // Text from a model: each line escaped and indented, so none can pass for a line of ours.
        let _ = writeln!(s, "\nowner brief [{}]:", b.shape);
        for line in b.text.lines() {
            let _ = writeln!(s, "  | {}", crate::records::printable::inline(line));
        }
    }
    let _ = writeln!(s, "\n{}", crate::records::printable::inline(&g10_bar(v)));
    s
}

/// The repository findings are checked in: the one given, or the git repository of the
/// working folder. Outside one, every advisory finding would cite nothing and be dropped:
/// refused, exit 2.
pub fn repository(given: Option<&Path>) -> Result<std::path::PathBuf> {
    if let Some(dir) = given {
        return Ok(dir.to_path_buf());
    }
    let here = Path::new(".");
    match crate::engine::checkout::git(here, &["rev-parse", "--is-inside-work-tree"]) {
        Ok(out) if out.trim_ascii() == b"true" => Ok(here.to_path_buf()),
        _ => bail!(
            "--pr checks each advisory finding's path:line in the PR's repository, and this \
             folder is not in a git repository: run it there or give --repo DIR"
        ),
    }
}
