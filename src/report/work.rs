//! The text table of runs that do work against a rate limiter (or with several items, or with
//! latency): requests, refusals, waste and finish times per strategy, as mean and range when
//! there are replicates; then, when the scenario carries published figures, ours beside theirs
//! with the difference. Pure formatting of a [`Report`].

use super::seconds;
use crate::config::Published;
use crate::experiment::{Report, RunResult};
use crate::metrics::Spread;

/// True when a report is about work rather than Experiment 1's herd against a down server.
pub(super) fn is_work_report(report: &Report) -> bool {
    report.results.iter().any(|r| {
        !r.server.starts_with("down")
            || r.work != "1 item each"
            || r.latency != "0s"
            || r.over_replicates.is_some()
    })
}

/// The whole table.
pub(super) fn work_table(report: &Report) -> String {
    let first = &report.results[0];
    let replicated = first.over_replicates.map(|o| o.replicates);
    let mut out = format!(
        "{}, {}, latency {}, {} retries per item, base {}, cap {}, server {}\n",
        super::counted(first.clients, "client", "clients"),
        first.work,
        first.latency,
        first.retries,
        seconds(first.base_s),
        seconds(first.cap_s),
        first.server,
    );
    match replicated {
        Some(n) => out.push_str(&format!(
            "mean [min, max] over {n} replicates (epoch phase spread over the second, derived seeds)\n\n"
        )),
        None => out.push_str(&format!("seed {}\n\n", first.seed)),
    }
    let mut header = vec![
        "strategy", "requests", "refused", "wasted", "finish", "spread", "gave up",
    ];
    header.extend(super::tab_header(report));
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    // One client has no spread between clients to show.
    let spread = |text: String| match first.clients {
        1 => "-".to_string(),
        _ => text,
    };
    for r in &report.results {
        let s = &r.summary;
        let mut row = match r.over_replicates {
            Some(o) => vec![
                r.strategy.name().to_string(),
                counts(o.requests),
                counts(o.refused),
                ranged(o.wasted_pct, 1, "%"),
                ranged(o.finish_s, 1, "s"),
                spread(ranged(o.finish_spread_s, 1, "s")),
                s.gave_up.to_string(),
            ],
            None => vec![
                r.strategy.name().to_string(),
                s.requests.to_string(),
                s.refused.to_string(),
                format!("{:.1}%", s.wasted_pct),
                seconds(s.finish_s),
                spread(seconds(s.finish_spread_s)),
                s.gave_up.to_string(),
            ],
        };
        row.extend(super::tab_cells(report, s));
        rows.push(row);
    }
    out.push_str(&super::aligned(&rows, 1));
    out.push_str(&client_finishes(report));
    if report.results.iter().any(|r| r.published.is_some()) {
        out.push_str("\nbeside the published figures (difference = ours - published):\n\n");
        out.push_str(&super::aligned(&published_rows(report), 3));
    }
    out
}

/// Runs of at most this many clients list each client's finish under the table.
const LISTED_CLIENTS: u32 = 10;

/// Each client's finish time, a row per strategy, for runs of a few clients (the JSON has
/// them up to [`crate::metrics::MAX_CLIENT_FINISHES`]); empty otherwise.
fn client_finishes(report: &Report) -> String {
    let first = &report.results[0];
    if first.clients > LISTED_CLIENTS || first.clients < 2 {
        return String::new();
    }
    let mut header = vec!["strategy".to_string()];
    header.extend((0..first.clients).map(|c| format!("client {c}")));
    let mut rows = vec![header];
    for r in &report.results {
        let Some(finishes) = &r.client_finish_s else {
            return String::new();
        };
        let mut row = vec![r.strategy.name().to_string()];
        row.extend(
            finishes
                .iter()
                .map(|t| t.map_or_else(|| "-".to_string(), super::seconds)),
        );
        rows.push(row);
    }
    let whose = match first.over_replicates {
        Some(_) => format!("replicate 0, seed {}", first.seed),
        None => format!("seed {}", first.seed),
    };
    format!(
        "\neach client's finish ({whose}):\n\n{}",
        super::aligned(&rows, 1)
    )
}

fn published_rows(report: &Report) -> Vec<Vec<String>> {
    let mut rows = vec![[
        "strategy",
        "published as",
        "figure",
        "ours",
        "published",
        "difference",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect::<Vec<_>>()];
    for r in &report.results {
        let Some(p) = &r.published else { continue };
        for (figure, ours, theirs, unit) in figures(r, p) {
            let Some(theirs) = theirs else { continue };
            // Counts are whole when both are (no replicates, or all agreeing); everything
            // else, and both columns and the difference alike, to one decimal.
            let whole = |x: f64| (x - x.round()).abs() < 1e-9;
            let decimals = match unit.is_empty() && whole(ours) && whole(theirs) {
                true => 0,
                false => 1,
            };
            rows.push(vec![
                r.strategy.name().to_string(),
                p.label.clone().unwrap_or_default(),
                figure.to_string(),
                format!("{}{unit}", super::fixed(ours, decimals)),
                format!("{}{unit}", super::fixed(theirs, decimals)),
                format!("{}{unit}", super::signed(ours - theirs, decimals)),
            ]);
        }
    }
    rows
}

/// (figure, ours — the mean over replicates when there are several —, published, unit).
fn figures(r: &RunResult, p: &Published) -> [(&'static str, f64, Option<f64>, &'static str); 5] {
    let s = &r.summary;
    let (requests, refused, wasted, finish, spread) = match r.over_replicates {
        Some(o) => (
            o.requests.mean,
            o.refused.mean,
            o.wasted_pct.mean,
            o.finish_s.mean,
            o.finish_spread_s.mean,
        ),
        None => (
            s.requests as f64,
            s.refused as f64,
            s.wasted_pct,
            s.finish_s,
            s.finish_spread_s,
        ),
    };
    [
        ("requests", requests, p.requests, ""),
        ("refused", refused, p.refused, ""),
        ("wasted", wasted, p.wasted_pct, "%"),
        ("finish", finish, p.finish_s, "s"),
        ("finish spread", spread, p.finish_spread_s, "s"),
    ]
}

/// A count over replicates: `47.4 [47, 49]` (the extremes are whole), or `46` when every
/// replicate agreed.
fn counts(s: Spread) -> String {
    if s.min == s.max {
        return super::fixed(s.mean, 0);
    }
    format!(
        "{} [{}, {}]",
        super::fixed(s.mean, 1),
        super::fixed(s.min, 0),
        super::fixed(s.max, 0)
    )
}

/// `51.3 [47, 55]`; just the value when every replicate agreed.
fn ranged(s: Spread, decimals: usize, unit: &str) -> String {
    if s.min == s.max {
        return format!("{:.decimals$}{unit}", s.mean);
    }
    format!(
        "{:.decimals$}{unit} [{:.decimals$}, {:.decimals$}]",
        s.mean, s.min, s.max
    )
}
