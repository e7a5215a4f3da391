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
fn chart_flags_without_a_chart_are_refused_before_any_run() {
    // --chart-x, --chart-y and --chart-size shape the chart --png, --svg or --html draw;
    // without one they were ignored (exit 0).
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.json");
    let config = repo("configs/tune/grpc-throttling.toml");
    for (flag, value) in [
        ("--chart-x", "budget.max_tokens"),
        ("--chart-y", "nonsense"),
        ("--chart-size", "800x600"),
    ] {
        let out = herd_sim()
            .args(["tune", "--config", &config, flag, value, "--out"])
            .arg(&out_path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: invalid {flag}: {value}; accepted: only with --png, --svg or --html"
            )),
            "{flag}: {stderr}"
        );
        assert!(!out_path.exists(), "{flag}");
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

/// The circles of an SVG as `(cx, cy, r, fill)`.
fn svg_circles(svg: &str) -> Vec<(f64, f64, u32, String)> {
    let attr = |tag: &str, name: &str| {
        let key = format!(" {name}=\"");
        let at = tag.find(&key).unwrap() + key.len();
        tag[at..at + tag[at..].find('"').unwrap()].to_string()
    };
    svg.split("<circle")
        .skip(1)
        .map(|tag| {
            (
                attr(tag, "cx").parse().unwrap(),
                attr(tag, "cy").parse().unwrap(),
                attr(tag, "r").parse().unwrap(),
                attr(tag, "fill"),
            )
        })
        .collect()
}

#[test]
fn the_frontier_chart_puts_each_point_at_its_means_and_rings_the_recommended_one() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_scenarios(dir.path(), TWO_SCENARIOS);
    let outputs = |threads: &str| {
        let (svg, png) = (
            dir.path().join(format!("f{threads}.svg")),
            dir.path().join(format!("f{threads}.png")),
        );
        let json = herd_sim_ok(&[
            "tune",
            "--config",
            &config,
            "--format",
            "json",
            "--threads",
            threads,
            "--svg",
            svg.to_str().unwrap(),
            "--png",
            png.to_str().unwrap(),
        ]);
        (
            json,
            std::fs::read_to_string(svg).unwrap(),
            std::fs::read(png).unwrap(),
        )
    };
    let (json, svg, png) = outputs("1");
    assert_eq!((json.clone(), svg.clone(), png.clone()), outputs("2"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    // x: the first objective, y: the second, at their means.
    let means: Vec<(f64, f64)> = report["frontier"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let o = &p["objectives"];
            (
                o["amplification@down"]["mean"].as_f64().unwrap(),
                o["goodput_pct@flaky"]["mean"].as_f64().unwrap(),
            )
        })
        .collect();
    let circles = svg_circles(&svg);
    // Frontier points: radius 5, blue, in the frontier's (grid) order.
    let front: Vec<_> = circles.iter().filter(|c| c.2 == 5).collect();
    assert_eq!(front.len(), means.len(), "{svg}");
    assert!(means.len() >= 2);
    // The axes are linear: the pixels of any point follow from the two extreme ones (x
    // rightwards, y upwards), within the rounding to whole pixels.
    let (lo, hi) = (0, means.len() - 1);
    let px = |x: f64| {
        front[lo].0 + (front[hi].0 - front[lo].0) * (x - means[lo].0) / (means[hi].0 - means[lo].0)
    };
    let py = |y: f64| {
        front[lo].1 + (front[hi].1 - front[lo].1) * (y - means[lo].1) / (means[hi].1 - means[lo].1)
    };
    for (c, &(x, y)) in front.iter().zip(&means) {
        assert!(
            (c.0 - px(x)).abs() <= 2.0 && (c.1 - py(y)).abs() <= 2.0,
            "{c:?} at ({x}, {y})"
        );
    }
    assert_eq!(
        (front[hi].0 > front[lo].0),
        (means[hi].0 > means[lo].0),
        "x grows rightwards"
    );
    assert_eq!(
        (front[hi].1 < front[lo].1),
        (means[hi].1 > means[lo].1),
        "y grows upwards"
    );
    // One ring, around the recommended point's frontier circle.
    let rings: Vec<_> = circles.iter().filter(|c| c.2 == 11).collect();
    assert_eq!(rings.len(), 1, "{svg}");
    let chosen = report["frontier"]
        .as_array()
        .unwrap()
        .iter()
        .position(|p| p["params"] == report["recommended"])
        .unwrap();
    assert_eq!((rings[0].0, rings[0].1), (front[chosen].0, front[chosen].1));
    // Every other candidate is drawn too: eight in all.
    assert_eq!(circles.iter().filter(|c| c.2 == 3).count() + front.len(), 8);
}

