//! Measurements of one run: the window histogram of retry arrivals, the histograms of every
//! request split into served and refused, when clients finished, and the summary figures
//! (peak, non-empty windows, span, totals, outcomes, waste). Counting only: no formatting, no
//! I/O.
//!
//! A window is `floor(t / bin)` in integer nanoseconds, so an arrival at exactly 1 s with a
//! 100 ms bin is in window 10 (which starts at 1.0 s), never 9.

use serde::Serialize;

use crate::time::{SimDuration, SimTime};

/// Windows of `bin`: which window a time falls in, without a division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    bin: u64,
    /// `floor((2^64 − 1) / bin)`: turns the per-request division into a multiplication (a
    /// 64-bit division costs tens of cycles, the largest single cost of an event).
    reciprocal: u64,
}

impl Windows {
    /// Windows of `bin` (which must not be zero).
    pub fn new(bin: SimDuration) -> Self {
        assert!(!bin.is_zero(), "histogram bin must be positive");
        Windows {
            bin: bin.as_nanos(),
            reciprocal: u64::MAX / bin.as_nanos(),
        }
    }

    /// The window `t` falls in: `floor(t / bin)`.
    #[inline(always)]
    pub fn window_of(&self, t: SimTime) -> usize {
        // The high word of t · reciprocal is floor(t / bin) or up to two less (the reciprocal
        // is floored, and t < 2^64); the corrections make it exact.
        let t = t.as_nanos();
        let mut q = ((u128::from(t) * u128::from(self.reciprocal)) >> 64) as u64;
        let mut rest = t - q * self.bin;
        if rest >= self.bin {
            q += 1;
            rest -= self.bin;
        }
        if rest >= self.bin {
            q += 1;
        }
        q as usize
    }
}

/// Arrivals counted per window of `bin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    windows: Windows,
    counts: Vec<u64>,
}

impl Histogram {
    /// An empty histogram with windows of `bin` (which must not be zero).
    pub fn new(bin: SimDuration) -> Self {
        Histogram {
            windows: Windows::new(bin),
            counts: Vec::new(),
        }
    }

    /// The window width.
    pub fn bin(&self) -> SimDuration {
        SimDuration(self.windows.bin)
    }

    /// This histogram's windows.
    pub fn windows(&self) -> Windows {
        self.windows
    }

    /// The window `t` falls in: `floor(t / bin)`.
    #[inline(always)]
    pub fn window_of(&self, t: SimTime) -> usize {
        self.windows.window_of(t)
    }

    /// A [`WindowCursor`] over this histogram's windows.
    pub fn cursor(&self) -> WindowCursor {
        WindowCursor {
            windows: self.windows,
            start: 0,
            window: 0,
        }
    }

    /// Counts one arrival at `t`.
    #[inline(always)]
    pub fn record(&mut self, t: SimTime) {
        self.record_window(self.window_of(t));
    }

    /// Counts one arrival in window `w` (from [`Histogram::window_of`]), so that several
    /// histograms of one bin share a single division.
    #[inline(always)]
    pub fn record_window(&mut self, w: usize) {
        if w >= self.counts.len() {
            self.counts.resize(w + 1, 0);
        }
        self.counts[w] += 1;
    }

    /// Adds another histogram with the same bin into this one.
    pub fn merge(&mut self, other: &Histogram) {
        assert_eq!(
            self.windows, other.windows,
            "merging histograms of different bins"
        );
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
        SimTime(w as u64 * self.windows.bin)
    }
}

/// The window of the last time asked about, so that times that mostly stay in one window (the
/// event queue's, which never go back) pay for the division only when they cross into another.
#[derive(Clone, Debug)]
pub struct WindowCursor {
    windows: Windows,
    /// Where `window` starts.
    start: u64,
    window: usize,
}

impl WindowCursor {
    /// The window `t` falls in: `floor(t / bin)`, as [`Histogram::window_of`].
    #[inline(always)]
    pub fn window_of(&mut self, t: SimTime) -> usize {
        let t_ns = t.as_nanos();
        if t_ns < self.start || t_ns - self.start >= self.windows.bin {
            self.window = self.windows.window_of(t);
            self.start = self.window as u64 * self.windows.bin;
        }
        self.window
    }
}

