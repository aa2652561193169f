//! The options every tool that launches seats shares, as clap reads them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::engine::call::{LaunchOptions, Tier};
use crate::engine::sandbox::Setting;

/// The longest deadline a judge may be given: past it, a deadline is a mistake (and a
/// `Duration` of 1e20 seconds overflows).
const MAX_TIMEOUT_SECS: f64 = 30.0 * 24.0 * 3600.0;

/// The options every tool that launches seats shares.
#[derive(clap::Args, Clone, Debug)]
pub struct LaunchArgs {
    /// The run folder that keeps every prompt, argv, output and record (default: a new folder
    /// in $XDG_CACHE_HOME/panel/runs, ~/.cache/panel/runs when XDG_CACHE_HOME is unset, empty or
    /// relative; see --keep-runs). It must be new or empty and your own (the PR panel takes its
    /// own up again); it is made 0700 and locked while the run lives.
    #[arg(long, alias = "run", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// How many days the run folders in $XDG_CACHE_HOME/panel/runs are kept: a run that makes
    /// one there removes those whose runs started DAYS or more days ago, but never one a live
    /// run holds, nor anything else (default 14; also PANEL_KEEP_DAYS). panel-tally --runs
    /// lists them.
    #[arg(long, value_name = "DAYS", allow_negative_numbers = true, value_parser = crate::engine::runs::parse_days)]
    pub keep_runs: Option<u32>,

    /// Seconds one attempt of a seat may take (a wait for a --harness-cap slot included) before
    /// it and every process it started are ended.
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    pub timeout: f64,

    /// How many times an unreadable or failed answer is asked for again.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub retries: u32,

    /// How many seats run at once (default: all that the open-file limit allows).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,

    /// A spending cap in USD per call, passed to the harnesses that enforce one.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,

    /// A budget in USD for the whole run (also PANEL_BUDGET_USD). Each judge's cost is
    /// estimated before it is launched (its prompt's bytes and its row's measured overhead at 4
    /// bytes a token, every input token at the uncached price; the history's median answer
    /// length for its seat, else 500 tokens); a judge whose estimate would take what is spent
    /// and in flight past the budget is never launched, but recorded cancelled with the cause,
    /// and the panel is decided or not without it. What a judge cost is its harness's figure,
    /// else its tokens priced, else its estimate; its record's usage keeps estimateUsd beside
    /// costUsd. A harness's figure is taken only when it is a finite number at least 0 and, where
    /// the model has a price, at most 10 times its tokens priced (else its estimate) plus $0.01;
    /// else its tokens priced count, and the usage's costNote says why. A seat whose model has no
    /// price is named and its judges not launched (recorded cancelled), the others run.
    /// PANEL_BUDGET_FILE names a file the sums are kept in, shared by every run that names it
    /// (panel-fleet's panels): a regular file (never a link, a FIFO or a device) that holds
    /// {"spent": USD, "inFlight": USD}, each a finite number at least 0, or nothing yet; any
    /// other is one line and exit 2 before a judge starts, and is left as it is.
    #[arg(long, value_name = "USD", allow_hyphen_values = true)]
    pub budget_usd: Option<String>,

    /// The service tier asked of a judge's provider where its login offers more than one:
    /// `flex` is OpenAI's flex processing (codex with an API key), at half the price and
    /// slower; a seat whose login offers no flex runs at the standard tier. The record's usage
    /// says `"tier": "flex"` where it was asked, and its cost is priced at the tier's price.
    #[arg(long, value_enum, value_name = "TIER", default_value_t = Tier::Standard)]
    pub tier: Tier,

    /// A price file overlaid on the shipped table (also PANEL_PRICES): {"models": {MODEL:
    /// {"aliases": [...], "input": USD, "cacheRead": USD, "output": USD (per million tokens),
    /// "date": "YYYY-MM-DD", "source": "..."}}, "families": {FAMILY: MODEL}}. A seat that names
    /// no model is priced as its family's model there. A price is at most 100000 USD a million
    /// tokens; the file is read to 4 MiB at most.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// Print each judge's estimate (model, input and output tokens, USD), the total and what a
    /// budget would let in, and launch nothing (a table; JSON with --json). A seat whose model
    /// has no price is shown unknown, and the rest priced.
    #[arg(long)]
    pub estimate: bool,

    /// A JSON file of harness rows that add to or replace the built-in ones (repeatable).
    #[arg(long = "harness-file", value_name = "FILE")]
    pub harness_files: Vec<PathBuf>,

    /// State a seat's model family, SEAT=FAMILY (repeatable), e.g. 'exec:llm -m x=openai'.
    #[arg(long = "family", value_name = "SEAT=FAMILY")]
    pub families: Vec<String>,

    /// Carry this variable of your environment into every seat (repeatable; also PANEL_PASS_ENV,
    /// comma-separated).
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,

