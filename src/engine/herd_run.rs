//! What every client of a herd run shares ([`Run`]): the rules, the pool, the counts and the
//! observer, and the step both herd paths take at each answer ([`Run::answer`]): count the
//! request, then move the client on (its next attempt, or its finish).

use crate::metrics::{Histogram, Tally, Totals, WindowCursor, Windows};
use crate::policy::{CurveTable, Decision, Policy};
use crate::rng::ClientRng;
use crate::server::Response;
use crate::time::{SimDuration, SimTime};
use crate::trace::{Attempt, Next, NoTrace, Observer, Outcome};

use super::client::{Carried, Client, Exchange, PreviousWait};
use super::known::{Dynamic, Known};
use super::{Latency, NetworkDelay, RunSpec, Work};

/// How a run finds the window of each request: a [`WindowCursor`] on the event queue, whose
/// times never go back, so that only a request crossing into another window pays for the
/// division; the division itself ([`Windows`]) on the independent path, where each request
/// of a client lands windows after the last.
pub(super) trait FindWindow {
    fn over(histogram: &Histogram) -> Self;
    fn window_of(&mut self, t: SimTime) -> usize;
}

impl FindWindow for WindowCursor {
    fn over(histogram: &Histogram) -> Self {
        histogram.cursor()
    }
    #[inline(always)]
    fn window_of(&mut self, t: SimTime) -> usize {
        WindowCursor::window_of(self, t)
    }
}

impl FindWindow for Windows {
    fn over(histogram: &Histogram) -> Self {
        histogram.windows()
    }
    #[inline(always)]
    fn window_of(&mut self, t: SimTime) -> usize {
        Windows::window_of(self, t)
    }
}

/// What every client shares in one run: the rules, the pool, the counts and the observer of
/// its attempts ([`NoTrace`] unless traced). `K` is what the loop knows of the rules when it
/// is compiled ([`known`](super::known)).
pub(super) struct Run<'a, F, O = NoTrace, K = Dynamic> {
    pub(super) policy: Policy,
    /// The policy's curve, worked out once.
    pub(super) curve: CurveTable,
    pub(super) latency: Latency,
    pub(super) network: NetworkDelay,
    work: Work,
    /// Items left in the shared pool (always 0 with per-client items).
    pool_left: u64,
    /// With several items per client: items still to fetch, the current one included, for
    /// clients `first_id..`. Kept out of the event (read only on a success) so events stay
    /// small; empty with one item each or a pool. A boxed slice rather than a vector: its
    /// drop is a deallocation inlined in the loop's function, where a vector's may be a call
    /// that takes the run's address and keeps the loop's counts in memory.
    items_left: Box<[u32]>,
    first_id: u32,
    /// Finds each request's window.
    pub(super) windows: F,
    /// The histograms (counted as the run goes) and, once the run is finished, `totals`.
    tally: &'a mut Tally,
    /// The counts and first and last times, kept out of `tally` while the run goes.
    totals: Totals,
    pub(super) trace: O,
    known: std::marker::PhantomData<K>,
}

impl<'a, F: FindWindow, O: Observer, K: Known> Run<'a, F, O, K> {
    /// The shared state of clients `first_id..first_id + clients` of `spec`.
    #[inline]
    pub(super) fn new(
        spec: &RunSpec,
        first_id: u32,
        clients: u32,
        tally: &'a mut Tally,
        trace: O,
    ) -> Self {
        Run {
            policy: spec.policy,
            curve: CurveTable::new(spec.policy.backoff),
            latency: spec.latency,
            network: spec.network,
            work: spec.work,
            pool_left: match spec.work {
                Work::Items(_) => 0,
                Work::Pool(p) => p.saturating_sub(u64::from(spec.clients)),
            },
            items_left: match spec.work {
                Work::Items(k) if k > 1 => vec![k; clients as usize].into_boxed_slice(),
                _ => Box::new([]),
            },
            first_id,
            windows: F::over(&tally.retries),
            tally,
            totals: Totals::default(),
            trace,
            known: std::marker::PhantomData,
        }
    }

    /// Adds the totals to the tally, which is then complete. (A method rather than a `Drop`:
    /// the loops' runs then need no drop of their own, which takes their address and keeps
    /// their counts in memory instead of registers.)
    #[inline(always)]
    pub(super) fn finish(self) {
        let Run { totals, tally, .. } = self;
        totals.add_to(tally);
    }

    /// Counts a request at `time` in `window`: a retry or not, served or refused.
    #[inline(always)]
    pub(super) fn count_request(
        &mut self,
        time: SimTime,
        window: usize,
        retry: bool,
        served: bool,
    ) {
        self.tally.request_windows(window, retry, served);
        self.totals.request(time, retry, served);
    }

