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

pub mod columns;
pub mod file;
pub mod merge;
pub mod parameter;
mod row;
pub mod shard;
pub mod sink;
pub mod stats;

use std::io;
use std::sync::Mutex;

use rayon::prelude::*;

use crate::config::{
    check_requests, check_work, default_threads, describe_work, human_bytes, ConfigError, Scenario,
    ScenarioFile, Unread, DEFAULT_MAX_REQUESTS, DEFAULT_SEED, WORK_THRESHOLD,
};
use crate::rng::derive_seed;

pub use self::columns::{
    call_metric_values, metric_names, metric_values, CALL_METRICS, TAB_METRICS,
};
use self::parameter::{parse_axis, Axis, Value, PARAMETERS};
pub use self::row::{Figure, RowCache, RowRun};
use self::sink::RowSink;
use self::stats::STATISTICS;

/// The largest grid run without `--max-cells`: enough for any experiment of the guide, small
/// enough that a typo (`1..1000000`) is caught before hours of work.
pub const DEFAULT_MAX_CELLS: u64 = 10_000;

/// The most seeds a cell may have: a million replicates is more than any statistic needs, and
/// keeps a typo (`--seeds 18446744073709551615`) from running until the machine is turned off.
pub const MAX_SEEDS: u64 = 1_000_000;

/// Rows run per window: workers never run further ahead of the first unwritten row, which
/// bounds the rows waiting in memory and in the journal.
pub const WINDOW: u64 = 1024;

/// The work ([`Plan::work_estimate`]'s events) a task of small rows is made of: at 10 clients
/// a row (about 1 050 events with its setup) some sixty rows, a few hundred microseconds.
const TASK_WORK: u128 = 64_000;

/// The most rows a task runs.
const MAX_ROWS_PER_TASK: u64 = 64;

/// A sweep that cannot run, or whose output cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A parameter's values do not parse.
    #[error("invalid --{parameter}: {message}")]
    Values {
        /// The parameter.
        parameter: &'static str,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// A name that is not a sweep parameter (in a `[sweep]` table).
    #[error("unknown sweep parameter `{name}`; accepted: {accepted}")]
    UnknownParameter {
        /// The name given.
        name: String,
        /// The accepted names.
        accepted: String,
    },
    /// A setting of the sweep itself (`--seeds`, `--max-cells`) is out of range.
    #[error("invalid {field}: {value}; {accepted}")]
    Setting {
        /// The flag.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        accepted: String,
    },
    /// The rows run at once would not fit in the memory budget.
    #[error("this sweep needs an estimated {estimate} ({rows} rows at once, one a thread, of up to {row} each, and its buffers), over the memory budget of {budget}; lower --threads, narrow the largest cells, or raise --memory-limit")]
    TooBig {
        /// Estimated bytes, human-readable.
        estimate: String,
        /// Rows in flight at once.
        rows: u64,
        /// The largest row's estimate, human-readable.
        row: String,
        /// The budget, human-readable.
        budget: String,
    },
    /// The grid is larger than the safety limit.
    #[error("this sweep has {cells} cells, over the limit of {limit}; narrow the grid, or raise the limit with --max-cells {cells}")]
    TooManyCells {
        /// Cells in the grid (as text: it may exceed u64).
        cells: String,
        /// The limit in force.
        limit: u64,
    },
    /// One cell of the grid is not a valid scenario.
    #[error("cell {cell} ({description}): {problem}")]
    Cell {
        /// The cell's position in grid order, from 0.
        cell: u64,
        /// The cell's varied parameters.
        description: String,
        /// Why the scenario is invalid (in the message, not a separate cause, so that
        /// `{:#}` prints it once).
        problem: ConfigError,
    },
    /// The base scenario (config file) is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--resume` found a file that this sweep did not write.
    #[error("cannot resume {path}: {reason}; rerun the sweep's own command with --resume, or leave --resume out to start over")]
    Resume {
        /// The output file.
        path: String,
        /// What does not match.
        reason: String,
    },
    /// Another process is writing the output, or its lock cannot be taken.
    #[error(transparent)]
    Locked(#[from] crate::output::LockError),
    /// The worker threads cannot be started.
    #[error("cannot start {threads} worker threads: {message}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// The system's reason, once.
        message: String,
    },
    /// `herd-sim merge` refused its shards (see [`merge`]).
    #[error(transparent)]
    Merge(#[from] merge::MergeError),
    /// The output cannot be written.
    #[error("cannot write {path}: {cause}")]
    Io {
        /// The file (or `stdout`).
        path: String,
        /// The system's reason.
        cause: io::Error,
    },
}

impl SweepError {
    /// True when the user's input is at fault (exit code 2), false for I/O failures.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SweepError::Io { .. } | SweepError::Locked(_) | SweepError::Threads { .. } => false,
            SweepError::Merge(e) => e.is_bad_input(),
            _ => true,
        }
    }
}

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
    /// Worker threads the rows run on (`--threads`; [`default_threads`] when `None`): each
    /// cell's memory estimate counts them.
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
    /// One per entry of [`PARAMETERS`] that varies or has a list in the base (strategy), in
    /// table order.
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
    /// ([`Scenario::allow_in_flight`]): a thread's share of what the budget leaves beyond
    /// the sweep's estimate.
    row_spare: u64,
    /// The keys no cell reads, kept with [`SweepSpec::keep_unread`].
    unread: Vec<Unread>,
}

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
const FIELD_BYTES: u64 = 24 + 1 + 24;

