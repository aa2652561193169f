//! Where a run folder goes when the user names none (`--out`): one folder per run under
//! `$XDG_CACHE_HOME/panel/runs/` (`~/.cache` when XDG_CACHE_HOME is unset, empty or relative),
//! named by the UTC second its run started and random characters, so that names sort by time.
//! Without XDG_CACHE_HOME or HOME, the temporary folder, each run as `panel.NAME`.
//!
//! Each run that makes one removes the run folders whose runs started longer ago than the keep
//! period (`--keep-runs DAYS`, `PANEL_KEEP_DAYS`, default [`DEFAULT_KEEP_DAYS`]);
//! `panel-tally --runs` lists them and `--keep DAYS` prunes at once.
//!
//! The ground is hostile (docs/design.md §8): `panel` and `runs` are opened without following a
//! symbolic link and must be the user's own and closed to others' writes; a folder is removed
//! only when its name is one we give, it is a real folder of the user's, and no live run holds
//! its lock (every run holds its folder's, see [`crate::engine::run_folder::claim`]).

use std::fs::{self, File};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Result, anyhow, bail};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;

use crate::records::runs::RunFolder;

/// How long a run folder is kept when nothing says otherwise.
pub const DEFAULT_KEEP_DAYS: u32 = 14;

/// What names the keep period in the environment.
pub const KEEP_VAR: &str = "PANEL_KEEP_DAYS";

/// The ledgers a run folder may hold, by the tool that wrote it.
const LEDGERS: [&str; 3] = ["verdicts.jsonl", "reviews.jsonl", "pr-verdicts.jsonl"];

/// Where the run folders are kept, as the environment says.
#[derive(Debug, PartialEq, Eq)]
pub enum RunsHome {
    /// `BASE/panel/runs`, BASE being XDG_CACHE_HOME or HOME/.cache.
    Cache(PathBuf),
    /// The temporary folder, with no XDG_CACHE_HOME or HOME to keep them under.
    Temp(PathBuf),
}

impl RunsHome {
    /// From the environment; an empty or relative XDG_CACHE_HOME is ignored, as the XDG
    /// specification says, and so is a relative HOME.
    pub fn from(var: &dyn Fn(&str) -> Option<String>) -> RunsHome {
        let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
        match absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache"))) {
            Some(base) => RunsHome::Cache(base),
            None => RunsHome::Temp(std::env::temp_dir()),
        }
    }

    /// This process's environment.
    pub fn here() -> RunsHome {
        RunsHome::from(&|name| std::env::var(name).ok())
    }

    /// The folder the runs are in.
    pub fn dir(&self) -> PathBuf {
        match self {
            RunsHome::Cache(base) => base.join("panel/runs"),
            RunsHome::Temp(tmp) => tmp.clone(),
        }
    }

    /// What a run folder's name starts with: in the temporary folder, beside everyone's.
    fn prefix(&self) -> &'static str {
        match self {
            RunsHome::Cache(_) => "",
            RunsHome::Temp(_) => "panel.",
        }
    }
}

/// The keep period, in whole days: `--keep-runs`, else `PANEL_KEEP_DAYS` (empty: unset), else
/// the default.
pub fn keep_days(flag: Option<u32>, var: Option<String>) -> Result<u32> {
    if let Some(days) = flag {
        return Ok(days);
    }
    match var.filter(|v| !v.is_empty()) {
        Some(v) => parse_days(&v).map_err(|why| anyhow!("{KEEP_VAR}={v:?}: {why}")),
        None => Ok(DEFAULT_KEEP_DAYS),
    }
}

/// A number of days as the options take it: digits alone.
pub fn parse_days(text: &str) -> Result<u32, String> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse().ok())
        .flatten()
        .ok_or_else(|| "expected a whole number of days (0 or more)".into())
}

/// The run folders' folder, open: `panel` and `runs` were opened without following a link.
pub struct Runs {
    dir: PathBuf,
    fd: OwnedFd,
    prefix: &'static str,
}

/// What a prune did.
#[derive(Debug, Default)]
pub struct Pruned {
    pub removed: Vec<RunFolder>,
    /// Old enough, but a live run holds them.
    pub in_use: usize,
    /// Younger than the keep period.
    pub newer: usize,
    /// Those that could not be removed, and why.
    pub failed: Vec<(String, String)>,
}

