//! The lock held around a refresh, so that nothing spends a refresh token twice: the CLI's own
//! where it has one (a folder made with `mkdir`, as proper-lockfile makes it, or a file held
//! with `flock`), else panel's, a `flock` on a file beside the store. Every panel process of a
//! fleet and the user's own CLI wait on the same one. A `mkdir` lock is taken holding panel's
//! own `flock` beside it, kept while the folder is: panel's waiters come to the folder one at a
//! time, so a stale one (its holder killed) is taken over by one alone, and a panel holder is
//! never taken over by another, however slow its refresh.

use std::fs;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Result, anyhow};
use nix::fcntl::{Flock, FlockArg};

use super::dial::STOPPED;
use crate::engine::harness::login::LockKind;

/// How long a refresh waits for the lock before it gives up (the CLIs' own refreshes take a
/// second or two; a holder that died leaves a `mkdir` lock stale after its `stale` seconds).
pub const WAIT: Duration = Duration::from_secs(90);

/// A held lock; dropping it lets go.
#[must_use = "the lock is let go when this is dropped"]
pub struct Held {
    /// A `mkdir` lock's folder, removed to let go, and the flag that stops its updates.
    dir: Option<(PathBuf, Arc<AtomicBool>)>,
    /// A `flock`ed file, let go when closed: after the folder is removed.
    _file: Option<Flock<fs::File>>,
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

/// Where panel's own `flock` beside a `mkdir` lock is: `.NAME.panel-flock`.
fn serial_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{}.panel-flock", name.trim_start_matches('.')))
}

