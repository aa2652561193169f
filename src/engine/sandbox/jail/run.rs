//! The jail's runtime: the `clone`, the first process and its world (Linux alone).

use std::ffi::{CString, OsString};
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use super::disk::Disk;
use super::mount::check;
use super::root::{Sources, become_ids, build_root, early, loopback_up};
use super::{DISK_PEAK, Ending, Jail};
use crate::engine::sandbox::grants::Reach;
use crate::engine::sandbox::share::Limits;
use crate::records::exit_status;

/// The namespaces of a jail.
pub(super) const NAMESPACES: libc::c_int = libc::CLONE_NEWUSER
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

/// What the harness runs as and under: the host ids it becomes, its Landlock rules, its
/// share's limits.
pub struct Under<'a> {
    pub ids: (u32, u32),
    pub rules: Option<&'a Reach>,
    pub limits: &'a Limits,
}

/// Starts `program` (argv[0] first, an absolute path) with `env` in a new jail, `under` what
/// it says; `enter` is given the first process's pid before it builds anything (to move it into
/// the judge's cgroup). Only from a single-threaded process: the child runs on after a `clone`.
pub fn start(
    jail: &Jail,
    under: &Under,
    program: &[OsString],
    env: &[(OsString, OsString)],
    enter: &dyn Fn(u32) -> io::Result<()>,
) -> io::Result<Started> {
    let ids = under.ids;
    let (doors_out, doors_in) = UnixStream::pair()?;
    let (sync_rx, sync_tx) = pipe()?;
    let (ending_rx, ending_tx) = pipe()?;
    let exec = Exec::new(program, env)?;
    let early = early(jail, ids);
    // SAFETY: a clone without CLONE_VM or a new stack is a fork; the caller has one thread.
    let pid = unsafe { clone_namespaces() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        drop((doors_out, sync_tx, ending_rx));
        let ends = (sync_rx, doors_in, ending_tx);
        let code = match first_process(jail, (under, &early), &exec, ends) {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(io::stderr(), "panel: cannot make the judge's jail: {e}");
                exit_status::CANNOT_RUN
            }
        };
        // SAFETY: ends this fork without running the parent's destructors or atexit work.
        unsafe { libc::_exit(code) }
    }
    let pid = pid as i32;
    drop((doors_in, sync_rx, ending_tx));
    let mapped = map_ids(pid, ids.0, ids.1).and_then(|()| enter(pid as u32));
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

