//! **aws-adaptive**: the AWS SDKs' client-side rate limiter (retry mode `adaptive`), as botocore
//! implements it in `botocore/retries/adaptive.py` (`ClientRateLimiter`, `RateClocker`),
//! `throttling.py` (`CubicCalculator`) and `bucket.py` (`TokenBucket`). One per client process,
//! shared by all its calls, in simulated time only (seconds as `f64` of the integer
//! nanosecond clock; no clock is read).
//!
//! - Every response an attempt gets (success, error or timeout, as botocore's `needs-retry`
//!   hook sees them; late answers are not seen) is counted by the **rate clocker**: counts are
//!   kept per 0.5 s bucket and, when a response falls in a later bucket than the last one, the
//!   measured rate becomes `0.8 × count / elapsed + 0.2 × measured` (smoothing 0.8).
//! - A **throttling** response sets CUBIC's `w_max` to the rate being sent at (the measured
//!   rate before the limiter is on, then min(measured, fill rate)), its zero point
//!   `k = ∛(w_max (1 − β) / C)` and the time of the failure, and the new rate is `β × rate`;
//!   any other response gives `C (t − last_fail − k)³ + w_max` (β = 0.7, C = 0.4). The bucket's
//!   fill rate becomes min(new rate, 2 × measured), never below `min_rate` (0.5/s); its
//!   capacity is that rate when at least 1, else 1.
//! - The limiter is **off until the first throttling response**; from then on every attempt
//!   (first ones too) needs a token from the bucket. Botocore blocks (sleeps) until the token
//!   is there: here the attempt waits, rescheduled at the instant the bucket will hold it,
//!   and tries again then (so waiting attempts of a process compete, as botocore's threads
//!   do). A wait is not a local rejection and not a timeout (the timeout starts at the send).
//!
//! Which refusals are throttling is the call loop's mapping (see docs/retry-control.md): a capacity
//! server's shed and a rate limiter's 429 are; the flaky server's 503, an outage and the down
//! server's refusals are not (botocore classifies by error code: `Throttling`,
//! `ThrottlingException`, `TooManyRequestsException`, `SlowDown`, … are throttling; a bare
//! 503 is a transient error).

/// botocore's `CubicCalculator`: the rate after each response.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cubic {
    /// The rate at the last throttling response (`_w_max`).
    pub w_max: f64,
    /// Seconds from the last throttling response until the rate is back at `w_max` (`_k`).
    pub k: f64,
    /// When the last throttling response came, seconds (`_last_fail`).
    pub last_fail: f64,
    /// `C` (`_SCALE_CONSTANT`, 0.4).
    pub scale: f64,
    /// `β` (`_BETA`, 0.7).
    pub beta: f64,
}

impl Cubic {
    /// Starts at rate `w_max` at time `start` (botocore starts at 0 and the client's creation).
    pub fn new(w_max: f64, start: f64, scale: f64, beta: f64) -> Self {
        let mut c = Cubic {
            w_max,
            k: 0.0,
            last_fail: start,
            scale,
            beta,
        };
        c.k = c.zero_point();
        c
    }

    fn zero_point(&self) -> f64 {
        (self.w_max * (1.0 - self.beta) / self.scale).cbrt()
    }

    /// The rate after a response that is not throttling, at `t`.
    pub fn success(&self, t: f64) -> f64 {
        self.scale * (t - self.last_fail - self.k).powi(3) + self.w_max
    }

    /// The rate after a throttling response at `t` while sending at `rate`.
    pub fn throttled(&mut self, rate: f64, t: f64) -> f64 {
        self.w_max = rate;
        self.k = self.zero_point();
        self.last_fail = t;
        rate * self.beta
    }
}

/// botocore's `TokenBucket`: refilled at `fill_rate` tokens a second up to `max_capacity`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    /// Tokens a second (`max_rate`, at least `min_rate`).
    pub fill_rate: f64,
    /// Most tokens held.
    pub max_capacity: f64,
    /// Tokens held.
    pub capacity: f64,
    /// When it was last refilled, seconds.
    pub last: f64,
    /// The least fill rate (`_MIN_RATE`, 0.5).
    pub min_rate: f64,
}

impl Bucket {
    /// A bucket made at `t` with `max_rate` 1, as botocore's client makes it: empty, fill
    /// rate max(1, min_rate), capacity 1.
    pub fn new(t: f64, min_rate: f64) -> Self {
        let mut b = Bucket {
            fill_rate: 0.0,
            max_capacity: 0.0,
            capacity: 0.0,
            last: t,
            min_rate,
        };
        b.set_max_rate(1.0, t);
        b
    }

    /// Adds what `fill_rate` gave since the last refill, up to the capacity.
    pub fn refill(&mut self, t: f64) {
        let fill = (t - self.last) * self.fill_rate;
        self.capacity = self.max_capacity.min(self.capacity + fill);
        self.last = t;
    }

