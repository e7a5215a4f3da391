//! `herd-sim tune`: read and check the tune file, search with a progress bar of runs, and
//! write the report, its frontier pictures and its page whole.

use herd_sim::chart::ImageFormat;
use herd_sim::config::{check_work, DEFAULT_MAX_REQUESTS};
use herd_sim::sweep;

use crate::cli::outputs::{commit, distinct_outputs, open_outputs, progress_bar};
use crate::cli::{TuneArgs, TuneFormat};

/// `herd-sim tune`: read and check the tune file (every candidate in every scenario), open the
/// output, search with a progress bar of runs, write the report whole.
pub fn tune(args: TuneArgs) -> anyhow::Result<()> {
    use herd_sim::advice::{tune::Tuner, tune_file::TuneFile};
    let (file, text) = TuneFile::read_with_text(&args.config)?;
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
    if args.png.is_none() && args.svg.is_none() && args.html.is_none() {
        let size = args.chart_size.map(|s| s.to_string());
        for (flag, given) in [
            ("--chart-x", &args.chart_x),
            ("--chart-y", &args.chart_y),
            ("--chart-size", &size),
        ] {
            if let Some(value) = given {
                return Err(herd_sim::config::ConfigError::Invalid {
                    field: flag,
                    value: value.clone(),
                    accepted: "accepted: only with --png, --svg or --html (it shapes the chart \
                               they draw)"
                        .into(),
                }
                .into());
            }
        }
    }
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
    // A page draws the chart when the file has two terms; axes named must name them.
    let named = args.chart_x.is_some() || args.chart_y.is_some();
    if !charts.is_empty() || (args.html.is_some() && named) {
        axes.resolve(tuner.file())?;
    }
    distinct_outputs(
        std::iter::once(("--out", args.out.as_path()))
            .chain(charts.iter().map(|c| (c.0, c.1)))
            .chain(args.html.iter().map(|p| ("--html", p.as_path()))),
    )?;
    let note = check_work(tuner.work_estimate(), "tune", args.yes)?;
    let pool = sweep::thread_pool(Some(threads))?;
    let images: Vec<_> = charts
        .iter()
        .map(|&(_, path, format)| (path, format))
        .collect();
    let (out, html, chart_outs) = open_outputs(&args.out, args.html.as_deref(), &images)?;
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
    let page = match html {
        Some(file) => Some((
            file,
            crate::cli::html::tune_page(&report, &text, &axes, args.chart_size)?,
        )),
        None => None,
    };
    commit(out, &bytes)?;
    for (file, bytes) in drawn {
        commit(file, &bytes)?;
    }
    if let Some((file, bytes)) = page {
        commit(file, &bytes)?;
    }
    Ok(())
}
