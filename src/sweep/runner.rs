//! Running a plan's rows on a pool of threads ([`run`]): a window of [`WINDOW`] rows at a
//! time, in tasks of a few consecutive rows sized by the work estimate, each task's lines
//! handed to the sink in one lock. Separate from the plan: this is the only place a sweep
//! runs in parallel.

use std::sync::Mutex;

use rayon::prelude::*;

use super::row::RowCache;
use super::sink::RowSink;
use super::{Plan, SweepError, WINDOW};
use crate::config::default_threads;

/// The work ([`Plan::work_estimate`]'s events) a task of small rows is made of: at 10 clients
/// a row (about 1 050 events with its setup) some sixty rows, a few hundred microseconds.
const TASK_WORK: u128 = 64_000;

/// The most rows a task runs.
const MAX_ROWS_PER_TASK: u64 = 64;

impl Plan {
    /// Rows a worker runs as one task out of a window of `rows` on `threads` threads: as many
    /// as make [`TASK_WORK`] events by the work estimate (at least one, at most
    /// [`MAX_ROWS_PER_TASK`]), so that small rows share a task's lock, buffer and write, and
    /// few enough that every thread has tasks to take.
    fn rows_per_task(&self, rows: u64, threads: usize) -> u64 {
        let per_row = (self.work / u128::from(self.grid_rows().max(1))).max(1);
        let by_work = u64::try_from(TASK_WORK / per_row).unwrap_or(u64::MAX);
        let by_threads = rows / (4 * threads.max(1) as u64);
        by_work.min(by_threads).clamp(1, MAX_ROWS_PER_TASK)
    }
}

/// Runs every row of `plan` not yet in `sink`, in parallel on `threads` threads (all cores
/// when `None`), and finishes the output. `progress` is told the number of finished rows
/// after each one.
pub fn run(
    plan: &Plan,
    sink: RowSink,
    threads: Option<usize>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), SweepError> {
    run_in(&thread_pool(threads)?, plan, sink, progress)
}

/// The worker threads of a sweep: `threads` of them, or one a core when `None`. Start them
/// before opening the output, so that a failure leaves no file behind.
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, SweepError> {
    // The count worked out here, not asked of rayon: asking starts its global pool (beside
    // this one, and with a panic when its threads cannot start either).
    let threads = threads.unwrap_or_else(default_threads).max(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| SweepError::Threads {
            threads,
            // rayon's error shows the system's error and also gives it as its source: once.
            message: e.to_string(),
        })
}

/// [`run`] on a pool already started.
pub fn run_in(
    pool: &rayon::ThreadPool,
    plan: &Plan,
    sink: RowSink,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(), SweepError> {
    let total = plan.rows();
    let sink = Mutex::new(sink);
    let lock = || sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    pool.install(|| -> Result<(), SweepError> {
        let mut start = lock().written();
        progress(lock().finished());
        while start < total {
            // A window at a time: the rows still waiting to be written stay below WINDOW.
            let end = (start + WINDOW).min(total);
            // Tasks of a few consecutive rows: one lock, one buffer and one write a task.
            let chunk = plan.rows_per_task(end - start, rayon::current_num_threads());
            (0..(end - start).div_ceil(chunk))
                .into_par_iter()
                .try_for_each_init(RowCache::default, |cache, task| -> Result<(), SweepError> {
                    let first = start + task * chunk;
                    let rows = first..(first + chunk).min(end);
                    let fresh = {
                        let sink = lock();
                        !rows.clone().any(|row| sink.has(row))
                    };
                    if !fresh {
                        // A resumed sweep: some of these rows are in the output already.
                        for row in rows {
                            if lock().has(row) {
                                continue;
                            }
                            let line = plan.row_line(row, cache)?;
                            let mut sink = lock();
                            sink.accept_line(row, line)?;
                            progress(sink.finished());
                        }
                        return Ok(());
                    }
                    let mut lines = Vec::new();
                    let mut ends = Vec::with_capacity(rows.clone().count());
                    for row in rows {
                        plan.write_row(row, cache, &mut lines)?;
                        ends.push(lines.len());
                    }
                    let mut sink = lock();
                    sink.accept_lines(first, lines, &ends)?;
                    progress(sink.finished());
                    Ok(())
                })?;
            lock().end_window()?;
            start = end;
        }
        Ok(())
    })?;
    sink.into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .finish()
}
