//! The jail's root: what it shows, opened before the ids change; the new root built from it
//! on a tmpfs and pivoted into, as one list of steps ([`operations`]: read-only binds, a
//! private `/tmp`, a fresh `/proc`, a minimal `/dev`, the files of `/etc` the jail writes
//! itself; `golden/jail-root*.txt` prints them for a sample jail) applied in order; the ids and
//! the loopback.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::Jail;
use super::disk::Disk;
use super::mount::check;
use super::mount::{bind_with, cpath, mkdirs, mount};

/// What the root shows: each path's kind, and what it is mounted from. A descriptor (`O_PATH`)
/// is opened at once for what the judge's ids could not pass through to once they change (a
/// root caller's judge in root's folders) and for what the staging tmpfs hides (`/tmp`); the
/// rest is opened when it is mounted, and the small files of `/etc` are copied, so a judge
/// under a small open-file limit holds few at a time.
pub(super) struct Sources {
    items: Vec<SourceEntry>,
}

/// One path the root is made from, and what it is.
struct SourceEntry {
    path: PathBuf,
    what: SourceKind,
}

enum SourceKind {
    /// A symbolic link, made again in the new root.
    Link(PathBuf),
    Dir(Handle, Access),
    File(Handle, Access),
    /// A small file of `/etc`, copied into the new root (one mount fewer).
    Copy(Vec<u8>),
    /// A device node of the host's `/dev`.
    Device(Handle),
    /// The judge's private folder, on its own disk: the caller's folder (opened at once) is
    /// carried in and out, and the disk's copy is shown.
    Private(OwnedFd),
}

/// What a mount is made from.
enum Handle {
    Opened(OwnedFd),
    Path(PathBuf),
}

#[derive(Clone, Copy, PartialEq)]
enum Access {
    Read,
    Write,
}

/// The devices a judge has, from the host's `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// A file of `/etc` up to this size is copied rather than mounted.
const COPIED: u64 = 1 << 20;

impl Sources {
    /// `early`: the paths opened at once, as [`early`] found them before the namespaces.
    pub(super) fn open(jail: &Jail, early: &[PathBuf]) -> io::Result<Sources> {
        let handle = |path: &Path| -> io::Result<Option<Handle>> {
            if !early.iter().any(|e| e == path) {
                return Ok(Some(Handle::Path(path.to_path_buf())));
            }
            match open_path(path) {
                Ok(fd) => Ok(Some(Handle::Opened(fd))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
            }
        };
        let mut items = Vec::new();
        let granted = jail
            .read
            .iter()
            .map(|p| (p, Access::Read))
            .chain(jail.write.iter().map(|p| (p, Access::Write)));
        for (path, access) in granted {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            // A link to what the jail shows is made again (a CLI's `bin/` link into its
            // package, `/bin` into `/usr`): node finds its modules from the real path.
            let shown = |real: &Path| jail.read.iter().any(|r| r != path && real.starts_with(r));
            let real = std::fs::canonicalize(path).ok().filter(|r| shown(r));
            let Ok(target) = std::fs::metadata(path) else {
                continue;
            };
            let what =
                if jail.disk.is_some() && *path == jail.private && target.is_dir() {
                    SourceKind::Private(open_path(path).map_err(|e| {
                        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                    })?)
                } else if meta.file_type().is_symlink()
                    && let Some(real) = real
                {
                    SourceKind::Link(real)
                } else if target.is_file()
                    && target.len() <= COPIED
                    && access == Access::Read
                    && path.starts_with("/etc")
                {
                    match std::fs::read(path) {
                        Ok(bytes) => SourceKind::Copy(bytes),
                        Err(_) => continue,
                    }
                } else {
                    let Some(h) = handle(path)? else { continue };
                    match target.is_dir() {
                        true => SourceKind::Dir(h, access),
                        false => SourceKind::File(h, access),
                    }
                };
            items.push(SourceEntry {
                path: path.clone(),
                what,
            });
        }
        for d in DEVICES {
            let path = Path::new("/dev").join(d);
            if let Some(h) = handle(&path)? {
                items.push(SourceEntry {
                    path,
                    what: SourceKind::Device(h),
                });
            }
        }
        Ok(Sources { items })
    }
}

/// The granted paths to open before the ids change: those `ids` could not pass through to,
/// and those under the staging folder. Asked outside the new user namespace, which shows
/// root's files as nobody's.
pub(super) fn early(jail: &Jail, ids: (u32, u32)) -> Vec<PathBuf> {
    jail.read
        .iter()
        .chain(&jail.write)
        .filter(|p| p.starts_with(STAGE) || !crate::engine::sandbox::grants::reachable(p, ids))
        .cloned()
        .collect()
}

fn open_path(path: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::other("NUL"))?;
    // SAFETY: opens a NUL-terminated path; the descriptor is owned at once.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Where the new root is put together: the mount namespace's own `/tmp`, under a tmpfs.
const STAGE: &str = "/tmp";

/// One step of making the jail's root, in the order [`operations`] lists them.
enum Op<'s> {
    /// Every mount made private: none of ours reaches the host's namespace.
    Private,
    /// A fresh filesystem (`tmpfs`, `proc`) mounted at a folder.
    Fresh {
        kind: &'static str,
        at: PathBuf,
        flags: libc::c_ulong,
        data: Option<&'static str>,
    },
    Dir(PathBuf),
    /// The judge's disk: its private folder, `/tmp` and `/dev/shm` on one tmpfs of `size`
    /// (bytes, inodes).
    Disk {
        size: (u64, u64),
        keep: &'s [PathBuf],
        cap: u64,
    },
    Link {
        at: PathBuf,
        to: &'static str,
    },
    /// A file of `/etc` the jail writes itself.
    Write {
        at: PathBuf,
        text: String,
    },
    /// A source of what it shows, at its own path in the new root.
    Show {
        source: &'s SourceEntry,
        at: PathBuf,
    },
    /// The disk's staging mount taken away (its private folder is shown by now).
    Unstage,
    /// The new root made read-only.
    ReadOnly,
    /// Into the new root, the old one detached; then to `cwd`, else `/`.
    Pivot {
        cwd: PathBuf,
    },
}

