//! What a call-loop run reports ([`CallLoopResult`]): the summary figures of the
//! overload model in seconds and ratios, the scenario in words, and the per-window series,
//! serialised as one array per column without copying the rows ([`Series`]). Built from the
//! engine's [`OverloadTally`]; no formatting beyond the JSON shape, no I/O.

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

use crate::series::{OverloadTally, SeriesRow};
use crate::server::ServerWindow;
use crate::time::{SimDuration, SimTime};

/// Nanoseconds as seconds.
fn secs(ns: u64) -> f64 {
    SimDuration(ns).as_secs_f64()
}

/// The summary and series of one strategy's call-loop run. Field names are the JSON names;
/// they sit beside the herd summary's (`requests`, `succeeded`, `gave_up`, ...) in a result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallLoopResult {
    /// When calls start, as given: `herd at t = 0`, `poisson 40/s over 0s..80s, spike ...`.
    pub load: String,
    /// Timeout and network, as given: `timeout 3s, network exp:100ms each way`.
    pub client: String,
    /// Spikes, outages and degradations, as given, or `none`.
    pub triggers: String,
    /// Calls started.
    pub calls: u64,
    /// Attempts sent (first attempts and retries).
    pub attempts: u64,
    /// Attempts per call (0 without calls).
    pub amplification: f64,
    /// Calls that succeeded, percent of calls (0 without calls).
    pub goodput_pct: f64,
    /// Retries a strategy wanted that the process's budget or breaker denied (each ended its
    /// call).
    pub retries_denied: u64,
    /// Calls that ended rejected locally by an open breaker or a throttle, without the
    /// request they were to send.
    pub calls_rejected_locally: u64,
    /// True when the run or one of its layers had retry controls (`--budget`, `--breaker`,
    /// `--throttle`): the table then shows the two counts above. Not in the JSON (the counts
    /// are always there).
    #[serde(skip)]
    pub controlled: bool,
    /// Attempts abandoned at their timeout.
    pub timed_out: u64,
    /// Refusals read by their client in time (the series' `refused` summed). With
    /// `attempts`: attempts = succeeded + timed_out + refusals_read (runs go on until nothing
    /// is pending; a cancelling server's dropped requests time out first).
    pub refusals_read: u64,
    /// Requests a cancelling server (`--server-cancels`) dropped unserved and unanswered,
    /// their client gone: every request is in the served or the refused histogram, or here.
    pub dropped: u64,
    /// Answers (served or refused) that came after their attempt's timeout, ignored.
    pub late_answers: u64,
    /// Median send-to-answer time of the successful attempts, seconds (sketch, within 0.4 %);
    /// `null` without successes.
    pub latency_p50_s: Option<f64>,
    /// 99th percentile of the same.
    pub latency_p99_s: Option<f64>,
    /// Mean of the same (exact).
    pub latency_mean_s: Option<f64>,
    /// Server time spent on answers nobody read, seconds.
    pub abandoned_work_s: f64,
    /// When the last trigger (spike, outage, degradation) ends, seconds; `null` without one.
    pub trigger_end_s: Option<f64>,
    /// The collapse verdict ([`crate::series::verdict_rule`]): start of the window from which,
    /// after the last trigger, every window to the end of the load in which anything happens
    /// has successes for at least 90 % of its `calls_started` and at most 10 % failures among
    /// its answers, that window having successes and lying at least the recovery hold before
    /// the end; `null` when there is none (collapsed: "stuck") or the run has no trigger.
    pub recovered_at_s: Option<f64>,
    /// The series' window, seconds.
    pub series_bin_s: f64,
    /// How long the series must stay healthy to count as recovered, seconds.
    pub recovery_hold_s: f64,
    /// With layered retries, each layer's attempts and attempts per call made of it,
    /// outermost first (their product is `amplification`); left out without layers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<LayerResult>,
    /// How long calls kept starting after the last trigger ended, at least, seconds (the
    /// settle: `--settle`, or its default).
    pub settle_s: f64,
    /// With a server pool, each server's figures, the first (`server` 1) first; left out
    /// without a pool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerResult>,
    /// The per-window series.
    pub series: Series,
    /// When the calls held at once and the server's queue outgrew what the memory budget
    /// left them, seconds, and the call slots and queued requests then held: the run stopped
    /// there (see [`OverloadTally::outgrown`]). Not in the JSON: such a run is refused,
    /// nothing written.
    #[serde(skip)]
    pub outgrown: Option<(f64, u64, u64)>,
}

