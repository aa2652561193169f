//! What every attempt of a run shares: the options the tool was given, the user's environment
//! and HOME as the tool found them, and the walls and limits its judges run under.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::call::ask::LaunchOptions;
use crate::engine::logins::{Broker, User};
use crate::engine::sandbox::Walls;
use crate::engine::sandbox::share::Plan;

pub struct Context {
    pub opts: LaunchOptions,
    pub user_env: BTreeMap<String, String>,
    pub user_home: PathBuf,
    /// What the judges run under. Set when the run starts: a dry run prints the commands as
    /// they run outside our walls, which is how a pasted one runs.
    pub walls: Walls,
    /// The run's logins, each found and refreshed at most once.
    pub logins: Broker,
    /// How each judge is held to its share; set when the run starts.
    pub share: Plan,
    /// The run's own authority and the file of authorities its judges trust, made when a judge
    /// first holds a placeholder.
    trust: std::sync::OnceLock<Result<Trust, String>>,
}

/// The run's authority, as its supervisors and its judges have it.
pub struct Trust {
    pub keys: crate::engine::sandbox::authority::Keys,
    /// PEM: every authority the user trusts, and the run's.
    pub bundle: String,
}

impl Context {
    /// The context of a run with `opts`, in this process's environment.
    pub fn new(opts: LaunchOptions) -> Context {
        let user_env: BTreeMap<String, String> = std::env::vars().collect();
        let user_home = user_env
            .get("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| "/".into());
        Context {
            opts,
            user_env,
            user_home,
            walls: Walls::off(),
            logins: Broker::default(),
            share: Plan::default(),
            trust: std::sync::OnceLock::new(),
        }
    }

    /// The run's authority, made once.
    pub fn trust(&self) -> Result<&Trust, String> {
        let made = self.trust.get_or_init(|| {
            let keys = crate::engine::sandbox::authority::make()?;
            let env = |k: &str| self.user_env.get(k).cloned().filter(|v| !v.is_empty());
            let bundle = crate::engine::sandbox::authority::bundle(&keys, &env);
            Ok(Trust { keys, bundle })
        });
        made.as_ref().map_err(Clone::clone)
    }

    /// The user's PATH, where harnesses are found.
    pub fn path_var(&self) -> &str {
        self.user_env.get("PATH").map_or("", String::as_str)
    }

    /// The deadline of one attempt.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.opts.timeout_secs.max(0.001))
    }

    /// The user, as the broker reads their logins.
    pub fn with_user<T>(&self, f: impl FnOnce(&User) -> T) -> T {
        let env = |k: &str| self.user_env.get(k).cloned();
        f(&User {
            env: &env,
            home: &self.user_home,
            // Claude Code keeps its login in the Keychain on macOS alone.
            keychain: cfg!(target_os = "macos"),
        })
    }

    /// Whether our walls confine the judges.
    pub fn confined(&self) -> bool {
        self.walls.confined()
    }
}
