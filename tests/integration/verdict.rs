//! Integration tests of the collapse verdict's foundations through the real binary: the sweep
//! axes that reshape a scenario's triggers (`spike-duration`, `outage-duration`,
//! `degrade-factor`, `degrade-duration`) and the slowdown, their refusals, and their seeds.

use crate::herd_sim as herd;
use crate::herd_sim_ok as ok;

/// A small capacity server under Poisson load with one spike, one outage and one degradation.
const TRIGGERED: &str = "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"20s\"\n\
    spike = \"5s..6s@60/s\"\noutage = \"12s..13s\"\ndegrade = \"8s..9s@0.5\"\n\
    timeout = \"1s\"\nretries = 2\nstrategy = \"full-jitter\"\n\
    [server]\nmodel = \"capacity\"\nworkers = 4\nservice_time = \"50ms\"\n";

fn rows(csv: &[u8]) -> Vec<Vec<String>> {
    String::from_utf8_lossy(csv)
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn column(table: &[Vec<String>], name: &str) -> Vec<String> {
    let at = table[0].iter().position(|c| c == name).unwrap();
    table[1..].iter().map(|r| r[at].clone()).collect()
}

#[test]
fn trigger_axes_write_their_values_in_seconds_and_share_the_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("triggered.toml");
    std::fs::write(&config, TRIGGERED).unwrap();
    let config = config.to_str().unwrap();
    let out = ok(&[
        "sweep",
        "--config",
        config,
        "--spike-duration",
        "1s,2500ms",
        "--degrade-factor",
        "0.5,0.25",
        "--outage-duration",
        "1s",
        "--degrade-duration",
        "500ms",
        "--slowdown",
        "0ms,2ms",
        "--seeds",
        "2",
        "--out",
        "-",
    ]);
    let table = rows(&out);
    // 2 × 2 × 2 cells × 2 seeds, grid in table order: spike, slowdown, then the degradation.
    assert_eq!(table.len(), 1 + 16);
    assert_eq!(
        column(&table, "spike_duration_s")[..],
        [vec!["1"; 8], vec!["2.5"; 8]].concat()
    );
    assert_eq!(column(&table, "slowdown_s")[..4], ["", "", "", ""]);
    assert_eq!(column(&table, "slowdown_s")[4..8], ["0.002"; 4]);
    assert_eq!(
        column(&table, "degrade_factor")[..4],
        ["0.5", "0.5", "0.25", "0.25"]
    );
    assert!(column(&table, "degrade_duration_s")
        .iter()
        .all(|d| d == "0.5"));
    assert!(column(&table, "outage_duration_s").iter().all(|d| d == "1"));
    // Only the trigger shapes and the slowdown vary, and they stay out of the seed label:
    // every cell runs replicate 0 and replicate 1 on the same two seeds.
    let seeds = column(&table, "seed");
    assert_ne!(seeds[0], seeds[1]);
    for pair in seeds.chunks(2) {
        assert_eq!(pair, &seeds[..2]);
    }
    // A point of the grid is a plain run: the spike's new end is in the run's triggers.
    let run = ok(&[
        "--config",
        config,
        "--spike",
        "5s..7.5s@60/s",
        "--degrade",
        "8s..8.5s@0.25",
        "--slowdown",
        "2ms",
        "--seed",
        &seeds[1],
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&run).unwrap();
    let calls = json["results"][0]["calls"].as_u64().unwrap();
    assert_eq!(column(&table, "calls")[15], calls.to_string());
}

#[test]
fn a_trigger_axis_without_its_trigger_is_one_error_line_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.csv");
    for (flag, value, trigger) in [
        ("--spike-duration", "5s", "spike"),
        ("--outage-duration", "5s", "outage"),
        ("--degrade-factor", "0.5", "degrade"),
        ("--degrade-duration", "1s", "degrade"),
    ] {
        let result = herd()
            .args(["sweep", flag, value, "--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(result.status.code(), Some(2), "{flag}");
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: invalid {flag}: the scenario has no {trigger} to reshape; accepted with"
            )),
            "{stderr}"
        );
        assert!(!out.exists());
    }
    // The slowdown needs a server with service times: the cell's one line names it.
    let result = herd()
        .args(["sweep", "--slowdown", "1ms", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("invalid --slowdown"), "{stderr}");
    assert!(!out.exists());
}

/// The `recovered_at_s` and `stuck` of every strategy of a plain run, as JSON.
fn verdicts(args: &[&str]) -> Vec<(String, Option<f64>, Option<f64>)> {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let json: serde_json::Value = serde_json::from_slice(&ok(&all)).unwrap();
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["strategy"].as_str().unwrap().to_string(),
                r["recovered_at_s"].as_f64(),
                r["settle_s"].as_f64(),
            )
        })
        .collect()
}

#[test]
fn a_herd_whose_calls_all_failed_is_stuck_not_recovered() {
    // 50 clients, fixed 1 s waits, 2 retries: every attempt (at 0, 1, 2 s) is refused by the
    // outage over [0, 30 s), so every call has failed by 2 s and nobody calls after. The old
    // rule read the quiet windows after the outage as healthy: "recovered at 30 s".
    let runs = verdicts(&[
        "--clients",
        "50",
        "--strategy",
        "fixed",
        "--base",
        "1s",
        "--retries",
        "2",
        "--server",
        "capacity",
        "--timeout",
        "1s",
        "--outage",
        "0s..30s",
    ]);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].1, None, "{runs:?}");
    // The default settle, worked by hand: (2 + 1) x 1 s + 2 x 30 s (the cap) + 5 s = 68 s.
    assert_eq!(runs[0].2, Some(68.0));
    // With 40 retries the clients outlast the outage: their attempts at 30 s succeed, and
    // the run is recovered at the window where they do.
    let runs = verdicts(&[
        "--clients",
        "50",
        "--strategy",
        "fixed",
        "--base",
        "1s",
        "--retries",
        "40",
        "--server",
        "capacity",
        "--timeout",
        "1s",
        "--outage",
        "0s..30s",
    ]);
    assert_eq!(runs[0].1, Some(30.0), "{runs:?}");
}

