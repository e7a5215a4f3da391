//! Server pools (`--servers N --balancer KIND`): N servers of the scenario's model behind a
//! load balancer, each with its own state (a capacity server's workers and queue, a limiter's
//! keys), its own triggers (`--outage 10s..20s@server=2`, `--degrade ...@0.5@server=2`,
//! `--rolling-restart INTERVAL,DOWNTIME`) beside the run's, and what the balancer knows of it
//! (its outstanding attempts). Servers are numbered from 1, as the command line names them;
//! inside the engine from 0.
//!
//! **The balancer** routes every attempt when its client sends it, first attempts and retries
//! alike (a balancer does not know a retry from a new call), by one of four rules:
//! - `round-robin`: the run's attempts in turn, attempt k (0-based, in the order they are
//!   sent) to server k mod N; a retry takes the next server of the rotation;
//! - `random`: a server drawn uniformly, afresh for a retry;
//! - `least-outstanding`: the server with the fewest outstanding attempts (sent to it, their
//!   client still waiting for the answer), ties broken by the rotation: the first of the tied
//!   at or after the server following the last one picked;
//! - `power-of-two`: two distinct servers drawn uniformly, the one with fewer outstanding
//!   attempts, the first drawn on a tie (Mitzenmacher 2001).
//!
//! An attempt stops being outstanding when its answer reaches the client or its client times
//! out (a proxy resets the upstream request then), so a server that refuses at once (down, or
//! out in a restart) never holds any: least-outstanding sends it everything it can, the
//! sinkhole of a fast-failing node.
//!
//! **Random draws** (`random`, `power-of-two`) come from the balancer's own stream, a
//! [`ClientRng`] seeded with `derive_seed(run seed, "balancer")` ([`crate::rng`]): a server is
//! drawn by [`crate::rng::uniform_below`] (one 64-bit word, rarely more), in the order the
//! attempts are sent. The clients'
//! streams are untouched, so a pool sees the same dice (service demands, delays, backoff) as
//! one server; a pool of one makes no draw at all, and runs exactly as before.

use std::fmt;

use crate::rng::{derive_seed, uniform_below, ClientRng};
use crate::time::{SimDuration, SimTime};

use super::{Degrade, Triggers};

/// How the balancer picks a server for an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Balancer {
    /// In turn.
    #[default]
    RoundRobin,
    /// Uniformly at random.
    Random,
    /// The fewest outstanding attempts.
    LeastOutstanding,
    /// The fewer outstanding of two drawn at random.
    PowerOfTwo,
}

impl Balancer {
    /// Every balancer, the default first.
    pub const ALL: [Balancer; 4] = [
        Balancer::RoundRobin,
        Balancer::Random,
        Balancer::LeastOutstanding,
        Balancer::PowerOfTwo,
    ];

    /// The name `--balancer` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Balancer::RoundRobin => "round-robin",
            Balancer::Random => "random",
            Balancer::LeastOutstanding => "least-outstanding",
            Balancer::PowerOfTwo => "power-of-two",
        }
    }
}

impl fmt::Display for Balancer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rolling restart: server i (1-based) is out over `[i × interval, i × interval +
/// downtime)`, so each goes down in turn, the first one interval into the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollingRestart {
    /// Between one server's going down and the next's.
    pub interval: SimDuration,
    /// How long each is out.
    pub downtime: SimDuration,
}

impl RollingRestart {
    /// The outage of server `index` (0-based).
    pub fn outage(&self, index: u32) -> (SimTime, SimTime) {
        let from = SimTime(
            self.interval
                .as_nanos()
                .saturating_mul(u64::from(index) + 1),
        );
        (
            from,
            SimTime(from.as_nanos().saturating_add(self.downtime.as_nanos())),
        )
    }
}

/// A pool of servers behind a balancer; the default is one server, no pool.
#[derive(Clone, Debug, PartialEq)]
pub struct Pool {
    /// Servers in the pool (1: one server, no balancer).
    pub servers: u32,
    /// How attempts are routed.
    pub balancer: Balancer,
    /// Each server's own triggers (the rolling restart's outages among them), index 0 first;
    /// empty when no server has any.
    pub triggers: Vec<Triggers>,
    /// The rolling restart, as given (its outages are in `triggers`).
    pub rolling: Option<RollingRestart>,
}

