//! Server models: small state machines that answer each arriving request with "served" or
//! "refused, with these headers". One file per model, one arm of [`Server`] (or, for the rate
//! limiters, of [`Limiter`]) each.
//!
//! A model sees only the arrival time and the client (and, for `occ`, when the attempt's read
//! arrived); it never schedules anything, draws no
//! random numbers and does no I/O, so the engine alone owns time. A rate limiter keeps a table
//! of keys (one per client, or one per address shared by `clients_per_address` clients, see
//! [`Keying`]), sized once by [`Server::prepare`] so answering never allocates.

mod capacity;
pub mod clock;
mod down;
mod fixed_window;
mod flaky;
mod occ;
mod pool;
mod pool_series;
mod sliding_window;
mod token_bucket;
mod triggers;

pub use capacity::{Admission, Capacity, CapacityRule, Job, QueueOrder, Timeline};
pub use clock::{HeaderStyle, Headers, Refusal, WallClock};
pub use down::Down;
pub use fixed_window::{FixedWindow, FixedWindowRule, Store, WindowStart, MAX_WINDOW_STARTS};
pub use flaky::Flaky;
pub use occ::Occ;
pub use pool::{Balance, Balancer, Pool, RollingRestart, ServerCount};
pub use pool_series::{ServerSeriesBuilder, ServerWindow};
pub use sliding_window::{SlidingWindow, SlidingWindowRule};
pub use token_bucket::{Refill, TokenBucket, TokenBucketRule};
pub use triggers::{Degrade, Triggers};

use crate::policy::Hints;
use crate::time::SimTime;

/// The server's answer to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// The request succeeded.
    Served,
    /// The request was refused; the hints are what the client can read of the refusal.
    Refused(Hints),
}

/// A modelled server.
#[derive(Clone, Debug, PartialEq)]
pub enum Server {
    /// Down from the start; optionally serving from a recovery time on.
    Down(Down),
    /// Up, behind a rate limiter.
    Limited(Limited),
    /// One row under optimistic concurrency control: attempts are a read then a write, and
    /// the write fails if another succeeded in between (Brooker 2015).
    Occ(Occ),
    /// Up, with finite capacity: workers, a queue and service times. It cannot answer at
    /// arrival, so it runs only on the call loop ([`crate::engine::calls`]), which drives it
    /// through [`Capacity::arrive`] and [`Capacity::complete`].
    Capacity(Capacity),
    /// Fails each attempt independently with a fixed probability, serves the others at
    /// arrival. Its draws are the call loop's ([`crate::engine::calls`]), made at each send.
    Flaky(Flaky),
}

impl Server {
    /// Answers a request from `client` arriving at `now`.
    #[inline]
    pub fn respond(&mut self, now: SimTime, client: u32) -> Response {
        match self {
            Server::Down(down) => down.respond(now, client),
            Server::Limited(limited) => limited.respond(now, client),
            // A write whose read arrived with it: nothing can come in between.
            Server::Occ(occ) => occ.write(now, now),
            Server::Capacity(_) | Server::Flaky(_) => {
                unreachable!("this server answers through the call loop, not at arrival")
            }
        }
    }

    /// Answers an attempt from `client` whose deciding request arrives at `now` and whose read
    /// arrived at `read_at`: for `occ`, a write carrying the version read then; every other
    /// server ignores the read and answers as [`Server::respond`].
    #[inline(always)]
    pub fn respond_after_read(&mut self, now: SimTime, read_at: SimTime, client: u32) -> Response {
        match self {
            Server::Occ(occ) => occ.write(now, read_at),
            other => other.respond(now, client),
        }
    }

    /// True when an attempt is a read followed by a write (`occ`), so the engine sends its
    /// four messages through the network delay and schedules it at the write.
    pub fn reads_before_writing(&self) -> bool {
        matches!(self, Server::Occ(_))
    }

    /// True when one client's answers cannot depend on another's requests, so clients may be
    /// simulated one after another instead of through the shared event queue. A limiter keeps
    /// state, so it always takes the queue (even keyed per client, where its table of keys is
    /// what the queue path is built to share); so does `occ`, whose clients' writes fail
    /// each other's.
    pub fn clients_independent(&self) -> bool {
        match self {
            Server::Down(_) => true,
            Server::Limited(_) | Server::Occ(_) | Server::Capacity(_) | Server::Flaky(_) => false,
        }
    }

    /// Sizes the server's state for `clients` clients (ids `0..clients`). Call once before the
    /// first request; answering never allocates afterwards.
    pub fn prepare(&mut self, clients: u32) {
        match self {
            Server::Down(_) | Server::Occ(_) | Server::Capacity(_) | Server::Flaky(_) => {}
            Server::Limited(limited) => limited.prepare(clients),
        }
    }

