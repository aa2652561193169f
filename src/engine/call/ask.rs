//! Asking seats questions, in one vocabulary: a call is asked (a [`Job`] for a seat resolved, a
//! [`Question`] for a seat named, through the [`Asker`] of `panel-merge` and `panel-vote`) under
//! a contract, and ends in a [`Done`] holding the contract's typed answer or typed miss. Here
//! too are the options a launcher is made with.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use serde_json::{Map, Value};

use crate::contracts::Contract;
use crate::engine::harness::Seat;
use crate::records::{Status, Usage};

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
    /// A folder the seat reads with its harness's read tools (its reviewer mode), working in
    /// it; the answer is then the object in its last message that meets the contract. `None`:
    /// sealed, no tools.
    pub reads: Option<PathBuf>,
    /// The token that ends it once it is no longer needed; `None`: never.
    pub cancel: Option<Arc<crate::engine::call::cancel::Cancel>>,
}

/// Checks an answer object against its contract: `Err` says why it does not meet it. The
/// launcher's gate, inside the call: the door turns what passed into the contract's type.
pub type Check<'a> = dyn Fn(&Map<String, Value>) -> Result<(), String> + Sync + 'a;

/// A contract's check as the launcher's gate.
pub fn gate_of<C: Contract + ?Sized>(
    contract: &C,
) -> impl Fn(&Map<String, Value>) -> Result<(), String> + Sync + '_ {
    move |obj| {
        contract
            .check(obj)
            .map(|_| ())
            .map_err(|miss| miss.to_string())
    }
}

/// Something that asks seats questions: the real launcher, or a fake in tests. It answers in
/// the room's terms (an answer object that passed `check`); tools ask through [`ask_each`],
/// which hands them the contract's typed answer.
pub trait Asker: Sync {
    /// Asks every question at once (in parallel where the asker can) and returns how each
    /// call ended, in the order of the questions.
    fn ask_all(&self, questions: &[Question], check: &Check) -> Vec<Done>;
    /// Asks one question on this thread: what [`ask_each`] runs on each of its threads.
    fn ask_one(&self, question: &Question, check: &Check) -> Done {
        self.ask_all(std::slice::from_ref(question), check)
            .into_iter()
            .next()
            .unwrap_or_else(|| Done::unasked(Status::Failed, "the launcher sent no reply"))
    }
    /// What the seats it launches run under, for their records; `None`: it launches nothing.
    fn sandbox(&self) -> Option<&str> {
        None
    }
}

/// How seats are launched; shared by `panel-judge`, `panel-merge` and `panel-vote`.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The run folder; a fresh one among the runs (`engine::runs`) when `None`.
    pub run: Option<PathBuf>,
    /// Days the runs' folders are kept: a run that makes one removes those older.
    pub keep_days: u32,
    /// The run folder may hold an earlier run of the same panel, to take up again (the PR
    /// panel); else it must be new or empty.
    pub resume: bool,
    /// The deadline of one attempt, in seconds.
    pub timeout_secs: f64,
    /// How many times an unreadable or failed answer is asked for again.
    pub retries: u32,
    /// How many seats run at once; all when `None`.
    pub jobs: Option<usize>,
    pub harness_files: Vec<PathBuf>,
    /// Families stated by the user, by seat as written.
    pub families: BTreeMap<String, String>,
    /// More of the user's variables to carry into every judge.
    pub pass_env: Vec<String>,
    pub max_budget_usd: Option<f64>,
    /// The run's budget in USD (`--budget-usd`); `None`: none.
    pub budget_usd: Option<f64>,
    /// The price file over the shipped table (`--prices`).
    pub prices: Option<PathBuf>,
    /// Estimates are asked for (`--estimate`): the price table is loaded without a budget.
    pub estimate: bool,
    /// The history whose answer lengths estimates read; `None`: the default one.
    pub history: Option<PathBuf>,
    /// At most this many judges of a harness at once, machine-wide.
    pub harness_caps: BTreeMap<String, usize>,
    /// Whether judges are confined.
    pub sandbox: crate::engine::sandbox::Setting,
    /// More folders a confined judge may read and run from, and write to.
    pub sandbox_read: Vec<PathBuf>,
    pub sandbox_write: Vec<PathBuf>,
    /// More hosts and ports a confined judge's proxy lets it reach.
    pub sandbox_allow: Vec<crate::engine::sandbox::egress::Endpoint>,
    /// Bytes of one attempt's stdout kept in the run folder; past them the judge is stopped
    /// and recorded `output-limit`.
    pub max_output: u64,
    /// What each judge may take of what everyone shares.
    pub share: crate::engine::sandbox::share::Ask,
    /// The service tier asked of the providers that offer more than one (`--tier`).
    pub tier: Tier,
}

