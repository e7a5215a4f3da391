//! The simulation loop: advances simulated time through an [`EventQueue`] of client attempts,
//! asks the [`Server`] for each answer and the [`Policy`] for each next step, and counts
//! everything in a [`Tally`].
//!
//! Two paths give the same numbers:
//! - [`Path::EventQueue`], the general one: every attempt of every client goes through the
//!   queue in time order, so a server whose answers depend on other clients' requests (a shared
//!   rate limiter) sees them in the order they happen.
//! - [`Path::Independent`]: when the server is stateless ([`Server::clients_independent`]),
//!   each client's life is simulated start to finish, clients in parallel blocks with rayon.
//!   No queue, no per-client memory.
//!
//! They agree exactly because a client's random draws depend only on the run seed, its index
//! and its own history (see [`crate::rng`]), and a stateless server's answer only on the time.
//! `tests/integration` checks the agreement for every strategy. Nothing here does I/O.

pub mod queue;

pub use queue::{Event, EventQueue};

use rayon::prelude::*;

use crate::metrics::Tally;
use crate::policy::{Decision, Policy};
use crate::rng::{ClientRng, ClientSeeds};
use crate::server::{Response, Server};
use crate::time::{SimDuration, SimTime};

/// Clients simulated per parallel block on the independent path. Large enough that seeding a
/// block's ChaCha and merging its histogram are noise; small enough to balance two cores.
const BLOCK: u32 = 1 << 16;

/// Which way a run is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Path {
    /// The independent path when the server allows it, the event queue otherwise.
    #[default]
    Auto,
    /// Always the general event queue.
    EventQueue,
    /// Clients one after another; refused (panics) for a server whose clients interact.
    Independent,
}

/// One fully specified run: one strategy, one server, one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Number of clients; all send their first request at t = 0 (and the down server refuses it).
    pub clients: u32,
    /// The retry policy every client follows.
    pub policy: Policy,
    /// The server model, in its initial state.
    pub server: Server,
    /// Window width of the histogram.
    pub bin: SimDuration,
    /// The run seed (see [`crate::rng`]).
    pub seed: u64,
}

/// A client's state between attempts. It travels inside the client's pending event, so the
/// loop never looks a client up in a table. 32 bytes with the event's time.
#[derive(Clone, Copy, Debug)]
struct ClientState {
    rng: ClientRng,
    /// The previous wait (`base` before the first retry); decorrelated jitter grows from it.
    previous: SimDuration,
    client: u32,
    /// Retries sent so far.
    retries_made: u32,
}

/// Simulates `spec` and returns what was counted.
pub fn simulate(spec: &RunSpec, path: Path) -> Tally {
    let independent = match path {
        Path::Auto => spec.server.clients_independent(),
        Path::EventQueue => false,
        Path::Independent => {
            assert!(
                spec.server.clients_independent(),
                "the independent path needs a server whose clients cannot interact"
            );
            true
        }
    };
    if independent {
        simulate_independent(spec)
    } else {
        simulate_event_queue(spec)
    }
}

/// The general path: one queue, every attempt in time order (FIFO among equal times).
pub fn simulate_event_queue(spec: &RunSpec) -> Tally {
    let mut tally = Tally::new(spec.bin);
    let mut server = spec.server.clone();
    let policy = spec.policy;
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let mut queue = EventQueue::with_capacity(spec.clients as usize);
    for client in 0..spec.clients {
        queue.push(Event {
            time: SimTime::ZERO,
            item: ClientState {
                rng: seeds.next_rng(),
                previous: policy.backoff.base,
                client,
                retries_made: 0,
            },
        });
    }
    while let Some(Event {
        time,
        item: mut state,
    }) = queue.pop()
    {
        let retry = state.retries_made > 0;
        match server.respond(time, state.client) {
            Response::Served => tally.request(time, retry, true),
            Response::Refused(hints) => {
                tally.request(time, retry, false);
                match policy.decide(state.retries_made, state.previous, &hints, &mut state.rng) {
                    Decision::Retry { retry, delay } => {
                        state.retries_made = retry;
                        state.previous = delay;
                        queue.push(Event {
                            time: time + delay,
                            item: state,
                        });
                    }
                    Decision::GiveUp => tally.gave_up += 1,
                }
            }
        }
    }
    tally
}

