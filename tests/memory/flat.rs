//! The call loop's memory follows its calls in flight, not simulated time: a run that writes
//! no window (a table, a CSV row, a sweep row) folds each window of its series and histograms
//! as it closes, so the same load held 100 times longer takes the same heap.

use herd_sim::config::{Scenario, ScenarioFile};
use herd_sim::experiment;

use crate::{peak_bytes, serial};

/// Poisson calls at 8/s for `duration` against two workers of Exp(100 ms) (40 % busy), with
/// a spike to 16/s for 5 s half-way, so that the run has a recovery to judge (it recovers).
fn open_loop(duration_s: u64, keep_windows: bool) -> Scenario {
    spiked(duration_s, 16, keep_windows)
}

/// [`open_loop`] with a spike to `spike` calls a second.
fn spiked(duration_s: u64, spike: u32, keep_windows: bool) -> Scenario {
    let half = duration_s / 2;
    let mut s = ScenarioFile::parse(
        &format!(
            "clients = 10\nstrategy = \"full-jitter\"\nretries = 3\narrivals = \"poisson\"\n\
             rate = \"8/s\"\nduration = \"{duration_s}s\"\nspike = \"{half}s..{}s@{spike}/s\"\n\
             timeout = \"2s\"\n[server]\nmodel = \"capacity\"\nworkers = 2\n\
             service_time = \"exp:100ms\"\n",
            half + 5,
        ),
        Some("toml"),
    )
    .unwrap()
    .validate_on(Some(1))
    .unwrap();
    s.overload.keep_windows = keep_windows;
    s
}

#[test]
fn the_heap_is_flat_from_600_s_to_60_000_s_of_the_same_load() {
    let _serial = serial();
    let measure = |duration_s| {
        let s = open_loop(duration_s, false);
        let (report, peak) = peak_bytes(|| experiment::run(&s));
        let calls = report.results[0].calls.as_ref().unwrap().calls;
        (peak, calls)
    };
    let (short, calls_short) = measure(600);
    let (long, calls_long) = measure(60_000);
    // 100 times the calls (8 a second, Poisson: within a few per cent).
    assert!(
        calls_long > 95 * calls_short && calls_long < 105 * calls_short,
        "{calls_short} then {calls_long} calls"
    );
    // The same heap within a quarter (the calls in flight at the worst instant differ a
    // little); keeping every window, the long run's series (104 B a second) and histograms
    // (24 B a 100 ms window) alone would be about 14 MB more.
    assert!(
        long <= short + short / 4,
        "peak {short} B over 600 s, {long} B over 60 000 s"
    );
    let kept = {
        let s = open_loop(60_000, true);
        peak_bytes(|| experiment::run(&s)).1
    };
    assert!(kept > long + (10 << 20), "kept {kept} B, folded {long} B");
}

#[test]
fn folding_the_windows_changes_no_figure() {
    // The summary, the call loop's figures and the recovery of a run that folds its windows
    // are those of the same run keeping them; only the windows themselves are missing. A
    // spike to 16/s is recovered from; one to 25/s leaves the run stuck, retrying.
    let _serial = serial();
    for (spike, recovers) in [(16, true), (25, false)] {
        let folded = experiment::run(&spiked(600, spike, false));
        let kept = experiment::run(&spiked(600, spike, true));
        let (f, k) = (&folded.results[0], &kept.results[0]);
        assert_eq!(f.summary, k.summary);
        assert!(k.summary.requests > 4000, "{}", k.summary.requests);
        assert_eq!(k.summary.windows > 100, !recovers, "{}", k.summary.windows);
        let (fc, kc) = (f.calls.as_ref().unwrap(), k.calls.as_ref().unwrap());
        assert_eq!(kc.recovered_at_s.is_some(), recovers, "spike to {spike}/s");
        assert!(kc.series.rows.len() > 500 && fc.series.rows.is_empty());
        let without_series = |c: &herd_sim::overload::CallLoopResult| {
            let mut c = c.clone();
            c.series.rows.clear();
            c
        };
        assert_eq!(without_series(fc), without_series(kc));
        assert!(f.histogram.is_empty() && f.histogram_served.is_empty());
        assert_eq!(
            k.histogram_served.total() + k.histogram_refused.total(),
            k.summary.requests
        );
    }
}