/// One server's figures in a pool's result: the attempts the balancer routed to it and how
/// each ended for its client (attempts = succeeded + refused + timed_out + in_flight), the
/// requests it served, late ones included, and the same window by window ([`ServerSeries`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerResult {
    /// Its number, from 1 (as `@server=K` names it).
    pub server: u32,
    /// Attempts routed to it.
    pub attempts: u64,
    /// Answered served before their timeout.
    pub succeeded: u64,
    /// Answered refused before their timeout.
    pub refused: u64,
    /// Timed out at their client.
    pub timed_out: u64,
    /// Still unanswered when the run ended (0: runs go on until nothing is pending).
    pub in_flight: u64,
    /// Requests it served, in time or late.
    pub served: u64,
    /// Its series: the windows of the run's series in which anything was counted at a server
    /// of the pool or a server held requests (every server has the same windows).
    pub series: ServerSeries,
}

/// One server's series: the rows the engine wrote ([`crate::server::ServerWindow`]; the
/// windows left out are zeros at every server). Serialised as one array per column,
/// `window_start_s` first, in window order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSeries {
    /// The window width.
    pub bin: SimDuration,
    /// The windows written, in order.
    pub rows: Vec<ServerWindow>,
}

impl ServerSeries {
    /// When window `row` starts, seconds.
    pub fn start_s(&self, row: &ServerWindow) -> f64 {
        SimDuration(row.window.saturating_mul(self.bin.as_nanos())).as_secs_f64()
    }
}

impl Serialize for ServerSeries {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rows = &self.rows[..];
        let count = |get: fn(&ServerWindow) -> u64| Column { rows, get };
        let mut s = serializer.serialize_struct("ServerSeries", 7)?;
        s.serialize_field(
            "window_start_s",
            &Column {
                rows,
                get: |r: &ServerWindow| self.start_s(r),
            },
        )?;
        s.serialize_field("attempts", &count(|r| r.attempts))?;
        s.serialize_field("succeeded", &count(|r| r.succeeded))?;
        s.serialize_field("refused", &count(|r| r.refused))?;
        s.serialize_field("timed_out", &count(|r| r.timed_out))?;
        s.serialize_field("served", &count(|r| r.served))?;
        s.serialize_field("in_system", &count(|r| r.in_system))?;
        s.end()
    }
}

/// One retry layer's figures in a result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LayerResult {
    /// The attempts it made: calls of the layer below, or requests for the innermost.
    pub attempts: u64,
    /// Its attempts per call made of it (0 without calls).
    pub amplification: f64,
}

impl CallLoopResult {
    /// The result of `tally`, described by `load`, `client` and `triggers`; `hold` and
    /// `settle` are the recovery hold and the settle the run used.
    pub fn new(
        tally: OverloadTally,
        load: String,
        client: String,
        triggers: String,
        hold: SimDuration,
        settle: SimDuration,
    ) -> Self {
        let ratio = |n: u64| {
            if tally.calls == 0 {
                0.0
            } else {
                n as f64 / tally.calls as f64
            }
        };
        let latency_mean_s = (tally.calls_succeeded > 0)
            .then(|| tally.latency_sum_ns as f64 / tally.calls_succeeded as f64 / 1e9);
        CallLoopResult {
            load,
            client,
            triggers,
            calls: tally.calls,
            attempts: tally.attempts,
            amplification: ratio(tally.attempts),
            goodput_pct: 100.0 * ratio(tally.calls_succeeded),
            retries_denied: tally.retries_denied,
            calls_rejected_locally: tally.calls_rejected_locally,
            controlled: false,
            timed_out: tally.timed_out,
            refusals_read: tally.refused,
            dropped: tally.dropped,
            late_answers: tally.late,
            latency_p50_s: tally.latency_p50_ns.map(secs),
            latency_p99_s: tally.latency_p99_ns.map(secs),
            latency_mean_s,
            abandoned_work_s: secs(tally.abandoned_work_ns),
            trigger_end_s: tally.trigger_end.map(SimTime::as_secs_f64),
            recovered_at_s: tally
                .trigger_end
                .and(tally.recovered_at)
                .map(SimTime::as_secs_f64),
            series_bin_s: tally.series_bin.as_secs_f64(),
            recovery_hold_s: hold.as_secs_f64(),
            layers: tally
                .layers
                .iter()
                .map(|l| LayerResult {
                    attempts: l.attempts,
                    amplification: if l.calls == 0 {
                        0.0
                    } else {
                        l.attempts as f64 / l.calls as f64
                    },
                })
                .collect(),
            settle_s: settle.as_secs_f64(),
            servers: tally
                .servers
                .iter()
                .zip(1..)
                .zip(
                    tally
                        .server_series
                        .into_iter()
                        .chain(std::iter::repeat_with(Vec::new)),
                )
                .map(|((c, server), rows)| ServerResult {
                    server,
                    attempts: c.attempts,
                    succeeded: c.succeeded,
                    refused: c.refused,
                    timed_out: c.timed_out,
                    in_flight: c.in_flight,
                    served: c.served,
                    series: ServerSeries {
                        bin: tally.series_bin,
                        rows,
                    },
                })
                .collect(),
            outgrown: tally
                .outgrown
                .map(|(at, calls, places)| (at.as_secs_f64(), calls, places)),
            series: Series {
                bin: tally.series_bin,
                rows: tally.rows,
                tabs: tally.tabs,
            },
        }
    }

