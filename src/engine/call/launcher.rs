//! The launcher: the run that asks seats through their harnesses. *Launcher* names what a run
//! keeps across its judges (the run folder and the judges' private folders, the walls, the
//! budget, the status line) and each job's retries; its jobs run many at once on the fan-out
//! ([`crate::engine::call::fanout`]), one try of one job is an [`Attempt`] (its argv, environment,
//! walls and launch), how an answer is read is in [`crate::engine::call::answer`], how a process runs
//! and is ended in [`crate::engine::call::launch`].

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use crate::contracts::Contract;
use crate::engine::call::answer::INTERRUPTED;
use crate::engine::call::ask::{
    Asker, Check, Done, Job, LaunchOptions, Prompt, Question, Role, gate_of,
};
use crate::engine::call::attempt::Attempt;
use crate::engine::call::context::Context;
use crate::engine::harness::{HarnessKind, Seat, Table};
use crate::engine::lifecycle;
use crate::engine::progress::Progress;
use crate::engine::run_folder;
use crate::engine::slots;
use crate::records::{Status, Usage};

/// The real [`Asker`]: a launcher with its run folder made and the run's lifecycle begun.
pub fn started(opts: &LaunchOptions) -> Result<Launcher> {
    let mut l = Launcher::new(opts.clone())?;
    l.start()?;
    Ok(l)
}

/// Launches seats: the harness table, the options, the run folder that keeps everything, and
/// the folder that holds each judge's private folders (removed when the launcher is dropped).
pub struct Launcher {
    pub table: Table,
    /// The options, the user's environment, the walls: what every attempt shares.
    pub ctx: Context,
    run: Option<PathBuf>,
    privates: Option<run_folder::Privates>,
    /// Held while the run lives: no other run writes into its folder.
    run_lock: Option<nix::fcntl::Flock<fs::File>>,
    /// The status line on a terminal; every [`Launcher::ask`] counts in it.
    pub progress: Progress,
    /// The run's budget: no judge is launched past it (`--budget-usd`).
    pub budget: Option<Arc<crate::engine::budget::Budget>>,
    /// What estimates a judge, under a budget or `--estimate`.
    pub pricer: Option<crate::engine::budget::Pricer>,
}

impl Launcher {
    /// Reads the harness table and the user's environment; creates nothing yet.
    pub fn new(opts: LaunchOptions) -> Result<Launcher> {
        let table = Table::load(&opts.harness_files)?;
        use crate::engine::budget::{Budget, Pricer};
        let pricer = (opts.budget_usd.is_some() || opts.estimate)
            .then(|| Pricer::load(opts.prices.as_deref(), opts.history.as_deref()))
            .transpose()?;
        let budget = opts
            .budget_usd
            .zip(pricer.clone())
            .map(|(limit, p)| Budget::new(limit, p).map(Arc::new))
            .transpose()?;
        Ok(Launcher {
            table,
            ctx: Context::new(opts),
            run: None,
            privates: None,
            run_lock: None,
            progress: Progress::for_stderr(&tool_name()),
            pricer,
            budget,
        })
    }

    pub fn seat(&self, spec: &str) -> Result<Seat> {
        Seat::parse(spec, &self.table, &self.ctx.opts.families)
    }