    /// A new rate at `t`: refilled at the old rate first, then the fill rate is
    /// max(`value`, `min_rate`), the capacity `value` (at least 1), what is held cut to it.
    pub fn set_max_rate(&mut self, value: f64, t: f64) {
        self.refill(t);
        self.fill_rate = value.max(self.min_rate);
        self.max_capacity = if value >= 1.0 { value } else { 1.0 };
        self.capacity = self.capacity.min(self.max_capacity);
    }

    /// Takes a token at `t`, or says how many seconds until one is there.
    pub fn acquire(&mut self, t: f64) -> Result<(), f64> {
        self.refill(t);
        if self.capacity >= 1.0 {
            self.capacity -= 1.0;
            Ok(())
        } else {
            Err((1.0 - self.capacity) / self.fill_rate)
        }
    }
}

/// botocore's `RateClocker`: the smoothed rate of responses, per 0.5 s bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateClock {
    /// The measured rate, responses a second.
    pub measured: f64,
    /// The start of the bucket last closed, seconds.
    pub last_bucket: f64,
    /// Responses counted since.
    pub count: f64,
    /// Weight of the newest bucket's rate (0.8).
    pub smoothing: f64,
}

/// Width of the rate clock's buckets (`_TIME_BUCKET_RANGE`), seconds.
const BUCKET_S: f64 = 0.5;

impl RateClock {
    /// A clock made at `t` (its first bucket starts at ⌊t⌋, whole seconds, as botocore's).
    pub fn new(t: f64, smoothing: f64) -> Self {
        RateClock {
            measured: 0.0,
            last_bucket: t.floor(),
            count: 0.0,
            smoothing,
        }
    }

    /// Counts a response at `t`; the measured rate.
    pub fn record(&mut self, t: f64) -> f64 {
        let scale = 1.0 / BUCKET_S;
        let bucket = (t * scale).floor() / scale;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current = self.count / (bucket - self.last_bucket);
            self.measured = current * self.smoothing + self.measured * (1.0 - self.smoothing);
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        self.measured
    }
}

/// One process's adaptive limiter (`ClientRateLimiter`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limiter {
    /// The fill-rate curve.
    pub cubic: Cubic,
    /// The send-token bucket.
    pub bucket: Bucket,
    /// The response rate.
    pub clock: RateClock,
    /// On after the first throttling response.
    pub enabled: bool,
}

/// `_MAX_RATE_ADJUST_SCALE`: the fill rate is at most twice the measured rate.
const MAX_RATE_ADJUST: f64 = 2.0;

impl Limiter {
    /// A limiter made at time 0 with the given constants.
    pub fn new(beta: f64, scale: f64, smoothing: f64, min_rate: f64) -> Self {
        Limiter {
            cubic: Cubic::new(0.0, 0.0, scale, beta),
            bucket: Bucket::new(0.0, min_rate),
            clock: RateClock::new(0.0, smoothing),
            enabled: false,
        }
    }

    /// An attempt wants to go at `t`: `Ok` when it may (a token taken if the limiter is on),
    /// else the seconds to wait before trying again.
    pub fn before_send(&mut self, t: f64) -> Result<(), f64> {
        if self.enabled {
            self.bucket.acquire(t)
        } else {
            Ok(())
        }
    }

