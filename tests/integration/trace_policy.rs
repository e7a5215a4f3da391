//! `herd-sim trace-policy`: the golden trace of every preset in `docs/traces/` is what the
//! binary prints (scripts/policy-traces.sh writes them), a gRPC trace checked line by line
//! against the A6 throttling rules worked by hand, `--out` and `-` giving the same bytes, and
//! bad input refused in one line with nothing written.

use herd_sim::config::PRESETS;

use crate::{herd_sim as herd, herd_sim_ok};

fn text(args: &[&str]) -> String {
    String::from_utf8(herd_sim_ok(args)).unwrap()
}

#[test]
fn every_presets_golden_trace_is_what_the_binary_prints() {
    for preset in PRESETS {
        let path = format!("docs/traces/{}.txt", preset.name);
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (scripts/policy-traces.sh writes it)"));
        let printed = text(&["trace-policy", "--preset", preset.name]);
        assert!(
            printed == committed,
            "{path} is not what `herd-sim trace-policy --preset {}` prints: run scripts/policy-traces.sh",
            preset.name
        );
        // Its header names the preset's upstream source.
        assert!(committed.starts_with(&format!("# preset {}: {}\n", preset.name, preset.source)));
    }
    let files = std::fs::read_dir("docs/traces").unwrap().count();
    assert_eq!(
        files,
        PRESETS.len(),
        "docs/traces holds a file per preset, no more"
    );
}

/// The table's rows as (attempt, outcome, budget, delay, decision) cells.
fn rows(trace: &str) -> Vec<Vec<String>> {
    trace
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            cells.iter().map(|c| c.to_string()).collect()
        })
        .collect()
}

#[test]
fn a_grpc_trace_follows_a6_throttling_by_hand() {
    // gRPC A6: 10 tokens; every failed attempt takes 1; a retry only while tokens > 5 after
    // the decrement; a success gives 0.1 back. The preset retries 3 times with full jitter,
    // base 100 ms, cap 1 s: retry k waits at most min(1 s, 0.1 s · 2^(k-1)).
    // Call 1: 10→9 (retry 1), 9→8 (retry 2), 8→7 (retry 3), 7→6 (retries spent);
    // call 2: 6→5, not above 5: denied though the strategy drew its delay; call 3 succeeds: 5.1.
    let trace = text(&[
        "trace-policy",
        "--preset",
        "grpc",
        "--outcomes",
        "error*5,success",
    ]);
    let rows = rows(&trace);
    let expected = [
        ("1", "1", "error", "10.000 -> 9.000", "retry 1"),
        ("1", "2", "error", "9.000 -> 8.000", "retry 2"),
        ("1", "3", "error", "8.000 -> 7.000", "retry 3"),
        (
            "1",
            "4",
            "error",
            "7.000 -> 6.000",
            "gave up: retries spent",
        ),
        (
            "2",
            "1",
            "error",
            "6.000 -> 5.000",
            "retry 1 denied by the budget",
        ),
        ("3", "1", "success", "5.000 -> 5.100", "call succeeded"),
    ];
    assert_eq!(rows.len(), expected.len(), "{trace}");
    for (row, (call, attempt, outcome, budget, decision)) in rows.iter().zip(expected) {
        assert_eq!(
            (
                row[0].as_str(),
                row[1].as_str(),
                row[3].as_str(),
                row[4].as_str(),
                row[6].as_str()
            ),
            (call, attempt, outcome, budget, decision),
            "{trace}"
        );
    }
    for (k, row) in rows.iter().take(3).enumerate() {
        let delay: f64 = row[5].parse().unwrap();
        let most = (0.1 * 2f64.powi(k as i32)).min(1.0);
        assert!(
            (0.0..most).contains(&delay),
            "retry {}: {delay} not in [0, {most})",
            k + 1
        );
    }
    // Time: answers 100 ms after sending, a retry its delay later, a call 1 s after the last.
    let sent: Vec<f64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
    for k in 1..4 {
        let delay: f64 = rows[k - 1][5].parse().unwrap();
        assert!(
            (sent[k] - (sent[k - 1] + 0.1 + delay)).abs() < 1e-9,
            "{trace}"
        );
    }
    assert!((sent[4] - (sent[3] + 1.1)).abs() < 1e-9 && (sent[5] - (sent[4] + 1.1)).abs() < 1e-9);
}

#[test]
fn out_and_stdout_give_the_same_bytes_and_a_seed_changes_the_draws() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.txt");
    let args = [
        "trace-policy",
        "--strategy",
        "full-jitter",
        "--budget",
        "token-bucket",
    ];
    let stdout = herd_sim_ok(&args);
    let dash = herd_sim_ok(&[&args[..], &["--out", "-"]].concat());
    herd_sim_ok(&[&args[..], &["--out", path.to_str().unwrap()]].concat());
    assert_eq!(stdout, dash);
    assert_eq!(stdout, std::fs::read(&path).unwrap());
    let other = herd_sim_ok(&[&args[..], &["--seed", "7"]].concat());
    assert_ne!(stdout, other);
}

#[test]
fn bad_trace_input_is_one_line_and_writes_nothing() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--outcomes", "error,eror"],
            "error: invalid --outcomes: error,eror; `eror` is not an outcome; accepted:",
        ),
        (
            &["--outcomes", "error*0"],
            "error: invalid --outcomes: error*0; `error*0`: the count must be",
        ),
        (&["--preset", "grcp"], "error: "),
        (
            &["--budget", "grpc:capacity=5"],
            "error: invalid --budget: grpc:capacity=5; `capacity` is a parameter of",
        ),
        (
            &["--latency", "5"],
            "error: invalid --latency: 5; accepted: a duration with a unit",
        ),
        (
            &["--strategy", "jitter"],
            "error: invalid --strategy: jitter; accepted: naive, fixed",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("trace.txt");
    for (args, expected) in cases {
        let output = herd()
            .arg("trace-policy")
            .args(args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty() && !out.exists(), "{args:?}");
    }
}
