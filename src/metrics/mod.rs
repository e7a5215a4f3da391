//! Measurements of one run: the window histogram of retry arrivals, the histograms of every
//! request split into served and refused, when clients finished, and the summary figures
//! (peak, non-empty windows, span, totals, outcomes, waste). Counting only: no formatting, no
//! I/O.
//!
//! A window is `floor(t / bin)` in integer nanoseconds, so an arrival at exactly 1 s with a
//! 100 ms bin is in window 10 (which starts at 1.0 s), never 9.

mod histogram;

pub use histogram::{Histogram, WindowCursor, WindowFold, Windows, BLOCK_WINDOWS, DENSE_WINDOWS};

use serde::Serialize;

use crate::time::{SimDuration, SimTime};

/// Runs of at most this many clients keep each client's finish time (8 bytes each would be
/// 80 MB at ten million clients, and no one reads ten million numbers).
pub const MAX_CLIENT_FINISHES: usize = 10_000;

/// Everything counted during one run, before it is summarised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Retry arrivals per window (the first request of each client is not a retry).
    pub retries: Histogram,
    /// The retry arrivals' figures folded as their windows passed, for a run that keeps no
    /// window ([`WindowFold`]): then `retries`, `served_windows` and `refused_windows` stay
    /// empty and the summary reads this instead.
    pub retries_folded: Option<WindowFold>,
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
    /// What the browser tabs did, for a run with tabs ([`crate::engine::browser`]); `None`
    /// otherwise.
    pub browser: Option<BrowserCounts>,
}

/// What a run's browser tabs did: the summary's `hidden_clients`, `retries_while_hidden`,
/// `paused` and `early_retries`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BrowserCounts {
    /// Tabs hidden at t = 0.
    pub hidden_clients: u64,
    /// Retries sent while their tab was hidden.
    pub retries_while_hidden: u64,
    /// Tabs still waiting to become visible when the run ended.
    pub paused: u64,
    /// Retries that reached the server before the instant its refusal announced.
    pub early_retries: u64,
}

impl BrowserCounts {
    fn add(&mut self, other: &BrowserCounts) {
        self.hidden_clients += other.hidden_clients;
        self.retries_while_hidden += other.retries_while_hidden;
        self.paused += other.paused;
        self.early_retries += other.early_retries;
    }
}

