//! Asking one seat one question and reading a JSON answer: the interface through which
//! `panel-merge` and `panel-vote` reach models, with the same launcher, isolation, timeouts,
//! retries and run folder as `panel-judge`.

use crate::engine::extract::{self, Found};
use crate::engine::harness::{AnswerAt, Kind, PromptVia, Seat, Table, Vars};
use crate::engine::launch::{self, Outcome, Spec};
use crate::engine::run_folder;
use anyhow::{Context, Result, anyhow};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

// ---------------------------------------------------------------------------------------------
// The launcher: asks seats through their harnesses, each call sealed in private folders.

/// How seats are launched; shared by `panel-judge`, `panel-merge` and `panel-vote`.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// The run folder; a fresh temporary one when `None`.
    pub run: Option<PathBuf>,
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
    /// At most this many judges of a harness at once, machine-wide.
    pub harness_caps: BTreeMap<String, usize>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            run: None,
            timeout_secs: 300.0,
            retries: 1,
            jobs: None,
            harness_files: Vec::new(),
            families: BTreeMap::new(),
            pass_env: Vec::new(),
            max_budget_usd: None,
            harness_caps: BTreeMap::new(),
        }
    }
}

/// The options every tool that launches seats shares.
#[derive(clap::Args, Clone, Debug)]
pub struct LaunchArgs {
    /// The run folder that keeps every prompt, argv, output and record (default: a new temporary folder).
    #[arg(long, alias = "run", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Seconds one attempt of a seat may take before its process group is killed.
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    pub timeout: f64,

    /// How many times an unreadable or failed answer is asked for again.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub retries: u32,

    /// How many seats run at once (default: all).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// A spending cap in USD per call, passed to the harnesses that enforce one.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,

    /// A JSON file of harness rows that add to or replace the built-in ones (repeatable).
    #[arg(long = "harness-file", value_name = "FILE")]
    pub harness_files: Vec<PathBuf>,

    /// State a seat's model family, SEAT=FAMILY (repeatable), e.g. 'exec:llm -m x=openai'.
    #[arg(long = "family", value_name = "SEAT=FAMILY")]
    pub families: Vec<String>,

    /// Carry this variable of your environment into every seat (repeatable; also PANEL_PASS_ENV, comma-separated).
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,

    /// At most N judges of HARNESS at once across every panel-judge on this machine, HARNESS=N
    /// (repeatable; also PANEL_HARNESS_CAP, comma-separated).
    #[arg(long = "harness-cap", value_name = "HARNESS=N")]
    pub harness_caps: Vec<String>,
}

impl LaunchArgs {
    /// The options, checked.
    pub fn options(&self) -> Result<LaunchOptions> {
        let mut families = BTreeMap::new();
        for f in &self.families {
            let (seat, family) = f
                .rsplit_once('=')
                .filter(|(s, fam)| !s.is_empty() && !fam.is_empty())
                .with_context(|| format!("--family {f:?}: expected SEAT=FAMILY"))?;
            families.insert(seat.to_string(), family.to_lowercase());
        }
        let mut pass_env = self.pass_env.clone();
        if let Ok(list) = std::env::var("PANEL_PASS_ENV") {
            pass_env.extend(
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
        }
        let mut harness_caps = BTreeMap::new();
        let from_env = std::env::var("PANEL_HARNESS_CAP").unwrap_or_default();
        let listed = from_env
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .chain(self.harness_caps.iter().cloned());
        for cap in listed {
            let parsed = cap.split_once('=').and_then(|(h, n)| {
                n.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .map(|n| (h.trim().to_string(), n))
            });
            let (harness, n) = parsed.with_context(|| {
                format!("--harness-cap {cap:?}: expected HARNESS=N with N at least 1")
            })?;
            harness_caps.insert(harness, n);
        }
        if !(self.timeout > 0.0 && self.timeout.is_finite()) {
            anyhow::bail!(
                "--timeout {}: must be a positive number of seconds",
                self.timeout
            );
        }
        if self.jobs == Some(0) {
            anyhow::bail!("--jobs 0: at least one must run at a time");
        }
        Ok(LaunchOptions {
            run: self.out.clone(),
            timeout_secs: self.timeout,
            retries: self.retries,
            jobs: self.jobs,
            harness_files: self.harness_files.clone(),
            families,
            pass_env,
            max_budget_usd: self.max_budget_usd,
            harness_caps,
        })
    }
}

/// The real [`Asker`]: a launcher with its run folder.
pub fn launcher(opts: &LaunchOptions) -> Result<Box<dyn Asker>> {
    let mut l = Launcher::new(opts.clone())?;
    l.start()?;
    Ok(Box::new(l))
}

/// One call to make: a named question for a resolved seat.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    pub seat: Seat,
    pub prompt: String,
    pub schema: Value,
    pub mode: Mode,
    /// Retries for this job, in place of the launcher's.
    pub retries: Option<u32>,
}

