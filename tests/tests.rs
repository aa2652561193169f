//! The one integration-test crate: each file below is a module of it.

mod classify;
mod generated;
mod harness;
mod history;
mod hostile;
mod integrity;
mod jail;
mod judge;
mod ledger;
mod markdown;
mod matrix;
mod mockserver;
mod paste;
mod pr;
mod progress;
mod real_cli;
mod real_judge;
mod real_review;
mod real_synth;
mod schemas;
mod sealed;
mod sshd;
mod synthesis;
mod tally;
mod transcript;
mod util;