#[test]
fn a_chart_flag_that_cannot_be_drawn_is_one_line_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_scenarios(dir.path(), TWO_SCENARIOS);
    let out_path = dir.path().join("out.json");
    std::fs::create_dir_all(dir.path().join("one")).unwrap();
    let one_objective = two_scenarios(
        &dir.path().join("one"),
        &TWO_SCENARIOS
            .replace("constraints = [\"goodput_pct@flaky >= 50\"]", "")
            .replace("maximize = [\"goodput_pct@flaky\"]", ""),
    );
    for (args, needle) in [
        (vec!["--svg", "f.svg", "--chart-x", "peak@down"], "invalid --chart-x: peak@down; accepted: a term of the tune file's objectives or constraints: amplification@down, goodput_pct@flaky"),
        (vec!["--svg", "f.svg", "--chart-x", "goodput_pct@flaky", "--chart-y", "goodput_pct@flaky"], "--chart-y"),
        (vec!["--png", "f.svg"], "--png"),
        (vec!["--png", "f", "--svg", "f"], "--png writes there too"),
        (vec!["--svg", "f.svg", "ONE"], "invalid --png/--svg: (the tune file's terms: amplification@down); accepted: a tune file with two terms at least"),
    ] {
        let out = herd_sim()
            .current_dir(dir.path())
            .args(["tune", "--config"])
            .arg(if args.contains(&"ONE") { &one_objective } else { &config })
            .arg("--out")
            .arg(&out_path)
            .args(args.iter().filter(|a| **a != "ONE"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: ") && stderr.contains(needle), "{needle}: {stderr}");
        assert!(!out_path.exists() && !dir.path().join("f.svg").exists(), "{args:?}");
    }
}

/// `(params, {constraint or objective label: mean})` of each frontier point.
fn frontier_means(report: &serde_json::Value) -> Vec<(serde_json::Value, serde_json::Value)> {
    report["frontier"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut means = serde_json::Map::new();
            for group in ["constraints", "objectives"] {
                for (k, v) in p[group].as_object().unwrap() {
                    means.insert(k.clone(), v["mean"].clone());
                }
            }
            (p["params"].clone(), serde_json::Value::Object(means))
        })
        .collect()
}

#[test]
fn the_grpc_throttling_study_is_the_hand_computation() {
    // configs/tune/grpc-throttling.toml: 10 processes, about 1000 calls, every attempt failing:
    // each process retries ceil(m / 2) − 1 times in all.
    let amplification = |m: u64, calls: f64| 1.0 + (10 * (m.div_ceil(2) - 1)) as f64 / calls;
    let grid: Vec<u64> = (10..=100).step_by(10).collect();
    let hand = *grid
        .iter()
        .filter(|&&m| amplification(m, 1000.0) <= 1.1)
        .max()
        .unwrap();
    assert_eq!(hand, 20);
    // Masked: 99 successes refill 99 r for each token the 1 % lose, r ≥ 0.0102 keeps the
    // bucket full, so every ratio of the grid passes: 2 max_tokens × 4 ratios feasible.
    let report = json(&[
        "tune",
        "--config",
        &repo("configs/tune/grpc-throttling.toml"),
        "--format",
        "json",
    ]);
    assert_eq!(report["feasible"], 8, "{report}");
    assert_eq!(report["recommended"]["budget.max_tokens"], hand, "{report}");
    // The four ratios tie on both objectives (20 tokens, goodput 100 %): the rule gives the
    // earliest in grid order, 0.05.
    assert_eq!(report["frontier"].as_array().unwrap().len(), 4);
    assert_eq!(report["recommended"]["budget.token_ratio"], 0.05);
    for (params, means) in frontier_means(&report) {
        assert_eq!(params["budget.max_tokens"], hand);
        let a = means["amplification@down <= 1.1"].as_f64().unwrap();
        // 90 retries over a Poisson number of calls of mean 1000 (3 seeds).
        assert!(
            (amplification(hand, 1100.0)..=amplification(hand, 900.0)).contains(&a),
            "{a}"
        );
        // 1 − 0.01^4 of the calls succeed.
        assert!(
            means["goodput_pct@flaky >= 99.9"].as_f64().unwrap() > 99.99,
            "{means}"
        );
    }
    let grpc: serde_json::Value =
        serde_json::from_str(report["configs"]["grpc"].as_str().unwrap()).unwrap();
    assert_eq!(grpc["retryThrottling"]["maxTokens"], 20.0);
    assert_eq!(grpc["methodConfig"][0]["retryPolicy"]["maxAttempts"], 4);
}

