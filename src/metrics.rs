//! Measurements of one run: the window histogram of retry arrivals and the summary figures
//! (peak, non-empty windows, span, totals, outcomes). Counting only: no formatting, no I/O.
//!
//! A window is `floor(t / bin)` in integer nanoseconds, so an arrival at exactly 1 s with a
//! 100 ms bin is in window 10 (which starts at 1.0 s), never 9.

use serde::Serialize;

use crate::time::{SimDuration, SimTime};

/// Arrivals counted per window of `bin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    bin: u64,
    counts: Vec<u64>,
}

impl Histogram {
    /// An empty histogram with windows of `bin` (which must not be zero).
    pub fn new(bin: SimDuration) -> Self {
        assert!(!bin.is_zero(), "histogram bin must be positive");
        Histogram {
            bin: bin.as_nanos(),
            counts: Vec::new(),
        }
    }

    /// The window width.
    pub fn bin(&self) -> SimDuration {
        SimDuration(self.bin)
    }

    /// The window `t` falls in: `floor(t / bin)`.
    #[inline(always)]
    pub fn window_of(&self, t: SimTime) -> usize {
        (t.as_nanos() / self.bin) as usize
    }

    /// Counts one arrival at `t`.
    #[inline(always)]
    pub fn record(&mut self, t: SimTime) {
        let w = self.window_of(t);
        if w >= self.counts.len() {
            self.counts.resize(w + 1, 0);
        }
        self.counts[w] += 1;
    }

    /// Adds another histogram with the same bin into this one.
    pub fn merge(&mut self, other: &Histogram) {
        assert_eq!(self.bin, other.bin, "merging histograms of different bins");
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
    }

    /// Counts per window from window 0 to the last non-empty one.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Sum of all counts.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The largest count and the first window holding it; `(0, 0)` when empty.
    pub fn peak(&self) -> (u64, usize) {
        let mut best = (0, 0);
        for (w, &c) in self.counts.iter().enumerate() {
            if c > best.0 {
                best = (c, w);
            }
        }
        best
    }

    /// Number of windows with at least one arrival.
    pub fn non_empty_windows(&self) -> usize {
        self.counts.iter().filter(|&&c| c > 0).count()
    }

    /// Start time of window `w`.
    pub fn window_start(&self, w: usize) -> SimTime {
        SimTime(w as u64 * self.bin)
    }
}

/// Everything counted during one run, before it is summarised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Retry arrivals per window (the first request of each client is not a retry).
    pub retries: Histogram,
    /// Requests of any kind, first attempts included.
    pub requests: u64,
    /// Requests the server refused.
    pub refused: u64,
    /// Clients that were eventually served.
    pub succeeded: u64,
    /// Clients that spent their retry budget without being served.
    pub gave_up: u64,
    /// Earliest retry arrival.
    pub first_retry: Option<SimTime>,
    /// Latest retry arrival.
    pub last_retry: Option<SimTime>,
    /// Latest success.
    pub last_success: Option<SimTime>,
}

impl Tally {
    /// Nothing counted yet.
    pub fn new(bin: SimDuration) -> Self {
        Tally {
            retries: Histogram::new(bin),
            requests: 0,
            refused: 0,
            succeeded: 0,
            gave_up: 0,
            first_retry: None,
            last_retry: None,
            last_success: None,
        }
    }

    /// Counts a request at `t`; `retry` says whether it is a retry (numbered 1 and up).
    #[inline(always)]
    pub fn request(&mut self, t: SimTime, retry: bool, served: bool) {
        self.requests += 1;
        if !served {
            self.refused += 1;
        }
        if retry {
            self.retries.record(t);
            self.first_retry = Some(self.first_retry.map_or(t, |f| f.min(t)));
            self.last_retry = Some(self.last_retry.map_or(t, |l| l.max(t)));
        }
        if served {
            self.succeeded += 1;
            self.last_success = Some(self.last_success.map_or(t, |l| l.max(t)));
        }
    }

    /// Adds a tally of other clients of the same run (the order of merging never matters).
    pub fn merge(&mut self, other: &Tally) {
        self.retries.merge(&other.retries);
        self.requests += other.requests;
        self.refused += other.refused;
        self.succeeded += other.succeeded;
        self.gave_up += other.gave_up;
        let min = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let max = |a: Option<SimTime>, b: Option<SimTime>| a.max(b);
        self.first_retry = min(self.first_retry, other.first_retry);
        self.last_retry = max(self.last_retry, other.last_retry);
        self.last_success = max(self.last_success, other.last_success);
    }
}

/// The figures a run is reported by. Field names are the JSON and CSV names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Largest number of retries in one window.
    pub peak: u64,
    /// Start of the first window holding the peak, in seconds.
    pub peak_window_s: f64,
    /// Windows with at least one retry.
    pub windows: usize,
    /// From the first retry arrival to the last, in seconds.
    pub span_s: f64,
    /// Retry arrivals; equals the sum of the histogram.
    pub total: u64,
    /// Requests of any kind (first attempts and retries).
    pub requests: u64,
    /// Requests refused.
    pub refused: u64,
    /// Clients eventually served.
    pub succeeded: u64,
    /// Clients that gave up after their last retry.
    pub gave_up: u64,
    /// Time of the last success in seconds, if any client succeeded.
    pub last_success_s: Option<f64>,
}

impl Summary {
    /// Summarises a tally.
    pub fn of(tally: &Tally) -> Self {
        let (peak, peak_window) = tally.retries.peak();
        let span = match (tally.first_retry, tally.last_retry) {
            (Some(first), Some(last)) => last - first,
            _ => SimDuration::ZERO,
        };
        Summary {
            peak,
            peak_window_s: tally.retries.window_start(peak_window).as_secs_f64(),
            windows: tally.retries.non_empty_windows(),
            span_s: span.as_secs_f64(),
            total: tally.retries.total(),
            requests: tally.requests,
            refused: tally.refused,
            succeeded: tally.succeeded,
            gave_up: tally.gave_up,
            last_success_s: tally.last_success.map(SimTime::as_secs_f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_boundaries_are_exact() {
        let mut h = Histogram::new(SimDuration::from_millis(100));
        h.record(SimTime(999_999_999)); // window 9
        h.record(SimTime(1_000_000_000)); // window 10, not 9
        h.record(SimTime(1_099_999_999)); // window 10
        assert_eq!(h.counts()[9], 1);
        assert_eq!(h.counts()[10], 2);
        assert_eq!(h.peak(), (2, 10));
        assert_eq!(h.non_empty_windows(), 2);
        assert_eq!(h.total(), 3);
    }

    #[test]
    fn merging_adds_windows_and_widens_extremes() {
        let bin = SimDuration::from_millis(100);
        let mut a = Tally::new(bin);
        a.request(SimTime(0), false, false);
        a.request(SimTime::ZERO + SimDuration::from_secs(1), true, false);
        let mut b = Tally::new(bin);
        b.request(SimTime::ZERO + SimDuration::from_secs(3), true, true);
        a.merge(&b);
        assert_eq!(a.requests, 3);
        assert_eq!(a.refused, 2);
        assert_eq!(a.succeeded, 1);
        assert_eq!(a.retries.total(), 2);
        let s = Summary::of(&a);
        assert_eq!(s.span_s, 2.0);
        assert_eq!(s.last_success_s, Some(3.0));
        assert_eq!(s.peak, 1);
        assert_eq!(s.peak_window_s, 1.0);
    }
}
