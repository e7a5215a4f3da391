//! Retry control's cost: 1 M calls through the flaky server (failure rate 0.1) with gRPC's
//! retry throttling (`--budget grpc`) beside the same run without a budget, in the same
//! bench run (the target: within 1.25x). Each run is single-threaded; throughput is
//! in calls a second. At x = 0.1 gRPC's tokens drift down (−1 × 0.1 + 0.1 × 0.9 per attempt)
//! and hover at the max/2 threshold, so the budget denies some retries: the budgeted run sends
//! fewer attempts, and its ratio counts the bookkeeping and the attempts saved together.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use herd_sim::engine::{simulate_calls, NetworkDelay, RunSpec};
use herd_sim::policy::control::Budget;
use herd_sim::server::{Flaky, Server};
use herd_sim::time::{SimDuration, SimTime};
use herd_sim::workload::{Arrivals, RateSchedule};

mod common;

const CALLS: u64 = 1_000_000;

/// 1 M Poisson calls (10 000/s for 100 s over 100 processes) against a server failing 10 %
/// of attempts, network Exp(1 ms) each way, up to 3 full-jitter retries from 10 ms.
fn flaky_spec(budget: &str) -> RunSpec {
    let mut spec = common::full_jitter_herd(100, Server::Flaky(Flaky::new(0.1)));
    spec.policy.backoff.base = SimDuration::from_millis(10);
    spec.policy.max_retries = 3;
    spec.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: 10_000.0,
        spikes: Vec::new(),
        end: SimTime::ZERO.saturating_add(SimDuration::from_secs(CALLS / 10_000)),
    });
    spec.overload.network = Some(NetworkDelay::Exp {
        mean: SimDuration::from_millis(1),
    });
    spec.controls.budget = Budget::parse(budget).expect("a budget");
    spec
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("control");
    group.sample_size(10);
    for budget in ["none", "grpc"] {
        let spec = flaky_spec(budget);
        let (_, totals) = simulate_calls(&spec);
        assert!(totals.calls > 990_000 && totals.refused > 0, "{budget}");
        group.throughput(Throughput::Elements(totals.calls));
        group.bench_function(format!("flaky-0.1/budget-{budget}"), |b| {
            b.iter_batched(|| (), |()| simulate_calls(&spec), BatchSize::PerIteration)
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
