//! `herd-sim report`: the policy report a repository commits. A report file
//! ([`file::ReportFile`]) names scenarios × policies and the band each metric must stay in;
//! [`run`] plays every pair through the sweep (one [`Plan`] a pair, its seeds and its rows,
//! on the sweep's thread pool: no runner of its own); [`markdown`] writes the report, byte
//! for byte the same for any thread count, and reads a committed one back; [`charts`] draws
//! a chart a scenario beside it; [`check`] compares a fresh run with the committed report
//! and the bands.
//!
//! A figure is the mean of the metric over the cell's seeds (with their min and max beside
//! it); a band is checked against the mean.

pub mod charts;
pub mod check;
pub mod file;
pub mod markdown;

use rayon::prelude::*;

use crate::config::ConfigError;
use crate::sweep::{Layout, Plan, SweepError, SweepSpec};

pub use file::{BandEntry, Expected, ReportFile};

/// What can go wrong making or checking a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A key's value is outside what is accepted (said as a fixture file's are:
    /// `FILE: invalid KEY: VALUE; accepted: ...`).
    #[error("{path}: invalid {field}: {value}; {accepted}")]
    Invalid {
        /// The report file.
        path: String,
        /// The key, as written (`bands[0].band`).
        field: String,
        /// The value, as given.
        value: String,
        /// What would be accepted.
        accepted: String,
    },
    /// A scenario or config file problem.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A pair's sweep could not be planned or run.
    #[error(transparent)]
    Sweep(#[from] SweepError),
}

impl ReportError {
    /// True for bad input (exit 2), false for a failure to run or write.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ReportError::Sweep(e) => e.is_bad_input(),
            _ => true,
        }
    }
}

/// One metric of one scenario × policy pair over its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// Scenario id.
    pub scenario: String,
    /// Policy id.
    pub policy: String,
    /// Metric column.
    pub metric: String,
    /// Mean over the seeds.
    pub mean: f64,
    /// Smallest over the seeds.
    pub min: f64,
    /// Largest over the seeds.
    pub max: f64,
    /// The band it must stay in, if any.
    pub expected: Option<Expected>,
}

/// The seeds one pair ran.
#[derive(Clone, Debug, PartialEq)]
pub struct PairSeeds {
    /// Scenario id.
    pub scenario: String,
    /// Policy id.
    pub policy: String,
    /// The run seed of each replicate, in order.
    pub seeds: Vec<u64>,
}

/// A report: its figures (every banded metric of every pair, in file order: scenario,
/// policy, band) and what reproduces them.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyReport {
    /// The file's title.
    pub title: String,
    /// The report file's name, without its folder: every path the report writes is relative
    /// to that folder (as the file's own `config` paths are), so the report's bytes do not
    /// depend on the directory it was run from or on how its path was typed.
    pub file: String,
    /// Seeds a cell.
    pub seeds: u64,
    /// The figures.
    pub figures: Vec<Figure>,
    /// The seeds of each pair.
    pub pair_seeds: Vec<PairSeeds>,
    /// Scenario ids and the config files they read.
    pub scenarios: Vec<(String, Option<String>)>,
    /// Policy ids and their keys.
    pub policies: Vec<(String, Vec<String>)>,
    /// The charts the report links, one a scenario a band names.
    pub charts: Vec<charts::ReportChart>,
}

