//! The kernel's side of the second wall: what Landlock this kernel offers, and the confine
//! stage putting [`Landlock`] on itself just before it becomes the harness. The stage is a fresh
//! single-threaded process, so restricting itself restricts all that follows; no `pre_exec`.

use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath,
    PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::grants::Reach;

/// The newest ABI these rules were written and tested for; a newer kernel enforces them as this.
pub const TESTED_ABI: u8 = 7;
/// From this ABI Landlock restricts TCP (bind and connect by port).
const NET_ABI: u8 = 4;
/// From this ABI a judge cannot signal, or reach abstract sockets of, processes outside it.
const SCOPE_ABI: u8 = 6;
/// From this ABI Landlock controls connecting to a unix socket by path; before it, seccomp does.
const UNIX_ABI: u8 = 9;

/// The Landlock ABI rules are enforced at on this kernel, or why there is none.
pub fn kernel() -> &'static Result<u8, String> {
    static KERNEL: OnceLock<Result<u8, String>> = OnceLock::new();
    KERNEL.get_or_init(|| {
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the ABI number.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32,
            )
        };
        if v >= 1 {
            return Ok((v as u8).min(TESTED_ABI));
        }
        Err(match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled at boot",
            Some(libc::ENOSYS) => "this kernel has no Landlock (Linux 5.13 or later has it)",
            _ => "this kernel refuses Landlock",
        }
        .to_string())
    })
}

fn abi(n: u8) -> ABI {
    match n {
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    }
}

/// Confines the calling process to `rules`, all of them or none: every right of `rules.abi`
/// is required, so a kernel that cannot keep one is an error, never a quieter sandbox. Then
/// seccomp refuses what Landlock cannot see, and what `refuse` adds.
pub fn restrict(rules: &Reach, refuse: Refuse) -> Result<(), String> {
    let v = abi(rules.abi);
    let all = AccessFs::from_all(v);
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let read_exec = AccessFs::from_read(v);
    // Its own folders: everything but running what it wrote there.
    let write = all & !AccessFs::Execute;
    // Devices: read and write, no ioctl (no TIOCSTI on a terminal opened here).
    let device: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::WriteFile;
    let err = |e: &dyn std::fmt::Display| format!("landlock: {e}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| err(&e))?;
    if rules.abi >= NET_ABI {
        // Binding is handled and never granted: a judge listens on no port.
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err(&e))?;
    }
    if rules.abi >= SCOPE_ABI {
        ruleset = ruleset.scope(Scope::from_all(v)).map_err(|e| err(&e))?;
    }
    let mut created = ruleset.create().map_err(|e| err(&e))?;
    let groups = [
        (&rules.rx, read_exec),
        (&rules.ro, read),
        (&rules.rw, write),
        (&rules.devices, device),
    ];
    for (paths, access) in groups {
        for path in paths {
            // A path that is not there grants nothing.
            let Ok(fd) = PathFd::new(path) else { continue };
            let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
            let access = if is_dir {
                access
            } else {
                access & AccessFs::from_file(v)
            };
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| err(&e))?;
        }
    }
    if rules.abi >= NET_ABI {
        for &port in &rules.tcp {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(|e| err(&e))?;
        }
    }
    // Sets no_new_privs too: a set-uid program run inside gains nothing.
    created.restrict_self().map_err(|e| err(&e))?;
    seccomp(Refuse {
        unix: refuse.unix || rules.abi < UNIX_ABI,
        ..refuse
    })
}

/// What seccomp refuses a judge beyond what it refuses every judge, from where it runs and how
/// its share is held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refuse {
    /// Unix sockets: connecting to one by path is no file access Landlock sees before ABI 9.
    pub unix: bool,
    /// `setsid()`, where its CPU is weighed by niceness alone: a new session's autogroup
    /// starts at nice 0, level with its caller's.
    pub sessions: bool,
    /// `memfd_create`, shared anonymous mappings and System V shared memory, where
    /// `RLIMIT_DATA` bounds its memory: it counts none of them.
    pub shared_memory: bool,
    /// All of System V IPC where no IPC namespace is its own: segments, queues and semaphores
    /// are found by number, past Landlock (the caller's own, and other judges'), and outlive it.
    pub host_ipc: bool,
}

