//! A cap on how many judges of one harness run at once across every panel-judge on the
//! machine (GNU parallel runs many), so a fleet stays under a tool's rate limit: N lock files
//! per harness, one held for each running judge.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

/// One held slot; dropping it frees it (and the kernel frees it if we die).
pub struct Slot {
    _lock: Flock<File>,
}

/// Why no slot was taken.
#[derive(Debug, PartialEq, Eq)]
pub enum NoSlot {
    /// The deadline came first.
    Deadline,
    /// The run was stopped.
    Stopped,
}

/// Where the slot files live: `$XDG_RUNTIME_DIR/panel-slots-UID`, else in the temporary folder.
pub fn dir() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("panel-slots-{}", nix::unistd::getuid()))
}

/// Makes the slot folder, or checks the one there: it must be the user's own and closed to
/// others, since whoever can write it can hold every slot, or plant a link where a slot file goes.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
    {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let why = if !meta.is_dir() {
        "not a folder"
    } else if meta.uid() != nix::unistd::getuid().as_raw() {
        "the folder belongs to another user"
    } else if meta.mode() & 0o022 != 0 {
        "the folder is open to other users (it must be 0700)"
    } else if meta.mode() & 0o077 != 0 {
        // Made readable by an earlier version: nobody else could write it; close it.
        use std::os::unix::fs::PermissionsExt;
        return std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    } else {
        return Ok(());
    };
    Err(std::io::Error::other(format!(
        "{}: {why}: the --harness-cap slots cannot be kept there",
        dir.display()
    )))
}

/// Waits for one of `cap` slots of `harness` until `until`, or until `stopped` says so.
pub fn acquire(
    harness: &str,
    cap: usize,
    until: Instant,
    stopped: &dyn Fn() -> bool,
) -> std::io::Result<Result<Slot, NoSlot>> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = dir();
    private_dir(&dir)?;
    let files: Vec<File> = (0..cap.max(1))
        .map(|i| {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .custom_flags(nix::libc::O_NOFOLLOW)
                .open(dir.join(format!("{harness}.{i}")))
        })
        .collect::<std::io::Result<_>>()?;
    let mut files: Vec<Option<File>> = files.into_iter().map(Some).collect();
    loop {
        for slot in files.iter_mut() {
            let file = slot.take().expect("each file is tried once a round");
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => return Ok(Ok(Slot { _lock: lock })),
                Err((file, _)) => *slot = Some(file),
            }
        }
        if stopped() {
            return Ok(Err(NoSlot::Stopped));
        }
        if Instant::now() >= until {
            return Ok(Err(NoSlot::Deadline));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_of_two_holds_two_and_frees_on_drop() {
        let name = format!("test-{}", std::process::id());
        let now = Instant::now;
        let a = acquire(&name, 2, now(), &|| false).unwrap();
        let b = acquire(&name, 2, now(), &|| false).unwrap();
        assert!(a.is_ok() && b.is_ok());
        assert_eq!(
            acquire(&name, 2, now(), &|| false).unwrap().err(),
            Some(NoSlot::Deadline),
            "both slots are held"
        );
        drop(a);
        assert!(acquire(&name, 2, now(), &|| false).unwrap().is_ok());
        for i in 0..2 {
            let _ = std::fs::remove_file(dir().join(format!("{name}.{i}")));
        }
    }

    #[test]
    fn a_slot_folder_open_to_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("slots");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = private_dir(&open).unwrap_err().to_string();
        assert!(err.contains("open to other users"), "{err}");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).unwrap();
        assert!(
            private_dir(&link)
                .unwrap_err()
                .to_string()
                .contains("not a folder")
        );
        let fresh = tmp.path().join("fresh");
        private_dir(&fresh).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
