//! A world of the judge's own (docs/design.md §8): new user, mount, PID, IPC, UTS, network and
//! cgroup namespaces, made by the supervisor with one `clone`. Inside:
//!
//! - a read-only root of only what the harness needs (the system's programs and libraries, an
//!   allow-list of `/etc`, its CLI's installation, a reviewer's checkout), each at its own path;
//! - one writable place, its private folder (and `--sandbox-write` folders), and a private
//!   `/tmp`; a fresh `/proc` of its own PID namespace and a minimal `/dev`;
//! - an unprivileged identity: the caller's own ids, or for a root caller an unprivileged one,
//!   so root-owned files are out of reach even where they are shown;
//! - a network of its own loopback alone, where a listener of the jail's first process at each
//!   door (the proxy's port, a loopback endpoint's address) hands each connection to the
//!   supervisor's egress proxy outside ([`super::egress`]).
//!
//! The first process (PID 1 of the namespace) is ours: it builds the world, starts the harness
//! (which puts on Landlock and seccomp, [`super::walls`], and becomes the harness), passes on
//! connections, reaps orphans, and when the harness exits says how it ended and exits; the
//! kernel then ends everything left in the namespace. It runs as a fork of the single-threaded
//! supervisor, so it may do as it likes until it starts the harness.

use std::ffi::{CString, OsString};
use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::egress::{Door, Endpoint};
use super::rules::Rules;

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

/// The namespaces of a jail.
const NAMESPACES: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWCGROUP;

/// A jail started: its first process (a child of the caller), the socket its connections come
/// through, and the pipe its harness's ending comes through.
pub struct Started {
    pub pid: i32,
    pub doors: UnixStream,
    pub ending: OwnedFd,
}

/// How the harness ended, as the first process reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Code(i32),
    Signal(i32),
}

/// Starts `program` (argv[0] first, an absolute path) with `env` in a new jail as the host ids
/// `ids`, confined by `rules`. Only from a single-threaded process: the child runs on after a
/// `clone`.
pub fn start(
    jail: &Jail,
    ids: (u32, u32),
    rules: Option<&Rules>,
    program: &[OsString],
    env: &[(OsString, OsString)],
) -> io::Result<Started> {
    let (doors_out, doors_in) = UnixStream::pair()?;
    let (sync_rx, sync_tx) = pipe()?;
    let (ending_rx, ending_tx) = pipe()?;
    let exec = Exec::new(program, env)?;
    // SAFETY: a clone without CLONE_VM or a new stack is a fork; the caller has one thread.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (NAMESPACES | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop((doors_out, sync_tx, ending_rx));
        let code = match first_process(jail, ids, rules, &exec, (sync_rx, doors_in, ending_tx)) {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(io::stderr(), "panel: cannot make the judge's jail: {e}");
                126
            }
        };
        // SAFETY: ends this fork without running the parent's destructors or atexit work.
        unsafe { libc::_exit(code) }
    }
    let pid = pid as i32;
    drop((doors_in, sync_rx, ending_tx));
    let mapped = map_ids(pid, ids.0, ids.1);
    // The child waits for this byte (or the pipe's end, when the maps failed: it gives up).
    if mapped.is_ok() {
        write_all(sync_tx.as_raw_fd(), b"m")?;
    }
    drop(sync_tx);
    mapped.inspect_err(|_| {
        let mut status = 0;
        // SAFETY: waits for our own child, which exits when the pipe closes unwritten.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    })?;
    Ok(Started {
        pid,
        doors: doors_out,
        ending: ending_rx,
    })
}

/// The child's ids, from outside: `setgroups` denied (an unprivileged caller must), then its
/// uid and gid mapped to themselves.
fn map_ids(pid: i32, uid: u32, gid: u32) -> io::Result<()> {
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/{pid}/{file}"), text)
            .map_err(|e| io::Error::new(e.kind(), format!("{file}: {e}")))
    };
    write("setgroups", "deny".into())?;
    write("uid_map", format!("{uid} {uid} 1\n"))?;
    write("gid_map", format!("{gid} {gid} 1\n"))
}

