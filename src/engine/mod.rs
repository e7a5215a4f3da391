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
//! A third, [`calls`], serves runs whose answers take time or whose load keeps coming (a
//! capacity server, timeouts, network delay, Poisson arrivals, outages): same queue, same
//! policies, same servers, with server and timeout events beside the clients'.
//!
//! They agree exactly because a client's random draws depend only on the run seed, its index
//! and its own history (see [`crate::rng`]), and a stateless server's answer only on the time.
//! `tests/integration` checks the agreement for every strategy. Nothing here does I/O.

pub mod browser;
pub mod calls;
pub mod delay;
mod known;
pub mod queue;
pub mod work;

pub use browser::Browser;
pub use calls::{simulate_calls, InFlightGuard, Overload};
pub use delay::{NetworkDelay, STUDY_NETWORK};
pub use queue::{Event, EventQueue};
pub use work::{Latency, Work};

use rayon::prelude::*;

use crate::metrics::{Histogram, Tally, Totals, WindowCursor, Windows};
use crate::policy::control::Controls;
use crate::policy::{CurveTable, Decision, Hints, Policy, Strategy};
use crate::rng::{ClientRng, ClientSeeds};
use crate::server::{Down, Response, Server};
use crate::time::{SimDuration, SimTime};
use crate::trace::{self, Attempt, Next, NoTrace, Observer, Outcome, TracePart};
use known::{Dynamic, Known, Plain};

/// Clients simulated per parallel block on the independent path. Large enough that seeding a
/// block's ChaCha and merging its histogram are noise; small enough to balance two cores.
pub const CLIENTS_PER_BLOCK: u32 = 1 << 16;

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
    /// Browser tabs (none by default): see [`browser`].
    pub browser: Browser,
}

/// Experiment 1's histogram window: 100 ms.
pub const EXPERIMENT1_BIN: SimDuration = SimDuration::from_millis(100);

impl RunSpec {
    /// A herd-path run's tally, nothing counted yet: each client's finish kept in small runs
    /// ([`Tally::for_clients`]), its histograms limited by the run's guard
    /// ([`InFlightGuard::blocks`]).
    pub(crate) fn new_tally(&self) -> Tally {
        Tally::for_clients(self.bin, self.clients).with_block_limit(self.overload.in_flight.blocks)
    }

    /// An empty tally that partial ones merge into, limited as [`RunSpec::new_tally`].
    fn empty_tally(&self) -> Tally {
        Tally::new(self.bin).with_block_limit(self.overload.in_flight.blocks)
    }

