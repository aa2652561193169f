//! The door's keeper where there is no jail: Landlock holds TCP by port alone, on any address,
//! so a judge let through to its proxy's port could reach that port on any host. Its every
//! `connect()` is handed to its supervisor instead (a seccomp user notification): one to an
//! address it may reach ([`Reach::to`](super::grants::Reach)) is made by the supervisor,
//! from its own copy of the address, and the connected socket put in place of the judge's; any
//! other is refused (EACCES, as Landlock refuses). Since the judge's memory is read once and
//! never trusted again, a thread that changes the address after the look gains nothing.
//!
//! ```text
//! confine stage: Landlock, seccomp, then `connect` → notify ──fd──▶ supervisor: keep(listener)
//! ```

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Installs the filter that hands every `connect()` of this process and all it starts to the
/// returned listener (`no_new_privs` must be set: Landlock sets it).
pub fn notify_connects() -> Result<OwnedFd, String> {
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xc000_00b7;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let mut program = [
        // seccomp_data.arch at offset 4: another architecture's numbers mean other calls.
        op(LD_W_ABS, 0, 0, 4),
        op(JEQ_K, 1, 0, ARCH),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EACCES as u32),
        // seccomp_data.nr at offset 0.
        op(LD_W_ABS, 0, 0, 0),
        op(JEQ_K, 0, 1, libc::SYS_connect as u32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: seccomp(SET_MODE_FILTER, NEW_LISTENER, prog) reads the program and returns a
    // descriptor of this process's.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog,
        )
    };
    if fd < 0 {
        return Err(format!(
            "seccomp: cannot keep the judge's connections: {}",
            io::Error::last_os_error()
        ));
    }
    // SAFETY: a descriptor just returned to this process, owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Calls `f` with a message of one byte and room for one descriptor: what the stage sends its
/// supervisor.
fn with_message<R>(f: impl FnOnce(&mut libc::msghdr) -> R) -> R {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: CMSG_SPACE of one descriptor measures the control buffer the header points at.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a zeroed msghdr is an empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    f(&mut msg)
}

/// Sends `fd` over the unix socket `to` (its supervisor's).
pub fn send_fd(to: RawFd, fd: &OwnedFd) -> io::Result<()> {
    with_message(|msg| {
        // SAFETY: the first header of a control buffer with room for it and one descriptor.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd.as_raw_fd());
            match libc::sendmsg(to, msg, libc::MSG_NOSIGNAL) {
                1 => Ok(()),
                _ => Err(io::Error::last_os_error()),
            }
        }
    })
}

/// The descriptor the confine stage sends over `from`; `None` when it sent none (it failed,
/// or ran its harness without one).
pub fn receive_fd(from: &OwnedFd) -> Option<OwnedFd> {
    with_message(|msg| {
        // SAFETY: the kernel fills the message's buffers; the descriptor read is one it just
        // gave this process.
        unsafe {
            let n = loop {
                let n = libc::recvmsg(from.as_raw_fd(), msg, libc::MSG_CMSG_CLOEXEC);
                if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    break n;
                }
            };
            let cmsg = libc::CMSG_FIRSTHDR(msg);
            if n != 1 || cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
                return None;
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            Some(OwnedFd::from_raw_fd(fd))
        }
    })
}

/// Connections that wait for their peer at once, each on a thread of its own; one more is
/// refused (EAGAIN) until one is done.
const WAITING: usize = 32;
/// The longest a blocking connection is waited for (the kernel's own SYN retries take ~2 min).
const CONNECT_WAIT: Duration = Duration::from_secs(60);

/// What the keeper tells of each connection it made: made, or the errno it failed with (a
/// non-blocking one once it is known), so that a CLI failing on one endpoint is seen.
pub type Outcome = Arc<dyn Fn(SocketAddr, Result<(), i32>) + Send + Sync>;

/// Answers the judge's connections on `listener` until no process of the judge is left: each
/// to an address of `to` made here (to the address paired with it: its proxy's door, for an
/// endpoint whose requests the proxy reads) and put in place, every other refused; how each
/// made one ended goes to `outcome`.
pub fn keep(listener: OwnedFd, to: Vec<(SocketAddr, SocketAddr)>, outcome: Outcome) {
    let listener = Arc::new(listener);
    let waiting = Arc::new(AtomicUsize::new(0));
    loop {
        let mut fds = [libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: poll on one descriptor of ours.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, -1) };
        if r < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if fds[0].revents & libc::POLLIN == 0 {
            // Hung up: every process under the filter is gone.
            return;
        }
        // SAFETY: a zeroed notification the kernel fills.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl writes one notification into `req`.
        if unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut req,
            )
        } != 0
        {
            // ENOENT: the caller died before it was read; EINTR: again.
            continue;
        }
        answer(&listener, req, &to, &waiting, &outcome);
    }
}

