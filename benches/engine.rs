//! Hot paths of the engine, each beside a baseline measured in the same run (the machines are
//! shared and noisy; compare ratios, not absolute times):
//! - `queue/*`: the radix event queue against std's BinaryHeap on the herd's access pattern
//!   (one pending event per client, each pop schedules the client's next attempt).
//! - `run/*`: whole runs of 1 M clients × 4 retries of full jitter against a down server, on the
//!   general event-queue path and on the independent-client fast path.
//! - `scaling/*`: the general path from 10 k to 10 M clients, events per second at each size
//!   (the smallest is the baseline: the whole queue fits in cache).
//! - `herd/*`: the independent path (`engine`, [`simulate_independent`]) against a minimal
//!   program of the same herd written for speed (`reference`, `common/herd_reference.rs`):
//!   1 M clients × (1 + 4 retries) of full jitter against a down server, the same blocks in
//!   parallel. Checked here to give the same numbers.
//!
//! What each change to the independent path bought, counted in instructions (repeatable where
//! wall time on the shared machine is not): `simulate_independent` and the reference's `run`
//! inclusive under `valgrind --tool=callgrind`, 200 000 clients of this herd on one thread
//! (`RAYON_NUM_THREADS=1`), the bench profile; every output byte the same
//! (`scripts/same-output.sh`). Before: engine 217.5 M (217 a request), reference 40.1 M (5.4×).
//! - the server matched once a block instead of at every request (a down server's answer
//!   inlined into the loop), and the policy's decision and a doubling curve's ceiling inlined
//!   instead of called: 112.5 M, -48 %.
//! - the tally's counts and first and last times kept in plain integers while a block runs
//!   (`metrics::Totals`, added to the tally once) instead of the tally's fields and `Option`s
//!   at every request, and a request's window found by one multiplication up to the last time
//!   it is exact for (184 s at 100 ms windows; the reciprocal and its corrections only after):
//!   the program's run of the release binary, `herd-sim --clients 200000 --strategy
//!   full-jitter --server down --seed 2015 --threads 1 --engine independent`, 119.8 M -> 99.6 M
//!   (`simulate_observed` inclusive; 120 -> 100 a request), -17 %.
//! - the policy's curve read from a table made once a run (`policy::CurveTable`, the first 15
//!   retries' exponential delays and jitter ceilings) instead of worked out at every refusal:
//!   the same run, 99.6 M -> 86.2 M (86 a request), -13 %.
//!
//! One run after them (docs/performance.md quotes it), `cargo bench --features bench --bench
//! engine -- --warm-up-time 1 --measurement-time 3 herd`, on the loaded machine: engine
//! 85.4 ms, reference 52.7 ms (1.62×; 1.92× before the tally's totals and the curve table,
//! 4.0× before the server matched once).
//!
//! Then, the same release run of 200 000 clients (`block_loop` self, the loop of a block;
//! 83.6 M before):
//! - the block loop instantiated for what it knows of the run when compiled
//!   (`engine::known`): for each of the six strategies of `Strategy::ALL` with every retry
//!   made and no latency, against a down server that never recovers, the strategy, the retry
//!   chance, the round trip and the recovery are constants, so the strategy's jump table, the
//!   retry chance's test, the latency's kind and addition and the recovery's comparison leave
//!   the loop (one loop, instantiated; any other run takes the instance that reads them):
//!   83.6 M -> 62.2 M, -26 %.
//! - the loop's counts kept in registers instead of the run's memory: nothing takes the
//!   run's address any more (the late window and a multiplier's curve are worked out from
//!   numbers, not from references into the run; its items left are a boxed slice; it is
//!   finished by a method, not a `Drop`), and the totals keep fewer counts (the requests
//!   are the refused and the served; whether any retry was made is told by its first and
//!   last times): 62.2 M -> 64.4 M in the release binary, whose many code units leave some of
//!   the counts' stores in place, but under the bench profile (one unit, LTO) the loop holds
//!   them in registers. There, `block_loop` inclusive against the reference's `block` under
//!   callgrind (`RAYON_NUM_THREADS=1`, the bench's 1 M clients) before the last change:
//!   69 instructions a request against 40 (1.72×).
//!
//! What changes to the event queue bought at scale (`scaling/*`), counted where the machine's
//! counters are not available (no hardware events on these virtual machines) by cachegrind's
//! simulated caches, a 48 KiB first level and a 2 MiB last level standing for the core's
//! L2, on `herd-sim --clients 1000000 --strategy full-jitter --server down --seed 2015
//! --threads 1 --engine event-queue` (24 MB of pending events, ten times that cache, as
//! 240 MB at 10 M clients are to the machine's):
//! - each bucket keeps its earliest time as it is filled, so a large bucket is re-filed in
//!   one pass instead of a first one finding that time: data read misses 6.07 M -> 4.46 M
//!   in the first level (-27 %) and 2.37 M -> 1.97 M in the last (-17 %), all misses
//!   2.93 M -> 2.49 M (-15 %), for 0.1 % more instructions (1.661 G -> 1.663 G).
//!
//! Then, the same command at 1 M and 10 M clients:
//! - the store's chunks after the first backed by 2 MiB pages: no cache simulator models
//!   the address translation it spares (at 10 M clients 194 560 kB of the 246 528 kB
//!   resident in large pages, none before, by /proc/PID/smaps_rollup's AnonHugePages);
//!   instructions 1.643 G -> 1.638 G at 1 M, 17.29 G -> 17.44 G at 10 M (callgrind).
//! - small buckets of 64 events or more a byte of time below their level sorted by radix
//!   instead of by comparison (level-2 buckets hold about 650 events at 10 M clients, 65
//!   at 1 M): 1.638 G -> 1.629 G instructions at 1 M, 17.44 G -> 16.44 G at 10 M, so an
//!   event at 10 M costs 1.009 times its instructions at 1 M, 1.064 before.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use herd_sim::engine::{simulate_event_queue, simulate_independent, Event, EventQueue, RunSpec};
use herd_sim::rng::{uniform_below, ClientRng};
use herd_sim::server::{Down, Server};
use herd_sim::time::SimTime;

