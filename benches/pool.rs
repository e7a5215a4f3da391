//! A call through layers and a server pool against a call to one server, per attempt: the
//! same open load (Poisson calls, 60 % busy servers of 10 workers of Exp(100 ms), a 1 s
//! timeout, 3 full-jitter retries, a server out for 5 s), once as a one-layer call to one
//! server at 60 calls/s, once as a three-layer call (two layers of 1 retry around the run's
//! own) through three such servers at 180 calls/s, behind round-robin and power-of-two
//! (whose two draws a pick are the dearest balancer). Each run's attempts are its criterion
//! elements, so the throughputs compare per attempt. (At 80 % busy with a 20 s outage the
//! layered pool collapses, 15 attempts a call against the single server's 1.2, and the two
//! no longer compare one attempt's work.)
//!
//! Run: cargo bench --features bench --locked --bench pool -- --warm-up-time 1 --measurement-time 3
//! and compare the throughputs of the same run (docs/performance.md quotes them once).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use herd_sim::config::ScenarioFile;
use herd_sim::engine::simulate_calls;
use herd_sim::policy::Strategy;

/// The scenario over `seconds` of calls: `extra` lays the pool and the layers over it.
fn spec(extra: &str, seconds: u64) -> herd_sim::engine::RunSpec {
    let text = format!(
        "clients = 10\nstrategy = \"full-jitter\"\nretries = 3\narrivals = \"poisson\"\n\
         duration = \"{seconds}s\"\ntimeout = \"1s\"\n{extra}\n[server]\nmodel = \"capacity\"\n\
         workers = 10\nservice_time = \"exp:100ms\"\n"
    );
    ScenarioFile::parse(&text, Some("toml"))
        .unwrap()
        .validate()
        .unwrap()
        .run_spec(Strategy::FullJitter)
}

const LAYERS: &str = "[[layer]]\nstrategy = \"full-jitter\"\nretries = 1\n\
                      [[layer]]\nstrategy = \"full-jitter\"\nretries = 1\n";

fn bench(c: &mut Criterion) {
    let seconds = 500;
    let runs = [
        (
            "one layer, one server",
            spec("rate = \"60/s\"\noutage = \"100s..105s\"", seconds),
        ),
        (
            "three layers, 3 servers, round-robin",
            spec(
                &format!(
                    "rate = \"180/s\"\nservers = 3\noutage = \"100s..105s@server=2\"\n{LAYERS}"
                ),
                seconds,
            ),
        ),
        (
            "three layers, 3 servers, power-of-two",
            spec(
                &format!(
                    "rate = \"180/s\"\nservers = 3\nbalancer = \"power-of-two\"\n\
                     outage = \"100s..105s@server=2\"\n{LAYERS}"
                ),
                seconds,
            ),
        ),
    ];
    let mut group = c.benchmark_group("pool");
    group.sample_size(10);
    for (name, spec) in &runs {
        let (_, totals) = simulate_calls(spec);
        eprintln!(
            "{name}: {} attempts, {} calls, {} events",
            totals.attempts, totals.calls, totals.events
        );
        group.throughput(Throughput::Elements(totals.attempts));
        group.bench_function(*name, |b| b.iter(|| simulate_calls(spec)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
