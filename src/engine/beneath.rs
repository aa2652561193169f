//! File-system calls beneath a judge's private folder, where the judge has written before us:
//! none of them follows a link it planted, each folder is opened on its own, and what it left
//! (links to the user's files, folders it made unreadable with `chmod 0`, trees deeper than any
//! descriptor table) is removed as the caller, never reaching past the folder.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Folders opened at once while a tree is removed; a deeper folder is moved up to the top of
/// the tree first.
const MAX_OPEN: usize = 64;

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The folder `root` (ours: named by the tool, not the judge).
fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(root, dir_flags(), Mode::empty())?)
}

/// The folder `rel` beneath `root`, opened one component at a time without following a link;
/// missing folders are made (0700) when `make`.
fn open_dir(root: &Path, rel: &Path, make: bool) -> io::Result<OwnedFd> {
    let mut fd = open_root(root)?;
    for c in rel.components() {
        let Component::Normal(name) = c else {
            return Err(io::Error::other(
                "not a plain path beneath the private folder",
            ));
        };
        fd = match rustix::fs::openat(&fd, name, dir_flags(), Mode::empty()) {
            Err(Errno::NOENT) if make => {
                rustix::fs::mkdirat(&fd, name, Mode::RWXU)?;
                rustix::fs::openat(&fd, name, dir_flags(), Mode::empty())?
            }
            other => other?,
        };
    }
    Ok(fd)
}

/// Splits `rel` into its folder and its last name.
fn split(rel: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rel.parent(), rel.file_name()) {
        (Some(dir), Some(name)) => Ok((dir, name)),
        _ => Err(io::Error::other("no file name")),
    }
}

/// Makes the folder `rel` beneath `root` (0700) and the folders on its way; a link or a file
/// in the way is an error, never followed.
pub fn make_dir(root: &Path, rel: &Path) -> io::Result<()> {
    open_dir(root, rel, true).map(drop)
}

/// Creates a new file at `rel` beneath `root`, 0600, open to write and read back: whatever was
/// at that name (a file, a link) is removed first, never written through.
pub fn create(root: &Path, rel: &Path) -> io::Result<std::fs::File> {
    let (dir, name) = split(rel)?;
    let dir = open_dir(root, dir, true)?;
    match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => return Err(e.into()),
    }
    let fd = rustix::fs::openat(
        &dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::RUSR | Mode::WUSR,
    )?;
    Ok(std::fs::File::from(fd))
}

/// Writes `bytes` as a new file at `rel` beneath `root` (see [`create`]).
pub fn write(root: &Path, rel: &Path, bytes: &[u8]) -> io::Result<()> {
    create(root, rel)?.write_all(bytes)
}

/// Removes the entry at `rel` beneath `root` (a file or a link; a folder whole).
pub fn remove(root: &Path, rel: &Path) -> io::Result<()> {
    let (dir, name) = split(rel)?;
    let dir = open_dir(root, dir, false)?;
    remove_at(&dir, name)
}

/// Removes `path` and everything under it, as the caller, following no link: a folder the
/// judge made unreadable or unwritable is made the owner's again first. Missing is done.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    // An empty folder (or a file, or a link) goes without a descriptor: what a run short of
    // descriptors leaves is removed all the same.
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Ok(m) if !m.is_dir() => return std::fs::remove_file(path),
        _ => {}
    }
    if std::fs::remove_dir(path).is_ok() {
        return Ok(());
    }
    let (parent, name) = match (path.parent(), path.file_name()) {
        (Some(p), Some(n)) => (p, n),
        _ => return Err(io::Error::other("not a folder to remove")),
    };
    let parent = match rustix::fs::open(parent, dir_flags(), Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    match remove_at(&parent, name) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Removes the entry `name` of the folder `dir`, a whole tree when it is a folder.
fn remove_at(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => return Ok(()),
        Err(Errno::ISDIR) => {}
        Err(e) => return Err(e.into()),
    }
    let top = open_owned(dir, name)?;
    // Folders moved up into `top` (too deep, or met when no descriptor was left), each emptied
    // and removed in turn.
    let mut moved = Moved::default();
    empty(open_owned(dir, name)?, &top, &mut moved)?;
    while let Some(m) = moved.left.pop() {
        let name = OsStr::from_bytes(&m);
        empty(open_owned(&top, name)?, &top, &mut moved)?;
        rustix::fs::unlinkat(&top, name, AtFlags::REMOVEDIR)?;
    }
    drop(top);
    Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
}

