//! What the call loop counts ([`crate::engine::calls`]): totals over the run
//! ([`OverloadTally`]), a per-window time series streamed as simulated time passes
//! ([`SeriesBuilder`] into [`SeriesRow`]s), latency quantiles from a log-bucketed sketch
//! ([`Sketch`]), and the collapse verdict ([`recovered_at`], [`verdict_rule`]). Counting only: no formatting, no I/O.
//!
//! **Streaming.** Every count is made at the time of the event that causes it, and events come
//! in time order, so only the current window is open: when time reaches a later window the
//! open one is closed into a row of eleven integers (its sketch reduced to p50 and p99) and the
//! sketch is reused. Windows in which nothing happened and nothing was in the server are not
//! written (a run of hours with a few requests stays a few rows); a reader treats a missing
//! window as all zeros.
//!
//! **Quantiles.** [`Sketch`] keeps counts in log-linear buckets: exact below 128 ns, then 128
//! buckets per power of two, so a bucket spans at most 1/128 of its lower edge. A quantile is
//! the nearest-rank value's bucket, reported at the bucket's midpoint: within 1/256 (0.4 %) of
//! the exact nearest-rank quantile. 8 192 counters, 64 KiB, whatever the number of samples; a
//! quantile and a clear read only the buckets between the lowest and the highest used (a
//! window's latencies span a few hundred), not all of them.
//!
//! **A window's quantiles** ([`WindowLatencies`]) are the same sketch's answers, found without
//! the sketch while the window is small: its latencies (up to [`WINDOW_VALUES`]) are kept as
//! they are and the nearest-rank ones selected, then reported at their bucket's midpoint.
//! Buckets are in value order, so the bucket of the nearest-rank value is the bucket the
//! sketch would have reached: the same number, for a window's few dozen latencies without
//! scanning and clearing the thousands of buckets between its shortest and longest. A
//! window with more latencies goes on in a sketch (allocated the first time one does).
//!
//! The sketch and a window's quantiles are in `quantiles`, the windows and their builder in
//! `window`, the verdict in `verdict`; the run's totals are here.

mod quantiles;
#[cfg(test)]
mod tests;
mod verdict;
mod window;

pub use quantiles::{Sketch, WindowLatencies, WINDOW_VALUES};
pub use verdict::{recovered_at, verdict_rule, Reading, Recovery, Stretch};
pub use window::{SeriesBuilder, SeriesRow};

use crate::time::{SimDuration, SimTime};

/// Totals of a call-loop run (the series and summary inputs). Times in nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OverloadTally {
    /// Calls started.
    pub calls: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Calls that succeeded.
    pub calls_succeeded: u64,
    /// Calls that failed (retries spent).
    pub calls_failed: u64,
    /// Attempts abandoned at their timeout.
    pub timed_out: u64,
    /// Refusals received.
    pub refused: u64,
    /// Answers that arrived after their attempt's timeout (ignored).
    pub late: u64,
    /// Requests a cancelling server dropped unserved and unanswered, their client gone: at
    /// arrival, or at their turn in the queue; and those a worker dropped past their deadline
    /// (deadline propagation). Requests are served, refused or dropped.
    pub dropped: u64,
    /// Sum of the successful attempts' send-to-answer times.
    pub latency_sum_ns: u128,
    /// Median send-to-answer time of successful attempts over the run (sketch).
    pub latency_p50_ns: Option<u64>,
    /// 99th percentile of the same.
    pub latency_p99_ns: Option<u64>,
    /// Server time spent on answers nobody read (late answers, and requests still served
    /// after their client gave up).
    pub abandoned_work_ns: u64,
    /// Attempts still unresolved when the run ended (0: runs go until nothing is pending).
    pub pending: u64,
    /// The series, window by window (quiet windows left out).
    pub rows: Vec<SeriesRow>,
    /// The series' window width.
    pub series_bin: SimDuration,
    /// See [`recovered_at`]: from the end of the last trigger (0 without one).
    pub recovered_at: Option<SimTime>,
    /// When the last trigger (spike, outage, degradation) ends.
    pub trigger_end: Option<SimTime>,
    /// Retries a strategy wanted that the process's retry control denied (each ends its call).
    pub retries_denied: u64,
    /// Calls that ended rejected locally, without a request for the attempt they were to
    /// send (an open circuit breaker, an adaptive throttle).
    pub calls_rejected_locally: u64,
    /// Queue events handled (call starts, sends, arrivals, completions, deliveries, timeouts,
    /// stale ones included): the unit of the call loop's throughput bench.
    pub events: u64,
    /// True when the run modelled browser tabs (the series then splits attempts by the
    /// sending tab's visibility).
    pub tabs: bool,
    /// With layered retries, each layer's calls and attempts, outermost first (empty
    /// without layers).
    pub layers: Vec<crate::engine::calls::LayerCount>,
    /// When the calls held at once and the server's queue outgrew what the memory budget
    /// left them ([`crate::engine::Overload::in_flight`]), and the call slots and queued
    /// requests then held: the run stopped there, its figures unfinished.
    pub outgrown: Option<(SimTime, u64, u64)>,
    /// With a server pool, each server's figures, index 0 first (empty without a pool).
    pub servers: Vec<crate::server::ServerCount>,
    /// With a server pool whose run keeps its windows, each server's series, index 0 first
    /// ([`crate::server::ServerWindow`]; empty otherwise).
    pub server_series: Vec<Vec<crate::server::ServerWindow>>,
}