/// One `connect()`: to an address of `to`, started here on a socket of ours that takes the
/// judge's descriptor's number and flags; a blocking one waited for on a thread of its own.
/// Any other address is refused.
fn answer(
    listener: &Arc<OwnedFd>,
    req: libc::seccomp_notif,
    to: &[(SocketAddr, SocketAddr)],
    waiting: &Arc<AtomicUsize>,
    outcome: &Outcome,
) {
    let [fd, addr, len, ..] = req.data.args;
    let asked = read_address(req.pid, addr, len);
    let Some(at) = asked.and_then(|a| to.iter().find(|(x, _)| *x == a).map(|(_, made)| *made))
    else {
        return reply(listener, req.id, libc::EACCES);
    };
    // The address was read from a process that is still the one that asked.
    if !valid(listener, req.id) {
        return;
    }
    let flags = fd_flags(req.pid, fd).unwrap_or(0);
    let (ours, started) = match start(&at) {
        Ok(s) => s,
        Err(e) => {
            outcome(at, Err(e));
            return reply(listener, req.id, e);
        }
    };
    if !started {
        outcome(at, Ok(()));
    }
    if flags & libc::O_NONBLOCK != 0 {
        // As the kernel answers a non-blocking connect: made, or in progress on the socket.
        put(
            listener,
            req.id,
            &ours,
            fd,
            flags,
            if started { libc::EINPROGRESS } else { 0 },
        );
        // How it ends is learnt from our copy of the socket, on a thread while there is room.
        if started && waiting.fetch_add(1, Ordering::SeqCst) < WAITING {
            let (count, told) = (Arc::clone(waiting), Arc::clone(outcome));
            let watched = std::thread::Builder::new().spawn(move || {
                told(at, connected(&ours, &|| true));
                count.fetch_sub(1, Ordering::SeqCst);
            });
            if watched.is_err() {
                waiting.fetch_sub(1, Ordering::SeqCst);
            }
        } else if started {
            waiting.fetch_sub(1, Ordering::SeqCst);
        }
        return;
    }
    if !started {
        set_blocking(&ours);
        return put(listener, req.id, &ours, fd, flags, 0);
    }
    if waiting.fetch_add(1, Ordering::SeqCst) >= WAITING {
        waiting.fetch_sub(1, Ordering::SeqCst);
        return reply(listener, req.id, libc::EAGAIN);
    }
    let (kept, count, told) = (
        Arc::clone(listener),
        Arc::clone(waiting),
        Arc::clone(outcome),
    );
    let spawned = std::thread::Builder::new().spawn(move || {
        let ended = connected(&ours, &|| valid(&kept, req.id));
        told(at, ended);
        match ended {
            Ok(()) => {
                set_blocking(&ours);
                put(&kept, req.id, &ours, fd, flags, 0);
            }
            Err(e) => reply(&kept, req.id, e),
        }
        count.fetch_sub(1, Ordering::SeqCst);
    });
    if spawned.is_err() {
        waiting.fetch_sub(1, Ordering::SeqCst);
        reply(listener, req.id, libc::EAGAIN);
    }
}

/// Answers notification `id` with `error` (0: the call returns 0).
fn reply(listener: &OwnedFd, id: u64, error: i32) {
    let mut resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: -error,
        flags: 0,
    };
    // SAFETY: the ioctl reads the response; an answer to a notification gone is ENOENT.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp,
        )
    };
}

/// Whether notification `id`'s caller still waits for its answer.
fn valid(listener: &OwnedFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: the ioctl reads the id.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &mut id,
        ) == 0
    }
}

/// Puts `ours` at the judge's descriptor `fd` (with its `O_CLOEXEC`) and answers with
/// `error`; a judge gone meanwhile gets nothing.
fn put(listener: &OwnedFd, id: u64, ours: &OwnedFd, fd: u64, flags: i32, error: i32) {
    let mut add = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: ours.as_raw_fd() as u32,
        newfd: fd as u32,
        newfd_flags: (flags & libc::O_CLOEXEC) as u32,
    };
    // SAFETY: the ioctl reads `add` and puts a copy of our socket at the judge's number.
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut add,
        )
    };
    reply(listener, id, if r >= 0 { error } else { libc::EBADF });
}

