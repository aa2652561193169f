//! The one way the tests run a tool: [`Tool`], a builder over [`Command`] for one of our binaries
//! (or a script of bin/), and [`Ran`], what it did. A module of both test crates.
//!
//! ```ignore
//! let ran = Tool::new("panel-tally").args(["--json"]).stdin(lines).run();
//! assert_eq!(ran.code(), Some(0), "{}", ran.stderr());
//! let recs = ran.records();
//! ```

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::{Checked, bin, judges_may_write, run_with_stdin, with_standins};

/// A command line of ours being built: the program, its arguments, environment, folder and
/// standard input (none unless [`Tool::stdin`] gives some). Its methods take and give back
/// `&mut Tool`, as [`Command`]'s do, so a helper can return one for a test to add to.
pub struct Tool {
    cmd: Command,
    stdin: Option<Vec<u8>>,
}

impl Tool {
    /// One of our binaries (`panel-judge`, `panel-tally`, …), built by cargo for this run.
    pub fn new(name: &str) -> Tool {
        Tool::at(bin(name))
    }

    /// A program by its path (a script of bin/, which composes our tools).
    pub fn at(program: impl AsRef<OsStr>) -> Tool {
        let mut cmd = Command::new(program);
        cmd.stdin(Stdio::null());
        Tool { cmd, stdin: None }
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Tool {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Tool
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Tool {
        self.cmd.env(key, value);
        self
    }

    /// Grants `dir` to the judges to write (`PANEL_SANDBOX_WRITE`), as a user grants a folder
    /// of theirs: what a test's seat writes down lies outside its own folders. Run as root, the
    /// folder is made the judges' ([`judges_may_write`]).
    pub fn judges_write(&mut self, dir: &Path) -> &mut Tool {
        self.env("PANEL_SANDBOX_WRITE", judges_may_write(dir))
    }

    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Tool
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.cmd.envs(vars);
        self
    }

    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Tool {
        self.cmd.env_remove(key);
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Tool {
        self.cmd.current_dir(dir);
        self
    }

    /// `bytes` on the tool's standard input, fed on a thread of its own (a tool may write before
    /// it has read it all). Without it, standard input is empty (`/dev/null`).
    pub fn stdin(&mut self, bytes: impl AsRef<[u8]>) -> &mut Tool {
        self.stdin = Some(bytes.as_ref().to_vec());
        self
    }

    /// Runs against the stand-in harness CLIs (tests/standins, then `more` folders, first on
    /// PATH; their call log in `log`): [`with_standins`].
    pub fn standins(&mut self, log: &Path, more: &[PathBuf]) -> &mut Tool {
        with_standins(&mut self.cmd, log, more);
        self
    }

    /// The command being built, for what the builder does not say (a seccomp filter, pipes to
    /// a child spawned and watched, a terminal).
    pub fn command(&mut self) -> &mut Command {
        &mut self.cmd
    }

    /// Runs it to its end: its output, with every record it printed checked against its schema.
    pub fn run(&mut self) -> Ran {
        let out = match &self.stdin {
            Some(bytes) => run_with_stdin(&mut self.cmd, bytes),
            None => self.cmd.checked_output().expect("spawn"),
        };
        Ran(out)
    }
}

/// What a [`Tool`] did: its [`Output`] (which it derefs to), read as the tests read it.
pub struct Ran(pub Output);

impl std::ops::Deref for Ran {
    type Target = Output;
    fn deref(&self) -> &Output {
        &self.0
    }
}

impl Ran {
    /// Its standard output: one JSON record a line (a line that is not JSON fails the test).
    pub fn records(&self) -> Vec<Value> {
        records(&self.0)
    }

    /// Its standard output, as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    /// Its standard error (the one-line report, or the error), as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Its exit status, `None` when a signal ended it.
    pub fn code(&self) -> Option<i32> {
        self.0.status.code()
    }

    pub fn success(&self) -> bool {
        self.0.status.success()
    }

    /// Fails the test, with its standard error, unless it exited 0.
    #[track_caller]
    pub fn ok(&self) -> &Ran {
        assert!(
            self.success(),
            "exit {:?}: {}",
            self.0.status,
            self.stderr()
        );
        self
    }

    pub fn into_output(self) -> Output {
        self.0
    }
}

/// The records on `out`'s standard output, one JSON value a line: a line that is not JSON fails
/// the test, naming it. For an [`Output`] of a command the tests ran otherwise (a shell
/// pipeline); a [`Ran`] says [`Ran::records`].
#[track_caller]
pub fn records(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
