//! The one threshold rule every panel decides by, and the exit status it maps to.
//!
//! A panel needs `required` yes answers (holds, pass, MERGE). It passes when it has them; it
//! has no decision when the answers that are missing could still bring it there; otherwise it
//! decided against. Missing answers are never counted as either side.

use anyhow::{Result, bail};

pub use crate::records::Decision;
use crate::records::pairwise::Preference;

/// The threshold rule: `yes` answers against `required`, with `missing` answers unknown.
pub fn decide(yes: usize, missing: usize, required: usize) -> Decision {
    if yes >= required {
        Decision::Pass
    } else if yes + missing >= required {
        Decision::NoDecision
    } else {
        Decision::Fail
    }
}

/// How many yes answers a panel of `size` needs: `--agree N`, or by default all of them.
pub fn required(agree: Option<usize>, size: usize) -> Result<usize> {
    match agree {
        None => Ok(size),
        Some(n) if n == 0 || n > size => {
            bail!("--agree {n}: must be from 1 to the panel's size ({size})")
        }
        Some(n) => Ok(n),
    }
}

/// The share of a panel of `size` that `required` asks, applied to `k` of its judges: at least
/// one, rounded up. The ledger scores a sub-panel by it, so a sub-panel of a panel needing
/// every judge needs every one of its own (2 of 3 asks 2 of 2 and 1 of 1).
pub fn share(required: usize, size: usize, k: usize) -> usize {
    if size == 0 {
        return k.max(1);
    }
    (required.min(size) * k).div_ceil(size).max(1)
}

/// A pairwise panel's preference: the answer `required` of its judges prefer (`a` prefer the
/// first answer given, `b` the second); none when neither has them, whatever the judges that
/// gave no preference might have said. `required` is more than half of the panel
/// ([`majority`], or `--agree N` past half), so two answers never both reach it.
pub fn prefer(a: usize, b: usize, required: usize) -> Option<Preference> {
    if a >= required {
        Some(Preference::A)
    } else if b >= required {
        Some(Preference::B)
    } else {
        None
    }
}

/// How a position-inconsistent judge (its preference followed the order it was shown) counts
/// in a pairwise panel's preference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Inconsistent {
    /// As an abstention: a judge of the panel that gave no preference.
    #[default]
    Abstain,
    /// Not at all: the panel's threshold is the same share of the judges left.
    Exclude,
}

impl Inconsistent {
    pub fn as_str(self) -> &'static str {
        match self {
            Inconsistent::Abstain => "abstain",
            Inconsistent::Exclude => "exclude",
        }
    }
}

/// The preference of a panel of `size` judges that needs `required` of them, where `a` prefer
/// A, `b` prefer B and `inconsistent` followed the order: [`prefer`], with `--inconsistent
/// exclude` at the same share of the judges left ([`share`]).
pub fn preference(
    (a, b, inconsistent): (usize, usize, usize),
    size: usize,
    required: usize,
    how: Inconsistent,
) -> Option<Preference> {
    let required = match how {
        Inconsistent::Abstain => required,
        Inconsistent::Exclude if size > inconsistent => share(required, size, size - inconsistent),
        Inconsistent::Exclude => return None,
    };
    prefer(a, b, required)
}

/// More than half of a panel of `size`: what a preference needs by default.
pub fn majority(size: usize) -> usize {
    size / 2 + 1
}

/// The judges a preference of a panel of `size` needs: `--agree N`, past half of the panel, or
/// by default its [`majority`].
pub fn preference_required(agree: Option<usize>, size: usize) -> Result<usize> {
    match agree {
        None => Ok(majority(size)),
        Some(n) if n > size || 2 * n <= size => bail!(
            "--agree {n}: a preference of {size} judges needs more than half of them and at most all ({} to {size})",
            majority(size)
        ),
        Some(n) => Ok(n),
    }
}

/// A panel's answers while some of its judges are still out: the yes answers, the no answers,
/// and the judges that gave none. What panel-judge stops by (`--stop-when-decided`,
/// `--cascade`); panel-tally decides over the same counts with [`decide`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    pub yes: usize,
    pub no: usize,
    pub missing: usize,
}

