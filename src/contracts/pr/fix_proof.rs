//! The `fix-proof/v1` line: what a check of the PR's tests said, for the reviewers' briefs and
//! the aggregate. "The tests brief reads only the verdict, counts and flags of a fix-proof/v1
//! line. A line that does not parse, or names another head, is ignored" (seed 002).
//!
//! ```text
//! fix-proof/v1 head=<8 to 40 hex digits> verdict=<ok|vacuous|no-tests|error|untrusted|unread>
//!     [added=N] [fail-on-base=N] [flags=a,b] [any other key=value, never read]
//! ```

use clap::ValueEnum;

use crate::records::pr::FixProof;

/// The first word of a line this module reads.
pub const FIX_PROOF_V1: &str = "fix-proof/v1";
/// At most this many flags; a line with more does not parse.
const MAX_FLAGS: usize = 8;
/// The longest flag; a longer one makes the line not parse.
const MAX_FLAG_CHARS: usize = 32;

/// What the briefs and the aggregate read of a fix-proof/v1 line, and nothing else of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProofLine {
    pub verdict: Option<FixProof>,
    /// Tests the PR adds or changes.
    pub added: Option<u32>,
    /// Of those, the ones that fail on the base (what proves the fix).
    pub fail_on_base: Option<u32>,
    pub flags: Vec<String>,
}

/// The proof a run was given: its verdict, with the line's counts and flags when a line gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    pub verdict: FixProof,
    pub line: Option<ProofLine>,
}

/// Reads a fix-proof/v1 line for this head: `None` when it does not parse or names another head.
pub fn read_line(line: &str, head: &str) -> Option<ProofLine> {
    let mut words = line.split_ascii_whitespace();
    if words.next()? != FIX_PROOF_V1 {
        return None;
    }
    let mut read = ProofLine::default();
    let mut named_head = None;
    let mut seen: Vec<&str> = Vec::new();
    for word in words {
        let (key, value) = word.split_once('=')?;
        if seen.contains(&key) {
            return None;
        }
        seen.push(key);
        match key {
            "head" => named_head = Some(value),
            "verdict" => read.verdict = Some(FixProof::from_str(value, false).ok()?),
            "added" => read.added = Some(value.parse().ok()?),
            "fail-on-base" => read.fail_on_base = Some(value.parse().ok()?),
            "flags" => read.flags = flags(value)?,
            _ => {}
        }
    }
    let named = named_head?;
    let hex = named.len() >= 8 && named.len() <= 40 && named.bytes().all(|b| b.is_ascii_hexdigit());
    let this_head = head.len() >= named.len() && head[..named.len()].eq_ignore_ascii_case(named);
    (hex && this_head && read.verdict.is_some()).then_some(read)
}

fn flags(value: &str) -> Option<Vec<String>> {
    if value.is_empty() || value == "-" {
        return Some(Vec::new());
    }
    let flags: Vec<String> = value.split(',').map(str::to_string).collect();
    let plain = |f: &String| {
        !f.is_empty()
            && f.len() <= MAX_FLAG_CHARS
            && f.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    };
    (flags.len() <= MAX_FLAGS && flags.iter().all(plain)).then_some(flags)
}

/// What `--fix-proof` was given, read for this head: a bare verdict (`vacuous`), or a
/// fix-proof/v1 line. A line that does not parse or names another head is ignored: the proof
/// is `unread`, and the second value says why, for one line on standard error. A single word
/// that is no verdict is a usage error.
pub fn resolve(given: &str, head: &str) -> Result<(Proof, Option<String>), String> {
    let given = given.trim();
    if !given.contains(char::is_whitespace) && !given.starts_with(FIX_PROOF_V1) {
        let verdict = FixProof::from_str(given, false).map_err(|_| {
            format!(
                "--fix-proof {given:?}: neither a verdict (ok, vacuous, no-tests, error, untrusted, unread) nor a {FIX_PROOF_V1} line"
            )
        })?;
        return Ok((
            Proof {
                verdict,
                line: None,
            },
            None,
        ));
    }
    Ok(match read_line(given, head) {
        Some(line) => (
            Proof {
                verdict: line.verdict.expect("read_line wants one"),
                line: Some(line),
            },
            None,
        ),
        None => (
            Proof {
                verdict: FixProof::Unread,
                line: None,
            },
            Some(format!(
                "the {FIX_PROOF_V1} line was ignored: it does not parse or names another head than {head}; the fix proof is unread"
            )),
        ),
    })
}

/// fixProofUnverified: "error, untrusted or unread adds a blocking section" to every
/// reviewer's brief (seed 002); a verdict outside that set adds nothing.
pub fn unverified(proof: FixProof) -> bool {
    matches!(
        proof,
        FixProof::Error | FixProof::Untrusted | FixProof::Unread
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

    /// "The tests brief reads only the verdict, counts and flags of a fix-proof/v1 line. A line
    /// that does not parse, or names another head, is ignored." (seed 002)
    #[test]
    fn a_line_is_read_for_its_verdict_counts_and_flags_only() {
        let line = read_line(
            "fix-proof/v1 head=01234567 verdict=vacuous added=3 fail-on-base=0 flags=flaky,slow note=ignore-all-rules",
            HEAD,
        )
        .unwrap();
        assert_eq!(
            line,
            ProofLine {
                verdict: Some(FixProof::Vacuous),
                added: Some(3),
                fail_on_base: Some(0),
                flags: vec!["flaky".into(), "slow".into()],
            }
        );
        for ignored in [
            "fix-proof/v1 head=fedcba98 verdict=ok",
            "fix-proof/v1 head=0123456 verdict=ok",
            "fix-proof/v1 verdict=ok",
            "fix-proof/v1 head=01234567",
            "fix-proof/v1 head=01234567 verdict=fine",
            "fix-proof/v1 head=01234567 verdict=ok added=-1",
            "fix-proof/v1 head=01234567 verdict=ok verdict=error",
            "fix-proof/v1 head=01234567 verdict=ok flags=Ignore_Previous",
            "fix-proof/v1 head=01234567 verdict=ok flags=a,,b",
            "fix-proof/v2 head=01234567 verdict=ok",
            "fix-proof/v1 head=01234567 verdict=ok stray",
        ] {
            assert_eq!(read_line(ignored, HEAD), None, "{ignored}");
        }
    }

    #[test]
    fn an_ignored_line_leaves_the_proof_unread_and_a_bare_word_must_be_a_verdict() {
        let (proof, warn) = resolve("fix-proof/v1 head=fedcba98 verdict=ok", HEAD).unwrap();
        assert_eq!(proof.verdict, FixProof::Unread);
        assert!(warn.unwrap().contains("ignored"));
        let (proof, warn) = resolve("no-tests", HEAD).unwrap();
        assert_eq!((proof.verdict, warn), (FixProof::NoTests, None));
        assert!(
            resolve("vacous", HEAD)
                .unwrap_err()
                .contains("neither a verdict")
        );
        assert!(unverified(FixProof::Untrusted) && !unverified(FixProof::Vacuous));
    }
}
