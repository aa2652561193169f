//! The integration-test crate, the default `cargo test`: each file below is a module of it.
//! The tests that drive the real CLIs are a target of their own (tests/real.rs).

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
mod selftest;
mod sshd;
mod synthesis;
mod tally;
mod tls;
mod tokens;
mod tool;
mod transcript;
mod util;
mod warm;

// Linux's walls (namespaces, Landlock, seccomp, AppArmor), tested where they are; macOS's
// Seatbelt profiles are golden-tested beside the code and tried by scripts/macos-selftest.
#[cfg(target_os = "linux")]
mod apparmor;
#[cfg(target_os = "linux")]
mod jail;
#[cfg(target_os = "linux")]
mod share;