impl Default for Pool {
    fn default() -> Self {
        Pool {
            servers: 1,
            balancer: Balancer::default(),
            triggers: Vec::new(),
            rolling: None,
        }
    }
}

impl Pool {
    /// True for a pool of more than one server.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.servers > 1
    }

    /// Servers in the run: at least one.
    #[inline]
    pub fn len(&self) -> u32 {
        self.servers.max(1)
    }

    /// Always false: a run has at least one server.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Server `index`'s own triggers, if it has any.
    #[inline]
    pub fn own(&self, index: u32) -> Option<&Triggers> {
        self.triggers.get(index as usize)
    }

    /// When the last of the servers' own triggers ends.
    pub fn last_end(&self) -> Option<SimTime> {
        self.triggers.iter().filter_map(Triggers::last_end).max()
    }

    /// Whether server `index` is out at `t` by its own triggers.
    #[inline]
    pub fn out_at(&self, index: u32, t: SimTime) -> bool {
        self.own(index).is_some_and(|own| own.out_at(t))
    }

    /// Server `index`'s own capacity factor at `t` (1 outside its degradations).
    #[inline]
    pub fn factor_at(&self, index: u32, t: SimTime) -> f64 {
        self.own(index).map_or(1.0, |own| own.factor_at(t))
    }

    /// The pool in words, `3 servers behind round-robin` (its triggers are the run's to
    /// tell: [`Pool::describe_triggers`]); `None` without a pool.
    pub fn describe(&self) -> Option<String> {
        self.is_active()
            .then(|| format!("{} servers behind {}", self.servers, self.balancer))
    }

    /// The servers' own triggers in words, `outage 10s..20s@server=2, degrade
    /// 30s..40s@0.5@server=1` (the rolling restart's outages left to [`Pool::describe`]).
    pub fn describe_triggers(&self) -> Vec<String> {
        let restart: Vec<(SimTime, SimTime)> = match self.rolling {
            Some(r) => (0..self.servers).map(|i| r.outage(i)).collect(),
            None => Vec::new(),
        };
        let secs = |t: SimTime| SimDuration(t.as_nanos());
        let mut parts = Vec::new();
        for (i, own) in self.triggers.iter().enumerate() {
            let n = i + 1;
            for &(from, to) in &own.outages {
                if restart.get(i) == Some(&(from, to)) {
                    continue;
                }
                parts.push(format!("outage {}..{}@server={n}", secs(from), secs(to)));
            }
            for d in &own.degrades {
                let Degrade { from, to, factor } = *d;
                parts.push(format!(
                    "degrade {}..{}@{factor}@server={n}",
                    secs(from),
                    secs(to)
                ));
            }
        }
        parts
    }
}

/// What the balancer knows and draws during a run.
#[derive(Clone, Debug)]
pub struct Balance {
    balancer: Balancer,
    /// The next server of the rotation.
    next: u32,
    /// Outstanding attempts, per server.
    outstanding: Vec<u64>,
    rng: ClientRng,
}

impl Balance {
    /// The balancer of a run with `servers` servers and run seed `seed`.
    pub fn new(balancer: Balancer, servers: u32, seed: u64) -> Balance {
        Balance {
            balancer,
            next: 0,
            outstanding: vec![0; servers.max(1) as usize],
            rng: ClientRng::new(derive_seed(seed, "balancer")),
        }
    }

    /// Servers balanced over.
    #[inline]
    fn n(&self) -> u32 {
        self.outstanding.len() as u32
    }

    /// Outstanding attempts at each server.
    pub fn outstanding(&self) -> &[u64] {
        &self.outstanding
    }

    /// Picks the server of an attempt being sent, and counts it outstanding there.
    #[inline]
    pub fn pick(&mut self) -> u32 {
        let n = self.n();
        let k = if n == 1 {
            0
        } else {
            match self.balancer {
                Balancer::RoundRobin => {
                    let k = self.next;
                    self.next = (k + 1) % n;
                    k
                }
                Balancer::Random => uniform_below(&mut self.rng, u64::from(n)) as u32,
                Balancer::LeastOutstanding => {
                    let mut best = self.next;
                    for step in 1..n {
                        let k = (self.next + step) % n;
                        if self.outstanding[k as usize] < self.outstanding[best as usize] {
                            best = k;
                        }
                    }
                    self.next = (best + 1) % n;
                    best
                }
                Balancer::PowerOfTwo => {
                    let a = uniform_below(&mut self.rng, u64::from(n)) as u32;
                    let mut b = uniform_below(&mut self.rng, u64::from(n - 1)) as u32;
                    if b >= a {
                        b += 1;
                    }
                    if self.outstanding[b as usize] < self.outstanding[a as usize] {
                        b
                    } else {
                        a
                    }
                }
            }
        };
        self.outstanding[k as usize] += 1;
        k
    }