impl Job {
    /// A sealed judge's call, with the launcher's retries.
    pub fn sealed(name: &str, seat: Seat, prompt: String, schema: Value) -> Job {
        Job {
            name: name.into(),
            seat,
            prompt,
            schema,
            mode: Mode::Sealed,
            retries: None,
        }
    }
}

/// How a call runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// In an empty private folder, no tools: the answer is a JSON object.
    Sealed,
    /// In a checkout it must read, with the harness's reviewer argv: the answer is the last
    /// message's text, handed to the check as `{"text": …}`, and the calls it made are counted.
    Reviewer { checkout: PathBuf },
}

/// How one call ended, after its retries.
#[derive(Clone, Debug, PartialEq)]
pub struct Done {
    pub answer: Option<Map<String, Value>>,
    pub status: Status,
    pub cause: Option<String>,
    pub excerpt: Option<String>,
    pub attempts: u32,
    pub duration: Duration,
    pub exit_code: Option<i32>,
    pub usage: Option<Usage>,
    /// A reviewer's tool calls, as its event stream shows them (`None`: not read).
    pub tool_calls: Option<Vec<String>>,
}

impl Done {
    fn abstained(status: Status, cause: String) -> Done {
        Done {
            answer: None,
            status,
            cause: Some(crate::tools::one_line(&cause)),
            excerpt: None,
            attempts: 1,
            duration: Duration::ZERO,
            exit_code: None,
            usage: None,
            tool_calls: None,
        }
    }
}

impl From<Done> for Reply {
    fn from(d: Done) -> Reply {
        Reply {
            answer: d.answer,
            status: d.status,
            cause: d.cause,
            attempts: d.attempts,
            usage: d.usage,
        }
    }
}

/// Marks an argument to leave out of argv.
const DROPPED: &str = "\u{0}dropped\u{0}";

/// The longest single argument Linux passes (MAX_ARG_STRLEN, with its NUL).
pub const MAX_ARG: usize = 128 * 1024 - 1;
/// Bytes of each stream kept in memory and in the run folder.
pub const OUTPUT_CAP: usize = 16 << 20;

/// Variables of the user's environment every judge keeps: finding programs, the locale,
/// certificates and proxies. Everything else stays out unless a harness row asks for it.
const BASE_ENV: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

pub struct Launcher {
    pub table: Table,
    pub opts: LaunchOptions,
    run: Option<PathBuf>,
    sandbox: Option<PathBuf>,
    user_env: BTreeMap<String, String>,
    user_home: PathBuf,
}

impl Launcher {
    /// Reads the harness table and the user's environment; creates nothing yet.
    pub fn new(opts: LaunchOptions) -> Result<Launcher> {
        let table = Table::load(&opts.harness_files)?;
        let user_env: BTreeMap<String, String> = std::env::vars().collect();
        let user_home = user_env
            .get("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| "/".into());
        Ok(Launcher {
            table,
            opts,
            run: None,
            sandbox: None,
            user_env,
            user_home,
        })
    }

    pub fn seat(&self, spec: &str) -> Result<Seat> {
        Seat::parse(spec, &self.table, &self.opts.families)
    }

    /// Every seat's executable is on PATH; else the first missing one, and how to install it.
    pub fn check_executables<'a>(&self, seats: impl IntoIterator<Item = &'a Seat>) -> Result<()> {
        let path = self.user_env.get("PATH").cloned().unwrap_or_default();
        for seat in seats {
            seat.resolve_executable(&path)?;
        }
        Ok(())
    }

