//! The call loop: the engine's path for runs where answers take time or load keeps coming —
//! a server with finite capacity, client timeouts, network delay, open-loop (Poisson)
//! arrivals, outages and degradations. Same [`EventQueue`], same [`Policy`](crate::policy::Policy), same [`Server`]
//! models and the same [`Tally`] as the herd paths, which stay as they are for runs that
//! need none of this ([`RunSpec::uses_call_loop`]).
//!
//! **Model.** A client *process* (one per `--clients`) starts *calls*: all at t = 0 (herd),
//! or as a Poisson stream (see [`crate::workload`]). A call sends an *attempt*; the request
//! travels to the server (one network delay), is served, queued or refused there, and the
//! answer travels back (another delay). With a timeout, an attempt unanswered `timeout` after
//! it was sent is abandoned: the client counts a timeout and follows its strategy, the retry's
//! wait counting from the timeout; the late answer is ignored (and the server's time on it
//! counted as abandoned work). A refusal is followed by the strategy too. A call ends when an
//! attempt succeeds or its retries are spent. Calls of one process run concurrently and share
//! the process's random stream.
//!
//! **Events:** call start, retry send, arrival at the server, completion at the server,
//! answer delivery at the client, timeout. Every attempt has a number in its call's slot; an
//! answer or a timeout whose number is no longer the slot's outstanding attempt is stale and
//! dropped, so nothing is ever removed from the queue. An arrival or an answer with no delay
//! is handled straight after the event that caused it, without the queue, when nothing else
//! is due at that instant: the queue would have given it next (the same order, the same
//! events). Such an attempt's arrival is then the next thing to reach the server, so a
//! capacity server's answer to it is known when it is sent: when a worker is free and the
//! answer will be back strictly before the timeout, no timeout is scheduled (it would find
//! the attempt answered and do nothing). A first-come first-served capacity server whose
//! answers are known at arrival needs none of its own events: when a request leaves the
//! server and when its answer is read are reached in time order between events instead
//! (`known`), the series' windows closing at them as they closed at the events; a run that
//! records no window counts such an answer's success at the arrival instead.
//!
//! **Windows recorded** (`windows`): every window of the series kept, with the tally's
//! histograms, for a report that writes them; for a run that writes figures only, folded
//! into the recovery verdict without their latencies, or none at all when it has no trigger
//! to judge recovery after. Which is a type parameter of the loop: the same loop, compiled
//! without the work its run does not read.
//!
//! **Ties** (the queue's rule, FIFO by scheduling order): events at one time are handled in
//! the order they were scheduled. So a timeout, scheduled when the attempt was sent, comes
//! before an answer due at the same instant, which was scheduled later: an answer must arrive
//! strictly before the timeout to count. At t = 0 of a herd, processes start in id order.
//!
//! **Random draws**, all from the process's own stream ([`crate::rng`]), in this order: when
//! a call starts, its first send, then the process's next start (Poisson); at every send, the
//! service demand (capacity server with a random service time), whether the attempt fails
//! (`flaky` server: one 64-bit word), then the request's network
//! delay, then the answer's (`--network-delay`), or the round trip (`--latency`); at every
//! retry decision, the strategy's draw. Results therefore do not depend on the thread count.
//!
//! **Latency vs network delay.** `--latency L` keeps its meaning: the request reaches the
//! server at once and the answer is read `L` later (the whole round trip on the way back).
//! `--network-delay D` draws each direction from `D` independently; the two are exclusive.
//!
//! **Browser tabs** ([`crate::engine::browser`]): each client process is a tab, its [`Tab`]
//! kept beside its stream, and each call keeps what it read of its last refusal
//! ([`Reading`]). The rules are [`TabRules`], the herd paths' own: a refusal or timeout read
//! while hidden pauses the call (with `--when-hidden pause`) until `visibilitychange`; a retry
//! timer is checked when it is due (its `Send` event), and a hidden tab's runs at its
//! throttled wake-up (`Wake`) or, pausing, waits to be visible (`Visible`). A call's first
//! attempt is not a timer and goes at once. Checking at the event's own time keeps each tab's
//! times in order however many of its calls are in flight. A call paused for good (its tab
//! never visible again) ends neither succeeded nor failed: counted `paused`. An early retry
//! is a call's current attempt reaching the server before the instant announced by the last
//! refusal its call read.
//!
//! **Exact and approximate.** Counts, times and recovery are exact (integer nanoseconds);
//! latency quantiles come from a sketch within 0.4 % ([`crate::series::Sketch`]); the mean
//! latency is exact. Runs go on until nothing is pending, so `pending` is always 0 and
//! `attempts = succeeded + timed_out + refused` (+ attempts dropped unread by a cancelling
//! server, which are timed out first).

