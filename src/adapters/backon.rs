//! backon's backoffs in the herd, and herd-sim's strategies as backon's, pinned at backon
//! 1.6.0.
//!
//! # backon's builders as herd-sim strategies
//! `--strategy backon-exponential`, `backon-fibonacci` and `backon-constant` take each wait
//! from backon's own `ExponentialBuilder`, `FibonacciBuilder` and `ConstantBuilder` with their
//! jitter on (`with_jitter`), built from herd-sim's curve flags: `--base` is `min_delay` (the
//! constant's `delay`), `--cap` is `max_delay`, `--multiplier` the exponential's `factor` (an
//! `f32` in backon), and `--retries` stays herd-sim's (`Policy::decide` gives up before
//! asking, as backon's `max_times` would end its iterator). backon's jitter adds to the wait:
//! the exponential's is `current + current × U[0, 1)`, so a wait can be up to twice the cap;
//! the fibonacci's adds `min_delay × U[0, 1)`; the constant's `delay × U[0, 1)`.
//! `--jitter-order` does not apply (backon has one order).
//!
//! Determinism: retry `k` of a call is item `k` of a backon iterator built with
//! `with_jitter_seed(s)`, `s` the next `u64` of the client's own stream (one draw a retry,
//! so runs are byte-identical from the run's seed for any thread count). backon's jitters
//! are independent draws of one `fastrand` stream and the curve itself does not depend on
//! them, so a fresh seed a retry gives the waits backon's own distribution; an iterator is
//! not kept per call because the engine keeps no strategy state in a call (a strategy is a
//! pure function of the retry number, the previous wait and the client's generator).
//!
//! # herd-sim's strategies as backon's
//! [`SimulatedBackoff`] is a `backon::BackoffBuilder`: its backoff is herd-sim's
//! [`crate::client::Delays`] over a generator it owns, seeded as the simulator's client 0
//! of a run of that seed, so `fetch.retry(SimulatedBackoff::new(policy, seed))` waits
//! exactly what the simulated client waited. ([`crate::client::Delays`] itself, borrowing
//! its generator, is a backon backoff already through backon's blanket implementation for
//! iterators of durations.)

use std::time::Duration;

use backon::{BackoffBuilder, ConstantBuilder, ExponentialBuilder, FibonacciBuilder};
use rand::RngCore;

use crate::client::Delays;
use crate::policy::{Backoff, Policy, Strategy};
use crate::rng::{ClientRng, ClientSeeds};
use crate::time::SimDuration;

fn duration(d: SimDuration) -> Duration {
    Duration::from_nanos(d.as_nanos())
}

/// backon's `ExponentialBuilder` for herd-sim's curve, jittered, with no `max_times`
/// (herd-sim's `--retries` stops the call).
pub fn exponential(b: &Backoff) -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(duration(b.base))
        .with_max_delay(duration(b.cap))
        .with_factor(b.multiplier as f32)
        .with_jitter()
        .without_max_times()
}

/// backon's `FibonacciBuilder` for herd-sim's curve, jittered.
pub fn fibonacci(b: &Backoff) -> FibonacciBuilder {
    FibonacciBuilder::new()
        .with_min_delay(duration(b.base))
        .with_max_delay(duration(b.cap))
        .with_jitter()
        .without_max_times()
}

/// backon's `ConstantBuilder` waiting `base`, jittered.
pub fn constant(b: &Backoff) -> ConstantBuilder {
    ConstantBuilder::new()
        .with_delay(duration(b.base))
        .with_jitter()
        .without_max_times()
}

/// Item `retry` (1-based) of backon's iterator for `strategy`, seeded `seed`.
pub fn nth_delay(strategy: Strategy, retry: u32, b: &Backoff, seed: u64) -> Duration {
    let k = retry.max(1) as usize - 1;
    let item = match strategy {
        Strategy::BackonExponential => exponential(b).with_jitter_seed(seed).build().nth(k),
        Strategy::BackonFibonacci => fibonacci(b).with_jitter_seed(seed).build().nth(k),
        Strategy::BackonConstant => constant(b).with_jitter_seed(seed).build().nth(k),
        other => unreachable!("{other} is not a backon strategy"),
    };
    // Without `max_times` backon's iterators never end.
    item.unwrap_or(Duration::MAX)
}

/// The wait before retry `retry` of a backon strategy: one seed drawn from `rng`, then
/// [`nth_delay`] (see the module's doc).
#[inline]
pub fn delay<R: RngCore + ?Sized>(
    strategy: Strategy,
    retry: u32,
    b: &Backoff,
    rng: &mut R,
) -> SimDuration {
    let wait = nth_delay(strategy, retry, b, rng.next_u64());
    SimDuration(u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX))
}

