//! Retry control through the binary: the `flaky` server and `--budget`, their refusals (one
//! `error:` line naming the flag, the value and what is accepted; exit 2; nothing written), and
//! results that do not depend on the thread count.

use crate::herd_sim as herd;
use crate::herd_sim_ok as ok;

#[test]
fn bad_budgets_and_failure_rates_are_one_line_naming_the_flag() {
    let cases: [(&[&str], &str); 13] = [
        (
            &["--server", "flaky", "--breaker", "retries:ratio=1.5"],
            "error: invalid --breaker: retries:ratio=1.5; ratio=1.5 is out of range; accepted: ratio above 0 and at most 1",
        ),
        (
            &["--server", "flaky", "--breaker", "retries:open=5s"],
            "`open` is a parameter of calls, not of retries",
        ),
        (
            &["--server", "flaky", "--throttle", "adaptive"],
            "error: invalid --throttle: adaptive; accepted: none, sre, aws-adaptive",
        ),
        (
            &["--server", "flaky", "--budget", "gprc"],
            "error: invalid --budget: gprc; accepted: none, token-bucket, grpc, aws-standard, envoy, finagle",
        ),
        (
            &["--server", "flaky", "--budget", "aws-standard:capacity=0"],
            "error: invalid --budget: aws-standard:capacity=0; capacity=0 is out of range; accepted: capacity a whole number from 1 to",
        ),
        (
            &["--server", "flaky", "--budget", "envoy:percent=-1"],
            "error: invalid --budget: envoy:percent=-1; percent=-1 is out of range; accepted: percent from 0 to 100",
        ),
        (
            &["--server", "flaky", "--budget", "grpc:capacity=5"],
            "`capacity` is a parameter of token-bucket, aws-standard, not of grpc; accepted: grpc:max_tokens=..,token_ratio=..",
        ),
        (
            &["--server", "flaky", "--failure-rate", "1.5"],
            "error: invalid --failure-rate: 1.5; accepted: a probability from 0 to 1",
        ),
        (
            &["--failure-rate", "0.2"],
            "error: invalid --failure-rate: given for server down; it applies only to a server it configures",
        ),
        (
            &["--server", "occ", "--budget", "grpc"],
            "error: invalid --budget: grpc; accepted with any server but occ",
        ),
        (
            &["--preset", "hystrix"],
            "error: invalid --preset: hystrix; accepted: aws-standard, aws-adaptive, grpc, envoy, finagle, polly, resilience4j, axios-retry, tenacity",
        ),
        (
            &["--server", "occ", "--preset", "aws-adaptive"],
            "error: invalid --preset: aws-adaptive; it sets --budget aws-standard and --throttle aws-adaptive, which --server occ does not take; accepted with occ: polly, resilience4j, axios-retry, tenacity",
        ),
        (
            &["--preset", "polly", "--cap", "1s"],
            "error: invalid --cap: 1s; accepted: a duration at least --base (2s)",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    for (args, expected) in cases {
        let output = herd().args(args).arg("--out").arg(&out).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty() && !out.exists(), "{args:?}");
    }
}

#[test]
fn a_budgeted_flaky_run_is_the_same_on_one_and_two_threads() {
    let run = |threads: &str, budget: &str| {
        ok(&[
            "--server",
            "flaky",
            "--failure-rate",
            "0.4",
            "--clients",
            "20",
            "--arrivals",
            "poisson",
            "--rate",
            "400/s",
            "--duration",
            "5s",
            "--network-delay",
            "exp:10ms",
            "--strategy",
            "naive,full-jitter",
            "--base",
            "10ms",
            "--retries",
            "3",
            "--format",
            "csv",
            "--threads",
            threads,
            "--budget",
            budget,
        ])
    };
    for budget in [
        "none",
        "token-bucket",
        "grpc",
        "aws-standard",
        "envoy",
        "finagle",
    ] {
        let one = run("1", budget);
        assert_eq!(one, run("2", budget), "{budget}");
        assert!(one.len() > 100, "{budget}");
    }
    // A budget changes the run: fewer requests than with none (retries are denied).
    let requests = |csv: Vec<u8>| -> u64 {
        let text = String::from_utf8(csv).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let column = header.iter().position(|c| *c == "requests").unwrap();
        lines
            .map(|l| l.split(',').nth(column).unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert!(requests(run("1", "grpc")) < requests(run("1", "none")));
}

#[test]
fn the_series_counts_denied_retries_and_local_rejections_as_the_summary_does() {
    // A flaky server (60 % failures) with gRPC's budget (denies retries) and the classic
    // breaker (rejects calls once open): the JSON series and the --series-out CSV each sum to
    // the summary's retries_denied and calls_rejected_locally.
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("series.csv");
    let args = "--server flaky --failure-rate 0.6 --clients 10 --arrivals poisson --rate 200/s \
                --duration 30s --network-delay exp:10ms --strategy naive,full-jitter --base 10ms \
                --retries 3 --budget grpc --breaker calls --format json --series-out";
    let output = herd()
        .args(args.split_whitespace())
        .arg(&csv_path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    for r in report["results"].as_array().unwrap() {
        let name = r["strategy"].as_str().unwrap();
        for (column, total) in [
            ("retries_denied", "retries_denied"),
            ("rejected_locally", "calls_rejected_locally"),
        ] {
            let total = r[total].as_u64().unwrap();
            assert!(total > 0, "{name} {column}: the run must exercise it");
            let json: u64 = r["series"][column]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .sum();
            let from_csv: u64 = rows
                .iter()
                .filter(|row| row[0] == name)
                .map(|row| row[at(column)].parse::<u64>().unwrap())
                .sum();
            assert_eq!((json, from_csv), (total, total), "{name} {column}");
        }
    }
}

#[test]
fn presets_lie_under_config_keys_and_flags() {
    // The config file names grpc (3 retries, base 100ms, cap 1s, budget grpc) and sets 5
    // retries; a flag sets the cap. The run's header shows each layer's value.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("preset.toml");
    std::fs::write(&config, "preset = \"grpc\"\nretries = 5\n").unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--server",
            "flaky",
            "--failure-rate",
            "0.5",
            "--clients",
            "10",
        ];
        args.extend(extra);
        String::from_utf8(ok(&args)).unwrap()
    };
    let config_arg = config.to_str().unwrap();
    let table = run(&["--config", config_arg, "--cap", "2s"]);
    assert!(
        table.contains("5 retries, base 0.1s, cap 2s, multiplier 2"),
        "{table}"
    );
    assert!(
        table.contains("retries denied"),
        "the preset's budget: {table}"
    );
    // --preset replaces the file's preset; the file's retries still win over it.
    let table = run(&["--config", config_arg, "--preset", "resilience4j"]);
    assert!(table.contains("5 retries, base 0.5s"), "{table}");
    assert!(!table.contains("retries denied"), "no budget: {table}");
    // Without a preset, herd-sim's defaults.
    let table = run(&[]);
    assert!(table.contains("4 retries, base 1s, cap 30s"), "{table}");
}
