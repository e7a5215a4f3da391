//! The report's charts: one SVG a scenario some band names ([`crate::chart::bands`]), in a
//! folder beside the report named after the report file (`policy-report-charts/` for
//! `policy-report.toml`), linked from the Markdown by a relative path. Their names come from
//! the report file alone, so they are known (and their files opened) before anything runs.

use crate::chart::bands::bands_svg;
use crate::chart::ChartError;

use super::{PolicyReport, ReportFile};

/// One chart of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportChart {
    /// The scenario it draws.
    pub scenario: String,
    /// Its path relative to the report's folder, `/`-separated (`policy-report-charts/herd-down.svg`).
    pub link: String,
}

/// The charts' folder for the report file named `file_name`: its stem and `-charts`.
pub fn folder(file_name: &str) -> String {
    let stem = std::path::Path::new(file_name)
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    format!("{}-charts", file_name_part(&stem))
}

/// `text` as a portable file name: letters, digits, `-`, `_` and `.` kept, anything else
/// `-`; never empty and never starting with a dot.
fn file_name_part(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        format!("scenario{name}")
    } else {
        name
    }
}

/// The charts of `file`: one a scenario that some band names (or every scenario, for a band
/// without one), in file order; two ids that give one file name (ignoring case, as some file
/// systems do) are told apart by `-2`, `-3`, ...
pub fn charts(file: &ReportFile) -> Vec<ReportChart> {
    let file_name = file
        .path
        .file_name()
        .map_or_else(|| "report".into(), |n| n.to_string_lossy().into_owned());
    let folder = folder(&file_name);
    let mut taken: Vec<String> = Vec::new();
    let mut charts = Vec::new();
    for s in &file.scenarios {
        if !file
            .bands
            .iter()
            .any(|b| b.scenario.as_ref().is_none_or(|id| *id == s.id))
        {
            continue;
        }
        let base = file_name_part(&s.id);
        let mut name = base.clone();
        let mut n = 1;
        while taken.contains(&name.to_lowercase()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        taken.push(name.to_lowercase());
        charts.push(ReportChart {
            scenario: s.id.clone(),
            link: format!("{folder}/{name}.svg"),
        });
    }
    charts
}

/// The bytes of `chart`, drawn from `report`'s figures.
pub fn render(report: &PolicyReport, chart: &ReportChart) -> Result<Vec<u8>, ChartError> {
    Ok(bands_svg(report, &chart.scenario)?.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_portable_and_distinct() {
        assert_eq!(folder("policy-report.toml"), "policy-report-charts");
        assert_eq!(folder("my report.json"), "my-report-charts");
        assert_eq!(file_name_part("../up"), "scenario..-up");
        assert_eq!(file_name_part("a/b c"), "a-b-c");
        assert_eq!(file_name_part(""), "scenario");
        assert_eq!(file_name_part("Ünïcode"), "-n-code");
    }
}