/// The first process: the world, the harness, then the doors and the reaping.
fn first_process(
    jail: &Jail,
    ids: (u32, u32),
    rules: Option<&Rules>,
    exec: &Exec,
    (sync, doors, ending): (OwnedFd, UnixStream, OwnedFd),
) -> io::Result<()> {
    set_parent_death_signal()?;
    // What it shows is opened now, as the caller (a root caller's judge could not traverse
    // root's folders once it is the unprivileged id).
    let sources = Sources::open(jail, ids)?;
    let mut byte = [0u8; 1];
    // SAFETY: reads one byte into a local buffer.
    if unsafe { libc::read(sync.as_raw_fd(), byte.as_mut_ptr().cast(), 1) } != 1 {
        return Err(io::Error::other("the supervisor could not map its ids"));
    }
    drop(sync);
    // Not before: the supervisor writes the maps in /proc/PID, which this makes root's.
    // SAFETY: prctl with plain integers.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    become_ids(ids)?;
    build_root(jail, ids, &sources)?;
    drop(sources);
    let hostname = b"panel";
    // SAFETY: a pointer and length to a static name.
    check(unsafe { libc::sethostname(hostname.as_ptr().cast(), hostname.len()) })?;
    loopback_up()?;
    // A door at an address this kernel lacks (IPv6 turned off) is left out.
    let listeners: Vec<Option<TcpListener>> = jail
        .doors
        .iter()
        .map(|d| match TcpListener::bind(d.at) {
            Ok(l) => Ok(Some(l)),
            Err(_) if d.at.is_ipv6() => Ok(None),
            Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", d.at))),
        })
        .collect::<io::Result<_>>()?;
    let harness = loop {
        // SAFETY: this process has one thread; the child only calls what `harness` calls.
        let pid = unsafe { libc::fork() };
        if pid >= 0 {
            break pid;
        }
        // No process to be had yet (a limit the judges share): waited for, as the tool does;
        // the supervisor ends the wait at the judge's deadline.
        let e = io::Error::last_os_error();
        if !crate::engine::lifecycle::is_shortage(&e) {
            return Err(e);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if harness == 0 {
        drop(listeners);
        drop(doors);
        drop(ending);
        let err = become_harness(rules, exec);
        let _ = writeln!(io::stderr(), "panel: {err}");
        let code = if err.kind() == io::ErrorKind::NotFound {
            127
        } else {
            126
        };
        // SAFETY: ends the fork at once.
        unsafe { libc::_exit(code) }
    }
    // It holds neither end of the judge's output, so the tool sees its end when the judge's
    // own processes are gone; stderr stays for the last word below.
    let _ = super::walls::drop_capabilities();
    let output = [1, 2].map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok());
    null_stdio();
    let end = serve(harness, &listeners, &doors);
    drop(listeners);
    drop(doors);
    if let Some(line) = left_running(&output) {
        let _ = writeln!(io::stderr(), "panel: {line}");
    }
    let word = match end {
        Ending::Code(c) => format!("c{c}"),
        Ending::Signal(s) => format!("s{s}"),
    };
    write_all(ending.as_raw_fd(), word.as_bytes())
}

/// Passes each door's connections on, reaps every child, until the harness ends.
fn serve(harness: i32, listeners: &[Option<TcpListener>], doors: &UnixStream) -> Ending {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let open: Vec<(usize, &TcpListener)> = listeners
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, l.as_ref()?)))
        .collect();
    for (_, l) in &open {
        let _ = l.set_nonblocking(true);
    }
    let pidfd = rustix::process::Pid::from_raw(harness)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    loop {
        if let Some(end) = reap(harness) {
            return end;
        }
        let mut fds: Vec<PollFd> = open
            .iter()
            .map(|(_, l)| PollFd::new(*l, PollFlags::IN))
            .collect();
        if let Some(p) = &pidfd {
            fds.push(PollFd::new(p, PollFlags::IN));
        }
        // Without a pidfd (before Linux 5.3) the harness is looked for every 20 ms.
        let tick = Timespec {
            tv_sec: if pidfd.is_some() { 1 } else { 0 },
            tv_nsec: if pidfd.is_some() { 0 } else { 20_000_000 },
        };
        let _ = poll(&mut fds, Some(&tick));
        let ready: Vec<usize> = (0..open.len())
            .filter(|&i| !fds[i].revents().is_empty())
            .collect();
        drop(fds);
        for i in ready {
            let (door, listener) = open[i];
            while let Ok((conn, _)) = listener.accept() {
                pass(doors, &conn, door as u8);
            }
        }
    }
}

