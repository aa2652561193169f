//! A jailed judge's disk: one tmpfs of its own, capped in bytes and inodes, holding its private
//! folder, its `/tmp` and its `/dev/shm`. Nothing it writes reaches the caller's disk, and all
//! it writes there counts against its memory where a cgroup counts it. What the tool wrote into
//! its private folder before it started (its prompt, its files, its logins, a kept session) is
//! carried in; what the tool reads back (its answer file, the HOME of a session kept for a
//! resume) is carried out once nothing of the judge runs, into the tool's own files and
//! folders. Neither way follows a link: folders and regular files are copied (their owner's
//! mode bits alone), links made again as links, anything else left out.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, mkdirat, openat, readlinkat, statat};

use super::mount::{bind_with, mkdirs, mount};

/// Where the disk is mounted while the root is built; gone before the judge starts.
const STAGING: &str = ".disk";
/// Folders deeper than this are left out of a copy (each level holds two descriptors).
const DEPTH: usize = 64;

/// A judge's disk while it runs: its private folder on it, and the caller's, where what the
/// tool reads back goes.
pub(super) struct Disk {
    private: OwnedFd,
    host: OwnedFd,
    /// What is carried out, and for a file the tool made, which file it was: only that one is
    /// carried out (one renamed over it is another's).
    keep: Vec<(PathBuf, Option<(u64, u64)>)>,
    /// The most of a kept file carried out.
    cap: u64,
    /// The disk's bytes and inodes: the most a kept folder carries out.
    room: (u64, u64),
}

/// How much a copy may still take, and of one file.
struct CopyAllowance {
    bytes: u64,
    entries: u64,
    file: u64,
    /// Whether a file cut at `file` keeps its size (the answer file alone: the tool reads
    /// what it reads and can tell there was more; never a folder's files, whose holes would
    /// be written on the caller's disk).
    sized: bool,
}

impl Disk {
    /// Mounts a tmpfs of `size` bytes and `inodes` inodes in the root being built at `root`,
    /// shows its `tmp` and `shm` at `/tmp` and `/dev/shm`, and copies the caller's private
    /// folder (`host`, open) into its `private`, to be mounted at the private folder's own path
    /// ([`Disk::staged`]); `keep` is what is carried out, and the most of a file carried.
    pub(super) fn make(
        root: &Path,
        (size, inodes): (u64, u64),
        host: OwnedFd,
        (keep, cap): (&[PathBuf], u64),
    ) -> io::Result<Disk> {
        let staging = root.join(STAGING);
        mkdirs(&staging)?;
        let fs = libc::MS_NOSUID | libc::MS_NODEV;
        let options = format!("mode=0755,size={size},nr_inodes={inodes}");
        mount(Some("tmpfs"), &staging, Some("tmpfs"), fs, Some(&options))?;
        for (name, mode) in [("tmp", 0o1777), ("shm", 0o1777), ("private", 0o700)] {
            let dir = staging.join(name);
            std::fs::create_dir(&dir)?;
            // Whatever the umask.
            std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(mode))?;
        }
        bind_with(&staging.join("tmp"), &root.join("tmp"), fs)?;
        bind_with(
            &staging.join("shm"),
            &root.join("dev/shm"),
            fs | libc::MS_NOEXEC,
        )?;
        let private = open_dir(rustix::fs::CWD, staging.join("private"))?;
        let mut budget = CopyAllowance {
            bytes: size,
            entries: inodes,
            file: u64::MAX,
            sized: false,
        };
        copy_tree(open_dir(&host, ".")?, private.as_fd(), &mut budget, 0)
            .map_err(|e| io::Error::new(e.kind(), format!("its private folder: {e}")))?;
        let made = |rel: &Path| {
            let st = statat(&private, rel, AtFlags::SYMLINK_NOFOLLOW).ok()?;
            (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
                .then_some((st.st_dev, st.st_ino))
        };
        let keep = keep.iter().map(|k| (k.clone(), made(k))).collect();
        Ok(Disk {
            private,
            host,
            keep,
            cap,
            room: (size, inodes),
        })
    }

    /// Where the private folder is while the root is built, to be mounted at its own path.
    pub(super) fn staged(root: &Path) -> PathBuf {
        root.join(STAGING).join("private")
    }

