//! The sweep's parallel speed-up: one grid of 240 cells (6 strategies × 40 client counts, one
//! seed each) run with one worker thread and with two, in the same run so the ratio is
//! measured under the same machine load. Output goes to a file in a temporary folder, as a
//! real sweep's would.
//!
//! Run: cargo bench --features bench --bench sweep -- --warm-up-time 1 --measurement-time 3

use criterion::{criterion_group, criterion_main, Criterion};

use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run, Plan, SweepSpec};

fn grid() -> Plan {
    Plan::new(SweepSpec {
        grid: vec![
            ("strategy".into(), "all".into()),
            ("clients".into(), "1000..40000 step 1000".into()),
        ],
        ..Default::default()
    })
    .expect("the bench grid is valid")
}

fn threads(c: &mut Criterion) {
    let plan = grid();
    assert!(plan.rows() >= 200);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let target = Destination::File(dir.path().join("sweep.csv"));
    let mut group = c.benchmark_group("sweep_240_cells");
    group.sample_size(10);
    for n in [1usize, 2] {
        group.bench_function(format!("threads_{n}"), |b| {
            b.iter(|| {
                let sink = RowSink::open(&plan, &target, Start::Fresh).expect("open");
                run(&plan, sink, Some(n), &|_| {}).expect("run");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, threads);
criterion_main!(benches);
