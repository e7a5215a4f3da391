//! Flags of `herd-sim sweep` (the grid built from the library's parameter table) and
//! `herd-sim merge`.

use std::path::PathBuf;

use clap::{Arg, ArgMatches, Args, FromArgMatches};

use herd_sim::config::{
    describe_work, human_bytes, ScenarioFile, DEFAULT_MAX_REQUESTS, DEFAULT_MEMORY_LIMIT,
};
use herd_sim::policy::Strategy;
use herd_sim::sweep::file::SweepFile;
use herd_sim::sweep::parameter::PARAMETERS;
use herd_sim::sweep::shard::{self, Shard, ShardChoice, ShardPlan, MAX_SHARDS};
use herd_sim::sweep::sink::{Destination, Start};
use herd_sim::sweep::{Layout, Plan, SweepError, SweepSpec, DEFAULT_MAX_CELLS};

use super::values::*;

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

    /// One self-contained HTML page of the sweep, written once it ends (`-`: stdout, with
    /// --out FILE): the grid in words, the rows, line charts of the key metrics as inline SVG
    /// and the command and config that reproduce it; at most 10000 rows. docs/reports.md.
    #[arg(long, value_name = "PATH")]
    pub html: Option<PathBuf>,

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

    /// Run a sweep (or shard) whose work is estimated past 3000000000 events (about 5
    /// minutes) instead of refusing it; the estimate is printed on stderr.
    #[arg(long)]
    pub yes: bool,

    /// No progress bar (it is hidden anyway when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,

    /// Refuse grids of more cells than this [default: 10000].
    #[arg(long, value_name = "N", value_parser = parse_whole)]
    pub max_cells: Option<u64>,

    /// Refuse sweeps estimated to need more memory than this, a row in flight on each thread
    /// counted, e.g. 512MiB [default: 16GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,

    /// Run only shard K of N (0-based) of the rows, balanced by estimated work, into --out
    /// with a record FILE.shard.json beside it for `herd-sim merge`; `auto` takes K and N from
    /// a Slurm job array or a Kubernetes Indexed Job.
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<String>,

    /// The number of shards, for --shard auto in a Kubernetes Indexed Job (its completions)
    /// [default: $HERD_SIM_SHARDS]; with --plan alone, the shards to show the balance of.
    #[arg(long, value_name = "N")]
    pub shards: Option<String>,

    /// Validate and print the plan: cells, rows, the work and memory estimates and, with
    /// --shards N (or --shard), the rows and work of every shard. Runs and writes nothing;
    /// refuses (exit 2) what the sweep or any of its shards would refuse.
    #[arg(long)]
    pub plan: bool,
}

/// Flags of `herd-sim merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard files (each with its FILE.shard.json beside it), their records, or folders of them.
    #[arg(value_name = "SHARDS")]
    pub inputs: Vec<PathBuf>,

    /// The merged CSV, written whole or not at all (`-`: stdout; never one of the inputs).
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
                    .help_heading(GRID_HEADING)
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

/// The heading of the parameters a sweep varies, listed after the sweep's own options.
const GRID_HEADING: &str =
    "Parameters to vary (each a comma list, a range 2..8 or a stepped range)";

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
            threads: self.threads.map(|n| n as usize),
            yes: self.yes,
            keep_unread: false,
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

impl SweepArgs {
    /// `sweep --plan`: the sweep (and its shards, with `--shards N` or `--shard`) validated as
    /// its processes would validate it, described in lines of text. Nothing runs and nothing
    /// is opened, not even `--out`.
    pub fn plan_text(&self) -> Result<String, SweepError> {
        let (spec, destination, _) = self.spec()?;
        let limit = spec.base.memory_limit.unwrap_or(DEFAULT_MEMORY_LIMIT);
        let seeds = spec.seeds;
        let layout = spec.layout;
        // `--shard` as a shard's process takes it (`auto` from the scheduler), else `--shards`.
        let this = match self.shard {
            Some(_) => self.shard()?,
            None => None,
        };
        if let Some(shard) = this {
            shard::shard_output(shard, &destination)?;
        }
        let count = match (this, &self.shards) {
            (Some(shard), _) => Some(shard.count),
            (None, Some(text)) => Some(
                text.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (1..=MAX_SHARDS).contains(n))
                    .ok_or_else(|| SweepError::Setting {
                        field: "--shards",
                        value: text.clone(),
                        accepted: format!("accepted: a whole number from 1 to {MAX_SHARDS}"),
                    })?,
            ),
            (None, None) => None,
        };
        let (plan, shards) = match count {
            None => (Plan::new(spec)?, None),
            Some(count) => {
                let (plan, shards) = shard::plan_shards(spec, count)?;
                (plan, Some(shards))
            }
        };
        Ok(describe_plan(
            &plan,
            seeds,
            layout,
            limit,
            shards.as_deref(),
            this,
        ))
    }
}

/// The text `sweep --plan` prints (see [`SweepArgs::plan_text`]).
fn describe_plan(
    plan: &Plan,
    seeds: u64,
    layout: Layout,
    limit: u64,
    shards: Option<&[ShardPlan]>,
    this: Option<Shard>,
) -> String {
    use std::fmt::Write;
    let mut text = String::from("plan: nothing is run and nothing written\n");
    let cells = plan.cells();
    let _ = writeln!(text, "cells: {cells}");
    let _ = match layout {
        Layout::Tidy => writeln!(
            text,
            "rows: {} ({cells} cells × {seeds} {}, one row per cell and seed)",
            plan.grid_rows(),
            if seeds == 1 { "seed" } else { "seeds" }
        ),
        Layout::Aggregate => writeln!(
            text,
            "rows: {} (one per cell, aggregated over {seeds} {})",
            plan.grid_rows(),
            if seeds == 1 { "seed" } else { "seeds" }
        ),
    };
    let memory = plan.memory_estimate();
    let _ = writeln!(
        text,
        "memory: {} estimated, under the limit of {} ({} {} at once, one a thread, of up to {} each, and buffers of {})",
        human_bytes(memory.total()),
        human_bytes(limit),
        memory.rows_in_flight,
        if memory.rows_in_flight == 1 { "row" } else { "rows" },
        human_bytes(memory.row),
        human_bytes(memory.buffers)
    );
    let Some(shards) = shards else {
        let _ = writeln!(text, "work: {}", describe_work(plan.work_estimate()));
        return text;
    };
    let total: u128 = shards.iter().map(|s| s.work).sum();
    let _ = writeln!(text, "work: {}", describe_work(total));
    let count = shards.len() as u128;
    let largest = shards.iter().map(|s| s.work).max().unwrap_or(0);
    let mean = total as f64 / count.max(1) as f64;
    let _ = writeln!(
        text,
        "shards: {count}, balanced by estimated work; the largest is {largest} events, {:.2} × the mean{}",
        if mean > 0.0 { largest as f64 / mean } else { 0.0 },
        match this {
            Some(shard) => format!("; this process runs shard {shard}"),
            None => String::new(),
        }
    );
    let _ = writeln!(text, "shard\tfirst_row\trows\trequests\twork_events");
    for s in shards {
        let _ = writeln!(
            text,
            "{}\t{}\t{}\t{}\t{}",
            s.shard,
            s.rows.start,
            s.rows.end - s.rows.start,
            s.requests,
            s.work
        );
    }
    text
}