    /// Every seat's executable is on PATH; else the first missing one, and how to install it.
    pub fn check_executables<'a>(&self, seats: impl IntoIterator<Item = &'a Seat>) -> Result<()> {
        let confined = self.ctx.opts.sandbox != crate::engine::sandbox::Setting::Off;
        for seat in seats {
            let exe = seat.resolve_executable(self.ctx.path_var())?;
            let in_home = exe
                .filter(|_| confined && seat.harness.name != "exec")
                .and_then(|e| {
                    crate::engine::sandbox::grants::installed_in_home(&e, &self.ctx.user_home)
                });
            if let Some(why) = in_home {
                anyhow::bail!("--seat {}: {why}", seat.spec);
            }
        }
        Ok(())
    }

    /// Creates the run folder and the folder of the judges' private folders.
    pub fn start(&mut self) -> Result<&Path> {
        // Before anything is made: `--sandbox required` on a kernel that cannot is exit 2.
        self.ctx.walls = crate::engine::sandbox::walls(self.ctx.opts.sandbox)?;
        let said = &self.ctx.walls.said;
        if let Some(why) = said.strip_prefix("unavailable: ") {
            eprintln!(
                "{}: judges run unconfined: {why} (--sandbox required refuses to, --sandbox off says so)",
                tool_name()
            );
        } else if let Some((walls, why)) = said.split_once(" (no ") {
            eprintln!(
                "{}: judges run with {walls} alone: no {} (--sandbox required refuses to)",
                tool_name(),
                why.trim_end_matches(')')
            );
        }
        if let Some(ids) = self.ctx.walls.ids {
            writable_by(&self.ctx.opts.sandbox_write, ids)?;
        }
        self.ctx.share = crate::engine::sandbox::share(&mut self.ctx.walls, self.ctx.opts.share);
        let opts = &self.ctx.opts;
        if !opts.harness_caps.is_empty() {
            slots::private_dir(&slots::dir())?;
        }
        let (run, lock) = match &opts.run {
            Some(dir) => (dir.clone(), run_folder::claim(dir, opts.resume)?),
            None => new_run(opts.keep_days)?,
        };
        self.run_lock = Some(lock);
        let run = run.canonicalize().unwrap_or(run);
        let privates =
            run_folder::Privates::create().context("cannot create the judges' private folders")?;
        // A root caller's judges run as another id: they (and a jail's first process, which
        // opens their folders before it is that id) must pass through the privates' folder to their
        // folders, and list nothing.
        if self.ctx.walls.ids.is_some() {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(privates.path(), fs::Permissions::from_mode(0o711))
                .context("cannot open the judges' private folders to their ids")?;
        }
        lifecycle::begin().context("cannot handle the signals that stop a run")?;
        self.run = Some(run);
        self.privates = Some(privates);
        Ok(self.run.as_deref().expect("just set"))
    }

    pub fn run_dir(&self) -> Option<&Path> {
        self.run.as_deref()
    }

    /// What the judges run under, as records say it: `landlock-abi-N`, `off`, `unavailable: …`.
    pub fn sandbox(&self) -> &str {
        &self.ctx.walls.said
    }

    /// Checks that every job's prompt can reach its harness, and, under a budget or for an
    /// estimate, that its seat has a price, before any starts.
    pub fn check_prompts(&self, jobs: &[Job]) -> Result<()> {
        crate::engine::call::argv::check_prompts(jobs, &self.ctx)?;
        // An endpoint the CLI cannot be given: said once, before anything runs.
        for job in jobs {
            crate::engine::call::argv::endpoint(&job.seat.harness, &self.ctx.user_env)?;
        }
        self.check_prices(jobs.iter().map(|j| &j.seat))
    }

    /// Names the seats a budget cannot price, once each, on standard error: their judges are
    /// not launched under it (each cancelled with the cause); the others are.
    pub fn check_prices<'a>(&self, seats: impl IntoIterator<Item = &'a Seat>) -> Result<()> {
        let (Some(p), Some(_)) = (&self.pricer, &self.budget) else {
            return Ok(());
        };
        let mut said: Vec<String> = Vec::new();
        for seat in seats {
            if let Err(e) = p.estimate(seat, 0) {
                let line = format!("{e:#}: its judges are not launched under the budget");
                if !said.contains(&line) {
                    eprintln!("{}: {}", tool_name(), line);
                    said.push(line);
                }
            }
        }
        Ok(())
    }

    /// Each job's estimate, in order (`--estimate`), or why its seat has none (no price);
    /// none without a price table.
    pub fn estimates(&self, jobs: &[Job]) -> Vec<Result<crate::engine::budget::Estimate, String>> {
        let Some(p) = &self.pricer else {
            return Vec::new();
        };
        jobs.iter()
            .map(|j| {
                p.estimate(&j.seat, j.prompt.build().len())
                    .map(|(e, _)| e)
                    .map_err(|e| format!("{e:#}"))
            })
            .collect()
    }

    /// The bash block that runs `job`'s first attempt as pasted (a dry run).
    pub fn command_line(&self, job: &Job) -> Result<String> {
        crate::engine::paste::block(job, &self.ctx)
    }

    /// Asks one job as its part in warming its seat's cache says: the first of a seat opens
    /// the others' wait when it ends, whatever came of it.
    fn ask_warming(&self, job: &Job, check: &Check) -> Done {
        use crate::engine::call::warm::{BOUND, Warming};
        match &job.warming {
            Warming::Alone => self.ask_job(job, check),
            Warming::Follows(warm) => {
                warm.wait(BOUND);
                self.ask_job(job, check)
            }
            Warming::Leads(warm) => {
                let done = self.ask_job(job, check);
                warm.open();
                done
            }
        }
    }

    /// Asks one job under `contract`, with its retries; never fails: a call that goes wrong
    /// is an abstention. Its answer comes back read into the contract's type.
    pub fn ask<C: Contract>(&self, job: &Job, contract: &C) -> Done<C::Answer, C::Miss> {
        self.ask_job(job, &gate_of(contract)).checked(contract)
    }

    /// Asks one job, its answer an object that passed `check`.
    fn ask_job(&self, job: &Job, check: &Check) -> Done {
        let started = Instant::now();
        // Every tool checks the names it reads; this is the last wall before a path is made.
        if let Err(why) = crate::records::printable::check_folder_name(&job.name) {
            let why = format!("a judge {why}");
            lifecycle::fail_with(why.clone());
            return Done::abstained(Status::Interrupted, why);
        }
        if let Some(why) = job.cancelled() {
            return Done::cancelled(why);
        }
        let admitted = match self.admit(job) {
            Ok(a) => a,
            Err(done) => return *done,
        };
        self.progress.started();
        let mut done = self.ask_counted(job, check, started);
        match (&self.budget, &admitted) {
            (Some(budget), Some(a)) => budget.settle(a, &mut done.usage),
            _ => self.check_reported(job, &mut done.usage),
        }
        self.progress
            .ended(done.answer.is_some(), done.usage.as_ref());
        done
    }

    /// Without a budget, a judge's reported cost is still only taken as the budget takes it
    /// ([`crate::engine::budget::actual`]), against its price in the table in force (the
    /// shipped one without `--prices`), where its model has one.
    fn check_reported(&self, job: &Job, usage: &mut Option<Usage>) {
        use crate::engine::budget::prices::Prices;
        if job.seat.harness.kind == crate::engine::harness::HarnessKind::Replay {
            return crate::engine::budget::check_reported(usage, None);
        }
        let shipped;
        let prices = match &self.pricer {
            Some(p) => &p.prices,
            None => {
                shipped = Prices::shipped();
                &shipped
            }
        };
        let price = prices.of(&job.seat).ok().map(|p| p.price);
        crate::engine::budget::check_reported(usage, price.as_ref());
    }

    /// Lets `job` in under the run's budget, if there is one; a job that does not fit is
    /// cancelled with the cause, its estimate kept in its usage.
    fn admit(&self, job: &Job) -> Result<Option<crate::engine::budget::Admitted>, Box<Done>> {
        let Some(budget) = &self.budget else {
            return Ok(None);
        };
        let bytes = job.prompt.build().len();
        budget.admit(&job.seat, bytes).map(Some).map_err(|why| {
            let mut done = Done::cancelled(&why);
            if let Ok((e, _)) = budget.pricer.estimate(&job.seat, bytes) {
                done.usage = Some(Usage {
                    estimate_usd: Some(e.usd),
                    ..Usage::default()
                });
            }
            Box::new(done)
        })
    }

    fn ask_counted(&self, job: &Job, check: &Check, started: Instant) -> Done {
        // Built now, shared with the attempt's stdin, dropped when the judge is done.
        let split = job.prompt.split();
        let shared = split.shared;
        let first = Arc::new(split.text);
        let judge_dir = self.run.as_ref().map(|r| r.join(&job.name));
        if let Some(dir) = judge_dir.filter(|d| run_folder::dir(d)) {
            run_folder::file(&dir.join("prompt.txt"), first.as_bytes());
            run_folder::file(&dir.join("schema.json"), job.schema.to_string());
        }
        let mut prompt = Arc::clone(&first);
        let mut done = Done::unasked(Status::Failed, "not started");
        let retries = job.retries.unwrap_or(self.ctx.opts.retries);
        let mut asked_again = 0;
        let mut backoff = Duration::from_secs(1);
        for n in 1.. {
            if lifecycle::stopped().is_some() {
                done.status = Status::Interrupted;
                done.cause = Some(INTERRUPTED.into());
                break;
            }
            if let Some(why) = job.cancelled() {
                done.status = Status::Cancelled;
                done.cause = Some(why.to_string());
                break;
            }
            let attempt = self.attempt(job, n, (Arc::clone(&prompt), first.len(), shared), check);
            if let Some(u) = &attempt.usage {
                done.usage.get_or_insert_with(Usage::default).add(u);
            }
            done = Done {
                attempts: n,
                usage: done.usage,
                ..attempt
            };
            // A rate limit is waited out, with backoff, for as long as the judge's deadline allows.
            if done.status == Status::RateLimited
                && started.elapsed() + backoff < self.ctx.timeout()
            {
                sleep_unless_stopped(backoff, job);
                backoff = (backoff * 2).min(Duration::from_secs(60));
                continue;
            }
            let waited_out = done.status == Status::RateLimited;
            if waited_out || done.settled || !(done.status.retryable() && asked_again < retries) {
                break;
            }
            asked_again += 1;
            let note = retry_note(done.cause.as_deref().unwrap_or("no answer"));
            prompt = Arc::new(format!("{first}{note}"));
        }
        done.duration = started.elapsed();
        done
    }

    /// One attempt of `job`, in its folders under this run's.
    fn attempt(
        &self,
        job: &Job,
        n: u32,
        prompt: (Arc<String>, usize, usize),
        check: &Check,
    ) -> Done {
        let run = self.run.clone().unwrap_or_else(std::env::temp_dir);
        let private = self
            .privates
            .as_ref()
            .map_or_else(std::env::temp_dir, |s| s.path().to_path_buf())
            .join(run_folder::private_name());
        Attempt::new(job, n, prompt, (&run, &private), &self.ctx).run(check)
    }

    /// Asks every job under `contract`, at most `jobs` at once; `each` gets each job's index
    /// and how it ended as it ends.
    pub fn ask_each<C: Contract>(
        &self,
        jobs: &[Job],
        contract: &C,
        mut each: impl FnMut(usize, Done<C::Answer, C::Miss>),
    ) {
        self.ask_paced(jobs, contract, jobs.len(), |i, done| {
            each(i, done);
            0
        });
    }

    /// Asks jobs under `contract` in waves, in their order: `first` at once, then as many more
    /// as `each` returns after each job ends. A job never asked ends cancelled, through `each`
    /// too, with its token's why: every job gets an end.
    pub fn ask_paced<C: Contract>(
        &self,
        jobs: &[Job],
        contract: &C,
        first: usize,
        mut each: impl FnMut(usize, Done<C::Answer, C::Miss>) -> usize,
    ) {
        self.paced(jobs, &gate_of(contract), first, |i, done| {
            each(i, done.checked(contract))
        });
    }

    /// [`Launcher::ask_paced`] inside the call: each answer an object that passed `check`.
    fn paced(
        &self,
        jobs: &[Job],
        check: &Check,
        first: usize,
        mut each: impl FnMut(usize, Done) -> usize,
    ) {
        let allowed = lifecycle::judges_the_limits_allow();
        let workers = self.ctx.opts.jobs.unwrap_or(jobs.len().min(allowed)).max(1);
        self.progress.expect(jobs.len());
        let warming = crate::engine::call::warm::plan(jobs.iter().map(|j| {
            let cached = j.role == Role::Sealed && j.seat.harness.kind == HarnessKind::Process;
            (
                j.seat.spec.as_str(),
                cached.then(|| j.prompt.split().shared),
            )
        }));
        let jobs: Vec<Job> = jobs
            .iter()
            .zip(warming)
            .map(|(job, warming)| Job {
                warming,
                ..job.clone()
            })
            .collect();
        let left = crate::engine::call::fanout::paced(
            jobs.iter().collect(),
            workers,
            first,
            |_, job| self.ask_warming(job, check),
            &mut each,
        );
        for (i, job) in left {
            each(i, Done::cancelled(job.cancelled().unwrap_or("not needed")));
        }
    }

    /// A question as the job that asks it; `Err`: its seat cannot be read.
    fn job_for(&self, q: &Question) -> Result<Job> {
        let seat = self.seat(&q.seat)?;
        let mut job = Job::sealed(
            &q.name,
            seat,
            Prompt::text(q.prompt.clone()),
            q.schema.clone(),
        );
        job.cancel = q.cancel.clone();
        if let Some(dir) = &q.reads {
            job.role = Role::Reviewer {
                checkout: dir.clone(),
                session: Default::default(),
            };
        }
        Ok(job)
    }
}

