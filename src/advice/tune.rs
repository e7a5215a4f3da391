//! `herd-sim tune`: the settings of a retry policy that meet a team's constraints across
//! scenarios, with their uncertainty. A candidate is one value of each tuned parameter
//! ([`tune_file`](super::tune_file) reads them); every run is row `r` of the one-cell sweep
//! of the candidate's values over a scenario ([`Plan`]), so a candidate's replicate `r` has
//! the sweep's seed and `herd-sim sweep` with the same values replays it. The [`Runs`] cache
//! holds every row run, keyed by (candidate, scenario), so no seed is simulated twice; the
//! search ([`Tuner::run`]) asks it for seeds and the frontier
//! ([`tune_frontier`](super::tune_frontier)) reads the means. No I/O and no clap here.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::config::{Unread, DEFAULT_SEED};
use crate::sweep::{Layout, Plan, RowCache, SweepSpec};

use super::tune_file::{control_of, control_text, Method, Target, Term, TuneError, TuneFile};
use super::tune_frontier::{Evaluated, Rung, TuneReport};
use super::tune_library::{herd_sim_keys, resolve, snippets};
use super::tune_search::{latin_hypercube, rank};

/// One point of the grid: a level of each dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Its position in grid order (the last dimension fastest).
    pub index: u64,
    /// The level of each dimension.
    pub levels: Vec<usize>,
    /// `(sweep parameter, value)` laid over each scenario: control keys folded into their
    /// control's text (`budget`, `grpc:max_tokens=20`).
    pub grid: Vec<(String, String)>,
}

impl Candidate {
    /// The candidate at grid position `index` of `file`.
    pub fn at(file: &TuneFile, index: u64) -> Candidate {
        let mut rest = index;
        let mut levels = vec![0; file.dimensions.len()];
        for (slot, d) in levels.iter_mut().zip(&file.dimensions).rev() {
            let n = d.levels.len() as u64;
            *slot = (rest % n) as usize;
            rest /= n;
        }
        let mut grid: Vec<(String, String)> = Vec::new();
        for (d, &l) in file.dimensions.iter().zip(&levels) {
            if let Target::Parameter(name) = d.target {
                grid.push((name.to_string(), d.levels[l].text.clone()));
            }
        }
        for (d, &l) in file.dimensions.iter().zip(&levels) {
            if let Target::ControlKey(control, key) = &d.target {
                let slot = grid
                    .iter_mut()
                    .find(|(name, _)| name == control)
                    .expect("checked: a control key has its control");
                slot.1 = control_text(&slot.1, &[(key.as_str(), d.levels[l].text.as_str())]);
            }
        }
        for (name, text) in &mut grid {
            if matches!(name.as_str(), "budget" | "breaker" | "throttle") {
                if let Ok(short) = control_of(name).canonical(text) {
                    *text = short;
                }
            }
        }
        Candidate {
            index,
            levels,
            grid,
        }
    }

