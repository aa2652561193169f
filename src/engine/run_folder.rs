//! The run folder: everything about every judge (prompt, argv, stdout, stderr, exit, record),
//! kept where the user can read it afterwards; and the privates' folder beside it that holds each
//! judge's private HOME, TMPDIR and working folder. Both are made 0700, with names no one can
//! guess.
//!
//! The run folder keeps what it can. A full disk never costs a judge its answer or a record on
//! standard output, but the first thing the folder could not keep is remembered, and the tool
//! reports it and exits 2 when its work is done (see [`crate::tools::main`]).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static LOST: Mutex<Option<String>> = Mutex::new(None);

/// Notes that `path` could not be kept; only the first loss is reported.
pub fn lose(path: &Path, e: &std::io::Error) {
    let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
    lost.get_or_insert_with(|| format!("{}: cannot keep: {e}", path.display()));
}

/// The first loss, if any.
pub fn loss() -> Option<String> {
    LOST.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Creates a folder of the run folder; false (and a loss) when it cannot.
pub fn dir(path: &Path) -> bool {
    make_dir(path).map_err(|e| lose(path, &e)).is_ok()
}

/// How long a write waits for a descriptor our judges hold.
const WAIT_FOR_DESCRIPTORS: std::time::Duration = std::time::Duration::from_secs(10);

/// Writes a file of the run folder. A file it could not write whole is removed: a file there is
/// a file kept whole.
pub fn file(path: &Path, bytes: impl AsRef<[u8]>) {
    // A shortage of descriptors while judges run is theirs to end: waited out, not a loss.
    let deadline = std::time::Instant::now() + WAIT_FOR_DESCRIPTORS;
    let written = crate::engine::lifecycle::through_shortage(deadline, || {
        write_private(path, bytes.as_ref())
    });
    if let Err(e) = written {
        let _ = fs::remove_file(path);
        lose(path, &e);
    }
}

/// Creates `path` and the folders above it that are missing, each 0700; a symbolic link (or
/// anything but a folder) in its place is an error, never followed into.
pub fn make_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let new = fs::symlink_metadata(path).is_err();
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)?;
    if !fs::symlink_metadata(path)?.is_dir() {
        return Err(std::io::Error::other("not a folder (a symbolic link?)"));
    }
    // One we made is 0700 whatever the umask; one the user named and made is theirs.
    if new {
        private(path)?;
    }
    Ok(())
}

/// Opens `path` to write it from the start (and read it back), 0600 when new, never through a
/// symbolic link.
pub fn create_private(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

/// Writes `bytes` as the whole of `path`, 0600 when new, never through a symbolic link.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_private(path)?.write_all(bytes)
}

/// The last `tail` bytes of a file of the run folder, as text; `None` when it cannot be read.
pub fn read_end(path: &Path, tail: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(tail))).ok()?;
    let mut bytes = Vec::new();
    file.take(tail).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Keeps the frozen candidate in the run folder, 0400.
pub fn freeze(run: &Path, candidate: &crate::records::candidate::Candidate) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let path = run.join("candidate");
    let mut file = create_private(&path)
        .and_then(|mut f| f.write_all(candidate.text.as_bytes()).map(|()| f))
        .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
    file.flush()?;
    file.set_permissions(fs::Permissions::from_mode(0o400))?;
    Ok(())
}

/// Takes `dir` as a run folder: created 0700 when missing; else it must be the user's own
/// folder, and empty unless `resume`. The lock returned is held for the run: two runs never
/// share a folder.
pub fn claim(dir: &Path, resume: bool) -> anyhow::Result<nix::fcntl::Flock<fs::File>> {
    use anyhow::bail;
    use std::os::unix::fs::MetadataExt;
    let shown = crate::records::printable::shown(&dir.display().to_string()).into_owned();
    match fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            make_dir(dir).map_err(|e| anyhow::anyhow!("{shown}: cannot create: {e}"))?
        }
        Err(e) => bail!("{shown}: {e}"),
        Ok(m) if !m.is_dir() => bail!("{shown}: not a folder"),
        Ok(m) if m.uid() != nix::unistd::getuid().as_raw() => {
            bail!(
                "{shown}: the folder belongs to another user (uid {})",
                m.uid()
            )
        }
        Ok(_) => {
            let full = fs::read_dir(dir)
                .map_err(|e| anyhow::anyhow!("{shown}: {e}"))?
                .next()
                .is_some();
            if full && !resume {
                bail!(
                    "{shown}: not empty: a run folder must be new or empty (move the earlier run aside, or leave out --out for a new one)"
                );
            }
        }
    }
    lock(dir)
        .map_err(|e| anyhow::anyhow!("{shown}: cannot lock: {e}"))?
        .ok_or_else(|| anyhow::anyhow!("{shown}: another run is using this folder"))
}

