//! `herd-sim tune`: the tuner finds answers worked out by hand (the smallest retries that mask
//! a flaky server, from 1 − x^(N+1); the gRPC throttle setting an always-failing server allows),
//! its frontier is non-dominated and the same for any --threads, and bad input is one line.

use std::path::Path;

use crate::{herd_sim, herd_sim_ok};

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&herd_sim_ok(args)).unwrap()
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

#[test]
fn the_smallest_retries_that_mask_a_flaky_server_is_the_closed_forms() {
    // Each attempt fails with probability x, so N retries succeed with 1 − x^(N+1).
    let (x, target) = (0.5f64, 0.989f64);
    let hand = (0..).find(|&n| 1.0 - x.powi(n + 1) >= target).unwrap();
    assert_eq!(hand, 6);
    let config = repo("configs/tune/flaky-retries.toml");
    let report = json(&["tune", "--config", &config, "--format", "json"]);
    assert_eq!(report["recommended"]["retries"], hand, "{report}");
    // Ten candidates (1..10), one scenario, three seeds: each run once.
    assert_eq!(report["runs"], 30);
    assert_eq!(report["feasible"], 5, "{report}");
    let chosen = &report["frontier"][0]["constraints"]["goodput_pct@flaky >= 98.9"];
    let goodput = chosen["mean"].as_f64().unwrap();
    // 100 (1 − 0.5^7) = 99.219 %, over about 30 000 calls.
    assert!(
        (goodput - 100.0 * (1.0 - x.powi(7))).abs() < 0.15,
        "{chosen}"
    );
    assert!(chosen["low"].as_f64().unwrap() <= goodput);
    assert!(chosen["high"].as_f64().unwrap() >= goodput);
}

#[test]
fn the_grpc_throttle_against_an_always_failing_server_is_the_hand_computation() {
    // A6: a process starts with m tokens, a failed attempt costs one, a retry needs more than
    // m / 2 left, so each of the 10 processes makes ceil(m / 2) − 1 retries before the throttle
    // shuts; about 1000 calls in all.
    let retries = |m: u64| m.div_ceil(2) - 1;
    let hand = [2u64, 6, 10, 14, 18]
        .into_iter()
        .filter(|&m| 1.0 + (10 * retries(m)) as f64 / 1000.0 <= 1.05)
        .max()
        .unwrap();
    assert_eq!(hand, 10);
    let config = repo("configs/tune/grpc-down.toml");
    let report = json(&["tune", "--config", &config, "--format", "json"]);
    assert_eq!(report["recommended"]["budget.max_tokens"], hand, "{report}");
    assert_eq!(report["recommended"]["budget"], "grpc");
    let point = &report["frontier"][0];
    assert_eq!(point["params"]["budget.max_tokens"], hand);
    let amplification = point["constraints"]["amplification@down <= 1.05"]["mean"]
        .as_f64()
        .unwrap();
    // 40 retries over a Poisson number of calls of mean 1000 (sd 32 a seed, 3 seeds).
    let extra = 10.0 * retries(hand) as f64;
    assert!(
        (1.0 + extra / 1100.0..=1.0 + extra / 900.0).contains(&amplification),
        "{amplification}"
    );
}

const TWO_SCENARIOS: &str = r#"
seeds = 2
[[scenario]]
name = "flaky"
config = "flaky.toml"
[[scenario]]
name = "down"
config = "flaky.toml"
[scenario.server]
failure_rate = 1
[params]
budget = "grpc"
"budget.max_tokens" = "2..14 step 4"
retries = "1,3"
[objectives]
constraints = ["goodput_pct@flaky >= 50"]
minimize = ["amplification@down"]
maximize = ["goodput_pct@flaky"]
"#;

const FLAKY: &str = r#"
clients = 10
strategy = "naive"
arrivals = "poisson"
rate = "100/s"
duration = "5s"
[server]
model = "flaky"
failure_rate = 0.3
"#;

fn two_scenarios(dir: &Path, tune: &str) -> String {
    std::fs::write(dir.join("flaky.toml"), FLAKY).unwrap();
    let path = dir.join("tune.toml");
    std::fs::write(&path, tune).unwrap();
    path.display().to_string()
}

type Point = (Vec<f64>, serde_json::Value);

