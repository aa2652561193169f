//! Everything that runs a process: the harness table, one launch, the fan-out, retries, the
//! run folder, the run's lifecycle, extraction.

pub mod ask;
pub mod checkout;
pub mod extract;
pub mod fanout;
pub mod harness;
pub mod launch;
pub mod run_folder;
pub mod slots;
