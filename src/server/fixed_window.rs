//! `fixed-window`: at most `limit` requests per window, exact to Laravel's `throttle`
//! middleware (the server Experiment 2 measured), with the variants other servers use.
//!
//! Laravel's rule, which the default reproduces: the window opens at the first admitted request
//! after the previous one closed and lasts `window`; a refused request is not counted and does
//! not extend it. The window's end is stamped as a whole Unix second, floor(first hit) + window;
//! a 429 carries `Retry-After` = stamp − floor(now) and `X-RateLimit-Reset` = stamp (written by
//! [`super::Headers`]). When the key really goes depends on the cache store ([`Store`]).
//! Per-key state is 24 bytes; the answer is O(1). No I/O, no randomness.
//!
//! With a single key the limiter also records when its windows open, for the chart's
//! boundary markers: one push per window (never per request), into room reserved by
//! [`FixedWindow::prepare`], at most [`MAX_WINDOW_STARTS`]. With several keys the windows of
//! different keys open at different times, so nothing is recorded.

use super::clock::{ceil_second, floor_second, Refusal};
use crate::time::{SimDuration, NANOS_PER_SEC};

/// Where a window starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WindowStart {
    /// At the first admitted request after the previous window closed (Laravel).
    #[default]
    FirstHit,
    /// At multiples of `window` on the wall clock (windows aligned to the clock).
    Aligned,
}

impl WindowStart {
    /// Every option, in the order help lists them.
    pub const ALL: [WindowStart; 2] = [WindowStart::FirstHit, WindowStart::Aligned];
    /// The name used on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            WindowStart::FirstHit => "first-hit",
            WindowStart::Aligned => "aligned",
        }
    }
}

/// When the cache store behind the limiter drops an expired key (first-hit windows only; an
/// aligned window always closes at its end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Store {
    /// Expiry counted in whole seconds, key dropped only once the current second is past the
    /// stamp (Laravel's array store before 9, Memcached): the key lives one whole second after
    /// the stamp, answering `Retry-After: 0` all that second.
    #[default]
    WholeSecond,
    /// Precise expiry (Redis): the key goes at first hit + window, a fraction of a second after
    /// the stamp.
    Precise,
    /// Expiry at the stamp itself (Laravel's file and database stores: expired once
    /// floor(now) ≥ stamp), so a window that opened late in its second is shortened.
    AtStamp,
}

impl Store {
    /// Every store, in the order help lists them.
    pub const ALL: [Store; 3] = [Store::WholeSecond, Store::Precise, Store::AtStamp];
    /// The name used on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            Store::WholeSecond => "whole-second",
            Store::Precise => "precise",
            Store::AtStamp => "at-stamp",
        }
    }
}

/// The parameters of a fixed window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedWindowRule {
    /// Requests admitted per window; at least 1.
    pub limit: u32,
    /// Window length; positive.
    pub window: SimDuration,
    /// Where windows start.
    pub start: WindowStart,
    /// When a first-hit window's key expires.
    pub store: Store,
}

/// One key's window. `count == 0` means no window is open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Window {
    count: u32,
    /// Wall time from which the key is gone.
    expires_at: u64,
    /// The whole second announced as the reset.
    stamp: u64,
}

/// Window openings recorded per run, at most: enough for days of one-minute windows, and a
/// bound on the memory a run with tiny windows can spend on them (32 KiB). Later openings are
/// not recorded.
pub const MAX_WINDOW_STARTS: usize = 4096;

/// A fixed-window limiter over a table of keys.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedWindow {
    /// The rule.
    pub rule: FixedWindowRule,
    windows: Vec<Window>,
    /// Wall times at which windows opened (first-hit: the admitted request; aligned: the
    /// window's boundary), recorded only with a single key, see the module documentation.
    window_starts: Vec<u64>,
    /// True when there is a single key, so `window_starts` is recorded.
    record_starts: bool,
}

impl FixedWindow {
    /// A limiter with no key seen yet.
    pub fn new(rule: FixedWindowRule) -> Self {
        FixedWindow {
            rule,
            windows: Vec::new(),
            window_starts: Vec::new(),
            record_starts: false,
        }
    }

    /// Makes room for `keys` keys, all closed (and, with a single key, for the window starts).
    pub fn prepare(&mut self, keys: usize) {
        self.windows = vec![Window::default(); keys];
        self.record_starts = keys == 1;
        self.window_starts = Vec::with_capacity(if self.record_starts {
            MAX_WINDOW_STARTS
        } else {
            0
        });
    }

    /// True when window starts are recorded: [`FixedWindow::prepare`] was given a single key.
    pub fn records_starts(&self) -> bool {
        self.record_starts
    }

    /// Wall times (nanoseconds) at which windows opened, in order: recorded only when the
    /// limiter has a single key, and only the first [`MAX_WINDOW_STARTS`].
    pub fn window_starts(&self) -> &[u64] {
        &self.window_starts
    }