mod common;
#[path = "common/herd_reference.rs"]
mod reference;

const SECOND: u64 = 1_000_000_000;

/// The herd pattern: `clients` events at t = 0, then `rounds` reschedules of each popped event
/// by U(0, 2^round s). Returns a checksum so nothing is optimised away.
fn herd_radix(clients: u32, rounds: u32) -> u64 {
    let mut rng = ClientRng::new(1);
    let mut queue = EventQueue::with_capacity(clients as usize);
    let mut hops = vec![0u8; clients as usize];
    for client in 0..clients {
        queue.push(Event {
            time: SimTime::ZERO,
            item: client,
        });
    }
    let mut sum = 0u64;
    while let Some(Event { time, item: client }) = queue.pop() {
        sum = sum.wrapping_add(time.0);
        let hop = &mut hops[client as usize];
        if u32::from(*hop) < rounds {
            *hop += 1;
            let delay = uniform_below(&mut rng, SECOND << *hop);
            queue.push(Event {
                time: SimTime(time.0 + delay),
                item: client,
            });
        }
    }
    sum
}

/// The same pattern through a BinaryHeap ordered by (time, sequence): the classic design.
fn herd_binary_heap(clients: u32, rounds: u32) -> u64 {
    let mut rng = ClientRng::new(1);
    let mut heap = BinaryHeap::with_capacity(clients as usize);
    let mut hops = vec![0u8; clients as usize];
    let mut seq = 0u64;
    for client in 0..clients {
        heap.push(Reverse((0u64, seq, client)));
        seq += 1;
    }
    let mut sum = 0u64;
    while let Some(Reverse((time, _, client))) = heap.pop() {
        sum = sum.wrapping_add(time);
        let hop = &mut hops[client as usize];
        if u32::from(*hop) < rounds {
            *hop += 1;
            let delay = uniform_below(&mut rng, SECOND << *hop);
            heap.push(Reverse((time + delay, seq, client)));
            seq += 1;
        }
    }
    sum
}

