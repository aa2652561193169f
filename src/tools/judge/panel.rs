//! The judges of a verdict panel: the lenses (the seed's three by default, or the user's), each
//! paired with a seat under a unique name, and the decorrelation rule over them.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::contracts::verdict::{self, Lens};
use crate::engine::harness::Seat;
use crate::rules::decorrelation::{self, Sitting};

/// The prefix every canary judge's name starts with, and no lens's may: a judge is named after
/// its lens, so no judge can take a canary's name.
pub const CANARY_PREFIX: &str = "canary-";

/// One judge of the panel: a lens on a seat, under a unique name.
#[derive(Clone, Debug)]
pub struct Judge {
    pub name: String,
    pub lens: Lens,
    pub seat: Seat,
}

impl Judge {
    fn sitting(&self) -> Sitting<'_> {
        Sitting {
            name: &self.name,
            lens: &self.lens.name,
            question: &self.lens.question,
            seat: &self.seat.spec,
            family: self.seat.family.as_deref(),
        }
    }
}

/// The lens flags as given: `--lens` (repeatable), `--lenses FILE`, `--cross`.
pub struct LensFlags<'a> {
    pub lens: &'a [String],
    pub file: Option<&'a Path>,
    pub cross: bool,
}

impl LensFlags<'_> {
    /// Whether any lens flag was given.
    pub fn given(&self) -> bool {
        !self.lens.is_empty() || self.file.is_some() || self.cross
    }
}

/// The lenses: `--lens` and `--lenses FILE`, or the three defaults.
pub fn lenses(flags: &LensFlags) -> Result<Vec<Lens>> {
    let mut out = Vec::new();
    if let Some(path) = flags.file {
        let what = format!("--lenses {}", path.display());
        let text =
            crate::records::input::read_bounded(path, crate::records::input::MAX_SETTINGS, &what)?;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            out.push(
                parse_lens(line).with_context(|| format!("{}: line {}", path.display(), n + 1))?,
            );
        }
    }
    for l in flags.lens {
        out.push(parse_lens(l).with_context(|| format!("--lens {l:?}"))?);
    }
    if out.is_empty() {
        out = verdict::default_lenses();
    }
    let mut seen = std::collections::HashSet::new();
    for l in &out {
        if !seen.insert(l.name.as_str()) {
            bail!("lens {:?} is given twice", l.name);
        }
    }
    Ok(out)
}

/// `NAME=QUESTION`, or the seed script's `NAME|QUESTION`.
fn parse_lens(text: &str) -> Result<Lens> {
    let split = match (text.find('='), text.find('|')) {
        (Some(e), Some(b)) => Some(e.min(b)),
        (e, b) => e.or(b),
    };
    let Some(at) = split else {
        bail!("expected NAME=QUESTION");
    };
    let (name, question) = (text[..at].trim(), text[at + 1..].trim());
    if name.is_empty() || question.is_empty() {
        bail!("expected NAME=QUESTION with both parts");
    }
    if let Err(why) = crate::records::printable::check_folder_name(name) {
        bail!("the lens name {why}");
    }
    if name.starts_with(CANARY_PREFIX) {
        bail!("the lens name starts with {CANARY_PREFIX:?}, kept for canaries");
    }
    Ok(Lens::new(name, question))
}

/// Pairs lenses with seats: one seat takes every lens; one lens goes to every seat; equal
/// counts pair in order; `--cross` runs every lens on every seat.
pub fn pair(lenses: &[Lens], seats: &[Seat], cross: bool) -> Result<Vec<Judge>> {
    let pairs: Vec<(&Lens, &Seat)> = if cross {
        lenses
            .iter()
            .flat_map(|l| seats.iter().map(move |s| (l, s)))
            .collect()
    } else if seats.len() == 1 {
        lenses.iter().map(|l| (l, &seats[0])).collect()
    } else if lenses.len() == 1 {
        seats.iter().map(|s| (&lenses[0], s)).collect()
    } else if lenses.len() == seats.len() {
        lenses.iter().zip(seats).collect()
    } else {
        bail!(
            "{} lenses and {} seats do not pair: give one seat, one lens, as many lenses as seats, \
                or --cross for every lens on every seat",
            lenses.len(),
            seats.len()
        );
    };
    let names = judge_names(&pairs);
    Ok(pairs
        .into_iter()
        .zip(names)
        .map(|((lens, seat), name)| Judge {
            name,
            lens: lens.clone(),
            seat: seat.clone(),
        })
        .collect())
}

