//! `panel-vote`: Cross-review merged findings, apply the vote rules, and let a judge act on or skip each one.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::docs::ToolDoc;

/// Cross-review merged findings, apply the vote rules, and let a judge act on or skip each one.
#[derive(Parser, Debug)]
#[command(name = "panel-vote", version)]
pub struct Args {
    /// Input files (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: crate::docs::FILTER_EXIT,
    examples: &[("Show the help", "panel-vote --help")],
};

/// The clap definition of `panel-vote`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(_args: Args) -> Result<ExitCode> {
    bail!("not built yet")
}
