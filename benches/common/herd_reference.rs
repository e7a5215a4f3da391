//! A minimal program of the engine bench's herd, written for speed: the limit the independent
//! path is measured against. `clients` clients of full jitter (no cap on the draw's top before
//! the cap, `min(cap, base · 2^(k-1))`) against a server that is down: every request refused,
//! each client's `retries` retries, then it gives up. Same random-number rule as the engine:
//! client `i`'s stream is the `i`-th seed of [`ClientSeeds`], one [`uniform_below`] draw a
//! retry, nothing else drawn (no latency, every retry allowed). Same split as the engine: blocks
//! of [`CLIENTS_PER_BLOCK`] clients in parallel, their counts summed.
//!
//! It counts what the engine's tally holds for this run: the retries and the refused
//! requests per window (plain vectors from window 0, each request's window a division), the
//! requests, the refusals, the clients that gave up, the first and last retry and finish.

use rayon::prelude::*;

use herd_sim::engine::CLIENTS_PER_BLOCK;
use herd_sim::rng::{uniform_below, ClientSeeds};

/// The herd: `clients` clients, `retries` retries each of full jitter from `base` capped at
/// `cap`, windows of `bin`, all in nanoseconds.
pub struct Herd {
    pub seed: u64,
    pub clients: u32,
    pub retries: u32,
    pub base: u64,
    pub cap: u64,
    pub bin: u64,
}

/// The run's figures, as the engine's tally names them.
#[derive(Debug, PartialEq, Eq)]
pub struct Figures {
    pub requests: u64,
    pub refused: u64,
    pub gave_up: u64,
    pub first_retry: Option<u64>,
    pub last_retry: Option<u64>,
    pub first_finish: Option<u64>,
    pub last_finish: Option<u64>,
    /// Retries per window, from window 0 to the last non-empty one.
    pub retries: Vec<u64>,
    /// Refused requests per window, likewise.
    pub refused_windows: Vec<u64>,
}

impl Herd {
    /// The top of retry `k`'s draw (`k` from 1).
    fn ceiling(&self, k: u32) -> u64 {
        self.base
            .checked_shl(k - 1)
            .unwrap_or(u64::MAX)
            .min(self.cap)
    }

    /// Windows a client can reach: the sum of every retry's ceiling, divided by the bin.
    fn windows(&self) -> usize {
        let latest: u64 = (1..=self.retries).map(|k| self.ceiling(k)).sum();
        (latest / self.bin) as usize + 1
    }

    pub fn run(&self) -> Figures {
        let blocks = self.clients.div_ceil(CLIENTS_PER_BLOCK);
        let mut f = (0..blocks)
            .into_par_iter()
            .map(|b| {
                let first = b * CLIENTS_PER_BLOCK;
                self.block(first, (first + CLIENTS_PER_BLOCK).min(self.clients))
            })
            .reduce(
                || self.block(0, 0),
                |mut a, b| {
                    a.first_retry = min(a.first_retry, b.first_retry);
                    a.last_retry = a.last_retry.max(b.last_retry);
                    a.first_finish = min(a.first_finish, b.first_finish);
                    a.last_finish = a.last_finish.max(b.last_finish);
                    for (x, y) in a.retries.iter_mut().zip(&b.retries) {
                        *x += y;
                    }
                    for (x, y) in a.refused_windows.iter_mut().zip(&b.refused_windows) {
                        *x += y;
                    }
                    a
                },
            );
        let requests = u64::from(self.clients) * u64::from(1 + self.retries);
        f.requests = requests;
        f.refused = requests;
        f.gave_up = u64::from(self.clients);
        for h in [&mut f.retries, &mut f.refused_windows] {
            let len = h.iter().rposition(|&c| c > 0).map_or(0, |w| w + 1);
            h.truncate(len);
        }
        f
    }

    /// Clients `first..last`.
    fn block(&self, first: u32, last: u32) -> Figures {
        let windows = self.windows();
        let mut retries = vec![0u64; windows];
        let mut refused = vec![0u64; windows];
        let (mut first_retry, mut last_retry) = (u64::MAX, 0);
        let (mut first_finish, mut last_finish) = (u64::MAX, 0);
        let ceilings: Vec<u64> = (1..=self.retries).map(|k| self.ceiling(k)).collect();
        let mut seeds = ClientSeeds::starting_at(self.seed, u64::from(first));
        refused[0] += u64::from(last - first);
        for _ in first..last {
            let mut rng = seeds.next_rng();
            let mut t = 0u64;
            for &top in &ceilings {
                t += uniform_below(&mut rng, top);
                let w = (t / self.bin) as usize;
                retries[w] += 1;
                refused[w] += 1;
                first_retry = first_retry.min(t);
                last_retry = last_retry.max(t);
            }
            first_finish = first_finish.min(t);
            last_finish = last_finish.max(t);
        }
        let some_if = |any: bool, t: u64| any.then_some(t);
        let any = last > first;
        let retried = any && self.retries > 0;
        Figures {
            requests: 0,
            refused: 0,
            gave_up: 0,
            first_retry: some_if(retried, first_retry),
            last_retry: some_if(retried, last_retry),
            first_finish: some_if(any, first_finish),
            last_finish: some_if(any, last_finish),
            retries,
            refused_windows: refused,
        }
    }
}

fn min(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}
