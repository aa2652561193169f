//! A judge takes only its share of what everyone shares (docs/design.md §8): memory, processes
//! and threads, disk, open files, inotify, CPU and the kernel keyring. Each has a default bound,
//! held by the strongest means this machine allows and named in every record's `sandbox`; a
//! judge that meets one is recorded with that cause.
//!
//! | share | held by | else |
//! | --- | --- | --- |
//! | memory | its cgroup's `memory.max` (tmpfs pages counted), no swap | `RLIMIT_DATA`, each process |
//! | processes and threads | its cgroup's `pids.max` | `RLIMIT_NPROC` in its own user namespace |
//! | disk | its jail's one tmpfs: private folder, `/tmp`, `/dev/shm`, inodes too | not held |
//! | open files | `RLIMIT_NOFILE`, each process | |
//! | inotify | its user namespace's instances and watches | not held |
//! | CPU | its run's cgroup weight against the caller's other work | `nice` |
//! | keyring | a session keyring of its own; `keyctl` refused by seccomp | |
//!
//! The tool decides how, once a run ([`plan`]); a judge's supervisor makes its cgroup and
//! reports what it met ([`ShareReport`]); the harness's last stage takes its limits
//! ([`Limits::take`]).

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cgroup;
use crate::engine::call::transcript::shown_size;

/// What each judge may take (`--judge-memory`, `--judge-processes`, `--judge-disk`); `None`:
/// no bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    pub memory: Option<u64>,
    pub processes: Option<u64>,
    pub disk: Option<u64>,
}

/// The defaults, chosen from the real CLIs' peak use answering a long candidate
/// (docs/design.md §8, "A judge's share"): several times the most any of them took.
pub const DEFAULT: Ask = Ask {
    memory: Some(2 << 30),
    processes: Some(512),
    disk: Some(1 << 30),
};

impl Default for Ask {
    fn default() -> Ask {
        DEFAULT
    }
}

/// Open files of each process of a judge (the tool raises its own limit for the pipes of many
/// judges; a judge does not inherit it).
pub const FILES: u64 = 1024;
/// Inotify instances and watches of a judge's user namespace: its share of the caller's own
/// (128 instances by default), which every judge of the caller's counts against.
pub const INOTIFY: (u64, u64) = (16, 16384);
/// A judge's niceness, where no cgroup weighs its CPU.
pub const NICE: i32 = 10;

/// Every default of a judge's share, as numbers (for the tests that measure the real CLIs).
#[derive(Clone, Copy, Debug)]
pub struct Defaults {
    pub memory: u64,
    pub processes: u64,
    pub disk: u64,
    pub files: u64,
    pub inotify: u64,
    pub watches: u64,
}

pub fn defaults() -> Defaults {
    Defaults {
        memory: DEFAULT.memory.unwrap_or(u64::MAX),
        processes: DEFAULT.processes.unwrap_or(u64::MAX),
        disk: DEFAULT.disk.unwrap_or(u64::MAX),
        files: FILES,
        inotify: INOTIFY.0,
        watches: INOTIFY.1,
    }
}

/// Inodes of a judge's disk: one per 16 KiB of it, at least 4,096.
pub fn inodes(disk: u64) -> u64 {
    (disk >> 14).max(4096)
}

/// What a judge's supervisor and the harness's last stage put on it. Paths and numbers: it
/// travels on a command line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Its cgroup, made in the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<cgroup::JudgeLimits>,
    /// `RLIMIT_DATA` of each process, where no cgroup bounds its memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<u64>,
    /// `RLIMIT_NPROC`, counted in its own user namespace, where no cgroup bounds its tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nproc: Option<u64>,
    /// `RLIMIT_NOFILE` of each process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    /// The bytes its private folder may hold where no jail's disk bounds it: each file's size
    /// (`RLIMIT_FSIZE`), and the folder's, looked at each second by its supervisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<u64>,
    /// Its user namespace's inotify instances and watches (in a jail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inotify: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// Its CPU is weighed by `nice` alone (no cgroup). Where the kernel weighs CPU time by
    /// session (autogroups), a niceness counts only against the processes of its own session:
    /// so it stays in its caller's session, below the caller's own work, and makes no session
    /// of its own (`setsid()` refused: a new one's autogroup starts at nice 0, level with the
    /// caller's). A new session is made only where seccomp cannot refuse it (`--sandbox off`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_session: bool,
    /// Where the supervisor writes what the judge met ([`ShareReport`]), out of its reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<PathBuf>,
    /// The folders of the judge's own cgroup, for the confine stage to enter itself.
    #[serde(default)]
    pub enter: Vec<PathBuf>,
}

