//! The fan-out: the one place threads are started for judges. *Fan-out* names running many
//! jobs at once on a fixed pool of worker threads, released in waves (the launcher's panels) or
//! each when its gate opens (panel-vote's cascade), each result handed to the caller, on its
//! thread, as soon as it is ready. With not one thread to be had (a limit on processes), the
//! jobs run on the caller's.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread;

use crossbeam_channel::{Receiver, Select, Sender, unbounded};

/// What holds a job until it is released: it opens on a send, or when its sender is dropped.
pub type Latch = Receiver<()>;

/// A gate, closed, and what opens it.
pub fn gate() -> (Sender<()>, Latch) {
    unbounded()
}

/// Runs `work` on every job with at most `workers` at once. `done` is called on this thread
/// with each job's index and result, in the order they finish.
pub fn run<J, R>(
    jobs: Vec<J>,
    workers: usize,
    work: impl Fn(usize, J) -> R + Sync,
    mut done: impl FnMut(usize, R),
) where
    J: Send,
    R: Send,
{
    let all = jobs.len();
    paced(jobs, workers, all, work, |i, r| {
        done(i, r);
        0
    });
}

/// Like [`run`], but jobs are released in waves, in their order: `first` of them at once,
/// then as many more as each call of `done` returns. Returns the jobs never released, with
/// their indices: those a decided panel did not need. A job whose work panics gets no `done`;
/// the panic goes on, on this thread, once the others have ended.
pub fn paced<J, R>(
    jobs: Vec<J>,
    workers: usize,
    first: usize,
    work: impl Fn(usize, J) -> R + Sync,
    mut done: impl FnMut(usize, R) -> usize,
) -> Vec<(usize, J)>
where
    J: Send,
    R: Send,
{
    let mut panicked = None;
    let jobs = jobs.into_iter().map(|j| (j, None)).collect();
    let left = fan(jobs, workers, first, work, |i, r| match r {
        Ok(r) => done(i, r),
        Err(why) => {
            panicked.get_or_insert(why);
            0
        }
    });
    if let Some(why) = panicked {
        std::panic::resume_unwind(why);
    }
    left
}

/// Runs every job once its gate opens (at once without one), with at most `workers` at once.
/// `done` is called on this thread with each job's index and result, in the order they
/// finish; `None` for a job whose work panicked: a reply missing, never one waited for.
pub fn gated<J, R>(
    jobs: Vec<(J, Option<Latch>)>,
    workers: usize,
    work: impl Fn(usize, J) -> R + Sync,
    mut done: impl FnMut(usize, Option<R>),
) where
    J: Send,
    R: Send,
{
    fan(jobs, workers, usize::MAX, work, |i, r| {
        done(i, r.ok());
        0
    });
}