/// Every step that makes the jail's root, fixed mounts included, in order; [`build_root`]
/// applies them one by one. Reads and writes nothing.
fn operations<'s>(jail: &'s Jail, ids: (u32, u32), sources: &'s Sources) -> Vec<Op<'s>> {
    let fs = libc::MS_NOSUID | libc::MS_NODEV;
    let root = Path::new(STAGE);
    let fresh = |kind, rel: &str, flags, data| Op::Fresh {
        kind,
        at: root.join(rel).components().collect(),
        flags,
        data,
    };
    let mut ops = vec![
        Op::Private,
        fresh("tmpfs", "", fs, Some("mode=0755,size=4m")),
    ];
    // The private /tmp, /proc and /dev first: what is shown below them lands on them.
    ops.extend(["tmp", "proc", "dev", "etc"].map(|d| Op::Dir(root.join(d))));
    ops.push(fresh("proc", "proc", fs | libc::MS_NOEXEC, None));
    let dev = libc::MS_NOSUID | libc::MS_NOEXEC;
    ops.push(fresh("tmpfs", "dev", dev, Some("mode=0755,size=64k")));
    ops.push(Op::Dir(root.join("dev/shm")));
    // Where the judge writes: its disk when it has one; else a /tmp and a /dev/shm of their
    // own, its private folder shown from the caller's side.
    match jail.disk {
        Some(size) => ops.push(Op::Disk {
            size,
            keep: &jail.keep,
            cap: jail.keep_cap.unwrap_or(u64::MAX),
        }),
        None => {
            let tmp = "mode=1777,size=256m,nr_inodes=65536";
            ops.push(fresh("tmpfs", "tmp", fs, Some(tmp)));
            let shm = "mode=1777,size=64m,nr_inodes=4096";
            ops.push(fresh("tmpfs", "dev/shm", fs | libc::MS_NOEXEC, Some(shm)));
        }
    }
    for (link, to) in [
        ("dev/fd", "/proc/self/fd"),
        ("dev/stdin", "/proc/self/fd/0"),
        ("dev/stdout", "/proc/self/fd/1"),
        ("dev/stderr", "/proc/self/fd/2"),
    ] {
        ops.push(Op::Link {
            at: root.join(link),
            to,
        });
    }
    for (name, text) in etc_files(ids, &jail.home) {
        ops.push(Op::Write {
            at: root.join("etc").join(name),
            text,
        });
    }
    let mut items: Vec<&SourceEntry> = sources.items.iter().collect();
    // Parents before children: a folder shown inside another is mounted on top of it.
    items.sort_by(|a, b| a.path.cmp(&b.path));
    ops.extend(items.into_iter().map(|source| Op::Show {
        source,
        at: root.join(source.path.strip_prefix("/").unwrap_or(&source.path)),
    }));
    if jail.disk.is_some() {
        ops.push(Op::Unstage);
    }
    ops.push(Op::ReadOnly);
    ops.push(Op::Pivot {
        cwd: jail.cwd.clone(),
    });
    ops
}

