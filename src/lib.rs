//! panel: ask a panel of isolated LLM judges about one piece of work, and count what they say.
//!
//! Each tool's logic and its clap `Command` live here; the binaries only call [`run::main`].

pub mod ask;
pub mod candidate;
pub mod classify;
pub mod contract;
pub mod docs;
pub mod extract;
pub mod fanout;
pub mod harness;
pub mod input;
pub mod judge;
pub mod keep;
pub mod launch;
pub mod merge;
pub mod plan;
pub mod pr;
pub mod prompt;
pub mod record;
pub mod review;
pub mod run;
pub mod slots;
pub mod strict;
pub mod tally;
pub mod vote;
