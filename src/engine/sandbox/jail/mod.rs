//! A world of the judge's own (docs/design.md §8): new user, mount, PID, IPC, UTS, network and
//! cgroup namespaces, made by the supervisor with one `clone`. Inside:
//!
//! - a read-only root of only what the harness needs (the system's programs and libraries, an
//!   allow-list of `/etc`, its CLI's installation, a reviewer's checkout), each at its own path;
//! - one writable place, its private folder (and `--sandbox-write` folders), a private `/tmp`
//!   and `/dev/shm`, all three on one tmpfs of its own of a bounded size ([`disk`]); a fresh
//!   `/proc` of its own PID namespace and a minimal `/dev`;
//! - an unprivileged identity: the caller's own ids, or for a root caller an unprivileged one,
//!   so root-owned files are out of reach even where they are shown;
//! - a network of its own loopback alone, where a listener of the jail's first process at each
//!   door (the proxy's port, a loopback endpoint's address) hands each connection to the
//!   supervisor's egress proxy outside ([`super::egress`]).
//!
//! The first process (PID 1 of the namespace) is ours: it builds the world, starts the harness
//! (which takes its share's limits, [`super::share`], puts on Landlock and seccomp,
//! [`super::walls`], and becomes the harness), passes on connections, reaps orphans, watches its
//! share, and when the harness exits (or the supervisor's TERM comes) ends everything left in
//! the namespace, carries out what the tool reads back, says how the harness ended and which
//! limits it met, and exits. It runs as a fork of the single-threaded
//! supervisor, so it may do as it likes until it starts the harness.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::egress::{Door, Endpoint};

// The runtime is Linux's: namespaces, mounts, the first process.
#[cfg(target_os = "linux")]
mod disk;
#[cfg(target_os = "linux")]
mod mount;
#[cfg(target_os = "linux")]
mod probe;
#[cfg(target_os = "linux")]
mod root;
#[cfg(target_os = "linux")]
mod run;

#[cfg(target_os = "linux")]
pub use probe::available;
#[cfg(target_os = "linux")]
pub use run::{Under, receive, start};

/// How the first process's report gives the most its disk held (`disk-peak:BYTES`), after the
/// limits the judge met.
pub const DISK_PEAK: &str = "disk-peak:";

/// What one judge's jail holds. Paths, addresses and hosts only: it travels on a command line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Jail {
    /// Shown read-only (and runnable) at their own paths: folders and files.
    pub read: Vec<PathBuf>,
    /// Shown read-write.
    pub write: Vec<PathBuf>,
    /// Where it starts, and its HOME (for its passwd entry).
    pub cwd: PathBuf,
    pub home: PathBuf,
    /// The loopback addresses it connects to, each a door to the proxy outside; the first is
    /// the proxy's own (`HTTPS_PROXY`).
    pub doors: Vec<Opening>,
    /// Its private folder (one of `write`).
    #[serde(default)]
    pub private: PathBuf,
    /// Bytes and inodes of its disk, the tmpfs its private folder, `/tmp` and `/dev/shm` share;
    /// `None`: the private folder is the caller's, shown as it is.
    #[serde(default)]
    pub disk: Option<(u64, u64)>,
    /// What the tool reads back from its private folder (relative paths), carried out of its
    /// disk when it ends.
    #[serde(default)]
    pub keep: Vec<PathBuf>,
    /// The most of a kept file carried out; past it the copy keeps the file's size, sparse.
    #[serde(default)]
    pub keep_cap: Option<u64>,
}

/// A door: where in the jail it listens, and the loopback endpoint it leads to (`None`: it is
/// the proxy's own port, and the client says where it goes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Opening {
    pub at: SocketAddr,
    pub to: Option<Endpoint>,
}

impl Opening {
    pub fn door(&self) -> Door {
        match &self.to {
            None => Door::Proxy,
            Some(e) => Door::Direct(e.clone()),
        }
    }
}

/// The port of the proxy inside a jail, unless an endpoint has it.
pub const PROXY_PORT: u16 = 3128;

/// How the harness ended, as the first process reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Code(i32),
    Signal(i32),
}

/// What the first process reported: how the harness ended (`None`: it was stopped first, or
/// the report is missing), and the limits of its share it met.
pub fn read_ending(fd: &std::os::fd::OwnedFd) -> (Option<Ending>, Vec<String>) {
    let mut buf = [0u8; 128];
    let text = rustix::io::read(fd, &mut buf)
        .ok()
        .and_then(|n| std::str::from_utf8(&buf[..n]).ok())
        .unwrap_or("");
    let mut words = text.split(' ');
    let first = words.next().unwrap_or("");
    let value = first.get(1..).and_then(|v| v.parse().ok());
    let ending = match (first.as_bytes().first(), value) {
        (Some(b'c'), Some(v)) => Some(Ending::Code(v)),
        (Some(b's'), Some(v)) => Some(Ending::Signal(v)),
        _ => None,
    };
    (ending, words.map(String::from).collect())
}
