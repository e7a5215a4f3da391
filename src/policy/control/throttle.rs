//! Adaptive throttles kept per client process: **sre**, Google SRE's client-side throttling
//! ("Handling Overload", *Site Reliability Engineering*, 2016, chapter 21): over the last
//! `window` the client counts its `requests` (every attempt it wanted to send, those it
//! rejected included) and the `accepts` (attempts the server answered with success), and
//! rejects each new attempt locally with probability max(0, (requests − k·accepts) /
//! (requests + 1)). Defaults k = 2, window 2 min, as in the book. The draw comes from the
//! process's stream, and only when the probability is above 0.
//!
//! **aws-adaptive**, the AWS SDKs' client-side rate limiter with a CUBIC fill rate: see
//! [`super::adaptive`]. Where it lacks a token the attempt waits ([`Gate::Wait`]) instead of
//! being rejected.

use crate::time::{SimDuration, SimTime};

use super::adaptive::Limiter;
use super::budget::Outcome;
use super::window::Windowed;

/// What a throttle says of an attempt that wants to go now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// It goes.
    Go,
    /// It is rejected locally: its call fails without a request.
    Reject,
    /// It waits this long, then asks again.
    Wait(SimDuration),
}

/// A throttle and its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Throttle {
    /// No throttle.
    None,
    /// Google SRE adaptive throttling.
    Sre {
        /// Accepts multiplier: the client sends up to k × accepts.
        k: f64,
        /// The window counted over.
        window: SimDuration,
    },
    /// The AWS SDKs' adaptive rate limiter (botocore 'adaptive' retry mode).
    AwsAdaptive {
        /// CUBIC's multiplicative decrease (`_BETA`).
        beta: f64,
        /// CUBIC's scale constant (`_SCALE_CONSTANT`).
        scale: f64,
        /// Weight of the newest measured rate (`_DEFAULT_SMOOTHING`).
        smoothing: f64,
        /// Least fill rate, tokens a second (`_MIN_RATE`).
        min_rate: f64,
    },
}

/// A process's throttle state.
// Inline, not boxed: one per process, sized once, never allocating while the loop runs.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThrottleState {
    /// No throttle.
    None,
    /// Requests and accepts over the window.
    Sre {
        /// Attempts wanted.
        requests: Windowed,
        /// Attempts answered with success.
        accepts: Windowed,
    },
    /// The adaptive limiter's curve, bucket and clock.
    AwsAdaptive(Limiter),
}

/// Seconds of simulated time, as botocore's clock reads them.
fn seconds(t: SimTime) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// The SRE rejection probability for `requests` and `accepts`: max(0, (requests − k·accepts)
/// / (requests + 1)).
pub fn sre_rejection(requests: f64, accepts: f64, k: f64) -> f64 {
    ((requests - k * accepts) / (requests + 1.0)).max(0.0)
}

impl Throttle {
    /// A process's throttle at the start.
    pub fn start(&self) -> ThrottleState {
        match *self {
            Throttle::None => ThrottleState::None,
            Throttle::Sre { window, .. } => ThrottleState::Sre {
                requests: Windowed::new(window.as_nanos()),
                accepts: Windowed::new(window.as_nanos()),
            },
            Throttle::AwsAdaptive {
                beta,
                scale,
                smoothing,
                min_rate,
            } => ThrottleState::AwsAdaptive(Limiter::new(beta, scale, smoothing, min_rate)),
        }
    }

    /// The name `--throttle` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Throttle::None => "none",
            Throttle::Sre { .. } => "sre",
            Throttle::AwsAdaptive { .. } => "aws-adaptive",
        }
    }
}

impl ThrottleState {
    /// An attempt is wanted at `now`: whether it goes, is rejected or waits. `draw` gives a
    /// uniform in [0, 1) and is called only when the SRE rejection probability is above 0.
    #[inline]
    pub fn admit(&mut self, throttle: &Throttle, now: SimTime, draw: impl FnOnce() -> f64) -> Gate {
        match (self, throttle) {
            (ThrottleState::Sre { requests, accepts }, Throttle::Sre { k, .. }) => {
                let p = sre_rejection(requests.sum(now) as f64, accepts.sum(now) as f64, *k);
                requests.add(now, 1);
                if p <= 0.0 || draw() >= p {
                    Gate::Go
                } else {
                    Gate::Reject
                }
            }
            (ThrottleState::AwsAdaptive(limiter), _) => match limiter.before_send(seconds(now)) {
                Ok(()) => Gate::Go,
                // Rounded up to the nanosecond, so the token is there when it asks again
                // (up to float rounding, when it waits one more nanosecond or so).
                Err(wait) => Gate::Wait(SimDuration(((wait * 1e9).ceil() as u64).max(1))),
            },
            _ => Gate::Go,
        }
    }

    /// An attempt ended at `now` with `outcome` (a timeout is a response here, as botocore's
    /// `needs-retry` sees one).
    #[inline]
    pub fn attempt_ended(&mut self, now: SimTime, outcome: Outcome) {
        match self {
            ThrottleState::Sre { accepts, .. } if outcome == Outcome::Success => {
                accepts.add(now, 1);
            }
            ThrottleState::AwsAdaptive(limiter) => {
                limiter.on_response(seconds(now), outcome == Outcome::Throttled);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sre_rejection_on_fixed_counts() {
        // No traffic: nothing rejected. 100 requests, 100 accepts: k·accepts = 200 > 100, 0.
        assert_eq!(sre_rejection(0.0, 0.0, 2.0), 0.0);
        assert_eq!(sre_rejection(100.0, 100.0, 2.0), 0.0);
        // 100 requests, 30 accepts: (100 − 60) / 101 = 40/101.
        assert_eq!(sre_rejection(100.0, 30.0, 2.0), 40.0 / 101.0);
        // Everything failing: 99 requests, 0 accepts: 99/100; with k = 1.1 and 10 accepts of
        // 20: (20 − 11) / 21 = 9/21.
        assert_eq!(sre_rejection(99.0, 0.0, 2.0), 0.99);
        assert!((sre_rejection(20.0, 10.0, 1.1) - 9.0 / 21.0).abs() < 1e-15);
        // At exactly requests = k·accepts the rejection starts at 0.
        assert_eq!(sre_rejection(50.0, 25.0, 2.0), 0.0);
    }

    #[test]
    fn the_throttle_counts_requests_rejected_or_not_and_draws_only_when_it_may_reject() {
        let t = Throttle::Sre {
            k: 2.0,
            window: SimDuration::from_secs(120),
        };
        let mut s = t.start();
        let now = SimTime(0);
        // First attempt: p = 0, no draw.
        assert_eq!(s.admit(&t, now, || panic!("no draw at p = 0")), Gate::Go);
        // Two more without accepts: p = (1 − 0)/2 = 0.5 for the second; a draw of 0.4 rejects,
        // and the rejected request still counts: the third sees (2 − 0)/3.
        assert_eq!(s.admit(&t, now, || 0.4), Gate::Reject);
        let mut seen = 0.0;
        let gate = s.admit(&t, now, || {
            seen = 2.0 / 3.0;
            0.7
        });
        assert_eq!(gate, Gate::Go);
        assert_eq!(seen, 2.0 / 3.0);
        // Two accepts: (3 − 4)/4 < 0: no draw again.
        s.attempt_ended(now, Outcome::Success);
        s.attempt_ended(now, Outcome::Success);
        let gate = s.admit(&t, now, || panic!("no draw when accepts cover requests"));
        assert_eq!(gate, Gate::Go);
    }
}
