//! The history: every verdict record panel-judge writes (canaries included) is appended to one
//! JSON-lines file as well, so that many panels can be read together afterwards.
//!
//! Where it is: `--history FILE`, else `$PANEL_HISTORY`, else
//! `$XDG_STATE_HOME/panel/history.jsonl` (`~/.local/state` when XDG_STATE_HOME is unset, empty
//! or relative). `--no-history`, or `PANEL_HISTORY=off`, keeps none.
//!
//! Many panels may append at once. The file is opened `O_APPEND`, created 0600 (its missing
//! folders 0700), never through a symbolic link, and only when it is the user's own; each record
//! is written as one whole line in one write under an exclusive `flock`, so lines of two panels
//! never interleave; a write cut short is cut back, so no torn line is left. A history that cannot be written costs the panel nothing: the records still
//! go to standard output and the run folder, and one line on standard error says what was not
//! kept.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// Where the history goes, from the flags and the environment; `None`: no history.
/// `Err` says why no file could be named (no HOME).
pub fn location(
    flag: Option<&Path>,
    off: bool,
    var: &dyn Fn(&str) -> Option<String>,
) -> Option<Result<PathBuf, String>> {
    if off {
        return None;
    }
    if let Some(path) = flag {
        return Some(Ok(path.to_path_buf()));
    }
    match var("PANEL_HISTORY").filter(|v| !v.is_empty()) {
        Some(v) if v == "off" => return None,
        Some(v) => return Some(Ok(PathBuf::from(v))),
        None => {}
    }
    let state = var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            var("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/state"))
        });
    Some(match state {
        Some(dir) => Ok(dir.join("panel/history.jsonl")),
        None => Err("no XDG_STATE_HOME or HOME to keep it under (--history FILE names one)".into()),
    })
}

/// The history file, open to append.
#[derive(Debug)]
pub struct History {
    /// `None` once a write failed: the rest of the run keeps no history.
    file: Option<File>,
    path: PathBuf,
}

impl History {
    /// Opens (creating it 0600, and its missing folders 0700) the history at `path`. Refuses a
    /// symbolic link, anything but a regular file, and a file another user owns.
    pub fn open(path: &Path) -> std::io::Result<History> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && !parent.exists()
        {
            crate::engine::run_folder::make_dir(parent)?;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| {
                if e.raw_os_error() == Some(nix::libc::ELOOP) {
                    std::io::Error::other("a symbolic link, not followed")
                } else {
                    e
                }
            })?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        if meta.uid() != nix::unistd::geteuid().as_raw() {
            return Err(std::io::Error::other(format!(
                "the file belongs to another user (uid {})",
                meta.uid()
            )));
        }
        Ok(History {
            file: Some(file),
            path: path.to_path_buf(),
        })
    }

    /// Appends one record (`line`, without its newline) as one whole line, under the lock.
    pub fn append(&mut self, line: &str) -> std::io::Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let mut locked =
            Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| std::io::Error::from(e))?;
        let wrote = append_whole(&mut locked, line);
        let file = locked.unlock().map_err(|(_, e)| std::io::Error::from(e))?;
        wrote?;
        self.file = Some(file);
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Writes `line` and its newline at the end of `file` (locked by us) so that no torn line is
/// left: a write cut short (a full disk, a file-size limit) is cut back to where it began, and a
/// torn line another writer left (killed mid-write) is ended first, never glued to ours.
fn append_whole(file: &mut File, line: &str) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let start = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(line.len() + 2);
    if start > 0 {
        let mut last = [0u8];
        file.seek(SeekFrom::Start(start - 1))?;
        let ended = file.read_exact(&mut last).is_ok_and(|()| last[0] == b'\n');
        if !ended {
            bytes.push(b'\n');
        }
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let wrote = file.write_all(&bytes).and_then(|()| file.flush());
    if wrote.is_err() {
        let _ = file.set_len(start);
    }
    wrote
}

