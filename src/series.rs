//! What the call loop counts ([`crate::engine::calls`]): totals over the run
//! ([`OverloadTally`]), a per-window time series streamed as simulated time passes
//! ([`SeriesBuilder`] into [`SeriesRow`]s), latency quantiles from a log-bucketed sketch
//! ([`Sketch`]), and the recovery time ([`recovered_at`]). Counting only: no formatting, no I/O.
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

use crate::time::{SimDuration, SimTime};

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets of a [`Sketch`]: values below 2^7 one each, then 128 per power of two up to 2^64.
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// A log-bucketed histogram of nanosecond values with relative error at most 1/256 (see the
/// module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    counts: Vec<u64>,
    total: u64,
    /// The lowest and highest buckets counted in (`BUCKETS` and 0 when empty): every bucket
    /// outside them is zero.
    low: usize,
    high: usize,
}

impl Default for Sketch {
    fn default() -> Self {
        Self::new()
    }
}

impl Sketch {
    /// An empty sketch.
    pub fn new() -> Self {
        Sketch {
            counts: vec![0; BUCKETS],
            total: 0,
            low: BUCKETS,
            high: 0,
        }
    }

    #[inline(always)]
    fn bucket(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        let sub = (v >> (e - SUB_BITS)) - SUB;
        ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
    }

    /// The midpoint of bucket `b` (the value itself below 128).
    fn value(b: usize) -> u64 {
        let b = b as u64;
        if b < SUB {
            return b;
        }
        let e = b / SUB + u64::from(SUB_BITS) - 1;
        let low = (SUB + b % SUB) << (e - u64::from(SUB_BITS));
        let width = 1u64 << (e - u64::from(SUB_BITS));
        low + width / 2
    }

    /// Counts one value.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        self.counts[b] += 1;
        self.total += 1;
        self.low = self.low.min(b);
        self.high = self.high.max(b);
    }

    /// Values counted.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The `q`-quantile (nearest rank: the ⌈q·n⌉-th smallest value), to within 1/256; `None`
    /// when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (b, &c) in self.counts[..=self.high].iter().enumerate().skip(self.low) {
            seen += c;
            if seen >= rank {
                return Some(Self::value(b));
            }
        }
        None
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        if self.total > 0 {
            self.counts[self.low..=self.high].fill(0);
            self.total = 0;
            self.low = BUCKETS;
            self.high = 0;
        }
    }
}

/// One window of the series. Field names are the JSON and CSV names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SeriesRow {
    /// The window's index: it starts at `window × series_bin`.
    pub window: u64,
    /// Calls that started.
    pub calls_started: u64,
    /// Attempts sent (first attempts and retries).
    pub attempts: u64,
    /// Of those, the attempts sent by browser tabs hidden at the instant they sent (0 when
    /// the run models no tabs).
    pub attempts_hidden: u64,
    /// Answers received in time that were successes (goodput).
    pub succeeded: u64,
    /// Attempts abandoned at their timeout.
    pub timed_out: u64,
    /// Refusals received (shed, outage or a limiter).
    pub refused: u64,
    /// Requests in the server at the window's end, abandoned ones included.
    pub in_system: u64,
    /// Retries a strategy wanted that the process's retry control denied (each ends its call).
    pub retries_denied: u64,
    /// Calls that ended rejected locally (an open breaker, a throttle), without a request.
    pub rejected_locally: u64,
    /// Median send-to-answer time of the successful attempts, ns (sketch, within 0.4 %).
    pub latency_p50_ns: Option<u64>,
    /// 99th percentile of the same.
    pub latency_p99_ns: Option<u64>,
}

impl SeriesRow {
    /// True when nothing was counted in the window (in-system aside).
    fn is_quiet(&self) -> bool {
        self.calls_started == 0
            && self.attempts == 0
            && self.succeeded == 0
            && self.timed_out == 0
            && self.refused == 0
            && self.retries_denied == 0
            && self.rejected_locally == 0
    }