/// Runs of at most this many clients keep each client's finish time (8 bytes each would be
/// 80 MB at ten million clients, and no one reads ten million numbers).
pub const MAX_CLIENT_FINISHES: usize = 10_000;

/// Everything counted during one run, before it is summarised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Retry arrivals per window (the first request of each client is not a retry).
    pub retries: Histogram,
    /// Requests of any kind, first attempts included.
    pub requests: u64,
    /// Requests the server refused.
    pub refused: u64,
    /// Requests served (one per item; with one item per client, the clients served).
    pub succeeded: u64,
    /// Clients that spent their retry budget without being served.
    pub gave_up: u64,
    /// Earliest retry arrival.
    pub first_retry: Option<SimTime>,
    /// Latest retry arrival.
    pub last_retry: Option<SimTime>,
    /// Latest success.
    pub last_success: Option<SimTime>,
    /// Served requests (first attempts and retries) per window of arrival.
    pub served_windows: Histogram,
    /// Refused requests per window of arrival; with `served_windows`, every request once.
    pub refused_windows: Histogram,
    /// Clients that fetched all their work (the rest gave up).
    pub completed: u64,
    /// When the first client stopped (finished its work or gave up), answer received.
    pub first_finish: Option<SimTime>,
    /// When the last client stopped: the time to finish all work.
    pub last_finish: Option<SimTime>,
    /// When each client stopped, by client id: kept only for runs of at most
    /// [`MAX_CLIENT_FINISHES`] clients ([`Tally::for_clients`]), `None` otherwise.
    pub client_finishes: Option<Vec<Option<SimTime>>>,
    /// When the limiter's windows opened ([`crate::server::Server::window_starts`]), read
    /// from the server once the run is over; `None` when it has none to mark. Only the
    /// event-queue path fills it: the independent path runs servers without windows.
    pub window_starts: Option<Vec<SimTime>>,
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
            served_windows: Histogram::new(bin),
            refused_windows: Histogram::new(bin),
            completed: 0,
            first_finish: None,
            last_finish: None,
            client_finishes: None,
            window_starts: None,
        }
    }

    /// Nothing counted yet, for a run of `clients` clients: keeps each client's finish time
    /// when there are at most [`MAX_CLIENT_FINISHES`] of them.
    pub fn for_clients(bin: SimDuration, clients: u32) -> Self {
        Tally {
            client_finishes: (clients as usize <= MAX_CLIENT_FINISHES)
                .then(|| vec![None; clients as usize]),
            ..Tally::new(bin)
        }
    }

    /// Counts a request at `t`; `retry` says whether it is a retry (numbered 1 and up).
    #[inline(always)]
    pub fn request(&mut self, t: SimTime, retry: bool, served: bool) {
        // One division for the three histograms, which share a bin.
        self.request_in_window(t, self.retries.window_of(t), retry, served);
    }

    /// [`Tally::request`] with the window of `t` already found (by a [`WindowCursor`]).
    #[inline(always)]
    pub fn request_in_window(&mut self, t: SimTime, w: usize, retry: bool, served: bool) {
        self.requests += 1;
        if served {
            self.served_windows.record_window(w);
        } else {
            self.refused += 1;
            self.refused_windows.record_window(w);
        }
        if retry {
            self.retries.record_window(w);
            self.first_retry = Some(self.first_retry.map_or(t, |f| f.min(t)));
            self.last_retry = Some(self.last_retry.map_or(t, |l| l.max(t)));
        }
        if served {
            self.succeeded += 1;
            self.last_success = Some(self.last_success.map_or(t, |l| l.max(t)));
        }
    }

    /// Counts client `id` stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    pub fn finish(&mut self, t: SimTime, id: u32, completed: bool) {
        if completed {
            self.completed += 1;
        }
        if let Some(finishes) = &mut self.client_finishes {
            finishes[id as usize] = Some(t);
        }
        self.first_finish = Some(self.first_finish.map_or(t, |f| f.min(t)));
        self.last_finish = Some(self.last_finish.map_or(t, |l| l.max(t)));
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
        self.served_windows.merge(&other.served_windows);
        self.refused_windows.merge(&other.refused_windows);
        self.completed += other.completed;
        self.first_finish = min(self.first_finish, other.first_finish);
        self.last_finish = max(self.last_finish, other.last_finish);
        match (&mut self.client_finishes, &other.client_finishes) {
            (Some(mine), Some(theirs)) => {
                for (m, t) in mine.iter_mut().zip(theirs) {
                    *m = m.or(*t);
                }
            }
            (mine @ None, Some(theirs)) => *mine = Some(theirs.clone()),
            _ => {}
        }
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
    /// Clients that fetched all their work.
    pub completed: u64,
    /// Refused requests as a percentage of all requests (0 when there were none).
    pub wasted_pct: f64,
    /// Time to finish all work: when the last client stopped, its last answer received, in
    /// seconds.
    pub finish_s: f64,
    /// Latest minus earliest client finish, in seconds.
    pub finish_spread_s: f64,
    /// `occ` only: writes sent, failed ones included (Brooker's "calls"), the same count as
    /// `requests` under the study's name. Absent from the JSON and the sweep's columns for
    /// the other servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u64>,
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
            completed: tally.completed,
            wasted_pct: if tally.requests == 0 {
                0.0
            } else {
                100.0 * tally.refused as f64 / tally.requests as f64
            },
            finish_s: tally.last_finish.map_or(0.0, SimTime::as_secs_f64),
            finish_spread_s: match (tally.first_finish, tally.last_finish) {
                (Some(first), Some(last)) => (last - first).as_secs_f64(),
                _ => 0.0,
            },
            attempts: None,
        }
    }

    /// [`Summary::of`], with `attempts` filled in when `attempts` is true (an `occ` run).
    pub fn with_attempts(tally: &Tally, attempts: bool) -> Self {
        let mut summary = Summary::of(tally);
        summary.attempts = attempts.then_some(summary.requests);
        summary
    }
}