pub use crate::records::Tier;

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            run: None,
            keep_days: crate::engine::runs::DEFAULT_KEEP_DAYS,
            resume: false,
            timeout_secs: 300.0,
            retries: 1,
            jobs: None,
            harness_files: Vec::new(),
            families: BTreeMap::new(),
            pass_env: Vec::new(),
            max_budget_usd: None,
            budget_usd: None,
            prices: None,
            estimate: false,
            history: None,
            harness_caps: BTreeMap::new(),
            sandbox: crate::engine::sandbox::Setting::Auto,
            sandbox_read: Vec::new(),
            sandbox_write: Vec::new(),
            sandbox_allow: Vec::new(),
            max_output: crate::engine::call::transcript::DEFAULT_MAX_OUTPUT,
            share: Default::default(),
            tier: Tier::Standard,
        }
    }
}

/// A job's prompt, built when an attempt starts and dropped when it ends: the prompts of a
/// panel share one candidate, so a large candidate is held once, not once per judge.
#[derive(Clone)]
pub struct Prompt(Arc<dyn Fn() -> Split + Send + Sync>);

pub use crate::contracts::Split;

impl Prompt {
    /// A prompt already written, all of it the judge's own.
    pub fn text(text: String) -> Prompt {
        let text = Arc::new(text);
        Prompt(Arc::new(move || Split {
            text: text.as_str().to_owned(),
            shared: 0,
        }))
    }

    /// A prompt written by `build` each time it is needed, all of it the judge's own.
    pub fn built_by(build: impl Fn() -> String + Send + Sync + 'static) -> Prompt {
        Prompt(Arc::new(move || Split {
            text: build(),
            shared: 0,
        }))
    }

    /// A prompt written by `build` each time it is needed, in its shared and own parts.
    pub fn split_by(build: impl Fn() -> Split + Send + Sync + 'static) -> Prompt {
        Prompt(Arc::new(build))
    }

    pub fn build(&self) -> String {
        (self.0)().text
    }

    pub fn split(&self) -> Split {
        (self.0)()
    }
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prompt(..)")
    }
}

/// One call to make: a named question for a resolved seat.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    pub seat: Seat,
    pub prompt: Prompt,
    pub schema: Value,
    pub role: Role,
    /// Retries for this job, in place of the launcher's.
    pub retries: Option<u32>,
    /// The panel's token that ends it once the panel is decided without it; `None` never is.
    pub cancel: Option<Arc<crate::engine::call::cancel::Cancel>>,
    /// Its part in warming its seat's prompt cache (set by the launcher).
    pub warming: crate::engine::call::warm::Warming,
}

impl Job {
    /// Why this job is no longer needed, once its panel was decided without it.
    pub fn cancelled(&self) -> Option<&str> {
        self.cancel.as_deref().and_then(|c| c.why())
    }

    /// A sealed judge's call, with the launcher's retries.
    pub fn sealed(name: &str, seat: Seat, prompt: Prompt, schema: Value) -> Job {
        Job {
            name: name.into(),
            seat,
            prompt,
            schema,
            role: Role::Sealed,
            retries: None,
            cancel: None,
            warming: Default::default(),
        }
    }
}

impl Job {
    /// A reviewer's call on `checkout`: its answer is its text, checked by its caller; asked
    /// once (its caller decides what comes next).
    pub fn reviewer(
        name: &str,
        seat: Seat,
        prompt: String,
        checkout: PathBuf,
        session: Session,
    ) -> Job {
        Job {
            role: Role::Reviewer { checkout, session },
            retries: Some(0),
            ..Job::sealed(
                name,
                seat,
                Prompt::text(prompt),
                Value::Object(Default::default()),
            )
        }
    }
}

/// What a call's judge is: sealed, or a reviewer that reads a checkout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// In an empty private folder, no tools: the answer is a JSON object.
    Sealed,
    /// In a checkout it must read, with the harness's reviewer argv: the answer is the last
    /// message's text, handed to the check as `{"text": …}`, and the calls it made are counted.
    Reviewer { checkout: PathBuf, session: Session },
}

/// What becomes of a reviewer's session (its conversation, which the harness keeps in the
/// private HOME).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Session {
    /// Not kept: the harness is told to keep nothing, and the private folder goes with the call.
    #[default]
    Forget,
    /// Kept for a resume: the harness keeps its session, the private folder outlives the call
    /// (in [`Done::session`]) and the session's id is read from the event stream.
    Keep,
    /// The kept session `id` resumed in the private folder that keeps it, with the harness's
    /// resume argv; the folder goes when the last job holding it does.
    Resume { id: String, folder: Arc<KeptFolder> },
}

