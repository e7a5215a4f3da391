//! `herd-sim boundary`: the search's points are the sweep's rows (same seeds, same verdicts),
//! its boundary agrees with a dense grid sweep of the same scenario, its output is the same
//! bytes for any thread count, and every bad input is one `error:` line, exit 2, nothing
//! written.

use std::fs;

use crate::{herd_sim, herd_sim_ok};

const COLLAPSE: &str = "configs/collapse-spike.toml";

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&herd_sim_ok(args)).unwrap()
}

/// Wilson's 95 % interval for `k` of `n`, written out again here (not the library's).
fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z: f64 = 1.959963984540054;
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    (centre - half, centre + half)
}

#[test]
fn the_same_search_is_the_same_bytes_on_one_thread_and_on_two() {
    let config = repo(COLLAPSE);
    for format in ["json", "csv", "table"] {
        let args = |threads: &'static str| {
            vec![
                "boundary",
                "--config",
                config.as_str(),
                "--axis",
                "spike-rate",
                "--range",
                "40..120",
                "--seeds",
                "10",
                "--tolerance",
                "5%",
                "--format",
                format,
                "--threads",
                threads,
            ]
        };
        assert_eq!(herd_sim_ok(&args("1")), herd_sim_ok(&args("2")), "{format}");
    }
}

