//! A stand-in model server on 127.0.0.1 for tests that run real coding-agent CLIs.
//!
//! It speaks enough of four wire protocols to finish a judge's turn: Anthropic Messages,
//! OpenAI Responses, OpenAI Chat Completions and the Gemini API, each streaming (SSE) or
//! not. It answers the verdict the way the real services would: by calling the schema tool
//! when the request offers one, as text otherwise. A [`Mode`] makes it misbehave instead
//! (prose, fenced JSON, 429s, 500s, no answer at all), set per server or per request by a
//! `MOCK-MODE:<name>` marker in the prompt. Every request is logged for assertions.
//!
//! A [`Script`] makes it a hostile model: before it answers, it asks the CLI for tool calls
//! (in the request's own wire format, several calls in one turn), one turn after another, and
//! reads what comes back; every tool result it receives is logged ([`MockServer::tool_results`]).
//! Its call ids (`toolu_pnl_N`, `call_pnl_N`) come back in the history, which is how it knows
//! which turn it is on. [`MockServer::set_script_when`] plays it only on requests whose text
//! holds a marker.
//!
//! [`MockServer::answer_when`] sets the answer per request: the first rule whose markers are all
//! in the request's text gives the object, which goes through the offered tool whose schema has
//! the object's keys (a review, a grouping, votes, decisions), or as text when none is offered.
//!
//! ```ignore
//! let server = MockServer::start();
//! // point the CLI at server.url() (+ "/v1" for OpenAI-style clients)
//! server.set_mode(Mode::Prose);
//! let first = &server.requests()[0];
//! assert_eq!(first.tools, ["StructuredOutput"]);
//! ```
//!
//! Its answers' usage is what the provider would report: input tokens estimated as bytes / 4
//! of the prompt, and cache reads and writes by the provider's rules (Anthropic Messages,
//! OpenAI Responses and Chat Completions), per credential (mockserver/cache.rs); each logged
//! request keeps it ([`Logged::usage`]). [`MockServer::hold_when`] keeps answers from
//! beginning, to show a fan-out sent at once reads no cache.

#![allow(dead_code)]

mod cache;

pub use cache::{Caches, MIN_CACHEABLE, Usage};

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The verdict the server gives unless told otherwise.
pub fn default_answer() -> Value {
    json!({"verdict": "breaks", "reason": "IndexError on empty list", "confidence": 0.9})
}

/// Prose that holds no JSON object: what a model that ignores the format says.
pub const PROSE: &str = "I looked at the claim. It breaks, because indexing an empty list raises.";

/// Seconds sent in `retry-after` for [`Mode::RateLimit`]; short so clients that wait stay fast.
pub const RATE_LIMIT_RETRY_AFTER: u64 = 1;
/// Seconds until a [`Mode::UsageLimit`] quota "resets"; long, as a real usage cap is.
pub const USAGE_LIMIT_RESET: u64 = 3600;

/// How the server answers a model request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The verdict: a call of the schema tool when one is offered, else compact JSON text.
    Ok,
    /// The verdict JSON inside a ```json fence, as text; never calls a tool.
    Fence,
    /// Plain prose without JSON; never calls a tool, so a CLI that nudges gets prose again.
    Prose,
    /// HTTP 429, the API's rate-limit error body, a short `retry-after`.
    RateLimit,
    /// HTTP 429 with the API's quota / usage-cap body (not worth retrying soon).
    UsageLimit,
    /// HTTP 500 with the API's internal-error body.
    Error500,
    /// Reads the request and never answers (until the client leaves or the server stops).
    Hang,
    /// Like `Ok`, with `"verdict":"holds"`.
    Holds,
    /// Like `Ok`, with `"verdict":"breaks"`.
    Breaks,
    /// HTTP 404 with the API's own "no such model, or no access to it" body.
    ModelRefused,
}

impl Mode {
    pub const ALL: [Mode; 10] = [
        Mode::Ok,
        Mode::Fence,
        Mode::Prose,
        Mode::RateLimit,
        Mode::UsageLimit,
        Mode::Error500,
        Mode::Hang,
        Mode::Holds,
        Mode::Breaks,
        Mode::ModelRefused,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Ok => "ok",
            Mode::Fence => "fence",
            Mode::Prose => "prose",
            Mode::RateLimit => "ratelimit",
            Mode::UsageLimit => "usagelimit",
            Mode::Error500 => "error500",
            Mode::Hang => "hang",
            Mode::Holds => "holds",
            Mode::Breaks => "breaks",
            Mode::ModelRefused => "modelrefused",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The text to put in a prompt so that the server uses this mode for that request.
    pub fn marker(self) -> String {
        format!("{MARKER}{}", self.name())
    }
}

const MARKER: &str = "MOCK-MODE:";

/// Which API a request was routed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    AnthropicCountTokens,
    Responses,
    Chat,
    Gemini,
    GeminiCountTokens,
    Models,
    Unknown,
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    /// Path with the query string.
    pub path: String,
    /// Lower-cased names; values of auth headers are replaced by `<redacted>`.
    pub headers: Vec<(String, String)>,
    /// The parsed body (`Null` when empty or not JSON).
    pub body: Value,
    pub body_bytes: usize,
    pub api: Api,
    pub stream: bool,
    /// Names of the tools offered, in request order.
    pub tools: Vec<String>,
    /// The offered tool whose schema has a `verdict` property, if any.
    pub schema_tool: Option<String>,
    /// A response format was asked for (`text.format`, `response_format`, `output_format`,
    /// `generationConfig.responseSchema`...).
    pub schema_format: bool,
    /// The mode used for this request (server mode or prompt marker).
    pub mode: Mode,
    /// What the server did: `tool`, `text`, `error <status>`, `hang` or `-`.
    pub reply: String,
    /// The usage the answer reported (a generation that was answered, else `None`).
    pub usage: Option<Usage>,
}

impl Logged {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Bytes the body carries beyond the prompt: the body size minus the prompt's length as
    /// a JSON string (escaped, without quotes). `None` if no string in the body contains it.
    pub fn bytes_beyond_prompt(&self, prompt: &str) -> Option<usize> {
        let mut found = false;
        walk_strings(&self.body, &mut |s| found |= s.contains(prompt));
        if !found {
            return None;
        }
        let escaped = serde_json::to_string(prompt).unwrap().len() - 2;
        Some(self.body_bytes.saturating_sub(escaped))
    }

    /// The longest string in the body that contains `marker`: the prompt as the CLI sent
    /// it (with whatever the CLI wrapped around it in the same string).
    pub fn prompt_containing(&self, marker: &str) -> Option<String> {
        longest_string_with(&self.body, marker)
    }

    /// Like [`Logged::bytes_beyond_prompt`], for a prompt known only by a marker in it.
    pub fn bytes_beyond_marked(&self, marker: &str) -> Option<usize> {
        self.bytes_beyond_prompt(&self.prompt_containing(marker)?)
    }

    /// Is this a request for a model answer (not a token count or a model list)?
    pub fn is_generation(&self) -> bool {
        matches!(
            self.api,
            Api::Anthropic | Api::Responses | Api::Chat | Api::Gemini
        )
    }
}

struct Shared {
    mode: Mutex<Mode>,
    answer: Mutex<Value>,
    /// Answers by the markers a request's text holds, the first match winning.
    rules: Mutex<Vec<(Vec<String>, Value)>>,
    script: Mutex<Option<Scripted>>,
    /// The script plays only on requests whose text holds this marker.
    script_when: Mutex<Option<String>>,
    refused: Mutex<Vec<String>>,
    /// `(marker, mode)`: the next generation request holding the marker plays the mode, once.
    once: Mutex<Vec<(String, Mode)>>,
    log: Mutex<Vec<Logged>>,
    stop: AtomicBool,
    ids: AtomicU64,
    conns: Mutex<Vec<JoinHandle<()>>>,
    /// Set by [`MockServer::speak_tls`]: a TLS client is answered with it.
    tls: Mutex<Option<Arc<rustls::ServerConfig>>>,
    /// Asked first about every request: its reply, when it has one (the stand-in token
    /// endpoints and a login's own calls, see tests/tokens.rs).
    front: Mutex<Option<Front>>,
    /// The providers' prompt caches (mockserver/cache.rs).
    caches: Mutex<Caches>,
    /// Answers to requests whose text holds one of these wait to begin until released.
    held: Mutex<Vec<String>>,
}

/// A handler asked before the model routes.
pub type Front = Arc<dyn Fn(&Request) -> Option<Reply> + Send + Sync>;

