//! A pairwise judge's answers against the order it was shown the two answers in: how often
//! its two orders agreed (position consistency) and how often it preferred the one shown
//! first. Counted per panel, so a bootstrap over panels keeps a judge's two answers together.

/// A pairwise judge's answers against the order it was shown them in: the panels where it
/// answered both orders and those where the two agreed, and per panel how many of its answers
/// preferred the one shown first (`kinds[first][answers]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub both: u64,
    pub consistent: u64,
    pub kinds: [[u64; 3]; 3],
}

impl Position {
    /// One panel: `first` of its `answers` (0, 1 or 2) preferred the answer shown first.
    pub fn add(&mut self, (first, answers): (u8, u8)) {
        let (f, n) = (usize::from(first.min(2)), usize::from(answers.min(2)));
        self.kinds[f.min(n)][n] += 1;
        if n == 2 {
            self.both += 1;
            // Both orders answered alike preferred the first shown once.
            self.consistent += u64::from(f == 1);
        }
    }

    /// Answers given, and those that preferred the first shown.
    pub fn answers(&self) -> (u64, u64) {
        let mut out = (0, 0);
        for (f, row) in self.kinds.iter().enumerate() {
            for (n, &k) in row.iter().enumerate() {
                out.0 += k * n as u64;
                out.1 += k * f as u64;
            }
        }
        out
    }

    pub fn merge(&mut self, o: &Position) {
        self.both += o.both;
        self.consistent += o.consistent;
        for (a, b) in self
            .kinds
            .iter_mut()
            .flatten()
            .zip(o.kinds.iter().flatten())
        {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judge_is_consistent_when_one_of_its_two_answers_picked_the_first_shown() {
        let mut p = Position::default();
        // The same answer in both orders; the first shown twice; the second twice; one order;
        // none.
        for seen in [(1, 2), (2, 2), (0, 2), (1, 1), (0, 0)] {
            p.add(seen);
        }
        assert_eq!((p.both, p.consistent), (3, 1));
        assert_eq!(p.answers(), (7, 4));
        let mut q = Position::default();
        q.merge(&p);
        q.merge(&p);
        assert_eq!((q.both, q.answers()), (6, (14, 8)));
    }
}
