//! A judge's cgroup: where the kernel counts and bounds its memory (tmpfs pages included), its
//! tasks and its CPU as one, whatever it starts (docs/design.md §8). Panel makes one where it
//! may: as root, or in a subtree systemd delegated to the user (`user@UID.service`), under the
//! nearest group above its own that holds no process (cgroup v2's rule) and is writable; in a
//! cgroup v1 hierarchy, under its own group. The tool makes the run's group
//! (`panel-PID-RANDOM`) at the start and removes it at the end; each judge's supervisor makes
//! the judge's own inside it, moves the judge's first process there before it starts anything,
//! reads what the kernel counted when it ends, and removes it. A run killed before it could is
//! swept by the next.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The controllers a judge's share uses, as cgroup v2 and v1 name them.
const CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];
/// The run's groups are named `PREFIX<pid>-<random>`.
const PREFIX: &str = "panel-";

/// What this run's judges are bounded by: the run's group in each hierarchy, and the limits
/// each judge's own group gets. Paths and numbers only: it travels on a command line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgeLimits {
    pub groups: Vec<PathBuf>,
    /// Bytes of memory (swap none), where a group has the memory controller.
    pub memory: Option<u64>,
    /// Tasks (processes and threads), where a group has the pids controller.
    pub tasks: Option<u64>,
}

/// The run's groups, made at the start and removed when dropped.
#[derive(Debug)]
pub struct Run {
    pub groups: Vec<PathBuf>,
    /// Which of memory, pids and cpu its groups have.
    pub has: Vec<&'static str>,
}

/// The CPU weight of a run's judges together, against the caller's other work (cgroup v2's
/// default is 100, v1's shares 1024): a busy panel leaves the caller's shell half the CPU.
pub const RUN_WEIGHT: u64 = 50;

impl Run {
    /// The run's groups, where this caller may make them; else why not.
    pub fn make() -> Result<Run, String> {
        let places = places()?;
        let mut groups = Vec::new();
        let mut has = Vec::new();
        let name = format!("{PREFIX}{}-{:08x}", std::process::id(), random());
        for (place, controllers) in places {
            sweep(&place);
            enable_below(&place, &controllers);
            let dir = place.join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let v2 = dir.join("cgroup.subtree_control").exists();
            let mut got: Vec<&'static str> = controllers;
            if v2 {
                let offered = read(&dir.join("cgroup.controllers")).unwrap_or_default();
                got.retain(|c| offered.split_whitespace().any(|o| o == *c));
                let want: Vec<String> = got.iter().map(|c| format!("+{c}")).collect();
                if !got.is_empty()
                    && write(&dir, "cgroup.subtree_control", &want.join(" ")).is_err()
                {
                    got.clear();
                }
            }
            if got.is_empty() {
                let _ = std::fs::remove_dir(&dir);
                continue;
            }
            if got.contains(&"cpu") {
                let _ = write(&dir, "cpu.weight", &RUN_WEIGHT.to_string())
                    .or_else(|_| write(&dir, "cpu.shares", &(RUN_WEIGHT * 1024 / 100).to_string()));
            }
            has.extend(got);
            groups.push(dir);
        }
        if groups.is_empty() {
            return Err("no cgroup this user may make here".into());
        }
        Ok(Run { groups, has })
    }

    /// What each judge's group gets: `memory` and `tasks` where the run's groups can bound them.
    pub fn judge(&self, memory: Option<u64>, tasks: Option<u64>) -> JudgeLimits {
        JudgeLimits {
            groups: self.groups.clone(),
            memory: memory.filter(|_| self.has.contains(&"memory")),
            tasks: tasks.filter(|_| self.has.contains(&"pids")),
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        for g in &self.groups {
            remove_tree(g);
        }
    }
}

/// A judge's own group, in each of the run's hierarchies.
#[derive(Debug)]
pub struct Leaf {
    dirs: Vec<PathBuf>,
}

/// What the kernel counted of a judge's group when it ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counted {
    /// It was killed for memory past its limit.
    pub memory_reached: bool,
    /// A fork or thread was refused at its limit.
    pub tasks_reached: bool,
    pub memory_peak: Option<u64>,
    pub tasks_peak: Option<u64>,
}