/// How this run's judges are held to their share, decided once.
#[derive(Debug, Default)]
pub struct Plan {
    /// Each judge's, but its report's path.
    pub limits: Limits,
    /// The size of a jailed judge's disk.
    pub disk: Option<u64>,
    /// What held and what could not, for the records: `limits: memory 2 GiB, …; not held: …`.
    pub said: String,
    /// The run's cgroups, removed when the plan is dropped.
    pub run: Option<cgroup::Run>,
}

/// What a platform's own limits can hold of one judge's share, besides a cgroup and a jail.
#[derive(Clone, Copy, Debug)]
pub struct Platform {
    /// Whether `RLIMIT_DATA` bounds a process's memory (Linux's counts its mappings; macOS's
    /// none that a runtime allocates).
    pub data_bounds_memory: bool,
    /// Whether it has inotify, whose bounds a jail sets.
    pub inotify: bool,
    /// Whether a new session starts at niceness 0 (Linux's autogroups), so that without
    /// seccomp's refusal of `setsid` niceness does not weigh a judge's CPU.
    pub session_resets_nice: bool,
}

/// This platform's.
pub const HERE: Platform = Platform {
    data_bounds_memory: cfg!(target_os = "linux"),
    inotify: cfg!(target_os = "linux"),
    session_resets_nice: cfg!(target_os = "linux"),
};

/// How `ask` is held here: in a jail or not, under seccomp (`filtered`, wherever a wall of
/// ours stands) or not, in the run's cgroups `run` when they could be made.
pub fn plan(ask: Ask, jail: bool, filtered: bool, run: Option<cgroup::Run>) -> Plan {
    plan_on(HERE, ask, jail, filtered, run)
}

/// [`plan`] on `platform`.
pub fn plan_on(
    platform: Platform,
    ask: Ask,
    jail: bool,
    filtered: bool,
    run: Option<cgroup::Run>,
) -> Plan {
    let judge = run.as_ref().map(|r| r.judge(ask.memory, ask.processes));
    let has = |c: &str| run.as_ref().is_some_and(|r| r.has.contains(&c));
    let ns_nproc = jail && nproc_per_namespace();
    let mut held = Vec::new();
    let mut not = Vec::new();
    let in_cgroup = |what: Option<u64>, c| what.is_some() && has(c);
    let limits = Limits {
        data: ask
            .memory
            .filter(|_| !in_cgroup(ask.memory, "memory") && platform.data_bounds_memory),
        nproc: ask
            .processes
            .filter(|_| !in_cgroup(ask.processes, "pids") && ns_nproc),
        files: Some(FILES),
        disk: ask.disk.filter(|_| !jail),
        inotify: jail.then_some(INOTIFY),
        nice: Some(NICE),
        one_session: !(judge
            .as_ref()
            .is_some_and(|j| j.memory.is_some() || j.tasks.is_some())
            && has("cpu")),
        // A cgroup of its own where it bounds memory or tasks (its run's weighs its CPU then).
        cgroup: judge.filter(|j| j.memory.is_some() || j.tasks.is_some()),
        report: None,
        enter: Vec::new(),
    };
    if let Some(m) = ask.memory {
        match (limits.data, in_cgroup(ask.memory, "memory")) {
            (_, true) => held.push(format!("memory {}", shown_size(m))),
            (Some(_), false) => held.push(format!("memory {} a process", shown_size(m))),
            (None, false) => not.push("memory (no cgroup; RLIMIT_DATA bounds no mapping here)"),
        }
        if limits.data.is_some() && !filtered {
            not.push("memfd and shared memory (no seccomp)");
        }
    }
    if let Some(p) = ask.processes {
        match in_cgroup(ask.processes, "pids") || limits.nproc.is_some() {
            true => held.push(format!("processes {p}")),
            false => not.push("processes (no cgroup, no jail)"),
        }
    }
    let disk = ask.disk.filter(|_| jail);
    match (ask.disk, disk) {
        (Some(d), Some(_)) => held.push(format!("disk {}", shown_size(d))),
        (Some(d), None) => held.push(format!("disk {} watched", shown_size(d))),
        _ => {}
    }
    held.push(format!("files {FILES}"));
    match limits.inotify {
        Some((i, w)) => held.push(format!("inotify {i}/{w}")),
        None if platform.inotify => not.push("inotify (no jail)"),
        None => {}
    }
    match (limits.one_session, filtered) {
        (false, _) => held.push(format!("cpu weight {}", cgroup::RUN_WEIGHT)),
        (true, true) => held.push(format!("cpu nice {NICE}")),
        (true, false) if platform.session_resets_nice => {
            not.push("cpu nice (no seccomp: a new session starts at nice 0)")
        }
        (true, false) => held.push(format!("cpu nice {NICE}")),
    }
    let mut said = format!("limits: {}", held.join(", "));
    if !not.is_empty() {
        said.push_str(&format!("; not held: {}", not.join(", ")));
    }
    Plan {
        limits,
        disk,
        said,
        run,
    }
}

