//! The seeds' decisions as plain functions over records.

pub mod classify;
pub mod glob;
pub mod plan;
pub mod pr;