impl Plan {
    /// Parses the grid, checks its size against the limit and validates every cell.
    pub fn new(spec: SweepSpec) -> Result<Plan, SweepError> {
        if spec.seeds == 0 || spec.seeds > MAX_SEEDS {
            return Err(SweepError::Setting {
                field: "--seeds",
                value: spec.seeds.to_string(),
                accepted: format!("accepted: a whole number from 1 to {MAX_SEEDS}"),
            });
        }
        let mut given: Vec<Option<Axis>> = vec![None; PARAMETERS.len()];
        for (name, text) in &spec.grid {
            let position = PARAMETERS
                .iter()
                .position(|p| parameter::parameter(name).is_some_and(|q| std::ptr::eq(p, q)))
                .ok_or_else(|| SweepError::UnknownParameter {
                    name: name.clone(),
                    accepted: parameter::parameter_names(),
                })?;
            given[position] = Some(parse_axis(&PARAMETERS[position], text)?);
        }
        if given[0].is_none() {
            // Strategy always forms an axis: the base's list (default: full-jitter).
            // With a preset and no strategy named, each cell takes its preset's.
            let preset = spec.base.preset.is_some()
                || spec.grid.iter().any(|(name, _)| {
                    parameter::parameter(name).is_some_and(|p| p.name == "preset")
                });
            let values = match &spec.base.strategy {
                Some(list) => list.0.iter().copied().map(Value::Strategy).collect(),
                None if preset => vec![Value::Name(parameter::FROM_PRESET)],
                None => ScenarioFile::default()
                    .validate()?
                    .strategies
                    .into_iter()
                    .map(Value::Strategy)
                    .collect(),
            };
            given[0] = Some(Axis::of(&PARAMETERS[0], values));
        }
        let axes: Vec<Axis> = given.into_iter().flatten().collect();
        let cells = axes
            .iter()
            .try_fold(1u64, |product, axis| product.checked_mul(axis.len()));
        let too_many = |cells: String| SweepError::TooManyCells {
            cells,
            limit: spec.max_cells,
        };
        let cells = match cells {
            Some(c) if c <= spec.max_cells => c,
            Some(c) => return Err(too_many(c.to_string())),
            None => return Err(too_many("more than 18446744073709551615".into())),
        };
        if cells.checked_mul(spec.seeds).is_none() {
            return Err(SweepError::Setting {
                field: "--seeds",
                value: spec.seeds.to_string(),
                accepted: "accepted: fewer seeds; cells × seeds must fit in 64 bits".into(),
            });
        }
        let default_scenario = ScenarioFile::default().validate()?;
        // A trigger axis needs its trigger in every cell; axes add no trigger but `outage`,
        // which adds one to every cell, so the first cell tells.
        let mut first = spec.base.clone();
        for axis in &axes {
            (axis.parameter.set)(&mut first, &axis.value(0));
        }
        for axis in &axes {
            axis.parameter.check(&first)?;
        }
        let plan = Plan {
            id: row::plan_number(),
            master_seed: spec.base.seed.unwrap_or(DEFAULT_SEED),
            base: spec.base,
            axes,
            seeds: spec.seeds,
            layout: spec.layout,
            cells,
            defaults: PARAMETERS
                .iter()
                .map(|p| (p.get)(&default_scenario))
                .collect(),
            metrics: Vec::new(),
            attempts: false,
            calls: false,
            // Resolved once: asked of the system for each cell, it was most of a cell's
            // validation.
            threads: Some(spec.threads.unwrap_or_else(default_threads).max(1)),
            memory: SweepMemory::default(),
            work: 0,
            memory_limit: u64::MAX,
            row_spare: 0,
            unread: Vec::new(),
            tabs: false,
            span: 0..match spec.layout {
                Layout::Tidy => cells * spec.seeds,
                Layout::Aggregate => cells,
            },
        };
        // Counted before any cell is validated: every run costs at least its setup and one
        // request, so a grid whose runs alone are past the work needing --yes is refused at
        // once, not after validating a million cells.
        let runs = u128::from(cells) * u128::from(plan.seeds);
        let least = runs.saturating_mul(shard::ROW_OVERHEAD + 1);
        if !spec.yes && least > WORK_THRESHOLD {
            return Err(ConfigError::TooMuchWork {
                what: "sweep",
                estimate: format!(
                    "at least {} ({runs} runs of {} events or more)",
                    describe_work(least),
                    shard::ROW_OVERHEAD + 1
                ),
            }
            .into());
        }
        let (mut attempts, mut calls, mut tabs) = (false, false, false);
        // Every row runs one strategy once: a cell costs its requests per run, once a seed.
        let mut requests: u128 = 0;
        let threads = plan.threads.unwrap_or(1);
        let mut memory = SweepMemory {
            rows_in_flight: (threads as u64).min(plan.rows()),
            ..Default::default()
        };
        let mut memory_limit = u64::MAX;
        let mut work: u128 = 0;
        // The keys no cell reads (a grid may pair a key with cells it means nothing to).
        let mut unread: Option<Vec<Unread>> = None;
        for cell in 0..cells {
            let scenario = plan.cell_scenario(cell)?;
            let here = plan.cell_file(cell).unread(&scenario);
            match &mut unread {
                None => unread = Some(here),
                Some(all) => all.retain(|u| here.iter().any(|h| h.field == u.field)),
            }
            let call_loop = scenario.run_spec(scenario.strategies[0]).uses_call_loop();
            attempts |= scenario.server.is_occ() || call_loop;
            calls |= call_loop;
            tabs |= scenario.browser.is_active();
            requests = requests.saturating_add(
                scenario
                    .attempts_per_run()
                    .saturating_mul(u128::from(plan.seeds)),
            );
            work = work.saturating_add(
                (shard::ROW_OVERHEAD + scenario.events_per_run())
                    .saturating_mul(u128::from(plan.seeds)),
            );
            // Past the work needing --yes, the rest of the grid can only add to it.
            if !spec.yes && work > WORK_THRESHOLD && cell + 1 < cells {
                return Err(ConfigError::TooMuchWork {
                    what: "sweep",
                    estimate: format!(
                        "at least {} (its first {} of {cells} cells)",
                        describe_work(work),
                        cell + 1
                    ),
                }
                .into());
            }
            // A row is one run (the sweep's seeds are its replicates), on the path `auto`
            // picks; validation checked it alone on every thread. It holds what its
            // estimate counts in flight, guarded (see `cell_scenario`).
            let mut row = scenario;
            row.replicates = 1;
            memory.row_on_every_thread = memory.row_on_every_thread.max(row.memory_estimate());
            row.threads = 1;
            memory.row = memory.row.max(row.memory_estimate());
            memory_limit = memory_limit.min(row.memory_limit);
        }
        let unread = unread.unwrap_or_default();
        if let Some(u) = unread.first().filter(|_| !spec.keep_unread) {
            return Err(u.refusal("no cell of this sweep reads it").into());
        }
        check_requests(requests, spec.max_requests, "sweep")?;
        check_work(work, "sweep", spec.yes)?;
        let mut metrics = metric_names(attempts);
        if calls {
            metrics.extend(CALL_METRICS.iter().map(|m| m.to_string()));
        }
        if tabs {
            metrics.extend(TAB_METRICS.iter().map(|m| m.to_string()));
        }
        let plan = Plan {
            metrics,
            attempts,
            calls,
            tabs,
            ..plan
        };
        // Finished rows wait for their turn, a window at most (never more than the rows),
        // each a line (and a map node); each row in flight holds its fields.
        let columns = plan.header().len() as u64;
        memory.buffers = (WINDOW.min(plan.rows()) * (columns * FIELD_BYTES + 64))
            .saturating_add(memory.rows_in_flight * columns * FIELD_BYTES);
        if memory.total() > memory_limit {
            return Err(SweepError::TooBig {
                estimate: human_bytes(memory.total()),
                rows: memory.rows_in_flight,
                row: human_bytes(memory.row),
                budget: human_bytes(memory_limit),
            });
        }
        // Each row is guarded as a plain run is, with a thread's share of what the budget
        // leaves (rows of other plans may share the threads: a search's).
        let row_spare = (memory_limit - memory.total()) / threads as u64;
        Ok(Plan {
            memory,
            work,
            memory_limit,
            row_spare,
            unread,
            ..plan
        })
    }