#[test]
fn the_frontier_is_non_dominated_and_the_same_for_any_threads() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_scenarios(dir.path(), TWO_SCENARIOS);
    let one = herd_sim_ok(&[
        "tune",
        "--config",
        &config,
        "--format",
        "json",
        "--threads",
        "1",
    ]);
    let two = herd_sim_ok(&[
        "tune",
        "--config",
        &config,
        "--format",
        "json",
        "--threads",
        "2",
    ]);
    assert_eq!(one, two);
    let report: serde_json::Value = serde_json::from_slice(&one).unwrap();
    // Eight candidates, two scenarios, two seeds.
    assert_eq!(report["runs"], 32);
    let points: Vec<Point> = report["frontier"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let o = &p["objectives"];
            (
                vec![
                    o["amplification@down"]["mean"].as_f64().unwrap(),
                    -o["goodput_pct@flaky"]["mean"].as_f64().unwrap(),
                ],
                p["params"].clone(),
            )
        })
        .collect();
    assert!(points.len() >= 2, "{report}");
    for (a, pa) in &points {
        for (b, pb) in &points {
            let dominates =
                a.iter().zip(b).all(|(x, y)| x <= y) && a.iter().zip(b).any(|(x, y)| x < y);
            assert!(!dominates, "{pa} dominates {pb}");
        }
    }
    // The rule: the lowest amplification when the server is down (the first objective).
    let best = points
        .iter()
        .min_by(|a, b| a.0[0].total_cmp(&b.0[0]))
        .unwrap();
    assert_eq!(report["recommended"], best.1, "{report}");
    // The table marks the same point.
    let table = String::from_utf8(herd_sim_ok(&["tune", "--config", &config])).unwrap();
    let max_tokens = best.1["budget.max_tokens"].to_string();
    assert!(
        table.contains(&format!(
            "recommended (*): budget=grpc, budget.max_tokens={max_tokens}, retries="
        )),
        "{table}"
    );
}

#[test]
fn bad_tune_files_are_one_line_exit_2_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            TWO_SCENARIOS.replace("amplification@down", "amplifcation@down"),
            "unknown metric `amplifcation` of scenario `down`; accepted: a summary metric of that scenario: ",
        ),
        (
            TWO_SCENARIOS.replace("goodput_pct@flaky >= 50", "goodput_pct@spike >= 50"),
            "unknown scenario `spike`; accepted: a scenario of the file: flaky, down",
        ),
        (
            TWO_SCENARIOS.replace("2..14 step 4", "14..2 step 4"),
            "is a reversed range",
        ),
        (TWO_SCENARIOS.replace("retries = \"1,3\"", "retries = \"\""), "empty list"),
        (
            TWO_SCENARIOS.replace("budget.max_tokens", "budget.min_concurrency"),
            "`min_concurrency` is a parameter of envoy, not of grpc",
        ),
        (
            TWO_SCENARIOS
                .replace("minimize = [\"amplification@down\"]", "")
                .replace("maximize = [\"goodput_pct@flaky\"]", ""),
            "no objective",
        ),
        (
            TWO_SCENARIOS.replace("config = \"flaky.toml\"\n[[", "config = \"missing.toml\"\n[["),
            "missing.toml",
        ),
    ];
    for (text, expected) in cases {
        let config = two_scenarios(dir.path(), &text);
        let out_path = dir.path().join("out.json");
        let out = herd_sim()
            .args(["tune", "--config", &config, "--out"])
            .arg(&out_path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{expected}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{expected}: {stderr}"
        );
        assert!(!out_path.exists(), "{expected}");
    }
}

#[test]
fn successive_halving_keeps_the_best_and_adds_seeds_to_them_alone() {
    // The gRPC problem of configs/tune/grpc-down.toml over 5 × 2 candidates (retries 10 or 12
    // change nothing: the throttle shuts first), halved with eta = 2 from 2 seeds to 8 at most.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("configs/tune/grpc-down.toml"))
        .unwrap()
        .replace("retries = 10\n", "")
        .replace(
            "\"budget.max_tokens\" = \"2..18 step 4\"",
            "\"budget.max_tokens\" = \"2..18 step 4\"\nretries = \"10,12\"",
        )
        .replace("seeds = 3", "seeds = 2")
        + "[search]\nmethod = \"halving\"\ncandidates = 10\neta = 2\nmax_seeds = 8\n";
    let path = dir.path().join("halving.toml");
    std::fs::write(&path, text).unwrap();
    let config = path.display().to_string();
    let one = herd_sim_ok(&[
        "tune",
        "--config",
        &config,
        "--format",
        "json",
        "--threads",
        "1",
    ]);
    let two = herd_sim_ok(&[
        "tune",
        "--config",
        &config,
        "--format",
        "json",
        "--threads",
        "2",
    ]);
    assert_eq!(one, two);
    let report: serde_json::Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(report["method"], "halving");
    // Rungs by hand: 10 at 2 seeds, the best ceil(10/2) = 5 at 4, 3 at 8 (16 would pass 8).
    let rungs: Vec<(u64, u64)> = report["rungs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["candidates"].as_u64().unwrap(),
                r["seeds"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rungs, [(10, 2), (5, 4), (3, 8)]);
    // Seeds already run are kept: 10·2 + 5·(4 − 2) + 3·(8 − 4) = 42 runs, against 10·8 = 80 for
    // every candidate at 8 seeds.
    assert_eq!(report["runs"], 42);
    assert_eq!(report["exhaustive_runs"], 80);
    assert_eq!(report["recommended"]["budget.max_tokens"], 10, "{report}");
    assert_eq!(report["frontier"][0]["seeds"], 8);
}
