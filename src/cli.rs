//! The command line (part of the binary, not the library): clap definitions, and the one
//! function that turns flags into the library's [`ScenarioFile`] so they can be laid over a
//! config file. Parsers here only check what the user typed; ranges and relations between
//! fields are checked once, by [`ScenarioFile::validate`].

use std::path::PathBuf;

use clap::{Arg, ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};

use herd_sim::chart::{ChartSize, CountScale, PlotSpec};
use herd_sim::config::{LatencyText, ScenarioFile, ServerFile, StrategyList};
use herd_sim::engine::{NetworkDelay, Path};
use herd_sim::policy::Strategy;
use herd_sim::report::Format;
use herd_sim::sweep::file::SweepFile;
use herd_sim::sweep::parameter::PARAMETERS;
use herd_sim::sweep::sink::{Destination, Start};
use herd_sim::sweep::{Layout, SweepError, SweepSpec, DEFAULT_MAX_CELLS};
use herd_sim::time::{parse_duration, SimDuration};

/// Simulate N clients retrying against a modelled server, and count what lands in each window.
///
/// Example: herd-sim --clients 1000 --strategy all
#[derive(Debug, Parser)]
#[command(
    name = "herd-sim",
    version,
    about,
    long_about = None,
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A subcommand; without one, a plain run of the scenario the flags describe.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The scenario of a plain run.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands beside the plain run. Each later capability (sweep, plot, fixture) adds one arm.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play scripted retry scenarios (JSON) through the simulator's policy code, and with
    /// --check compare each with its `expect` block.
    ///
    /// Example: herd-sim fixture configs/scenarios.json --check
    Fixture(FixtureArgs),

    /// Line chart of a CSV (a sweep's): one line per --by value, mean over seeds with a min-max band.
    ///
    /// Example: herd-sim plot output/sweep.csv --x clients --y peak --by strategy --out output/peak.png
    Plot(PlotArgs),
    /// Run a grid of scenarios × seeds in parallel into CSV, one row per cell and seed.
    ///
    /// Example: herd-sim sweep --clients 100,1000,10000 --strategy all --seeds 30 --out output/sweep.csv
    Sweep(SweepArgs),
}

/// Flags of `herd-sim sweep`. Every parameter flag (`--clients`, `--base`, …) takes a comma
/// list (`100,1000`), a range (`2..8`) or a stepped range (`100ms..1s step 100ms`) and
/// overrides the same key of the config file's `[sweep]` table.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Config file (TOML, or JSON by extension): scenario keys, and the grid in a `[sweep]` table.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The parameters to vary (one flag per entry of the library's parameter table).
    #[command(flatten)]
    pub grid: GridArgs,

    /// Seeds (replicates) per cell [default: 1, or `seeds` in `[sweep]`].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub seeds: Option<u64>,

    /// Master seed every row's seed derives from [default: 2015].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub seed: Option<u64>,

    /// Output CSV file, or `-` for stdout. Rows are written as they finish.
    #[arg(long, value_name = "PATH", default_value = "-")]
    pub out: PathBuf,

    /// One row per cell with mean, sd, min, max and 95 % interval of each metric over the seeds.
    #[arg(long)]
    pub aggregate: bool,

    /// Carry on an interrupted sweep into the same --out (run the same command again).
    #[arg(long)]
    pub resume: bool,

    /// Worker threads [default: all cores]. The output never depends on it.
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub threads: Option<u32>,

    /// No progress bar (it is hidden anyway when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Refuse grids of more cells than this [default: 10000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_cells: Option<u64>,

    /// Refuse cells estimated to need more memory than this, e.g. 512MiB [default: 16GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,
}

/// The parameter flags of a sweep, built from [`PARAMETERS`] so that a parameter added to the
/// library's table appears here without a line of clap.
#[derive(Debug, Default)]
pub struct GridArgs {
    /// `(parameter, values as typed)`, in table order.
    pub values: Vec<(String, String)>,
}