/// Builds the new root, then makes it the root: [`operations`], applied in order; the judge's
/// disk, when it has one.
pub(super) fn build_root(
    jail: &Jail,
    ids: (u32, u32),
    sources: &Sources,
) -> io::Result<Option<Disk>> {
    let mut disk = None;
    for op in operations(jail, ids, sources) {
        if let Some(d) = apply(&op, sources)? {
            disk = Some(d);
        }
    }
    Ok(disk)
}

/// Makes one step of the root; the disk, when it is the step that makes it.
fn apply(op: &Op, sources: &Sources) -> io::Result<Option<Disk>> {
    let root = Path::new(STAGE);
    match op {
        Op::Private => mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)?,
        Op::Fresh {
            kind,
            at,
            flags,
            data,
        } => mount(Some(kind), at, Some(kind), *flags, *data)?,
        Op::Dir(at) => mkdirs(at)?,
        Op::Disk { size, keep, cap } => {
            let host = sources.items.iter().find_map(|s| match &s.what {
                SourceKind::Private(fd) => fd.try_clone().ok(),
                _ => None,
            });
            let host = host.ok_or_else(|| io::Error::other("no private folder to carry in"))?;
            return Disk::make(root, *size, host, (keep, *cap)).map(Some);
        }
        Op::Link { at, to } => std::os::unix::fs::symlink(to, at)?,
        Op::Write { at, text } => std::fs::write(at, text)?,
        Op::Show { source, at } => show(source, at, root)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", source.path.display())))?,
        Op::Unstage => Disk::unstage(root)?,
        Op::ReadOnly => {
            let flags = libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
            mount(None, root, None, flags, None)?
        }
        Op::Pivot { cwd } => {
            std::env::set_current_dir(root)?;
            let dot = c".";
            // SAFETY: pivot_root(".", ".") stacks the old root under the new one (pivot_root(2)).
            let pivot = unsafe { libc::syscall(libc::SYS_pivot_root, dot.as_ptr(), dot.as_ptr()) };
            check(pivot as i32)?;
            // SAFETY: detaches the old root, now mounted at ".".
            check(unsafe { libc::umount2(dot.as_ptr(), libc::MNT_DETACH) })?;
            std::env::set_current_dir(cwd).or_else(|_| std::env::set_current_dir("/"))?;
        }
    }
    Ok(None)
}

impl std::fmt::Display for Op<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Private => write!(f, "mount --make-rprivate /"),
            Op::Fresh {
                kind,
                at,
                flags,
                data,
            } => {
                write!(
                    f,
                    "mount {kind} at {} ({})",
                    at.display(),
                    flag_words(*flags)
                )?;
                data.map_or(Ok(()), |d| write!(f, " {d}"))
            }
            Op::Dir(at) => write!(f, "mkdir {}", at.display()),
            Op::Disk { size, keep, cap } => write!(
                f,
                "disk of {} bytes and {} inodes for the private folder, /tmp and /dev/shm; carried out at the end: {keep:?}, at most {cap} bytes each",
                size.0, size.1
            ),
            Op::Link { at, to } => write!(f, "link {} -> {to}", at.display()),
            Op::Write { at, text } => write!(f, "write {}: {text:?}", at.display()),
            Op::Show { source, at } => {
                let what = match &source.what {
                    SourceKind::Link(to) => format!("link -> {}", to.display()),
                    SourceKind::Dir(_, a) => format!("bind folder {}", access_word(*a)),
                    SourceKind::File(_, a) => format!("bind file {}", access_word(*a)),
                    SourceKind::Copy(bytes) => format!("copy of {} bytes", bytes.len()),
                    SourceKind::Device(_) => "bind device read-write".to_string(),
                    SourceKind::Private(_) => "bind the disk's private folder".to_string(),
                };
                write!(
                    f,
                    "show {} at {}: {what}",
                    source.path.display(),
                    at.display()
                )
            }
            Op::Unstage => write!(f, "unmount the disk's staging folder"),
            Op::ReadOnly => write!(f, "remount {STAGE} read-only (nosuid,nodev)"),
            Op::Pivot { cwd } => write!(f, "pivot into {STAGE}; cd {} (else /)", cwd.display()),
        }
    }
}

