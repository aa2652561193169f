//! The real-CLI matrix, a test target of its own (`cargo test --test real`; `.ci/run` runs it
//! after the default `cargo test`): the tests that drive the real harness CLIs against the
//! stand-in model server, and the hostile matrix, which runs them too. They take most of the
//! suite's time, so the default run leaves them out. Each file below is a module of it; util.rs
//! is shared with the integration crate (tests/tests.rs).

mod mockserver;
mod real_cache;
mod real_cli;
mod real_judge;
mod real_logins;
mod real_overhead;
mod real_pairwise;
mod real_review;
mod real_share;
mod real_synth;
// Linux's walls faced by every real CLI: run where they are (macOS: scripts/macos-selftest).
#[cfg(target_os = "linux")]
mod sealed;
mod tls;
mod tokens;
mod tool;
mod util;