    /// An attempt's response came at `t` (a timeout too); `throttled` when it was a
    /// throttling error.
    pub fn on_response(&mut self, t: f64, throttled: bool) {
        let measured = self.clock.record(t);
        let rate = if throttled {
            let sending = if self.enabled {
                measured.min(self.bucket.fill_rate)
            } else {
                measured
            };
            self.enabled = true;
            self.cubic.throttled(sending, t)
        } else {
            self.cubic.success(t)
        };
        self.bucket
            .set_max_rate(rate.min(MAX_RATE_ADJUST * measured), t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn cubic_rates_follow_the_formula_on_a_scripted_sequence() {
        // β = 0.7, C = 0.4, starting at w_max 0 at t = 0: k = ∛0 = 0.
        let mut c = Cubic::new(0.0, 0.0, 0.4, 0.7);
        assert_eq!(c.k, 0.0);
        // A success at t = 1: 0.4 × 1³ + 0 = 0.4; at t = 2: 0.4 × 8 = 3.2.
        assert!(close(c.success(1.0), 0.4));
        assert!(close(c.success(2.0), 3.2));
        // Throttled at t = 10 while sending 10/s: new rate 7; w_max 10,
        // k = ∛(10 × 0.3 / 0.4) = ∛7.5.
        assert!(close(c.throttled(10.0, 10.0), 7.0));
        let k = 7.5f64.cbrt();
        assert!(close(c.k, k));
        assert_eq!((c.w_max, c.last_fail), (10.0, 10.0));
        // Right after the failure the curve starts at β·w_max: 0.4 (0 − k)³ + 10 = 10 − 3 = 7.
        assert!(close(c.success(10.0), 7.0));
        // At t = 10 + k it is back at w_max; 2 s later 0.4 × 8 + 10 = 13.2.
        assert!(close(c.success(10.0 + k), 10.0));
        assert!(close(c.success(12.0 + k), 13.2));
        // A second throttle at t = 20 while sending 8/s: 5.6, k = ∛(8 × 0.3 / 0.4) = ∛6.
        assert!(close(c.throttled(8.0, 20.0), 5.6));
        assert!(close(c.k, 6f64.cbrt()));
        // One second on: 0.4 (1 − ∛6)³ + 8.
        let expected = 0.4 * (1.0 - 6f64.cbrt()).powi(3) + 8.0;
        assert!(close(c.success(21.0), expected));
    }

    #[test]
    fn the_bucket_refills_by_hand() {
        // Made at t = 0: fill 1/s, capacity 1, empty.
        let mut b = Bucket::new(0.0, 0.5);
        assert_eq!((b.fill_rate, b.max_capacity, b.capacity), (1.0, 1.0, 0.0));
        // At t = 0.25: 0.25 tokens, not enough; 0.75 s to wait.
        assert_eq!(b.acquire(0.25), Err(0.75));
        // At t = 1: 1 token (0.25 + 0.75), taken.
        assert_eq!(b.acquire(1.0), Ok(()));
        assert_eq!(b.capacity, 0.0);
        // Rate 4/s from t = 1.5: first refilled at 1/s (0.5), then capacity 4.
        b.set_max_rate(4.0, 1.5);
        assert_eq!((b.fill_rate, b.max_capacity, b.capacity), (4.0, 4.0, 0.5));
        // At t = 3: 0.5 + 1.5 × 4 = 6.5, cut to 4; one taken: 3.
        assert_eq!(b.acquire(3.0), Ok(()));
        assert_eq!(b.capacity, 3.0);
        // Rate 0.2/s at t = 3: fill rate held at the 0.5 minimum, capacity 1, holding cut to 1.
        b.set_max_rate(0.2, 3.0);
        assert_eq!((b.fill_rate, b.max_capacity, b.capacity), (0.5, 1.0, 1.0));
        assert_eq!(b.acquire(3.0), Ok(()));
        // Empty: a token in 1 / 0.5 = 2 s; at t = 4 half of it is there, 1 s more.
        assert_eq!(b.acquire(3.0), Err(2.0));
        assert_eq!(b.acquire(4.0), Err(1.0));
        assert_eq!(b.acquire(5.0), Ok(()));
    }

    #[test]
    fn the_rate_clock_smooths_half_second_buckets_by_hand() {
        let mut r = RateClock::new(0.0, 0.8);
        // Three responses in [0, 0.5): no bucket closed, rate 0.
        for t in [0.1, 0.2, 0.3] {
            assert_eq!(r.record(t), 0.0);
        }
        // The fourth at 0.6 (bucket 0.5): 4 responses over 0.5 s = 8/s, × 0.8 = 6.4.
        assert!(close(r.record(0.6), 6.4));
        // One at 1.7 (bucket 1.5): 1 over 1 s, 0.8 × 1 + 0.2 × 6.4 = 2.08.
        assert!(close(r.record(1.7), 2.08));
        // One more in the same bucket: unchanged, counted for the next.
        assert!(close(r.record(1.9), 2.08));
        // At 2.0 (bucket 2.0): 2 over 0.5 s = 4/s: 0.8 × 4 + 0.2 × 2.08 = 3.616.
        assert!(close(r.record(2.0), 3.616));
    }

    #[test]
    fn the_limiter_is_off_until_the_first_throttle_then_meters_sends() {
        let mut l = Limiter::new(0.7, 0.4, 0.8, 0.5);
        // Off: every send goes, successes only move the curve.
        assert_eq!(l.before_send(0.1), Ok(()));
        l.on_response(0.2, false);
        assert!(!l.enabled);
        for t in [0.3, 0.4, 0.45] {
            l.on_response(t, false);
        }
        // A throttle at 0.6: the clock closes [0, 0.5) with 5 responses: 10/s × 0.8 = 8;
        // w_max 8, new rate 5.6, fill min(5.6, 16) = 5.6 from now, capacity 5.6.
        l.on_response(0.6, true);
        assert!(l.enabled);
        assert!(close(l.bucket.fill_rate, 5.6));
        assert!(close(l.cubic.w_max, 8.0));
        // The bucket filled at 1/s until the first response (0.2 at 0.2 s), then at the
        // 0.5/s floor (the curve's rates there are under 2 × measured = 0): 0.2 + 0.4 × 0.5.
        assert!(close(l.bucket.capacity, 0.4));
        // Less than a token: the send waits (1 − 0.4) / 5.6 s, and goes once it has passed.
        let wait = l.before_send(0.6).unwrap_err();
        assert!(close(wait, 0.6 / 5.6));
        assert!(l.before_send(0.6 + wait / 2.0).is_err());
        assert_eq!(l.before_send(0.6 + wait + 1e-9), Ok(()));
    }
}
