//! `panel-merge`: Merge the findings of several reviews that name the same problem.
//!
//! Reads review records; writes one `reviewer` record per review, one `finding` record per
//! merged finding and a closing `merge` record, which is everything `panel-vote` needs.
//!
//! By default the grouping is done in code (`rules::grouping`).
//!
//! With `--seat`, one seat groups them instead; its answer must place each finding in exactly
//! one group, or the findings go on unmerged and the `merge` record says `mergeFailed`. That
//! seat comes from the command line only: the records never choose a program to run.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::contracts::grouping::{self, grouping_prompt};
use crate::engine::call::{Asker, Question, ask_one};
use crate::records::Usage;
use crate::records::review::{self, ReviewRecord};
use crate::records::synthesis::{Group, SourceFinding};
use crate::records::synthesis::{MergeHow, MergeRecord, MergedFinding, Record, Reviewer};
use crate::rules::grouping::{Grouping, build, group_in_code};

/// Merge the findings of several reviews that name the same problem.
#[derive(Parser, Debug)]
#[command(name = "panel-merge", version, long_about = crate::tools::about::MERGE)]
pub struct Args {
    /// Review records (JSON lines, from `panel-judge --contract review`); standard input when
    /// none or `-`.
    pub inputs: Vec<String>,
    /// Ask this seat (HARNESS[:MODEL]) to group the findings instead of grouping them in code.
    /// It is never taken from the records: for the seed's merging seat, the first reviewer's,
    /// give the first --seat that panel-judge was given.
    #[arg(long, value_name = "SEAT")]
    pub seat: Option<String>,
    #[command(flatten)]
    pub launch: crate::tools::launch_args::LaunchArgs,
}

pub use crate::tools::about::MERGE_DOC as DOC;

/// The clap definition of `panel-merge`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

/// How to group.
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    Code,
    /// Ask this seat, as the command line gives it.
    Seat(String),
}
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub reviewers: Vec<Reviewer>,
    pub findings: Vec<MergedFinding>,
    pub merge: MergeRecord,
}

impl Merged {
    /// The stream `panel-merge` writes, in order.
    pub fn records(&self) -> Vec<Record> {
        let mut out: Vec<Record> = self
            .reviewers
            .iter()
            .cloned()
            .map(Record::Reviewer)
            .collect();
        out.extend(self.findings.iter().cloned().map(Record::Finding));
        out.push(Record::Merge(self.merge.clone()));
        out
    }
}

/// A source finding with the reviewer who raised it.
/// Merges the reviews' findings. `asker` is needed only for [`How::Seat`].
pub fn merge(reviews: &[ReviewRecord], how: &How, asker: Option<&dyn Asker>) -> Result<Merged> {
    if reviews.is_empty() {
        bail!("no review records");
    }
    review::check_panel(reviews.iter().map(|r| (r, "")))?;
    let mut sorted: Vec<&ReviewRecord> = reviews.iter().collect();
    sorted.sort_by(|a, b| review::name_order(&a.reviewer, &b.reviewer));
    let sources: Vec<SourceFinding> = sorted
        .iter()
        .flat_map(|r| {
            r.findings.iter().map(|f| SourceFinding {
                reviewer: r.reviewer.clone(),
                finding: f.clone(),
            })
        })
        .collect();
    let raisers: BTreeSet<&str> = sources.iter().map(|s| s.reviewer.as_str()).collect();
    let mut record = MergeRecord {
        how: MergeHow::Code,
        seat: None,
        merge_failed: false,
        cause: None,
        candidate: sorted[0].candidate.clone(),
        reviews: sorted.len(),
        findings: sources.len(),
        merged: 0,
        sandbox: None,
        usage: None,
    };
    let alone = || Grouping {
        groups: (0..sources.len())
            .map(|i| Group {
                members: vec![i],
                evidence: i,
                fix: i,
            })
            .collect(),
        possible: Vec::new(),
    };
    let grouping = if raisers.len() < 2 {
        record.how = MergeHow::None;
        record.cause = Some(if sources.is_empty() {
            "no findings to merge".into()
        } else {
            "every finding comes from one reviewer: nothing to merge".into()
        });
        alone()
    } else {
        match how {
            How::Code => group_in_code(&sources),
            How::Seat(seat) => {
                record.how = MergeHow::Seat;
                record.seat = Some(seat.clone());
                let Some(asker) = asker else {
                    bail!("merging with a seat needs a launcher");
                };
                record.sandbox = asker.sandbox().map(String::from);
                let (answer, usage) = ask_seat(asker, seat, &sources);
                record.usage = usage;
                match answer {
                    Ok(groups) => Grouping {
                        groups,
                        possible: Vec::new(),
                    },
                    Err(cause) => {
                        record.merge_failed = true;
                        record.cause = Some(cause);
                        alone()
                    }
                }
            }
        }
    };
    let findings = build(&sources, &grouping);
    record.merged = findings.len();
    Ok(Merged {
        reviewers: sorted.iter().map(|r| Reviewer::of(r)).collect(),
        findings,
        merge: record,
    })
}