/// Opens the folder `name` of `dir` to remove what is in it, made the owner's to read, write
/// and search first when it is not (a judge's `chmod 0`).
fn open_owned(dir: &impl AsFd, name: &OsStr) -> io::Result<OwnedFd> {
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(io::Error::other("not a folder"));
    }
    // `st_mode` is a u16 on macOS.
    #[allow(clippy::unnecessary_cast)]
    if st.st_mode as u32 & 0o700 != 0o700 {
        own_folder(dir, name)?;
    }
    Ok(rustix::fs::openat(dir, name, dir_flags(), Mode::empty())?)
}

/// Makes the folder `name` of `dir` its owner's to read, write and search, never through a
/// link swapped in meanwhile: on Linux through a handle on the folder itself (`O_PATH` needs
/// no right on it), as Linux's `fchmodat` follows links.
#[cfg(target_os = "linux")]
fn own_folder(dir: &impl AsFd, name: &OsStr) -> io::Result<()> {
    let path = rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let proc = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&path));
    Ok(rustix::fs::chmodat(
        rustix::fs::CWD,
        proc.as_str(),
        Mode::RWXU,
        AtFlags::empty(),
    )?)
}

/// Makes the folder `name` of `dir` its owner's to read, write and search; macOS's
/// `fchmodat` changes a link itself, never what it names.
#[cfg(not(target_os = "linux"))]
fn own_folder(dir: &impl AsFd, name: &OsStr) -> io::Result<()> {
    Ok(rustix::fs::chmodat(
        dir,
        name,
        Mode::RWXU,
        AtFlags::SYMLINK_NOFOLLOW,
    )?)
}

/// Folders moved up to the top of a tree being removed: those left to empty, and how many
/// were moved (each gets a name of its own).
#[derive(Default)]
struct Moved {
    left: Vec<Vec<u8>>,
    made: usize,
}

/// One folder being emptied: its descriptor (the one it was opened with) and the names in it
/// still to remove.
struct Level {
    dir: rustix::fs::Dir,
    left: Vec<Vec<u8>>,
}

impl Level {
    fn open(fd: OwnedFd) -> io::Result<Level> {
        let mut dir = rustix::fs::Dir::new(fd)?;
        let mut left = Vec::new();
        while let Some(entry) = dir.read() {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                left.push(name);
            }
        }
        Ok(Level { dir, left })
    }
}

