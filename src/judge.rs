//! `panel-judge`: Launch sealed judges in parallel, one per lens or seat, and write one verdict record each.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{CommandFactory, Parser};

use crate::docs::ToolDoc;

/// Launch sealed judges in parallel, one per lens or seat, and write one verdict record each.
#[derive(Parser, Debug)]
#[command(name = "panel-judge", version)]
pub struct Args {
    /// Input files (JSON lines); standard input when none or `-`.
    pub inputs: Vec<String>,
}

pub const DOC: ToolDoc = ToolDoc {
    exit_status: crate::docs::FILTER_EXIT,
    examples: &[("Show the help", "panel-judge --help")],
};

/// The clap definition of `panel-judge`.
pub fn command() -> clap::Command {
    Args::command().after_long_help(DOC.help())
}

pub fn run(_args: Args) -> Result<ExitCode> {
    bail!("not built yet")
}
