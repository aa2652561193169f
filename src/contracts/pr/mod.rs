//! A pull request reviewer's answer: the verdict block, its briefs and its follow-ups.

pub mod block;
pub mod brief;
pub mod followups;
