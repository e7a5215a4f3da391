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

/// One client fetching `items` items, 30 a minute through a fixed window, full jitter with
/// 100 retries an item and a 64 s cap: Experiment 2's client (configs/fixed-window-one-client.toml)
/// given a long backlog. Its worst case (every item tried 101 times, every wait at the cap)
/// spans 60 times the windows it reaches.
fn long_backlog(items: u32, memory_limit: Option<u64>) -> herd_sim::config::Scenario {
    backlog_of("full-jitter", 100, items, memory_limit)
}

/// [`long_backlog`] with another strategy and retries an item.
fn backlog_of(
    strategy: &str,
    retries: u32,
    items: u32,
    memory_limit: Option<u64>,
) -> herd_sim::config::Scenario {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/fixed-window-one-client.toml"
    ))
    .unwrap();
    let mut file = ScenarioFile::parse(&text, Some("toml")).unwrap();
    file.items = Some(items);
    file.retries = Some(retries);
    file.replicates = Some(1);
    file.strategy = Some(strategy.parse().unwrap());
    file.memory_limit = memory_limit;
    let mut s = file.validate_without_budget_on(Some(2)).unwrap();
    // As the plain run does: the histograms guarded as they grow, counted at what such a run
    // touches.
    s.guard_in_flight(false);
    s
}

#[test]
fn a_long_backlog_behind_a_limiter_is_estimated_within_four_times_of_its_peak() {
    // 100 000 items: 124 975 requests over 2.8 M windows of 100 ms. The estimate counts a
    // block an item beyond the dense windows; unguarded, it counted two blocks a request of
    // the worst case (101 an item), 7.1 GB.
    let s = long_backlog(100_000, None);
    let guard = s.overload.in_flight;
    assert!(guard.limits_blocks());
    let estimate = s.memory_estimate();
    let _serial = serial();
    let pool = two_threads();
    let (report, peak) = peak_bytes(|| pool.install(|| experiment::run(&s)));
    let r = &report.results[0];
    assert!(!r.outgrown);
    assert_eq!(r.summary.succeeded, 100_000);
    assert!(r.histogram.len() > 2_000_000, "{}", r.histogram.len());
    let ratio = estimate as f64 / peak as f64;
    assert!(
        estimate as usize >= peak && ratio <= 4.0,
        "estimate {estimate} B, peak {peak} B ({ratio:.2}×)"
    );
    eprintln!("long backlog run: estimate {estimate} B, peak {peak} B ({ratio:.2}×)");
    // Its dense JSON, checked once the run knows its last window, bounds what writing it
    // takes, within four times.
    use herd_sim::report::{Exporter, JsonExporter};
    let dense = s.dense_output_estimate(&report);
    let (json, peak) = peak_bytes(|| JsonExporter.serialize(&report).unwrap());
    let ratio = dense as f64 / peak as f64;
    assert!(
        dense as usize >= peak && dense as usize >= json.len() && ratio <= 4.0,
        "dense output {dense} B, its JSON {} B, peak {peak} B ({ratio:.2}×)",
        json.len()
    );
    eprintln!(
        "long backlog: dense output {dense} B, its JSON {} B, peak {peak} B ({ratio:.2}×)",
        json.len()
    );
}

#[test]
fn a_long_backlog_past_its_budget_is_refused_once_its_histograms_outgrow_it() {
    // The same run with 10 000 items under a budget 1 MiB past its estimate: refused up
    // front below the estimate; above it, its histograms stop at what the budget leaves
    // them and it is marked outgrown when the run needs more (the naive client's refusals
    // fill every window of the minute's rest, 36 blocks a minute).
    let estimate = long_backlog(10_000, None).memory_estimate();
    let below = long_backlog(10_000, Some(estimate - 1));
    assert!(below.check_memory().is_err());
    let tight = long_backlog(10_000, Some(estimate + (1 << 20)));
    assert!(tight.check_memory().is_ok());
    let _serial = serial();
    let report = experiment::run(&tight);
    assert!(!report.results[0].outgrown, "full jitter fits");
    // The naive client retrying at once, up to 1 000 times an item.
    let limit = backlog_of("naive", 1000, 10_000, None).memory_estimate() + (1 << 20);
    let tight = backlog_of("naive", 1000, 10_000, Some(limit));
    let blocks = tight.overload.in_flight.blocks;
    let (report, peak) = peak_bytes(|| experiment::run(&tight));
    let r = &report.results[0];
    assert!(r.outgrown);
    for h in [&r.histogram, &r.histogram_served, &r.histogram_refused] {
        assert!(h.blocks_held() as u64 <= blocks);
    }
    assert!((peak as u64) < tight.memory_limit, "peak {peak} B");
}

#[test]
fn the_binary_runs_a_long_backlog_and_refuses_one_that_outgrows_its_budget() {
    // From the command line: the guarded full-jitter backlog runs under the default budget
    // (unguarded it was refused, its estimate 6.6 GiB at 100 000 items); the naive client
    // under a budget 1 MiB past its estimate is refused in one line once it ends, exit 2,
    // nothing written.
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.csv");
    let run = |strategy: &str, retries: &str, limit: Option<u64>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_herd-sim"));
        command.args([
            "--config",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/configs/fixed-window-one-client.toml"
            ),
            "--items",
            "10000",
            "--retries",
            retries,
            "--replicates",
            "1",
            "--strategy",
            strategy,
            "--max-requests",
            "100000000",
            "--format",
            "csv",
            "--out",
        ]);
        command.arg(&out);
        if let Some(limit) = limit {
            command.args(["--memory-limit", &limit.to_string()]);
        }
        command.output().unwrap()
    };
    let ran = run("full-jitter", "100", None);
    assert_eq!(
        ran.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2);
    std::fs::remove_file(&out).unwrap();
    let limit = backlog_of("naive", 1000, 10_000, None).memory_estimate() + (1 << 20);
    let refused = run("naive", "1000", Some(limit));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: this run outgrew the memory budget of ")
            && stderr.contains(": a histogram of naive needed more than the "),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
}