    /// [`RunSpec::new_tally`] made of `tally`, emptied, its histograms' buffers kept to count
    /// into again ([`Tally::clear_for_clients`]).
    fn reuse_tally(&self, mut tally: Tally) -> Tally {
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

    /// True when the run needs the call loop ([`calls`]): a capacity or flaky server, or any of
    /// Poisson arrivals, a timeout, network delay, an outage or a degradation.
    pub fn uses_call_loop(&self) -> bool {
        matches!(self.server, Server::Capacity(_) | Server::Flaky(_))
            || self.overload.is_active()
            || !self.controls.is_none()
    }
}

/// A client between requests. It travels inside its pending event, so the loop never looks a
/// client up in a table (a cache miss per event at a million clients). The queue moves every
/// event two or three times, so bytes count: with [`NoWait`] and [`Single`] a client is 16
/// bytes, 24 with the event's time; only decorrelated jitter carries its previous wait (32
/// bytes with the time), and only the `occ` server's attempts their read's offset
/// ([`ReadWrite`], 8 bytes more).
#[derive(Clone, Copy, Debug)]
struct Client<W, X = Single> {
    id: u32,
    /// Retries sent for the current item (reset after each success).
    retries_made: u32,
    rng: ClientRng,
    /// The previous wait, if the strategy reads it.
    previous: W,
    /// What the pending attempt carries besides its time.
    exchange: X,
}

/// Where a client keeps its previous wait (`base` before the first retry), the input of
/// decorrelated jitter. A strategy that never reads it uses [`NoWait`] and events shrink by a
/// quarter; both give the same draws because only decorrelated jitter reads the value.
trait PreviousWait: Copy {
    /// The value before the first retry.
    fn start(base: SimDuration) -> Self;
    /// The previous wait; `base` when it is not kept.
    fn get(self, base: SimDuration) -> SimDuration;
    /// Remembers `wait`, or forgets it.
    fn set(&mut self, wait: SimDuration);
}

impl PreviousWait for SimDuration {
    #[inline(always)]
    fn start(base: SimDuration) -> Self {
        base
    }
    #[inline(always)]
    fn get(self, _base: SimDuration) -> SimDuration {
        self
    }
    #[inline(always)]
    fn set(&mut self, wait: SimDuration) {
        *self = wait;
    }
}

/// The previous wait is not kept (every strategy but decorrelated jitter).
#[derive(Clone, Copy, Debug)]
struct NoWait;

impl PreviousWait for NoWait {
    #[inline(always)]
    fn start(_base: SimDuration) -> Self {
        NoWait
    }
    #[inline(always)]
    fn get(self, base: SimDuration) -> SimDuration {
        base
    }
    #[inline(always)]
    fn set(&mut self, _wait: SimDuration) {}
}

/// What an attempt is made of, on the wire: one request answered at its arrival ([`Single`],
/// every server but `occ`), or a read followed by a write ([`ReadWrite`], the `occ` server).
/// A type parameter, like [`PreviousWait`], so that the herd's events stay as small and its
/// loop as short as without `occ`.
trait Exchange: Copy {
    /// True when every client's first attempt reaches the server at t = 0, so that the first
    /// attempts are answered in client order without being queued.
    const FIRST_AT_ZERO: bool;
    /// Nothing sent yet.
    fn new() -> Self;
    /// The server's answer to `client`'s attempt that reaches it at `time`.
    fn respond(self, server: &mut Server, time: SimTime, client: u32) -> Response;
    /// How long the answer takes to reach the client.
    fn answer_delay(latency: &Latency, network: &NetworkDelay, rng: &mut ClientRng) -> SimDuration;
    /// Sends an attempt at `send`: returns when it reaches the server (its event's time).
    fn send(&mut self, send: SimTime, network: &NetworkDelay, rng: &mut ClientRng) -> SimTime;
    /// When the attempt reaching the server at `arrival` was sent, if the event knows.
    fn sent(arrival: SimTime) -> Option<SimTime>;
}

/// One request, answered where it arrives; the round trip is [`Latency`], all of it counted
/// after the answer (the server answers at the arrival, the client reads it a round trip
/// later). Carries nothing.
#[derive(Clone, Copy, Debug)]
struct Single;

impl Exchange for Single {
    const FIRST_AT_ZERO: bool = true;
    #[inline(always)]
    fn new() -> Self {
        Single
    }
    #[inline(always)]
    fn respond(self, server: &mut Server, time: SimTime, client: u32) -> Response {
        server.respond(time, client)
    }
    #[inline(always)]
    fn answer_delay(
        latency: &Latency,
        _network: &NetworkDelay,
        rng: &mut ClientRng,
    ) -> SimDuration {
        latency.draw(rng)
    }
    #[inline(always)]
    fn send(&mut self, send: SimTime, _network: &NetworkDelay, _rng: &mut ClientRng) -> SimTime {
        send
    }
    #[inline(always)]
    fn sent(arrival: SimTime) -> Option<SimTime> {
        Some(arrival)
    }
}

/// An `occ` attempt: read request, read answer and write request cross the network (three
/// draws of [`NetworkDelay`] from the client's stream, in that order, when it is sent), then
/// the write answer (a fourth, when it is answered). The event is the write's arrival `t_w`;
/// it carries how long before it the read arrived, `t_w − t_r` (the read answer's and write
/// request's delays).
#[derive(Clone, Copy, Debug)]
struct ReadWrite {
    read_before: SimDuration,
}

impl Exchange for ReadWrite {
    const FIRST_AT_ZERO: bool = false;
    #[inline(always)]
    fn new() -> Self {
        ReadWrite {
            read_before: SimDuration::ZERO,
        }
    }
    #[inline(always)]
    fn respond(self, server: &mut Server, time: SimTime, client: u32) -> Response {
        server.respond_after_read(time, SimTime(time.0 - self.read_before.0), client)
    }
    #[inline(always)]
    fn answer_delay(
        _latency: &Latency,
        network: &NetworkDelay,
        rng: &mut ClientRng,
    ) -> SimDuration {
        network.draw(rng)
    }
    #[inline(always)]
    fn send(&mut self, send: SimTime, network: &NetworkDelay, rng: &mut ClientRng) -> SimTime {
        let read = send + network.draw(rng);
        let read_answer = network.draw(rng);
        let write = network.draw(rng);
        self.read_before = SimDuration(read_answer.0 + write.0);
        read + self.read_before
    }
    #[inline(always)]
    fn sent(_arrival: SimTime) -> Option<SimTime> {
        // Not kept in the event (it would grow every `occ` event by 8 bytes): the trace
        // writer takes it from the client's previous attempt.
        None
    }
}

/// How a run finds the window of each request: a [`WindowCursor`] on the event queue, whose
/// times never go back, so that only a request crossing into another window pays for the
/// division; the division itself ([`Windows`]) on the independent path, where each request
/// of a client lands windows after the last.
trait FindWindow {
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
/// is compiled ([`known`]).
struct Run<'a, F, O = NoTrace, K = Dynamic> {
    policy: Policy,
    /// The policy's curve, worked out once.
    curve: CurveTable,
    latency: Latency,
    network: NetworkDelay,
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
    windows: F,
    /// The histograms (counted as the run goes) and, once the run is finished, `totals`.
    tally: &'a mut Tally,
    /// The counts and first and last times, kept out of `tally` while the run goes.
    totals: Totals,
    trace: O,
    known: std::marker::PhantomData<K>,
}

impl<'a, F: FindWindow, O: Observer, K: Known> Run<'a, F, O, K> {
    /// The shared state of clients `first_id..first_id + clients` of `spec`.
    #[inline]
    fn new(spec: &RunSpec, first_id: u32, clients: u32, tally: &'a mut Tally, trace: O) -> Self {
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
    fn finish(self) {
        let Run { totals, tally, .. } = self;
        totals.add_to(tally);
    }

    /// Counts a request at `time` in `window`: a retry or not, served or refused.
    #[inline(always)]
    fn count_request(&mut self, time: SimTime, window: usize, retry: bool, served: bool) {
        self.tally.request_windows(window, retry, served);
        self.totals.request(time, retry, served);
    }

    /// Counts client `id` stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    fn count_finish(&mut self, t: SimTime, id: u32, completed: bool) {
        self.tally.client_finished(id, t);
        self.totals.finish(t, completed);
    }