/// An append-only file of lines that never holds a torn line: a line that cannot be written
/// whole is cut off again, and nothing after it is written, so the file stays a prefix of what
/// went to standard output.
pub struct RunLedger {
    file: Option<fs::File>,
    len: u64,
    path: std::path::PathBuf,
    /// Of what the file holds: a ledger changed afterwards no longer matches.
    digest: sha2::Sha256,
}

impl RunLedger {
    /// Creates (or empties) the ledger; an error here stops the run before any judge starts.
    pub fn create(path: &Path) -> anyhow::Result<RunLedger> {
        let file = create_private(path)
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))?;
        Ok(RunLedger {
            file: Some(file),
            len: 0,
            path: path.to_path_buf(),
            digest: sha2::Digest::new(),
        })
    }

    /// `sha256:<hex>` of the ledger as written.
    pub fn seal(&self) -> String {
        crate::records::candidate::seal_of(sha2::Digest::finalize(self.digest.clone()))
    }

    pub fn push(&mut self, line: &str) {
        let Some(file) = &mut self.file else { return };
        let bytes = format!("{line}\n");
        match file.write_all(bytes.as_bytes()) {
            Ok(()) => {
                self.len += bytes.len() as u64;
                sha2::Digest::update(&mut self.digest, bytes.as_bytes());
            }
            Err(e) => {
                let _ = file.set_len(self.len);
                lose(&self.path, &e);
                self.file = None;
            }
        }
    }
}

/// The names of an attempt's prompt, schema and answer files in its private folder.
pub const PROMPT_FILE: &str = "prompt.txt";
/// What every judge of the panel is sent alike, for a row that takes it apart (`{shared_file}`).
pub const SHARED_FILE: &str = "shared.txt";
pub const SCHEMA_FILE: &str = "schema.json";
pub const ANSWER_FILE: &str = "answer";
/// The authorities a judge that holds a placeholder trusts, its proxy's among them.
pub const AUTHORITIES_FILE: &str = "authorities.pem";

/// The folders of one attempt: in the run folder what is kept, among the privates what is private.
pub struct AttemptDirs {
    pub attempt: PathBuf,
    pub private: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
    pub tmp: PathBuf,
}

impl AttemptDirs {
    /// Attempt `n` of the job `name`: kept in the run folder under the job's name, private in
    /// `private` (named by [`private_name`] in a launch).
    pub fn new(run: &Path, private: &Path, name: &str, n: u32) -> AttemptDirs {
        AttemptDirs {
            attempt: run.join(name).join(format!("attempt-{n}")),
            home: private.join("home"),
            work: private.join("work"),
            tmp: private.join("tmp"),
            private: private.to_path_buf(),
        }
    }

    /// The same attempt run in another private folder (a resumed session's).
    pub fn in_private(self, private: &Path) -> AttemptDirs {
        AttemptDirs {
            attempt: self.attempt,
            home: private.join("home"),
            work: private.join("work"),
            tmp: private.join("tmp"),
            private: private.to_path_buf(),
        }
    }

    pub fn prompt_file(&self) -> PathBuf {
        self.private.join(PROMPT_FILE)
    }

    pub fn shared_file(&self) -> PathBuf {
        self.private.join(SHARED_FILE)
    }

    pub fn schema_file(&self) -> PathBuf {
        self.private.join(SCHEMA_FILE)
    }

    pub fn answer_file(&self) -> PathBuf {
        self.private.join(ANSWER_FILE)
    }

    /// Where the judge's proxy logs what it refused: beside its private folder, out of its reach.
    pub fn egress_log(&self) -> PathBuf {
        let mut p = self.private.clone().into_os_string();
        p.push(".egress");
        p.into()
    }

    /// Where its supervisor says what it met of its share, beside the log.
    pub fn share_report(&self) -> PathBuf {
        let mut p = self.private.clone().into_os_string();
        p.push(".share");
        p.into()
    }
}

/// The name of an attempt's private folder among the privates: chance alone. A judge reads the
/// path of its folder (its HOME, TMPDIR, working folder), and the job's name may say what it
/// must not know: which order a pairwise judge was shown the two answers in.
pub fn private_name() -> String {
    crate::contracts::fence::random_hex(8)
}

/// A new folder under the temporary folder, `prefix` and random characters, 0700 whatever the
/// umask (its names, sizes and times are the run's to keep), checked after it is made.
pub fn fresh(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .permissions(fs::Permissions::from_mode(0o700))
        .tempdir()?;
    private(dir.path())?;
    Ok(dir)
}

/// Makes `dir` (a folder of ours) 0700 and checks that it is.
pub fn private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir()
        || meta.mode() & 0o7777 != 0o700
        || meta.uid() != nix::unistd::geteuid().as_raw()
    {
        return Err(std::io::Error::other(format!(
            "{} is not a private folder of ours after it was made",
            dir.display()
        )));
    }
    Ok(())
}