/// What seccomp refuses (errno EACCES), as Docker's default profile refuses what the kernel
/// does not namespace:
///
/// - every socket family but unix, TCP over IPv4 and IPv6, and netlink's routing (what a
///   resolver asks of its interfaces): no `AF_VSOCK` to the hypervisor, no packet socket;
/// - UDP and any other type but a stream over IPv4 and IPv6 (no datagram leaves a judge: the
///   proxy resolves names, and Landlock sees no UDP before ABI 10);
/// - a stream over IPv4 and IPv6 of any protocol but TCP: Landlock's ports hold TCP alone, so
///   an MPTCP or SCTP socket would reach any host and port;
/// - a send that connects (TCP Fast Open's `MSG_FASTOPEN`), past `connect()`;
/// - `listen()`: a judge serves nothing, and one without `bind()` (which Landlock refuses)
///   would get an ephemeral port on every interface of a machine whose network it shares;
/// - with `refuse.unix` (before ABI 9), unix sockets, since connecting to one by path
///   (ssh-agent, the D-Bus session bus, docker.sock) is not a file access Landlock sees
///   (`socketpair`, how node and Python talk to their own children, still works, and only for
///   unix sockets);
/// - with `refuse.sessions`, `setsid()` (EPERM, as for a process group leader);
/// - with `refuse.shared_memory`, `memfd_create` (ENOSYS, as on a kernel without it, so a
///   program falls back to its heap), `mmap` of shared anonymous memory, and `shmget`;
/// - with `refuse.host_ipc`, every System V IPC call;
/// - the kernel keyring (`keyctl`, `add_key`, `request_key`), which is not namespaced: a
///   caller's Kerberos tickets, notes passed between judges;
/// - `io_uring`, which could make a socket around this filter;
/// - on x86-64, every x32 call, whose numbers no rule here names.
///
/// Without `no_new_privs` (set by Landlock, else here) the kernel would refuse the filter.
pub fn seccomp(refuse: Refuse) -> Result<(), String> {
    let arch = if cfg!(target_arch = "x86_64") {
        TargetArch::x86_64
    } else if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else {
        return Err("seccomp: no filter for this architecture".into());
    };
    let mut refused = socket_calls(refuse)?;
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        refused.push((call, vec![]));
    }
    refused.extend(ipc_calls(refuse)?);
    // Refused with another errno than EACCES: each in a filter of its own.
    let mut others = Vec::new();
    if refuse.sessions {
        others.push((libc::SYS_setsid, libc::EPERM));
    }
    if refuse.shared_memory {
        others.push((libc::SYS_memfd_create, libc::ENOSYS));
    }
    let filter = |calls: Refusals, errno: i32| -> Result<BpfProgram, String> {
        SeccompFilter::new(
            calls.into_iter().collect(),
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(|e| seccomp_error(&e))?
        .try_into()
        .map_err(|e| seccomp_error(&e))
    };
    let mut programs = vec![filter(refused, libc::EACCES)?];
    for (call, errno) in others {
        programs.push(filter(vec![(call, vec![])], errno)?);
    }
    // SAFETY: prctl with plain integers.
    unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    for program in &programs {
        seccompiler::apply_filter(program).map_err(|e| seccomp_error(&e))?;
    }
    if cfg!(target_arch = "x86_64") {
        seccompiler::apply_filter(&no_x32()).map_err(|e| seccomp_error(&e))?;
    }
    Ok(())
}

/// System calls, each refused when one of its rules holds (none: always).
type Refusals = Vec<(i64, Vec<SeccompRule>)>;

fn seccomp_error(e: &dyn std::fmt::Display) -> String {
    format!("seccomp: {e}")
}

/// Argument `n` of a call, compared as a 32-bit word.
fn arg(n: u8, op: SeccompCmpOp, v: i32) -> Result<SeccompCondition, String> {
    SeccompCondition::new(n, SeccompCmpArgLen::Dword, op, v as u64).map_err(|e| seccomp_error(&e))
}

/// A rule that holds when all of `conditions` do.
fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| seccomp_error(&e))
}

/// The socket calls [`seccomp`] refuses: a family, type or protocol but those kept, a socket
/// pair but a unix one, `listen()`, and TCP Fast Open.
fn socket_calls(refuse: Refuse) -> Result<Refusals, String> {
    let mut socket = Vec::new();
    // A family of none of these.
    let kept = [
        libc::AF_UNIX,
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_NETLINK,
    ];
    socket.push(rule(
        kept.iter()
            .map(|&f| arg(0, SeccompCmpOp::Ne, f))
            .collect::<Result<_, _>>()?,
    )?);
    // Over IPv4 and IPv6, a type but a stream: its low bits (SOCK_NONBLOCK and SOCK_CLOEXEC
    // sit above them).
    for f in [libc::AF_INET, libc::AF_INET6] {
        for t in (0..16).filter(|&t| t != libc::SOCK_STREAM) {
            socket.push(rule(vec![
                arg(0, SeccompCmpOp::Eq, f)?,
                arg(1, SeccompCmpOp::MaskedEq(0xf), t)?,
            ])?);
        }
    }
    // Over IPv4 and IPv6, a protocol but TCP's (0 is the type's own: TCP for a stream).
    for f in [libc::AF_INET, libc::AF_INET6] {
        socket.push(rule(vec![
            arg(0, SeccompCmpOp::Eq, f)?,
            arg(2, SeccompCmpOp::Ne, 0)?,
            arg(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP)?,
        ])?);
    }
    socket.push(rule(vec![
        arg(0, SeccompCmpOp::Eq, libc::AF_NETLINK)?,
        arg(2, SeccompCmpOp::Ne, libc::NETLINK_ROUTE)?,
    ])?);
    if refuse.unix {
        socket.push(rule(vec![arg(0, SeccompCmpOp::Eq, libc::AF_UNIX)?])?);
    }
    let socketpair = vec![rule(vec![arg(0, SeccompCmpOp::Ne, libc::AF_UNIX)?])?];
    // TCP Fast Open connects inside a send, past `connect()` and the keeper of it.
    let fast_open = |flags: u8| -> Result<Vec<SeccompRule>, String> {
        let f = libc::MSG_FASTOPEN;
        Ok(vec![rule(vec![arg(
            flags,
            SeccompCmpOp::MaskedEq(f as u64),
            f,
        )?])?])
    };
    Ok(vec![
        (libc::SYS_socket, socket),
        (libc::SYS_socketpair, socketpair),
        (libc::SYS_listen, vec![]),
        (libc::SYS_sendto, fast_open(3)?),
        (libc::SYS_sendmsg, fast_open(2)?),
        (libc::SYS_sendmmsg, fast_open(3)?),
    ])
}