#[test]
fn every_point_is_the_sweeps_rows_and_its_interval_is_wilsons() {
    let config = repo(COLLAPSE);
    let report = json(&[
        "boundary",
        "--config",
        &config,
        "--axis",
        "spike-rate",
        "--range",
        "40..120",
        "--seeds",
        "10",
        "--tolerance",
        "5%",
        "--strategy",
        "naive",
        "--format",
        "json",
    ]);
    assert_eq!(report["axis"], "spike-rate");
    assert_eq!(
        report["axes"],
        serde_json::json!([{"name": "spike-rate", "unit": "per s", "range": [40.0, 120.0]}])
    );
    assert_eq!(report["level"], 0.5);
    let result = &report["results"][0];
    assert_eq!(result["strategy"], "naive");
    let points = result["points"].as_array().unwrap();
    let mut runs = 0;
    for point in points {
        let value = point["value"].as_f64().unwrap();
        let seeds = point["seeds"].as_u64().unwrap();
        runs += seeds;
        // The sweep of the same cell: its rows' seeds and `stuck` column are the point's.
        let csv = herd_sim_ok(&[
            "sweep",
            "--config",
            &config,
            "--strategy",
            "naive",
            "--spike-rate",
            &value.to_string(),
            "--seeds",
            &seeds.to_string(),
        ]);
        let mut reader = csv::Reader::from_reader(&csv[..]);
        let header = reader.headers().unwrap().clone();
        let at = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (seed, stuck) = (at("seed"), at("stuck"));
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let run_seeds: Vec<String> = point["run_seeds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_u64().unwrap().to_string())
            .collect();
        let row_seeds: Vec<String> = rows.iter().map(|r| r[seed].to_string()).collect();
        assert_eq!(run_seeds, row_seeds, "{value}");
        let collapsed_rows: Vec<String> = rows
            .iter()
            .filter(|r| &r[stuck] == "1")
            .map(|r| r[seed].to_string())
            .collect();
        let collapsed: Vec<String> = point["collapsed_seeds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_u64().unwrap().to_string())
            .collect();
        assert_eq!(collapsed, collapsed_rows, "{value}");
        let k = collapsed.len() as f64;
        assert_eq!(point["collapsed"].as_f64().unwrap(), k);
        let (low, high) = match (k as u64, seeds) {
            (0, n) => (0.0, 1.0 - 0.025f64.powf(1.0 / n as f64)),
            (c, n) if c == n => (0.025f64.powf(1.0 / n as f64), 1.0),
            _ => wilson(k, seeds as f64),
        };
        assert!(
            (point["p_low"].as_f64().unwrap() - low).abs() < 1e-12,
            "{point}"
        );
        assert!(
            (point["p_high"].as_f64().unwrap() - high).abs() < 1e-12,
            "{point}"
        );
    }
    assert_eq!(result["runs"].as_u64().unwrap(), runs);
    // The interval's ends are points on either side of the level, within ±5 % of the range.
    let (low, high) = (
        result["boundary_low"].as_f64().unwrap(),
        result["boundary_high"].as_f64().unwrap(),
    );
    let boundary = result["boundary"].as_f64().unwrap();
    assert!(
        low <= boundary && boundary <= high && high - low <= 8.0,
        "{result}"
    );
    let at = |v: f64| points.iter().find(|p| p["value"] == v).unwrap();
    assert!(at(low)["p_high"].as_f64().unwrap() < 0.5);
    assert!(at(high)["p_low"].as_f64().unwrap() > 0.5);
}

#[test]
fn the_boundary_agrees_with_a_dense_grid_sweep_within_the_intervals() {
    let config = repo(COLLAPSE);
    let report = json(&[
        "boundary",
        "--config",
        &config,
        "--axis",
        "spike-rate",
        "--range",
        "40..120",
        "--strategy",
        "naive",
        "--format",
        "json",
    ]);
    let result = &report["results"][0];
    let (low, high) = (
        result["boundary_low"].as_f64().unwrap(),
        result["boundary_high"].as_f64().unwrap(),
    );
    // A grid of spike rates one call/s apart with 60 seeds each, other values than the
    // search's (half-integers), so other seeds.
    let csv = herd_sim_ok(&[
        "sweep",
        "--config",
        &config,
        "--strategy",
        "naive",
        "--spike-rate",
        "66.5..88.5 step 2",
        "--seeds",
        "60",
        "--aggregate",
    ]);
    let mut reader = csv::Reader::from_reader(&csv[..]);
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (rate, stuck) = (at("spike_rate_per_s"), at("stuck_mean"));
    for row in reader.records().map(Result::unwrap) {
        let x: f64 = row[rate].parse().unwrap();
        let k = (row[stuck].parse::<f64>().unwrap() * 60.0).round();
        let (p_low, p_high) = wilson(k, 60.0);
        // Below the search's interval the grid's points are not confidently above the level,
        // and above it not confidently below (monotone curve, 95 % intervals each).
        if x < low {
            assert!(p_low < 0.5, "grid {x}: {k}/60 is above 0.5 below {low}");
        }
        if x > high {
            assert!(p_high > 0.5, "grid {x}: {k}/60 is below 0.5 above {high}");
        }
    }
}

/// Runs `boundary ARGS --out FILE`: one `error:` line starting `expected` and saying what is
/// accepted, exit 2, no file.
fn refused(args: &[&str], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("boundary.json");
    let mut all = vec!["boundary"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let output = herd_sim().args(&all).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{all:?}: {stderr}");
    assert!(stderr.starts_with(expected), "{all:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // The line says what would be accepted (clap's own number check gives an example).
    assert!(
        stderr.contains("; accepted: ") || stderr.contains("is not a number, e.g. "),
        "{all:?}: {stderr}"
    );
    assert!(output.stdout.is_empty());
    assert!(!out.exists(), "{all:?} wrote its output");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing left beside it"
    );
}

#[test]
fn every_bad_input_is_one_line_naming_the_flag_exit_2_and_nothing_written() {
    let config = repo(COLLAPSE);
    let c = config.as_str();
    let down = repo("configs/herd-down.toml");
    let dir = tempfile::tempdir().unwrap();
    let no_trigger = dir.path().join("no-trigger.toml");
    fs::write(
        &no_trigger,
        "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"60s\"\ntimeout = \"1s\"\n\
         [server]\nmodel = \"capacity\"\nworkers = 10\nservice_time = \"100ms\"\n",
    )
    .unwrap();
    let outage_only = dir.path().join("outage-only.toml");
    fs::write(
        &outage_only,
        "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"60s\"\ntimeout = \"1s\"\n\
         outage = \"10s..20s\"\n[server]\nmodel = \"capacity\"\nworkers = 10\n\
         service_time = \"100ms\"\n",
    )
    .unwrap();
    let (no_trigger, outage_only) = (no_trigger.to_str().unwrap(), outage_only.to_str().unwrap());
    let cases: [(&[&str], &str); 20] = [
        (
            &["--config", c, "--axis", "spike-rat", "--range", "40..120"],
            "error: invalid --axis spike-rat: not a sweep parameter; accepted: clients, retries,",
        ),
        (
            &["--config", c, "--axis", "budget", "--range", "1..2"],
            "error: invalid --axis budget: not a numeric sweep parameter; accepted: clients,",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "120..40"],
            "error: invalid --range 120..40: LO is not below HI; accepted: LO..HI",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "80..80"],
            "error: invalid --range 80..80: LO is not below HI",
        ),
        (
            &["--config", c, "--axis", "timeout", "--range", "1s..fast"],
            "error: invalid --range 1s..fast: ",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40..120", "--level", "1"],
            "error: invalid --level 1: outside (0, 1); accepted: a probability strictly between 0 and 1",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40..120", "--level", "-0.5"],
            "error: invalid --level -0.5: outside (0, 1)",
        ),
        (
            &["--config", no_trigger, "--axis", "rate", "--range", "10..90"],
            "error: invalid --axis rate: the scenario has no trigger (spike, outage or degradation)",
        ),
        (
            &["--config", outage_only, "--axis", "spike-rate", "--range", "10..90"],
            "error: invalid --axis spike-rate: the scenario of full-jitter has nothing it sets",
        ),
        (
            &["--config", c, "--axis", "failure-rate", "--range", "0.1..0.5"],
            "error: invalid --axis failure-rate: invalid --failure-rate: given for server capacity",
        ),
        (
            &["--config", &down, "--axis", "retries", "--range", "1..4"],
            "error: invalid --config (its scenario): a herd against a down server",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40..120", "--tolerance", "2x"],
            "error: invalid --tolerance 2x: ",
        ),
        // A picture size with no picture to size (the page draws its own).
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40..120", "--chart-size", "800x600", "--html", "/dev/null"],
            "error: invalid --chart-size: 800x600; accepted: only with --png or --svg",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40"],
            "error: invalid --range 40: not a range; accepted: LO..HI in the unit of --axis spike-rate",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40..120", "--level", "0"],
            "error: invalid --level 0: outside (0, 1); accepted: a probability strictly between 0 and 1",
        ),
        (
            &["--config", c, "--axis", "spike-rate", "--range", "40..120", "--level", "half"],
            "error: invalid value 'half' for --level: `half` is not a number",
        ),
        // A trigger axis whose trigger the scenario lacks (it has a spike): the line names the
        // axis and the axes this scenario reads.
        (
            &["--config", c, "--axis", "degrade-factor", "--range", "0.1..0.5"],
            "error: invalid --axis degrade-factor: the scenario of naive has nothing it sets",
        ),
        (
            &["--config", c, "--axis", "degrade-duration", "--range", "1s..5s"],
            "error: invalid --axis degrade-duration: the scenario of naive has nothing it sets",
        ),
        (
            &["--config", c, "--axis", "outage-duration", "--range", "1s..5s"],
            "error: invalid --axis outage-duration: the scenario of naive has nothing it sets",
        ),
        (
            &["--config", no_trigger, "--axis", "degrade-duration", "--range", "1s..5s"],
            "error: invalid --axis degrade-duration: the scenario has no trigger (spike, outage or degradation)",
        ),
    ];
    for (args, expected) in cases {
        refused(args, expected);
    }
}
