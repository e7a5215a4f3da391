//! The command line (part of the binary, not the library): clap definitions, and the one
//! function that turns flags into the library's [`ScenarioFile`] so they can be laid over a
//! config file. Parsers here only check what the user typed; ranges and relations between
//! fields are checked once, by [`ScenarioFile::validate`].

use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use herd_sim::chart::{ChartSize, CountScale, PlotSpec};
use herd_sim::config::{
    Bound, DistText, HeadersVisible, IntervalText, Intervals, LatencyText, RateText, ScenarioFile,
    ServerFile, StrategyList, DEFAULT_MAX_REQUESTS,
};
use herd_sim::engine::browser::ClockSkew;
use herd_sim::engine::{NetworkDelay, Path};
use herd_sim::policy::Strategy;
use herd_sim::report::Format;
use herd_sim::sweep::file::SweepFile;
use herd_sim::sweep::parameter::PARAMETERS;
use herd_sim::sweep::shard::{Shard, ShardChoice};
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

/// Parses the command line. `--help` and `--version` print as clap prints them; every other
/// clap error becomes the project's one `error:` line ([`one_line`]) and exit code 2.
pub fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => match error.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => error.exit(),
            _ => {
                eprintln!("error: {}", one_line(&error));
                std::process::exit(2)
            }
        },
    }
}