/// The words of a panel's two answers: `holds`/`breaks`, `pass`/`revise`.
pub type Words = (&'static str, &'static str);

impl Standing {
    /// Counts one judge's answer: `Some(true)` yes, `Some(false)` no, `None` none.
    pub fn add(&mut self, yes: Option<bool>) {
        match yes {
            Some(true) => self.yes += 1,
            Some(false) => self.no += 1,
            None => self.missing += 1,
        }
    }

    /// The decision the answers in make whatever the `out` judges still out answer (each may
    /// say yes, no, or nothing): `None` while they could still change it. A panel is decided
    /// early only to pass or to fail, never to no decision, since an answer still out could
    /// turn that into a pass.
    pub fn settled(&self, out: usize, required: usize) -> Option<Decision> {
        match decide(self.yes, self.missing + out, required) {
            Decision::NoDecision => None,
            d => Some(d),
        }
    }

    /// The fewest of the `out` judges whose answers could decide the panel: the yes answers
    /// it still needs to pass, or the no answers that would leave a pass out of reach.
    pub fn could_decide(&self, out: usize, required: usize) -> usize {
        let to_pass = required.saturating_sub(self.yes);
        let reachable = self.yes + self.missing + out;
        let to_fail = (reachable + 1).saturating_sub(required);
        to_pass.min(to_fail).min(out)
    }

    /// Why a judge left out was not needed, once [`Standing::settled`] said `d`.
    pub fn why_decided(&self, d: Decision, required: usize, (yes, no): Words) -> String {
        let why = match d {
            Decision::Pass => format!("{} of {required} needed say {yes}", self.yes),
            _ => {
                let silent = match self.missing {
                    0 => String::new(),
                    n => format!(", {n} gave no answer"),
                };
                format!(
                    "{} say {no}{silent}; {required} {yes} are no longer possible",
                    self.no
                )
            }
        };
        format!("the panel was decided without it: {why}")
    }
}

/// How many judges a cascade asks first: as many as could decide a panel of `size` that
/// needs `required` yes answers, `min(required, size - required + 1)`.
pub fn first_wave(size: usize, required: usize) -> usize {
    Standing::default().could_decide(size, required)
}