/// Whether `RLIMIT_NPROC` counts a user namespace's own tasks (Linux 5.14 and later; before,
/// it counted every process of the user on the machine).
fn nproc_per_namespace() -> bool {
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let mut n = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    (n.next().unwrap_or(0), n.next().unwrap_or(0)) >= (5, 14)
}

impl Limits {
    /// What the harness's last stage puts on itself just before it becomes the harness: its
    /// rlimits, its niceness.
    pub fn take(&self) -> Result<(), String> {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let set = |r: Resource, n: Option<u64>, name: &str| match n {
            Some(n) => setrlimit(
                r,
                Rlimit {
                    current: Some(n),
                    maximum: Some(n),
                },
            )
            .map_err(|e| format!("{name} {n}: {e}")),
            None => Ok(()),
        };
        // Never above what the caller has: an rlimit is lowered, not raised.
        let at_most = |r: Resource, n: Option<u64>| {
            let hard = rustix::process::getrlimit(r).maximum;
            n.map(|n| hard.map_or(n, |h| n.min(h)))
        };
        set(
            Resource::Data,
            at_most(Resource::Data, self.data),
            "RLIMIT_DATA",
        )?;
        set(
            Resource::Nproc,
            at_most(Resource::Nproc, self.nproc),
            "RLIMIT_NPROC",
        )?;
        set(
            Resource::Nofile,
            at_most(Resource::Nofile, self.files),
            "RLIMIT_NOFILE",
        )?;
        set(
            Resource::Fsize,
            at_most(Resource::Fsize, self.disk),
            "RLIMIT_FSIZE",
        )?;
        if let Some(nice) = self.nice {
            rustix::process::setpriority_process(None, nice)
                .map_err(|e| format!("nice {nice}: {e}"))?;
        }
        Ok(())
    }

    /// What the jail's first process sets in the judge's user namespace while it still may:
    /// its inotify bounds, and no user namespace inside it (where a tmpfs of its own would
    /// escape its disk).
    pub fn namespace(&self) -> io::Result<()> {
        let Some((instances, watches)) = self.inotify else {
            return Ok(());
        };
        for (name, n) in [
            ("max_inotify_instances", instances),
            ("max_inotify_watches", watches),
            ("max_user_namespaces", 0),
        ] {
            let path = format!("/proc/sys/user/{name}");
            std::fs::write(&path, n.to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
        }
        Ok(())
    }

    /// Whether its last stage makes a session of its own (away from the caller's terminal):
    /// everywhere but where its niceness weighs its CPU under seccomp, which keeps it in the
    /// caller's session and refuses it a new one (its walls keep it from any terminal there).
    pub fn own_session(&self, filtered: bool) -> bool {
        !(self.one_session && filtered)
    }

    /// What seccomp refuses it so that its share holds: a new session where niceness alone
    /// weighs its CPU, memory `RLIMIT_DATA` does not count where that bounds its memory, and
    /// System V IPC where no IPC namespace (`jailed`) is its own.
    #[cfg(target_os = "linux")]
    pub fn refuse(&self, jailed: bool) -> super::walls::Refuse {
        super::walls::Refuse {
            unix: false,
            sessions: self.one_session,
            shared_memory: self.data.is_some(),
            host_ipc: !jailed,
        }
    }

    /// Whether it has a limit an rlimit holds, which only a look at its processes can see met.
    pub fn sampled(&self) -> bool {
        self.data.is_some() || self.nproc.is_some() || self.disk.is_some()
    }

    /// Whether the judge of processes `pids` and private folder `dir` holds more than its
    /// disk: its bytes (in the folder, and in files it deleted but holds open or mapped), or one
    /// entry per 16 KiB of it (as a jail's disk counts inodes). A folder in it that it made
    /// unreadable counts as full: what cannot be measured is not let grow.
    pub fn disk_full(&self, dir: &Path, pids: &[u32]) -> bool {
        let Some(disk) = self.disk else { return false };
        let Some((bytes, entries)) = disk_used(dir, inodes(disk) + 1) else {
            return true;
        };
        bytes + deleted_but_held(pids) > disk || entries > inodes(disk)
    }

    /// The limits an rlimit holds that the processes `pids` (the judge's) are at now:
    /// `processes` at its count, `memory` for a process at its data limit that holds half of it
    /// resident (bun sizes its reservations to the limit, and holds little of them). Sampled: a
    /// limit met between two looks may go unseen.
    pub fn reached_now(&self, pids: impl Iterator<Item = u32>) -> Vec<&'static str> {
        if !self.sampled() {
            return Vec::new();
        }
        let (mut tasks, mut full) = (0u64, false);
        for pid in pids {
            let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
                continue;
            };
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            };
            tasks += field("Threads:").unwrap_or(1);
            let (data, rss) = (field("VmData:"), field("VmRSS:"));
            // Within the last 64 MiB: a failed allocation leaves the process below its limit.
            full |= self.data.is_some_and(|d| {
                data.unwrap_or(0) * 1024 + (64 << 20) >= d && rss.unwrap_or(0) * 1024 * 2 >= d
            });
        }
        let mut out = Vec::new();
        if self.nproc.is_some_and(|n| tasks + 1 >= n) {
            out.push("processes");
        }
        if full {
            out.push("memory");
        }
        out
    }
}