impl Runs {
    /// Opens the run folders' folder at `place`, creating what is missing (0700) when `create`;
    /// `None` when it is not there and is not to be made. A symbolic link, anything but a
    /// folder, a folder of another user or one others may write is refused.
    pub fn open(place: &RunsHome, create: bool) -> Result<Option<Runs>> {
        let dir = place.dir();
        let shown =
            |p: &Path| crate::records::printable::shown(&p.display().to_string()).into_owned();
        let top = match place {
            RunsHome::Cache(base) => base,
            RunsHome::Temp(tmp) => tmp,
        };
        if create && let RunsHome::Cache(base) = place {
            // The base is the user's to choose: it may be a link, and it is followed.
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(base)
                .map_err(|e| anyhow!("{}: cannot create: {e}", shown(base)))?;
        }
        let flags = OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
        let mut fd = match nix::fcntl::open(top.as_path(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if !create => return Ok(None),
            Err(e) => bail!("{}: {}", shown(top), e.desc()),
        };
        if let RunsHome::Cache(base) = place {
            for (name, path) in [("panel", base.join("panel")), ("runs", dir.clone())] {
                match step(&fd, name, create, name == "runs") {
                    Ok(Some(next)) => fd = next,
                    Ok(None) => return Ok(None),
                    Err(why) if create => bail!(
                        "{}: {why}: no run folder is made there (remove it, or name a run folder with --out DIR)",
                        shown(&path)
                    ),
                    Err(why) => bail!("{}: {why}: not read through", shown(&path)),
                }
            }
        }
        Ok(Some(Runs {
            dir,
            fd,
            prefix: place.prefix(),
        }))
    }

    /// Makes a new run folder, 0700, and returns it locked for the run.
    pub fn fresh(&self, now: SystemTime) -> Result<(PathBuf, Flock<File>)> {
        let secs = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        for _ in 0..100 {
            let name = format!(
                "{}{}-{}",
                self.prefix,
                stamp(secs),
                crate::contracts::fence::random_hex(6)
            );
            match nix::sys::stat::mkdirat(&self.fd, name.as_str(), Mode::S_IRWXU) {
                Err(Errno::EEXIST) => continue,
                Err(e) => bail!("{}: cannot create a run folder: {}", self.shown(), e.desc()),
                Ok(()) => {}
            }
            let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
            let dir = match nix::fcntl::openat(&self.fd, name.as_str(), flags, Mode::empty()) {
                // A prune (only --keep 0 can) took it already: another name.
                Err(Errno::ENOENT) => continue,
                Err(e) => bail!("{}/{name}: {}", self.shown(), e.desc()),
                Ok(dir) => dir,
            };
            let private = nix::sys::stat::fchmod(&dir, Mode::S_IRWXU);
            // Waits out a prune that took it before this lock: then it is gone, and another
            // name is made.
            let lock = private
                .and_then(|()| {
                    Flock::lock(File::from(dir), FlockArg::LockExclusive).map_err(|(_, e)| e)
                })
                .map_err(|e| {
                    let _ = fs::remove_dir(self.dir.join(&name));
                    anyhow!("{}/{name}: {}", self.shown(), e.desc())
                })?;
            if self.still_there(&name, &lock) {
                let path = self.dir.join(&name);
                crate::engine::run_folder::private(&path)
                    .map_err(|e| anyhow!("{}: {e}", self.shown()))?;
                return Ok((path, lock));
            }
        }
        bail!("{}: no free name for a run folder", self.shown())
    }

    /// The run folders of ours, newest first.
    pub fn list(&self, now: SystemTime) -> Vec<RunFolder> {
        let mut found: Vec<(String, u64)> = self.ours();
        found.sort_by(|a, b| b.0.cmp(&a.0));
        found
            .into_iter()
            .map(|(name, started)| {
                let live = self.open_entry(&name).is_some_and(|fd| {
                    Flock::lock(File::from(fd), FlockArg::LockExclusiveNonblock).is_err()
                });
                self.describe(&name, started, now, live)
            })
            .collect()
    }

    /// Removes the run folders of ours whose runs started `keep` or longer ago and that no live
    /// run holds; `describe`: say what each held (for `--keep`), else only that it went.
    pub fn prune(&self, keep: Duration, now: SystemTime, describe: bool) -> Pruned {
        let mut pruned = Pruned::default();
        let now_secs = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let mut found = self.ours();
        found.sort();
        for (name, started) in found {
            if now_secs.saturating_sub(started) < keep.as_secs() {
                pruned.newer += 1;
                continue;
            }
            let Some(fd) = self.open_entry(&name) else {
                continue;
            };
            let Ok(lock) = Flock::lock(File::from(fd), FlockArg::LockExclusiveNonblock) else {
                pruned.in_use += 1;
                continue;
            };
            let info = if describe {
                self.describe(&name, started, now, false)
            } else {
                self.bare(&name, started, now)
            };
            let path = self.dir.join(&name);
            // The lock is held while it goes: a run starting in it waits, then makes another.
            let gone = if self.still_there(&name, &lock) {
                // Never follows a link, inside or at the top.
                fs::remove_dir_all(&path)
            } else {
                Err(std::io::Error::other("it changed while it was looked at"))
            };
            drop(lock);
            match gone {
                Ok(()) => pruned.removed.push(RunFolder {
                    removed: true,
                    ..info
                }),
                Err(e) => pruned.failed.push((info.path, e.to_string())),
            }
        }
        pruned
    }

    fn shown(&self) -> String {
        crate::records::printable::shown(&self.dir.display().to_string()).into_owned()
    }

    /// The names of ours here (a name we give, a real folder, the user's own) and when their
    /// runs started.
    fn ours(&self) -> Vec<(String, u64)> {
        let me = nix::unistd::geteuid().as_raw();
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let started = started(name.strip_prefix(self.prefix)?)?;
                let meta = nix::sys::stat::fstatat(
                    &self.fd,
                    name.as_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                )
                .ok()?;
                let dir = meta.st_mode & nix::libc::S_IFMT == nix::libc::S_IFDIR;
                (dir && meta.st_uid == me).then_some((name, started))
            })
            .collect()
    }

    /// A folder here, opened without following a link.
    fn open_entry(&self, name: &str) -> Option<OwnedFd> {
        let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
        nix::fcntl::openat(&self.fd, name, flags, Mode::empty()).ok()
    }

    /// Whether `name` here, and its path, are still the folder `held` is open on.
    fn still_there(&self, name: &str, held: &Flock<File>) -> bool {
        let Ok(held) = held.metadata() else {
            return false;
        };
        let at = nix::sys::stat::fstatat(&self.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW);
        let by_path = fs::symlink_metadata(self.dir.join(name));
        // dev_t is an i32 on macOS.
        #[allow(clippy::unnecessary_cast)]
        let same =
            |m: nix::sys::stat::FileStat| m.st_dev as u64 == held.dev() && m.st_ino == held.ino();
        at.is_ok_and(same) && by_path.is_ok_and(|m| m.dev() == held.dev() && m.ino() == held.ino())
    }

    fn bare(&self, name: &str, started: u64, now: SystemTime) -> RunFolder {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        RunFolder {
            kind: "run-folder",
            path: self.dir.join(name).display().to_string(),
            started: rfc3339(started),
            age_secs: now.saturating_sub(started),
            bytes: 0,
            judges: 0,
            ledger: None,
            records: None,
            seal: None,
            live: false,
            removed: false,
        }
    }

    fn describe(&self, name: &str, started: u64, now: SystemTime, live: bool) -> RunFolder {
        let path = self.dir.join(name);
        let mut info = self.bare(name, started, now);
        info.live = live;
        info.bytes = bytes_under(&path);
        info.judges = fs::read_dir(&path)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| {
                fs::symlink_metadata(e.path().join("prompt.txt")).is_ok_and(|m| m.is_file())
            })
            .count() as u64;
        if let Some((ledger, records, seal)) = LEDGERS.iter().find_map(|l| read_ledger(&path, l)) {
            info.ledger = Some(ledger.into());
            info.records = Some(records);
            info.seal = Some(seal);
        }
        info
    }
}