    /// Healthy for recovery: at least 90 % of the calls started were matched by successes,
    /// and failures (timeouts and refusals) were at most 10 % of the outcomes.
    pub fn healthy(&self) -> bool {
        let outcomes = self.succeeded + self.timed_out + self.refused;
        10 * self.succeeded >= 9 * self.calls_started
            && 10 * (self.timed_out + self.refused) <= outcomes
    }
}

/// Latencies a window keeps as they are before it counts them in a [`Sketch`].
pub const WINDOW_VALUES: usize = 1024;

/// One window's latencies, for its p50 and p99: the values themselves while there are at
/// most [`WINDOW_VALUES`], then a sketch (see the module documentation). Its quantiles are a
/// [`Sketch`]'s of the same values, exactly.
#[derive(Clone, Debug, Default)]
pub struct WindowLatencies {
    values: Vec<u64>,
    /// Counting in the sketch (the window passed [`WINDOW_VALUES`]).
    spilled: bool,
    /// Allocated the first time a window spills, then reused.
    sketch: Option<Box<Sketch>>,
}

impl WindowLatencies {
    /// No latency yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one latency.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        if !self.spilled && self.values.len() < WINDOW_VALUES {
            self.values.push(v);
        } else {
            self.record_in_sketch(v);
        }
    }

    #[cold]
    fn record_in_sketch(&mut self, v: u64) {
        let sketch = self.sketch.get_or_insert_with(|| Box::new(Sketch::new()));
        if !self.spilled {
            self.spilled = true;
            for &value in &self.values {
                sketch.record(value);
            }
            self.values.clear();
        }
        sketch.record(v);
    }

    /// The p50 and p99 of the latencies counted (`None` when none were), as
    /// [`Sketch::quantile`] gives them; then forgets every latency.
    pub fn take_p50_p99(&mut self) -> (Option<u64>, Option<u64>) {
        if self.spilled {
            self.spilled = false;
            let sketch = self
                .sketch
                .as_mut()
                .expect("a spilled window has its sketch");
            let quantiles = (sketch.quantile(0.5), sketch.quantile(0.99));
            sketch.clear();
            return quantiles;
        }
        let n = self.values.len();
        if n == 0 {
            return (None, None);
        }
        // Sketch::quantile's rank, 1-based; the p99's is at or above the p50's.
        let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        let (r50, r99) = (rank(0.5), rank(0.99));
        let (_, &mut p50, above) = self.values.select_nth_unstable(r50);
        let p99 = if r99 == r50 {
            p50
        } else {
            *above.select_nth_unstable(r99 - r50 - 1).1
        };
        self.values.clear();
        (
            Some(Sketch::value(Sketch::bucket(p50))),
            Some(Sketch::value(Sketch::bucket(p99))),
        )
    }
}

/// Builds the series while time moves forward: counts go to the open window, which is closed
/// when an event comes from a later window. Each closed row is judged for recovery as it
/// closes ([`Recovery`]); a builder that keeps the rows ([`SeriesBuilder::new`]) also stores
/// them for a report that writes them, and one that folds them
/// ([`SeriesBuilder::folding`]) keeps nothing of them: its memory is one window's, however
/// long the run.
#[derive(Clone, Debug)]
pub struct SeriesBuilder {
    bin: u64,
    /// Where the open window ends (saturating): the hot loop compares, never divides.
    open_end: u64,
    open: SeriesRow,
    latencies: WindowLatencies,
    /// The rows written, when kept.
    rows: Option<Vec<SeriesRow>>,
    recovery: Recovery,
}

impl SeriesBuilder {
    /// Windows of `bin` (not zero), starting with window 0 open, every row kept; recovery
    /// judged from `recovery`'s start.
    pub fn new(bin: SimDuration, recovery: Recovery) -> Self {
        assert!(!bin.is_zero(), "series bin must be positive");
        SeriesBuilder {
            bin: bin.as_nanos(),
            open_end: bin.as_nanos(),
            open: SeriesRow::default(),
            latencies: WindowLatencies::new(),
            rows: Some(Vec::new()),
            recovery,
        }
    }

