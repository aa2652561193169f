//! The one integration-test crate: each file below is a module of it.

mod classify;
mod generated;
mod harness;
mod hostile;
mod integrity;
mod judge;
mod markdown;
mod matrix;
mod mockserver;
mod pr;
mod real_cli;
mod real_judge;
mod sealed;
mod synthesis;
mod tally;
mod util;
