//! What a judge must answer: one contract per answer kind (a schema, a prompt, a check).

pub mod pr;
pub mod prompt;
pub mod verdict;
