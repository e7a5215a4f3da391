//! Sweeps: a grid of scenarios (any parameter of [`parameter::PARAMETERS`] varied over lists
//! and ranges) × a number of seeds, run in parallel with rayon and streamed into CSV, one tidy
//! row per cell and seed, or one row of statistics per cell with [`Layout::Aggregate`].
//!
//! The rules this module keeps (docs/sweeps-and-clusters.md repeats them):
//! - **Grid order.** Parameters in table order, the first varying slowest; within a parameter
//!   the values as listed, ranges ascending; seeds (replicates) innermost.
//! - **Seeds.** A row's run seed is [`derive_seed`]`(master, label)`, the label naming every
//!   parameter whose effective value differs from its default (strategy excepted) and the
//!   replicate number. Nothing about the thread, the order or the rest of the grid enters it,
//!   so the output is byte-identical for any thread count and a cell gives the same numbers in
//!   any sweep. Strategy stays out of the label on purpose: all strategies of one cell and
//!   replicate share their dice, as in a plain run (common random numbers); so do the
//!   trigger-shape parameters and the slowdown (`spike-duration`, `outage-duration`,
//!   `degrade-factor`, `degrade-duration`, `slowdown`: see [`parameter::Parameter::label`]),
//!   so that the points along such an axis differ only in it.
//! - **Nothing lost.** See [`sink`]: the output is at every instant a valid CSV file holding a
//!   prefix of the final file, rows finished ahead of that prefix wait in a journal beside it,
//!   and `--resume` carries on from both.
//! - **Bounded memory.** Cells run in windows of [`WINDOW`] rows; a cell's histogram is dropped
//!   as soon as its row is formatted, and at most one window of rows waits to be written.
//!
//! Every cell is validated before any is simulated. The library never imports clap; the
//! binary's `cli` module turns flags into a [`SweepSpec`].
//!
//! A [`Plan`] is built and addressed in `plan`, its cost bounded in `estimate`, and its rows
//! run on a thread pool in `runner` ([`run`]); [`SweepError`] is in `error`.
//!
//! [`derive_seed`]: crate::rng::derive_seed

pub mod columns;
mod error;
mod estimate;
pub mod file;
pub mod merge;
pub mod parameter;
mod plan;
mod row;
mod runner;
pub mod shard;
pub mod sink;
pub mod stats;
#[cfg(test)]
mod tests;

use crate::config::{ScenarioFile, Unread, DEFAULT_MAX_REQUESTS};

pub use self::columns::{
    call_metric_values, metric_names, metric_values, CALL_METRICS, TAB_METRICS,
};
use self::parameter::Axis;
pub use self::row::{Figure, RowCache, RowRun};

pub use self::error::SweepError;
pub use self::estimate::SweepMemory;
pub use self::runner::{run, run_in, thread_pool};

/// The largest grid run without `--max-cells`: enough for any experiment of the guide, small
/// enough that a typo (`1..1000000`) is caught before hours of work.
pub const DEFAULT_MAX_CELLS: u64 = 10_000;

/// The most seeds a cell may have: a million replicates is more than any statistic needs, and
/// keeps a typo (`--seeds 18446744073709551615`) from running until the machine is turned off.
pub const MAX_SEEDS: u64 = 1_000_000;

/// Rows run per window: workers never run further ahead of the first unwritten row, which
/// bounds the rows waiting in memory and in the journal.
pub const WINDOW: u64 = 1024;

/// What the CSV holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// One row per cell and seed: parameters, `replicate`, `seed`, metrics.
    #[default]
    Tidy,
    /// One row per cell: parameters, `seeds`, and six statistics per metric.
    Aggregate,
}

/// A sweep as the user asked for it, before parsing and validation.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// The scenario every cell starts from (config file and flags); its `seed` is the master seed.
    pub base: ScenarioFile,
    /// `(parameter name, values as written)`, in any order; each parameter at most once.
    pub grid: Vec<(String, String)>,
    /// Replicates per cell, at least 1.
    pub seeds: u64,
    /// Tidy rows or per-cell statistics.
    pub layout: Layout,
    /// Refuse grids with more cells than this.
    pub max_cells: u64,
    /// Refuse sweeps whose requests estimate (every row's, summed) is larger than this.
    pub max_requests: u64,
    /// Worker threads the rows run on (`--threads`;
    /// [`default_threads`](crate::config::default_threads) when `None`): each cell's memory
    /// estimate counts them.
    pub threads: Option<usize>,
    /// Run work past [`crate::config::WORK_THRESHOLD`] (`--yes`) instead of refusing it.
    pub yes: bool,
    /// Keep the keys no cell reads ([`Plan::unread`]) instead of refusing the first: a search
    /// over one point at a time (boundary, tune) refuses a key no point of it reads.
    pub keep_unread: bool,
}

impl Default for SweepSpec {
    fn default() -> Self {
        SweepSpec {
            base: ScenarioFile::default(),
            grid: Vec::new(),
            seeds: 1,
            layout: Layout::Tidy,
            max_cells: DEFAULT_MAX_CELLS,
            max_requests: DEFAULT_MAX_REQUESTS,
            threads: None,
            yes: false,
            keep_unread: false,
        }
    }
}

/// A parsed, validated sweep: the grid, the seeding and the columns. Build with [`Plan::new`].
#[derive(Debug)]
pub struct Plan {
    /// This plan among the process's plans, for a [`RowCache`].
    id: u64,
    base: ScenarioFile,
    /// One per entry of [`PARAMETERS`](parameter::PARAMETERS) that varies or has a list in the
    /// base (strategy), in table order.
    axes: Vec<Axis>,
    master_seed: u64,
    seeds: u64,
    layout: Layout,
    cells: u64,
    /// Effective value of each parameter in the default scenario: left out of seed labels.
    defaults: Vec<String>,
    metrics: Vec<String>,
    /// Some cell runs the `occ` server or the call loop: every row then has the `attempts`
    /// metric.
    attempts: bool,
    /// Some cell runs the call loop: every row then has its metrics ([`CALL_METRICS`]).
    calls: bool,
    /// Some cell models browser tabs: every row then has their counts ([`TAB_METRICS`]).
    tabs: bool,
    /// The rows of the grid this process runs, as row `span.start + i` of the grid for its
    /// row `i`: the whole grid, or one shard's block (see [`shard`]).
    span: std::ops::Range<u64>,
    /// [`SweepSpec::threads`].
    threads: Option<usize>,
    /// [`Plan::memory_estimate`], worked out once every cell is validated.
    memory: SweepMemory,
    /// [`Plan::work_estimate`].
    work: u128,
    /// The smallest memory limit of any cell (`--memory-limit`).
    memory_limit: u64,
    /// The bytes each row's guard allows beyond what its estimate counts in flight
    /// ([`Scenario::allow_in_flight`](crate::config::Scenario::allow_in_flight)): a thread's
    /// share of what the budget leaves beyond the sweep's estimate.
    row_spare: u64,
    /// The keys no cell reads, kept with [`SweepSpec::keep_unread`].
    unread: Vec<Unread>,
}
