//! The one door out (docs/design.md §8): an HTTP proxy beside each judge, in its supervisor and
//! outside its walls, that lets through only the hosts and ports of its model endpoint. A judge
//! reaches it through `HTTPS_PROXY` (a `CONNECT`, or a plain `http://` request), or, for an
//! endpoint on this machine's loopback, at that endpoint's own address inside the jail, which
//! the jail's first process hands over here. The proxy resolves names; a port named in the
//! prompt is never opened; each distinct refusal is logged for the judge's record, up to
//! [`LOG_LINES`] of them, then counted.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use super::endpoint::{Endpoint, urls};
use super::endpoint::{Head, base64, refusal};
use super::swap;

/// What a judge may reach, and where its refusals are written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Egress {
    pub allow: Vec<Endpoint>,
    /// The log of every connection the proxy refused (outside the judge's reach).
    pub log: std::path::PathBuf,
}

/// How a connection came to the proxy: at the proxy's own port (it speaks HTTP to a proxy),
/// or at a loopback endpoint's address (its bytes are for that endpoint).
#[derive(Clone, Debug, PartialEq)]
pub enum Door {
    Proxy,
    Direct(Endpoint),
}

/// Connections served at once; one more is refused.
const MAX_CONNECTIONS: usize = 64;
/// The longest request head read.
const MAX_HEAD: usize = 16 << 10;
/// How long a client has to send its request, and the proxy to connect onwards.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Distinct refusals logged; those past them are counted in one last line.
pub const LOG_LINES: usize = 100;
/// The longest refusal logged, in characters (a request line may be 16 KiB).
const LINE_CHARS: usize = 300;
/// Refusals a record's cause names; the rest are counted.
pub const SHOWN: usize = 5;
/// The most a log can hold, in bytes: each line's characters may be four bytes.
/// Its lines: the refusals, the judge's stop and the count of those left out.
pub const LOG_BYTES: u64 = (LOG_LINES as u64 + 2) * (LINE_CHARS as u64 * 4 + 2);

/// The proxy of one judge.
pub struct Proxy {
    allow: Vec<Endpoint>,
    log: Mutex<Log>,
    upstream: Option<Upstream>,
    active: AtomicUsize,
    /// Connections made and still carrying bytes: a CLI with one is working, whatever else
    /// it fails to reach.
    carrying: AtomicUsize,
    /// The last failure to reach an endpoint and how many times in a row it came.
    failing: Mutex<(String, u32)>,
    /// Set once the same failure came [`GIVE_UP`] times in a row: the judge is to be stopped.
    given_up: std::sync::OnceLock<String>,
    /// The credentials swapped in on the model's requests, and the TLS to read them.
    swaps: Option<Swaps>,
}

/// What a proxy swaps, and how it speaks TLS to read and send on the requests.
pub struct Swaps {
    pub secrets: swap::Secrets,
    pub tls: Option<swap::Tls>,
    /// Told once a model has begun to answer a request of the judge's.
    pub began: swap::Began,
}

/// How many times in a row a judge's CLI may fail to reach the same endpoint, no connection
/// made between nor carrying, before it is stopped: a CLI that retries a dead endpoint would
/// otherwise wait out its deadline in silence.
pub const GIVE_UP: u32 = 3;

/// The refusal log: each distinct line once, the first [`LOG_LINES`] of them.
struct Log {
    file: Option<File>,
    seen: std::collections::HashSet<String>,
    /// Refusals not logged: past the lines, or repeated.
    left_out: u64,
}

impl Proxy {
    /// A proxy for `egress`; `upstream` is the user's own proxy, if the judge would have had one.
    #[cfg(test)]
    pub fn new(egress: &Egress, upstream: Option<Upstream>) -> Arc<Proxy> {
        Proxy::swapping(egress, upstream, None)
    }

    /// A proxy that also swaps each placeholder of `swaps` for its live credential.
    pub fn swapping(
        egress: &Egress,
        upstream: Option<Upstream>,
        swaps: Option<Swaps>,
    ) -> Arc<Proxy> {
        Arc::new(Proxy {
            allow: egress.allow.clone(),
            log: Mutex::new(Log {
                file: open_log(&egress.log).ok(),
                seen: Default::default(),
                left_out: 0,
            }),
            upstream,
            active: AtomicUsize::new(0),
            carrying: AtomicUsize::new(0),
            failing: Mutex::new((String::new(), 0)),
            given_up: std::sync::OnceLock::new(),
            swaps,
        })
    }