    /// An attempt at server `k` is no longer outstanding (answered, or its client timed out).
    #[inline]
    pub fn release(&mut self, k: u32) {
        self.outstanding[k as usize] -= 1;
    }
}

/// One server's figures in a run: the attempts routed to it and how each ended for its
/// client, and what the server did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCount {
    /// Attempts routed to it.
    pub attempts: u64,
    /// Of those, answered served in time.
    pub succeeded: u64,
    /// Answered refused in time.
    pub refused: u64,
    /// Timed out at their client.
    pub timed_out: u64,
    /// Still outstanding when the run ended.
    pub in_flight: u64,
    /// Requests it served (late ones included).
    pub served: u64,
}

impl ServerCount {
    /// Conservation: every attempt routed here succeeded, was refused, timed out or is in
    /// flight.
    pub fn conserved(&self) -> bool {
        self.attempts == self.succeeded + self.refused + self.timed_out + self.in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_sends_attempt_k_to_server_k_mod_n() {
        let mut b = Balance::new(Balancer::RoundRobin, 3, 1);
        let picks: Vec<u32> = (0..7).map(|_| b.pick()).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn least_outstanding_never_picks_a_busier_server() {
        // Random picks and releases; every decision is checked against the counts it saw.
        let mut state = 7u64;
        for balancer in [Balancer::LeastOutstanding, Balancer::PowerOfTwo] {
            let mut b = Balance::new(balancer, 5, 3);
            let mut held: Vec<u32> = Vec::new();
            for _ in 0..20_000 {
                let word = crate::rng::splitmix64(&mut state);
                if word % 3 != 0 || held.is_empty() {
                    let before = b.outstanding().to_vec();
                    let k = b.pick();
                    let min = *before.iter().min().unwrap();
                    if balancer == Balancer::LeastOutstanding {
                        assert_eq!(before[k as usize], min, "{before:?} -> {k}");
                    }
                    held.push(k);
                } else {
                    let i = (word >> 8) as usize % held.len();
                    b.release(held.swap_remove(i));
                }
                let mut counted = [0u64; 5];
                for &k in &held {
                    counted[k as usize] += 1;
                }
                assert_eq!(b.outstanding(), &counted[..]);
            }
        }
        // Ties go round: all idle, least-outstanding rotates.
        let mut b = Balance::new(Balancer::LeastOutstanding, 3, 0);
        let picks: Vec<u32> = (0..3)
            .map(|_| {
                let k = b.pick();
                b.release(k);
                k
            })
            .collect();
        assert_eq!(picks, [0, 1, 2]);
    }

    #[test]
    fn power_of_two_draws_two_distinct_servers() {
        // With two servers it always compares both: the idle one wins.
        let mut b = Balance::new(Balancer::PowerOfTwo, 2, 9);
        let first = b.pick();
        for _ in 0..100 {
            let k = b.pick();
            assert_ne!(k, first, "{:?}", b.outstanding());
            b.release(k);
        }
        // Random spreads evenly: 30 000 picks over 3, each within 5 standard deviations.
        let mut r = Balance::new(Balancer::Random, 3, 11);
        let mut counts = [0u64; 3];
        for _ in 0..30_000 {
            counts[r.pick() as usize] += 1;
        }
        let sd = (30_000.0f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
        for c in counts {
            assert!((c as f64 - 10_000.0).abs() < 5.0 * sd, "{counts:?}");
        }
    }

    #[test]
    fn a_rolling_restart_takes_each_server_down_in_turn() {
        let r = RollingRestart {
            interval: SimDuration::from_secs(20),
            downtime: SimDuration::from_secs(5),
        };
        let s = |n| SimTime::ZERO + SimDuration::from_secs(n);
        assert_eq!(r.outage(0), (s(20), s(25)));
        assert_eq!(r.outage(2), (s(60), s(65)));
    }
}
