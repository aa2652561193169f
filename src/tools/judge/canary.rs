//! Canaries: `--canary FILE=holds|breaks` asks each seat, once per run and beside the real
//! panel, about a candidate whose answer is known. A canary judge takes the panel's first lens
//! and runs under the same seat, sandbox and lockdown as the real judges; its record is a
//! verdict record about the canary's own candidate, with `"canary"` the expected verdict.

use anyhow::{Context, Result, bail};

use crate::contracts::verdict::Lens;
use crate::engine::harness::Seat;
use crate::records::Verdict;
use crate::records::candidate::Candidate;
use crate::tools::judge::panel::{CANARY_PREFIX as PREFIX, Judge, pair};

/// One `--canary FILE=VERDICT`: the frozen file and the verdict it is known to deserve.
#[derive(Debug)]
pub struct Canary {
    pub candidate: Candidate,
    pub expected: Verdict,
}

/// Reads `FILE=holds|breaks`, split at the last `=` (a file name may hold one).
pub fn parse(spec: &str) -> Result<Canary> {
    let Some((file, verdict)) = spec.rsplit_once('=') else {
        bail!("--canary {spec:?}: expected FILE=holds or FILE=breaks");
    };
    let expected = match verdict {
        "holds" => Verdict::Holds,
        "breaks" => Verdict::Breaks,
        other => bail!("--canary {spec:?}: {other:?} is not a verdict (holds or breaks)"),
    };
    if file.is_empty() || file == "-" {
        bail!("--canary {spec:?}: expected a file before the `=`");
    }
    let candidate = Candidate::read(file).with_context(|| format!("--canary {spec:?}"))?;
    Ok(Canary {
        candidate,
        expected,
    })
}

/// The canary judges: for each canary (numbered from 1), one judge per seat, all on `lens`,
/// named `canary-N` (one seat) or `canary-N@SEAT`, names no lens can take.
pub fn judges(lens: &Lens, seats: &[Seat], count: usize) -> Result<Vec<(usize, Judge)>> {
    let mut out = Vec::new();
    for n in 0..count {
        let named = Lens::new(&format!("{PREFIX}{}", n + 1), &lens.question);
        for mut judge in pair(&[named], seats, false)? {
            judge.lens = lens.clone();
            out.push((n, judge));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::Table;
    use std::collections::BTreeMap;

    #[test]
    fn a_canary_splits_at_the_last_equals_sign() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a=b.md");
        std::fs::write(&file, "known").unwrap();
        let c = parse(&format!("{}=breaks", file.display())).unwrap();
        assert_eq!(c.expected, Verdict::Breaks);
        assert_eq!(c.candidate.text.as_str(), "known");
        let err = |s: &str| format!("{:#}", parse(s).unwrap_err());
        assert!(err("nofile").contains("expected FILE=holds or FILE=breaks"));
        assert!(err(&format!("{}=maybe", file.display())).contains("\"maybe\" is not a verdict"));
        assert!(err("=holds").contains("expected a file"));
        assert!(err("/no/such/file=holds").contains("/no/such/file"));
    }

    #[test]
    fn canary_judges_are_one_per_seat_and_canary_on_the_first_lens() {
        let seat = |s: &str| Seat::parse(s, &Table::builtin(), &BTreeMap::new()).unwrap();
        let lens = Lens::new("edges", "What breaks it?");
        let j = judges(&lens, &[seat("claude:haiku"), seat("codex:gpt-5")], 2).unwrap();
        let names: Vec<_> = j.iter().map(|(n, j)| (*n, j.name.as_str())).collect();
        assert_eq!(
            names,
            [
                (0, "canary-1@claude-haiku"),
                (0, "canary-1@codex-gpt-5"),
                (1, "canary-2@claude-haiku"),
                (1, "canary-2@codex-gpt-5")
            ]
        );
        assert!(j.iter().all(|(_, j)| j.lens == lens));
        let one = judges(&lens, &[seat("claude:haiku")], 1).unwrap();
        assert_eq!(one[0].1.name, "canary-1");
    }
}
