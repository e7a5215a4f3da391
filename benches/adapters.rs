//! What running a real crate inside the herd costs (cargo features `bench`, `tower`,
//! `backon`): the same call-loop run through tower's own `TpsBudget` (`--budget tower-tps`,
//! on the run's paused tokio clock) beside herd-sim's model of it (`--budget finagle`), and
//! through backon's exponential builder with its jitter (`--strategy backon-exponential`)
//! beside herd-sim's full jitter, in one bench run. The target: an adapted run at most 3x
//! the native one. 200 000 Poisson calls (2 000/s for 100 s over 100 processes) against a
//! server failing 30 % of attempts, network Exp(1 ms) each way, up to 3 retries from 10 ms:
//! every call deposits and about 0.43 retries a call withdraw, so the budget is asked
//! about 1.4 times a call, and the strategy draws about 0.43 waits a call.
//!
//! `cargo bench --features bench,tower,backon --bench adapters`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use herd_sim::engine::{simulate_calls, NetworkDelay, RunSpec};
use herd_sim::policy::control::Budget;
use herd_sim::policy::Strategy;
use herd_sim::server::{Flaky, Server};
use herd_sim::time::{SimDuration, SimTime};
use herd_sim::workload::{Arrivals, RateSchedule};

mod common;

const CALLS: u64 = 200_000;

fn flaky_spec(strategy: Strategy, budget: &str) -> RunSpec {
    let mut spec = common::full_jitter_herd(100, Server::Flaky(Flaky::new(0.3)));
    spec.policy.strategy = strategy;
    spec.policy.backoff.base = SimDuration::from_millis(10);
    spec.policy.max_retries = 3;
    spec.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: 2_000.0,
        spikes: Vec::new(),
        end: SimTime::ZERO.saturating_add(SimDuration::from_secs(CALLS / 2_000)),
    });
    spec.overload.network = Some(NetworkDelay::Exp {
        mean: SimDuration::from_millis(1),
    });
    spec.controls.budget = Budget::parse(budget).expect("a budget");
    spec
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("adapters");
    group.sample_size(10);
    for (name, strategy, budget) in [
        ("native/finagle", Strategy::FullJitter, "finagle:percent=20"),
        (
            "tower/tower-tps",
            Strategy::FullJitter,
            "tower-tps:percent=0.2",
        ),
        ("native/full-jitter", Strategy::FullJitter, "none"),
        (
            "backon/backon-exponential",
            Strategy::BackonExponential,
            "none",
        ),
    ] {
        let spec = flaky_spec(strategy, budget);
        let (_, totals) = simulate_calls(&spec);
        assert!(totals.calls > 190_000 && totals.refused > 0, "{name}");
        group.throughput(Throughput::Elements(totals.calls));
        group.bench_function(name, |b| {
            b.iter_batched(|| (), |()| simulate_calls(&spec), BatchSize::PerIteration)
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
