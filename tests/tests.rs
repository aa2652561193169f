//! The one integration-test crate: each file below is a module of it.

mod generated;
mod tally;
mod util;
