//! A count over a sliding window of simulated time, as Finagle keeps its retry budget's
//! deposits: twitter/util's `WindowedAdder` (util-core, `com/twitter/util/WindowedAdder.scala`),
//! ported to integer nanoseconds. The range is cut into `SLICES` slices: the one being written
//! and `SLICES − 1` older ones; a slice closes when a read or write comes `range / SLICES` or
//! more after the last close, and slices skipped meanwhile are zeroed, so the sum covers the
//! last `range` to within one slice. Fixed size, no allocation; the breaker and the SRE
//! throttle count their windows with it too.

use crate::time::SimTime;

/// Slices of a window, as Finagle's leaky bucket uses (`WindowedAdder(ttl, 10, now)`).
pub const SLICES: usize = 10;

/// A windowed sum (see the module documentation); `slice == 0` never expires anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windowed {
    /// Length of a slice, ns; 0 for a window over the whole run.
    slice: u64,
    /// The slice being written.
    writer: i64,
    /// The older slices, a ring.
    buf: [i64; SLICES - 1],
    /// The ring's next slot.
    i: usize,
    /// When the writer slice opened.
    old: u64,
}

impl Windowed {
    /// A window of `range_ns` (0: the whole run), empty, opened at t = 0.
    pub fn new(range_ns: u64) -> Windowed {
        Windowed {
            slice: range_ns / SLICES as u64,
            writer: 0,
            buf: [0; SLICES - 1],
            i: 0,
            old: 0,
        }
    }

    /// Closes the writer slice when `now` is a slice or more past its opening, as
    /// `WindowedAdder.expired` does: the writer moves into the ring, and slices skipped since
    /// (whole slices beyond the first) are zeroed.
    #[inline]
    fn expire(&mut self, now: SimTime) {
        let now = now.as_nanos();
        if self.slice == 0 || now - self.old < self.slice {
            return;
        }
        let n = SLICES - 1;
        self.buf[self.i] = self.writer;
        self.writer = 0;
        self.i = (self.i + 1) % n;
        let skip = ((now - self.old) / self.slice - 1).min(n as u64) as usize;
        for _ in 0..skip {
            self.buf[self.i] = 0;
            self.i = (self.i + 1) % n;
        }
        self.old = now;
    }

    /// Adds `x` at `now` (times never go back).
    #[inline]
    pub fn add(&mut self, now: SimTime, x: i64) {
        self.expire(now);
        self.writer += x;
    }

    /// The sum over the window at `now`.
    #[inline]
    pub fn sum(&mut self, now: SimTime) -> i64 {
        self.expire(now);
        self.writer + self.buf.iter().sum::<i64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn counts_leave_the_window_slice_by_slice() {
        // A 10 s window: slices of 1 s, a writer and a ring of 9. By hand, as WindowedAdder:
        // 5 at t = 0 (writer). 3 at 4.5 s: the writer (5) goes to slot 0, whole slices skipped
        // beyond the first, 4.5 − 1 → 3, zero slots 1–3; next slot 4; the writer reopens at
        // 4.5 s with 3. Reads at 5.5, 6.5, 7.5, 8.5, 9.5 s each close a slice into slots 4
        // (the 3), 5, 6, 7, 8; the read at 10.5 s closes into slot 0, dropping the 5.
        let mut w = Windowed::new(10 * S);
        w.add(SimTime(0), 5);
        w.add(SimTime(4 * S + S / 2), 3);
        assert_eq!(w.sum(SimTime(4 * S + S / 2)), 8);
        for t in [5, 6, 7, 8, 9] {
            assert_eq!(w.sum(SimTime(t * S + S / 2)), 8, "{t}.5 s");
        }
        assert_eq!(w.sum(SimTime(10 * S + S / 2)), 3);
        // A long silence empties everything: the skip is capped at the ring's 9 slots.
        assert_eq!(w.sum(SimTime(100 * S)), 0);
    }

    #[test]
    fn a_whole_run_window_never_forgets() {
        let mut w = Windowed::new(0);
        w.add(SimTime(0), 2);
        w.add(SimTime(1_000 * S), -1);
        assert_eq!(w.sum(SimTime(u64::MAX / 2)), 1);
    }
}