mod closed;
#[cfg(test)]
mod closed_tests;
mod deadline;
mod handlers;
mod known;
#[cfg(test)]
mod known_tests;
mod layers;
mod overload;
mod pool;
mod sticky;
#[cfg(test)]
mod tab_tests;
mod tabs;
#[cfg(test)]
mod tests;
mod windows;

pub use closed::ClosedLoop;
pub use deadline::DeadlinePropagation;
pub use layers::{Layer, LayerCount, Layers};
pub use overload::{InFlightGuard, Overload};
pub use sticky::StickyFailures;

use crate::engine::browser::{Reading, Tab, TabRules};
use crate::metrics::WindowFold;
use crate::metrics::{Tally, WindowCursor};
use crate::policy::control::{Outcome, RunControls};
use crate::rng::{ClientRng, ClientSeeds};
use crate::series::{OverloadTally, SeriesBuilder, Sketch};
use crate::server::{Job, Server};
use crate::time::{SimDuration, SimTime};
use crate::trace::{NoTrace, Observer};
use crate::workload::{Arrivals, Dist};

use super::{Event, EventQueue, RunSpec};
use windows::{Folded, NoWindows, Windows};

/// Where an attempt is, as far as a cancelling server needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// On the network, or answered.
    Elsewhere,
    /// In the server's queue.
    Waiting,
}

/// A call in flight, in a reusable slot.
#[derive(Clone, Copy, Debug)]
struct Call {
    process: u32,
    /// Number of the slot's latest attempt; keeps counting when the slot is reused, so an
    /// old call's attempts never match a new one's.
    attempt: u32,
    outstanding: bool,
    phase: Phase,
    retries_made: u32,
    previous: SimDuration,
    sent: SimTime,
    /// What the call holds of its process's retry budget ([`ProcessControl`]).
    held: u64,
    /// The call is a half-open breaker's trial.
    trial: bool,
    /// How its last attempt ended, kept for a call paused before its strategy decided: the
    /// retry control judges the retry when the tab is visible again, on that outcome.
    outcome: Outcome,
    /// Its retry, already allowed (and charged) by the retry control, was paused when its
    /// timer came due in a hidden tab: redrawn once visible, it is not charged again.
    charged: bool,
    /// The server of the pool its latest attempt went to (0 without a pool).
    server: u32,
}