/// A clap error as one line, without the `error: ` prefix: the offending flag and value, what
/// is accepted, and a hint (clap's suggestion, or where to look).
pub fn one_line(error: &clap::Error) -> String {
    let text = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        Some(ContextValue::StyledStrs(v)) => Some(
            v.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        Some(ContextValue::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    // `Usage: herd-sim sweep --resume` → `herd-sim sweep`: the command the user was typing.
    let usage = text(ContextKind::Usage).unwrap_or_default();
    let usage_line = usage
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("Usage:")
        .trim()
        .to_string();
    let command: Vec<&str> = usage_line
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect();
    let command = match command.is_empty() {
        true => "herd-sim".to_string(),
        false => command.join(" "),
    };
    let see_help = format!("see `{command} --help`");
    let arg = text(ContextKind::InvalidArg).map(|a| flag_name(&a));
    let arg_or = |fallback: &str| arg.clone().unwrap_or_else(|| fallback.to_string());
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    match error.kind() {
        ErrorKind::InvalidValue => {
            let accepted = text(ContextKind::ValidValue).unwrap_or_default();
            let hint = match text(ContextKind::SuggestedValue) {
                Some(s) => format!("did you mean '{s}'?"),
                None => see_help,
            };
            match value.is_empty() {
                true => {
                    let shown = text(ContextKind::InvalidArg).unwrap_or_default();
                    let accepted = match accepted.is_empty() {
                        true => shown
                            .split_whitespace()
                            .skip(1)
                            .collect::<Vec<_>>()
                            .join(" "),
                        false => accepted,
                    };
                    format!(
                        "a value is required for {}; accepted: {accepted} (hint: write it after the flag, e.g. {shown})",
                        arg_or("a flag")
                    )
                }
                false => format!(
                    "invalid value '{value}' for {}; accepted: {accepted} (hint: {hint})",
                    arg_or("a flag")
                ),
            }
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(error)
                .map(|e| e.to_string())
                .unwrap_or_else(|| "not accepted".into());
            format!("invalid value '{value}' for {}: {why}", arg_or("a flag"))
        }
        ErrorKind::UnknownArgument => {
            let given = arg_or("?");
            let owners = subcommands_with_flag(&given);
            let plain_run_flag = given.strip_prefix("--").is_some_and(|long| {
                Cli::command()
                    .get_arguments()
                    .any(|a| a.get_long() == Some(long))
            });
            let hint = if plain_run_flag && command != "herd-sim" {
                format!("{given} is an option of a plain run (`herd-sim {given} ...`), not of `{command}`")
            } else if !owners.is_empty() && command == "herd-sim" {
                let mut hint = format!(
                    "{given} belongs to `herd-sim {}`",
                    owners.join("` and `herd-sim ")
                );
                if let Some(s) = text(ContextKind::SuggestedArg) {
                    hint.push_str(&format!("; or did you mean '{s}'?"));
                }
                hint
            } else if let Some(s) = text(ContextKind::SuggestedArg) {
                format!("did you mean '{s}'?")
            } else if let Some(s) = text(ContextKind::Suggested) {
                s
            } else if given.starts_with('-') && given[1..].starts_with(|c: char| c.is_ascii_digit())
            {
                "a number is the value of a flag and follows it, e.g. --retries 1".into()
            } else if !given.starts_with('-') {
                "a value goes right after its flag; quote a value that holds spaces".into()
            } else {
                see_help
            };
            format!("unexpected argument '{given}' for `{command}`; accepted: the flags listed by `{command} --help` (hint: {hint})")
        }
        ErrorKind::InvalidSubcommand => {
            let given = text(ContextKind::InvalidSubcommand).unwrap_or_default();
            let accepted: Vec<String> = Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let hint = match text(ContextKind::SuggestedSubcommand).filter(|s| !s.is_empty()) {
                Some(s) => format!("did you mean '{s}'?"),
                None => see_help,
            };
            format!(
                "unknown subcommand '{given}'; accepted: {}, or flags of a plain run (hint: {hint})",
                accepted.join(", ")
            )
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = error
                .get(ContextKind::InvalidArg)
                .map(|v| match v {
                    ContextValue::Strings(v) => v.iter().map(|a| flag_name(a)).collect(),
                    other => vec![flag_name(&other.to_string())],
                })
                .unwrap_or_default();
            format!(
                "`{command}` needs {} (hint: usage: {usage_line})",
                missing.join(", ")
            )
        }
        ErrorKind::ArgumentConflict => {
            let prior = text(ContextKind::PriorArg).map(|a| flag_name(&a));
            match prior {
                Some(p) if Some(&p) == arg.as_ref() => {
                    format!("{p} is given twice; accepted: once (hint: keep the value you mean)")
                }
                Some(p) => format!(
                    "{} cannot be used with {p}; accepted: one of them (hint: {see_help})",
                    arg_or("this flag")
                ),
                None => format!(
                    "{} conflicts with another flag (hint: {see_help})",
                    arg_or("a flag")
                ),
            }
        }
        ErrorKind::TooManyValues | ErrorKind::WrongNumberOfValues | ErrorKind::TooFewValues => {
            format!(
                "wrong number of values for {}{}; (hint: {see_help})",
                arg_or("a flag"),
                match value.is_empty() {
                    true => String::new(),
                    false => format!(" at '{value}'"),
                }
            )
        }
        _ => generic_one_line(error, &see_help),
    }
}

/// The subcommands that accept the long flag `given` (`--seeds` → `sweep`).
fn subcommands_with_flag(given: &str) -> Vec<String> {
    let Some(long) = given.strip_prefix("--") else {
        return Vec::new();
    };
    Cli::command()
        .get_subcommands()
        .filter(|c| c.get_arguments().any(|a| a.get_long() == Some(long)))
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Any other clap error: its own lines (without usage and the `--help` footer) joined into one.
fn generic_one_line(error: &clap::Error, see_help: &str) -> String {
    let rendered = error.render().to_string();
    let mut parts: Vec<String> = Vec::new();
    for line in rendered.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.trim_start_matches("error:").trim().to_string());
        }
    }
    format!("{} (hint: {see_help})", parts.join("; "))
}

