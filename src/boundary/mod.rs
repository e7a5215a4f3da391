//! `herd-sim boundary`: where a scenario tips over. For each case (a strategy, and any other
//! sweep parameter given as a list), the value of one numeric sweep parameter (the axis) at
//! which the probability that a run collapses crosses a level, with a 95 % interval, found by
//! an adaptive search ([`search`]) over seeds rather than a grid.
//!
//! A layer above [`crate::sweep`]: every run is a row of a one-cell sweep ([`evaluate`]), with
//! the sweep's seeds, validation, memory check and thread pool, so a point replays as a sweep
//! or a plain run. What the user asked for is validated once ([`BoundaryPlan::new`], in
//! `validate`: the axis, the range, the level, every case at both ends of the range); this
//! module then runs the searches one case after another, each batch in parallel, and gathers
//! a [`Report`] ([`export`] writes it). No I/O and no clap here.

pub mod band;
pub mod curve;
pub mod evaluate;
pub mod export;
pub mod plane;
pub mod plane_export;
pub mod search;
mod validate;
pub mod wilson;

use std::sync::atomic::AtomicU64;

use crate::config::{ConfigError, ScenarioFile, DEFAULT_SEED};
use crate::sweep::parameter::{parse_axis, Kind, Parameter, Value, PARAMETERS};
use crate::sweep::SweepError;
use crate::time::SimDuration;

use self::band::{CaseBand, KnockOver};
use self::evaluate::{value_in_unit, SweepOracle};
use self::search::{Search, Settings};

/// The level the collapse probability is compared with unless `--level` says otherwise.
pub const DEFAULT_LEVEL: f64 = 0.5;

/// Seeds a point gets at a time unless `--seeds` says otherwise.
pub const DEFAULT_SEEDS: u64 = 20;

/// Batches a point gets at most: a point whose interval still holds the level after this
/// many is near the crossing, and the search moves on to bisect beside it.
pub const BATCHES_PER_POINT: u64 = 4;

/// Runs a case may spend unless `--max-runs` says otherwise.
pub const DEFAULT_MAX_RUNS: u64 = 1_000;

/// The tolerance unless `--tolerance` says otherwise: ±2 % of the range.
pub const DEFAULT_TOLERANCE: &str = "2%";

/// A boundary search that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum BoundaryError {
    /// A flag's value is not accepted.
    #[error("invalid {flag} {value}: {problem}; accepted: {accepted}")]
    Flag {
        /// The flag.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        problem: String,
        /// What is accepted.
        accepted: String,
    },
    /// A run gave no collapse verdict (it has no trigger, or is not on the call loop).
    #[error("a run gave no collapse verdict; accepted: a scenario with Poisson arrivals or a capacity server and a trigger (a spike, outage or degradation)")]
    NoVerdict,
    /// The sweep beneath refused a point.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// The scenario is invalid, or the work too large.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl BoundaryError {
    /// True when the user's input is at fault (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        match self {
            BoundaryError::Sweep(e) => e.is_bad_input(),
            _ => true,
        }
    }
}

/// A boundary search as the user asked for it, before validation.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundarySpec {
    /// The scenario (config file and flags); its `seed` is the master seed.
    pub base: ScenarioFile,
    /// `(axis, "LO..HI")`: the parameter searched over and its range.
    pub axis: (String, String),
    /// A second `(axis, "LO..HI")`: a phase diagram over both, run by
    /// [`plane::PlanePlan`] (a [`BoundaryPlan`] searches the first axis alone).
    pub second_axis: Option<(String, String)>,
    /// Lists of other sweep parameters (`strategy`, `budget`, ...), as a sweep takes them:
    /// each combination is a case searched on its own.
    pub lists: Vec<(String, String)>,
    /// Seeds a point gets at a time.
    pub seeds: u64,
    /// The collapse probability whose crossing is sought.
    pub level: f64,
    /// The interval's half-width to reach: `2%` of the range, or a value in the axis's unit.
    pub tolerance: String,
    /// Runs each case may spend at most.
    pub max_runs: u64,
    /// `Some(K)`: evaluate K evenly spaced points (the curve) instead of searching.
    pub curve: Option<u64>,
    /// Worker threads ([`crate::config::default_threads`] when `None`).
    pub threads: Option<usize>,
    /// Refuse searches whose requests estimate is larger.
    pub max_requests: u64,
    /// Run work past [`crate::config::WORK_THRESHOLD`] instead of refusing it.
    pub yes: bool,
    /// Also search each case started collapsed: the vulnerable band ([`band`]).
    pub band: bool,
}

