//! No live secret in a jail (docs/design.md §8): a judge holds a placeholder where its CLI reads
//! its credential, and its proxy, outside the walls, puts the live one in its place on the
//! model's own requests alone. For a row's model endpoints the proxy reads every request: over
//! TLS it speaks as the model's host with the run's [`authority`](super::authority), which the
//! judge was told to trust; it checks each request's method and path against the endpoint's, and
//! that the credential header holds the placeholder and nothing else, swaps in the live
//! credential, and sends it on over a TLS connection of its own, trusting what the user trusts.
//! Anything else is refused (403), logged, and the connection closed. Answers come back as
//! they are. The secrets reach the judge's supervisor through a pipe, never its command line.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustix::event::{PollFd, PollFlags, poll};
use serde::{Deserialize, Serialize};

use super::authority::{Issuer, Keys};
use super::endpoint::{Endpoint, Head};

/// What a judge's supervisor holds that the judge must not: the live credentials and the keys of
/// the run's authority.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Secrets {
    pub authority: Option<Keys>,
    pub swaps: Vec<Swap>,
}

/// One credential: the placeholder a judge holds, and the live one its model requests carry.
#[derive(Clone, Serialize, Deserialize)]
pub struct Swap {
    pub placeholder: String,
    pub live: String,
    /// The header its CLI sends the credential in (lower case); a scheme's word before it
    /// (`Bearer `) is kept as the judge wrote it.
    pub header: String,
    pub models: Vec<Model>,
}

impl std::fmt::Debug for Swap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Swap({}, {:?})", self.header, self.models)
    }
}

/// A model endpoint: where the credential may go, and for what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub at: Endpoint,
    /// Whether it is spoken to over TLS.
    pub tls: bool,
    pub methods: Vec<String>,
    /// Path prefixes, each whole segments (`/v1/messages` is not `/v1/messagesX`).
    pub paths: Vec<String>,
}

impl Secrets {
    /// The model endpoints at `target`, with their credentials.
    pub fn at(&self, target: &Endpoint) -> Vec<(&Swap, &Model)> {
        let each = self
            .swaps
            .iter()
            .flat_map(|s| s.models.iter().map(move |m| (s, m)));
        each.filter(|(_, m)| &m.at == target).collect()
    }

    /// Reads what the tool wrote to `file` (its end of a pipe).
    pub fn read_from(file: std::fs::File) -> Result<Secrets, String> {
        let mut text = Vec::new();
        file.take(MAX_SECRETS)
            .read_to_end(&mut text)
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&text).map_err(|e| e.to_string())
    }
}

/// A base URL's endpoint, whether it is TLS, and its path (without a trailing `/`).
pub fn base(url: &str) -> Result<(Endpoint, bool, String), String> {
    let tls = url.starts_with("https://");
    if !tls && !url.starts_with("http://") {
        return Err(format!("{}: not an http or https URL", shown(url)));
    }
    let at = super::endpoint::urls(url)
        .into_iter()
        .next()
        .ok_or_else(|| format!("{}: no host", shown(url)))?;
    let rest = url.split_once("://").map_or("", |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    Ok((at, tls, path.trim_end_matches('/').to_string()))
}

/// The most a supervisor reads of its secrets.
const MAX_SECRETS: u64 = 1 << 20;
/// The longest request head read.
const MAX_HEAD: usize = 64 << 10;
/// Bytes waiting for one side before the other is no longer read.
const BACKLOG: usize = 1 << 20;

/// Why a request is not sent on.
type WhyRefused = String;

/// The rules of one connection: the model endpoints at its target.
pub struct EndpointRules<'a> {
    pub target: &'a Endpoint,
    pub models: Vec<(&'a Swap, &'a Model)>,
}

impl EndpointRules<'_> {
    /// A request head as it goes on, the placeholder swapped for the live credential; or why
    /// it is refused.
    pub fn rewrite(&self, head: &[u8]) -> Result<(Vec<u8>, Framing), WhyRefused> {
        let Head {
            method,
            uri,
            version,
            lines,
        } = Head::parse(head)?;
        if version != "HTTP/1.1" && version != "HTTP/1.0" {
            return Err(format!("{}: not HTTP/1.1", shown(version)));
        }
        let path = origin_form(uri, self.target)?;
        let allowed = self.models.iter().find(|(_, m)| {
            m.methods.iter().any(|x| x == method) && m.paths.iter().any(|p| under(&path, p))
        });
        let Some((swap, _)) = allowed else {
            return Err(format!(
                "{} {} is not a model request of {}",
                shown(method),
                shown(&path),
                self.target
            ));
        };
        let mut out = format!("{method} {path} {version}\r\n");
        let mut framing = Framing::default();
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                return Err("a header line without a name".into());
            };
            if name.is_empty() || name.starts_with([' ', '\t']) || name.ends_with([' ', '\t']) {
                return Err("a folded or ill-named header".into());
            }
            let lower = name.to_ascii_lowercase();
            let value = value.trim_matches([' ', '\t']);
            match lower.as_str() {
                "proxy-connection" | "proxy-authorization" => continue,
                "host" => names(value, self.target)?,
                "upgrade" => framing.upgrade(value)?,
                "content-length" => framing.length(value)?,
                "transfer-encoding" => framing.chunked(value)?,
                _ => {}
            }
            if lower == swap.header {
                let Some(scheme) = scheme_of(value, &swap.placeholder) else {
                    return Err(format!(
                        "its {name} header holds something other than its placeholder"
                    ));
                };
                out.push_str(&format!("{name}: {scheme}{}\r\n", swap.live));
                continue;
            }
            out.push_str(line);
            out.push_str("\r\n");
        }
        out.push_str("\r\n");
        Ok((out.into_bytes(), framing))
    }
}