#[test]
fn the_load_runs_on_for_the_settle_after_the_last_trigger() {
    // A spike ending at 25 s in a 30 s load, settle 20 s: calls start until 45 s.
    let args = [
        "--arrivals",
        "poisson",
        "--rate",
        "10/s",
        "--duration",
        "30s",
        "--spike",
        "20s..25s@20/s",
        "--server",
        "capacity",
        "--workers",
        "10",
        "--service-time",
        "10ms",
        "--timeout",
        "1s",
        "--settle",
        "20s",
        "--format",
        "json",
    ];
    let json: serde_json::Value = serde_json::from_slice(&ok(&args)).unwrap();
    let r = &json["results"][0];
    assert_eq!(r["settle_s"].as_f64(), Some(20.0));
    assert!(r["load"].as_str().unwrap().contains("over 0s..45s"), "{r}");
    // Poisson counts: 10/s over 40 s outside the spike and 20/s over 5 s, 500 calls
    // expected; within five standard deviations (sd = sqrt(500) = 22.4).
    let calls = r["calls"].as_f64().unwrap();
    assert!((calls - 500.0).abs() < 5.0 * 500f64.sqrt(), "{calls}");
    // An ample server recovers at the first window after the spike.
    assert_eq!(r["recovered_at_s"].as_f64(), Some(25.0));
    // A duration past the settle stays as given.
    let mut longer = args.to_vec();
    longer[5] = "60s";
    let json: serde_json::Value = serde_json::from_slice(&ok(&longer)).unwrap();
    assert!(json["results"][0]["load"]
        .as_str()
        .unwrap()
        .contains("over 0s..60s"));
    // --settle on a herd path has nothing to judge: refused in one line.
    let out = herd().args(["--settle", "5s"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: invalid --settle") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn boundary_prints_the_verdict_rule_with_its_settle() {
    let json = |axis: &str, range: &str| -> serde_json::Value {
        serde_json::from_slice(&ok(&[
            "boundary",
            "--config",
            "configs/collapse-spike.toml",
            "--strategy",
            "naive",
            "--axis",
            axis,
            "--range",
            range,
            "--curve",
            "--points",
            "2",
            "--seeds",
            "2",
            "--format",
            "json",
            "--quiet",
        ]))
        .unwrap()
    };
    // The settle worked by hand: (2 retries + 1) x 3 s timeout + 2 x 40 s cap + 5 s hold.
    let rule = json("spike-rate", "40..120")["verdict_rule"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        rule,
        herd_sim::series::verdict_rule(
            herd_sim::time::SimDuration::from_secs(5),
            herd_sim::time::SimDuration::from_secs(94)
        )
    );
    assert!(
        rule.contains("at least 94s") && rule.contains("hold (5s)"),
        "{rule}"
    );
    // An axis that changes the settle: 3 x 2 s + 80 s + 5 s = 91 s, 3 x 4 s + 80 s + 5 s = 97 s.
    let rule = json("timeout", "2s..4s")["verdict_rule"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        rule.ends_with("the settle is 91s at the low end of the range and 97s at the high end"),
        "{rule}"
    );
}

#[test]
fn boundary_names_each_cases_settle_when_they_differ() {
    // Cases of 0 and 2 retries (collapse-spike: a 3 s timeout, a 40 s cap, a 5 s hold) settle
    // 1 x 3 s + 5 s = 8 s and 3 x 3 s + 2 x 40 s + 5 s = 94 s; along a timeout axis of
    // 2..4 s the 2-retry case's 91 s and 97 s, the 0-retry case's 7 s and 9 s.
    let json = |axis: &str, range: &str| -> serde_json::Value {
        serde_json::from_slice(&ok(&[
            "boundary",
            "--config",
            "configs/collapse-spike.toml",
            "--strategy",
            "naive",
            "--retries",
            "0,2",
            "--axis",
            axis,
            "--range",
            range,
            "--curve",
            "--points",
            "2",
            "--seeds",
            "1",
            "--format",
            "json",
            "--quiet",
        ]))
        .unwrap()
    };
    for (axis, range, settles, named) in [
        (
            "spike-rate",
            "40..120",
            [(8.0, 8.0), (94.0, 94.0)],
            "the settle differs by case: 8s for naive, retries=0; 94s for naive, retries=2",
        ),
        (
            "timeout",
            "2s..4s",
            [(7.0, 9.0), (91.0, 97.0)],
            "the settle differs by case: 7s at the low end of the range and 9s at the high end \
             for naive, retries=0; 91s at the low end of the range and 97s at the high end for \
             naive, retries=2",
        ),
    ] {
        let report = json(axis, range);
        let rule = report["verdict_rule"].as_str().unwrap();
        assert!(rule.ends_with(named), "{rule}");
        assert!(
            rule.contains("for at least the case's settle after"),
            "{rule}"
        );
        for (result, (low, high)) in report["results"].as_array().unwrap().iter().zip(settles) {
            assert_eq!(result["settle_at_low_s"], low, "{axis}");
            assert_eq!(result["settle_at_high_s"], high, "{axis}");
        }
    }
}
