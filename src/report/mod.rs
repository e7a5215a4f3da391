//! Turning a [`Report`] into bytes: one module per format behind [`Exporter`], whose
//! `serialize` is pure so every format can be snapshot-tested. Writing happens elsewhere
//! ([`crate::output`] or stdout), in one place.

mod calls;
mod csv;
pub mod html;
mod json;
mod servers;
mod table;
mod work;

pub use self::calls::{
    call_loop_scenario, series_csv, SERIES_COLUMNS, SERIES_SERVED_COLUMN, SERIES_SERVER_COLUMN,
    SERIES_TAB_COLUMN,
};
/// The columns of a run's `--format csv`, in order (`plot` recognises a run's table by them).
pub use self::csv::COLUMNS as CSV_COLUMNS;
pub use self::csv::{call_metric_values, CsvExporter, CALL_METRICS};
pub use self::json::JsonExporter;
pub use self::table::TableExporter;

use crate::experiment::Report;

/// A failure to serialise (only possible through a bug in a serialiser).
#[derive(Debug, thiserror::Error)]
#[error("cannot serialise the report: {0}")]
pub struct ReportError(String);

/// A format of the report.
pub trait Exporter {
    /// The whole output for `report`.
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError>;
}

/// The formats `--format` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// An aligned text table for people.
    #[default]
    Table,
    /// One JSON object with a `results` array.
    Json,
    /// One CSV row per strategy (no histogram).
    Csv,
}

impl Format {
    /// The serialiser of this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Table => Box::new(TableExporter),
            Format::Json => Box::new(JsonExporter),
            Format::Csv => Box::new(CsvExporter),
        }
    }
}

/// The table columns of a run with browser tabs, after the others.
const TAB_HEADER: [&str; 4] = ["hidden tabs", "sent hidden", "paused", "early"];

/// The browser-tab cells of a summary (`-` where not counted), or nothing for a report
/// without tabs.
fn tab_cells(report: &Report, s: &crate::metrics::Summary) -> Vec<String> {
    if !report
        .results
        .iter()
        .any(|r| r.summary.hidden_clients.is_some())
    {
        return Vec::new();
    }
    [
        s.hidden_clients,
        s.retries_while_hidden,
        s.paused,
        s.early_retries,
    ]
    .iter()
    .map(|c| c.map_or_else(|| "-".to_string(), |n| n.to_string()))
    .collect()
}

/// The browser-tab column names, when the report has tabs.
fn tab_header(report: &Report) -> Vec<&'static str> {
    match report
        .results
        .iter()
        .any(|r| r.summary.hidden_clients.is_some())
    {
        true => TAB_HEADER.to_vec(),
        false => Vec::new(),
    }
}

/// Seconds for people: up to three decimals, trailing zeros dropped (`1s`, `0.3s`, `14.723s`).
pub fn seconds(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}s")
}

/// `1 client`, `2 clients`: a count and its noun, singular for one.
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    match n.into() {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// ` made with probability 0.5` after the retries of a run whose retries are made with a
/// probability below 1 (`--retry-probability`), else nothing.
pub(crate) fn retry_probability(result: &crate::experiment::RunResult) -> String {
    result
        .retry_probability
        .map_or(String::new(), |p| format!(" made with probability {p}"))
}

/// `value` with `decimals` places, never `-0.0`: a value that rounds to zero is written `0`.
pub fn fixed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => text,
    }
}

/// A difference with its sign (`+2.6`, `-0.6`), and no sign when it rounds to zero (`0.0`).
pub fn signed(value: f64, decimals: usize) -> String {
    let text = fixed(value, decimals);
    match text.starts_with('-') || text.chars().all(|c| c == '0' || c == '.') {
        true => text,
        false => format!("+{text}"),
    }
}

/// Rows as aligned text: the first `left` columns left-aligned, the others right-aligned, two
/// spaces between columns, a rule of dashes under the first row (the header).
pub fn aligned(rows: &[Vec<String>], left: usize) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                if c < left {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_and_differences_read_as_written_by_hand() {
        assert_eq!(super::counted(1u32, "client", "clients"), "1 client");
        assert_eq!(super::counted(1000u32, "client", "clients"), "1000 clients");
        assert_eq!(super::fixed(-0.04, 1), "0.0");
        assert_eq!(super::fixed(-0.06, 1), "-0.1");
        assert_eq!(super::signed(-0.04, 1), "0.0");
        assert_eq!(super::signed(2.56, 1), "+2.6");
        assert_eq!(super::signed(0.0, 0), "0");
        assert_eq!(super::signed(-6.0, 0), "-6");
    }
}
