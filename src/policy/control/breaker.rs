//! Circuit breakers kept per client process:
//!
//! - **retries** (Brooker 2022's "retry circuit breaker"): first attempts always go; a retry
//!   is allowed only while failed attempts ≤ `ratio` × calls started, counted over the last
//!   `window` (a [`Windowed`] sum) or the process's whole life (`window=all`, as Brooker's
//!   simulation does). The failure being decided on is already counted.
//! - **calls** (the classic closed → open → half-open breaker, as resilience4j's time-based
//!   one): call outcomes are counted over `window`; once at least `min_calls` calls ended in it
//!   and failed / ended ≥ `ratio`, the breaker opens: every call fails locally without a
//!   request, and retries of calls already under way are denied. After `open` the next call is
//!   let through as a trial (half-open; others still fail locally); its success closes the
//!   breaker, its failure opens it again. Counts restart at each change of state. Calls
//!   rejected locally are not counted as failures (they never reached the server).

use crate::time::{SimDuration, SimTime};

use super::window::Windowed;

/// A breaker and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Breaker {
    /// No breaker.
    None,
    /// Retries stop while failed attempts exceed `ratio` × calls.
    Retries {
        /// Failed attempts per call started above which retries stop.
        ratio: f64,
        /// The window counted over; `None` for the whole run.
        window: Option<SimDuration>,
    },
    /// The classic breaker on call outcomes.
    Calls {
        /// Failure ratio that opens it.
        ratio: f64,
        /// The window of call outcomes.
        window: SimDuration,
        /// Calls ended in the window before the ratio counts.
        min_calls: u64,
        /// How long it stays open before a trial.
        open: SimDuration,
    },
}

/// Where a classic breaker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Circuit {
    /// Calls go.
    Closed,
    /// Calls fail locally until this time.
    Open {
        /// When the next call may be a trial.
        until: SimTime,
    },
    /// One trial call is under way; others fail locally.
    HalfOpen,
}

/// A process's breaker state.
// Inline, not boxed: one per process, sized once, never allocating while the loop runs.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// No breaker.
    None,
    /// Calls started and failed attempts.
    Retries {
        /// Calls started in the window.
        calls: Windowed,
        /// Failed attempts in the window.
        failed: Windowed,
    },
    /// Calls ended and failed, and the circuit.
    Calls {
        /// Calls ended in the window.
        ended: Windowed,
        /// Calls failed in the window.
        failed: Windowed,
        /// The circuit.
        circuit: Circuit,
    },
}

impl Breaker {
    /// A process's breaker at the start (closed, nothing counted).
    pub fn start(&self) -> BreakerState {
        match *self {
            Breaker::None => BreakerState::None,
            Breaker::Retries { window, .. } => {
                let range = window.map_or(0, |w| w.as_nanos());
                BreakerState::Retries {
                    calls: Windowed::new(range),
                    failed: Windowed::new(range),
                }
            }
            Breaker::Calls { window, .. } => BreakerState::Calls {
                ended: Windowed::new(window.as_nanos()),
                failed: Windowed::new(window.as_nanos()),
                circuit: Circuit::Closed,
            },
        }
    }

    /// The name `--breaker` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Breaker::None => "none",
            Breaker::Retries { .. } => "retries",
            Breaker::Calls { .. } => "calls",
        }
    }
}

impl BreakerState {
    /// A call wants to start at `now`: false when it must fail locally. A call let through
    /// half-open is the trial (`trial` set).
    #[inline]
    pub fn admit_call(&mut self, now: SimTime, trial: &mut bool) -> bool {
        match self {
            BreakerState::Retries { calls, .. } => {
                calls.add(now, 1);
                true
            }
            BreakerState::Calls { circuit, .. } => match *circuit {
                Circuit::Closed => true,
                Circuit::Open { until } if now >= until => {
                    *circuit = Circuit::HalfOpen;
                    *trial = true;
                    true
                }
                Circuit::Open { .. } | Circuit::HalfOpen => false,
            },
            BreakerState::None => true,
        }
    }

    /// An attempt ended; `failed` when it did not succeed.
    #[inline]
    pub fn attempt_ended(&mut self, now: SimTime, failed: bool) {
        if let (BreakerState::Retries { failed: f, .. }, true) = (self, failed) {
            f.add(now, 1);
        }
    }

    /// The strategy wants a retry: false when the breaker denies it.
    #[inline]
    pub fn allow_retry(&mut self, breaker: &Breaker, now: SimTime) -> bool {
        match (self, breaker) {
            (BreakerState::Retries { calls, failed }, Breaker::Retries { ratio, .. }) => {
                failed.sum(now) as f64 <= ratio * calls.sum(now) as f64
            }
            (BreakerState::Calls { circuit, .. }, _) => !matches!(circuit, Circuit::Open { .. }),
            _ => true,
        }
    }

