//! The launcher: asks seats through their harnesses, each call sealed in private folders, with
//! its retries, and keeps everything in the run folder. How argv and the environment are made
//! is in [`crate::engine::argv`], how an answer is read in [`crate::engine::answer`], how a
//! process runs and is ended in [`crate::engine::launch`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::engine::answer::{INTERRUPTED, read_answer};
use crate::engine::ask::{
    Asker, Check, Done, Job, KeptFolder, LaunchOptions, Mode, Prompt, Question, Reply, Session,
};
use crate::engine::credentials::Logins;
use crate::engine::extract::EventFilters;
use crate::engine::harness::{AnswerAt, Kind, Seat, Table, find_on_path};
use crate::engine::launch::{self, ProcessOutcome, Spec};
use crate::engine::lifecycle;
use crate::engine::progress::Progress;
use crate::engine::run_folder::{self, AttemptDirs};
use crate::engine::sandbox::{
    Policy,
    rules::{self, Rules},
};
use crate::engine::slots::{self, NoSlot};
use crate::engine::transcript::Transcript;
use crate::records::{Status, Usage};

/// Bytes of a judge's stderr, and of the answer file it writes, kept in memory and in the run
/// folder. (Its stdout goes to the run folder as it arrives, within `--max-output`: see
/// [`crate::engine::transcript`].)
pub const OUTPUT_CAP: usize = 16 << 20;

/// The real [`Asker`]: a launcher with its run folder made and the run's lifecycle begun.
pub fn started(opts: &LaunchOptions) -> Result<Launcher> {
    let mut l = Launcher::new(opts.clone())?;
    l.start()?;
    Ok(l)
}

