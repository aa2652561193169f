//! The integration-test crate, the default `cargo test`: each file below is a module of it.
//! The tests that drive the real CLIs are a target of their own (tests/real.rs).

mod apparmor;
mod budget;
mod calibrate;
mod classify;
mod doctor;
mod early;
mod generated;
mod gold;
mod harness;
mod history;
mod hostile;
mod integrity;
mod jail;
mod judge;
mod layers;
mod ledger;
mod logins;
mod markdown;
mod matrix;
mod mockserver;
mod pairwise;
mod paste;
mod placeholder;
mod pr;
mod progress;
mod runs;
mod schemas;
mod share;
mod sshd;
mod synthesis;
mod tally;
mod tls;
mod tokens;
mod transcript;
mod util;
