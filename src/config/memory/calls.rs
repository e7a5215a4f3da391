//! The call loop's calls, its server's queue and its series, bounded before a run: how many
//! calls a run starts and holds at once, how long one can last, what a capacity server can
//! queue, and the bytes of each. Separate from the herd paths' count because the call loop
//! keeps its own per-call state, bounded by the arrivals and the server rather than by the
//! clients alone.

use super::{nanos, tab_bytes, Sat, QUEUE_PLACE, SERIES_ROW};
use crate::config::{Scenario, ServerModel};
use crate::time::SimDuration;
use crate::workload::Arrivals;

impl Scenario {
    /// Calls a call-loop run starts at most: one a client for a herd; for Poisson arrivals
    /// the expected count plus ten standard deviations (a Poisson count's sd is its square
    /// root) and 100, beyond which the estimate is off with probability below 10^-20; for
    /// closed-loop clients, `Scenario::closed_call_bound`, which does not read the rate.
    pub fn call_bound(&self) -> u128 {
        if let Some(bound) = self.closed_call_bound() {
            return bound;
        }
        match &self.overload.arrivals {
            Arrivals::Herd => u128::from(self.clients),
            Arrivals::Poisson(s) => {
                let mean = s.expected_calls();
                Sat::ceil(mean + 10.0 * mean.sqrt() + 100.0).0
            }
        }
    }

    /// The longest one attempt can be in service at a capacity server, and the longest from
    /// its arrival to the end of its service (the backlog): a service takes at most the
    /// demand's practical maximum plus `slowdown` for each other request in service (at most
    /// `workers − 1`), divided by the lowest capacity factor. With bounded workers an arrival
    /// waits first for as many completions as requests are ahead of it, plus one: at most the
    /// queue's bound first-in first-out, else every other attempt (last-in first-out lets
    /// later ones pass); the workers complete at least one each per longest service.
    /// (0, 0) for other servers.
    pub(super) fn service_bounds(&self) -> (Sat, Sat) {
        use crate::server::QueueOrder;
        let ServerModel::Capacity(r) = self.server else {
            return (Sat::ZERO, Sat::ZERO);
        };
        let attempts = Sat(self.call_bound()) * Sat(self.tries_per_call());
        // A pool's server degraded by its own and the run's at once: their product.
        let lowest_of =
            |t: &crate::server::Triggers| t.degrades.iter().map(|d| d.factor).fold(1.0, f64::min);
        let own = self
            .overload
            .pool
            .triggers
            .iter()
            .map(lowest_of)
            .fold(1.0, f64::min);
        let lowest = lowest_of(&self.overload.triggers) * own;
        let others_in_service = r.workers.map_or(attempts, Sat::from).min(attempts) - 1;
        let longest = nanos(r.service.practical_max()) + nanos(r.slowdown) * others_in_service;
        let longest = Sat::ceil(longest.as_f64() / lowest).max(longest);
        let Some(workers) = r.workers else {
            return (longest, longest);
        };
        let ahead = match (r.queue, r.order) {
            (Some(q), QueueOrder::Fifo) => Sat::from(q).min(attempts - 1),
            _ => attempts - 1,
        };
        let wait = longest * (ahead + 1).div_ceil(Sat::from(workers));
        (longest, wait + longest)
    }

    /// Rows a call-loop run's series can hold at most: one a window of the horizon (0 on the
    /// herd paths).
    pub fn series_rows(&self) -> u128 {
        self.series_windows().0
    }

    pub(super) fn series_windows(&self) -> Sat {
        if !self.run_spec(self.strategies[0]).uses_call_loop() {
            return Sat::ZERO;
        }
        self.horizon_bound() / nanos(self.overload.series_bin) + 1
    }

    /// Bytes of the series written out at most, by the JSON report (eleven pretty-printed
    /// arrays, a line of up to 30 B per value) or by `--series-out` (a row of twelve fields,
    /// up to 240 B), twice while the buffer grows, for every strategy; a pool's servers add
    /// theirs (seven arrays each, or a row of fourteen fields, up to 210 B, each).
    pub fn series_output_estimate(&self) -> u64 {
        let servers = if self.overload.pool.is_active() {
            u128::from(self.overload.pool.len())
        } else {
            0
        };
        (Sat::from(self.strategies.len())
            * self.series_windows()
            * (2 * 11 * 30 + servers * (2 * 7 * 30)))
            .to_u64()
    }

