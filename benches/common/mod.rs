//! What the benches share: Experiment 1's herd (full jitter, base 1 s, cap 30 s, 4 retries,
//! 100 ms windows, seed 2015) against any server.

use herd_sim::engine::RunSpec;
use herd_sim::policy::{Backoff, Policy, Strategy};
use herd_sim::server::Server;
use herd_sim::time::SimDuration;

/// `clients` clients of Experiment 1's full-jitter herd against `server`.
pub fn full_jitter_herd(clients: u32, server: Server) -> RunSpec {
    RunSpec::new(
        clients,
        Policy {
            strategy: Strategy::FullJitter,
            backoff: Backoff {
                base: SimDuration::from_secs(1),
                cap: SimDuration::from_secs(30),
                multiplier: 2.0,
            },
            max_retries: 4,
        },
        server,
        SimDuration::from_millis(100),
        2015,
    )
}
