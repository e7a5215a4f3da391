//! The command line (part of the binary, not the library): clap definitions, and the one
//! function that turns flags into the library's [`ScenarioFile`] so they can be laid over a
//! config file. Parsers here only check what the user typed; ranges and relations between
//! fields are checked once, by [`ScenarioFile::validate`].

mod boundary;
mod boundary_outputs;
mod browser;
mod commands;
mod control;
mod errors;
mod fixture;
pub mod html;
mod lint;
pub mod outputs;
mod plot;
mod preset;
mod report;
mod run;
mod sweep;
mod trace_policy;
mod tune;
mod values;

pub use boundary::BoundaryArgs;
pub use browser::BrowserArgs;
pub use commands::{boundary, lint, merge, sweep, tune};
pub use control::ControlArgs;
pub use errors::one_line;
pub use fixture::{FixtureArgs, FixtureFormat};
pub use lint::LintArgs;
pub use plot::PlotArgs;
pub use preset::{PresetArgs, PresetsArgs};
pub use report::{report, ReportArgs};
pub use run::RunArgs;
pub use sweep::{MergeArgs, SweepArgs};
pub use trace_policy::TracePolicyArgs;
pub use tune::{TuneArgs, TuneFormat};

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// The heading of the general options (configuration, output, charts, threads, limits): none,
/// so that clap lists them first, under "Options", with `--help` and `--version`.
pub const GENERAL: Option<&str> = None;

/// The heading of the scenario's own options (clients, backoff, server, work).
pub const SCENARIO: &str = "Scenario: clients, backoff, server";

/// The headings of the models' options: listed by `--help`, left out of `-h`'s summary.
const MODEL_HEADINGS: [&str; 4] = [
    "Rate limiters",
    "Overload: arrivals, capacity, timeouts",
    "Retry control",
    "Browser tabs",
];

const ABOUT: &str = "\
Simulate N clients retrying against a modelled server: how many requests land in each window, \
whether a server knocked down by a herd comes back, and what each retry policy costs.

Examples:
  herd-sim --clients 1000 --strategy all
  herd-sim --config configs/collapse-spike.toml --png output/collapse.png
  herd-sim sweep --strategy all --clients 100,1000,10000 --seeds 30 --aggregate";

const SHORT_AFTER: &str = "\
This is a summary. `herd-sim --help` lists every option, grouped: rate limiters, overload \
(arrivals, capacity, timeouts), retry control, browser tabs. Each subcommand has its own --help.";

const LONG_AFTER: &str = "\
Durations take a unit: 250ms, 1s, 1.5s, 2m. Exit codes: 0 success, 2 bad input (one `error:` \
line naming the flag, the value and what is accepted), 1 anything else.";

/// Simulate N clients retrying against a modelled server, and count what lands in each window.
#[derive(Debug, Parser)]
#[command(
    name = "herd-sim",
    version,
    about = ABOUT,
    long_about = None,
    after_help = SHORT_AFTER,
    after_long_help = LONG_AFTER,
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

/// The command line as clap sees it: [`Cli`], with the models' options kept out of `-h`.
pub fn command() -> clap::Command {
    Cli::command()
        .mut_args(|arg| {
            let model = arg
                .get_help_heading()
                .is_some_and(|heading| MODEL_HEADINGS.contains(&heading));
            let hidden = arg.is_hide_short_help_set();
            arg.hide_short_help(model || hidden)
        })
        .mut_subcommand("lint", lint_formats)
}

/// `lint` takes a plain run's flags, but writes its findings: as text or JSON, never one CSV
/// row per strategy.
fn lint_formats(lint: clap::Command) -> clap::Command {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    use clap::ValueEnum;
    lint.mut_arg("format", |arg| {
        arg.value_parser(
            PossibleValuesParser::new([
                PossibleValue::new("table").help("A line a finding, then their count"),
                PossibleValue::new("json").help("JSON object with a `findings` array"),
            ])
            .map(|name| {
                values::FormatArg::from_str(&name, false).unwrap_or(values::FormatArg::Table)
            }),
        )
    })
}

