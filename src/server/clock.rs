//! The simulated wall clock and the rate-limit headers written with it.
//!
//! Simulated time starts at 0; the wall clock a server stamps headers with starts at a whole
//! Unix second plus a configurable **phase** (where in the second the run starts). Whole-second
//! headers make results depend on that phase, so it is a parameter, not an accident. Which whole
//! second it is does not matter (every header is relative), so wall time here counts from the
//! run's first whole second. No state, no I/O.

use crate::policy::Hints;
use crate::time::{SimDuration, SimTime, NANOS_PER_SEC};

/// Maps simulated time to wall time: `wall = phase + t`, in nanoseconds since a whole second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WallClock {
    /// Where in its second the run starts; below one second.
    pub phase: SimDuration,
}

impl WallClock {
    /// Wall time of simulated time `t`, nanoseconds since the run's first whole second.
    #[inline(always)]
    pub fn wall(&self, t: SimTime) -> u64 {
        t.as_nanos() + self.phase.as_nanos()
    }

    /// Simulated time of wall time `wall` (saturating at the start of the run).
    #[inline(always)]
    pub fn sim(&self, wall: u64) -> SimTime {
        SimTime(wall.saturating_sub(self.phase.as_nanos()))
    }
}

/// `floor(wall)` to a whole second, in nanoseconds.
#[inline(always)]
pub fn floor_second(wall: u64) -> u64 {
    wall - wall % NANOS_PER_SEC
}

/// `ceil(wall)` to a whole second, in nanoseconds.
#[inline(always)]
pub fn ceil_second(wall: u64) -> u64 {
    wall.div_ceil(NANOS_PER_SEC) * NANOS_PER_SEC
}

/// How `Retry-After` and `X-RateLimit-Reset` are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HeaderStyle {
    /// Laravel's: `X-RateLimit-Reset` is the stamped window end in whole Unix seconds and
    /// `Retry-After` = stamp − floor(now) whole seconds, so it can be 0 while the key lives on.
    #[default]
    WholeSeconds,
    /// Fractional: both headers give the exact instant the limiter will admit again.
    Exact,
    /// `Retry-After` = ceil(time until the limiter admits again) in whole seconds, and
    /// `X-RateLimit-Reset` = ceil(that instant); never early.
    RoundUp,
}

impl HeaderStyle {
    /// Every style, in the order help lists them.
    pub const ALL: [HeaderStyle; 3] = [
        HeaderStyle::WholeSeconds,
        HeaderStyle::Exact,
        HeaderStyle::RoundUp,
    ];

    /// The name used on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            HeaderStyle::WholeSeconds => "whole-seconds",
            HeaderStyle::Exact => "exact",
            HeaderStyle::RoundUp => "round-up",
        }
    }
}

/// Why a limiter refused: when it will really admit again, and the whole second it stamps as
/// the reset (Laravel's `timer`). Both are wall times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The first wall instant at which the same key would be admitted.
    pub available_at: u64,
    /// The reset the server announces in whole-seconds style (a multiple of one second).
    pub stamp: u64,
}

impl Refusal {
    /// A refusal announcing `available_at`, stamped with the whole second it falls in (the
    /// rolling limiters' reset).
    #[inline(always)]
    pub fn at(available_at: u64) -> Refusal {
        Refusal {
            available_at,
            stamp: floor_second(available_at),
        }
    }
}

/// Retry-After and reset-in of `hints`, in whole milliseconds, for the limiters' tests.
#[cfg(test)]
pub(crate) fn hint_millis(hints: Hints) -> (u64, u64) {
    const MS: u64 = 1_000_000;
    (
        hints.retry_after.expect("Retry-After sent").as_nanos() / MS,
        hints.reset_in.expect("reset sent").as_nanos() / MS,
    )
}

/// The headers a refusal carries and whether the client may read them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Headers {
    /// The server's wall clock.
    pub clock: WallClock,
    /// How the headers are written.
    pub style: HeaderStyle,
    /// False when the client cannot read them (a cross-origin response whose server did not
    /// expose them): header-reading strategies then fall back to backoff.
    pub visible: bool,
}

impl Default for Headers {
    fn default() -> Self {
        Headers {
            clock: WallClock::default(),
            style: HeaderStyle::WholeSeconds,
            visible: true,
        }
    }
}

impl Headers {
    /// What a client reads from `refusal` answered at simulated time `now`: `Retry-After`, and
    /// the time from `now` to the announced reset (zero when the reset is already past).
    #[inline]
    pub fn hints(&self, now: SimTime, refusal: Refusal) -> Hints {
        if !self.visible {
            return Hints::default();
        }
        let wall = self.clock.wall(now);
        let (retry_after, reset) = match self.style {
            HeaderStyle::WholeSeconds => (
                refusal.stamp.saturating_sub(floor_second(wall)),
                refusal.stamp,
            ),
            HeaderStyle::Exact => (
                refusal.available_at.saturating_sub(wall),
                refusal.available_at,
            ),
            HeaderStyle::RoundUp => (
                ceil_second(refusal.available_at.saturating_sub(wall)),
                ceil_second(refusal.available_at),
            ),
        };
        Hints {
            retry_after: Some(SimDuration(retry_after)),
            reset_in: Some(SimDuration(reset.saturating_sub(wall))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = NANOS_PER_SEC;

    #[test]
    fn each_style_writes_what_its_documentation_says() {
        // Refused at wall 3.3 s; the limiter admits again at 60.4 s; Laravel stamped 60 s.
        let refusal = Refusal {
            available_at: 60 * S + 400_000_000,
            stamp: 60 * S,
        };
        let now = SimTime(3 * S + 300_000_000);
        let headers = |style| Headers {
            clock: WallClock::default(),
            style,
            visible: true,
        };
        let whole = headers(HeaderStyle::WholeSeconds).hints(now, refusal);
        assert_eq!(whole.retry_after, Some(SimDuration::from_secs(57)));
        assert_eq!(whole.reset_in, Some(SimDuration(56 * S + 700_000_000)));
        let exact = headers(HeaderStyle::Exact).hints(now, refusal);
        assert_eq!(exact.retry_after, Some(SimDuration(57 * S + 100_000_000)));
        assert_eq!(exact.reset_in, exact.retry_after);
        let up = headers(HeaderStyle::RoundUp).hints(now, refusal);
        assert_eq!(up.retry_after, Some(SimDuration::from_secs(58)));
        assert_eq!(up.reset_in, Some(SimDuration(57 * S + 700_000_000)));
        let hidden = Headers {
            visible: false,
            ..headers(HeaderStyle::Exact)
        };
        assert_eq!(hidden.hints(now, refusal), Hints::default());
    }

    #[test]
    fn the_phase_moves_the_wall_clock_only() {
        let clock = WallClock {
            phase: SimDuration::from_millis(700),
        };
        assert_eq!(clock.wall(SimTime(S)), S + 700_000_000);
        assert_eq!(clock.sim(2 * S), SimTime(1_300_000_000));
        assert_eq!(floor_second(clock.wall(SimTime(400_000_000))), S);
        assert_eq!(ceil_second(S), S);
        assert_eq!(ceil_second(S + 1), 2 * S);
    }
}
