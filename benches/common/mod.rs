//! What the benches share: Experiment 1's herd (full jitter, base 1 s, cap 30 s, 4 retries,
//! 100 ms windows, seed 2015) against any server.

use herd_sim::engine::RunSpec;
use herd_sim::policy::Strategy;
use herd_sim::server::Server;

/// `clients` clients of Experiment 1's full-jitter herd against `server`.
pub fn full_jitter_herd(clients: u32, server: Server) -> RunSpec {
    RunSpec::experiment1(clients, Strategy::FullJitter, server, 2015)
}