    /// A client's first state: its first item taken (from the pool, if shared).
    #[inline(always)]
    fn start<W: PreviousWait, X: Exchange>(&self, id: u32, rng: ClientRng) -> Client<W, X> {
        Client {
            id,
            retries_made: 0,
            rng,
            previous: W::start(self.policy.backoff.base),
            exchange: X::new(),
        }
    }

    /// Counts a success of `client`: true when it has more to fetch.
    #[inline(always)]
    fn more_work<W, X>(&mut self, client: &Client<W, X>) -> bool {
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
    fn answer<W: PreviousWait, X: Exchange>(
        &mut self,
        time: SimTime,
        client: &mut Client<W, X>,
        response: Response,
    ) -> Option<SimTime> {
        self.answer_seen(time, client, response, |_| None)
    }

    /// [`Run::answer`], `hidden` telling the observer whether the client's tab is hidden at
    /// a time (never called without a trace).
    #[inline(always)]
    fn answer_seen<W: PreviousWait, X: Exchange>(
        &mut self,
        time: SimTime,
        client: &mut Client<W, X>,
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

/// Simulates `spec` and returns what was counted (for a call-loop run, without its
/// overload totals: see [`simulate_all`]).
pub fn simulate(spec: &RunSpec, path: Path) -> Tally {
    simulate_all(spec, path).0
}

/// Simulates `spec`: what every path counts, and the overload totals and series of a
/// call-loop run (`None` on the herd paths). The path is ignored for a call-loop run.
pub fn simulate_all(spec: &RunSpec, path: Path) -> (Tally, Option<crate::series::OverloadTally>) {
    simulate_observed(spec, path, NoTrace)
}

/// [`simulate_all`] counting into `tally`, a tally of an earlier run (of any spec), emptied
/// first, when `spec` is a herd of independent clients that fits one block: a worker that runs
/// small runs one after another then grows its histograms once instead of every run (merging
/// one block into an empty tally, as [`simulate_independent`] does, adds nothing to it). Any
/// other run is [`simulate_all`]'s, and `tally` is dropped.
pub fn simulate_all_in(
    spec: &RunSpec,
    path: Path,
    tally: Tally,
) -> (Tally, Option<crate::series::OverloadTally>) {
    let one_block = (1..=CLIENTS_PER_BLOCK).contains(&spec.clients);
    if one_block
        && !spec.uses_call_loop()
        && !spec.browser.is_active()
        && takes_independent(spec, path)
    {
        let mut tally = spec.reuse_tally(tally);
        simulate_block(spec, 0, spec.clients, NoTrace, &mut tally);
        return (tally, None);
    }
    simulate_all(spec, path)
}

/// [`simulate_all`], telling `trace` every attempt as it ends (see [`crate::trace`]). The
/// counts are those of the run without it. The independent paths then tell the attempts in
/// client order, whatever the thread count: in parts joined in order when `trace` splits,
/// else blocks one after another.
pub fn simulate_observed<O: Observer>(
    spec: &RunSpec,
    path: Path,
    mut trace: O,
) -> (Tally, Option<crate::series::OverloadTally>) {
    // A loop on one thread leaves the others idle: the trace is formatted on one of them.
    if O::ON && (spec.uses_call_loop() || !takes_independent(spec, path)) {
        if let Some(run) = trace.handing_off(|handoff| simulate_on(spec, path, handoff)) {
            return run;
        }
    }
    simulate_on(spec, path, trace)
}

/// [`simulate_observed`], telling `trace` on this thread (or on the independent paths' parts).
fn simulate_on<O: Observer>(
    spec: &RunSpec,
    path: Path,
    trace: O,
) -> (Tally, Option<crate::series::OverloadTally>) {
    if spec.uses_call_loop() {
        let (tally, overload) = calls::simulate_calls_observed(spec, trace);
        return (tally, Some(overload));
    }
    (simulate_herd(spec, path, trace), None)
}

/// True when `path` takes the independent path for `spec`'s herd.
fn takes_independent(spec: &RunSpec, path: Path) -> bool {
    match path {
        Path::Auto => spec.clients_independent(),
        Path::EventQueue => false,
        Path::Independent => {
            assert!(
                spec.clients_independent(),
                "the independent path needs a server whose clients cannot interact"
            );
            true
        }
    }
}

fn simulate_herd<O: Observer>(spec: &RunSpec, path: Path, trace: O) -> Tally {
    let independent = takes_independent(spec, path);
    match (independent, spec.browser.is_active(), O::ON) {
        (true, false, false) => simulate_independent(spec),
        (true, false, true) => in_order(
            spec,
            trace,
            |first, last, trace| new_block(spec, first, last, trace),
            |first, last, part| new_block(spec, first, last, part),
        ),
        (false, false, _) => event_queue_observed(spec, trace),
        (true, true, false) => browser::herd::simulate_independent(spec),
        (true, true, true) => browser::herd::independent_in_order(spec, trace),
        (false, true, _) => browser::herd::simulate_event_queue_observed(spec, trace),
    }
}

/// The general path: one queue, every request in time order (FIFO among equal times).
pub fn simulate_event_queue(spec: &RunSpec) -> Tally {
    event_queue_observed(spec, NoTrace)
}

fn event_queue_observed<O: Observer>(spec: &RunSpec, trace: O) -> Tally {
    let occ = spec.server.reads_before_writing();
    match (spec.policy.strategy.reads_previous_wait(), occ) {
        (true, false) => event_queue_loop::<SimDuration, Single, O>(spec, trace),
        (false, false) => event_queue_loop::<NoWait, Single, O>(spec, trace),
        (true, true) => event_queue_loop::<SimDuration, ReadWrite, O>(spec, trace),
        (false, true) => event_queue_loop::<NoWait, ReadWrite, O>(spec, trace),
    }
}

/// [`simulate_event_queue`] with clients that keep their previous wait in `W` and make
/// attempts of the shape `X`.
fn event_queue_loop<W: PreviousWait, X: Exchange, O: Observer>(spec: &RunSpec, trace: O) -> Tally {
    let mut tally = spec.new_tally();
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let mut run: Run<WindowCursor, O> = Run::new(spec, 0, spec.clients, &mut tally, trace);
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let mut queue: EventQueue<Client<W, X>> = EventQueue::new();
    if X::FIRST_AT_ZERO {
        // Every first request is at t = 0, before anything the answers schedule (FIFO), so
        // they are answered here in client order instead of being queued: the same order the
        // queue would give, without holding all of them in memory at once.
        for id in 0..spec.clients {
            let mut client: Client<W, X> = run.start(id, seeds.next_rng());
            let response = client.exchange.respond(&mut server, SimTime::ZERO, id);
            if let Some(next) = run.answer(SimTime::ZERO, &mut client, response) {
                queue.push(Event {
                    time: next,
                    item: client,
                });
            }
        }
    } else {
        // Every client sends its first attempt at t = 0, in client order; each reaches the
        // server after its own network delays.
        for id in 0..spec.clients {
            let mut client: Client<W, X> = run.start(id, seeds.next_rng());
            let time = client
                .exchange
                .send(SimTime::ZERO, &spec.network, &mut client.rng);
            queue.push(Event { time, item: client });
        }
    }
    while let Some(Event {
        time,
        item: mut client,
    }) = queue.pop()
    {
        let response = client.exchange.respond(&mut server, time, client.id);
        if let Some(next) = run.answer(time, &mut client, response) {
            queue.push(Event {
                time: next,
                item: client,
            });
        }
    }
    run.finish();
    tally.window_starts = server.window_starts();
    tally
}

/// The fast path for servers whose clients cannot interact: each client's whole life in turn,
/// blocks of clients in parallel. Same draws, same answers, same tally as the event queue.
pub fn simulate_independent(spec: &RunSpec) -> Tally {
    over_blocks(spec, |first, last| new_block(spec, first, last, NoTrace))
}

/// The independent paths traced, in client order, each block or part telling its attempts:
/// the same tally as [`over_blocks`] (merging is a sum). When `trace` splits
/// ([`Observer::part`]) and a client's most lines fit a part ([`trace::part_clients`]),
/// parts of clients are simulated by `part_block` on the worker threads, each into its own
/// buffer, and joined in client order, a round at a time: this thread writes one round's
/// parts while the workers simulate the next, and no more than [`trace::PARTS_PER_THREAD`]
/// parts a thread are alive. Otherwise `block` runs the blocks one after another here.
fn in_order<O: Observer>(
    spec: &RunSpec,
    mut trace: O,
    block: impl Fn(u32, u32, &mut O) -> Tally,
    part_block: impl Fn(u32, u32, &mut TracePart) -> Tally + Sync,
) -> Tally {
    let mut tally = spec.empty_tally();
    let split = trace::part_clients(spec.attempts_per_client()).and_then(|per_part| {
        let last = per_part.min(spec.clients);
        trace.part(0, last).map(|part| (per_part, part, last))
    });
    let Some((per_part, part, mut first)) = split else {
        for b in 0..spec.clients.div_ceil(CLIENTS_PER_BLOCK) {
            let first = b * CLIENTS_PER_BLOCK;
            let last = (first + CLIENTS_PER_BLOCK).min(spec.clients);
            tally.merge(&block(first, last, &mut trace));
        }
        return tally;
    };
    struct Slot {
        first: u32,
        last: u32,
        part: TracePart,
        tally: Option<Tally>,
    }
    let round = (rayon::current_num_threads() * trace::PARTS_PER_THREAD / 2).max(1);
    let mut simulating = vec![Slot {
        first: 0,
        last: first,
        part,
        tally: None,
    }];
    let mut writing: Vec<Slot> = Vec::with_capacity(round);
    let part_block = &part_block;
    while !simulating.is_empty() || !writing.is_empty() {
        while simulating.len() < round && first < spec.clients {
            let last = first.saturating_add(per_part).min(spec.clients);
            let part = trace
                .part(first, last)
                .expect("an observer that made one part makes them all");
            simulating.push(Slot {
                first,
                last,
                part,
                tally: None,
            });
            first = last;
        }
        rayon::in_place_scope(|scope| {
            for slot in simulating.iter_mut() {
                scope.spawn(move |_| {
                    slot.tally = Some(part_block(slot.first, slot.last, &mut slot.part));
                });
            }
            for slot in writing.drain(..) {
                tally.merge(&slot.tally.expect("a part simulated in the round before"));
                trace.join(slot.part);
            }
        });
        std::mem::swap(&mut simulating, &mut writing);
    }
    tally
}

/// The independent paths' split: `block(first, last)` simulates clients `first..last`, blocks
/// of [`CLIENTS_PER_BLOCK`] in parallel, and their tallies are merged (in an order that does
/// not change the sum, so the thread count does not matter).
fn over_blocks(spec: &RunSpec, block: impl Fn(u32, u32) -> Tally + Sync) -> Tally {
    let blocks = spec.clients.div_ceil(CLIENTS_PER_BLOCK);
    (0..blocks)
        .into_par_iter()
        .map(|b| {
            let first = b * CLIENTS_PER_BLOCK;
            block(first, (first + CLIENTS_PER_BLOCK).min(spec.clients))
        })
        .reduce(
            || spec.empty_tally(),
            |mut a, b| {
                a.merge(&b);
                a
            },
        )
}

/// Clients `first..last` of `spec`, counted into a new tally.
fn new_block<O: Observer>(spec: &RunSpec, first: u32, last: u32, trace: O) -> Tally {
    let mut tally = spec.new_tally();
    simulate_block(spec, first, last, trace, &mut tally);
    tally
}

/// Clients `first..last` of `spec`, counted into `tally` (empty, made for `spec`).
fn simulate_block<O: Observer>(spec: &RunSpec, first: u32, last: u32, trace: O, tally: &mut Tally) {
    // The server is matched once, not at every request: a down server's answer is then a
    // comparison inlined into the loop, or a constant when it never recovers.
    match &spec.server {
        Server::Down(Down { recover_at: None }) if !O::ON => {
            known_block_loop(spec, first, last, trace, tally, |_, _| {
                Response::Refused(Hints::default())
            })
        }
        Server::Down(down) => {
            block_loop::<O, Dynamic>(spec, first, last, trace, tally, |time, id| {
                down.respond(time, id)
            })
        }
        server => {
            let mut server = server.clone();
            server.prepare(spec.clients);
            block_loop::<O, Dynamic>(spec, first, last, trace, tally, |time, id| {
                server.respond(time, id)
            })
        }
    }
}

/// [`block_loop`] knowing what it can of `spec`'s rules when compiled ([`known`]): with one
/// of the six strategies of [`Strategy::ALL`], every retry made and no latency, an instance
/// for that strategy; else the one that reads them from the run.
#[inline(always)]
fn known_block_loop<O: Observer>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
    tally: &mut Tally,
    respond: impl FnMut(SimTime, u32) -> Response,
) {
    match known::plain_strategy(spec) {
        Some(0) => block_loop::<O, Plain<0>>(spec, first, last, trace, tally, respond),
        Some(1) => block_loop::<O, Plain<1>>(spec, first, last, trace, tally, respond),
        Some(2) => block_loop::<O, Plain<2>>(spec, first, last, trace, tally, respond),
        Some(3) => block_loop::<O, Plain<3>>(spec, first, last, trace, tally, respond),
        Some(4) => block_loop::<O, Plain<4>>(spec, first, last, trace, tally, respond),
        Some(5) => block_loop::<O, Plain<5>>(spec, first, last, trace, tally, respond),
        _ => block_loop::<O, Dynamic>(spec, first, last, trace, tally, respond),
    }
}

/// Clients `first..last` of `spec` one after another, counted into `tally` (empty, made for
/// `spec`), `respond` answering each request; `K` what the loop knows of the rules
/// ([`known`]).
#[inline(never)]
fn block_loop<O: Observer, K: Known>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
    tally: &mut Tally,
    mut respond: impl FnMut(SimTime, u32) -> Response,
) {
    let mut run: Run<Windows, O, K> = Run::new(spec, first, last - first, tally, trace);
    let mut seeds = ClientSeeds::starting_at(spec.seed, u64::from(first));
    for id in first..last {
        let mut client: Client<SimDuration, Single> = run.start(id, seeds.next_rng());
        let mut time = SimTime::ZERO;
        loop {
            let response = respond(time, client.id);
            match run.answer(time, &mut client, response) {
                Some(next) => time = next,
                None => break,
            }
        }
    }
    run.finish();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Strategy;
    use crate::server::{
        Down, FixedWindow, FixedWindowRule, HeaderStyle, Headers, Keying, Limited, Limiter, Store,
        WindowStart,
    };

    fn spec(strategy: Strategy, clients: u32, recover_at: Option<SimTime>) -> RunSpec {
        RunSpec::experiment1(clients, strategy, Server::Down(Down { recover_at }), 42)
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
    fn events_are_as_small_as_documented() {
        use std::mem::size_of;
        assert_eq!(size_of::<Event<Client<NoWait>>>(), 24);
        assert_eq!(size_of::<Event<Client<SimDuration>>>(), 32);
        assert_eq!(size_of::<Event<Client<NoWait, ReadWrite>>>(), 32);
        assert_eq!(size_of::<Event<Client<SimDuration, ReadWrite>>>(), 40);
    }

    #[test]
    fn both_paths_agree_for_every_strategy() {
        for strategy in Strategy::ALL {
            for recover in [None, Some(SimTime(5_000_000_000))] {
                let s = spec(strategy, 3 * CLIENTS_PER_BLOCK + 17, recover);
                assert_eq!(
                    simulate_event_queue(&s),
                    simulate_independent(&s),
                    "{strategy} recover {recover:?}"
                );
            }
        }
    }

    #[test]
    fn a_run_into_a_used_tally_counts_what_a_fresh_run_does() {
        // A tally of a longer run at a finer bin (15 000 windows, its clients more), then one
        // block's runs of every strategy into it, one after another: each the same tally as
        // the run on its own, and the first run's buffers kept throughout.
        let mut first = spec(Strategy::Exponential, 40, None);
        first.bin = SimDuration::from_millis(1);
        let mut tally = simulate(&first, Path::Auto);
        assert_eq!(tally.retries.len(), 15_001);
        let held = tally.capacity_bytes();
        for strategy in Strategy::ALL {
            for recover in [None, Some(SimTime(5_000_000_000))] {
                let s = spec(strategy, CLIENTS_PER_BLOCK.min(10), recover);
                let (next, overload) = simulate_all_in(&s, Path::Auto, tally);
                assert!(overload.is_none());
                assert_eq!(
                    next,
                    simulate(&s, Path::Auto),
                    "{strategy} recover {recover:?}"
                );
                assert!(
                    next.capacity_bytes() >= held,
                    "{strategy} recover {recover:?}"
                );
                tally = next;
            }
        }
        // A run the shortcut does not take (more than a block) is simulate_all's.
        let s = spec(Strategy::Fixed, CLIENTS_PER_BLOCK + 1, None);
        assert_eq!(
            simulate_all_in(&s, Path::Auto, tally).0,
            simulate(&s, Path::Auto)
        );
    }

    fn fixed_window(
        limit: u32,
        window_s: u64,
        store: Store,
        style: HeaderStyle,
        per_address: u32,
    ) -> Server {
        Server::Limited(Limited {
            limiter: Limiter::FixedWindow(FixedWindow::new(FixedWindowRule {
                limit,
                window: SimDuration::from_secs(window_s),
                start: WindowStart::FirstHit,
                store,
            })),
            keying: Keying {
                clients_per_address: per_address,
            },
            headers: Headers {
                style,
                ..Headers::default()
            },
        })
    }

    #[test]
    fn reset_aware_against_exact_headers_is_refused_once_per_window() {
        // One client, 100 items, 10 per 10 s (precise store, exact headers), 10 ms round trip.
        // Each window: 10 served at w, w+0.01, …, w+0.09; the 11th request (w+0.10) is refused
        // with the reset 9.9 s away; read 10 ms later, so the client sleeps 9.89 s and arrives
        // at exactly w+10 s, when the key is gone. Ten windows, the last needs no refusal:
        // 9 refusals, 109 requests, last answer at 90.09 + 0.01 = 90.1 s.
        let mut s = spec(Strategy::ResetAware, 1, None);
        s.server = fixed_window(10, 10, Store::Precise, HeaderStyle::Exact, 1);
        s.work = Work::Items(100);
        s.latency = Latency::Fixed(SimDuration::from_millis(10));
        s.policy.max_retries = 1000;
        let t = simulate(&s, Path::Auto);
        assert_eq!(t.refused, 9);
        assert_eq!(t.requests, 109);
        assert_eq!(t.succeeded, 100);
        assert_eq!(t.completed, 1);
        assert_eq!(t.last_finish, Some(SimTime(90_100_000_000)));
        assert_eq!(
            t.served_windows.total() + t.refused_windows.total(),
            t.requests
        );
    }

    #[test]
    fn two_clients_behind_one_address_share_the_window_and_the_pool() {
        // Limit 3 per 10 s, one address, pool of 4, zero latency, exponential from 1 s.
        // t=0 in FIFO order: c0 served (1), c1 served (2), c0 served (3) and the pool is empty
        // so c0 finishes at 0; c1 refused. c1 retries at 1, 3, 7 s (refused: window until
        // 10 s, precise store) and 15 s (served). 4 served + 4 refused; finish 15 s, spread 15 s.
        let mut s = spec(Strategy::Exponential, 2, None);
        s.server = fixed_window(3, 10, Store::Precise, HeaderStyle::WholeSeconds, 2);
        s.work = Work::Pool(4);
        let t = simulate(&s, Path::Auto);
        assert_eq!((t.requests, t.refused, t.completed), (8, 4, 2));
        assert_eq!(t.first_finish, Some(SimTime::ZERO));
        assert_eq!(t.last_finish, Some(SimTime(15_000_000_000)));
        assert_eq!(
            t.client_finishes,
            Some(vec![Some(SimTime::ZERO), Some(SimTime(15_000_000_000))])
        );
        let refused_at: Vec<usize> = t
            .refused_windows
            .counts()
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(w, _)| w)
            .collect();
        assert_eq!(refused_at, [0, 10, 30, 70]);
        assert_eq!(t.retries.total(), 4);
    }

    #[test]
    fn both_paths_agree_with_items_and_random_latency() {
        for strategy in [
            Strategy::FullJitter,
            Strategy::DecorrelatedJitter,
            Strategy::RetryAfter,
        ] {
            let mut s = spec(
                strategy,
                CLIENTS_PER_BLOCK + 5,
                Some(SimTime(3_000_000_000)),
            );
            s.work = Work::Items(3);
            s.latency = Latency::Uniform {
                low: SimDuration::from_millis(50),
                high: SimDuration::from_millis(150),
            };
            let queue = simulate_event_queue(&s);
            assert_eq!(queue, simulate_independent(&s), "{strategy}");
            assert_eq!(queue.completed + queue.gave_up, u64::from(s.clients));
        }
    }
}

#[cfg(test)]
mod occ_tests {
    //! The `occ` server on the event queue, worked out by hand and in closed form.
    use super::*;
    use crate::policy::{Backoff, Strategy};
    use crate::server::Occ;

