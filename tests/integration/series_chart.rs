//! Integration tests of the series chart (`--png`/`--svg` on a call-loop run) through
//! the real binary. Pictures are decoded and measured: the size asked for, three panels per
//! strategy (found by their grey base lines), a trigger band where its interval falls on the
//! time axis (the axis spans 0 to the end of the last window the JSON series holds; the plot's
//! pixel extent is read off its base line), latency lines absent from windows the JSON says had
//! no success, and the same bytes for 1 and 2 threads. Herd runs keep their histogram.

use std::path::Path;

use herd_sim::chart::{Measure, TriggerKind, BAND_ALPHA};
use serde_json::Value;

use super::picture::Picture;

use crate::herd_sim as herd;

/// Poisson 50/s over 10 s from 5 processes, 4 workers of 10 ms (200/s: never a queue to speak
/// of), a 1 s timeout, an outage over [4 s, 6 s); naive and full jitter, 1 retry.
const OUTAGE: [&str; 24] = [
    "--server",
    "capacity",
    "--workers",
    "4",
    "--service-time",
    "10ms",
    "--arrivals",
    "poisson",
    "--rate",
    "50/s",
    "--duration",
    "10s",
    "--clients",
    "5",
    "--timeout",
    "1s",
    "--outage",
    "4s..6s",
    "--strategy",
    "naive,full-jitter",
    "--retries",
    "1",
    "--seed",
    "3",
];

impl Picture {
    /// The plot areas, as (base line row, first column, last column): horizontal runs of the
    /// axis grey at least 100 pixels long, from the y axis on; a run a few rows under one it overlaps (the bottom
    /// row's x axis, under its base line) is the same plot.
    fn plots(&self) -> Vec<(usize, usize, usize)> {
        const AXIS: (u8, u8, u8) = (120, 120, 120);
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for y in 0..self.height {
            let mut x = 0;
            while x < self.width {
                if self.at(x, y) != AXIS {
                    x += 1;
                    continue;
                }
                let start = x;
                while x < self.width && self.at(x, y) == AXIS {
                    x += 1;
                }
                if x - start >= 100 {
                    let near = found
                        .iter()
                        .any(|&(row, left, right)| y - row <= 3 && start <= right && x > left);
                    if !near {
                        // The run starts with the tick mark at 0 left of the plot; the plot
                        // starts at the y axis, the column of the run that goes up.
                        let axis = (start..x)
                            .find(|&c| (1..=20).all(|k| self.at(c, y - k) == AXIS))
                            .expect("a y axis above the base line");
                        found.push((y, axis, x - 1));
                    }
                }
            }
        }
        found
    }
}

fn ok(args: &[&str]) {
    crate::herd_sim_ok(args);
}

/// The outage band's colour over white, by the usual blend: white × (1 − α) + colour × α.
fn band_color_near(c: (u8, u8, u8)) -> bool {
    let (r, g, b) = TriggerKind::Outage.rgb();
    let blend = |v: u8| 255.0 * (1.0 - BAND_ALPHA) + f64::from(v) * BAND_ALPHA;
    let close = |got: u8, v: u8| (f64::from(got) - blend(v)).abs() <= 2.0;
    close(c.0, r) && close(c.1, g) && close(c.2, b)
}

