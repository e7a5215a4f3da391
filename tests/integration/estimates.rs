//! The up-front guards through the binary: every input that could make an estimate wrap or
//! run away is refused in one line, and a refusal names the whole estimate, its largest part
//! and the flags that drive it, whatever `--memory-limit` is.

use crate::herd_sim;

/// Runs `args`, which must be refused as bad input (exit 2) with one `error:` line; returns
/// it.
pub fn refused(args: &[&str]) -> String {
    let out = herd_sim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

#[test]
fn a_degradation_factor_outside_its_range_is_refused_before_any_estimate() {
    // 1e-50 once made the service time 10^50 times longer: the horizon wrapped round, the
    // estimate read 285.6 KiB, and the run aborted allocating 3.4 GB.
    for factor in ["1e-50", "0.0009", "0", "-1", "1.5", "inf", "NaN", "x"] {
        let degrade = format!("0s..1s@{factor}");
        let e = refused(&["--server", "capacity", "--degrade", &degrade]);
        assert_eq!(
            e.trim_end(),
            format!(
                "error: invalid --degrade: {degrade}; accepted: FROM..TO@FACTOR with FACTOR \
                 from 0.001 to 1 (the capacity left: 0.5 doubles service times), such as \
                 30s..40s@0.5"
            )
        );
    }
    // Both ends are accepted.
    for factor in ["0.001", "1"] {
        let degrade = format!("0s..1s@{factor}");
        crate::herd_sim_ok(&[
            "--server",
            "capacity",
            "--clients",
            "10",
            "--degrade",
            &degrade,
        ]);
    }
}

#[test]
fn the_estimate_printed_is_the_whole_one_whatever_the_memory_limit() {
    // The event queue's million clients with a dense JSON report in 1 ms windows: checked in
    // stages, the refusal said 2.8 MiB under a 3 MiB limit (the automatic path, no report)
    // and 70.9 MiB above it.
    let estimate = |limit: &str| {
        let e = refused(&[
            "--clients",
            "1000000",
            "--engine",
            "event-queue",
            "--format",
            "json",
            "--bin",
            "1ms",
            "--memory-limit",
            limit,
        ]);
        let start = "error: this run needs an estimated ";
        assert!(e.starts_with(start), "{e}");
        e[start.len()..e.find(", over the memory budget").unwrap()].to_string()
    };
    let first = estimate("100KiB");
    for limit in ["2MiB", "3MiB", "10MiB", "50MiB"] {
        assert_eq!(estimate(limit), first, "--memory-limit {limit}");
    }
    assert!(first.starts_with("70.9 MiB ("), "{first}");
}

#[test]
fn the_slowdown_is_charged_for_the_requests_in_service_not_for_every_attempt() {
    // 200 calls a second for 10 minutes at 10 workers slowed 1 ms by each request in
    // service: the estimate charged the slowdown of every attempt (120 000 of them) to every
    // service, a backlog of days and 22.3 GiB of series; at most 9 others are in service.
    let out = herd_sim()
        .args([
            "--server",
            "capacity",
            "--workers",
            "10",
            "--slowdown",
            "1ms",
        ])
        .args([
            "--arrivals",
            "poisson",
            "--rate",
            "200/s",
            "--duration",
            "600s",
        ])
        .args(["--memory-limit", "1GiB", "--format", "csv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_sweep_too_big_to_run_is_refused_before_its_cells_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.csv");
    let out = out.to_str().unwrap();
    // 10^9 cells of one seed: each run costs at least its setup (1000 events) and a request,
    // 1.001 × 10^12 events, counted before any cell is validated (validating them took about
    // 50 µs a cell: fourteen hours).
    let e = refused(&[
        "sweep",
        "--clients",
        "1..1000",
        "--retries",
        "0..999",
        "--base",
        "1ms..1000ms step 1ms",
        "--max-cells",
        "1000000000",
        "--out",
        out,
    ]);
    assert_eq!(
        e.trim_end(),
        "error: this sweep's work estimate is at least 1001000000000 events (about 27.8 h at ~10 M \
         events/s) (1000000000 runs of 1001 events or more), over the 3000000000 events (about \
         5 min) run without asking; narrow it, or run it anyway with --yes"
    );
    // 10^6 cells of 1 to 10^6 clients: cell c costs 1000 + 5c events, so the first 34 442
    // cells pass 3 × 10^9 (3 000 156 515 events) and the rest are not looked at.
    let e = refused(&[
        "sweep",
        "--clients",
        "1..1000000 step 1",
        "--max-cells",
        "2000000",
        "--out",
        out,
    ]);
    assert!(
        e.starts_with(
            "error: this sweep's work estimate is at least 3000156515 events (about 5 min at ~10 \
             M events/s) (its first 34442 of 1000000 cells), over the 3000000000 events"
        ),
        "{e}"
    );
    // With --yes the whole grid is counted, and its requests are over the limit: the sum of
    // 5c over c = 1..10^6 is 2 500 002 500 000.
    let e = refused(&[
        "sweep",
        "--clients",
        "1..1000000 step 1",
        "--max-cells",
        "2000000",
        "--yes",
        "--out",
        out,
    ]);
    assert!(
        e.starts_with("error: this sweep's requests estimate is 2500002500000 requests"),
        "{e}"
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
