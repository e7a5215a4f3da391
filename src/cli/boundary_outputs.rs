//! The pictures and page `herd-sim boundary` writes beside its report (`--png`, `--svg`, `--html`): checked before
//! any run, so a bad extension or two outputs naming one file fail at once.

use std::path::Path;

use anyhow::Context;

use herd_sim::boundary::plane::PlanePlan;
use herd_sim::boundary::{BoundaryError, BoundarySpec};
use herd_sim::chart::phase::PhaseChart;
use herd_sim::chart::ImageFormat;
use herd_sim::config::check_work;
use herd_sim::config::ConfigError;
use herd_sim::output::OutputTarget;

use super::BoundaryArgs;

impl BoundaryArgs {
    /// The charts asked for, each with its format, once every path is checked: the extension
    /// fits the flag, and no two outputs (the report's `--out` among them) name one file or
    /// both standard output. A device such as `/dev/null` may take several.
    pub fn charts(&self) -> anyhow::Result<Vec<(&Path, ImageFormat)>> {
        let target = |path: &Path| {
            OutputTarget::of(path).with_context(|| format!("cannot write {}", path.display()))
        };
        let mut taken = vec![("--out", target(&self.out)?)];
        let mut charts = Vec::new();
        for (path, flag, format) in [
            (&self.png, "--png", Some(ImageFormat::Png)),
            (&self.svg, "--svg", Some(ImageFormat::Svg)),
            (&self.html, "--html", None),
        ] {
            let Some(path) = path else { continue };
            if let Some(format) = format {
                ImageFormat::for_output(flag, path, &[format])?;
            }
            let this = target(path)?;
            if let Some((other, _)) = taken
                .iter()
                .find(|(_, t)| t.same_as(&this) && !matches!(t, OutputTarget::Special(_)))
            {
                return Err(ConfigError::Invalid {
                    field: flag,
                    value: path.display().to_string(),
                    accepted: format!(
                        "{other} writes there too; accepted: a path no other output of this search names"
                    ),
                }
                .into());
            }
            taken.push((flag, this));
            if let Some(format) = format {
                charts.push((path.as_path(), format));
            }
        }
        Ok(charts)
    }
}

impl BoundaryArgs {
    /// The `(axis, range)` pairs, in order: one, or two for a phase diagram.
    pub fn axes(&self) -> Result<Vec<(String, String)>, BoundaryError> {
        let shown = |list: &[String]| list.join(" ");
        if self.axis.len() > 2 {
            return Err(BoundaryError::Flag {
                flag: "--axis",
                value: shown(&self.axis),
                problem: format!("{} axes given", self.axis.len()),
                accepted: "one --axis (a boundary) or two (a phase diagram), each with its --range"
                    .into(),
            });
        }
        if self.axis.len() != self.range.len() {
            return Err(BoundaryError::Flag {
                flag: "--range",
                value: shown(&self.range),
                problem: format!("{} ranges for {} axes", self.range.len(), self.axis.len()),
                accepted: "one --range LO..HI for each --axis, in the same order".into(),
            });
        }
        Ok(self
            .axis
            .iter()
            .cloned()
            .zip(self.range.iter().cloned())
            .collect())
    }
}

/// `herd-sim boundary` with two axes: validate, open the outputs, search with a progress bar of
/// runs spent, make every byte (the report, the heat maps), then write them.
pub fn boundary_plane(args: &BoundaryArgs, spec: BoundarySpec) -> anyhow::Result<()> {
    if let Some(path) = &args.html {
        // Refused rather than ignored: the page of a phase diagram is not made yet.
        return Err(ConfigError::Invalid {
            field: "--html",
            value: path.display().to_string(),
            accepted: "accepted: --html with one --axis; a phase diagram's page is not made yet, \
                       its heat map is drawn by --png or --svg"
                .into(),
        }
        .into());
    }
    let plan = PlanePlan::new(spec)?;
    let note = check_work(plan.work_estimate(), "boundary search", args.yes)?;
    let pool = herd_sim::sweep::thread_pool(args.threads.map(|n| n as usize))?;
    let charts = args.charts()?;
    let out = crate::create_output(&args.out)?;
    let charts = charts
        .into_iter()
        .map(|(path, format)| Ok((crate::create_output(path)?, format)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let bar = crate::progress_bar(plan.max_runs(), args.quiet, "runs (at most)");
    let report = plan.run(&pool, &|done| bar.set_position(done));
    bar.finish_and_clear();
    let report = report?;
    let chart = PhaseChart::from_report(&report);
    let pictures = charts
        .into_iter()
        .map(|(file, format)| Ok((file, chart.render(format, args.chart_size)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    crate::commit(out, &report.serialize(args.format.into()))?;
    for (file, bytes) in pictures {
        crate::commit(file, &bytes)?;
    }
    Ok(())
}
