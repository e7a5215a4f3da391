//! Browser options must not slow the herd they do not touch: Experiment 1's herd
//! (full jitter, base 1 s, cap 30 s, 4 retries, a server that stays down) at 1 M clients, read
//! from config text and validated as the command line does (`--config`, then the flags laid
//! over it), once with no browser key and once with `hidden = 0` written explicitly, in the
//! same bench run. Both run on one worker thread (a one-thread rayon pool, as `--threads 1`)
//! so the ratio is not the shared machine's scheduling. Throughput is in requests a second.
//!
//! `hidden = 0` alone leaves [`herd_sim::engine::Browser::is_active`] false, so both
//! scenarios take the same path (asserted below): the bench guards that this stays so and
//! that nothing is paid for the key being read.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use herd_sim::config::{Scenario, ScenarioFile};
use herd_sim::experiment;
use herd_sim::policy::Strategy;

/// Experiment 1's herd at 1 M clients, as a config file writes it.
const EXPERIMENT_1: &str = r#"
clients = 1000000
strategy = "full-jitter"
retries = 4
base = "1s"
cap = "30s"
bin = "100ms"
seed = 2015
"#;

fn scenario(text: &str) -> Scenario {
    ScenarioFile::parse(text, Some("toml"))
        .expect("the bench's config parses")
        .validate_on(Some(1))
        .expect("the bench's config is valid")
}

fn bench(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let plain = scenario(EXPERIMENT_1);
    let hidden_0 = scenario(&format!("{EXPERIMENT_1}hidden = 0\n"));
    assert!(!plain.browser.is_active() && !hidden_0.browser.is_active());
    assert_eq!(plain.path, hidden_0.path);
    let requests = |s: &Scenario| {
        pool.install(|| experiment::run_one(s, Strategy::FullJitter))
            .summary
            .total
    };
    // 1 M first requests and 4 M retries, all refused.
    assert_eq!(requests(&plain), 4_000_000);
    assert_eq!(requests(&hidden_0), 4_000_000);

    let mut group = c.benchmark_group("browser");
    group.sample_size(10);
    group.throughput(Throughput::Elements(5_000_000));
    for (name, s) in [("no-browser-keys", &plain), ("hidden-0", &hidden_0)] {
        group.bench_function(format!("experiment-1/1M/{name}"), |b| {
            b.iter(|| black_box(requests(s)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