#[test]
fn the_envoy_budget_study_is_the_hand_computation() {
    // configs/tune/envoy-budget.toml: answers come at once, so the floor c is the budget. Down:
    // a call keeps its slot through its 3 retries (mean waits 12.5 + 25 + 50 ms), 400 calls/s.
    let down = |c: f64| 1.0 + 3.0 * c / (400.0 * 0.0875);
    assert!(down(1.0) <= 1.1 && down(2.0) > 1.1);
    // Flaky: 4 failures a second each find the slot held (a 12.5 ms mean wait) with
    // probability 1 − e^(−0.05), and fail.
    let flaky = 100.0 - (1.0 - (-4.0f64 * 0.0125).exp());
    let report = json(&[
        "tune",
        "--config",
        &repo("configs/tune/envoy-budget.toml"),
        "--format",
        "json",
    ]);
    // c = 1 with each of the 4 percents, nothing else.
    assert_eq!(report["feasible"], 4, "{report}");
    assert_eq!(report["recommended"]["budget.min_concurrency"], 1);
    assert_eq!(report["recommended"]["budget.percent"], 5);
    let (_, means) = &frontier_means(&report)[0];
    let a = means["amplification@down <= 1.1"].as_f64().unwrap();
    assert!((a - down(1.0)).abs() < 0.01, "{a} against {}", down(1.0));
    let g = means["goodput_pct@flaky >= 99.9"].as_f64().unwrap();
    assert!((g - flaky).abs() < 0.03, "{g} against {flaky}");
    let envoy = report["configs"]["envoy"].as_str().unwrap();
    assert!(
        envoy.contains("budget_percent:\n        value: 5.0\n      min_retry_concurrency: 1\n"),
        "{envoy}"
    );
    assert!(
        envoy.contains("base_interval: 0.025s\n    max_interval: 0.25s\n"),
        "{envoy}"
    );
}