#[test]
fn a_call_loop_png_has_three_panels_per_strategy_bands_where_the_triggers_are_and_no_latency_without_successes(
) {
    let dir = tempfile::tempdir().unwrap();
    let (png, json) = (dir.path().join("s.png"), dir.path().join("s.json"));
    let mut args: Vec<&str> = OUTAGE.to_vec();
    args.extend(["--format", "json", "--chart-size", "1500x700"]);
    args.extend([
        "--out",
        json.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
    ]);
    ok(&args);
    let picture = Picture::read(&png);
    assert_eq!((picture.width, picture.height), (1500, 700));

    // Three panels per strategy: two rows of three plot areas.
    let plots = picture.plots();
    assert_eq!(plots.len(), 3 * 2, "{plots:?}");

    // The time axis runs from 0 to the end of the last window of any strategy's series.
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let results = report["results"].as_array().unwrap();
    let end_s = results
        .iter()
        .map(|r| {
            let starts = r["series"]["window_start_s"].as_array().unwrap();
            starts.last().unwrap().as_f64().unwrap() + 1.0
        })
        .fold(6.0, f64::max);
    // Each plot: the outage's band spans [4 s, 6 s) of its pixel extent.
    for &(base, left, right) in &plots {
        let px = |t: f64| left as f64 + t / end_s * (right - left) as f64;
        // A column is in the band when most of the plot's rows (about 237 here) show the band's
        // colour: the lines crossing it cover a few rows of a column each.
        let rows = base - 200..base;
        let band: Vec<usize> = (left..=right)
            .filter(|&x| {
                let n = rows
                    .clone()
                    .filter(|&y| band_color_near(picture.at(x, y)))
                    .count();
                n >= 100
            })
            .collect();
        assert!(!band.is_empty(), "no band in the plot at row {base}");
        let (first, last) = (band[0] as f64, *band.last().unwrap() as f64);
        assert!(
            (first - px(4.0)).abs() <= 2.0 && (last - px(6.0)).abs() <= 2.0,
            "band drawn over columns {first}..{last}, expected {:.1}..{:.1}",
            px(4.0),
            px(6.0)
        );
        // One band: the columns between are in it (but where a grid line crosses it).
        assert!(band.len() + 2 >= (last - first) as usize, "{band:?}");
    }

    // Window 5, [5 s, 6 s): every arrival is refused at once and the requests sent before the
    // outage were answered by 4.05 s (10 ms service, 4 workers, 50/s), so no success and no
    // latency; the JSON says so for both strategies, and the latency panels (the third of each
    // row) hold no latency line's pixel over that window. Window 2 has successes and a line.
    let latency_colors = [Measure::P50.rgb(), Measure::P99.rgb()];
    let latency_plots: Vec<_> = {
        let mut sorted = plots.clone();
        sorted.sort_by_key(|&(row, left, _)| (row, left));
        sorted.chunks(3).map(|row| row[2]).collect()
    };
    for (r, &(base, left, right)) in results.iter().zip(&latency_plots) {
        let series = &r["series"];
        let starts: Vec<f64> = series["window_start_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let p50 = series["latency_p50_s"].as_array().unwrap();
        let at = |t: f64| starts.iter().position(|&s| s == t);
        if let Some(i) = at(5.0) {
            assert!(p50[i].is_null(), "{}: a latency in window 5", r["strategy"]);
        }
        assert!(!p50[at(2.0).unwrap()].is_null());
        let px = |t: f64| (left as f64 + t / end_s * (right - left) as f64) as usize;
        let lines_in = |from: f64, to: f64| {
            (px(from) + 3..=px(to) - 3)
                .flat_map(|x| (base - 200..base).map(move |y| (x, y)))
                .filter(|&(x, y)| latency_colors.contains(&picture.at(x, y)))
                .count()
        };
        assert_eq!(
            lines_in(5.0, 6.0),
            0,
            "{}: latency drawn in window 5",
            r["strategy"]
        );
        assert!(
            lines_in(2.0, 3.0) > 0,
            "{}: no latency line in window 2",
            r["strategy"]
        );
    }
}

#[test]
fn one_strategy_or_all_gives_three_panels_each_and_the_svg_names_the_scenario_and_triggers() {
    let dir = tempfile::tempdir().unwrap();
    for (strategies, rows) in [("full-jitter", 1usize), ("all", 6)] {
        let png = dir.path().join(format!("{rows}.png"));
        let mut args: Vec<&str> = OUTAGE.to_vec();
        args[19] = strategies;
        args.extend(["--spike", "1s..2s@120/s", "--degrade", "7s..8s@0.5"]);
        args.extend(["--png", png.to_str().unwrap()]);
        let svg = dir.path().join(format!("{rows}.svg"));
        args.extend(["--svg", svg.to_str().unwrap()]);
        ok(&args);
        let picture = Picture::read(&png);
        assert_eq!(picture.plots().len(), 3 * rows, "{strategies}");
        // The default size: 1500 wide.
        assert_eq!(picture.width, 1500);
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg width=\"1500\""));
        // Calls start until the degradation's end (8 s) plus the default settle, worked by
        // hand: (1 + 1) x 1 s timeout + 1 x 30 s cap + 5 s hold = 37 s, so to 45 s.
        assert!(text
            .contains("load: poisson 50/s over 0s..45s, spike 1s..2s@120/s (5 client processes)"));
        assert!(text.contains("calls per s (1s windows)"));
        // Each trigger is named on every panel.
        for label in ["outage", "spike 120/s", "degrade ×0.5"] {
            let shown = text.matches(&format!(">\n{label}\n</text>")).count();
            assert_eq!(shown, 3 * rows, "{label} in {strategies}");
        }
    }
}

