//! Closed-loop clients (`--in-flight`, `--think-time`) inside the estimates: the memory
//! estimate bounds the heap a closed-loop run takes (its calls held at once are at most K a
//! client process), and the requests estimate bounds the attempts it sends.

use herd_sim::config::{Scenario, ScenarioFile};
use herd_sim::experiment;

use crate::{peak_bytes, serial};

/// `clients` closed-loop processes of at most `k` calls, thinking Exp(`think_ms`), against
/// two workers of Exp(100 ms) with a 1 s timeout and 3 naive retries, for `duration_s`.
fn closed(clients: u32, k: u32, think_ms: u32, duration_s: u64) -> Scenario {
    let mut s = ScenarioFile::parse(
        &format!(
            "clients = {clients}\nstrategy = \"naive\"\nretries = 3\narrivals = \"poisson\"\n\
             rate = \"{}/s\"\nduration = \"{duration_s}s\"\ntimeout = \"1s\"\n\
             in_flight = {k}\nthink_time = \"exp:{think_ms}ms\"\n\
             [server]\nmodel = \"capacity\"\nworkers = 2\nservice_time = \"exp:100ms\"\n",
            clients * 10,
        ),
        Some("toml"),
    )
    .unwrap()
    .validate_on(Some(1))
    .unwrap();
    s.overload.keep_windows = false;
    s
}

#[test]
fn the_estimates_bound_a_closed_loop_run() {
    let _serial = serial();
    // Light (5 calls of 100 ms a second against 20/s of capacity) and overloaded (40
    // processes of 4 calls, thinking 10 ms: every worker busy, timeouts and retries, the
    // unlimited queue keeping abandoned attempts).
    for (label, light, mut s) in [
        ("light", true, closed(10, 1, 2000, 600)),
        ("overloaded", false, closed(40, 4, 10, 120)),
    ] {
        // Unguarded (as a sweep runs it), the estimate counts the worst case up front.
        let estimate = s.memory_estimate() as f64;
        let (report, peak) = peak_bytes(|| experiment::run(&s));
        let calls = report.results[0].calls.as_ref().unwrap();
        assert!(
            estimate >= peak as f64,
            "{label}: estimate {estimate} B below the peak {peak} B"
        );
        assert!(
            s.attempts_per_run() >= u128::from(calls.attempts),
            "{label}: {} attempts sent, {} estimated",
            calls.attempts,
            s.attempts_per_run()
        );
        // Guarded (as a plain run), it counts K calls a process and what a server that keeps
        // up queues, and the guard lets the run hold what the budget leaves.
        s.guard_in_flight(false);
        let estimate = s.memory_estimate() as f64;
        let (report, peak) = peak_bytes(|| experiment::run(&s));
        assert!(report.results[0].calls.as_ref().unwrap().outgrown.is_none());
        if light {
            let ratio = estimate / peak as f64;
            assert!(
                (0.25..=4.0).contains(&ratio),
                "{label}: guarded estimate {estimate} B, peak {peak} B ({ratio:.2}x)"
            );
        }
    }
}
