//! TLS as a real login meets it, on this machine alone: a certificate authority of the test's
//! own (its certificate in a PEM file the CLIs are told to trust, as a company's CA is, through
//! `NODE_EXTRA_CA_CERTS` and `SSL_CERT_FILE`), a certificate for each host a client asks for
//! (by SNI) signed by it, and a stand-in HTTPS proxy (the user's `HTTPS_PROXY`) that tunnels
//! every `CONNECT host:443` to the stand-in server's TLS port, whatever the host, logging each.
//!
//! ```ignore
//! let ca = TestCa::new(dir);                 // ca.pem written in dir
//! let server = MockServer::start_tls(&ca);   // plain and TLS listeners
//! let proxy = ConnectProxy::start(server.tls_addr());
//! // HTTPS_PROXY=proxy.url(), NODE_EXTRA_CA_CERTS=ca.pem(): https://api.anthropic.com reaches server
//! ```

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// A certificate authority of the test's own, and the certificates it has issued, by host.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pem: PathBuf,
    issued: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TestCa({})", self.pem.display())
    }
}

impl TestCa {
    /// A new authority; its certificate is written to `dir/ca.pem`.
    pub fn new(dir: &Path) -> Arc<TestCa> {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "panel test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = dir.join("ca.pem");
        std::fs::write(&pem, issuer.pem()).unwrap();
        Arc::new(TestCa {
            issuer,
            pem,
            issued: Mutex::new(HashMap::new()),
        })
    }

    /// The PEM file of its certificate.
    pub fn pem(&self) -> &Path {
        &self.pem
    }

    /// A certificate for `host`, issued once.
    fn for_host(&self, host: &str) -> Arc<CertifiedKey> {
        let mut issued = self.issued.lock().unwrap();
        if let Some(k) = issued.get(host) {
            return Arc::clone(k);
        }
        let mut params = CertificateParams::new(vec![host.to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, host);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        // Python 3.13's default context checks strictly (VERIFY_X509_STRICT): the key
        // identifier of the issuer must be named.
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signing = rustls::crypto::ring::sign::any_supported_type(&der).unwrap();
        let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
        let k = Arc::new(CertifiedKey::new(chain, signing));
        issued.insert(host.to_string(), Arc::clone(&k));
        k
    }

    /// A server configuration that answers each host with a certificate for it.
    pub fn server_config(self: &Arc<TestCa>) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(ByHost(Arc::clone(self))));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

#[derive(Debug)]
struct ByHost(Arc<TestCa>);

impl ResolvesServerCert for ByHost {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.for_host(hello.server_name().unwrap_or("localhost")))
    }
}

/// The user's `HTTPS_PROXY`: it answers every `CONNECT` by tunnelling to `to` (or, gone bad,
/// a byte at a time: [`ConnectProxy::dripping`]), and logs the targets asked for. Dropping it
/// stops it.
pub struct ConnectProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    pub fn start(to: SocketAddr) -> ConnectProxy {
        ConnectProxy::serving(move |conn, log, _| {
            let _ = tunnel(conn, to, log);
        })
    }

    /// A proxy that answers every `CONNECT` one byte every `every`, a head that never ends.
    pub fn dripping(every: Duration) -> ConnectProxy {
        ConnectProxy::serving(move |mut conn, log, stop| {
            let mut head = [0u8; 4096];
            let n = conn.read(&mut head).unwrap_or(0);
            let text = String::from_utf8_lossy(&head[..n]);
            let target = text.split_whitespace().nth(1).unwrap_or_default();
            log.lock().unwrap().push(target.to_string());
            let answer = b"HTTP/1.1 200 Connection established\r\nX-Pad: ";
            for b in answer.iter().chain(std::iter::repeat(&b'a')) {
                if stop.load(Ordering::SeqCst) || conn.write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(every);
            }
        })
    }

    /// A listener on 127.0.0.1 that gives each connection to `serve` on a thread of its own.
    fn serving(
        serve: impl Fn(TcpStream, &Mutex<Vec<String>>, &AtomicBool) + Send + Sync + 'static,
    ) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (s, l, serve) = (Arc::clone(&stop), Arc::clone(&log), Arc::new(serve));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (l, s, serve) = (Arc::clone(&l), Arc::clone(&s), Arc::clone(&serve));
                std::thread::spawn(move || serve(conn, &l, &s));
            }
        });
        ConnectProxy { addr, stop, log }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `HOST:PORT` of every tunnel asked for, in order.
    pub fn connects(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for ConnectProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn tunnel(client: TcpStream, to: SocketAddr, log: &Mutex<Vec<String>>) -> io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if (&client).read(&mut byte)? == 0 || head.len() > 16 << 10 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut words = text.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else {
        (&client).write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")?;
        return Ok(());
    };
    log.lock().unwrap().push(target.to_string());
    let upstream = TcpStream::connect(to)?;
    (&client).write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    let (c2, u2) = (client.try_clone()?, upstream.try_clone()?);
    let back = std::thread::spawn(move || {
        let _ = io::copy(&mut &u2, &mut &c2);
        let _ = c2.shutdown(Shutdown::Write);
    });
    let _ = io::copy(&mut &client, &mut &upstream);
    let _ = upstream.shutdown(Shutdown::Write);
    let _ = back.join();
    Ok(())
}
