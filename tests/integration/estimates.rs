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
