//! One attempt of one job, as a value. *Attempt* names one try: the job, its number (a retry
//! is the next attempt), its folders, its prompt and the run's [`Context`]. From it come its
//! argv ([`crate::engine::call::argv`]), its environment, the walls it runs in, a dry run's bash block
//! ([`crate::engine::paste`]), and [`Attempt::run`]: launch (or replay), keep everything in the
//! run folder, read the answer. Retries are the launcher's, the threads the fan-out's.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};

use crate::engine::beneath;
use crate::engine::call::answer::{INTERRUPTED, read_answer};
use crate::engine::call::argv::{self, Argv};
use crate::engine::call::ask::{Check, Done, Job, KeptFolder, Role, Session};
use crate::engine::call::context::Context;
use crate::engine::call::extract::EventFilters;
use crate::engine::call::launch::{self, ProcessOutcome, Spec};
use crate::engine::call::transcript::Transcript;
use crate::engine::carried::{self, CarriedFiles};
use crate::engine::harness::{AnswerAt, HarnessKind, Vars, find_on_path};
use crate::engine::lifecycle;
use crate::engine::logins::Given;
use crate::engine::run_folder::{
    self, ANSWER_FILE, AUTHORITIES_FILE, AttemptDirs, PROMPT_FILE, SCHEMA_FILE, SHARED_FILE,
};
use crate::engine::sandbox::egress::{self, Endpoint};
use crate::engine::sandbox::share::ShareReport;
use crate::engine::sandbox::{Policy, grants, policy};
use crate::engine::slots::{self, NoSlot};
use crate::records::Status;

/// Bytes of a judge's stderr, and of the answer file it writes, kept in memory and in the run
/// folder. (Its stdout goes to the run folder as it arrives, within `--max-output`: see
/// [`crate::engine::call::transcript`].)
pub const OUTPUT_CAP: usize = 16 << 20;

pub struct Attempt<'a> {
    pub job: &'a Job,
    /// 1 for the first attempt.
    pub n: u32,
    pub dirs: AttemptDirs,
    /// This attempt's prompt (a retry's carries a note after the first).
    pub prompt: Arc<String>,
    /// The length of the job's first prompt: a retry's differs, and is kept beside it.
    pub first_len: usize,
    /// What every judge of the panel is sent alike, for a row that takes it apart
    /// (`{shared_file}`): then `prompt` is the judge's own part alone.
    pub shared: Option<String>,
    pub ctx: &'a Context,
}