impl Asker for Launcher {
    fn sandbox(&self) -> Option<&str> {
        Some(Launcher::sandbox(self))
    }

    fn ask_all(&self, questions: &[Question], check: &Check) -> Vec<Done> {
        let mut jobs = Vec::new();
        let mut ended: Vec<Option<Done>> = vec![None; questions.len()];
        let mut index = Vec::new();
        for (i, q) in questions.iter().enumerate() {
            match self.job_for(q) {
                Ok(job) => {
                    jobs.push(job);
                    index.push(i);
                }
                Err(e) => ended[i] = Some(not_found(&e)),
            }
        }
        self.paced(&jobs, check, jobs.len(), |j, done| {
            ended[index[j]] = Some(done);
            0
        });
        ended
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Done::unasked(Status::Interrupted, "not asked")))
            .collect()
    }

    fn ask_one(&self, question: &Question, check: &Check) -> Done {
        match self.job_for(question) {
            Ok(job) => {
                self.progress.expect(1);
                self.ask_job(&job, check)
            }
            Err(e) => not_found(&e),
        }
    }
}

/// How a question ends whose seat cannot be read.
fn not_found(e: &anyhow::Error) -> Done {
    Done::unasked(Status::NotFound, format!("{e:#}"))
}

/// A new run folder among the runs, locked; the runs older than `keep_days` are removed.
fn new_run(keep_days: u32) -> Result<(PathBuf, nix::fcntl::Flock<fs::File>)> {
    use crate::engine::runs::{Runs, RunsHome};
    let place = RunsHome::here();
    if let RunsHome::Temp(tmp) = &place {
        eprintln!(
            "{}: no XDG_CACHE_HOME or HOME: the run folder is made in {} (--out DIR names one)",
            tool_name(),
            crate::records::printable::shown(&tmp.display().to_string())
        );
    }
    let runs = Runs::open(&place, true)?
        .with_context(|| format!("{}: cannot create", place.dir().display()))?;
    let now = std::time::SystemTime::now();
    let made = runs.fresh(now)?;
    runs.prune(
        Duration::from_secs(u64::from(keep_days) * 86400),
        now,
        false,
    );
    Ok(made)
}

