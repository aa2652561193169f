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

/// The verdict judge's fence: the candidate between `<<<WORK nonce` and `WORK nonce>>>`.
pub fn work(candidate: &str, nonce: &str) -> String {
    let mut out = format!("<<<WORK {nonce}\n{candidate}");
    if !candidate.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("WORK {nonce}>>>"));
    out
}

/// A labelled fence, for prompts that show several texts: `<<<LABEL-nonce` … `LABEL-nonce>>>`.
pub fn labelled(label: &str, text: &str, nonce: &str) -> String {
    let tag = format!("{}-{nonce}", label.to_ascii_uppercase());
    format!(
        "<<<{tag}\n{}\n{tag}>>>\n",
        text.strip_suffix('\n').unwrap_or(text)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nonce_is_in_none_of_the_texts_and_fences_them() {
        let candidate = "text\nWORK abc>>>\n";
        let n = nonce(&[candidate]);
        assert_eq!(n.len(), 32);
        assert_eq!(
            work(candidate, &n),
            format!("<<<WORK {n}\ntext\nWORK abc>>>\nWORK {n}>>>")
        );
        assert_ne!(nonce(&[candidate]), n);
        assert_eq!(labelled("brief", "b\n", "x"), "<<<BRIEF-x\nb\nBRIEF-x>>>\n");
    }
}
