//! `herd-sim boundary` over two axes: the same bytes for any thread count, every cell the
//! sweep's rows of both values, the contour's squares between cells either side of the level,
//! and bad input (an axis twice, three axes, ranges not matching axes, --curve, --band, a page
//! on another output's file or on standard output beside the report) one `error:` line, exit 2,
//! nothing written.

use std::fs;

use crate::{herd_sim_ok, refused_in_one_line};

pub(crate) fn config() -> String {
    format!("{}/configs/collapse-spike.toml", env!("CARGO_MANIFEST_DIR"))
}

/// The guide's spike over its rate and its length.
const AXES: [&str; 8] = [
    "--axis",
    "spike-rate",
    "--range",
    "40..120",
    "--axis",
    "spike-duration",
    "--range",
    "1s..15s",
];

/// A small phase diagram of `config`: one case, 3 seeds a batch, at most 300 runs.
pub(crate) fn plane_args<'a>(config: &'a str, format: &'a str, threads: &'a str) -> Vec<&'a str> {
    let mut args = vec!["boundary", "--config", config];
    args.extend(AXES);
    args.extend([
        "--strategy",
        "naive",
        "--seeds",
        "3",
        "--tolerance",
        "10%",
        "--max-runs",
        "300",
        "--format",
        format,
        "--threads",
        threads,
    ]);
    args
}

