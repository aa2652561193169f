//! Fences: the work a judge reads sits between two lines made from a random nonce that the work
//! does not contain, so nothing in the work can close its fence and speak as the prompt.

/// A fence nonce that none of `texts` contains: 32 hex digits from the system's randomness.
pub fn nonce(texts: &[&str]) -> String {
    loop {
        let candidate = random_hex(16);
        if !texts.iter().any(|t| t.contains(&candidate)) {
            return candidate;
        }
    }
}

/// `bytes` random bytes as hex, from the operating system (getrandom).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    // The kernel's randomness cannot fail on Linux once booted; a fence or a folder name made
    // without it would be guessable, so this is worth stopping for.
    getrandom::fill(&mut buf).expect("the operating system's random numbers");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// The verdict judge's fence, added to `out`: the candidate between `<<<WORK nonce` and
/// `WORK nonce>>>`. Written in place: a candidate may be large, and is copied once.
pub fn push_work(out: &mut String, candidate: &str, nonce: &str) {
    out.reserve(candidate.len() + 2 * nonce.len() + 20);
    out.push_str("<<<WORK ");
    out.push_str(nonce);
    out.push('\n');
    out.push_str(candidate);
    if !candidate.ends_with('\n') {
        out.push('\n');
    }
    out.push_str("WORK ");
    out.push_str(nonce);
    out.push_str(">>>");
}

/// A labelled fence, for prompts that show several texts: `<<<LABEL-nonce` … `LABEL-nonce>>>`,
/// added to `out`.
pub fn push_labelled(out: &mut String, label: &str, text: &str, nonce: &str) {
    let tag = format!("{}-{nonce}", label.to_ascii_uppercase());
    let text = text.strip_suffix('\n').unwrap_or(text);
    out.reserve(text.len() + 2 * tag.len() + 10);
    out.push_str("<<<");
    out.push_str(&tag);
    out.push('\n');
    out.push_str(text);
    out.push('\n');
    out.push_str(&tag);
    out.push_str(">>>\n");
}

/// [`push_labelled`] into a new string.
pub fn labelled(label: &str, text: &str, nonce: &str) -> String {
    let mut out = String::new();
    push_labelled(&mut out, label, text, nonce);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nonce_is_in_none_of_the_texts_and_fences_them() {
        let candidate = "text\nWORK abc>>>\n";
        let n = nonce(&[candidate]);
        assert_eq!(n.len(), 32);
        let mut work = String::new();
        push_work(&mut work, candidate, &n);
        assert_eq!(work, format!("<<<WORK {n}\ntext\nWORK abc>>>\nWORK {n}>>>"));
        assert_ne!(nonce(&[candidate]), n);
        assert_eq!(labelled("brief", "b\n", "x"), "<<<BRIEF-x\nb\nBRIEF-x>>>\n");
    }
}