/// The shared memory and System V IPC calls [`seccomp`] refuses with EACCES, as `refuse` asks.
fn ipc_calls(refuse: Refuse) -> Result<Refusals, String> {
    let mut refused = Vec::new();
    if refuse.shared_memory || refuse.host_ipc {
        refused.push((libc::SYS_shmget, vec![]));
    }
    if refuse.shared_memory {
        // MAP_SHARED and MAP_SHARED_VALIDATE both hold its bit.
        let shared_anonymous = (libc::MAP_SHARED | libc::MAP_ANONYMOUS) as u64;
        let c = SeccompCondition::new(
            3,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(shared_anonymous),
            shared_anonymous,
        )
        .map_err(|e| seccomp_error(&e))?;
        refused.push((libc::SYS_mmap, vec![rule(vec![c])?]));
    }
    if refuse.host_ipc {
        for call in [
            libc::SYS_shmat,
            libc::SYS_shmctl,
            libc::SYS_shmdt,
            libc::SYS_msgget,
            libc::SYS_msgsnd,
            libc::SYS_msgrcv,
            libc::SYS_msgctl,
            libc::SYS_semget,
            libc::SYS_semop,
            libc::SYS_semtimedop,
            libc::SYS_semctl,
        ] {
            refused.push((call, vec![]));
        }
    }
    Ok(refused)
}

/// A filter refusing every x32 system call: x86-64's other ABI shares its architecture and
/// numbers its calls from 0x4000_0000, past every rule above (where the kernel has it at all).
fn no_x32() -> seccompiler::BpfProgram {
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20;
    const JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    const X32: u32 = 0x4000_0000;
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        // The call's number, at offset 0 of seccomp_data.
        op(LD_W_ABS, 0, 0, 0),
        op(JSET_K, 0, 1, X32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EACCES as u32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// A session keyring of its own for this process and what it runs: the caller's session keys
/// (a Kerberos ticket, a login's) are no longer its, not even for a lookup the kernel makes on
/// its behalf. Where the kernel has no keys, or the user's key quota is spent, there is nothing
/// to leave (and `keyctl` is refused anyway where the walls stand).
pub fn own_keyring() {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl(JOIN_SESSION_KEYRING, NULL) makes an anonymous session keyring.
    unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
}

/// A root caller's judge becomes `ids` (never root), with no capability and no group of root's.
pub fn become_unprivileged((uid, gid): (u32, u32)) -> Result<(), String> {
    drop_capabilities_bounding();
    // SAFETY: plain system calls with integers; an empty group list.
    let r = unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setresgid(gid, gid, gid) != 0
            || libc::setresuid(uid, uid, uid) != 0
        {
            -1
        } else {
            0
        }
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    drop_capabilities()
}

fn drop_capabilities_bounding() {
    use rustix::thread::{CapabilitySet, remove_capability_from_bounding_set};
    for bit in 0..64 {
        // Past the kernel's last capability: EINVAL, nothing to drop.
        let _ = remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << bit));
    }
}

/// A process run as root keeps CAP_SYS_PTRACE and CAP_SYS_ADMIN through Landlock, and with
/// either reads other processes' environments: a judge gets no capability at all.
pub fn drop_capabilities() -> Result<(), String> {
    use rustix::thread::{
        CapabilitySet, CapabilitySets, clear_ambient_capability_set, set_capabilities,
    };
    drop_capabilities_bounding();
    let _ = clear_ambient_capability_set();
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    set_capabilities(None, none).map_err(|e| format!("capabilities: {e}"))
}