    /// When the limiter's windows opened during the run, in order (see
    /// [`Limited::window_starts`]); `None` for a server that has no windows to mark or whose
    /// windows differ between keys.
    pub fn window_starts(&self) -> Option<Vec<SimTime>> {
        match self {
            Server::Down(_) | Server::Occ(_) | Server::Capacity(_) | Server::Flaky(_) => None,
            Server::Limited(limited) => limited.window_starts(),
        }
    }

    /// True when refusals carry headers a client can read.
    pub fn sends_headers(&self) -> bool {
        match self {
            Server::Down(_) | Server::Occ(_) | Server::Flaky(_) => false,
            Server::Limited(limited) => limited.headers.visible,
            Server::Capacity(c) => c.rule.shed_retry_after.is_some(),
        }
    }
}

/// Which clients share a limiter key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Keying {
    /// Clients behind one address; the limiter keys on the address, so they share a bucket.
    /// 1 means one bucket per client.
    pub clients_per_address: u32,
}

impl Default for Keying {
    fn default() -> Self {
        Keying {
            clients_per_address: 1,
        }
    }
}

impl Keying {
    /// The key of `client`: clients `0..n` share address 0, `n..2n` address 1, and so on.
    #[inline(always)]
    pub fn key(&self, client: u32) -> usize {
        if self.clients_per_address == 1 {
            client as usize
        } else {
            (client / self.clients_per_address) as usize
        }
    }

    /// Keys needed for `clients` clients.
    pub fn keys(&self, clients: u32) -> usize {
        clients.div_ceil(self.clients_per_address) as usize
    }
}

/// A rate-limiting algorithm; one file and one arm each.
#[derive(Clone, Debug, PartialEq)]
pub enum Limiter {
    /// At most `limit` per fixed window (Laravel's throttle and variants).
    FixedWindow(FixedWindow),
    /// At most `limit` in any window of the given length.
    SlidingWindow(SlidingWindow),
    /// A bucket of tokens refilled continuously or in ticks.
    TokenBucket(TokenBucket),
}

/// A server behind a rate limiter: the algorithm, who shares a key, and the headers it sends.
#[derive(Clone, Debug, PartialEq)]
pub struct Limited {
    /// The algorithm and its per-key state.
    pub limiter: Limiter,
    /// Who shares a key.
    pub keying: Keying,
    /// How refusals are written and whether clients can read them.
    pub headers: Headers,
}

impl Limited {
    /// Sizes the key table for `clients` clients.
    pub fn prepare(&mut self, clients: u32) {
        let keys = self.keying.keys(clients);
        match &mut self.limiter {
            Limiter::FixedWindow(l) => l.prepare(keys),
            Limiter::SlidingWindow(l) => l.prepare(keys),
            Limiter::TokenBucket(l) => l.prepare(keys),
        }
    }

    /// When the windows of a fixed-window limiter with a single key (one client, or every
    /// client behind one address) opened, in simulated time; `None` for the rolling limiters
    /// (no windows) and for several keys (each key's windows open at their own times). An
    /// aligned window that opened before the run started (a non-zero epoch phase) is left out;
    /// at most [`MAX_WINDOW_STARTS`] are kept.
    pub fn window_starts(&self) -> Option<Vec<SimTime>> {
        match &self.limiter {
            Limiter::FixedWindow(l) if l.records_starts() => {
                let phase = self.headers.clock.phase.as_nanos();
                Some(
                    l.window_starts()
                        .iter()
                        .filter(|&&wall| wall >= phase)
                        .map(|&wall| self.headers.clock.sim(wall))
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// Admits or refuses a request from `client` at `now`.
    #[inline(always)]
    pub fn respond(&mut self, now: SimTime, client: u32) -> Response {
        let key = self.keying.key(client);
        let clock = self.headers.clock;
        let verdict = match &mut self.limiter {
            Limiter::FixedWindow(l) => l.admit(clock.wall(now), key),
            Limiter::SlidingWindow(l) => l.admit(clock.wall(now), key),
            Limiter::TokenBucket(l) => l.admit(now, clock, key),
        };
        match verdict {
            Ok(()) => Response::Served,
            Err(refusal) => Response::Refused(self.headers.hints(now, refusal)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    #[test]
    fn clients_behind_one_address_share_its_bucket() {
        let rule = FixedWindowRule {
            limit: 2,
            window: SimDuration::from_secs(60),
            start: WindowStart::FirstHit,
            store: Store::Precise,
        };
        let mut server = Server::Limited(Limited {
            limiter: Limiter::FixedWindow(FixedWindow::new(rule)),
            keying: Keying {
                clients_per_address: 5,
            },
            headers: Headers::default(),
        });
        server.prepare(10);
        let t = SimTime::ZERO;
        // Clients 0..5 share address 0 (limit 2); client 5 is on address 1.
        assert_eq!(server.respond(t, 0), Response::Served);
        assert_eq!(server.respond(t, 4), Response::Served);
        assert!(matches!(server.respond(t, 3), Response::Refused(_)));
        assert_eq!(server.respond(t, 5), Response::Served);
        assert!(!server.clients_independent());
    }
}