/// Launches seats: the harness table, the options, the run folder that keeps everything, and
/// the sandbox that holds each judge's private folders (removed when the launcher is dropped).
pub struct Launcher {
    pub table: Table,
    pub opts: LaunchOptions,
    pub(super) run: Option<PathBuf>,
    pub(super) sandbox: Option<run_folder::Sandbox>,
    /// Held while the run lives: no other run writes into its folder.
    pub(super) run_lock: Option<nix::fcntl::Flock<fs::File>>,
    pub(super) user_env: BTreeMap<String, String>,
    pub(super) user_home: PathBuf,
    /// What the judges run under (every record says it), and the Landlock ABI to confine at.
    pub(super) walls: (String, Option<u8>),
    /// The status line on a terminal; every [`Launcher::ask`] counts in it.
    pub progress: Progress,
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
            run_lock: None,
            user_env,
            user_home,
            // Set at start: a dry run prints the commands as they run outside our walls,
            // which is how a pasted one runs.
            walls: ("off".into(), None),
            progress: Progress::for_stderr(&tool_name()),
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
        // Before anything is made: `--sandbox required` on a kernel that cannot is exit 2.
        self.walls = crate::engine::sandbox::walls(self.opts.sandbox)?;
        if let Some(why) = self.walls.0.strip_prefix("unavailable: ") {
            eprintln!(
                "{}: judges run unconfined: {why} (--sandbox required refuses to, --sandbox off says so)",
                tool_name()
            );
        }
        if !self.opts.harness_caps.is_empty() {
            slots::private_dir(&slots::dir())?;
        }
        let run = match &self.opts.run {
            Some(dir) => dir.clone(),
            None => run_folder::fresh("panel.")
                .context("cannot create a run folder in the temporary folder")?
                .keep(),
        };
        self.run_lock = Some(run_folder::claim(&run, self.opts.resume)?);
        let run = run.canonicalize().unwrap_or(run);
        let sandbox =
            run_folder::Sandbox::create().context("cannot create the judges' private folders")?;
        lifecycle::begin().context("cannot handle the signals that stop a run")?;
        self.run = Some(run);
        self.sandbox = Some(sandbox);
        Ok(self.run.as_deref().expect("just set"))
    }

    pub fn run_dir(&self) -> Option<&Path> {
        self.run.as_deref()
    }

    /// What the judges run under, as records say it: `landlock-abi-N`, `off`, `unavailable: …`.
    pub fn sandbox(&self) -> &str {
        &self.walls.0
    }

    /// The rules one attempt's judge is confined to, when judges are confined.
    fn rules(&self, job: &Job, spec: &Spec, dirs: &AttemptDirs) -> Option<Rules> {
        let abi = self.walls.1?;
        let h = &job.seat.harness;
        let path_env = self.user_env.get("PATH").map_or("", String::as_str);
        // An exec: seat's command runs what its first word names; anything else it names
        // (a script given to `sh`) is granted with --sandbox-read.
        let command = match (h.name.as_str(), job.seat.model.as_deref()) {
            ("exec", Some(command)) => command
                .split_whitespace()
                .next()
                .and_then(|w| find_on_path(w.trim_matches(['\'', '"']), path_env)),
            _ => None,
        };
        let home = |p: &String| match p.strip_prefix("~/") {
            Some(rest) => self.user_home.join(rest),
            None => PathBuf::from(p),
        };
        let mut read: Vec<PathBuf> = h.sandbox_read.iter().map(home).collect();
        read.extend(self.opts.sandbox_read.iter().cloned());
        // The endpoints it was given: in its argv, its environment, and the configuration
        // written or copied into its HOME.
        let file_texts = small_files_under(&dirs.home);
        let texts = spec
            .args
            .iter()
            .chain(spec.env.iter().map(|(_, v)| v))
            .chain(&file_texts)
            .map(String::as_str)
            .collect();
        let judge = rules::Judge {
            abi,
            program: &spec.program,
            path_env,
            command,
            private: &dirs.private,
            checkout: match &job.mode {
                Mode::Reviewer { checkout, .. } => Some(checkout),
                Mode::Sealed => None,
            },
            read,
            write: self.opts.sandbox_write.clone(),
            home: &self.user_home,
            texts,
        };
        Some(judge.rules())
    }

    /// Asks one job, with its retries; never fails: a call that goes wrong is an abstention.
    pub fn ask(&self, job: &Job, check: &Check) -> Done {
        let started = Instant::now();
        // Every tool checks the names it reads; this is the last wall before a path is made.
        if let Err(why) = crate::records::text::check_folder_name(&job.name) {
            let why = format!("a judge {why}");
            lifecycle::fail_with(why.clone());
            return Done::abstained(Status::Interrupted, why);
        }
        self.progress.started();
        let done = self.ask_counted(job, check, started);
        self.progress
            .ended(done.answer.is_some(), done.usage.as_ref());
        done
    }

    fn ask_counted(&self, job: &Job, check: &Check, started: Instant) -> Done {
        // Built now, shared with the attempt's stdin, dropped when the judge is done.
        let first = Arc::new(job.prompt.build());
        let judge_dir = self.run.as_ref().map(|r| r.join(&job.name));
        if let Some(dir) = judge_dir.filter(|d| run_folder::dir(d)) {
            run_folder::file(&dir.join("prompt.txt"), first.as_bytes());
            run_folder::file(&dir.join("schema.json"), job.schema.to_string());
        }
        let mut prompt = Arc::clone(&first);
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
            refused: None,
            session: None,
            kept: None,
        };
        let retries = job.retries.unwrap_or(self.opts.retries);
        let mut asked_again = 0;
        let mut backoff = Duration::from_secs(1);
        for n in 1.. {
            if lifecycle::stopped().is_some() {
                done.status = Status::Interrupted;
                done.cause = Some(INTERRUPTED.into());
                break;
            }
            let attempt = self.attempt(job, n, (&prompt, first.len()), check);
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
            let note = retry_note(done.cause.as_deref().unwrap_or("no answer"));
            prompt = Arc::new(format!("{first}{note}"));
        }
        done.duration = started.elapsed();
        done
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.opts.timeout_secs.max(0.001))
    }

    /// One attempt: launch (or replay), keep everything in the run folder, read the answer.
    fn attempt(&self, job: &Job, n: u32, prompt: (&Arc<String>, usize), check: &Check) -> Done {
        let run = self.run.clone().unwrap_or_else(std::env::temp_dir);
        let sandbox = self
            .sandbox
            .as_ref()
            .map_or_else(std::env::temp_dir, |s| s.path().to_path_buf());
        let mut dirs = AttemptDirs::new(&run, &sandbox, &job.name, n);
        let mut kept = None;
        match &job.mode {
            // A resumed session runs in the private folder that keeps it; its holder removes it.
            Mode::Reviewer {
                session: Session::Resume { folder, .. },
                ..
            } => dirs = dirs.in_private(&folder.private),
            // Kept for a resume: removed when the last holder of the session lets go.
            Mode::Reviewer {
                session: Session::Keep,
                ..
            } if job.seat.harness.kind == Kind::Process => {
                kept = Some(Arc::new(KeptFolder {
                    private: dirs.private.clone(),
                }))
            }
            _ => {}
        }
        let result = match job.seat.harness.kind {
            Kind::Replay => crate::engine::replay::answer(
                job,
                self.user_env.get("PANEL_ROUND").map(String::as_str),
            )
            .map(|o| (o, None)),
            Kind::Process => {
                let launched = self.launch(job, prompt, &dirs);
                // Read and kept: the attempt's private folder has served, unless its session
                // is kept or resumed.
                if !matches!(&job.mode, Mode::Reviewer { session, .. } if *session != Session::Forget)
                {
                    let _ = fs::remove_dir_all(&dirs.private);
                }
                launched
            }
        };
        let (outcome, answer_file) = match result {
            Ok(r) => r,
            Err(e) if e.downcast_ref::<SlotWait>().is_some() => {
                return Done::abstained(Status::Timeout, format!("{e:#}"));
            }
            Err(e) if e.downcast_ref::<Ours>().is_some() => {
                lifecycle::fail_with(format!("{e:#}"));
                return Done::abstained(Status::Interrupted, format!("{e:#}"));
            }
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
            // A launched judge's stdout is there already, written as it arrived.
            if matches!(job.seat.harness.kind, Kind::Replay) {
                run_folder::file(&dirs.attempt.join("stdout"), outcome.stdout.text());
            }
            run_folder::file(&dirs.attempt.join("stderr"), &outcome.stderr);
            run_folder::file(
                &dirs.attempt.join("exit.json"),
                serde_json::json!({
                    "exitCode": outcome.exit_code(),
                    "signal": outcome.signal(),
                    "timedOut": outcome.timed_out,
                    "interrupted": outcome.interrupted,
                    "durationMs": outcome.duration.as_millis() as u64,
                    "stdoutBytes": outcome.stdout.bytes,
                    "stdoutKept": outcome.stdout.kept,
                    "maxOutput": outcome.stdout.budget(),
                    "outputLimit": outcome.stdout.over,
                    "linesPassedOver": outcome.stdout.events().passed_over,
                    "stderrBytes": outcome.stderr_bytes,
                })
                .to_string(),
            );
        }
        let mut done = read_answer(job, &outcome, answer_file.as_deref(), check, self.timeout());
        done.attempts = n;
        done.kept = kept;
        let passed = outcome.stdout.events().passed_over;
        if passed > 0 && done.status != Status::Ok {
            // Noted where it may explain the missing answer.
            let note = format!(
                "{passed} line(s) of its output past {} (or too deep to read) passed over",
                crate::engine::transcript::shown_size(crate::engine::extract::MAX_EVENT as u64)
            );
            done.cause = Some(match done.cause.take() {
                Some(c) => format!("{c}; {note}"),
                None => note,
            });
        }
        done
    }

    /// One launch; `first_len` is the length of the judge's first prompt (a retry's is longer).
    fn launch(
        &self,
        job: &Job,
        (prompt, first_len): (&Arc<String>, usize),
        dirs: &AttemptDirs,
    ) -> Result<(ProcessOutcome, Option<String>)> {
        let h = &job.seat.harness;
        let (argv, stdin) = self.argv(job, prompt, dirs)?;
        // What the judge reads and writes is private; the run folder only keeps copies, so a
        // full disk there cannot cost an answer.
        for d in [&dirs.home, &dirs.work, &dirs.tmp] {
            run_folder::make_dir(d).map_err(|e| ours(d, e))?;
        }
        // Any placeholder (argv, env, files, a reviewer's argv) may name them.
        let write = |path: &Path, bytes: &[u8]| {
            run_folder::write_private(path, bytes).map_err(|e| ours(path, e))
        };
        write(&dirs.prompt_file(), prompt.as_bytes())?;
        write(&dirs.schema_file(), job.schema.to_string().as_bytes())?;
        // Made here and read through this descriptor: a file put in its place is not read.
        let answer_file = run_folder::create_private(&dirs.answer_file())
            .map_err(|e| ours(&dirs.answer_file(), e))?;
        let kept = run_folder::dir(&dirs.attempt);
        if kept {
            run_folder::file(
                &dirs.attempt.join("argv.json"),
                serde_json::to_string(&argv)?,
            );
            // A retry's prompt differs from the judge's prompt.txt: keep it too.
            if prompt.len() != first_len {
                run_folder::file(&dirs.attempt.join("prompt.txt"), prompt.as_bytes());
            }
        }
        let program = find_on_path(
            &h.executable,
            self.user_env.get("PATH").map_or("", String::as_str),
        )
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} not found on PATH", h.executable),
            )
        })?;
        // The wait for a slot is part of the attempt's time.
        let started = Instant::now();
        let _slot = match self.opts.harness_caps.get(&h.name) {
            Some(&cap) => Some(self.slot(&h.name, cap, started)?),
            None => None,
        };
        let env = |name: &str| self.user_env.get(name).cloned();
        let logins = Logins::copy(h, &self.user_home, &env, &dirs.home);
        let vars = self.vars(job, prompt, dirs);
        for (rel, text) in &h.files {
            let path = dirs.home.join(rel);
            if let Some(parent) = path.parent() {
                run_folder::make_dir(parent).map_err(|e| ours(parent, e))?;
            }
            let text = crate::engine::harness::fill(text, &vars).unwrap_or_else(|| text.clone());
            write(&path, text.as_bytes())?;
        }
        let mut spec = Spec {
            program,
            args: argv,
            env: self.env(job, dirs),
            cwd: match &job.mode {
                Mode::Sealed => dirs.work.clone(),
                Mode::Reviewer { checkout, .. } => checkout.clone(),
            },
            stdin,
            timeout: self.timeout().saturating_sub(started.elapsed()),
            cap: OUTPUT_CAP,
            supervised: None,
        };
        spec.supervised = Some(Policy {
            grace_ms: lifecycle::JUDGE_GRACE.as_millis() as u64,
            private: Some(dirs.private.clone()),
            confine: self.rules(job, &spec, dirs),
        });
        let reviewer = matches!(job.mode, Mode::Reviewer { .. });
        let filters = EventFilters {
            answer: match reviewer {
                true => job.seat.reviewer_filter.clone(),
                false => job.seat.filter.clone(),
            },
            usage: job.seat.usage.clone(),
            tool_calls: job.seat.tool_calls.clone().filter(|_| reviewer),
        };
        // Written as it arrives: the run folder keeps it byte for byte, within the budget.
        let path = dirs.attempt.join("stdout");
        let deadline = started + self.timeout();
        let stdout_file = kept
            .then(|| {
                lifecycle::through_shortage(deadline, || run_folder::create_private(&path))
                    .map_err(|e| run_folder::lose(&path, &e))
            })
            .and_then(Result::ok)
            .map(|f| (f, path));
        let stdout = Transcript::new(stdout_file, filters, self.opts.max_output);
        let outcome = launch::run(&spec, stdout);
        drop(logins);
        let outcome = outcome.map_err(|e| match lifecycle::is_shortage(&e) {
            true => anyhow::Error::new(Ours(format!(
                "cannot start a judge: {e} (no judge runs to free what it needs: raise ulimit -n or -u, or lower --jobs)"
            ))),
            false => e.into(),
        })?;
        let answer_at = match (&job.mode, &h.reviewer) {
            (Mode::Reviewer { .. }, Some(r)) => r.answer,
            _ => h.answer,
        };
        let answer = match answer_at {
            AnswerAt::File => {
                let bytes = read_answer_file(answer_file, &dirs.answer_file());
                run_folder::file(&dirs.attempt.join("answer"), &bytes);
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            AnswerAt::Stdout => None,
        };
        Ok((outcome, answer))
    }

    /// One of `cap` machine-wide slots of `harness`, waited for within the attempt's deadline.
    fn slot(&self, harness: &str, cap: usize, started: Instant) -> Result<slots::Slot> {
        let until = started + self.timeout();
        let stopped = || lifecycle::stopped().is_some();
        match slots::acquire(harness, cap, until, &stopped) {
            Err(e) => Err(anyhow::Error::new(Ours(e.to_string()))),
            Ok(Ok(slot)) => Ok(slot),
            Ok(Err(NoSlot::Stopped)) => bail!("stopped while waiting for a {harness} slot"),
            Ok(Err(NoSlot::Deadline)) => Err(anyhow::Error::new(SlotWait(format!(
                "no {harness} slot came free within {}s (--harness-cap {harness}={cap}): not asked",
                self.timeout().as_secs_f64()
            )))),
        }
    }

    /// Asks every job, at most `jobs` at once; `each` gets each job's index and result as it ends.
    pub fn ask_each(&self, jobs: &[Job], check: &Check, each: impl FnMut(usize, Done)) {
        let allowed = lifecycle::judges_the_limits_allow();
        let workers = self.opts.jobs.unwrap_or(jobs.len().min(allowed)).max(1);
        self.progress.expect(jobs.len());
        crate::engine::fanout::run(
            jobs.iter().collect(),
            workers,
            |_, job| self.ask(job, check),
            each,
        );
    }
}

