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

    /// What the window says about recovery, alone ([`Stretch::reading`] of this window).
    pub fn reading(&self) -> Reading {
        let mut one = Stretch::default();
        one.add(self);
        one.reading()
    }
}

/// What one stretch of windows says about recovery (see [`Stretch::reading`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Nothing was answered in it: no evidence either way.
    Quiet,
    /// Calls are succeeding.
    Good,
    /// More than 10 % of its answers are failures.
    Bad,
}

/// The sums of consecutive windows that the verdict reads (a stretch of the recovery hold).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stretch {
    succeeded: u64,
    failed: u64,
}

impl Stretch {
    fn add(&mut self, row: &SeriesRow) {
        self.succeeded += row.succeeded;
        self.failed += row.timed_out + row.refused;
    }

    fn remove(&mut self, row: &SeriesRow) {
        self.succeeded -= row.succeeded;
        self.failed -= row.timed_out + row.refused;
    }

    /// Quiet when nothing was answered in it (no timeout, refusal or success): no evidence
    /// either way, so a stretch where nobody calls any more is no recovery; good when
    /// failures (timeouts and refusals) are at most 10 % of its answers (so it has
    /// successes); bad otherwise. Whether the successes keep up with the calls started,
    /// answered or not, is judged over the whole rest of the run ([`recovered_at`]): a
    /// stretch's own ratio would count a call started at its end and answered after it as
    /// lost.
    pub fn reading(&self) -> Reading {
        let answers = self.succeeded + self.failed;
        if answers == 0 {
            Reading::Quiet
        } else if 10 * self.failed <= answers {
            Reading::Good
        } else {
            Reading::Bad
        }
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
        let p50 = select(&mut self.values, r50);
        let above = &mut self.values[r50 + 1..];
        let p99 = if r99 == r50 {
            p50
        } else if r99 == n - 1 {
            // The largest (every window of at most 100 latencies): one pass.
            above.iter().copied().fold(p50, u64::max)
        } else {
            select(above, r99 - r50 - 1)
        };
        self.values.clear();
        (
            Some(Sketch::value(Sketch::bucket(p50))),
            Some(Sketch::value(Sketch::bucket(p99))),
        )
    }
}

