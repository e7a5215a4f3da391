//! A column's name in words for titles, axes and legends (`peak` is "most retries in one
//! window"), its `--aggregate` statistic, and where a linear axis of it starts. Separate
//! because it is vocabulary shared by the chart's titles and axes, not layout or grouping.

/// `column` without an `--aggregate` statistic suffix, and the suffix (`""` when none).
pub(super) fn statistic_of(column: &str) -> (&str, &str) {
    for suffix in ["_mean", "_sd", "_min", "_max", "_ci95_low", "_ci95_high"] {
        if let Some(stem) = column.strip_suffix(suffix).filter(|s| !s.is_empty()) {
            return (stem, suffix);
        }
    }
    (column, "")
}

/// Where a linear axis of `column` (without its statistic) starts when no value is below it:
/// 1 for `amplification` (attempts per call: every call makes one), else 0.
pub(super) fn floor(column: &str) -> f64 {
    match column {
        "amplification" => 1.0,
        _ => 0.0,
    }
}

/// `text` with its first letter upper case.
pub(super) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// An axis name: what the column means, in words, and the scale.
pub(super) fn axis_name(column: &str, log: bool) -> String {
    let name = readable(column);
    if log {
        format!("{name} (log scale)")
    } else {
        name
    }
}

/// What a column of a run, a sweep or an `--aggregate` sweep means, in words (`peak` is "most
/// retries in one window", `span_s_mean` "span, first retry to last (s), mean over seeds");
/// another column's name with `_s` read as seconds, `_pct` as percent and `_` as spaces.
pub(crate) fn readable(column: &str) -> String {
    const STATISTICS: [(&str, &str); 6] = [
        ("_mean", "mean over seeds"),
        ("_sd", "sd over seeds"),
        ("_min", "min over seeds"),
        ("_max", "max over seeds"),
        ("_ci95_low", "95 % interval, low end"),
        ("_ci95_high", "95 % interval, high end"),
    ];
    for (suffix, statistic) in STATISTICS {
        if let Some(stem) = column.strip_suffix(suffix) {
            if !stem.is_empty() {
                return format!("{}, {statistic}", readable(stem));
            }
        }
    }
    let known = match column {
        "clients" => "clients",
        "retries" => "retries per client",
        "base_s" => "base delay (s)",
        "cap_s" => "cap (s)",
        "bin_s" => "window width (s)",
        "items" => "items per client",
        "latency_s" => "round trip (s)",
        "limit" => "limit (requests per window)",
        "window_s" => "limiter window (s)",
        "seeds" => "seeds per cell",
        "peak" => "most retries in one window",
        "peak_window_s" => "start of the busiest window (s)",
        "windows" => "windows with a retry",
        "span_s" => "span, first retry to last (s)",
        "total" => "retries (all clients)",
        "requests" => "requests, first attempts included",
        "refused" => "requests refused",
        "succeeded" => "clients served",
        "gave_up" => "clients that gave up",
        "last_success_s" => "last success (s)",
        "completed" => "clients that fetched all their work",
        "wasted_pct" => "wasted: refused / requests (%)",
        "finish_s" => "finish, last client done (s)",
        "finish_spread_s" => "finish spread, latest − earliest client (s)",
        "attempts" => "attempts (failed ones included)",
        "calls" => "calls",
        "amplification" => "attempts per call",
        "goodput_pct" => "calls that succeeded (%)",
        "failure_rate" => "failure rate",
        "timed_out" => "attempts timed out",
        "refusals_read" => "refusals read in time",
        "latency_p50_s" => "p50 latency of successful attempts (s)",
        "latency_p99_s" => "p99 latency of successful attempts (s)",
        "abandoned_work_s" => "server time on answers nobody read (s)",
        "recovered_at_s" => "recovered at (s)",
        "stuck" => "runs that never recover (fraction)",
        "retries_denied" => "retries denied by the retry control",
        "calls_rejected_locally" => "calls rejected locally",
        "rate_per_s" => "call rate (per s)",
        "multiplier" => "backoff multiplier",
        "hidden" => "tabs hidden at t = 0 (fraction)",
        "retries_while_hidden" => "retries sent by hidden tabs",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    let (stem, unit) = if let Some(stem) = column.strip_suffix("_s") {
        (stem, " (s)")
    } else if let Some(stem) = column.strip_suffix("_pct") {
        (stem, " (%)")
    } else {
        (column, "")
    };
    let stem = if stem.is_empty() { column } else { stem };
    format!("{}{unit}", stem.replace('_', " "))
}