/// One step down from `parent`: `name`, made 0700 when missing and `create`, opened without
/// following a link; it must be the user's and closed to others' writes (`close`: to all
/// others, which it is made when it is not).
fn step(
    parent: &OwnedFd,
    name: &str,
    create: bool,
    close: bool,
) -> Result<Option<OwnedFd>, String> {
    let mut made = false;
    if create {
        match nix::sys::stat::mkdirat(parent, name, Mode::S_IRWXU) {
            Ok(()) => made = true,
            Err(Errno::EEXIST) => {}
            Err(e) => return Err(format!("cannot create: {}", e.desc())),
        }
    }
    let flags = OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
    let fd = match nix::fcntl::openat(parent, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) if !create => return Ok(None),
        // With O_DIRECTORY, Linux says a link is not a folder: which one it is is looked up.
        Err(Errno::ELOOP | Errno::ENOTDIR) => {
            let link =
                nix::sys::stat::fstatat(parent, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                    .is_ok_and(|m| m.st_mode & nix::libc::S_IFMT == nix::libc::S_IFLNK);
            return Err(match link {
                true => "a symbolic link, not followed",
                false => "not a folder",
            }
            .into());
        }
        Err(e) => return Err(e.desc().into()),
    };
    let meta = nix::sys::stat::fstat(fd.as_fd()).map_err(|e| e.desc().to_string())?;
    if meta.st_uid != nix::unistd::geteuid().as_raw() {
        return Err(format!(
            "the folder belongs to another user (uid {})",
            meta.st_uid
        ));
    }
    if meta.st_mode & 0o022 != 0 && !made {
        return Err("the folder is open to other users' writes (it must be 0700)".into());
    }
    if made || (close && meta.st_mode & 0o077 != 0) {
        nix::sys::stat::fchmod(&fd, Mode::S_IRWXU).map_err(|e| e.desc().to_string())?;
    }
    Ok(Some(fd))
}

