//! The broker's one kind of request: an HTTPS `POST` to a token endpoint, made as the CLI
//! itself would make it: through the user's `HTTPS_PROXY` (and around it for `NO_PROXY`),
//! trusting the system's certificate authorities as the user's environment names them
//! (`SSL_CERT_FILE`, `SSL_CERT_DIR`) and the extra ones it adds (`NODE_EXTRA_CA_CERTS`,
//! `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`). HTTP/1.1, one request a connection, bounded.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

use super::dial::{self, Bound, STOPPED};
use crate::engine::sandbox::egress::Endpoint;

/// How long a refresh has, all told: the name's lookup, the connection, the proxy's tunnel,
/// the handshake, the request and the answer, however slowly each comes.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read.
const MAX_ANSWER: usize = 1 << 20;

/// Variables naming more authorities to trust beside the system's.
const EXTRA_CAS: [&str; 3] = [
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
];

/// An HTTPS response: its status and body.
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// `POST`s `body` to `url` (`https://host[:port]/path`): connected, tunnelled, shaken hands
/// with, asked and answered within `within` all told, and given up within a moment of `stop`.
pub fn post(
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    env: &dyn Fn(&str) -> Option<String>,
    within: Duration,
    stop: &dyn Fn() -> bool,
) -> Result<Response> {
    let bound = Bound {
        deadline: Instant::now() + within,
        stop,
    };
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| anyhow!("{url}: not https"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let target = match authority.contains(':') {
        true => Endpoint::parse(authority),
        false => Endpoint::parse(&format!("{authority}:443")),
    }
    .map_err(|e| anyhow!("{url}: {e}"))?;
    let late = |e: std::io::Error| match bound.over() {
        Some(STOPPED) => anyhow!(STOPPED),
        Some(_) => anyhow!("{target}: no answer within {} s", within.as_secs()),
        None => anyhow!("{target}: {e}"),
    };
    let config = client_config(env)?;
    let tcp = dial::open(&target, env, bound).map_err(|e| match bound.over() {
        None => anyhow!("cannot reach {target}: {e}"),
        Some(_) => late(e),
    })?;
    let name =
        ServerName::try_from(target.host.clone()).map_err(|e| anyhow!("{}: {e}", target.host))?;
    let conn = rustls::ClientConnection::new(Arc::new(config), name)?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: {}\r\nAccept: application/json\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        if k.contains(['\r', '\n', ':']) || v.contains(['\r', '\n']) {
            bail!("a header of the refresh request holds a line break");
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    tls.write_all(head.as_bytes()).map_err(late)?;
    tls.write_all(body).map_err(late)?;
    tls.flush().map_err(late)?;
    tls.sock.sent();
    let mut answer = Vec::new();
    let read = (&mut tls)
        .take(MAX_ANSWER as u64 + 1)
        .read_to_end(&mut answer);
    // A server that closes without close_notify after a whole answer is common; what was read
    // decides, unless the deadline or a stop cut it short.
    if let Err(e) = read
        && (answer.is_empty() || dial::cut_short(&e))
    {
        return Err(late(e));
    }
    if answer.len() > MAX_ANSWER {
        bail!(
            "{target}: the answer is larger than {} KiB",
            MAX_ANSWER >> 10
        );
    }
    parse(&answer).ok_or_else(|| anyhow!("{target}: not an HTTP answer"))
}

/// The status and body of an HTTP/1.1 answer (a `Content-Length` one, a chunked one, or one
/// that ends with its connection).
fn parse(bytes: &[u8]) -> Option<Response> {
    let end = memchr::memmem::find(bytes, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&bytes[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut chunked = false;
    let mut length: Option<usize> = None;
    for l in lines {
        let (k, v) = l.split_once(':')?;
        match k.trim().to_ascii_lowercase().as_str() {
            "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
            "content-length" => length = v.trim().parse().ok(),
            _ => {}
        }
    }
    let rest = &bytes[end + 4..];
    let body = match (chunked, length) {
        (true, _) => dechunk(rest)?,
        (false, Some(n)) => rest.get(..n)?.to_vec(),
        (false, None) => rest.to_vec(),
    };
    Some(Response { status, body })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = memchr::memmem::find(rest, b"\r\n")?;
        let size = std::str::from_utf8(&rest[..eol]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

/// The authorities trusted: the system's (or those `SSL_CERT_FILE` and `SSL_CERT_DIR` name in
/// their place), and every one in the files the extra variables name.
pub fn client_config(env: &dyn Fn(&str) -> Option<String>) -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for var in EXTRA_CAS {
        if let Some(file) = env(var).filter(|f| !f.is_empty()) {
            let certs: Vec<CertificateDer> = CertificateDer::pem_file_iter(&file)
                .map_err(|e| anyhow!("{var}={file}: {e}"))?
                .filter_map(Result::ok)
                .collect();
            roots.add_parsable_certificates(certs);
        }
    }
    if roots.is_empty() {
        bail!(
            "no certificate authority to trust (none in the system's store, nor named by SSL_CERT_FILE or NODE_EXTRA_CA_CERTS)"
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The body of a form request.
pub fn form(fields: &[(String, String)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn escape(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_with_a_length_in_chunks_or_to_the_end() {
        let a = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}extra").unwrap();
        assert_eq!((a.status, a.body.as_slice()), (200, b"{}".as_slice()));
        let a = parse(
            b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n5;x=1\r\n\":1}\n\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (a.status, a.body.as_slice()),
            (400, b"{\"a\":1}\n".as_slice())
        );
        let a = parse(b"HTTP/1.0 401 No\r\n\r\nbody").unwrap();
        assert_eq!((a.status, a.body.as_slice()), (401, b"body".as_slice()));
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_none());
        assert!(parse(b"garbage").is_none());
    }

    /// An endpoint that keeps sending, a byte at a time, is cut off at the deadline, not at
    /// a wait per read.
    #[test]
    fn a_dripping_endpoint_is_cut_off_at_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            // A TLS record header promising 16 KiB, then its bytes one at a time.
            let _ = peer.write_all(&[0x16, 0x03, 0x03, 0x40, 0x00]);
            while peer.write_all(&[0]).is_ok() {
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let url = format!("https://127.0.0.1:{port}/token");
            let env = |_: &str| None;
            let never = || false;
            let said = post(&url, &[], b"{}", &env, Duration::from_secs(1), &never).err();
            let _ = tx.send(said.map(|e| format!("{e:#}")));
        });
        let said = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("still reading after 10 s");
        let said = said.expect("a dripping endpoint is an error");
        assert!(!said.contains("certificate authority"), "{said}");
    }

    #[test]
    fn a_form_escapes_what_a_form_must() {
        let f = |pairs: &[(&str, &str)]| {
            form(
                &pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            f(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", "1//a+b/c=")
            ]),
            "grant_type=refresh_token&refresh_token=1%2F%2Fa%2Bb%2Fc%3D"
        );
    }
}
