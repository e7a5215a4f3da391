//! CSV: a header and one row per strategy with every summary figure; the histograms are left
//! out (they have a row's worth of columns of their own; use JSON for them). Columns added
//! after Experiment 1's come last, so older readers keep working.

use super::{Exporter, ReportError};
use crate::experiment::Report;

/// The CSV columns, in order.
pub const COLUMNS: [&str; 25] = [
    "strategy",
    "clients",
    "retries",
    "base_s",
    "cap_s",
    "multiplier",
    "bin_s",
    "server",
    "seed",
    "peak",
    "peak_window_s",
    "windows",
    "span_s",
    "total",
    "requests",
    "refused",
    "succeeded",
    "gave_up",
    "last_success_s",
    "work",
    "latency",
    "completed",
    "wasted_pct",
    "finish_s",
    "finish_spread_s",
];

/// The columns added after [`COLUMNS`] when the runs have browser tabs.
pub const BROWSER_COLUMNS: [&str; 4] = [
    "hidden_clients",
    "retries_while_hidden",
    "paused",
    "early_retries",
];

/// Serialises the report as CSV.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        let fail = |e: ::csv::Error| ReportError(e.to_string());
        let tabs = report
            .results
            .iter()
            .any(|r| r.summary.hidden_clients.is_some());
        let mut header = COLUMNS.to_vec();
        if tabs {
            header.extend(BROWSER_COLUMNS);
        }
        writer.write_record(&header).map_err(fail)?;
        for r in &report.results {
            let s = &r.summary;
            let mut record = vec![
                r.strategy.name().to_string(),
                r.clients.to_string(),
                r.retries.to_string(),
                r.base_s.to_string(),
                r.cap_s.to_string(),
                r.multiplier.to_string(),
                r.bin_s.to_string(),
                r.server.clone(),
                r.seed.to_string(),
                s.peak.to_string(),
                s.peak_window_s.to_string(),
                s.windows.to_string(),
                s.span_s.to_string(),
                s.total.to_string(),
                s.requests.to_string(),
                s.refused.to_string(),
                s.succeeded.to_string(),
                s.gave_up.to_string(),
                s.last_success_s.map(|t| t.to_string()).unwrap_or_default(),
                r.work.clone(),
                r.latency.clone(),
                s.completed.to_string(),
                s.wasted_pct.to_string(),
                s.finish_s.to_string(),
                s.finish_spread_s.to_string(),
            ];
            if tabs {
                let count = |c: Option<u64>| c.map(|n| n.to_string()).unwrap_or_default();
                record.extend([
                    count(s.hidden_clients),
                    count(s.retries_while_hidden),
                    count(s.paused),
                    count(s.early_retries),
                ]);
            }
            writer.write_record(&record).map_err(fail)?;
        }
        writer.into_inner().map_err(|e| ReportError(e.to_string()))
    }
}