#[test]
fn the_backoff_study_rides_the_outage_by_its_envelope_and_absorbs_the_spike() {
    // configs/tune/backoff-outage.toml. A full-jitter call's retries span on average
    // Σ min(cap, base 2^(k−1)) / 2; a call made as the outage starts must span 30 s.
    let envelope = |base: f64, cap: f64, retries: i32| {
        (0..retries)
            .map(|k| cap.min(base * 2f64.powi(k)))
            .sum::<f64>()
            / 2.0
    };
    let secs = |v: &serde_json::Value| {
        let t = v.as_str().unwrap();
        match t.strip_suffix("ms") {
            Some(ms) => ms.parse::<f64>().unwrap() / 1000.0,
            None => t.trim_end_matches('s').parse().unwrap(),
        }
    };
    let config = repo("configs/tune/backoff-outage.toml");
    let report = json(&["tune", "--config", &config, "--format", "json"]);
    let frontier = frontier_means(&report);
    assert!(!frontier.is_empty(), "{report}");
    for (params, means) in &frontier {
        let e = envelope(
            secs(&params["base"]),
            secs(&params["cap"]),
            params["retries"].as_i64().unwrap() as i32,
        );
        assert!(e >= 30.0, "{params}: a mean envelope of {e} s");
        assert_eq!(means["stuck@outage <= 0"], 0.0, "{params}");
        assert!(means["goodput_pct@outage >= 99"].as_f64().unwrap() >= 99.0);
    }
    // The recommendation is the frontier's cheapest.
    let cheapest = frontier
        .iter()
        .min_by(|a, b| {
            let m = |p: &serde_json::Value| p["amplification@outage"].as_f64().unwrap();
            m(&a.1).total_cmp(&m(&b.1))
        })
        .unwrap();
    assert_eq!(report["recommended"], cheapest.0);
    // With 4 retries (gRPC's most) no base and cap of the grid rides it through: the waits
    // span Σ min(cap, base 2^(k−1)) = 30 s at most (2 + 4 + 8 + 16 s), 15 s on average, so
    // about half of the calls made during the outage give up first.
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("\"4,6,8,10\"", "\"4\"");
    assert!((envelope(2.0, 60.0, 4) - 15.0).abs() < 1e-9);
    std::fs::write(&short, text).unwrap();
    let none = json(&[
        "tune",
        "--config",
        short.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(none["feasible"], 0, "{none}");
    assert!(none["recommended"].is_null());
    // Ready to paste: gRPC's retryPolicy and Envoy's route back-off, both full jitter.
    let configs = &report["configs"];
    let grpc = configs["grpc"].as_str().unwrap();
    let attempts = report["recommended"]["retries"].as_i64().unwrap() + 1;
    assert!(
        grpc.contains(&format!("\"maxAttempts\": {attempts}")),
        "{grpc}"
    );
    assert!(configs["envoy"]
        .as_str()
        .unwrap()
        .contains("retry_back_off:"));
}

#[test]
fn the_json_report_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let config = two_scenarios(dir.path(), TWO_SCENARIOS);
    let report = json(&["tune", "--config", &config, "--format", "json"]);
    // {"recommended": {PARAM: VALUE}, "frontier": [{"params", "objectives": {"M@S": {"mean",
    // "low", "high", "n"}}, "constraints", "seeds"}], "runs", ...}
    let dims = ["budget", "budget.max_tokens", "retries"];
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&report["recommended"]), dims);
    assert_eq!(report["runs"].as_u64(), Some(32));
    let frontier = report["frontier"].as_array().unwrap();
    assert!(!frontier.is_empty());
    for p in frontier {
        assert_eq!(
            keys(p),
            ["constraints", "objectives", "params", "seeds"],
            "{p}"
        );
        assert_eq!(keys(&p["params"]), dims);
        assert_eq!(
            keys(&p["objectives"]),
            ["amplification@down", "goodput_pct@flaky"]
        );
        assert_eq!(keys(&p["constraints"]), ["goodput_pct@flaky >= 50"]);
        for stat in p["objectives"]
            .as_object()
            .unwrap()
            .values()
            .chain(p["constraints"].as_object().unwrap().values())
        {
            assert_eq!(keys(stat), ["high", "low", "mean", "n"]);
            let (low, mean, high) = (
                stat["low"].as_f64().unwrap(),
                stat["mean"].as_f64().unwrap(),
                stat["high"].as_f64().unwrap(),
            );
            assert!(low <= mean && mean <= high, "{stat}");
            assert_eq!(stat["n"], p["seeds"]);
        }
        assert_eq!(p["seeds"], 2);
    }
    // The recommended point is one of the frontier's, and the rule is stated.
    assert!(frontier
        .iter()
        .any(|p| p["params"] == report["recommended"]));
    assert!(report["rule"]
        .as_str()
        .unwrap()
        .starts_with("among the frontier, the best mean of the first objective"));
    let table = String::from_utf8(herd_sim_ok(&["tune", "--config", &config])).unwrap();
    assert!(table.contains(&format!("\nrule: {}", report["rule"].as_str().unwrap())));
}