    const MS: u64 = 1_000_000;

    fn occ(strategy: Strategy, clients: u32, network: NetworkDelay) -> RunSpec {
        RunSpec {
            network,
            ..RunSpec::new(
                clients,
                Policy {
                    strategy,
                    backoff: Backoff {
                        base: SimDuration::from_millis(10),
                        cap: SimDuration::from_secs(2),
                        multiplier: 2.0,
                        jitter_order: Default::default(),
                    },
                    max_retries: 1_000_000,
                    retry_chance: crate::policy::RetryChance::ALWAYS,
                },
                Server::Occ(Occ::default()),
                SimDuration::from_millis(10),
                2015,
            )
        }
    }

    fn fixed(ms: u64) -> NetworkDelay {
        NetworkDelay::Fixed(SimDuration::from_millis(ms))
    }

    fn windows_with(h: &Histogram) -> Vec<(usize, u64)> {
        h.counts()
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(w, &c)| (w, c))
            .collect()
    }

    #[test]
    fn two_clients_by_hand() {
        // Every message 10 ms, exponential from 10 ms. Both send their reads at 0; both reads
        // arrive at 10 ms and see version 0; both writes arrive at 30 ms. Client 0's was
        // scheduled first (FIFO), so it succeeds and bumps the version to 1; client 1's
        // carries version 0 and fails. Client 0 reads its answer at 40 ms and stops. Client 1
        // reads its failure at 40 ms, waits e_1 = 10 ms, reads again at 60 ms (version 1),
        // writes at 80 ms: nothing was written since, so it succeeds; answer at 90 ms.
        let t = simulate(&occ(Strategy::Exponential, 2, fixed(10)), Path::Auto);
        assert_eq!((t.requests, t.refused, t.succeeded), (3, 1, 2));
        assert_eq!(
            t.client_finishes,
            Some(vec![Some(SimTime(40 * MS)), Some(SimTime(90 * MS))])
        );
        assert_eq!(t.last_finish, Some(SimTime(90 * MS)));
        // 10 ms windows: the two writes at 30 ms (one served, one refused), the retry at 80.
        assert_eq!(windows_with(&t.served_windows), [(3, 1), (8, 1)]);
        assert_eq!(windows_with(&t.refused_windows), [(3, 1)]);
        assert_eq!(windows_with(&t.retries), [(8, 1)]);
        assert_eq!((t.first_retry, t.gave_up), (Some(SimTime(80 * MS)), 0));
    }

