//! The one threshold rule every panel decides by, and the exit status it maps to.
//!
//! A panel needs `required` yes answers (holds, pass, MERGE). It passes when it has them; it
//! has no decision when the answers that are missing could still bring it there; otherwise it
//! decided against. Missing answers are never counted as either side.

use anyhow::{Result, bail};

pub use crate::records::Decision;

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

/// `--agree` before the panel's size is known: at least 1.
pub fn check_agree(agree: Option<usize>) -> Result<()> {
    if agree == Some(0) {
        bail!("--agree 0: a panel needs at least one yes to pass");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