/// Hands one connection to the supervisor: its descriptor, and which door it came through.
fn pass(doors: &UnixStream, conn: &std::net::TcpStream, door: u8) {
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags, sendmsg};
    let fds = [conn.as_fd()];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    control.push(SendAncillaryMessage::ScmRights(&fds));
    let _ = sendmsg(
        doors,
        &[io::IoSlice::new(&[door])],
        &mut control,
        SendFlags::NOSIGNAL,
    );
}

/// Receives one connection the jail passed on, and its door's number.
pub fn receive(doors: &UnixStream) -> io::Result<(std::net::TcpStream, usize)> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, recvmsg};
    let mut byte = [0u8; 1];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = recvmsg(
        doors,
        &mut [io::IoSliceMut::new(&mut byte)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    if got.bytes == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the jail ended",
        ));
    }
    for msg in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = msg
            && let Some(fd) = fds.next()
        {
            return Ok((std::net::TcpStream::from(fd), usize::from(byte[0])));
        }
    }
    Err(io::Error::other("a door's message without its connection"))
}

/// Reaps every child that has ended; the harness's ending when it was among them.
fn reap(harness: i32) -> Option<Ending> {
    let mut end = None;
    loop {
        let mut status = 0;
        // SAFETY: waits for any child, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return end;
        }
        if pid == harness {
            end = Some(if libc::WIFSIGNALED(status) {
                Ending::Signal(libc::WTERMSIG(status))
            } else {
                Ending::Code(libc::WEXITSTATUS(status))
            });
        }
    }
}

/// What the harness left running, in words (the namespace's processes but this one), and how
/// many of them held its `output` (what its stdout and stderr were) open.
fn left_running(output: &[Option<PathBuf>; 2]) -> Option<String> {
    let left: Vec<u32> = std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| p != 1)
        .collect();
    if left.is_empty() {
        return None;
    }
    let holds = |p: &u32| {
        std::fs::read_dir(format!("/proc/{p}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| {
                let target = std::fs::read_link(fd.path()).ok();
                target.is_some() && output.contains(&target)
            })
    };
    let n = left.len();
    Some(match left.iter().filter(|p| holds(p)).count() {
        0 => format!("ended {n} process(es) the judge left running"),
        h => format!("ended {n} process(es) the judge left running; {h} held its output open"),
    })
}

/// How the supervisor reads the first process's report; `None` when it ended without one.
pub fn read_ending(fd: &OwnedFd) -> Option<Ending> {
    let mut buf = [0u8; 16];
    // SAFETY: reads into a local buffer.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    let text = std::str::from_utf8(buf.get(..usize::try_from(n).ok()?)?).ok()?;
    let value = text.get(1..)?.parse().ok()?;
    match text.as_bytes().first()? {
        b'c' => Some(Ending::Code(value)),
        b's' => Some(Ending::Signal(value)),
        _ => None,
    }
}

