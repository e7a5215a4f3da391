//! Flags of `herd-sim tune`: the tune file, the output and the sweep's usual limits.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use herd_sim::chart::ChartSize;

use super::values::*;

/// `tune --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TuneFormat {
    /// The frontier as a table, the recommended point marked.
    Table,
    /// One JSON object: recommended, frontier, runs.
    Json,
}

/// Flags of `herd-sim tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The tune file (TOML): seeds, [[scenario]] tables, [params] in sweep syntax, [objectives]
    /// (constraints "METRIC@SCENARIO OP VALUE", minimize, maximize); see docs/advice.md.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,

    /// Output format.
    #[arg(long, value_enum, default_value_t = TuneFormat::Table)]
    pub format: TuneFormat,

    /// Output file, or `-` for stdout; written whole once the search ends.
    #[arg(long, value_name = "PATH", default_value = "-")]
    pub out: PathBuf,

    /// Also draw the frontier as a PNG scatter of two terms (--chart-x, --chart-y), the
    /// recommended point ringed, each frontier point's 95 % intervals as error bars.
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,

    /// The same chart as SVG.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,

    /// One self-contained HTML page of the search (`-`: stdout): the study, the recommendation
    /// and its rule, the frontier as a table and as inline SVG, the command, seeds and files.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,

    /// The chart's x axis: a term of the objectives or constraints (`amplification@flaky`,
    /// `retries`) [default: the first objective].
    #[arg(long, value_name = "TERM")]
    pub chart_x: Option<String>,

    /// The chart's y axis [default: the next objective, else the first constraint's term].
    #[arg(long, value_name = "TERM")]
    pub chart_y: Option<String>,

    /// The chart's size in pixels [default: 1000x700].
    #[arg(long, value_name = "WxH", value_parser = parse_chart_size)]
    pub chart_size: Option<ChartSize>,

    /// Worker threads, 1 to 1024 [default: all cores]. The output never depends on it.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Refuse a candidate's runs whose requests estimate is larger [default: 10000000000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_requests: Option<u64>,

    /// Run a search whose work is estimated past 3000000000 events instead of refusing it.
    #[arg(long)]
    pub yes: bool,

    /// No progress bar (it is hidden anyway when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
}
