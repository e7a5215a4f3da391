//! What a call-loop run records of its series' windows: a type parameter of the loop
//! ([`Loop`](super::Loop)), so that a run records only what it writes, with no test for the
//! rest in its loop. Three ways, chosen from the run's settings
//! ([`simulate_calls`](super::simulate_calls)):
//!
//! - [`SeriesBuilder`]: every window kept, for a report that writes them (a JSON report, a
//!   chart, `--series-out`), with the tally's window histograms; or, for a traced run that
//!   writes figures only, folded as below but with their latencies (a traced run is rare
//!   enough to have its one loop).
//! - [`Folded`]: each window folded into the recovery verdict as it closes and dropped, for a
//!   run that writes figures only (a sweep's row, a table report) and has a trigger to judge
//!   recovery after. The verdict reads a window's counts, never its latencies, so none is
//!   kept for its p50 and p99.
//! - [`NoWindows`]: none, for such a run without a trigger: its verdict is none whatever its
//!   windows say ([`Overload::verdict_end`]), so nothing it writes reads them.
//!
//! Every figure a run writes is the same whichever way it records (the tests compare them).

use crate::series::{Recovery, SeriesBuilder, SeriesRow};
use crate::time::SimTime;

use super::Overload;

/// A run's series of windows, as the call loop counts into it.
pub(super) trait Windows {
    /// Whether the run may keep its windows, and the tally's histograms with them (then the
    /// tally says whether it does: [`Tally::retries_folded`](crate::metrics::Tally)).
    const MAY_KEEP: bool;

    /// Whether the run records any window: whether a count, a success or the requests in
    /// the server at a window's end reach one (then their times matter, and an answer known
    /// in advance is counted when it is read: [`known`](super::known)).
    const RECORDS: bool;

    /// The series `overload` asks for.
    fn start(overload: &Overload) -> Self;

    /// Whether `now` is past the open window ([`SeriesBuilder::due`]).
    fn due(&self, now: SimTime) -> bool;

    /// Moves to the window of `now` ([`SeriesBuilder::advance`]).
    fn advance(&mut self, now: SimTime, in_system: u64);

    /// The open window's counts.
    fn counts(&mut self) -> &mut SeriesRow;

    /// Counts a success that took `latency` ns.
    fn success(&mut self, latency: u64);

    /// The rows kept and the recovery judged over them, `None` when nothing was judged.
    fn finish(self, in_system: u64) -> (Vec<SeriesRow>, Option<Recovery>);
}

/// The recovery verdict `overload` asks for, judged as windows close.
fn recovery(overload: &Overload) -> Recovery {
    let hold = overload
        .recovery_hold
        .as_nanos()
        .div_ceil(overload.series_bin.as_nanos());
    // The end of the load is known before the run for Poisson arrivals (a herd's follows its
    // last window: `Overload::verdict_end`).
    let load_end = match &overload.arrivals {
        crate::workload::Arrivals::Poisson(s) => Some(s.end),
        crate::workload::Arrivals::Herd => None,
    };
    Recovery::new(
        overload.series_bin,
        overload.trigger_end().unwrap_or(SimTime::ZERO),
        hold,
        load_end,
    )
}

impl Windows for SeriesBuilder {
    const MAY_KEEP: bool = true;
    const RECORDS: bool = true;

    /// Kept or folded as the run asks: a traced run records its latencies either way.
    fn start(overload: &Overload) -> Self {
        if overload.keep_windows {
            SeriesBuilder::new(overload.series_bin, recovery(overload))
        } else {
            SeriesBuilder::folding(overload.series_bin, recovery(overload))
        }
    }

    #[inline(always)]
    fn due(&self, now: SimTime) -> bool {
        SeriesBuilder::due(self, now)
    }

    #[inline(always)]
    fn advance(&mut self, now: SimTime, in_system: u64) {
        SeriesBuilder::advance(self, now, in_system);
    }

    #[inline(always)]
    fn counts(&mut self) -> &mut SeriesRow {
        SeriesBuilder::counts(self)
    }

    #[inline(always)]
    fn success(&mut self, latency: u64) {
        SeriesBuilder::success(self, latency);
    }

    fn finish(self, in_system: u64) -> (Vec<SeriesRow>, Option<Recovery>) {
        let (rows, recovery) = SeriesBuilder::finish(self, in_system);
        (rows, Some(recovery))
    }
}

/// Windows folded into the recovery verdict as they close, without their latencies.
pub(super) struct Folded(SeriesBuilder);

impl Windows for Folded {
    const MAY_KEEP: bool = false;
    const RECORDS: bool = true;

    fn start(overload: &Overload) -> Self {
        debug_assert!(!overload.keep_windows, "a run that folds its windows");
        Folded(SeriesBuilder::folding(
            overload.series_bin,
            recovery(overload),
        ))
    }

    #[inline(always)]
    fn due(&self, now: SimTime) -> bool {
        self.0.due(now)
    }

    #[inline(always)]
    fn advance(&mut self, now: SimTime, in_system: u64) {
        self.0.advance(now, in_system);
    }

    #[inline(always)]
    fn counts(&mut self) -> &mut SeriesRow {
        self.0.counts()
    }

    #[inline(always)]
    fn success(&mut self, _: u64) {
        self.0.counts().succeeded += 1;
    }

    fn finish(self, in_system: u64) -> (Vec<SeriesRow>, Option<Recovery>) {
        let (rows, recovery) = self.0.finish(in_system);
        (rows, Some(recovery))
    }
}

/// No window recorded: its counts go to a row nothing reads, no window is ever due.
#[derive(Default)]
pub(super) struct NoWindows {
    unread: SeriesRow,
}

impl Windows for NoWindows {
    const MAY_KEEP: bool = false;
    const RECORDS: bool = false;

    fn start(overload: &Overload) -> Self {
        debug_assert!(
            !overload.keep_windows && overload.trigger_end().is_none(),
            "a run that reads no window"
        );
        NoWindows::default()
    }

    #[inline(always)]
    fn due(&self, _: SimTime) -> bool {
        false
    }

    #[inline(always)]
    fn advance(&mut self, _: SimTime, _: u64) {}

    #[inline(always)]
    fn counts(&mut self) -> &mut SeriesRow {
        &mut self.unread
    }

    #[inline(always)]
    fn success(&mut self, _: u64) {}

    fn finish(self, _: u64) -> (Vec<SeriesRow>, Option<Recovery>) {
        (Vec::new(), None)
    }
}