/// What comes before `placeholder` in a credential header's `value`: nothing, or one word of
/// a scheme and a space (`Bearer `, GitHub's `token `); `None` when the value is not the
/// placeholder so written.
fn scheme_of<'v>(value: &'v str, placeholder: &str) -> Option<&'v str> {
    let scheme = value.strip_suffix(placeholder)?;
    let word = scheme.strip_suffix(' ').unwrap_or(scheme);
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (scheme.is_empty() || (!word.is_empty() && plain && scheme.len() == word.len() + 1))
        .then_some(scheme)
}

/// Whether a request's `Host` (or its target's authority) names `target`, the host its
/// connection goes to, so that a server behind one address that answers many names never
/// reads the live credential as another's (any loopback name for a loopback endpoint).
fn names(authority: &str, target: &Endpoint) -> Result<(), WhyRefused> {
    let with_port = match authority.rsplit_once(':') {
        Some((_, p)) if !authority.ends_with(']') && p.parse::<u16>().is_ok() => {
            authority.to_string()
        }
        _ => format!("{authority}:{}", target.port),
    };
    let named = Endpoint::parse(&with_port).ok();
    let same = named.as_ref().is_some_and(|n| {
        n.port == target.port
            && (n.host == target.host || (n.is_loopback() && target.is_loopback()))
    });
    match same {
        true => Ok(()),
        false => Err(format!("{}: not {target}, where it goes", shown(authority))),
    }
}

/// The path of a request target (`/p?q` or `http://host/p?q`), refused where a server might
/// read it as another path than it looks (`..`, `//`, `\`, an encoded dot or slash).
fn origin_form(uri: &str, target: &Endpoint) -> Result<String, WhyRefused> {
    let path = match uri.split_once("://") {
        Some((scheme, rest))
            if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") =>
        {
            let at = rest.find('/').unwrap_or(rest.len());
            names(&rest[..at], target)?;
            rest.get(at..).filter(|p| !p.is_empty()).unwrap_or("/")
        }
        _ => uri,
    };
    let bare = path.split(['?', '#']).next().unwrap_or("");
    let lower = bare.to_ascii_lowercase();
    let odd = !bare.starts_with('/')
        || bare.contains("//")
        || bare.contains('\\')
        || bare.split('/').any(|s| s == "." || s == "..")
        || ["%2e", "%2f", "%5c", "%00"]
            .iter()
            .any(|e| lower.contains(e))
        || bare.chars().any(|c| c.is_control());
    match odd {
        true => Err(format!("{}: a path that is not plain", shown(path))),
        false => Ok(path.to_string()),
    }
}

/// Whether `path` (its query aside) is `prefix` or below it.
fn under(path: &str, prefix: &str) -> bool {
    let bare = path.split(['?', '#']).next().unwrap_or("");
    match bare.strip_prefix(prefix) {
        // Google's methods follow a colon: `/v1internal:generateContent`.
        Some(rest) => rest.is_empty() || rest.starts_with(['/', ':']) || prefix.ends_with('/'),
        None => false,
    }
}

fn shown(text: &str) -> String {
    let t = crate::records::printable::inline(text).into_owned();
    match t.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &t[..at]),
        None => t,
    }
}

/// How a request's body is framed: a length, chunks, or none.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Framing {
    length: Option<u64>,
    chunked: bool,
    /// A WebSocket asked for (codex's model stream): past the head, what the judge sends is
    /// carried as it is, and no credential is swapped in again.
    upgrade: bool,
}

impl Framing {
    fn upgrade(&mut self, value: &str) -> Result<(), WhyRefused> {
        if !value.eq_ignore_ascii_case("websocket") {
            return Err(format!(
                "{}: an upgrade that is not a WebSocket",
                shown(value)
            ));
        }
        self.upgrade = true;
        Ok(())
    }

    fn length(&mut self, value: &str) -> Result<(), WhyRefused> {
        let n: u64 = value
            .parse()
            .map_err(|_| "a Content-Length that is not a number")?;
        if self.length.is_some_and(|l| l != n) || self.chunked {
            return Err("a body framed two ways".into());
        }
        self.length = Some(n);
        Ok(())
    }

