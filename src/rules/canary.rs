//! Canaries: beside the panel, each seat is asked about a candidate whose answer is known. A
//! seat that misses its canary (gives the other verdict, or none) is reported; with
//! `--require-canaries` such a seat's verdicts do not count (the panel may become undecided,
//! exit 3), and neither do those of a seat that has no canary record at all.

use crate::records::Verdict;

/// Whether a seat's answer about a canary is the known one. An abstention misses it: a seat
/// that cannot answer a question whose answer is known has shown nothing.
pub fn hit(expected: Verdict, got: Option<Verdict>) -> bool {
    got == Some(expected)
}

/// Why a seat's verdicts do not count when canaries are required, if they do not: the seat's
/// answers to its canaries as (expected, given) pairs.
pub fn discounted(
    answers: impl IntoIterator<Item = (Verdict, Option<Verdict>)>,
) -> Option<&'static str> {
    let mut any = false;
    for (expected, got) in answers {
        any = true;
        if !hit(expected, got) {
            return Some("its seat missed its canary");
        }
    }
    (!any).then_some("its seat answered no canary")
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;

    #[test]
    fn a_seat_counts_only_when_it_hit_every_canary_it_had() {
        assert!(hit(Holds, Some(Holds)));
        assert!(!hit(Holds, Some(Breaks)));
        assert!(!hit(Breaks, None));
        assert_eq!(
            discounted([(Holds, Some(Holds)), (Breaks, Some(Breaks))]),
            None
        );
        assert_eq!(
            discounted([(Holds, Some(Holds)), (Breaks, Some(Holds))]),
            Some("its seat missed its canary")
        );
        assert_eq!(
            discounted([(Breaks, None)]),
            Some("its seat missed its canary")
        );
        assert_eq!(discounted([]), Some("its seat answered no canary"));
    }
}
