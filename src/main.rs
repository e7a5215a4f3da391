//! The herd-sim binary: parse the command line, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 2 bad input (flags, config, scenario — clap uses 2 as well);
//! 1 anything else (an output file that cannot be written, say).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use herd_sim::config::{ConfigError, ScenarioFile};
use herd_sim::experiment;
use herd_sim::fixture::{Fixture, FixtureError};
use herd_sim::output::OutputFile;
use herd_sim::report::Format;

use cli::{Cli, Command, FixtureArgs, FixtureFormat, RunArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        None => run(cli.run),
        Some(Command::Fixture(args)) => fixture(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            if error.downcast_ref::<ConfigError>().is_some()
                || error.downcast_ref::<FixtureError>().is_some()
            {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn run(args: RunArgs) -> anyhow::Result<()> {
    if let Some(threads) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1) as usize)
            .build_global()
            .context("cannot start the worker threads")?;
    }
    let file = match &args.config {
        Some(path) => ScenarioFile::read(path)?,
        None => ScenarioFile::default(),
    };
    let mut scenario = file.overridden_by(args.scenario_overrides()).validate()?;
    scenario.path = args.engine.into();
    if scenario.path == herd_sim::engine::Path::Independent
        && !scenario.server.build().clients_independent()
    {
        return Err(ConfigError::Invalid {
            field: "--engine",
            value: "independent".into(),
            accepted: "this server's clients interact; accepted: auto, event-queue".into(),
        }
        .into());
    }
    // Fail on an unwritable path before simulating anything.
    let out = match &args.out {
        Some(path) => Some(
            OutputFile::create(path).with_context(|| format!("cannot write {}", path.display()))?,
        ),
        None => None,
    };
    let report = experiment::run(&scenario);
    let bytes = Format::from(args.format).exporter().serialize(&report)?;
    match out {
        Some(file) => {
            let shown = file.path().display().to_string();
            file.commit(&bytes)
                .with_context(|| format!("cannot write {shown}"))?;
        }
        None => write_stdout(&bytes)?,
    }
    Ok(())
}

/// `herd-sim fixture`: play the scenarios, print the report, and with `--check` fail (exit 1)
/// when any scenario misses its expectation.
fn fixture(args: FixtureArgs) -> anyhow::Result<()> {
    let fixture = Fixture::read(&args.file)?;
    if args.check {
        fixture.require_expectations()?;
    }
    let report = fixture.run(args.check);
    let bytes = match args.format {
        FixtureFormat::Table => report.to_table().into_bytes(),
        FixtureFormat::Json => report.to_json(),
    };
    write_stdout(&bytes)?;
    match report.failures() {
        0 => Ok(()),
        failed => anyhow::bail!(
            "{failed} of {} scenarios did not meet their expectations",
            report.scenarios.len()
        ),
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