    /// `name=value` of each dimension, for messages and tables.
    pub fn describe(&self, file: &TuneFile) -> String {
        file.dimensions
            .iter()
            .zip(&self.levels)
            .map(|(d, &l)| format!("{}={}", d.name, d.levels[l].text))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every run made so far, by (candidate index, scenario): each replicate's value of each
/// measured metric (`None` when the row left it empty), in replicate order.
#[derive(Debug, Default)]
pub struct Runs {
    rows: BTreeMap<(u64, usize), Vec<Vec<Option<f64>>>>,
    spent: u64,
}

impl Runs {
    /// Runs simulated so far: each a (candidate, scenario, seed) once.
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// The replicates of (candidate, scenario) run so far.
    pub fn of(&self, candidate: u64, scenario: usize) -> &[Vec<Option<f64>>] {
        self.rows
            .get(&(candidate, scenario))
            .map_or(&[], Vec::as_slice)
    }
}

/// A validated tune: the file, the metric columns each scenario is read at, the threads.
#[derive(Debug)]
pub struct Tuner {
    file: TuneFile,
    /// For each scenario, the metrics measured there, in [`TuneFile::terms`] order.
    metrics: Vec<Vec<String>>,
    threads: usize,
    max_requests: u64,
    work: u128,
    /// The candidates the search starts from, by grid position: the whole grid, or the design.
    design: Vec<u64>,
}

impl Tuner {
    /// Checks every candidate in every scenario as a sweep cell (before anything runs), and
    /// every metric named against the scenario's columns.
    pub fn new(file: TuneFile, threads: usize, max_requests: u64) -> Result<Tuner, TuneError> {
        let mut metrics = vec![Vec::new(); file.scenarios.len()];
        for term in file.terms() {
            if let Term::Metric {
                metric, scenario, ..
            } = term
            {
                metrics[scenario].push(metric);
            }
        }
        let size = file.grid_size();
        let design = match file.method {
            Method::Exhaustive if size > file.max_candidates => {
                return Err(TuneError::Invalid {
                    field: "params".into(),
                    value: format!("({size} candidates)"),
                    problem: format!(
                        "the grid is larger than the exhaustive search's limit of {}",
                        file.max_candidates
                    ),
                    accepted:
                        "a coarser grid, [search] max_candidates = N, or method = \"halving\""
                            .into(),
                });
            }
            Method::Exhaustive => (0..size).collect(),
            Method::Halving { design, .. } => {
                latin_hypercube(&file, design, file.seed.unwrap_or(DEFAULT_SEED))
            }
        };
        let mut tuner = Tuner {
            file,
            metrics,
            threads,
            max_requests,
            work: 0,
            design,
        };
        let mut work: u128 = 0;
        let scenarios = tuner.file.scenarios.len();
        // Each scenario's keys each candidate leaves unread (--balancer at one server).
        let mut unread: Vec<Vec<Vec<Unread>>> = vec![Vec::new(); scenarios];
        for (n, &index) in tuner.design.iter().enumerate() {
            let candidate = Candidate::at(&tuner.file, index);
            for (s, unread) in unread.iter_mut().enumerate() {
                let plan = tuner.plan(&candidate, s, tuner.file.seeds)?;
                if n == 0 {
                    tuner.check_metrics(&plan, s)?;
                }
                work = work.saturating_add(plan.work_estimate());
                unread.push(plan.unread().to_vec());
            }
        }
        for (s, unread) in unread.into_iter().enumerate() {
            if let Some(u) = Unread::in_every(unread).first() {
                return Err(TuneError::Cell {
                    scenario: tuner.file.scenarios[s].name.clone(),
                    candidate: "every candidate".into(),
                    error: Box::new(u.refusal("no candidate of this search reads it").into()),
                });
            }
        }
        // Each rung of halving runs about as many runs as the first (1/eta of the candidates,
        // eta times the seeds).
        tuner.work = work.saturating_mul(u128::from(tuner.rungs()));
        Ok(tuner)
    }

    /// Rungs the search runs at most: 1 for an exhaustive search.
    pub fn rungs(&self) -> u64 {
        match self.file.method {
            Method::Exhaustive => 1,
            Method::Halving { eta, max_seeds, .. } => {
                let mut rungs = 1;
                let mut seeds = self.file.seeds;
                while seeds.saturating_mul(eta) <= max_seeds {
                    seeds *= eta;
                    rungs += 1;
                }
                rungs
            }
        }
    }

    /// The tune file.
    pub fn file(&self) -> &TuneFile {
        &self.file
    }

    /// The work of the search, in the sweep's events (every candidate with its seeds).
    pub fn work_estimate(&self) -> u128 {
        self.work
    }

    /// Runs the search makes at most: its first rung's (candidates × scenarios × seeds) once
    /// a rung.
    pub fn max_runs(&self) -> u64 {
        (self.design.len() as u64)
            .saturating_mul(self.file.scenarios.len() as u64)
            .saturating_mul(self.file.seeds)
            .saturating_mul(self.rungs())
    }

    fn check_metrics(&self, plan: &Plan, scenario: usize) -> Result<(), TuneError> {
        let header = plan.header();
        let start = header.iter().position(|h| h == "seed").map_or(0, |p| p + 1);
        let columns = &header[start..];
        let name = &self.file.scenarios[scenario].name;
        for metric in &self.metrics[scenario] {
            if !columns.contains(metric) {
                return Err(TuneError::Invalid {
                    field: "objectives".into(),
                    value: format!("\"{metric}@{name}\""),
                    problem: format!("unknown metric `{metric}` of scenario `{name}`"),
                    accepted: format!("a summary metric of that scenario: {}", columns.join(", ")),
                });
            }
        }
        Ok(())
    }

    /// The one-cell sweep of `candidate` over scenario `s`, with `seeds` replicates.
    fn plan(&self, candidate: &Candidate, s: usize, seeds: u64) -> Result<Plan, TuneError> {
        let scenario = &self.file.scenarios[s];
        let mut base = scenario.file.clone();
        if self.file.seed.is_some() {
            base.seed = self.file.seed;
        }
        let cell = |error| TuneError::Cell {
            scenario: scenario.name.clone(),
            candidate: candidate.describe(&self.file),
            error: Box::new(error),
        };
        let plan = Plan::new(SweepSpec {
            base,
            grid: candidate.grid.clone(),
            seeds,
            layout: Layout::Tidy,
            // A scenario listing several strategies gives several cells: refused here.
            max_cells: 1,
            max_requests: self.max_requests,
            threads: Some(self.threads),
            // The search's work is checked once, up front (Tuner::work_estimate), and so are
            // the keys no candidate reads (Tuner::new).
            yes: true,
            keep_unread: true,
        })
        .map_err(cell)?;
        Ok(plan)
    }

    /// Runs what `wanted` asks for and is not in `runs` yet: `(candidate, scenario, seeds)`,
    /// each row once, in parallel on `pool`; the rows are stored in replicate order, so the
    /// cache's content does not depend on the threads.
    pub fn ensure(
        &self,
        pool: &rayon::ThreadPool,
        runs: &mut Runs,
        wanted: &[(u64, usize, u64)],
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), TuneError> {
        let mut plans = Vec::new();
        let mut tasks: Vec<(usize, u64)> = Vec::new();
        for &(c, s, seeds) in wanted {
            let have = runs.of(c, s).len() as u64;
            if seeds <= have {
                continue;
            }
            let candidate = Candidate::at(&self.file, c);
            let plan = self.plan(&candidate, s, seeds)?;
            let columns: Vec<Option<usize>> = self.metrics[s]
                .iter()
                .map(|m| plan.metric_column(m))
                .collect();
            let slot = plans.len();
            plans.push((c, s, plan, columns));
            tasks.extend((have..seeds).map(|r| (slot, r)));
        }
        let done = AtomicU64::new(runs.spent);
        let results = pool.install(|| {
            tasks
                .par_iter()
                .map_init(RowCache::default, |cache, &(slot, replicate)| {
                    let (c, s, plan, columns) = &plans[slot];
                    let run = plan
                        .run_row(replicate, cache)
                        .map_err(|error| TuneError::Cell {
                            scenario: self.file.scenarios[*s].name.clone(),
                            candidate: Candidate::at(&self.file, *c).describe(&self.file),
                            error: Box::new(error),
                        })?;
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    Ok(columns
                        .iter()
                        .map(|c| c.and_then(|i| run.figures[i].number()))
                        .collect::<Vec<Option<f64>>>())
                })
                .collect::<Result<Vec<_>, TuneError>>()
        })?;
        for (&(slot, _), values) in tasks.iter().zip(results) {
            let (c, s, _, _) = &plans[slot];
            runs.rows.entry((*c, *s)).or_default().push(values);
            runs.spent += 1;
        }
        Ok(())
    }

    /// The value of `term` for `candidate` from the runs so far: one a replicate (a tuned
    /// parameter's value is the same in each).
    pub fn values(&self, runs: &Runs, candidate: &Candidate, term: &Term) -> Vec<f64> {
        match term {
            Term::Parameter { dimension, .. } => {
                let level = &self.file.dimensions[*dimension].levels[candidate.levels[*dimension]];
                level.number.into_iter().collect()
            }
            Term::Metric {
                metric, scenario, ..
            } => {
                let column = self.metrics[*scenario]
                    .iter()
                    .position(|m| m == metric)
                    .unwrap_or(0);
                runs.of(candidate.index, *scenario)
                    .iter()
                    .filter_map(|row| row.get(column).copied().flatten())
                    .collect()
            }
        }
    }

    /// Every candidate's statistics from the runs so far.
    pub fn evaluate(&self, runs: &Runs, candidates: &[Candidate]) -> Vec<Evaluated> {
        let terms = self.file.terms();
        candidates
            .iter()
            .map(|c| {
                let seeds = (0..self.file.scenarios.len())
                    .map(|s| runs.of(c.index, s).len() as u64)
                    .min()
                    .unwrap_or(0);
                Evaluated::new(
                    c.clone(),
                    seeds,
                    terms
                        .iter()
                        .map(|t| (t.clone(), self.values(runs, c, t)))
                        .collect(),
                    &self.file,
                )
            })
            .collect()
    }

    /// Runs the search and gathers the report. Exhaustive: every candidate with the file's
    /// seeds. Halving: the design with the file's seeds, then the best 1/eta (by
    /// [`rank`]) with eta times as many, until eta or fewer are left or the next rung would
    /// pass `max_seeds`; the frontier is that of the last rung.
    pub fn run(
        &self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<TuneReport, TuneError> {
        let mut runs = Runs::default();
        let scenarios = self.file.scenarios.len();
        let mut alive: Vec<Candidate> = self
            .design
            .iter()
            .map(|&i| Candidate::at(&self.file, i))
            .collect();
        let mut seeds = self.file.seeds;
        let mut rungs = Vec::new();
        loop {
            let wanted: Vec<(u64, usize, u64)> = alive
                .iter()
                .flat_map(|c| (0..scenarios).map(move |s| (c.index, s, seeds)))
                .collect();
            self.ensure(pool, &mut runs, &wanted, progress)?;
            rungs.push(Rung {
                candidates: alive.len() as u64,
                seeds,
            });
            let Method::Halving { eta, max_seeds, .. } = self.file.method else {
                break;
            };
            if alive.len() as u64 <= eta || seeds.saturating_mul(eta) > max_seeds {
                break;
            }
            let evaluated = self.evaluate(&runs, &alive);
            let keep = (alive.len() as u64).div_ceil(eta) as usize;
            let mut kept: Vec<Candidate> = rank(&evaluated, &self.file)[..keep]
                .iter()
                .map(|&i| alive[i].clone())
                .collect();
            kept.sort_by_key(|c| c.index);
            alive = kept;
            seeds *= eta;
        }
        let evaluated = self.evaluate(&runs, &alive);
        let exhaustive = self
            .file
            .grid_size()
            .saturating_mul(scenarios as u64)
            .saturating_mul(seeds);
        let mut report = TuneReport::new(&self.file, evaluated, runs.spent(), exhaustive, rungs);
        if let Some(i) = report.recommended {
            let grid = &report.evaluated[i].candidate.grid;
            let keys = herd_sim_keys(&self.file.scenarios[0].file, grid);
            if let Some(scenario) = resolve(&self.file.scenarios[0].file, grid) {
                report.configs = snippets(&scenario, &keys);
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const FILE: &str = r#"
seeds = 2
[[scenario]]
name = "flaky"
clients = 2
strategy = "naive"
retries = 2
arrivals = "poisson"
rate = "20/s"
duration = "2s"
[scenario.server]
model = "flaky"
failure_rate = 0.5
[params]
retries = "1,2,3"
[objectives]
maximize = ["goodput_pct@flaky"]
"#;

    #[test]
    fn the_cache_runs_each_seed_once_and_only_the_new_ones() {
        let file = TuneFile::parse(FILE, Path::new("."), "t.toml").unwrap();
        let tuner = Tuner::new(file, 2, u64::MAX).unwrap();
        let pool = crate::sweep::thread_pool(Some(2)).unwrap();
        let mut runs = Runs::default();
        let count = AtomicU64::new(0);
        let progress = |_| {
            count.fetch_add(1, Ordering::Relaxed);
        };
        // Two seeds of candidates 0 and 2: four runs.
        tuner
            .ensure(&pool, &mut runs, &[(0, 0, 2), (2, 0, 2)], &progress)
            .unwrap();
        assert_eq!((runs.spent(), count.load(Ordering::Relaxed)), (4, 4));
        let first: Vec<_> = runs.of(0, 0).to_vec();
        // Asked again, nothing runs; asked for four seeds of candidate 0, only seeds 2 and 3.
        tuner
            .ensure(&pool, &mut runs, &[(0, 0, 2), (2, 0, 1)], &progress)
            .unwrap();
        assert_eq!(runs.spent(), 4);
        tuner
            .ensure(&pool, &mut runs, &[(0, 0, 4)], &progress)
            .unwrap();
        assert_eq!((runs.spent(), count.load(Ordering::Relaxed)), (6, 6));
        assert_eq!(runs.of(0, 0).len(), 4);
        assert_eq!(&runs.of(0, 0)[..2], first.as_slice(), "kept, not rerun");
        // The seeds added are the sweep's replicates 2 and 3: the same values as a fresh
        // cache asking for four seeds at once.
        let mut fresh = Runs::default();
        tuner
            .ensure(&pool, &mut fresh, &[(0, 0, 4)], &|_| {})
            .unwrap();
        assert_eq!(fresh.of(0, 0), runs.of(0, 0));
        // The whole search: 3 candidates × 2 seeds, each once.
        let report = tuner.run(&pool, &|_| {}).unwrap();
        assert_eq!(report.runs, 6);
    }
}
