//! What a sweep costs before it runs: its work in events ([`Plan::work_estimate`]) and the
//! bytes it may hold at once ([`SweepMemory`]), checked against `--max-requests`,
//! `--yes` and `--memory-limit`. Separate from the plan's addressing: these are bounds, read
//! by the checks and by the shards.

use super::{shard, Layout, Plan, SweepError};

/// What a sweep may hold at once, in bytes (see [`Plan::memory_estimate`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepMemory {
    /// Rows run at once: one a worker thread, at most the rows there are.
    pub rows_in_flight: u64,
    /// The largest estimate of one row on one thread, over every cell.
    pub row: u64,
    /// The largest estimate of one row given every thread (an independent-path row spreads
    /// its blocks over them), over every cell.
    pub row_on_every_thread: u64,
    /// The sweep's own buffers: a window of finished rows waiting for their turn, and each
    /// row in flight's fields.
    pub buffers: u64,
}

impl SweepMemory {
    /// The bound: the rows in flight (or one row spread over every thread, if more), and the
    /// buffers.
    pub fn total(&self) -> u64 {
        self.row
            .saturating_mul(self.rows_in_flight)
            .max(self.row_on_every_thread)
            .saturating_add(self.buffers)
    }
}

/// Bytes a CSV field of a row takes at most in practice, as text (a number's shortest
/// round-trip form is at most 24 characters), its comma, and the `String` holding it (24 B).
pub(super) const FIELD_BYTES: u64 = 24 + 1 + 24;

impl Plan {
    /// The work of the rows this process runs, in events: each run's attempts at most and
    /// its tabs' visibility flips
    /// ([`Scenario::events_per_run`](crate::config::Scenario::events_per_run)) and its fixed
    /// cost ([`shard::ROW_OVERHEAD`]: a sweep's run costs more than a plain run's, its cell
    /// validated and its figures formatted; one measured about 45 µs), once a seed. Past
    /// [`crate::config::WORK_THRESHOLD`] the sweep needs
    /// [`SweepSpec::yes`](super::SweepSpec::yes).
    pub fn work_estimate(&self) -> u128 {
        self.work
    }

    /// [`Plan::work_estimate`] of the grid's rows `rows` (a shard's).
    pub(super) fn work_of(&self, rows: std::ops::Range<u64>) -> Result<u128, SweepError> {
        let (rows_per_cell, runs_per_row) = match self.layout {
            Layout::Tidy => (self.seeds, 1),
            Layout::Aggregate => (1, self.seeds),
        };
        let mut work = 0u128;
        let mut row = rows.start;
        while row < rows.end {
            let cell = row / rows_per_cell;
            let end = ((cell + 1) * rows_per_cell).min(rows.end);
            let runs = u128::from(end - row) * u128::from(runs_per_row);
            let per_run = shard::ROW_OVERHEAD + self.cell_scenario(cell)?.events_per_run();
            work = work.saturating_add(per_run.saturating_mul(runs));
            row = end;
        }
        Ok(work)
    }

    /// The bytes this sweep may hold at once, checked against `--memory-limit` before any
    /// row runs: a row on each worker thread (`--threads`; at most the rows there are), each
    /// bounded by the largest cell's estimate for one run on one thread
    /// ([`Scenario::memory_estimate`](crate::config::Scenario::memory_estimate)), or one row
    /// with its blocks spread over every thread when that is more; plus a window of finished rows waiting to be written and the fields
    /// of each row in flight. `tests/memory` checks it bounds the measured peak of a sweep on
    /// two threads.
    pub fn memory_estimate(&self) -> SweepMemory {
        self.memory
    }

    /// The memory limit the sweep is held to: the smallest of its cells' `memory_limit`.
    pub fn memory_limit(&self) -> u64 {
        self.memory_limit
    }

    /// Bytes one finished row takes at most as a CSV line held in memory (the sweep's own
    /// estimate of a row waiting for its turn).
    pub fn row_bytes(&self) -> u64 {
        (self.header().len() as u64) * FIELD_BYTES + 64
    }
}