/// The seat's groups, or why there are none; and what its call used.
fn ask_seat(
    asker: &dyn Asker,
    seat: &str,
    sources: &[SourceFinding],
) -> (Result<Vec<Group>, String>, Option<Usage>) {
    let ids: Vec<String> = sources.iter().map(|s| s.finding.id.clone()).collect();
    let question = Question {
        name: "merge".into(),
        seat: seat.into(),
        prompt: grouping_prompt(sources),
        schema: grouping::grouping_schema(),
        reads: None,
        cancel: None,
    };
    let contract = grouping::GroupingContract { ids };
    let done = ask_one(asker, question, contract);
    let groups = done.answer.ok_or_else(|| {
        format!(
            "the merging seat {seat} sent no grouping ({}){}",
            done.status.as_str(),
            done.cause.map(|c| format!(": {c}")).unwrap_or_default()
        )
    });
    (groups, done.usage)
}

pub fn run(args: Args) -> Result<ExitCode> {
    // Usage errors first, before any input is read.
    let opts = args.launch.options()?;
    if args.seat.as_deref() == Some("first") {
        bail!(
            "--seat first: the merging seat is never taken from the records; name it (the first \
                reviewer's is the first --seat panel-judge was given)"
        );
    }
    let mut reviews: Vec<(ReviewRecord, String)> = Vec::new();
    crate::records::for_each::<ReviewRecord>(&args.inputs, &["review"], |r, at| {
        reviews.push((r, at.to_string()));
        Ok(())
    })?;
    review::check_panel(reviews.iter().map(|(r, at)| (r, at.as_str())))?;
    let reviews: Vec<ReviewRecord> = reviews.into_iter().map(|(r, _)| r).collect();
    let how = match &args.seat {
        Some(seat) => How::Seat(seat.clone()),
        None => How::Code,
    };
    let launched = match how {
        How::Seat(_) => Some(crate::engine::call::started(&opts)?),
        How::Code => None,
    };
    let asker = launched.as_ref().map(|l| l as &dyn Asker);
    let merged = merge(&reviews, &how, asker)?;
    if let Some(cause) = merged
        .merge
        .cause
        .as_ref()
        .filter(|_| merged.merge.merge_failed)
    {
        eprintln!("panel-merge: merge failed, the findings go on unmerged: {cause}");
    }
    let mut out = BufWriter::new(crate::engine::output::stdout());
    for rec in merged.records() {
        crate::records::write(&mut out, &rec)?;
    }
    out.flush()?;
    if let Some(run) = launched.as_ref().and_then(|l| l.run_dir()) {
        eprintln!("merge: {}", run.display());
    }
    Ok(ExitCode::SUCCESS)
}