/// The one fan-out under [`paced`] and [`gated`]: a job with a gate is released when the gate
/// opens, one without in waves in its order (`first`, then what `done` returns). The caller's
/// thread releases jobs, hands out results, and runs the jobs itself when no worker starts.
fn fan<J, R>(
    jobs: Vec<(J, Option<Latch>)>,
    workers: usize,
    first: usize,
    work: impl Fn(usize, J) -> R + Sync,
    mut done: impl FnMut(usize, thread::Result<R>) -> usize,
) -> Vec<(usize, J)>
where
    J: Send,
    R: Send,
{
    let n = jobs.len();
    if n == 0 {
        return Vec::new();
    }
    // A panic is the job's result: a worker gone without one would leave its caller waiting.
    let work = |i, job| catch_unwind(AssertUnwindSafe(|| work(i, job)));
    let mut held = HeldJobs::new(jobs);
    thread::scope(|scope| {
        // Every job released waits in the channel; each worker takes the next when it is free.
        let (job_tx, job_rx) = unbounded::<(usize, J)>();
        let (res_tx, res_rx) = unbounded();
        // As many workers as the system gives threads for (a limit on processes counts them).
        let mut started = 0;
        for _ in 0..workers.clamp(1, n) {
            let (job_rx, res_tx, work) = (job_rx.clone(), res_tx.clone(), &work);
            let worker = thread::Builder::new().spawn_scoped(scope, move || {
                for (i, job) in job_rx {
                    if res_tx.send((i, work(i, job))).is_err() {
                        break;
                    }
                }
            });
            if worker.is_err() {
                break;
            }
            started += 1;
        }
        drop(res_tx);
        let mut in_flight = held.release(&job_tx, first);
        loop {
            in_flight += held.open_gates(&job_tx);
            if in_flight == 0 && held.gated.is_empty() {
                break;
            }
            let (i, r) = if started == 0 && in_flight > 0 {
                // Not one thread to be had: the jobs run here, one after another.
                let Ok((i, job)) = job_rx.try_recv() else {
                    break;
                };
                (i, work(i, job))
            } else {
                match held.wait(&res_rx, in_flight > 0, &job_tx) {
                    Some(Ok(result)) => result,
                    Some(Err(())) => break,
                    // A gate opened: its job is in flight.
                    None => {
                        in_flight += 1;
                        continue;
                    }
                }
            };
            in_flight -= 1;
            let more = done(i, r);
            in_flight += held.release(&job_tx, more);
        }
        // The workers end once the channel is closed and empty.
        drop(job_tx);
    });
    held.waves.into_iter().collect()
}

/// The jobs not yet released: those without a gate in their order, those with one until it
/// opens.
struct HeldJobs<J> {
    waves: VecDeque<(usize, J)>,
    gated: Vec<(usize, J, Latch)>,
}

impl<J> HeldJobs<J> {
    fn new(jobs: Vec<(J, Option<Latch>)>) -> HeldJobs<J> {
        let mut held = HeldJobs {
            waves: VecDeque::new(),
            gated: Vec::new(),
        };
        for (i, (job, gate)) in jobs.into_iter().enumerate() {
            match gate {
                Some(gate) => held.gated.push((i, job, gate)),
                None => held.waves.push_back((i, job)),
            }
        }
        held
    }

    /// Sends up to `more` of the jobs waiting for a wave to the workers; how many it sent.
    fn release(&mut self, to: &Sender<(usize, J)>, more: usize) -> usize {
        let mut sent = 0;
        while sent < more {
            let Some(job) = self.waves.pop_front() else {
                break;
            };
            let _ = to.send(job);
            sent += 1;
        }
        sent
    }

    /// Sends every job whose gate is open to the workers, in their order; how many it sent.
    fn open_gates(&mut self, to: &Sender<(usize, J)>) -> usize {
        let mut sent = 0;
        let mut k = 0;
        while k < self.gated.len() {
            if self.gated[k].2.try_recv() == Err(crossbeam_channel::TryRecvError::Empty) {
                k += 1;
                continue;
            }
            let (i, job, _) = self.gated.remove(k);
            let _ = to.send((i, job));
            sent += 1;
        }
        sent
    }

