//! A pull request panel's rules: which verdicts count, what a reviewer gets after a reply that
//! does not, and the panel's verdict from them.

pub mod accept;
pub mod aggregate;
pub mod ladder;
