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

#[test]
fn a_report_too_long_to_write_densely_is_an_error_without_allocating_it() {
    // One request in window 2^60: the histogram holds two blocks, but its dense form (JSON, a
    // chart's bars) would be 2^60 + 1 counts, 8 EiB and more, past what any allocation may
    // be. Both refuse with an error naming what was too big, having allocated little.
    use herd_sim::chart::{CountScale, HistogramChart};
    use herd_sim::report::{Exporter, JsonExporter};
    let s = scenario("clients = 1\nretries = 0\n");
    let _serial = serial();
    let mut report = experiment::run(&s);
    report.results[0].histogram.record_window(1 << 60);
    let windows = (1u64 << 60) + 1;
    assert_eq!(report.results[0].histogram.len() as u64, windows);
    let (json, peak) = peak_bytes(|| JsonExporter.serialize(&report));
    let e = json.unwrap_err().to_string();
    let r = &report.results[0];
    let all = [&r.histogram, &r.histogram_served, &r.histogram_refused]
        .iter()
        .map(|h| h.len() as u64)
        .sum::<u64>();
    assert!(all >= windows);
    assert!(
        e.contains(&format!("its histograms have {all} windows")),
        "{e}"
    );
    assert!(peak < 1 << 20, "peak {peak} B");
    let (chart, peak) = peak_bytes(|| HistogramChart::from_report(&report, CountScale::Shared));
    let Err(e) = chart else {
        panic!("a chart of 2^60 windows was built")
    };
    let e = e.to_string();
    assert!(e.starts_with("invalid --bin: 100ms;"), "{e}");
    assert!(e.contains(&format!("{windows} windows")), "{e}");
    assert!(peak < 1 << 20, "peak {peak} B");
}