/// The plans of every pair, validated, before anything runs: a scenario the sweep refuses,
/// a band naming a metric no pair reports, or work past [`crate::config::WORK_THRESHOLD`]
/// summed over the pairs without `yes` is refused here. With `yes`, the note to print
/// about the work comes back beside the plans.
pub fn plan(
    file: &ReportFile,
    threads: Option<usize>,
    yes: bool,
) -> Result<(Vec<Plan>, Option<String>), ReportError> {
    let path = file.path.display().to_string();
    let mut plans = Vec::new();
    for scenario in &file.scenarios {
        for policy in &file.policies {
            let base = scenario.file.clone().overridden_by(policy.keys.clone());
            let plan = Plan::new(SweepSpec {
                base,
                grid: Vec::new(),
                seeds: file.seeds,
                layout: Layout::Tidy,
                threads,
                yes,
                ..SweepSpec::default()
            })?;
            if plan.cells() != 1 {
                return Err(ReportError::Invalid {
                    path: path.clone(),
                    field: format!("policies[{}]", policy.id),
                    value: format!("{} strategies over scenario {}", plan.cells(), scenario.id),
                    accepted: "accepted: one strategy a policy (strategy = \"full-jitter\")".into(),
                });
            }
            plans.push(plan);
        }
    }
    let header = plans[0].header();
    let metrics = metric_columns(&header);
    for (i, band) in file.bands.iter().enumerate() {
        if !plans
            .iter()
            .any(|p| metric_columns(&p.header()).contains(&band.metric.as_str()))
        {
            return Err(ReportError::Invalid {
                path: path.clone(),
                field: format!("bands[{i}].metric"),
                value: band.metric.clone(),
                accepted: format!(
                    "accepted: a metric these runs report: {}",
                    metrics.join(", ")
                ),
            });
        }
    }
    let work = plans
        .iter()
        .fold(0u128, |sum, p| sum.saturating_add(p.work_estimate()));
    let note = crate::config::check_work(work, "report", yes)?;
    Ok((plans, note))
}

/// The metric columns of a sweep header: those after `seed`.
fn metric_columns(header: &[String]) -> Vec<&str> {
    let at = header
        .iter()
        .position(|h| h == "seed")
        .map_or(header.len(), |i| i + 1);
    header[at..].iter().map(String::as_str).collect()
}

/// Runs every pair's rows on `pool` and gathers the report.
pub fn run(
    file: &ReportFile,
    plans: &[Plan],
    pool: &rayon::ThreadPool,
) -> Result<PolicyReport, ReportError> {
    let jobs: Vec<(usize, u64)> = plans
        .iter()
        .enumerate()
        .flat_map(|(p, plan)| (0..plan.rows()).map(move |r| (p, r)))
        .collect();
    let rows: Vec<Vec<String>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(p, r)| plans[p].row(r))
            .collect::<Result<_, _>>()
    })?;
    let mut figures = Vec::new();
    let mut pair_seeds = Vec::new();
    let mut next = 0;
    for (p, plan) in plans.iter().enumerate() {
        let scenario = &file.scenarios[p / file.policies.len()];
        let policy = &file.policies[p % file.policies.len()];
        let header = plan.header();
        let seed_at = header.iter().position(|h| h == "seed").unwrap_or(0);
        let mine = &rows[next..next + plan.rows() as usize];
        next += plan.rows() as usize;
        pair_seeds.push(PairSeeds {
            scenario: scenario.id.clone(),
            policy: policy.id.clone(),
            seeds: mine
                .iter()
                .filter_map(|r| r[seed_at].parse().ok())
                .collect(),
        });
        for band in &file.bands {
            let applies = band.scenario.as_ref().is_none_or(|s| *s == scenario.id)
                && band.policy.as_ref().is_none_or(|q| *q == policy.id);
            let Some(column) = header.iter().position(|h| *h == band.metric) else {
                continue;
            };
            if !applies
                || figures.iter().any(|f: &Figure| {
                    f.scenario == scenario.id && f.policy == policy.id && f.metric == band.metric
                })
            {
                continue;
            }
            let values: Vec<f64> = mine.iter().filter_map(|r| r[column].parse().ok()).collect();
            if values.is_empty() {
                continue;
            }
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            figures.push(Figure {
                scenario: scenario.id.clone(),
                policy: policy.id.clone(),
                metric: band.metric.clone(),
                mean,
                min: values.iter().copied().fold(f64::INFINITY, f64::min),
                max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                expected: Some(band.expected),
            });
        }
    }
    Ok(PolicyReport {
        title: file.title.clone(),
        file: file.path.file_name().map_or_else(
            || file.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        seeds: file.seeds,
        figures,
        pair_seeds,
        scenarios: file
            .scenarios
            .iter()
            .map(|s| (s.id.clone(), s.config.clone()))
            .collect(),
        policies: file
            .policies
            .iter()
            .map(|p| (p.id.clone(), p.written.clone()))
            .collect(),
        charts: charts::charts(file),
    })
}
