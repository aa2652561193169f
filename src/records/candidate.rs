//! Freezing the candidate: read it once, seal it, keep the copy every judge is shown.

use anyhow::{Result, bail};
use sha2::{Digest, Sha256};

use crate::records::input::{Input, Source};

/// The largest candidate a panel will read.
pub const MAX_CANDIDATE: usize = 64 << 20;

/// The work under review, read once and never again.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Shared by every prompt built from it: a large candidate is held once.
    pub text: std::sync::Arc<String>,
    /// `sha256:<hex>` of the text's bytes.
    pub seal: String,
}

impl Candidate {
    /// Reads the candidate from a file, or standard input for `-`.
    pub fn read(path: &str) -> Result<Candidate> {
        let (name, bytes) = Source::Path(path.into()).open_as_is()?;
        let mut input = Input::from_reader(&name, bytes);
        let text = input.read_to_string(MAX_CANDIDATE)?;
        if text.trim().is_empty() {
            bail!("{}: the candidate is empty", input.name);
        }
        if let Some(at) = text.find('\0') {
            bail!(
                "{}: a NUL byte at offset {at}: no judge's command line can carry it",
                input.name
            );
        }
        let seal = seal(text.as_bytes());
        Ok(Candidate {
            text: std::sync::Arc::new(text),
            seal,
        })
    }
}

/// `sha256:<hex>` of some bytes.
pub fn seal(bytes: &[u8]) -> String {
    seal_of(Sha256::digest(bytes))
}

/// The seal of a pair of answers to one question: SHA-256 over a tag and the three texts, each
/// after its length (8 bytes, little-endian), so no two different triples share the bytes
/// sealed. The same question and answers in the same order always give the same seal.
pub fn pair_seal(question: &str, a: &str, b: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"panel pairwise\0");
    for text in [question, a, b] {
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    seal_of(h.finalize())
}

/// `sha256:<hex>` of a SHA-256 digest.
pub fn seal_of(digest: impl AsRef<[u8]>) -> String {
    let digest = digest.as_ref();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_is_the_sha256_of_the_bytes() {
        assert_eq!(
            seal(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