impl Tally {
    /// Nothing counted yet.
    pub fn new(bin: SimDuration) -> Self {
        Tally {
            retries: Histogram::new(bin),
            retries_folded: None,
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
            browser: None,
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

    /// Empties this tally into what [`Tally::for_clients`] makes for `bin` and `clients`,
    /// keeping its histograms' buffers ([`Histogram::clear`]) and its clients' finishes'
    /// vector, so that runs one after another grow them once.
    pub fn clear_for_clients(&mut self, bin: SimDuration, clients: u32) {
        let mut fresh = Tally::new(bin);
        for (mine, theirs) in [
            (&mut self.retries, &mut fresh.retries),
            (&mut self.served_windows, &mut fresh.served_windows),
            (&mut self.refused_windows, &mut fresh.refused_windows),
        ] {
            mine.clear(bin);
            std::mem::swap(mine, theirs);
        }
        let clients = clients as usize;
        fresh.client_finishes = (clients <= MAX_CLIENT_FINISHES).then(|| {
            let mut finishes = self.client_finishes.take().unwrap_or_default();
            finishes.clear();
            finishes.resize(clients, None);
            finishes
        });
        *self = fresh;
    }

    /// Bytes held by this tally's histograms and clients' finishes
    /// ([`Histogram::capacity_bytes`]).
    pub fn capacity_bytes(&self) -> usize {
        let finishes = self.client_finishes.as_ref().map_or(0, |f| {
            f.capacity().saturating_mul(size_of::<Option<SimTime>>())
        });
        [&self.retries, &self.served_windows, &self.refused_windows]
            .iter()
            .fold(finishes, |sum, h| sum.saturating_add(h.capacity_bytes()))
    }

    /// This tally with each histogram limited to `blocks` blocks beyond the dense windows
    /// ([`Histogram::limit_blocks`]; `u64::MAX`: no limit).
    pub fn with_block_limit(mut self, blocks: u64) -> Self {
        let blocks = usize::try_from(blocks).unwrap_or(usize::MAX);
        for h in [
            &mut self.retries,
            &mut self.served_windows,
            &mut self.refused_windows,
        ] {
            h.limit_blocks(blocks);
        }
        self
    }

    /// Whether a histogram dropped a count for want of a block ([`Tally::with_block_limit`]).
    pub fn outgrown(&self) -> bool {
        self.retries.outgrown() || self.served_windows.outgrown() || self.refused_windows.outgrown()
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
        self.request_windows(w, retry, served);
        let mut totals = Totals::default();
        totals.request(t, retry, served);
        totals.add_to(self);
    }

    /// Counts a request in window `w` in the histograms only (its counts and times are
    /// [`Totals::request`]'s): served or refused, and a retry's arrival.
    #[inline(always)]
    pub fn request_windows(&mut self, w: usize, retry: bool, served: bool) {
        if served {
            self.served_windows.record_window(w);
        } else {
            self.refused_windows.record_window(w);
        }
        if retry {
            self.retries.record_window(w);
        }
    }

    /// Counts a retry arriving in window `w`, in order of time: in the histogram, or folded
    /// ([`Tally::retries_folded`]).
    #[inline(always)]
    pub fn retry_in_window(&mut self, w: usize) {
        match &mut self.retries_folded {
            Some(fold) => fold.record_window(w),
            None => self.retries.record_window(w),
        }
    }

    /// Counts a request served (`served`) or refused in window `w` in its histogram, unless
    /// the tally keeps no window ([`Tally::retries_folded`]).
    #[inline(always)]
    pub fn answer_in_window(&mut self, w: usize, served: bool) {
        if self.retries_folded.is_none() {
            if served {
                self.served_windows.record_window(w);
            } else {
                self.refused_windows.record_window(w);
            }
        }
    }

    /// Counts client `id` stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    pub fn finish(&mut self, t: SimTime, id: u32, completed: bool) {
        self.client_finished(id, t);
        self.count_finish(t, completed);
    }

    /// [`Tally::finish`] for stops counted in any order (the call loop counts a success known
    /// in advance before the events that come before it): client `id`'s latest is kept.
    #[inline(always)]
    pub fn finish_in_any_order(&mut self, t: SimTime, id: u32, completed: bool) {
        if let Some(finishes) = &mut self.client_finishes {
            let latest = &mut finishes[id as usize];
            *latest = (*latest).max(Some(t));
        }
        self.count_finish(t, completed);
    }

    #[inline(always)]
    fn count_finish(&mut self, t: SimTime, completed: bool) {
        if completed {
            self.completed += 1;
        }
        self.first_finish = earliest(self.first_finish, Some(t));
        self.last_finish = self.last_finish.max(Some(t));
    }

    /// Keeps client `id`'s finish time `t`, if this tally keeps them ([`Tally::for_clients`]).
    #[inline(always)]
    pub fn client_finished(&mut self, id: u32, t: SimTime) {
        if let Some(finishes) = &mut self.client_finishes {
            finishes[id as usize] = Some(t);
        }
    }

    /// Adds a tally of other clients of the same run (the order of merging never matters).
    pub fn merge(&mut self, other: &Tally) {
        debug_assert!(
            self.retries_folded.is_none() && other.retries_folded.is_none(),
            "folded tallies are not merged"
        );
        self.retries.merge(&other.retries);
        self.requests += other.requests;
        self.refused += other.refused;
        self.succeeded += other.succeeded;
        self.gave_up += other.gave_up;
        self.first_retry = earliest(self.first_retry, other.first_retry);
        self.last_retry = self.last_retry.max(other.last_retry);
        self.last_success = self.last_success.max(other.last_success);
        self.served_windows.merge(&other.served_windows);
        self.refused_windows.merge(&other.refused_windows);
        self.completed += other.completed;
        self.first_finish = earliest(self.first_finish, other.first_finish);
        self.last_finish = self.last_finish.max(other.last_finish);
        match (&mut self.client_finishes, &other.client_finishes) {
            (Some(mine), Some(theirs)) => {
                for (m, t) in mine.iter_mut().zip(theirs) {
                    *m = m.or(*t);
                }
            }
            (mine @ None, Some(theirs)) => *mine = Some(theirs.clone()),
            _ => {}
        }
        match (&mut self.browser, &other.browser) {
            (Some(mine), Some(theirs)) => mine.add(theirs),
            (mine @ None, Some(theirs)) => *mine = Some(*theirs),
            _ => {}
        }
    }
}

/// The earlier of two times, either of which may be absent.
#[inline]
fn earliest(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// A [`Tally`]'s counts and first and last times while a loop counts requests: plain
/// integers, a time's absence told by its count, which the loop keeps in registers instead of
/// updating the tally's fields and `Option`s in memory at every request. Added to the tally
/// once the loop ends ([`Totals::add_to`]); the histograms are counted in the tally as the
/// loop goes ([`Tally::request_windows`]). The fewer it keeps, the fewer registers the loop
/// needs: the requests are the refused and the served, and whether any retry was made is told
/// by its first and last times (the first at or before the last exactly when there was one).
#[derive(Clone, Copy, Debug)]
pub struct Totals {
    refused: u64,
    succeeded: u64,
    gave_up: u64,
    completed: u64,
    first_retry: u64,
    last_retry: u64,
    last_success: u64,
    first_finish: u64,
    last_finish: u64,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            refused: 0,
            succeeded: 0,
            gave_up: 0,
            completed: 0,
            first_retry: u64::MAX,
            last_retry: 0,
            last_success: 0,
            first_finish: u64::MAX,
            last_finish: 0,
        }
    }
}

