//! Running many jobs at once on a fixed number of worker threads, handing each result to the
//! caller as soon as it is ready.

use std::thread;

use crossbeam_channel::{bounded, unbounded};

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
    let n = jobs.len();
    if n == 0 {
        return;
    }
    let workers = workers.clamp(1, n);
    let (job_tx, job_rx) = bounded::<(usize, J)>(0);
    let (res_tx, res_rx) = unbounded::<(usize, R)>();
    thread::scope(|scope| {
        for _ in 0..workers {
            let job_rx = job_rx.clone();
            let res_tx = res_tx.clone();
            let work = &work;
            scope.spawn(move || {
                for (i, job) in job_rx {
                    if res_tx.send((i, work(i, job))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(res_tx);
        scope.spawn(move || {
            for job in jobs.into_iter().enumerate() {
                if job_tx.send(job).is_err() {
                    break;
                }
            }
        });
        for (i, r) in res_rx {
            done(i, r);
        }
    });
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
