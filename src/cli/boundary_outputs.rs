//! The pictures and page `herd-sim boundary` writes beside its report (`--png`, `--svg`, `--html`): checked before
//! any run, so a bad extension or two outputs naming one file fail at once.

use std::path::Path;

use herd_sim::boundary::BoundaryError;
use herd_sim::chart::ImageFormat;
use herd_sim::config::ConfigError;
use herd_sim::output::OutputTarget;

use super::BoundaryArgs;

impl BoundaryArgs {
    /// The charts asked for, each with its format, once every path is checked: the extension
    /// fits the flag, and no two outputs (the report's `--out` among them) name one file or
    /// both standard output. A device such as `/dev/null` may take several.
    pub fn charts(&self) -> anyhow::Result<Vec<(&Path, ImageFormat)>> {
        if let (Some(size), None, None) = (self.chart_size, &self.png, &self.svg) {
            return Err(ConfigError::Invalid {
                field: "--chart-size",
                value: size.to_string(),
                accepted: "accepted: only with --png or --svg (it shapes the chart they draw)"
                    .into(),
            }
            .into());
        }
        let target = super::outputs::check_output;
        let mut taken = vec![("--out", target("--out", &self.out)?)];
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
            let this = target(flag, path)?;
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