/// `--agree` before the panel's size is known: at least 1.
pub fn check_agree(agree: Option<usize>) -> Result<()> {
    if agree == Some(0) {
        bail!("--agree 0: a panel needs at least one yes to pass");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_preference_needs_more_than_half() {
        use super::*;
        assert_eq!(majority(3), 2);
        assert_eq!(majority(4), 3);
        assert_eq!(prefer(2, 1, 2), Some(Preference::A));
        assert_eq!(prefer(1, 2, 2), Some(Preference::B));
        // A tie, or too many without a preference: none.
        assert_eq!(prefer(1, 1, 2), None);
        assert_eq!(prefer(2, 2, 3), None);
        // Two of five follow the order: as abstentions 2 of 3 needed fall short; excluded, 3
        // of 5 is 2 of the 3 left.
        let (a, b) = (2, 1);
        assert_eq!(preference((a, b, 2), 5, 3, Inconsistent::Abstain), None);
        assert_eq!(
            preference((a, b, 2), 5, 3, Inconsistent::Exclude),
            Some(Preference::A)
        );
        assert_eq!(preference((0, 0, 3), 3, 2, Inconsistent::Exclude), None);
        assert_eq!(preference_required(None, 3).unwrap(), 2);
        assert_eq!(preference_required(Some(3), 3).unwrap(), 3);
        assert!(preference_required(Some(1), 2).is_err());
        assert!(preference_required(Some(4), 3).is_err());
    }

    #[test]
    fn a_share_of_a_smaller_panel_rounds_up_and_keeps_unanimity() {
        assert_eq!(share(3, 3, 2), 2, "every judge of 3: every judge of 2");
        assert_eq!(share(2, 3, 2), 2);
        assert_eq!(share(2, 3, 1), 1);
        assert_eq!(share(3, 5, 3), 2, "3 of 5 is a majority of 3");
        assert_eq!(share(1, 4, 1), 1);
        assert_eq!(share(1, 4, 3), 1);
        assert_eq!(share(5, 2, 2), 2, "more than the panel asks every judge");
    }

    use super::*;

    #[test]
    fn the_threshold_separates_pass_fail_and_no_decision() {
        assert_eq!(decide(3, 0, 3), Decision::Pass);
        assert_eq!(decide(2, 1, 2), Decision::Pass);
        assert_eq!(decide(2, 1, 3), Decision::NoDecision);
        assert_eq!(decide(1, 1, 3), Decision::Fail);
        assert_eq!(decide(0, 0, 1), Decision::Fail);
    }

    #[test]
    fn a_panel_is_settled_only_when_no_answer_still_out_could_change_it() {
        let two_holds = Standing {
            yes: 2,
            no: 0,
            missing: 0,
        };
        assert_eq!(two_holds.settled(1, 2), Some(Decision::Pass));
        assert_eq!(two_holds.settled(1, 3), None);
        let two_breaks = Standing {
            yes: 0,
            no: 2,
            missing: 0,
        };
        assert_eq!(two_breaks.settled(1, 2), Some(Decision::Fail));
        // An abstention could have been a hold: it keeps the panel open as decide() does.
        let one_each = Standing {
            yes: 1,
            no: 0,
            missing: 1,
        };
        assert_eq!(one_each.settled(1, 2), None);
        assert_eq!(one_each.settled(0, 2), None);
        // With every answer in, settled agrees with decide() except for no decision.
        for yes in 0..4 {
            for no in 0..4 - yes {
                let missing = 3 - yes - no;
                let s = Standing { yes, no, missing };
                let d = decide(yes, missing, 2);
                let want = (d != Decision::NoDecision).then_some(d);
                assert_eq!(s.settled(0, 2), want, "{s:?}");
            }
        }
    }

    #[test]
    fn the_first_wave_is_as_many_as_could_decide() {
        // The formula: min(N, size - N + 1).
        assert_eq!(first_wave(3, 2), 2);
        assert_eq!(first_wave(3, 3), 1);
        assert_eq!(first_wave(3, 1), 1);
        assert_eq!(first_wave(5, 3), 3);
        let split = Standing {
            yes: 1,
            no: 1,
            missing: 0,
        };
        assert_eq!(split.could_decide(1, 2), 1);
    }

    #[test]
    fn the_cause_says_what_decided_it() {
        let s = Standing {
            yes: 2,
            no: 0,
            missing: 0,
        };
        assert_eq!(
            s.why_decided(Decision::Pass, 2, ("holds", "breaks")),
            "the panel was decided without it: 2 of 2 needed say holds"
        );
        let s = Standing {
            yes: 0,
            no: 2,
            missing: 0,
        };
        assert_eq!(
            s.why_decided(Decision::Fail, 2, ("holds", "breaks")),
            "the panel was decided without it: 2 say breaks; 2 holds are no longer possible"
        );
    }

    #[test]
    fn exit_statuses_follow_the_decision() {
        let codes: Vec<u8> = [Decision::Pass, Decision::Fail, Decision::NoDecision]
            .map(Decision::exit_status)
            .to_vec();
        assert_eq!(codes, [0, 1, 3]);
    }

    #[test]
    fn a_failed_panel_outweighs_an_undecided_one() {
        use Decision::*;
        assert_eq!(Pass.worst(NoDecision), NoDecision);
        assert_eq!(NoDecision.worst(Fail), Fail);
        assert_eq!(Pass.worst(Pass), Pass);
    }

    #[test]
    fn agree_defaults_to_everyone_and_stays_within_the_panel() {
        assert_eq!(required(None, 3).unwrap(), 3);
        assert_eq!(required(Some(2), 3).unwrap(), 2);
        assert!(required(Some(4), 3).is_err());
        assert!(required(Some(0), 3).is_err());
        assert!(check_agree(Some(0)).is_err());
        assert!(check_agree(Some(9)).is_ok());
    }
}
