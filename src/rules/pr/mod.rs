//! A pull request panel's rules: which verdicts count, and the panel's verdict from them.

pub mod accept;
pub mod aggregate;