fn queue(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue");
    group.sample_size(10);
    for clients in [1_000u32, 1_000_000] {
        let events = u64::from(clients) * 5;
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("radix", clients), &clients, |b, &n| {
            b.iter(|| black_box(herd_radix(n, 4)))
        });
        group.bench_with_input(
            BenchmarkId::new("binary_heap", clients),
            &clients,
            |b, &n| b.iter(|| black_box(herd_binary_heap(n, 4))),
        );
    }
    group.finish();
}

fn full_jitter_spec(clients: u32) -> RunSpec {
    common::full_jitter_herd(clients, Server::Down(Down::default()))
}

fn run(c: &mut Criterion) {
    let mut group = c.benchmark_group("run");
    group.sample_size(10);
    let clients = 1_000_000;
    let spec = full_jitter_spec(clients);
    // Events: the first request and four retries per client (requests reaching the server).
    // The general path answers the first requests, all at t = 0, without queueing them, so
    // four of the five pass through the queue.
    group.throughput(Throughput::Elements(u64::from(clients) * 5));
    group.bench_function("event_queue/full_jitter/1M", |b| {
        b.iter(|| black_box(simulate_event_queue(&spec).requests))
    });
    group.bench_function("independent/full_jitter/1M", |b| {
        b.iter(|| black_box(simulate_independent(&spec).requests))
    });
    group.finish();
}

/// The general path as the herd grows: the cost per event should stay flat from ten thousand
/// clients to ten million (a binary heap's grows with the log of the size and, past the
/// cache, with a miss per pop).
fn scaling(c: &mut Criterion) {
    let mut group = c.benchmark_group("scaling");
    group.sample_size(10);
    for clients in [10_000u32, 100_000, 1_000_000, 10_000_000] {
        let spec = full_jitter_spec(clients);
        group.throughput(Throughput::Elements(u64::from(clients) * 5));
        group.bench_with_input(
            BenchmarkId::new("event_queue/full_jitter", clients),
            &spec,
            |b, spec| b.iter(|| black_box(simulate_event_queue(spec).requests)),
        );
    }
    group.finish();
}

/// The independent path against the minimal herd program, after checking they agree.
fn herd(c: &mut Criterion) {
    let clients = 1_000_000;
    let spec = full_jitter_spec(clients);
    let limit = reference::Herd {
        seed: spec.seed,
        clients,
        retries: spec.policy.max_retries,
        base: spec.policy.backoff.base.as_nanos(),
        cap: spec.policy.backoff.cap.as_nanos(),
        bin: spec.bin.as_nanos(),
    };
    let tally = simulate_independent(&spec);
    let time = |t: Option<SimTime>| t.map(SimTime::as_nanos);
    assert_eq!(
        limit.run(),
        reference::Figures {
            requests: tally.requests,
            refused: tally.refused,
            gave_up: tally.gave_up,
            first_retry: time(tally.first_retry),
            last_retry: time(tally.last_retry),
            first_finish: time(tally.first_finish),
            last_finish: time(tally.last_finish),
            retries: tally.retries.counts(),
            refused_windows: tally.refused_windows.counts(),
        },
        "the reference herd must give the independent path's numbers"
    );
    assert_eq!(tally.succeeded, 0);
    assert_eq!(tally.served_windows.total(), 0);
    let mut group = c.benchmark_group("herd");
    group.sample_size(10);
    group.throughput(Throughput::Elements(tally.requests));
    group.bench_function("engine", |b| {
        b.iter(|| black_box(simulate_independent(&spec).requests))
    });
    group.bench_function("reference", |b| b.iter(|| black_box(limit.run().requests)));
    group.finish();
}

criterion_group!(benches, queue, run, scaling, herd);
criterion_main!(benches);
