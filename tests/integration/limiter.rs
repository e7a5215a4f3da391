//! Integration tests of the limiter capability: Experiment 2's configs worked out by hand
//! through the real binary, conservation (served + refused = requests, windows sum to the
//! total), jitter against a shared bucket, hidden headers, and bad input.

use crate::cmd::Command;
use serde_json::Value;

const ONE_CLIENT: &str = "configs/fixed-window-one-client.toml";
const FIVE_CLIENTS: &str = "configs/fixed-window-five-clients.toml";

fn run(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("herd-sim")
        .expect("the binary is built")
        .args(args)
        .output()
        .unwrap()
}

fn json_of(args: &[&str]) -> Vec<Value> {
    let out = run(&[args, &["--format", "json"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    report["results"].as_array().unwrap().clone()
}

fn by_strategy<'a>(results: &'a [Value], name: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["strategy"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn sum(v: &Value) -> u64 {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum()
}

/// Every replicate gave `value` for `figure`.
fn always(result: &Value, figure: &str, value: f64) {
    let spread = &result["over_replicates"][figure];
    assert_eq!(
        (spread["min"].as_f64(), spread["max"].as_f64()),
        (Some(value), Some(value)),
        "{} {figure}: {spread}",
        result["strategy"]
    );
}

#[test]
fn one_client_against_laravel_counts_worked_out_by_hand() {
    // 30 per 60 s, 110 ms round trips: requests 1..30 at 0, 0.11, …, 3.19 s are served; the
    // 31st (3.30 s) is refused. The window was stamped floor(phase) + 60 = 60 s of wall time
    // and the whole-second store keeps it until wall 61 s.
    let results = json_of(&["--config", ONE_CLIENT]);
    // exponential: waits 1, 2, 4, 8, 16, 32 s after refusals at 3.30, 4.41, 6.52, 10.63,
    // 18.74, 34.85 s; the next request (66.96 s) finds a new window: 6 refused, 46 requests.
    let exponential = by_strategy(&results, "exponential");
    always(exponential, "refused", 6.0);
    always(exponential, "requests", 46.0);
    // reset-aware sleeps until wall 60 s exactly, then retries every 110 ms while the key
    // lives (wall 60.00 … 60.99): 10 more refusals whatever the phase, 11 in all.
    let reset_aware = by_strategy(&results, "reset-aware");
    always(reset_aware, "refused", 11.0);
    always(reset_aware, "requests", 51.0);
    // naive: one request every 110 ms; at phase 0 the key lives until 61 s, so requests
    // k = 30 … 554 (0.11 · 554 = 60.94 s) are refused: 525, and 555 + 10 = 565 requests.
    let naive = by_strategy(&results, "naive");
    assert_eq!(naive["over_replicates"]["refused"]["max"], 525.0);
    assert_eq!(naive["over_replicates"]["requests"]["max"], 565.0);
    for r in &results {
        let requests = r["requests"].as_u64().unwrap();
        assert_eq!(
            r["succeeded"].as_u64().unwrap() + r["refused"].as_u64().unwrap(),
            requests
        );
        assert_eq!(r["succeeded"], 40, "{}", r["strategy"]);
        assert_eq!(
            sum(&r["histogram_served"]) + sum(&r["histogram_refused"]),
            requests
        );
        assert_eq!(sum(&r["histogram_refused"]), r["refused"].as_u64().unwrap());
        assert_eq!(r["over_replicates"]["replicates"], 100);
        assert!(r["published"].is_object() || r["strategy"] == "retry-after-jitter");
    }
}

#[test]
fn five_clients_share_one_counter_and_jitter_does_not_help_them() {
    let results = json_of(&["--config", FIVE_CLIENTS]);
    // No jitter: all five are refused together after 30 admissions and back off 1, 2, 4, 8,
    // 16, 32 s: 6 refusals each, 30 in all; 40 served; 70 requests.
    let exponential = by_strategy(&results, "exponential");
    always(exponential, "refused", 30.0);
    always(exponential, "requests", 70.0);
    // Jitter only spreads clients that share one bucket: fewer or equal requests without it,
    // on average over the replicates.
    let jitter = by_strategy(&results, "full-jitter");
    assert!(
        exponential["over_replicates"]["requests"]["mean"].as_f64()
            <= jitter["over_replicates"]["requests"]["mean"].as_f64()
    );
    for r in &results {
        assert_eq!(r["succeeded"], 40, "{}", r["strategy"]);
        assert_eq!(r["completed"], 5, "{}", r["strategy"]);
    }
}

#[test]
fn each_client_finish_time_worked_out_by_hand() {
    // Three clients behind one address, 1 request per 10 s (precise store), fixed 1 s waits.
    // t = 0: client 0 served and done; 1 and 2 refused. They retry together every second
    // (client 1's retry scheduled first each time, so first in FIFO) until the window closes
    // at 10 s: client 1 served at 10 s, client 2 refused and served when the next window
    // closes, at 20 s. Requests 1 + 11 + 21 = 33, of which 0 + 10 + 20 = 30 refused.
    let args = [
        "--clients",
        "3",
        "--clients-per-address",
        "3",
        "--server",
        "fixed-window",
        "--limit",
        "1",
        "--window",
        "10s",
        "--store",
        "precise",
        "--strategy",
        "fixed",
        "--retries",
        "100",
    ];
    let results = json_of(&args);
    let r = &results[0];
    assert_eq!(r["client_finish_s"], serde_json::json!([0.0, 10.0, 20.0]));
    assert_eq!(
        (r["requests"].as_u64(), r["refused"].as_u64()),
        (Some(33), Some(30))
    );
    assert_eq!(r["finish_spread_s"].as_f64(), Some(20.0));
    let table = String::from_utf8(run(&args).stdout).unwrap();
    let row = table
        .lines()
        .skip_while(|l| !l.starts_with("each client's finish"))
        .find(|l| l.starts_with("fixed"))
        .expect("a row of finishes under the table");
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["fixed", "0s", "10s", "20s"]
    );
    // Too many clients to list: absent, not truncated.
    let many = json_of(&["--clients", "10001", "--strategy", "fixed"]);
    assert!(many[0].get("client_finish_s").is_none());
}

#[test]
fn the_table_prints_ours_beside_the_published_figures() {
    let out = run(&["--config", ONE_CLIENT]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("beside the published figures"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("reset-aware") && l.contains(" refused "))
        .expect("a reset-aware refused row");
    // ours 11 (every replicate), published 11: whole counts, difference 0 without a sign.
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[cells.len() - 3..], ["11", "11", "0"], "{line}");
}

#[test]
fn hidden_headers_make_header_strategies_fall_back_to_backoff() {
    let results = json_of(&[
        "--config",
        ONE_CLIENT,
        "--headers-visible",
        "false",
        "--replicates",
        "1",
    ]);
    let exponential = by_strategy(&results, "exponential");
    for name in ["retry-after", "reset-aware"] {
        let r = by_strategy(&results, name);
        for figure in ["requests", "refused", "finish_s"] {
            assert_eq!(r[figure], exponential[figure], "{name} {figure}");
        }
    }
}

#[test]
fn all_adds_the_header_strategies_only_when_the_server_sends_headers() {
    let limited = json_of(&[
        "--server",
        "fixed-window",
        "--clients",
        "3",
        "--strategy",
        "all",
    ]);
    assert_eq!(limited.len(), 9);
    let down = json_of(&["--clients", "3", "--strategy", "all"]);
    assert_eq!(down.len(), 6);
    let hidden = json_of(&[
        "--server",
        "fixed-window",
        "--headers-visible",
        "false",
        "--clients",
        "3",
        "--strategy",
        "all",
    ]);
    assert_eq!(hidden.len(), 6);
}

#[test]
fn max_delay_caps_every_strategy() {
    // Refused at 3.3 s with Retry-After 57 s; capped at 5 s the client comes back at 8.41 s
    // and every 5.11 s after: 12 refusals (3.30, 8.41, …, 59.51). At 59.51 s Retry-After is
    // 60 − 59 = 1 s (under the cap): refused again at 60.62 s, then Retry-After 0 at 60.73,
    // 60.84 and 60.95 s while the key lives until 61 s; 61.06 s is served. 16 refusals.
    let results = json_of(&[
        "--config",
        ONE_CLIENT,
        "--strategy",
        "retry-after",
        "--max-delay",
        "5s",
        "--replicates",
        "1",
    ]);
    assert_eq!(results[0]["refused"], 16);
}

#[test]
fn bad_limiter_input_gets_one_clear_error() {
    for (args, words) in [
        (
            &["--server", "fixed-window", "--limit", "0"][..],
            &["--limit", "at least 1"][..],
        ),
        (
            &["--server", "sliding-window", "--window", "0s"],
            &["--window", "positive"],
        ),
        (
            &["--server", "token-bucket", "--capacity", "0"],
            &["--capacity"],
        ),
        (
            &["--server", "token-bucket", "--refill", "0"],
            &["--refill"],
        ),
        (
            &["--server", "token-bucket", "--refill-interval", "0s"],
            &["--refill-interval"],
        ),
        (&["--items", "0"], &["--items"]),
        (&["--latency", "-5ms"], &["--latency", "negative"]),
        (&["--latency", "uniform:9ms..2ms"], &["--latency", "HIGH"]),
        (
            &["--server", "leaky-bucket"],
            &["leaky-bucket", "fixed-window"],
        ),
        (&["--headers", "fractional"], &["--headers", "exact"]),
        (&["--store", "redis"], &["--store", "precise"]),
        (
            &["--server", "fixed-window", "--epoch-phase", "1.5s"],
            &["--epoch-phase", "below one second"],
        ),
        (
            &["--server", "fixed-window", "--clients-per-address", "0"],
            &["--clients-per-address"],
        ),
        (&["--limit", "5"], &["--limit", "server down"]),
        (
            &["--recover-at", "5s", "--server", "token-bucket"],
            &["--recover-at"],
        ),
        (
            &["--clients", "5", "--pool", "3"],
            &["--pool", "one item per client"],
        ),
        (&["--items", "2", "--pool", "30"], &["--pool", "not both"]),
        (
            &["--clients", "5", "--pool", "20", "--engine", "independent"],
            &["--engine", "--pool"],
        ),
        (
            &["--server", "fixed-window", "--engine", "independent"],
            &["--engine"],
        ),
    ] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            stderr.starts_with("error:") && !stderr.contains("panicked"),
            "{stderr}"
        );
        for word in words {
            assert!(
                stderr.contains(word),
                "{args:?} should mention {word}: {stderr}"
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[server]\nmodel = \"fixed-window\"\nwindow = \"0s\"\n",
    )
    .unwrap();
    let out = run(&["--config", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--window"));
    std::fs::write(
        &path,
        "[server]\nmodel = \"fixed-window\"\nstroe = \"precise\"\n",
    )
    .unwrap();
    let out = run(&["--config", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stroe"));
}

#[test]
fn replicated_limiter_runs_are_byte_identical_whatever_the_threads() {
    let out = |threads: &str| {
        let o = run(&[
            "--config",
            FIVE_CLIENTS,
            "--format",
            "json",
            "--threads",
            threads,
        ]);
        assert!(o.status.success());
        o.stdout
    };
    assert_eq!(out("1"), out("2"));
}