/// Empties the folder opened as `fd`, one descriptor a level, at most [`MAX_OPEN`] at once; a
/// folder deeper than that, or met when no descriptor is left, is moved up into `top` under a
/// new name and listed in `moved`, to be emptied in turn.
fn empty(fd: OwnedFd, top: &OwnedFd, moved: &mut Moved) -> io::Result<()> {
    let mut stack = vec![Level::open(fd)?];
    while let Some(level) = stack.last_mut() {
        let Some(name) = level.left.pop() else {
            stack.pop();
            continue;
        };
        let deep = stack.len() >= MAX_OPEN;
        let n = OsStr::from_bytes(&name);
        let here = stack.last().expect("a level").dir.fd()?;
        match rustix::fs::unlinkat(here, n, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => continue,
            Err(Errno::ISDIR) => {}
            Err(e) => return Err(e.into()),
        }
        let child = match deep {
            false => open_owned(&here, n).and_then(Level::open),
            true => Err(Errno::MFILE.into()),
        };
        match child {
            Ok(child) if child.left.is_empty() => {
                drop(child);
                rustix::fs::unlinkat(
                    stack.last().expect("a level").dir.fd()?,
                    n,
                    AtFlags::REMOVEDIR,
                )?;
            }
            Ok(child) => {
                // Revisited once emptied, to remove it.
                stack.last_mut().expect("a level").left.push(name);
                stack.push(child);
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                let here = stack.last().expect("a level").dir.fd()?;
                moved.left.push(move_up(&here, n, top, moved.made)?);
                moved.made += 1;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Moves the folder `name` of `dir` into `top` under a name of its own (one a judge planted
/// there is never replaced), and gives that name.
fn move_up(dir: &impl AsFd, name: &OsStr, top: &OwnedFd, n: usize) -> io::Result<Vec<u8>> {
    let mut salt = [0u8; 8];
    loop {
        let _ = getrandom::fill(&mut salt);
        let new = format!(".panel-deep-{n}-{:016x}", u64::from_le_bytes(salt)).into_bytes();
        match rustix::fs::renameat_with(
            dir,
            name,
            top,
            OsStr::from_bytes(&new),
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Err(Errno::EXIST) => continue,
            other => return other.map(|()| new).map_err(Into::into),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_write_replaces_a_planted_link_and_never_follows_one_on_the_way() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("home"), dir.path().join("user"));
        fs::create_dir_all(root.join(".claude")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), "mine").unwrap();
        // A link where the file goes: removed, not written through.
        symlink(
            outside.join("secret"),
            root.join(".claude/.credentials.json"),
        )
        .unwrap();
        write(&root, Path::new(".claude/.credentials.json"), b"copy").unwrap();
        assert_eq!(fs::read_to_string(outside.join("secret")).unwrap(), "mine");
        let meta = fs::symlink_metadata(root.join(".claude/.credentials.json")).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        // A link where a folder is on the way: refused.
        fs::remove_dir_all(root.join(".claude")).unwrap();
        symlink(&outside, root.join(".claude")).unwrap();
        assert!(write(&root, Path::new(".claude/.credentials.json"), b"copy").is_err());
        assert!(remove(&root, Path::new(".claude/secret")).is_err());
        assert!(!outside.join(".credentials.json").exists());
        assert_eq!(fs::read_to_string(outside.join("secret")).unwrap(), "mine");
        for bad in ["../x", "/etc/passwd", "a/../../x"] {
            assert!(write(&root, Path::new(bad), b"x").is_err(), "{bad}");
        }
    }

    /// Issue 35: "A judge that replaced its ~/.claude with a link to the user's real one made
    /// panel delete the user's .credentials.json"; issue 36: "a judge that runs chmod 0 on a
    /// folder in its HOME stops the cleanup".
    #[test]
    fn a_tree_goes_whole_its_links_unfollowed_its_modes_undone() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("private"), dir.path().join("user"));
        fs::create_dir_all(root.join("home/a/b")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join(".credentials.json"), "mine").unwrap();
        symlink(&outside, root.join("home/.claude")).unwrap();
        symlink("/", root.join("home/a/root")).unwrap();
        fs::write(root.join("home/a/b/f"), "x").unwrap();
        for d in ["home/a/b", "home/a"] {
            fs::set_permissions(root.join(d), fs::Permissions::from_mode(0o0)).unwrap();
        }
        // Deeper than the folders it may hold open at once.
        let mut deep = root.join("home/deep");
        for _ in 0..(MAX_OPEN * 3) {
            deep = deep.join("d");
        }
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("leaf"), "x").unwrap();
        remove_tree(&root).unwrap();
        assert!(!root.exists());
        assert_eq!(
            fs::read_to_string(outside.join(".credentials.json")).unwrap(),
            "mine"
        );
        assert!(Path::new("/etc").exists());
        // Already gone is done.
        remove_tree(&root).unwrap();
    }
}