    /// Creates the run folder and the sandbox for the judges' private folders.
    pub fn start(&mut self) -> Result<&Path> {
        let run = match &self.opts.run {
            Some(dir) => {
                fs::create_dir_all(dir)
                    .with_context(|| format!("{}: cannot create the run folder", dir.display()))?;
                dir.clone()
            }
            None => fresh_dir(&std::env::temp_dir(), "panel.")
                .context("cannot create a run folder in the temporary folder")?,
        };
        let run = run.canonicalize().unwrap_or(run);
        let sandbox = fresh_dir(&std::env::temp_dir(), "panel-sandbox.")
            .context("cannot create the judges' private folders")?;
        self.run = Some(run);
        self.sandbox = Some(sandbox);
        Ok(self.run.as_deref().expect("just set"))
    }

    pub fn run_dir(&self) -> Option<&Path> {
        self.run.as_deref()
    }

    /// The values of argv's placeholders for one attempt, with the folders it would use.
    fn vars(&self, job: &Job, prompt: &str, dirs: &AttemptDirs) -> Vars {
        let mut v = Vars::new();
        v.insert("prompt", prompt.to_string());
        v.insert("prompt_file", dirs.prompt_file().display().to_string());
        v.insert("schema", job.schema.to_string());
        v.insert("schema_file", dirs.schema_file().display().to_string());
        v.insert("answer_file", dirs.answer_file().display().to_string());
        v.insert("home", dirs.home.display().to_string());
        v.insert("work", dirs.work.display().to_string());
        if let Some(m) = &job.seat.model {
            v.insert("model", m.clone());
        }
        if let Some(b) = self.opts.max_budget_usd {
            v.insert("max_budget_usd", b.to_string());
        }
        v
    }

    /// The argv and how the prompt travels, or why the prompt cannot reach the harness.
    fn argv(
        &self,
        job: &Job,
        prompt: &str,
        dirs: &AttemptDirs,
    ) -> Result<(Vec<String>, Option<Vec<u8>>)> {
        let h = &job.seat.harness;
        let mut vars = self.vars(job, prompt, dirs);
        let mut stdin = None;
        match h.prompt {
            PromptVia::Stdin => stdin = Some(prompt.as_bytes().to_vec()),
            PromptVia::Argument if prompt.len() > MAX_ARG => match &h.stdin_prompt {
                Some(instead) => {
                    // An empty stand-in drops the argument rather than passing "".
                    let arg = if instead.is_empty() { DROPPED } else { instead };
                    vars.insert("prompt", arg.to_string());
                    stdin = Some(prompt.as_bytes().to_vec());
                }
                None if h.argv_mentions("{prompt_file}") => {}
                None => {
                    return Err(anyhow!(
                        "{}: the prompt is {} bytes, more than one argument carries (128 KiB), and {} takes it no other way",
                        job.name,
                        prompt.len(),
                        h.name
                    ));
                }
            },
            PromptVia::Argument => {}
        }
        let user_env = |name: &str| self.user_env.get(name).is_some_and(|v| !v.is_empty());
        let template = match &job.mode {
            Mode::Sealed => &h.argv,
            Mode::Reviewer { .. } => match &h.reviewer {
                Some(r) => &r.argv,
                None => {
                    return Err(anyhow!(
                        "harness {} has no reviewer mode: it cannot review a pull request",
                        h.name
                    ));
                }
            },
        };
        let mut argv = h.render(template, &vars, &user_env)?;
        argv.retain(|a| a != DROPPED);
        Ok((argv, stdin))
    }

    /// Checks that every job's prompt can reach its harness, before any starts.
    pub fn check_prompts(&self, jobs: &[Job]) -> Result<()> {
        let dirs = AttemptDirs::notional(Path::new("/nonexistent"), "x", 1);
        for job in jobs {
            self.argv(job, &job.prompt, &dirs)?;
        }
        Ok(())
    }

