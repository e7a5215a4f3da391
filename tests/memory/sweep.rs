//! A sweep runs a row on each worker thread at once: its up-front estimate
//! ([`Plan::memory_estimate`]) counts every row in flight and the sweep's own buffers, and
//! bounds the measured peak of a sweep on two threads.

use herd_sim::config::ScenarioFile;
use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run_in, Plan, SweepSpec};

use crate::{peak_bytes, pool, serial};

#[test]
fn a_sweep_on_two_threads_counts_two_rows_in_flight_and_bounds_the_peak() {
    let _serial = serial();
    let pool = pool(2);
    // Limiter rows run on the event queue: each holds an event a client and a key's log of
    // 20 times, tens of MiB, so two at once dominate everything else.
    let plan = Plan::new(SweepSpec {
        base: ScenarioFile::parse(
            "clients = 100000\nretries = 3\nstrategy = \"full-jitter\"\n[server]\n\
             model = \"sliding-window\"\nlimit = 20\nwindow = \"1s\"\n",
            Some("toml"),
        )
        .unwrap(),
        seeds: 4,
        threads: Some(2),
        ..Default::default()
    })
    .unwrap();
    let memory = plan.memory_estimate();
    assert_eq!(memory.rows_in_flight, 2, "four rows on two threads");
    assert!(memory.total() >= 2 * memory.row, "{memory:?}");
    let dir = tempfile::tempdir().unwrap();
    let out = Destination::File(dir.path().join("sweep.csv"));
    let sink = RowSink::open(&plan, &out, Start::Fresh).unwrap();
    let ((), peak) = peak_bytes(|| run_in(pool, &plan, sink, &|_| {}).unwrap());
    let rows = std::fs::read_to_string(dir.path().join("sweep.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(rows, 1 + 4, "the header and four rows");
    let estimate = memory.total();
    let ratio = estimate as f64 / peak as f64;
    assert!(
        estimate as usize >= peak && ratio <= 4.0,
        "estimate {estimate} B ({memory:?}), peak {peak} B ({ratio:.2}×)"
    );
    eprintln!(
        "sweep on two threads: estimate {estimate} B, one row {} B, peak {peak} B ({ratio:.2}×)",
        memory.row
    );
}