impl Leaf {
    /// Makes the judge's group `name` in each of `judge`'s groups, with its limits.
    pub fn make(judge: &JudgeLimits, name: &str) -> io::Result<Leaf> {
        let mut dirs = Vec::new();
        for g in &judge.groups {
            let dir = g.join(name);
            std::fs::create_dir(&dir)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            dirs.push(dir);
        }
        let leaf = Leaf { dirs };
        for dir in &leaf.dirs {
            if let Some(bytes) = judge.memory {
                let b = bytes.to_string();
                let _ = write(dir, "memory.max", &b)
                    .or_else(|_| write(dir, "memory.limit_in_bytes", &b));
                // No swap past it: where swap can be set at all (memsw needs the limit first).
                let _ = write(dir, "memory.swap.max", "0")
                    .or_else(|_| write(dir, "memory.memsw.limit_in_bytes", &b));
            }
            if let Some(n) = judge.tasks {
                let _ = write(dir, "pids.max", &n.to_string());
            }
        }
        leaf.check(judge)?;
        Ok(leaf)
    }

    /// Every limit asked for was taken by some group.
    fn check(&self, judge: &JudgeLimits) -> io::Result<()> {
        // Within a page or so: the kernel keeps a memory limit in whole pages.
        let has = |files: &[&str], want: u64| {
            self.dirs.iter().any(|d| {
                files.iter().any(|f| {
                    read(&d.join(f))
                        .and_then(|t| t.trim().parse::<u64>().ok())
                        .is_some_and(|n| n.abs_diff(want) < 1 << 16)
                })
            })
        };
        let missing = match (judge.memory, judge.tasks) {
            (Some(m), _) if !has(&["memory.max", "memory.limit_in_bytes"], m) => Some("memory"),
            (_, Some(t)) if !has(&["pids.max"], t) => Some("pids"),
            _ => None,
        };
        match missing {
            Some(what) => Err(io::Error::other(format!(
                "the judge's cgroup did not take its {what} limit"
            ))),
            None => Ok(()),
        }
    }

