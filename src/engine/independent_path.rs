//! The herd's fast path for a server whose clients cannot interact: each client's whole life
//! in turn, blocks of [`CLIENTS_PER_BLOCK`] clients in parallel, their tallies merged; traced,
//! the blocks or parts told in client order. One loop ([`block_loop`]) for runs with browser
//! tabs and without: what a client carries is its type parameter ([`Carried`]).

use rayon::prelude::*;

use crate::metrics::{Tally, Windows};
use crate::policy::Hints;
use crate::rng::ClientSeeds;
use crate::server::{Down, Response, Server};
use crate::time::{SimDuration, SimTime};
use crate::trace::{self, NoTrace, Observer, TracePart};

use super::client::{Carried, Client, NoTab, Single};
use super::herd_run::Run;
use super::known::{self, Dynamic, Known, Plain};
use super::{RunSpec, CLIENTS_PER_BLOCK};

/// The fast path for servers whose clients cannot interact: each client's whole life in turn,
/// blocks of clients in parallel. Same draws, same answers, same tally as the event queue.
pub fn simulate_independent(spec: &RunSpec) -> Tally {
    over_blocks(spec, |first, last| {
        new_block::<_, NoTab>(spec, first, last, NoTrace)
    })
}

/// The independent paths traced, in client order, each block or part telling its attempts:
/// the same tally as [`over_blocks`] (merging is a sum). When `trace` splits
/// ([`Observer::part`]) and a client's most lines fit a part ([`trace::part_clients`]),
/// parts of clients are simulated by `part_block` on the worker threads, each into its own
/// buffer, and joined in client order, a round at a time: this thread writes one round's
/// parts while the workers simulate the next, and no more than [`trace::PARTS_PER_THREAD`]
/// parts a thread are alive. Otherwise `block` runs the blocks one after another here.
pub(super) fn in_order<O: Observer>(
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
pub(super) fn over_blocks(spec: &RunSpec, block: impl Fn(u32, u32) -> Tally + Sync) -> Tally {
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

/// Clients `first..last` of `spec`, each carrying `T`, counted into a new tally.
pub(super) fn new_block<O: Observer, T: Carried>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
) -> Tally {
    let mut tally = spec.new_tally();
    simulate_block::<O, T>(spec, first, last, trace, &mut tally);
    tally
}

/// Clients `first..last` of `spec`, each carrying `T`, counted into `tally` (empty, made for
/// `spec`).
pub(super) fn simulate_block<O: Observer, T: Carried>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
    tally: &mut Tally,
) {
    // The server is matched once, not at every request: a down server's answer is then a
    // comparison inlined into the loop, or a constant when it never recovers. Runs with tabs
    // take the instance that reads the rules from the run: six more instances of the loop
    // would cost every build their compile time for runs whose tabs dominate the work.
    match &spec.server {
        Server::Down(Down { recover_at: None }) if !O::ON && T::NOTHING => {
            known_block_loop::<O, T>(spec, first, last, trace, tally, |_, _| {
                Response::Refused(Hints::default())
            })
        }
        Server::Down(down) => {
            block_loop::<O, Dynamic, T>(spec, first, last, trace, tally, |time, id| {
                down.respond(time, id)
            })
        }
        server => {
            let mut server = server.clone();
            server.prepare(spec.clients);
            block_loop::<O, Dynamic, T>(spec, first, last, trace, tally, |time, id| {
                server.respond(time, id)
            })
        }
    }
}

/// [`block_loop`] knowing what it can of `spec`'s rules when compiled ([`known`]): with one
/// of the six strategies of [`Strategy::ALL`](crate::policy::Strategy::ALL), every retry made and no latency, an instance
/// for that strategy; else the one that reads them from the run.
#[inline(always)]
fn known_block_loop<O: Observer, T: Carried>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
    tally: &mut Tally,
    respond: impl FnMut(SimTime, u32) -> Response,
) {
    match known::plain_strategy(spec) {
        Some(0) => block_loop::<O, Plain<0>, T>(spec, first, last, trace, tally, respond),
        Some(1) => block_loop::<O, Plain<1>, T>(spec, first, last, trace, tally, respond),
        Some(2) => block_loop::<O, Plain<2>, T>(spec, first, last, trace, tally, respond),
        Some(3) => block_loop::<O, Plain<3>, T>(spec, first, last, trace, tally, respond),
        Some(4) => block_loop::<O, Plain<4>, T>(spec, first, last, trace, tally, respond),
        Some(5) => block_loop::<O, Plain<5>, T>(spec, first, last, trace, tally, respond),
        _ => block_loop::<O, Dynamic, T>(spec, first, last, trace, tally, respond),
    }
}

/// Clients `first..last` of `spec` one after another, each carrying `T`, counted into `tally`
/// (empty, made for `spec`), `respond` answering each request; `K` what the loop knows of the
/// rules ([`known`]).
#[inline(never)]
fn block_loop<O: Observer, K: Known, T: Carried>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
    tally: &mut Tally,
    mut respond: impl FnMut(SimTime, u32) -> Response,
) {
    let mut rules = T::rules(spec);
    let mut run: Run<Windows, O, K> = Run::new(spec, first, last - first, tally, trace);
    let mut seeds = ClientSeeds::starting_at(spec.seed, u64::from(first));
    for id in first..last {
        let carried = T::open(&mut rules, spec.seed, id);
        let mut client: Client<SimDuration, Single, T> = run.start(id, seeds.next_rng(), carried);
        let mut time = SimTime::ZERO;
        while let Some(next) = T::step(&mut run, &mut rules, time, &mut client, &mut respond) {
            time = next;
        }
    }
    run.finish();
    T::finish(rules, tally);
}