impl Default for BoundarySpec {
    fn default() -> Self {
        BoundarySpec {
            base: ScenarioFile::default(),
            axis: (String::new(), String::new()),
            second_axis: None,
            lists: Vec::new(),
            seeds: DEFAULT_SEEDS,
            level: DEFAULT_LEVEL,
            tolerance: DEFAULT_TOLERANCE.to_string(),
            max_runs: DEFAULT_MAX_RUNS,
            curve: None,
            threads: None,
            max_requests: crate::config::DEFAULT_MAX_REQUESTS,
            yes: false,
            band: false,
        }
    }
}

/// One case: a value of each listed parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The strategy its runs use (resolved: a preset's own when the case names none).
    pub strategy: String,
    /// The other listed parameters and their values, in table order.
    pub with: Vec<(String, String)>,
    /// Every `(parameter, value)` laid over the base, strategy first.
    pairs: Vec<(String, String)>,
}

/// A validated boundary search. Build with [`BoundaryPlan::new`], run with [`BoundaryPlan::run`].
#[derive(Debug)]
pub struct BoundaryPlan {
    base: ScenarioFile,
    axis: &'static Parameter,
    cases: Vec<Case>,
    settings: Settings,
    curve: Option<u64>,
    threads: usize,
    max_requests: u64,
    verdict_rule: String,
    work: u128,
    /// Each case's settle at the range's low and high ends.
    settles: Vec<(SimDuration, SimDuration)>,
    /// With `--band`: each case's knock-over and its scenario started collapsed.
    bands: Option<Vec<(KnockOver, ScenarioFile)>>,
}

/// The numeric sweep parameters, comma-separated, for messages.
pub fn numeric_axes() -> String {
    PARAMETERS
        .iter()
        .filter(|p| is_numeric(p.kind))
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_numeric(kind: Kind) -> bool {
    matches!(kind, Kind::Whole | Kind::Duration | Kind::Decimal)
}

/// A numeric value in its integer unit.
fn units(value: &Value) -> u64 {
    match value {
        Value::Whole(n) | Value::Decimal(n) => *n,
        Value::Duration(d) => d.as_nanos(),
        _ => 0,
    }
}

/// One value of `axis` as written, in integer units.
fn one_value(axis: &'static Parameter, text: &str) -> Result<u64, SweepError> {
    let parsed = parse_axis(axis, text.trim())?;
    Ok(units(&parsed.value(0)))
}

/// The unit the output gives the axis's values in.
pub fn unit_of(axis: &Parameter) -> &'static str {
    match axis.kind {
        Kind::Duration => "s",
        _ if axis.column.ends_with("_per_s") => "per s",
        _ => "",
    }
}

impl Case {
    /// The case's name in the output: the strategy, then the other listed values.
    pub fn name(&self) -> String {
        let mut name = self.strategy.clone();
        for (k, v) in &self.with {
            name.push_str(&format!(", {k}={v}"));
        }
        name
    }
}

impl BoundaryPlan {
    /// The work estimate, in events: every case spending its `--max-runs` on its costlier end.
    pub fn work_estimate(&self) -> u128 {
        self.work
    }

    /// Runs the most any search may spend: every case's `--max-runs`, twice with `--band`.
    pub fn max_runs(&self) -> u64 {
        let searches = match self.bands {
            Some(_) => 2 * self.cases.len() as u64,
            None => self.cases.len() as u64,
        };
        self.settings.max_runs.saturating_mul(searches)
    }