    /// The keys no cell of this plan reads, when [`SweepSpec::keep_unread`] kept them.
    pub fn unread(&self) -> &[Unread] {
        &self.unread
    }

    /// The work of the rows this process runs, in events: each run's attempts at most and
    /// its tabs' visibility flips ([`Scenario::events_per_run`]) and its fixed cost
    /// ([`shard::ROW_OVERHEAD`]: a sweep's run costs more than a plain run's, its cell
    /// validated and its figures formatted; one measured about 45 µs), once a seed. Past
    /// [`crate::config::WORK_THRESHOLD`] the sweep needs [`SweepSpec::yes`].
    pub fn work_estimate(&self) -> u128 {
        self.work
    }

    /// [`Plan::work_estimate`] of the grid's rows `rows` (a shard's).
    fn work_of(&self, rows: std::ops::Range<u64>) -> Result<u128, SweepError> {
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

    /// The bytes this sweep may hold at once, checked against `--memory-limit` before any
    /// row runs: a row on each worker thread (`--threads`; at most the rows there are), each
    /// bounded by the largest cell's estimate for one run on one thread
    /// ([`Scenario::memory_estimate`]), or one row with its blocks spread over every thread
    /// when that is more; plus a window of finished rows waiting to be written and the fields
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

    /// Cells in the grid.
    pub fn cells(&self) -> u64 {
        self.cells
    }

    /// Rows of the finished file: [`Plan::grid_rows`], or one shard's share of them.
    pub fn rows(&self) -> u64 {
        self.span.end - self.span.start
    }

    /// Rows of the whole grid (cells × seeds, or cells when aggregated), even in a shard.
    pub fn grid_rows(&self) -> u64 {
        match self.layout {
            Layout::Tidy => self.cells * self.seeds,
            Layout::Aggregate => self.cells,
        }
    }

    /// The CSV header.
    pub fn header(&self) -> Vec<String> {
        let mut header: Vec<String> = PARAMETERS.iter().map(|p| p.column.to_string()).collect();
        match self.layout {
            Layout::Tidy => {
                header.extend(["replicate".to_string(), "seed".to_string()]);
                header.extend(self.metrics.iter().cloned());
            }
            Layout::Aggregate => {
                header.push("seeds".to_string());
                for metric in &self.metrics {
                    header.extend(STATISTICS.iter().map(|s| format!("{metric}_{s}")));
                }
            }
        }
        header
    }

    /// The value index of each axis for `cell`: the last axis varies fastest.
    fn coordinates(&self, cell: u64) -> Vec<u64> {
        let mut rest = cell;
        let mut digits = vec![0; self.axes.len()];
        for (digit, axis) in digits.iter_mut().zip(&self.axes).rev() {
            *digit = rest % axis.len();
            rest /= axis.len();
        }
        digits
    }

    /// The scenario file of `cell`: the base with the cell's value of every axis.
    fn cell_file(&self, cell: u64) -> ScenarioFile {
        let mut file = self.base.clone();
        for (axis, &i) in self.axes.iter().zip(&self.coordinates(cell)) {
            (axis.parameter.set)(&mut file, &axis.value(i));
        }
        file
    }

    /// The validated scenario of `cell` (its seed is still the master seed).
    fn cell_scenario(&self, cell: u64) -> Result<Scenario, SweepError> {
        let file = self.cell_file(cell);
        // The memory budget is the plan's to check, once, for the rows it runs at once.
        // A row writes figures only: a call-loop run folds its windows as they close. Its
        // calls and queue (or a herd's histograms behind a limiter) are guarded as a plain
        // run's are, so the estimate counts what is in flight, not the worst case.
        let folding = |mut scenario: Scenario| {
            scenario.overload.keep_windows = false;
            scenario.count_in_flight();
            scenario
        };
        file.validate_without_budget_on(self.threads)
            .map(folding)
            .map_err(|problem| SweepError::Cell {
                cell,
                description: self.cell_description(cell),
                problem,
            })
    }

    /// The varied parameters of `cell`, `name=value, …`: or every parameter given, when
    /// nothing varies.
    fn cell_description(&self, cell: u64) -> String {
        let varied = self.axes.iter().any(|axis| axis.len() > 1);
        self.axes
            .iter()
            .zip(&self.coordinates(cell))
            .filter(|(axis, _)| axis.len() > 1 || !varied)
            .map(|(axis, &i)| format!("{}={}", axis.parameter.name, axis.value(i)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The parameter columns of a cell's scenario.
    fn parameter_fields(scenario: &Scenario) -> Vec<String> {
        PARAMETERS.iter().map(|p| (p.get)(scenario)).collect()
    }

    /// The part of a cell's seed label before the replicate: every parameter whose effective
    /// value differs from its default (parameters kept out of it excepted), `name=value;`
    /// each.
    fn seed_label(&self, scenario: &Scenario) -> String {
        let mut label = String::new();
        for (p, default) in PARAMETERS.iter().zip(&self.defaults) {
            if !p.label {
                continue;
            }
            let value = (p.get)(scenario);
            if &value != default {
                label.push_str(&format!("{}={value};", p.name));
            }
        }
        label
    }

    /// The run seed of `replicate` of the cell whose [`Plan::seed_label`] is `label`.
    fn seed_with_label(&self, label: &str, replicate: u64) -> u64 {
        derive_seed(self.master_seed, &format!("{label}replicate={replicate}"))
    }

    /// The fields that identify row `row`: its parameters and replicate and seed (tidy) or
    /// its parameters and seed count (aggregate). Every row of the file starts with them.
    pub fn key(&self, row: u64) -> Result<Vec<String>, SweepError> {
        self.key_in(row, &mut RowCache::default())
    }

    /// Runs row `row` (every seed of the cell when aggregated) and returns its fields. A
    /// worker running many rows passes its own cache to [`Plan::row_in`] instead.
    pub fn row(&self, row: u64) -> Result<Vec<String>, SweepError> {
        self.row_in(row, &mut RowCache::default())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Strategy;

    fn plan(grid: &[(&str, &str)], seeds: u64) -> Plan {
        Plan::new(SweepSpec {
            grid: grid
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            seeds,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn the_grid_runs_in_table_order_last_parameter_fastest_seeds_innermost() {
        // Given out of table order on purpose: the order written does not matter.
        let p = plan(
            &[
                ("retries", "2,3"),
                ("clients", "10,20"),
                ("strategy", "fixed"),
            ],
            2,
        );
        assert_eq!(p.cells(), 4);
        assert_eq!(p.rows(), 8);
        let keys: Vec<(String, String, String)> = (0..8)
            .map(|r| {
                let k = p.key(r).unwrap();
                (k[1].clone(), k[2].clone(), k[PARAMETERS.len()].clone())
            })
            .collect();
        let expected = [
            ("10", "2", "0"),
            ("10", "2", "1"),
            ("10", "3", "0"),
            ("10", "3", "1"),
            ("20", "2", "0"),
            ("20", "2", "1"),
            ("20", "3", "0"),
            ("20", "3", "1"),
        ];
        for (got, want) in keys.iter().zip(expected) {
            assert_eq!((got.0.as_str(), got.1.as_str(), got.2.as_str()), want);
        }
    }

    #[test]
    fn a_cell_has_the_same_seed_in_any_grid_and_strategies_share_it() {
        let small = plan(&[("clients", "20")], 3);
        let large = plan(
            &[
                ("clients", "10,20,30"),
                ("strategy", "all"),
                ("base", "1s,2s"),
            ],
            3,
        );
        let seeds_of = |p: &Plan, clients: &str, base: &str| -> Vec<(String, String)> {
            (0..p.rows())
                .map(|r| p.key(r).unwrap())
                .filter(|k| k[1] == clients && k[3] == base)
                .map(|k| (k[0].clone(), k[PARAMETERS.len() + 1].clone()))
                .collect()
        };
        let alone = seeds_of(&small, "20", "1");
        let inside = seeds_of(&large, "20", "1");
        assert_eq!(alone.len(), 3);
        assert_eq!(inside.len(), 3 * Strategy::ALL.len());
        for (strategy, seed) in &inside {
            let replicate = inside
                .iter()
                .filter(|(s, _)| s == strategy)
                .position(|(_, s)| s == seed)
                .unwrap();
            assert_eq!(seed, &alone[replicate].1, "{strategy}");
        }
        // Replicates differ, and a different base is a different cell.
        assert_ne!(alone[0].1, alone[1].1);
        assert_ne!(seeds_of(&large, "20", "2")[0].1, alone[0].1);
    }

    #[test]
    fn default_values_stay_out_of_the_label() {
        // `--clients 1000` is the default scenario: same seeds as a sweep not naming clients.
        let named = plan(&[("clients", "1000")], 1);
        let unnamed = plan(&[], 1);
        assert_eq!(named.key(0).unwrap(), unnamed.key(0).unwrap());
        let label_seed = derive_seed(DEFAULT_SEED, "replicate=0");
        assert_eq!(
            unnamed.key(0).unwrap()[PARAMETERS.len() + 1],
            label_seed.to_string()
        );
    }

    #[test]
    fn grids_over_the_limit_and_invalid_cells_are_refused_before_running() {
        let e = Plan::new(SweepSpec {
            grid: vec![("clients".into(), "1..20000".into())],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("20000 cells") && e.contains("--max-cells 20000"),
            "{e}"
        );
        let e = Plan::new(SweepSpec {
            grid: vec![
                ("clients".into(), "1..1000000000000".into()),
                ("retries".into(), "1..1000000000000".into()),
            ],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("more than"), "{e}");
        let e = Plan::new(SweepSpec {
            grid: vec![("cap".into(), "500ms,2s".into())],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("cell 0 (cap=500ms): invalid --cap"), "{e}");
        // Nothing varies: the one cell is named by every parameter given, never "cell 0 ()".
        let e = Plan::new(SweepSpec {
            grid: vec![("base".into(), "1s".into()), ("cap".into(), "500ms".into())],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("cell 0 (strategy=full-jitter, base=1s, cap=500ms): invalid --cap"),
            "{e}"
        );
        let e = Plan::new(SweepSpec {
            grid: vec![("clinets".into(), "5".into())],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown sweep parameter `clinets`"), "{e}");
    }

    #[test]
    fn the_memory_estimate_counts_a_row_a_thread_and_a_window_of_waiting_rows() {
        // Event-queue rows (a limiter): one run a row, so a row on every thread is the same
        // row as on one.
        let spec = |threads, seeds, memory_limit: Option<u64>| SweepSpec {
            base: ScenarioFile {
                memory_limit,
                ..ScenarioFile::parse(
                    "clients = 10000\n[server]\nmodel = \"sliding-window\"\nlimit = 20\n",
                    Some("toml"),
                )
                .unwrap()
            },
            seeds,
            threads: Some(threads),
            ..Default::default()
        };
        // A row is guarded as a plain run is: its estimate is the guarded plain run's.
        let mut one_row = ScenarioFile::parse(
            "clients = 10000\n[server]\nmodel = \"sliding-window\"\nlimit = 20\n",
            Some("toml"),
        )
        .unwrap()
        .validate_on(Some(1))
        .unwrap();
        one_row.guard_in_flight(false);
        let one_row = one_row.memory_estimate();
        let plan = Plan::new(spec(3, 5, None)).unwrap();
        let m = plan.memory_estimate();
        let columns = plan.header().len() as u64;
        assert_eq!((m.rows_in_flight, m.row), (3, one_row));
        assert_eq!(m.row_on_every_thread, one_row);
        // Five rows wait at most, each a line, and three rows in flight hold their fields.
        assert_eq!(m.buffers, 5 * (columns * 49 + 64) + 3 * columns * 49);
        assert_eq!(m.total(), 3 * one_row + m.buffers);
        // Two rows: a third thread holds none.
        assert_eq!(
            Plan::new(spec(3, 2, None))
                .unwrap()
                .memory_estimate()
                .rows_in_flight,
            2
        );
        // A budget one row fits but three rows at once do not: refused before running,
        // naming the rows in flight; with one thread it runs. (One row and three threads'
        // buffers, so that the margin does not depend on how many columns a sweep has.)
        let budget = one_row + m.buffers;
        let e = Plan::new(spec(3, 5, Some(budget))).unwrap_err().to_string();
        assert!(
            e.starts_with("this sweep needs an estimated ") && e.contains("(3 rows at once"),
            "{e}"
        );
        assert!(
            e.contains("lower --threads") && e.contains("--memory-limit"),
            "{e}"
        );
        assert!(Plan::new(spec(1, 5, Some(budget))).is_ok());
    }

    #[test]
    fn the_work_estimate_sums_each_rows_requests_and_setup() {
        // Worked by hand: 3 seeds of (1000 + 1000 × 5) and of (1000 + 1 000 000 × 5) events.
        let spec = |layout| SweepSpec {
            grid: vec![("clients".into(), "1000,1000000".into())],
            seeds: 3,
            layout,
            ..Default::default()
        };
        let tidy = Plan::new(spec(Layout::Tidy)).unwrap();
        assert_eq!(tidy.work_estimate(), 3 * (6_000 + 5_001_000));
        assert_eq!(tidy.work_of(3..5).unwrap(), 2 * 5_001_000);
        assert_eq!(tidy.work_of(2..4).unwrap(), 6_000 + 5_001_000);
        let aggregate = Plan::new(spec(Layout::Aggregate)).unwrap();
        assert_eq!(aggregate.work_estimate(), tidy.work_estimate());
        assert_eq!(aggregate.work_of(1..2).unwrap(), 3 * 5_001_000);
    }

    #[test]
    fn limiter_parameters_fill_their_columns_only_where_they_apply() {
        let p = plan(
            &[
                ("server", "fixed-window,sliding-window"),
                ("limit", "10,30"),
                ("window", "60s"),
            ],
            1,
        );
        let header = p.header();
        let at = |p: &Plan, row: u64, name: &str| {
            p.key(row).unwrap()[header.iter().position(|h| h == name).unwrap()].clone()
        };
        // Grid order: server slower than limit.
        assert_eq!(at(&p, 0, "server"), "fixed-window");
        assert_eq!(
            (at(&p, 1, "limit"), at(&p, 1, "window_s")),
            ("30".into(), "60".into())
        );
        assert_eq!(at(&p, 2, "server"), "sliding-window");
        assert_eq!(at(&p, 2, "limit"), "10");
        assert_eq!(at(&p, 3, "clients_per_address"), "1");
        let down = plan(&[], 1);
        assert_eq!(at(&down, 0, "limit"), "");
        assert_eq!(at(&down, 0, "clients_per_address"), "");
        // Limiter keys on a down server: refused before anything runs, naming the cell.
        let e = Plan::new(SweepSpec {
            grid: vec![
                ("server".into(), "down,fixed-window".into()),
                ("limit".into(), "10".into()),
            ],
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("cell 0 (server=down)") && e.contains("--limit"),
            "{e}"
        );
    }

    #[test]
    fn metric_columns_follow_the_summary() {
        let names = metric_names(false);
        assert_eq!(names.first().map(String::as_str), Some("peak"));
        assert!(names.iter().any(|n| n == "last_success_s"));
        let p = plan(&[("clients", "50")], 1);
        let row = p.row(0).unwrap();
        assert_eq!(row.len(), p.header().len());
        // 50 clients, 4 retries each, server down: 200 retries, 250 requests, all refused.
        let column = |name: &str| {
            let i = p.header().iter().position(|h| h == name).unwrap();
            row[i].clone()
        };
        assert_eq!(column("total"), "200");
        assert_eq!(column("requests"), "250");
        assert_eq!(column("refused"), "250");
        assert_eq!(column("gave_up"), "50");
    }

    #[test]
    fn aggregates_describe_the_tidy_rows() {
        let spec = |layout| SweepSpec {
            grid: vec![("clients".into(), "30".into())],
            seeds: 4,
            layout,
            ..Default::default()
        };
        let tidy = Plan::new(spec(Layout::Tidy)).unwrap();
        let aggregate = Plan::new(spec(Layout::Aggregate)).unwrap();
        let peak = PARAMETERS.len() + 2;
        let peaks: Vec<f64> = (0..4)
            .map(|r| tidy.row(r).unwrap()[peak].parse().unwrap())
            .collect();
        let row = aggregate.row(0).unwrap();
        let header = aggregate.header();
        let at = |name: &str| row[header.iter().position(|h| h == name).unwrap()].clone();
        assert_eq!(at("seeds"), "4");
        let mean = peaks.iter().sum::<f64>() / 4.0;
        assert_eq!(at("peak_mean").parse::<f64>().unwrap(), mean);
        let max = peaks.iter().copied().fold(0.0, f64::max);
        assert_eq!(at("peak_max").parse::<f64>().unwrap(), max);
        // No client ever succeeds against a server that stays down: nothing to describe.
        assert_eq!(at("last_success_s_mean"), "");
    }
}
