//! `herd-sim boundary`: where a scenario tips over. For each case (a strategy, and any other
//! sweep parameter given as a list), the value of one numeric sweep parameter (the axis) at
//! which the probability that a run collapses crosses a level, with a 95 % interval, found by
//! an adaptive search ([`search`]) over seeds rather than a grid.
//!
//! A layer above [`crate::sweep`]: every run is a row of a one-cell sweep ([`evaluate`]), with
//! the sweep's seeds, validation, memory check and thread pool, so a point replays as a sweep
//! or a plain run. This module validates what the user asked for once ([`BoundaryPlan::new`]:
//! the axis, the range, the level, every case at both ends of the range), then runs the
//! searches one case after another, each batch in parallel, and gathers a [`Report`]
//! ([`export`] writes it). No I/O and no clap here.

pub mod band;
pub mod curve;
pub mod evaluate;
pub mod export;
pub mod plane;
pub mod plane_export;
pub mod search;
pub mod wilson;

use std::sync::atomic::AtomicU64;

use crate::config::{
    check_requests, check_work, ConfigError, Scenario, ScenarioFile, DEFAULT_SEED,
};
use crate::sweep::parameter::{
    parameter, parse_axis, Kind, Parameter, Value, FROM_PRESET, PARAMETERS,
};
use crate::sweep::shard::ROW_OVERHEAD;
use crate::sweep::SweepError;
use crate::time::SimDuration;

