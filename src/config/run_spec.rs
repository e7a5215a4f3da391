//! What a validated [`Scenario`] runs as: a strategy's [`RunSpec`], a replicate's seed, and
//! what it publishes. Separate from validation: it only reads a finished scenario.

use super::{Published, Scenario, ServerModel};
use crate::engine::RunSpec;
use crate::policy::{Policy, Strategy};
use crate::time::{SimDuration, NANOS_PER_SEC};

impl Scenario {
    /// True when any layer has a retry control (`budget`, `breaker`, `throttle`): the run's
    /// own policy or a layer around it. The call loop's table then shows what they denied.
    pub fn has_retry_controls(&self) -> bool {
        !self.controls.is_none()
            || self
                .overload
                .layers
                .outer
                .iter()
                .any(|layer| !layer.controls.is_none())
    }

    /// The run of one strategy.
    pub fn run_spec(&self, strategy: Strategy) -> RunSpec {
        RunSpec {
            work: self.work,
            latency: self.latency,
            network: self.network_delay,
            overload: self.overload.clone(),
            controls: self.controls,
            browser: self.browser,
            ..RunSpec::new(
                self.clients,
                Policy {
                    strategy,
                    backoff: self.backoff,
                    max_retries: self.retries,
                    retry_chance: self.retry_chance,
                },
                self.server.build(),
                self.bin,
                self.seed,
            )
        }
    }

    /// The run of one strategy in replicate `index` (see [`Scenario::replicates`]); replicate
    /// 0 of a single-replicate scenario is exactly [`Scenario::run_spec`].
    pub fn replicate_spec(&self, strategy: Strategy, index: u32) -> RunSpec {
        let mut spec = self.run_spec(strategy);
        if self.replicates > 1 {
            spec.seed = crate::rng::derive_seed(self.seed, &format!("replicate={index}"));
            let base = match self.server {
                ServerModel::Limited(m) => m.epoch_phase.as_nanos(),
                ServerModel::Down { .. }
                | ServerModel::Occ
                | ServerModel::Capacity(_)
                | ServerModel::Flaky(_) => 0,
            };
            let step = u64::from(index) * NANOS_PER_SEC / u64::from(self.replicates);
            let phase = SimDuration((base + step) % NANOS_PER_SEC);
            spec.server = self.server.with_phase(phase).build();
        }
        spec
    }

    /// The published figures of `strategy`, if the scenario has them.
    pub fn published_for(&self, strategy: Strategy) -> Option<&Published> {
        self.published
            .iter()
            .find(|(s, _)| *s == strategy)
            .map(|(_, p)| p)
    }
}
