//! `herd-sim lint`: the policy's findings, with `--deny LEVEL` failing a CI job.

use herd_sim::config::{ConfigError, ScenarioFile};
use herd_sim::report::Format;
use herd_sim::sweep;

use crate::cli::outputs::{commit, create_output, write_stdout};
use crate::cli::LintArgs;

/// `herd-sim lint`: the policy's findings on stdout (or `--out`); with `--deny LEVEL`, exit 1
/// when one is at or above it.
pub fn lint(args: LintArgs) -> anyhow::Result<()> {
    let run = &args.run;
    for (flag, given) in [
        ("--png", run.png.as_ref()),
        ("--svg", run.svg.as_ref()),
        ("--series-out", run.overload.series_out.as_ref()),
    ] {
        if let Some(path) = given {
            return Err(ConfigError::Invalid {
                field: flag,
                value: path.display().to_string(),
                accepted: "not with lint, whose output is its findings (--out, --format)".into(),
            }
            .into());
        }
    }
    let format = Format::from(run.format);
    if format == Format::Csv {
        {
            return Err(ConfigError::Invalid {
                field: "--format",
                value: "csv".into(),
                accepted: "accepted: table, json".into(),
            }
            .into());
        }
    }
    let file = match &run.config {
        Some(path) => ScenarioFile::read(path)?,
        None => ScenarioFile::default(),
    };
    let scenario = file
        .overridden_by(run.scenario_overrides())
        .validate_on(run.threads.map(|n| n as usize))?;
    let out = run
        .out
        .as_deref()
        .map(|p| create_output("--out", p))
        .transpose()?;
    let threads = Some(scenario.threads);
    let pool = sweep::thread_pool(threads)?;
    let report = pool.install(|| herd_sim::advice::lint::lint(&scenario, threads))?;
    let bytes = match format {
        Format::Json => report.to_json(),
        _ => report.to_text().into_bytes(),
    };
    match out {
        Some(file) => commit(file, &bytes)?,
        None => write_stdout(&bytes)?,
    }
    if let Some(level) = args.deny {
        let level = level.into();
        let found = report.at_or_above(level);
        if found > 0 {
            anyhow::bail!("{found} findings at or above {level} (--deny {level})");
        }
    }
    Ok(())
}