impl FromArgMatches for GridArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let values = PARAMETERS
            .iter()
            .filter_map(|p| {
                matches.get_many::<String>(p.name).map(|words| {
                    let words: Vec<&str> = words.map(String::as_str).collect();
                    (p.name.to_string(), words.join(" "))
                })
            })
            .collect();
        Ok(GridArgs { values })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for GridArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        PARAMETERS.iter().fold(command, |command, p| {
            command.arg(
                Arg::new(p.name)
                    .long(p.name)
                    .value_name("VALUES")
                    .help(p.help)
                    // `--base 100ms..1s step 100ms` needs no quotes: up to three words.
                    .num_args(1..=3),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl SweepArgs {
    /// The sweep these flags ask for, laid over the config file's.
    pub fn spec(&self) -> Result<(SweepSpec, Destination, Start), SweepError> {
        let file = match &self.config {
            Some(path) => SweepFile::read(path)?,
            None => SweepFile::default(),
        };
        let flags = ScenarioFile {
            seed: self.seed,
            memory_limit: self.memory_limit,
            ..Default::default()
        };
        let mut grid = file.grid;
        for (name, values) in &self.grid.values {
            grid.retain(|(n, _)| n != name);
            grid.push((name.clone(), values.clone()));
        }
        let spec = SweepSpec {
            base: file.base.overridden_by(flags),
            grid,
            seeds: self.seeds.or(file.seeds).unwrap_or(1),
            layout: if self.aggregate {
                Layout::Aggregate
            } else {
                Layout::Tidy
            },
            max_cells: self
                .max_cells
                .or(file.max_cells)
                .unwrap_or(DEFAULT_MAX_CELLS),
        };
        let destination = if self.out.as_os_str() == "-" {
            Destination::Stdout
        } else {
            Destination::File(self.out.clone())
        };
        let start = if self.resume {
            Start::Resume
        } else {
            Start::Fresh
        };
        Ok((spec, destination, start))
    }
}

/// Flags of `herd-sim fixture`.
#[derive(Debug, Args)]
pub struct FixtureArgs {
    /// Scenario file (JSON): `{"policy": {...}, "scenarios": [...]}`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = FixtureFormat::Table)]
    pub format: FixtureFormat,

    /// Compare every scenario with its `expect` block; print each mismatch and exit 1 on any.
    #[arg(long)]
    pub check: bool,
}

/// `herd-sim fixture --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FixtureFormat {
    /// Aligned text table.
    Table,
    /// JSON object with a `scenarios` array.
    Json,
}

/// Flags of `herd-sim plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The CSV file; its first line names the columns.
    #[arg(value_name = "CSV")]
    pub csv: PathBuf,

    /// Column for the horizontal axis (numeric).
    #[arg(long, value_name = "COLUMN")]
    pub x: String,

    /// Column for the vertical axis (numeric).
    #[arg(long, value_name = "COLUMN")]
    pub y: String,

    /// Column whose values each get a line [default: one line].
    #[arg(long, value_name = "COLUMN")]
    pub by: Option<String>,

    /// Keep only rows where COLUMN equals VALUE (numbers compare as numbers); repeatable.
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    pub filters: Vec<(String, String)>,

    /// Logarithmic horizontal axis (every x must be above 0).
    #[arg(long)]
    pub log_x: bool,

    /// Logarithmic vertical axis (every y must be above 0).
    #[arg(long)]
    pub log_y: bool,

    /// Output picture; `.svg` writes SVG, anything else PNG [default: output/<Y>.png].
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// Picture size in pixels, WIDTHxHEIGHT [default: 1000x620].
    #[arg(long, value_name = "WxH", value_parser = parse_chart_size)]
    pub chart_size: Option<ChartSize>,
}

impl PlotArgs {
    /// The library's description of the plot.
    pub fn spec(&self) -> PlotSpec {
        PlotSpec {
            x: self.x.clone(),
            y: self.y.clone(),
            by: self.by.clone(),
            filters: self.filters.clone(),
            log_x: self.log_x,
            log_y: self.log_y,
        }
    }

    /// Where the picture goes.
    pub fn out_path(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("output").join(format!("{}.png", self.y)))
    }
}