/// `--headers-visible <BOOL>` → `--headers-visible`; `<FILE>` → `FILE`.
fn flag_name(shown: &str) -> String {
    let first = shown.split_whitespace().next().unwrap_or(shown);
    let first = first.split('=').next().unwrap_or(first);
    first
        .trim_matches(['<', '>'])
        .trim_end_matches("...")
        .to_string()
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
    /// Join the shards of one sweep (`sweep --shard K/N`) into the file one machine writes.
    ///
    /// Example: herd-sim merge --out output/sweep.csv output/shards/
    Merge(MergeArgs),
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

    /// Worker threads, 1 to 1024 [default: all cores]. The output never depends on it.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Refuse sweeps whose requests estimate (an upper bound on the requests of every row) is
    /// larger [default: 10000000000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_requests: Option<u64>,

    /// No progress bar (it is hidden anyway when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Refuse grids of more cells than this [default: 10000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_cells: Option<u64>,

    /// Refuse cells estimated to need more memory than this, e.g. 512MiB [default: 16GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,

    /// Run only shard K of N (0-based) of the rows, balanced by estimated work, into --out
    /// with a record FILE.shard.json beside it for `herd-sim merge`; `auto` takes K and N from
    /// a Slurm job array or a Kubernetes Indexed Job.
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<String>,

    /// The number of shards, for --shard auto in a Kubernetes Indexed Job (its completions)
    /// [default: $HERD_SIM_SHARDS].
    #[arg(long, value_name = "N")]
    pub shards: Option<String>,
}

/// Flags of `herd-sim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard files (each with its FILE.shard.json beside it), their records, or folders of them.
    #[arg(value_name = "SHARDS")]
    pub inputs: Vec<PathBuf>,

    /// The merged CSV, written whole or not at all.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,

    /// One row per cell with statistics over the seeds, as `sweep --aggregate` writes.
    #[arg(long)]
    pub aggregate: bool,
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
                matches
                    .get_many::<String>(p.name)
                    .map(|words| (p.name.to_string(), grid_values(words.map(String::as_str))))
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
                    .help(match p.name {
                        "strategy" => strategy_grid_help(),
                        _ => p.help.to_string(),
                    })
                    // `--base 100ms..1s step 100ms` and `--strategy fixed full-jitter` need no
                    // quotes (see `grid_values`).
                    .num_args(1..),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// A sweep parameter's words as one value text: a stepped range (`100ms..1s step 100ms`) is
/// kept as written; other words are list items (`fixed full-jitter` = `fixed,full-jitter`).
fn grid_values<'a>(words: impl Iterator<Item = &'a str>) -> String {
    let words: Vec<&str> = words.collect();
    let separator = match words.contains(&"step") {
        true => " ",
        false => ",",
    };
    words.join(separator)
}

/// `sweep --help` for `--strategy`: the accepted names and the default.
fn strategy_grid_help() -> String {
    format!(
        "Strategies: a comma list (fixed,full-jitter), the same separated by spaces, or `all` \
         [default: full-jitter]; accepted: {}, all",
        Strategy::accepted_names()
    )
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
            max_requests: self.max_requests.unwrap_or(DEFAULT_MAX_REQUESTS),
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

    /// The shard to run (`--shard`, `--shards` and the scheduler's environment), if any.
    pub fn shard(&self) -> Result<Option<Shard>, SweepError> {
        let Some(text) = &self.shard else {
            return match &self.shards {
                Some(n) => Err(SweepError::Setting {
                    field: "--shards",
                    value: n.clone(),
                    accepted: "accepted: with --shard auto (or --shard K/N)".into(),
                }),
                None => Ok(None),
            };
        };
        let env = |name: &str| std::env::var(name).ok();
        ShardChoice::parse(text)?
            .resolve(self.shards.as_deref(), &env)
            .map(Some)
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

    /// Output picture: `.png` or `.svg` picks the format (none: PNG; others are refused) [default: output/<Y>.png].
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
          value_parser = ["down", "fixed-window", "sliding-window", "token-bucket", "occ", "capacity", "flaky"])]
    pub server: Option<String>,

    /// For `--server down`: the server serves from this time on.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub recover_at: Option<SimDuration>,

    #[command(flatten)]
    pub limiter: LimiterArgs,

    #[command(flatten)]
    pub overload: OverloadArgs,

    #[command(flatten)]
    pub control: ControlArgs,

    #[command(flatten)]
    pub browser: BrowserArgs,

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

    /// Also draw the per-window histograms, one panel per strategy, as a PNG file (`.png` or no extension).
    #[arg(long, value_name = "PATH")]
    pub png: Option<PathBuf>,

    /// Also draw the same chart as an SVG file (`.svg` or no extension).
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

    /// Worker threads, 1 to 1024 [default: all cores]. Results never depend on it.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Refuse runs whose requests estimate (an upper bound on the requests sent) is larger
    /// [default: 10000000000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_requests: Option<u64>,

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
    /// expose them), or the fraction of clients that can, e.g. 0.7 [default: true].
    #[arg(long, value_name = "BOOL|F", value_parser = parse_text::<HeadersVisible>)]
    pub headers_visible: Option<HeadersVisible>,

    /// Clients behind one address; the limiter keys on the address [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub clients_per_address: Option<u32>,

    /// Where in its second the run starts on the wall clock, below 1s [default: 0s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub epoch_phase: Option<SimDuration>,
}