/// The bytes (blocks held) and entries under `dir`, no link followed; the walk stops past
/// `cap` entries. `None` when a folder in it cannot be read (one gone meanwhile is nothing).
pub fn disk_used(dir: &Path, cap: u64) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let (mut bytes, mut entries) = (0u64, 0u64);
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let list = match std::fs::read_dir(&d) {
            Ok(list) => list,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(_) => return None,
        };
        for e in list.flatten() {
            entries += 1;
            if entries > cap {
                return Some((bytes, entries));
            }
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            bytes += m.blocks() * 512;
            if m.is_dir() {
                todo.push(e.path());
            }
        }
    }
    Some((bytes, entries))
}

/// The bytes of files that processes `pids` deleted but hold open, or mapped, each counted
/// once: a disk no folder shows.
fn deleted_but_held(pids: &[u32]) -> u64 {
    use std::collections::HashSet;
    use std::os::unix::fs::MetadataExt;
    let mut seen = HashSet::new();
    let mut bytes = 0u64;
    for pid in pids {
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let deleted = std::fs::read_link(fd.path())
                .is_ok_and(|t| t.to_string_lossy().ends_with(" (deleted)"));
            // The descriptor's own file, through its link in /proc.
            if deleted
                && let Ok(m) = std::fs::metadata(fd.path())
                && m.is_file()
                && m.nlink() == 0
                && seen.insert((m.dev(), m.ino()))
            {
                bytes += m.blocks() * 512;
            }
        }
        // Mapped and closed: the mapping's size, its inode once.
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        for line in maps.lines().filter(|l| l.ends_with(" (deleted)")) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(range), Some(dev), Some(ino), Some(path)) =
                (f.first(), f.get(3), f.get(4), f.get(5))
            else {
                continue;
            };
            // Memory by another name (memfd, System V, /dev/zero) is not disk.
            if !path.starts_with('/') || path.starts_with("/dev/") || path.starts_with("/SYSV") {
                continue;
            }
            let Some((start, end)) = range.split_once('-') else {
                continue;
            };
            let size = u64::from_str_radix(end, 16)
                .unwrap_or(0)
                .saturating_sub(u64::from_str_radix(start, 16).unwrap_or(0));
            if seen.insert((dev_number(dev), ino.parse().unwrap_or(0))) {
                bytes += size;
            }
        }
    }
    bytes
}

/// A device as `/proc/PID/maps` writes it (`MAJOR:MINOR` in hex), as `st_dev` holds it.
fn dev_number(text: &str) -> u64 {
    let (major, minor) = text.split_once(':').unwrap_or(("0", "0"));
    let (major, minor) = (
        u64::from_str_radix(major, 16).unwrap_or(0),
        u64::from_str_radix(minor, 16).unwrap_or(0),
    );
    // glibc's gnu_dev_makedev, written out: Linux's encoding wherever this is built.
    ((major & 0xffff_f000) << 32)
        | ((major & 0xfff) << 8)
        | ((minor & 0xffff_ff00) << 12)
        | (minor & 0xff)
}

