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
        for (c, from) in harness
            .credentials
            .iter()
            .zip(files(harness, user_home, env))
        {
            let to = private_home.join(&c.to);
            if copy_private(&from, &to).is_ok() {
                copies.push(to);
            }
        }
        Logins { copies }
    }
}

/// Where `harness`'s credential files are in the user's HOME, in the row's order.
pub fn files(
    harness: &Harness,
    user_home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<PathBuf> {
    harness
        .credentials
        .iter()
        .map(|c| expand_user_path(&c.from, user_home, env))
        .collect()
}

/// Whether a credential file is there to be copied: a regular file (through a link) we can
/// open. Looked at before it is opened: opening a FIFO put there would wait for a writer.
pub fn present(path: &Path) -> bool {
    let regular = |p: &Path| fs::metadata(p).is_ok_and(|m| m.is_file());
    regular(path) && fs::File::open(path).is_ok()
}

/// Whether a variable's name says it holds a login: a word of it is `KEY`, `TOKEN` or
/// `CREDENTIALS` (`ANTHROPIC_API_KEY`, `GH_TOKEN`, `GOOGLE_APPLICATION_CREDENTIALS`); a row's
/// other variables (endpoints, regions, switches) are not logins.
pub fn is_login_var(name: &str) -> bool {
    name.to_ascii_uppercase()
        .split('_')
        .any(|w| matches!(w, "KEY" | "TOKEN" | "CREDENTIALS"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_variable_is_named_for_a_key_a_token_or_credentials() {
        for name in [
            "ANTHROPIC_API_KEY",
            "GH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "my_key",
        ] {
            assert!(is_login_var(name), "{name}");
        }
        for name in [
            "ANTHROPIC_BASE_URL",
            "AWS_REGION",
            "CLAUDE_CODE_USE_BEDROCK",
            "KEYBOARD",
            "TOKENS_MAX",
            "npm_config_registry",
        ] {
            assert!(!is_login_var(name), "{name}");
        }
    }

    #[test]
    fn a_credential_file_is_a_regular_file_and_a_fifo_is_not_opened() {
        let dir = std::env::temp_dir().join(format!("panel-login-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (file, fifo) = (dir.join("auth.json"), dir.join("fifo.json"));
        fs::write(&file, "{}").unwrap();
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(present(&file));
        assert!(!present(&fifo));
        assert!(!present(&dir));
        assert!(!present(&dir.join("none.json")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
