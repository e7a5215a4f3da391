//! The herd's general path: every attempt of every client through one [`EventQueue`] in time
//! order, so that a server whose answers depend on other clients' requests sees them in the
//! order they happen. One loop ([`event_queue_loop`]) for runs with browser tabs and
//! without: what a client carries is its type parameter ([`Carried`]).

use crate::metrics::{Tally, WindowCursor};
use crate::rng::ClientSeeds;
use crate::time::{SimDuration, SimTime};
use crate::trace::{NoTrace, Observer};

use super::client::{Carried, Client, Exchange, NoTab, NoWait, PreviousWait, ReadWrite, Single};
use super::herd_run::Run;
use super::{Event, EventQueue, RunSpec};

/// The general path: one queue, every request in time order (FIFO among equal times).
pub fn simulate_event_queue(spec: &RunSpec) -> Tally {
    event_queue_observed::<_, NoTab>(spec, NoTrace, spec.new_tally())
}

/// [`simulate_event_queue`] with clients carrying `T`, telling `trace` every attempt and
/// counting into `tally` (empty, made for `spec`: [`RunSpec::new_tally`], or an earlier run's
/// emptied).
pub(super) fn event_queue_observed<O: Observer, T: Carried>(
    spec: &RunSpec,
    trace: O,
    tally: Tally,
) -> Tally {
    let occ = spec.server.reads_before_writing();
    match (spec.policy.strategy.reads_previous_wait(), occ) {
        (true, false) => event_queue_loop::<SimDuration, Single, O, T>(spec, trace, tally),
        (false, false) => event_queue_loop::<NoWait, Single, O, T>(spec, trace, tally),
        (true, true) => event_queue_loop::<SimDuration, ReadWrite, O, T>(spec, trace, tally),
        (false, true) => event_queue_loop::<NoWait, ReadWrite, O, T>(spec, trace, tally),
    }
}

/// [`simulate_event_queue`] with clients that keep their previous wait in `W`, make attempts
/// of the shape `X` and carry `T`, counted into `tally`.
fn event_queue_loop<W: PreviousWait, X: Exchange, O: Observer, T: Carried>(
    spec: &RunSpec,
    trace: O,
    mut tally: Tally,
) -> Tally {
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let mut rules = T::rules(spec);
    let mut run: Run<WindowCursor, O> = Run::new(spec, 0, spec.clients, &mut tally, trace);
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let mut queue: EventQueue<Client<W, X, T>> = EventQueue::new();
    if X::FIRST_AT_ZERO {
        // Every first request is at t = 0, before anything the answers schedule (FIFO), so
        // they are answered here in client order instead of being queued: the same order the
        // queue would give, without holding all of them in memory at once.
        for id in 0..spec.clients {
            let carried = T::open(&mut rules, spec.seed, id);
            let mut client: Client<W, X, T> = run.start(id, seeds.next_rng(), carried);
            let exchange = client.exchange;
            let respond = |time, id| exchange.respond(&mut server, time, id);
            if let Some(next) = T::step(&mut run, &mut rules, SimTime::ZERO, &mut client, respond) {
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
            let carried = T::open(&mut rules, spec.seed, id);
            let mut client: Client<W, X, T> = run.start(id, seeds.next_rng(), carried);
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
        let exchange = client.exchange;
        let respond = |time, id| exchange.respond(&mut server, time, id);
        if let Some(next) = T::step(&mut run, &mut rules, time, &mut client, respond) {
            queue.push(Event {
                time: next,
                item: client,
            });
        }
    }
    run.finish();
    T::finish(rules, &mut tally);
    tally.window_starts = server.window_starts();
    tally
}