    fn chunked(&mut self, value: &str) -> Result<(), WhyRefused> {
        if !value.eq_ignore_ascii_case("chunked") || self.length.is_some() || self.chunked {
            return Err(format!(
                "{}: a body framed otherwise than in chunks",
                shown(value)
            ));
        }
        self.chunked = true;
        Ok(())
    }
}

/// Where the reading of a judge's requests stands.
#[derive(Debug)]
enum ReadStage {
    Head,
    /// Bytes of a body left.
    Body(u64),
    /// Past an upgrade: carried as it is, its placeholder never swapped again (whether or not
    /// the model agreed to the upgrade, nothing after it gets the live credential).
    Raw,
    /// A chunk's size line, read so far.
    Size(Vec<u8>),
    /// Bytes of a chunk's data left.
    Chunk(u64),
    /// The line that ends a chunk's data, read so far: CRLF and nothing else.
    ChunkEnd(Vec<u8>),
    /// A trailer line, read so far (the empty one ends the body).
    Trailer(Vec<u8>),
}

/// A judge's requests as they come, each head checked and rewritten, bodies passed on as framed.
pub struct Requests<'a> {
    rules: EndpointRules<'a>,
    state: ReadStage,
    head: Vec<u8>,
    /// A request with a body went on: the model's question, whose answer is awaited.
    pub asked: bool,
}

impl<'a> Requests<'a> {
    pub fn new(rules: EndpointRules<'a>) -> Requests<'a> {
        Requests {
            rules,
            state: ReadStage::Head,
            head: Vec::new(),
            asked: false,
        }
    }

    /// Reads `bytes` from the judge, writing what goes on to `out`; a refusal ends the
    /// connection.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) -> Result<(), WhyRefused> {
        while !bytes.is_empty() {
            match &mut self.state {
                ReadStage::Head => {
                    let before = self.head.len();
                    self.head.extend_from_slice(bytes);
                    // The end may straddle the bytes before.
                    let from = before.saturating_sub(3);
                    let Some(end) = memchr::memmem::find(&self.head[from..], b"\r\n\r\n") else {
                        if self.head.len() > MAX_HEAD {
                            return Err("a request head past 64 KiB".into());
                        }
                        return Ok(());
                    };
                    let end = from + end + 4;
                    let used = end - before;
                    let (head, framing) = self.rules.rewrite(&self.head[..end])?;
                    out.extend_from_slice(&head);
                    self.head.clear();
                    bytes = &bytes[used..];
                    self.asked |= framing.chunked || framing.length.is_some_and(|n| n > 0);
                    self.state = match (framing.chunked, framing.length) {
                        _ if framing.upgrade => ReadStage::Raw,
                        (true, _) => ReadStage::Size(Vec::new()),
                        (false, Some(n)) if n > 0 => ReadStage::Body(n),
                        _ => ReadStage::Head,
                    };
                }
                ReadStage::Raw => {
                    out.extend_from_slice(bytes);
                    self.asked = true;
                    return Ok(());
                }
                ReadStage::Body(left) | ReadStage::Chunk(left) => {
                    let n = (*left).min(bytes.len() as u64) as usize;
                    out.extend_from_slice(&bytes[..n]);
                    bytes = &bytes[n..];
                    *left -= n as u64;
                    if *left == 0 {
                        self.state = match self.state {
                            ReadStage::Body(_) => ReadStage::Head,
                            _ => ReadStage::ChunkEnd(Vec::new()),
                        };
                    }
                }
                ReadStage::Size(line) | ReadStage::ChunkEnd(line) | ReadStage::Trailer(line) => {
                    let nl = memchr::memchr(b'\n', bytes);
                    let take = nl.map_or(bytes.len(), |i| i + 1);
                    line.extend_from_slice(&bytes[..take]);
                    out.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if line.len() > 4096 {
                        return Err("a chunk line past 4 KiB".into());
                    }
                    if nl.is_none() {
                        return Ok(());
                    }
                    let text = String::from_utf8_lossy(line).into_owned();
                    self.state = match &self.state {
                        ReadStage::Size(_) => {
                            let size = text.trim_end().split(';').next().unwrap_or("").trim();
                            let n = u64::from_str_radix(size, 16)
                                .map_err(|_| "a chunk size that is not a number")?;
                            match n {
                                0 => ReadStage::Trailer(Vec::new()),
                                n => ReadStage::Chunk(n),
                            }
                        }
                        ReadStage::ChunkEnd(_) if text == "\r\n" => ReadStage::Size(Vec::new()),
                        ReadStage::ChunkEnd(_) => return Err("a chunk longer than its size".into()),
                        _ if text.trim_end().is_empty() => ReadStage::Head,
                        _ => ReadStage::Trailer(Vec::new()),
                    };
                }
            }
        }
        Ok(())
    }
}

/// One end of an intercepted connection: its socket, TLS where it speaks TLS, and the bytes
/// waiting to go to it.
struct Side {
    tcp: TcpStream,
    tls: Option<rustls::Connection>,
    out: Vec<u8>,
    /// Nothing more comes from it.
    ended: bool,
}