    /// The same result, marked as run with retry controls or not.
    pub fn with_controls(self, controlled: bool) -> Self {
        CallLoopResult { controlled, ..self }
    }

    /// True when the run has a trigger and never recovered after it: collapsed.
    pub fn stuck(&self) -> bool {
        self.trigger_end_s.is_some() && self.recovered_at_s.is_none()
    }
}

/// The per-window series: the rows the engine wrote (windows in which nothing happened and
/// the server held nothing are left out; read them as zeros). Serialised as one array per
/// column, `window_start_s` first, in window order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The window width.
    pub bin: SimDuration,
    /// The windows written, in order.
    pub rows: Vec<SeriesRow>,
    /// True when the run modelled browser tabs: the series then has `attempts_hidden`.
    pub tabs: bool,
}

impl Series {
    /// When window `row` starts, seconds.
    pub fn start_s(&self, row: &SeriesRow) -> f64 {
        SimDuration(row.window * self.bin.as_nanos()).as_secs_f64()
    }
}

/// One column of a series, written as a JSON array straight from the rows.
struct Column<'a, R, T, F: Fn(&R) -> T> {
    rows: &'a [R],
    get: F,
}

impl<R, T: Serialize, F: Fn(&R) -> T> Serialize for Column<'_, R, T, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.rows.iter().map(&self.get))
    }
}

impl Serialize for Series {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rows = &self.rows[..];
        let count = |get: fn(&SeriesRow) -> u64| Column { rows, get };
        let quantile = |get: fn(&SeriesRow) -> Option<u64>| Column {
            rows,
            get: move |r: &SeriesRow| get(r).map(secs),
        };
        let mut s = serializer.serialize_struct("Series", 12 + usize::from(self.tabs))?;
        s.serialize_field(
            "window_start_s",
            &Column {
                rows,
                get: |r: &SeriesRow| self.start_s(r),
            },
        )?;
        s.serialize_field("calls_started", &count(|r| r.calls_started))?;
        s.serialize_field("attempts", &count(|r| r.attempts))?;
        if self.tabs {
            s.serialize_field("attempts_hidden", &count(|r| r.attempts_hidden))?;
        }
        s.serialize_field("succeeded", &count(|r| r.succeeded))?;
        s.serialize_field("timed_out", &count(|r| r.timed_out))?;
        s.serialize_field("refused", &count(|r| r.refused))?;
        s.serialize_field("in_system", &count(|r| r.in_system))?;
        s.serialize_field("latency_p50_s", &quantile(|r| r.latency_p50_ns))?;
        s.serialize_field("latency_p99_s", &quantile(|r| r.latency_p99_ns))?;
        s.serialize_field("retries_denied", &count(|r| r.retries_denied))?;
        s.serialize_field("rejected_locally", &count(|r| r.rejected_locally))?;
        s.end()
    }
}
