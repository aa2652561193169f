//! Recorded answers in place of a model: `replay:FILE` maps each judge's name to its answer,
//! or to a list of answers, one per round (`PANEL_ROUND`, from 1), the last repeating, as the
//! seed's recorded judge does. Launches nothing.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use anyhow::{Result, anyhow};
use serde_json::Value;

use crate::engine::call::ask::Job;
use crate::engine::call::launch::ProcessOutcome;

/// The most of a file of recorded answers read: as much as a candidate.
const MAX_ANSWERS: usize = crate::records::candidate::MAX_CANDIDATE;

/// A file of recorded answers, read to [`MAX_ANSWERS`]; errors name it as `what`.
pub fn read(file: &std::path::Path, what: &str) -> Result<String> {
    crate::records::input::read_bounded(file, MAX_ANSWERS, what)
}

/// The recorded answer for `job`, as if its process had printed it and exited 0.
pub fn answer(job: &Job, round: Option<&str>) -> Result<ProcessOutcome> {
    let file = job.seat.model.as_deref().unwrap_or_default();
    let text = read(std::path::Path::new(file), &format!("replay: {file}"))?;
    let all = crate::records::strict::value(&text)
        .map_err(|e| anyhow!("replay: {file}: not JSON: {e}"))?;
    let entry = all
        .get(&job.name)
        .ok_or_else(|| anyhow!("replay: {file} holds no answer for {}", job.name))?;
    let entry = match entry {
        Value::Array(list) if !list.is_empty() => {
            let round: usize = round.and_then(|r| r.parse().ok()).unwrap_or(1);
            &list[round.clamp(1, list.len()) - 1]
        }
        other => other,
    };
    let out = match entry {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(ProcessOutcome {
        status: Some(std::process::ExitStatus::from_raw(0)),
        timed_out: false,
        interrupted: false,
        cancelled: None,
        stdout: crate::engine::call::transcript::Transcript::of(out.as_bytes()),
        stderr: Vec::new(),
        stderr_bytes: 0,
        duration: Duration::ZERO,
        refused: Vec::new(),
        share: Default::default(),
        answer_bytes: None,
        live: None,
        tier: None,
    })
}