#[test]
fn the_series_chart_is_the_same_bytes_for_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let draw = |threads: &str| {
        let (png, svg) = (
            dir.path().join(format!("{threads}.png")),
            dir.path().join(format!("{threads}.svg")),
        );
        let mut args: Vec<&str> = OUTAGE.to_vec();
        args.extend(["--threads", threads, "--png", png.to_str().unwrap()]);
        args.extend(["--svg", svg.to_str().unwrap()]);
        ok(&args);
        (std::fs::read(&png).unwrap(), std::fs::read(&svg).unwrap())
    };
    assert_eq!(draw("1"), draw("2"));
}

#[test]
fn a_herd_run_keeps_its_histogram_and_a_bad_size_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("herd.svg");
    ok(&["--clients", "20", "--svg", svg.to_str().unwrap()]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("retries per 100ms window") && !text.contains("calls per s"));

    let png = dir.path().join("small.png");
    let mut args: Vec<&str> = OUTAGE.to_vec();
    args.extend(["--chart-size", "400x300", "--png", png.to_str().unwrap()]);
    let out = herd().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: invalid --chart-size: 400x300; the series chart's 2 rows"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(!png.exists());
    // A log axis cannot show a series' zeros: refused before simulating, nothing written.
    let mut args: Vec<&str> = OUTAGE.to_vec();
    args.extend(["--chart-scale", "log", "--png", png.to_str().unwrap()]);
    let out = herd().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: invalid --chart-scale: log;"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty() && !png.exists());
}

/// Runs each `"$herd_sim" ARGS --png docs/NAME.png` line of `script` (a path under the
/// repository) into a scratch file and asserts it gives the committed picture (same seed, same
/// bytes). Returns how many pictures it compared.
pub(crate) fn assert_script_draws_the_committed_pictures(script: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut drawn = 0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("\"$herd_sim\" ") else {
            continue;
        };
        let args: Vec<&str> = rest.split_whitespace().take_while(|a| *a != ">").collect();
        let png = args.iter().position(|a| *a == "--png").unwrap() + 1;
        let committed = root.join(args[png]);
        let fresh = dir.path().join(format!("{drawn}.png"));
        let mut run = args.clone();
        run[png] = fresh.to_str().unwrap();
        herd().current_dir(root).args(&run).assert().success();
        assert!(
            std::fs::read(&fresh).unwrap() == std::fs::read(&committed).unwrap(),
            "{} differs from what `{rest}` draws: run {script}",
            args[png]
        );
        drawn += 1;
    }
    drawn
}

#[test]
fn the_readmes_series_charts_are_what_the_script_draws() {
    assert_eq!(
        assert_script_draws_the_committed_pictures("scripts/overload-charts.sh"),
        2,
        "the script draws the collapse and the outage charts"
    );
}
