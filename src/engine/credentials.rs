//! Logins: a harness row names the credential files its tool needs (`credentials`); each is
//! copied from the user's HOME into the judge's private HOME before the judge starts, created
//! readable by the owner alone before a byte is written, and removed when the attempt ends,
//! however it ends. Nothing else of the user's HOME reaches a judge.

use std::fs::{self, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::engine::harness::{Harness, expand_user_path};

/// The copies made for one attempt; dropping it removes them.
#[must_use = "the copies are removed when this is dropped"]
pub struct Logins {
    copies: Vec<PathBuf>,
}

impl Logins {
    /// Copies `harness`'s credential files from `user_home` into `private_home`. A file the user
    /// does not have is skipped: the tool then says it is not logged in.
    pub fn copy(
        harness: &Harness,
        user_home: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        private_home: &Path,
    ) -> Logins {
        let mut copies = Vec::new();
        for c in &harness.credentials {
            let from = expand_user_path(&c.from, user_home, env);
            let to = private_home.join(&c.to);
            if copy_private(&from, &to).is_ok() {
                copies.push(to);
            }
        }
        Logins { copies }
    }
}

impl Drop for Logins {
    fn drop(&mut self) {
        for path in &self.copies {
            let _ = fs::remove_file(path);
        }
    }
}

/// Copies a regular file into a new file that is 0600 from its creation, never following a
/// link at the destination and never replacing a file that is there.
fn copy_private(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut source = fs::File::open(from)?;
    if !source.metadata()?.is_file() {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    if let Some(parent) = to.parent() {
        crate::engine::run_folder::make_dir(parent)?;
    }
    let mut dest = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(to)?;
    let mut bytes = Vec::new();
    source.read_to_end(&mut bytes)?;
    dest.write_all(&bytes)
}
