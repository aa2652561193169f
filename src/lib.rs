//! panel: ask a panel of isolated LLM judges about one piece of work, and count what they say.
//!
//! The library has layers (docs/design.md §2), each depending only on those below it:
//! [`tools`] (each binary's command and run) over `rules` (the seeds' decisions), `contracts`
//! (what a judge must answer) and `engine` (everything that runs a process), over `records`
//! (every record type and reading them).

pub mod contracts;
pub mod engine;
pub mod records;
pub mod rules;
pub mod tools;

#[doc(hidden)]
pub mod fuzz;