    /// The environment of one attempt: the base variables, the harness's own, the private folders.
    fn env(&self, job: &Job, dirs: &AttemptDirs) -> Vec<(String, String)> {
        let h = &job.seat.harness;
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        let carried = BASE_ENV
            .iter()
            .map(|s| s.to_string())
            .chain(h.pass_env.iter().cloned())
            .chain(self.opts.pass_env.iter().cloned());
        for name in carried {
            if let Some(v) = self.user_env.get(&name) {
                env.insert(name, v.clone());
            }
        }
        let home = dirs.home.display().to_string();
        env.insert("HOME".into(), home.clone());
        env.insert("XDG_CONFIG_HOME".into(), format!("{home}/.config"));
        env.insert("XDG_DATA_HOME".into(), format!("{home}/.local/share"));
        env.insert("XDG_STATE_HOME".into(), format!("{home}/.local/state"));
        env.insert("XDG_CACHE_HOME".into(), format!("{home}/.cache"));
        env.insert("TMPDIR".into(), dirs.tmp.display().to_string());
        let vars = self.vars(job, "", dirs);
        let reviewer_env = match (&job.mode, &h.reviewer) {
            (Mode::Reviewer { .. }, Some(r)) => Some(&r.env),
            _ => None,
        };
        for (k, v) in h.env.iter().chain(reviewer_env.into_iter().flatten()) {
            if let Some(v) = crate::engine::harness::fill(v, &vars) {
                env.insert(k.clone(), v);
            }
        }
        env.into_iter().collect()
    }

    /// The exact command of a job's first attempt, shell-quoted on one line.
    pub fn command_line(&self, job: &Job) -> Result<String> {
        let base = self
            .run
            .clone()
            .or_else(|| self.opts.run.clone())
            .unwrap_or_else(|| std::env::temp_dir().join("panel.RUN"));
        let dirs = AttemptDirs::notional(&base, &job.name, 1);
        if job.seat.harness.kind == Kind::Replay {
            return Ok(format!(
                "# {}: replays {}",
                job.name,
                shell_quote(job.seat.model.as_deref().unwrap_or(""))
            ));
        }
        let (argv, stdin) = self.argv(job, &job.prompt, &dirs)?;
        let h = &job.seat.harness;
        let vars = self.vars(job, "", &dirs);
        let mut words: Vec<String> = h
            .env
            .iter()
            .filter_map(|(k, v)| {
                crate::engine::harness::fill(v, &vars).map(|v| format!("{k}={}", shell_quote(&v)))
            })
            .collect();
        words.push(shell_quote(&h.executable));
        words.extend(argv.iter().map(|a| shell_quote(a)));
        match stdin {
            Some(text) => Ok(format!(
                "printf '%s' {} | {}",
                shell_quote(&String::from_utf8_lossy(&text)),
                words.join(" ")
            )),
            None => Ok(format!("{} < /dev/null", words.join(" "))),
        }
    }