/// The bytes of the files under `dir`, following no link.
fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// A ledger of `dir` (a regular file, not a link): its name, its lines and its seal.
fn read_ledger(dir: &Path, name: &str) -> Option<(&'static str, u64, String)> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let name = LEDGERS.into_iter().find(|l| *l == name)?;
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(dir.join(name))
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut digest = <sha2::Sha256 as sha2::Digest>::new();
    let (mut lines, mut buf) = (0u64, vec![0u8; 1 << 16]);
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        sha2::Digest::update(&mut digest, &buf[..n]);
    }
    let seal = crate::records::candidate::seal_of(sha2::Digest::finalize(digest));
    Some((name, lines, seal))
}

/// `YYYYMMDDTHHMMSSZ` of a time in seconds since the epoch: a name's start.
fn stamp(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// When the run of the folder named `name` started, if it is a name we give (in the cache, or
/// `panel.`-prefixed in the temporary folder).
pub fn started_at(name: &str) -> Option<u64> {
    started(name.strip_prefix("panel.").unwrap_or(name))
}

/// When the run named `name` (its prefix taken off) started, if it is a name we give:
/// `YYYYMMDDTHHMMSSZ-` and twelve lowercase hex digits.
fn started(name: &str) -> Option<u64> {
    let b = name.as_bytes();
    let shape = b.len() == 29
        && b[8] == b'T'
        && b[15] == b'Z'
        && b[16] == b'-'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
        && b[17..]
            .iter()
            .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    if !shape {
        return None;
    }
    let n = |r: std::ops::Range<usize>| name[r].parse::<u64>().ok();
    let (y, mo, d) = (n(0..4)?, n(4..6)?, n(6..8)?);
    let (h, mi, s) = (n(9..11)?, n(11..13)?, n(13..15)?);
    let valid =
        y >= 1970 && (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && s < 60;
    if !valid {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
    // A name whose date does not exist (30 February) is not one we gave.
    (civil(secs) == (y, mo, d, h, mi, s)).then_some(secs)
}

/// Days since 1970-01-01 of a date from 1970 on.
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    crate::engine::clock::days_from_civil(y as i64, m as i64, d as i64).max(0) as u64
}

/// The UTC date and time of seconds since the epoch.
fn civil(secs: u64) -> (u64, u64, u64, u64, u64, u64) {
    let (days, rem) = (secs / 86400, secs % 86400);
    let (y, m, d) = crate::engine::clock::civil_from_days(days as i64);
    let (y, m, d) = (y as u64, m as u64, d as u64);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// An age as a table shows it: `45s`, `12m`, `5h`, `3d`.
pub fn age_shown(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// A size as a table shows it: `512B`, `1.2K`, `34M`.
pub fn size_shown(bytes: u64) -> String {
    let mut value = bytes as f64;
    for unit in ["B", "K", "M", "G", "T"] {
        if value < 1024.0 || unit == "T" {
            return if unit == "B" {
                format!("{bytes}B")
            } else if value < 10.0 {
                format!("{value:.1}{unit}")
            } else {
                format!("{value:.0}{unit}")
            };
        }
        value /= 1024.0;
    }
    unreachable!("the last unit returns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::history::tests::env;

    #[test]
    fn the_place_follows_xdg_cache_home_then_home_then_the_temporary_folder() {
        let at = |pairs: &[(&str, &str)]| RunsHome::from(&env(pairs));
        assert_eq!(
            at(&[("HOME", "/h")]).dir(),
            Path::new("/h/.cache/panel/runs")
        );
        assert_eq!(
            at(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/c")]).dir(),
            Path::new("/c/panel/runs")
        );
        // An empty or relative XDG_CACHE_HOME is ignored, as the XDG specification says.
        for xdg in ["", "rel/cache"] {
            assert_eq!(
                at(&[("HOME", "/h"), ("XDG_CACHE_HOME", xdg)]).dir(),
                Path::new("/h/.cache/panel/runs")
            );
        }
        assert_eq!(
            at(&[("XDG_CACHE_HOME", "/c")]),
            RunsHome::Cache("/c".into())
        );
        for none in [
            &[][..],
            &[("HOME", "rel")][..],
            &[("XDG_CACHE_HOME", "")][..],
        ] {
            assert!(matches!(at(none), RunsHome::Temp(_)), "{none:?}");
        }
    }

    #[test]
    fn names_sort_by_time_and_only_ours_are_read_as_ours() {
        let secs = 1_796_232_695; // 2026-12-02T17:31:35Z
        assert_eq!(stamp(secs), "20261202T173135Z");
        assert_eq!(rfc3339(secs), "2026-12-02T17:31:35Z");
        assert_eq!(started("20261202T173135Z-0123456789ab"), Some(secs));
        assert_eq!(started("19700101T000000Z-000000000000"), Some(0));
        assert_eq!(
            started("20240229T235959Z-ffffffffffff")
                .map(rfc3339)
                .as_deref(),
            Some("2024-02-29T23:59:59Z")
        );
        assert!(stamp(secs) < stamp(secs + 1) && stamp(secs + 86399) < stamp(secs + 86400));
        for foreign in [
            "",
            "20261202T173135Z-0123456789a",
            "20261202T173135Z-0123456789abc",
            "20261202T173135Z-0123456789AB",
            "20261202T173135Z_0123456789ab",
            "20261202t173135Z-0123456789ab",
            "20260230T000000Z-0123456789ab",
            "20261302T000000Z-0123456789ab",
            "20261202T240000Z-0123456789ab",
            "2026120xT173135Z-0123456789ab",
            "00000101T000000Z-0123456789ab",
            "19691231T235959Z-0123456789ab",
            "notes",
            "..",
        ] {
            assert_eq!(started(foreign), None, "{foreign}");
        }
        for secs in [0, 59, 86_399, 951_782_400, 4_102_444_800, secs] {
            let (y, mo, d, ..) = civil(secs);
            assert_eq!(days_from_civil(y, mo, d), secs / 86400, "{secs}");
        }
    }

    #[test]
    fn keep_days_come_from_the_flag_then_the_environment() {
        assert_eq!(keep_days(None, None).unwrap(), DEFAULT_KEEP_DAYS);
        assert_eq!(
            keep_days(None, Some(String::new())).unwrap(),
            DEFAULT_KEEP_DAYS
        );
        assert_eq!(keep_days(None, Some("3".into())).unwrap(), 3);
        assert_eq!(keep_days(Some(0), Some("x".into())).unwrap(), 0);
        for bad in ["x", "-1", "1.5", " 3", "+3", "99999999999"] {
            let err = keep_days(None, Some(bad.into())).unwrap_err().to_string();
            assert!(
                err.starts_with("PANEL_KEEP_DAYS=") && err.contains("whole number"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_link_planted_as_panel_or_runs_is_refused_and_nothing_is_made_through_it() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        for planted in ["panel", "panel/runs"] {
            let cache = tmp.path().join(format!("cache-{}", planted.len()));
            fs::create_dir_all(cache.join(planted).parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(&elsewhere, cache.join(planted)).unwrap();
            for create in [true, false] {
                let err = Runs::open(&RunsHome::Cache(cache.clone()), create)
                    .err()
                    .unwrap_or_else(|| panic!("{planted}: opened through a link"))
                    .to_string();
                assert!(err.contains("a symbolic link, not followed"), "{err}");
                assert!(err.contains(planted), "{err}");
            }
            assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0, "{planted}");
        }
    }

    #[test]
    fn a_new_run_folder_is_private_locked_and_named_by_its_start() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let place = RunsHome::Cache(tmp.path().join("cache"));
        assert!(Runs::open(&place, false).unwrap().is_none());
        let runs = Runs::open(&place, true).unwrap().unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.path().join("cache/panel")), 0o700);
        assert_eq!(mode(&tmp.path().join("cache/panel/runs")), 0o700);
        let at = UNIX_EPOCH + Duration::from_secs(1_796_232_695);
        let (path, lock) = runs.fresh(at).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("20261202T173135Z-"), "{name}");
        assert_eq!(started(name), Some(1_796_232_695));
        assert_eq!(mode(&path), 0o700);
        let listed = runs.list(at);
        assert_eq!(listed.len(), 1);
        assert!(listed[0].live);
        drop(lock);
        assert!(!runs.list(at)[0].live);
    }

    #[test]
    fn a_prune_removes_old_folders_of_ours_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = Runs::open(&RunsHome::Cache(tmp.path().into()), true)
            .unwrap()
            .unwrap();
        let dir = tmp.path().join("panel/runs");
        let now = UNIX_EPOCH + Duration::from_secs(1_796_232_695);
        let old = |n: u8| format!("20261101T000000Z-00000000000{n}");
        for n in 0..4 {
            fs::create_dir(dir.join(old(n))).unwrap();
        }
        fs::write(dir.join(old(0)).join("verdicts.jsonl"), "{}\n{}\n").unwrap();
        // Held by a live run, a name we never give, a link, a file, a new one.
        let held = Flock::lock(
            File::open(dir.join(old(1))).unwrap(),
            FlockArg::LockExclusive,
        )
        .unwrap();
        fs::create_dir(dir.join("20261101T000000Z-keep-me")).unwrap();
        let target = tmp.path().join("target");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("precious"), "x").unwrap();
        std::os::unix::fs::symlink(&target, dir.join(old(5))).unwrap();
        fs::write(dir.join(old(6)), "a file").unwrap();
        let (young, _lock) = runs.fresh(now - Duration::from_secs(3600)).unwrap();
        // Another user's, when we can make one.
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(dir.join(old(3)), Some(65534), Some(65534)).unwrap();
        }
        let pruned = runs.prune(Duration::from_secs(14 * 86400), now, true);
        let removed: Vec<&str> = pruned.removed.iter().map(|r| r.path.as_str()).collect();
        let shown = |n| dir.join(old(n)).display().to_string();
        let mut want = vec![shown(0), shown(2)];
        if !nix::unistd::geteuid().is_root() {
            want.push(shown(3));
        }
        assert_eq!(removed, want);
        assert_eq!(pruned.removed[0].records, Some(2));
        assert_eq!(pruned.removed[0].ledger.as_deref(), Some("verdicts.jsonl"));
        assert_eq!(
            (pruned.in_use, pruned.newer, pruned.failed.len()),
            (1, 1, 0)
        );
        for kept in [old(1), old(5), old(6), "20261101T000000Z-keep-me".into()] {
            assert!(fs::symlink_metadata(dir.join(&kept)).is_ok(), "{kept}");
        }
        assert!(target.join("precious").exists() && young.exists());
        drop(held);
        // 0: every one no live run holds.
        let pruned = runs.prune(Duration::ZERO, now, false);
        assert_eq!(pruned.in_use, 1, "the young one is still held");
        assert!(!dir.join(old(1)).exists() && young.exists());
    }

    #[test]
    fn sizes_and_ages_are_short() {
        assert_eq!(size_shown(512), "512B");
        assert_eq!(size_shown(1536), "1.5K");
        assert_eq!(size_shown(35 << 20), "35M");
        assert_eq!(age_shown(45), "45s");
        assert_eq!(age_shown(3 * 86400 + 5), "3d");
    }
}
