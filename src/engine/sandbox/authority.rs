//! The run's own certificate authority: made once a run, in the tool, its key never written to
//! disk nor given to a judge. A judge trusts its certificate (through the variables its CLI
//! reads), so that its proxy can speak TLS as the model's hosts and see the model requests it
//! swaps a placeholder in ([`super::swap`]). It lives as long as the run, and is worth nothing
//! after it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use serde::{Deserialize, Serialize};

/// An authority as its supervisor receives it: its certificate and key, in PEM.
#[derive(Clone, Serialize, Deserialize)]
pub struct Keys {
    pub cert: String,
    pub key: String,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys(…)")
    }
}

/// What the authority is: its name, and that it issues certificates for hosts alone.
fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    params
        .distinguished_name
        .push(DnType::CommonName, "panel run authority");
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params
}

/// A new authority for one run, valid for a day.
pub fn make() -> Result<Keys, String> {
    let mut params = ca_params();
    let now = std::time::SystemTime::now();
    params.not_before = (now - std::time::Duration::from_secs(3600)).into();
    params.not_after = (now + std::time::Duration::from_secs(86_400)).into();
    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    let key_pem = key.serialize_pem();
    let issuer = CertifiedIssuer::self_signed(params, key).map_err(|e| e.to_string())?;
    Ok(Keys {
        cert: issuer.pem(),
        key: key_pem,
    })
}

/// The most of a user's bundle of authorities read (`NODE_EXTRA_CA_CERTS`, …): the system's
/// whole store is under 1 MiB.
pub const MAX_BUNDLE: usize = crate::records::input::MAX_SETTINGS;

/// The run's authority as a judge trusts it: a PEM file of every authority the user trusts
/// (the system's, or what `SSL_CERT_FILE` names in their place, and the files of the
/// variables that add more) and the run's own, for a CLI's variable that adds authorities
/// as for one that replaces them.
pub fn bundle(keys: &Keys, user_env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut pem = String::new();
    for c in rustls_native_certs::load_native_certs().certs {
        pem.push_str(&pem_of(&c));
    }
    for var in [
        "NODE_EXTRA_CA_CERTS",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    ] {
        // A bundle is a few hundred KiB; one past the bound (`/dev/zero`) is passed over as an
        // unreadable one is, never read on.
        let read = |f: String| {
            let what = format!("{var} {f}");
            crate::records::input::read_bounded(f.as_ref(), MAX_BUNDLE, &what).ok()
        };
        if let Some(text) = user_env(var).and_then(read) {
            pem.push_str(text.trim_end());
            pem.push('\n');
        }
    }
    pem.push_str(&keys.cert);
    pem
}

/// A certificate in PEM.
fn pem_of(der: &[u8]) -> String {
    let text = super::endpoint::base64(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in text.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or(""));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// An authority that issues a certificate for each host a judge asks for, once.
pub struct Issuer {
    issuer: rcgen::Issuer<'static, KeyPair>,
    issued: Mutex<HashMap<String, Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Issuer(…)")
    }
}

impl Issuer {
    pub fn new(keys: &Keys) -> Result<Arc<Issuer>, String> {
        let key = KeyPair::from_pem(&keys.key).map_err(|e| e.to_string())?;
        // The same name and key make the same issuer: no certificate parser needed.
        let issuer = rcgen::Issuer::new(ca_params(), key);
        Ok(Arc::new(Issuer {
            issuer,
            issued: Mutex::new(HashMap::new()),
        }))
    }

    /// A certificate for `host` (a name or an address), issued once.
    fn for_host(&self, host: &str) -> Option<Arc<CertifiedKey>> {
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = issued.get(host) {
            return Some(Arc::clone(k));
        }
        let mut params = CertificateParams::new(vec![host.to_string()]).ok()?;
        params.distinguished_name.push(DnType::CommonName, host);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        // Strict verifiers (Python 3.13's) want the issuer's key identifier named.
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let now = std::time::SystemTime::now();
        params.not_before = (now - std::time::Duration::from_secs(3600)).into();
        params.not_after = (now + std::time::Duration::from_secs(86_400)).into();
        let key = KeyPair::generate().ok()?;
        let cert = params.signed_by(&key, &self.issuer).ok()?;
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signing = rustls::crypto::ring::sign::any_supported_type(&der).ok()?;
        let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
        let k = Arc::new(CertifiedKey::new(chain, signing));
        issued.insert(host.to_string(), Arc::clone(&k));
        Some(k)
    }

    /// A server configuration that speaks as `host` (whatever name the client asks for: the
    /// connection was made to `host`), HTTP/1.1 alone.
    pub fn server_config(self: &Arc<Issuer>, host: &str) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring has the default versions")
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(As {
                issuer: Arc::clone(self),
                host: host.to_string(),
            }));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

#[derive(Debug)]
struct As {
    issuer: Arc<Issuer>,
    host: String,
}

impl ResolvesServerCert for As {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.issuer.for_host(&self.host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 47: every file a tool reads from the user is read to a bound: a bundle variable
    /// naming `/dev/zero` is passed over at the bound, never read on.
    #[test]
    fn a_bundle_without_end_is_passed_over() {
        let keys = make().unwrap();
        let env = |v: &str| (v == "NODE_EXTRA_CA_CERTS").then(|| "/dev/zero".to_string());
        let pem = bundle(&keys, &env);
        assert!(pem.ends_with(&keys.cert), "the run's own authority last");
        assert!(!pem.contains('\0'));
    }
}
