//! The up-front estimate bounds the real peak of every path, within a small factor: each
//! scenario below is large enough that its dominant term (pending events, limiter keys,
//! items left, replicate figures, histograms) is what is measured.

use herd_sim::config::ScenarioFile;
use herd_sim::engine::Path;
use herd_sim::experiment;

use crate::{peak_bytes, serial, two_threads};

/// Runs `text` on `path` with two threads; the estimate must bound the peak, within `factor`.
fn bounded(text: &str, path: Path, factor: f64) {
    let _serial = serial();
    let pool = two_threads();
    let mut scenario = ScenarioFile::parse(text, Some("toml"))
        .unwrap()
        .validate_on(Some(2))
        .unwrap();
    scenario.path = path;
    let estimate = scenario.memory_estimate();
    let (report, peak) = peak_bytes(|| pool.install(|| experiment::run(&scenario)));
    drop(report);
    let ratio = estimate as f64 / peak as f64;
    assert!(
        estimate as usize >= peak && ratio <= factor,
        "{path:?} {text:?}: estimate {estimate} B, peak {peak} B ({ratio:.2}×)"
    );
}

#[test]
fn independent_path_herd() {
    // The estimate counts both threads' working buffers; on a loaded machine one thread can
    // run every block while the other waits, halving the peak (4.02× and 6.1× were seen at a
    // load average of 10, under 4× otherwise), so the looseness allowed is twice the others'.
    bounded("clients = 1000000\n", Path::Auto, 8.0);
    bounded("clients = 1000\nstrategy = \"all\"\n", Path::Auto, 8.0);
}

#[test]
fn event_queue_herd_on_a_down_server() {
    bounded("clients = 1000000\n", Path::EventQueue, 4.0);
    bounded(
        "clients = 300000\nstrategy = \"decorrelated-jitter\"\nitems = 3\n\
         latency = \"uniform:50ms..150ms\"\n[server]\nrecover_at = \"7s\"\n",
        Path::EventQueue,
        4.0,
    );
}

#[test]
fn every_limiter_on_the_event_queue() {
    for server in [
        "model = \"fixed-window\"\nlimit = 100\nwindow = \"1s\"",
        "model = \"sliding-window\"\nlimit = 20\nwindow = \"1s\"",
        "model = \"token-bucket\"\ncapacity = 100\nrefill = 100\nrefill_interval = \"1s\"",
    ] {
        bounded(
            &format!("clients = 200000\nretries = 3\n[server]\n{server}\n"),
            Path::Auto,
            // Measured 4.3× for the fixed window (most clients finish at t = 0).
            5.0,
        );
    }
}

#[test]
fn a_shared_pool_and_items_each() {
    bounded(
        "clients = 100000\npool = 300000\n[server]\nmodel = \"fixed-window\"\nlimit = 50\n\
         window = \"1s\"\nclients_per_address = 100000\n",
        Path::Auto,
        // Known to be loose: the horizon of a pool behind a limiter assumes one item served
        // per capped wait (the worst case), so the histograms are bounded by one block a
        // request; measured 296×.
        400.0,
    );
    bounded("clients = 200000\nitems = 4\n", Path::EventQueue, 4.0);
}

#[test]
fn replicates_keep_five_figures_each() {
    bounded(
        "clients = 1\nreplicates = 200000\n[server]\nmodel = \"fixed-window\"\nlimit = 1\n\
         window = \"1s\"\n",
        Path::Auto,
        4.0,
    );
}

#[test]
fn a_long_sparse_run() {
    bounded(
        "clients = 1\nstrategy = \"fixed\"\nretries = 1000\nbase = \"1h\"\ncap = \"1h\"\n\
         bin = \"1ms\"\n",
        Path::Auto,
        // The dense part's 16 384 windows are counted in full; measured 4.5×.
        5.0,
    );
}

#[test]
fn optimistic_concurrency_on_the_event_queue() {
    bounded(
        "clients = 100000\nretries = 3\n[server]\nmodel = \"occ\"\n",
        Path::Auto,
        4.0,
    );
}