/// The answer travelling back.
#[derive(Clone, Copy, Debug)]
enum Answer {
    /// Served, after this much server time (ns).
    Served { service: u64 },
    /// Refused at `at` (the server's time, ns); the headers in nanoseconds, `u64::MAX` for
    /// absent (the reset counted from the reading, or with tabs from `at`); `throttling` for
    /// a capacity server's shed or a limiter's 429 (see
    /// [`Outcome::Throttled`](crate::policy::control::Outcome)).
    Refused {
        retry_after: u64,
        reset_in: u64,
        throttling: bool,
        at: u64,
    },
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Start {
        process: u32,
    },
    /// A retry's wait is over; stale when `attempt` (the call's last) is no longer the
    /// call's, its call abandoned by an outer layer's timeout meanwhile.
    Send {
        call: u32,
        attempt: u32,
    },
    Arrive(Job),
    Complete {
        job: Job,
        service: u64,
    },
    Deliver {
        call: u32,
        attempt: u32,
        answer: Answer,
    },
    /// A worker dropped a request whose deadline could not be met, after `spent` ns
    /// (deadline propagation).
    Dropped {
        spent: u64,
        server: u32,
    },
    Timeout {
        call: u32,
        attempt: u32,
    },
    /// An attempt whose timer has run goes out: a retry timer throttled in a hidden tab
    /// (browser tabs), or the end of a throttle's wait for a token (not a retry timer: a tab
    /// sends it when it comes, hidden or not).
    Wake {
        call: u32,
        attempt: u32,
    },
    /// A paused call's tab becomes visible (browser tabs).
    Visible {
        call: u32,
    },
    /// Outer layer `layer`'s attempt is due (its retry, or one its throttle delayed): it and
    /// the calls of every layer below it start afresh (layered retries); stale when `seq` is
    /// no longer the layer's.
    Restart {
        call: u32,
        layer: u32,
        seq: u32,
    },
    /// Outer layer `layer`'s timeout for its attempt `seq`: the call below it is abandoned
    /// unless that attempt has ended.
    LayerTimeout {
        call: u32,
        layer: u32,
        seq: u32,
    },
}

const NONE: u64 = u64::MAX;

fn header(d: Option<SimDuration>) -> u64 {
    d.map_or(NONE, SimDuration::as_nanos)
}

fn unheader(n: u64) -> Option<SimDuration> {
    (n != NONE).then_some(SimDuration(n))
}

struct Loop<'a, O = NoTrace, W = SeriesBuilder> {
    spec: &'a RunSpec,
    /// The servers: one, or a pool's ([`crate::server::Pool`]).
    servers: Vec<Server>,
    /// The balancer and each server's figures.
    pool: pool::PoolRun,
    queue: EventQueue<Ev>,
    /// An event at the current time handled straight after the one being handled, without
    /// going through the queue: pushed when nothing else was due at that time, so it would
    /// have been the next out ([`Loop::push_now`]).
    next: Option<Event<Ev>>,
    rngs: Vec<ClientRng>,
    calls: Vec<Call>,
    free: Vec<u32>,
    tally: Tally,
    windows: WindowCursor,
    totals: OverloadTally,
    /// The series' windows, or none when nothing the run writes reads them ([`windows`]).
    series: W,
    sketch: Sketch,
    /// The service demand is drawn only for a capacity server.
    service: Option<Dist>,
    /// The retry controls' states, per process and shared ([`RunControls`]).
    controls: RunControls,
    /// Browser tabs, when the run models them.
    tabs: Option<CallTabs>,
    /// The observer of every attempt ([`NoTrace`] unless traced).
    trace: O,
    /// What only a trace needs, empty without one.
    traced: Traced,
    /// The layers above the run's policy, when it has any.
    layered: Option<layers::LayerRun>,
    /// Each process's calls in flight, for closed-loop clients.
    closed: Option<closed::ClientLoops>,
    /// The server's answers, when they are known at arrival ([`known`]).
    known: Option<known::KnownAnswers>,
}

/// What the call loop keeps for a trace only: each process's calls started, and each call
/// slot's number within its process and its current attempt's arrival; in a layered run, the
/// outer layers' lines that end with an innermost attempt, told after its line.
#[derive(Default)]
struct Traced {
    calls: Vec<u32>,
    slots: Vec<TracedSlot>,
    /// An innermost attempt's line is pending: outer layers' lines wait in `deferred`.
    deferring: bool,
    deferred: Vec<crate::trace::Attempt>,
}

#[derive(Clone, Copy, Default)]
struct TracedSlot {
    number: u32,
    arrived: Option<SimTime>,
}

/// The call loop's browser tabs: the shared rules, one tab a process, one reading a call
/// slot.
struct CallTabs {
    rules: TabRules,
    tabs: Vec<Tab>,
    readings: Vec<Reading>,
}

/// Simulates `spec` on the call loop: the tally every path fills, and the overload totals
/// and series.
pub fn simulate_calls(spec: &RunSpec) -> (Tally, OverloadTally) {
    simulate_calls_observed(spec, NoTrace)
}