    /// Asks one job, with its retries; never fails: a call that goes wrong is an abstention.
    pub fn ask(&self, job: &Job, check: &Check) -> Done {
        let started = Instant::now();
        let judge_dir = self.run.as_ref().map(|r| r.join(&job.name));
        if let Some(dir) = judge_dir.filter(|d| run_folder::dir(d)) {
            run_folder::file(&dir.join("prompt.txt"), &job.prompt);
            run_folder::file(&dir.join("schema.json"), job.schema.to_string());
        }
        let mut prompt = job.prompt.clone();
        let mut done = Done {
            answer: None,
            status: Status::Failed,
            cause: Some("not started".into()),
            excerpt: None,
            attempts: 0,
            duration: Duration::ZERO,
            exit_code: None,
            usage: None,
            tool_calls: None,
        };
        let retries = job.retries.unwrap_or(self.opts.retries);
        let mut asked_again = 0;
        let mut backoff = Duration::from_secs(1);
        for n in 1.. {
            if launch::stopped().is_some() {
                done.status = Status::Interrupted;
                done.cause = Some(INTERRUPTED.into());
                break;
            }
            let attempt = self.attempt(job, n, &prompt, check);
            if let Some(u) = &attempt.usage {
                done.usage.get_or_insert_with(Usage::default).add(u);
            }
            done = Done {
                attempts: n,
                usage: done.usage,
                ..attempt
            };
            // A rate limit is waited out, with backoff, for as long as the judge's deadline allows.
            if done.status == Status::RateLimited && started.elapsed() + backoff < self.timeout() {
                sleep_unless_stopped(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(60));
                continue;
            }
            let waited_out = done.status == Status::RateLimited;
            if waited_out || !(done.status.retryable() && asked_again < retries) {
                break;
            }
            asked_again += 1;
            prompt = format!(
                "{}{}",
                job.prompt,
                retry_note(done.cause.as_deref().unwrap_or("no answer"))
            );
        }
        done.duration = started.elapsed();
        done
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.opts.timeout_secs.max(0.001))
    }

    /// One attempt: launch (or replay), keep everything in the run folder, read the answer.
    fn attempt(&self, job: &Job, n: u32, prompt: &str, check: &Check) -> Done {
        let run = self.run.clone().unwrap_or_else(std::env::temp_dir);
        let sandbox = self.sandbox.clone().unwrap_or_else(std::env::temp_dir);
        let dirs = AttemptDirs::new(&run, &sandbox, &job.name, n);
        let result = match job.seat.harness.kind {
            Kind::Replay => self.replay(job),
            Kind::Process => self.launch(job, prompt, &dirs),
        };
        let (outcome, answer_file) = match result {
            Ok(r) => r,
            Err(e) => {
                let status = if e
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
                {
                    Status::NotFound
                } else {
                    Status::Failed
                };
                return Done::abstained(status, format!("{e:#}"));
            }
        };
        if run_folder::dir(&dirs.attempt) {
            run_folder::file(&dirs.attempt.join("stdout"), &outcome.stdout);
            run_folder::file(&dirs.attempt.join("stderr"), &outcome.stderr);
            run_folder::file(
                &dirs.attempt.join("exit.json"),
                serde_json::json!({
                    "exitCode": outcome.exit_code(),
                    "signal": outcome.signal(),
                    "timedOut": outcome.timed_out,
                    "interrupted": outcome.interrupted,
                    "durationMs": outcome.duration.as_millis() as u64,
                    "stdoutBytes": outcome.stdout_bytes,
                    "stderrBytes": outcome.stderr_bytes,
                })
                .to_string(),
            );
        }
        let mut done = read_answer(job, &outcome, answer_file.as_deref(), check, self.timeout());
        done.attempts = n;
        done
    }

    fn launch(
        &self,
        job: &Job,
        prompt: &str,
        dirs: &AttemptDirs,
    ) -> Result<(Outcome, Option<String>)> {
        let h = &job.seat.harness;
        let (argv, stdin) = self.argv(job, prompt, dirs)?;
        // What the judge reads and writes is private; the run folder only keeps copies, so a
        // full disk there cannot cost an answer.
        for d in [&dirs.home, &dirs.work, &dirs.tmp] {
            fs::create_dir_all(d).with_context(|| format!("{}: cannot create", d.display()))?;
        }
        // Any placeholder (argv, env, files, a reviewer's argv) may name them.
        fs::write(dirs.prompt_file(), prompt)?;
        fs::write(dirs.schema_file(), job.schema.to_string())?;
        if run_folder::dir(&dirs.attempt) {
            run_folder::file(
                &dirs.attempt.join("argv.json"),
                serde_json::to_string(&argv)?,
            );
            // A retry's prompt differs from the judge's prompt.txt: keep it too.
            if prompt != job.prompt {
                run_folder::file(&dirs.attempt.join("prompt.txt"), prompt);
            }
        }
        let copied = self.carry_credentials(job, dirs);
        let vars = self.vars(job, prompt, dirs);
        for (rel, text) in &h.files {
            let path = dirs.home.join(rel);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(
                &path,
                crate::engine::harness::fill(text, &vars).unwrap_or_else(|| text.clone()),
            )?;
        }
        let program = crate::engine::harness::find_on_path(
            &h.executable,
            self.user_env.get("PATH").map_or("", String::as_str),
        )
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} not found on PATH", h.executable),
            )
        })?;
        let _slot = match self.opts.harness_caps.get(&h.name) {
            Some(&cap) => {
                match crate::engine::slots::acquire(&h.name, cap, &|| launch::stopped().is_some())?
                {
                    Some(slot) => Some(slot),
                    None => anyhow::bail!("stopped while waiting for a {} slot", h.name),
                }
            }
            None => None,
        };
        let spec = Spec {
            program,
            args: argv,
            env: self.env(job, dirs),
            cwd: match &job.mode {
                Mode::Sealed => dirs.work.clone(),
                Mode::Reviewer { checkout } => checkout.clone(),
            },
            stdin,
            timeout: self.timeout(),
            cap: OUTPUT_CAP,
        };
        let outcome = launch::run(&spec);
        // Logins never stay behind in the sandbox.
        for path in copied {
            let _ = fs::remove_file(path);
        }
        let outcome = outcome?;
        let answer_at = match (&job.mode, &h.reviewer) {
            (Mode::Reviewer { .. }, Some(r)) => r.answer,
            _ => h.answer,
        };
        let answer = match answer_at {
            AnswerAt::File => fs::read(dirs.answer_file()).ok().map(|bytes| {
                run_folder::file(&dirs.attempt.join("answer"), &bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            }),
            AnswerAt::Stdout => None,
        };
        Ok((outcome, answer))
    }

    /// Copies the harness's credential files from the user's HOME; returns the copies.
    fn carry_credentials(&self, job: &Job, dirs: &AttemptDirs) -> Vec<PathBuf> {
        let env = |name: &str| self.user_env.get(name).cloned();
        let mut copied = Vec::new();
        for c in &job.seat.harness.credentials {
            let from = crate::engine::harness::expand_user_path(&c.from, &self.user_home, &env);
            let to = dirs.home.join(&c.to);
            if !from.is_file() {
                continue;
            }
            if let Some(parent) = to.parent() {
                let _ = fs::create_dir_all(parent);
            }
            if fs::copy(&from, &to).is_ok() {
                use std::os::unix::fs::PermissionsExt;
                let _ = fs::set_permissions(&to, fs::Permissions::from_mode(0o600));
                copied.push(to);
            }
        }
        copied
    }

    /// A recorded answer: `FILE` maps each name to its answer, or to a list of answers, one per
    /// round (`PANEL_ROUND`, from 1), the last repeating, as the seed's recorded judge does.
    fn replay(&self, job: &Job) -> Result<(Outcome, Option<String>)> {
        let file = job.seat.model.as_deref().unwrap_or_default();
        let text =
            fs::read_to_string(file).with_context(|| format!("replay: {file}: cannot read"))?;
        let all = crate::records::strict::value(&text)
            .map_err(|e| anyhow!("replay: {file}: not JSON: {e}"))?;
        let entry = all
            .get(&job.name)
            .ok_or_else(|| anyhow!("replay: {file} holds no answer for {}", job.name))?;
        let entry = match entry {
            Value::Array(list) if !list.is_empty() => {
                let round: usize = self
                    .user_env
                    .get("PANEL_ROUND")
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(1);
                &list[round.clamp(1, list.len()) - 1]
            }
            other => other,
        };
        let out = match entry {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        Ok((
            Outcome {
                status: Some(std::os::unix::process::ExitStatusExt::from_raw(0)),
                timed_out: false,
                interrupted: false,
                stdout_bytes: out.len() as u64,
                stdout: out.into_bytes(),
                stderr: Vec::new(),
                stderr_bytes: 0,
                duration: Duration::ZERO,
            },
            None,
        ))
    }

    /// Asks every job, at most `jobs` at once; `each` gets each job's index and result as it ends.
    pub fn ask_each(&self, jobs: &[Job], check: &Check, each: impl FnMut(usize, Done)) {
        let workers = self.opts.jobs.unwrap_or(jobs.len()).max(1);
        crate::engine::fanout::run(
            jobs.iter().collect(),
            workers,
            |_, job| self.ask(job, check),
            each,
        );
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        if let Some(s) = &self.sandbox {
            let _ = fs::remove_dir_all(s);
        }
    }
}