/// A non-blocking TCP socket of ours connecting to `at`: whether the connection is still in
/// progress, or the errno it failed with.
fn start(at: &SocketAddr) -> Result<(OwnedFd, bool), i32> {
    let (domain, raw, len) = raw_address(at);
    // SAFETY: a new socket of ours, owned at once.
    let fd = unsafe {
        libc::socket(
            domain,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: the descriptor was just made here.
    let ours = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `raw` holds `len` bytes of a socket address.
    let r = unsafe { libc::connect(fd, (&raw as *const libc::sockaddr_storage).cast(), len) };
    match (r, errno()) {
        (0, _) => Ok((ours, false)),
        (_, libc::EINPROGRESS) => Ok((ours, true)),
        (_, e) => Err(e),
    }
}

/// Waits for `ours` to connect while `still` holds (a blocking caller waits): the errno it
/// failed with, EINTR when `still` no longer holds, or ETIMEDOUT past `CONNECT_WAIT`.
fn connected(ours: &OwnedFd, still: &dyn Fn() -> bool) -> Result<(), i32> {
    let until = std::time::Instant::now() + CONNECT_WAIT;
    loop {
        let mut fds = [libc::pollfd {
            fd: ours.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        }];
        // SAFETY: poll on one descriptor of ours, a second at a time.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 1, 1000) };
        if r > 0 {
            let mut error: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: SO_ERROR into an int of ours.
            unsafe {
                libc::getsockopt(
                    ours.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_ERROR,
                    (&mut error as *mut libc::c_int).cast(),
                    &mut len,
                )
            };
            return if error == 0 { Ok(()) } else { Err(error) };
        }
        if !still() {
            return Err(libc::EINTR);
        }
        if std::time::Instant::now() >= until {
            return Err(libc::ETIMEDOUT);
        }
    }
}

fn set_blocking(ours: &OwnedFd) {
    // SAFETY: F_GETFL and F_SETFL on a descriptor of ours.
    unsafe {
        let flags = libc::fcntl(ours.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(ours.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `at` as the kernel takes it: its family, its bytes and their length.
fn raw_address(at: &SocketAddr) -> (i32, libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: a zeroed sockaddr_storage is an empty address, large enough for either below.
    let mut raw: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match at {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large enough and aligned for a sockaddr_in.
            let sin = unsafe {
                &mut *(&mut raw as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>()
            };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
            (
                libc::AF_INET,
                raw,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        }
        SocketAddr::V6(a) => {
            // SAFETY: sockaddr_storage is large enough and aligned for a sockaddr_in6.
            let sin6 = unsafe {
                &mut *(&mut raw as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            (
                libc::AF_INET6,
                raw,
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        }
    }
}

/// The socket address at `addr` (`len` bytes) in process `pid`, when it is IPv4 or IPv6 (an
/// IPv4 address mapped into IPv6 read as IPv4).
fn read_address(pid: u32, addr: u64, len: u64) -> Option<SocketAddr> {
    let mut buf = [0u8; 28];
    let len = usize::try_from(len).ok()?.min(buf.len());
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: the kernel copies at most `len` bytes into `buf`.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    parse_address(buf.get(..usize::try_from(n).ok()?)?)
}

/// A `sockaddr_in` or `sockaddr_in6` in its bytes.
fn parse_address(b: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*b.first()?, *b.get(1)?]));
    let port = u16::from_be_bytes([*b.get(2)?, *b.get(3)?]);
    match family {
        libc::AF_INET if b.len() >= 8 => {
            let ip = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
            Some(SocketAddrV4::new(ip, port).into())
        }
        libc::AF_INET6 if b.len() >= 24 => {
            let octets: [u8; 16] = b[8..24].try_into().ok()?;
            let ip = Ipv6Addr::from(octets);
            Some(match ip.to_ipv4_mapped() {
                Some(v4) => SocketAddrV4::new(v4, port).into(),
                None => SocketAddrV6::new(ip, port, 0, 0).into(),
            })
        }
        _ => None,
    }
}

/// The open flags of descriptor `fd` of process `pid` (`O_NONBLOCK`, `O_CLOEXEC`), from its
/// fdinfo.
fn fd_flags(pid: u32, fd: u64) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    let octal = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
    i32::from_str_radix(octal.trim(), 8).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_as_the_kernel_lays_them_out() {
        let mut v4 = vec![0u8; 16];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        v4[2..4].copy_from_slice(&8080u16.to_be_bytes());
        v4[4..8].copy_from_slice(&[127, 0, 0, 1]);
        assert_eq!(parse_address(&v4), Some("127.0.0.1:8080".parse().unwrap()));
        let mut v6 = vec![0u8; 28];
        v6[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        v6[2..4].copy_from_slice(&443u16.to_be_bytes());
        v6[8..24].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
        assert_eq!(parse_address(&v6), Some("[::1]:443".parse().unwrap()));
        // An IPv4 address mapped into IPv6 is the IPv4 one.
        v6[8..24].copy_from_slice(&Ipv4Addr::new(127, 0, 0, 2).to_ipv6_mapped().octets());
        assert_eq!(parse_address(&v6), Some("127.0.0.2:443".parse().unwrap()));
        // Short, or of another family: nothing.
        assert_eq!(parse_address(&v4[..6]), None);
        let mut unix = v4.clone();
        unix[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
        assert_eq!(parse_address(&unix), None);
    }
}