    /// Admits (`Ok`) or refuses a request for `key` at wall time `wall`.
    #[inline(always)]
    pub fn admit(&mut self, wall: u64, key: usize) -> Result<(), Refusal> {
        let rule = self.rule;
        let w = &mut self.windows[key];
        if w.count > 0 && wall < w.expires_at {
            if w.count >= rule.limit {
                return Err(Refusal {
                    available_at: w.expires_at,
                    stamp: w.stamp,
                });
            }
            w.count += 1;
            return Ok(());
        }
        let length = rule.window.as_nanos();
        let opened_at = match rule.start {
            WindowStart::FirstHit => wall,
            WindowStart::Aligned => wall - wall % length,
        };
        if self.record_starts && self.window_starts.len() < MAX_WINDOW_STARTS {
            self.window_starts.push(opened_at);
        }
        let (stamp, expires_at) = match rule.start {
            WindowStart::FirstHit => {
                // Laravel: availableAt(window) = floor(now) + window, whole seconds.
                let stamp = floor_second(wall.saturating_add(length));
                let expires_at = match rule.store {
                    Store::Precise => wall.saturating_add(length),
                    Store::WholeSecond => stamp + NANOS_PER_SEC,
                    Store::AtStamp => stamp,
                };
                (stamp, expires_at)
            }
            WindowStart::Aligned => {
                let end = (wall / length + 1).saturating_mul(length);
                (ceil_second(end), end)
            }
        };
        *w = Window {
            count: 1,
            expires_at,
            stamp,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::clock::{hint_millis, HeaderStyle, Headers, WallClock};
    use crate::time::SimTime;

    const MS: u64 = 1_000_000;

    /// Limit 3 per 10 s, the run starting half-way through its second (wall = t + 0.5 s).
    /// Requests at t = 0, 1, 2, 3, 9.8, 10.2, 10.6 s. Returns, per request, `None` when
    /// admitted or the Retry-After and reset-in (ms) of the refusal, in whole-seconds style.
    fn run(start: WindowStart, store: Store) -> Vec<Option<(u64, u64)>> {
        let mut limiter = FixedWindow::new(FixedWindowRule {
            limit: 3,
            window: SimDuration::from_secs(10),
            start,
            store,
        });
        limiter.prepare(1);
        let headers = Headers {
            clock: WallClock {
                phase: SimDuration::from_millis(500),
            },
            style: HeaderStyle::WholeSeconds,
            visible: true,
        };
        [0, 1000, 2000, 3000, 9800, 10_200, 10_600]
            .into_iter()
            .map(|ms| {
                let now = SimTime(ms * MS);
                limiter
                    .admit(headers.clock.wall(now), 0)
                    .err()
                    .map(|refusal| hint_millis(headers.hints(now, refusal)))
            })
            .collect()
    }

    #[test]
    fn laravel_whole_second_store_keeps_the_key_through_the_second_after_the_stamp() {
        // First hit at wall 0.5 s: stamp floor(0.5) + 10 = 10 s; the key lives while
        // floor(now) <= 10, i.e. until wall 11 s = t 10.5 s.
        // t=3 (wall 3.5): Retry-After 10 - 3 = 7 s, reset in 10 - 3.5 = 6.5 s.
        // t=9.8 (wall 10.3) and t=10.2 (wall 10.7): Retry-After 10 - 10 = 0, reset past (0).
        // t=10.6 (wall 11.1): a new window.
        assert_eq!(
            run(WindowStart::FirstHit, Store::WholeSecond),
            [
                None,
                None,
                None,
                Some((7000, 6500)),
                Some((0, 0)),
                Some((0, 0)),
                None
            ]
        );
    }

    #[test]
    fn precise_store_expires_at_first_hit_plus_window() {
        // Key gone at wall 10.5 s = t 10 s: t=9.8 (wall 10.3) still refused with Retry-After 0.
        assert_eq!(
            run(WindowStart::FirstHit, Store::Precise),
            [
                None,
                None,
                None,
                Some((7000, 6500)),
                Some((0, 0)),
                None,
                None
            ]
        );
    }

    #[test]
    fn at_stamp_store_closes_the_window_at_the_stamp() {
        // Key gone at wall 10 s = t 9.5 s: t=9.8 opens a new window, t=10.2 and 10.6 fill it.
        assert_eq!(
            run(WindowStart::FirstHit, Store::AtStamp),
            [None, None, None, Some((7000, 6500)), None, None, None]
        );
    }

    #[test]
    fn a_single_key_records_each_window_opening_up_to_the_cap() {
        // Limit 1 per 10 ns, precise store: a request every 5 ns opens a window every other
        // time (at 0, 10, 20, ...); the one between is refused and opens nothing.
        let rule = FixedWindowRule {
            limit: 1,
            window: SimDuration(10),
            start: WindowStart::FirstHit,
            store: Store::Precise,
        };
        let mut one = FixedWindow::new(rule);
        one.prepare(1);
        for i in 0..2 * MAX_WINDOW_STARTS as u64 + 10 {
            let _ = one.admit(5 * i, 0);
        }
        let expected: Vec<u64> = (0..MAX_WINDOW_STARTS as u64).map(|k| 10 * k).collect();
        assert_eq!(one.window_starts(), expected);
        // Aligned: a window first hit at 13 ns opened at its boundary, 10 ns.
        let mut aligned = FixedWindow::new(FixedWindowRule {
            start: WindowStart::Aligned,
            ..rule
        });
        aligned.prepare(1);
        let _ = aligned.admit(13, 0);
        assert_eq!(aligned.window_starts(), [10]);
        // Two keys open windows at their own times: nothing is recorded.
        let mut two = FixedWindow::new(rule);
        two.prepare(2);
        let _ = two.admit(0, 0);
        let _ = two.admit(3, 1);
        assert!(!two.records_starts() && two.window_starts().is_empty());
    }

    #[test]
    fn aligned_windows_close_at_multiples_of_the_window() {
        // Window [0, 10) s of wall time: t=3 (wall 3.5) refused, Retry-After 10 - 3 = 7 s;
        // t=9.8 (wall 10.3) is in the next window.
        assert_eq!(
            run(WindowStart::Aligned, Store::WholeSecond),
            [None, None, None, Some((7000, 6500)), None, None, None]
        );
    }
}
