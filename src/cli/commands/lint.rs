//! `herd-sim lint`: the policy's findings, with `--deny LEVEL` failing a CI job.

use herd_sim::config::{ConfigError, ScenarioFile};
use herd_sim::report::Format;
use herd_sim::sweep;

use crate::cli::outputs::{commit, create_output, write_stdout};
use crate::cli::LintArgs;

/// Why `lint` refuses a plain run's flag that it would ignore: an output other than its
/// findings, or a setting of the run that its probes do not read.
pub const LINT_IGNORES: &str =
    "not with lint, whose output is its findings (--out, --format) from probes of its own";

/// `herd-sim lint`: the policy's findings on stdout (or `--out`); with `--deny LEVEL`, exit 1
/// when one is at or above it.
pub fn lint(args: LintArgs) -> anyhow::Result<()> {
    let run = &args.run;
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    for (flag, given) in [
        ("--png", path(&run.png)),
        ("--svg", path(&run.svg)),
        ("--series-out", path(&run.overload.series_out)),
        ("--html", path(&run.html)),
        ("--trace", path(&run.trace)),
        ("--trace-sample", run.trace_sample.map(|f| f.to_string())),
        ("--replicates", run.replicates.map(|n| n.to_string())),
    ] {
        if let Some(value) = given {
            return Err(ConfigError::Invalid {
                field: flag,
                value,
                accepted: LINT_IGNORES.into(),
            }
            .into());
        }
    }
    let format = Format::from(run.format);
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
            let findings = if found == 1 { "finding" } else { "findings" };
            anyhow::bail!("{found} {findings} at or above {level} (--deny {level})");
        }
    }
    Ok(())
}
