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
