//! Integration tests of the fixture capability: `herd-sim fixture` driven as a user would, on
//! configs/scenarios.json and on small files written to a temporary folder. Expected figures are
//! worked by hand from the rules of docs/fixture.md (exponential, base 1 s: waits 1 s, 2 s, 4 s, …).

use std::path::PathBuf;

use crate::cmd::prelude::*;
use serde_json::Value;

use crate::herd_sim;

fn scenarios_json() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/scenarios.json")
}

/// Writes `text` to a file in a fresh temporary folder (kept alive by the returned guard).
fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fixture.json");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn json_of(args: &[&str]) -> Value {
    serde_json::from_slice(&crate::herd_sim_ok(args)).unwrap()
}

#[test]
fn the_shipped_scenarios_give_the_specs_figures_and_pass_their_check() {
    let path = scenarios_json();
    let report = json_of(&["fixture", path.to_str().unwrap(), "--format", "json"]);
    let rows: Vec<(String, u64, f64, String, String, Value)> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["attempts"].as_u64().unwrap(),
                s["delay_s"].as_f64().unwrap(),
                s["result"].as_str().unwrap().to_string(),
                s["disposition"].as_str().unwrap().to_string(),
                s["would_reach_s"].clone(),
            )
        })
        .collect();
    let expected = [
        (
            "throttle-then-success",
            3,
            3.0,
            "completed",
            "replay-safe",
            Value::Null,
        ),
        (
            "throttle-past-deadline",
            3,
            3.0,
            "deadline-exceeded",
            "replay-safe",
            7.0.into(),
        ),
        (
            "unsafe-replay",
            1,
            0.0,
            "refused",
            "unsafe-replay",
            Value::Null,
        ),
    ]
    .map(|(id, a, d, r, p, w)| (id.to_string(), a, d, r.to_string(), p.to_string(), w));
    assert_eq!(rows, expected);
    assert!(report["scenarios"][0]["seed"].is_u64());

    herd_sim()
        .args(["fixture", path.to_str().unwrap(), "--check"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "check: 3 of 3 scenarios met their expectations",
        ))
        .stdout(predicate::str::contains(
            "deadline-exceeded  replay-safe    7s",
        ));
}

#[test]
fn a_missed_expectation_prints_each_field_and_fails() {
    let (_dir, path) = file(
        r#"{"scenarios": [
            {"id": "ok", "responses": ["success"], "retry_limit": 1, "deadline": 0,
             "idempotent": false, "expect": {"attempts": 1, "result": "completed"}},
            {"id": "stacked", "responses": ["503"], "retry_limit": 3, "deadline": 100,
             "idempotent": true, "layers": [{"name": "sdk", "retry_limit": 3}],
             "expect": {"attempts": 3, "delay_s": 3, "result": "retry-limit-exhausted"}}
        ]}"#,
    );
    herd_sim()
        .args(["fixture", path.to_str().unwrap(), "--check"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "mismatch attempts: expected 3, got 9",
        ))
        .stdout(predicate::str::contains(
            "mismatch delay_s: expected 3.0, got 12.0",
        ))
        .stdout(predicate::str::contains("mismatch result").not())
        .stdout(predicate::str::contains(
            "layers: application 3 attempts (limit 3 per call, worst case 3) -> sdk 9 attempts (limit 3 per call, worst case 9)",
        ))
        .stderr("error: 1 of 2 scenarios did not meet their expectations\n");
    // Without --check the same file is only reported.
    herd_sim()
        .args(["fixture", path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("mismatch").not());
}

#[test]
fn seeded_jitter_is_byte_identical_across_runs_and_differs_between_seeds() {
    let text = |seed: u64| {
        format!(
            r#"{{"policy": {{"strategy": "full-jitter", "base": "1s", "cap": "30s", "seed": {seed}}},
                "scenarios": [{{"id": "jittered", "responses": ["429", "429", "429", "success"],
                "retry_limit": 5, "deadline": 60, "idempotent": true}}]}}"#
        )
    };
    let run = |seed: u64| {
        let (_dir, path) = file(&text(seed));
        let out = herd_sim()
            .args(["fixture", path.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let first = run(7);
    assert_eq!(first, run(7));
    assert_ne!(first, run(8));
    let report: Value = serde_json::from_slice(&first).unwrap();
    let s = &report["scenarios"][0];
    assert_eq!(s["seed"], 7);
    assert_eq!(s["attempts"], 4);
    // Three full-jitter waits, each below e_k: under 1 + 2 + 4 = 7 s.
    let delay = s["delay_s"].as_f64().unwrap();
    assert!(delay < 7.0, "{delay}");
}

#[test]
fn bad_input_gets_one_clear_line_and_exit_2() {
    let good =
        r#"{"id": "a", "responses": ["429"], "retry_limit": 3, "deadline": 1, "idempotent": true}"#;
    let cases = [
        (
            "{\"scenarios\": [\n  {\"id\": \"a\" \"responses\": []}]}".to_string(),
            "line 2 column",
        ),
        (
            r#"{"scenarios": [{"id": "a", "responses": ["429"], "deadline": 1, "idempotent": true}]}"#
                .to_string(),
            "missing field `retry_limit`",
        ),
        (
            format!(r#"{{"scenarios": [{good}], "extra": 1}}"#),
            "unknown field `extra`",
        ),
        (
            format!(r#"{{"scenarios": [{}]}}"#, good.replace("\"429\"", "\"418\"")),
            "unknown response `418`",
        ),
        (
            format!(
                r#"{{"scenarios": [{}]}}"#,
                good.replace("\"retry_limit\": 3", "\"retry_limit\": 0")
            ),
            "scenario `a`: invalid retry_limit: 0",
        ),
        (
            format!(
                r#"{{"scenarios": [{}]}}"#,
                good.replace("\"deadline\": 1", "\"deadline\": -5")
            ),
            "scenario `a`: invalid deadline: -5",
        ),
        (
            format!(r#"{{"scenarios": [{good}, {good}]}}"#),
            "duplicate scenario id `a`",
        ),
        (
            // One policy, one strategy: `all` is not offered.
            format!(r#"{{"policy": {{"strategy": "all"}}, "scenarios": [{good}]}}"#),
            "unknown strategy `all`; accepted: naive, fixed, exponential, full-jitter, \
             equal-jitter, decorrelated-jitter, retry-after, reset-aware, retry-after-jitter at",
        ),
    ];
    for (text, message) in cases {
        let (_dir, path) = file(&text);
        let out = herd_sim()
            .args(["fixture", path.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{message}: {stderr}");
        assert!(out.stdout.is_empty(), "{message}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "expected `{message}` in {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // --check on a scenario without expect block is bad input too.
    let (_dir, path) = file(&format!(r#"{{"scenarios": [{good}]}}"#));
    herd_sim()
        .args(["fixture", path.to_str().unwrap(), "--check"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("scenario `a` has none"));
}