/// Flags of the overload model: open-loop arrivals, the capacity server, triggers, client
/// timeouts and network delay, and the series.
#[derive(Debug, Args)]
#[command(next_help_heading = "Overload: arrivals, capacity, timeouts")]
pub struct OverloadArgs {
    /// When calls start: every client at t = 0, or Poisson streams [default: herd].
    #[arg(long, value_name = "KIND", value_parser = ["herd", "poisson"])]
    pub arrivals: Option<String>,

    /// Poisson: total call rate over all clients, e.g. 40/s, 2400/m, 10/h.
    #[arg(long, value_name = "RATE", value_parser = parse_text::<RateText>, allow_hyphen_values = true)]
    pub rate: Option<RateText>,

    /// Poisson: calls start in [0, DURATION), e.g. 80s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub duration: Option<SimDuration>,

    /// Poisson: the total rate is RATE during [FROM, TO), e.g. 20s..25s@80/s (repeatable).
    #[arg(long, value_name = "FROM..TO@RATE", value_parser = parse_text::<IntervalText>, allow_hyphen_values = true)]
    pub spike: Vec<IntervalText>,

    /// Capacity: requests in service at once, or `unlimited` [default: unlimited].
    #[arg(long, value_name = "N", value_parser = parse_text::<Bound>)]
    pub workers: Option<Bound>,

    /// Capacity: service time, e.g. 50ms, exp:50ms, uniform:40ms..60ms [default: 50ms].
    #[arg(long, value_name = "DIST", value_parser = parse_text::<DistText>, allow_hyphen_values = true)]
    pub service_time: Option<DistText>,

    /// Capacity: added to a request's service time per request in service when it starts [default: 0s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub slowdown: Option<SimDuration>,

    /// Capacity: requests waiting for a worker at most (more are shed), or `unlimited` [default: unlimited].
    #[arg(long, value_name = "N", value_parser = parse_text::<Bound>)]
    pub queue: Option<Bound>,

    /// Capacity: Retry-After sent with every shed.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub shed_retry_after: Option<SimDuration>,

    /// Capacity: which waiting request a freed worker takes [default: fifo].
    #[arg(long, value_name = "ORDER", value_parser = ["fifo", "lifo"])]
    pub queue_order: Option<String>,

    /// Capacity: drop waiting requests whose client gave up (otherwise they are still served).
    #[arg(long)]
    pub server_cancels: bool,

    /// Any server: requests arriving in [FROM, TO) are refused, e.g. 0s..20s (repeatable).
    #[arg(long, value_name = "FROM..TO", value_parser = parse_text::<IntervalText>, allow_hyphen_values = true)]
    pub outage: Vec<IntervalText>,

    /// Capacity: service capacity times FACTOR for requests starting in [FROM, TO), e.g. 30s..40s@0.5 (repeatable).
    #[arg(long, value_name = "FROM..TO@FACTOR", value_parser = parse_text::<IntervalText>, allow_hyphen_values = true)]
    pub degrade: Vec<IntervalText>,

    /// Client timeout per attempt: unanswered this long after sending, it is abandoned [default: none].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub timeout: Option<SimDuration>,

    /// Window of the overload time series [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub series_bin: Option<SimDuration>,

    /// Write the overload time series as CSV rows (strategy, window_start_s, ...) to PATH.
    #[arg(long, value_name = "PATH")]
    pub series_out: Option<PathBuf>,

    /// How long goodput must stay at 90 % of calls started to count as recovered [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub recovery_hold: Option<SimDuration>,
}

