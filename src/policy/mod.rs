//! Retry strategies: pure functions of (retry number, previous delay, server hints, rng) to a
//! decision, shared by the simulator, the fixture and — because they do no I/O and keep no
//! clock — any real client that wants them.
//!
//! Each strategy lives in its own file as one `delay` function; [`Strategy`] is the enum the
//! hot loop matches on (no trait objects). A new strategy is one new file plus one arm here.
//! Nothing in this module reads a clock, sleeps, allocates or prints.

mod backoff;
pub mod control;
mod decorrelated_jitter;
mod equal_jitter;
mod exponential;
mod fixed;
mod full_jitter;
mod naive;
mod reset_aware;
mod retry_after;
mod retry_after_jitter;
mod retry_chance;
pub mod trace;

use std::fmt;
use std::str::FromStr;

use rand::RngCore;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time::SimDuration;

pub use backoff::{Backoff, Curve, CurveTable, JitterOrder};
pub use retry_chance::RetryChance;

/// How a client reacts to a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// Retry at once, with no delay.
    Naive,
    /// Wait `base` before every retry.
    Fixed,
    /// Wait `min(cap, base · multiplier^(k-1))` before retry `k`.
    Exponential,
    /// Wait `U(0, e_k)`: uniform up to the exponential delay (AWS "full jitter").
    FullJitter,
    /// Wait `e_k/2 + U(0, e_k/2)` (AWS "equal jitter").
    EqualJitter,
    /// Wait `min(cap, U(base, 3 · previous delay))`, previous delay starting at `base`
    /// (Brooker 2015, "decorrelated jitter").
    DecorrelatedJitter,
    /// Wait what `Retry-After` says; back off exponentially when it is absent.
    RetryAfter,
    /// Wait until `X-RateLimit-Reset`; else `Retry-After`; else back off exponentially.
    ResetAware,
    /// Wait `Retry-After + U(0, e_k)`: the header as a floor, full jitter on top.
    RetryAfterJitter,
    /// backon's `ExponentialBuilder` with its jitter (feature `backon`, [`crate::adapters::backon`]).
    #[cfg(feature = "backon")]
    BackonExponential,
    /// backon's `FibonacciBuilder` with its jitter (feature `backon`).
    #[cfg(feature = "backon")]
    BackonFibonacci,
    /// backon's `ConstantBuilder` with its jitter (feature `backon`).
    #[cfg(feature = "backon")]
    BackonConstant,
}

impl Strategy {
    /// The strategies that ignore headers, in the fixed order tables and `all` use. Against a
    /// server that sends no headers (Experiment 1's) `all` means exactly these.
    pub const ALL: [Strategy; 6] = [
        Strategy::Naive,
        Strategy::Fixed,
        Strategy::Exponential,
        Strategy::FullJitter,
        Strategy::EqualJitter,
        Strategy::DecorrelatedJitter,
    ];

    /// The strategies that read the server's headers; `all` adds them, after [`Strategy::ALL`],
    /// when the server sends headers. Without headers they would only repeat exponential and
    /// full jitter.
    pub const HEADER_AWARE: [Strategy; 3] = [
        Strategy::RetryAfter,
        Strategy::ResetAware,
        Strategy::RetryAfterJitter,
    ];

    /// The strategies that run a real crate's code (cargo feature `backon`); never in `all`.
    #[cfg(feature = "backon")]
    pub const ADAPTED: [Strategy; 3] = [
        Strategy::BackonExponential,
        Strategy::BackonFibonacci,
        Strategy::BackonConstant,
    ];

    /// The strategies that run a real crate's code: none without the feature `backon`.
    #[cfg(not(feature = "backon"))]
    pub const ADAPTED: [Strategy; 0] = [];

    /// Every strategy: [`Strategy::ALL`], [`Strategy::HEADER_AWARE`], then
    /// [`Strategy::ADAPTED`].
    pub fn every() -> impl Iterator<Item = Strategy> {
        Strategy::ALL
            .into_iter()
            .chain(Strategy::HEADER_AWARE)
            .chain(Strategy::ADAPTED)
    }

