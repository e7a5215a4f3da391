//! `token-bucket`: each key has a bucket of `capacity` tokens, full at the start; a request
//! takes one or is refused; `refill` tokens return every `interval`, either continuously (GCRA,
//! the generic cell rate algorithm: one token every interval/refill, exactly) or in discrete
//! ticks (Envoy's local rate limit: `refill` tokens at each multiple of `interval` from the
//! server's start). Refusals announce when the next token arrives.
//!
//! Continuous state is GCRA's theoretical arrival time, kept in nanoseconds × `refill` so that
//! a rate like 30 per minute is exact in integers. O(1) per answer. No I/O, no randomness.

use super::clock::{Refusal, WallClock};
use crate::time::{SimDuration, SimTime};

/// How tokens return.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Refill {
    /// Continuously (GCRA).
    #[default]
    Continuous,
    /// `refill` tokens at once at every tick (Envoy).
    Ticks,
}

impl Refill {
    /// Every mode, in the order help lists them.
    pub const ALL: [Refill; 2] = [Refill::Continuous, Refill::Ticks];
    /// The name used on the command line and in configs.
    pub const fn name(self) -> &'static str {
        match self {
            Refill::Continuous => "continuous",
            Refill::Ticks => "ticks",
        }
    }
}

/// The parameters of a token bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TokenBucketRule {
    /// Tokens the bucket holds; at least 1.
    pub capacity: u32,
    /// Tokens returned per `interval`; at least 1.
    pub refill: u32,
    /// The refill period; positive.
    pub interval: SimDuration,
    /// Continuous or in ticks.
    pub mode: Refill,
}

/// One key's bucket: GCRA's theoretical arrival time (scaled), or tokens and the last tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bucket {
    /// Continuous: theoretical arrival time in ns × refill. Ticks: unused.
    tat: u128,
    /// Ticks: tokens left.
    tokens: u32,
    /// Ticks: the tick the tokens were counted at.
    tick: u64,
}

/// A token-bucket limiter over a table of keys.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    /// The rule.
    pub rule: TokenBucketRule,
    buckets: Vec<Bucket>,
}

impl TokenBucket {
    /// A limiter with no key seen yet.
    pub fn new(rule: TokenBucketRule) -> Self {
        TokenBucket {
            rule,
            buckets: Vec::new(),
        }
    }

    /// Makes room for `keys` keys, all buckets full.
    pub fn prepare(&mut self, keys: usize) {
        let full = Bucket {
            tat: 0,
            tokens: self.rule.capacity,
            tick: 0,
        };
        self.buckets = vec![full; keys];
    }

    /// Admits (`Ok`) or refuses a request for `key` at simulated time `now` (ticks count from
    /// the server's start) and wall time `clock.wall(now)`.
    #[inline(always)]
    pub fn admit(&mut self, now: SimTime, clock: WallClock, key: usize) -> Result<(), Refusal> {
        let rule = self.rule;
        let bucket = &mut self.buckets[key];
        let interval = rule.interval.as_nanos();
        let available_at = match rule.mode {
            Refill::Continuous => {
                // GCRA in units of ns × refill: one token every `interval` units, and a burst
                // allowance of capacity − 1 tokens.
                let refill = u128::from(rule.refill);
                let now_scaled = u128::from(clock.wall(now)) * refill;
                let tat = bucket.tat.max(now_scaled);
                let tolerance = u128::from(rule.capacity - 1) * u128::from(interval);
                if tat - now_scaled <= tolerance {
                    bucket.tat = tat + u128::from(interval);
                    return Ok(());
                }
                let scaled = tat - tolerance;
                scaled.div_ceil(refill).min(u128::from(u64::MAX)) as u64
            }
            Refill::Ticks => {
                let tick = now.as_nanos() / interval;
                if tick > bucket.tick {
                    let added = (tick - bucket.tick).saturating_mul(u64::from(rule.refill));
                    bucket.tokens =
                        (u64::from(bucket.tokens) + added).min(u64::from(rule.capacity)) as u32;
                    bucket.tick = tick;
                }
                if bucket.tokens > 0 {
                    bucket.tokens -= 1;
                    return Ok(());
                }
                clock.wall(SimTime((tick + 1).saturating_mul(interval)))
            }
        };
        Err(Refusal::at(available_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::clock::WallClock;

    const MS: u64 = 1_000_000;

    fn answers(mode: Refill, times_ms: &[u64]) -> Vec<Option<u64>> {
        // Capacity 3, 1 token per 2 s (so 3 per 6 s at most after the burst), phase 0.5 s.
        // Returns None when admitted, else the simulated ms at which a token is available.
        let clock = WallClock {
            phase: SimDuration::from_millis(500),
        };
        let mut bucket = TokenBucket::new(TokenBucketRule {
            capacity: 3,
            refill: 1,
            interval: SimDuration::from_secs(2),
            mode,
        });
        bucket.prepare(1);
        times_ms
            .iter()
            .map(|&ms| {
                bucket
                    .admit(SimTime(ms * MS), clock, 0)
                    .err()
                    .map(|r| clock.sim(r.available_at).as_nanos() / MS)
            })
            .collect()
    }

    #[test]
    fn continuous_refill_returns_one_token_every_interval_after_the_burst() {
        // t=0: burst of 3 (TAT 2, 4, 6 s). t=0.5: TAT 6 − 0.5 > 4 → refused; available when
        // TAT − 4 s = 2 s. t=2: admitted (TAT 8). t=2.5: available at 4 s. t=4.0: admitted.
        let got = answers(Refill::Continuous, &[0, 0, 0, 500, 2000, 2500, 4000]);
        assert_eq!(got, [None, None, None, Some(2000), None, Some(4000), None]);
    }

    #[test]
    fn ticks_refill_in_steps_at_multiples_of_the_interval() {
        // Burst of 3 at t=0; t=1.9 refused until the tick at 2 s; t=2.0 takes the one new
        // token; t=2.1 refused until 4 s; t=9.0: ticks 3 and 4 add 2 tokens (after tick 1's):
        // tokens at tick 4 = min(3, 0 + 3) = 3 → admitted three times, the fourth refused.
        let got = answers(
            Refill::Ticks,
            &[0, 0, 0, 1900, 2000, 2100, 9000, 9000, 9000, 9000],
        );
        assert_eq!(
            got,
            [
                None,
                None,
                None,
                Some(2000),
                None,
                Some(4000),
                None,
                None,
                None,
                Some(10_000)
            ]
        );
    }
}
