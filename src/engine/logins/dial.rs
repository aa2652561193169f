//! The connection a refresh is made on: to the token endpoint, or through the user's
//! `HTTPS_PROXY` (around it for `NO_PROXY`), every wait of it (the name's lookup, the connect,
//! the proxy's answer to `CONNECT`, then the TLS and HTTP over it) under the refresh's one
//! deadline and given up within a moment of a stop (a signal to the tool). Each wait is a slice
//! of [`SLICE`], the stop and the deadline looked at between two: an endpoint or a proxy that
//! sends a byte at a time holds the refresh past neither.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::engine::sandbox::egress::{Endpoint, Upstream};

/// How long one wait lasts before the stop and the deadline are looked at again.
const SLICE: Duration = Duration::from_millis(100);
/// How long an answer is still waited for after a stop, once the request is sent: the refresh
/// token may be spent by then, and only the answer holds the one that replaces it.
const PATIENCE: Duration = Duration::from_millis(700);
/// The largest head a proxy may answer `CONNECT` with.
const MAX_HEAD: usize = 16 << 10;

/// What the error of a refresh ended by a stop says.
pub const STOPPED: &str = "stopped by a signal";

/// Whether the tool is stopping (a signal, its reader gone, a failure of ours): a refresh and
/// the wait for its lock give up.
pub fn stopping() -> bool {
    crate::engine::lifecycle::stopped().is_some()
}

/// The deadline and the stop a refresh's waits keep.
#[derive(Clone, Copy)]
pub struct Bound<'a> {
    pub deadline: Instant,
    pub stop: &'a dyn Fn() -> bool,
}

impl Bound<'_> {
    /// Why a wait must end now, if it must: the stop, or the deadline.
    pub fn over(&self) -> Option<&'static str> {
        match ((self.stop)(), Instant::now() >= self.deadline) {
            (true, _) => Some(STOPPED),
            (false, true) => Some("out of time"),
            (false, false) => None,
        }
    }

    /// The next wait: a slice, or less where the deadline comes first.
    fn slice(&self) -> io::Result<Duration> {
        match self.over() {
            Some(why) => Err(ended(why)),
            // Never zero: a zero timeout is refused, not a wait.
            None => Ok(self
                .deadline
                .duration_since(Instant::now())
                .clamp(Duration::from_millis(1), SLICE)),
        }
    }
}

/// A wait ended by the stop or the deadline, not by the connection.
#[derive(Debug)]
struct WaitEnded(&'static str);

impl std::fmt::Display for WaitEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for WaitEnded {}

fn ended(why: &'static str) -> io::Error {
    let kind = match why {
        STOPPED => io::ErrorKind::Other,
        _ => io::ErrorKind::TimedOut,
    };
    io::Error::new(kind, WaitEnded(why))
}

/// Whether `e` is a wait the stop or the deadline ended: what was read before it is not all.
pub fn cut_short(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<WaitEnded>())
}

/// Whether an error is a slice that ran out (or a signal), not the connection's end.
fn waited(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

/// A connection whose every read and write waits in slices within its [`Bound`].
pub struct Bounded<'a> {
    tcp: TcpStream,
    bound: Bound<'a>,
    /// Once the request is sent, a stop lets the answer come for [`PATIENCE`] more.
    patient: bool,
    stop_seen: Option<Instant>,
}

impl Bounded<'_> {
    /// The request is sent: from now on a stop waits a moment for the answer.
    pub fn sent(&mut self) {
        self.patient = true;
    }

    /// `op` on the connection, a slice at a time, until it is done or the bound ends it.
    fn sliced<T>(
        &mut self,
        mut op: impl FnMut(&mut TcpStream, Duration) -> io::Result<T>,
    ) -> io::Result<T> {
        loop {
            let slice = self.slice()?;
            match op(&mut self.tcp, slice) {
                Err(e) if waited(&e) => continue,
                done => return done,
            }
        }
    }

    fn slice(&mut self) -> io::Result<Duration> {
        if self.patient && (self.bound.stop)() {
            let seen = *self.stop_seen.get_or_insert_with(Instant::now);
            let until = self.bound.deadline.min(seen + PATIENCE);
            let left = until.saturating_duration_since(Instant::now());
            return match left.is_zero() {
                true => Err(ended(STOPPED)),
                false => Ok(left.min(SLICE)),
            };
        }
        self.bound.slice()
    }
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.sliced(|tcp, slice| {
            tcp.set_read_timeout(Some(slice))?;
            tcp.read(buf)
        })
    }
}

