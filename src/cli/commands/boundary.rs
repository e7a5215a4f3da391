//! `herd-sim boundary`: validate, open every output, search (one axis, or the plane of two)
//! with a progress bar of runs spent, and write the report, its pictures and page whole.

use herd_sim::boundary::plane::PlanePlan;
use herd_sim::boundary::BoundarySpec;
use herd_sim::chart::phase::PhaseChart;
use herd_sim::config::check_work;
use herd_sim::output::OutputFile;
use herd_sim::sweep;

use crate::cli::outputs::{commit, open_outputs, progress_bar};
use crate::cli::BoundaryArgs;

/// `herd-sim boundary`: validate, open the output, search with a progress bar of runs spent,
/// write the report whole.
pub fn boundary(args: BoundaryArgs) -> anyhow::Result<()> {
    let spec = args.spec()?;
    if spec.second_axis.is_some() {
        return boundary_plane(&args, spec);
    }
    let plan = herd_sim::boundary::BoundaryPlan::new(spec)?;
    let note = check_work(plan.work_estimate(), "boundary search", args.yes)?;
    let pool = sweep::thread_pool(args.threads.map(|n| n as usize))?;
    let charts = args.charts()?;
    let (out, html, charts) = open_outputs(&args.out, args.html.as_deref(), &charts)?;
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
        Some(file) => Some((file, crate::cli::html::boundary_page(&args, &report)?)),
        None => None,
    };
    write_all(out, &report.serialize(args.format.into()), pictures, page)
}

/// Writes the report, then the pictures, then the page, each whole: called once every byte is
/// made.
fn write_all(
    out: OutputFile,
    report: &[u8],
    pictures: Vec<(OutputFile, Vec<u8>)>,
    page: Option<(OutputFile, Vec<u8>)>,
) -> anyhow::Result<()> {
    commit(out, report)?;
    for (file, bytes) in pictures {
        commit(file, &bytes)?;
    }
    if let Some((file, bytes)) = page {
        commit(file, &bytes)?;
    }
    Ok(())
}

/// `herd-sim boundary` with two axes: validate, open the outputs, search with a progress bar of
/// runs spent, make every byte (the report, the heat maps, the page), then write them.
pub fn boundary_plane(args: &BoundaryArgs, spec: BoundarySpec) -> anyhow::Result<()> {
    let plan = PlanePlan::new(spec)?;
    let note = check_work(plan.work_estimate(), "boundary search", args.yes)?;
    let pool = sweep::thread_pool(args.threads.map(|n| n as usize))?;
    let charts = args.charts()?;
    let (out, html, charts) = open_outputs(&args.out, args.html.as_deref(), &charts)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let bar = progress_bar(plan.max_runs(), args.quiet, "runs (at most)");
    let report = plan.run(&pool, &|done| bar.set_position(done));
    bar.finish_and_clear();
    let report = report?;
    let chart = PhaseChart::from_report(&report);
    let pictures = charts
        .into_iter()
        .map(|(file, format)| Ok((file, chart.render(format, args.chart_size)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let page = match html {
        Some(file) => Some((file, crate::cli::html::phase_page(args, &report, &chart)?)),
        None => None,
    };
    write_all(out, &report.serialize(args.format.into()), pictures, page)
}