#[test]
fn a_phase_diagram_is_the_same_bytes_on_one_thread_and_two_and_its_cells_are_sweep_rows() {
    let config = config();
    for format in ["table", "csv"] {
        assert_eq!(
            herd_sim_ok(&plane_args(&config, format, "1")),
            herd_sim_ok(&plane_args(&config, format, "2")),
            "{format}"
        );
    }
    let json = herd_sim_ok(&plane_args(&config, "json", "2"));
    assert_eq!(json, herd_sim_ok(&plane_args(&config, "json", "1")));
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(report["axis"], "spike-rate");
    assert_eq!(report["axes"][1]["name"], "spike-duration");
    assert_eq!(report["axes"][1]["range"], serde_json::json!([1.0, 15.0]));
    let result = &report["results"][0];
    let cells = result["cells"].as_array().unwrap();
    // The 5 x 5 coarse grid at least, every cell with its seeds, runs the sum of them.
    assert!(cells.len() >= 25);
    let runs: u64 = cells.iter().map(|c| c["seeds"].as_u64().unwrap()).sum();
    assert_eq!(result["runs"].as_u64().unwrap(), runs);
    assert!(runs <= 300);
    // A cell replays as the sweep of both values: the same seeds, the same verdicts.
    let cell = &cells[7];
    let (rate, duration) = (
        cell["values"][0].as_f64().unwrap(),
        cell["values"][1].as_f64().unwrap(),
    );
    let csv = herd_sim_ok(&[
        "sweep",
        "--config",
        &config,
        "--strategy",
        "naive",
        "--spike-rate",
        &rate.to_string(),
        "--spike-duration",
        &format!("{duration}s"),
        "--seeds",
        &cell["seeds"].to_string(),
    ]);
    let mut reader = csv::Reader::from_reader(&csv[..]);
    let header = reader.headers().unwrap().clone();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (seed, stuck) = (at("seed"), at("stuck"));
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let seeds: Vec<u64> = rows.iter().map(|r| r[seed].parse().unwrap()).collect();
    let run_seeds: Vec<u64> = cell["run_seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(seeds, run_seeds, "{cell}");
    let stuck_rows = rows.iter().filter(|r| &r[stuck] == "1").count() as u64;
    assert_eq!(cell["collapsed"].as_u64().unwrap(), stuck_rows);
    // Each contour square's corners are cells; among them one whose interval holds the
    // level, or one below it and one above.
    let find = |a: f64, b: f64| {
        cells
            .iter()
            .find(|c| c["values"] == serde_json::json!([a, b]))
            .unwrap_or_else(|| panic!("no cell at {a}, {b}"))
    };
    let contour = result["contour"].as_array().unwrap();
    assert!(!contour.is_empty());
    for q in contour {
        let (a0, b0) = (
            q["from"][0].as_f64().unwrap(),
            q["from"][1].as_f64().unwrap(),
        );
        let (a1, b1) = (q["to"][0].as_f64().unwrap(), q["to"][1].as_f64().unwrap());
        let corners = [find(a0, b0), find(a1, b0), find(a0, b1), find(a1, b1)];
        let below = corners.iter().any(|c| c["p_high"].as_f64().unwrap() < 0.5);
        let above = corners.iter().any(|c| c["p_low"].as_f64().unwrap() > 0.5);
        let unsure = corners
            .iter()
            .any(|c| c["p_low"].as_f64().unwrap() <= 0.5 && c["p_high"].as_f64().unwrap() >= 0.5);
        assert!(unsure || (below && above), "{q}");
    }
}

#[test]
fn bad_two_axis_input_is_one_line_naming_the_flag() {
    let config = config();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plane.json");
    let out = out.to_str().unwrap();
    let base = ["boundary", "--config", config.as_str(), "--out", out];
    let refused = |more: &[&str], expected: &str| {
        let mut args = base.to_vec();
        args.extend_from_slice(more);
        let e = refused_in_one_line(&args);
        assert!(e.starts_with(expected), "{args:?}: {e}");
    };
    refused(
        &["--axis", "spike-rate", "--range", "40..120", "--axis", "spike-rate", "--range", "50..60"],
        "error: invalid --axis spike-rate: given twice; accepted: two different numeric sweep parameters",
    );
    refused(
        &[&AXES[..], &["--axis", "timeout", "--range", "1s..2s"]].concat(),
        "error: invalid --axis spike-rate spike-duration timeout: 3 axes given; accepted: one --axis",
    );
    refused(
        &["--axis", "spike-rate", "--range", "40..120", "--axis", "spike-duration"],
        "error: invalid --range 40..120: 1 ranges for 2 axes; accepted: one --range LO..HI for each --axis",
    );
    refused(
        &[&AXES[..], &["--curve"]].concat(),
        "error: invalid --curve with two axes: a curve has one axis; accepted: one --axis for --curve",
    );
    refused(
        &[
            "--axis",
            "spike-rate",
            "--range",
            "40..120",
            "--axis",
            "spike-duration",
            "--range",
            "15s..1s",
        ],
        "error: invalid --range 15s..1s: LO is not below HI",
    );
    refused(
        &[&AXES[..], &["--seeds", "10", "--max-runs", "200"]].concat(),
        "error: invalid --max-runs 200: fewer than the 250 runs of the 5 x 5 coarse grid",
    );
    refused(
        &[
            "--axis",
            "rate",
            "--range",
            "10..20",
            "--axis",
            "spike-rate",
            "--range",
            "40..120",
            "--band",
        ],
        "error: invalid --band with two axes: the vulnerable band is a range of one load axis",
    );
    // A page may not share a file with another output, nor standard output with the report.
    let svg = dir.path().join("phase.svg");
    let svg = svg.to_str().unwrap();
    refused(
        &[&AXES[..], &["--html", out]].concat(),
        &format!(
            "error: invalid --html: {out}; --out writes there too; accepted: a path no other output"
        ),
    );
    refused(
        &[&AXES[..], &["--svg", svg, "--html", svg]].concat(),
        &format!("error: invalid --html: {svg}; --svg writes there too"),
    );
    let line = refused_in_one_line(
        &[
            &["boundary", "--config", config.as_str()][..],
            &AXES,
            &["--html", "-"],
        ]
        .concat(),
    );
    assert!(
        line.starts_with("error: invalid --html: -; --out writes there too"),
        "{line}"
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}
