//! Asking one seat one question and reading a JSON answer: the interface through which
//! `panel-merge` and `panel-vote` reach models, with the same launcher, isolation, timeouts,
//! retries and run folder as `panel-judge`.

use serde_json::{Map, Value};

use crate::record::{Status, Usage};

/// One question for one seat.
#[derive(Clone, Debug)]
pub struct Question {
    /// The asker's name, unique within the run (it names its folder): e.g. `vote-review-1`.
    pub name: String,
    /// `HARNESS[:MODEL]`.
    pub seat: String,
    /// The whole prompt, already fenced and worded.
    pub prompt: String,
    /// The answer's JSON Schema, passed to harnesses that take one.
    pub schema: Value,
}

/// Checks an answer object against its contract: `Err` says why it does not meet it.
pub type Check = dyn Fn(&Map<String, Value>) -> Result<(), String> + Sync;

/// What came back.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The answer object that met the contract; `None` is an abstention, never a guess.
    pub answer: Option<Map<String, Value>>,
    /// `Ok` when `answer` is set; otherwise why there is none.
    pub status: Status,
    /// Why there is no answer, in one line.
    pub cause: Option<String>,
    pub attempts: u32,
    pub usage: Option<Usage>,
}

impl Reply {
    pub fn abstained(status: Status, cause: impl Into<String>) -> Reply {
        Reply {
            answer: None,
            status,
            cause: Some(cause.into()),
            attempts: 0,
            usage: None,
        }
    }
}

/// Something that asks seats questions: the real launcher, or a fake in tests.
pub trait Asker: Sync {
    /// Asks every question at once (in parallel where the asker can) and returns the replies
    /// in the order of the questions.
    fn ask_all(&self, questions: &[Question], check: &Check) -> Vec<Reply>;
}

/// How the launcher runs the seats it is asked for.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The run folder; a fresh one under the temporary folder when `None`.
    pub run: Option<std::path::PathBuf>,
    /// Seconds before a seat's whole process group is killed.
    pub timeout_secs: u64,
    /// How many times an unreadable answer is asked for again.
    pub retries: u32,
    /// How many seats run at once; all of them when `None`.
    pub jobs: Option<usize>,
}

impl Default for LaunchOptions {
    fn default() -> LaunchOptions {
        LaunchOptions {
            run: None,
            timeout_secs: 600,
            retries: 1,
            jobs: None,
        }
    }
}

/// The real launcher behind the [`Asker`] interface.
pub fn launcher(_opts: &LaunchOptions) -> anyhow::Result<Box<dyn Asker>> {
    anyhow::bail!("launching seats is not available in this build")
}