/// The judges' private folders of one run (their HOMEs, with the logins copied in), removed
/// when the run ends. While the run lives it holds a lock on the folder, so that a later run
/// can remove one whose owner was killed (SIGKILL, the OOM killer) before it could.
pub struct Privates {
    dir: PathBuf,
    _owner: nix::fcntl::Flock<fs::File>,
}

const SANDBOX: &str = "panel-sandbox.";
/// A privates' folder younger than this is never taken for abandoned: its owner may not hold its lock
/// yet.
const SANDBOX_SETTLING: std::time::Duration = std::time::Duration::from_secs(60);

impl Privates {
    /// Removes the privates' folders other runs left behind, then makes this run's.
    pub fn create() -> std::io::Result<Privates> {
        sweep_abandoned();
        // Removed by our own hand (tempfile's would stop at a folder a judge made unreadable).
        let dir = fresh(SANDBOX)?.keep();
        let owner = match lock(&dir) {
            Ok(Some(owner)) => owner,
            other => {
                let _ = crate::engine::beneath::remove_tree(&dir);
                return Err(other.err().unwrap_or(std::io::ErrorKind::WouldBlock.into()));
            }
        };
        Ok(Privates { dir, _owner: owner })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Privates {
    fn drop(&mut self) {
        let _ = crate::engine::beneath::remove_tree(&self.dir);
    }
}

/// An exclusive lock on a folder, or `None` when another process holds it.
fn lock(dir: &Path) -> std::io::Result<Option<nix::fcntl::Flock<fs::File>>> {
    use nix::fcntl::{Flock, FlockArg};
    let file = fs::File::open(dir)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(lock)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(e.into()),
    }
}

/// Removes every privates' folder of ours under the temporary folder whose owner no longer holds it.
fn sweep_abandoned() {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    let me = nix::unistd::getuid().as_raw();
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry.file_name().to_string_lossy().starts_with(SANDBOX)
            && fs::symlink_metadata(&path).is_ok_and(|m| {
                m.is_dir()
                    && m.uid() == me
                    && m.modified()
                        .is_ok_and(|t| t.elapsed().unwrap_or_default() > SANDBOX_SETTLING)
            });
        if ours && let Ok(Some(_lock)) = lock(&path) {
            let _ = crate::engine::beneath::remove_tree(&path);
        }
    }
}

/// Records written as each judge ends: to standard output, flushed at once so the next stage
/// sees them, and to the run folder's ledger. When nobody reads standard output any more
/// (`| head -1`), the run is stopped (every judge's process group ended) and the ledger still
/// gets every record.
pub struct Emitter {
    stdout: std::io::BufWriter<crate::engine::output::Stdout>,
    open: bool,
    ledger: RunLedger,
}

impl Emitter {
    /// Creates (or empties) the ledger file.
    pub fn new(ledger: &std::path::Path) -> anyhow::Result<Emitter> {
        Ok(Emitter {
            stdout: std::io::BufWriter::new(crate::engine::output::stdout()),
            open: true,
            ledger: RunLedger::create(ledger)?,
        })
    }

    /// Says the closing line on standard error, unless the records go down a pipe to a tool
    /// that reports them while standard error is a terminal: panel-tally names the run folder
    /// in its report, on the same screen, and the line would be there twice.
    pub fn close(&self, label: &str, run: &Path) {
        use std::io::IsTerminal;
        let piped = crate::records::input::is_pipe(&std::io::stdout());
        if !(piped && std::io::stderr().is_terminal()) {
            eprintln!("{}", self.closing_line(label, run));
        }
    }

    /// The closing line of a run: `LABEL: DIR (LEDGER sha256:<hex>)`, so a run folder changed
    /// afterwards can be told.
    fn closing_line(&self, label: &str, run: &Path) -> String {
        let name = self.ledger.path.file_name().unwrap_or_default();
        format!(
            "{label}: {} ({} {})",
            crate::records::printable::shown(&run.display().to_string()),
            name.to_string_lossy(),
            self.ledger.seal()
        )
    }

    pub fn emit(&mut self, line: &str) -> anyhow::Result<()> {
        self.ledger.push(line);
        if !self.open {
            return Ok(());
        }
        if let Err(e) = writeln!(self.stdout, "{line}").and_then(|_| self.stdout.flush()) {
            self.open = false;
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(e.into());
            }
            crate::engine::lifecycle::stop_all(crate::engine::lifecycle::SIGPIPE);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_never_share_a_folder_even_one_that_resumes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pr");
        let first = claim(&dir, true).unwrap();
        fs::write(dir.join("pr-verdicts.jsonl"), "").unwrap();
        let err = claim(&dir, true).unwrap_err().to_string();
        assert!(err.contains("another run is using this folder"), "{err}");
        let err = claim(&dir, false).unwrap_err().to_string();
        assert!(err.contains("not empty"), "{err}");
        drop(first);
        assert!(claim(&dir, true).is_ok());
    }
}
