//! Every exit status the suite gives, in one table (docs/design.md §3). A tool that decides
//! exits with its decision's status; the stages a judge's launch runs through (the supervisor
//! and the confine stage, this binary run again) exit as a shell does for a program it could
//! not run.

/// The panel passed (or, for `pr-classify --is`, yes).
pub const PASS: u8 = 0;
/// The panel failed (or, for `pr-classify --is`, no).
pub const FAIL: u8 = 1;
/// Usage or input error, or a failure of ours: the one status that is not a decision.
pub const USAGE: u8 = 2;
/// No decision: answers were missing and the threshold could not be reached without them.
pub const NO_DECISION: u8 = 3;
/// A stage could not make the judge's walls, or could not run its program.
pub const CANNOT_RUN: i32 = 126;
/// A stage's program was not found.
pub const NOT_FOUND: i32 = 127;

/// A run stopped by signal `sig` exits 128 + `sig`, as a shell reports it.
pub const fn signalled(sig: i32) -> i32 {
    128 + sig
}