    /// Waits for a result (when `results` are to come) or a gate to open, whichever is first:
    /// `Some` with the result (`Err`: the workers are gone), `None` when a gate opened, its job
    /// then sent to the workers.
    fn wait<R>(
        &mut self,
        res_rx: &Receiver<R>,
        results: bool,
        to: &Sender<(usize, J)>,
    ) -> Option<Result<R, ()>> {
        let mut select = Select::new();
        for (_, _, gate) in &self.gated {
            select.recv(gate);
        }
        let result = results.then(|| select.recv(res_rx));
        let op = select.select();
        if Some(op.index()) == result {
            return Some(op.recv(res_rx).map_err(|_| ()));
        }
        let k = op.index();
        let _ = op.recv(&self.gated[k].2);
        let (i, job, _) = self.gated.remove(k);
        let _ = to.send((i, job));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn results_come_in_the_order_jobs_finish() {
        let mut order = Vec::new();
        run(
            vec![300u64, 10, 150],
            3,
            |_, ms| {
                thread::sleep(Duration::from_millis(ms));
                ms
            },
            |i, ms| order.push((i, ms)),
        );
        assert_eq!(order, [(1, 10), (2, 150), (0, 300)]);
    }

    #[test]
    fn paced_jobs_start_only_when_released_and_the_rest_come_back() {
        let started = std::sync::Mutex::new(Vec::new());
        let mut seen = Vec::new();
        let left = paced(
            vec![10u64, 10, 10, 10, 10],
            5,
            2,
            |i, ms| {
                started.lock().unwrap().push(i);
                thread::sleep(Duration::from_millis(ms));
            },
            |i, ()| {
                seen.push(i);
                // One more after the first wave is whole, then none.
                usize::from(seen.len() == 2)
            },
        );
        assert_eq!(seen.len(), 3);
        let mut started = started.into_inner().unwrap();
        started.sort_unstable();
        assert_eq!(started, [0, 1, 2]);
        let left: Vec<usize> = left.into_iter().map(|(i, _)| i).collect();
        assert_eq!(left, [3, 4]);
    }

    #[test]
    fn workers_cap_how_many_run_at_once() {
        let t = Instant::now();
        let mut n = 0;
        run(
            vec![100u64; 4],
            2,
            |_, ms| thread::sleep(Duration::from_millis(ms)),
            |_, _| n += 1,
        );
        assert_eq!(n, 4);
        assert!(t.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn a_gated_job_waits_until_its_gate_opens() {
        let (open, gate) = gate();
        let mut open = Some(open);
        let started = std::sync::Mutex::new(Vec::new());
        let mut seen = Vec::new();
        gated(
            vec![((), Some(gate)), ((), None)],
            2,
            |i, ()| started.lock().unwrap().push(i),
            |i, r| {
                seen.push((i, r));
                // Opened only once the ungated job is in: it cannot have started before.
                if let Some(open) = open.take() {
                    open.send(()).unwrap();
                }
            },
        );
        assert_eq!(seen, [(1, Some(())), (0, Some(()))]);
        assert_eq!(started.into_inner().unwrap(), [1, 0]);
    }

    #[test]
    fn a_gate_whose_sender_drops_opens_too() {
        let (open, gate) = gate();
        let t = Instant::now();
        let mut seen = Vec::new();
        // Dropped by another thread while nothing is in flight: the caller waits on the gate.
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            drop(open);
        });
        gated(
            vec![(7u32, Some(gate))],
            1,
            |_, n| n * 2,
            |i, r| seen.push((i, r)),
        );
        assert_eq!(seen, [(0, Some(14))]);
        assert!(t.elapsed() >= Duration::from_millis(100));
    }

    #[test]
    fn a_job_whose_work_panics_is_a_result_missing_and_the_rest_run() {
        let (open, gate) = gate();
        let mut open = Some(open);
        let mut seen = Vec::new();
        gated(
            vec![(true, None), (false, Some(gate)), (false, None)],
            2,
            |_, panics| {
                assert!(!panics, "a job that panics");
                1
            },
            |i, r| {
                seen.push((i, r));
                // The gate is opened by a result, the one that panicked too.
                drop(open.take());
            },
        );
        seen.sort_unstable();
        assert_eq!(seen, [(0, None), (1, Some(1)), (2, Some(1))]);
    }

    #[test]
    fn a_paced_job_that_panics_panics_on_the_callers_thread_after_the_rest() {
        let mut seen = Vec::new();
        let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
            run(
                vec![true, false, false],
                1,
                |_, panics| assert!(!panics, "a job that panics"),
                |i, ()| seen.push(i),
            )
        }));
        assert!(caught.is_err());
        assert_eq!(seen, [1, 2]);
    }
}