/// The `k`-th smallest of `values` (from 0), which it reorders so that none before `k` is
/// larger and none after it smaller: a quickselect, each step partitioning around the median
/// of its span's ends and middle (the order the library's `select_nth_unstable` leaves is the
/// same kind; this is about half its instructions on a window's few dozen latencies).
fn select(values: &mut [u64], k: usize) -> u64 {
    debug_assert!(k < values.len());
    let (mut low, mut high) = (0, values.len() - 1);
    loop {
        if high <= low + 1 {
            if high == low + 1 && values[high] < values[low] {
                values.swap(low, high);
            }
            return values[k];
        }
        // The median of three at `low + 1`, the smallest at `low` and the largest at `high`:
        // they stop the scans below at the span's ends.
        values.swap((low + high) / 2, low + 1);
        if values[low] > values[high] {
            values.swap(low, high);
        }
        if values[low + 1] > values[high] {
            values.swap(low + 1, high);
        }
        if values[low] > values[low + 1] {
            values.swap(low, low + 1);
        }
        let pivot = values[low + 1];
        let (mut i, mut j) = (low + 1, high);
        loop {
            i += 1;
            while values[i] < pivot {
                i += 1;
            }
            j -= 1;
            while values[j] > pivot {
                j -= 1;
            }
            if j < i {
                break;
            }
            values.swap(i, j);
        }
        // The pivot to its place, `j`: none before it larger, none after it smaller.
        values[low + 1] = values[j];
        values[j] = pivot;
        if j >= k {
            high = j - 1;
        }
        if j <= k {
            low = i;
        }
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

/// The collapse verdict ([`recovered_at`], [`verdict_rule`]) judged row by row, in window
/// order, as the rows close: the stretch of `hold` windows being read (at most `hold` rows),
/// where the recovered state would start (`W`) and the calls started and succeeded since.
/// Stretches are read in order of their start, each once every row it can hold has been
/// seen; a stretch without rows is quiet, so runs of them are skipped at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    bin: u64,
    /// The first stretch's start (window).
    first: u64,
    hold: u64,
    /// Stretches end by this window boundary (the end of the load) when known in advance;
    /// rows from it on only count toward goodput.
    stop: Option<u64>,
    /// The next stretch to read.
    next: u64,
    /// Rows from `next` on: (window, succeeded, failed, calls started).
    rows: std::collections::VecDeque<(u64, u64, u64, u64)>,
    sums: Stretch,
    /// `W` and the calls started and succeeded from it on.
    recovered: Option<(u64, u64, u64)>,
    /// Every stretch before `stop` has been read.
    closed: bool,
    /// The end of the last row seen (window), for a herd's end.
    seen_end: u64,
}

impl Recovery {
    /// Judges stretches of `hold` windows (at least one) of `bin` from the first window
    /// starting at or after `after`; `stop`, when known before the run, is the end of the
    /// load (Poisson arrivals), else it is given to [`Recovery::at`].
    pub fn new(bin: SimDuration, after: SimTime, hold: u64, stop: Option<SimTime>) -> Self {
        let bin = bin.as_nanos();
        let first = after.as_nanos().div_ceil(bin);
        Recovery {
            bin,
            first,
            hold: hold.max(1),
            stop: stop.map(|s| s.as_nanos().div_ceil(bin)),
            next: first,
            rows: std::collections::VecDeque::new(),
            sums: Stretch::default(),
            recovered: None,
            closed: false,
            seen_end: 0,
        }
    }

    /// Reads every stretch starting before `until` (and fitting before the stop).
    fn read_until(&mut self, until: u64) {
        let last = match self.stop {
            Some(stop) => until.min((stop + 1).saturating_sub(self.hold)),
            None => until,
        };
        while self.next < last {
            while let Some(&(w, ok, bad, _)) = self.rows.front() {
                if w >= self.next {
                    break;
                }
                self.sums.succeeded -= ok;
                self.sums.failed -= bad;
                self.rows.pop_front();
            }
            if self.rows.is_empty() {
                // Quiet stretches up to the next row's: nothing to read.
                self.next = last;
                break;
            }
            match self.sums.reading() {
                Reading::Bad => self.recovered = None,
                Reading::Good if self.recovered.is_none() => {
                    let w = self
                        .rows
                        .iter()
                        .find(|r| r.1 + r.2 > 0)
                        .map_or(self.next, |r| r.0);
                    // Every row seen from W on is held: count them, later ones as they come.
                    let (started, succeeded) = self
                        .rows
                        .iter()
                        .filter(|r| r.0 >= w)
                        .fold((0, 0), |(c, s), r| (c + r.3, s + r.1));
                    self.recovered = Some((w, started, succeeded));
                }
                _ => {}
            }
            self.next += 1;
        }
    }

    /// Judges the next row written (rows come in window order; missing ones are quiet).
    #[inline]
    pub fn see(&mut self, row: &SeriesRow) {
        self.seen_end = row.window + 1;
        if row.window < self.first {
            return;
        }
        let failed = row.timed_out + row.refused;
        if !self.closed {
            self.read_until((row.window + 1).saturating_sub(self.hold));
            match self.stop {
                Some(stop) if row.window >= stop => {
                    self.read_until(u64::MAX);
                    self.closed = true;
                }
                _ => {
                    self.rows
                        .push_back((row.window, row.succeeded, failed, row.calls_started));
                    self.sums.succeeded += row.succeeded;
                    self.sums.failed += failed;
                }
            }
        }
        if let Some((w, started, succeeded)) = &mut self.recovered {
            if row.window >= *w {
                *started += row.calls_started;
                *succeeded += row.succeeded;
            }
        }
    }

    /// Where the last row seen ends (zero before any).
    pub fn run_end(&self) -> SimTime {
        SimTime(self.seen_end.saturating_mul(self.bin))
    }

    /// The verdict once every row has been seen, the load having ended at `end`: W when the
    /// run recovered and kept it, `None` when it collapsed.
    pub fn at(&self, end: SimTime) -> Option<SimTime> {
        let mut done = self.clone();
        let stop = end.as_nanos().div_ceil(self.bin);
        if done.stop.is_none() {
            done.stop = Some(stop);
            // Rows at or after the end are in no stretch (a herd's end is past its last row).
            while let Some(&(w, ok, bad, _)) = done.rows.back() {
                if w < stop {
                    break;
                }
                done.sums.succeeded -= ok;
                done.sums.failed -= bad;
                done.rows.pop_back();
            }
        }
        let stop = done.stop.unwrap_or(stop);
        if !done.closed {
            done.read_until(u64::MAX);
        }
        if stop < self.first + self.hold {
            return None; // no stretch fits between the trigger's end and the end of the load
        }
        let (w, started, succeeded) = done.recovered?;
        (10 * succeeded >= 9 * started).then(|| SimTime(w * self.bin))
    }
}

/// The collapse verdict ([`verdict_rule`]): when the run reached the recovered state and kept
/// it to `end`, or `None` when it never did (collapsed). The stretches judged are every run of
/// `hold` consecutive windows starting at or after `after` (the last trigger's end) and ending
/// by `end`'s window boundary (the end of the load). After the last [bad](Reading::Bad)
/// stretch, the first [good](Reading::Good) one names `W`, its first window with an answer;
/// the run is recovered at `W` when, from `W` on, its successes (to the run's last window)
/// are at least 90 % of its calls started. No stretch fits (the load ends within `hold` of
/// the trigger): collapsed. Missing windows are quiet: they count neither way. Rows must be
/// in window order (the series is).
pub fn recovered_at(
    rows: &[SeriesRow],
    bin: SimDuration,
    after: SimTime,
    hold: u64,
    end: SimTime,
) -> Option<SimTime> {
    let bin = bin.as_nanos();
    let hold = hold.max(1);
    let first = after.as_nanos().div_ceil(bin);
    // Windows starting before `end`; stretches start at `first..=last`.
    let stop = end.as_nanos().div_ceil(bin);
    let last = stop.checked_sub(hold).filter(|&l| l >= first)?;
    let all_rows = rows;
    let rows: Vec<&SeriesRow> = rows
        .iter()
        .filter(|r| r.window >= first && r.window < stop)
        .collect();
    // The stretch's reading only changes where a row enters it (k = window - hold + 1) or
    // leaves it (k = window + 1): walk those starts, each reading holding until the next.
    let mut starts: Vec<u64> = rows
        .iter()
        .flat_map(|r| [(r.window + 1).saturating_sub(hold), r.window + 1])
        .chain([first])
        .filter(|&k| (first..=last).contains(&k))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let mut stretch = Stretch::default();
    let (mut entered, mut left) = (0, 0);
    let mut recovered = None;
    for k in starts {
        while entered < rows.len() && rows[entered].window < k + hold {
            stretch.add(rows[entered]);
            entered += 1;
        }
        while left < entered && rows[left].window < k {
            stretch.remove(rows[left]);
            left += 1;
        }
        match (stretch.reading(), recovered) {
            (Reading::Bad, _) => recovered = None,
            // The stretch's first window with an answer.
            (Reading::Good, None) => {
                recovered = rows[left..entered]
                    .iter()
                    .find(|r| r.succeeded + r.timed_out + r.refused > 0)
                    .map(|r| r.window)
            }
            _ => {}
        }
    }
    let w = recovered?;
    // Goodput keeps up with the calls started, from W to the end: successes counted through
    // the drain after the load, so only calls still pending at the run's end are missing.
    let (started, succeeded) = all_rows
        .iter()
        .filter(|r| r.window >= w)
        .fold((0u64, 0u64), |(c, s), r| {
            (c + r.calls_started, s + r.succeeded)
        });
    (10 * succeeded >= 9 * started).then(|| SimTime(w * bin))
}

/// The collapse verdict in one sentence, for a run whose recovery hold is `hold` and whose
/// load runs at least `settle` past its last trigger (what `boundary` prints as
/// `verdict_rule`).
pub fn verdict_rule(hold: SimDuration, settle: SimDuration) -> String {
    format!(
        "collapsed unless the run reaches and keeps the recovered state: calls keep starting \
         for at least {settle} after the last trigger ends (the settle: by default the longest a \
         call can last, (retries + 1) x timeout + retries x cap, each retry layer around the policy \
         repeating that call 1 + its retries times with its cap between, plus the hold), and \
         from some \
         window W at or after that end to the end of the load, every stretch of the recovery \
         hold ({hold}) of consecutive windows with answers has at most 10% timeouts and \
         refusals among them, the first such stretch after the last that has more starting at \
         W, and from W on the successes are at least 90% of the calls started (a herd's end: \
         its last window plus the hold, or the trigger's end plus the settle if later); \
         stretches without answers count neither way, so a herd whose calls all failed and \
         stopped is collapsed, while a run whose every call succeeded is recovered by the \
         last trigger's end at the latest; recovered_at_s is W, its first window with an answer"
    )
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
    fn select_finds_the_kth_smallest_and_partitions_around_it() {
        // Lengths 1 to 130, values from a few distinct ones (many ties) to all distinct, every
        // rank: the value a sort puts there, nothing larger before it, nothing smaller after.
        let mut state = 7u64;
        for n in 1..=130usize {
            for spread in [1u64, 3, 50, u64::MAX] {
                let values: Vec<u64> = (0..n)
                    .map(|_| crate::rng::splitmix64(&mut state) % spread.max(1))
                    .map(|v| if spread == 1 { 42 } else { v })
                    .collect();
                let mut sorted = values.clone();
                sorted.sort_unstable();
                for k in 0..n {
                    let mut v = values.clone();
                    let x = select(&mut v, k);
                    assert_eq!(x, sorted[k], "n {n}, spread {spread}, k {k}");
                    assert_eq!(v[k], x);
                    assert!(v[..k].iter().all(|&a| a <= x) && v[k + 1..].iter().all(|&a| a >= x));
                    v.sort_unstable();
                    assert_eq!(v, sorted, "a permutation of the values");
                }
            }
        }
    }

    #[test]
    fn windows_close_in_order_and_quiet_ones_are_left_out() {
        let bin = SimDuration::from_secs(1);
        let mut b = SeriesBuilder::new(bin, Recovery::new(bin, SimTime::ZERO, 1, None));
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
        // Random windows (good or bad, with gaps, some with requests in the server): the
        // verdict judged as rows close, kept or folded, with the end known before the run
        // (Poisson) or only after it (a herd, whose end is past its last row), is
        // recovered_at over the rows kept.
        let bin = SimDuration::from_millis(10);
        let mut state = 7u64;
        for round in 0..300 {
            let after = SimTime(crate::rng::splitmix64(&mut state) % 400 * 1_000_000);
            let hold = crate::rng::splitmix64(&mut state) % 6;
            let mut words = Vec::new();
            let mut now = 0u64;
            for _ in 0..60 {
                let word = crate::rng::splitmix64(&mut state);
                now += word % 40 * 1_000_000;
                words.push((now, word));
            }
            let late = SimTime(now + (hold + 2) * 10_000_000);
            for end in [None, Some(SimTime(now)), Some(SimTime(now / 2))] {
                let recovery = Recovery::new(bin, after, hold, end);
                let mut kept = SeriesBuilder::new(bin, recovery.clone());
                let mut folded = SeriesBuilder::folding(bin, recovery);
                for &(now, word) in &words {
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
                let end = end.unwrap_or(late);
                let whole = recovered_at(&rows, bin, after, hold, end);
                assert_eq!(kept.at(end), whole, "round {round}");
                assert_eq!(folded.at(end), whole, "round {round}");
            }
        }
    }

    fn row(window: u64, calls_started: u64, succeeded: u64, timed_out: u64) -> SeriesRow {
        SeriesRow {
            window,
            calls_started,
            attempts: calls_started + timed_out,
            succeeded,
            timed_out,
            ..SeriesRow::default()
        }
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn windows_read_good_bad_or_quiet() {
        assert_eq!(row(0, 10, 9, 1).reading(), Reading::Good);
        // 80 % of the calls started answered in the window: the rest may be on their way
        // (the 90 % of goodput is judged over the rest of the run).
        assert_eq!(row(0, 10, 8, 0).reading(), Reading::Good);
        assert_eq!(row(0, 10, 10, 2).reading(), Reading::Bad); // 2 of 12 answers failed
        assert_eq!(row(0, 0, 0, 5).reading(), Reading::Bad); // failures only
                                                             // Started, nothing answered yet: no evidence (the goodput over the rest of the run
                                                             // judges calls that are never answered).
        assert_eq!(row(0, 3, 0, 0).reading(), Reading::Quiet);
        assert_eq!(row(0, 0, 4, 0).reading(), Reading::Good); // a backlog draining
        assert_eq!(SeriesRow::default().reading(), Reading::Quiet);
        let waiting = SeriesRow {
            in_system: 7,
            ..SeriesRow::default()
        };
        assert_eq!(waiting.reading(), Reading::Quiet);
    }

    #[test]
    fn a_series_that_recovers_and_stays_is_recovered_at_its_first_good_window() {
        // Trigger ends at 2.5 s; load ends at 12 s; hold 3 windows. Windows 3 and 4 bad, then
        // good from 5 (window 7 missing: quiet) to the end: recovered at 5 s.
        let rows = [
            row(1, 10, 0, 10),
            row(3, 10, 2, 8),
            row(4, 10, 5, 5),
            row(5, 10, 9, 1),
            row(6, 10, 10, 0),
            row(8, 10, 10, 0),
            row(11, 10, 10, 0),
            // After the load: not judged, whatever it says.
            row(12, 0, 0, 9),
        ];
        let recovered = recovered_at(
            &rows,
            SimDuration(S),
            SimTime(S * 5 / 2),
            3,
            SimTime(12 * S),
        );
        assert_eq!(recovered, Some(SimTime(5 * S)));
        // The hold must fit before the end: 5 + 3 <= 8, not 5 + 3 <= 7.
        assert_eq!(
            recovered_at(&rows, SimDuration(S), SimTime(S * 5 / 2), 3, SimTime(8 * S)),
            Some(SimTime(5 * S))
        );
        assert_eq!(
            recovered_at(&rows, SimDuration(S), SimTime(S * 5 / 2), 3, SimTime(7 * S)),
            None
        );
    }

    #[test]
    fn a_series_that_recovers_then_relapses_is_collapsed() {
        // Good for 5 windows (more than the hold of 3), then bad again at 9 until the end:
        // the old rule (hold once reached) said recovered at 3 s; kept to the end, it is not.
        let mut rows: Vec<SeriesRow> = (3..9).map(|w| row(w, 10, 10, 0)).collect();
        rows.extend((9..20).map(|w| row(w, 10, 1, 9)));
        let bin = SimDuration(S);
        assert_eq!(
            recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(20 * S)),
            None
        );
        // A relapse that heals again: recovered from the first good window after it.
        rows.extend((20..30).map(|w| row(w, 10, 10, 0)));
        assert_eq!(
            recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(30 * S)),
            Some(SimTime(20 * S))
        );
    }

    #[test]
    fn successes_may_lag_the_calls_started_but_must_keep_up() {
        // Calls take two windows: window w's successes are the calls started at w - 2 (10 a
        // window before 3). Starts of windows 3..14: 10, 10, 20, 20, 10, 10, 10, 10, 10, 10,
        // 0, 0, so one stretch's ratio swings while every answer is a success. From 3 on:
        // 20 + 120 successes (two windows of earlier calls among them) >= 90 % of 120.
        let started = [10, 10, 20, 20, 10, 10, 10, 10, 10, 10, 0, 0];
        let rows: Vec<SeriesRow> = (0..12)
            .map(|i| {
                let mut r = row(3 + i as u64, started[i], 0, 0);
                r.succeeded = if i >= 2 { started[i - 2] } else { 10 };
                r
            })
            .collect();
        // Stretch 5..8 alone: 50 started, 40 succeeded in it (80 %).
        let (c, s): (u64, u64) = rows[2..5]
            .iter()
            .fold((0, 0), |(c, s), r| (c + r.calls_started, s + r.succeeded));
        assert_eq!((c, s), (50, 40));
        let bin = SimDuration(S);
        assert_eq!(
            recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(13 * S)),
            Some(SimTime(3 * S))
        );
        // A server falling behind without failing anything (no timeout): 10 calls start a
        // window and 8 succeed, every stretch good, yet goodput is 80 % of the calls started
        // from any W on: collapsed.
        let behind: Vec<SeriesRow> = (3..30).map(|w| row(w, 10, 8, 0)).collect();
        assert_eq!(
            recovered_at(&behind, bin, SimTime(3 * S), 3, SimTime(30 * S)),
            None
        );
        // The load ending within the hold of the trigger leaves nothing to judge: collapsed.
        assert_eq!(
            recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(5 * S)),
            None
        );
    }

    #[test]
    fn a_herd_whose_calls_all_failed_is_not_recovered() {
        // Every call timed out by window 6; nobody calls after: quiet windows to the end are
        // no recovery (the old rule read them as healthy and said recovered at 7 s).
        let rows = [row(0, 100, 0, 100), row(3, 0, 0, 100), row(6, 0, 0, 100)];
        let bin = SimDuration(S);
        assert_eq!(
            recovered_at(&rows, bin, SimTime(2 * S), 3, SimTime(60 * S)),
            None
        );
        // A series in which no call ever started is not recovered either.
        assert_eq!(
            recovered_at(&[], bin, SimTime(2 * S), 3, SimTime(60 * S)),
            None
        );
        // The herd's retries succeeding after the trigger: recovered where they start to.
        let rows = [row(0, 100, 0, 100), row(3, 0, 50, 0), row(4, 0, 50, 0)];
        assert_eq!(
            recovered_at(&rows, bin, SimTime(2 * S), 3, SimTime(60 * S)),
            Some(SimTime(3 * S))
        );
    }

    #[test]
    fn the_rule_names_its_hold_and_settle() {
        let rule = verdict_rule(SimDuration::from_secs(5), SimDuration::from_secs(94));
        assert!(rule.starts_with("collapsed unless"), "{rule}");
        assert!(rule.contains("94s") && rule.contains("(5s)"), "{rule}");
        assert!(!rule.contains('\n'));
    }
}
