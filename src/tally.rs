//! `panel-tally`: Count the verdicts of a panel in code: unanimous, split or abstained.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::docs::ToolDoc;

/// Count the verdicts of a panel in code: unanimous, split or abstained.
#[derive(Parser, Debug)]
#[command(name = "panel-tally", version)]
pub struct Args {
    /// Input files (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: crate::docs::FILTER_EXIT,
    examples: &[("Show the help", "panel-tally --help")],
};

/// The clap definition of `panel-tally`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(_args: Args) -> Result<ExitCode> {
    bail!("not built yet")
}
