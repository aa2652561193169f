//! The mounts a jail's root is made of, as the first process makes them in its own mount
//! namespace.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// mount(2), its words given as text.
pub(super) fn mount(
    source: Option<&str>,
    target: impl AsRef<Path>,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let opt = |s: Option<&str>| s.map(|s| CString::new(s).map_err(|_| io::Error::other("NUL")));
    let (source, fstype, data) = (opt(source), opt(fstype), opt(data));
    let (source, fstype, data) = (source.transpose()?, fstype.transpose()?, data.transpose()?);
    let target = cpath(target.as_ref())?;
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: NUL-terminated strings or nulls, as mount(2) takes them.
    check(unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    })
    .map_err(|e| io::Error::new(e.kind(), format!("mount {}: {e}", target.to_string_lossy())))
}

pub(super) fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::other("a NUL byte in a path"))
}

/// Makes a folder and those above it that are missing.
pub(super) fn mkdirs(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(path)
}

/// Mounts the folder `source` (of a mount made in this namespace) at `target` with `flags`.
pub(super) fn bind_with(source: &Path, target: &Path, flags: libc::c_ulong) -> io::Result<()> {
    let shown = source
        .to_str()
        .ok_or_else(|| io::Error::other("a path not in UTF-8"))?;
    mount(Some(shown), target, None, libc::MS_BIND, None)?;
    mount(
        None,
        target,
        None,
        libc::MS_REMOUNT | libc::MS_BIND | flags,
        None,
    )
}

/// A system call's result: `Err` with its errno when it failed.
pub(super) fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