/// [`simulate_calls`], telling `trace` every attempt once it ends and its call has decided
/// what follows.
pub fn simulate_calls_observed<O: Observer>(spec: &RunSpec, trace: O) -> (Tally, OverloadTally) {
    if O::ON {
        return run_calls::<O, SeriesBuilder>(spec, trace, false)
            .expect("a run on the server's own events ends");
    }
    let overload = &spec.overload;
    if overload.keep_windows {
        run_untraced::<SeriesBuilder>(spec)
    } else if overload.trigger_end().is_some() {
        run_untraced::<Folded>(spec)
    } else {
        run_untraced::<NoWindows>(spec)
    }
}

/// An observer that sees nothing is no observer: the run may go without the server's events
/// where its answers are known at arrival, and again with them if it must.
fn run_untraced<W: Windows>(spec: &RunSpec) -> (Tally, OverloadTally) {
    run_calls::<NoTrace, W>(spec, NoTrace, true)
        .or_else(|| run_calls::<NoTrace, W>(spec, NoTrace, false))
        .expect("a run on the server's own events ends")
}

/// The call loop; with `known`, without the server's own events where its answers are known
/// at arrival ([`known`]). `None` when the in-flight guard might have stopped such a run:
/// it is then simulated again on the server's events.
fn run_calls<O: Observer, W: Windows>(
    spec: &RunSpec,
    trace: O,
    known: bool,
) -> Option<(Tally, OverloadTally)> {
    let overload = &spec.overload;
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let service = match &server {
        Server::Capacity(c) => Some(c.rule.service),
        _ => None,
    };
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let mut tally = Tally::for_clients(spec.bin, spec.clients);
    if !overload.keep_windows {
        tally.retries_folded = Some(WindowFold::default());
    }
    let windows = tally.retries.cursor();
    let trigger_end = overload.trigger_end();
    let servers = vec![server; overload.pool.len() as usize];
    let mut run = Loop {
        spec,
        servers,
        pool: pool::PoolRun::new(spec),
        queue: EventQueue::new(),
        next: None,
        rngs: (0..spec.clients).map(|_| seeds.next_rng()).collect(),
        calls: Vec::new(),
        free: Vec::new(),
        tally,
        windows,
        totals: OverloadTally::default(),
        series: W::start(overload),
        sketch: Sketch::new(),
        service,
        controls: RunControls::new(&spec.controls, spec.clients),
        tabs: spec.browser.is_active().then(|| {
            let mut rules = TabRules::new(spec);
            CallTabs {
                tabs: (0..spec.clients)
                    .map(|p| rules.open(spec.seed, p))
                    .collect(),
                rules,
                readings: Vec::new(),
            }
        }),
        trace,
        traced: Traced {
            calls: if O::ON {
                vec![0; spec.clients as usize]
            } else {
                Vec::new()
            },
            slots: Vec::new(),
            deferring: false,
            deferred: Vec::new(),
        },
        layered: layers::LayerRun::new(&overload.layers, spec.clients),
        closed: match (&overload.closed, &overload.arrivals) {
            (Some(rule), Arrivals::Poisson(s)) => {
                Some(closed::ClientLoops::new(*rule, s.end, spec.clients))
            }
            _ => None,
        },
        known: None,
    };
    if known && run.answers_known() {
        if let Server::Capacity(c) = &run.servers[0] {
            let completions = run.tally.retries.cursor();
            run.known = Some(known::KnownAnswers::new(&c.rule, completions));
        }
    }
    for process in 0..spec.clients {
        let first = match &overload.arrivals {
            Arrivals::Herd => Some(SimTime::ZERO),
            Arrivals::Poisson(schedule) => {
                schedule.next_start(SimTime::ZERO, spec.clients, &mut run.rngs[process as usize])
            }
        };
        if let Some(t) = first {
            // A closed-loop client starts its K calls at its first arrival.
            let calls = run.closed.as_ref().map_or(1, |c| c.first_calls());
            for _ in 0..calls {
                run.push(t, Ev::Start { process });
            }
        }
    }
    let mut events = 0u64;
    while let Some(Event { time: now, item }) = run.next.take().or_else(|| run.queue.pop()) {
        events += 1;
        run.reach(now);
        if run.series.due(now) {
            let in_system = run.in_system();
            run.series.advance(now, in_system);
            if run.pool.series.is_some() {
                run.advance_servers(now);
            }
        }
        match item {
            Ev::Start { process } => run.start_call(now, process),
            Ev::Send { call, attempt } => {
                if run.calls[call as usize].attempt == attempt {
                    run.timer_due(now, call);
                }
            }
            Ev::Wake { call, attempt } => {
                if run.calls[call as usize].attempt == attempt {
                    run.send(now, call);
                }
            }
            Ev::Visible { call } => run.visible(now, call),
            Ev::Arrive(job) => run.arrive(now, job),
            Ev::Complete { job, service } => run.complete(now, job, service),
            Ev::Deliver {
                call,
                attempt,
                answer,
            } => run.deliver(now, call, attempt, answer),
            Ev::Timeout { call, attempt } => run.timeout(now, call, attempt),
            Ev::Dropped { spent, server } => run.dropped(now, spent, server),
            Ev::Restart { call, layer, seq } => run.restart(now, call, layer, seq),
            Ev::LayerTimeout { call, layer, seq } => run.layer_timeout(now, call, layer, seq),
        }
        #[cfg(test)]
        if let Some(c) = &run.closed {
            let processes: Vec<u32> = run.calls.iter().map(|c| c.process).collect();
            let live = closed::check_in_flight(&processes, &run.free, spec.clients, c.cap());
            for (p, &n) in live.iter().enumerate() {
                assert_eq!(n, c.of(p as u32), "process {p}'s count of calls in flight");
            }
        }
        if run.totals.outgrown.is_some() || run.known.as_ref().is_some_and(|k| k.redo) {
            break;
        }
    }
    if run.known.as_ref().is_some_and(|k| k.redo) {
        return None;
    }
    run.reach(SimTime(u64::MAX));
    #[cfg(test)]
    if let Some(c) = &run.closed {
        closed::LAST_PEAK.with(|p| p.set(c.peak));
    }
    let in_system = run.in_system();
    let servers = run.server_counts();
    let server_series = run.server_series();
    let mut totals = std::mem::take(&mut run.totals);
    totals.servers = servers;
    totals.server_series = server_series;
    if let Some(layered) = &run.layered {
        totals.layers = layered.counts(totals.attempts);
    }
    for server in &run.servers {
        if let Server::Capacity(c) = server {
            // Dropped at their turn in the queue (those dropped at arrival are counted there).
            totals.dropped += c.skipped();
        }
    }
    totals.events = events;
    totals.pending = run.calls.iter().filter(|c| c.outstanding).count() as u64;
    totals.latency_p50_ns = run.sketch.quantile(0.5);
    totals.latency_p99_ns = run.sketch.quantile(0.99);
    let (rows, recovery) = run.series.finish(in_system);
    totals.rows = rows;
    totals.series_bin = overload.series_bin;
    totals.trigger_end = trigger_end;
    // A run whose every call succeeded has nothing to recover from, even when no answer came
    // after its last trigger (a pool whose other servers served every call while one was
    // out): recovered by that trigger's end at the latest.
    let all_succeeded = totals.calls > 0 && totals.calls_succeeded == totals.calls;
    totals.recovered_at = recovery
        .and_then(|recovery| {
            overload
                .verdict_end(recovery.run_end())
                .and_then(|end| recovery.at(end))
        })
        .or(trigger_end.filter(|_| all_succeeded));
    let mut tally = run.tally;
    tally.window_starts = match &run.servers[..] {
        [one] => one.window_starts(),
        _ => None,
    };
    totals.tabs = run.tabs.is_some();
    tally.browser = run.tabs.map(|t| t.rules.counts);
    Some((tally, totals))
}
