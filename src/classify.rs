//! `pr-classify`: Classify a pull request and plan its review panel.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::docs::ToolDoc;

/// Classify a pull request and plan its review panel.
#[derive(Parser, Debug)]
#[command(name = "pr-classify", version)]
pub struct Args {
    /// Input files (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: crate::docs::FILTER_EXIT,
    examples: &[("Show the help", "pr-classify --help")],
};

/// The clap definition of `pr-classify`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(_args: Args) -> Result<ExitCode> {
    bail!("not built yet")
}