/// Flags of a plain run. Every scenario flag overrides the same key of `--config`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML, or JSON by extension); flags given here override its keys.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Number of clients, all failing together at t = 0 [default: 1000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub clients: Option<u64>,

    /// Strategy, a comma list, or `all` [default: full-jitter].
    #[arg(long, value_name = "NAMES", value_parser = parse_strategies,
          long_help = strategy_help())]
    pub strategy: Option<StrategyList>,

    /// Retries per client after the first failed request [default: 4].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub retries: Option<u32>,

    /// First backoff delay, e.g. 250ms, 1s, 1.5s [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub base: Option<SimDuration>,

    /// Largest delay of any strategy, header-reading ones included [default: 30s].
    #[arg(long, visible_alias = "max-delay", value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub cap: Option<SimDuration>,

    /// Growth of the backoff per retry, at least 1 [default: 2].
    #[arg(long, value_name = "X", value_parser = parse_number, allow_hyphen_values = true)]
    pub multiplier: Option<f64>,

    /// Histogram window width [default: 100ms].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub bin: Option<SimDuration>,

    /// Master seed; printed with every result [default: 2015].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub seed: Option<u64>,

    /// Server model [default: down]. `occ`: one row under optimistic concurrency control
    /// (Brooker 2015), each client reading then writing until one write succeeds.
    #[arg(long, value_name = "MODEL",
          value_parser = ["down", "fixed-window", "sliding-window", "token-bucket", "occ"])]
    pub server: Option<String>,

    /// For `--server down`: the server serves from this time on.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub recover_at: Option<SimDuration>,

    #[command(flatten)]
    pub limiter: LimiterArgs,

    /// Items each client fetches, one after another [default: 1].
    #[arg(long, value_name = "K", value_parser = parse_whole_u32)]
    pub items: Option<u32>,

    /// Items shared by all clients instead of --items (at least one per client).
    #[arg(long, value_name = "P", value_parser = parse_whole)]
    pub pool: Option<u64>,

    /// Round-trip latency of every request: a duration (110ms) or uniform:LOW..HIGH [default: 0s].
    #[arg(long, value_name = "LATENCY", value_parser = parse_latency, allow_hyphen_values = true)]
    pub latency: Option<LatencyText>,

    /// For `--server occ`: the delay of each message (read, its answer, write, its answer):
    /// 10ms, exp:MEAN, uniform:LOW..HIGH or normal:MEAN,SD folded at zero
    /// [default: normal:10ms,2ms].
    #[arg(long, value_name = "DELAY", value_parser = parse_network_delay, allow_hyphen_values = true)]
    pub network_delay: Option<NetworkDelay>,

    /// Runs per strategy, spreading the epoch phase over the second and deriving seeds;
    /// figures are then reported as mean and range [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub replicates: Option<u32>,

    /// Output format on stdout (or in --out).
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,

    /// Write the output to this file (whole or not at all) instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// Also draw the per-window histograms, one panel per strategy, as a PNG file.
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,

    /// Also draw the same chart as an SVG file.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,

    /// Count axis of --png/--svg: one linear axis for all panels, one log axis, or one per panel.
    #[arg(long, value_enum, default_value_t = ChartScaleArg::Shared)]
    pub chart_scale: ChartScaleArg,

    /// Picture size of --png/--svg, WIDTHxHEIGHT in pixels [default: 1200 wide, 152 per panel].
    #[arg(long, value_name = "WxH", value_parser = parse_chart_size)]
    pub chart_size: Option<ChartSize>,

    /// Simulation path: `auto` takes the fast independent-client path when the server allows.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,

    /// Worker threads [default: all cores]. Results never depend on it.
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub threads: Option<u32>,

    /// Refuse runs estimated to need more memory than this, e.g. 512MiB, 16GiB [default: 16GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,
}

/// Flags of the rate-limited servers (`--server fixed-window | sliding-window | token-bucket`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Rate limiters")]
pub struct LimiterArgs {
    /// Windows: requests admitted per window [default: 30].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub limit: Option<u32>,

    /// Windows: the window length [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub window: Option<SimDuration>,

    /// Fixed window: where a window starts [default: first-hit].
    #[arg(long, value_name = "START", value_parser = ["first-hit", "aligned"])]
    pub window_start: Option<String>,

    /// Fixed window: when the cache store drops an expired key [default: whole-second].
    #[arg(long, value_name = "STORE", value_parser = ["whole-second", "precise", "at-stamp"])]
    pub store: Option<String>,

    /// Token bucket: tokens it holds [default: 30].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub capacity: Option<u32>,

    /// Token bucket: tokens returned per --refill-interval [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub refill: Option<u32>,

    /// Token bucket: the refill interval [default: 2s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub refill_interval: Option<SimDuration>,

    /// Token bucket: continuously (GCRA) or in ticks (Envoy) [default: continuous].
    #[arg(long, value_name = "MODE", value_parser = ["continuous", "ticks"])]
    pub refill_mode: Option<String>,

    /// How Retry-After and X-RateLimit-Reset are written [default: whole-seconds].
    #[arg(long, value_name = "STYLE", value_parser = ["whole-seconds", "exact", "round-up"])]
    pub headers: Option<String>,

    /// Whether clients can read the headers (false: a cross-origin response that does not
    /// expose them) [default: true].
    #[arg(long, value_name = "BOOL", value_parser = clap::value_parser!(bool))]
    pub headers_visible: Option<bool>,

    /// Clients behind one address; the limiter keys on the address [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub clients_per_address: Option<u32>,

    /// Where in its second the run starts on the wall clock, below 1s [default: 0s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub epoch_phase: Option<SimDuration>,
}

impl LimiterArgs {
    fn any(&self) -> bool {
        self.limit.is_some()
            || self.window.is_some()
            || self.window_start.is_some()
            || self.store.is_some()
            || self.capacity.is_some()
            || self.refill.is_some()
            || self.refill_interval.is_some()
            || self.refill_mode.is_some()
            || self.headers.is_some()
            || self.headers_visible.is_some()
            || self.clients_per_address.is_some()
            || self.epoch_phase.is_some()
    }
}