    /// Bytes of a window of a pool's servers' series (a [`crate::server::ServerWindow`] a
    /// server), 0 without a pool.
    pub(super) fn server_window_bytes(&self) -> u128 {
        if self.overload.pool.is_active() {
            u128::from(crate::server::ServerSeriesBuilder::window_bytes(u64::from(
                self.overload.pool.len(),
            )))
        } else {
            0
        }
    }

    /// The longest one call can last from its start: for each attempt of every retry layer
    /// ([`Scenario::tries_per_call`]) a wait (the longest layer's cap, and what browser tabs
    /// add to it), two network trips and either the timeout or the server's backlog
    /// ([`Scenario::call_loop_horizon`] without the last start), and the longest outer
    /// layer's timeout, pending that long after the call ended.
    fn longest_call(&self) -> Sat {
        let tries = Sat(self.tries_per_call());
        let cap = self
            .overload
            .layers
            .outer
            .iter()
            .map(|l| l.policy.backoff.cap)
            .fold(self.backoff.cap, SimDuration::max);
        let (_, backlog) = self.service_bounds();
        let answer = self
            .overload
            .timeout
            .map_or(backlog, |t| nanos(t).min(backlog));
        tries * (nanos(cap) + self.beyond_cap() + self.trip() + answer + self.tab_delay())
            + nanos(self.overload.layers.longest_timeout())
    }

    /// A request's two network trips (or the round trip of `--latency`), at their longest.
    fn trip(&self) -> Sat {
        match self.overload.network {
            Some(d) => nanos(d.practical_max()) * 2,
            None => nanos(self.latency.max()),
        }
    }

    /// Calls a call-loop run holds at once at most, in flight or leaving a stale timeout or a
    /// late answer pending: every call of a herd; for closed-loop clients K a process (slots
    /// are reused); for Poisson arrivals, the calls started
    /// within a span at the schedule's peak rate, plus ten standard deviations and 100 (as
    /// [`Scenario::call_bound`]), and never more than every call. The span is twice the
    /// longest a call can last (`Scenario::longest_call`; its last timeout can be pending
    /// that much longer); for a run guarded as it goes ([`Scenario::guard_in_flight`]), one
    /// attempt without a retry (a trip and the timeout or the longest service): a server
    /// that keeps up holds about that, and the guard stops a run that outgrows its budget.
    pub fn calls_at_once(&self) -> u128 {
        let all = self.call_bound();
        if let Some(closed) = &self.overload.closed {
            // Slots are reused: never more than K a process.
            return (u128::from(self.clients) * u128::from(closed.in_flight)).min(all);
        }
        match &self.overload.arrivals {
            Arrivals::Herd => all,
            Arrivals::Poisson(s) => {
                let span = if self.overload.in_flight.is_on() {
                    let (longest, _) = self.service_bounds();
                    let answer = self
                        .overload
                        .timeout
                        .map_or(longest, |t| nanos(t).min(longest));
                    self.trip() + answer
                } else {
                    self.longest_call() * 2
                };
                let mean = s.peak_rate() * span.as_f64() / 1e9;
                Sat::ceil(mean + 10.0 * mean.sqrt() + 100.0).0.min(all)
            }
        }
    }

    /// Requests a capacity server's queue is counted for: its bound and the workers' when it
    /// has one; an unlimited queue guarded at run time ([`Scenario::guard_in_flight`]) one a
    /// call held at once ([`Scenario::calls_at_once`]: a server that keeps up holds fewer),
    /// else one a call started over the run (the worst case of a collapse, where an
    /// unlimited queue keeps the abandoned attempts of calls long ended).
    fn queued_at_most(&self) -> Sat {
        let calls = Sat(self.call_bound());
        match self.server {
            ServerModel::Capacity(r) => match (r.queue, r.workers) {
                // Each server of a pool holds its own.
                (Some(q), Some(w)) => {
                    ((Sat::from(q) + Sat::from(w)) * Sat::from(self.overload.pool.len())).min(calls)
                }
                (None, Some(_)) if self.overload.in_flight.is_on() => Sat(self.calls_at_once()),
                _ => calls,
            },
            _ => Sat::ZERO,
        }
    }