impl Asker for Launcher {
    fn ask_all(&self, questions: &[Question], check: &Check) -> Vec<Reply> {
        let mut jobs = Vec::new();
        let mut replies: Vec<Option<Reply>> = vec![None; questions.len()];
        let mut index = Vec::new();
        for (i, q) in questions.iter().enumerate() {
            match self.seat(&q.seat) {
                Ok(seat) => {
                    jobs.push(Job::sealed(
                        &q.name,
                        seat,
                        q.prompt.clone(),
                        q.schema.clone(),
                    ));
                    index.push(i);
                }
                Err(e) => replies[i] = Some(Reply::abstained(Status::NotFound, format!("{e:#}"))),
            }
        }
        self.ask_each(&jobs, check, |j, done| {
            replies[index[j]] = Some(done.into())
        });
        replies
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Reply::abstained(Status::Interrupted, "not asked")))
            .collect()
    }
}

/// The folders of one attempt: in the run folder what is kept, in the sandbox what is private.
struct AttemptDirs {
    attempt: PathBuf,
    private: PathBuf,
    home: PathBuf,
    work: PathBuf,
    tmp: PathBuf,
}

impl AttemptDirs {
    fn new(run: &Path, sandbox: &Path, name: &str, n: u32) -> AttemptDirs {
        let private = sandbox.join(format!("{name}.{n}"));
        AttemptDirs {
            attempt: run.join(name).join(format!("attempt-{n}")),
            home: private.join("home"),
            work: private.join("work"),
            tmp: private.join("tmp"),
            private,
        }
    }