    /// [`SeriesBuilder::new`], keeping no row: each is judged for recovery as it closes and
    /// dropped.
    pub fn folding(bin: SimDuration, recovery: Recovery) -> Self {
        SeriesBuilder {
            rows: None,
            ..SeriesBuilder::new(bin, recovery)
        }
    }

    /// Moves to the window of `now` (never earlier than the last time), closing the windows
    /// before it; `in_system` is the server's count before the event at `now` is handled,
    /// which is what it was at every window end passed.
    #[inline(always)]
    pub fn advance(&mut self, now: SimTime, in_system: u64) {
        if self.due(now) {
            let window = now.as_nanos() / self.bin;
            // A saturated end (the last representable window) is due but not past.
            if window != self.open.window {
                self.close_until(window, in_system);
            }
        }
    }

    /// Whether `now` is past the open window, so [`advance`](Self::advance) would close it:
    /// the call loop asks this before it works out what is in the server.
    #[inline]
    pub fn due(&self, now: SimTime) -> bool {
        now.as_nanos() >= self.open_end
    }

    #[cold]
    fn close_until(&mut self, window: u64, in_system: u64) {
        self.close(in_system);
        // Windows between with the server holding requests are written (work in flight);
        // without, they are left out. Nothing is counted in them, so they are healthy and
        // change no recovery: a builder that folds its rows skips them.
        if in_system > 0 {
            if let Some(rows) = &mut self.rows {
                for w in self.open.window + 1..window {
                    let row = SeriesRow {
                        window: w,
                        in_system,
                        ..SeriesRow::default()
                    };
                    self.recovery.see(&row);
                    rows.push(row);
                }
            }
        }
        self.open = SeriesRow {
            window,
            ..SeriesRow::default()
        };
        self.open_end = window.saturating_add(1).saturating_mul(self.bin);
    }

    fn close(&mut self, in_system: u64) {
        self.open.in_system = in_system;
        (self.open.latency_p50_ns, self.open.latency_p99_ns) = self.latencies.take_p50_p99();
        if !self.open.is_quiet() || in_system > 0 {
            self.recovery.see(&self.open);
            if let Some(rows) = &mut self.rows {
                rows.push(self.open);
            }
        }
    }

    /// The open window's counts.
    #[inline(always)]
    pub fn counts(&mut self) -> &mut SeriesRow {
        &mut self.open
    }

    /// Counts a success that took `latency` ns.
    #[inline(always)]
    pub fn success(&mut self, latency: u64) {
        self.open.succeeded += 1;
        self.latencies.record(latency);
    }

    /// Closes the last window and returns the rows (none when folding) and the recovery
    /// judged over all of them.
    pub fn finish(mut self, in_system: u64) -> (Vec<SeriesRow>, Recovery) {
        self.close(in_system);
        (self.rows.unwrap_or_default(), self.recovery)
    }
}

/// The recovery time judged row by row, in window order, as the rows close (see
/// [`recovered_at`], which feeds it a series kept whole): the start of the first window at or
/// after `after` from which `hold` windows in a row are [healthy](SeriesRow::healthy).
/// Missing windows are empty, so healthy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    bin: u64,
    /// The first window judged.
    first: u64,
    hold: u64,
    /// Where the healthy run being watched starts.
    candidate: u64,
    /// The hold was seen whole before an unhealthy window: later rows change nothing.
    settled: bool,
}

impl Recovery {
    /// Judges windows of `bin` from the first starting at or after `after`, for `hold`
    /// windows in a row (at least one).
    pub fn new(bin: SimDuration, after: SimTime, hold: u64) -> Self {
        let bin = bin.as_nanos();
        let first = after.as_nanos().div_ceil(bin);
        Recovery {
            bin,
            first,
            hold: hold.max(1),
            candidate: first,
            settled: false,
        }
    }

