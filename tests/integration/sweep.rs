//! Integration tests of the sweep capability: the real binary, its files and its errors.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::herd_sim as herd;

/// Runs `herd-sim sweep ARGS`, asserting success and a quiet stderr (not a terminal: no bar).
fn sweep(args: &[&str]) -> Vec<u8> {
    let output = herd().arg("sweep").args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "stderr is not a terminal: no bar");
    output.stdout
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn column(csv: &str, name: &str) -> usize {
    csv.lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

const GRID: [&str; 8] = [
    "--clients",
    "100,1000",
    "--strategy",
    "all",
    "--retries",
    "2..3",
    "--seeds",
    "3",
];

#[test]
fn output_is_byte_identical_for_any_thread_count_and_destination() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.csv");
    let two = dir.path().join("two.csv");
    let mut args = GRID.to_vec();
    args.extend(["--threads", "1", "--out", one.to_str().unwrap()]);
    assert!(sweep(&args).is_empty(), "stdout stays clean with --out");
    let mut args = GRID.to_vec();
    args.extend(["--threads", "2", "--out", two.to_str().unwrap()]);
    sweep(&args);
    let stdout = sweep(&GRID);
    let file = fs::read(&one).unwrap();
    assert_eq!(file, fs::read(&two).unwrap());
    assert_eq!(file, stdout);
    // 2 client counts × 6 strategies × 2 retry counts × 3 seeds, and a header.
    assert_eq!(text(&file).lines().count(), 2 * 6 * 2 * 3 + 1);
    assert!(!dir.path().join(".one.csv.pending").exists());
}

#[test]
fn a_cell_gives_the_same_numbers_in_any_sweep_and_in_a_plain_run() {
    let big = text(&sweep(&GRID));
    let small = text(&sweep(&[
        "--clients",
        "1000",
        "--strategy",
        "full-jitter",
        "--retries",
        "3",
        "--seeds",
        "3",
    ]));
    let rows: Vec<&str> = small.lines().skip(1).collect();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert!(
            big.lines().any(|line| line == *row),
            "{row} not in the grid"
        );
    }
    // A row's seed reproduces the row in a plain run.
    let fields: Vec<&str> = rows[1].split(',').collect();
    let seed = fields[column(&small, "seed")];
    let plain = text(
        &herd()
            .args(["--clients", "1000", "--strategy", "full-jitter"])
            .args(["--retries", "3", "--seed", seed, "--format", "csv"])
            .output()
            .unwrap()
            .stdout,
    );
    let plain_row: Vec<&str> = plain.lines().nth(1).unwrap().split(',').collect();
    for metric in ["peak", "windows", "span_s", "total"] {
        assert_eq!(
            plain_row[column(&plain, metric)],
            fields[column(&small, metric)],
            "{metric}"
        );
    }
}

#[test]
fn aggregate_rows_summarise_the_tidy_rows() {
    let args = [
        "--clients",
        "300",
        "--strategy",
        "equal-jitter",
        "--seeds",
        "5",
    ];
    let tidy = text(&sweep(&args));
    let mut with_aggregate = args.to_vec();
    with_aggregate.push("--aggregate");
    let aggregate = text(&sweep(&with_aggregate));
    let peak = column(&tidy, "peak");
    let peaks: Vec<f64> = tidy
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(peak).unwrap().parse().unwrap())
        .collect();
    let row: Vec<&str> = aggregate.lines().nth(1).unwrap().split(',').collect();
    let get = |name: &str| -> f64 { row[column(&aggregate, name)].parse().unwrap() };
    let mean = peaks.iter().sum::<f64>() / 5.0;
    assert!((get("peak_mean") - mean).abs() < 1e-9);
    let min = peaks.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(get("peak_min"), min);
    assert!(get("peak_ci95_low") <= mean && mean <= get("peak_ci95_high"));
    // Every retry is counted: 300 clients × 4 retries, whatever the seed.
    assert_eq!(get("total_sd"), 0.0);
    assert_eq!(get("total_mean"), 1200.0);
    assert_eq!(aggregate.lines().count(), 2);
}