/// `spiked`, guarded as a plain run is ([`Scenario::guard_in_flight`]) under `limit` bytes.
fn guarded(duration_s: u64, spike: u32, limit: Option<u64>) -> Scenario {
    let mut s = spiked(duration_s, spike, false);
    if let Some(limit) = limit {
        s.memory_limit = limit;
    }
    s.guard_in_flight(false);
    s
}

#[test]
fn a_guarded_estimate_is_within_four_times_the_peak() {
    // What a plain run counts up front once its calls in flight and queue are guarded as it
    // goes: within 4x of the heap measured, at 600 s and at 60 000 s of the same load, and
    // at 100 times the rate against a hundred times the workers.
    let _serial = serial();
    let fast = |duration_s: u64| {
        let mut s = ScenarioFile::parse(
            &format!(
                "strategy = \"full-jitter\"\nretries = 3\narrivals = \"poisson\"\n\
                 rate = \"800/s\"\nduration = \"{duration_s}s\"\ntimeout = \"1s\"\n\
                 [server]\nmodel = \"capacity\"\nworkers = 100\nservice_time = \"exp:100ms\"\n"
            ),
            Some("toml"),
        )
        .unwrap()
        .validate_on(Some(1))
        .unwrap();
        s.overload.keep_windows = false;
        s.guard_in_flight(false);
        s
    };
    for (label, s) in [
        ("8/s over 600 s", guarded(600, 16, None)),
        ("8/s over 60 000 s", guarded(60_000, 16, None)),
        ("800/s over 60 s", fast(60)),
    ] {
        let estimate = s.memory_estimate() as f64;
        let (report, peak) = peak_bytes(|| experiment::run(&s));
        assert!(report.results[0].calls.as_ref().unwrap().outgrown.is_none());
        let ratio = estimate / peak as f64;
        assert!(
            (0.25..=4.0).contains(&ratio),
            "{label}: estimate {estimate} B, peak {peak} B ({ratio:.2}x)"
        );
    }
}

#[test]
fn a_run_outgrowing_its_budget_stops_where_it_is() {
    // A spike to 25/s leaves the run stuck, its unlimited queue keeping abandoned attempts:
    // under the default budget it runs to the end; under a budget leaving its calls and
    // queue 256 KiB beyond the estimate it stops once they take more, its calls and queued
    // requests at the estimate's count past what the budget left them.
    let _serial = serial();
    let whole = experiment::run(&guarded(600, 25, None));
    let calls = whole.results[0].calls.as_ref().unwrap();
    assert!(calls.outgrown.is_none() && calls.recovered_at_s.is_none());
    let tight = {
        let s = guarded(600, 25, None);
        let limit = s.memory_estimate() + (256 << 10);
        guarded(600, 25, Some(limit))
    };
    let guard = tight.overload.in_flight;
    assert!(guard.is_on());
    let stopped = experiment::run(&tight);
    let c = stopped.results[0].calls.as_ref().unwrap();
    let (at, slots, places) = c.outgrown.expect("the queue outgrew 256 KiB");
    assert!(at > 300.0 && at < 600.0, "stopped at {at} s");
    assert!(slots * guard.per_call + places * guard.per_place > guard.bytes);
    assert!(c.attempts < calls.attempts);
}

#[test]
fn the_binary_refuses_an_outgrown_run_in_one_line_and_writes_nothing() {
    // The stuck run above, from the command line: under 1 MiB it is refused once its queue
    // outgrows what the budget leaves, one line, exit 2, no file; under 16 GiB it runs.
    let _serial = serial();
    let dir = std::env::temp_dir().join(format!("herd-sim-outgrown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run.csv");
    let run = |limit: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_herd-sim"))
            .args([
                "--clients",
                "10",
                "--strategy",
                "full-jitter",
                "--arrivals",
                "poisson",
                "--rate",
                "8/s",
                "--duration",
                "600s",
                "--spike",
                "300s..305s@25/s",
                "--timeout",
                "2s",
                "--server",
                "capacity",
                "--workers",
                "2",
                "--service-time",
                "exp:100ms",
                "--format",
                "csv",
                "--memory-limit",
                limit,
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap()
    };
    let refused = run("1MiB");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: this run outgrew the memory budget of 1.0 MiB: at "),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
    let ran = run("16GiB");
    assert_eq!(ran.status.code(), Some(0));
    assert!(out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