use self::band::{CaseBand, KnockOver};
use self::evaluate::{value_in_unit, value_text, SweepOracle};
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
    /// Checks everything before any run: the axis, range, level, tolerance, seeds and budget,
    /// and every case's scenario at both ends of the range.
    pub fn new(spec: BoundarySpec) -> Result<BoundaryPlan, BoundaryError> {
        let (name, range) = &spec.axis;
        let axis = parameter(name)
            .filter(|p| is_numeric(p.kind))
            .ok_or_else(|| BoundaryError::Flag {
                flag: "--axis",
                value: name.clone(),
                problem: match parameter(name) {
                    Some(_) => "not a numeric sweep parameter".into(),
                    None => "not a sweep parameter".into(),
                },
                accepted: numeric_axes(),
            })?;
        let range_error = |problem: String| BoundaryError::Flag {
            flag: "--range",
            value: range.clone(),
            problem,
            accepted: format!(
                "LO..HI in the unit of --axis {}, LO below HI, e.g. {}",
                axis.name,
                match axis.kind {
                    Kind::Duration => "100ms..1s",
                    Kind::Whole => "1..20",
                    _ => "20..120",
                }
            ),
        };
        let Some((lo_text, hi_text)) = range.split_once("..") else {
            return Err(range_error("not a range".into()));
        };
        let parse_end = |text: &str| {
            one_value(axis, text).map_err(|e| {
                range_error(match e {
                    SweepError::Values { message, .. } => message,
                    other => other.to_string(),
                })
            })
        };
        let (lo, hi) = (parse_end(lo_text)?, parse_end(hi_text)?);
        if lo >= hi {
            return Err(range_error("LO is not below HI".into()));
        }
        if spec.band {
            band::check_axis(axis, &spec.lists)?;
        }
        if !(spec.level > 0.0 && spec.level < 1.0) {
            return Err(BoundaryError::Flag {
                flag: "--level",
                value: spec.level.to_string(),
                problem: "outside (0, 1)".into(),
                accepted: "a probability strictly between 0 and 1, e.g. 0.5".into(),
            });
        }
        if spec.seeds == 0 || spec.seeds > 10_000 {
            return Err(BoundaryError::Flag {
                flag: "--seeds",
                value: spec.seeds.to_string(),
                problem: "out of range".into(),
                accepted: "a whole number of seeds a point gets at a time, 1 to 10000".into(),
            });
        }
        let tolerance = parse_tolerance(axis, &spec.tolerance, hi - lo)?;
        let batches = match spec.curve {
            Some(k) if !(2..=1_000).contains(&k) => {
                return Err(BoundaryError::Flag {
                    flag: "--points",
                    value: k.to_string(),
                    problem: "out of range".into(),
                    accepted: "2 to 1000 points of the curve".into(),
                })
            }
            Some(k) => k,
            None => 2,
        };
        if spec.max_runs < batches * spec.seeds {
            return Err(BoundaryError::Flag {
                flag: "--max-runs",
                value: spec.max_runs.to_string(),
                problem: format!(
                    "fewer than the {} runs of the first {batches} points",
                    batches * spec.seeds
                ),
                accepted: format!("at least --seeds × {batches} = {}", batches * spec.seeds),
            });
        }
        let threads = spec
            .threads
            .unwrap_or_else(crate::config::default_threads)
            .max(1);
        let cases = cases(&spec.base, axis, &spec.lists)?;
        let mut work: u128 = 0;
        let mut requests: u128 = 0;
        let mut first_ends: Vec<Scenario> = Vec::new();
        let mut settles = Vec::new();
        let mut bands = Vec::new();
        for case in &cases {
            let mut per_run: u128 = 0;
            let mut at_ends: Vec<Scenario> = Vec::new();
            let ends = [lo, hi].map(|end| case_scenario(&spec.base, axis, case, end, threads));
            for (end, scenario) in [lo, hi].into_iter().zip(&ends) {
                let scenario = match scenario {
                    Ok(s) => s.clone(),
                    Err(problem) => {
                        // Refused at both ends: the scenario cannot take the axis at all.
                        let both = ends.iter().all(Result::is_err);
                        return Err(BoundaryError::Flag {
                            flag: if both { "--axis" } else { "--range" },
                            value: match both {
                                true => axis.name.to_string(),
                                false => format!("{range} (at {})", value_text(axis.kind, end)),
                            },
                            problem: problem.to_string(),
                            accepted: match both {
                                true => format!(
                                    "an axis this scenario reads: {}",
                                    axes_read(&spec.base, threads)
                                ),
                                false => "a range over which every case is a valid scenario".into(),
                            },
                        });
                    }
                };
                per_run = per_run.max(scenario.attempts_per_run());
                at_ends.push(scenario);
            }
            check_case(axis, case, &at_ends, (lo, hi))?;
            settles.push((at_ends[0].overload.settle, at_ends[1].overload.settle));
            let runs = u128::from(spec.max_runs);
            if spec.band {
                let (knock_over, file, band_run) =
                    band_of(&spec.base, axis, case, &at_ends[0], (lo, hi), threads)?;
                requests = requests.saturating_add(band_run.saturating_mul(runs));
                work = work.saturating_add((ROW_OVERHEAD + band_run).saturating_mul(runs));
                bands.push((knock_over, file));
            }
            if first_ends.is_empty() {
                first_ends = at_ends;
            }
            requests = requests.saturating_add(per_run.saturating_mul(runs));
            work = work.saturating_add((ROW_OVERHEAD + per_run).saturating_mul(runs));
        }
        let names: Vec<String> = cases.iter().map(Case::name).collect();
        let verdict_rule = verdict_rule_of(&first_ends, &names, &settles);
        check_requests(requests, spec.max_requests, "boundary search")?;
        check_work(work, "boundary search", spec.yes)?;
        // Each end and case validated as a one-cell sweep too (its memory check among them).
        let done = AtomicU64::new(0);
        let pool = crate::sweep::thread_pool(Some(1))?;
        for (i, case) in cases.iter().enumerate() {
            let bases = std::iter::once(&spec.base).chain(bands.get(i).map(|(_, file)| file));
            for base in bases {
                let oracle = SweepOracle {
                    base,
                    axis,
                    fixed: &case.pairs,
                    pool: &pool,
                    threads,
                    max_requests: spec.max_requests,
                    progress: &|_| {},
                    done: &done,
                };
                // A key one end leaves unread (--balancer at one server) is read at the
                // other; one neither reads, no point of the search does.
                let mut unread = Vec::new();
                for end in [lo, hi] {
                    unread.push(oracle.plan(end, 1)?.unread().to_vec());
                }
                if let Some(u) = crate::config::Unread::in_every(unread).first() {
                    return Err(u.refusal("no point of this search reads it").into());
                }
            }
        }
        Ok(BoundaryPlan {
            base: spec.base,
            axis,
            cases,
            settings: Settings {
                range: (lo, hi),
                level: spec.level,
                batch: spec.seeds,
                max_seeds: spec.seeds * BATCHES_PER_POINT,
                tolerance,
                max_runs: spec.max_runs,
            },
            curve: spec.curve,
            threads,
            max_requests: spec.max_requests,
            verdict_rule,
            work,
            settles,
            bands: spec.band.then_some(bands),
        })
    }

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