/// A fork into new namespaces of every kind the jail uses: the child's pid, 0 in the child.
///
/// # Safety
/// As `fork`: the child of a process with threads makes only async-signal-safe calls.
pub(super) unsafe fn clone_namespaces() -> libc::c_long {
    // SAFETY: a clone without CLONE_VM or a new stack is a fork; the caller keeps its child to
    // async-signal-safe calls.
    unsafe {
        libc::syscall(
            libc::SYS_clone,
            (NAMESPACES | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    }
}

/// The first process: the world, the harness, then the doors, the reaping and its share.
fn first_process(
    jail: &Jail,
    (under, early): (&Under, &[PathBuf]),
    exec: &Exec,
    (sync, doors, ending): (OwnedFd, UnixStream, OwnedFd),
) -> io::Result<()> {
    set_parent_death_signal()?;
    // What the supervisor held is not ours: a small limit on open files is left for the root.
    close_all_but(&[sync.as_raw_fd(), doors.as_raw_fd(), ending.as_raw_fd()]);
    // What it shows is opened now, as the caller (a root caller's judge could not traverse
    // root's folders once it is the unprivileged id).
    let sources = Sources::open(jail, early)?;
    let mut byte = [0u8; 1];
    // SAFETY: reads one byte into a local buffer.
    if unsafe { libc::read(sync.as_raw_fd(), byte.as_mut_ptr().cast(), 1) } != 1 {
        return Err(io::Error::other("the supervisor could not map its ids"));
    }
    drop(sync);
    // Not before: the supervisor writes the maps in /proc/PID, which this makes root's.
    // SAFETY: prctl with plain integers.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    become_ids(under.ids)?;
    under.limits.namespace()?;
    let disk = build_root(jail, under.ids, &sources)?;
    drop(sources);
    let hostname = b"panel";
    // SAFETY: a pointer and length to a static name.
    check(unsafe { libc::sethostname(hostname.as_ptr().cast(), hostname.len()) })?;
    loopback_up()?;
    let listeners = bind_doors(jail)?;
    // The supervisor's TERM (a deadline, a stop) comes as a descriptor to read, not a death:
    // what the tool reads back is carried out first.
    let term = term_fd()?;
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
        let err = become_harness(under, exec);
        let _ = writeln!(io::stderr(), "panel: {err}");
        let code = if err.kind() == io::ErrorKind::NotFound {
            exit_status::NOT_FOUND
        } else {
            exit_status::CANNOT_RUN
        };
        // SAFETY: ends the fork at once.
        unsafe { libc::_exit(code) }
    }
    // It holds neither end of the judge's output, so the tool sees its end when the judge's
    // own processes are gone; stderr stays for the last word below.
    let _ = crate::engine::sandbox::walls::drop_capabilities();
    let output = [1, 2].map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok());
    null_stdio();
    let (mut met, mut disk_peak): (Vec<&'static str>, u64) = (Vec::new(), 0);
    let mut watch = || {
        let mut now = under
            .limits
            .reached_now(crate::engine::sandbox::share::all_processes());
        if let Some((full, used)) = disk.as_ref().map(Disk::looked_at) {
            disk_peak = disk_peak.max(used);
            if full {
                now.push("disk");
            }
        }
        for w in now {
            if !met.contains(&w) {
                met.push(w);
            }
        }
    };
    let end = serve(harness, &listeners, &doors, &term, &mut watch);
    watch();
    drop(listeners);
    drop(doors);
    if let Some(line) = left_running(&output) {
        let _ = writeln!(io::stderr(), "panel: {line}");
    }
    end_the_rest();
    if let Some(d) = &disk {
        d.carry_out();
    }
    let peak = disk.is_some().then_some(disk_peak);
    write_all(ending.as_raw_fd(), report(end, &met, peak).as_bytes())
}

/// The listeners of the jail's doors; a door at an address this kernel lacks (IPv6 turned
/// off) is left out.
fn bind_doors(jail: &Jail) -> io::Result<Vec<Option<TcpListener>>> {
    jail.doors
        .iter()
        .map(|d| match TcpListener::bind(d.at) {
            Ok(l) => Ok(Some(l)),
            Err(_) if d.at.is_ipv6() => Ok(None),
            Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", d.at))),
        })
        .collect()
}

/// The first process's last word, as [`read_ending`] reads it: `c0`, `s9` or `t` (stopped),
/// the limits met, the most its disk held.
fn report(end: Option<Ending>, met: &[&str], disk_peak: Option<u64>) -> String {
    let mut word = match end {
        Some(Ending::Code(c)) => format!("c{c}"),
        Some(Ending::Signal(s)) => format!("s{s}"),
        None => "t".to_string(),
    };
    for w in met {
        word.push(' ');
        word.push_str(w);
    }
    if let Some(p) = disk_peak {
        word.push_str(&format!(" {DISK_PEAK}{p}"));
    }
    word
}

/// Closes every descriptor above 2 but `keep` (in a fork, whose copies of its parent's
/// descriptors no destructor of its own will close).
fn close_all_but(keep: &[RawFd]) {
    let mut keep = keep.to_vec();
    keep.sort_unstable();
    let mut from: RawFd = 3;
    for &k in keep.iter().chain(&[RawFd::MAX]) {
        if k > from {
            // SAFETY: closes descriptors no object of this fork owns.
            unsafe { libc::close_range(from as libc::c_uint, (k - 1) as libc::c_uint, 0) };
        }
        from = from.max(k.saturating_add(1));
    }
}

/// A descriptor that becomes readable when TERM comes to this process (blocked from now on;
/// the harness unblocks it for itself).
fn term_fd() -> io::Result<OwnedFd> {
    // SAFETY: a local signal set, filled and handed to the kernel.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        check(libc::sigprocmask(
            libc::SIG_BLOCK,
            &set,
            std::ptr::null_mut(),
        ))?;
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        check(fd)?;
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Ends every other process of the namespace and reaps them: nothing of the judge runs while
/// what the tool reads back is carried out.
fn end_the_rest() {
    // SAFETY: kill(-1) from a namespace's first process reaches every other process in it.
    unsafe { libc::kill(-1, libc::SIGKILL) };
    let mut status = 0;
    // SAFETY: waits for any child until there is none.
    while unsafe { libc::waitpid(-1, &mut status, 0) } > 0 {}
}

/// Passes each door's connections on, reaps every child, and calls `watch` each second, until
/// the harness ends (its ending) or TERM comes (`None`).
fn serve(
    harness: i32,
    listeners: &[Option<TcpListener>],
    doors: &UnixStream,
    term: &OwnedFd,
    watch: &mut dyn FnMut(),
) -> Option<Ending> {
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
    let mut last = std::time::Instant::now();
    loop {
        if let Some(end) = reap(harness) {
            return Some(end);
        }
        let mut fds: Vec<PollFd> = open
            .iter()
            .map(|(_, l)| PollFd::new(*l, PollFlags::IN))
            .collect();
        fds.push(PollFd::new(term, PollFlags::IN));
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
        let termed = !fds[open.len()].revents().is_empty();
        drop(fds);
        if termed {
            return None;
        }
        for i in ready {
            let (door, listener) = open[i];
            while let Ok((conn, _)) = listener.accept() {
                pass(doors, &conn, door as u8);
            }
        }
        if last.elapsed() >= std::time::Duration::from_secs(1) {
            last = std::time::Instant::now();
            watch();
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

/// The harness's last steps: its own session, its share's limits, no capability, Landlock
/// and seccomp, then it.
fn become_harness(under: &Under, exec: &Exec) -> io::Error {
    // SAFETY: plain system calls of the fork; an empty set unblocks TERM, which the first
    // process blocked for itself.
    unsafe {
        if under.limits.own_session(true) {
            libc::setsid();
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
    if let Err(e) = set_parent_death_signal() {
        return e;
    }
    if let Err(e) = crate::engine::sandbox::fds::close_inherited_on_exec() {
        return e;
    }
    if let Err(e) = under.limits.take() {
        return io::Error::other(format!("cannot limit the judge: {e}"));
    }
    crate::engine::sandbox::walls::own_keyring();
    if let Err(e) = crate::engine::sandbox::walls::drop_capabilities() {
        return io::Error::other(format!("cannot confine the judge: {e}"));
    }
    let walled = match under.rules {
        Some(rules) => crate::engine::sandbox::walls::restrict(rules, under.limits.refuse(true)),
        None => crate::engine::sandbox::walls::seccomp(crate::engine::sandbox::walls::Refuse {
            unix: true,
            ..under.limits.refuse(true)
        }),
    };
    if let Err(e) = walled {
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