/// A reviewer's private folder kept after its call, with the session the harness kept there;
/// removed when the last holder lets go of it.
#[derive(Debug, PartialEq, Eq)]
pub struct KeptFolder {
    pub private: PathBuf,
}

impl Drop for KeptFolder {
    fn drop(&mut self) {
        let _ = crate::engine::beneath::remove_tree(&self.private);
    }
}

/// Whether a session id read from an event stream can go into argv: a UUID-like word, never an
/// option.
pub fn usable_session_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && !id.starts_with('-')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What a record says a judge ran under: the run's walls, and the live credential it held,
/// where it held one (its CLI cannot take a placeholder).
pub fn walls_of<A, M>(sandbox: &str, done: &Done<A, M>) -> String {
    match &done.live {
        Some(why) => format!("{sandbox}; its login held live: {why}"),
        None => sandbox.to_string(),
    }
}

/// How one call ended, after its retries. Inside the call, the answer is the object that met
/// the contract (`A`) and the object that missed it (`M`) are JSON maps; the door hands the
/// tools the contract's typed answer and typed miss ([`Done::checked`]), so no tool reads an
/// answer map again.
#[derive(Clone, Debug, PartialEq)]
pub struct Done<A = Map<String, Value>, M = Map<String, Value>> {
    /// The answer that met the contract; `None` is an abstention, never a guess.
    pub answer: Option<A>,
    /// `Ok` when `answer` is set; otherwise why there is none.
    pub status: Status,
    /// Why there is no answer, in one line.
    pub cause: Option<String>,
    pub excerpt: Option<String>,
    pub attempts: u32,
    pub duration: Duration,
    pub exit_code: Option<i32>,
    pub usage: Option<Usage>,
    /// A reviewer's tool calls, as its event stream shows them (`None`: not read).
    pub tool_calls: Option<Vec<String>>,
    /// How the object read missed the contract: an unreadable judge's own words, kept to be
    /// shown (a `maybe` and its reason), never counted.
    pub refused: Option<M>,
    /// The id of a reviewer's session, as its event stream gave it (a usable one only).
    pub session: Option<String>,
    /// The private folder that keeps that session ([`Session::Keep`]).
    pub kept: Option<Arc<KeptFolder>>,
    /// Asking again would meet the same (no login, an endpoint its CLI could not reach): it is
    /// not retried.
    pub settled: bool,
    /// Why the judge held its login's live credential behind walls, not a placeholder.
    pub live: Option<String>,
}

impl<A, M> Done<A, M> {
    /// A job its panel no longer needed, ended before it was asked.
    pub fn cancelled(why: &str) -> Done<A, M> {
        Done::unasked(Status::Cancelled, why)
    }

    /// A call that never reached its judge (its seat unread, its panel decided without it).
    pub fn unasked(status: Status, why: impl Into<String>) -> Done<A, M> {
        Done {
            attempts: 0,
            ..Done::abstained(status, why)
        }
    }

    /// A call asked once that ended without an answer, saying why.
    pub fn abstained(status: Status, cause: impl Into<String>) -> Done<A, M> {
        Done {
            answer: None,
            status,
            cause: Some(crate::records::printable::one_line(&cause.into())),
            excerpt: None,
            attempts: 1,
            duration: Duration::ZERO,
            exit_code: None,
            usage: None,
            tool_calls: None,
            refused: None,
            session: None,
            kept: None,
            settled: false,
            live: None,
        }
    }
}

impl Done {
    /// The door: the answer read once into the contract's type, or the contract's typed miss
    /// of what the judge said. An answer that misses here (an asker that skipped its gate) is
    /// unreadable, never slipped in.
    pub fn checked<C: Contract + ?Sized>(mut self, contract: &C) -> Done<C::Answer, C::Miss> {
        let (answer, refused) = match (self.answer.take(), self.refused.take()) {
            (Some(obj), _) => match contract.check(&obj) {
                Ok(a) => (Some(a), None),
                Err(miss) => {
                    self.status = Status::Unreadable;
                    self.cause = Some(crate::records::printable::one_line(&miss.to_string()));
                    (None, Some(miss))
                }
            },
            (None, Some(obj)) => (None, contract.check(&obj).err()),
            (None, None) => (None, None),
        };
        Done {
            answer,
            refused,
            status: self.status,
            cause: self.cause,
            excerpt: self.excerpt,
            attempts: self.attempts,
            duration: self.duration,
            exit_code: self.exit_code,
            usage: self.usage,
            tool_calls: self.tool_calls,
            session: self.session,
            kept: self.kept,
            settled: self.settled,
            live: self.live,
        }
    }
}