/// The collapse rule in words ([`crate::series::verdict_rule`]), from the validated
/// scenarios at the two ends of the range of the first case, and every case's settle at both
/// ends: the settle differs along the range when the axis changes it (retries, timeout, cap,
/// a trigger's end), and between cases when their lists do; the rule then names each.
fn verdict_rule_of(
    ends: &[Scenario],
    names: &[String],
    settles: &[(SimDuration, SimDuration)],
) -> String {
    let rule = ends[0].overload.verdict_rule();
    let at_ends = |(lo, hi): (SimDuration, SimDuration)| match lo == hi {
        true => lo.to_string(),
        false => format!("{lo} at the low end of the range and {hi} at the high end"),
    };
    match settles {
        [] => rule,
        [first, rest @ ..] if rest.iter().all(|s| s == first) => match first.0 == first.1 {
            true => rule,
            false => format!("{rule}; the settle is {}", at_ends(*first)),
        },
        _ => {
            let each: Vec<String> = names
                .iter()
                .zip(settles)
                .map(|(name, &s)| format!("{} for {name}", at_ends(s)))
                .collect();
            let rule = rule.replacen(
                &format!("for at least {} after", settles[0].0),
                "for at least the case's settle after",
                1,
            );
            format!("{rule}; the settle differs by case: {}", each.join("; "))
        }
    }
}

/// A case's knock-over, its scenario started collapsed, and the attempts a run of it sends at
/// most (at the costlier end of the range), each end validated.
fn band_of(
    base: &ScenarioFile,
    axis: &'static Parameter,
    case: &Case,
    at_lo: &Scenario,
    (lo, hi): (u64, u64),
    threads: usize,
) -> Result<(KnockOver, ScenarioFile, u128), BoundaryError> {
    let refuse = |problem: String| {
        BoundaryError::Flag {
        flag: "--band",
        value: format!("for {}", case.name()),
        problem,
        accepted: "a capacity server with --workers and a --timeout: one a herd's retries can hold past its capacity".into(),
    }
    };
    let knock_over = KnockOver::of(at_lo).map_err(refuse)?;
    let file = knock_over.scenario(base)?;
    let mut per_run: u128 = 0;
    for end in [lo, hi] {
        let scenario = case_scenario(&file, axis, case, end, threads).map_err(|e| {
            refuse(format!(
                "started collapsed ({}) at {}: {e}",
                knock_over.degrade(),
                value_text(axis.kind, end)
            ))
        })?;
        per_run = per_run.max(scenario.attempts_per_run());
    }
    Ok((knock_over, file, per_run))
}

/// The tolerance in integer units: `P%` of the range, or a value in the axis's unit.
fn parse_tolerance(axis: &'static Parameter, text: &str, range: u64) -> Result<u64, BoundaryError> {
    let error = |problem: String| BoundaryError::Flag {
        flag: "--tolerance",
        value: text.to_string(),
        problem,
        accepted: format!(
            "a percentage of the range (e.g. 2%) or a value in the unit of --axis {} (e.g. {})",
            axis.name,
            match axis.kind {
                Kind::Duration => "50ms",
                _ => "1",
            }
        ),
    };
    if let Some(percent) = text.trim().strip_suffix('%') {
        let share: f64 = percent
            .trim()
            .parse()
            .map_err(|_| error("not a number before %".into()))?;
        if !(share > 0.0 && share < 100.0) {
            return Err(error("outside (0%, 100%)".into()));
        }
        return Ok((range as f64 * share / 100.0).round() as u64);
    }
    one_value(axis, text).map_err(|e| {
        error(match e {
            SweepError::Values { message, .. } => message,
            other => other.to_string(),
        })
    })
}

