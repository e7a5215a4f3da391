//! Flags of `herd-sim boundary`: the axis and its range, the lists of cases (the sweep's
//! parameter flags), the search's settings and the outputs, turned into a [`BoundarySpec`].

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use herd_sim::boundary::export::Format;
use herd_sim::boundary::{
    BoundaryError, BoundarySpec, DEFAULT_LEVEL, DEFAULT_MAX_RUNS, DEFAULT_SEEDS, DEFAULT_TOLERANCE,
};
use herd_sim::chart::ChartSize;
use herd_sim::config::{ScenarioFile, DEFAULT_MAX_REQUESTS};

use super::sweep::GridArgs;
use super::values::*;

/// `boundary --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BoundaryFormat {
    /// The boundary of each case, then its points.
    Table,
    /// One JSON object: axis, level, verdict rule, and a result per case with its points.
    Json,
    /// One CSV row a point.
    Csv,
}

impl From<BoundaryFormat> for Format {
    fn from(value: BoundaryFormat) -> Format {
        match value {
            BoundaryFormat::Table => Format::Table,
            BoundaryFormat::Json => Format::Json,
            BoundaryFormat::Csv => Format::Csv,
        }
    }
}

/// Flags of `herd-sim boundary`.
#[derive(Debug, Args)]
pub struct BoundaryArgs {
    /// Config file (TOML, or JSON by extension): the scenario, with a trigger.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The numeric sweep parameter searched over (rate, spike-rate, timeout, retries, ...);
    /// twice, each with its --range, for a phase diagram over both.
    #[arg(long, value_name = "NAME", required = true)]
    pub axis: Vec<String>,

    /// The axis's range, LO..HI in its unit (rates per second, durations with a unit).
    #[arg(long, value_name = "LO..HI", required = true)]
    pub range: Vec<String>,

    /// Seeds a point gets at a time (a point gets at most 4 batches)
    #[arg(long, value_name = "N", value_parser = parse_whole, default_value_t = DEFAULT_SEEDS)]
    pub seeds: u64,

    /// Master seed every run's seed derives from, as in a sweep [default: 2015].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub seed: Option<u64>,

    /// The collapse probability whose crossing is sought, in (0, 1).
    #[arg(long, value_name = "P", value_parser = parse_number, default_value_t = DEFAULT_LEVEL, allow_hyphen_values = true)]
    pub level: f64,

    /// Stop once the boundary's 95 % interval is within ± this: a share of the range (2%) or
    /// a value in the axis's unit.
    #[arg(long, value_name = "T", default_value = DEFAULT_TOLERANCE)]
    pub tolerance: String,

    /// Runs each case may spend at most.
    #[arg(long, value_name = "N", value_parser = parse_whole, default_value_t = DEFAULT_MAX_RUNS)]
    pub max_runs: u64,

    /// Evaluate the whole curve at --points evenly spaced values instead of searching.
    #[arg(long)]
    pub curve: bool,

    /// Points of the curve (with --curve).
    #[arg(long, value_name = "K", value_parser = parse_whole, requires = "curve")]
    pub points: Option<u64>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = BoundaryFormat::Table)]
    pub format: BoundaryFormat,

    /// Output file, or `-` for stdout; written whole once the search ends.
    #[arg(long, value_name = "PATH", default_value = "-")]
    pub out: PathBuf,

    /// Also draw the collapse probability against the axis as a PNG (`-`: stdout).
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,

    /// Also draw the same chart as an SVG file (`-`: stdout).
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,

    /// One self-contained HTML page of the search (`-`: stdout): the question, each case's
    /// boundary and points (two axes: its cells and contour), the probability curve (the
    /// phase diagram) as inline SVG, the command and config.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,

    /// Picture size of --png/--svg in pixels, WIDTHxHEIGHT [default: 1000x620].
    #[arg(long, value_name = "WxH", value_parser = parse_chart_size)]
    pub chart_size: Option<ChartSize>,

    /// Worker threads, 1 to 1024 [default: all cores]. The output never depends on it.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Refuse searches whose requests estimate is larger [default: 10000000000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_requests: Option<u64>,

    /// Refuse runs estimated to need more memory than this, e.g. 512MiB [default: 16GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,

    /// Run a search whose work is estimated past 3000000000 events instead of refusing it.
    #[arg(long)]
    pub yes: bool,

    /// No progress bar (it is hidden anyway when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// The vulnerable band (--axis rate): also find the lowest load at which a run started
    /// collapsed (its triggers replaced by a knock-over spike) stays down.
    #[arg(long)]
    pub band: bool,

    /// Lists of other sweep parameters: each combination is a case with its own boundary.
    #[command(flatten)]
    pub grid: GridArgs,
}

/// The default number of points of `--curve`.
pub const DEFAULT_POINTS: u64 = 11;

impl BoundaryArgs {
    /// The search these flags ask for.
    pub fn spec(&self) -> Result<BoundarySpec, BoundaryError> {
        let file = match &self.config {
            Some(path) => ScenarioFile::read(path)?,
            None => ScenarioFile::default(),
        };
        let flags = ScenarioFile {
            seed: self.seed,
            memory_limit: self.memory_limit,
            ..Default::default()
        };
        Ok(BoundarySpec {
            base: file.overridden_by(flags),
            axis: self.axes()?[0].clone(),
            second_axis: self.axes()?.get(1).cloned(),
            lists: self.grid.values.clone(),
            seeds: self.seeds,
            level: self.level,
            tolerance: self.tolerance.clone(),
            max_runs: self.max_runs,
            curve: self.curve.then(|| self.points.unwrap_or(DEFAULT_POINTS)),
            threads: self.threads.map(|n| n as usize),
            max_requests: self.max_requests.unwrap_or(DEFAULT_MAX_REQUESTS),
            yes: self.yes,
            band: self.band,
        })
    }
}