impl Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sliced(|tcp, slice| {
            tcp.set_write_timeout(Some(slice))?;
            tcp.write(buf)
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

/// A connection to `target` within `bound`: through the proxy `env` names, unless the target
/// is on this machine or one its `NO_PROXY` names.
pub fn open<'a>(
    target: &Endpoint,
    env: &dyn Fn(&str) -> Option<String>,
    bound: Bound<'a>,
) -> io::Result<Bounded<'a>> {
    let proxy = Upstream::from_env(env);
    let proxy = proxy.filter(|p| !target.is_loopback() && !p.bypassed(&target.host));
    let (host, port) = match &proxy {
        Some(p) => (p.at().host, p.at().port),
        None => (target.host.clone(), target.port),
    };
    let tcp = connect(host, port, bound)?;
    let mut conn = Bounded {
        tcp,
        bound,
        patient: false,
        stop_seen: None,
    };
    if let Some(p) = proxy {
        tunnel(&p, &mut conn, target)?;
    }
    Ok(conn)
}

/// A connection to `host:port`: the name looked up and each address tried on a thread of its
/// own (a lookup cannot be cut short), waited for here in slices. A connection given up on is
/// closed when that thread ends, by the deadline at the latest.
fn connect(host: String, port: u16, bound: Bound) -> io::Result<TcpStream> {
    let (tx, rx) = mpsc::channel();
    let deadline = bound.deadline;
    std::thread::Builder::new()
        .name("panel-refresh-dial".into())
        .spawn(move || {
            let _ = tx.send(connect_by(&host, port, deadline));
        })?;
    loop {
        match rx.recv_timeout(bound.slice()?) {
            Ok(got) => return got,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(io::Error::other("the connecting thread ended"));
            }
        }
    }
}

fn connect_by(host: &str, port: u16, deadline: Instant) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in (host, port).to_socket_addrs()? {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ended("out of time"));
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Asks the user's proxy `proxy` on `conn` for a tunnel to `target`.
fn tunnel(proxy: &Upstream, conn: &mut Bounded, target: &Endpoint) -> io::Result<()> {
    conn.write_all(proxy.connect_request(target).as_bytes())?;
    // A byte at a time: what follows the head is the endpoint's, and none may be read.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte)? == 0 || head.len() > MAX_HEAD {
            return Err(io::Error::other(format!(
                "the proxy {} closed or sent no answer to CONNECT",
                proxy.at()
            )));
        }
        head.push(byte[0]);
    }
    match head.starts_with(b"HTTP/1.1 2") || head.starts_with(b"HTTP/1.0 2") {
        true => Ok(()),
        false => Err(io::Error::other(format!(
            "the proxy {} refused {target}",
            proxy.at()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A proxy that answers `CONNECT` a byte at a time is cut off at the deadline, and within
    /// a slice of a stop.
    #[test]
    fn a_proxy_dripping_its_answer_holds_nothing_past_the_deadline_or_a_stop() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for peer in listener.incoming() {
                let Ok(mut peer) = peer else { return };
                std::thread::spawn(move || {
                    let mut head = [0u8; 512];
                    let _ = peer.read(&mut head);
                    for b in b"HTTP/1.1 200 OK\r\nX-Pad: "
                        .iter()
                        .chain([b'a'].iter().cycle())
                    {
                        if peer.write_all(&[*b]).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                });
            }
        });
        let env = move |k: &str| (k == "HTTPS_PROXY").then(|| proxy.clone());
        let target = Endpoint::parse("platform.claude.com:443").unwrap();
        let t = Instant::now();
        let bound = Bound {
            deadline: t + Duration::from_millis(800),
            stop: &|| false,
        };
        let e = open(&target, &env, bound).err().expect("no tunnel");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(
            t.elapsed() < Duration::from_millis(1500),
            "{:?}",
            t.elapsed()
        );
        static STOP: AtomicBool = AtomicBool::new(false);
        std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            STOP.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let bound = Bound {
            deadline: t + Duration::from_secs(30),
            stop: &|| STOP.load(Ordering::SeqCst),
        };
        let e = open(&target, &env, bound).err().expect("no tunnel");
        assert_eq!(e.to_string(), STOPPED);
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }

    /// Once the request is sent, a stop still lets an answer that comes at once be read (the
    /// refresh token is spent by then), and one that does not is given up within a second.
    #[test]
    fn a_stop_after_the_request_waits_a_moment_for_the_answer() {
        for (answer_after, read) in [(300, true), (3000, false)] {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let target = Endpoint::parse(&listener.local_addr().unwrap().to_string()).unwrap();
            std::thread::spawn(move || {
                let (mut peer, _) = listener.accept().unwrap();
                std::thread::sleep(Duration::from_millis(answer_after));
                let _ = peer.write_all(b"answer");
                std::thread::sleep(Duration::from_secs(3));
            });
            let stop = AtomicBool::new(false);
            let bound = Bound {
                deadline: Instant::now() + Duration::from_secs(30),
                stop: &|| stop.load(Ordering::SeqCst),
            };
            let mut conn = open(&target, &|_| None, bound).unwrap();
            conn.sent();
            stop.store(true, Ordering::SeqCst);
            let t = Instant::now();
            let mut buf = [0u8; 6];
            let got = conn.read_exact(&mut buf);
            assert_eq!(got.is_ok(), read, "{answer_after} ms: {got:?}");
            assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        }
    }
}