    /// At most N judges of HARNESS at once across every panel-judge on this machine, HARNESS=N
    /// (repeatable; also PANEL_HARNESS_CAP, comma-separated).
    #[arg(long = "harness-cap", value_name = "HARNESS=N")]
    pub harness_caps: Vec<String>,

    /// How each judge is walled in: auto, a jail of its own (namespaces, a read-only root of
    /// what its harness needs, no route out but its proxy) with Landlock inside, falling back
    /// to Landlock alone, each with one warning, where the kernel cannot; required, the jail or
    /// launch nothing; landlock, Landlock alone; off.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = Setting::Auto)]
    pub sandbox: Setting,

    /// A folder a confined judge may also read and run programs from (repeatable; also
    /// PANEL_SANDBOX_READ, colon-separated).
    #[arg(long = "sandbox-read", value_name = "DIR")]
    pub sandbox_read: Vec<PathBuf>,

    /// A folder a confined judge may also write to, e.g. a log your exec: seat keeps
    /// (repeatable; also PANEL_SANDBOX_WRITE, colon-separated).
    #[arg(long = "sandbox-write", value_name = "DIR")]
    pub sandbox_write: Vec<PathBuf>,

    /// A host and port a confined judge's proxy also lets it reach, HOST:PORT (repeatable; also
    /// PANEL_SANDBOX_ALLOW, comma-separated). Its row's model service, and the base URLs in its
    /// environment and configuration, are allowed already; nothing the prompt names ever is.
    #[arg(long = "sandbox-allow", value_name = "HOST:PORT")]
    pub sandbox_allow: Vec<String>,

    /// The most standard output one attempt of a seat may write, kept byte for byte in the run
    /// folder (bytes, or K, M, G, T: 64M, 1G). Past it the seat is stopped, with every process
    /// it started, and recorded output-limit, an abstention. Its events are read as they
    /// arrive, so memory does not grow with it.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_max_output)]
    pub max_output: u64,

    /// The most memory one judge may hold with all it starts, a size (512M, 4G) or off (default
    /// 2G; also PANEL_JUDGE_MEMORY). In a cgroup where panel can make one (as root, or in the
    /// cgroups systemd delegates to your user session) it counts the judge's files too, and a
    /// judge past it is ended; else it bounds each process alone (RLIMIT_DATA, with memfd and
    /// System V shared memory refused, which it does not count). A judge that meets it is
    /// recorded failed, "memory limit 2 GiB reached".
    #[arg(long, value_name = "SIZE")]
    pub judge_memory: Option<String>,

    /// The most processes and threads one judge may run at once, a count or off (default 512;
    /// also PANEL_JUDGE_PROCESSES): a fork bomb stops there, not at the machine's limit. Held by
    /// its cgroup, else in its jail's own user namespace; not held with Landlock alone.
    #[arg(long, value_name = "N")]
    pub judge_processes: Option<String>,

    /// The most one judge may write, a size or off (default 1G; also PANEL_JUDGE_DISK): in a
    /// jail its private folder (HOME, TMPDIR, working folder), /tmp and /dev/shm share one file
    /// system of that size in memory, never the caller's disk; without one no file of it grows
    /// past the size, and a judge whose private folder holds more, looked at each second, is
    /// ended ("disk 1 GiB watched").
    #[arg(long, value_name = "SIZE")]
    pub judge_disk: Option<String>,
}

/// A `--judge-*` option's value: the option's, else its variable's, else the default.
fn judge_limit(
    given: &Option<String>,
    (option, var): (&str, &str),
    default: Option<u64>,
    parse: fn(&str) -> Result<Option<u64>, String>,
) -> Result<Option<u64>> {
    let from_env = std::env::var(var).ok().filter(|v| !v.trim().is_empty());
    match given.as_ref().or(from_env.as_ref()) {
        Some(text) => parse(text).map_err(|why| {
            let from = if given.is_some() { option } else { var };
            anyhow::anyhow!("{from} {why}")
        }),
        None => Ok(default),
    }
}

/// A folder a judge may write never holds the user's HOME or the folder it runs in (a
/// reviewer's repository): a judge could then change the user's files.
fn check_writable(folders: &[PathBuf]) -> Result<()> {
    let canonical =
        |v: Option<std::ffi::OsString>| v.and_then(|p| PathBuf::from(p).canonicalize().ok());
    let home = canonical(std::env::var_os("HOME"));
    let here = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok());
    for dir in folders {
        for (what, held) in [("your HOME", &home), ("the folder it is run in", &here)] {
            if let Some(held) = held
                && held.starts_with(dir)
            {
                anyhow::bail!(
                    "--sandbox-write {}: it holds {what} ({}), where a judge could change your \
                        files; grant a folder of its own",
                    dir.display(),
                    held.display()
                );
            }
        }
    }
    Ok(())
}

fn parse_max_output(text: &str) -> Result<u64, String> {
    crate::engine::call::parse_size(text)
}

