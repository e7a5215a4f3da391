//! The up-front guards through the binary: every input that could make an estimate wrap or
//! run away is refused in one line, and a refusal names the whole estimate, its largest part
//! and the flags that drive it, whatever `--memory-limit` is.

use crate::herd_sim;
use crate::refused_in_one_line as refused;

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
                 30s..40s@0.5, or 30s..40s@0.5@server=K"
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
    // and 71.6 MiB above it (the dense report counted at three times its length while
    // its buffer grows).
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
    assert!(first.starts_with("71.6 MiB ("), "{first}");
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

#[test]
fn every_option_a_run_does_not_read_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = |text: &str| {
        let path = dir.path().join(format!("{}.toml", text.len()));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let one_call = "accepted only on the herd paths (a down server or a rate limiter, without \
                    the call loop's keys); the call loop starts one call a client, or --rate's \
                    calls with --arrivals poisson";
    let no_series = "accepted only on the call loop (a capacity or flaky server, --arrivals \
                     poisson, --timeout, --network-delay, --outage, --degrade, --budget, \
                     --breaker or --throttle); this run has no series";
    let never_hidden =
        "accepted with --hidden above 0 or --visibility-switch (no tab is ever hidden)";
    let no_retry_after = "accepted with a server that sends Retry-After (a rate limiter whose \
                          headers are visible, or a capacity server with --shed-retry-after)";
    let no_clock = "accepted when a tab reads a time against its clock: a rate limiter's \
                    visible X-RateLimit-Reset, or Retry-After as an HTTP date \
                    (--retry-after-format http-date)";
    let no_chart = "accepted with --png or --svg (it shapes the chart they draw)";
    let capacity_items = config("items = 3\n[server]\nmodel = \"capacity\"\n");
    let herd_series = config("series_bin = \"10ms\"\n");
    let cases: Vec<(Vec<&str>, String)> =
        vec![
        // --items with the call loop's servers made the same run as without it.
        (vec!["--server", "flaky", "--items", "3"], format!("--items: 3; {one_call}")),
        (vec!["--server", "capacity", "--pool", "2000"], format!("--pool: 2000; {one_call}")),
        (vec!["--timeout", "1s", "--items", "2"], format!("--items: 2; {one_call}")),
        (vec!["--config", &capacity_items], format!("--items: 3; {one_call}")),
        (vec!["--series-bin", "10ms"], format!("--series-bin: 10ms; {no_series}")),
        (
            vec!["--server", "fixed-window", "--recovery-hold", "10s"],
            format!("--recovery-hold: 10s; {no_series}"),
        ),
        (vec!["--config", &herd_series], format!("--series-bin: 10ms; {no_series}")),
        (vec!["--hidden-timers", "none"], format!("--hidden-timers: none; {never_hidden}")),
        (vec!["--when-hidden", "pause"], format!("--when-hidden: pause; {never_hidden}")),
        (
            vec!["--hidden", "0.2", "--retry-after-format", "http-date"],
            format!("--retry-after-format: http-date; {no_retry_after}"),
        ),
        (
            vec!["--hidden", "0.5", "--clock-skew", "2s"],
            format!("--clock-skew: 2s; {no_clock}"),
        ),
        (
            vec!["--strategy", "fixed,decorrelated-jitter", "--multiplier", "3"],
            "--multiplier: 3; accepted with a strategy that multiplies its waits (every one but \
             naive, fixed and decorrelated-jitter, which multiplies by up to 3)"
                .into(),
        ),
        (
            vec!["--strategy", "naive", "--base", "2s"],
            "--base: 2s; accepted with a strategy that waits (every one but naive)".into(),
        ),
        (vec!["--chart-scale", "log"], format!("--chart-scale: log; {no_chart}")),
        (vec!["--chart-size", "800x600"], format!("--chart-size: 800x600; {no_chart}")),
    ];
    for (args, said) in cases {
        let e = refused(&args);
        assert_eq!(e.trim_end(), format!("error: invalid {said}"), "{args:?}");
    }
    // Where something reads them, they run; a config file's curve is there for whichever
    // strategy a run picks.
    let curve = config("multiplier = 3\nbase = \"2s\"\n");
    for args in [
        &["--items", "3"][..],
        &["--server", "capacity", "--series-bin", "10ms"],
        &["--hidden", "0.5", "--hidden-timers", "none"],
        &[
            "--server",
            "fixed-window",
            "--hidden",
            "0.5",
            "--clock-skew",
            "2s",
        ],
        &[
            "--server",
            "capacity",
            "--shed-retry-after",
            "1s",
            "--queue",
            "10",
            "--retry-after-format",
            "http-date",
        ],
        &["--strategy", "fixed,exponential", "--multiplier", "3"],
        &["--config", &curve, "--strategy", "naive"],
    ] {
        let mut args = args.to_vec();
        args.extend(["--clients", "20"]);
        crate::herd_sim_ok(&args);
    }
    // A sweep refuses a key only when no cell of its grid reads it.
    let out = dir.path().join("s.csv");
    let out = out.to_str().unwrap();
    let e = refused(&[
        "sweep",
        "--server",
        "capacity,flaky",
        "--items",
        "1,3",
        "--out",
        out,
    ]);
    assert_eq!(
        e.trim_end(),
        format!("error: invalid --items: 1; {one_call}; no cell of this sweep reads it")
    );
    crate::herd_sim_ok(&[
        "sweep",
        "--server",
        "down,capacity",
        "--items",
        "1,3",
        "--out",
        out,
    ]);
}

