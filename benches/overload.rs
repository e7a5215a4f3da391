//! The call loop under load: 1 M calls through a capacity server with client timeouts and
//! retries, beside a baseline measured in the same run — the same number of clients as
//! Experiment 1's herd through the event queue against a down server (the engine's cheapest
//! answer). Throughput is in queue events per second, on one thread (each run is
//! single-threaded): a herd request is one event; a call-loop attempt is several (its
//! arrival, its completion, its answer and its timeout, plus the call's start or the retry's
//! send), counted by the loop itself ([`herd_sim::series::OverloadTally::events`]).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use herd_sim::engine::{simulate_calls, simulate_event_queue, NetworkDelay, RunSpec};
use herd_sim::server::{Capacity, CapacityRule, Down, Server};
use herd_sim::time::{SimDuration, SimTime};
use herd_sim::workload::{Arrivals, Dist, RateSchedule};

mod common;

const CALLS: u32 = 1_000_000;

/// 1 M calls (Poisson, 10 000/s for 100 s over 100 processes) against 100 workers of
/// Exp(8 ms) (capacity 12 500/s, 80 % busy), network Exp(1 ms) each way, a 50 ms timeout and
/// up to 4 full-jitter retries.
fn calls_spec() -> RunSpec {
    let mut spec = common::full_jitter_herd(
        100,
        Server::Capacity(Capacity::new(CapacityRule {
            workers: Some(100),
            service: Dist::Exp(SimDuration::from_millis(8)),
            ..CapacityRule::default()
        })),
    );
    spec.policy.backoff.base = SimDuration::from_millis(10);
    spec.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: 10_000.0,
        spikes: Vec::new(),
        end: SimTime::ZERO.saturating_add(SimDuration::from_secs(u64::from(CALLS) / 10_000)),
    });
    spec.overload.timeout = Some(SimDuration::from_millis(50));
    spec.overload.network = Some(NetworkDelay::Exp {
        mean: SimDuration::from_millis(1),
    });
    spec
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("overload");
    group.sample_size(10);
    let baseline = common::full_jitter_herd(CALLS, Server::Down(Down::default()));
    let events = simulate_event_queue(&baseline).requests;
    group.throughput(Throughput::Elements(events));
    group.bench_function("down/event-queue", |b| {
        b.iter_batched(
            || (),
            |()| simulate_event_queue(&baseline),
            BatchSize::PerIteration,
        )
    });
    let calls = calls_spec();
    let (tally, totals) = simulate_calls(&calls);
    assert!(totals.calls > 990_000 && totals.timed_out > 0 && tally.requests > totals.calls);
    println!(
        "capacity/calls: {} calls, {} attempts, {} events ({:.2} events per attempt)",
        totals.calls,
        totals.attempts,
        totals.events,
        totals.events as f64 / totals.attempts as f64
    );
    group.throughput(Throughput::Elements(totals.events));
    group.bench_function("capacity/calls", |b| {
        b.iter_batched(|| (), |()| simulate_calls(&calls), BatchSize::PerIteration)
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
