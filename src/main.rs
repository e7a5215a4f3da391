//! The herd-sim binary: parse the command line, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 2 bad input (flags, config, scenario — clap uses 2 as well);
//! 1 anything else (an output that fails while it is written, say; a path that cannot take
//! an output is bad input, found before anything runs).

mod cli;

use cli::outputs::{commit, create_output, write_stdout};

use std::process::ExitCode;

use anyhow::Context;

use herd_sim::chart::{ChartError, DataTable, HistogramChart, ImageFormat, LineChart, SeriesChart};
use herd_sim::config::{check_requests, ConfigError, ScenarioFile, DEFAULT_MAX_REQUESTS};
use herd_sim::experiment;
use herd_sim::fixture::{Fixture, FixtureError};
use herd_sim::output::OutputTarget;
use herd_sim::report::Format;
use herd_sim::trace::{Sample, TraceFormat, TraceWriter};

use herd_sim::sweep::{self, SweepError};

use cli::{Command, FixtureArgs, FixtureFormat, PlotArgs, RunArgs, TracePolicyArgs};

fn main() -> ExitCode {
    let cli = cli::parse();
    let outcome = match cli.command {
        None => run(cli.run),
        Some(Command::Fixture(args)) => fixture(args),
        Some(Command::Report(args)) => cli::report(args),
        Some(Command::Plot(args)) => plot(args),
        Some(Command::Sweep(args)) => cli::sweep(args),
        Some(Command::Merge(args)) => cli::merge(args),
        Some(Command::TracePolicy(args)) => trace_policy(args),
        Some(Command::Boundary(args)) => cli::boundary(args),
        Some(Command::Lint(args)) => cli::lint(*args),
        Some(Command::Tune(args)) => cli::tune(args),
        Some(Command::Presets(_)) => {
            print!("{}", herd_sim::config::presets_table());
            Ok(())
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            let bad_chart_input = error
                .downcast_ref::<ChartError>()
                .is_some_and(ChartError::is_bad_input);
            let bad_sweep_input = error
                .downcast_ref::<SweepError>()
                .is_some_and(SweepError::is_bad_input);
            let bad_boundary_input = error
                .downcast_ref::<herd_sim::boundary::BoundaryError>()
                .is_some_and(herd_sim::boundary::BoundaryError::is_bad_input);
            let bad_report_input = error
                .downcast_ref::<herd_sim::policy_report::ReportError>()
                .is_some_and(herd_sim::policy_report::ReportError::is_bad_input);
            let bad_tune_input = error
                .downcast_ref::<herd_sim::advice::tune_file::TuneError>()
                .is_some_and(herd_sim::advice::tune_file::TuneError::is_bad_input);
            if error.downcast_ref::<ConfigError>().is_some()
                || bad_report_input
                || bad_boundary_input
                || bad_tune_input
                || error.downcast_ref::<FixtureError>().is_some()
                || bad_chart_input
                || bad_sweep_input
            {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn run(args: RunArgs) -> anyhow::Result<()> {
    let file = match &args.config {
        Some(path) => ScenarioFile::read(path)?,
        None => ScenarioFile::default(),
    };
    let file = file.overridden_by(args.scenario_overrides());
    // Everything is checked, the memory estimate with the threads the run will have, before
    // any thread starts: bad input fails at once whatever --threads, and an unstartable pool
    // is said once, not as a panic of rayon's global pool.
    let given = args.html.is_some().then(|| file.clone());
    let mut run = validate_run(file, &args)?;
    run.given = given;
    // Last, once everything else is valid: a huge run needs --yes, and is then announced
    // (once its outputs are open, just before it runs).
    let note = run.scenario.check_work(args.yes)?;
    let pool = sweep::thread_pool(Some(run.scenario.threads))?;
    pool.install(|| execute_run(run, &args, note))
}

/// A plain run once every input is checked.
struct ValidRun<'a> {
    scenario: herd_sim::config::Scenario,
    series_out: Option<&'a std::path::Path>,
    charts: Vec<(&'a std::path::Path, ImageFormat)>,
    trace: Option<ValidTrace<'a>>,
    /// The scenario as given, kept for `--html`'s config.
    given: Option<ScenarioFile>,
}

/// `--trace` once checked: where, how, which clients, and the note a large one prints.
struct ValidTrace<'a> {
    path: &'a std::path::Path,
    format: TraceFormat,
    sample: Sample,
    note: Option<String>,
}

fn validate_run(file: ScenarioFile, args: &RunArgs) -> anyhow::Result<ValidRun<'_>> {
    let given = file.clone();
    let mut scenario = file.validate_without_budget_on(args.threads.map(|n| n as usize))?;
    given.refuse_unread(&scenario)?;
    if let Some(unread) = args.scenario_overrides().unread_backoff(&scenario).first() {
        return Err(unread.error().into());
    }
    check_requests(
        scenario.requests_estimate(),
        args.max_requests.unwrap_or(DEFAULT_MAX_REQUESTS),
        "run",
    )?;
    scenario.path = args.engine.into();
    if scenario.path == herd_sim::engine::Path::Independent
        && !scenario
            .run_spec(scenario.strategies[0])
            .clients_independent()
    {
        return Err(ConfigError::Invalid {
            field: "--engine",
            value: "independent".into(),
            accepted:
                "this server's clients (or a shared --pool) interact; accepted: auto, event-queue"
                    .into(),
        }
        .into());
    }
    // The memory estimate on the path now chosen, with the dense histograms and the series a
    // JSON report, a chart or --series-out holds.
    let dense = writes_dense(args);
    // Without them a call-loop run folds its windows as they close; an unlimited queue is
    // guarded as the run goes instead of counted at its worst.
    scenario.overload.keep_windows = dense;
    scenario.guard_in_flight(dense);
    scenario.check_memory_with(dense)?;
    scenario.check_reservable(dense)?;
    let trace = match &args.trace {
        Some(path) => {
            let format = TraceFormat::for_path(path)?;
            let sample = Sample::new(args.trace_sample.unwrap_or(1.0))?;
            let note = scenario.check_trace(sample.fraction(), dense, args.yes)?;
            Some(ValidTrace {
                path,
                format,
                sample,
                note,
            })
        }
        None if args.trace_sample.is_some() => {
            return Err(ConfigError::Invalid {
                field: "--trace-sample",
                value: args.trace_sample.unwrap_or(1.0).to_string(),
                accepted: "only with --trace PATH".into(),
            }
            .into())
        }
        None => None,
    };
    // --series-out names a series only a call-loop run has; --png/--svg draw that series.
    let call_loop = scenario.run_spec(scenario.strategies[0]).uses_call_loop();
    let series_out = match &args.overload.series_out {
        Some(path) if !call_loop => {
            return Err(ConfigError::Invalid {
                field: "--series-out",
                value: path.display().to_string(),
                accepted: "only for call-loop runs (a capacity server, --arrivals poisson, \
                           --timeout, --network-delay, --outage or --degrade); this run has no \
                           series"
                    .into(),
            }
            .into());
        }
        Some(path) => Some(path.as_path()),
        None => None,
    };
    check_distinct_outputs(args)?;
    let mut charts = Vec::new();
    for (path, flag, format) in [
        (&args.png, "--png", ImageFormat::Png),
        (&args.svg, "--svg", ImageFormat::Svg),
    ] {
        if let Some(path) = path {
            ImageFormat::for_output(flag, path, &[format])?;
            if call_loop {
                SeriesChart::check_scale(args.chart_scale.into())?;
            }
            match args.chart_size {
                Some(size) if call_loop => SeriesChart::check_size_for(&scenario, size)?,
                Some(size) => HistogramChart::check_size_for(&scenario, size)?,
                None => {}
            }
            charts.push((path.as_path(), format));
        }
    }
    Ok(ValidRun {
        scenario,
        series_out,
        charts,
        trace,
        given: None,
    })
}

/// Whether the run writes its windows densely: a JSON report, a chart, `--series-out` or a
/// page.
fn writes_dense(args: &RunArgs) -> bool {
    Format::from(args.format) == Format::Json
        || args.png.is_some()
        || args.svg.is_some()
        || args.overload.series_out.is_some()
        || args.html.is_some()
}

/// Refuses two outputs of one run that name the same file, or both standard output (the
/// report goes there when `--out` is not given): the second would overwrite or interleave
/// with the first. A device such as `/dev/null` may take several.
fn check_distinct_outputs(args: &RunArgs) -> anyhow::Result<()> {
    let target = cli::outputs::check_output;
    let mut taken = vec![(
        "--out",
        match &args.out {
            Some(path) => target("--out", path)?,
            None => OutputTarget::Stdout,
        },
    )];
    for (flag, path) in [
        ("--series-out", &args.overload.series_out),
        ("--png", &args.png),
        ("--svg", &args.svg),
        ("--trace", &args.trace),
        ("--html", &args.html),
    ] {
        let Some(path) = path else { continue };
        let this = target(flag, path)?;
        if let Some((other, _)) = taken
            .iter()
            .find(|(_, t)| t.same_as(&this) && !matches!(t, OutputTarget::Special(_)))
        {
            let accepted = match (&this, *other, &args.out) {
                (OutputTarget::Stdout, "--out", None) => format!(
                    "standard output already carries the report; accepted: --out FILE for the report, or another path for {flag}"
                ),
                _ => format!("{other} writes there too; accepted: a path no other output of this run names"),
            };
            return Err(ConfigError::Invalid {
                field: flag,
                value: path.display().to_string(),
                accepted,
            }
            .into());
        }
        taken.push((flag, this));
    }
    Ok(())
}

/// A run stopped by its guard ([`herd_sim::config::Scenario::guard_in_flight`]: its calls
/// and queue, or its histograms), or whose dense output the budget cannot hold now that its
/// windows are known, is refused, nothing written.
fn refuse_outgrown(
    report: &experiment::Report,
    scenario: &herd_sim::config::Scenario,
    args: &RunArgs,
) -> anyhow::Result<()> {
    if let Some(r) = report.results.iter().find(|r| r.outgrown) {
        return Err(scenario.outgrown(None, &r.strategy.to_string()).into());
    }
    if writes_dense(args) {
        scenario.check_dense_output(report)?;
    }
    let outgrown = report
        .results
        .iter()
        .find_map(|r| r.calls.as_ref().and_then(|c| c.outgrown));
    match outgrown {
        None => Ok(()),
        Some(calls) => Err(scenario.outgrown(Some(calls), "").into()),
    }
}

/// Runs a validated run; `note` (a huge run's work estimate, allowed by `--yes`) is said
/// once the outputs are open.
fn execute_run(run: ValidRun<'_>, args: &RunArgs, note: Option<String>) -> anyhow::Result<()> {
    // Fail on an unwritable path before simulating anything.
    let out = args
        .out
        .as_deref()
        .map(|p| create_output("--out", p))
        .transpose()?;
    let series_out = run
        .series_out
        .map(|p| create_output("--series-out", p))
        .transpose()?;
    let html_out = args
        .html
        .as_deref()
        .map(|p| create_output("--html", p))
        .transpose()?;
    let charts = run
        .charts
        .into_iter()
        .map(|(path, format)| {
            Ok((
                create_output(cli::outputs::chart_flag(format), path)?,
                format,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let trace = match &run.trace {
        Some(t) => Some((create_output("--trace", t.path)?, t)),
        None => None,
    };
    for note in note
        .iter()
        .chain(run.trace.as_ref().and_then(|t| t.note.as_ref()))
    {
        eprintln!("note: {note}");
    }
    let report = match trace {
        None => experiment::run(&run.scenario),
        Some((mut file, t)) => {
            let mut writer = TraceWriter::new(file.writer(), t.format, t.sample);
            let report = experiment::run_traced(&run.scenario, &mut writer);
            match writer.finish() {
                // `--trace - | head`: the reader has all it wanted.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => {
                    other.with_context(|| format!("cannot write {}", t.path.display()))?;
                }
            }
            refuse_outgrown(&report, &run.scenario, args)?;
            commit(file, &[])?;
            report
        }
    };
    refuse_outgrown(&report, &run.scenario, args)?;
    let bytes = Format::from(args.format).exporter().serialize(&report)?;
    match out {
        Some(file) => commit(file, &bytes)?,
        None => write_stdout(&bytes)?,
    }
    if let Some(file) = series_out {
        commit(file, &herd_sim::report::series_csv(&report)?)?;
    }
    if let (Some(out), Some(given)) = (html_out, &run.given) {
        commit(out, &cli::html::page(&report, &run.scenario, given, args)?)?;
    }
    let scenario = &run.scenario;
    if !charts.is_empty() && scenario.run_spec(scenario.strategies[0]).uses_call_loop() {
        let chart = SeriesChart::from_report(&report, scenario, args.chart_scale.into())?;
        for (file, format) in charts {
            commit(file, &chart.render(format, args.chart_size)?)?;
        }
    } else if !charts.is_empty() {
        let chart = HistogramChart::from_report(&report, args.chart_scale.into())?;
        for (file, format) in charts {
            commit(file, &chart.render(format, args.chart_size)?)?;
        }
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

/// `herd-sim trace-policy`: the trace, on stdout or into `--out`.
fn trace_policy(args: TracePolicyArgs) -> anyhow::Result<()> {
    let (spec, header) = args.spec()?;
    let text = herd_sim::policy::trace::render(&herd_sim::policy::trace::trace(&spec), &header);
    match &args.out {
        Some(path) => commit(create_output("--out", path)?, text.as_bytes()),
        None => write_stdout(text.as_bytes()),
    }
}

/// `herd-sim plot`: on success says `wrote PATH` on stderr (stdout stays empty, as for a run
/// writing to `--out`), adding when it replaced a file.
fn plot(args: PlotArgs) -> anyhow::Result<()> {
    let path = args.out_path();
    let format = ImageFormat::for_output("--out", &path, &[ImageFormat::Png, ImageFormat::Svg])?;
    let shown = args.csv.display().to_string();
    let bytes = std::fs::read(&args.csv).map_err(|e| ChartError::Csv {
        source_name: shown.clone(),
        message: format!("cannot read: {e}"),
    })?;
    let table = DataTable::parse(&bytes, &shown)?;
    let chart = LineChart::from_table(&table, &args.spec())?;
    let replaced = matches!(OutputTarget::of(&path), Ok(OutputTarget::Regular(p)) if p.is_file());
    let file = create_output("--out", &path)?;
    let to_stdout = file.is_stdout();
    commit(file, &chart.render(format, args.chart_size)?)?;
    if !to_stdout {
        let note = if replaced {
            " (replaced the file there)"
        } else {
            ""
        };
        eprintln!("wrote {}{note}", path.display());
    }
    Ok(())
}