/// The cases: every combination of the listed parameters' values (table order, the first
/// slowest), strategy always among them (the base's list when not given).
fn cases(
    base: &ScenarioFile,
    axis: &'static Parameter,
    lists: &[(String, String)],
) -> Result<Vec<Case>, BoundaryError> {
    let mut given: Vec<(&'static Parameter, Vec<Value>)> = Vec::new();
    for (name, text) in lists {
        let p = parameter(name).ok_or_else(|| SweepError::UnknownParameter {
            name: name.clone(),
            accepted: crate::sweep::parameter::parameter_names(),
        })?;
        if std::ptr::eq(p, axis) {
            return Err(BoundaryError::Flag {
                flag: "--axis",
                value: axis.name.to_string(),
                problem: format!("--{} is given a list as well", axis.name),
                accepted: "the axis's values from --range alone".into(),
            });
        }
        let parsed = parse_axis(p, text)?;
        given.push((p, (0..parsed.len()).map(|i| parsed.value(i)).collect()));
    }
    if !given.iter().any(|(p, _)| p.name == "strategy") {
        let values = match &base.strategy {
            Some(list) => list.0.iter().copied().map(Value::Strategy).collect(),
            None if base.preset.is_some() || given.iter().any(|(p, _)| p.name == "preset") => {
                vec![Value::Name(FROM_PRESET)]
            }
            None => ScenarioFile::default()
                .validate()?
                .strategies
                .into_iter()
                .map(Value::Strategy)
                .collect(),
        };
        given.push((&PARAMETERS[0], values));
    }
    given.sort_by_key(|(p, _)| PARAMETERS.iter().position(|q| std::ptr::eq(*p, q)));
    let mut cases: Vec<Vec<(&'static Parameter, Value)>> = vec![Vec::new()];
    for (p, values) in &given {
        cases = cases
            .into_iter()
            .flat_map(|case| {
                values.iter().map(move |v| {
                    let mut next = case.clone();
                    next.push((*p, v.clone()));
                    next
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for case in cases {
        let mut file = base.clone();
        for (p, v) in &case {
            (p.set)(&mut file, v);
        }
        let strategy = file.clone().validate()?.strategies[0].name().to_string();
        out.push(Case {
            strategy,
            with: case
                .iter()
                .filter(|(p, _)| p.name != "strategy")
                .map(|(p, v)| (p.name.to_string(), v.to_string()))
                .collect(),
            pairs: case
                .iter()
                .filter(|(_, v)| *v != Value::Name(FROM_PRESET))
                .map(|(p, v)| (p.name.to_string(), v.to_string()))
                .collect(),
        });
    }
    Ok(out)
}

/// The validated scenario of `case` with the axis at `value` (integer units).
fn case_scenario(
    base: &ScenarioFile,
    axis: &'static Parameter,
    case: &Case,
    value: u64,
    threads: usize,
) -> Result<Scenario, ConfigError> {
    let mut file = base.clone();
    for (name, text) in &case.pairs {
        if let Some(p) = parameter(name) {
            if let Ok(parsed) = parse_axis(p, text) {
                (p.set)(&mut file, &parsed.value(0));
            }
        }
    }
    let text = value_text(axis.kind, value);
    if let Ok(parsed) = parse_axis(axis, &text) {
        (axis.set)(&mut file, &parsed.value(0));
    }
    file.validate_without_budget_on(Some(threads))
}

/// The numeric parameters that apply to the scenario of `base` (their value is not empty).
fn axes_read(base: &ScenarioFile, threads: usize) -> String {
    match base.clone().validate_without_budget_on(Some(threads)) {
        Ok(scenario) => PARAMETERS
            .iter()
            .filter(|p| is_numeric(p.kind) && !(p.get)(&scenario).is_empty())
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => numeric_axes(),
    }
}

/// Refuses a case no run of which can give a verdict, or that the axis does not change.
fn check_case(
    axis: &'static Parameter,
    case: &Case,
    at_ends: &[Scenario],
    (lo, hi): (u64, u64),
) -> Result<(), BoundaryError> {
    let scenario = &at_ends[0];
    if !scenario.run_spec(scenario.strategies[0]).uses_call_loop() {
        return Err(BoundaryError::Flag {
            flag: "--config",
            value: "(its scenario)".into(),
            problem: format!(
                "a herd against a {} server, which no retry storm can keep down",
                scenario.server.name()
            ),
            accepted: "a call-loop scenario (a capacity or flaky server, or Poisson arrivals) with a trigger: a spike, outage or degradation".into(),
        });
    }
    if at_ends.iter().any(|s| s.overload.trigger_end().is_none()) {
        return Err(BoundaryError::Flag {
            flag: "--axis",
            value: axis.name.to_string(),
            problem: "the scenario has no trigger (spike, outage or degradation) after which a run could stay collapsed".into(),
            accepted: "a scenario with --spike, --outage or --degrade, or --axis outage (which adds one)".into(),
        });
    }
    let (at_lo, at_hi) = ((axis.get)(&at_ends[0]), (axis.get)(&at_ends[1]));
    if at_lo == at_hi {
        let reads: Vec<&str> = PARAMETERS
            .iter()
            .filter(|p| is_numeric(p.kind) && !(p.get)(scenario).is_empty())
            .map(|p| p.name)
            .collect();
        return Err(BoundaryError::Flag {
            flag: "--axis",
            value: axis.name.to_string(),
            problem: match at_lo.is_empty() {
                // A trigger axis without its trigger (spike-rate without a spike), say.
                true => format!(
                    "the scenario of {} has nothing it sets ({})",
                    case.strategy, axis.help
                ),
                false => format!(
                    "it leaves the scenario of {} unchanged (the same at {} and {})",
                    case.strategy,
                    value_text(axis.kind, lo),
                    value_text(axis.kind, hi)
                ),
            },
            accepted: format!("an axis this scenario reads: {}", reads.join(", ")),
        });
    }
    Ok(())
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