#[test]
fn visibility_flips_are_work_the_estimate_counts_on_every_path() {
    // A flip a nanosecond stepped every tab through 10^9 flips a simulated second: a
    // thousand tabs ran for hours at flat memory, never refused. The down server's horizon
    // is 315 s (the longest waits, 1 + 2 + 4 + 8 s, and a minute's throttling of each of
    // the 5 requests): 315 × 10^9 flips a tab and one, with 5000 requests and 10 events of
    // setup.
    let dir = tempfile::tempdir().unwrap();
    let e = refused(&["--clients", "1000", "--visibility-switch", "1ns"]);
    assert!(
        e.starts_with(
            "error: this run's work estimate is 315000000006010 events (about 365 days at ~10 \
             M events/s), 315000000001000 of them the flips of 1000 tabs switching every 1ns \
             on average over a horizon of 315s (raise --visibility-switch), over the \
             3000000000 events"
        ),
        "{e}"
    );
    // The same from a config file, on the call loop, and in a sweep or a shard of one.
    let config = dir.path().join("tabs.toml");
    std::fs::write(&config, "clients = 1000\nvisibility_switch = \"1ns\"\n").unwrap();
    let e2 = refused(&["--config", config.to_str().unwrap()]);
    assert_eq!(e2, e);
    let e = refused(&[
        "--server",
        "capacity",
        "--clients",
        "10",
        "--visibility-switch",
        "1ns",
    ]);
    assert!(
        e.contains(" of them the flips of 10 tabs switching every 1ns"),
        "{e}"
    );
    let out = dir.path().join("s.csv");
    let out = out.to_str().unwrap();
    for shard in [&[][..], &["--shard", "0/2"]] {
        let mut args = vec![
            "sweep",
            "--clients",
            "100",
            "--visibility-switch",
            "1ns,1s",
            "--server",
            "down,capacity",
            "--out",
            out,
        ];
        args.extend(shard);
        let e = refused(&args);
        assert!(e.contains("work estimate is"), "{e}");
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 1);
    // Flips of a realistic mean are a few a tab: the run goes ahead.
    crate::herd_sim_ok(&["--clients", "1000", "--visibility-switch", "3m"]);
}

#[test]
fn the_estimate_printed_is_the_same_whatever_the_limit_on_every_path() {
    // A run is checked once, its path and report known; a sweep once, for the rows it runs
    // at once: the figure a refusal names never depends on the limit that refused it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.csv");
    let out = out.to_str().unwrap();
    let call_loop = [
        "--server",
        "capacity",
        "--arrivals",
        "poisson",
        "--rate",
        "100/s",
        "--duration",
        "6000s",
        "--series-bin",
        "10ms",
        "--png",
        out,
    ];
    let browser = [
        "--clients",
        "1000000",
        "--hidden",
        "0.3",
        "--visibility-switch",
        "1m",
        "--bin",
        "1ms",
        "--format",
        "json",
    ];
    let sweep = [
        "sweep",
        "--clients",
        "1000000,2000000",
        "--server",
        "fixed-window",
        "--out",
        out,
    ];
    let shard = [&sweep[..], &["--shard", "1/2"]].concat();
    let paths: [(&[&str], &str); 4] = [
        (&call_loop, "run"),
        (&browser, "run"),
        (&sweep, "sweep"),
        // A shard is checked as its sweep: the rows any shard runs at once.
        (&shard, "sweep"),
    ];
    for (args, what) in paths {
        let estimate = |limit: &str| {
            let mut args = args.to_vec();
            args.extend(["--memory-limit", limit]);
            let e = refused(&args);
            let start = format!("error: this {what} needs an estimated ");
            assert!(e.starts_with(&start), "{e}");
            e[start.len()..e.find(", over the memory budget").unwrap()].to_string()
        };
        let first = estimate("1KiB");
        for limit in ["1MiB", "3MiB", "10MiB", "50MiB", "100MiB"] {
            assert_eq!(estimate(limit), first, "{args:?} --memory-limit {limit}");
        }
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