/// A root caller's judges run as `ids` (never root): each folder they are to write must be
/// theirs to write, or nothing is launched.
fn writable_by(folders: &[PathBuf], (uid, gid): (u32, u32)) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    for dir in folders {
        let m = fs::metadata(dir).with_context(|| format!("--sandbox-write {}", dir.display()))?;
        let mode = m.mode();
        let can = (m.uid() == uid && mode & 0o300 == 0o300)
            || (m.gid() == gid && mode & 0o030 == 0o030)
            || mode & 0o003 == 0o003;
        if !can {
            anyhow::bail!(
                "--sandbox-write {}: a root caller's judges run as uid {uid} (never root), which cannot write it: chown {uid}:{gid} it, or grant a folder that id may write",
                dir.display()
            );
        }
    }
    Ok(())
}

/// The most of a cause a retry's note carries, in characters: a cause may name many refusals.
const NOTE_CHARS: usize = 1000;

/// What a second attempt adds after an answer that could not be read (its cause cut to
/// [`NOTE_CHARS`], saying how much was left out).
fn retry_note(why: &str) -> String {
    let why = match why.char_indices().nth(NOTE_CHARS) {
        Some((at, _)) => format!(
            "{}… and {} more characters",
            &why[..at],
            why[at..].chars().count()
        ),
        None => why.to_string(),
    };
    format!(
        "\nYour previous answer could not be read ({why}). Answer again with the JSON object alone, with no other text.\n"
    )
}

/// Sleeps, waking early when a signal stops the run or the job's panel is decided.
fn sleep_unless_stopped(total: Duration, job: &Job) {
    let until = Instant::now() + total;
    while Instant::now() < until && lifecycle::stopped().is_none() && job.cancelled().is_none() {
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
