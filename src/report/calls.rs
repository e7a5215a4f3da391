//! Call-loop runs in words and rows: the text table (the scenario in a few lines, then one row
//! of summary figures per strategy) and the series as tidy CSV rows for `--series-out`. Pure
//! formatting of a [`Report`].

use super::{fixed, seconds, ReportError};
use crate::experiment::{Report, RunResult};
use crate::overload::CallLoopResult;

/// True when the report is of call-loop runs.
pub(super) fn is_call_report(report: &Report) -> bool {
    report.results.iter().any(|r| r.calls.is_some())
}

/// The columns of `--series-out`, in order; a run with browser tabs adds
/// [`SERIES_TAB_COLUMN`] after `attempts`.
pub const SERIES_COLUMNS: [&str; 12] = [
    "strategy",
    "window_start_s",
    "calls_started",
    "attempts",
    "succeeded",
    "timed_out",
    "refused",
    "in_system",
    "latency_p50_s",
    "latency_p99_s",
    "retries_denied",
    "rejected_locally",
];

/// The column of `--series-out` a run with browser tabs adds after `attempts`: the attempts
/// sent by tabs hidden at the instant they sent.
pub const SERIES_TAB_COLUMN: &str = "attempts_hidden";

/// The column of `--series-out` a pool's run adds after `strategy`: `all` on the pool's rows,
/// the server's number (from 1) on each server's.
pub const SERIES_SERVER_COLUMN: &str = "server";

/// The column of `--series-out` a pool's run adds last: the requests the server served in the
/// window (late ones included), empty on the pool's rows.
pub const SERIES_SERVED_COLUMN: &str = "served";

/// `recovered at`: the time, `stuck` when a run with a trigger never recovers, `-` without a
/// trigger.
fn recovery(c: &CallLoopResult) -> String {
    match (c.trigger_end_s, c.recovered_at_s) {
        (None, _) => "-".into(),
        (Some(_), None) => "stuck".into(),
        (Some(_), Some(t)) => seconds(t),
    }
}

fn latency(value: Option<f64>) -> String {
    value.map(seconds).unwrap_or_else(|| "-".into())
}

/// The scenario of a call-loop report in the three lines the table opens with: the load, the
/// server and its triggers, the clients and their backoff. `None` when the report's first
/// result is not a call-loop run. The series chart's title reads the same lines.
pub fn call_loop_scenario(report: &Report) -> Option<[String; 3]> {
    let first = report.results.first()?;
    let c = first.calls.as_ref()?;
    let processes = super::counted(first.clients, "client process", "client processes");
    Some([
        format!("load: {} ({processes})", c.load),
        format!("server: {}; triggers: {}", first.server, c.triggers),
        format!(
            "clients: {}; {}{}, base {}, cap {}, multiplier {}",
            c.client,
            super::counted(first.retries, "retry", "retries"),
            super::retry_probability(first),
            seconds(first.base_s),
            seconds(first.cap_s),
            first.multiplier,
        ),
    ])
}

/// The whole table.
pub(super) fn calls_table(report: &Report) -> String {
    let first = &report.results[0];
    let (Some(c), Some(scenario)) = (first.calls.as_ref(), call_loop_scenario(report)) else {
        return String::new();
    };
    let mut out = String::new();
    for line in scenario {
        out.push_str(&line);
        out.push('\n');
    }
    let watched = match c.trigger_end_s {
        Some(end) => format!(
            "recovered: at W, after the last trigger ends ({}), when from W to the end of the \
             load (judged to {} at least) every {} of windows with answers has <= 10% \
             failures among them, and from W on succeeded >= 90% of calls started; else stuck",
            seconds(end),
            seconds(end + c.settle_s),
            seconds(c.recovery_hold_s)
        ),
        None => "no trigger, so no recovery time".to_string(),
    };
    out.push_str(&format!(
        "series: {} windows; {watched}\n",
        seconds(c.series_bin_s)
    ));
    match first.over_replicates {
        Some(o) => out.push_str(&format!(
            "seed {}: replicate 0 of {} (the JSON has the spread of the others)\n\n",
            first.seed, o.replicates
        )),
        None => out.push_str(&format!("seed {}\n\n", first.seed)),
    }
    let header = [
        "strategy",
        "calls",
        "attempts",
        "amplification",
        "goodput",
        "timed out",
        "refused",
        "p50",
        "p99",
        "abandoned work",
        "recovered at",
    ];
    // Runs with retry controls also show what they denied and rejected.
    let controlled = report
        .results
        .iter()
        .any(|r| r.calls.as_ref().is_some_and(|c| c.controlled));
    let mut header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    if controlled {
        header.extend(["retries denied".to_string(), "rejected locally".to_string()]);
    }
    // Layered runs show each layer's attempts per call, outermost first.
    let layered = report
        .results
        .iter()
        .any(|r| r.calls.as_ref().is_some_and(|c| !c.layers.is_empty()));
    if layered {
        header.push("per layer".to_string());
    }
    header.extend(super::tab_header(report).iter().map(|h| h.to_string()));
    let mut rows: Vec<Vec<String>> = vec![header];
    for r in &report.results {
        let Some(c) = r.calls.as_ref() else { continue };
        let mut row = vec![
            r.strategy.name().to_string(),
            c.calls.to_string(),
            c.attempts.to_string(),
            fixed(c.amplification, 2),
            format!("{}%", fixed(c.goodput_pct, 1)),
            c.timed_out.to_string(),
            c.refusals_read.to_string(),
            latency(c.latency_p50_s),
            latency(c.latency_p99_s),
            seconds(c.abandoned_work_s),
            recovery(c),
        ];
        if controlled {
            row.extend([
                c.retries_denied.to_string(),
                c.calls_rejected_locally.to_string(),
            ]);
        }
        if layered {
            let each: Vec<String> = c.layers.iter().map(|l| fixed(l.amplification, 2)).collect();
            row.push(each.join(" x "));
        }
        row.extend(super::tab_cells(report, &r.summary));
        rows.push(row);
    }
    out.push_str(&super::aligned(&rows, 1));
    out.push_str(&super::servers::servers_table(report));
    out
}

