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