    /// Judges the next row written (rows come in window order; missing ones are healthy).
    #[inline]
    pub fn see(&mut self, row: &SeriesRow) {
        if self.settled || row.window < self.first || row.healthy() {
            return;
        }
        if row.window >= self.candidate + self.hold {
            self.settled = true;
            return;
        }
        self.candidate = row.window + 1;
    }

    /// The start of the recovered run, all of its `hold` windows ending by `until` when
    /// given (an open-loop run is watched only while calls start); `None` when there is none.
    pub fn at(&self, until: Option<SimTime>) -> Option<SimTime> {
        let end = self.candidate + self.hold; // the first window after the hold
        match until {
            Some(limit) if end * self.bin > limit.as_nanos() => None,
            _ => Some(SimTime(self.candidate * self.bin)),
        }
    }
}

/// The start of the first window at or after `after` from which `hold` windows in a row are
/// [healthy](SeriesRow::healthy), all of them ending by `until` when given (an open-loop run
/// is watched only while calls start); `None` when there is none. Missing windows are empty,
/// so healthy. The rows are judged one by one by a [`Recovery`], as a run judges them while
/// they close.
pub fn recovered_at(
    rows: &[SeriesRow],
    bin: SimDuration,
    after: SimTime,
    hold: u64,
    until: Option<SimTime>,
) -> Option<SimTime> {
    let mut recovery = Recovery::new(bin, after, hold);
    for row in rows {
        recovery.see(row);
    }
    recovery.at(until)
}

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sketch_quantiles_are_within_their_bound() {
        // Exact nearest-rank quantiles of 1..=100 000 scaled by 1 000 (1 µs .. 100 ms): p50 is
        // 50 000 µs, p99 99 000 µs; the sketch must be within 1/256 of each.
        let mut s = Sketch::new();
        for v in 1..=100_000u64 {
            s.record(v * 1000);
        }
        for (q, exact) in [(0.5, 50_000_000.0), (0.99, 99_000_000.0)] {
            let got = s.quantile(q).unwrap() as f64;
            assert!((got - exact).abs() / exact <= 1.0 / 256.0, "{q}: {got}");
        }
        let mut small = Sketch::new();
        for v in [5, 3, 9] {
            small.record(v);
        }
        assert_eq!(small.quantile(0.5), Some(5));
        assert_eq!(small.quantile(0.99), Some(9));
        assert_eq!(Sketch::new().quantile(0.5), None);
        // Every bucket's midpoint maps back to the bucket, up to the largest value.
        for v in [127u64, 128, 129, 255, 256, 1 << 40, u64::MAX] {
            let b = Sketch::bucket(v);
            assert_eq!(Sketch::bucket(Sketch::value(b)), b, "{v}");
            let mid = Sketch::value(b) as f64;
            assert!((mid - v as f64).abs() / v as f64 <= 1.0 / 128.0, "{v}");
        }
    }

    #[test]
    fn a_window_gives_the_sketch_quantiles_of_its_values() {
        // Windows of 0 to 3 000 values (past WINDOW_VALUES, so some spill into the sketch and
        // later ones come back to values), skewed, with ties and tiny values: each window's
        // p50 and p99 are a fresh sketch's of the same values.
        let mut state = 99u64;
        let mut window = WindowLatencies::new();
        for n in [
            0, 1, 2, 3, 7, 100, 101, 1023, 1024, 1025, 3000, 5, 0, 64, 2048, 1,
        ] {
            let mut sketch = Sketch::new();
            for _ in 0..n {
                let word = crate::rng::splitmix64(&mut state);
                let v = match word % 4 {
                    0 => word >> 60,
                    1 => 5_000,
                    _ => (word >> 40) * ((word & 0xff) + 1),
                };
                window.record(v);
                sketch.record(v);
            }
            assert_eq!(
                window.take_p50_p99(),
                (sketch.quantile(0.5), sketch.quantile(0.99)),
                "{n} values"
            );
        }
    }

    #[test]
    fn windows_close_in_order_and_quiet_ones_are_left_out() {
        let bin = SimDuration::from_secs(1);
        let mut b = SeriesBuilder::new(bin, Recovery::new(bin, SimTime::ZERO, 1));
        b.counts().calls_started += 1;
        b.success(100);
        b.advance(SimTime(1_500_000_000), 2);
        b.counts().attempts += 1;
        // Windows 2..4 pass with 1 request in the server: written; 5..9 with none: left out.
        b.advance(SimTime(5_000_000_000), 1);
        b.advance(SimTime(10_000_000_000), 0);
        b.counts().refused += 1;
        let (rows, _) = b.finish(0);
        let windows: Vec<u64> = rows.iter().map(|r| r.window).collect();
        assert_eq!(windows, [0, 1, 2, 3, 4, 10]);
        assert_eq!(rows[0].in_system, 2);
        assert_eq!(rows[0].latency_p50_ns, Some(100));
        assert_eq!(rows[1].latency_p50_ns, None);
        assert_eq!(rows[3].in_system, 1);
        assert_eq!(rows[5].refused, 1);
    }

    #[test]
    fn a_folding_builder_judges_recovery_as_one_keeping_its_rows_does() {
        // Random windows (healthy or not, with gaps, some with requests in the server): the
        // recovery judged as rows close, kept or folded, is recovered_at over the rows kept.
        let bin = SimDuration::from_millis(10);
        let mut state = 7u64;
        for round in 0..200 {
            let after = SimTime(crate::rng::splitmix64(&mut state) % 400 * 1_000_000);
            let hold = crate::rng::splitmix64(&mut state) % 6;
            let recovery = Recovery::new(bin, after, hold);
            let mut kept = SeriesBuilder::new(bin, recovery);
            let mut folded = SeriesBuilder::folding(bin, recovery);
            let mut now = 0u64;
            for _ in 0..60 {
                let word = crate::rng::splitmix64(&mut state);
                now += word % 40 * 1_000_000;
                let in_system = (word >> 8) % 3;
                for b in [&mut kept, &mut folded] {
                    b.advance(SimTime(now), in_system);
                    let c = b.counts();
                    c.calls_started += (word >> 16) % 4;
                    c.timed_out += u64::from((word >> 20) % 5 == 0);
                    for _ in 0..(word >> 24) % 4 {
                        b.success(word >> 40);
                    }
                }
            }
            let (rows, kept) = kept.finish(1);
            let (none, folded) = folded.finish(1);
            assert!(none.is_empty());
            for until in [None, Some(SimTime(now)), Some(SimTime(now / 2))] {
                let whole = recovered_at(&rows, bin, after, hold, until);
                assert_eq!(kept.at(until), whole, "round {round}");
                assert_eq!(folded.at(until), whole, "round {round}");
            }
        }
    }

    #[test]
    fn recovery_needs_the_whole_hold_after_the_trigger() {
        let row = |window, calls_started, succeeded| SeriesRow {
            window,
            calls_started,
            succeeded,
            ..SeriesRow::default()
        };
        let bin = SimDuration::from_secs(1);
        // Trigger ends at 2.5 s: windows from 3 on. Window 4 unhealthy (5 of 10), so the hold
        // of 3 starts at 5 (windows 5, 6, 7; window 6 missing = empty = healthy).
        let rows = [row(3, 10, 10), row(4, 10, 5), row(5, 10, 9), row(7, 10, 10)];
        let after = SimTime(2_500_000_000);
        assert_eq!(
            recovered_at(&rows, bin, after, 3, None),
            Some(SimTime(5_000_000_000))
        );
        // Watched until 7 s only: the hold 5..8 does not fit.
        assert_eq!(
            recovered_at(&rows, bin, after, 3, Some(SimTime(7_000_000_000))),
            None
        );
        assert_eq!(
            recovered_at(&rows, bin, after, 3, Some(SimTime(8_000_000_000))),
            Some(SimTime(5_000_000_000))
        );
    }
}