    /// Once every mount of the root is made: the staging mount goes (its binds stay).
    pub(super) fn unstage(root: &Path) -> io::Result<()> {
        let staging = root.join(STAGING);
        let c = std::ffi::CString::new(staging.as_os_str().as_bytes())
            .map_err(|_| io::Error::other("a NUL byte in a path"))?;
        // SAFETY: detaches the mount at a NUL-terminated path.
        super::mount::check(unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) })?;
        std::fs::remove_dir(&staging)
    }

    /// Whether the disk is full (in bytes or in inodes), and the bytes it holds.
    pub(super) fn looked_at(&self) -> (bool, u64) {
        rustix::fs::fstatvfs(&self.private).map_or((false, 0), |s| {
            let free = s.f_bavail.saturating_mul(s.f_frsize);
            let full = free < 64 << 10 || (s.f_files > 0 && s.f_favail == 0);
            let used = s
                .f_blocks
                .saturating_sub(s.f_bfree)
                .saturating_mul(s.f_frsize);
            (full, used)
        })
    }

    /// Copies what the tool reads back into the caller's private folder: each kept path, a
    /// file into the tool's file of that name, a folder into the tool's folder.
    pub(super) fn carry_out(&self) {
        for (rel, made) in &self.keep {
            let now = statat(&self.private, rel, AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| (st.st_dev, st.st_ino))
                .ok();
            if made.is_some() && now != *made {
                continue;
            }
            let _ = carry(
                self.private.as_fd(),
                self.host.as_fd(),
                rel,
                (self.cap, self.room),
            );
        }
    }
}

/// Carries `rel` out: a file cut at `cap` (keeping its size), a folder within the disk's
/// `room` (bytes, entries), its files cut at nothing but that: what a judge carries out is
/// never more than its disk held, sparse files included.
fn carry(
    from: BorrowedFd,
    to: BorrowedFd,
    rel: &Path,
    (cap, room): (u64, (u64, u64)),
) -> io::Result<()> {
    let st = statat(from, rel, AtFlags::SYMLINK_NOFOLLOW)?;
    let mut budget = CopyAllowance {
        bytes: room.0,
        entries: room.1,
        file: room.0,
        sized: false,
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {
            budget = CopyAllowance {
                bytes: u64::MAX,
                entries: 1,
                file: cap,
                sized: true,
            };
            copy_file(from, to, rel, st.st_mode, &mut budget)
        }
        FileType::Directory => {
            let dst = open_dir(to, rel)?;
            copy_tree(open_dir(from, rel)?, dst.as_fd(), &mut budget, 0)
        }
        _ => Ok(()),
    }
}

