//! Ending the judges a panel no longer needs (`--stop-when-decided`): one token per panel,
//! set once with why. Every process group started under it is ended at once, as at the
//! deadline (TERM, then KILL after the grace); a job not yet started under it never starts.
//! Canaries run under none: they are never cancelled.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use nix::sys::signal::Signal;

use crate::engine::lifecycle::{GRACE, signal_group};

/// How a panel is asked: every judge, or until it is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Every judge, as without the options: a split's reasons are the finding.
    All,
    /// Every judge at once, the rest ended once the panel is decided.
    StopWhenDecided,
    /// As few as could decide it, then more only while it is undecided.
    Cascade,
}

impl Pace {
    /// The pace `--stop-when-decided` and `--cascade` (which implies it) ask for.
    pub fn of(stop_when_decided: bool, cascade: bool) -> Pace {
        match (stop_when_decided, cascade) {
            (_, true) => Pace::Cascade,
            (true, false) => Pace::StopWhenDecided,
            (false, false) => Pace::All,
        }
    }
}

#[derive(Debug, Default)]
pub struct Cancel {
    why: OnceLock<String>,
    groups: Mutex<HashSet<i32>>,
}

impl Cancel {
    /// Why the panel's remaining judges were cancelled, once they were.
    pub fn why(&self) -> Option<&str> {
        self.why.get().map(String::as_str)
    }

    /// Cancels every judge under this token, once; later calls change nothing.
    pub fn cancel(&self, why: String) {
        if self.why.set(why).is_err() {
            return;
        }
        let groups: Vec<i32> = self.lock().iter().copied().collect();
        for &pgid in &groups {
            signal_group(pgid, Signal::SIGTERM);
        }
        if groups.is_empty() {
            return;
        }
        // The launch that waits for each ends its group too; this is for one that lingers.
        let _ = std::thread::Builder::new().spawn(move || {
            std::thread::sleep(GRACE);
            for pgid in groups {
                signal_group(pgid, Signal::SIGKILL);
            }
        });
    }

    /// Records a group just started; false when the token was cancelled already (the caller
    /// ends the group). Checked after the insert, so a cancel at the same moment sees the
    /// group or this sees the cancel.
    pub fn register(&self, pgid: i32) -> bool {
        self.lock().insert(pgid);
        self.why.get().is_none()
    }

    pub fn unregister(&self, pgid: i32) {
        self.lock().remove(&pgid);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<i32>> {
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }
}