impl Asker for Launcher {
    fn sandbox(&self) -> Option<&str> {
        Some(Launcher::sandbox(self))
    }

    fn ask_all(&self, questions: &[Question], check: &Check) -> Vec<Reply> {
        let mut jobs = Vec::new();
        let mut replies: Vec<Option<Reply>> = vec![None; questions.len()];
        let mut index = Vec::new();
        for (i, q) in questions.iter().enumerate() {
            match self.seat(&q.seat) {
                Ok(seat) => {
                    let mut job = Job::sealed(
                        &q.name,
                        seat,
                        Prompt::text(q.prompt.clone()),
                        q.schema.clone(),
                    );
                    if let Some(dir) = &q.reads {
                        job.mode = Mode::Reviewer {
                            checkout: dir.clone(),
                            session: Default::default(),
                        };
                    }
                    jobs.push(job);
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

/// A failure on our side (a folder we could not make, a file we could not write, no
/// descriptor or process left): never the judge's failure; it stops the run (exit 2).
#[derive(Debug)]
struct Ours(String);

impl std::fmt::Display for Ours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Ours {}

/// The attempt's deadline passed while it waited for a `--harness-cap` slot.
#[derive(Debug)]
struct SlotWait(String);

impl std::fmt::Display for SlotWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SlotWait {}

fn ours(path: &Path, e: std::io::Error) -> anyhow::Error {
    anyhow::Error::new(Ours(format!("{}: cannot write: {e}", path.display())))
}

/// What the harness wrote into the answer file made for it, read through the descriptor held
/// since (at most [`OUTPUT_CAP`] bytes); empty when the file at its path was replaced, since
/// only the file made for this judge is its answer.
fn read_answer_file(file: fs::File, path: &Path) -> Vec<u8> {
    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let same = |a: &fs::Metadata, b: &fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let (Ok(held), Ok(now)) = (file.metadata(), fs::symlink_metadata(path)) else {
        return Vec::new();
    };
    if !same(&held, &now) {
        return Vec::new();
    }
    let mut file = file;
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.take(OUTPUT_CAP as u64).read_to_end(&mut bytes);
    bytes
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
    while Instant::now() < until && lifecycle::stopped().is_none() {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

/// This binary's name, for a warning line.
fn tool_name() -> String {
    std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "panel".into())
}

/// The text of every small file under `dir` (a judge's HOME: its configuration and logins).
fn small_files_under(dir: &Path) -> Vec<String> {
    const SMALL: u64 = 256 << 10;
    let mut texts = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => folders.push(entry.path()),
                Ok(t) if t.is_file() && entry.metadata().is_ok_and(|m| m.len() <= SMALL) => {
                    texts.extend(fs::read_to_string(entry.path()).ok());
                }
                _ => {}
            }
        }
    }
    texts
}