    /// Bytes a call slot is counted at: the slot (48 B), up to three pending events (its
    /// start, its arrival or completion, its timeout: 48 B each), a tab's reading and, with
    /// outer layers' timeouts, one event for each attempt of theirs a call can make (each
    /// stays queued until due, its attempt over or not), each three times over (a vector
    /// grown by doubling holds its old and new buffers at once; the event queue's blocks are
    /// part filled).
    pub(super) fn call_slot_bytes(&self) -> u128 {
        let tab = if self.browser.is_active() {
            tab_bytes()
        } else {
            0
        };
        // Outer layers' timeouts, one an attempt of theirs, each pending until due.
        let timeouts = self.overload.layers.timeouts_per_call();
        (3 * 48 + 3 * 3 * 48 + 3 * tab).saturating_add(timeouts.saturating_mul(3 * 48))
    }

    /// Bytes of a call-loop run's servers: a pool's, each a server's state (its queue
    /// counted in [`Scenario::in_flight_estimate`], its keys with the limiter's), its figures
    /// (48 B) and outstanding count (8 B), and its own triggers; 0 without a pool.
    pub(super) fn pool_bytes(&self) -> Sat {
        let pool = &self.overload.pool;
        if !pool.is_active() {
            return Sat::ZERO;
        }
        let per_server = std::mem::size_of::<crate::server::Server>() as u128
            + 56
            + std::mem::size_of::<crate::server::Triggers>() as u128;
        let triggers: u128 = pool
            .triggers
            .iter()
            .map(|t| (16 * t.outages.len() + 24 * t.degrades.len()) as u128)
            .sum();
        Sat::from(pool.len()) * per_server + Sat(triggers)
    }

    /// The bytes of the calls held at once and the server's queue, as the estimate counts
    /// them ([`Part::Calls`](super::Part::Calls)).
    pub fn in_flight_estimate(&self) -> u64 {
        (Sat(self.calls_at_once()) * self.call_slot_bytes() + self.queued_at_most() * QUEUE_PLACE)
            .to_u64()
    }

    /// Bytes of one call-loop run beyond its histograms, as (per process, calls in flight,
    /// series): a generator per client process (8 B), its retry control and tab if any, and
    /// its next start; per call held at once ([`Scenario::calls_at_once`]) a slot (48 B)
    /// three times over (a vector grown by doubling holds its old and new buffers at once),
    /// up to three pending events (its start, its arrival or completion, its timeout: 48 B
    /// each) three times over (the queue's partly filled blocks and re-filing), and a tab's
    /// reading; per request the server can queue (`Scenario::queued_at_most`) its place
    /// (32 B) three times over and a late answer's event; the series (one `SeriesRow`, 104 B,
    /// a window of the horizon, and a pool's a `ServerWindow` of 56 B a server twice over)
    /// when the run keeps its windows, else none.
    /// `tests/memory` measured 100 000 herd calls at 1.1× this.
    pub(super) fn call_loop_bytes(&self) -> (Sat, Sat, Sat) {
        let control = if self.controls.is_none() {
            0
        } else {
            std::mem::size_of::<crate::policy::control::ProcessControl>() as u128
                + self.controls.budget.heap_bytes_per_state()
        };
        let tab = if self.browser.is_active() {
            tab_bytes()
        } else {
            0
        };
        // A process's generator, control and tab, and its pending start (48 B, three times
        // over as any event).
        let processes = Sat::from(self.clients) * (8 + control + tab + 3 * 48);
        let calls = Sat::from(self.in_flight_estimate());
        let series = if self.overload.keep_windows {
            // A pool's servers' rows, their vectors grown by doubling.
            self.series_windows() * (SERIES_ROW + 2 * self.server_window_bytes())
        } else {
            Sat::ZERO
        };
        (processes, calls, series)
    }
}