/// The fast path for servers whose clients cannot interact: each client's whole life in turn,
/// blocks of clients in parallel. Same draws, same answers, same tally as the event queue.
pub fn simulate_independent(spec: &RunSpec) -> Tally {
    let blocks = spec.clients.div_ceil(BLOCK);
    (0..blocks)
        .into_par_iter()
        .map(|block| {
            let first = block * BLOCK;
            let last = (first + BLOCK).min(spec.clients);
            simulate_block(spec, first, last)
        })
        .reduce(
            || Tally::new(spec.bin),
            |mut a, b| {
                a.merge(&b);
                a
            },
        )
}

fn simulate_block(spec: &RunSpec, first: u32, last: u32) -> Tally {
    let mut tally = Tally::new(spec.bin);
    let mut server = spec.server.clone();
    let policy = spec.policy;
    let mut seeds = ClientSeeds::starting_at(spec.seed, u64::from(first));
    for client in first..last {
        let mut rng = seeds.next_rng();
        let mut previous = policy.backoff.base;
        let mut retries_made = 0;
        let mut time = SimTime::ZERO;
        loop {
            let retry = retries_made > 0;
            match server.respond(time, client) {
                Response::Served => {
                    tally.request(time, retry, true);
                    break;
                }
                Response::Refused(hints) => {
                    tally.request(time, retry, false);
                    match policy.decide(retries_made, previous, &hints, &mut rng) {
                        Decision::Retry { retry, delay } => {
                            retries_made = retry;
                            previous = delay;
                            time = time + delay;
                        }
                        Decision::GiveUp => {
                            tally.gave_up += 1;
                            break;
                        }
                    }
                }
            }
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Backoff, Strategy};
    use crate::server::Down;

    fn spec(strategy: Strategy, clients: u32, recover_at: Option<SimTime>) -> RunSpec {
        RunSpec {
            clients,
            policy: Policy {
                strategy,
                backoff: Backoff {
                    base: SimDuration::from_secs(1),
                    cap: SimDuration::from_secs(30),
                    multiplier: 2.0,
                },
                max_retries: 4,
            },
            server: Server::Down(Down { recover_at }),
            bin: SimDuration::from_millis(100),
            seed: 42,
        }
    }

    #[test]
    fn exponential_herd_lands_whole_at_1_3_7_15_seconds() {
        // Worked by hand: retry k arrives at Σ_{j<=k} 2^(j-1) s = 1, 3, 7, 15 s → windows
        // 10, 30, 70, 150 with a 100 ms bin.
        for path in [Path::EventQueue, Path::Independent] {
            let tally = simulate(&spec(Strategy::Exponential, 1000, None), path);
            let counts = tally.retries.counts();
            for (w, &c) in counts.iter().enumerate() {
                let expected = if [10, 30, 70, 150].contains(&w) {
                    1000
                } else {
                    0
                };
                assert_eq!(c, expected, "window {w} on {path:?}");
            }
            assert_eq!(tally.requests, 5000);
            assert_eq!(tally.refused, 5000);
            assert_eq!(tally.gave_up, 1000);
            assert_eq!(tally.succeeded, 0);
        }
    }

    #[test]
    fn recovery_ends_the_retries_of_every_client_still_trying() {
        // Fixed 1 s: retries at 1, 2, 3, 4 s. Recovery at 2.5 s: retries 1 and 2 are refused,
        // retry 3 (t = 3 s) is served; nobody gives up; last success at 3 s.
        let t = simulate(
            &spec(Strategy::Fixed, 10, Some(SimTime(2_500_000_000))),
            Path::EventQueue,
        );
        assert_eq!(t.succeeded, 10);
        assert_eq!(t.gave_up, 0);
        assert_eq!(t.retries.total(), 30);
        assert_eq!(t.requests, 40);
        assert_eq!(t.refused, 30);
        assert_eq!(t.last_success, Some(SimTime(3_000_000_000)));
    }

    #[test]
    fn both_paths_agree_for_every_strategy() {
        for strategy in Strategy::ALL {
            for recover in [None, Some(SimTime(5_000_000_000))] {
                let s = spec(strategy, 3 * BLOCK + 17, recover);
                assert_eq!(
                    simulate_event_queue(&s),
                    simulate_independent(&s),
                    "{strategy} recover {recover:?}"
                );
            }
        }
    }
}