#[test]
fn a_config_file_sweep_table_equals_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("grid.toml");
    fs::write(
        &config,
        "cap = \"10s\"\n[sweep]\nclients = [100, 200]\nbase = \"100ms..300ms step 100ms\"\nstrategy = \"fixed,full-jitter\"\nseeds = 2\n",
    )
    .unwrap();
    let from_file = sweep(&["--config", config.to_str().unwrap()]);
    let from_flags = sweep(&[
        "--cap",
        "10s",
        "--clients",
        "100,200",
        "--base",
        "100ms..300ms",
        "step",
        "100ms",
        "--strategy",
        "fixed,full-jitter",
        "--seeds",
        "2",
    ]);
    assert_eq!(from_file, from_flags);
    assert_eq!(text(&from_file).lines().count(), 2 * 2 * 3 * 2 + 1);
    // A flag overrides the table's entry for the same parameter.
    let overridden = text(&sweep(&[
        "--config",
        config.to_str().unwrap(),
        "--clients",
        "50",
    ]));
    assert_eq!(overridden.lines().count(), 2 * 3 * 2 + 1);
}

fn data_rows(path: &Path) -> usize {
    fs::read_to_string(path)
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

#[test]
fn a_killed_sweep_resumes_to_the_uninterrupted_file() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.csv");
    let cut = dir.path().join("cut.csv");
    // 102 rows of 50 000 to 100 000 clients: long enough to be killed part-way.
    let grid = [
        "--clients",
        "50000..100000 step 1000",
        "--strategy",
        "full-jitter,equal-jitter",
        "--threads",
        "2",
    ];
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_herd-sim"))
        .arg("sweep")
        .args(grid)
        .args(["--out", cut.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while data_rows(&cut) < 3 && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL: no chance to tidy up
    child.wait().unwrap();
    let partial = fs::read_to_string(&cut).unwrap();
    let done = partial.lines().count() - 1;
    assert!((3..102).contains(&done), "killed after {done} rows");
    // Valid CSV at the instant of the kill: whole lines, each as wide as the header.
    let width = partial.lines().next().unwrap().split(',').count();
    assert!(partial.ends_with('\n'));
    assert!(partial.lines().all(|l| l.split(',').count() == width));

    let mut resume = vec!["sweep"];
    resume.extend(grid);
    resume.extend(["--out", cut.to_str().unwrap(), "--resume"]);
    herd().args(&resume).assert().success();
    let mut uninterrupted = vec!["sweep"];
    uninterrupted.extend(grid);
    uninterrupted.extend(["--out", whole.to_str().unwrap()]);
    herd().args(&uninterrupted).assert().success();
    assert_eq!(fs::read(&cut).unwrap(), fs::read(&whole).unwrap());
    assert_eq!(data_rows(&cut), 102);
    assert!(!dir.path().join(".cut.csv.pending").exists());

    // Resuming a finished sweep changes nothing; resuming with another grid is refused.
    herd().args(&resume).assert().success();
    assert_eq!(fs::read(&cut).unwrap(), fs::read(&whole).unwrap());
    let other = herd()
        .args(["sweep", "--clients", "10,20", "--resume", "--out"])
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2));
    assert!(text(&other.stderr).contains("cannot resume"));
    assert_eq!(fs::read(&cut).unwrap(), fs::read(&whole).unwrap());
}

