//! A pull request reviewer's answer: the verdict block, its briefs and its follow-ups.

pub mod block;
pub mod brief;
pub mod earlier;
pub mod fix_proof;
pub mod followups;
