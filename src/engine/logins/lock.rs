//! The lock held around a refresh, so that nothing spends a refresh token twice: the CLI's own
//! where it has one (a folder made with `mkdir`, as proper-lockfile makes it, or a file held
//! with `flock`), else panel's, a `flock` on a file beside the store. Every panel process of a
//! fleet and the user's own CLI wait on the same one.

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Result, anyhow};

use crate::engine::harness::login::LockKind;

/// How long a refresh waits for the lock before it gives up (the CLIs' own refreshes take a
/// second or two; a holder that died leaves a `mkdir` lock stale after its `stale` seconds).
pub const WAIT: Duration = Duration::from_secs(90);

/// A held lock; dropping it lets go.
#[must_use = "the lock is let go when this is dropped"]
pub struct Held {
    /// A `mkdir` lock's folder, removed to let go, and the flag that stops its updates.
    dir: Option<(PathBuf, Arc<AtomicBool>)>,
    /// A `flock`ed file, let go when closed.
    _file: Option<nix::fcntl::Flock<fs::File>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some((path, done)) = &self.dir {
            done.store(true, Ordering::SeqCst);
            let _ = fs::remove_dir(path);
        }
    }
}

/// How often a held `mkdir` lock is touched, so that its waiters (proper-lockfile's, stale
/// after a minute) never take it for a dead holder's.
const UPDATE: Duration = Duration::from_secs(5);

/// Touches `dir` every [`UPDATE`] until `done`.
fn keep_fresh(dir: PathBuf, done: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new().spawn(move || {
        let mut since = Instant::now();
        while !done.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(100));
            if since.elapsed() >= UPDATE {
                since = Instant::now();
                let _ = fs::File::open(&dir).and_then(|f| f.set_modified(SystemTime::now()));
            }
        }
    });
}

/// Takes the lock at `path`, waiting up to [`WAIT`]; a `mkdir` lock left unchanged for
/// `stale` is taken over, as proper-lockfile's waiters do.
pub fn take(path: &Path, kind: LockKind, stale: Duration) -> Result<Held> {
    let until = Instant::now() + WAIT;
    if let Some(parent) = path.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let mut pause = Duration::from_millis(20);
    loop {
        let got = match kind {
            LockKind::Mkdir => try_dir(path, stale),
            LockKind::Flock => try_flock(path),
        }
        .map_err(|e| anyhow!("{}: cannot lock: {e}", path.display()))?;
        if let Some(held) = got {
            return Ok(held);
        }
        if Instant::now() >= until {
            return Err(anyhow!(
                "{}: still locked after {} s (another refresh of this login is under way)",
                path.display(),
                WAIT.as_secs()
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

fn try_dir(path: &Path, stale: Duration) -> std::io::Result<Option<Held>> {
    match fs::create_dir(path) {
        Ok(()) => {
            let done = Arc::new(AtomicBool::new(false));
            keep_fresh(path.to_path_buf(), Arc::clone(&done));
            Ok(Some(Held {
                dir: Some((path.to_path_buf(), done)),
                _file: None,
            }))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let old = fs::symlink_metadata(path)
                .and_then(|m| m.modified())
                .map(|t| SystemTime::now().duration_since(t).unwrap_or_default() > stale);
            if old.unwrap_or(false) {
                // Its holder stopped updating it: gone. Taken over on the next try.
                let _ = fs::remove_dir(path);
            }
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn try_flock(path: &Path) -> std::io::Result<Option<Held>> {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(held) => Ok(Some(Held {
            dir: None,
            _file: Some(held),
        })),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_held_by_one_at_a_time_and_a_stale_folder_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [LockKind::Mkdir, LockKind::Flock] {
            let path = dir.path().join(format!("{kind:?}.lock"));
            let held = take(&path, kind, Duration::from_secs(60)).unwrap();
            let try_again = match kind {
                LockKind::Mkdir => try_dir(&path, Duration::from_secs(60)),
                LockKind::Flock => try_flock(&path),
            };
            assert!(try_again.unwrap().is_none(), "{kind:?}");
            drop(held);
            assert!(
                take(&path, kind, Duration::from_secs(60)).is_ok(),
                "{kind:?}"
            );
        }
        // A folder nobody updates for longer than `stale` is a dead holder's.
        let path = dir.path().join("dead.lock");
        fs::create_dir(&path).unwrap();
        let t = Instant::now();
        let _held = take(&path, LockKind::Mkdir, Duration::from_millis(50)).unwrap();
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