    fn prompt_file(&self) -> PathBuf {
        self.private.join("prompt.txt")
    }

    fn schema_file(&self) -> PathBuf {
        self.private.join("schema.json")
    }

    fn answer_file(&self) -> PathBuf {
        self.private.join("answer")
    }

    /// Where an attempt's folders would be, for messages and dry runs.
    fn notional(run: &Path, name: &str, n: u32) -> AttemptDirs {
        AttemptDirs::new(run, &run.join(".sandbox"), name, n)
    }
}

const INTERRUPTED: &str = "stopped by a signal before it answered";

/// Reads an attempt's answer and says how it ended. A valid answer counts whatever the exit
/// status; exit 0 proves nothing without one.
fn read_answer(
    job: &Job,
    o: &Outcome,
    answer_file: Option<&str>,
    check: &Check,
    timeout: Duration,
) -> Done {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let mut done = Done {
        answer: None,
        status: Status::Unreadable,
        cause: None,
        excerpt: None,
        attempts: 1,
        duration: o.duration,
        exit_code: o.exit_code(),
        usage: job.seat.usage.as_ref().and_then(|f| usage_of(f, &stdout)),
        tool_calls: None,
    };
    if o.timed_out {
        done.status = Status::Timeout;
        done.cause = Some(format!(
            "no answer within {}s; its process group was killed",
            timeout.as_secs_f64()
        ));
        done.excerpt = nonempty_excerpt(&stdout);
        return done;
    }
    if let Mode::Reviewer { .. } = job.mode {
        done.tool_calls = job.seat.tool_calls.as_ref().map(|f| {
            f.run_text(&stdout)
                .unwrap_or_default()
                .into_iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect()
        });
    }
    let found = match (&job.mode, answer_file.filter(|t| !t.trim().is_empty())) {
        (Mode::Reviewer { .. }, file) => {
            let text = match file {
                Some(text) => text.to_string(),
                None => last_message(job.seat.reviewer_filter.as_deref(), &stdout),
            };
            let mut obj = Map::new();
            obj.insert("text".into(), Value::String(text));
            Found::Object(obj)
        }
        (Mode::Sealed, Some(text)) => extract::answer(None, text),
        (Mode::Sealed, None) => extract::answer(job.seat.filter.as_deref(), &stdout),
    };
    // Cut short, only a sealed answer that meets its contract proves it was whole; a reviewer's
    // text (any text passes its check) may be a first message.
    let reviewer = matches!(job.mode, Mode::Reviewer { .. });
    let why = match &found {
        Found::Object(obj) if !(o.interrupted && reviewer) => match check(obj) {
            Ok(()) => {
                done.answer = Some(obj.clone());
                done.status = Status::Ok;
                return done;
            }
            Err(why) => why,
        },
        Found::Object(_) => INTERRUPTED.to_string(),
        Found::Text(t) if t.trim().is_empty() => "no answer".to_string(),
        Found::Text(_) => "no JSON object in the answer".to_string(),
    };
    if o.interrupted {
        done.status = Status::Interrupted;
        done.cause = Some(INTERRUPTED.into());
        return done;
    }
    done.excerpt = nonempty_excerpt(match &found {
        Found::Text(t) => t,
        Found::Object(_) => &stdout,
    });
    // The words are looked for in what the filter read (claude's `.result`) before raw stdout.
    let said = match &found {
        Found::Text(t) => job.seat.harness.classify_error(t, &stderr),
        Found::Object(_) => None,
    };
    if let Some((status, line)) = said.or_else(|| job.seat.harness.classify_error(&stdout, &stderr))
    {
        done.status = status;
        done.cause = Some(line);
    } else if let Some(sig) = o.signal() {
        done.status = Status::Failed;
        done.cause = Some(format!(
            "{} was killed by signal {sig}",
            job.seat.harness.executable
        ));
    } else if let Some(code) = o.exit_code().filter(|c| *c != 0) {
        done.status = if code == 127 {
            Status::NotFound
        } else {
            Status::Failed
        };
        let said = last_line(&stderr)
            .or_else(|| last_line(&stdout))
            .unwrap_or_default();
        done.cause = Some(
            format!(
                "{} exited {code}: {why}; {said}",
                job.seat.harness.executable
            )
            .trim_end_matches("; ")
            .to_string(),
        );
    } else {
        done.status = Status::Unreadable;
        done.cause = Some(why);
    }
    done
}

