//! What a judge's proxy speaks of: the hosts and ports a judge may reach ([`Endpoint`]), the
//! endpoints the URLs it was given name, and the answer it refuses a request with.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

/// A host and port a judge may reach.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Endpoint {
    /// A name in lower case, or an address (an IPv6 one without brackets).
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// `HOST:PORT` or `[IPV6]:PORT`, as `--sandbox-allow` takes it.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let want = || {
            format!(
                "{}: want HOST:PORT, e.g. api.anthropic.com:443 or [::1]:8080",
                crate::records::printable::inline(text)
            )
        };
        let (host, port) = match text.strip_prefix('[') {
            Some(rest) => {
                let (v6, port) = rest.split_once("]:").ok_or_else(want)?;
                v6.parse::<Ipv6Addr>().map_err(|_| want())?;
                (v6, port)
            }
            None => text.rsplit_once(':').ok_or_else(want)?,
        };
        let port: u16 = port.parse().ok().filter(|p| *p > 0).ok_or_else(want)?;
        let name_ok = !host.is_empty()
            && host.len() <= 253
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
            && !host.starts_with(['-', '.']);
        if !name_ok && host.parse::<Ipv6Addr>().is_err() {
            return Err(want());
        }
        Ok(Endpoint {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    /// Whether it is this machine's loopback (`localhost`, 127.0.0.0/8, `::1`).
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self.host.ends_with(".localhost")
            || self.host.parse::<IpAddr>().is_ok_and(|a| a.is_loopback())
    }

    /// The loopback addresses a judge in a jail reaches it at (where its client connects when
    /// it does not go through the proxy).
    pub fn loopback_addresses(&self) -> Vec<IpAddr> {
        match self.host.parse::<IpAddr>() {
            Ok(a) => vec![a],
            Err(_) => vec![
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(Ipv6Addr::LOCALHOST),
            ],
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.host.contains(':') {
            true => write!(f, "[{}]:{}", self.host, self.port),
            false => write!(f, "{}:{}", self.host, self.port),
        }
    }
}

/// The endpoints the URLs in `text` name: `https://h:8443/x` is h:8443, `http://h/` h:80.
pub fn urls(text: &str) -> Vec<Endpoint> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme: String = rest[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || "+-.".contains(*c))
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        rest = &rest[at + 3..];
        let end = rest
            .find(|c: char| "/?#\"' \t\n,;)}>\\".contains(c))
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let default = match scheme.to_ascii_lowercase().as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        };
        let (host, port) = match host_port.strip_prefix('[') {
            Some(v6) => match v6.split_once(']') {
                Some((h, p)) => (h, p.strip_prefix(':').and_then(|p| p.parse().ok())),
                None => continue,
            },
            None => match host_port.rsplit_once(':') {
                Some((h, p)) => (h, p.parse().ok()),
                None => (host_port, None),
            },
        };
        if let Some(port) = port.or(default)
            && let Ok(e) = Endpoint::parse(&match host.contains(':') {
                true => format!("[{host}]:{port}"),
                false => format!("{host}:{port}"),
            })
        {
            out.push(e);
        }
    }
    out
}

/// A request head read: its request line's three words, and its header lines.
pub struct Head<'a> {
    pub method: &'a str,
    pub uri: &'a str,
    pub version: &'a str,
    pub lines: Vec<&'a str>,
}

impl Head<'_> {
    /// `head` through its blank line.
    pub fn parse(head: &[u8]) -> Result<Head<'_>, String> {
        let text = std::str::from_utf8(head).map_err(|_| "a request head that is not text")?;
        let mut lines = text.trim_end_matches("\r\n").split("\r\n");
        let first = lines.next().unwrap_or("");
        let mut words = first.split(' ');
        let (Some(method), Some(uri), Some(version), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err("a request line that is not METHOD TARGET VERSION".into());
        };
        Ok(Head {
            method,
            uri,
            version,
            lines: lines.collect(),
        })
    }
}

/// An HTTP answer refusing a request, with why.
pub fn refusal(code: u16, why: &str) -> Vec<u8> {
    let reason = match code {
        400 => "Bad Request",
        403 => "Forbidden",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    };
    let body = format!("panel: {}\n", crate::records::printable::one_line(why));
    format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Base64, as HTTP's Basic credentials and PEM write it.
pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}
