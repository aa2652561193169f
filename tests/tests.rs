//! The integration-test crate, the default `cargo test`: each file below is a module of it.
//! The tests that drive the real CLIs are a target of their own (tests/real.rs).

mod classify;
mod doctor;
mod early;
mod generated;
mod harness;
mod history;
mod hostile;
mod integrity;
mod jail;
mod judge;
mod layers;
mod ledger;
mod markdown;
mod matrix;
mod paste;
mod pr;
mod progress;
mod runs;
mod schemas;
mod share;
mod sshd;
mod synthesis;
mod tally;
mod transcript;
mod util;