/// Every process `/proc` shows (a jail's own, to its first process).
pub fn all_processes() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// What a judge met of its share and what it used, as its supervisor saw it: written beside
/// its private folder, out of its reach, and read by the tool once it ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShareReport {
    /// `memory`, `processes`, `disk`: the limits it met.
    #[serde(default)]
    pub reached: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes_peak: Option<u64>,
    /// The most its disk held, as looked at each second and at its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_peak: Option<u64>,
}

/// The most of a report read back.
const REPORT_CAP: u64 = 4096;

impl ShareReport {
    /// Adds a limit met, once.
    pub fn met(&mut self, what: &str) {
        if !self.reached.iter().any(|r| r == what) {
            self.reached.push(what.to_string());
        }
    }

    /// Writes it at `path` (0600, through no link).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let text = serde_json::to_string(self).map_err(io::Error::other)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)?
            .write_all(text.as_bytes())
    }

    /// The report at `path`, removed; empty when there is none.
    pub fn take(path: &Path) -> ShareReport {
        use std::os::unix::fs::OpenOptionsExt;
        let mut text = String::new();
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path);
        if let Ok(f) = opened {
            let _ = f.take(REPORT_CAP).read_to_string(&mut text);
        }
        let _ = std::fs::remove_file(path);
        serde_json::from_str(&text).unwrap_or_default()
    }

    /// Why a judge ended, when it met a limit: `memory limit 2 GiB reached (--judge-memory
    /// raises it)`.
    pub fn cause(&self, ask: &Ask) -> Option<String> {
        let words: Vec<String> = self
            .reached
            .iter()
            .filter_map(|r| {
                Some(match r.as_str() {
                    "memory" => format!(
                        "memory limit {} reached (--judge-memory raises it)",
                        shown_size(ask.memory?)
                    ),
                    "processes" => format!(
                        "process limit {} reached (processes and threads; --judge-processes raises it)",
                        ask.processes?
                    ),
                    "disk" => format!(
                        "disk limit {} reached (--judge-disk raises it)",
                        shown_size(ask.disk?)
                    ),
                    _ => return None,
                })
            })
            .collect();
        (!words.is_empty()).then(|| words.join("; "))
    }
}

/// Parses `--judge-memory` and `--judge-disk`: a size (`2G`, `512M`) or `off`.
pub fn parse_size(text: &str) -> Result<Option<u64>, String> {
    match text.trim() {
        "off" => Ok(None),
        t => crate::engine::call::transcript::parse_size(t).map(Some),
    }
}

