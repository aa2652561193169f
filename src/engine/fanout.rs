//! Running many jobs at once on a fixed number of worker threads, handing each result to the
//! caller as soon as it is ready.

use std::thread;

use crossbeam_channel::unbounded;

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
    // Every job waits in the channel; each worker takes the next when it is free.
    let (job_tx, job_rx) = unbounded::<(usize, J)>();
    for job in jobs.into_iter().enumerate() {
        let _ = job_tx.send(job);
    }
    drop(job_tx);
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
        if started == 0 {
            // Not one thread to be had: the jobs run here, one after another.
            for (i, job) in job_rx {
                done(i, work(i, job));
            }
            return;
        }
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