/// Takes the lock at `path`, waiting up to [`WAIT`] and until `stop`; a `mkdir` lock left
/// unchanged for `stale` is taken over, as proper-lockfile's waiters do.
pub fn take(path: &Path, kind: LockKind, stale: Duration, stop: &dyn Fn() -> bool) -> Result<Held> {
    let until = Instant::now() + WAIT;
    if let Some(parent) = path.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let cannot = |at: &Path, e: std::io::Error| anyhow!("{}: cannot lock: {e}", at.display());
    let serial_at = serial_path(path);
    let mut serial = None;
    let mut pause = Duration::from_millis(20);
    loop {
        let held = match kind {
            LockKind::Flock => try_flock(path).map_err(|e| cannot(path, e))?.map(|f| Held {
                dir: None,
                _file: Some(f),
            }),
            LockKind::Mkdir => {
                if serial.is_none() {
                    serial = try_flock(&serial_at).map_err(|e| cannot(&serial_at, e))?;
                }
                match serial.is_some() {
                    true => try_dir(path, stale).map_err(|e| cannot(path, e))?,
                    false => None,
                }
                .map(|dir| Held {
                    dir: Some(dir),
                    _file: serial.take(),
                })
            }
        };
        if let Some(held) = held {
            return Ok(held);
        }
        if stop() {
            return Err(anyhow!("{STOPPED} while waiting for {}", path.display()));
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

/// Makes the folder at `path`, taking over one nobody updated for `stale`. Called holding
/// panel's own `flock` beside it: no other panel waiter looks at it meanwhile.
fn try_dir(path: &Path, stale: Duration) -> std::io::Result<Option<(PathBuf, Arc<AtomicBool>)>> {
    let made = match fs::create_dir(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let old = fs::symlink_metadata(path)
                .and_then(|m| m.modified())
                .map(|t| SystemTime::now().duration_since(t).unwrap_or_default() > stale);
            // Its holder stopped updating it: gone.
            match old.unwrap_or(false) && fs::remove_dir(path).is_ok() {
                true => fs::create_dir(path),
                false => return Ok(None),
            }
        }
        other => other,
    };
    match made {
        Ok(()) => {
            let done = Arc::new(AtomicBool::new(false));
            keep_fresh(path.to_path_buf(), Arc::clone(&done));
            Ok(Some((path.to_path_buf(), done)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(e),
    }
}

/// `flock`s the file at `path`, made when it is not there; `None` while another holds it.
fn try_flock(path: &Path) -> std::io::Result<Option<Flock<fs::File>>> {
    match Flock::lock(open_lock_file(path)?, FlockArg::LockExclusiveNonblock) {
        Ok(held) => Ok(Some(held)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(e.into()),
    }
}

/// The lock file at `path`, opened to be `flock`ed (reading is enough), made when it is not
/// there. One a root caller makes is given to the owner of its folder: the user's own CLI and
/// panel open it after.
fn open_lock_file(path: &Path) -> std::io::Result<fs::File> {
    let open = |new: bool| {
        fs::OpenOptions::new()
            .read(true)
            .write(new)
            .create_new(new)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    match open(true) {
        Ok(file) => {
            let owner = path.parent().and_then(|d| fs::metadata(d).ok());
            if let Some(dir) = owner.filter(|_| nix::unistd::geteuid().is_root()) {
                std::os::unix::fs::fchown(&file, Some(dir.uid()), Some(dir.gid()))?;
            }
            Ok(file)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => open(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    const NEVER: &dyn Fn() -> bool = &|| false;

    #[test]
    fn a_lock_is_held_by_one_at_a_time_and_a_stale_folder_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let minute = Duration::from_secs(60);
        for kind in [LockKind::Mkdir, LockKind::Flock] {
            let path = dir.path().join(format!("{kind:?}.lock"));
            let held = take(&path, kind, minute, NEVER).unwrap();
            let try_again = match kind {
                LockKind::Mkdir => try_dir(&path, minute).map(|d| d.is_some()),
                LockKind::Flock => try_flock(&path).map(|f| f.is_some()),
            };
            assert!(!try_again.unwrap(), "{kind:?}");
            // A waiter asked to stop gives up at once.
            let t = Instant::now();
            let said = take(&path, kind, minute, &|| true).err().unwrap();
            assert!(said.to_string().contains(STOPPED), "{said}");
            assert!(t.elapsed() < Duration::from_secs(1));
            drop(held);
            assert!(take(&path, kind, minute, NEVER).is_ok(), "{kind:?}");
        }
        // A folder nobody updates for longer than `stale` is a dead holder's.
        let path = dir.path().join("dead.lock");
        fs::create_dir(&path).unwrap();
        let t = Instant::now();
        let _held = take(&path, LockKind::Mkdir, Duration::from_millis(50), NEVER).unwrap();
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    /// Waiters race for the folder a killed holder left, over and over: one takes it over, and
    /// the others wait for it, even while the first holds it longer than `stale` (a slow
    /// refresh), where each once took it over from the other.
    #[test]
    fn a_stale_folder_is_taken_over_by_one_waiter_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".oauth_refresh.lock");
        let (holding, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let ms = Duration::from_millis;
        for (rounds, waiters, stale, hold) in [(6, 2, ms(30), ms(200)), (40, 3, ms(60_000), ms(0))]
        {
            for _ in 0..rounds {
                fs::create_dir(&path).unwrap();
                let dead = SystemTime::now() - Duration::from_secs(3600);
                fs::File::open(&path).unwrap().set_modified(dead).unwrap();
                let start = std::sync::Barrier::new(waiters);
                std::thread::scope(|s| {
                    for _ in 0..waiters {
                        s.spawn(|| {
                            start.wait();
                            let held = take(&path, LockKind::Mkdir, stale, NEVER).unwrap();
                            most.fetch_max(
                                holding.fetch_add(1, Ordering::SeqCst) + 1,
                                Ordering::SeqCst,
                            );
                            std::thread::sleep(hold);
                            holding.fetch_sub(1, Ordering::SeqCst);
                            drop(held);
                        });
                    }
                });
                assert!(!path.exists(), "a holder's folder is left");
            }
        }
        assert_eq!(most.load(Ordering::SeqCst), 1, "two held the lock at once");
    }

    /// A root caller's lock files in a user's folder are the user's: their own CLI and panel
    /// open them after.
    #[test]
    fn a_lock_file_a_root_caller_makes_is_the_folder_owner_s() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("a_lock_file_a_root_caller_makes_is_the_folder_owner_s: skipped: not root");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(54_321), Some(54_322)).unwrap();
        let flock = dir.path().join("auth.lock");
        let mkdir = dir.path().join(".oauth_refresh.lock");
        let held = [
            take(&flock, LockKind::Flock, Duration::from_secs(60), NEVER).unwrap(),
            take(&mkdir, LockKind::Mkdir, Duration::from_secs(60), NEVER).unwrap(),
        ];
        for file in [flock, serial_path(&mkdir)] {
            let m = fs::metadata(&file).unwrap();
            assert_eq!((m.uid(), m.gid()), (54_321, 54_322), "{}", file.display());
        }
        drop(held);
    }
}