/// Parses `--judge-processes`: a count of at least 16 (a CLI's own threads) or `off`.
pub fn parse_count(text: &str) -> Result<Option<u64>, String> {
    match text.trim() {
        "off" => Ok(None),
        t => match t.parse::<u64>() {
            Ok(n) if n >= 16 => Ok(Some(n)),
            _ => Err(format!("{text:?}: expected a count of at least 16, or off")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(has: &[&'static str]) -> cgroup::Run {
        cgroup::Run {
            groups: vec![PathBuf::from("/nonexistent/panel-1-0")],
            has: has.to_vec(),
        }
    }

    /// Issue 36: "the record's `sandbox` names the limits that held"; where the kernel forbids
    /// a jail, or with `--sandbox off`, it says which held and which could not.
    #[test]
    fn the_plan_says_which_limits_held_and_how() {
        let mut p = plan(DEFAULT, true, true, Some(run(&["memory", "pids", "cpu"])));
        assert_eq!(
            p.said,
            "limits: memory 2 GiB, processes 512, disk 1 GiB, files 1024, inotify 16/16384, cpu weight 50"
        );
        assert_eq!((p.limits.data, p.limits.nproc), (None, None));
        assert_eq!(p.limits.cgroup.as_ref().unwrap().memory, Some(2 << 30));
        assert_eq!(p.disk, Some(1 << 30));
        // The cgroups are removed with the plan; these were never made.
        std::mem::forget(p.run.take());
        let p = plan(DEFAULT, true, true, None);
        assert_eq!(
            p.said,
            "limits: memory 2 GiB a process, processes 512, disk 1 GiB, files 1024, inotify 16/16384, cpu nice 10"
        );
        assert_eq!(p.limits.data, Some(2 << 30));
        assert_eq!(p.limits.nproc, Some(512));
        let p = plan(DEFAULT, false, true, None);
        assert_eq!(
            p.said,
            "limits: memory 2 GiB a process, disk 1 GiB watched, files 1024, cpu nice 10; not held: processes (no cgroup, no jail), inotify (no jail)"
        );
        assert_eq!(
            (p.limits.nproc, p.limits.inotify, p.disk),
            (None, None, None)
        );
        // Without a jail its disk is watched, each file bounded; niceness alone weighs its
        // CPU, so it keeps one session, and RLIMIT_DATA its memory, so no memfd.
        assert_eq!(p.limits.disk, Some(1 << 30));
        #[cfg(target_os = "linux")]
        assert_eq!(
            p.limits.refuse(false),
            crate::engine::sandbox::walls::Refuse {
                unix: false,
                sessions: true,
                shared_memory: true,
                host_ipc: true,
            }
        );
        // Issue 44: with no seccomp (`--sandbox off`, or no wall this kernel can have),
        // what a new session or a memfd escapes is not said to hold.
        let p = plan(DEFAULT, false, false, None);
        assert_eq!(
            p.said,
            "limits: memory 2 GiB a process, disk 1 GiB watched, files 1024; not held: memfd and shared memory (no seccomp), processes (no cgroup, no jail), inotify (no jail), cpu nice (no seccomp: a new session starts at nice 0)"
        );
        let off = Ask {
            memory: None,
            processes: None,
            disk: None,
        };
        let mut p = plan(off, true, true, Some(run(&["memory", "pids", "cpu"])));
        assert_eq!(p.said, "limits: files 1024, inotify 16/16384, cpu nice 10");
        assert_eq!(p.limits.cgroup, None);
        std::mem::forget(p.run.take());
        assert_eq!((p.limits.data, p.limits.nproc, p.disk), (None, None, None));
    }

    /// Issue 48: on macOS "limits by rlimits; the record says which held": no cgroup, no
    /// jail, an `RLIMIT_DATA` that bounds no mapping, no inotify; niceness holds, session or not.
    #[test]
    fn on_macos_the_plan_says_memory_and_processes_are_not_held() {
        let macos = Platform {
            data_bounds_memory: false,
            inotify: false,
            session_resets_nice: false,
        };
        for filtered in [true, false] {
            let p = plan_on(macos, DEFAULT, false, filtered, None);
            assert_eq!(
                p.said,
                "limits: disk 1 GiB watched, files 1024, cpu nice 10; not held: memory (no cgroup; RLIMIT_DATA bounds no mapping here), processes (no cgroup, no jail)"
            );
            assert_eq!(
                (p.limits.data, p.limits.nproc, p.limits.inotify),
                (None, None, None)
            );
            assert_eq!((p.limits.files, p.limits.nice), (Some(FILES), Some(NICE)));
            assert_eq!(p.limits.disk, Some(1 << 30));
        }
    }

    #[test]
    fn a_report_names_the_limit_met_and_what_raises_it() {
        let mut r = ShareReport::default();
        assert_eq!(r.cause(&DEFAULT), None);
        r.met("memory");
        r.met("memory");
        r.met("disk");
        assert_eq!(
            r.cause(&DEFAULT).unwrap(),
            "memory limit 2 GiB reached (--judge-memory raises it); disk limit 1 GiB reached (--judge-disk raises it)"
        );
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("j.share");
        r.memory_peak = Some(5);
        r.write(&path).unwrap();
        assert_eq!(ShareReport::take(&path), r);
        assert!(!path.exists());
        // Not followed through a link, never more than its cap.
        std::fs::write(t.path().join("big"), "x".repeat(1 << 20)).unwrap();
        std::os::unix::fs::symlink(t.path().join("big"), &path).unwrap();
        assert_eq!(ShareReport::take(&path), ShareReport::default());
    }

    #[test]
    fn sizes_and_counts_are_read_or_refused() {
        assert_eq!(parse_size("2G"), Ok(Some(2 << 30)));
        assert_eq!(parse_size("off"), Ok(None));
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_count("64"), Ok(Some(64)));
        assert_eq!(parse_count("off"), Ok(None));
        assert!(parse_count("3").unwrap_err().contains("at least 16"));
        assert!(parse_count("-1").is_err());
    }
}
