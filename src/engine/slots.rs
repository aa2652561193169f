//! A cap on how many judges of one harness run at once across every panel-judge on the
//! machine (GNU parallel runs many), so a fleet stays under a tool's rate limit: N lock files
//! per harness, one held for each running judge.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};

/// One held slot; dropping it frees it (and the kernel frees it if we die).
pub struct Slot {
    _lock: Flock<File>,
}

/// Where the slot files live: `$XDG_RUNTIME_DIR/panel-slots`, else the temporary folder.
pub fn dir() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    base.join(format!("panel-slots-{}", nix::unistd::getuid()))
}

/// Waits for one of `cap` slots of `harness`; `None` when `give_up` says to stop waiting.
pub fn acquire(
    harness: &str,
    cap: usize,
    give_up: &dyn Fn() -> bool,
) -> std::io::Result<Option<Slot>> {
    let dir = dir();
    std::fs::create_dir_all(&dir)?;
    let files: Vec<File> = (0..cap.max(1))
        .map(|i| {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join(format!("{harness}.{i}")))
        })
        .collect::<std::io::Result<_>>()?;
    let mut files: Vec<Option<File>> = files.into_iter().map(Some).collect();
    loop {
        for slot in files.iter_mut() {
            let file = slot.take().expect("each file is tried once a round");
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(lock) => return Ok(Some(Slot { _lock: lock })),
                Err((file, _)) => *slot = Some(file),
            }
        }
        if give_up() {
            return Ok(None);
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
        let a = acquire(&name, 2, &|| true).unwrap();
        let b = acquire(&name, 2, &|| true).unwrap();
        assert!(a.is_some() && b.is_some());
        assert!(
            acquire(&name, 2, &|| true).unwrap().is_none(),
            "both slots are held"
        );
        drop(a);
        assert!(acquire(&name, 2, &|| true).unwrap().is_some());
        for i in 0..2 {
            let _ = std::fs::remove_file(dir().join(format!("{name}.{i}")));
        }
    }
}