    /// Moves process `pid` (0: the caller) into the judge's group.
    pub fn enter(&self, pid: u32) -> io::Result<()> {
        for dir in &self.dirs {
            write(dir, "cgroup.procs", &pid.to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        }
        Ok(())
    }

    /// The folders of the judge's group, for a stage that enters it itself.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// What the kernel counted.
    pub fn counted(&self) -> Counted {
        let mut c = Counted::default();
        for dir in &self.dirs {
            // v2's memory.events and v1's memory.oom_control both count `oom_kill`.
            for f in ["memory.events", "memory.oom_control"] {
                c.memory_reached |= field(&dir.join(f), "oom_kill").is_some_and(|n| n > 0);
            }
            c.tasks_reached |= field(&dir.join("pids.events"), "max").is_some_and(|n| n > 0);
            let number = |f: &str| read(&dir.join(f)).and_then(|t| t.trim().parse().ok());
            c.memory_peak = c
                .memory_peak
                .or_else(|| number("memory.peak"))
                .or_else(|| number("memory.max_usage_in_bytes"));
            c.tasks_peak = c.tasks_peak.or_else(|| number("pids.peak"));
        }
        c
    }

    /// Removes the judge's group (it must be empty: its processes ended).
    pub fn remove(&self) {
        for dir in &self.dirs {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Enters the groups at `dirs` (a stage moving itself).
pub fn enter_self(dirs: &[PathBuf]) -> io::Result<()> {
    Leaf {
        dirs: dirs.to_vec(),
    }
    .enter(0)
}

/// Where the run's groups can go, each with the controllers of ours it offers: for cgroup v2,
/// the nearest group at or above ours that holds no process (or is the root) and is ours to
/// write; for each cgroup v1 hierarchy of memory, pids or cpu, our own group there.
fn places() -> Result<Vec<(PathBuf, Vec<&'static str>)>, String> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    let mounts = cgroup_mounts(&mounts);
    let mut out: Vec<(PathBuf, Vec<&'static str>)> = Vec::new();
    let mut v1: Vec<&'static str> = Vec::new();
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(list), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let named: Vec<&'static str> = CONTROLLERS
            .into_iter()
            .filter(|c| list.split(',').any(|l| l == *c))
            .collect();
        if list.is_empty() {
            // cgroup v2: the controllers no v1 hierarchy holds.
            let Some(m) = mounts.iter().find(|m| m.v2) else {
                continue;
            };
            let own = m.dir_of(path);
            if let Some(place) = v2_place(&own, &m.point) {
                out.push((place, Vec::new()));
            }
        } else if !named.is_empty()
            && let Some(m) = mounts
                .iter()
                .find(|m| !m.v2 && named.iter().all(|c| m.has(c)))
        {
            v1.extend(&named);
            out.push((m.dir_of(path), named));
        }
    }
    for (_, controllers) in out.iter_mut().filter(|(_, c)| c.is_empty()) {
        *controllers = CONTROLLERS
            .into_iter()
            .filter(|c| !v1.contains(c))
            .collect();
    }
    out.retain(|(p, c)| !c.is_empty() && writable(p));
    Ok(out)
}

/// A cgroup file system mounted here.
struct Mount {
    point: PathBuf,
    root: String,
    v2: bool,
    options: String,
}

impl Mount {
    fn has(&self, controller: &str) -> bool {
        self.options.split(',').any(|o| o == controller)
    }

    /// The folder of the group at `path` (as /proc/self/cgroup names it) under this mount.
    fn dir_of(&self, path: &str) -> PathBuf {
        let rel = path.strip_prefix(self.root.as_str()).unwrap_or(path);
        self.point.join(rel.trim_start_matches('/'))
    }
}

/// The cgroup mounts of a `/proc/self/mountinfo`.
fn cgroup_mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let fstype = *right.first()?;
            if fstype != "cgroup" && fstype != "cgroup2" {
                return None;
            }
            Some(Mount {
                point: PathBuf::from(unescape(left.get(4)?)),
                root: unescape(left.get(3)?),
                v2: fstype == "cgroup2",
                options: right.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|o| o.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(o)) => {
                out.push((o[0] - b'0') * 64 + (o[1] - b'0') * 8 + (o[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The nearest group at or above `own` under `root` that may have groups with controllers
/// below it: the root, or one that holds no process; and that is ours to write.
fn v2_place(own: &Path, root: &Path) -> Option<PathBuf> {
    own.ancestors()
        .take_while(|d| d.starts_with(root))
        .find(|d| {
            let empty =
                d == &root || read(&d.join("cgroup.procs")).is_some_and(|p| p.trim().is_empty());
            empty && writable(d)
        })
        .map(Path::to_path_buf)
}

/// Lets a v2 group's children have those of `controllers` it has and does not yet pass on
/// (allowed: it holds no process). A v1 hierarchy has no such switch.
fn enable_below(place: &Path, controllers: &[&str]) {
    let (Some(offered), Some(on)) = (
        read(&place.join("cgroup.controllers")),
        read(&place.join("cgroup.subtree_control")),
    ) else {
        return;
    };
    let words = |t: &str, c: &str| t.split_whitespace().any(|w| w == c);
    for c in controllers {
        if words(&offered, c) && !words(&on, c) {
            let _ = write(place, "cgroup.subtree_control", &format!("+{c}"));
        }
    }
}

fn writable(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    rustix::fs::access(
        c.as_c_str(),
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )
    .is_ok()
}

/// Removes the groups that runs now gone left in `place`.
fn sweep(place: &Path) {
    let Ok(entries) = std::fs::read_dir(place) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
            remove_tree(&e.path());
        }
    }
}

/// Removes a run's group and its judges' (those whose processes ended).
fn remove_tree(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir(e.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

fn write(dir: &Path, file: &str, text: &str) -> io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join(file))?
        .write_all(text.as_bytes())
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The number after `name` on its line of a flat keyed file (`oom_kill 1`).
fn field(path: &Path, name: &str) -> Option<u64> {
    read(path)?.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok())?
    })
}

fn random() -> u32 {
    let mut b = [0u8; 4];
    let _ = getrandom::fill(&mut b);
    u32::from_ne_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_mounts_are_read_from_mountinfo() {
        let info = "30 23 0:26 / /sys/fs/cgroup/memory rw,nosuid shared:9 - cgroup cgroup rw,memory\n\
                    31 23 0:27 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw\n\
                    32 23 0:28 /sub /mnt/a\\040b rw - cgroup2 cgroup2 rw\n\
                    40 23 8:1 / / rw - ext4 /dev/sda1 rw\n";
        let m = cgroup_mounts(info);
        assert_eq!(m.len(), 3);
        assert!(!m[0].v2 && m[0].has("memory") && !m[0].has("pids"));
        assert!(m[1].v2);
        assert_eq!(m[2].point, Path::new("/mnt/a b"));
        assert_eq!(m[2].dir_of("/sub/x/y"), Path::new("/mnt/a b/x/y"));
        assert_eq!(
            m[0].dir_of("/process_api/1"),
            Path::new("/sys/fs/cgroup/memory/process_api/1")
        );
    }

    /// cgroup v2's rule: no group with processes of its own has groups with controllers below
    /// it, the root excepted; the place is the nearest ancestor without processes.
    #[test]
    fn a_v2_place_is_the_nearest_group_without_processes_of_its_own() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let own = root.join("user.slice/user-0.slice/session-2.scope");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("cgroup.procs"), "123\n456\n").unwrap();
        std::fs::write(root.join("user.slice/user-0.slice/cgroup.procs"), "").unwrap();
        std::fs::write(root.join("user.slice/cgroup.procs"), "").unwrap();
        assert_eq!(
            v2_place(&own, root),
            Some(root.join("user.slice/user-0.slice"))
        );
        std::fs::write(root.join("user.slice/user-0.slice/cgroup.procs"), "7\n").unwrap();
        assert_eq!(v2_place(&own, root), Some(root.join("user.slice")));
        assert_eq!(v2_place(root, root), Some(root.to_path_buf()));
    }

    #[test]
    fn a_judges_group_gets_its_limits_and_says_what_the_kernel_counted() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("panel-1-0/j9");
        // The files the kernel makes in a new group, made by hand here.
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["memory.max", "memory.swap.max", "pids.max", "cgroup.procs"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let judge = JudgeLimits {
            groups: vec![t.path().join("panel-1-0")],
            memory: Some(1 << 30),
            tasks: Some(64),
        };
        let leaf = Leaf {
            dirs: vec![dir.clone()],
        };
        // The kernel keeps a memory limit in whole pages.
        for (f, v) in [("memory.max", "1073737728"), ("pids.max", "64")] {
            write(&dir, f, v).unwrap();
        }
        leaf.check(&judge).unwrap();
        write(&dir, "pids.max", "max").unwrap();
        let err = leaf.check(&judge).unwrap_err().to_string();
        assert!(err.contains("pids"), "{err}");
        std::fs::write(
            dir.join("memory.events"),
            "low 0\nmax 3\noom 1\noom_kill 1\n",
        )
        .unwrap();
        std::fs::write(dir.join("pids.events"), "max 0\n").unwrap();
        std::fs::write(dir.join("memory.peak"), "2048\n").unwrap();
        let c = leaf.counted();
        assert!(c.memory_reached && !c.tasks_reached);
        assert_eq!(c.memory_peak, Some(2048));
        // v1's names.
        std::fs::write(dir.join("memory.events"), "").unwrap();
        let oom = "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n";
        std::fs::write(dir.join("memory.oom_control"), oom).unwrap();
        std::fs::write(dir.join("pids.events"), "max 12\n").unwrap();
        let c = leaf.counted();
        assert!(!c.memory_reached && c.tasks_reached);
    }

    #[test]
    fn runs_gone_are_swept_and_live_ones_kept() {
        let t = tempfile::tempdir().unwrap();
        let gone = t.path().join(format!("{PREFIX}{}-0", u32::MAX - 1));
        let live = t.path().join(format!("{PREFIX}{}-0", std::process::id()));
        let other = t.path().join("session-2.scope");
        for d in [&gone, &live, &other] {
            std::fs::create_dir_all(d.join("j1")).unwrap();
        }
        sweep(t.path());
        assert!(!gone.exists());
        assert!(live.exists() && other.exists());
    }
}