impl Totals {
    /// Counts a request at `t`; `retry` says whether it is a retry, `served` whether it was
    /// served (else refused).
    #[inline(always)]
    pub fn request(&mut self, t: SimTime, retry: bool, served: bool) {
        let t = t.as_nanos();
        if retry {
            self.first_retry = self.first_retry.min(t);
            self.last_retry = self.last_retry.max(t);
        }
        if served {
            self.succeeded += 1;
            self.last_success = self.last_success.max(t);
        } else {
            self.refused += 1;
        }
    }

    /// Counts a client stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    pub fn finish(&mut self, t: SimTime, completed: bool) {
        let t = t.as_nanos();
        if completed {
            self.completed += 1;
        } else {
            self.gave_up += 1;
        }
        self.first_finish = self.first_finish.min(t);
        self.last_finish = self.last_finish.max(t);
    }

    /// Adds these counts and times to `tally`'s.
    #[inline(always)]
    pub fn add_to(&self, tally: &mut Tally) {
        let when = |count: u64, t: u64| (count > 0).then_some(SimTime(t));
        let finished = self.completed + self.gave_up;
        tally.requests += self.refused + self.succeeded;
        tally.refused += self.refused;
        tally.succeeded += self.succeeded;
        tally.gave_up += self.gave_up;
        tally.completed += self.completed;
        let retried = u64::from(self.first_retry <= self.last_retry);
        tally.first_retry = earliest(tally.first_retry, when(retried, self.first_retry));
        tally.last_retry = tally.last_retry.max(when(retried, self.last_retry));
        tally.last_success = tally
            .last_success
            .max(when(self.succeeded, self.last_success));
        tally.first_finish = earliest(tally.first_finish, when(finished, self.first_finish));
        tally.last_finish = tally.last_finish.max(when(finished, self.last_finish));
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
    /// Runs with browser tabs only (as the next three): tabs hidden at t = 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_clients: Option<u64>,
    /// Retries sent while their tab was hidden.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries_while_hidden: Option<u64>,
    /// Tabs still paused (hidden, waiting to become visible) when the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<u64>,
    /// Retries that reached the server before the instant its refusal announced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_retries: Option<u64>,
}

