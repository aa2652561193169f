//! Panels that stop when they are decided (`--stop-when-decided`) and cascades that ask only
//! whom they need (`--cascade`), on the one threshold rule: a panel is decided when the answers
//! in give the same outcome whatever the judges still out answer
//! ([`Standing::settled`]). Canaries are never part of it: they are always asked.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;

use crate::engine::call::Cancel;
use crate::records::input::Input;
use crate::records::view;
use crate::rules::decision::{Standing, Words, first_wave};
use crate::tools::judge::CascadeOrder;
use crate::tools::judge::panel::Judge;

pub use crate::engine::call::Pace;

/// A panel of `size` judges needing `required` yes answers, counted as its answers come in.
pub struct Early {
    pace: Pace,
    size: usize,
    required: usize,
    words: Words,
    standing: Standing,
    answered: usize,
    released: usize,
    /// The panel's judges end by this; `None` when every judge is asked.
    pub token: Option<Arc<Cancel>>,
}

impl Early {
    pub fn new(pace: Pace, size: usize, required: usize, words: Words) -> Early {
        Early {
            pace,
            size,
            required,
            words,
            standing: Standing::default(),
            answered: 0,
            released: 0,
            token: (pace != Pace::All).then(Arc::default),
        }
    }

    /// How many of the panel's judges to launch at first.
    pub fn first(&mut self) -> usize {
        self.released = match self.pace {
            Pace::Cascade => first_wave(self.size, self.required),
            _ => self.size,
        };
        self.released
    }

    /// Counts one judge's answer (`Some(true)` yes, `Some(false)` no, `None` none), cancels
    /// the judges still out once the panel is decided, and says how many more to launch.
    pub fn answered(&mut self, yes: Option<bool>) -> usize {
        self.standing.add(yes);
        self.answered += 1;
        let Some(token) = &self.token else {
            return 0;
        };
        let out = self.size - self.answered;
        if let Some(d) = self.standing.settled(out, self.required) {
            if out > 0 {
                token.cancel(self.standing.why_decided(d, self.required, self.words));
            }
            return 0;
        }
        if self.pace != Pace::Cascade {
            return 0;
        }
        let running = self.released - self.answered;
        let need = self.standing.could_decide(out, self.required);
        let more = need.saturating_sub(running);
        self.released += more;
        more
    }
}

/// The order the panel's judges are asked in: as listed, or by `--cascade-order cost` the
/// cheapest seat first by `costs` (a seat the history has no cost of goes last, as listed).
pub fn order(judges: &[Judge], by: CascadeOrder, costs: &HashMap<String, f64>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..judges.len()).collect();
    if by == CascadeOrder::Cost {
        let cost = |i: &usize| costs.get(&judges[*i].seat.spec).copied();
        order.sort_by(|a, b| match (cost(a), cost(b)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
    }
    order
}

/// Each seat's mean cost per answer in a history of verdict records: what `--cascade-order
/// cost` orders by. Only answers (status ok) with a cost count; any other line (another
/// record, a torn one) is passed over, since an order is all it serves.
pub fn mean_costs(path: &str) -> Result<HashMap<String, f64>> {
    let mut sums: HashMap<String, (f64, u32)> = HashMap::new();
    let mut input = Input::open(path)?;
    let mut buf = String::new();
    while input.next_line(&mut buf)? {
        let Some(seen) = view::loosely(&buf) else {
            continue;
        };
        let cost = seen.usage.and_then(|u| u.cost_usd);
        if let (crate::records::Status::Ok, Some(c)) = (seen.status, cost)
            && c.is_finite()
            && c >= 0.0
        {
            let s = sums.entry(seen.seat.into_owned()).or_default();
            s.0 += c;
            s.1 += 1;
        }
    }
    Ok(sums
        .into_iter()
        .map(|(seat, (sum, n))| (seat, sum / f64::from(n)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: Words = ("holds", "breaks");

    #[test]
    fn two_holds_of_agree_two_cancel_the_third() {
        let mut e = Early::new(Pace::StopWhenDecided, 3, 2, WORDS);
        assert_eq!(e.first(), 3);
        e.answered(Some(true));
        assert!(e.token.as_ref().unwrap().why().is_none());
        e.answered(Some(true));
        assert_eq!(
            e.token.as_ref().unwrap().why(),
            Some("the panel was decided without it: 2 of 2 needed say holds")
        );
    }

    #[test]
    fn a_cascade_asks_a_third_judge_only_after_a_split() {
        let mut e = Early::new(Pace::Cascade, 3, 2, WORDS);
        assert_eq!(e.first(), 2);
        assert_eq!(e.answered(Some(true)), 0);
        assert_eq!(e.answered(Some(false)), 1);
        assert_eq!(e.answered(Some(true)), 0);
        // Decided by the last answer: nobody was left out.
        assert!(e.token.as_ref().unwrap().why().is_none());
    }

    #[test]
    fn every_judge_is_asked_unless_stopping_was_asked_for() {
        let mut e = Early::new(Pace::All, 3, 2, WORDS);
        assert_eq!(e.first(), 3);
        e.answered(Some(true));
        e.answered(Some(true));
        assert!(e.token.is_none());
    }
}