/// What a second attempt adds after an answer that could not be read.
fn retry_note(why: &str) -> String {
    format!(
        "\nYour previous answer could not be read ({why}). Answer again with the JSON object alone, with no other text.\n"
    )
}

/// Sleeps, waking early when a signal stops the run.
fn sleep_unless_stopped(total: Duration) {
    let until = Instant::now() + total;
    while Instant::now() < until && launch::stopped().is_none() {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

/// A reviewer's reply: the last message its filter yields, or all of stdout without one.
fn last_message(filter: Option<&extract::Filter>, stdout: &str) -> String {
    let last = filter.and_then(|f| f.run_text(stdout)).and_then(|outs| {
        outs.into_iter()
            .filter_map(|v| v.as_str().map(String::from))
            .next_back()
    });
    last.unwrap_or_else(|| stdout.trim_end().to_string())
}

fn nonempty_excerpt(text: &str) -> Option<String> {
    let e = extract::excerpt(text, 300);
    (!e.is_empty()).then_some(e)
}

fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| extract::excerpt(l, 200))
}

fn usage_of(filter: &extract::Filter, stdout: &str) -> Option<Usage> {
    let outputs = filter.run_text(stdout)?;
    let mut total: Option<Usage> = None;
    for v in outputs {
        if let Ok(u) = crate::records::strict::from_value::<Usage>(v)
            && !u.is_empty()
        {
            total.get_or_insert_with(Usage::default).add(&u);
        }
    }
    total
}

/// Creates a new folder `prefix` + six random characters under `parent`.
fn fresh_dir(parent: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    for _ in 0..100 {
        let nonce = crate::contracts::fence::random_hex(3);
        let dir = parent.join(format!("{prefix}{}", &nonce[..6]));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free name"))
}

/// Quotes a word for bash so it stays one word on one line.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    {
        return word.to_string();
    }
    if word.chars().any(|c| c.is_control()) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut_short(stdout: &str) -> Outcome {
        Outcome {
            status: None,
            timed_out: false,
            interrupted: true,
            stdout: stdout.as_bytes().to_vec(),
            stdout_bytes: stdout.len() as u64,
            stderr: Vec::new(),
            stderr_bytes: 0,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn a_cut_short_reviewer_is_interrupted_whatever_it_said_first() {
        let table = Table::builtin();
        let seat = Seat::parse("exec:true", &table, &BTreeMap::new()).unwrap();
        let any_text: &Check = &|_| Ok(());
        let mut job = Job::sealed("r", seat, "p".into(), Value::Null);
        job.mode = Mode::Reviewer {
            checkout: PathBuf::from("/nonexistent"),
        };
        let first_message = "Let me read src/lib.rs first.";
        let done = read_answer(
            &job,
            &cut_short(first_message),
            None,
            any_text,
            Duration::ZERO,
        );
        assert_eq!(done.status, Status::Interrupted);
        // A sealed judge's answer that meets its contract was whole, cut short or not.
        job.mode = Mode::Sealed;
        let verdict = r#"{"verdict":"holds","reason":"r","confidence":0.5}"#;
        let check: &Check = &|obj| crate::contracts::verdict::check_verdict(obj).map(|_| ());
        let done = read_answer(&job, &cut_short(verdict), None, check, Duration::ZERO);
        assert_eq!(done.status, Status::Ok);
        let done = read_answer(&job, &cut_short("half an ans"), None, check, Duration::ZERO);
        assert_eq!(done.status, Status::Interrupted);
    }

    #[test]
    fn quoting_keeps_one_word_on_one_line() {
        assert_eq!(shell_quote("haiku"), "haiku");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\nb's"), "$'a\\nb\\'s'");
    }
}
