//! The herd-sim binary: parse the command line, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 2 bad input (flags, config, scenario — clap uses 2 as well);
//! 1 anything else (an output file that cannot be written, say).

mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;

use herd_sim::chart::{ChartError, DataTable, HistogramChart, ImageFormat, LineChart, SeriesChart};
use herd_sim::config::{
    check_requests, check_work, ConfigError, ScenarioFile, DEFAULT_MAX_REQUESTS,
};
use herd_sim::experiment;
use herd_sim::fixture::{Fixture, FixtureError};
use herd_sim::output::{OutputFile, OutputTarget};
use herd_sim::report::Format;
use herd_sim::trace::{Sample, TraceFormat, TraceWriter};

use herd_sim::config::human_bytes;
use herd_sim::report::html::SWEEP_ROWS_MAX;
use herd_sim::sweep::sink::Destination;
use herd_sim::sweep::{self, shard::ShardRun, sink::RowSink, Plan, SweepError};

use cli::{
    BoundaryArgs, Command, FixtureArgs, FixtureFormat, LintArgs, MergeArgs, PlotArgs, RunArgs,
    SweepArgs, TracePolicyArgs, TuneArgs, TuneFormat,
};

fn main() -> ExitCode {
    let cli = cli::parse();
    let outcome = match cli.command {
        None => run(cli.run),
        Some(Command::Fixture(args)) => fixture(args),
        Some(Command::Report(args)) => cli::report(args),
        Some(Command::Plot(args)) => plot(args),
        Some(Command::Sweep(args)) => sweep(args),
        Some(Command::Merge(args)) => merge(args),
        Some(Command::TracePolicy(args)) => trace_policy(args),
        Some(Command::Boundary(args)) => boundary(args),
        Some(Command::Lint(args)) => lint(*args),
        Some(Command::Tune(args)) => tune(args),
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
    let dense = Format::from(args.format) == Format::Json
        || args.png.is_some()
        || args.svg.is_some()
        || args.overload.series_out.is_some()
        || args.html.is_some();
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

/// Refuses two outputs of one run that name the same file, or both standard output (the
/// report goes there when `--out` is not given): the second would overwrite or interleave
/// with the first. A device such as `/dev/null` may take several.
fn check_distinct_outputs(args: &RunArgs) -> anyhow::Result<()> {
    let target = |path: &std::path::Path| {
        OutputTarget::of(path).with_context(|| format!("cannot write {}", path.display()))
    };
    let mut taken = vec![(
        "--out",
        match &args.out {
            Some(path) => target(path)?,
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
        let this = target(path)?;
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

/// Runs a validated run; `note` (a huge run's work estimate, allowed by `--yes`) is said
/// once the outputs are open.
/// A run stopped by its queue's guard ([`herd_sim::config::Scenario::guard_queue`]) is
/// refused, nothing written.
fn refuse_outgrown(
    report: &experiment::Report,
    scenario: &herd_sim::config::Scenario,
) -> anyhow::Result<()> {
    use herd_sim::config::human_bytes;
    let outgrown = report
        .results
        .iter()
        .find_map(|r| r.calls.as_ref().and_then(|c| c.outgrown));
    match outgrown {
        None => Ok(()),
        Some((at, calls, places)) => {
            let guard = scenario.overload.in_flight;
            let held = calls * guard.per_call + places * guard.per_place;
            Err(ConfigError::Outgrown {
                budget: human_bytes(scenario.memory_limit),
                held: format!(
                    "at {at:.1}s it held {calls} calls and {places} queued requests, {} by the \
                     estimate's count, where the estimate counted {} and the budget leaves {}",
                    human_bytes(held),
                    human_bytes(scenario.in_flight_estimate()),
                    human_bytes(guard.bytes)
                ),
            }
            .into())
        }
    }
}

fn execute_run(run: ValidRun<'_>, args: &RunArgs, note: Option<String>) -> anyhow::Result<()> {
    // Fail on an unwritable path before simulating anything.
    let out = args.out.as_deref().map(create_output).transpose()?;
    let series_out = run.series_out.map(create_output).transpose()?;
    let html_out = args.html.as_deref().map(create_output).transpose()?;
    let charts = run
        .charts
        .into_iter()
        .map(|(path, format)| Ok((create_output(path)?, format)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let trace = match &run.trace {
        Some(t) => Some((create_output(t.path)?, t)),
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
            refuse_outgrown(&report, &run.scenario)?;
            commit(file, &[])?;
            report
        }
    };
    refuse_outgrown(&report, &run.scenario)?;
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
        Some(path) => commit(create_output(path)?, text.as_bytes()),
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
    let file = create_output(&path)?;
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

/// Prepares an output file, so a path that cannot be written fails before any work.
fn create_output(path: &std::path::Path) -> anyhow::Result<OutputFile> {
    OutputFile::create(path).with_context(|| format!("cannot write {}", path.display()))
}

fn commit(file: OutputFile, bytes: &[u8]) -> anyhow::Result<()> {
    let shown = file.path().display().to_string();
    file.commit(bytes)
        .with_context(|| format!("cannot write {shown}"))
}

fn sweep(args: SweepArgs) -> anyhow::Result<()> {
    if args.plan {
        print!("{}", args.plan_text()?);
        return Ok(());
    }
    let (spec, destination, start) = args.spec()?;
    let spec_for_page = spec.clone();
    let (plan, shard) = match args.shard()? {
        None => (Plan::new(spec)?, None),
        Some(shard) => {
            let (plan, run) = ShardRun::prepare(spec, shard, &destination)?;
            (plan, Some(run))
        }
    };
    // Refused in `Plan::new` without --yes; with it, said once the output is open.
    let what = if shard.is_some() { "shard" } else { "sweep" };
    let note = check_work(plan.work_estimate(), what, args.yes)?;
    // Threads started after the input is validated and before the output is opened.
    let pool = sweep::thread_pool(args.threads.map(|n| n as usize))?;
    let html = match &args.html {
        Some(path) => Some(sweep_html_output(
            &plan,
            path,
            &destination,
            shard.is_some(),
        )?),
        None => None,
    };
    // Opened before anything is simulated: a bad path fails at once.
    let mut sink = RowSink::open(&plan, &destination, start)?;
    let copy = match html {
        Some(_) => Some(sink.keep_copy(&plan)?),
        None => None,
    };
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    if let Some(run) = &shard {
        run.begin()?;
    }
    let bar = progress_bar(plan.rows(), args.quiet, "rows");
    let outcome = sweep::run_in(&pool, &plan, sink, &|done| bar.set_position(done));
    bar.finish_and_clear();
    match outcome {
        // `herd-sim sweep | head`: the reader has all it wanted.
        Err(SweepError::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::BrokenPipe => {
            return Ok(())
        }
        other => other?,
    }
    if let Some(run) = shard {
        run.finish()?;
    }
    if let (Some(out), Some(copy)) = (html, copy) {
        commit(out, &cli::html::sweep_page(&spec_for_page, &copy.take())?)?;
    }
    Ok(())
}

/// Checks a sweep's `--html` before anything runs and opens it: not with a shard (a page
/// shows the whole sweep), not on standard output beside the CSV, at most
/// [`SWEEP_ROWS_MAX`] rows, and the page's copy of the rows within the memory limit.
fn sweep_html_output(
    plan: &Plan,
    path: &std::path::Path,
    destination: &Destination,
    shard: bool,
) -> anyhow::Result<OutputFile> {
    let refuse = |accepted: String| SweepError::Setting {
        field: "--html",
        value: path.display().to_string(),
        accepted,
    };
    if shard {
        return Err(refuse(
            "accepted: --html on a whole sweep, not a shard (draw the merged file with herd-sim plot)".into(),
        )
        .into());
    }
    if path.as_os_str() == "-" && *destination == Destination::Stdout {
        return Err(refuse(
            "standard output already carries the CSV; accepted: --out FILE for the CSV, or another path for --html".into(),
        )
        .into());
    }
    if plan.rows() > SWEEP_ROWS_MAX {
        return Err(refuse(format!(
            "accepted: a sweep of at most {SWEEP_ROWS_MAX} rows (this one has {}; --aggregate makes one row a cell)",
            plan.rows()
        ))
        .into());
    }
    // The copy of the rows, their table and the data block: three copies of the CSV, each
    // row at most the sweep's own buffer estimate of a row.
    let page = plan
        .rows()
        .saturating_mul(plan.row_bytes())
        .saturating_mul(3);
    let limit = plan.memory_limit();
    let total = plan.memory_estimate().total().saturating_add(page);
    if total > limit {
        return Err(refuse(format!(
            "the page needs {} beside the sweep's {}, past the memory limit of {}; accepted: --aggregate, fewer seeds or a larger --memory-limit",
            human_bytes(page),
            human_bytes(plan.memory_estimate().total()),
            human_bytes(limit)
        ))
        .into());
    }
    create_output(path)
}

/// `herd-sim boundary`: validate, open the output, search with a progress bar of runs spent,
/// write the report whole.
fn boundary(args: BoundaryArgs) -> anyhow::Result<()> {
    let spec = args.spec()?;
    if spec.second_axis.is_some() {
        return cli::boundary_plane(&args, spec);
    }
    let plan = herd_sim::boundary::BoundaryPlan::new(spec)?;
    let note = check_work(plan.work_estimate(), "boundary search", args.yes)?;
    let pool = sweep::thread_pool(args.threads.map(|n| n as usize))?;
    let charts = args.charts()?;
    let out = create_output(&args.out)?;
    let html = args.html.as_deref().map(create_output).transpose()?;
    let charts = charts
        .into_iter()
        .map(|(path, format)| Ok((create_output(path)?, format)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let bar = progress_bar(plan.max_runs(), args.quiet, "runs (at most)");
    let report = plan.run(&pool, &|done| bar.set_position(done));
    bar.finish_and_clear();
    let report = report?;
    // Every byte is made before any file is replaced: a chart that cannot be drawn leaves
    // the report unwritten too.
    let chart = herd_sim::chart::boundary::BoundaryChart::from_report(&report);
    let pictures = charts
        .into_iter()
        .map(|(file, format)| Ok((file, chart.render(format, args.chart_size)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let page = match html {
        Some(file) => Some((file, cli::html::boundary_page(&args, &report)?)),
        None => None,
    };
    commit(out, &report.serialize(args.format.into()))?;
    for (file, bytes) in pictures {
        commit(file, &bytes)?;
    }
    if let Some((file, bytes)) = page {
        commit(file, &bytes)?;
    }
    Ok(())
}

/// `herd-sim lint`: the policy's findings on stdout (or `--out`); with `--deny LEVEL`, exit 1
/// when one is at or above it.
fn lint(args: LintArgs) -> anyhow::Result<()> {
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
    let out = run.out.as_deref().map(create_output).transpose()?;
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

/// `herd-sim tune`: read and check the tune file (every candidate in every scenario), open the
/// output, search with a progress bar of runs, write the report whole.
fn tune(args: TuneArgs) -> anyhow::Result<()> {
    use herd_sim::advice::{tune::Tuner, tune_file::TuneFile};
    let file = TuneFile::read(&args.config)?;
    let threads = args
        .threads
        .map_or_else(herd_sim::config::default_threads, |n| n as usize);
    let tuner = Tuner::new(
        file,
        threads,
        args.max_requests.unwrap_or(DEFAULT_MAX_REQUESTS),
    )?;
    let axes = herd_sim::chart::frontier::FrontierAxes {
        x: args.chart_x.clone(),
        y: args.chart_y.clone(),
    };
    let mut charts = Vec::new();
    for (path, flag, format) in [
        (&args.png, "--png", ImageFormat::Png),
        (&args.svg, "--svg", ImageFormat::Svg),
    ] {
        if let Some(path) = path {
            ImageFormat::for_output(flag, path, &[format])?;
            charts.push((flag, path.as_path(), format));
        }
    }
    if !charts.is_empty() {
        axes.resolve(tuner.file())?;
    }
    distinct_outputs(
        std::iter::once(("--out", args.out.as_path())).chain(charts.iter().map(|c| (c.0, c.1))),
    )?;
    let note = check_work(tuner.work_estimate(), "tune", args.yes)?;
    let pool = sweep::thread_pool(Some(threads))?;
    let out = create_output(&args.out)?;
    let chart_outs = charts
        .iter()
        .map(|&(_, path, format)| Ok((create_output(path)?, format)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let bar = progress_bar(tuner.max_runs(), args.quiet, "runs (at most)");
    let report = tuner.run(&pool, &|done| bar.set_position(done));
    bar.finish_and_clear();
    let report = report?;
    let bytes = match args.format {
        TuneFormat::Json => report.to_json(),
        TuneFormat::Table => report.to_text().into_bytes(),
    };
    // Every chart is drawn before anything is written, so a failure leaves nothing behind.
    let drawn = chart_outs
        .into_iter()
        .map(|(file, format)| {
            let chart = herd_sim::chart::frontier::FrontierChart::from_report(&report, &axes)?;
            Ok((file, chart.render(format, args.chart_size)?))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    commit(out, &bytes)?;
    for (file, bytes) in drawn {
        commit(file, &bytes)?;
    }
    Ok(())
}

/// Refuses two outputs of one command that name the same file or both standard output (a
/// device such as `/dev/null` may take several).
fn distinct_outputs<'a>(
    outputs: impl Iterator<Item = (&'static str, &'a std::path::Path)>,
) -> anyhow::Result<()> {
    let mut taken: Vec<(&str, OutputTarget)> = Vec::new();
    for (flag, path) in outputs {
        let this =
            OutputTarget::of(path).with_context(|| format!("cannot write {}", path.display()))?;
        if let Some((other, _)) = taken
            .iter()
            .find(|(_, t)| t.same_as(&this) && !matches!(t, OutputTarget::Special(_)))
        {
            return Err(ConfigError::Invalid {
                field: flag,
                value: path.display().to_string(),
                accepted: format!(
                    "{other} writes there too; accepted: a path no other output names"
                ),
            }
            .into());
        }
        taken.push((flag, this));
    }
    Ok(())
}

/// `herd-sim merge`: the shards of one sweep into the file one machine writes.
fn merge(args: MergeArgs) -> anyhow::Result<()> {
    sweep::merge::merge(&args.inputs, &args.out, args.aggregate)?;
    Ok(())
}

/// The one progress-bar factory: on stderr, with rate and ETA; hidden when stderr is not a
/// terminal (indicatif checks) or with `--quiet`, so stdout stays clean for the CSV.
fn progress_bar(rows: u64, quiet: bool, what: &str) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(rows);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what}  {{rate}}  ETA {{eta}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}/s", state.per_sec());
            },
        ),
    );
    bar
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