    /// The cases searched, in order.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// Runs every case's search on `pool`; `progress` is told the runs finished so far.
    pub fn run(
        &self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Report, BoundaryError> {
        let done = AtomicU64::new(0);
        let mut results = Vec::new();
        for (i, case) in self.cases.iter().enumerate() {
            let search_over = |base: &ScenarioFile| {
                let oracle = SweepOracle {
                    base,
                    axis: self.axis,
                    fixed: &case.pairs,
                    pool,
                    threads: self.threads,
                    max_requests: self.max_requests,
                    progress,
                    done: &done,
                };
                match self.curve {
                    Some(k) => search::grid(&oracle, &self.settings, k),
                    None => search::search(&oracle, &self.settings),
                }
            };
            let mut result =
                CaseResult::new(case.clone(), search_over(&self.base)?, self.settings.level);
            result.settle = self.settles[i];
            if let Some((knock_over, file)) = self.bands.as_ref().map(|b| &b[i]) {
                let stays_down = search_over(file)?;
                result.band = Some(CaseBand::new(*knock_over, stays_down, self.settings.level));
            }
            results.push(result);
        }
        Ok(Report {
            axis: self.axis,
            level: self.settings.level,
            verdict_rule: self.verdict_rule.clone(),
            method: match self.curve {
                Some(k) => format!(
                    "curve: {k} evenly spaced points of {} seeds each",
                    self.settings.batch
                ),
                None => METHOD.to_string(),
            },
            seed_rule: seed_rule(&self.base),
            tolerance: self.settings.tolerance,
            range: self.settings.range,
            band_rule: self.bands.as_ref().map(|_| band::BAND_RULE.to_string()),
            results,
        })
    }
}

/// The search method, as the output names it.
pub const METHOD: &str = "noisy bisection with a sequential Wilson test at each probe \
(Karp & Kleinberg, Noisy binary search, SODA 2007): seeds are added to a point whose 95 % \
interval holds the level, then the gap beside it is bisected";

/// How a point's seeds derive, as the output states it.
fn seed_rule(base: &ScenarioFile) -> String {
    format!(
        "a point's runs are rows 0..seeds of `herd-sim sweep` with the same config, case and \
axis value (--AXIS VALUE --seeds N): seed = derive_seed({}, label), the label naming every \
parameter off its default and `replicate=r`; the sweep's stuck column is the verdict, and a \
row replays as a plain run with --seed SEED",
        base.seed.unwrap_or(DEFAULT_SEED)
    )
}

/// One case's result: its search, and the boundary drawn from it.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    /// The case.
    pub case: Case,
    /// The search's points and stop.
    pub search: Search,
    /// Where the isotonic fit crosses the level, in integer units (`None`: it never does).
    pub boundary: Option<f64>,
    /// The case's settle at the range's low and high ends.
    pub settle: (SimDuration, SimDuration),
    /// With `--band`: the search started collapsed.
    pub band: Option<CaseBand>,
}

impl CaseResult {
    fn new(case: Case, search: Search, level: f64) -> CaseResult {
        let boundary = match search.stop {
            search::Stop::NoCrossing => None,
            _ => curve::crossing(&search.points, level, search.rising),
        };
        CaseResult {
            case,
            search,
            boundary,
            settle: (SimDuration::ZERO, SimDuration::ZERO),
            band: None,
        }
    }
}

/// What a boundary search found, for [`export`].
#[derive(Clone, Debug)]
pub struct Report {
    /// The axis.
    pub axis: &'static Parameter,
    /// The level.
    pub level: f64,
    /// The collapse rule in words.
    pub verdict_rule: String,
    /// The search method in words.
    pub method: String,
    /// How each point's seeds derive.
    pub seed_rule: String,
    /// The tolerance, in integer units.
    pub tolerance: u64,
    /// The range searched, in integer units.
    pub range: (u64, u64),
    /// With `--band`: how its runs start collapsed, and the floor ([`band::BAND_RULE`]).
    pub band_rule: Option<String>,
    /// One result a case.
    pub results: Vec<CaseResult>,
}

impl Report {
    /// `units` of the axis in the output's unit (seconds, calls per second, ...).
    pub fn in_unit(&self, units: f64) -> f64 {
        value_in_unit(self.axis.kind, units)
    }
}
