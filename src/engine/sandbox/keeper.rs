//! The door's keeper where there is no jail: Landlock holds TCP by port alone, on any address,
//! so a judge let through to its proxy's port could reach that port on any host. Its every
//! `connect()` is handed to its supervisor instead (a seccomp user notification): one to an
//! address it may reach ([`Landlock::to`](super::grants::Landlock)) is made by the supervisor,
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

/// `fd` is kept open across the `exec` of `cmd` (the confine stage's end of the socket).
pub fn inherited(cmd: &mut std::process::Command, fd: RawFd) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, fcntl alone.
    unsafe {
        cmd.pre_exec(move || {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            match flags >= 0 && libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) == 0 {
                true => Ok(()),
                false => Err(io::Error::last_os_error()),
            }
        })
    };
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

/// Answers the judge's connections on `listener` until no process of the judge is left: each
/// to an address of `to` made here and put in place, every other refused.
pub fn keep(listener: OwnedFd, to: Vec<SocketAddr>) {
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
        answer(&listener, &req, &to);
    }
}

/// One `connect()`: made here to an address of `to`, else refused.
fn answer(listener: &OwnedFd, req: &libc::seccomp_notif, to: &[SocketAddr]) {
    let [fd, addr, len, ..] = req.data.args;
    let reply = |val: i64, error: i32| {
        let mut resp = libc::seccomp_notif_resp {
            id: req.id,
            val,
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
    };
    let Some(at) = read_address(req.pid, addr, len).filter(|a| to.contains(a)) else {
        return reply(0, libc::EACCES);
    };
    // The address was read from a process that is still the one that asked.
    let mut id = req.id;
    // SAFETY: the ioctl reads the id.
    if unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &mut id,
        )
    } != 0
    {
        return;
    }
    let flags = fd_flags(req.pid, fd).unwrap_or(0);
    let made = match std::net::TcpStream::connect(at) {
        Ok(s) => s,
        Err(e) => return reply(0, e.raw_os_error().unwrap_or(libc::ECONNREFUSED)),
    };
    if flags & libc::O_NONBLOCK != 0 {
        let _ = made.set_nonblocking(true);
    }
    let mut add = libc::seccomp_notif_addfd {
        id: req.id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: made.as_raw_fd() as u32,
        newfd: fd as u32,
        newfd_flags: (flags & libc::O_CLOEXEC) as u32,
    };
    // SAFETY: the ioctl reads `add` and puts a copy of our socket at the judge's number.
    let put = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut add,
        )
    };
    match put >= 0 {
        true => reply(0, 0),
        false => reply(0, libc::EACCES),
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