/// Asks one question under its contract, as [`ask_each`] asks many.
pub fn ask_one<C: Contract>(
    asker: &dyn Asker,
    question: Question,
    contract: C,
) -> Done<C::Answer, C::Miss> {
    let mut ended = ask_each(asker, &[(question, contract)], vec![None], |_, _| {});
    ended.pop().expect("one end a question")
}

/// Asks every question at once on the fan-out ([`crate::engine::call::fanout::gated`]), each under
/// its contract and held until its gate opens; `each` sees each call's end as it comes in (in the
/// order they end), on this thread. They come back in the order of the questions, each with its
/// contract's typed answer or miss; a launch that panics is a call missing (the hook has said why
/// and failed the run), never one a cascade waits for.
pub fn ask_each<C: Contract>(
    asker: &dyn Asker,
    questions: &[(Question, C)],
    gates: Vec<Option<crate::engine::call::fanout::Latch>>,
    mut each: impl FnMut(usize, &Done<C::Answer, C::Miss>),
) -> Vec<Done<C::Answer, C::Miss>> {
    let no_reply = || Done::unasked(Status::Failed, "the launcher sent no reply");
    let mut ended: Vec<Option<Done<C::Answer, C::Miss>>> = std::iter::repeat_with(|| None)
        .take(questions.len())
        .collect();
    // Those released run at once, as many as the limits on files and processes hold, as the
    // launcher's panels do when no `--jobs` caps them.
    let workers = questions
        .len()
        .min(crate::engine::lifecycle::judges_the_limits_allow());
    crate::engine::call::fanout::gated(
        questions.iter().zip(gates).collect(),
        workers,
        |_, (q, contract)| asker.ask_one(q, &gate_of(contract)).checked(contract),
        |i, done| {
            let done = done.unwrap_or_else(no_reply);
            each(i, &done);
            ended[i] = Some(done);
        },
    );
    ended
        .into_iter()
        .map(|d| d.unwrap_or_else(no_reply))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::verdict::{Miss, VerdictContract};
    use crate::records::Verdict;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn answered(answer: Value) -> Done {
        Done {
            answer: Some(object(answer)),
            status: Status::Ok,
            cause: None,
            ..Done::abstained(Status::Ok, "")
        }
    }

    #[test]
    fn the_door_reads_an_answer_once_into_the_contracts_type() {
        let done = answered(json!({"verdict": "breaks", "reason": "r", "confidence": 0.5}));
        let done = done.checked(&VerdictContract);
        let answer = done.answer.expect("a typed answer");
        assert_eq!(
            (answer.verdict, answer.reason.as_str()),
            (Verdict::Breaks, "r")
        );
        assert_eq!((done.status, done.refused), (Status::Ok, None));
    }

    /// An asker that skipped its gate (a fake, a bug) cannot slip an answer past the door: it
    /// is unreadable, its miss typed and its cause the contract's words.
    #[test]
    fn an_answer_that_missed_the_contract_is_unreadable_at_the_door() {
        let done = answered(json!({"verdict": "maybe", "reason": "unsure"}));
        let done = done.checked(&VerdictContract);
        assert!(done.answer.is_none());
        assert_eq!(done.status, Status::Unreadable);
        let miss = done.refused.expect("the typed miss");
        assert_eq!(
            (miss.said().as_deref(), miss.reason()),
            (Some("maybe"), Some("unsure"))
        );
        assert_eq!(done.cause.as_deref(), Some(miss.to_string().as_str()));
    }

    /// What the judge said when its answer missed (kept inside the call as the object read)
    /// comes out as the typed miss; how the call ended is kept as it was.
    #[test]
    fn the_object_that_missed_comes_out_as_the_typed_miss() {
        let mut done: Done = Done::abstained(Status::Unreadable, "no verdict");
        done.refused = Some(object(json!({"verdict": 7})));
        let done = done.checked(&VerdictContract);
        assert_eq!(done.refused, Some(Miss::Word(json!(7), None)));
        assert_eq!(
            (done.status, done.cause.as_deref()),
            (Status::Unreadable, Some("no verdict"))
        );
        let none: Done = Done::unasked(Status::NotFound, "no such seat");
        let none = none.checked(&VerdictContract);
        assert_eq!((none.answer, none.refused, none.attempts), (None, None, 0));
    }
}