    /// Why the judge is to be stopped now, once its CLI failed to reach the same endpoint
    /// [`GIVE_UP`] times in a row.
    pub fn given_up(&self) -> Option<&str> {
        self.given_up.get().map(String::as_str)
    }

    /// Once the judge has ended: how many refusals were left out of the log, in its last line.
    pub fn finish(&self) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let n = log.left_out;
        if let (Some(f), true) = (log.file.as_mut(), n > 0) {
            let _ = f.write_all(format!("{n} {LEFT_OUT}\n").as_bytes());
        }
    }

    /// Serves one connection on a thread of its own.
    pub fn serve(self: &Arc<Proxy>, client: TcpStream, door: Door) {
        if self.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            self.active.fetch_sub(1, Ordering::SeqCst);
            let _ = (&client).write_all(&refusal(503, "too many connections at once"));
            return;
        }
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new().spawn(move || {
            let _ = me.handle(client, door);
            me.active.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            self.active.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn handle(&self, client: TcpStream, door: Door) -> io::Result<()> {
        let (target, forward) = match door {
            Door::Direct(e) if self.swapped(&e) => {
                let upstream = self.reach(&client, &e)?;
                return self.intercept(client, upstream, &e, &[]);
            }
            Door::Direct(e) => (e, Vec::new()),
            Door::Proxy => {
                client.set_read_timeout(Some(HEAD_TIMEOUT))?;
                let (head, rest) = read_head(&client)?;
                match Request::parse(&head) {
                    Ok(req) => {
                        if !self.allowed(&req.target) {
                            self.note(&format!(
                                "refused {}: not an endpoint of this judge",
                                req.target
                            ));
                            let why = format!(
                                "{} is not an endpoint of this judge (--sandbox-allow {} grants it)",
                                req.target, req.target
                            );
                            return (&client).write_all(&refusal(403, &why));
                        }
                        let mut forward = req.onward;
                        forward.extend_from_slice(&rest);
                        client.set_read_timeout(None)?;
                        if self.swapped(&req.target) {
                            let upstream = self.reach(&client, &req.target)?;
                            let first = match req.tunnel {
                                true => {
                                    (&client).write_all(
                                        b"HTTP/1.1 200 Connection established\r\n\r\n",
                                    )?;
                                    rest
                                }
                                // A plain request is read again whole, as the judge sent it.
                                false => [head, rest].concat(),
                            };
                            return self.intercept(client, upstream, &req.target, &first);
                        }
                        if req.tunnel {
                            let upstream = self.reach(&client, &req.target)?;
                            (&client).write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
                            return self.carry(client, upstream, &rest);
                        }
                        (req.target, forward)
                    }
                    Err(why) => {
                        self.note(&format!("refused a request: {why}"));
                        return (&client).write_all(&refusal(400, &why));
                    }
                }
            }
        };
        let upstream = self.reach(&client, &target)?;
        self.carry(client, upstream, &forward)
    }

    /// Whether `target` is a model endpoint whose requests are read and a credential swapped in.
    pub fn swaps(&self, target: &Endpoint) -> bool {
        self.swapped(target)
    }

    fn swapped(&self, target: &Endpoint) -> bool {
        self.swaps
            .as_ref()
            .is_some_and(|s| !s.secrets.at(target).is_empty())
    }

    /// Carries a connection to a model endpoint request by request ([`swap::carry`]); a
    /// refusal is logged.
    fn intercept(
        &self,
        client: TcpStream,
        upstream: TcpStream,
        target: &Endpoint,
        first: &[u8],
    ) -> io::Result<()> {
        let swaps = self.swaps.as_ref().expect("a swapped endpoint");
        let models = swaps.secrets.at(target);
        let tls = match (models.iter().any(|(_, m)| m.tls), &swaps.tls) {
            (false, _) => None,
            (true, Some(t)) => Some(t),
            (true, None) => {
                let why = format!("{target}: no authority to read its requests with");
                self.note(&format!("{REFUSED} {why}"));
                return (&client).write_all(&refusal(502, &why));
            }
        };
        let rules = swap::EndpointRules { target, models };
        self.carrying.fetch_add(1, Ordering::SeqCst);
        let carried = swap::carry(
            client,
            upstream,
            target,
            tls,
            swap::Requests::new(rules),
            first,
            &swaps.began,
        );
        self.carrying.fetch_sub(1, Ordering::SeqCst);
        if let Ok(Some(why)) = &carried {
            self.note(&format!("{REFUSED} on {target}: {why}"));
        }
        carried.map(|_| ())
    }

    /// Splices a connection made, counted as carrying while it does.
    fn carry(&self, client: TcpStream, upstream: TcpStream, first: &[u8]) -> io::Result<()> {
        self.carrying.fetch_add(1, Ordering::SeqCst);
        let spliced = splice(client, upstream, first);
        self.carrying.fetch_sub(1, Ordering::SeqCst);
        spliced
    }

    /// A connection to `target`; one that cannot be made is answered 502 with why (a client
    /// told nothing retries until its deadline) and logged.
    fn reach(&self, client: &TcpStream, target: &Endpoint) -> io::Result<TcpStream> {
        let reached = self.connect(target);
        let line = reached
            .as_ref()
            .err()
            .map(|e| format!("{UNREACHED} {target}: {e}"));
        if let Some(line) = &line {
            self.note(line);
        }
        self.count(line);
        if let Err(e) = &reached {
            let _ = (&*client).write_all(&refusal(502, &format!("cannot reach {target}: {e}")));
        }
        reached
    }

    /// How a connection the judge made itself to a loopback endpoint ended (Landlock alone,
    /// where its supervisor makes them): counted as the proxy's own.
    pub fn direct(&self, target: std::net::SocketAddr, ended: Result<(), i32>) {
        let line = ended
            .err()
            .map(|e| format!("{UNREACHED} {target}: {}", io::Error::from_raw_os_error(e)));
        if let Some(line) = &line {
            self.note(line);
        }
        self.count(line);
    }

    /// Counts a failure to reach an endpoint (`None`: a connection made, which starts over);
    /// the same one [`GIVE_UP`] times in a row, no connection carrying meanwhile, gives up.
    fn count(&self, failure: Option<String>) {
        let mut failing = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        match failure {
            None => *failing = (String::new(), 0),
            Some(line) if failing.0 == line => failing.1 += 1,
            Some(line) => *failing = (line, 1),
        }
        // A connection still carrying bytes means the CLI works (a stream to its model), and
        // what else it fails to reach does not stop it.
        if failing.1 >= GIVE_UP && self.carrying.load(Ordering::SeqCst) == 0 {
            let stop = format!("{GAVE_UP} {} {GIVE_UP} times in a row", failing.0);
            if self.given_up.set(stop.clone()).is_ok() {
                self.note_always(&stop);
            }
        }
    }

    fn allowed(&self, target: &Endpoint) -> bool {
        self.allow.iter().any(|a| same(a, target))
    }

    /// A connection to `target`, through the user's own proxy when there is one and the target
    /// is not on this machine.
    fn connect(&self, target: &Endpoint) -> io::Result<TcpStream> {
        open(self.upstream.as_ref(), target)
    }

    /// Logs a refusal: a line seen before, or past [`LOG_LINES`], is counted instead.
    fn note(&self, line: &str) {
        self.log_line(line, false)
    }

    /// Logs a line even past [`LOG_LINES`] (the log has room for one more).
    fn note_always(&self, line: &str) {
        self.log_line(line, true)
    }

    fn log_line(&self, line: &str, always: bool) {
        let line = cut(&crate::records::printable::one_line(line), LINE_CHARS);
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let full = log.seen.len() >= LOG_LINES && !always;
        if full || !log.seen.insert(line.clone()) {
            log.left_out += 1;
            return;
        }
        if let Some(f) = log.file.as_mut() {
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// Whether `target` is the endpoint `allowed`: the same port and host, `localhost` being any
/// loopback address.
fn same(allowed: &Endpoint, target: &Endpoint) -> bool {
    allowed.port == target.port
        && (allowed.host == target.host
            || allowed.host == "localhost" && target.is_loopback() && target.host != "localhost"
            || target.host == "localhost" && allowed.is_loopback())
}

fn open_log(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// How the log begins the line of a connection outside the judge's reach.
const REFUSED: &str = "refused";

/// How the log begins the line of an endpoint the proxy could not reach.
pub const UNREACHED: &str = "could not reach";

/// How the log begins the line that says the judge was stopped for failing on one endpoint.
pub const GAVE_UP: &str = "stopped the judge:";

/// What the last line of a log says after its count of refusals left out.
const LEFT_OUT: &str = "more refused (repeats, or past the log's first lines)";

/// The refusals a proxy logged at `path` (and the endpoints it could not reach), for a record's
/// cause: the first [`SHOWN`] distinct ones, and how many more there were. Read once, at most the size a log can reach.
pub fn refusals(path: &Path) -> (Vec<String>, u64) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = Vec::new();
    if let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
    {
        let _ = f.take(LOG_BYTES).read_to_end(&mut text);
    }
    let mut seen = std::collections::HashSet::new();
    let (mut shown, mut more) = (Vec::new(), 0u64);
    for line in String::from_utf8_lossy(&text).lines() {
        let line = line.trim();
        if let Some(n) = line.strip_suffix(LEFT_OUT) {
            more += n.trim().parse::<u64>().unwrap_or(0);
        } else if line.starts_with(GAVE_UP) {
            // Why the judge was stopped comes first, whatever came before it.
            shown.insert(0, line.to_string());
            if shown.len() > SHOWN {
                shown.pop();
                more += 1;
            }
        } else if [REFUSED, UNREACHED].iter().any(|p| line.starts_with(p)) && seen.insert(line) {
            match shown.len() < SHOWN {
                true => shown.push(line.to_string()),
                false => more += 1,
            }
        }
    }
    (shown, more)
}

/// The first `chars` characters of `text`, with `…` when it was longer.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A connection to `target`, through the user's own proxy `upstream` when there is one and the
/// target is neither on this machine nor one its `NO_PROXY` names.
pub fn open(upstream: Option<&Upstream>, target: &Endpoint) -> io::Result<TcpStream> {
    match upstream {
        Some(up) if !target.is_loopback() && !up.bypassed(&target.host) => up.tunnel(target),
        _ => connect_to(&target.host, target.port),
    }
}

fn connect_to(host: &str, port: u16) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Reads a request head (through its blank line); the bytes read past it come back too.
fn read_head(mut s: &TcpStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = memchr::memmem::find(&buf, b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too long"));
        }
    }
}

/// A request to the proxy: where it goes, whether it is a tunnel, and for a plain request the
/// head to send on (in origin form, closing after one response).
struct Request {
    target: Endpoint,
    tunnel: bool,
    onward: Vec<u8>,
}

impl Request {
    fn parse(head: &[u8]) -> Result<Request, String> {
        let request = Head::parse(head)?;
        let (method, uri, version) = (request.method, request.uri, request.version);
        if method == "CONNECT" {
            let target = Endpoint::parse(uri)?;
            return Ok(Request {
                target,
                tunnel: true,
                onward: Vec::new(),
            });
        }
        let Some(after) = uri.strip_prefix("http://") else {
            return Err(format!(
                "{}: a proxy takes CONNECT or an http:// address",
                crate::records::printable::inline(uri)
            ));
        };
        let (authority, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, "/"),
        };
        let target = urls(&format!("http://{authority}/"))
            .into_iter()
            .next()
            .ok_or_else(|| format!("{}: no host", crate::records::printable::inline(uri)))?;
        let mut onward = format!("{method} {path} {version}\r\n");
        for line in request.lines.into_iter().filter(|l| !l.is_empty()) {
            let name = line.split(':').next().unwrap_or("").to_ascii_lowercase();
            if !matches!(
                name.as_str(),
                "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive"
            ) {
                onward.push_str(line);
                onward.push_str("\r\n");
            }
        }
        onward.push_str("Connection: close\r\n\r\n");
        Ok(Request {
            target,
            tunnel: false,
            onward: onward.into_bytes(),
        })
    }
}

/// Copies each way until both are closed; `first` goes to `upstream` before anything else.
fn splice(client: TcpStream, upstream: TcpStream, first: &[u8]) -> io::Result<()> {
    (&upstream).write_all(first)?;
    let (c2, u2) = (client.try_clone()?, upstream.try_clone()?);
    let back = std::thread::Builder::new().spawn(move || {
        let _ = io::copy(&mut &u2, &mut &c2);
        let _ = c2.shutdown(Shutdown::Write);
    });
    let _ = io::copy(&mut &client, &mut &upstream);
    let _ = upstream.shutdown(Shutdown::Write);
    if let Ok(t) = back {
        let _ = t.join();
    }
    Ok(())
}

/// The user's own proxy (their `HTTPS_PROXY`), which the judge's connections go on through.
#[derive(Clone, Debug)]
pub struct Upstream {
    host: String,
    port: u16,
    /// `Basic …` from the address's `user:password@`.
    auth: Option<String>,
    /// The user's `NO_PROXY`: hosts reached without it.
    bypass: Vec<String>,
}

impl Upstream {
    /// The proxy the user's environment names for HTTPS (`HTTPS_PROXY`, `https_proxy`,
    /// `ALL_PROXY`, `all_proxy`), when it is an `http://` one.
    pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Option<Upstream> {
        let url = ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
            .iter()
            .find_map(|k| get(k).filter(|v| !v.is_empty()))?;
        let rest = url.strip_prefix("http://").unwrap_or(&url);
        let authority = rest.split('/').next().unwrap_or(rest);
        let (auth, host_port) = match authority.rsplit_once('@') {
            Some((cred, hp)) => (Some(format!("Basic {}", base64(cred.as_bytes()))), hp),
            None => (None, authority),
        };
        let e = urls(&format!("http://{host_port}/")).into_iter().next()?;
        let bypass = ["NO_PROXY", "no_proxy"]
            .iter()
            .find_map(|k| get(k))
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        Some(Upstream {
            host: e.host,
            port: e.port,
            auth,
            bypass,
        })
    }

    /// Whether `host` is reached around it (its `NO_PROXY` names it, or a domain above it).
    pub fn bypassed(&self, host: &str) -> bool {
        self.bypass
            .iter()
            .any(|b| b == "*" || host == b || host.ends_with(&format!(".{b}")))
    }

    /// Where it listens.
    pub fn at(&self) -> Endpoint {
        Endpoint {
            host: self.host.clone(),
            port: self.port,
        }
    }

    /// The request that asks it for a tunnel to `target`.
    pub fn connect_request(&self, target: &Endpoint) -> String {
        let auth = self
            .auth
            .as_ref()
            .map_or(String::new(), |a| format!("Proxy-Authorization: {a}\r\n"));
        format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{auth}\r\n")
    }

    /// A tunnel to `target` through this proxy.
    fn tunnel(&self, target: &Endpoint) -> io::Result<TcpStream> {
        let s = connect_to(&self.host, self.port)?;
        (&s).write_all(self.connect_request(target).as_bytes())?;
        s.set_read_timeout(Some(HEAD_TIMEOUT))?;
        let (head, rest) = read_head(&s)?;
        s.set_read_timeout(None)?;
        let ok = head.starts_with(b"HTTP/1.1 2") || head.starts_with(b"HTTP/1.0 2");
        if !ok || !rest.is_empty() {
            return Err(io::Error::other(format!(
                "the proxy {}:{} refused {target}",
                self.host, self.port
            )));
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap()
    }

    #[test]
    fn an_endpoint_is_host_and_port_and_nothing_else() {
        assert_eq!(
            e("API.Anthropic.com:443").to_string(),
            "api.anthropic.com:443"
        );
        assert_eq!(e("[::1]:8080").host, "::1");
        assert_eq!(e("[::1]:8080").to_string(), "[::1]:8080");
        for bad in [
            "api.anthropic.com",
            "https://api.anthropic.com:443",
            "*:443",
            "host:0",
            "host:70000",
            ":443",
            "a b:1",
            "[nope]:1",
            "-x:1",
            "",
        ] {
            let err = Endpoint::parse(bad).unwrap_err();
            assert!(err.contains("want HOST:PORT"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_endpoints_of_the_urls_a_judge_was_given() {
        let got = |t: &str| urls(t).iter().map(|e| e.to_string()).collect::<Vec<_>>();
        assert_eq!(got("http://127.0.0.1:18080/v1"), ["127.0.0.1:18080"]);
        assert_eq!(got("BASE=https://api.example.com"), ["api.example.com:443"]);
        assert_eq!(got(r#"{"baseURL":"http://[::1]:9000"}"#), ["[::1]:9000"]);
        assert_eq!(
            got("http://u:p@h:81 and https://x:8443/"),
            ["h:81", "x:8443"]
        );
        assert!(got("no url: here file:///etc/x").is_empty());
    }

    #[test]
    fn localhost_is_any_loopback_address_and_nothing_else() {
        assert!(same(&e("localhost:80"), &e("127.0.0.1:80")));
        assert!(same(&e("127.0.0.1:80"), &e("localhost:80")));
        assert!(!same(&e("localhost:80"), &e("127.0.0.1:81")));
        assert!(!same(&e("localhost:80"), &e("10.0.0.1:80")));
        assert!(!same(&e("api.x.com:443"), &e("api.x.com.evil.com:443")));
    }

    #[test]
    fn a_plain_request_goes_on_in_origin_form_and_closes() {
        let head = b"GET http://localhost:9/v1/x?q=1 HTTP/1.1\r\nHost: localhost:9\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nX-A: b\r\n\r\n";
        let r = Request::parse(head).unwrap();
        assert_eq!(r.target, e("localhost:9"));
        assert!(!r.tunnel);
        assert_eq!(
            String::from_utf8(r.onward).unwrap(),
            "GET /v1/x?q=1 HTTP/1.1\r\nHost: localhost:9\r\nX-A: b\r\nConnection: close\r\n\r\n"
        );
        let r = Request::parse(b"CONNECT api.x.com:443 HTTP/1.1\r\n\r\n").unwrap();
        assert!(r.tunnel);
        assert!(Request::parse(b"GET https://x/ HTTP/1.1\r\n\r\n").is_err());
        assert!(Request::parse(b"CONNECT api.x.com HTTP/1.1\r\n\r\n").is_err());
    }

    /// Issue 36, finding 8: "a judge that sends 1,000 refused requests and no answer makes a
    /// 15 MB record, a 15 MB `egress.log` and a 15 MB retry prompt; the refusals are compared
    /// with each other in quadratic time".
    #[test]
    fn refusals_are_logged_once_each_up_to_a_bound_and_counted_past_it() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("judge.egress");
        let proxy = Proxy::new(
            &Egress {
                allow: vec![],
                log: log.clone(),
            },
            None,
        );
        let long = "x".repeat(2 << 10);
        for i in 0..3_000 {
            proxy.note(&format!(
                "refused h{}.{long}:443: not an endpoint of this judge",
                i % 1_000
            ));
        }
        proxy.note("refused h0.example:443: not an endpoint of this judge");
        proxy.finish();
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().count(), LOG_LINES + 1);
        assert!(text.len() < 100 << 10, "{}", text.len());
        let last = text.lines().last().unwrap();
        assert_eq!(last, format!("{} {LEFT_OUT}", 3_001 - LOG_LINES));
        let (shown, more) = refusals(&log);
        assert_eq!(shown.len(), SHOWN);
        assert!(shown[0].starts_with("refused h0.xxx") && shown[0].ends_with('…'));
        assert_eq!(more, 3_001 - SHOWN as u64);
        // One refusal is said as it is.
        let one = t.path().join("one.egress");
        let proxy = Proxy::new(
            &Egress {
                allow: vec![],
                log: one.clone(),
            },
            None,
        );
        proxy.note("refused a.example:443: not an endpoint of this judge");
        proxy.finish();
        assert_eq!(
            std::fs::read_to_string(&one).unwrap(),
            "refused a.example:443: not an endpoint of this judge\n"
        );
        assert_eq!(refusals(&one).1, 0);
    }

    /// Issue 45: "the proxy could not reach it and closed the connection without a status
    /// line; codex retried (\"Proxy connection failed: HTTP CONNECT response missing status
    /// line\") until the 300 s deadline. `egress.log` was empty". An endpoint the proxy cannot
    /// reach is answered 502 with why, and logged for the record's cause.
    #[test]
    fn an_endpoint_it_cannot_reach_is_answered_502_and_logged() {
        use std::io::Read;
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("judge.egress");
        // A port nothing listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let target = format!("127.0.0.1:{port}");
        let proxy = Proxy::new(
            &Egress {
                allow: vec![e(&target)],
                log: log.clone(),
            },
            None,
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (ours, _) = listener.accept().unwrap();
        proxy.serve(ours, Door::Proxy);
        client
            .write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
            .unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut answer = String::new();
        let _ = client.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"),
            "{answer:?}"
        );
        assert!(
            answer.contains(&format!("cannot reach {target}")),
            "{answer:?}"
        );
        proxy.finish();
        let (shown, _) = refusals(&log);
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert!(
            shown[0].starts_with(&format!("could not reach {target}: ")),
            "{shown:?}"
        );
    }

    /// Issue 45: "a judge whose CLI keeps failing on the same refusal is stopped early": the
    /// same failure [`GIVE_UP`] times in a row gives up; a connection made between starts over.
    #[test]
    fn the_same_failure_in_a_row_gives_up_and_a_connection_made_starts_over() {
        use std::io::Read;
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("judge.egress");
        let live = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let up = format!("127.0.0.1:{}", live.local_addr().unwrap().port());
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let down = format!("127.0.0.1:{}", dead.local_addr().unwrap().port());
        drop(dead);
        let proxy = Proxy::new(
            &Egress {
                allow: vec![e(&up), e(&down)],
                log: log.clone(),
            },
            None,
        );
        // The live endpoint takes its one connection and closes it.
        std::thread::spawn(move || drop(live.accept()));
        let front = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let ask = |target: &str| {
            let mut client = TcpStream::connect(front.local_addr().unwrap()).unwrap();
            let (ours, _) = front.accept().unwrap();
            let p = Arc::clone(&proxy);
            let served = std::thread::spawn(move || p.handle(ours, Door::Proxy));
            client
                .write_all(format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes())
                .unwrap();
            let mut head = [0u8; 12];
            let _ = client.read_exact(&mut head);
            drop(client);
            let _ = served.join();
            String::from_utf8_lossy(&head).into_owned()
        };
        for _ in 0..GIVE_UP - 1 {
            assert_eq!(ask(&down), "HTTP/1.1 502");
        }
        assert_eq!(ask(&up), "HTTP/1.1 200");
        for _ in 0..GIVE_UP - 1 {
            ask(&down);
        }
        assert_eq!(
            proxy.given_up(),
            None,
            "a connection made between starts over"
        );
        // A connection still carrying (a stream to the model) holds it off, however many fail.
        proxy.carrying.fetch_add(1, Ordering::SeqCst);
        ask(&down);
        ask(&down);
        assert_eq!(proxy.given_up(), None, "a connection carrying holds it off");
        proxy.carrying.fetch_sub(1, Ordering::SeqCst);
        ask(&down);
        let why = proxy.given_up().expect("given up");
        assert!(
            why.starts_with(&format!("{GAVE_UP} {UNREACHED} {down}: "))
                && why.ends_with(" 3 times in a row"),
            "{why}"
        );
        proxy.finish();
        assert_eq!(refusals(&log).0[0], why, "why it stopped comes first");
    }

    #[test]
    fn the_users_proxy_is_read_from_its_variables() {
        let env = |k: &str| match k {
            "https_proxy" => Some("http://me:pw@corp:3128/".to_string()),
            "NO_PROXY" => Some("internal.example, .corp".to_string()),
            _ => None,
        };
        let up = Upstream::from_env(&env).unwrap();
        assert_eq!((up.host.as_str(), up.port), ("corp", 3128));
        assert_eq!(up.auth.as_deref(), Some("Basic bWU6cHc="));
        assert!(up.bypassed("internal.example"));
        assert!(up.bypassed("a.corp"));
        assert!(!up.bypassed("api.anthropic.com"));
        assert!(!up.bypassed("notinternal.example"));
        // As curl reads them: any case, empty entries and a leading dot left out.
        let env = |k: &str| match k {
            "https_proxy" => Some("http://Proxy.example:3128/".to_string()),
            "NO_PROXY" => Some(" .internal, localhost,,".to_string()),
            _ => None,
        };
        let up = Upstream::from_env(&env).unwrap();
        assert_eq!(up.at().to_string(), "proxy.example:3128");
        assert!(up.bypassed("auth.internal") && up.bypassed("internal"));
        assert!(!up.bypassed("notinternal"));
        assert!(Upstream::from_env(&|_| None).is_none());
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