/// Judges are named after their lens; where a lens runs on several seats, after the seat too.
fn judge_names(pairs: &[(&Lens, &Seat)]) -> Vec<String> {
    let count = |name: &str| pairs.iter().filter(|(l, _)| l.name == name).count();
    let mut names: Vec<String> = pairs
        .iter()
        .map(|(l, s)| {
            if count(&l.name) == 1 {
                l.name.clone()
            } else {
                format!("{}@{}", l.name, sanitize(&s.spec))
            }
        })
        .collect();
    // Two seats written alike (or alike once sanitized) still need distinct names.
    for i in 0..names.len() {
        let dups: Vec<usize> = (0..names.len()).filter(|&j| names[j] == names[i]).collect();
        if dups.len() > 1 {
            for (k, j) in dups.into_iter().enumerate() {
                names[j] = format!("{}-{}", names[j], k + 1);
            }
        }
    }
    names
}

fn sanitize(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.chars().take(60).collect()
}

/// The decorrelation rule over the judges of a verdict panel.
pub fn correlated(judges: &[Judge]) -> Option<String> {
    let sittings: Vec<Sitting> = judges.iter().map(Judge::sitting).collect();
    decorrelation::correlated(&sittings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::harness::Table;
    use std::collections::BTreeMap;

    fn seat(spec: &str) -> Seat {
        Seat::parse(spec, &Table::builtin(), &BTreeMap::new()).unwrap()
    }

    fn names(j: &[Judge]) -> Vec<&str> {
        j.iter().map(|j| j.name.as_str()).collect()
    }

    #[test]
    fn pairing_follows_the_four_rules() {
        let three = verdict::default_lenses();
        let one = vec![three[0].clone()];
        let seats = vec![seat("claude:haiku"), seat("codex:gpt-5"), seat("exec:x")];
        assert_eq!(
            names(&pair(&three, &seats[..1], false).unwrap()),
            ["correctness", "edges", "evidence"]
        );
        assert_eq!(
            names(&pair(&one, &seats, false).unwrap()),
            [
                "correctness@claude-haiku",
                "correctness@codex-gpt-5",
                "correctness@exec-x"
            ]
        );
        assert_eq!(
            names(&pair(&three, &seats, false).unwrap()),
            ["correctness", "edges", "evidence"]
        );
        assert_eq!(pair(&three, &seats, true).unwrap().len(), 9);
        let err = pair(&three, &seats[..2], false).unwrap_err().to_string();
        assert!(err.contains("--cross"), "{err}");
    }

    #[test]
    fn the_same_lens_on_the_same_family_is_refused() {
        let one = vec![verdict::default_lenses()[0].clone()];
        let judges = pair(&one, &[seat("claude:haiku"), seat("claude:sonnet")], false).unwrap();
        let msg = correlated(&judges).unwrap();
        assert!(
            msg.contains("share the lens \"correctness\" and the model family anthropic"),
            "{msg}"
        );
        let judges = pair(&one, &[seat("claude:haiku"), seat("codex:gpt-5")], false).unwrap();
        assert_eq!(correlated(&judges), None);
        let judges = pair(&verdict::default_lenses(), &[seat("claude:haiku")], false).unwrap();
        assert_eq!(correlated(&judges), None);
    }

    #[test]
    fn identical_seats_get_distinct_names() {
        let one = vec![verdict::default_lenses()[0].clone()];
        let judges = pair(&one, &[seat("exec:x"), seat("exec:x")], false).unwrap();
        assert_eq!(
            names(&judges),
            ["correctness@exec-x-1", "correctness@exec-x-2"]
        );
        assert!(correlated(&judges).is_some());
    }

    #[test]
    fn lenses_parse_in_both_notations() {
        assert_eq!(
            parse_lens("a=Is it? x=y").unwrap(),
            Lens::new("a", "Is it? x=y")
        );
        assert_eq!(
            parse_lens("edges|What input breaks it?").unwrap(),
            Lens::new("edges", "What input breaks it?")
        );
        assert!(parse_lens("nope").is_err());
        assert!(parse_lens("a b=c").is_err());
        // A canary's name is never a lens's, so never a judge's.
        assert!(parse_lens("canary-1=Q?").is_err());
        assert!(parse_lens("canary=Q?").is_ok());
    }
}
