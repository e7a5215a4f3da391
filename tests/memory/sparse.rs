//! Long, sparse runs: hours of simulated time and few requests stay small.

use herd_sim::config::ScenarioFile;
use herd_sim::experiment;

use crate::{peak_bytes, serial, two_threads};

fn scenario(text: &str) -> herd_sim::config::Scenario {
    ScenarioFile::parse(text, Some("toml"))
        .unwrap()
        .validate()
        .unwrap()
}

#[test]
fn ten_hours_at_one_millisecond_bins_with_eleven_requests_stays_small() {
    // One client retrying once an hour against a server that stays down: 11 requests over 10
    // hours; 36 million 1 ms windows, 864 MB as three dense vectors of counts.
    let s = scenario(
        "clients = 1\nstrategy = \"fixed\"\nretries = 10\nbase = \"1h\"\ncap = \"1h\"\n\
         bin = \"1ms\"\n",
    );
    let _serial = serial();
    let pool = two_threads();
    let (report, peak) = peak_bytes(|| pool.install(|| experiment::run(&s)));
    let r = &report.results[0];
    assert_eq!(r.summary.requests, 11);
    assert_eq!(r.summary.windows, 10);
    assert_eq!(r.histogram.len(), 36_000_001);
    assert!(peak < 256 << 10, "peak {peak} B");
}

#[test]
fn a_million_items_through_a_slow_limiter_stays_small() {
    // One client fetching 1 M items, 10 a minute, retrying every 20 s: 100 000 minutes of
    // 100 ms windows (60 M windows, 1.4 GB dense); three non-empty windows a minute.
    let s = scenario(
        "clients = 1\nstrategy = \"fixed\"\nbase = \"20s\"\ncap = \"20s\"\nretries = 100\n\
         items = 1000000\n\
         memory_limit = 1000000000000000\n\
         [server]\nmodel = \"fixed-window\"\nlimit = 10\nwindow = \"60s\"\n",
    );
    let _serial = serial();
    let pool = two_threads();
    let (report, peak) = peak_bytes(|| pool.install(|| experiment::run(&s)));
    let r = &report.results[0];
    assert_eq!(r.summary.completed, 1);
    assert_eq!(r.summary.succeeded, 1_000_000);
    let non_empty =
        r.histogram_served.non_empty_windows() + r.histogram_refused.non_empty_windows();
    // Each non-empty window costs at most a block of 16 counts (in two histograms) and its
    // bookkeeping.
    assert!(
        peak < 256 << 20 && peak < 600 * non_empty,
        "peak {peak} B for {non_empty} non-empty windows"
    );
}
