//! Building a [`Plan`] from a [`SweepSpec`] (parsing the grid, validating every cell,
//! counting what it costs) and addressing it: a row's cell, coordinates, scenario, seed and
//! label, and the CSV header. Separate from running it: nothing here simulates.

use super::estimate::{SweepMemory, FIELD_BYTES};
use super::parameter::{self, parse_axis, Axis, PARAMETERS};
use super::stats::STATISTICS;
use super::{
    metric_names, row, shard, Layout, Plan, RowCache, SweepError, SweepSpec, CALL_METRICS,
    MAX_SEEDS, TAB_METRICS, WINDOW,
};
use crate::config::{
    check_requests, check_work, default_threads, describe_work, human_bytes, ConfigError, Scenario,
    ScenarioFile, Unread, DEFAULT_SEED, WORK_THRESHOLD,
};
use crate::rng::derive_seed;

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
            let values = parameter::strategies_unnamed(&spec.base, preset)?;
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
    pub(super) fn coordinates(&self, cell: u64) -> Vec<u64> {
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
    pub(super) fn cell_scenario(&self, cell: u64) -> Result<Scenario, SweepError> {
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
    pub(super) fn cell_description(&self, cell: u64) -> String {
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
    pub(super) fn parameter_fields(scenario: &Scenario) -> Vec<String> {
        PARAMETERS.iter().map(|p| (p.get)(scenario)).collect()
    }

    /// The part of a cell's seed label before the replicate: every parameter whose effective
    /// value differs from its default (parameters kept out of it excepted), `name=value;`
    /// each.
    pub(super) fn seed_label(&self, scenario: &Scenario) -> String {
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
    pub(super) fn seed_with_label(&self, label: &str, replicate: u64) -> u64 {
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