impl Summary {
    /// Summarises a tally.
    pub fn of(tally: &Tally) -> Self {
        let ((peak, peak_window), windows, total) = match &tally.retries_folded {
            Some(fold) => fold.figures(),
            None => tally.retries.figures(),
        };
        let span = match (tally.first_retry, tally.last_retry) {
            (Some(first), Some(last)) => last - first,
            _ => SimDuration::ZERO,
        };
        Summary {
            peak,
            peak_window_s: tally.retries.window_start(peak_window).as_secs_f64(),
            windows,
            span_s: span.as_secs_f64(),
            total,
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
            hidden_clients: tally.browser.map(|b| b.hidden_clients),
            retries_while_hidden: tally.browser.map(|b| b.retries_while_hidden),
            paused: tally.browser.map(|b| b.paused),
            early_retries: tally.browser.map(|b| b.early_retries),
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
        let figures: Vec<[f64; 5]> = summaries.iter().map(Self::figures).collect();
        Self::of_figures(&figures)
    }

    /// The five figures of one replicate this spread describes, in field order: requests,
    /// refused, wasted_pct, finish_s, finish_spread_s.
    pub fn figures(s: &Summary) -> [f64; 5] {
        [
            s.requests as f64,
            s.refused as f64,
            s.wasted_pct,
            s.finish_s,
            s.finish_spread_s,
        ]
    }

    /// The spread of each figure over replicates given by [`ReplicateSpread::figures`].
    pub fn of_figures(figures: &[[f64; 5]]) -> ReplicateSpread {
        let over = |i: usize| Spread::of(figures.iter().map(|f| f[i]));
        ReplicateSpread {
            replicates: figures.len() as u32,
            requests: over(0),
            refused: over(1),
            wasted_pct: over(2),
            finish_s: over(3),
            finish_spread_s: over(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleared_tally_is_a_new_one_with_its_buffers_kept() {
        let bin = SimDuration::from_millis(100);
        let mut tally = Tally::for_clients(SimDuration::from_millis(1), 3).with_block_limit(1);
        for (i, t) in [0, 5, 70_000, 2_000_000].into_iter().enumerate() {
            tally.request(SimTime(t * 1_000_000), i > 0, i % 2 == 0);
        }
        tally.finish(SimTime(9), 1, true);
        assert!(tally.outgrown(), "a second block past the limit of one");
        let held = tally.capacity_bytes();
        tally.clear_for_clients(bin, 2);
        assert_eq!(tally, Tally::for_clients(bin, 2));
        assert!(!tally.outgrown());
        assert_eq!(tally.retries.bin(), bin);
        assert_eq!(tally.retries.blocks_held(), 0);
        // Each histogram's one block was in its ordered map, which clearing frees; the rest is
        // kept.
        assert!(tally.capacity_bytes() >= held - 3 * size_of::<(usize, u32)>());
        // Counting into it again counts as into a new tally.
        let mut fresh = Tally::for_clients(bin, 2);
        for t in [tally_time(1), tally_time(3_000)] {
            tally.request(t, true, false);
            fresh.request(t, true, false);
        }
        assert_eq!(tally, fresh);
        assert_eq!(tally.retries.counts(), fresh.retries.counts());
        tally.clear_for_clients(bin, MAX_CLIENT_FINISHES as u32 + 1);
        assert_eq!(tally.client_finishes, None);
    }

    fn tally_time(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn spread_of_a_small_sample_by_hand() {
        // 2, 4, 6: mean 4, sample variance (4 + 0 + 4) / 2 = 4, sd 2.
        let s = Spread::of([2.0, 4.0, 6.0]);
        assert_eq!((s.mean, s.sd, s.min, s.max), (4.0, 2.0, 2.0, 6.0));
        assert_eq!(Spread::of([7.0]).sd, 0.0);
    }

    #[test]
    fn a_histogram_limited_to_two_blocks_drops_the_third_and_says_so() {
        // Windows beyond the dense ones fall in blocks of 16: window D and D + 5 share block
        // D/16, D + 16 is the next, D + 40 a third. Limited to two blocks, the third's count
        // is dropped and the histogram is outgrown; the dense windows are never limited. A
        // merge into an unlimited histogram carries the mark.
        let d = DENSE_WINDOWS;
        let mut h = Histogram::new(SimDuration::from_millis(100));
        h.limit_blocks(2);
        for w in [0, d - 1, d, d + 5, d + 16] {
            h.record_window(w);
        }
        assert!(!h.outgrown());
        assert_eq!(h.blocks_held(), 2);
        h.record_window(d + 40);
        h.record_window(d + 17);
        assert!(h.outgrown());
        assert_eq!(h.blocks_held(), 2);
        assert_eq!(h.total(), 6);
        assert_eq!(h.count(d + 40), 0);
        assert_eq!(h.count(d + 17), 1);
        let mut all = Histogram::new(SimDuration::from_millis(100));
        all.merge(&h);
        assert!(all.outgrown());
        // A tally limited to one block a histogram is outgrown as soon as any of its three
        // needs a second.
        let mut t = Tally::new(SimDuration::from_millis(100)).with_block_limit(1);
        t.request_in_window(SimTime::ZERO, d, true, true);
        t.request_in_window(SimTime::ZERO, d + 16, false, false);
        assert!(!t.outgrown(), "each histogram holds one block");
        t.request_in_window(SimTime::ZERO, d + 32, false, true);
        assert!(t.outgrown());
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