/// Mean, standard deviation and range of one figure over replicates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Spread {
        let values: Vec<f64> = values.into_iter().collect();
        if values.is_empty() {
            return Spread {
                mean: 0.0,
                sd: 0.0,
                min: 0.0,
                max: 0.0,
            };
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let sd = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Spread {
            mean,
            sd,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The work figures of a strategy over its replicates (epoch phases and seeds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReplicateSpread {
    /// Number of replicates.
    pub replicates: u32,
    /// Requests sent.
    pub requests: Spread,
    /// Requests refused.
    pub refused: Spread,
    /// Refused / requests, percent.
    pub wasted_pct: Spread,
    /// Time to finish all work, seconds.
    pub finish_s: Spread,
    /// Latest minus earliest client finish, seconds.
    pub finish_spread_s: Spread,
}

impl ReplicateSpread {
    /// The spread of each figure over `summaries`.
    pub fn of(summaries: &[Summary]) -> ReplicateSpread {
        let over = |f: fn(&Summary) -> f64| Spread::of(summaries.iter().map(f));
        ReplicateSpread {
            replicates: summaries.len() as u32,
            requests: over(|s| s.requests as f64),
            refused: over(|s| s.refused as f64),
            wasted_pct: over(|s| s.wasted_pct),
            finish_s: over(|s| s.finish_s),
            finish_spread_s: over(|s| s.finish_spread_s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_a_small_sample_by_hand() {
        // 2, 4, 6: mean 4, sample variance (4 + 0 + 4) / 2 = 4, sd 2.
        let s = Spread::of([2.0, 4.0, 6.0]);
        assert_eq!((s.mean, s.sd, s.min, s.max), (4.0, 2.0, 2.0, 6.0));
        assert_eq!(Spread::of([7.0]).sd, 0.0);
    }

    #[test]
    fn served_and_refused_windows_count_every_request_once() {
        let bin = SimDuration::from_millis(100);
        let mut t = Tally::new(bin);
        t.request(SimTime(50_000_000), false, true);
        t.request(SimTime(150_000_000), false, false);
        t.request(SimTime(160_000_000), true, true);
        t.finish(SimTime(170_000_000), 0, true);
        t.finish(SimTime(400_000_000), 1, false);
        assert_eq!(t.served_windows.counts(), [1, 1]);
        assert_eq!(t.refused_windows.counts(), [0, 1]);
        assert_eq!(
            t.served_windows.total() + t.refused_windows.total(),
            t.requests
        );
        let s = Summary::of(&t);
        assert_eq!(s.completed, 1);
        assert!((s.wasted_pct - 100.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.finish_s, 0.4);
        assert!((s.finish_spread_s - 0.23).abs() < 1e-12);
    }

    #[test]
    fn a_cursor_finds_the_same_windows_as_division_forward_and_back() {
        use crate::rng::{uniform_below, ClientRng};
        let mut rng = ClientRng::new(18);
        for bin in [1, 7, 100_000_000, 999_999_937, u64::MAX / 3, u64::MAX] {
            let h = Histogram::new(SimDuration(bin));
            let mut cursor = h.cursor();
            let mut t = 0u64;
            for _ in 0..20_000 {
                // Mostly small steps forward, some jumps, some steps back (the independent
                // path starts each client again at 0).
                t = match uniform_below(&mut rng, 8) {
                    0 => uniform_below(&mut rng, t.saturating_add(1)),
                    1 => uniform_below(&mut rng, u64::MAX),
                    2 => u64::MAX - uniform_below(&mut rng, 3),
                    _ => t.saturating_add(uniform_below(&mut rng, bin.min(1 << 40) / 4 + 1)),
                };
                assert_eq!(
                    cursor.window_of(SimTime(t)),
                    (t / bin) as usize,
                    "{t} / {bin}"
                );
            }
        }
    }

    #[test]
    fn window_of_is_exact_division() {
        use crate::rng::{uniform_below, ClientRng};
        let mut rng = ClientRng::new(17);
        for bin in [
            1,
            3,
            7,
            100_000_000,
            1_000_000_000,
            999_999_937,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let h = Histogram::new(SimDuration(bin));
            for t in [
                0,
                1,
                bin - 1,
                bin,
                bin.saturating_add(1),
                u64::MAX - 1,
                u64::MAX,
            ] {
                assert_eq!(h.window_of(SimTime(t)), (t / bin) as usize, "{t} / {bin}");
            }
            for _ in 0..20_000 {
                let t = match uniform_below(&mut rng, 3) {
                    0 => uniform_below(&mut rng, 1 << 40),
                    1 => uniform_below(&mut rng, u64::MAX),
                    _ => uniform_below(&mut rng, 1 << 20)
                        .saturating_mul(bin)
                        .saturating_sub(1),
                };
                assert_eq!(h.window_of(SimTime(t)), (t / bin) as usize, "{t} / {bin}");
            }
        }
    }

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
    fn each_client_finish_is_kept_for_small_runs_and_merges_by_client() {
        let bin = SimDuration::from_millis(100);
        assert!(Tally::for_clients(bin, MAX_CLIENT_FINISHES as u32 + 1)
            .client_finishes
            .is_none());
        let mut a = Tally::for_clients(bin, 3);
        let mut b = Tally::for_clients(bin, 3);
        a.finish(SimTime(5), 2, true);
        b.finish(SimTime(7), 0, false);
        b.finish(SimTime(9), 1, true);
        a.merge(&b);
        assert_eq!(
            a.client_finishes,
            Some(vec![Some(SimTime(7)), Some(SimTime(9)), Some(SimTime(5))])
        );
        assert_eq!(
            (a.first_finish, a.last_finish),
            (Some(SimTime(5)), Some(SimTime(9)))
        );
        let mut empty = Tally::new(bin);
        empty.merge(&a);
        assert_eq!(empty.client_finishes, a.client_finishes);
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