fn access_word(a: Access) -> &'static str {
    match a {
        Access::Read => "read-only (nosuid,nodev)",
        Access::Write => "read-write",
    }
}

fn flag_words(flags: libc::c_ulong) -> String {
    let words = [
        (libc::MS_NOSUID, "nosuid"),
        (libc::MS_NODEV, "nodev"),
        (libc::MS_NOEXEC, "noexec"),
    ];
    let on: Vec<&str> = words
        .iter()
        .filter(|(f, _)| flags & f != 0)
        .map(|(_, w)| *w)
        .collect();
    on.join(",")
}

/// Shows one source at `target` in the new root being built at `root`.
fn show(s: &SourceEntry, target: &Path, root: &Path) -> io::Result<()> {
    match &s.what {
        SourceKind::Link(to) => {
            if std::fs::symlink_metadata(target).is_err() {
                if let Some(parent) = target.parent() {
                    mkdirs(parent)?;
                }
                std::os::unix::fs::symlink(to, target)?;
            }
        }
        SourceKind::Dir(h, access) => {
            mkdirs(target)?;
            bind(h, target, *access == Access::Read)?;
        }
        SourceKind::File(h, access) => {
            make_file(target)?;
            bind(h, target, *access == Access::Read)?;
        }
        SourceKind::Copy(bytes) => {
            if let Some(parent) = target.parent() {
                mkdirs(parent)?;
            }
            std::fs::write(target, bytes)?;
        }
        SourceKind::Device(h) => {
            make_file(target)?;
            bind(h, target, false)?;
        }
        SourceKind::Private(_) => {
            mkdirs(target)?;
            bind_with(
                &Disk::staged(root),
                target,
                libc::MS_NOSUID | libc::MS_NODEV,
            )?;
        }
    }
    Ok(())
}

/// The files of `/etc` the jail writes itself: its one user, its name, the loopback names.
fn etc_files((u, g): (u32, u32), home: &Path) -> [(&'static str, String); 5] {
    let home = home.display();
    let mut passwd = format!("panel:x:{u}:{g}:panel judge:{home}:/bin/sh\n");
    let mut group = format!("panel:x:{g}:\n");
    if u != 65534 {
        passwd.push_str("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    }
    if g != 65534 {
        group.push_str("nogroup:x:65534:\n");
    }
    [
        ("passwd", passwd),
        ("group", group),
        ("hostname", "panel\n".to_string()),
        (
            "hosts",
            "127.0.0.1 localhost panel\n::1 localhost ip6-localhost ip6-loopback\n".to_string(),
        ),
        (
            "nsswitch.conf",
            "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n"
                .to_string(),
        ),
    ]
}

fn make_file(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        mkdirs(parent)?;
    }
    std::fs::File::create(path).map(|_| ())
}

/// Mounts what `fd` names at `target`, with what is mounted below it; read-only, without
/// set-uid programs or devices, when `read_only`.
fn bind(h: &Handle, target: &Path, read_only: bool) -> io::Result<()> {
    let opened;
    let fd = match h {
        Handle::Opened(fd) => fd,
        Handle::Path(p) => {
            opened = open_path(p)?;
            &opened
        }
    };
    let source = format!("/proc/self/fd/{}", fd.as_raw_fd());
    mount(
        Some(&source),
        target,
        None,
        libc::MS_BIND | libc::MS_REC,
        None,
    )
    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", target.display())))?;
    if !read_only {
        return Ok(());
    }
    let mut attr: libc::mount_attr = unsafe_zeroed_attr();
    attr.attr_set = libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;
    let c = cpath(target)?;
    // SAFETY: the attributes of the mounts at a NUL-terminated path, from a local struct.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    if r == 0 {
        return Ok(());
    }
    // Before Linux 5.12: the top mount alone (what is mounted below it keeps its own flags).
    let flags =
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    mount(None, target, None, flags | locked_flags(target), None)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: read-only: {e}", target.display())))
}

fn unsafe_zeroed_attr() -> libc::mount_attr {
    // SAFETY: mount_attr is plain integers, for which all zeros is a value.
    unsafe { std::mem::zeroed() }
}

/// The flags a remount must keep, as a mount made outside the namespace holds them.
fn locked_flags(target: &Path) -> libc::c_ulong {
    let Ok(c) = cpath(target) else { return 0 };
    let mut st: libc::statvfs = unsafe_zeroed_statvfs();
    // SAFETY: fills a local struct for a NUL-terminated path.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let mut flags = 0;
    for (vfs, ms) in [
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & vfs != 0 {
            flags |= ms;
        }
    }
    flags
}

fn unsafe_zeroed_statvfs() -> libc::statvfs {
    // SAFETY: statvfs is plain integers, for which all zeros is a value.
    unsafe { std::mem::zeroed() }
}

/// The ids the judge runs as, inside: the caller's own, or the unprivileged ones mapped for a
/// root caller; the namespace's capabilities kept for the building.
pub(super) fn become_ids((uid, gid): (u32, u32)) -> io::Result<()> {
    // SAFETY: plain system calls with integers.
    unsafe {
        check(libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0))?;
        check(libc::setresgid(gid, gid, gid))?;
        check(libc::setresuid(uid, uid, uid))?;
    }
    use rustix::thread::{CapabilitySet, CapabilitySets, capabilities, set_capabilities};
    let now = capabilities(None).map_err(io::Error::from)?;
    set_capabilities(
        None,
        CapabilitySets {
            effective: now.permitted,
            permitted: now.permitted,
            inheritable: CapabilitySet::empty(),
        },
    )
    .map_err(io::Error::from)
}