/// The history of one run: opened at its start, written record by record. The first failure is
/// said once on standard error, and the run goes on without a history.
#[derive(Debug)]
pub struct Keeper {
    history: Option<History>,
}

impl Keeper {
    /// The history the flags and the environment name, open; `None` inside when there is none
    /// or it cannot be opened (said on standard error by `tool`).
    pub fn start(tool: &str, flag: Option<&Path>, off: bool) -> Keeper {
        let var = |name: &str| std::env::var(name).ok();
        let history = match location(flag, off, &var) {
            None => None,
            Some(Err(why)) => {
                eprintln!(
                    "{tool}: history: not kept: {why}; the records are on standard output and in the run folder"
                );
                None
            }
            Some(Ok(path)) => match History::open(&path) {
                Ok(h) => Some(h),
                Err(e) => {
                    say_lost(tool, &path, &e);
                    None
                }
            },
        };
        Keeper { history }
    }

    /// Appends one record; a failure is said once and ends the history of this run.
    pub fn append(&mut self, tool: &str, line: &str) {
        if let Some(h) = &mut self.history
            && let Err(e) = h.append(line)
        {
            say_lost(tool, h.path(), &e);
            self.history = None;
        }
    }
}

fn say_lost(tool: &str, path: &Path, e: &std::io::Error) {
    let shown = crate::records::printable::one_line(&path.display().to_string());
    let why = crate::records::printable::one_line(&e.to_string());
    eprintln!(
        "{tool}: history: {shown}: not kept: {why}; the records are on standard output and in the run folder"
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A lookup of the variables `pairs` gives, in place of the environment.
    pub(crate) fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn at(pairs: &[(&str, &str)]) -> Option<Result<PathBuf, String>> {
        location(None, false, &env(pairs))
    }

    #[test]
    fn the_location_follows_flags_then_env_then_xdg() {
        let p = |s: &str| Some(Ok(PathBuf::from(s)));
        assert_eq!(
            at(&[("HOME", "/h")]),
            p("/h/.local/state/panel/history.jsonl")
        );
        assert_eq!(
            at(&[("HOME", "/h"), ("XDG_STATE_HOME", "/s")]),
            p("/s/panel/history.jsonl")
        );
        // An empty or relative XDG_STATE_HOME is ignored, as the XDG specification says.
        for xdg in ["", "rel/state"] {
            assert_eq!(
                at(&[("HOME", "/h"), ("XDG_STATE_HOME", xdg)]),
                p("/h/.local/state/panel/history.jsonl")
            );
        }
        assert_eq!(
            at(&[("HOME", "/h"), ("PANEL_HISTORY", "/x/h.jsonl")]),
            p("/x/h.jsonl")
        );
        assert_eq!(
            at(&[("HOME", "/h"), ("PANEL_HISTORY", "")]),
            p("/h/.local/state/panel/history.jsonl")
        );
        assert_eq!(at(&[("HOME", "/h"), ("PANEL_HISTORY", "off")]), None);
        assert!(matches!(at(&[]), Some(Err(_))));
        let flag = Path::new("f.jsonl");
        let var = env(&[("PANEL_HISTORY", "/x")]);
        assert_eq!(location(Some(flag), false, &var), p("f.jsonl"));
        assert_eq!(location(Some(flag), true, &var), None);
    }

    #[test]
    fn a_history_is_private_and_never_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/er/history.jsonl");
        let mut h = History::open(&path).unwrap();
        h.append("{\"a\":1}").unwrap();
        h.append("{\"a\":2}").unwrap();
        drop(h);
        let mut h = History::open(&path).unwrap();
        h.append("{\"a\":3}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n"
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("deep")), 0o700);
        assert_eq!(mode(&dir.path().join("deep/er")), 0o700);
        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = History::open(&link).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(History::open(dir.path()).is_err());
    }

    #[test]
    fn a_torn_line_another_writer_left_is_ended_never_glued_to_ours() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"a\":").unwrap();
        let mut h = History::open(&path).unwrap();
        h.append("{\"a\":2}").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"a\":\n{\"a\":2}\n"
        );
    }
}
