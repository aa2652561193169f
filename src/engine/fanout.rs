//! Running many jobs at once on a fixed number of worker threads, handing each result to the
//! caller as soon as it is ready.

use std::thread;

use crossbeam_channel::{Sender, unbounded};

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
/// their indices: those a decided panel did not need.
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
    let n = jobs.len();
    let mut pending = jobs.into_iter().enumerate();
    if n == 0 {
        return Vec::new();
    }
    let workers = workers.clamp(1, n);
    // Every job released waits in the channel; each worker takes the next when it is free.
    let (job_tx, job_rx) = unbounded::<(usize, J)>();
    let mut in_flight = release(&mut pending, &job_tx, first);
    let (res_tx, res_rx) = unbounded::<(usize, R)>();
    thread::scope(|scope| {
        // As many workers as the system gives threads for (a limit on processes counts them).
        let mut started = 0;
        for _ in 0..workers {
            let job_rx = job_rx.clone();
            let res_tx = res_tx.clone();
            let work = &work;
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
        while in_flight > 0 {
            let (i, r) = if started == 0 {
                // Not one thread to be had: the jobs run here, one after another.
                let Ok((i, job)) = job_rx.try_recv() else {
                    break;
                };
                (i, work(i, job))
            } else {
                let Ok(result) = res_rx.recv() else {
                    break;
                };
                result
            };
            in_flight -= 1;
            let more = done(i, r);
            in_flight += release(&mut pending, &job_tx, more);
        }
        // The workers end once the channel is closed and empty.
        drop(job_tx);
    });
    pending.collect()
}

/// Sends up to `more` of the pending jobs to the workers; how many it sent.
fn release<J>(
    pending: &mut impl Iterator<Item = (usize, J)>,
    to: &Sender<(usize, J)>,
    more: usize,
) -> usize {
    let mut sent = 0;
    for job in pending.take(more) {
        let _ = to.send(job);
        sent += 1;
    }
    sent
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
}