impl LaunchArgs {
    /// What each judge may take: `--judge-memory`, `--judge-processes`, `--judge-disk`.
    fn share(&self) -> Result<crate::engine::sandbox::share::Ask> {
        use crate::engine::sandbox::share::{self, Ask};
        Ok(Ask {
            memory: judge_limit(
                &self.judge_memory,
                ("--judge-memory", "PANEL_JUDGE_MEMORY"),
                share::DEFAULT.memory,
                share::parse_size,
            )?,
            processes: judge_limit(
                &self.judge_processes,
                ("--judge-processes", "PANEL_JUDGE_PROCESSES"),
                share::DEFAULT.processes,
                share::parse_count,
            )?,
            disk: judge_limit(
                &self.judge_disk,
                ("--judge-disk", "PANEL_JUDGE_DISK"),
                share::DEFAULT.disk,
                share::parse_size,
            )?,
        })
    }

    /// The options, checked.
    pub fn options(&self) -> Result<LaunchOptions> {
        let families = self.families()?;
        let pass_env = self.pass_env();
        let harness_caps = self.harness_caps()?;
        if !(self.timeout > 0.0 && self.timeout.is_finite()) {
            anyhow::bail!(
                "--timeout {}: must be a positive number of seconds",
                self.timeout
            );
        }
        if self.timeout > MAX_TIMEOUT_SECS {
            anyhow::bail!(
                "--timeout {}: at most {MAX_TIMEOUT_SECS} seconds (30 days)",
                self.timeout
            );
        }
        if self.jobs == Some(0) {
            anyhow::bail!("--jobs 0: at least one must run at a time");
        }
        let sandbox_write = folders(&self.sandbox_write, "PANEL_SANDBOX_WRITE")?;
        check_writable(&sandbox_write)?;
        let sandbox_allow = self.sandbox_allow()?;
        Ok(LaunchOptions {
            share: self.share()?,
            sandbox: self.sandbox,
            sandbox_read: folders(&self.sandbox_read, "PANEL_SANDBOX_READ")?,
            sandbox_write,
            sandbox_allow,
            run: self.out.clone(),
            keep_days: crate::engine::runs::keep_days(
                self.keep_runs,
                std::env::var(crate::engine::runs::KEEP_VAR).ok(),
            )?,
            resume: false,
            timeout_secs: self.timeout,
            retries: self.retries,
            jobs: self.jobs,
            harness_files: self.harness_files.clone(),
            families,
            pass_env,
            max_budget_usd: self.max_budget_usd,
            budget_usd: crate::engine::budget::parse_limit(self.budget_usd.as_deref())?,
            prices: self.prices.clone(),
            estimate: self.estimate,
            history: None,
            max_output: self.max_output,
            harness_caps,
            tier: self.tier,
        })
    }

    /// --family SEAT=FAMILY, each family in lower case.
    fn families(&self) -> Result<BTreeMap<String, String>> {
        let mut families = BTreeMap::new();
        for f in &self.families {
            let (seat, family) = f
                .rsplit_once('=')
                .filter(|(s, fam)| !s.is_empty() && !fam.is_empty())
                .with_context(|| format!("--family {f:?}: expected SEAT=FAMILY"))?;
            families.insert(seat.to_string(), family.to_lowercase());
        }
        Ok(families)
    }

    /// --pass-env, then PANEL_PASS_ENV's comma-separated names.
    fn pass_env(&self) -> Vec<String> {
        let mut pass_env = self.pass_env.clone();
        if let Ok(list) = std::env::var("PANEL_PASS_ENV") {
            pass_env.extend(
                list.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
        }
        pass_env
    }

    /// PANEL_HARNESS_CAP's comma-separated HARNESS=N, then --harness-cap's: a later one wins.
    fn harness_caps(&self) -> Result<BTreeMap<String, usize>> {
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
        Ok(harness_caps)
    }

    /// --sandbox-allow, then PANEL_SANDBOX_ALLOW's comma-separated endpoints.
    fn sandbox_allow(&self) -> Result<Vec<crate::engine::sandbox::egress::Endpoint>> {
        let from_env = std::env::var("PANEL_SANDBOX_ALLOW").unwrap_or_default();
        self.sandbox_allow
            .iter()
            .map(String::as_str)
            .chain(from_env.split(',').map(str::trim).filter(|s| !s.is_empty()))
            .map(|e| {
                crate::engine::sandbox::egress::Endpoint::parse(e)
                    .map_err(|why| anyhow::anyhow!("--sandbox-allow {why}"))
            })
            .collect::<Result<Vec<_>>>()
    }
}

/// The folders given, then those in `var` (a PATH-like list), each made canonical: one that is
/// not there is an error.
fn folders(given: &[PathBuf], var: &str) -> Result<Vec<PathBuf>> {
    let from_env = std::env::var_os(var).unwrap_or_default();
    let listed = given
        .iter()
        .cloned()
        .chain(std::env::split_paths(&from_env).filter(|p| !p.as_os_str().is_empty()));
    listed
        .map(|p| {
            p.canonicalize()
                .with_context(|| format!("{}: not a folder to grant", p.display()))
        })
        .collect()
}