    /// A call that reached the server ended (`trial`: it was the half-open trial).
    #[inline]
    pub fn call_ended(&mut self, breaker: &Breaker, now: SimTime, succeeded: bool, trial: bool) {
        let (
            BreakerState::Calls {
                ended,
                failed,
                circuit,
            },
            Breaker::Calls {
                ratio,
                window,
                min_calls,
                open,
            },
        ) = (self, breaker)
        else {
            return;
        };
        let reset = |ended: &mut Windowed, failed: &mut Windowed| {
            *ended = Windowed::new(window.as_nanos());
            *failed = Windowed::new(window.as_nanos());
        };
        if trial {
            *circuit = if succeeded {
                Circuit::Closed
            } else {
                Circuit::Open { until: now + *open }
            };
            reset(ended, failed);
            return;
        }
        if *circuit != Circuit::Closed {
            // A call admitted before the breaker opened: its outcome is stale.
            return;
        }
        ended.add(now, 1);
        if !succeeded {
            failed.add(now, 1);
        }
        let (n, f) = (ended.sum(now), failed.sum(now));
        if n as u64 >= *min_calls && f as f64 >= ratio * n as f64 {
            *circuit = Circuit::Open { until: now + *open };
            reset(ended, failed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn the_classic_breaker_opens_waits_tries_once_and_closes_or_reopens() {
        // ratio 0.5 over 10 s, at least 4 calls, open for 5 s. A scripted sequence:
        let b = Breaker::parse("calls:ratio=0.5,window=10s,min_calls=4,open=5s").unwrap();
        let mut s = b.start();
        let mut trial = false;
        let t = |secs: u64| SimTime(secs * S);
        // Three calls, two failed: under min_calls, still closed.
        for (at, ok) in [(0, true), (1, false), (2, false)] {
            assert!(s.admit_call(t(at), &mut trial));
            s.call_ended(&b, t(at), ok, false);
        }
        assert!(matches!(
            s,
            BreakerState::Calls {
                circuit: Circuit::Closed,
                ..
            }
        ));
        // The fourth call succeeds: 2 failed of 4 = 0.5 ≥ 0.5: opens at 3 s until 8 s.
        assert!(s.admit_call(t(3), &mut trial));
        s.call_ended(&b, t(3), true, false);
        assert!(
            matches!(s, BreakerState::Calls { circuit: Circuit::Open { until }, .. } if until == t(8))
        );
        // Open: calls fail locally and retries are denied, until 8 s.
        assert!(!s.admit_call(t(7), &mut trial));
        assert!(!s.allow_retry(&b, t(7)));
        // At 8 s the next call is the trial (half-open); others still fail locally.
        assert!(s.admit_call(t(8), &mut trial) && trial);
        assert!(!s.admit_call(t(8), &mut false));
        assert!(s.allow_retry(&b, t(8)));
        // The trial fails: open again until 9 + 5 = 14 s.
        s.call_ended(&b, t(9), false, true);
        assert!(
            matches!(s, BreakerState::Calls { circuit: Circuit::Open { until }, .. } if until == t(14))
        );
        // The next trial at 14 s succeeds: closed, with the counts started afresh (one failure
        // after it is 1 of 1, but under min_calls).
        let mut trial = false;
        assert!(s.admit_call(t(14), &mut trial) && trial);
        s.call_ended(&b, t(15), true, true);
        assert!(matches!(
            s,
            BreakerState::Calls {
                circuit: Circuit::Closed,
                ..
            }
        ));
        assert!(s.admit_call(t(16), &mut false));
        s.call_ended(&b, t(16), false, false);
        assert!(matches!(
            s,
            BreakerState::Calls {
                circuit: Circuit::Closed,
                ..
            }
        ));
    }

    #[test]
    fn the_retry_breaker_stops_retries_above_the_ratio_of_failures_to_calls() {
        // Over the whole life, ratio 0.1: 10 calls and 1 failed attempt allow a retry (1 ≤ 1);
        // a second failure (2 > 1) denies it; 10 more calls (2 ≤ 2) allow it again.
        let b = Breaker::parse("retries").unwrap();
        let mut s = b.start();
        let now = SimTime(0);
        for _ in 0..10 {
            assert!(s.admit_call(now, &mut false));
        }
        s.attempt_ended(now, true);
        assert!(s.allow_retry(&b, now));
        s.attempt_ended(now, true);
        assert!(!s.allow_retry(&b, now));
        s.attempt_ended(now, false);
        assert!(!s.allow_retry(&b, now));
        for _ in 0..10 {
            s.admit_call(now, &mut false);
        }
        assert!(s.allow_retry(&b, now));
        // A windowed breaker forgets: 30 s later the failures and calls are gone, 0 ≤ 0.
        let b = Breaker::parse("retries:ratio=0.1,window=10s").unwrap();
        let mut s = b.start();
        s.admit_call(now, &mut false);
        s.attempt_ended(now, true);
        s.attempt_ended(now, true);
        assert!(!s.allow_retry(&b, now));
        assert!(s.allow_retry(&b, SimTime(30 * S)));
    }

    #[test]
    fn bad_breakers_and_throttles_say_what_is_accepted() {
        let e = Breaker::parse("retries:ratio=1.5").unwrap_err();
        assert!(
            e.accepted.contains("ratio=1.5 is out of range") && e.accepted.contains("at most 1")
        );
        let e = Breaker::parse("calls:min_calls=0").unwrap_err();
        assert!(e.accepted.contains("min_calls=0"), "{}", e.accepted);
        let e = Breaker::parse("retries:open=5s").unwrap_err();
        assert!(
            e.accepted
                .contains("`open` is a parameter of calls, not of retries"),
            "{}",
            e.accepted
        );
        let e = Breaker::parse("half").unwrap_err();
        assert_eq!(e.accepted, "accepted: none, retries, calls");
        let e = super::super::Throttle::parse("sre:k=0.5").unwrap_err();
        assert!(
            e.accepted.contains("k=0.5 is out of range"),
            "{}",
            e.accepted
        );
        let e = super::super::Throttle::parse("aws").unwrap_err();
        assert_eq!(e.accepted, "accepted: none, sre, aws-adaptive");
    }
}