impl Side {
    fn new(tcp: TcpStream, tls: Option<rustls::Connection>) -> io::Result<Side> {
        tcp.set_nonblocking(true)?;
        Ok(Side {
            tcp,
            tls,
            out: Vec::new(),
            ended: false,
        })
    }

    /// Reads what has come, as plain bytes, into `into`.
    fn pull(&mut self, into: &mut Vec<u8>) -> io::Result<()> {
        let mut buf = [0u8; 16 << 10];
        match &mut self.tls {
            None => loop {
                match (&self.tcp).read(&mut buf) {
                    Ok(0) => {
                        self.ended = true;
                        return Ok(());
                    }
                    Ok(n) => into.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            },
            Some(tls) => {
                loop {
                    match tls.read_tls(&mut &self.tcp) {
                        Ok(0) => {
                            self.ended = true;
                            break;
                        }
                        Ok(_) => {
                            tls.process_new_packets().map_err(io::Error::other)?;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                loop {
                    match tls.reader().read(&mut buf) {
                        Ok(0) => {
                            self.ended = true;
                            return Ok(());
                        }
                        Ok(n) => into.extend_from_slice(&buf[..n]),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                        // Closed without close_notify: what came counts.
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            self.ended = true;
                            return Ok(());
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// Sends what waits, as far as the socket takes it now.
    fn push(&mut self) -> io::Result<()> {
        match &mut self.tls {
            None => {
                while !self.out.is_empty() {
                    match (&self.tcp).write(&self.out) {
                        Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                        Ok(n) => {
                            self.out.drain(..n);
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            }
            Some(tls) => {
                if !self.out.is_empty() {
                    let n = tls.writer().write(&self.out)?;
                    self.out.drain(..n);
                }
                while tls.wants_write() {
                    match tls.write_tls(&mut &self.tcp) {
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            }
        }
    }

    fn waiting(&self) -> bool {
        !self.out.is_empty() || self.tls.as_ref().is_some_and(|t| t.wants_write())
    }

    /// Says nothing more will be sent, once all that waits has gone.
    fn close(&mut self) {
        let _ = self.push();
        if let Some(tls) = &mut self.tls {
            tls.send_close_notify();
        }
        let _ = self.push();
        let _ = self.tcp.shutdown(std::net::Shutdown::Write);
    }
}

/// TLS for both ends of an intercepted connection: the judge's end speaks as `target`, ours
/// trusts what the user trusts.
pub struct Tls {
    pub issuer: Arc<Issuer>,
    pub client: Arc<rustls::ClientConfig>,
}

/// Carries one intercepted connection until either end closes: `first` (bytes the judge sent
/// already) and what it sends next read as requests by `requests`; answers copied back as
/// they come. A refusal is answered 403 and ends it; `Err` only on a failure of the sockets.
pub fn carry(
    client: TcpStream,
    upstream: TcpStream,
    target: &Endpoint,
    tls: Option<&Tls>,
    mut requests: Requests,
    first: &[u8],
    began: &Began,
) -> io::Result<Option<WhyRefused>> {
    let (server_side, client_side) = match tls {
        Some(t) => {
            let server = rustls::ServerConnection::new(t.issuer.server_config(&target.host))
                .map_err(io::Error::other)?;
            let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(io::Error::other)?;
            let ours = rustls::ClientConnection::new(Arc::clone(&t.client), name)
                .map_err(io::Error::other)?;
            (Some(server.into()), Some(ours.into()))
        }
        None => (None, None),
    };
    let mut judge = Side::new(client, server_side)?;
    let mut model = Side::new(upstream, client_side)?;
    let mut plain = Vec::new();
    match &mut judge.tls {
        // Over TLS, what came after the CONNECT is the judge's first handshake bytes.
        Some(t) => {
            let mut rest = first;
            // Read whole: a read of nothing would say the judge closed.
            while !rest.is_empty() {
                t.read_tls(&mut rest)?;
                t.process_new_packets().map_err(io::Error::other)?;
            }
        }
        None => plain.extend_from_slice(first),
    }
    let mut model_closed = false;
    loop {
        if let Err(why) = requests.feed(&plain, &mut model.out) {
            return refuse(judge, why);
        }
        plain.clear();
        model.push()?;
        judge.push()?;
        if judge.ended && !model_closed && !model.waiting() {
            model.close();
            model_closed = true;
        }
        if model.ended && !judge.waiting() {
            judge.close();
            return Ok(None);
        }
        let events = |s: &Side, other: &Side| {
            let mut e = PollFlags::empty();
            if !s.ended && other.out.len() < BACKLOG {
                e |= PollFlags::IN;
            }
            if s.waiting() {
                e |= PollFlags::OUT;
            }
            e
        };
        let (je, me) = (events(&judge, &model), events(&model, &judge));
        let mut fds = [PollFd::new(&judge.tcp, je), PollFd::new(&model.tcp, me)];
        match poll(&mut fds, None) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        if !judge.ended && model.out.len() < BACKLOG {
            judge.pull(&mut plain)?;
        }
        if !model.ended && judge.out.len() < BACKLOG {
            let before = judge.out.len();
            model.pull(&mut judge.out)?;
            if judge.out.len() > before && requests.asked {
                began.say();
            }
        }
    }
}

/// Tells the tool, once, that a model has begun to answer one of the judge's requests: one byte
/// on the pipe it gave the supervisor (`Policy.began`), which is then closed. Only a request
/// with a body (the model's question) counts, never a configuration fetch on the same host.
#[derive(Debug, Default)]
pub struct Began(std::sync::Mutex<Option<std::fs::File>>);

impl Began {
    /// Over `pipe`, kept from every process the supervisor starts.
    pub fn new(pipe: Option<std::fs::File>) -> Began {
        let pipe =
            pipe.filter(|p| rustix::io::fcntl_setfd(p, rustix::io::FdFlags::CLOEXEC).is_ok());
        Began(std::sync::Mutex::new(pipe))
    }

    pub fn say(&self) {
        let pipe = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut pipe) = pipe {
            let _ = pipe.write_all(b"1");
        }
    }
}

/// Answers 403 with why, and ends the connection.
fn refuse(mut judge: Side, why: WhyRefused) -> io::Result<Option<WhyRefused>> {
    judge.out = super::endpoint::refusal(403, &why);
    let _ = judge.tcp.set_nonblocking(false);
    judge.close();
    Ok(Some(why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sandbox::authority;
    use crate::engine::sandbox::egress::{Egress, Proxy, Swaps};
    use std::net::TcpListener;
    use std::path::Path;

    const PLACEHOLDER: &str = "sk-ant-oat01-panelplaceholder0123456789";
    const LIVE: &str = "sk-ant-oat01-LIVE-secret";

    fn swap_at(at: Endpoint, tls: bool) -> Swap {
        Swap {
            placeholder: PLACEHOLDER.into(),
            live: LIVE.into(),
            header: "authorization".into(),
            models: vec![Model {
                at,
                tls,
                methods: vec!["POST".into(), "GET".into()],
                paths: vec!["/v1/messages".into(), "/api/oauth/profile".into()],
            }],
        }
    }

    fn e(s: &str) -> Endpoint {
        Endpoint::parse(s).unwrap()
    }

    fn rewrite(head: &str) -> Result<String, String> {
        let swap = swap_at(e("api.anthropic.com:443"), true);
        let target = e("api.anthropic.com:443");
        let rules = EndpointRules {
            target: &target,
            models: vec![(&swap, &swap.models[0])],
        };
        rules
            .rewrite(head.as_bytes())
            .map(|(h, _)| String::from_utf8(h).unwrap())
    }

    /// Issue 46: "checks the request's method and path against the row's model endpoints,
    /// replaces the placeholder with the live credential … A request to another path, or
    /// carrying anything but the placeholder, is refused".
    #[test]
    fn the_placeholder_is_swapped_on_a_model_request_alone() {
        let ok = rewrite(&format!(
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: api.anthropic.com\r\nAuthorization: Bearer {PLACEHOLDER}\r\nContent-Length: 2\r\n\r\n"
        ))
        .unwrap();
        // Its own host, with its port or in any case, and in an absolute target.
        for host in ["API.anthropic.com:443", "api.anthropic.com"] {
            let head = format!("POST https://{host}/v1/messages HTTP/1.1\r\nHost: {host}\r\n\r\n");
            assert!(rewrite(&head).is_ok(), "{head}");
        }
        assert!(
            ok.contains(&format!("Authorization: Bearer {LIVE}\r\n")),
            "{ok}"
        );
        assert!(!ok.contains(PLACEHOLDER));
        // The scheme's name in any case, as HTTP reads it.
        let lower = rewrite(&format!(
            "GET /api/oauth/profile HTTP/1.1\r\nauthorization: bearer {PLACEHOLDER}\r\n\r\n"
        ));
        assert!(lower.unwrap().contains(LIVE));
        // GitHub's `token` scheme, as copilot sends it: the judge's scheme is kept.
        let token = rewrite(&format!(
            "GET /api/oauth/profile HTTP/1.1\r\nAuthorization: token {PLACEHOLDER}\r\n\r\n"
        ));
        assert!(
            token
                .unwrap()
                .contains(&format!("Authorization: token {LIVE}\r\n"))
        );
        // No credential at all: nothing to swap, sent as it is.
        assert!(rewrite("GET /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n").is_ok());
        let refused = [
            // Another path of the model's host, with the placeholder.
            format!("GET /v1/files HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"),
            format!("POST /v1/messagesX HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"),
            format!("DELETE /v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"),
            // A path a server may read as another.
            format!(
                "POST /v1/messages/../files HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
            format!(
                "POST /v1/messages/%2e%2e/files HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
            format!("POST //v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"),
            // Something other than the placeholder, or the placeholder and more.
            "POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer sk-ant-oat01-guess\r\n\r\n".into(),
            format!("POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}x\r\n\r\n"),
            format!("POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer x {PLACEHOLDER}\r\n\r\n"),
            format!("POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer  {PLACEHOLDER}\r\n\r\n"),
            // A body framed two ways (a request smuggled past the check), an upgrade.
            format!(
                "POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
            ),
            "POST /v1/messages HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n".into(),
            "GET /v1/messages HTTP/1.1\r\nUpgrade: h2c\r\n\r\n".into(),
            // Another name served at the same address, by its Host or its absolute target.
            format!(
                "POST /v1/messages HTTP/1.1\r\nHost: gist.github.com\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
            format!(
                "POST https://uploads.anthropic.com/v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
            format!(
                "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com:8443\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
            // A folded header hides a second one.
            format!(
                "POST /v1/messages HTTP/1.1\r\nX-A: 1\r\n Authorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
        ];
        for head in refused {
            assert!(rewrite(&head).is_err(), "{head:?}");
        }
    }

    /// Requests follow one another on a connection: each head is read wherever the bytes
    /// split, and a body (by length or in chunks) is never read as a head.
    #[test]
    fn requests_are_read_one_after_another_however_the_bytes_come() {
        let swap = swap_at(e("127.0.0.1:9"), false);
        let target = e("127.0.0.1:9");
        let smuggled =
            format!("GET /v1/files HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n");
        let chunked_body = format!("{:x}\r\n{smuggled}\r\n0\r\n\r\n", smuggled.len());
        let stream = format!(
            "POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\nContent-Length: {}\r\n\r\n{smuggled}POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\nTransfer-Encoding: chunked\r\n\r\n{chunked_body}GET /api/oauth/profile HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n",
            smuggled.len()
        );
        for step in [1, 7, stream.len()] {
            let mut requests = Requests::new(EndpointRules {
                target: &target,
                models: vec![(&swap, &swap.models[0])],
            });
            let mut out = Vec::new();
            for piece in stream.as_bytes().chunks(step) {
                requests.feed(piece, &mut out).unwrap();
            }
            let out = String::from_utf8(out).unwrap();
            assert_eq!(out.matches(LIVE).count(), 3, "{out}");
            // The bodies went on as they were: the placeholder in them is not a credential.
            assert_eq!(out.matches(PLACEHOLDER).count(), 2, "{out}");
        }
        // A chunk longer than its size is refused, not read as the next head.
        let mut requests = Requests::new(EndpointRules {
            target: &target,
            models: vec![(&swap, &swap.models[0])],
        });
        let bad = "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n";
        assert!(requests.feed(bad.as_bytes(), &mut Vec::new()).is_err());
    }

    /// Codex asks for its model stream as a WebSocket: the upgrade on a model path gets the
    /// live credential, and what follows is carried as it is, never swapped again.
    #[test]
    fn a_websocket_is_carried_past_its_swapped_upgrade_and_nothing_after_is_swapped() {
        let swap = swap_at(e("127.0.0.1:9"), false);
        let target = e("127.0.0.1:9");
        let mut requests = Requests::new(EndpointRules {
            target: &target,
            models: vec![(&swap, &swap.models[0])],
        });
        let later =
            format!("GET /v1/files HTTP/1.1\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n");
        let stream = format!(
            "GET /v1/messages HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n\x01\x05hello{later}"
        );
        let mut out = Vec::new();
        requests.feed(stream.as_bytes(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out.matches(LIVE).count(), 1, "{out}");
        assert!(out.ends_with(&format!("\x01\x05hello{later}")), "{out}");
        // An upgrade to anything else, or on another path, is refused.
        for head in [
            format!(
                "GET /v1/files HTTP/1.1\r\nUpgrade: websocket\r\nAuthorization: Bearer {PLACEHOLDER}\r\n\r\n"
            ),
            "GET /v1/messages HTTP/1.1\r\nUpgrade: h2c\r\n\r\n".to_string(),
        ] {
            let mut requests = Requests::new(EndpointRules {
                target: &target,
                models: vec![(&swap, &swap.models[0])],
            });
            assert!(
                requests.feed(head.as_bytes(), &mut Vec::new()).is_err(),
                "{head}"
            );
        }
    }

    /// Issue 47: the tool is told a model has begun to answer once a question (a request with
    /// a body, or a model stream's frames) went on; a fetch without a body asks nothing.
    #[test]
    fn a_request_with_a_body_or_a_streams_frames_is_a_question() {
        let swap = swap_at(e("127.0.0.1:9"), false);
        let target = e("127.0.0.1:9");
        let new = || {
            Requests::new(EndpointRules {
                target: &target,
                models: vec![(&swap, &swap.models[0])],
            })
        };
        let auth = format!("Authorization: Bearer {PLACEHOLDER}\r\n");
        let mut get = new();
        get.feed(
            format!("GET /v1/messages HTTP/1.1\r\n{auth}\r\n").as_bytes(),
            &mut Vec::new(),
        )
        .unwrap();
        assert!(!get.asked);
        let mut post = new();
        let body = format!("POST /v1/messages HTTP/1.1\r\n{auth}Content-Length: 2\r\n\r\n{{}}");
        post.feed(body.as_bytes(), &mut Vec::new()).unwrap();
        assert!(post.asked);
        let mut stream = new();
        let upgrade = format!(
            "GET /v1/messages HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{auth}\r\n"
        );
        stream.feed(upgrade.as_bytes(), &mut Vec::new()).unwrap();
        assert!(!stream.asked);
        stream.feed(b"\x01\x05hello", &mut Vec::new()).unwrap();
        assert!(stream.asked);
    }

    /// A TLS server as the model's host: answers each request with the credential it got;
    /// the credentials of its first connection's requests come back when it closes.
    fn model_server(keys: &authority::Keys) -> (u16, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = authority::Issuer::new(keys)
            .unwrap()
            .server_config("localhost");
        let t = std::thread::spawn(move || {
            let mut first = None;
            for tcp in listener.incoming().flatten() {
                let config = Arc::clone(&config);
                let t = std::thread::spawn(move || answer_all(tcp, config));
                if first.is_none() {
                    first = Some(t);
                    // The first connection's requests are what the caller waits for.
                    return first.unwrap().join().unwrap();
                }
            }
            Vec::new()
        });
        (port, t)
    }

    /// A TLS server as `model_server`, for many connections, never joined.
    fn model_server_for_ever(keys: &authority::Keys) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = authority::Issuer::new(keys)
            .unwrap()
            .server_config("localhost");
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let config = Arc::clone(&config);
                std::thread::spawn(move || answer_all(tcp, config));
            }
        });
        port
    }

    fn answer_all(tcp: TcpStream, config: Arc<rustls::ServerConfig>) -> Vec<String> {
        let conn = rustls::ServerConnection::new(config).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut seen = Vec::new();
        loop {
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match tls.read(&mut b) {
                    Ok(1) => head.push(b[0]),
                    _ => return seen,
                }
            }
            let text = String::from_utf8_lossy(&head).into_owned();
            let auth = text
                .lines()
                .find_map(|l| l.strip_prefix("Authorization: "))
                .unwrap_or("")
                .to_string();
            let len: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .map_or(0, |n| n.parse().unwrap());
            let mut body = vec![0u8; len];
            if tls.read_exact(&mut body).is_err() {
                return seen;
            }
            seen.push(auth.clone());
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{auth}",
                auth.len()
            );
            if tls
                .write_all(answer.as_bytes())
                .and_then(|_| tls.flush())
                .is_err()
            {
                return seen;
            }
        }
    }

    fn roots(pem: &str) -> rustls::RootCertStore {
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        roots
    }

    fn client_config(pem: &str) -> Arc<rustls::ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut c = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots(pem))
            .with_no_client_auth();
        c.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(c)
    }

    /// Issue 46: the judge's proxy "terminates TLS for the row's model hosts with a CA made
    /// for the run …, replaces the placeholder with the live credential, and forwards".
    #[test]
    fn over_tls_the_model_gets_the_live_credential_and_the_judge_never_sees_it() {
        let dir = tempfile::tempdir().unwrap();
        let (run, real) = (authority::make().unwrap(), authority::make().unwrap());
        let (port, server) = model_server(&real);
        let target = e(&format!("localhost:{port}"));
        let (at, mut began) = swapping_proxy(dir.path(), &run, &real, &target);
        let log = dir.path().join("egress.log");
        // The judge: CONNECT, then TLS trusting the run's authority alone.
        let tcp = TcpStream::connect(at).unwrap();
        (&tcp)
            .write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
            .unwrap();
        let mut got = [0u8; 39];
        (&tcp).read_exact(&mut got).unwrap();
        assert!(got.starts_with(b"HTTP/1.1 200"));
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(client_config(&run.cert), name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let ask = |tls: &mut rustls::StreamOwned<_, _>, path: &str| {
            let req = format!(
                "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {PLACEHOLDER}\r\nContent-Length: 2\r\n\r\n{{}}"
            );
            tls.write_all(req.as_bytes()).unwrap();
            let mut answer = vec![0u8; 4096];
            let n = tls.read(&mut answer).unwrap_or(0);
            String::from_utf8_lossy(&answer[..n]).into_owned()
        };
        let first = ask(&mut tls, "/v1/messages");
        assert!(first.ends_with(&format!("Bearer {LIVE}")), "{first}");
        // Issue 47: the model has begun to answer the judge's question: the tool is told, once.
        let mut said = Vec::new();
        began.read_to_end(&mut said).unwrap();
        assert_eq!(said, b"1");
        let second = ask(&mut tls, "/v1/messages?beta=true");
        assert!(second.ends_with(&format!("Bearer {LIVE}")), "{second}");
        // Another path is refused before the model sees it, and said in the log.
        let third = ask(&mut tls, "/v1/organizations/keys");
        assert!(third.starts_with("HTTP/1.1 403"), "{third}");
        drop(tls);
        let seen = server.join().unwrap();
        assert_eq!(seen, vec![format!("Bearer {LIVE}"); 2]);
        // Logged by the proxy's thread once the judge has its 403: a moment later under load.
        let logged = || crate::engine::sandbox::egress::refusals(&log).0;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while logged().is_empty() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let refused = logged();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].contains("POST /v1/organizations/keys is not a model request"),
            "{refused:?}"
        );
    }

    /// A judge's proxy set to swap at `target`, serving on a loopback port of its own.
    fn swapping_proxy(
        dir: &Path,
        run: &authority::Keys,
        real: &authority::Keys,
        target: &Endpoint,
    ) -> (std::net::SocketAddr, std::fs::File) {
        let (said, began) = std::io::pipe().unwrap();
        let egress = Egress {
            allow: vec![target.clone()],
            log: dir.join("egress.log"),
        };
        let swaps = Swaps {
            secrets: Secrets {
                authority: Some(run.clone()),
                swaps: vec![swap_at(target.clone(), true)],
            },
            tls: Some(Tls {
                issuer: authority::Issuer::new(run).unwrap(),
                client: client_config(&real.cert),
            }),
            began: Began::new(Some(std::fs::File::from(std::os::fd::OwnedFd::from(began)))),
        };
        let proxy = Proxy::swapping(&egress, None, Some(swaps));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for c in listener.incoming().flatten() {
                proxy.serve(c, crate::engine::sandbox::egress::Door::Proxy);
            }
        });
        (at, std::fs::File::from(std::os::fd::OwnedFd::from(said)))
    }

    /// A TLS connection to the model at `port`: through `proxy` (CONNECT, trusting the run's
    /// authority) or straight to it (trusting its own).
    fn connect(
        port: u16,
        proxy: Option<std::net::SocketAddr>,
        trust: &str,
    ) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
        let tcp = match proxy {
            Some(at) => {
                let tcp = TcpStream::connect(at).unwrap();
                (&tcp)
                    .write_all(format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").as_bytes())
                    .unwrap();
                let mut got = [0u8; 39];
                (&tcp).read_exact(&mut got).unwrap();
                tcp
            }
            None => TcpStream::connect(("127.0.0.1", port)).unwrap(),
        };
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(client_config(trust), name).unwrap();
        rustls::StreamOwned::new(conn, tcp)
    }

    fn one_request(tls: &mut rustls::StreamOwned<rustls::ClientConnection, TcpStream>) {
        let req = format!(
            "POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {PLACEHOLDER}\r\nContent-Length: 2\r\n\r\n{{}}"
        );
        tls.write_all(req.as_bytes()).unwrap();
        let mut answer = vec![0u8; 4096];
        let n = tls.read(&mut answer).unwrap();
        assert!(answer[..n].starts_with(b"HTTP/1.1 200"));
    }

    /// benches/swap.sh: what reading a judge's model requests costs it, against the same
    /// requests sent straight to the model: per request on one connection, and per new
    /// connection (its handshakes, ours twice).
    #[test]
    #[ignore = "a benchmark: benches/swap.sh"]
    fn bench_tls_termination() {
        let dir = tempfile::tempdir().unwrap();
        let (run, real) = (authority::make().unwrap(), authority::make().unwrap());
        let port = model_server_for_ever(&real);
        let target = e(&format!("localhost:{port}"));
        let (proxy, _) = swapping_proxy(dir.path(), &run, &real, &target);
        let (requests, connections) = (2000, 200);
        let per = |through: Option<std::net::SocketAddr>, trust: &str| {
            let mut tls = connect(port, through, trust);
            one_request(&mut tls);
            let t = std::time::Instant::now();
            for _ in 0..requests {
                one_request(&mut tls);
            }
            let request = t.elapsed().as_secs_f64() * 1e3 / requests as f64;
            let t = std::time::Instant::now();
            for _ in 0..connections {
                let mut tls = connect(port, through, trust);
                one_request(&mut tls);
            }
            let connection = t.elapsed().as_secs_f64() * 1e3 / connections as f64;
            (request, connection)
        };
        let (direct_req, direct_conn) = per(None, &real.cert);
        let (proxy_req, proxy_conn) = per(Some(proxy), &run.cert);
        println!(
            "request on an open connection: direct {direct_req:.3} ms, swapped {proxy_req:.3} ms (+{:.3} ms, {:.2}x)",
            proxy_req - direct_req,
            proxy_req / direct_req
        );
        println!(
            "new connection and its first request: direct {direct_conn:.3} ms, swapped {proxy_conn:.3} ms (+{:.3} ms, {:.2}x)",
            proxy_conn - direct_conn,
            proxy_conn / direct_conn
        );
    }
}
