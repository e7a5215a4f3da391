//! Brooker's 2015 contention model (`--server occ`) on the event queue, beside the baseline of
//! the same size in the same run: 1000 clients of Experiment 1's full-jitter herd against a
//! down server (5000 requests). An OCC run's clients interact (a write fails when another
//! succeeded after its read), so every attempt goes through the queue as three message
//! delays; its work depends on the strategy (no backoff: about N²/2 writes).
//! - `occ_run/*`: one run of 1000 clients per strategy of the study, the study's network
//!   (|Normal(10 ms, 2 ms)| a message), base 10 ms, cap 2 s.
//! - `occ_sweep/*`: the contention study's question (docs/experiments.md) at its largest size, 1000 clients × 100 seeds × the
//!   five strategies, through the sweep (two threads, rows to a file), beside the same grid
//!   of the down-server herd.
//!
//! Run: cargo bench --features bench --bench occ -- --warm-up-time 1 --measurement-time 5

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use herd_sim::config::ScenarioFile;
use herd_sim::engine::{simulate_event_queue, RunSpec, STUDY_NETWORK};
use herd_sim::policy::{Backoff, Policy, Strategy};
use herd_sim::server::{Down, Occ, Server};
use herd_sim::sweep::file::SweepFile;
use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run, Plan, SweepSpec};
use herd_sim::time::SimDuration;

mod common;

const CLIENTS: u32 = 1000;

const STUDY: [Strategy; 5] = [
    Strategy::Naive,
    Strategy::Exponential,
    Strategy::FullJitter,
    Strategy::EqualJitter,
    Strategy::DecorrelatedJitter,
];

fn occ_spec(strategy: Strategy) -> RunSpec {
    RunSpec {
        network: STUDY_NETWORK,
        ..RunSpec::new(
            CLIENTS,
            Policy {
                strategy,
                backoff: Backoff {
                    base: SimDuration::from_millis(10),
                    cap: SimDuration::from_secs(2),
                    multiplier: 2.0,
                    jitter_order: Default::default(),
                },
                max_retries: 1_000_000,
                retry_chance: herd_sim::policy::RetryChance::ALWAYS,
            },
            Server::Occ(Occ::default()),
            SimDuration::from_millis(10),
            2015,
        )
    }
}

fn one_run(c: &mut Criterion) {
    let mut group = c.benchmark_group("occ_run");
    group.sample_size(10);
    let down = common::full_jitter_herd(CLIENTS, Server::Down(Down::default()));
    group.throughput(Throughput::Elements(simulate_event_queue(&down).requests));
    group.bench_function("down/full-jitter/1000", |b| {
        b.iter(|| black_box(simulate_event_queue(&down).requests))
    });
    for strategy in STUDY {
        let spec = occ_spec(strategy);
        // Elements: the writes of the run (attempts), the study's "calls".
        group.throughput(Throughput::Elements(simulate_event_queue(&spec).requests));
        group.bench_function(format!("occ/{strategy}/1000"), |b| {
            b.iter(|| black_box(simulate_event_queue(&spec).requests))
        });
    }
    group.finish();
}

/// The shipped config's sweep cut to 1000 clients (100 seeds, five strategies), or the same
/// grid against the default down server.
fn sweep_plan(occ: bool) -> Plan {
    let base = if occ {
        SweepFile::parse(include_str!("../configs/occ-contention.toml"), false)
            .expect("the shipped config parses")
            .base
    } else {
        ScenarioFile::default()
    };
    Plan::new(SweepSpec {
        base,
        grid: vec![
            ("clients".into(), "1000".into()),
            (
                "strategy".into(),
                "naive,exponential,full-jitter,equal-jitter,decorrelated-jitter".into(),
            ),
        ],
        seeds: 100,
        ..Default::default()
    })
    .expect("the bench grid is valid")
}

fn sweep(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let target = Destination::File(dir.path().join("sweep.csv"));
    let mut group = c.benchmark_group("occ_sweep");
    group.sample_size(10);
    for (name, occ) in [("down/1000x100x5", false), ("occ/1000x100x5", true)] {
        let plan = sweep_plan(occ);
        assert_eq!(plan.rows(), 500);
        group.bench_function(name, |b| {
            b.iter(|| {
                let sink = RowSink::open(&plan, &target, Start::Fresh).expect("open");
                run(&plan, sink, Some(2), &|_| {}).expect("run");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, one_run, sweep);
criterion_main!(benches);
