//! The text table people read: one line describing the scenario, then one aligned row per
//! strategy. Outcome columns (succeeded, gave up, last success) appear when the server
//! recovers, since against a server that stays down every client gives up. Call-loop runs get
//! their own table (`calls.rs`), work against limiters theirs (`work.rs`).

use super::{seconds, Exporter, ReportError};
use crate::experiment::Report;
use crate::time::SimDuration;

/// Serialises the report as an aligned text table.
pub struct TableExporter;

impl Exporter for TableExporter {
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let Some(first) = report.results.first() else {
            return Ok(b"no results\n".to_vec());
        };
        if super::calls::is_call_report(report) {
            return Ok(super::calls::calls_table(report).into_bytes());
        }
        if super::work::is_work_report(report) {
            return Ok(super::work::work_table(report).into_bytes());
        }
        let recovers = report.results.iter().any(|r| r.summary.succeeded > 0)
            || first.server.contains("recovers");
        let mut header = vec![
            "strategy", "clients", "retries", "peak", "peak at", "windows", "span", "total",
        ];
        if recovers {
            header.extend(["succeeded", "gave up", "last success"]);
        }
        header.extend(super::tab_header(report));
        header.push("seed");
        let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
        for r in &report.results {
            let s = &r.summary;
            let mut row = vec![
                r.strategy.name().to_string(),
                r.clients.to_string(),
                r.retries.to_string(),
                s.peak.to_string(),
                seconds(s.peak_window_s),
                s.windows.to_string(),
                seconds(s.span_s),
                s.total.to_string(),
            ];
            if recovers {
                row.push(s.succeeded.to_string());
                row.push(s.gave_up.to_string());
                row.push(s.last_success_s.map(seconds).unwrap_or_else(|| "-".into()));
            }
            row.extend(super::tab_cells(report, s));
            row.push(r.seed.to_string());
            rows.push(row);
        }
        let mut out = format!(
            "{}, {}{}, base {}, cap {}, multiplier {}, {} windows, server {}\n\n",
            super::counted(first.clients, "client", "clients"),
            super::counted(first.retries, "retry", "retries"),
            super::retry_probability(first),
            seconds(first.base_s),
            seconds(first.cap_s),
            first.multiplier,
            SimDuration::from_nanos((first.bin_s * 1e9).round() as u64),
            first.server,
        );
        out.push_str(&super::aligned(&rows, 1));
        Ok(out.into_bytes())
    }
}