/// `--format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned text table.
    Table,
    /// JSON object with a `results` array.
    Json,
    /// One CSV row per strategy.
    Csv,
}

impl From<FormatArg> for Format {
    fn from(value: FormatArg) -> Format {
        match value {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        }
    }
}

/// `--chart-scale` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ChartScaleArg {
    /// One linear count axis shared by every panel (walls and drizzle compare directly).
    Shared,
    /// One logarithmic count axis shared by every panel (small counts stay readable).
    Log,
    /// Each panel's linear axis fitted to its own peak.
    PerPanel,
}

impl From<ChartScaleArg> for CountScale {
    fn from(value: ChartScaleArg) -> CountScale {
        match value {
            ChartScaleArg::Shared => CountScale::Shared,
            ChartScaleArg::Log => CountScale::Log,
            ChartScaleArg::PerPanel => CountScale::PerPanel,
        }
    }
}

/// `--engine` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// Independent clients when the server allows, the event queue otherwise.
    Auto,
    /// Always the general event queue.
    EventQueue,
    /// Independent clients (refused for servers whose clients interact).
    Independent,
}

impl From<EngineArg> for Path {
    fn from(value: EngineArg) -> Path {
        match value {
            EngineArg::Auto => Path::Auto,
            EngineArg::EventQueue => Path::EventQueue,
            EngineArg::Independent => Path::Independent,
        }
    }
}

impl RunArgs {
    /// The scenario keys these flags set, to lay over a config file.
    pub fn scenario_overrides(&self) -> ScenarioFile {
        let l = &self.limiter;
        let server = if self.server.is_some() || self.recover_at.is_some() || l.any() {
            Some(ServerFile {
                model: self.server.clone(),
                recover_at: self.recover_at,
                limit: l.limit,
                window: l.window,
                window_start: l.window_start.clone(),
                store: l.store.clone(),
                capacity: l.capacity,
                refill: l.refill,
                refill_interval: l.refill_interval,
                refill_mode: l.refill_mode.clone(),
                headers: l.headers.clone(),
                headers_visible: l.headers_visible,
                clients_per_address: l.clients_per_address,
                epoch_phase: l.epoch_phase,
            })
        } else {
            None
        };
        ScenarioFile {
            sweep: None,
            clients: self.clients,
            strategy: self.strategy.clone(),
            retries: self.retries,
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            bin: self.bin,
            seed: self.seed,
            memory_limit: self.memory_limit,
            server,
            items: self.items,
            pool: self.pool,
            latency: self.latency,
            network_delay: self.network_delay,
            replicates: self.replicates,
            published: None,
        }
    }
}

fn strategy_help() -> String {
    format!(
        "Strategy, a comma list, or `all` [default: full-jitter].\n\nAccepted: {}, all.",
        Strategy::accepted_names()
    )
}

fn parse_strategies(text: &str) -> Result<StrategyList, String> {
    text.parse()
        .map_err(|e: herd_sim::policy::UnknownStrategy| e.to_string())
}

fn parse_chart_size(text: &str) -> Result<ChartSize, String> {
    text.parse().map_err(|e| match e {
        herd_sim::chart::ChartError::Invalid { accepted, .. } => accepted,
        other => other.to_string(),
    })
}

fn parse_filter(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((column, value)) if !column.trim().is_empty() => {
            Ok((column.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("`{text}` is not COLUMN=VALUE, e.g. base=1")),
    }
}

fn parse_duration_arg(text: &str) -> Result<SimDuration, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

fn parse_latency(text: &str) -> Result<LatencyText, String> {
    text.parse()
}

fn parse_network_delay(text: &str) -> Result<NetworkDelay, String> {
    text.parse()
}

fn parse_whole(text: &str) -> Result<u64, String> {
    let cleaned = text.trim().replace('_', "");
    cleaned
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number; write digits only, e.g. 1000"))
}

fn parse_whole_u32(text: &str) -> Result<u32, String> {
    let n = parse_whole(text)?;
    u32::try_from(n).map_err(|_| format!("`{text}` is too large; at most {}", u32::MAX))
}

fn parse_number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .map_err(|_| format!("`{text}` is not a number, e.g. 2 or 1.5"))
}

fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => {
            return Err(format!(
                "`{text}` is not a size; write e.g. 512MiB or 16GiB"
            ))
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("`{text}` is not a size; write e.g. 512MiB or 16GiB"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("16GiB"), Ok(16 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("1GB").is_err());
    }
}