/// The server. Dropping it stops it and joins its threads.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl MockServer {
    pub fn start() -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            mode: Mutex::new(Mode::Ok),
            answer: Mutex::new(default_answer()),
            rules: Mutex::new(Vec::new()),
            script: Mutex::new(None),
            script_when: Mutex::new(None),
            refused: Mutex::new(Vec::new()),
            once: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            ids: AtomicU64::new(0),
            conns: Mutex::new(Vec::new()),
            tls: Mutex::new(None),
            front: Mutex::new(None),
            caches: Mutex::new(Caches::default()),
            held: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let acceptor = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let s2 = s.clone();
                let handle = std::thread::spawn(move || serve(stream, &s2));
                let mut conns = s.conns.lock().unwrap();
                conns.retain(|h| !h.is_finished());
                conns.push(handle);
            }
        });
        MockServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// Answers TLS clients too, on the same port, with certificates from `ca`.
    pub fn speak_tls(&self, ca: &Arc<crate::tls::TestCa>) {
        *self.shared.tls.lock().unwrap() = Some(ca.server_config());
    }

    /// Asks `front` about every request before the model routes.
    pub fn set_front(&self, front: Front) {
        *self.shared.front.lock().unwrap() = Some(front);
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash, no `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.shared.mode.lock().unwrap() = mode;
    }

    /// The verdict object to answer with (in modes `Ok`, `Fence`).
    pub fn set_answer(&self, answer: Value) {
        *self.shared.answer.lock().unwrap() = answer;
    }

    /// Answers `answer` (in modes `Ok`, `Fence`) to every request whose text holds each of
    /// `markers`; rules are tried in the order they were set, before the server's own answer.
    pub fn answer_when(&self, markers: &[&str], answer: Value) {
        let markers = markers.iter().map(|m| m.to_string()).collect();
        self.shared.rules.lock().unwrap().push((markers, answer));
    }

    /// Plays `script` only on the generation requests whose text holds `marker`; the others
    /// are answered as if no script were set.
    pub fn set_script_when(&self, marker: &str, script: Script) {
        *self.shared.script_when.lock().unwrap() = Some(marker.to_string());
        self.set_script(script);
    }

    /// Refuses every generation request for a model whose name holds `needle`
    /// ([`Mode::ModelRefused`]), whatever the mode.
    pub fn refuse_model(&self, needle: &str) {
        self.shared.refused.lock().unwrap().push(needle.to_string());
    }

    /// The next generation request whose text holds `marker` plays `mode`; those after it are
    /// answered as usual (a judge's first answer fails, its retry answers).
    pub fn mode_once(&self, marker: &str, mode: Mode) {
        self.shared
            .once
            .lock()
            .unwrap()
            .push((marker.to_string(), mode));
    }

    /// Plays `script` on every generation request from now on.
    pub fn set_script(&self, script: Script) {
        *self.shared.script.lock().unwrap() = Some(Scripted {
            script,
            turns: None,
            issued: Vec::new(),
            results: Vec::new(),
        });
    }

    /// The calls the script asked for, in order.
    pub fn issued(&self) -> Vec<Issued> {
        let s = self.shared.script.lock().unwrap();
        s.as_ref().map(|s| s.issued.clone()).unwrap_or_default()
    }

    /// Every tool result the CLIs sent back for the script's calls, once each, in arrival order.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        let s = self.shared.script.lock().unwrap();
        s.as_ref().map(|s| s.results.clone()).unwrap_or_default()
    }

    pub fn requests(&self) -> Vec<Logged> {
        self.shared.log.lock().unwrap().clone()
    }

    /// The logged requests that asked for a model answer.
    pub fn generations(&self) -> Vec<Logged> {
        self.requests()
            .into_iter()
            .filter(Logged::is_generation)
            .collect()
    }

    pub fn clear_log(&self) {
        self.shared.log.lock().unwrap().clear();
    }

    /// Answers to requests whose text holds `marker` are decided (and their cache writes
    /// made) but do not begin until [`MockServer::release`]: what they write is not readable
    /// meanwhile, as with a provider whose first token has not come.
    pub fn hold_when(&self, marker: &str) {
        self.shared.held.lock().unwrap().push(marker.to_string());
    }

    /// Lets held answers begin, and no longer holds any.
    pub fn release(&self) {
        self.shared.held.lock().unwrap().clear();
    }

    /// Moves the prompt caches' clock on by `by`, expiring entries as if that time had passed.
    pub fn advance_caches(&self, by: Duration) {
        self.shared.caches.lock().unwrap().advance(by);
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept so the loop sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        let conns = std::mem::take(&mut *self.shared.conns.lock().unwrap());
        for c in conns {
            let _ = c.join();
        }
    }
}

/// How often a connection thread looks at the stop flag while it waits.
const POLL: Duration = Duration::from_millis(50);

/// What a connection runs over: TCP, or TLS over TCP.
trait Stream: Read + Write {}

impl<T: Read + Write> Stream for T {}

/// A connection's read side, buffered by hand so a read timeout never loses bytes.
struct Conn<'a> {
    stream: Box<dyn Stream + 'a>,
    buf: Vec<u8>,
    shared: &'a Shared,
}

impl Conn<'_> {
    /// Reads more bytes; false at end of stream or when the server stops.
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16384];
        loop {
            if self.shared.stop.load(Ordering::SeqCst) {
                return false;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return true;
                }
                Err(e) if is_timeout(&e) => continue,
                Err(_) => return false,
            }
        }
    }

    fn line(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..i].to_vec();
                self.buf.drain(..i + 2);
                return Some(line);
            }
            if !self.fill() {
                return None;
            }
        }
    }

    fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill() {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

pub struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(conn: &mut Conn) -> Option<Request> {
    let mut first = conn.line()?;
    // Tolerates stray blank lines between keep-alive requests.
    while first.is_empty() {
        first = conn.line()?;
    }
    let first = String::from_utf8_lossy(&first).into_owned();
    let mut parts = first.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let line = conn.line()?;
        if line.is_empty() {
            break;
        }
        let line = String::from_utf8_lossy(&line).into_owned();
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut req = Request {
        method,
        target,
        headers,
        body: Vec::new(),
    };
    if req
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        let _ = conn.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            let size_line = String::from_utf8_lossy(&conn.line()?).into_owned();
            let size = usize::from_str_radix(size_line.split(';').next()?.trim(), 16).ok()?;
            if size == 0 {
                // Trailers end with an empty line.
                while !conn.line()?.is_empty() {}
                break;
            }
            let data = conn.take(size)?;
            req.body.extend_from_slice(&data);
            conn.line()?;
        }
    } else if let Some(n) = req.header("content-length") {
        let n: usize = n.parse().ok()?;
        req.body = conn.take(n)?;
    }
    if req
        .header("content-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("zstd"))
    {
        let mut plain = Vec::new();
        let mut d = ruzstd::decoding::StreamingDecoder::new(req.body.as_slice()).ok()?;
        d.read_to_end(&mut plain).ok()?;
        req.body = plain;
    }
    Some(req)
}

fn serve(stream: TcpStream, shared: &Shared) {
    if shared.stop.load(Ordering::SeqCst) {
        return;
    }
    let _ = stream.set_read_timeout(Some(POLL));
    let _ = stream.set_nodelay(true);
    // A TLS client's first byte is a handshake record's (22): it is answered over TLS, with a
    // certificate for the host it names, from the test's authority.
    let mut first = [0u8; 1];
    let tls = loop {
        match stream.peek(&mut first) {
            Ok(0) => return,
            Ok(_) => break first[0] == 22,
            Err(e) if is_timeout(&e) && !shared.stop.load(Ordering::SeqCst) => continue,
            Err(_) => return,
        }
    };
    let config = shared.tls.lock().unwrap().clone();
    let stream: Box<dyn Stream> = match (tls, config) {
        (true, Some(config)) => {
            let Ok(server) = rustls::ServerConnection::new(config) else {
                return;
            };
            Box::new(rustls::StreamOwned::new(server, stream))
        }
        (true, None) => return,
        (false, _) => Box::new(stream),
    };
    let mut conn = Conn {
        stream,
        buf: Vec::new(),
        shared,
    };
    while let Some(req) = read_request(&mut conn) {
        let close = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let reply = respond(&req, shared);
        let (writer, held) = PENDING.take().unwrap_or_default();
        if let Some(marker) = held {
            while shared.held.lock().unwrap().contains(&marker)
                && !shared.stop.load(Ordering::SeqCst)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        // The answer's first byte is out: what its request wrote to a cache is readable.
        let mut begun = || {
            if let Some(id) = writer {
                shared.caches.lock().unwrap().begun(id);
            }
        };
        let keep = match reply {
            Reply::Json(status, body, extra) => {
                write_json(&mut *conn.stream, status, &body, &extra, &mut begun).is_ok()
            }
            Reply::Sse(events) => {
                let _ = write_sse(&mut *conn.stream, &events, &mut begun);
                false
            }
            Reply::Hang => {
                hang(&mut conn);
                false
            }
        };
        if !keep || close {
            break;
        }
    }
}

/// Holds the connection open without answering until the client goes or the server stops.
fn hang(conn: &mut Conn) {
    while conn.fill() {
        conn.buf.clear();
    }
}

pub enum Reply {
    Json(u16, Value, Vec<(String, String)>),
    /// SSE events `(event name, data)`; sent with `Connection: close`.
    Sse(Vec<(Option<String>, String)>),
    Hang,
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}

thread_local! {
    /// Set by [`respond`] for the connection's thread: the request whose cache writes wait for
    /// its answer to begin, and the marker that holds the answer, if one does.
    static PENDING: Cell<Option<(Option<u64>, Option<String>)>> = const { Cell::new(None) };
}

fn write_json(
    out: &mut dyn Write,
    status: u16,
    body: &Value,
    extra: &[(String, String)],
    begun: &mut dyn FnMut(),
) -> io::Result<()> {
    let data = serde_json::to_vec(body).unwrap();
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        reason(status),
        data.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.flush()?;
    begun();
    out.write_all(&data)?;
    out.flush()
}

fn write_sse(
    out: &mut dyn Write,
    events: &[(Option<String>, String)],
    begun: &mut dyn FnMut(),
) -> io::Result<()> {
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
    )?;
    out.flush()?;
    begun();
    for (event, data) in events {
        let mut s = String::new();
        if let Some(e) = event {
            s.push_str(&format!("event: {e}\n"));
        }
        s.push_str(&format!("data: {data}\n\n"));
        out.write_all(s.as_bytes())?;
        out.flush()?;
    }
    Ok(())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn walk_strings(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().for_each(|x| walk_strings(x, f)),
        Value::Object(o) => o.values().for_each(|x| walk_strings(x, f)),
        _ => {}
    }
}

/// The mode named by the first `MOCK-MODE:` marker in the body's strings.
fn marker_mode(body: &Value) -> Option<Mode> {
    let mut found = None;
    walk_strings(body, &mut |s| {
        if found.is_some() {
            return;
        }
        if let Some(i) = s.find(MARKER) {
            let rest = &s[i + MARKER.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            found = Mode::from_name(&name.to_ascii_lowercase());
        }
    });
    found
}

/// The longest string in a request body that holds `marker` (the prompt, for a marker of it).
pub fn longest_string_with(body: &Value, marker: &str) -> Option<String> {
    let mut best: Option<String> = None;
    walk_strings(body, &mut |s| {
        if s.contains(marker) && best.as_ref().is_none_or(|b| s.len() > b.len()) {
            best = Some(s.to_string());
        }
    });
    best
}

/// Does any string in the body hold `marker`?
fn holds(body: &Value, marker: &str) -> bool {
    let mut found = false;
    walk_strings(body, &mut |s| found |= s.contains(marker));
    found
}

/// The answer of the first rule whose markers the body holds.
fn ruled_answer(body: &Value, rules: &[(Vec<String>, Value)]) -> Option<Value> {
    rules
        .iter()
        .find(|(markers, _)| markers.iter().all(|m| holds(body, m)))
        .map(|(_, answer)| answer.clone())
}

/// Does the schema (or one a level down, where a CLI wraps it) have every key of `answer`?
fn fits(schema: &Value, answer: &Value) -> bool {
    let (Some(props), Some(keys)) = (
        schema.get("properties").and_then(Value::as_object),
        answer.as_object(),
    ) else {
        return false;
    };
    keys.keys().all(|k| props.contains_key(k)) || props.values().any(|v| fits(v, answer))
}

fn has_verdict(schema: &Value) -> bool {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return false;
    };
    // Some CLIs wrap the caller's schema one level down. A review's schema has a decision.
    props.contains_key("verdict")
        || props.contains_key("decision")
        || props.values().any(has_verdict)
}

/// `(name, schema)` of every tool offered, whatever the API's shape: in `tools`, and in the
/// Responses input items that offer more (codex's `additional_tools`), namespaces flattened.
fn tool_list(body: &Value) -> Vec<(String, Value)> {
    let mut offered: Vec<&Value> = Vec::new();
    let items = body
        .get("input")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let more = items.filter(|i| i.get("type").and_then(Value::as_str) == Some("additional_tools"));
    for list in std::iter::once(body).chain(more) {
        let tools = list
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for t in tools {
            match t.get("tools").and_then(Value::as_array) {
                Some(inner) if str_of(t, "type") == "namespace" => offered.extend(inner),
                _ => offered.push(t),
            }
        }
    }
    let mut out = Vec::new();
    for t in offered {
        if let Some(decls) = t.get("functionDeclarations").and_then(Value::as_array) {
            for d in decls {
                let schema = d
                    .get("parameters")
                    .or_else(|| d.get("parametersJsonSchema"))
                    .cloned()
                    .unwrap_or(Value::Null);
                out.push((str_of(d, "name"), schema));
            }
            continue;
        }
        let f = t.get("function").filter(|f| f.is_object()).unwrap_or(t);
        let schema = ["input_schema", "parameters", "inputSchema"]
            .iter()
            .find_map(|k| f.get(*k))
            .cloned()
            .unwrap_or(Value::Null);
        let name = f
            .get("name")
            .or_else(|| t.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        out.push((name, schema));
    }
    out
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn has_tool_result(v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            let ty = o.get("type").and_then(Value::as_str);
            matches!(ty, Some("tool_result" | "function_call_output"))
                || o.get("role").and_then(Value::as_str) == Some("tool")
                || o.contains_key("functionResponse")
                || o.values().any(has_tool_result)
        }
        Value::Array(a) => a.iter().any(has_tool_result),
        _ => false,
    }
}

/// A tool result for the server's own schema-tool call (`…mock…` ids).
fn has_mock_result(body: &Value) -> bool {
    let mut found = false;
    walk_keyed(body, &mut |k, s| {
        found |= matches!(k, "tool_use_id" | "call_id" | "tool_call_id") && s.contains("mock");
    });
    found
}

fn asks_format(body: &Value) -> bool {
    let text_format = body.pointer("/text/format/type").and_then(Value::as_str);
    matches!(text_format, Some("json_schema" | "json_object"))
        || body.get("response_format").is_some()
        || body.get("output_format").is_some()
        || body.pointer("/output_config/format").is_some()
        || body.pointer("/generationConfig/responseSchema").is_some()
        || body
            .pointer("/generationConfig/responseJsonSchema")
            .is_some()
}

fn route(method: &str, path: &str) -> Api {
    if method == "GET" {
        return if path.ends_with("/models") {
            Api::Models
        } else {
            Api::Unknown
        };
    }
    if path.ends_with("/messages/count_tokens") {
        Api::AnthropicCountTokens
    } else if path.ends_with("/messages") {
        Api::Anthropic
    } else if path.ends_with("/responses") {
        Api::Responses
    } else if path.ends_with("/chat/completions") {
        Api::Chat
    } else if path.ends_with(":countTokens") {
        Api::GeminiCountTokens
    } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
        Api::Gemini
    } else {
        Api::Unknown
    }
}

/// One tool call a hostile model asks for.
#[derive(Clone, Debug)]
pub struct ScriptCall {
    /// What the call tries (the test's name for it, e.g. `home/Read`).
    pub label: String,
    pub tool: String,
    pub args: Value,
}

/// The planner of a [`Script`]: turns of calls from the tools offered and the first request.
pub type Plan = Box<dyn Fn(&[(String, Value)], &Value) -> Vec<Vec<ScriptCall>> + Send>;

/// Turns of tool calls, planned from the tools the first request offers (`(name, schema)`) and
/// its body, and what to say when they are done (the verdict when `None`).
pub struct Script {
    pub plan: Plan,
    pub final_text: Option<String>,
    /// `(needle, text)`: once the calls are done, a request whose body holds a needle is
    /// answered with its text instead of `final_text` (the first that matches).
    pub when: Vec<(String, String)>,
}

/// A call the script sent: its number (in its id), turn, and whether the tool was offered.
#[derive(Clone, Debug)]
pub struct Issued {
    pub n: usize,
    pub turn: usize,
    pub call: ScriptCall,
    pub offered: bool,
}

/// A tool result as it came back for one of the script's calls.
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The call's number.
    pub n: usize,
    /// The result's text: the string, or every string in it joined by newlines.
    pub text: String,
    /// Marked as an error (`is_error`, a Gemini `error`).
    pub error: bool,
}

struct Scripted {
    script: Script,
    /// Planned at the first request that offers tools or asks for an answer.
    turns: Option<Vec<Vec<ScriptCall>>>,
    issued: Vec<Issued>,
    results: Vec<ToolResult>,
}

/// The number in one of the script's call ids (`toolu_pnl_3`, `call_pnl_3`, `fc_pnl_3`).
fn script_id(s: &str) -> Option<usize> {
    let (_, n) = s.split_once("_pnl_")?;
    n.parse().ok()
}

/// Every `(call number, text, error)` of a tool result in a request, whatever its API.
fn results_in(v: &Value, out: &mut Vec<(usize, String, bool)>) {
    let text_of = |v: &Value| match v {
        Value::String(s) => s.clone(),
        // Parts (`[{"type": "text", "text": …}]`) or a response object: its strings but types.
        other => {
            let mut parts = Vec::new();
            walk_keyed(other, &mut |k, s| {
                if k != "type" {
                    parts.push(s.to_string())
                }
            });
            parts.join("\n")
        }
    };
    match v {
        Value::Object(o) => {
            let ty = o.get("type").and_then(Value::as_str).unwrap_or_default();
            let found = if ty == "tool_result" {
                Some(("tool_use_id", "content"))
            } else if ty.ends_with("call_output") {
                Some(("call_id", "output"))
            } else if o.get("role").and_then(Value::as_str) == Some("tool") {
                Some(("tool_call_id", "content"))
            } else {
                None
            };
            if let Some((id, body)) = found
                && let Some(n) = o.get(id).and_then(Value::as_str).and_then(script_id)
            {
                let error = o.get("is_error").and_then(Value::as_bool) == Some(true);
                out.push((n, text_of(o.get(body).unwrap_or(&Value::Null)), error));
            }
            if let Some(f) = o.get("functionResponse")
                && let Some(n) = f.get("id").and_then(Value::as_str).and_then(script_id)
            {
                let response = f.get("response").unwrap_or(&Value::Null);
                out.push((n, text_of(response), response.get("error").is_some()));
            }
            o.values().for_each(|x| results_in(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| results_in(x, out)),
        _ => {}
    }
}

/// The script's call numbers a request's history holds.
fn script_ids_in(v: &Value) -> std::collections::BTreeSet<usize> {
    let mut seen = std::collections::BTreeSet::new();
    walk_keyed(v, &mut |k, s| {
        if matches!(k, "id" | "call_id" | "tool_use_id" | "tool_call_id")
            && let Some(n) = script_id(s)
        {
            seen.insert(n);
        }
    });
    seen
}

fn walk_keyed(v: &Value, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match x {
                    Value::String(s) => f(k, s),
                    other => walk_keyed(other, f),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk_keyed(x, f)),
        _ => {}
    }
}

/// A side request a CLI makes for its own ends (Gemini's loop check, Qwen's next-speaker
/// check): it asks for a JSON object of a schema that is not the judge's and offers no tools.
/// A model answers it as asked, never with a tool call.
fn side_schema(body: &Value) -> Option<&Value> {
    if body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
    {
        return None;
    }
    let schema = body
        .pointer("/generationConfig/responseJsonSchema")
        .or_else(|| body.pointer("/generationConfig/responseSchema"))
        .or_else(|| body.pointer("/response_format/json_schema/schema"))?;
    (!has_verdict(schema)).then_some(schema)
}

/// The plainest object a schema allows: the first enum value, "none", 0, false, empty lists.
fn plain_object(schema: &Value) -> Value {
    if let Some(v) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return v.clone();
    }
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object");
    match ty.to_ascii_lowercase().as_str() {
        "object" => {
            let props = schema.get("properties").and_then(Value::as_object);
            Value::Object(
                props
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), plain_object(v)))
                    .collect(),
            )
        }
        "string" => json!("none"),
        "number" | "integer" => json!(0),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => Value::Null,
    }
}

impl Scripted {
    /// The calls for this request, or `None` when the script is done. Logs the results it
    /// carries.
    fn next(&mut self, body: &Value, tools: &[(String, Value)]) -> Option<Vec<Call>> {
        let mut found = Vec::new();
        results_in(body, &mut found);
        for (n, text, error) in found {
            if !self.results.iter().any(|r| r.n == n) {
                self.results.push(ToolResult { n, text, error });
            }
        }
        let turns = self
            .turns
            .get_or_insert_with(|| (self.script.plan)(tools, body));
        // The turn: the first one whose first call is not in the history yet. A CLI that
        // dropped a turn's calls silently gets the next one rather than the same again.
        let seen = script_ids_in(body);
        let mut first = 0;
        let mut turn = None;
        for (t, calls) in turns.iter().enumerate() {
            let sent = self.issued.iter().filter(|i| i.turn == t).count();
            if !seen.contains(&first) && sent < calls.len() * 2 {
                turn = Some(t);
                break;
            }
            first += calls.len();
        }
        let t = turn?;
        let calls = &turns[t];
        let mut out = Vec::new();
        for (i, c) in calls.iter().enumerate() {
            let n = first + i;
            self.issued.push(Issued {
                n,
                turn: t,
                call: c.clone(),
                offered: tools.iter().any(|(name, _)| *name == c.tool),
            });
            out.push(Call {
                name: c.tool.clone(),
                args: c.args.clone(),
                tag: format!("pnl_{n}"),
            });
        }
        Some(out)
    }
}

/// One tool call in an answer; `tag` makes its ids (`toolu_TAG`, `call_TAG`, `fc_TAG`).
struct Call {
    name: String,
    args: Value,
    tag: String,
}

/// What to answer, decided once per request.
enum Answer {
    Tools(Vec<Call>),
    Text(String),
}

fn respond(req: &Request, shared: &Shared) -> Reply {
    let front = shared.front.lock().unwrap().clone();
    if let Some(reply) = front.and_then(|f| f(req)) {
        return reply;
    }
    if let Some(reply) = code_assist(req, shared) {
        return reply;
    }
    let id = shared.ids.fetch_add(1, Ordering::SeqCst) + 1;
    let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
    let api = route(&req.method, path);
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let tools = tool_list(&body);
    let ruled = ruled_answer(&body, &shared.rules.lock().unwrap());
    let schema_tool = tools
        .iter()
        .find(|(_, s)| match &ruled {
            Some(answer) => fits(s, answer),
            None => has_verdict(s),
        })
        .map(|(n, _)| n.clone());
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            // Gemini names the model in the path: .../models/NAME:action
            let seg = path.rsplit('/').next()?;
            Some(seg.split(':').next()?.to_string())
        })
        .unwrap_or_else(|| "mock-model".into());
    let refused = shared
        .refused
        .lock()
        .unwrap()
        .iter()
        .any(|n| model.contains(n.as_str()));
    let once = match api {
        Api::Anthropic | Api::Responses | Api::Chat | Api::Gemini => {
            let mut once = shared.once.lock().unwrap();
            let at = once.iter().position(|(m, _)| holds(&body, m));
            at.map(|i| once.remove(i).1)
        }
        _ => None,
    };
    let mode = match once
        .or_else(|| marker_mode(&body))
        .unwrap_or(*shared.mode.lock().unwrap())
    {
        _ if refused => Mode::ModelRefused,
        m => m,
    };
    let stream = body.get("stream").and_then(Value::as_bool) == Some(true)
        || (api == Api::Gemini && path.ends_with(":streamGenerateContent"));
    let mut answer = ruled.unwrap_or_else(|| shared.answer.lock().unwrap().clone());
    match mode {
        Mode::Holds => answer["verdict"] = json!("holds"),
        Mode::Breaks => answer["verdict"] = json!("breaks"),
        _ => {}
    }
    let compact = serde_json::to_string(&answer).unwrap();
    let schema_call = |name: &String| {
        Answer::Tools(vec![Call {
            name: name.clone(),
            args: answer.clone(),
            tag: format!("mock{id}"),
        }])
    };
    let generation = matches!(
        api,
        Api::Anthropic | Api::Responses | Api::Chat | Api::Gemini
    );
    let mut script = shared.script.lock().unwrap();
    let scripted = match &*shared.script_when.lock().unwrap() {
        Some(marker) => holds(&body, marker),
        None => true,
    };
    let chosen = match (script.as_mut().filter(|_| scripted), mode) {
        (_, Mode::ModelRefused) => Answer::Text(String::new()),
        (_, Mode::Fence) => Answer::Text(format!("```json\n{compact}\n```")),
        (_, Mode::Prose) => Answer::Text(PROSE.to_string()),
        (Some(_), _) if let Some(schema) = side_schema(&body) => {
            Answer::Text(plain_object(schema).to_string())
        }
        (Some(s), _) if generation && !body.is_null() => match s.next(&body, &tools) {
            Some(calls) => Answer::Tools(calls),
            // Done: the verdict through the schema tool unless that was called already.
            None => {
                let whole = body.to_string();
                let when = s
                    .script
                    .when
                    .iter()
                    .find(|(n, _)| whole.contains(n.as_str()));
                match (
                    &schema_tool,
                    when.map(|(_, t)| t).or(s.script.final_text.as_ref()),
                ) {
                    (Some(name), _) if !has_mock_result(&body) => schema_call(name),
                    (_, Some(text)) => Answer::Text(text.clone()),
                    _ => Answer::Text(compact),
                }
            }
        },
        _ => match &schema_tool {
            Some(name) if !has_tool_result(&body) => schema_call(name),
            _ => Answer::Text(compact),
        },
    };
    drop(script);

    // The answer's usage, and its cache writes under the credential, when it answers.
    let answers = !body.is_null()
        && matches!(
            mode,
            Mode::Ok | Mode::Fence | Mode::Prose | Mode::Holds | Mode::Breaks
        );
    let credential = req
        .header("x-api-key")
        .or_else(|| req.header("authorization"))
        .unwrap_or_default();
    let usage = match api {
        _ if !answers => None,
        Api::Anthropic => Some(
            shared
                .caches
                .lock()
                .unwrap()
                .anthropic(credential, &body, id),
        ),
        Api::Responses | Api::Chat => {
            Some(shared.caches.lock().unwrap().openai(credential, &body, id))
        }
        Api::Gemini => Some(Usage::plain(10, 0)),
        _ => None,
    }
    .map(|u| Usage { output: 20, ..u });
    let held = generation
        .then(|| {
            let held = shared.held.lock().unwrap();
            held.iter().find(|m| holds(&body, m)).cloned()
        })
        .flatten();
    PENDING.set(Some((
        usage.filter(|_| api != Api::Gemini).map(|_| id),
        held,
    )));

    let reply = match api {
        Api::Models => Reply::Json(200, models_list(), vec![]),
        Api::AnthropicCountTokens => Reply::Json(200, json!({"input_tokens": 42}), vec![]),
        Api::GeminiCountTokens => Reply::Json(200, json!({"totalTokens": 42}), vec![]),
        Api::Unknown if req.method == "HEAD" => Reply::Json(200, json!({}), vec![]),
        Api::Unknown => Reply::Json(
            404,
            json!({"error": {"message": format!("mock: no route for {} {path}", req.method)}}),
            vec![],
        ),
        _ if body.is_null() => Reply::Json(
            400,
            json!({"error": {"message": "mock: the body is not JSON"}}),
            vec![],
        ),
        _ => match mode {
            Mode::ModelRefused => model_refused(api, &model),
            Mode::RateLimit | Mode::UsageLimit | Mode::Error500 => error_reply(api, mode),
            Mode::Hang => Reply::Hang,
            _ => {
                let gemini_sse = query.split('&').any(|kv| kv == "alt=sse");
                let usage = usage.unwrap_or_default();
                answer_reply(api, stream, gemini_sse, &model, id, &chosen, &usage)
            }
        },
    };
    let reply_name = match (&reply, generation) {
        (Reply::Hang, _) => "hang".to_string(),
        (Reply::Json(s, ..), _) if *s >= 400 => format!("error {s}"),
        (_, false) => "-".to_string(),
        _ => match chosen {
            Answer::Tools(..) => "tool".into(),
            Answer::Text(_) => "text".into(),
        },
    };
    let headers = req
        .headers
        .iter()
        .map(|(k, v)| {
            let secret = matches!(
                k.as_str(),
                "authorization" | "x-api-key" | "api-key" | "x-goog-api-key" | "cookie"
            );
            let v = if secret { "<redacted>" } else { v.as_str() };
            (k.clone(), v.to_string())
        })
        .collect();
    shared.log.lock().unwrap().push(Logged {
        method: req.method.clone(),
        path: req.target.clone(),
        headers,
        body_bytes: req.body.len(),
        api,
        stream,
        tools: tools.into_iter().map(|(n, _)| n).collect(),
        schema_tool,
        schema_format: asks_format(&body),
        mode,
        reply: reply_name,
        usage,
        body,
    });
    reply
}

fn models_list() -> Value {
    // One shape that OpenAI- and Anthropic-style listers both read; codex reads `models`
    // as its own metadata list and accepts it empty.
    json!({
        "object": "list",
        "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock",
                  "type": "model", "display_name": "mock-model"}],
        "has_more": false,
        "models": []
    })
}

/// Each API's own answer to a model that does not exist or that the key may not use.
fn model_refused(api: Api, model: &str) -> Reply {
    let body = match api {
        Api::Anthropic => json!({"type": "error", "error": {"type": "not_found_error",
            "message": format!("model: {model}")}}),
        Api::Gemini => json!({"error": {"code": 404, "status": "NOT_FOUND",
            "message": format!("models/{model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.")}}),
        _ => {
            json!({"error": {"message": format!("The model `{model}` does not exist or you do not have access to it."),
            "type": "invalid_request_error", "param": null, "code": "model_not_found"}})
        }
    };
    Reply::Json(404, body, vec![])
}

/// Each API's own error body for the failure modes.
fn error_reply(api: Api, mode: Mode) -> Reply {
    let reset = now() + USAGE_LIMIT_RESET;
    let (status, body, retry) = match (api, mode) {
        (Api::Anthropic, Mode::RateLimit) => (
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error",
                "message": "This request would exceed the rate limit for your organization. Please retry later."}}),
            RATE_LIMIT_RETRY_AFTER,
        ),
        // A subscription cap: same error type, the "unified" headers say it is the plan's limit.
        (Api::Anthropic, Mode::UsageLimit) => (
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error",
                "message": "You have reached your usage limit for this period."}}),
            USAGE_LIMIT_RESET,
        ),
        (Api::Anthropic, _) => (
            500,
            json!({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}),
            0,
        ),
        (Api::Gemini, Mode::RateLimit) => (
            429,
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": "Resource has been exhausted (e.g. check quota).",
                "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                             "retryDelay": format!("{RATE_LIMIT_RETRY_AFTER}s")}]}}),
            RATE_LIMIT_RETRY_AFTER,
        ),
        (Api::Gemini, Mode::UsageLimit) => (
            429,
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                             "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                                             "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                                             "quotaValue": "250"}]}]}}),
            USAGE_LIMIT_RESET,
        ),
        (Api::Gemini, _) => (
            500,
            json!({"error": {"code": 500, "status": "INTERNAL",
                "message": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"}}),
            0,
        ),
        (_, Mode::RateLimit) => (
            429,
            json!({"error": {"message": format!("Rate limit reached for requests. Please try again in {RATE_LIMIT_RETRY_AFTER}s."),
                "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
            RATE_LIMIT_RETRY_AFTER,
        ),
        // The Responses API's plan cap (what ChatGPT-plan clients see) ...
        (Api::Responses, Mode::UsageLimit) => (
            429,
            json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                "plan_type": "plus", "resets_at": reset, "resets_in_seconds": USAGE_LIMIT_RESET}}),
            USAGE_LIMIT_RESET,
        ),
        // ... and Chat Completions' out-of-quota error.
        (_, Mode::UsageLimit) => (
            429,
            json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}),
            USAGE_LIMIT_RESET,
        ),
        _ => (
            500,
            json!({"error": {"message": "The server had an error while processing your request. Sorry about that!",
                "type": "server_error", "param": null, "code": null}}),
            0,
        ),
    };
    let mut headers = Vec::new();
    if retry > 0 {
        headers.push(("retry-after".to_string(), retry.to_string()));
    }
    if api == Api::Anthropic && mode == Mode::UsageLimit {
        headers.push((
            "anthropic-ratelimit-unified-status".into(),
            "rejected".into(),
        ));
        headers.push((
            "anthropic-ratelimit-unified-reset".into(),
            reset.to_string(),
        ));
    }
    Reply::Json(status, body, headers)
}

/// Splits text in two at a char boundary, so streams carry more than one delta.
fn halves(s: &str) -> [&str; 2] {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    [&s[..mid], &s[mid..]]
}

fn data(v: Value) -> String {
    v.to_string()
}

fn answer_reply(
    api: Api,
    stream: bool,
    gemini_sse: bool,
    model: &str,
    id: u64,
    answer: &Answer,
    usage: &Usage,
) -> Reply {
    match api {
        Api::Anthropic => anthropic(stream, model, id, answer, usage),
        Api::Responses => responses(stream, model, id, answer, usage),
        Api::Chat => chat(stream, model, id, answer, usage),
        _ => gemini(stream, gemini_sse, model, id, answer),
    }
}

/// Anthropic's usage: `input_tokens` is the uncached part only, beside the cache's reads and
/// writes (the writes split by TTL in `cache_creation`, as the API does).
fn anthropic_usage(u: &Usage) -> Value {
    json!({"input_tokens": u.uncached(), "output_tokens": u.output,
        "cache_creation_input_tokens": u.cache_write(), "cache_read_input_tokens": u.cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": u.cache_write_5m,
                           "ephemeral_1h_input_tokens": u.cache_write_1h}})
}

fn anthropic(stream: bool, model: &str, id: u64, answer: &Answer, u: &Usage) -> Reply {
    let usage = anthropic_usage(u);
    let (content, stop) = match answer {
        Answer::Tools(calls) => (
            calls
                .iter()
                .map(|c| json!({"type": "tool_use", "id": format!("toolu_{}", c.tag), "name": c.name, "input": c.args}))
                .collect::<Vec<_>>(),
            "tool_use",
        ),
        Answer::Text(t) => (vec![json!({"type": "text", "text": t})], "end_turn"),
    };
    let message = json!({"id": format!("msg_mock{id}"), "type": "message", "role": "assistant",
        "model": model, "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": usage});
    if !stream {
        return Reply::Json(200, message, vec![]);
    }
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    let ev = |name: &str, v: Value| (Some(name.to_string()), data(v));
    let mut events = vec![ev(
        "message_start",
        json!({"type": "message_start", "message": start}),
    )];
    for (index, block) in content.iter().enumerate() {
        let (empty, pieces): (Value, Vec<Value>) = match block["type"].as_str() {
            Some("tool_use") => {
                let mut empty = block.clone();
                empty["input"] = json!({});
                let args = block["input"].to_string();
                let pieces = halves(&args)
                    .iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect();
                (empty, pieces)
            }
            _ => {
                let t = block["text"].as_str().unwrap_or_default();
                let pieces = halves(t)
                    .iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect();
                (json!({"type": "text", "text": ""}), pieces)
            }
        };
        events.push(ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": empty}),
        ));
        for delta in pieces {
            events.push(ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": u.output}}),
    ));
    events.push(ev("message_stop", json!({"type": "message_stop"})));
    Reply::Sse(events)
}

/// OpenAI's usage: the cached tokens are counted inside the input total.
fn responses(stream: bool, model: &str, id: u64, answer: &Answer, u: &Usage) -> Reply {
    let usage = json!({"input_tokens": u.input, "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": u.input + u.output});
    let item_id = format!("msg_mock{id}");
    let items: Vec<Value> = match answer {
        Answer::Tools(calls) => calls
            .iter()
            .map(|c| {
                json!({"type": "function_call", "id": format!("fc_{}", c.tag),
                "call_id": format!("call_{}", c.tag), "name": c.name, "arguments": c.args.to_string(),
                "status": "completed"})
            })
            .collect(),
        Answer::Text(t) => vec![json!({"type": "message", "id": item_id, "status": "completed",
            "role": "assistant", "content": [{"type": "output_text", "text": t, "annotations": []}]})],
    };
    let full = json!({"id": format!("resp_mock{id}"), "object": "response", "created_at": now(),
        "status": "completed", "model": model, "output": items, "usage": usage, "error": null,
        "incomplete_details": null});
    if !stream {
        return Reply::Json(200, full, vec![]);
    }
    let mut events = Vec::new();
    let mut push = |kind: &str, mut v: Value| {
        v["type"] = json!(kind);
        v["sequence_number"] = json!(events.len());
        events.push((Some(kind.to_string()), data(v)));
    };
    let mut pending = full.clone();
    pending["status"] = json!("in_progress");
    pending["output"] = json!([]);
    pending["usage"] = Value::Null;
    push("response.created", json!({"response": pending}));
    push("response.in_progress", json!({"response": pending}));
    for (index, item) in items.iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        if item["type"] == "function_call" {
            added["arguments"] = json!("");
            push(
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            );
            let fc = item["id"].clone();
            let args = item["arguments"].clone();
            push(
                "response.function_call_arguments.delta",
                json!({"item_id": fc, "output_index": index, "delta": args}),
            );
            push(
                "response.function_call_arguments.done",
                json!({"item_id": fc, "output_index": index, "arguments": args}),
            );
        } else {
            let t = item["content"][0]["text"].as_str().unwrap_or_default();
            added["content"] = json!([]);
            push(
                "response.output_item.added",
                json!({"output_index": index, "item": added}),
            );
            let at = json!({"item_id": item_id, "output_index": index, "content_index": 0});
            let with = |k: &str, v: Value| {
                let mut o = at.clone();
                o[k] = v;
                o
            };
            push(
                "response.content_part.added",
                with(
                    "part",
                    json!({"type": "output_text", "text": "", "annotations": []}),
                ),
            );
            for piece in halves(t) {
                push("response.output_text.delta", with("delta", json!(piece)));
            }
            push("response.output_text.done", with("text", json!(t)));
            push(
                "response.content_part.done",
                with("part", item["content"][0].clone()),
            );
        }
        push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
    push("response.completed", json!({"response": full}));
    Reply::Sse(events)
}

fn chat(stream: bool, model: &str, id: u64, answer: &Answer, u: &Usage) -> Reply {
    let usage = json!({"prompt_tokens": u.input, "completion_tokens": u.output,
        "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read}});
    let cid = format!("chatcmpl-mock{id}");
    let created = now();
    let calls: Vec<Value> = match answer {
        Answer::Tools(calls) => calls
            .iter()
            .map(|c| {
                json!({"id": format!("call_{}", c.tag), "type": "function",
                    "function": {"name": c.name, "arguments": c.args.to_string()}})
            })
            .collect(),
        Answer::Text(_) => Vec::new(),
    };
    let finish = match answer {
        Answer::Tools(..) => "tool_calls",
        Answer::Text(_) => "stop",
    };
    if !stream {
        let message = match answer {
            Answer::Tools(_) => {
                json!({"role": "assistant", "content": null, "tool_calls": calls})
            }
            Answer::Text(t) => json!({"role": "assistant", "content": t}),
        };
        return Reply::Json(
            200,
            json!({"id": cid, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage}),
            vec![],
        );
    }
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            data(
                json!({"id": cid, "object": "chat.completion.chunk", "created": created,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
            ),
        )
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    match answer {
        Answer::Tools(_) => {
            for (index, mut c) in calls.into_iter().enumerate() {
                c["index"] = json!(index);
                events.push(chunk(json!({"tool_calls": [c]}), Value::Null));
            }
        }
        Answer::Text(t) => {
            for piece in halves(t) {
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
        }
    }
    events.push(chunk(json!({}), json!(finish)));
    // Clients that ask for usage get it in a last chunk with no choices; sending it always
    // is what most compatible servers do and no client rejects it.
    events.push((
        None,
        data(
            json!({"id": cid, "object": "chat.completion.chunk", "created": created,
            "model": model, "choices": [], "usage": usage}),
        ),
    ));
    events.push((None, "[DONE]".to_string()));
    Reply::Sse(events)
}

/// Gemini CLI's Google login speaks to Code Assist (`/v1internal:streamGenerateContent`): the
/// Gemini request wrapped as `{"model", "project", "request"}`, each answer wrapped as
/// `{"response", "traceId"}`. Answered as the Gemini API would answer the request inside.
fn code_assist(req: &Request, shared: &Shared) -> Option<Reply> {
    let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
    let action = path.strip_prefix("/v1internal:")?;
    if !matches!(action, "generateContent" | "streamGenerateContent") {
        return None;
    }
    let body: Value = serde_json::from_slice(&req.body).ok()?;
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("gemini");
    let inner = Request {
        method: req.method.clone(),
        target: format!("/v1beta/models/{model}:{action}?{query}"),
        headers: req.headers.clone(),
        body: serde_json::to_vec(body.get("request")?).ok()?,
    };
    let wrap = |v: Value| json!({"response": v, "traceId": "mock-trace"});
    Some(match respond(&inner, shared) {
        Reply::Json(200, Value::Array(items), h) => {
            Reply::Json(200, Value::Array(items.into_iter().map(wrap).collect()), h)
        }
        Reply::Json(200, v, h) => Reply::Json(200, wrap(v), h),
        Reply::Sse(events) => Reply::Sse(
            events
                .into_iter()
                .map(|(e, d)| {
                    let v: Value = serde_json::from_str(&d).unwrap_or(Value::Null);
                    (e, wrap(v).to_string())
                })
                .collect(),
        ),
        other => other,
    })
}

fn gemini(stream: bool, sse: bool, model: &str, id: u64, answer: &Answer) -> Reply {
    let parts: Vec<Value> = match answer {
        // The script's calls carry ids, which Gemini CLI sends back with each response.
        Answer::Tools(calls) => calls
            .iter()
            .map(|c| {
                let mut f = json!({"name": c.name, "args": c.args});
                if c.tag.starts_with("pnl_") {
                    f["id"] = json!(format!("call_{}", c.tag));
                }
                json!({"functionCall": f})
            })
            .collect(),
        Answer::Text(t) => vec![json!({"text": t})],
    };
    let resp = json!({"candidates": [{"content": {"parts": parts, "role": "model"},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 20, "totalTokenCount": 30},
        "modelVersion": model, "responseId": format!("mock{id}")});
    match (stream, sse) {
        (false, _) => Reply::Json(200, resp, vec![]),
        (true, true) => Reply::Sse(vec![(None, data(resp))]),
        // Without alt=sse the stream method answers one JSON array.
        (true, false) => Reply::Json(200, json!([resp]), vec![]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use std::time::Instant;

    /// A response as the raw test client read it.
    struct Resp {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    }

    impl Resp {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }

        fn json(&self) -> Value {
            serde_json::from_str(&self.body).expect("JSON body")
        }

        /// `(event, data)` of each SSE event.
        fn events(&self) -> Vec<(Option<String>, String)> {
            self.body
                .split("\n\n")
                .filter(|b| !b.trim().is_empty())
                .map(|block| {
                    let mut event = None;
                    let mut data = String::new();
                    for line in block.lines() {
                        if let Some(e) = line.strip_prefix("event: ") {
                            event = Some(e.to_string());
                        } else if let Some(d) = line.strip_prefix("data: ") {
                            data.push_str(d);
                        }
                    }
                    (event, data)
                })
                .collect()
        }

        fn data(&self) -> Vec<Value> {
            self.events()
                .into_iter()
                .filter(|(_, d)| d != "[DONE]")
                .map(|(_, d)| serde_json::from_str(&d).unwrap())
                .collect()
        }
    }

    /// Reads one response from a stream: Content-Length bodies, or to EOF.
    fn read_response(s: &mut TcpStream) -> Resp {
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            assert_eq!(
                s.read(&mut byte).unwrap(),
                1,
                "connection closed in the head"
            );
            buf.push(byte[0]);
        }
        let head = String::from_utf8(buf).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        let len = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse::<usize>().unwrap());
        let mut body = Vec::new();
        match len {
            Some(n) => {
                body.resize(n, 0);
                s.read_exact(&mut body).unwrap();
            }
            None => {
                s.read_to_end(&mut body).unwrap();
            }
        }
        Resp {
            status,
            headers,
            body: String::from_utf8(body).unwrap(),
        }
    }

    fn send(s: &mut TcpStream, method: &str, path: &str, body: &Value, extra: &str) {
        let data = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        // `extra` may name its own credential.
        let auth = if extra.to_ascii_lowercase().contains("authorization:") {
            ""
        } else {
            "Authorization: Bearer secret-key\r\n"
        };
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n{data}",
            data.len()
        );
        s.write_all(req.as_bytes()).unwrap();
    }

    fn request(server: &MockServer, method: &str, path: &str, body: Value) -> Resp {
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        send(&mut s, method, path, &body, "");
        read_response(&mut s)
    }

    fn post(server: &MockServer, path: &str, body: Value) -> Resp {
        request(server, "POST", path, body)
    }

    fn verdict_schema() -> Value {
        json!({"type": "object", "properties": {"verdict": {"type": "string"},
            "reason": {"type": "string"}, "confidence": {"type": "number"}}})
    }

    const PROMPT: &str = "Judge the claim \"first(xs) never raises\". Reply with JSON.";

    fn anthropic_body(stream: bool, tools: bool, prompt: &str) -> Value {
        let mut b = json!({"model": "claude-haiku", "max_tokens": 100, "stream": stream,
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}]});
        if tools {
            b["tools"] = json!([
                {"name": "Read", "input_schema": {"type": "object", "properties": {"path": {}}}},
                {"name": "StructuredOutput", "input_schema": verdict_schema()}
            ]);
        }
        b
    }

    fn chat_body(stream: bool, tools: bool, prompt: &str) -> Value {
        let mut b = json!({"model": "mock-model", "stream": stream,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "system", "content": "You judge."},
                         {"role": "user", "content": prompt}]});
        if tools {
            b["tools"] = json!([{"type": "function", "function":
                {"name": "structured_output", "parameters": verdict_schema()}}]);
        }
        b
    }

    fn responses_body(stream: bool, prompt: &str) -> Value {
        json!({"model": "mock-model", "stream": stream, "tool_choice": "auto",
            "tools": [{"type": "function", "name": "exec_command",
                       "parameters": {"type": "object", "properties": {"cmd": {}}}}],
            "text": {"format": {"type": "json_schema", "strict": true, "name": "out",
                                "schema": verdict_schema()}},
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": prompt}]}]})
    }

    fn gemini_body(tools: bool, prompt: &str) -> Value {
        let mut b = json!({"contents": [{"role": "user", "parts": [{"text": prompt}]}]});
        if tools {
            b["tools"] = json!([{"functionDeclarations": [
                {"name": "list_directory", "parameters": {"type": "object"}},
                {"name": "answer", "parametersJsonSchema": verdict_schema()}]}]);
        }
        b
    }

    fn text_of_anthropic_stream(r: &Resp) -> String {
        r.data()
            .iter()
            .filter_map(|d| d.pointer("/delta/text").and_then(Value::as_str))
            .collect()
    }

    #[test]
    fn anthropic_plain_and_streamed() {
        let server = MockServer::start();
        let r = post(
            &server,
            "/v1/messages",
            anthropic_body(false, false, PROMPT),
        );
        assert_eq!(r.status, 200);
        let v = r.json();
        assert_eq!(v["stop_reason"], "end_turn");
        let text = v["content"][0]["text"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            default_answer()
        );

        // A schema tool is offered: the answer is a call of it, streamed in pieces.
        let r = post(
            &server,
            "/v1/messages?beta=true",
            anthropic_body(true, true, PROMPT),
        );
        assert_eq!(r.header("content-type"), Some("text/event-stream"));
        let names: Vec<String> = r.events().into_iter().filter_map(|(e, _)| e).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let d = r.data();
        assert_eq!(d[1]["content_block"]["name"], "StructuredOutput");
        let args: String = d
            .iter()
            .filter_map(|x| x.pointer("/delta/partial_json").and_then(Value::as_str))
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&args).unwrap(),
            default_answer()
        );
        assert_eq!(d[5]["delta"]["stop_reason"], "tool_use");
        assert_eq!(d[5]["usage"]["output_tokens"], 20);

        // Once the tool result is back, it answers text.
        let mut b = anthropic_body(true, true, PROMPT);
        b["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "user", "content":
            [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}));
        let r = post(&server, "/v1/messages", b);
        assert!(text_of_anthropic_stream(&r).contains("breaks"));

        let r = post(
            &server,
            "/v1/messages/count_tokens",
            json!({"messages": []}),
        );
        assert_eq!(r.json()["input_tokens"], 42);

        let log = server.requests();
        assert_eq!(log.len(), 4);
        assert_eq!(log[1].tools, ["Read", "StructuredOutput"]);
        assert_eq!(log[1].schema_tool.as_deref(), Some("StructuredOutput"));
        assert_eq!(log[1].reply, "tool");
        assert_eq!(log[2].reply, "text");
        assert_eq!(log[3].api, Api::AnthropicCountTokens);
        assert_eq!(log[0].header("authorization"), Some("<redacted>"));
        assert_eq!(server.generations().len(), 3);
    }

    #[test]
    fn responses_plain_and_streamed() {
        let server = MockServer::start();
        let r = post(&server, "/v1/responses", responses_body(false, PROMPT));
        let v = r.json();
        assert_eq!(v["status"], "completed");
        let text = v["output"][0]["content"][0]["text"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            default_answer()
        );

        let r = post(&server, "/v1/responses", responses_body(true, PROMPT));
        let names: Vec<String> = r.events().into_iter().filter_map(|(e, _)| e).collect();
        assert_eq!(names.first().unwrap(), "response.created");
        assert_eq!(names.last().unwrap(), "response.completed");
        assert!(names.contains(&"response.output_item.added".to_string()));
        assert!(names.contains(&"response.output_item.done".to_string()));
        let d = r.data();
        let text: String = d
            .iter()
            .filter(|x| x["type"] == "response.output_text.delta")
            .map(|x| x["delta"].as_str().unwrap())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            default_answer()
        );
        // The input is the server's estimate of the prompt, bytes / 4; 20 out.
        let input = server.requests()[1].usage.unwrap().input;
        assert!(input > 0);
        assert_eq!(
            d.last().unwrap()["response"]["usage"]["total_tokens"],
            input + 20
        );
        // Sequence numbers count up from 0.
        for (i, x) in d.iter().enumerate() {
            assert_eq!(x["sequence_number"], i);
        }

        let log = server.requests();
        assert_eq!(log[1].api, Api::Responses);
        assert!(log[1].schema_format);
        assert_eq!(log[1].tools, ["exec_command"]);
        assert_eq!(log[1].schema_tool, None);
    }

    #[test]
    fn responses_calls_a_schema_tool() {
        let server = MockServer::start();
        let mut b = responses_body(true, PROMPT);
        b["tools"] = json!([{"type": "function", "name": "emit", "parameters": verdict_schema()}]);
        let d = post(&server, "/v1/responses", b).data();
        let done = d
            .iter()
            .find(|x| x["type"] == "response.output_item.done")
            .unwrap();
        assert_eq!(done["item"]["type"], "function_call");
        assert_eq!(done["item"]["name"], "emit");
        let args = done["item"]["arguments"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(args).unwrap(),
            default_answer()
        );
    }

    #[test]
    fn chat_plain_and_streamed() {
        let server = MockServer::start();
        let v = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, false, PROMPT),
        )
        .json();
        assert_eq!(v["object"], "chat.completion");
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
        let text = v["choices"][0]["message"]["content"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            default_answer()
        );

        let v = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, true, PROMPT),
        )
        .json();
        assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
        let f = &v["choices"][0]["message"]["tool_calls"][0]["function"];
        assert_eq!(f["name"], "structured_output");

        let r = post(
            &server,
            "/v1/chat/completions",
            chat_body(true, false, PROMPT),
        );
        let events = r.events();
        assert_eq!(events.last().unwrap().1, "[DONE]");
        let d = r.data();
        assert!(d.iter().all(|x| x["object"] == "chat.completion.chunk"));
        let text: String = d
            .iter()
            .filter_map(|x| {
                x.pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
            })
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            default_answer()
        );
        let last = d.last().unwrap();
        let input = server.requests()[2].usage.unwrap().input;
        assert_eq!(last["usage"]["total_tokens"], input + 20);
        assert_eq!(d[d.len() - 2]["choices"][0]["finish_reason"], "stop");

        let d = post(
            &server,
            "/v1/chat/completions",
            chat_body(true, true, PROMPT),
        )
        .data();
        let call = &d[1]["choices"][0]["delta"]["tool_calls"][0];
        assert_eq!(call["index"], 0);
        assert_eq!(call["function"]["name"], "structured_output");
        assert_eq!(d[2]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(server.requests()[3].tools, ["structured_output"]);
    }

    #[test]
    fn gemini_routes() {
        let server = MockServer::start();
        let path = "/v1beta/models/gemini-2.5-flash";
        let v = post(
            &server,
            &format!("{path}:generateContent"),
            gemini_body(false, PROMPT),
        )
        .json();
        let text = v["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            default_answer()
        );
        assert_eq!(v["modelVersion"], "gemini-2.5-flash");

        let r = post(
            &server,
            &format!("{path}:streamGenerateContent?alt=sse"),
            gemini_body(true, PROMPT),
        );
        assert_eq!(r.header("content-type"), Some("text/event-stream"));
        let d = r.data();
        assert_eq!(d.len(), 1);
        let call = &d[0]["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(call["name"], "answer");
        assert_eq!(call["args"], default_answer());

        let v = post(
            &server,
            &format!("{path}:streamGenerateContent"),
            gemini_body(false, PROMPT),
        )
        .json();
        assert!(v.as_array().unwrap()[0]["candidates"].is_array());

        let v = post(
            &server,
            &format!("{path}:countTokens"),
            gemini_body(false, PROMPT),
        )
        .json();
        assert_eq!(v["totalTokens"], 42);

        let log = server.requests();
        assert_eq!(log[1].tools, ["list_directory", "answer"]);
        assert!(log[1].stream);
        assert_eq!(log[3].api, Api::GeminiCountTokens);
    }

    #[test]
    fn models_and_unknown_routes() {
        let server = MockServer::start();
        let v = request(&server, "GET", "/v1/models?client_version=1", Value::Null).json();
        assert_eq!(v["data"][0]["id"], "mock-model");
        assert_eq!(v["data"].as_array().unwrap().len(), 1);
        let r = post(&server, "/v1/nothing", json!({}));
        assert_eq!(r.status, 404);
        let r = request(&server, "POST", "/v1/messages", Value::Null);
        assert_eq!(r.status, 400);
    }

    #[test]
    fn fence_and_prose_never_call_tools() {
        let server = MockServer::start();
        server.set_mode(Mode::Fence);
        let r = post(&server, "/v1/messages", anthropic_body(true, true, PROMPT));
        let text = text_of_anthropic_stream(&r);
        assert!(
            text.starts_with("```json\n") && text.ends_with("\n```"),
            "{text}"
        );
        server.set_mode(Mode::Prose);
        let v = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, true, PROMPT),
        )
        .json();
        assert_eq!(v["choices"][0]["message"]["content"], PROSE);
        let v = post(
            &server,
            "/v1beta/models/g:generateContent",
            gemini_body(true, PROMPT),
        )
        .json();
        assert_eq!(v["candidates"][0]["content"]["parts"][0]["text"], PROSE);
        let v = post(&server, "/v1/responses", responses_body(false, PROMPT)).json();
        assert_eq!(v["output"][0]["content"][0]["text"], PROSE);
    }

    #[test]
    fn markers_override_the_server_mode() {
        let server = MockServer::start();
        server.set_mode(Mode::Error500);
        let prompt = format!("{PROMPT} {}", Mode::Holds.marker());
        let v = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, false, &prompt),
        )
        .json();
        let text = v["choices"][0]["message"]["content"].as_str().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap()["verdict"],
            "holds"
        );
        let r = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, false, PROMPT),
        );
        assert_eq!(r.status, 500);
        server.set_mode(Mode::Ok);
        let prompt = format!("{}\n{PROMPT}", Mode::Prose.marker());
        let v = post(
            &server,
            "/v1/messages",
            anthropic_body(false, true, &prompt),
        )
        .json();
        assert_eq!(v["content"][0]["text"], PROSE);
        let log = server.requests();
        assert_eq!(
            log.iter().map(|l| l.mode).collect::<Vec<_>>(),
            [Mode::Holds, Mode::Error500, Mode::Prose]
        );
    }

    #[test]
    fn custom_answer() {
        let server = MockServer::start();
        let mine = json!({"verdict": "holds", "reason": "guarded", "confidence": 0.4});
        server.set_answer(mine.clone());
        let v = post(&server, "/v1/messages", anthropic_body(false, true, PROMPT)).json();
        assert_eq!(v["content"][0]["input"], mine);
        server.set_mode(Mode::Breaks);
        let v = post(&server, "/v1/messages", anthropic_body(false, true, PROMPT)).json();
        assert_eq!(v["content"][0]["input"]["verdict"], "breaks");
        assert_eq!(v["content"][0]["input"]["reason"], "guarded");
    }

    #[test]
    fn error_modes_use_each_apis_bodies() {
        let server = MockServer::start();
        let bodies = [
            ("/v1/messages", anthropic_body(true, true, PROMPT)),
            ("/v1/responses", responses_body(true, PROMPT)),
            ("/v1/chat/completions", chat_body(true, true, PROMPT)),
            (
                "/v1beta/models/g:streamGenerateContent?alt=sse",
                gemini_body(true, PROMPT),
            ),
        ];
        let kind = |v: &Value| -> String {
            let e = &v["error"];
            [&e["type"], &e["status"], &e["code"]]
                .iter()
                .find_map(|x| x.as_str())
                .unwrap()
                .to_string()
        };
        let expect = [
            (
                Mode::RateLimit,
                429,
                [
                    "rate_limit_error",
                    "requests",
                    "requests",
                    "RESOURCE_EXHAUSTED",
                ],
            ),
            (
                Mode::UsageLimit,
                429,
                [
                    "rate_limit_error",
                    "usage_limit_reached",
                    "insufficient_quota",
                    "RESOURCE_EXHAUSTED",
                ],
            ),
            (
                Mode::Error500,
                500,
                ["api_error", "server_error", "server_error", "INTERNAL"],
            ),
        ];
        for (mode, status, kinds) in expect {
            server.set_mode(mode);
            for ((path, body), want) in bodies.iter().zip(kinds) {
                let r = post(&server, path, body.clone());
                assert_eq!(r.status, status, "{mode:?} {path}");
                let v = r.json();
                assert_eq!(kind(&v), want, "{mode:?} {path}");
                let retry: Option<u64> = r.header("retry-after").map(|s| s.parse().unwrap());
                match mode {
                    Mode::RateLimit => assert_eq!(retry, Some(RATE_LIMIT_RETRY_AFTER)),
                    Mode::UsageLimit => assert_eq!(retry, Some(USAGE_LIMIT_RESET)),
                    _ => assert_eq!(retry, None),
                }
            }
        }
        server.set_mode(Mode::UsageLimit);
        let r = post(
            &server,
            "/v1/messages",
            anthropic_body(false, false, PROMPT),
        );
        assert_eq!(
            r.header("anthropic-ratelimit-unified-status"),
            Some("rejected")
        );
        let v = post(&server, "/v1/responses", responses_body(false, PROMPT)).json();
        assert!(v["error"]["resets_at"].as_u64().unwrap() > now());
        let v = post(
            &server,
            "/v1beta/models/g:generateContent",
            gemini_body(false, PROMPT),
        )
        .json();
        assert!(v.to_string().contains("PerDay"));
        assert!(
            server
                .requests()
                .iter()
                .all(|l| l.reply.starts_with("error "))
        );
    }

    #[test]
    fn hang_answers_nothing_and_does_not_block_shutdown() {
        let server = MockServer::start();
        server.set_mode(Mode::Hang);
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        send(
            &mut s,
            "POST",
            "/v1/messages",
            &anthropic_body(true, true, PROMPT),
            "",
        );
        let mut buf = [0u8; 64];
        let err = s.read(&mut buf).unwrap_err();
        assert!(is_timeout(&err), "{err}");
        assert_eq!(server.requests()[0].reply, "hang");
        let t = Instant::now();
        drop(server);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // The server closed the hanging connection on its way out.
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        assert_eq!(s.read(&mut buf).unwrap_or(0), 0);
    }

    #[test]
    fn keep_alive_and_chunked_bodies() {
        let server = MockServer::start();
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        send(
            &mut s,
            "POST",
            "/v1/chat/completions",
            &chat_body(false, false, PROMPT),
            "",
        );
        assert_eq!(read_response(&mut s).status, 200);
        // Second request on the same connection, its body chunked in two.
        let body = chat_body(false, true, PROMPT).to_string();
        let (a, b) = body.split_at(10);
        let req = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let r = read_response(&mut s);
        assert_eq!(r.json()["choices"][0]["finish_reason"], "tool_calls");
        let log = server.requests();
        assert_eq!(log.len(), 2);
        assert_eq!(log[1].body_bytes, body.len());
        assert_eq!(log[1].tools, ["structured_output"]);
    }

    #[test]
    fn bytes_beyond_prompt() {
        let server = MockServer::start();
        let prompt = "Quote \"this\"\nand a tab\there";
        let body = chat_body(false, false, prompt);
        post(&server, "/v1/chat/completions", body.clone());
        let l = &server.requests()[0];
        let escaped = serde_json::to_string(prompt).unwrap().len() - 2;
        assert_eq!(l.body_bytes, body.to_string().len());
        assert_eq!(l.bytes_beyond_prompt(prompt), Some(l.body_bytes - escaped));
        assert_eq!(l.bytes_beyond_prompt("not in there"), None);
        assert_eq!(l.prompt_containing("a tab").as_deref(), Some(prompt));
        assert_eq!(l.bytes_beyond_marked("a tab"), Some(l.body_bytes - escaped));
    }

    /// Answers set per request: the first rule whose markers the prompt holds gives the
    /// object, through the offered tool whose schema has its keys, else as text; a request no
    /// rule matches gets the server's own answer; a script set for a marker plays only there.
    #[test]
    fn answers_follow_the_markers_in_the_prompt() {
        let server = MockServer::start();
        let votes =
            json!({"votes": [{"finding": "F1", "vote": "agree", "reason": "r", "fix": null}]});
        let groups = json!({"groups": [{"findings": ["a/1"], "evidence": "a/1", "fix": "a/1"}]});
        server.answer_when(&["VOTE", "[F1]"], votes.clone());
        server.answer_when(&["GROUP"], groups.clone());
        let tool_schema = |answer: &Value| {
            let props: Map<String, Value> = answer
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (k.clone(), json!({})))
                .collect();
            json!({"type": "object", "properties": props})
        };
        // Text when no tool fits: the grouping, on Chat Completions.
        let r = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, false, "GROUP these"),
        );
        let text = r.json()["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), groups);
        // Through the tool whose schema fits, on Anthropic, beside the verdict tool.
        let mut body = anthropic_body(false, true, "VOTE on [F1]");
        body["tools"].as_array_mut().unwrap().push(json!(
            {"name": "Votes", "input_schema": tool_schema(&votes)}));
        let r = post(&server, "/v1/messages", body);
        let block = &r.json()["content"][0];
        assert_eq!(
            (block["name"].as_str(), &block["input"]),
            (Some("Votes"), &votes)
        );
        assert_eq!(server.requests()[1].schema_tool.as_deref(), Some("Votes"));
        // Every marker must be there: VOTE without [F1] gets the server's verdict.
        let r = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, false, "VOTE on [F2]"),
        );
        let text = r.json()["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            default_answer()
        );
        // A script for a marker: its call goes out there only.
        server.set_script_when(
            "READER",
            Script {
                plan: Box::new(|_, _| {
                    vec![vec![ScriptCall {
                        label: "read".into(),
                        tool: "Read".into(),
                        args: json!({"file_path": "/w"}),
                    }]]
                }),
                final_text: None,
                when: Vec::new(),
            },
        );
        let r = post(
            &server,
            "/v1/messages",
            anthropic_body(false, true, "GROUP, no READ-ER"),
        );
        assert_eq!(r.json()["content"][0]["type"], "text");
        let r = post(
            &server,
            "/v1/messages",
            anthropic_body(false, true, "READER: GROUP"),
        );
        assert_eq!(r.json()["content"][0]["id"], "toolu_pnl_0");
        assert_eq!(server.issued().len(), 1);
    }

    /// A script of two turns (two calls, then one) over each API: the calls go out in the
    /// API's own shape with the script's ids, the results that come back are logged once each,
    /// and the verdict follows the last turn.
    #[test]
    fn a_script_asks_for_tool_calls_and_logs_their_results() {
        fn script() -> Script {
            Script {
                plan: Box::new(|tools, _| {
                    let read = tools.iter().any(|(n, _)| n == "Read");
                    let call = |label: &str, tool: &str| ScriptCall {
                        label: label.into(),
                        tool: tool.into(),
                        args: json!({"file_path": format!("/{label}")}),
                    };
                    vec![
                        vec![
                            call("a", if read { "Read" } else { "exec_command" }),
                            call("b", "Write"),
                        ],
                        vec![call("c", "Bash")],
                    ]
                }),
                final_text: None,
                when: Vec::new(),
            }
        }
        let scripted = || {
            let server = MockServer::start();
            server.set_script(script());
            server
        };
        // Anthropic: turn 1 is two tool_use blocks, streamed.
        let server = scripted();
        let mut body = anthropic_body(true, true, PROMPT);
        let r = post(&server, "/v1/messages", body.clone());
        let d = r.data();
        let uses: Vec<(&str, &str)> = d
            .iter()
            .filter_map(|x| x.get("content_block"))
            .map(|b| (b["id"].as_str().unwrap(), b["name"].as_str().unwrap()))
            .collect();
        assert_eq!(uses, [("toolu_pnl_0", "Read"), ("toolu_pnl_1", "Write")]);
        let msgs = body["messages"].as_array_mut().unwrap();
        msgs.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_pnl_0", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "toolu_pnl_1", "name": "Write", "input": {}}]}));
        msgs.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_pnl_0", "content": [{"type": "text", "text": "secret A"}]},
            {"type": "tool_result", "tool_use_id": "toolu_pnl_1", "content": "no such tool", "is_error": true}]}));
        let r = post(&server, "/v1/messages", body.clone());
        let names: Vec<&str> = r
            .data()
            .iter()
            .filter_map(|x| x.pointer("/content_block/id").and_then(Value::as_str))
            .map(|_| "")
            .collect();
        assert_eq!(names.len(), 1);
        assert!(r.body.contains("toolu_pnl_2") && r.body.contains("\"Bash\""));
        let msgs = body["messages"].as_array_mut().unwrap();
        msgs.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_pnl_2", "name": "Bash", "input": {}}]}));
        msgs.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_pnl_2", "content": "ran"}]}));
        // Done: the schema tool, then (its result back) text.
        let r = post(&server, "/v1/messages", body.clone());
        assert!(r.body.contains("StructuredOutput"), "{}", r.body);
        let results = server.tool_results();
        let got: Vec<(usize, &str, bool)> = results
            .iter()
            .map(|t| (t.n, t.text.as_str(), t.error))
            .collect();
        assert_eq!(
            got,
            [
                (0, "secret A", false),
                (1, "no such tool", true),
                (2, "ran", false)
            ]
        );
        let issued = server.issued();
        assert_eq!(issued.len(), 3);
        assert!(issued[0].offered && !issued[1].offered && !issued[2].offered);
        assert_eq!(issued[2].turn, 1);

        // Responses: function_call items; their outputs come back as function_call_output.
        let server = scripted();
        let mut body = responses_body(true, PROMPT);
        let r = post(&server, "/v1/responses", body.clone());
        let done: Vec<Value> = r
            .data()
            .into_iter()
            .filter(|x| x["type"] == "response.output_item.done")
            .map(|x| x["item"].clone())
            .collect();
        assert_eq!(done.len(), 2);
        assert_eq!(done[0]["call_id"], "call_pnl_0");
        assert_eq!(done[0]["name"], "exec_command");
        assert_eq!(done[1]["output_index"], Value::Null);
        let input = body["input"].as_array_mut().unwrap();
        input.extend(done.iter().cloned());
        input.push(json!({"type": "function_call_output", "call_id": "call_pnl_0", "output": "Output:\nsecret B"}));
        input.push(json!({"type": "function_call_output", "call_id": "call_pnl_1", "output": "unsupported call: Write"}));
        let r = post(&server, "/v1/responses", body);
        assert!(r.body.contains("call_pnl_2"), "{}", r.body);
        assert_eq!(server.tool_results()[0].text, "Output:\nsecret B");

        // Chat Completions: both calls in one message; Gemini: functionCall parts with ids.
        let server = scripted();
        let r = post(
            &server,
            "/v1/chat/completions",
            chat_body(false, true, PROMPT),
        );
        let calls = &r.json()["choices"][0]["message"]["tool_calls"];
        assert_eq!(calls[1]["id"], "call_pnl_1");
        assert_eq!(calls[1]["function"]["name"], "Write");
        let mut body = chat_body(false, true, PROMPT);
        let msgs = body["messages"].as_array_mut().unwrap();
        msgs.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
        msgs.push(json!({"role": "tool", "tool_call_id": "call_pnl_0", "content": [{"type": "text", "text": "secret C"}]}));
        post(&server, "/v1/chat/completions", body);
        assert_eq!(server.tool_results()[0].text, "secret C");

        let server = scripted();
        let r = post(
            &server,
            "/v1beta/models/gemini-2.5-flash:generateContent",
            gemini_body(true, PROMPT),
        );
        let part = &r.json()["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(part["id"], "call_pnl_0");
        // Its loop check asks for a JSON object of its own schema: answered as asked.
        let check = json!({"contents": [{"role": "user", "parts": [{"text": "history"}]}],
            "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema":
                {"type": "object", "properties": {"unproductive_state_analysis": {"type": "string"},
                 "unproductive_state_confidence": {"type": "number"}}}}});
        let r = post(
            &server,
            "/v1beta/models/gemini-3-flash-preview:generateContent",
            check,
        );
        let text = r.json()["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"unproductive_state_analysis": "none", "unproductive_state_confidence": 0})
        );
        let mut body = gemini_body(true, PROMPT);
        let contents = body["contents"].as_array_mut().unwrap();
        contents.push(json!({"role": "model", "parts": [{"functionCall": part}]}));
        contents.push(
            json!({"role": "user", "parts": [{"functionResponse": {"id": "call_pnl_0",
            "name": "read_file", "response": {"error": "Path not in workspace"}}}]}),
        );
        post(
            &server,
            "/v1beta/models/gemini-2.5-flash:generateContent",
            body,
        );
        let t = &server.tool_results()[0];
        assert!(t.error && t.text == "Path not in workspace", "{t:?}");
    }

    /// Text of about `tokens` of the server's tokens (bytes / 4), the same for the same `seed`.
    fn filler(seed: &str, tokens: usize) -> String {
        let mut s = String::new();
        while s.len() < tokens * 4 {
            s.push_str(&format!("{seed} line {} of the candidate.\n", s.len()));
        }
        s
    }

    /// A Messages request whose system block (the shared part) is a breakpoint, then `lens`.
    fn cached_messages(shared: &str, lens: &str, stream: bool) -> Value {
        json!({"model": "claude-haiku", "max_tokens": 100, "stream": stream,
            "tools": [{"name": "StructuredOutput", "input_schema": verdict_schema()}],
            "system": [{"type": "text", "text": "x-anthropic-billing-header: cch=00000"},
                       {"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": lens,
                          "cache_control": {"type": "ephemeral"}}]}]})
    }

    /// `(input_tokens, cache_creation_input_tokens, cache_read_input_tokens)` of an answer,
    /// plain or streamed (from `message_start`).
    fn anthropic_cache(r: &Resp) -> (u64, u64, u64) {
        let v = if r.header("content-type") == Some("text/event-stream") {
            r.data()[0]["message"].clone()
        } else {
            r.json()
        };
        let u = &v["usage"];
        let n = |k: &str| u[k].as_u64().unwrap();
        (
            n("input_tokens"),
            n("cache_creation_input_tokens"),
            n("cache_read_input_tokens"),
        )
    }

    fn post_with(server: &MockServer, path: &str, body: &Value, extra: &str) -> Resp {
        let mut s = TcpStream::connect(server.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        send(&mut s, "POST", path, body, extra);
        read_response(&mut s)
    }

    /// Anthropic: the first request writes the prefix up to its last breakpoint; a second with
    /// the same prefix, sent once the first answer began, reads up to where they part and
    /// writes the rest; the usage says so in the answer and in `message_start`, with
    /// `input_tokens` the uncached part only. Claude Code's billing block is no part of it.
    #[test]
    fn anthropic_reads_what_an_answered_request_wrote() {
        let server = MockServer::start();
        let shared = filler("shared", 3000);
        let first = post(
            &server,
            "/v1/messages",
            cached_messages(&shared, "lens A", false),
        );
        let (input, write, read) = anthropic_cache(&first);
        assert!(write > 3000 && read == 0, "{write} {read}");
        let u = server.requests()[0].usage.unwrap();
        assert_eq!(
            (u.uncached(), u.cache_write(), u.cache_read),
            (input, write, read)
        );
        assert_eq!(u.input, input + write);
        assert_eq!(u.output, 20);

        let mut second = cached_messages(&shared, "lens B, a longer one", true);
        second["system"][0]["text"] = json!("x-anthropic-billing-header: cch=11111");
        let (input2, write2, read2) = anthropic_cache(&post(&server, "/v1/messages", second));
        let lens = server.requests()[1].usage.unwrap();
        // Read: tools and the shared block; written: the lens's block, up to its breakpoint.
        assert!(read2 > 3000 && read2 < write, "{read2} {write}");
        assert_eq!(read2 + write2 + input2, lens.input);
        assert!(write2 > 0 && write2 < 20, "{write2}");
        assert_eq!(lens.cache_write_5m, write2);

        // The same request again reads all of it.
        let third = post(
            &server,
            "/v1/messages",
            cached_messages(&shared, "lens A", false),
        );
        assert_eq!(anthropic_cache(&third), (input, 0, write));
    }

    /// Anthropic: requests sent together, before the first answer began, each write the
    /// prefix and read nothing; once an answer began, the next reads.
    #[test]
    fn anthropic_fan_out_at_once_reads_nothing() {
        let server = MockServer::start();
        let shared = filler("shared", 2000);
        server.hold_when("FIRST");
        let first = {
            let body = cached_messages(&shared, "FIRST lens", false);
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                send(&mut s, "POST", "/v1/messages", &body, "");
                read_response(&mut s)
            })
        };
        // The first is decided (logged, its cache written) but its answer has not begun.
        while server.requests().is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let second = post(
            &server,
            "/v1/messages",
            cached_messages(&shared, "lens", false),
        );
        let (_, write, read) = anthropic_cache(&second);
        assert!(write > 2000 && read == 0, "{write} {read}");
        server.release();
        let (_, write1, read1) = anthropic_cache(&first.join().unwrap());
        assert!(write1 > 2000 && read1 == 0, "{write1} {read1}");
        let third = post(
            &server,
            "/v1/messages",
            cached_messages(&shared, "lens", false),
        );
        assert_eq!(
            anthropic_cache(&third).1..anthropic_cache(&third).2,
            0..write
        );
    }

    /// Anthropic: caches are per credential; a prefix under 1,024 tokens is never cached; a
    /// block before the breakpoint that differs misses; an entry expires by its TTL (5
    /// minutes, or an hour when asked), a read refreshing it.
    #[test]
    fn anthropic_caches_by_key_size_prefix_and_ttl() {
        let server = MockServer::start();
        let shared = filler("shared", 2000);
        let body = cached_messages(&shared, "lens", false);
        let write = anthropic_cache(&post(&server, "/v1/messages", body.clone())).1;
        assert!(write > 2000);
        let other = post_with(&server, "/v1/messages", &body, "x-api-key: other-org\r\n");
        assert_eq!(
            anthropic_cache(&other).1..anthropic_cache(&other).2,
            write..0
        );
        // Same key as the first: it reads.
        let again = post(&server, "/v1/messages", body.clone());
        assert_eq!(anthropic_cache(&again).2, write);

        // Under the minimum: written and read never.
        let small = cached_messages("short shared part", "lens", false);
        for _ in 0..2 {
            let r = post(&server, "/v1/messages", small.clone());
            let (input, write, read) = anthropic_cache(&r);
            assert!(input > 0 && input < MIN_CACHEABLE && write == 0 && read == 0);
        }

        // A different tool before the breakpoint: nothing of the prefix matches.
        let mut changed = body.clone();
        changed["tools"][0]["name"] = json!("Verdict");
        let r = post(&server, "/v1/messages", changed);
        assert_eq!(anthropic_cache(&r).2, 0);

        // Four minutes on, a read refreshes the entry; four more (eight since the write) and
        // it is still there; six after the last read, gone.
        server.advance_caches(Duration::from_secs(4 * 60));
        assert_eq!(
            anthropic_cache(&post(&server, "/v1/messages", body.clone())).2,
            write
        );
        server.advance_caches(Duration::from_secs(4 * 60));
        assert_eq!(
            anthropic_cache(&post(&server, "/v1/messages", body.clone())).2,
            write
        );
        server.advance_caches(Duration::from_secs(6 * 60));
        let r = post(&server, "/v1/messages", body.clone());
        assert_eq!(anthropic_cache(&r).1..anthropic_cache(&r).2, write..0);

        // An hour's TTL outlives six minutes, and its writes are reported as such.
        let mut hour = cached_messages(&filler("hour", 2000), "lens", false);
        hour["system"][1]["cache_control"] = json!({"type": "ephemeral", "ttl": "1h"});
        hour["messages"][0]["content"][0]["cache_control"] =
            json!({"type": "ephemeral", "ttl": "1h"});
        hour["messages"][0]["content"][0]["text"] = json!("hour");
        let r = post(&server, "/v1/messages", hour.clone());
        let h = server.requests().last().unwrap().usage.unwrap();
        assert_eq!(
            r.json()["usage"]["cache_creation"]["ephemeral_1h_input_tokens"],
            h.cache_write_1h
        );
        assert!(h.cache_write_1h > 2000 && h.cache_write_5m == 0, "{h:?}");
        server.advance_caches(Duration::from_secs(6 * 60));
        let r = post(&server, "/v1/messages", hour);
        assert_eq!(anthropic_cache(&r).2, h.cache_write_1h);
    }

    /// Anthropic's lookback: a conversation whose breakpoint moved on to its newest block
    /// reads the entry its previous turn wrote at an earlier block, within 20 blocks.
    #[test]
    fn anthropic_looks_back_from_a_moved_breakpoint() {
        let server = MockServer::start();
        let shared = filler("turn", 2000);
        let mut body = json!({"model": "m", "max_tokens": 10, "messages": [
            {"role": "user", "content": [{"type": "text", "text": shared,
                                          "cache_control": {"type": "ephemeral"}}]}]});
        let write = anthropic_cache(&post(&server, "/v1/messages", body.clone())).1;
        let msgs = body["messages"].as_array_mut().unwrap();
        msgs[0]["content"][0]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        msgs.push(json!({"role": "assistant", "content": [{"type": "text", "text": "a"}]}));
        msgs.push(
            json!({"role": "user", "content": [{"type": "text", "text": "b",
            "cache_control": {"type": "ephemeral"}}]}),
        );
        let (_, write2, read2) = anthropic_cache(&post(&server, "/v1/messages", body));
        assert_eq!(read2, write);
        assert!(write2 > 0 && write2 < 50, "{write2}");
    }

    /// OpenAI (Responses and Chat Completions): a prompt of 1,024 tokens or more is cached
    /// with no marker; a later request reads its longest matching prefix in 128-token steps,
    /// counted inside the input total, whatever ids the items carry; not before the writer's
    /// answer began, not under another key, never under 1,024 tokens.
    #[test]
    fn openai_caches_long_prefixes_in_steps() {
        let server = MockServer::start();
        let shared = filler("shared", 3000);
        let responses = |lens: &str| {
            let mut b = responses_body(false, &shared);
            b["instructions"] = json!("You judge.");
            // Ids and metadata a CLI gives each item are not shown to the model.
            b["input"][0]["id"] = json!(format!("msg_{lens}"));
            b["input"][0]["internal_chat_message_metadata_passthrough"] = json!({"t": lens});
            b["input"]
                .as_array_mut()
                .unwrap()
                .push(json!({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": lens}]}));
            b
        };
        let usage = |r: &Resp, total: &str, details: &str| {
            let u = &r.json()["usage"];
            (
                u[total].as_u64().unwrap(),
                u[details]["cached_tokens"].as_u64().unwrap(),
            )
        };
        let r = post(&server, "/v1/responses", responses("lens A"));
        let (total, cached) = usage(&r, "input_tokens", "input_tokens_details");
        assert!(total > 3000 && cached == 0);
        let r = post(&server, "/v1/responses", responses("lens B"));
        let (total2, cached2) = usage(&r, "input_tokens", "input_tokens_details");
        assert!(
            cached2 > 3000 && cached2 < total2 && cached2 % 128 == 0,
            "{cached2}"
        );
        assert_eq!(server.requests()[1].usage.unwrap().cache_read, cached2);
        let r = post_with(
            &server,
            "/v1/responses",
            &responses("lens B"),
            "Authorization: Bearer other\r\n",
        );
        assert_eq!(usage(&r, "input_tokens", "input_tokens_details").1, 0);

        // Chat Completions, the same rules; held, the writer's prefix is not read.
        server.hold_when("HELD");
        let chat = |lens: &str| chat_body(false, false, &format!("{shared}{lens}"));
        let held = {
            let (addr, body) = (server.addr, chat("HELD"));
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                send(&mut s, "POST", "/v1/chat/completions", &body, "");
                read_response(&mut s)
            })
        };
        while server.requests().len() < 4 {
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = post(&server, "/v1/chat/completions", chat("lens"));
        assert_eq!(usage(&r, "prompt_tokens", "prompt_tokens_details").1, 0);
        server.release();
        held.join().unwrap();
        let r = post(&server, "/v1/chat/completions", chat("other lens"));
        let (total, cached) = usage(&r, "prompt_tokens", "prompt_tokens_details");
        assert!(
            cached > 2900 && cached < total && cached % 128 == 0,
            "{cached}"
        );

        // Under 1,024 tokens: never.
        for _ in 0..2 {
            let r = post(
                &server,
                "/v1/chat/completions",
                chat_body(false, false, PROMPT),
            );
            let (total, cached) = usage(&r, "prompt_tokens", "prompt_tokens_details");
            assert!(total > 0 && total < MIN_CACHEABLE && cached == 0);
        }
    }

    #[test]
    fn drop_stops_the_server() {
        let server = MockServer::start();
        let addr = server.addr;
        // An idle keep-alive connection must not hold the drop up.
        let _idle = TcpStream::connect(addr).unwrap();
        let t = Instant::now();
        drop(server);
        assert!(t.elapsed() < Duration::from_secs(2));
        assert!(TcpStream::connect(addr).is_err());
    }
}