/// Copies every entry under `from` (its folder, read) into `to`, which may hold some already
/// (a file is then written over, a folder copied into, a link made again; an entry of another
/// kind is left). Each level holds two descriptors.
fn copy_tree(
    from: OwnedFd,
    to: BorrowedFd,
    budget: &mut CopyAllowance,
    depth: usize,
) -> io::Result<()> {
    if depth >= DEPTH {
        return Ok(());
    }
    let mut dir = Dir::new(from)?;
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let from = dir.fd()?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if budget.entries == 0 {
            return Err(io::Error::other("too many files"));
        }
        budget.entries -= 1;
        let st = statat(from, name, AtFlags::SYMLINK_NOFOLLOW)?;
        let name = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => {
                let owner = Mode::from_raw_mode(st.st_mode & 0o700);
                match mkdirat(to, name, owner) {
                    Err(rustix::io::Errno::EXIST) => {}
                    r => r?,
                }
                let dst = open_dir(to, name)?;
                copy_tree(open_dir(from, name)?, dst.as_fd(), budget, depth + 1)?;
            }
            FileType::RegularFile => copy_file(from, to, name, st.st_mode, budget)?,
            FileType::Symlink => {
                let target = readlinkat(from, name, Vec::new())?;
                let _ = rustix::fs::unlinkat(to, name, AtFlags::empty());
                rustix::fs::symlinkat(target.as_c_str(), to, name)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Copies one regular file, within the budget, over the file of that name in `to` (made with
/// its owner's mode bits when it is not there), never through a link. Past the budget's most of
/// one file the copy is cut, and keeps the file's size (sparse, so it takes no room).
fn copy_file(
    from: BorrowedFd,
    to: BorrowedFd,
    name: &Path,
    mode: u32,
    budget: &mut CopyAllowance,
) -> io::Result<()> {
    // Never waiting on a FIFO put in a file's place.
    let flags = OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK;
    let src = openat(from, name, flags | OFlags::RDONLY, Mode::empty())?;
    let dst = openat(
        to,
        name,
        flags | OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
        Mode::from_raw_mode(mode & 0o700),
    )?;
    let (mut src, mut dst) = (std::fs::File::from(src), std::fs::File::from(dst));
    if !dst.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let room = budget.bytes.min(budget.file);
    let copied = io::copy(&mut (&mut src).take(room), &mut dst)?;
    budget.bytes -= copied;
    let size = src.metadata()?.len();
    if size > copied && budget.sized && room == budget.file {
        return dst.set_len(size);
    }
    if src.read(&mut [0u8; 1])? > 0 {
        return Err(io::Error::other("no space left for it"));
    }
    dst.flush()
}

fn open_dir<Fd: AsFd>(at: Fd, name: impl rustix::path::Arg) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(openat(at, name, flags, Mode::empty())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(p: &Path) -> OwnedFd {
        open_dir(rustix::fs::CWD, p).unwrap()
    }

    /// A copy never follows a link: a link is made again as a link, and a file put in the
    /// place of one the tool made is written through no link.
    #[test]
    fn a_copy_makes_links_again_and_follows_none() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(a.join("home/.cfg")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("home/.cfg/x.json"), "{}").unwrap();
        std::fs::write(t.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), a.join("home/link")).unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), a.join("answer")).unwrap();
        let mut budget = CopyAllowance {
            bytes: 1 << 20,
            entries: 100,
            file: u64::MAX,
            sized: false,
        };
        copy_tree(dir(&a), dir(&b).as_fd(), &mut budget, 0).unwrap();
        assert_eq!(
            std::fs::read_to_string(b.join("home/.cfg/x.json")).unwrap(),
            "{}"
        );
        let link = std::fs::read_link(b.join("home/link")).unwrap();
        assert_eq!(link, t.path().join("secret"));
        // Carried out: a link in the judge's place is no answer, and the tool's file is kept.
        std::fs::remove_file(b.join("answer")).unwrap();
        std::fs::write(b.join("answer"), "").unwrap();
        assert!(
            carry(
                dir(&a).as_fd(),
                dir(&b).as_fd(),
                Path::new("answer"),
                (1 << 20, (1 << 20, 100))
            )
            .is_ok()
        );
        assert_eq!(std::fs::read_to_string(b.join("answer")).unwrap(), "");
        // A tool's file replaced by a link on the caller's side is not written through.
        std::fs::remove_file(a.join("answer")).unwrap();
        std::fs::write(a.join("answer"), "{\"verdict\":\"holds\"}").unwrap();
        std::fs::remove_file(b.join("answer")).unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), b.join("answer")).unwrap();
        assert!(
            carry(
                dir(&a).as_fd(),
                dir(&b).as_fd(),
                Path::new("answer"),
                (1 << 20, (1 << 20, 100))
            )
            .is_err()
        );
        assert_eq!(
            std::fs::read_to_string(t.path().join("secret")).unwrap(),
            "s"
        );
    }

    /// A kept file past its cap is carried cut, at its whole size (sparse): the tool reads what
    /// it reads, and can tell how much more there was.
    #[test]
    fn a_kept_file_past_its_cap_is_cut_and_keeps_its_size() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("answer"), vec![b'x'; 10_000]).unwrap();
        std::fs::write(b.join("answer"), "").unwrap();
        carry(
            dir(&a).as_fd(),
            dir(&b).as_fd(),
            Path::new("answer"),
            (100, (1 << 20, 100)),
        )
        .unwrap();
        let got = std::fs::read(b.join("answer")).unwrap();
        assert_eq!(got.len(), 10_000);
        assert!(got[..100].iter().all(|&c| c == b'x') && got[100..].iter().all(|&c| c == 0));
    }

    #[test]
    fn a_copy_stops_at_its_budget() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("big"), vec![b'x'; 5000]).unwrap();
        let mut budget = CopyAllowance {
            bytes: 1000,
            entries: 100,
            file: u64::MAX,
            sized: false,
        };
        let err = copy_tree(dir(&a), dir(&b).as_fd(), &mut budget, 0).unwrap_err();
        assert!(err.to_string().contains("no space"), "{err}");
        let mut deep = a.clone();
        for _ in 0..(DEPTH + 5) {
            deep = deep.join("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::remove_file(a.join("big")).unwrap();
        let mut budget = CopyAllowance {
            bytes: 1000,
            entries: 1000,
            file: u64::MAX,
            sized: false,
        };
        copy_tree(dir(&a), dir(&b).as_fd(), &mut budget, 0).unwrap();
        let kept = (0..)
            .take_while(|n| b.join("d/".repeat(n + 1)).is_dir())
            .count();
        assert_eq!(kept, DEPTH);
    }

    /// A kept folder is carried out within the disk's room, and its files' holes are not
    /// written on the caller's side: a judge's sparse files (`truncate -s 64M`, which cost it
    /// nothing) cost the caller no more than the disk held.
    #[test]
    fn a_kept_folder_of_sparse_files_costs_no_more_than_the_disk() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(a.join("home")).unwrap();
        std::fs::create_dir_all(b.join("home")).unwrap();
        for n in 0..8 {
            let f = std::fs::File::create(a.join(format!("home/s{n}"))).unwrap();
            f.set_len(64 << 20).unwrap();
        }
        let room = (1 << 20, 100);
        let r = carry(
            dir(&a).as_fd(),
            dir(&b).as_fd(),
            Path::new("home"),
            (16 << 20, room),
        );
        assert!(r.is_err(), "past the disk's room");
        let carried: u64 = std::fs::read_dir(b.join("home"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(carried <= room.0, "{carried} bytes carried");
    }
}