    #[test]
    fn without_backoff_n_clients_take_n_rounds_of_one_success_each() {
        // Fixed delay d, no backoff: all writes of round k arrive together at 3d + 4d(k − 1)
        // (read d, answer d, write d; then answer d and straight back). The first of them in
        // queue order succeeds, the others read before it and fail. So round k sends
        // N − k + 1 writes: N(N + 1)/2 in all, N(N − 1)/2 failed, and client k (the k-th to
        // win) reads its answer at 4d(k + 1); the last at 4dN.
        let d = 7;
        for n in [1u64, 2, 3, 10, 57] {
            let t = simulate(&occ(Strategy::Naive, n as u32, fixed(d)), Path::EventQueue);
            assert_eq!(t.requests, n * (n + 1) / 2, "{n} clients");
            assert_eq!(t.refused, n * (n - 1) / 2, "{n} clients");
            assert_eq!(t.last_finish, Some(SimTime(4 * d * n * MS)), "{n} clients");
            let finishes = t.client_finishes.unwrap();
            for (k, f) in finishes.iter().enumerate() {
                assert_eq!(*f, Some(SimTime(4 * d * (k as u64 + 1) * MS)), "client {k}");
            }
        }
    }

    #[test]
    fn exponential_without_jitter_keeps_the_herd_whole_and_only_adds_the_waits() {
        // The same rounds as without backoff (every loser has failed as often as the others,
        // so all wait alike): the same work, and the finish later by the waits between rounds,
        // e_1 + … + e_(N−1) with e_k = min(2 s, 10 ms · 2^(k−1)).
        let d = 10;
        for n in [2u64, 5, 12] {
            let t = simulate(
                &occ(Strategy::Exponential, n as u32, fixed(d)),
                Path::EventQueue,
            );
            assert_eq!(t.requests, n * (n + 1) / 2, "{n} clients");
            let waits: u64 = (1..n).map(|k| ((10 * MS) << (k - 1)).min(2000 * MS)).sum();
            assert_eq!(
                t.last_finish,
                Some(SimTime(4 * d * n * MS + waits)),
                "{n} clients"
            );
        }
    }

