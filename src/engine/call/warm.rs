//! A panel that pays for its candidate once: the first judge of each seat warms the provider's
//! prompt cache, and the seat's other judges start once it can serve them. A provider caches
//! a request's prefix only once the answer to the first request that carries it has begun
//! (Anthropic: "a cache entry only becomes available after the first response begins"), so
//! judges started together each pay for the whole candidate.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The shortest shared part worth a wait: 1,024 tokens at 4 bytes a token, the shortest
/// prefix Anthropic and OpenAI cache. A shorter candidate fans out at once.
pub const MIN_SHARED: usize = 4096;

/// How long a seat's other judges wait at most for its first to be answered: where no signal
/// can come (no proxy reads the model's answer), about a first answer's time to first byte.
pub const BOUND: Duration = Duration::from_secs(8);

/// Opened once the first judge of a seat can serve the others from the cache: a model has
/// begun to answer it, its attempt ended, or [`BOUND`] passed.
#[derive(Debug, Default)]
pub struct Warm {
    opened: Mutex<bool>,
    cv: Condvar,
}

impl Warm {
    pub fn open(&self) {
        *self.opened.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_all();
    }

    /// Waits until it is opened, `bound` passes, or the run is stopped.
    pub fn wait(&self, bound: Duration) {
        let until = Instant::now() + bound;
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        while !*opened && crate::engine::lifecycle::stopped().is_none() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            // In slices, so a stop is seen.
            let slice = left.min(Duration::from_millis(100));
            opened = self
                .cv
                .wait_timeout(opened, slice)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// A job's part in warming its seat's cache.
#[derive(Clone, Debug, Default)]
pub enum Warming {
    /// It starts when it is released, as every judge did before.
    #[default]
    Alone,
    /// The first of its seat: it opens the others' wait.
    Leads(Arc<Warm>),
    /// Waits for the first of its seat.
    Follows(Arc<Warm>),
}

impl Warming {
    /// What the launch tells once a model has begun to answer, for the first of a seat.
    pub fn leads(&self) -> Option<&Arc<Warm>> {
        match self {
            Warming::Leads(w) => Some(w),
            _ => None,
        }
    }
}

/// Each job's part, in order, from its seat and the length of what it shares with the others
/// (`None`: a job no cache serves, a reviewer's or a replay's): where the shared part is long
/// enough to cache, the first of a seat (the same provider, model and login) leads and the
/// others of that seat follow; different seats never wait for each other.
pub fn plan<'a>(jobs: impl IntoIterator<Item = (&'a str, Option<usize>)>) -> Vec<Warming> {
    let mut first: Vec<(&str, Arc<Warm>)> = Vec::new();
    jobs.into_iter()
        .map(|(spec, shared)| {
            if shared.is_none_or(|n| n < MIN_SHARED) {
                return Warming::Alone;
            }
            match first.iter().find(|(seat, _)| *seat == spec) {
                Some((_, warm)) => Warming::Follows(Arc::clone(warm)),
                None => {
                    let warm = Arc::new(Warm::default());
                    first.push((spec, Arc::clone(&warm)));
                    Warming::Leads(warm)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_each_seat_leads_where_the_shared_part_can_be_cached() {
        let long = Some(MIN_SHARED);
        let parts = plan([
            ("a", long),
            ("b", long),
            ("a", long),
            ("a", Some(MIN_SHARED - 1)),
            ("a", None),
        ]);
        let kinds: Vec<&str> = parts
            .iter()
            .map(|w| match w {
                Warming::Alone => "alone",
                Warming::Leads(_) => "leads",
                Warming::Follows(_) => "follows",
            })
            .collect();
        assert_eq!(kinds, ["leads", "leads", "follows", "alone", "alone"]);
        let (Warming::Leads(a), Warming::Follows(f)) = (&parts[0], &parts[2]) else {
            unreachable!()
        };
        assert!(Arc::ptr_eq(a, f));
    }

    #[test]
    fn a_wait_ends_when_opened_or_at_its_bound() {
        let warm = Arc::new(Warm::default());
        let t = Instant::now();
        warm.wait(Duration::from_millis(150));
        assert!(t.elapsed() >= Duration::from_millis(150));
        let w = Arc::clone(&warm);
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            w.open();
        });
        let t = Instant::now();
        warm.wait(Duration::from_secs(30));
        assert!(t.elapsed() < Duration::from_secs(10));
        opener.join().unwrap();
    }
}
