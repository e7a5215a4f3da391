//! What a run is: [`RunSpec`] (its clients, policy, server, seed and everything else it
//! simulates), built for Experiment 1 or field by field, and what it tells the dispatch
//! (which loop it needs, the most attempts a client makes) and the loops (their tallies).

use crate::metrics::Tally;
use crate::policy::control::Controls;
use crate::policy::{Policy, Strategy};
use crate::server::Server;
use crate::time::SimDuration;

use super::{Browser, Latency, NetworkDelay, Overload, Work, STUDY_NETWORK};

/// One fully specified run: one strategy, one server, one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Number of clients; all send their first request at t = 0.
    pub clients: u32,
    /// The retry policy every client follows.
    pub policy: Policy,
    /// The server model, in its initial state.
    pub server: Server,
    /// Window width of the histogram.
    pub bin: SimDuration,
    /// The run seed (see [`crate::rng`]).
    pub seed: u64,
    /// What each client fetches (one item each by default).
    pub work: Work,
    /// The round trip of every request (zero by default). Not used by the `occ` server,
    /// whose attempts are four messages of `network` each.
    pub latency: Latency,
    /// The delay of each message of an `occ` attempt (read request, read answer, write
    /// request, write answer); unused by the other servers. Brooker's by default.
    pub network: NetworkDelay,
    /// Arrivals, timeouts, network delay and triggers (none by default).
    pub overload: Overload,
    /// Retry budgets kept per client process (none by default); call loop only.
    pub controls: Controls,
    /// Browser tabs (none by default): see [`browser`](super::browser).
    pub browser: Browser,
}

/// Experiment 1's histogram window: 100 ms.
pub const EXPERIMENT1_BIN: SimDuration = SimDuration::from_millis(100);

impl RunSpec {
    /// A herd-path run's tally, nothing counted yet: each client's finish kept in small runs
    /// ([`Tally::for_clients`]), its histograms limited by the run's guard
    /// ([`InFlightGuard::blocks`](super::InFlightGuard::blocks)).
    pub(crate) fn new_tally(&self) -> Tally {
        Tally::for_clients(self.bin, self.clients).with_block_limit(self.overload.in_flight.blocks)
    }

    /// An empty tally that partial ones merge into, limited as [`RunSpec::new_tally`].
    pub(super) fn empty_tally(&self) -> Tally {
        Tally::new(self.bin).with_block_limit(self.overload.in_flight.blocks)
    }

    /// [`RunSpec::new_tally`] made of `tally`, emptied, its histograms' buffers kept to count
    /// into again ([`Tally::clear_for_clients`]).
    pub(super) fn reuse_tally(&self, mut tally: Tally) -> Tally {
        tally.clear_for_clients(self.bin, self.clients);
        tally.with_block_limit(self.overload.in_flight.blocks)
    }

    /// Experiment 1 (docs/experiments.md) for `clients` clients of `strategy` against `server`: the
    /// policy of [`Policy::experiment1`], 100 ms windows ([`EXPERIMENT1_BIN`]), one item each,
    /// no latency. Tests and benches build on it, changing only what they study.
    pub fn experiment1(clients: u32, strategy: Strategy, server: Server, seed: u64) -> Self {
        RunSpec::new(
            clients,
            Policy::experiment1(strategy),
            server,
            EXPERIMENT1_BIN,
            seed,
        )
    }

    /// A run of one item per client with zero latency (Experiment 1's shape).
    pub fn new(clients: u32, policy: Policy, server: Server, bin: SimDuration, seed: u64) -> Self {
        RunSpec {
            clients,
            policy,
            server,
            bin,
            seed,
            work: Work::default(),
            latency: Latency::default(),
            network: STUDY_NETWORK,
            overload: Overload::default(),
            controls: Controls::default(),
            browser: Browser::default(),
        }
    }

    /// True when the clients cannot affect each other: a stateless server, no shared pool
    /// and none of the call loop's features.
    pub fn clients_independent(&self) -> bool {
        self.server.clients_independent()
            && matches!(self.work, Work::Items(_))
            && !self.uses_call_loop()
    }

    /// The most attempts a client of an independent path makes: each of its items once and
    /// `max_retries` more times at most (unbounded with a shared pool).
    pub fn attempts_per_client(&self) -> u64 {
        match self.work {
            Work::Items(items) => {
                u64::from(items).saturating_mul(u64::from(self.policy.max_retries) + 1)
            }
            Work::Pool(_) => u64::MAX,
        }
    }

    /// True when the run needs the call loop ([`calls`](super::calls)): a capacity or flaky server, or any of
    /// Poisson arrivals, a timeout, network delay, an outage or a degradation.
    pub fn uses_call_loop(&self) -> bool {
        matches!(self.server, Server::Capacity(_) | Server::Flaky(_))
            || self.overload.is_active()
            || !self.controls.is_none()
    }
}