    /// The name used on the command line, in configs and in every output.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Naive => "naive",
            Strategy::Fixed => "fixed",
            Strategy::Exponential => "exponential",
            Strategy::FullJitter => "full-jitter",
            Strategy::EqualJitter => "equal-jitter",
            Strategy::DecorrelatedJitter => "decorrelated-jitter",
            Strategy::RetryAfter => "retry-after",
            Strategy::ResetAware => "reset-aware",
            Strategy::RetryAfterJitter => "retry-after-jitter",
            #[cfg(feature = "backon")]
            Strategy::BackonExponential => "backon-exponential",
            #[cfg(feature = "backon")]
            Strategy::BackonFibonacci => "backon-fibonacci",
            #[cfg(feature = "backon")]
            Strategy::BackonConstant => "backon-constant",
        }
    }

    /// The accepted names, comma-separated, for error messages and help.
    pub fn accepted_names() -> String {
        Strategy::every()
            .map(Strategy::name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// True when the strategy draws random numbers.
    pub const fn is_jittered(self) -> bool {
        matches!(
            self,
            Strategy::FullJitter
                | Strategy::EqualJitter
                | Strategy::DecorrelatedJitter
                | Strategy::RetryAfterJitter
        ) || self.is_adapted()
    }

    /// True when the strategy runs a real crate's code ([`Strategy::ADAPTED`]).
    pub const fn is_adapted(self) -> bool {
        #[cfg(feature = "backon")]
        return matches!(
            self,
            Strategy::BackonExponential | Strategy::BackonFibonacci | Strategy::BackonConstant
        );
        #[cfg(not(feature = "backon"))]
        {
            let _ = self;
            false
        }
    }

    /// What the strategy's waits can exceed the cap by: nothing for herd-sim's own, whose
    /// waits the cap bounds; backon's jitter adds to a capped wait
    /// (`adapters::backon::longest_wait`, feature `backon`). The up-front estimates add it.
    pub fn beyond_cap(self, backoff: &Backoff) -> SimDuration {
        match self {
            #[cfg(feature = "backon")]
            Strategy::BackonExponential | Strategy::BackonFibonacci | Strategy::BackonConstant => {
                SimDuration(
                    crate::adapters::backon::longest_wait(backoff)
                        .as_nanos()
                        .saturating_sub(backoff.cap.as_nanos()),
                )
            }
            _ => {
                let _ = backoff;
                SimDuration::ZERO
            }
        }
    }

    /// True when the strategy reads the server's headers (and falls back without them).
    pub const fn reads_headers(self) -> bool {
        matches!(
            self,
            Strategy::RetryAfter | Strategy::ResetAware | Strategy::RetryAfterJitter
        )
    }

    /// True when [`Strategy::delay`] reads the previous wait; every other strategy ignores it,
    /// so the engine need not keep it.
    pub const fn reads_previous_wait(self) -> bool {
        matches!(self, Strategy::DecorrelatedJitter)
    }

    /// The wait before retry `retry` (1-based), given the previous wait (`base` before the first
    /// retry) and what the server said. Pure: the only state is `rng`. Always inlined: it is
    /// called once per refusal in the hot loop, and a call there costs more than the match.
    #[inline(always)]
    pub fn delay<C: Curve + ?Sized, R: RngCore + ?Sized>(
        self,
        retry: u32,
        previous: SimDuration,
        hints: &Hints,
        curve: &C,
        rng: &mut R,
    ) -> SimDuration {
        match self {
            Strategy::Naive => naive::delay(),
            Strategy::Fixed => fixed::delay(curve.backoff()),
            Strategy::Exponential => exponential::delay(retry, curve),
            Strategy::FullJitter => full_jitter::delay(retry, curve, rng),
            Strategy::EqualJitter => equal_jitter::delay(retry, curve, rng),
            Strategy::DecorrelatedJitter => {
                decorrelated_jitter::delay(previous, curve.backoff(), rng)
            }
            Strategy::RetryAfter => retry_after::delay(retry, hints, curve),
            Strategy::ResetAware => reset_aware::delay(retry, hints, curve),
            Strategy::RetryAfterJitter => retry_after_jitter::delay(retry, hints, curve, rng),
            #[cfg(feature = "backon")]
            Strategy::BackonExponential | Strategy::BackonFibonacci | Strategy::BackonConstant => {
                crate::adapters::backon::delay(self, retry, curve.backoff(), rng)
            }
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown strategy name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy `{name}`; accepted: {accepted}{all}", accepted = Strategy::accepted_names(), all = if *.all_accepted { ", all" } else { "" })]
pub struct UnknownStrategy {
    /// The name that was given.
    pub name: String,
    /// Whether `all` was accepted where the name was given (a list of strategies), so the
    /// message offers it.
    pub all_accepted: bool,
}

impl UnknownStrategy {
    /// The same error where `all` is accepted too.
    pub fn or_all(self) -> Self {
        UnknownStrategy {
            all_accepted: true,
            ..self
        }
    }
}

impl FromStr for Strategy {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Strategy::every()
            .find(|strategy| strategy.name() == wanted)
            .ok_or_else(|| UnknownStrategy {
                name: wanted.to_string(),
                all_accepted: false,
            })
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// What the server told the client with its refusal. Empty for a server that is simply down;
/// the header-aware strategies read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// `Retry-After`, if the server sent one and the client may read it.
    pub retry_after: Option<SimDuration>,
    /// Time until the announced `X-RateLimit-Reset`, if sent and readable.
    pub reset_in: Option<SimDuration>,
}

/// A strategy with its curve and its retry budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    /// How delays are chosen.
    pub strategy: Strategy,
    /// The curve delays follow.
    pub backoff: Backoff,
    /// Retries after the first failed request; the first request is not a retry.
    pub max_retries: u32,
    /// The probability that each retry the strategy wants is made (else the call fails
    /// there): 1 by default.
    pub retry_chance: RetryChance,
}

/// What a client does after a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then send retry number `retry`.
    Retry {
        /// The 1-based number of the retry about to be scheduled.
        retry: u32,
        /// The wait before it.
        delay: SimDuration,
    },
    /// Stop: the retry budget is spent.
    GiveUp,
}

impl Policy {
    /// Experiment 1's policy (docs/experiments.md): `strategy` with base 1 s, cap 30 s, multiplier 2 and 4
    /// retries, the defaults of a plain run. Tests and benches start from it and change what
    /// they study (`Policy { max_retries: 2, ..Policy::experiment1(s) }`).
    pub const fn experiment1(strategy: Strategy) -> Policy {
        Policy {
            strategy,
            backoff: Backoff {
                base: SimDuration::from_secs(1),
                cap: SimDuration::from_secs(30),
                multiplier: 2.0,
                jitter_order: JitterOrder::AfterCap,
            },
            max_retries: 4,
            retry_chance: RetryChance::ALWAYS,
        }
    }

    /// The decision after a refusal, when `retries_made` retries have already been sent and
    /// the previous wait was `previous` (use `base` before the first retry). A retry left is
    /// made with the policy's [`RetryChance`] (its draw, if any, before the strategy's).
    /// Always inlined: the engine's loops call it on every refusal.
    #[inline(always)]
    pub fn decide<R: RngCore + ?Sized>(
        &self,
        retries_made: u32,
        previous: SimDuration,
        hints: &Hints,
        rng: &mut R,
    ) -> Decision {
        self.decide_on(&self.backoff, retries_made, previous, hints, rng)
    }

    /// [`Policy::decide`] reading the curve from `curve` (this policy's backoff's, such as a
    /// [`CurveTable`] of it).
    #[inline(always)]
    pub fn decide_on<C: Curve + ?Sized, R: RngCore + ?Sized>(
        &self,
        curve: &C,
        retries_made: u32,
        previous: SimDuration,
        hints: &Hints,
        rng: &mut R,
    ) -> Decision {
        debug_assert!(
            curve.backoff() == &self.backoff,
            "a curve of another backoff"
        );
        if retries_made >= self.max_retries {
            return Decision::GiveUp;
        }
        if !self.retry_chance.allows(rng) {
            return Decision::GiveUp;
        }
        let retry = retries_made + 1;
        let delay = self.strategy.delay(retry, previous, hints, curve, rng);
        Decision::Retry { retry, delay }
    }
}

/// Honours a server's `Retry-After` as a floor: the wait is never shorter than the server
/// asked for, and a strategy's longer (or jittered-longer) wait is kept as it is.
#[inline]
pub fn floor_at_retry_after(delay: SimDuration, hints: &Hints) -> SimDuration {
    match hints.retry_after {
        Some(floor) => delay.max(floor),
        None => delay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ClientRng;

    fn backoff() -> Backoff {
        Policy::experiment1(Strategy::Exponential).backoff
    }

    #[test]
    fn experiment_1_is_base_1s_cap_30s_doubling_with_4_retries() {
        let p = Policy::experiment1(Strategy::EqualJitter);
        assert_eq!(p.strategy, Strategy::EqualJitter);
        assert_eq!(p.backoff.base.as_nanos(), 1_000_000_000);
        assert_eq!(p.backoff.cap.as_nanos(), 30_000_000_000);
        assert_eq!(p.backoff.multiplier, 2.0);
        assert_eq!(p.max_retries, 4);
    }

    #[test]
    fn exponential_doubles_then_caps() {
        let b = backoff();
        let secs: Vec<u64> = (1..=7)
            .map(|k| b.exponential(k).as_nanos() / 1_000_000_000)
            .collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(b.exponential(200), SimDuration::from_secs(30));
        let b3 = Backoff {
            multiplier: 3.0,
            ..b
        };
        assert_eq!(b3.exponential(3), SimDuration::from_secs(9));
        assert_eq!(b3.exponential(5), SimDuration::from_secs(30));
        let b15 = Backoff {
            multiplier: 1.5,
            ..b
        };
        assert_eq!(b15.exponential(3), SimDuration::from_millis(2250));
    }

    #[test]
    fn deterministic_strategies_follow_their_formulas() {
        let b = backoff();
        let mut rng = ClientRng::new(1);
        let none = Hints::default();
        let d = |s: Strategy, k: u32, rng: &mut ClientRng| s.delay(k, b.base, &none, &b, rng);
        assert_eq!(d(Strategy::Naive, 3, &mut rng), SimDuration::ZERO);
        assert_eq!(d(Strategy::Fixed, 3, &mut rng), SimDuration::from_secs(1));
        assert_eq!(
            d(Strategy::Exponential, 4, &mut rng),
            SimDuration::from_secs(8)
        );
    }

    #[test]
    fn jitter_before_the_cap_lands_on_the_cap() {
        // Retry 7 of base 1 s doubling: the uncapped curve is 64 s, the cap 30 s. Before the
        // cap, full jitter is min(30 s, U(0, 64 s)): the cap with probability 1 - 30/64 =
        // 0.53125 (sd 0.0035 over 20 000 draws; 0.015 is over four); equal jitter draws in
        // [32 s, 64 s), always past the cap. After the cap neither ever equals it.
        let after = backoff();
        let before = Backoff {
            jitter_order: JitterOrder::BeforeCap,
            ..after
        };
        let none = Hints::default();
        let mut rng = ClientRng::new(7);
        let draws = 20_000;
        let at_cap = |s: Strategy, b: &Backoff, rng: &mut ClientRng| {
            (0..draws)
                .filter(|_| {
                    let d = s.delay(7, b.base, &none, b, rng);
                    assert!(d <= b.cap);
                    d == b.cap
                })
                .count() as f64
                / draws as f64
        };
        let full = at_cap(Strategy::FullJitter, &before, &mut rng);
        assert!((full - 0.53125).abs() < 0.015, "{full}");
        assert_eq!(at_cap(Strategy::EqualJitter, &before, &mut rng), 1.0);
        assert_eq!(at_cap(Strategy::FullJitter, &after, &mut rng), 0.0);
        assert_eq!(at_cap(Strategy::EqualJitter, &after, &mut rng), 0.0);
        // Below the cap the two orders are the same curve: retry 3 draws below 4 s either way.
        assert_eq!(before.jitter_ceiling(3), after.jitter_ceiling(3));
        assert_eq!(before.jitter_ceiling(7), SimDuration::from_secs(64));
        assert_eq!(after.jitter_ceiling(7), SimDuration::from_secs(30));
    }

    #[test]
    fn jittered_delays_stay_in_their_ranges() {
        let b = backoff();
        let none = Hints::default();
        let mut rng = ClientRng::new(99);
        for k in 1..=8 {
            let e = b.exponential(k);
            for _ in 0..2000 {
                let full = Strategy::FullJitter.delay(k, b.base, &none, &b, &mut rng);
                assert!(full < e);
                let equal = Strategy::EqualJitter.delay(k, b.base, &none, &b, &mut rng);
                assert!(equal.as_nanos() >= e.as_nanos() / 2 && equal < e);
            }
        }
        let mut previous = b.base;
        for _ in 0..5000 {
            let d = Strategy::DecorrelatedJitter.delay(1, previous, &none, &b, &mut rng);
            assert!(d >= b.base && d <= b.cap);
            assert!(d.as_nanos() < 3 * previous.as_nanos() || d == b.cap);
            previous = d;
        }
    }

    #[test]
    fn only_strategies_that_say_so_read_the_previous_wait() {
        // The engine drops the previous wait from its events for the others, so a different
        // previous wait must give the same delay (and leave the generator in the same state).
        let b = backoff();
        let hints = Hints {
            retry_after: Some(SimDuration::from_secs(3)),
            reset_in: Some(SimDuration::from_secs(2)),
        };
        for strategy in Strategy::every() {
            let mut differs = false;
            for seed in 0..50 {
                for retry in 1..=6 {
                    let mut a = ClientRng::new(seed);
                    let mut c = ClientRng::new(seed);
                    let from_base = strategy.delay(retry, b.base, &hints, &b, &mut a);
                    let from_long =
                        strategy.delay(retry, SimDuration::from_secs(9), &hints, &b, &mut c);
                    differs |= from_base != from_long || a != c;
                }
            }
            assert_eq!(differs, strategy.reads_previous_wait(), "{strategy}");
        }
    }

    #[test]
    fn the_budget_counts_retries_not_requests() {
        let policy = Policy {
            strategy: Strategy::Fixed,
            backoff: backoff(),
            max_retries: 2,
            retry_chance: RetryChance::ALWAYS,
        };
        let mut rng = ClientRng::new(0);
        let none = Hints::default();
        assert!(matches!(
            policy.decide(0, policy.backoff.base, &none, &mut rng),
            Decision::Retry { retry: 1, .. }
        ));
        assert!(matches!(
            policy.decide(1, policy.backoff.base, &none, &mut rng),
            Decision::Retry { retry: 2, .. }
        ));
        assert_eq!(
            policy.decide(2, policy.backoff.base, &none, &mut rng),
            Decision::GiveUp
        );
    }

    #[test]
    fn header_strategies_read_their_header_then_fall_back_and_respect_the_cap() {
        let b = backoff();
        let mut rng = ClientRng::new(5);
        let both = Hints {
            retry_after: Some(SimDuration::from_secs(7)),
            reset_in: Some(SimDuration::from_millis(6500)),
        };
        let only_retry_after = Hints {
            reset_in: None,
            ..both
        };
        let none = Hints::default();
        let d =
            |s: Strategy, k: u32, h: &Hints, rng: &mut ClientRng| s.delay(k, b.base, h, &b, rng);
        assert_eq!(
            d(Strategy::RetryAfter, 3, &both, &mut rng),
            SimDuration::from_secs(7)
        );
        assert_eq!(
            d(Strategy::RetryAfter, 3, &none, &mut rng),
            SimDuration::from_secs(4)
        );
        assert_eq!(
            d(Strategy::ResetAware, 3, &both, &mut rng),
            SimDuration::from_millis(6500)
        );
        assert_eq!(
            d(Strategy::ResetAware, 3, &only_retry_after, &mut rng),
            SimDuration::from_secs(7)
        );
        assert_eq!(
            d(Strategy::ResetAware, 2, &none, &mut rng),
            SimDuration::from_secs(2)
        );
        let long = Hints {
            retry_after: Some(SimDuration::from_secs(57)),
            reset_in: Some(SimDuration::from_secs(57)),
        };
        for s in [
            Strategy::RetryAfter,
            Strategy::ResetAware,
            Strategy::RetryAfterJitter,
        ] {
            assert_eq!(d(s, 1, &long, &mut rng), b.cap, "{s}");
        }
        // Retry-After is a floor; the jitter on top stays below e_k (4 s for retry 3).
        for _ in 0..2000 {
            let j = d(Strategy::RetryAfterJitter, 3, &both, &mut rng);
            assert!(
                j >= SimDuration::from_secs(7) && j < SimDuration::from_secs(11),
                "{j}"
            );
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for s in Strategy::every() {
            assert_eq!(s.name().parse::<Strategy>(), Ok(s));
        }
        let err = "jitter".parse::<Strategy>().unwrap_err().to_string();
        assert!(
            err.contains("full-jitter") && err.contains("`jitter`"),
            "{err}"
        );
    }
}