/// Brings up the namespace's loopback, its only interface.
pub(super) fn loopback_up() -> io::Result<()> {
    // SAFETY: a socket for the ioctl, closed when the OwnedFd drops.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if s < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made.
    let s = unsafe { OwnedFd::from_raw_fd(s) };
    // SAFETY: ifreq is plain data, for which zeros are a value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in b"lo".iter().enumerate() {
        ifr.ifr_name[i] = *b as libc::c_char;
    }
    ifr.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: SIOCSIFFLAGS with a filled ifreq.
    check(unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &ifr) })
        .map_err(|e| io::Error::new(e.kind(), format!("loopback: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sandbox::against_golden;

    /// A jail of a judge of user 1000 with the CLI in `/opt/cli`, and the sources its root
    /// shows; its private folder on a disk of its own when `disk`.
    fn sample(disk: bool) -> (Jail, Sources) {
        let private = PathBuf::from("/run/panel/x/j.1");
        let jail = Jail {
            cwd: private.join("work"),
            home: private.join("home"),
            private: private.clone(),
            disk: disk.then_some((1 << 30, 65536)),
            keep: vec!["answer".into()],
            keep_cap: Some((16 << 20) + 1),
            ..Jail::default()
        };
        let path = |p: &str| Handle::Path(PathBuf::from(p));
        let mut items = vec![
            ("/usr", SourceKind::Dir(path("/usr"), Access::Read)),
            ("/bin", SourceKind::Link("/usr/bin".into())),
            ("/etc/ld.so.cache", SourceKind::Copy(vec![0; 1234])),
            ("/opt/cli", SourceKind::Dir(path("/opt/cli"), Access::Read)),
            (
                "/home/u/ca.pem",
                SourceKind::File(path("/home/u/ca.pem"), Access::Read),
            ),
            ("/srv/out", SourceKind::Dir(path("/srv/out"), Access::Write)),
        ];
        items.push(match disk {
            true => {
                let fd = OwnedFd::from(std::fs::File::open("/").unwrap());
                ("/run/panel/x/j.1", SourceKind::Private(fd))
            }
            false => (
                "/run/panel/x/j.1",
                SourceKind::Dir(path("/run/panel/x/j.1"), Access::Write),
            ),
        });
        let mut items: Vec<SourceEntry> = items
            .into_iter()
            .map(|(p, what)| SourceEntry {
                path: PathBuf::from(p),
                what,
            })
            .collect();
        for d in DEVICES {
            let at = Path::new("/dev").join(d);
            items.push(SourceEntry {
                what: SourceKind::Device(Handle::Path(at.clone())),
                path: at,
            });
        }
        (jail, Sources { items })
    }

    /// Issue 39: "the jail's root as one list of operations, fixed mounts included, that a test
    /// can print": every mount the jail makes, in golden/jail-root*.txt.
    #[test]
    fn the_jails_root_is_one_list_of_operations_that_shows_every_mount() {
        for (file, disk) in [("jail-root.txt", false), ("jail-root-disk.txt", true)] {
            let (jail, sources) = sample(disk);
            let ops = operations(&jail, (1000, 1000), &sources);
            let text: String = ops.iter().map(|op| format!("{op}\n")).collect();
            against_golden(file, &text);
        }
    }
}
