//! fanout
