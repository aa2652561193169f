//! A judge's call, in a room of its own: the job and how it ended, the launcher that runs it
//! (retries, many at once, a seat's first warming the cache, cancelling what a decided panel no
//! longer needs), one attempt and its process, the transcript, and finding the answer in it.
//!
//! The tools reach the call through what this file names, never through its files
//! (`tests/layers.rs` holds it); the rest of `engine` (the sandbox, the doctor, the dry run)
//! may reach into them.
//!
//! | what | where |
//! | --- | --- |
//! | a job, how it ended, the [`Asker`] of panel-merge and panel-vote | `ask` |
//! | the launcher: the run's folders, retries, many jobs at once | `launcher` |
//! | one attempt as a value: its folders, files, walls and launch | `attempt` |
//! | what every attempt of a run shares: options, the user's environment, the walls | `context` |
//! | argv, how the prompt travels, the judge's environment | `argv` |
//! | one process: its group, its deadline, where the group is killed | `launch` |
//! | many jobs at once, or in waves | `fanout` |
//! | a seat's first judge warming the provider's cache for the others | `warm` |
//! | ending the judges a decided panel no longer needs | `cancel` |
//! | a judge's stdout as it arrives: the run folder's copy, its budget, its events | `transcript` |
//! | reading an answer; a failure's words becoming a status | `answer` |
//! | jq filters over a harness's output | [`extract`] |
//! | which lines of an output a row's filter can read anything from | `sieve` |
//! | recorded answers (`replay:FILE`) | `replay` |

pub(in crate::engine) mod answer;
pub(in crate::engine) mod argv;
pub(in crate::engine) mod ask;
pub(in crate::engine) mod attempt;
pub(in crate::engine) mod cancel;
pub(in crate::engine) mod context;
// Public for the fuzz targets and the tests, which read answers as a judge writes them.
pub mod extract;
pub(in crate::engine) mod fanout;
pub(in crate::engine) mod launch;
pub(in crate::engine) mod launcher;
pub(in crate::engine) mod replay;
pub(in crate::engine) mod sieve;
pub(in crate::engine) mod transcript;
pub(in crate::engine) mod warm;

// The door.
pub use answer::failure_words;
pub use ask::{
    Asker, Check, Done, Job, KeptFolder, LaunchOptions, Prompt, Question, Session, Tier, ask_each,
    ask_one, walls_of,
};
pub use attempt::give;
pub use cancel::{Cancel, Pace};
pub use context::Context;
pub use extract::excerpt;
pub use fanout::{gate, run as fan_out};
pub use launcher::{Launcher, started};
pub use replay::read as read_replay;
pub use transcript::{last_words, parse_size};