/// The harness's last steps: its own session, no capability, Landlock and seccomp, then it.
fn become_harness(rules: Option<&Rules>, exec: &Exec) -> io::Error {
    // SAFETY: plain system calls of the fork.
    unsafe { libc::setsid() };
    if let Err(e) = set_parent_death_signal() {
        return e;
    }
    if let Err(e) = super::walls::close_inherited_on_exec() {
        return e;
    }
    if let Err(e) = super::walls::drop_capabilities() {
        return io::Error::other(format!("cannot confine the judge: {e}"));
    }
    if let Some(rules) = rules
        && let Err(e) = super::walls::restrict(rules)
    {
        return io::Error::other(format!("cannot confine the judge: {e}"));
    }
    exec.exec()
}

/// The harness's command and environment, made before the fork.
struct Exec {
    program: CString,
    argv: Vec<CString>,
    env: Vec<CString>,
}

impl Exec {
    fn new(program: &[OsString], env: &[(OsString, OsString)]) -> io::Result<Exec> {
        let c = |s: &[u8]| CString::new(s).map_err(|_| io::Error::other("a NUL byte in argv"));
        let argv = program
            .iter()
            .map(|a| c(a.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let env = env
            .iter()
            .map(|(k, v)| c(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Exec {
            program: argv
                .first()
                .cloned()
                .ok_or_else(|| io::Error::other("no program"))?,
            argv,
            env,
        })
    }

    fn exec(&self) -> io::Error {
        let mut argv: Vec<*const libc::c_char> = self.argv.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut env: Vec<*const libc::c_char> = self.env.iter().map(|a| a.as_ptr()).collect();
        env.push(std::ptr::null());
        // SAFETY: NUL-terminated arrays of NUL-terminated strings that outlive the call.
        unsafe { libc::execve(self.program.as_ptr(), argv.as_ptr(), env.as_ptr()) };
        let e = io::Error::last_os_error();
        io::Error::new(
            e.kind(),
            format!("cannot run {}: {e}", self.program.to_string_lossy()),
        )
    }
}

/// What the root shows: each path's kind, and what it is mounted from. A descriptor (`O_PATH`)
/// is opened at once for what the judge's ids could not pass through to once they change (a
/// root caller's judge in root's folders) and for what the staging tmpfs hides (`/tmp`); the
/// rest is opened when it is mounted, and the small files of `/etc` are copied, so a judge
/// under a small open-file limit holds few at a time.
struct Sources {
    items: Vec<Source>,
}

struct Source {
    path: PathBuf,
    what: Kind,
}

enum Kind {
    /// A symbolic link, made again in the new root.
    Link(PathBuf),
    Dir(Handle, Access),
    File(Handle, Access),
    /// A small file of `/etc`, copied into the new root (one mount fewer).
    Copy(Vec<u8>),
    /// A device node of the host's `/dev`.
    Device(Handle),
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
    fn open(jail: &Jail, ids: (u32, u32)) -> io::Result<Sources> {
        let handle = |path: &Path| -> io::Result<Option<Handle>> {
            if !path.starts_with(STAGE) && reachable(path, ids) {
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
            let what = if meta.file_type().is_symlink()
                && let Some(real) = real
            {
                Kind::Link(real)
            } else if target.is_file()
                && target.len() <= COPIED
                && access == Access::Read
                && path.starts_with("/etc")
            {
                match std::fs::read(path) {
                    Ok(bytes) => Kind::Copy(bytes),
                    Err(_) => continue,
                }
            } else {
                let Some(h) = handle(path)? else { continue };
                match target.is_dir() {
                    true => Kind::Dir(h, access),
                    false => Kind::File(h, access),
                }
            };
            items.push(Source {
                path: path.clone(),
                what,
            });
        }
        for d in DEVICES {
            let path = Path::new("/dev").join(d);
            if let Some(h) = handle(&path)? {
                items.push(Source {
                    path,
                    what: Kind::Device(h),
                });
            }
        }
        Ok(Sources { items })
    }
}

/// Whether `ids` may pass through every folder above `path`.
fn reachable(path: &Path, (uid, gid): (u32, u32)) -> bool {
    use std::os::unix::fs::MetadataExt;
    path.ancestors().skip(1).all(|dir| {
        std::fs::metadata(dir).is_ok_and(|m| {
            let bits = match (m.uid() == uid, m.gid() == gid) {
                (true, _) => m.mode() >> 6,
                (false, true) => m.mode() >> 3,
                _ => m.mode(),
            };
            bits & 0o1 != 0
        })
    })
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

/// Builds the new root, then makes it the root.
fn build_root(jail: &Jail, ids: (u32, u32), sources: &Sources) -> io::Result<()> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    let fs = libc::MS_NOSUID | libc::MS_NODEV;
    mount(
        Some("tmpfs"),
        STAGE,
        Some("tmpfs"),
        fs,
        Some("mode=0755,size=4m"),
    )?;
    let root = Path::new(STAGE);
    let at = |p: &Path| root.join(p.strip_prefix("/").unwrap_or(p));
    // The private /tmp, /proc and /dev first: what is shown below them lands on them.
    for d in ["tmp", "proc", "dev", "etc"] {
        mkdirs(&root.join(d))?;
    }
    mount(
        Some("tmpfs"),
        root.join("tmp"),
        Some("tmpfs"),
        fs,
        Some("mode=1777,size=256m,nr_inodes=65536"),
    )?;
    mount(
        Some("proc"),
        root.join("proc"),
        Some("proc"),
        fs | libc::MS_NOEXEC,
        None,
    )?;
    mount(
        Some("tmpfs"),
        root.join("dev"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("mode=0755,size=64k"),
    )?;
    mkdirs(&root.join("dev/shm"))?;
    mount(
        Some("tmpfs"),
        root.join("dev/shm"),
        Some("tmpfs"),
        fs | libc::MS_NOEXEC,
        Some("mode=1777,size=64m"),
    )?;
    for (link, to) in [
        ("dev/fd", "/proc/self/fd"),
        ("dev/stdin", "/proc/self/fd/0"),
        ("dev/stdout", "/proc/self/fd/1"),
        ("dev/stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(to, root.join(link))?;
    }
    write_etc(ids, &jail.home, &root.join("etc"))?;
    let mut items: Vec<&Source> = sources.items.iter().collect();
    // Parents before children: a folder shown inside another is mounted on top of it.
    items.sort_by(|a, b| a.path.cmp(&b.path));
    for s in items {
        let target = at(&s.path);
        show(s, &target)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", s.path.display())))?;
    }
    mount(
        None,
        root,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | fs,
        None,
    )?;
    std::env::set_current_dir(root)?;
    let dot = c".";
    // SAFETY: pivot_root(".", ".") stacks the old root under the new one (pivot_root(2)).
    check(unsafe { libc::syscall(libc::SYS_pivot_root, dot.as_ptr(), dot.as_ptr()) } as i32)?;
    // SAFETY: detaches the old root, now mounted at ".".
    check(unsafe { libc::umount2(dot.as_ptr(), libc::MNT_DETACH) })?;
    std::env::set_current_dir(&jail.cwd)
        .or_else(|_| std::env::set_current_dir("/"))
        .map(|_| ())
}

/// Shows one source at `target` in the new root.
fn show(s: &Source, target: &Path) -> io::Result<()> {
    match &s.what {
        Kind::Link(to) => {
            if std::fs::symlink_metadata(target).is_err() {
                if let Some(parent) = target.parent() {
                    mkdirs(parent)?;
                }
                std::os::unix::fs::symlink(to, target)?;
            }
        }
        Kind::Dir(h, access) => {
            mkdirs(target)?;
            bind(h, target, *access == Access::Read)?;
        }
        Kind::File(h, access) => {
            make_file(target)?;
            bind(h, target, *access == Access::Read)?;
        }
        Kind::Copy(bytes) => {
            if let Some(parent) = target.parent() {
                mkdirs(parent)?;
            }
            std::fs::write(target, bytes)?;
        }
        Kind::Device(h) => {
            make_file(target)?;
            bind(h, target, false)?;
        }
    }
    Ok(())
}

/// The files of `/etc` the jail writes itself: its one user, its name, the loopback names.
fn write_etc((u, g): (u32, u32), home: &Path, etc: &Path) -> io::Result<()> {
    let home = home.display();
    let mut passwd = format!("panel:x:{u}:{g}:panel judge:{home}:/bin/sh\n");
    let mut group = format!("panel:x:{g}:\n");
    if u != 65534 {
        passwd.push_str("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    }
    if g != 65534 {
        group.push_str("nogroup:x:65534:\n");
    }
    let files = [
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
    ];
    for (name, text) in files {
        std::fs::write(etc.join(name), text)?;
    }
    Ok(())
}

fn mkdirs(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(path)
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

fn cpath(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::other("a NUL byte in a path"))
}

fn mount(
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

/// The ids the judge runs as, inside: the caller's own, or the unprivileged ones mapped for a
/// root caller; the namespace's capabilities kept for the building.
fn become_ids((uid, gid): (u32, u32)) -> io::Result<()> {
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
fn loopback_up() -> io::Result<()> {
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

fn set_parent_death_signal() -> io::Result<()> {
    // SAFETY: prctl with plain integers.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) })
}

/// Standard input and output on `/dev/null`.
fn null_stdio() {
    let null = c"/dev/null";
    // SAFETY: opens /dev/null and puts it on descriptors 0 and 1.
    unsafe {
        let fd = libc::open(null.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::dup2(fd, 0);
            libc::dup2(fd, 1);
            libc::close(fd);
        }
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fills two descriptors, owned at once.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: descriptors just made.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn write_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this kernel lets this caller make a jail; else why not and how to allow it. Asked
/// once, by a child that makes the namespaces and a mount in them and exits at once.
pub fn available() -> &'static Result<(), String> {
    static AVAILABLE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    AVAILABLE.get_or_init(probe)
}

fn probe() -> Result<(), String> {
    // SAFETY: a fork whose child makes only system calls and `_exit`s (this process may have
    // threads: the child touches nothing they may hold).
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (NAMESPACES | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        let (tmpfs, tmp) = (c"tmpfs", c"/tmp");
        // SAFETY: async-signal-safe system calls, then _exit.
        unsafe {
            let root = c"/";
            let r = libc::mount(
                std::ptr::null(),
                root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            );
            let r = if r == 0 {
                libc::mount(
                    tmpfs.as_ptr(),
                    tmp.as_ptr(),
                    tmpfs.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    std::ptr::null(),
                )
            } else {
                r
            };
            libc::_exit(if r == 0 { 0 } else { 1 })
        }
    }
    let errno = io::Error::last_os_error();
    if pid < 0 {
        return Err(why_not(errno.raw_os_error().unwrap_or(0)));
    }
    let mut status = 0;
    // SAFETY: waits for the child just made.
    unsafe { libc::waitpid(pid as i32, &mut status, 0) };
    match libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        true => Ok(()),
        false => Err(why_not(libc::EPERM)),
    }
}

/// Why user namespaces are refused, and the fix, from what the kernel says.
fn why_not(errno: i32) -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .ok()
    };
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return "AppArmor restricts unprivileged user namespaces (sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile that allows userns for panel's binaries)".into();
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return "kernel.unprivileged_userns_clone is 0 (sysctl -w kernel.unprivileged_userns_clone=1)".into();
    }
    if errno == libc::ENOSPC || read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=15000)".into();
    }
    if errno == libc::EINVAL || errno == libc::ENOSYS {
        return "this kernel has no user namespaces (CONFIG_USER_NS)".into();
    }
    format!(
        "the kernel refuses them ({}; a container's seccomp profile or a missing capability may forbid unshare)",
        io::Error::from_raw_os_error(errno)
    )
}