    /// Counts client `id` stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    pub(super) fn count_finish(&mut self, t: SimTime, id: u32, completed: bool) {
        self.tally.client_finished(id, t);
        self.totals.finish(t, completed);
    }

    /// A client's first state, carrying `carried`: its first item taken (from the pool, if
    /// shared).
    #[inline(always)]
    pub(super) fn start<W: PreviousWait, X: Exchange, T: Carried>(
        &self,
        id: u32,
        rng: ClientRng,
        carried: T,
    ) -> Client<W, X, T> {
        Client {
            id,
            retries_made: 0,
            rng,
            previous: W::start(self.policy.backoff.base),
            exchange: X::new(),
            carried,
        }
    }

    /// Counts a success of `client`: true when it has more to fetch.
    #[inline(always)]
    fn more_work<W, X, T>(&mut self, client: &Client<W, X, T>) -> bool {
        match self.work {
            Work::Items(1) => false,
            Work::Items(_) => {
                let left = &mut self.items_left[(client.id - self.first_id) as usize];
                *left -= 1;
                *left > 0
            }
            Work::Pool(_) => {
                let more = self.pool_left > 0;
                self.pool_left -= u64::from(more);
                more
            }
        }
    }

    /// Counts the server's answer to `client`'s request that arrived at `time` and moves the
    /// client on: returns when its next request arrives, or `None` when it is done (work
    /// finished or retry budget spent).
    #[inline(always)]
    pub(super) fn answer<W: PreviousWait, X: Exchange, T>(
        &mut self,
        time: SimTime,
        client: &mut Client<W, X, T>,
        response: Response,
    ) -> Option<SimTime> {
        self.answer_seen(time, client, response, |_| None)
    }

    /// [`Run::answer`], `hidden` telling the observer whether the client's tab is hidden at
    /// a time (never called without a trace).
    #[inline(always)]
    pub(super) fn answer_seen<W: PreviousWait, X: Exchange, T>(
        &mut self,
        time: SimTime,
        client: &mut Client<W, X, T>,
        response: Response,
        hidden: impl Fn(SimTime) -> Option<bool>,
    ) -> Option<SimTime> {
        let attempt = client.retries_made;
        let retry = attempt > 0;
        let id = client.id;
        let observe = |trace: &mut O, ended: SimTime, outcome: Outcome, next: Next| {
            if O::ON {
                trace.attempt(&Attempt {
                    client: id,
                    call: None,
                    layer: None,
                    attempt,
                    sent: X::sent(time),
                    arrived: Some(time),
                    ended,
                    outcome,
                    next,
                    hidden: hidden(ended),
                });
            }
        };
        let window = self.windows.window_of(time);
        match response {
            Response::Served => {
                self.count_request(time, window, retry, true);
                client.retries_made = 0;
                client.previous.set(self.policy.backoff.base);
                let more = self.more_work(client);
                let round_trip =
                    X::answer_delay(&K::latency(&self.latency), &self.network, &mut client.rng);
                observe(
                    &mut self.trace,
                    time + round_trip,
                    Outcome::Served,
                    Next::Done,
                );
                if !more {
                    self.count_finish(time + round_trip, client.id, true);
                    return None;
                }
                Some(
                    client
                        .exchange
                        .send(time + round_trip, &self.network, &mut client.rng),
                )
            }
            Response::Refused(mut hints) => {
                self.count_request(time, window, retry, false);
                let round_trip =
                    X::answer_delay(&K::latency(&self.latency), &self.network, &mut client.rng);
                // The reset is announced as an instant; by the time the client reads it, one
                // round trip of it has passed. Retry-After counts from the reading.
                hints.reset_in = hints
                    .reset_in
                    .map(|r| SimDuration(r.0.saturating_sub(round_trip.0)));
                match K::policy(&self.policy).decide_on(
                    &self.curve,
                    client.retries_made,
                    client.previous.get(self.policy.backoff.base),
                    &hints,
                    &mut client.rng,
                ) {
                    Decision::Retry { retry, delay } => {
                        observe(
                            &mut self.trace,
                            time + round_trip,
                            Outcome::Refused,
                            Next::Retry(delay),
                        );
                        client.retries_made = retry;
                        client.previous.set(delay);
                        Some(client.exchange.send(
                            time + round_trip + delay,
                            &self.network,
                            &mut client.rng,
                        ))
                    }
                    Decision::GiveUp => {
                        observe(
                            &mut self.trace,
                            time + round_trip,
                            Outcome::Refused,
                            Next::GaveUp,
                        );
                        self.count_finish(time + round_trip, client.id, false);
                        None
                    }
                }
            }
        }
    }
}