#[test]
fn a_strategy_is_tuned_like_any_parameter() {
    // Naive retries wait nothing and the flaky server answers at once, so every call ends when
    // it starts and the last by the load's end, 5 s; exponential backoff's waits (1, 2, 4 s)
    // keep the calls that fail near the end going past it (the last 10 s of calls hold about
    // 500 that retry). The first objective picks naive.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("strategy.toml");
    std::fs::write(
        &path,
        r#"
seeds = 2
[[scenario]]
name = "flaky"
clients = 10
retries = 3
arrivals = "poisson"
rate = "100/s"
duration = "5s"
[scenario.server]
model = "flaky"
failure_rate = 0.5
[params]
strategy = "exponential,naive"
[objectives]
minimize = ["finish_s@flaky"]
"#,
    )
    .unwrap();
    let report = json(&[
        "tune",
        "--config",
        path.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(report["recommended"]["strategy"], "naive", "{report}");
    let finish = report["frontier"][0]["objectives"]["finish_s@flaky"]["mean"]
        .as_f64()
        .unwrap();
    assert!(finish <= 5.0, "{report}");
}

#[test]
fn auto_searches_a_grid_up_to_max_candidates_whole_and_halves_a_larger_one() {
    // configs/tune/grpc-down.toml has 5 candidates.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo("configs/tune/grpc-down.toml")).unwrap();
    for (limit, method, runs) in [(5, "exhaustive", 15), (4, "halving", 0)] {
        let path = dir.path().join(format!("auto{limit}.toml"));
        std::fs::write(
            &path,
            format!("{text}[search]\nmax_candidates = {limit}\ncandidates = 3\neta = 3\nmax_seeds = 3\n"),
        )
        .unwrap();
        let report = json(&[
            "tune",
            "--config",
            path.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(report["method"], method, "{report}");
        if runs > 0 {
            assert_eq!(report["runs"], runs);
        } else {
            // A design of 3 with 3 seeds, and no second rung (3 <= eta): 9 runs.
            assert_eq!(report["runs"], 9, "{report}");
        }
    }
}

#[test]
fn the_herd_sim_keys_of_a_server_and_an_outage_axis_run_as_the_recommended_flags() {
    // A capacity server's workers and the outage's length: the keys go under [server] and
    // into the scenario's outage (its start kept), so the block run with --config beside the
    // scenario's other flags is byte for byte the run of the same flags with --workers and
    // --outage at the recommended values.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("server.toml");
    std::fs::write(
        &file,
        "seeds = 1\n[[scenario]]\nname = \"s\"\nclients = 10\narrivals = \"poisson\"\n\
         rate = \"20/s\"\nduration = \"10s\"\ntimeout = \"1s\"\noutage = \"2s..4s\"\n\
         [scenario.server]\nmodel = \"capacity\"\nservice_time = \"100ms\"\n\
         [params]\nworkers = \"1,2,3\"\noutage-duration = \"5s\"\n\
         [objectives]\nconstraints = [\"goodput_pct@s >= 0\"]\nmaximize = [\"workers\"]\n",
    )
    .unwrap();
    let report = json(&[
        "tune",
        "--config",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(report["recommended"]["workers"], 3, "{report}");
    let keys = report["configs"]["herd-sim"].as_str().unwrap();
    assert_eq!(
        keys, "outage = [\"2s..7s\"]\n\n[server]\nworkers = 3\n",
        "{keys}"
    );
    let block = dir.path().join("keys.toml");
    std::fs::write(&block, keys).unwrap();
    let scenario = [
        "--clients",
        "10",
        "--arrivals",
        "poisson",
        "--rate",
        "20/s",
        "--duration",
        "10s",
        "--timeout",
        "1s",
        "--server",
        "capacity",
        "--service-time",
        "100ms",
        "--format",
        "json",
    ];
    let with_config =
        crate::herd_sim_ok(&[&scenario[..], &["--config", block.to_str().unwrap()]].concat());
    let with_flags =
        crate::herd_sim_ok(&[&scenario[..], &["--workers", "3", "--outage", "2s..7s"]].concat());
    assert_eq!(
        String::from_utf8(with_config).unwrap(),
        String::from_utf8(with_flags).unwrap()
    );
}
