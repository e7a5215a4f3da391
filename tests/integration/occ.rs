//! Integration tests of the `occ` server (Brooker 2015's contention model) through the real
//! binary: the shipped config, determinism over thread counts, and bad input.

use assert_cmd::Command;
use serde_json::Value;

const CONFIG: &str = "configs/occ-contention.toml";

fn herd() -> Command {
    Command::cargo_bin("herd-sim").unwrap()
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = herd().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs with `args`, expects an `error:` naming `flag` on the first line, exit 2, nothing on
/// stdout; returns stderr.
fn refused(args: &[&str], flag: &str) -> String {
    let out = herd().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(stderr.starts_with("error:"), "{stderr}");
    assert!(
        stderr.lines().next().unwrap().contains(flag),
        "{flag} in {stderr}"
    );
    stderr
}

/// [`refused`], and the error is that one line (a scenario error, not clap's usage text).
fn refused_in_one_line(args: &[&str], flag: &str) {
    let stderr = refused(args, flag);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn the_shipped_config_runs_the_study_and_conserves_writes() {
    let out = ok(&["--config", CONFIG, "--clients", "50", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    for r in results {
        let (attempts, refused) = (r["attempts"].as_u64(), r["refused"].as_u64());
        assert_eq!(attempts, r["requests"].as_u64(), "{r}");
        assert_eq!(
            attempts.unwrap(),
            50 + refused.unwrap(),
            "{}",
            r["strategy"]
        );
        assert_eq!(r["succeeded"], 50);
        assert!(r["server"].as_str().unwrap().contains("normal:10ms,2ms"));
    }
    // The other servers' JSON has no `attempts`.
    let down: Value = serde_json::from_slice(&ok(&["--clients", "5", "--format", "json"])).unwrap();
    assert!(down["results"][0].get("attempts").is_none());
}

#[test]
fn same_seed_same_bytes_for_one_and_two_threads() {
    let run = |threads: &str| {
        ok(&[
            "--config",
            CONFIG,
            "--clients",
            "200",
            "--format",
            "json",
            "--threads",
            threads,
        ])
    };
    assert_eq!(run("1"), run("2"));
    let sweep = |threads: &str| {
        ok(&[
            "sweep",
            "--config",
            CONFIG,
            "--clients",
            "20,60",
            "--seeds",
            "3",
            "--aggregate",
            "--threads",
            threads,
        ])
    };
    let one = sweep("1");
    assert_eq!(one, sweep("2"));
    let text = String::from_utf8(one).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert!(header.contains(&"attempts_mean") && header.contains(&"finish_s_mean"));
    assert_eq!(text.lines().count(), 1 + 2 * 5);
}

#[test]
fn occ_flags_elsewhere_and_other_flags_with_occ_are_refused() {
    // The network delay is each direction of the call loop for other servers, and cannot be
    // given with their round-trip --latency.
    refused_in_one_line(
        &["--network-delay", "10ms", "--latency", "20ms"],
        "--network-delay",
    );
    refused_in_one_line(
        &[
            "--server",
            "token-bucket",
            "--latency",
            "20ms",
            "--network-delay",
            "normal:10ms,2ms",
        ],
        "--network-delay",
    );
    // The call loop's keys are refused with occ.
    refused_in_one_line(&["--server", "occ", "--timeout", "1s"], "--timeout");
    // Other servers' flags given to occ.
    refused_in_one_line(&["--server", "occ", "--recover-at", "5s"], "--recover-at");
    refused_in_one_line(&["--server", "occ", "--limit", "10"], "--limit");
    refused_in_one_line(&["--server", "occ", "--capacity", "3"], "--capacity");
    refused_in_one_line(&["--server", "occ", "--latency", "110ms"], "--latency");
    refused_in_one_line(&["--server", "occ", "--items", "3"], "--items");
    refused_in_one_line(&["--server", "occ", "--pool", "2000"], "--pool");
    refused_in_one_line(&["--config", CONFIG, "--recover-at", "1s"], "--recover-at");
    // A malformed delay (clap's parse error; its rendering is the command line's).
    refused(
        &["--server", "occ", "--network-delay", "normal:10ms"],
        "--network-delay",
    );
    // The independent path cannot run clients that interact.
    refused_in_one_line(&["--server", "occ", "--engine", "independent"], "--engine");
}
