//! What a herd loop knows of its run when it is compiled: [`Known`], a type parameter of
//! [`super::Run`]. The loop is one function; instantiated with [`Dynamic`] it reads the
//! strategy, the retry chance and the latency from the run at every request, as any run may
//! set them; instantiated with [`Plain`] (one of Experiment 1's strategies, every retry made,
//! no latency: the usual herd) they are constants, so the strategy's match, the retry chance's
//! test and the round trip's addition are compiled out of the loop. Both give the same draws
//! and the same numbers: a constant is only ever the value the run holds ([`plain_strategy`]
//! picks [`Plain`] only then).

use crate::policy::{Policy, RetryChance, Strategy};
use crate::time::SimDuration;

use super::{Latency, RunSpec};

/// What a loop's instance knows of every run it is used for.
pub(super) trait Known {
    /// The strategy of every client, when the instance is made for one.
    const STRATEGY: Option<Strategy>;
    /// True when every retry a strategy wants is made ([`RetryChance::ALWAYS`]).
    const ALWAYS_RETRIES: bool;
    /// True when every round trip is zero.
    const NO_LATENCY: bool;

    /// `policy` with what the instance knows of it as constants.
    #[inline(always)]
    fn policy(policy: &Policy) -> Policy {
        Policy {
            strategy: Self::STRATEGY.unwrap_or(policy.strategy),
            retry_chance: if Self::ALWAYS_RETRIES {
                RetryChance::ALWAYS
            } else {
                policy.retry_chance
            },
            ..*policy
        }
    }

    /// `latency`, a constant zero when the instance knows it.
    #[inline(always)]
    fn latency(latency: &Latency) -> Latency {
        if Self::NO_LATENCY {
            Latency::Fixed(SimDuration::ZERO)
        } else {
            *latency
        }
    }
}

/// Knows nothing: every run.
pub(super) struct Dynamic;

impl Known for Dynamic {
    const STRATEGY: Option<Strategy> = None;
    const ALWAYS_RETRIES: bool = false;
    const NO_LATENCY: bool = false;
}

/// Strategy [`Strategy::ALL`]`[S]`, every retry made, no latency.
pub(super) struct Plain<const S: usize>;

impl<const S: usize> Known for Plain<S> {
    const STRATEGY: Option<Strategy> = Some(Strategy::ALL[S]);
    const ALWAYS_RETRIES: bool = true;
    const NO_LATENCY: bool = true;
}

/// The index in [`Strategy::ALL`] of `spec`'s strategy when [`Plain`] of it fits `spec`
/// (every retry made, no latency), else `None`.
pub(super) fn plain_strategy(spec: &RunSpec) -> Option<usize> {
    let plain =
        spec.policy.retry_chance.is_always() && spec.latency == Latency::Fixed(SimDuration::ZERO);
    plain
        .then(|| {
            Strategy::ALL
                .iter()
                .position(|&s| s == spec.policy.strategy)
        })
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Down, Server};

    #[test]
    fn plain_instances_stand_for_the_six_strategies_and_nothing_else() {
        let down = || Server::Down(Down::default());
        for (i, &s) in Strategy::ALL.iter().enumerate() {
            assert_eq!(
                plain_strategy(&RunSpec::experiment1(10, s, down(), 1)),
                Some(i)
            );
        }
        for s in Strategy::HEADER_AWARE {
            assert_eq!(
                plain_strategy(&RunSpec::experiment1(10, s, down(), 1)),
                None
            );
        }
        let mut spec = RunSpec::experiment1(10, Strategy::FullJitter, down(), 1);
        spec.policy.retry_chance = RetryChance::new(0.5);
        assert_eq!(plain_strategy(&spec), None);
        spec.policy.retry_chance = RetryChance::ALWAYS;
        spec.latency = Latency::Fixed(SimDuration::from_millis(1));
        assert_eq!(plain_strategy(&spec), None);
        assert_eq!(Plain::<3>::STRATEGY, Some(Strategy::FullJitter));
    }
}