/// The longest wait a backon strategy can draw for any retry: backon's jitter can double the
/// capped curve, and the fibonacci's step past the cap adds up to one more `max_delay`, its
/// jitter one `min_delay`: under `3 × max(cap, base)`. The engine's horizon counts it.
pub fn longest_wait(b: &Backoff) -> SimDuration {
    SimDuration(b.cap.as_nanos().max(b.base.as_nanos()).saturating_mul(3))
}

/// herd-sim's strategy as a `backon::BackoffBuilder`: each backoff built is the waits of one
/// call of the simulator's client 0 of a run seeded `seed` (a fresh generator each build, so
/// every call made with it retries alike; keep one [`SimulatedDelays`] to go on drawing).
#[derive(Clone, Copy, Debug)]
pub struct SimulatedBackoff {
    policy: Policy,
    seed: u64,
}

impl SimulatedBackoff {
    /// `policy`'s waits drawn as the simulator's client 0 of a run seeded `seed`.
    pub fn new(policy: Policy, seed: u64) -> Self {
        SimulatedBackoff { policy, seed }
    }
}

impl BackoffBuilder for SimulatedBackoff {
    type Backoff = SimulatedDelays;

    fn build(self) -> SimulatedDelays {
        SimulatedDelays {
            policy: self.policy,
            rng: ClientSeeds::starting_at(self.seed, 0).next_rng(),
            done: 0,
            previous: self.policy.backoff.base,
        }
    }
}

/// One call's waits over a generator of its own: [`Delays`] resumed at each step on the
/// owned generator, so the draws are the simulator's.
#[derive(Debug)]
pub struct SimulatedDelays {
    policy: Policy,
    rng: ClientRng,
    done: u32,
    previous: SimDuration,
}

impl Iterator for SimulatedDelays {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let mut delays = Delays::resume(self.policy, &mut self.rng, self.done, self.previous);
        let wait = delays.next()?;
        self.done += 1;
        self.previous = SimDuration(u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX));
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Hints;

    #[test]
    fn without_jitter_backon_s_exponential_is_herd_sim_s_curve() {
        // backon's own curve (jitter off) at base 1 s, cap 30 s, factor 2: 1, 2, 4, 8, 16,
        // 30, 30 s, as herd-sim's exponential (and by hand).
        let b = Policy::experiment1(Strategy::Exponential).backoff;
        let backon: Vec<Duration> = ExponentialBuilder::new()
            .with_min_delay(Duration::from_secs(1))
            .with_max_delay(Duration::from_secs(30))
            .with_factor(2.0)
            .with_max_times(7)
            .build()
            .collect();
        let ours: Vec<Duration> = (1..=7).map(|k| duration(b.exponential(k))).collect();
        let by_hand: Vec<Duration> = [1, 2, 4, 8, 16, 30, 30].map(Duration::from_secs).to_vec();
        assert_eq!(backon, by_hand);
        assert_eq!(ours, by_hand);
    }

    #[test]
    fn each_wait_stays_in_backon_s_jitter_range_and_below_the_bound() {
        // Base 1 s, cap 30 s, doubling. backon's exponential: the curve 1, 2, 4, 8, 16, 30 s
        // and the jitter adds U[0, 1) of it: in [e_k, 2 e_k). Fibonacci: 1, 1, 2, 3, 5, 8, 13,
        // 21, 34 s (the step past the cap is kept, then the curve stops growing) plus U[0, 1)
        // of min_delay. Constant: 1 s plus U[0, 1) of it.
        let b = Policy::experiment1(Strategy::Exponential).backoff;
        let none = Hints::default();
        let s = |x: u64| x * 1_000_000_000;
        let curve = |strategy: Strategy, k: usize| -> (u64, u64) {
            match strategy {
                Strategy::BackonExponential => {
                    let e = [1, 2, 4, 8, 16, 30, 30, 30][k - 1];
                    (s(e), 2 * s(e))
                }
                Strategy::BackonFibonacci => {
                    let f = [1, 1, 2, 3, 5, 8, 13, 21][k - 1];
                    (s(f), s(f) + s(1))
                }
                _ => (s(1), s(2)),
            }
        };
        for strategy in [
            Strategy::BackonExponential,
            Strategy::BackonFibonacci,
            Strategy::BackonConstant,
        ] {
            let mut rng = ClientRng::new(3);
            for _ in 0..200 {
                for k in 1..=8 {
                    let d = strategy
                        .delay(k as u32, b.base, &none, &b, &mut rng)
                        .as_nanos();
                    let (low, high) = curve(strategy, k);
                    // f32 arithmetic inside backon: within a microsecond of the bounds.
                    assert!(d + 1_000 >= low && d < high + 1_000, "{strategy} {k}: {d}");
                    assert!(d <= longest_wait(&b).as_nanos());
                }
            }
        }
    }
}