#[test]
fn the_call_loop_keeps_calls_in_flight_and_each_strategys_series() {
    // A herd of calls against a capacity server after an outage: every call is in flight at
    // once, and each strategy's result keeps its series (10 ms windows) until the report.
    bounded(
        "clients = 100000\nstrategy = [\"exponential\", \"full-jitter\"]\nretries = 4\n\
         timeout = \"2s\"\noutage = \"0s..5s\"\nseries_bin = \"10ms\"\n[server]\n\
         model = \"capacity\"\nworkers = 100\nservice_time = \"10ms\"\n",
        Path::Auto,
        // Measured 1.18×.
        2.0,
    );
    // Open-loop load over 10 minutes: calls come and go, the series grows with time.
    bounded(
        "clients = 10\nstrategy = \"naive\"\nretries = 2\narrivals = \"poisson\"\n\
         rate = \"200/s\"\nduration = \"600s\"\ntimeout = \"1s\"\nseries_bin = \"100ms\"\n\
         [server]\nmodel = \"capacity\"\nworkers = 4\nservice_time = \"exp:10ms\"\n",
        Path::Auto,
        // Known to be loose: every call of the schedule is counted as in flight at once, the
        // worst case of a collapse (an unlimited queue keeps every abandoned attempt), while
        // this healthy run holds a few; measured 64.5×.
        100.0,
    );
}

#[test]
fn browser_tabs_on_the_herd_paths_and_the_call_loop() {
    // Tabs carried in the herd's events (event queue and independent blocks), hidden and
    // switching so their timers are throttled and paused; then one tab a process and one
    // reading a call on the call loop, against a capacity server after an outage.
    let tabs = "hidden = 0.4\nvisibility_switch = \"1m\"\nwhen_hidden = \"pause\"\n";
    bounded(
        &format!("clients = 300000\n{tabs}[server]\nrecover_at = \"20s\"\n"),
        Path::EventQueue,
        // Measured 1.18×.
        4.0,
    );
    bounded(
        &format!("clients = 300000\n{tabs}"),
        Path::Auto,
        // Known to be loose: the horizon allows a pausing tab 40 mean dwells for each of two
        // flips a retry (the practical worst case, here 80 min a retry), so the histograms
        // are counted at one block a request, while these tabs come back within minutes and
        // fill few windows; measured 82.5× and 86.9×.
        150.0,
    );
    bounded(
        &format!(
            "clients = 100000\nstrategy = [\"naive\", \"full-jitter\"]\n{tabs}\
             clock_skew = \"normal:0s,2s\"\nretry_after_format = \"http-date\"\n\
             timeout = \"2s\"\noutage = \"0s..20s\"\n[server]\nmodel = \"capacity\"\n\
             workers = 100\nservice_time = \"10ms\"\nshed_retry_after = \"1s\"\nqueue = 1000\n"
        ),
        Path::Auto,
        // Measured 1.63×.
        3.0,
    );
}

#[test]
fn a_pools_servers_keep_their_series() {
    // Forty servers behind round-robin, an open load in 1 ms windows for 60 s: most windows
    // have an attempt at some server, so each server's series (a row a window each, 56 B)
    // is the bulk of what the run keeps. The estimate counts them, and more servers cost
    // more by at least their rows.
    let text = |servers: u32| {
        format!(
            "clients = 10\nstrategy = \"naive\"\nretries = 1\narrivals = \"poisson\"\n\
             rate = \"2000/s\"\nduration = \"60s\"\nseries_bin = \"1ms\"\nservers = {servers}\n\
             [server]\nmodel = \"flaky\"\nfailure_rate = 0.1\n"
        )
    };
    let estimate = |servers: u32| {
        ScenarioFile::parse(&text(servers), Some("toml"))
            .unwrap()
            .validate_on(Some(2))
            .unwrap()
            .memory_estimate()
    };
    let windows = 60_000u64;
    assert!(estimate(40) - estimate(2) >= windows * 38 * 56);
    bounded(&text(40), Path::Auto, 4.0);
}