/// Parses the command line. `--help` and `--version` print as clap prints them; every other
/// clap error becomes the project's one `error:` line ([`one_line`]) and exit code 2.
pub fn parse() -> Cli {
    let parsed = command().try_get_matches().and_then(|mut matches| {
        refuse_chart_options_without_a_chart(&matches);
        Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command()))
    });
    match parsed {
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

/// `--chart-scale` and `--chart-size` shape the chart `--png`/`--svg` draw: given to a plain
/// run without either, they would be ignored, so they are refused in one line (exit 2). `lint`
/// takes a plain run's flags but draws no chart and runs its own probes, so it refuses them
/// and `--engine` too (its other ignored flags are refused where it starts).
fn refuse_chart_options_without_a_chart(matches: &clap::ArgMatches) {
    let (matches, ignored, accepted) = match matches.subcommand() {
        None => (
            matches,
            &[
                ("chart_scale", "--chart-scale"),
                ("chart_size", "--chart-size"),
            ][..],
            "accepted with --png or --svg (it shapes the chart they draw)",
        ),
        Some(("lint", lint)) => (
            lint,
            &[
                ("chart_scale", "--chart-scale"),
                ("chart_size", "--chart-size"),
                ("engine", "--engine"),
            ][..],
            commands::LINT_IGNORES,
        ),
        Some(_) => return,
    };
    if ["png", "svg"].iter().any(|a| matches.contains_id(a)) {
        return;
    }
    for &(id, flag) in ignored {
        if matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            let value = matches
                .get_raw(id)
                .into_iter()
                .flatten()
                .map(|v| v.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(",");
            eprintln!("error: invalid {flag}: {value}; {accepted}");
            std::process::exit(2)
        }
    }
}

/// Subcommands beside the plain run. Each later capability (sweep, plot, fixture) adds one arm.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play scripted retry scenarios (JSON) through the policy code; --check tests `expect`
    ///
    /// Each scenario plays through the simulator's own policy code; --check compares each
    /// with its `expect` block.
    ///
    /// Example: herd-sim fixture configs/scenarios.json --check
    Fixture(FixtureArgs),

    /// The policy report: scenarios × policies against their bands, as Markdown.
    ///
    /// Example: herd-sim report configs/policy-report.toml --check
    Report(ReportArgs),

    /// Chart a sweep's CSV: a line per --by value, mean over seeds with a min-max band.
    ///
    /// Example: herd-sim plot output/sweep.csv --x clients --y peak --by strategy --out output/peak.png
    Plot(PlotArgs),
    /// Run a grid of scenarios × seeds in parallel into CSV, one row per cell and seed.
    ///
    /// Example: herd-sim sweep --clients 100,1000,10000 --strategy all --seeds 30 --out output/sweep.csv
    Sweep(SweepArgs),
    /// List the production-client presets (`--preset NAME`) and what each sets.
    ///
    /// Example: herd-sim presets
    Presets(PresetsArgs),
    /// Join the shards of one sweep (`sweep --shard K/N`) into the file one machine writes.
    ///
    /// Example: herd-sim merge --out output/sweep.csv output/shards/
    Merge(MergeArgs),
    /// Print a policy's golden trace: each scripted attempt's delay, budget and decision.
    ///
    /// Example: herd-sim trace-policy --preset grpc --outcomes error*4,success
    TracePolicy(TracePolicyArgs),
    /// Find where a scenario tips over: the axis value at which the collapse probability
    /// crosses --level, with a 95 % interval, by an adaptive search over seeds.
    ///
    /// Example: herd-sim boundary --config configs/collapse-spike.toml --axis spike-rate --range 40..120
    Boundary(BoundaryArgs),
    /// Find a retry policy's footguns, each with its figure and a run that shows it.
    ///
    /// Example: herd-sim lint --preset aws-standard --deny error
    Lint(Box<LintArgs>),
    /// Recommend retry settings: the Pareto frontier of a tune file's objectives.
    ///
    /// Example: herd-sim tune --config configs/tune/grpc-throttling.toml
    Tune(TuneArgs),
}
