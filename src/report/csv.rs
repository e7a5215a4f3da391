//! CSV: a header and one row per strategy with every summary figure; the histograms are left
//! out (they have a row's worth of columns of their own; use JSON for them). Columns added
//! after Experiment 1's come last, so older readers keep working: a call-loop run's
//! ([`CALL_METRICS`], shared with the sweep's rows), then the browser tabs'.

use super::{Exporter, ReportError};
use crate::experiment::Report;
use crate::overload::CallLoopResult;

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

/// The metric columns a call-loop run adds, in order: a single run's CSV after [`COLUMNS`]
/// and `attempts`, a sweep's after [`Summary`](crate::metrics::Summary)'s (`attempts` among them).
/// `recovered_at_s` is empty when the run has no trigger or never recovers; `stuck` is 1 when
/// it has a trigger and is collapsed by the verdict ([`crate::series::verdict_rule`]), 0 when
/// it recovers, empty without a trigger, so its aggregate mean is the fraction of seeds that
/// collapse (a collapse probability).
/// `retries_denied` and `calls_rejected_locally` are the retry controls' counts (0 without).
pub const CALL_METRICS: [&str; 13] = [
    "calls",
    "amplification",
    "goodput_pct",
    "retries_denied",
    "calls_rejected_locally",
    "timed_out",
    "refusals_read",
    "dropped",
    "latency_p50_s",
    "latency_p99_s",
    "abandoned_work_s",
    "recovered_at_s",
    "stuck",
];

/// The fields of [`CALL_METRICS`] for one run (all empty for a run off the call loop).
pub fn call_metric_values(calls: Option<&CallLoopResult>) -> Vec<String> {
    let Some(c) = calls else {
        return vec![String::new(); CALL_METRICS.len()];
    };
    let optional = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    vec![
        c.calls.to_string(),
        c.amplification.to_string(),
        c.goodput_pct.to_string(),
        c.retries_denied.to_string(),
        c.calls_rejected_locally.to_string(),
        c.timed_out.to_string(),
        c.refusals_read.to_string(),
        c.dropped.to_string(),
        optional(c.latency_p50_s),
        optional(c.latency_p99_s),
        c.abandoned_work_s.to_string(),
        optional(c.recovered_at_s),
        match c.trigger_end_s {
            None => String::new(),
            Some(_) => u8::from(c.stuck()).to_string(),
        },
    ]
}

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
        // A call-loop run's columns, the JSON's and a sweep's: one schema for the three.
        let calls = report.results.iter().any(|r| r.calls.is_some());
        let mut header = COLUMNS.to_vec();
        if calls {
            header.push("attempts");
            header.extend(CALL_METRICS);
        }
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
            if calls {
                record.push(
                    r.calls
                        .as_ref()
                        .map_or(String::new(), |c| c.attempts.to_string()),
                );
                record.extend(call_metric_values(r.calls.as_ref()));
            }
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
