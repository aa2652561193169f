//! `panel-merge`: Merge the findings of several reviews that name the same problem.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::docs::ToolDoc;

/// Merge the findings of several reviews that name the same problem.
#[derive(Parser, Debug)]
#[command(name = "panel-merge", version)]
pub struct Args {
    /// Input files (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: crate::docs::FILTER_EXIT,
    examples: &[("Show the help", "panel-merge --help")],
};

/// The clap definition of `panel-merge`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(_args: Args) -> Result<ExitCode> {
    bail!("not built yet")
}