    #[test]
    fn every_client_writes_once_successfully_and_every_other_write_failed() {
        // Conservation, with random delays and every strategy of the study: attempts =
        // clients + failed writes; the served histogram holds one write a client.
        for strategy in [
            Strategy::Naive,
            Strategy::Exponential,
            Strategy::FullJitter,
            Strategy::EqualJitter,
            Strategy::DecorrelatedJitter,
        ] {
            let n = 300;
            let t = simulate(&occ(strategy, n, STUDY_NETWORK), Path::Auto);
            assert_eq!(t.succeeded, u64::from(n), "{strategy}");
            assert_eq!(t.completed, u64::from(n), "{strategy}");
            assert_eq!(t.requests, u64::from(n) + t.refused, "{strategy}");
            assert_eq!(t.served_windows.total(), u64::from(n), "{strategy}");
            assert_eq!(t.refused_windows.total(), t.refused, "{strategy}");
            assert_eq!(t.retries.total(), t.refused, "{strategy}");
            assert!(t.refused > 0, "{strategy}: 300 clients always collide");
            assert_eq!(t.gave_up, 0);
        }
    }

    #[test]
    fn a_client_out_of_retries_gives_up_after_reading_its_last_failure() {
        // Three clients, 10 ms messages, no backoff, one retry each: round 1 at 30 ms (client
        // 0 wins), round 2 at 70 ms (client 1 wins, client 2 fails its only retry and gives up
        // on reading the answer at 80 ms).
        let mut s = occ(Strategy::Naive, 3, fixed(10));
        s.policy.max_retries = 1;
        let t = simulate(&s, Path::Auto);
        assert_eq!(
            (t.requests, t.refused, t.gave_up, t.completed),
            (5, 3, 1, 2)
        );
        assert_eq!(
            t.client_finishes,
            Some(vec![
                Some(SimTime(40 * MS)),
                Some(SimTime(80 * MS)),
                Some(SimTime(80 * MS))
            ])
        );
    }
}