#[test]
fn bad_input_gets_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.csv");
    let cases: [(&[&str], &str); 8] = [
        (&["--clients", ","], "empty value"),
        (&["--retries", "8..2"], "reversed range"),
        (&["--base", "1s..2s step 0s"], "zero step"),
        (&["--strategy", "fixed,slow"], "unknown strategy `slow`"),
        (&["--clients", "1..20000"], "--max-cells 20000"),
        (&["--cap", "100ms,1s", "--base", "500ms"], "--cap"),
        (&["--seeds", "0"], "--seeds"),
        (&["--clients", "10..20", "step"], "not a whole number"),
    ];
    for (args, expected) in cases {
        let output = herd()
            .arg("sweep")
            .args(args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} left a file");
    }
    // An unknown parameter: on the command line clap refuses it, in a file we do.
    let output = herd().args(["sweep", "--clinets", "5"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let config = dir.path().join("bad.toml");
    fs::write(&config, "[sweep]\nclinets = [5]\n").unwrap();
    let output = herd()
        .args(["sweep", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("unknown sweep parameter `clinets`"));
}

#[test]
fn a_non_finite_scenario_key_in_a_sweep_file_is_refused_as_a_plain_run_refuses_it() {
    // TOML has nan and inf; a sweep file's scenario keys once went through JSON, which has
    // neither, and came back unset: the sweep ran the default instead of refusing.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.csv");
    for (key, flag) in [
        ("multiplier = nan", "--multiplier"),
        ("retry_probability = inf", "--retry-probability"),
        ("hidden = -inf", "--hidden"),
    ] {
        let config = dir.path().join("scenario.toml");
        fs::write(&config, format!("{key}\n[sweep]\nclients = [10, 20]\n")).unwrap();
        for command in [&["sweep"][..], &[]] {
            let output = herd()
                .args(command)
                .arg("--config")
                .arg(&config)
                .arg("--out")
                .arg(&out)
                .output()
                .unwrap();
            let stderr = text(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{command:?} {key}: {stderr}");
            assert!(
                stderr.starts_with("error: ") && stderr.contains(flag),
                "{command:?} {key}: {stderr}"
            );
            assert_eq!(stderr.lines().count(), 1, "{key}: {stderr}");
            assert!(!out.exists(), "{key} left a file");
        }
    }
}

#[test]
fn an_unwritable_output_fails_before_simulating() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("a-file");
    fs::write(&blocker, "").unwrap();
    // A grid that would take hours, allowed: the error must come first.
    let output = herd()
        .args(["sweep", "--clients", "10000000", "--seeds", "100000"])
        .args(["--max-requests", "10000000000000", "--yes"])
        .arg("--out")
        .arg(blocker.join("sweep.csv"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.starts_with("error: invalid --out"), "{stderr}");
}

#[test]
fn token_bucket_and_phase_parameters_vary_and_fill_their_columns() {
    // A bucket of 2 tokens refilled 1 per 10 s, 1 client fetching 4 items with 1 s of
    // latency and a fixed 1 s backoff: with capacity 2, two items pass at once and each later
    // one waits for a token; with capacity 4 nothing is refused.
    let out = sweep(&[
        "--server",
        "token-bucket",
        "--capacity",
        "2,4",
        "--refill",
        "1",
        "--refill-interval",
        "10s",
        "--epoch-phase",
        "0ms,500ms",
        "--clients",
        "1",
        "--items",
        "4",
        "--latency",
        "1s",
        "--strategy",
        "fixed",
        "--retries",
        "100",
        "--seeds",
        "1",
        "--out",
        "-",
    ]);
    let mut reader = csv::Reader::from_reader(&out[..]);
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 4);
    let cells: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (&r[col("capacity")], &r[col("epoch_phase_s")]))
        .collect();
    assert_eq!(cells, [("2", "0"), ("2", "0.5"), ("4", "0"), ("4", "0.5")]);
    for r in &rows {
        assert_eq!(&r[col("refill_interval_s")], "10");
        let requests: u64 = r[col("requests")].parse().unwrap();
        let refused: u64 = r[col("refused")].parse().unwrap();
        assert_eq!(requests - refused, 4, "every item served once");
        if &r[col("capacity")] == "4" {
            assert_eq!(refused, 0);
        } else {
            assert!(refused > 0);
        }
    }
}