/// One result's series rows, strategy first; with `pooled`, the server column after it
/// (`all`) and an empty served column last.
fn series_rows<'a>(
    r: &'a RunResult,
    c: &'a CallLoopResult,
    tabs: bool,
    pooled: bool,
) -> impl Iterator<Item = (u64, Vec<String>)> + 'a {
    let strategy = r.strategy.name();
    let quantile = |v: Option<u64>| {
        v.map(|ns| crate::time::SimDuration(ns).as_secs_f64().to_string())
            .unwrap_or_default()
    };
    c.series.rows.iter().map(move |row| {
        let mut cells = vec![strategy.to_string()];
        if pooled {
            cells.push("all".to_string());
        }
        cells.extend([
            c.series.start_s(row).to_string(),
            row.calls_started.to_string(),
            row.attempts.to_string(),
        ]);
        if tabs {
            cells.push(row.attempts_hidden.to_string());
        }
        cells.extend([
            row.succeeded.to_string(),
            row.timed_out.to_string(),
            row.refused.to_string(),
            row.in_system.to_string(),
            quantile(row.latency_p50_ns),
            quantile(row.latency_p99_ns),
            row.retries_denied.to_string(),
            row.rejected_locally.to_string(),
        ]);
        if pooled {
            cells.push(String::new());
        }
        (row.window, cells)
    })
}

/// One server's row of one window in the pool's columns: what is not a server's (calls
/// started, latencies, hidden tabs' attempts, denials, local rejections) empty.
fn server_cells(
    r: &RunResult,
    s: &crate::overload::ServerResult,
    row: &crate::server::ServerWindow,
    tabs: bool,
) -> Vec<String> {
    let mut cells = vec![
        r.strategy.name().to_string(),
        s.server.to_string(),
        s.series.start_s(row).to_string(),
        String::new(),
        row.attempts.to_string(),
    ];
    if tabs {
        cells.push(String::new());
    }
    cells.extend([
        row.succeeded.to_string(),
        row.timed_out.to_string(),
        row.refused.to_string(),
        row.in_system.to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        row.served.to_string(),
    ]);
    cells
}

/// The series of every strategy as tidy CSV: a header ([`SERIES_COLUMNS`], with
/// [`SERIES_TAB_COLUMN`] when a run models browser tabs), then one row per strategy and written
/// window, strategies in report order, windows in time order. Windows
/// left out of the series (nothing happened, the server empty) are all zeros; a latency is
/// empty in a window without successes.
///
/// A pool's run (`--servers N`) adds [`SERIES_SERVER_COLUMN`] after `strategy` and
/// [`SERIES_SERVED_COLUMN`] last: each window's row of the pool as a whole (server `all`, as
/// without a pool, its served empty) is followed by one row per server (`1` to `N`) for the
/// windows of the servers' series ([`crate::overload::ServerSeries`]), the columns that are
/// not a server's left empty. Summed over its servers, a window's attempts, succeeded,
/// timed_out, refused and in_system are the pool's.
pub fn series_csv(report: &Report) -> Result<Vec<u8>, ReportError> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let fail = |e: ::csv::Error| ReportError(e.to_string());
    let tabs = report
        .results
        .iter()
        .any(|r| r.calls.as_ref().is_some_and(|c| c.series.tabs));
    let pooled = report
        .results
        .iter()
        .any(|r| r.calls.as_ref().is_some_and(|c| !c.servers.is_empty()));
    let mut header: Vec<&str> = SERIES_COLUMNS.to_vec();
    if tabs {
        header.insert(4, SERIES_TAB_COLUMN);
    }
    if pooled {
        header.insert(1, SERIES_SERVER_COLUMN);
        header.push(SERIES_SERVED_COLUMN);
    }
    writer.write_record(&header).map_err(fail)?;
    for r in &report.results {
        let Some(c) = &r.calls else { continue };
        if c.servers.is_empty() {
            for (_, row) in series_rows(r, c, tabs, pooled) {
                writer.write_record(row).map_err(fail)?;
            }
            continue;
        }
        // The pool's rows and the servers' (every server has the same windows), merged by
        // window: the pool's first.
        let windows = c.servers[0].series.rows.len();
        let mut pool = series_rows(r, c, tabs, true).peekable();
        let mut j = 0;
        loop {
            let server_window = (j < windows).then(|| c.servers[0].series.rows[j].window);
            match (pool.peek(), server_window) {
                (None, None) => break,
                (Some(&(w, _)), s) if s.is_none_or(|s| w <= s) => {
                    let (_, row) = pool.next().expect("peeked");
                    writer.write_record(row).map_err(fail)?;
                }
                _ => {
                    for s in &c.servers {
                        if let Some(row) = s.series.rows.get(j) {
                            writer
                                .write_record(server_cells(r, s, row, tabs))
                                .map_err(fail)?;
                        }
                    }
                    j += 1;
                }
            }
        }
    }
    writer.into_inner().map_err(|e| ReportError(e.to_string()))
}
