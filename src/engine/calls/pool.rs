//! The call loop's side of a server pool ([`crate::server::Pool`]): which server an attempt
//! goes to ([`Balance`]), whether that server is out or degraded at an instant (the run's
//! triggers and its own), each server's figures ([`ServerCount`]) and, when the run keeps its
//! windows, each server's series ([`ServerSeriesBuilder`], read off those figures as windows
//! close). A run of one server routes every attempt to server 0 without a draw and counts
//! nothing per server (no figure or series of its own is reported), so it runs as it did
//! before pools.

use crate::server::{Balance, Server, ServerCount, ServerSeriesBuilder, ServerWindow};
use crate::time::SimTime;
use crate::trace::Observer;

use super::windows::Windows;
use super::Loop;

/// A run's balancer and per-server figures.
pub(super) struct PoolRun {
    /// The run has a pool: without one, nothing is balanced or counted per server (the
    /// figures are reported only for a pool).
    active: bool,
    pub(super) balance: Balance,
    pub(super) counts: Vec<ServerCount>,
    /// Each server's series, for a pool whose run keeps its windows.
    pub(super) series: Option<ServerSeriesBuilder>,
}

impl PoolRun {
    pub(super) fn new(spec: &super::RunSpec) -> PoolRun {
        let pool = &spec.overload.pool;
        PoolRun {
            active: pool.is_active(),
            balance: Balance::new(pool.balancer, pool.len(), spec.seed),
            counts: vec![ServerCount::default(); pool.len() as usize],
            series: (pool.is_active() && spec.overload.keep_windows).then(|| {
                ServerSeriesBuilder::new(pool.len() as usize, spec.overload.series_bin.as_nanos())
            }),
        }
    }
}

impl<O: Observer, W: Windows> Loop<'_, O, W> {
    /// Whether server `k` is out at `t`: in one of the run's outages or its own.
    #[inline]
    pub(super) fn out_at(&self, t: SimTime, k: u32) -> bool {
        let overload = &self.spec.overload;
        overload.triggers.out_at(t) || overload.pool.out_at(k, t)
    }

    /// Server `k`'s capacity factor at `t`: the run's degradation's times its own.
    #[inline]
    pub(super) fn factor_at(&self, t: SimTime, k: u32) -> f64 {
        let overload = &self.spec.overload;
        let factor = overload.triggers.factor_at(t);
        if overload.pool.triggers.is_empty() {
            factor
        } else {
            factor * overload.pool.factor_at(k, t)
        }
    }

    /// The server the attempt being sent goes to, counted there.
    #[inline]
    pub(super) fn route(&mut self) -> u32 {
        if !self.pool.active {
            return 0;
        }
        let k = self.pool.balance.pick();
        self.pool.counts[k as usize].attempts += 1;
        k
    }

    /// The attempt outstanding at server `k` ended for its client: answered (`Some(true)`
    /// served, `Some(false)` refused) or timed out (`None`).
    #[inline]
    pub(super) fn released(&mut self, k: u32, answered: Option<bool>) {
        if !self.pool.active {
            return;
        }
        self.pool.balance.release(k);
        let count = &mut self.pool.counts[k as usize];
        match answered {
            Some(true) => count.succeeded += 1,
            Some(false) => count.refused += 1,
            None => count.timed_out += 1,
        }
    }

    /// Server `k` served a request (in time or not).
    #[inline]
    pub(super) fn served_at(&mut self, k: u32) {
        if !self.pool.active {
            return;
        }
        self.pool.counts[k as usize].served += 1;
    }

    /// Requests in each server (0 for a server without a queue).
    fn in_each(&self) -> Vec<u64> {
        self.servers
            .iter()
            .map(|server| match server {
                Server::Capacity(c) => c.in_system(),
                _ => 0,
            })
            .collect()
    }

    /// The run's series is closing its window at `now`: each server's too.
    #[cold]
    #[inline(never)]
    pub(super) fn advance_servers(&mut self, now: SimTime) {
        let in_each = self.in_each();
        if let Some(series) = &mut self.pool.series {
            series.advance(now.as_nanos(), &self.pool.counts, &in_each);
        }
    }

    /// Each server's series at the end of the run (empty without a pool's series).
    pub(super) fn server_series(&mut self) -> Vec<Vec<ServerWindow>> {
        let in_each = self.in_each();
        match self.pool.series.take() {
            Some(series) => series.finish(&self.pool.counts, &in_each),
            None => Vec::new(),
        }
    }

    /// Each server's figures at the end of the run (empty without a pool), with the attempts
    /// still outstanding there.
    pub(super) fn server_counts(&self) -> Vec<ServerCount> {
        if !self.pool.active {
            return Vec::new();
        }
        let mut counts = self.pool.counts.clone();
        for (k, &n) in self.pool.balance.outstanding().iter().enumerate() {
            counts[k].in_flight = n;
        }
        counts
    }
}
