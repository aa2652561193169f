//! panel: ask a panel of isolated LLM judges about one piece of work, and count what they say.
//!
//! The library has layers (docs/design.md §2), each depending only on those below it:
//! [`tools`] (each binary's command and run) over `rules` (the seeds' decisions), `contracts`
//! (what a judge must answer) and `engine` (everything that runs a process), over `records`
//! (every record type and reading them), over `stats` (agreement, intervals and the ledger's
//! thresholds: arithmetic on numbers). Only `tools` is the library's interface; the tests and
//! the fuzz targets reach what else they need through [`internals`].

// Unsafe code is for the sandbox's walls alone (namespaces, seccomp, the jail's first
// process, the supervisor's look at processes): `engine::sandbox` allows it where it is
// needed, nothing else may.
#![deny(unsafe_code)]
// Dead code is found by the Linux build, which uses everything; elsewhere (macOS) the parts
// only Linux's walls use are built and unused.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

pub(crate) mod contracts;
pub(crate) mod engine;
pub(crate) mod records;
pub(crate) mod rules;
pub(crate) mod stats;
pub mod tools;

#[doc(hidden)]
pub mod fuzz;

/// What the integration tests and the fuzz targets reach below `tools`: not an interface, and
/// free to change.
#[doc(hidden)]
pub mod internals {
    pub use crate::contracts::pr::{block, followups};
    pub use crate::contracts::review::check as check_review;
    pub use crate::contracts::verdict::{default_lenses, verdict_prompt};
    pub use crate::engine::call::Pace;
    pub use crate::engine::call::extract;
    pub use crate::engine::call::{Asker, Check, Done, Question};
    pub use crate::engine::harness::{Seat, Table};
    pub use crate::engine::lifecycle::GRACE;
    pub use crate::engine::sandbox::share::{Defaults, defaults};
    pub use crate::engine::sandbox::unprivileged_ids;
    pub use crate::records::candidate::seal;
    pub use crate::records::input::Input;
    pub use crate::records::pr::{PrStatus, PrVerdict};
    pub use crate::records::review::{Finding, ReviewRecord, Severity};
    pub use crate::records::synthesis::{
        self, FindingResult, MergeHow, MergedPanel, Record, RouteKind,
    };
    pub use crate::records::{Decision, Status, Usage, VerdictRecord, facts, parse, review, write};
    pub use crate::rules::pr::accept::accept_verdict;
    pub use crate::rules::votes::apply;
}
