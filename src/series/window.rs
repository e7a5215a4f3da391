//! The per-window series streamed as simulated time passes: a [`SeriesRow`] of counts a
//! window, and the [`SeriesBuilder`] that keeps the open one, closes it when time reaches a
//! later window, leaves quiet windows out, and hands each closed row to the recovery verdict.

use super::{Recovery, WindowLatencies};
use crate::time::{SimDuration, SimTime};

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