impl<'a> Attempt<'a> {
    /// Attempt `n` of `job`, kept under the run folder `run`, private in `private`; its prompt
    /// is the whole, its first `shared` bytes what the panel's judges share.
    pub fn new(
        job: &'a Job,
        n: u32,
        (whole, first_len, shared): (Arc<String>, usize, usize),
        (run, private): (&Path, &Path),
        ctx: &'a Context,
    ) -> Attempt<'a> {
        let mut dirs = AttemptDirs::new(run, private, &job.name, n);
        // A resumed session runs in the private folder that keeps it; its holder removes it.
        if let Role::Reviewer {
            session: Session::Resume { folder, .. },
            ..
        } = &job.role
        {
            dirs = dirs.in_private(&folder.private);
        }
        let whole_len = whole.len();
        let (prompt, shared) = argv::split(job, whole, shared);
        // What was taken apart is no part of either prompt the run folder compares.
        let first_len = first_len.saturating_sub(whole_len - prompt.len());
        Attempt {
            job,
            n,
            dirs,
            prompt,
            first_len,
            shared,
            ctx,
        }
    }

    /// The values of argv's placeholders.
    pub fn vars(&self) -> Vars<'_> {
        argv::vars(self.job, &self.prompt, &self.dirs, self.ctx)
    }

    /// Its argv and how the prompt travels; `prompt_word` stands where the prompt would;
    /// `login`, the kind of the login it is given.
    pub fn argv(&self, prompt_word: Option<&str>, login: Option<&str>) -> Result<Argv<'a>> {
        argv::of(
            self.job,
            &self.prompt,
            &self.dirs,
            self.ctx,
            (prompt_word, login),
        )
    }

    /// The environment it runs with, and nothing else.
    pub fn env(&self) -> Vec<(String, String)> {
        argv::env(self.job, &self.dirs, self.ctx)
    }

    /// The folder it runs in: its working folder, or a reviewer's checkout.
    pub fn cwd(&self) -> PathBuf {
        match &self.job.role {
            Role::Sealed => self.dirs.work.clone(),
            Role::Reviewer { checkout, .. } => checkout.clone(),
        }
    }

    /// Where its answer lands, in the mode it runs in.
    pub fn answer_at(&self) -> AnswerAt {
        let h = &self.job.seat.harness;
        match (&self.job.role, &h.reviewer) {
            (Role::Reviewer { .. }, Some(r)) => r.answer,
            _ => h.answer,
        }
    }

    /// Launch (or replay), keep everything in the run folder, read the answer.
    pub fn run(&self, check: &Check) -> Done {
        let (job, dirs) = (self.job, &self.dirs);
        // Kept for a resume: removed when the last holder of the session lets go.
        let kept = matches!(
            &job.role,
            Role::Reviewer {
                session: Session::Keep,
                ..
            }
        ) && job.seat.harness.kind == HarnessKind::Process;
        let kept = kept.then(|| {
            Arc::new(KeptFolder {
                private: dirs.private.clone(),
            })
        });
        let result = match job.seat.harness.kind {
            HarnessKind::Replay => crate::engine::call::replay::answer(
                job,
                self.ctx.user_env.get("PANEL_ROUND").map(String::as_str),
            )
            .map(|o| (o, None)),
            HarnessKind::Process => {
                let launched = self.launch();
                // Read and kept: the attempt's private folder has served, unless its session
                // is kept or resumed.
                if !matches!(&job.role, Role::Reviewer { session, .. } if *session != Session::Forget)
                {
                    let _ = beneath::remove_tree(&dirs.private);
                }
                launched
            }
        };
        let (outcome, answer_file) = match result {
            Ok(r) => r,
            Err(e) if e.downcast_ref::<SlotWait>().is_some() => {
                return Done::abstained(Status::Timeout, format!("{e:#}"));
            }
            // A refresh a signal ended: the judge was stopped, its login is not at fault.
            Err(e) if e.downcast_ref::<NoLogin>().is_some() && lifecycle::stopped().is_some() => {
                return Done::abstained(Status::Interrupted, INTERRUPTED.to_string());
            }
            Err(e) if e.downcast_ref::<NoLogin>().is_some() => {
                return Done {
                    settled: true,
                    ..Done::abstained(Status::Failed, format!("{e:#}"))
                };
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
            self.keep(&outcome);
        }
        let timeout = self.ctx.timeout();
        let mut done = read_answer(job, &outcome, answer_file.as_deref(), check, timeout);
        done.attempts = self.n;
        done.kept = kept;
        if done.status != Status::Ok {
            self.explain(&mut done, &outcome);
        }
        done
    }

    /// What may explain a judge's missing answer, added to its cause: the limit of its share it
    /// met (first: never a parse failure then), what its walls refused it, an answer file or
    /// output lines past what is read.
    fn explain(&self, done: &mut Done, outcome: &ProcessOutcome) {
        // Ended by us for failing on one endpoint (not by its deadline, nor a signal of the
        // user's): that ending is not the reason, the endpoint is, and asking again meets it.
        let stopped_early = outcome
            .refused
            .first()
            .is_some_and(|r| r.starts_with(STOPPED_EARLY))
            && matches!(done.status, Status::Failed | Status::Unreadable);
        if stopped_early {
            done.cause = None;
            done.status = Status::Failed;
            done.settled = true;
        }
        let mut add = |note: String, first: bool| {
            done.cause = Some(match done.cause.take() {
                Some(c) if first => format!("{note}; {c}"),
                Some(c) => format!("{c}; {note}"),
                None => note,
            });
        };
        if let Some(limit) = outcome.share.cause(&self.ctx.opts.share) {
            add(limit, true);
        }
        if !outcome.refused.is_empty() {
            add(outcome.refused.join("; "), stopped_early);
        }
        let shown = crate::engine::call::transcript::shown_size;
        if let Some(n) = outcome.answer_bytes.filter(|n| *n > OUTPUT_CAP as u64) {
            let cap = shown(OUTPUT_CAP as u64);
            add(
                format!("its answer file was {}; the first {cap} was read", shown(n)),
                false,
            );
        }
        let passed = outcome.stdout.events().passed_over;
        if passed > 0 {
            let max = shown(crate::engine::call::extract::MAX_EVENT as u64);
            add(
                format!(
                    "{passed} line(s) of its output past {max} (or too deep to read) passed over"
                ),
                false,
            );
        }
        if !outcome.share.reached.is_empty() && done.status == Status::Unreadable {
            done.status = Status::Failed;
        }
    }

    /// Keeps how the process ended in the attempt's folder of the run folder.
    fn keep(&self, outcome: &ProcessOutcome) {
        let at = &self.dirs.attempt;
        // A launched judge's stdout is there already, written as it arrived.
        if matches!(self.job.seat.harness.kind, HarnessKind::Replay) {
            run_folder::file(&at.join("stdout"), outcome.stdout.text());
        }
        run_folder::file(&at.join("stderr"), &outcome.stderr);
        run_folder::file(
            &at.join("exit.json"),
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
                "limitsReached": outcome.share.reached,
                "memoryPeak": outcome.share.memory_peak,
                "processesPeak": outcome.share.processes_peak,
                "diskPeak": outcome.share.disk_peak,
                "answerBytes": outcome.answer_bytes,
            })
            .to_string(),
        );
    }

    /// One launch: the private folders and files, the logins, the process.
    fn launch(&self) -> Result<(ProcessOutcome, Option<String>)> {
        let (job, ctx) = (self.job, self.ctx);
        let h = &job.seat.harness;
        let set = |name: &str| ctx.user_env.get(name).is_some_and(|v| !v.is_empty());
        argv::endpoint(h, &ctx.user_env)
            .map_err(|why| anyhow::Error::new(NoLogin(format!("{why:#}"))))?;
        let program = find_on_path(&h.executable, ctx.path_var()).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} not found on PATH", h.executable),
            )
        })?;
        // The wait for a slot is part of the attempt's time.
        let started = Instant::now();
        let _slot = match ctx.opts.harness_caps.get(&h.name) {
            Some(&cap) => Some(self.slot(&h.name, cap, started)?),
            None => None,
        };
        let until = std::time::SystemTime::now() + ctx.timeout();
        let login = ctx
            .with_user(|user| {
                let model = job.seat.model.as_deref();
                ctx.logins.give(h, model, user, until, ctx.confined())
            })
            .map_err(|why| anyhow::Error::new(NoLogin(why)))?;
        // Its argv follows its login: the tier asked of its provider is the login's.
        let argv = self.argv(None, login.kind.as_deref())?;
        let stdin = argv.stdin.clone();
        let argv = argv.words(&set);
        let (answer_file, kept) = self.private_files(&argv)?;
        let spec = self.spec(program, argv, stdin, &login, started)?;
        let stdout = self.transcript(kept, started);
        let outcome = launch::run(&spec, stdout);
        self.settle(&spec, &login, outcome, kept, answer_file)
    }

    /// Why a folder or file of the judge's could not be made: a resumed session's folder is
    /// the judge's already, so what it did to it fails this judge alone, never the run.
    fn fail(&self, path: &Path, e: std::io::Error) -> anyhow::Error {
        let resumed = matches!(
            &self.job.role,
            Role::Reviewer {
                session: Session::Resume { .. },
                ..
            }
        );
        match resumed {
            true => anyhow::anyhow!(
                "{}: its folder, as the first call left it: {e}",
                path.display()
            ),
            false => ours(path, e),
        }
    }

    /// The judge's private folders and files, and the run folder's copies of its argv and of a
    /// retry's prompt; gives the answer file and whether the attempt's folder is kept.
    fn private_files(&self, argv: &[String]) -> Result<(fs::File, bool)> {
        let dirs = &self.dirs;
        // What the judge reads and writes is private; the run folder only keeps copies, so a
        // full disk there cannot cost an answer.
        run_folder::make_dir(&dirs.private).map_err(|e| self.fail(&dirs.private, e))?;
        for d in [&dirs.home, &dirs.work, &dirs.tmp] {
            let rel = d.strip_prefix(&dirs.private).unwrap_or(d);
            beneath::make_dir(&dirs.private, rel).map_err(|e| self.fail(d, e))?;
        }
        // Any placeholder (argv, env, files, a reviewer's argv) may name them; each is a new
        // file, never one the judge left there.
        let write = |name: &str, bytes: &[u8]| {
            beneath::write(&dirs.private, Path::new(name), bytes)
                .map_err(|e| self.fail(&dirs.private.join(name), e))
        };
        write(PROMPT_FILE, self.prompt.as_bytes())?;
        if let Some(shared) = &self.shared {
            write(SHARED_FILE, shared.as_bytes())?;
        }
        write(SCHEMA_FILE, self.job.schema.to_string().as_bytes())?;
        // Made here and read through this descriptor: a file put in its place is not read.
        let answer_file = beneath::create(&dirs.private, Path::new(ANSWER_FILE))
            .map_err(|e| self.fail(&dirs.answer_file(), e))?;
        let kept = run_folder::dir(&dirs.attempt);
        if kept {
            run_folder::file(
                &dirs.attempt.join("argv.json"),
                serde_json::to_string(argv)?,
            );
            // A retry's prompt differs from the judge's prompt.txt: keep it too.
            if self.prompt.len() != self.first_len {
                run_folder::file(&dirs.attempt.join("prompt.txt"), self.prompt.as_bytes());
            }
        }
        Ok((answer_file, kept))
    }

    /// What is launched: the judge's home furnished with what it carries and its login, its
    /// environment, and the policy its supervisor puts around it.
    fn spec(
        &self,
        program: PathBuf,
        args: Vec<String>,
        stdin: Option<Arc<String>>,
        login: &Given,
        started: Instant,
    ) -> Result<Spec> {
        let (dirs, ctx) = (&self.dirs, self.ctx);
        let h = &self.job.seat.harness;
        let env = |name: &str| ctx.user_env.get(name).cloned();
        let carried = CarriedFiles::read(h, &ctx.user_home, &env);
        let vars = self.vars();
        let written = carried::furnish(&dirs.home, h, &carried, login, &vars)
            .map_err(|e| self.fail(&dirs.home, e))?;
        let mut judge_env = self.env();
        judge_env.retain(|(name, _)| !login.withheld.contains(name));
        for (k, v) in &login.env {
            judge_env.retain(|(name, _)| name != k);
            judge_env.push((k.clone(), v.clone()));
        }
        let secrets = self.trusted(login, &mut judge_env)?;
        let mut spec = Spec {
            program,
            args,
            env: judge_env,
            cwd: self.cwd(),
            stdin,
            timeout: ctx.timeout().saturating_sub(started.elapsed()),
            cap: OUTPUT_CAP,
            supervised: None,
            cancel: self.job.cancel.clone(),
            secrets,
            began: self.job.warming.leads().cloned(),
        };
        if let Some(ids) = ctx.walls.ids
            && !ctx.walls.jail
            && !grants::reachable(&spec.program, ids)
        {
            return Err(anyhow::Error::new(Ours(format!(
                "{}: a root caller's judges run as uid {} and, without a jail here, cannot reach it: install it where that id can (e.g. under /opt), or allow user namespaces",
                spec.program.display(),
                ids.0
            ))));
        }
        let texts: Vec<String> = carried.texts().chain(written).collect();
        spec.supervised = Some(self.policy(&spec, &login.egress, &texts));
        if let Some(ids) = ctx.walls.ids {
            // A root caller's judge runs as `ids`: its folders are its.
            give(&dirs.private, ids).map_err(|e| ours(&dirs.private, e))?;
        }
        Ok(spec)
    }

    /// Where a judge that holds a placeholder learns to trust its proxy: the run's authority
    /// (with all the user trusts) in a file of its private folder, named by each variable its
    /// CLI reads; and what its supervisor gets to swap the live credential in.
    fn trusted(
        &self,
        login: &Given,
        env: &mut Vec<(String, String)>,
    ) -> Result<Option<Arc<Vec<u8>>>> {
        if login.swaps.is_empty() {
            return Ok(None);
        }
        let trust = self.ctx.trust().map_err(|e| {
            anyhow::Error::new(Ours(format!("cannot make the run's authority: {e}")))
        })?;
        let name = Path::new(AUTHORITIES_FILE);
        beneath::write(&self.dirs.private, name, trust.bundle.as_bytes())
            .map_err(|e| self.fail(&self.dirs.private.join(name), e))?;
        let path = self.dirs.private.join(name).display().to_string();
        for var in &self.job.seat.harness.ca_env {
            env.retain(|(k, _)| k != var);
            env.push((var.clone(), path.clone()));
        }
        let secrets = crate::engine::sandbox::swap::Secrets {
            authority: Some(trust.keys.clone()),
            swaps: login.swaps.clone(),
        };
        Ok(Some(Arc::new(serde_json::to_vec(&secrets)?)))
    }

    /// Where the judge's stdout goes: read through the seat's event filters and, when the
    /// attempt's folder is kept, written to its `stdout`.
    fn transcript(&self, kept: bool, started: Instant) -> Transcript {
        let (job, dirs, ctx) = (self.job, &self.dirs, self.ctx);
        let reviewer = matches!(job.role, Role::Reviewer { .. });
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
        let deadline = started + ctx.timeout();
        let stdout_file = kept
            .then(|| {
                lifecycle::through_shortage(deadline, || run_folder::create_private(&path))
                    .map_err(|e| run_folder::lose(&path, &e))
            })
            .and_then(Result::ok)
            .map(|f| (f, path));
        Transcript::new(stdout_file, filters, ctx.opts.max_output)
    }

    /// After the process: its login's files gone, what its walls met and refused, the egress
    /// log kept, and the answer read from its file when that is where it is.
    fn settle(
        &self,
        spec: &Spec,
        login: &Given,
        outcome: std::io::Result<ProcessOutcome>,
        kept: bool,
        answer_file: fs::File,
    ) -> Result<(ProcessOutcome, Option<String>)> {
        let (dirs, ctx) = (&self.dirs, self.ctx);
        // A kept session's folder outlives the call: its login does not.
        for (rel, _) in &login.files {
            let _ = beneath::remove(&dirs.home, Path::new(rel));
        }
        let met = ShareReport::take(&dirs.share_report());
        let h = &self.job.seat.harness;
        let endpoint_var = h.endpoint_env.as_deref().or_else(|| {
            let mut vars = h.pass_env.iter();
            vars.find(|v| v.ends_with("_BASE_URL")).map(String::as_str)
        });
        let mut refused = proxy_refusals(&dirs.egress_log(), endpoint_var);
        if let (Ok(o), Some(policy)) = (&outcome, &spec.supervised)
            && !o.status.is_some_and(|s| s.success())
        {
            refused.extend(crate::engine::sandbox::refused::paths(
                &String::from_utf8_lossy(&o.stderr),
                policy,
                &ctx.user_home,
            ));
        }
        if kept && let Some(log) = read_capped(&dirs.egress_log(), egress::LOG_BYTES) {
            run_folder::file(&dirs.attempt.join("egress.log"), &log);
        }
        let _ = fs::remove_file(dirs.egress_log());
        let outcome = outcome.map_err(|e| match lifecycle::is_shortage(&e) {
            true => anyhow::Error::new(Ours(format!(
                "cannot start a judge: {e} (no judge runs to free what it needs: raise ulimit -n or -u, or lower --jobs)"
            ))),
            false => e.into(),
        })?;
        let mut outcome = outcome;
        outcome.refused = refused;
        outcome.share = met;
        outcome.live = login.live.clone().filter(|_| ctx.confined());
        outcome.tier = argv::tier(&self.job.seat.harness, login.kind.as_deref(), ctx.opts.tier);
        let answer = match self.answer_at() {
            AnswerAt::File => {
                let (bytes, total) = read_answer_file(answer_file, &dirs.answer_file());
                outcome.answer_bytes = Some(total);
                run_folder::file(&dirs.attempt.join("answer"), &bytes);
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            AnswerAt::Stdout => None,
        };
        Ok((outcome, answer))
    }

    /// What its supervisor puts around it, made by [`policy::policy`] from the seat's facts
    /// gathered here.
    fn policy(&self, spec: &Spec, login: &[Endpoint], texts: &[String]) -> Policy {
        let ctx = self.ctx;
        let cwd = self.cwd();
        let seat = policy::LaunchFacts {
            row: &self.job.seat.harness,
            model: self.job.seat.model.as_deref(),
            walls: &ctx.walls,
            limits: &ctx.share.limits,
            disk: ctx.share.disk,
            dirs: &self.dirs,
            cwd: &cwd,
            checkout: match &self.job.role {
                Role::Reviewer { checkout, .. } => Some(checkout),
                Role::Sealed => None,
            },
            keep_session: matches!(
                &self.job.role,
                Role::Reviewer {
                    session: Session::Keep,
                    ..
                }
            ),
            answer: self.answer_at(),
            answer_cap: OUTPUT_CAP as u64,
            user_home: &ctx.user_home,
            user_env: &ctx.user_env,
            read: &ctx.opts.sandbox_read,
            write: &ctx.opts.sandbox_write,
            allow: &ctx.opts.sandbox_allow,
            program: &spec.program,
            args: &spec.args,
            env: &spec.env,
            texts,
            prompt: &self.prompt,
            login,
        };
        policy::policy(&seat, &policy::host(&seat))
    }

    /// One of `cap` machine-wide slots of `harness`, waited for within the attempt's deadline.
    fn slot(&self, harness: &str, cap: usize, started: Instant) -> Result<slots::Slot> {
        let until = started + self.ctx.timeout();
        let stopped = || lifecycle::stopped().is_some();
        match slots::acquire(harness, cap, until, &stopped) {
            Err(e) => Err(anyhow::Error::new(Ours(e.to_string()))),
            Ok(Ok(slot)) => Ok(slot),
            Ok(Err(NoSlot::Stopped)) => bail!("stopped while waiting for a {harness} slot"),
            Ok(Err(NoSlot::Deadline)) => Err(anyhow::Error::new(SlotWait(format!(
                "no {harness} slot came free within {}s (--harness-cap {harness}={cap}): not asked",
                self.ctx.timeout().as_secs_f64()
            )))),
        }
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

/// The judge's login could not be made usable (it expired and no refresh took): not launched.
#[derive(Debug)]
struct NoLogin(String);

impl std::fmt::Display for NoLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoLogin {}

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
/// since (at most [`OUTPUT_CAP`] bytes), and its whole size; empty when the file at its path was
/// replaced, since only the file made for this judge is its answer.
fn read_answer_file(file: fs::File, path: &Path) -> (Vec<u8>, u64) {
    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let same = |a: &fs::Metadata, b: &fs::Metadata| a.dev() == b.dev() && a.ino() == b.ino();
    let (Ok(held), Ok(now)) = (file.metadata(), fs::symlink_metadata(path)) else {
        return (Vec::new(), 0);
    };
    if !same(&held, &now) {
        return (Vec::new(), 0);
    }
    let mut file = file;
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.take(OUTPUT_CAP as u64).read_to_end(&mut bytes);
    (bytes, held.len())
}

/// What the judge's proxy refused it, for its cause: a few refusals, each with what grants a
/// host or what to look at, and how many more there were; first, when its CLI was stopped
/// for failing on one endpoint, that endpoint (the same failure is not said twice).
/// `endpoint_var` names the variable that points the row's CLI elsewhere.
fn proxy_refusals(log: &Path, endpoint_var: Option<&str>) -> Vec<String> {
    let (shown, more) = egress::refusals(log);
    let stopped = shown.first().and_then(|r| r.strip_prefix(egress::GAVE_UP));
    let mut refused: Vec<String> = Vec::new();
    for r in &shown {
        let said = match r.strip_prefix(egress::GAVE_UP) {
            Some(why) => format!(
                "{STOPPED_EARLY}: its CLI{why} {}",
                unreached_hint(why, endpoint_var)
            ),
            None if stopped.is_some_and(|why| why.trim_start().starts_with(r.as_str())) => continue,
            None if r.starts_with(egress::UNREACHED) => {
                format!("its proxy {r} {}", unreached_hint(r, endpoint_var))
            }
            None => format!("its proxy {r} (--sandbox-allow HOST:PORT grants a host)"),
        };
        refused.push(said);
    }
    if more > 0 {
        refused.push(format!(
            "{more} more refusal(s) of its proxy (in egress.log)"
        ));
    }
    refused
}

/// How a cause begins when the judge was ended because its CLI kept failing on one endpoint.
const STOPPED_EARLY: &str = "stopped early";

/// What to look at when an endpoint could not be reached (`line` names it after
/// [`egress::UNREACHED`]): the endpoint itself on this machine, else the way out to it, or
/// the variable that names another.
fn unreached_hint(line: &str, endpoint_var: Option<&str>) -> String {
    let named = line
        .split_once(egress::UNREACHED)
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|e| Endpoint::parse(e.trim_end_matches(':')).ok());
    match (named, endpoint_var) {
        (Some(e), _) if e.is_loopback() => "(is the endpoint up, at that address?)".into(),
        (_, Some(var)) => format!(
            "(is the network up? behind a proxy, set HTTPS_PROXY; another endpoint: set {var})"
        ),
        (_, None) => "(is the network up? behind a proxy, set HTTPS_PROXY)".into(),
    }
}

/// At most `cap` bytes of the file at `path`, read through no link.
fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Makes `dir` and everything under it `ids`'s, following no link: a root caller's judges run
/// as an unprivileged id, and what they are given to read or write must be theirs to open.
pub fn give(dir: &Path, (uid, gid): (u32, u32)) -> std::io::Result<()> {
    let mut todo = vec![dir.to_path_buf()];
    while let Some(p) = todo.pop() {
        std::os::unix::fs::lchown(&p, Some(uid), Some(gid))?;
        let meta = fs::symlink_metadata(&p)?;
        if meta.is_dir() {
            todo.extend(fs::read_dir(&p)?.flatten().map(|e| e.path()));
        }
    }
    Ok(())
}