impl OverloadArgs {
    fn any_server_key(&self) -> bool {
        self.workers.is_some()
            || self.service_time.is_some()
            || self.slowdown.is_some()
            || self.queue.is_some()
            || self.shed_retry_after.is_some()
            || self.queue_order.is_some()
            || self.server_cancels
    }
}

fn intervals(list: &[IntervalText]) -> Option<Intervals> {
    (!list.is_empty()).then(|| Intervals(list.to_vec()))
}

fn parse_text<T: std::str::FromStr<Err = String>>(text: &str) -> Result<T, String> {
    text.parse()
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
        let o = &self.overload;
        let server = if self.server.is_some()
            || self.recover_at.is_some()
            || l.any()
            || o.any_server_key()
            || self.control.failure_rate.is_some()
        {
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
                workers: o.workers,
                service_time: o.service_time,
                slowdown: o.slowdown,
                queue: o.queue,
                shed_retry_after: o.shed_retry_after,
                queue_order: o.queue_order.clone(),
                server_cancels: o.server_cancels.then_some(true),
                failure_rate: self.control.failure_rate,
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
            arrivals: o.arrivals.clone(),
            rate: o.rate,
            duration: o.duration,
            spike: intervals(&o.spike),
            timeout: o.timeout,
            outage: intervals(&o.outage),
            degrade: intervals(&o.degrade),
            series_bin: o.series_bin,
            recovery_hold: o.recovery_hold,
            budget: self.control.budget.clone(),
            breaker: self.control.breaker.clone(),
            throttle: self.control.throttle.clone(),
            hidden: self.browser.hidden,
            visibility_switch: self.browser.visibility_switch,
            hidden_timers: self.browser.hidden_timers.clone(),
            when_hidden: self.browser.when_hidden.clone(),
            retry_after_format: self.browser.retry_after_format.clone(),
            clock_skew: self.browser.clock_skew,
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

/// The most worker threads accepted: far above any machine's cores, far below what makes
/// thread creation itself the work.
pub const MAX_THREADS: u32 = 1024;

fn parse_threads(text: &str) -> Result<u32, String> {
    match parse_whole(text)? {
        n @ 1..=1024 => Ok(n as u32),
        _ => Err(format!(
            "accepted: 1 to {MAX_THREADS} (the default is all cores)"
        )),
    }
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

/// Flags of retry control: the `flaky` server, and the budgets, breakers and throttles each
/// client process keeps (see `herd_sim::policy::control`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Retry control")]
pub struct ControlArgs {
    /// Flaky: probability that an attempt fails with a 503, independently, 0 to 1 [default: 0].
    #[arg(long, value_name = "X", value_parser = parse_number, allow_hyphen_values = true)]
    pub failure_rate: Option<f64>,

    /// Retry budget of each client process: none, token-bucket[:deposit=0.1,cost=1,capacity=5],
    /// grpc[:max_tokens=10,token_ratio=0.1],
    /// aws-standard[:capacity=500,cost=5,timeout_cost=10,success_increment=1],
    /// envoy[:percent=20,min_concurrency=3], finagle[:ttl=10s,min_per_s=10,percent=20]
    /// [default: none].
    #[arg(long, value_name = "NAME[:K=V,..]", allow_hyphen_values = true)]
    pub budget: Option<String>,

    /// Circuit breaker of each client process: none, retries[:ratio=0.1,window=all] (retries
    /// stop while failed attempts / calls exceed the ratio), or
    /// calls[:ratio=0.5,window=10s,min_calls=20,open=5s] (closed, open, half-open)
    /// [default: none].
    #[arg(long, value_name = "NAME[:K=V,..]", allow_hyphen_values = true)]
    pub breaker: Option<String>,

    /// Adaptive throttle of each client process: none, or sre[:k=2,window=2m] (Google SRE
    /// client-side throttling: reject locally with probability
    /// max(0, (requests - k*accepts)/(requests + 1))) [default: none].
    #[arg(long, value_name = "NAME[:K=V,..]", allow_hyphen_values = true)]
    pub throttle: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    fn error_of(args: &str) -> String {
        let words = std::iter::once("herd-sim").chain(args.split_whitespace());
        let error = Cli::try_parse_from(words).expect_err(args);
        assert_eq!(error.exit_code(), 2, "{args}");
        one_line(&error)
    }

    #[test]
    fn clap_errors_render_as_one_line_naming_flag_value_and_what_is_accepted() {
        let cases = [
            (
                "--headers-visible yes",
                "invalid value 'yes' for --headers-visible: `yes` is not accepted; accepted: true, false, or the fraction",
            ),
            (
                "--clock-skew 2",
                "invalid value '2' for --clock-skew: `2` is not a clock skew; accepted: a signed duration",
            ),
            (
                "--visibility-switch -3m",
                "invalid value '-3m' for --visibility-switch: `-3m` is negative",
            ),
            ("-1", "unexpected argument '-1' for `herd-sim`"),
            ("--clinets 5", "(hint: did you mean '--clients'?)"),
            ("--seeds 3", "(hint: --seeds belongs to `herd-sim sweep`; or did you mean '--seed'?)"),
            ("--clients", "a value is required for --clients; accepted: <N> (hint: write it after the flag, e.g. --clients <N>)"),
            ("--clients abc", "invalid value 'abc' for --clients: `abc` is not a whole number"),
            ("--server dwn", "invalid value 'dwn' for --server; accepted: down, fixed-window, "),
            ("--server dwn", "(hint: did you mean 'down'?)"),
            ("--clients 1 --clients 2", "--clients is given twice"),
            ("plot", "`herd-sim plot` needs --x, --y, CSV (hint: usage: herd-sim plot"),
            ("sweep --frob", "unexpected argument '--frob' for `herd-sim sweep`"),
            ("fixture a b", "unexpected argument 'b' for `herd-sim fixture`"),
            (
                "fixture a.json --hidden 0.4",
                "unexpected argument '--hidden' for `herd-sim fixture`; accepted: the flags listed by `herd-sim fixture --help` (hint: --hidden is an option of a plain run",
            ),
        ];
        for (args, expected) in cases {
            let line = error_of(args);
            assert!(!line.contains('\n'), "{args}: {line}");
            assert!(line.contains(expected), "{args}: {line}");
        }
    }

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("16GiB"), Ok(16 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("1GB").is_err());
    }
}

/// Flags of the browser-tab model (issue 12): hidden tabs, throttled timers, pausing while
/// hidden, HTTP-date Retry-After and clock skew. With none of them a run is what it was.
#[derive(Debug, Args)]
#[command(next_help_heading = "Browser tabs")]
pub struct BrowserArgs {
    /// Fraction of clients that are hidden tabs at t = 0, 0 to 1 [default: 0].
    #[arg(long, value_name = "F", value_parser = parse_number, allow_hyphen_values = true)]
    pub hidden: Option<f64>,

    /// Mean of the exponential dwell between a tab's visibility flips, e.g. 3m [default: never].
    #[arg(long, value_name = "MEAN", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub visibility_switch: Option<SimDuration>,

    /// A hidden tab's timers: Chrome's 1 s alignment and 1 min after 5 min hidden (the retry
    /// loop a timer chain), the 1 s alignment only, or none [default: chrome].
    #[arg(long, value_name = "RULE", value_parser = ["chrome", "chrome-unchained", "none"])]
    pub hidden_timers: Option<String>,

    /// What a hidden tab does about a retry: send it, or wait until visible [default: retry].
    #[arg(long, value_name = "ACTION", value_parser = ["retry", "pause"])]
    pub when_hidden: Option<String>,

    /// How limiters write Retry-After: seconds, or an HTTP date read against the client's
    /// clock [default: seconds].
    #[arg(long, value_name = "FORMAT", value_parser = ["seconds", "http-date"])]
    pub retry_after_format: Option<String>,

    /// Each tab's clock minus the server's: 2s, -1s, uniform:-5s..5s, normal:0s,2s [default: 0s].
    #[arg(long, value_name = "DIST", value_parser = parse_text::<ClockSkew>, allow_hyphen_values = true)]
    pub clock_skew: Option<ClockSkew>,
}
