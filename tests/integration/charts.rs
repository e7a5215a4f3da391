//! Integration tests of the charts capability: `--png`/`--svg` on a plain run and the `plot`
//! subcommand, driven through the real binary. Pictures are decoded and measured: the size
//! asked for, bars in proportion to the counts the JSON output reports for the same run,
//! panels in the table's order, and text drawn in the title band.

use std::path::Path;

use crate::cmd::prelude::*;
use herd_sim::chart::Tone;

use super::picture::Picture;

use crate::herd_sim as herd;

impl Picture {
    /// Rows holding at least one pixel of `color`, grouped into runs of consecutive rows.
    fn row_bands(&self, color: (u8, u8, u8)) -> Vec<(usize, usize)> {
        let mut bands: Vec<(usize, usize)> = Vec::new();
        for y in 0..self.height {
            if (0..self.width).any(|x| self.at(x, y) == color) {
                match bands.last_mut() {
                    Some(band) if band.1 + 1 == y => band.1 = y,
                    _ => bands.push((y, y)),
                }
            }
        }
        bands
    }

    /// Pixels of `color` in column `x` between rows `top..=bottom`.
    fn height_in(&self, x: usize, (top, bottom): (usize, usize), color: (u8, u8, u8)) -> usize {
        (top..=bottom).filter(|&y| self.at(x, y) == color).count()
    }

    /// Leftmost and rightmost columns holding `color` in rows `top..=bottom`.
    fn extent(&self, (top, bottom): (usize, usize), color: (u8, u8, u8)) -> (usize, usize) {
        let columns: Vec<usize> = (0..self.width)
            .filter(|&x| (top..=bottom).any(|y| self.at(x, y) == color))
            .collect();
        (columns[0], *columns.last().unwrap())
    }
}

fn histograms(json: &Path) -> Vec<(String, Vec<u64>)> {
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let counts = r["histogram"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap())
                .collect();
            (r["strategy"].as_str().unwrap().to_string(), counts)
        })
        .collect()
}

#[test]
fn png_has_the_size_asked_for_bars_in_proportion_and_panels_in_table_order() {
    let dir = tempfile::tempdir().unwrap();
    let (json, png) = (dir.path().join("run.json"), dir.path().join("deep/run.png"));
    // 1 s windows, 2 retries: fixed lands 40 in windows 1 and 2; full jitter spreads over
    // windows 0..=2. Wide windows make each window a few hundred pixel columns.
    herd()
        .args([
            "--clients",
            "40",
            "--retries",
            "2",
            "--bin",
            "1s",
            "--seed",
            "7",
        ])
        .args(["--strategy", "fixed,full-jitter", "--format", "json"])
        .arg("--out")
        .arg(&json)
        .arg("--png")
        .arg(&png)
        .args(["--chart-size", "900x520"])
        .assert()
        .success();
    let runs = histograms(&json);
    assert_eq!(runs[0].0, "fixed");
    assert_eq!(
        runs[0].1,
        [0, 40, 40],
        "worked out by hand: retries at 1 s and 2 s"
    );
    let jitter = &runs[1].1;
    assert_eq!(jitter.len(), 3);
    assert_eq!(jitter.iter().sum::<u64>(), 80);
    assert!(
        jitter.iter().all(|&c| c > 0),
        "seed 7 fills every window: {jitter:?}"
    );

    let picture = Picture::read(&png);
    assert_eq!((picture.width, picture.height), (900, 520));

    let blue = Tone::Retries.rgb();
    let bands = picture.row_bands(blue);
    assert_eq!(bands.len(), 2, "one band of bars per panel: {bands:?}");
    // Full jitter fills all three windows, so its bars span the whole time axis.
    let (left, right) = picture.extent(bands[1], blue);
    let window_px = (right + 1 - left) as f64 / 3.0;
    let centre = |w: usize| left + ((w as f64 + 0.5) * window_px) as usize;
    // Pixels per retry, from fixed's 40-retry bar; every other bar must follow it.
    let px_per_retry = picture.height_in(centre(1), bands[0], blue) as f64 / 40.0;
    assert!(px_per_retry > 2.0, "{px_per_retry} px per retry");
    // Panels in table order: the top band is fixed's (empty window 0), then full jitter's.
    for (band, (name, counts)) in bands.iter().zip(&runs) {
        for (w, &count) in counts.iter().enumerate() {
            let px = picture.height_in(centre(w), *band, blue) as f64;
            let expected = count as f64 * px_per_retry;
            assert!(
                (px - expected).abs() <= 2.0,
                "{name} window {w}: {count} retries drawn {px} px tall, expected {expected:.1}"
            );
        }
    }

    // Text exists in the title band: dark pixels left of centre, in the top 40 rows.
    let dark = (0..40)
        .flat_map(|y| (60..450).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let (r, g, b) = picture.at(x, y);
            u32::from(r) + u32::from(g) + u32::from(b) < 200
        })
        .count();
    assert!(dark > 200, "only {dark} dark pixels where the title is");
}

#[test]
fn svg_is_the_same_chart_with_the_scenario_in_the_title() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("herd.svg");
    herd()
        .args([
            "--clients",
            "30",
            "--strategy",
            "all",
            "--seed",
            "5",
            "--svg",
        ])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..40]);
    assert!(text.contains("30 clients, 4 retries, base 1s, cap 30s, seed 5"));
    let order: Vec<usize> = [
        "naive",
        "fixed",
        "exponential",
        "full-jitter",
        "equal-jitter",
    ]
    .iter()
    .map(|name| text.find(&format!(">\n{name}\n</text>")).unwrap())
    .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "panels out of table order: {order:?}"
    );
}

#[test]
fn bad_chart_arguments_fail_before_simulating_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("x.png");
    herd()
        .args(["--strategy", "all", "--chart-size", "800x300", "--png"])
        .arg(&png)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--chart-size").and(predicate::str::contains("6 panels")));
    herd()
        .args(["--chart-size", "800", "--png"])
        .arg(&png)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("WIDTHxHEIGHT"));
    herd().arg("--png").arg(dir.path()).assert().code(2).stderr(
        predicate::str::starts_with("error: invalid --png").and(predicate::str::contains("folder")),
    );
    assert!(!png.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A sweep-shaped CSV: parameter columns, `seed`, metric columns; peak grows with clients,
/// more for `fixed` than for `full-jitter`, and varies with the seed.
fn sweep_csv() -> String {
    let mut text = String::from("clients,strategy,base,retries,seed,peak,windows\n");
    for clients in [10, 100, 1000] {
        for strategy in ["fixed", "full-jitter"] {
            for seed in 1..=3u64 {
                let peak = if strategy == "fixed" {
                    clients
                } else {
                    clients / 8 + seed * clients / 100
                };
                text.push_str(&format!(
                    "{clients},{strategy},1,4,{seed},{peak},{}\n",
                    4 + seed
                ));
            }
        }
    }
    text
}

#[test]
fn plot_draws_one_line_per_by_value_at_the_size_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    std::fs::write(&csv, sweep_csv()).unwrap();
    herd()
        .current_dir(dir.path())
        .arg("plot")
        .arg(&csv)
        .args([
            "--x", "clients", "--y", "peak", "--by", "strategy", "--log-x", "--log-y",
        ])
        .args(["--chart-size", "800x500"])
        .assert()
        .success();
    // Default output: output/<y>.png under the working folder, parents created.
    let picture = Picture::read(&dir.path().join("output/peak.png"));
    assert_eq!((picture.width, picture.height), (800, 500));
    let has = |color: (u8, u8, u8)| {
        (0..picture.height).any(|y| (0..picture.width).any(|x| picture.at(x, y) == color))
    };
    // The first two line colours, Okabe–Ito's blue and orange: one line each for fixed and
    // full-jitter; the third, bluish green, nowhere.
    assert!(has((0, 114, 178)) && has((230, 159, 0)));
    assert!(!has((0, 158, 115)), "a third line appeared");

    let svg = dir.path().join("windows.svg");
    herd()
        .arg("plot")
        .arg(&csv)
        .args([
            "--x", "clients", "--y", "windows", "--by", "strategy", "--out",
        ])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    // The title and the legend's heading in words, not column names.
    assert!(text.contains("Windows with a retry against clients"));
    assert!(text.contains(">\nstrategy\n</text>"), "{text}");
    assert!(text.contains("mean over 3 seeds per point, band = min to max"));
}

#[test]
fn plot_refuses_unknown_columns_with_the_list_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    std::fs::write(&csv, sweep_csv()).unwrap();
    let out = dir.path().join("p.png");
    herd()
        .arg("plot")
        .arg(&csv)
        .args(["--x", "client", "--y", "peak", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("invalid --x: no column `client` in").and(
                predicate::str::contains(
                    "columns: clients, strategy, base, retries, seed, peak, windows",
                ),
            ),
        );
    herd()
        .arg("plot")
        .arg(&csv)
        .args(["--x", "clients", "--y", "strategy", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("must be numeric"));
    herd()
        .arg("plot")
        .arg(dir.path().join("missing.csv"))
        .args(["--x", "clients", "--y", "peak", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
    assert!(!out.exists());
}

/// The JSON of the first run of `args`.
fn json_result(args: &[&str]) -> serde_json::Value {
    crate::core::json_of(args)["results"][0].clone()
}

fn numbers(value: &serde_json::Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// One client, 5 items, 1 s round trips, `fixed` retries after 4 s, against 3 requests per
/// 10 s (first-hit windows, precise store), counted per 5 s window. Worked by hand: served at
/// 0, 1, 2 s (the window opened at 0 s lasts to 10 s); refused at 3 s, and at 3 + 1 + 4 = 8 s;
/// the retry at 8 + 1 + 4 = 13 s opens a new window and is served, and so is 14 s, the last
/// item (finish 15 s). Per 5 s window: served 3, 0, 2; refused 1, 1; windows open at 0 and 13 s.
const SMALL_LIMITED: [&str; 22] = [
    "--clients",
    "1",
    "--server",
    "fixed-window",
    "--limit",
    "3",
    "--window",
    "10s",
    "--store",
    "precise",
    "--items",
    "5",
    "--latency",
    "1s",
    "--strategy",
    "fixed",
    "--base",
    "4s",
    "--bin",
    "5s",
    "--seed",
    "3",
];

#[test]
fn limited_run_stacks_served_under_refused_in_proportion_with_window_starts_marked() {
    let dir = tempfile::tempdir().unwrap();
    let (json, png) = (dir.path().join("run.json"), dir.path().join("run.png"));
    herd()
        .args(SMALL_LIMITED)
        .args(["--format", "json", "--out"])
        .arg(&json)
        .arg("--png")
        .arg(&png)
        .args(["--chart-size", "900x400"])
        .assert()
        .success();
    let result = &serde_json::from_slice::<serde_json::Value>(&std::fs::read(&json).unwrap())
        .unwrap()["results"][0];
    assert_eq!(numbers(&result["histogram_served"]), [3.0, 0.0, 2.0]);
    assert_eq!(numbers(&result["histogram_refused"]), [1.0, 1.0]);
    assert_eq!(numbers(&result["window_starts_s"]), [0.0, 13.0]);
    assert_eq!(
        (result["requests"].as_u64(), result["refused"].as_u64()),
        (Some(7), Some(2))
    );

    let picture = Picture::read(&png);
    assert_eq!((picture.width, picture.height), (900, 400));
    let (green, red) = (Tone::Served.rgb(), Tone::Refused.rgb());
    // The green bars are the tallest green band (the other is the legend's swatch).
    let bars = *picture
        .row_bands(green)
        .iter()
        .max_by_key(|(top, bottom)| bottom - top)
        .unwrap();
    // Windows 0 and 2 are green, so green spans the whole time axis, 0 to 15 s.
    let (left, right) = picture.extent(bars, green);
    let px_per_s = (right + 1 - left) as f64 / 15.0;
    let column = |t: f64| left + (t * px_per_s) as usize;
    // The rows of the stacks: from the top of window 0's (red on green, the highest red band
    // under the legend) to the base.
    let legend = picture.row_bands(green)[0];
    let stack_top = picture
        .row_bands(red)
        .iter()
        .map(|band| band.0)
        .filter(|&top| top > legend.1)
        .min()
        .unwrap();
    let plot = (stack_top, bars.1);
    let px_per_request = picture.height_in(column(2.5), plot, green) as f64 / 3.0;
    assert!(px_per_request > 20.0, "{px_per_request} px per request");
    for (t, served, refused) in [(2.5, 3.0, 1.0), (7.5, 0.0, 1.0), (11.5, 2.0, 0.0)] {
        for (color, count, name) in [(green, served, "served"), (red, refused, "refused")] {
            let px = picture.height_in(column(t), plot, color) as f64;
            let expected = count * px_per_request;
            assert!(
                (px - expected).abs() <= 2.0,
                "window at {t} s: {count} {name} drawn {px} px tall, expected {expected:.1}"
            );
        }
    }
    // Refused sits on top of served: in window 0 the lowest red pixel is just above the
    // highest green one.
    let x = column(2.5);
    let top_green = (plot.0..=plot.1)
        .find(|&y| picture.at(x, y) == green)
        .unwrap();
    let bottom_red = (plot.0..=plot.1)
        .rev()
        .find(|&y| picture.at(x, y) == red)
        .unwrap();
    assert_eq!(bottom_red + 1, top_green);

    // The marker at 13 s: a grey line above window 2's two-request bar, at least up to where
    // window 0's four-request stack reaches; no marker at 5 or 10 s (window boundaries of the
    // histogram, not of the limiter) nor anywhere else in window 2.
    let marker = (150, 150, 150);
    let marked = |t: f64| {
        (column(t).saturating_sub(1)..=column(t) + 1)
            .map(|x| picture.height_in(x, plot, marker))
            .max()
            .unwrap() as f64
    };
    assert!(
        marked(13.0) >= 2.0 * px_per_request - 2.0,
        "{} grey px at 13 s",
        marked(13.0)
    );
    for t in [5.0, 10.5, 11.5, 14.5] {
        assert_eq!(marked(t), 0.0, "a marker at {t} s");
    }
}

#[test]
fn window_starts_follow_the_window_rule_and_only_a_single_key_has_them() {
    // Aligned windows [0, 10) and [10, 20) s: the same requests (the retry at 13 s is the
    // first in the second window), which opened at its boundary, 10 s.
    let aligned = [&SMALL_LIMITED[..], &["--window-start", "aligned"]].concat();
    let result = json_result(&aligned);
    assert_eq!(numbers(&result["window_starts_s"]), [0.0, 10.0]);
    // Half a second into the wall clock's second the aligned windows start at wall 0 and 10 s,
    // i.e. -0.5 s (before the run: left out) and 9.5 s.
    let phased = [&aligned[..], &["--epoch-phase", "0.5s"]].concat();
    assert_eq!(numbers(&json_result(&phased)["window_starts_s"]), [9.5]);
    // Five clients behind one address share one key: its windows are marked.
    let shared = json_result(&[
        "--clients",
        "5",
        "--server",
        "fixed-window",
        "--clients-per-address",
        "5",
        "--limit",
        "3",
        "--window",
        "10s",
        "--strategy",
        "fixed",
        "--base",
        "4s",
    ]);
    assert!(!numbers(&shared["window_starts_s"]).is_empty());
    // A key per client, a rolling limiter, and the down server have none: the field is absent.
    for args in [
        &["--clients", "2", "--server", "fixed-window"][..],
        &["--clients", "1", "--server", "sliding-window"],
        &["--clients", "1", "--server", "token-bucket"],
        &["--clients", "1"],
    ] {
        let result = json_result(args);
        assert!(
            result.get("window_starts_s").is_none(),
            "{args:?}: {result}"
        );
    }
}

#[test]
fn plot_reads_what_sweep_writes() {
    // End to end: the sweep's own CSV (parameters, then `replicate, seed`, then metrics), one
    // point per (clients, strategy) over the three replicates, and a varied base picked by
    // `--where`.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    herd()
        .args([
            "sweep",
            "--clients",
            "10,100",
            "--strategy",
            "fixed,full-jitter",
        ])
        .args(["--base", "100ms,1s", "--seeds", "3", "--quiet", "--out"])
        .arg(&csv)
        .assert()
        .success();
    let svg = dir.path().join("peak.svg");
    herd()
        .arg("plot")
        .arg(&csv)
        .args(["--x", "clients", "--y", "peak", "--by", "strategy"])
        .args(["--where", "base_s=1", "--out"])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("mean over 3 seeds per point"), "{text}");
    // Without --where the two bases would mix in one point: refused, naming the column.
    herd()
        .arg("plot")
        .arg(&csv)
        .args(["--x", "clients", "--y", "peak", "--by", "strategy", "--out"])
        .arg(dir.path().join("mixed.svg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("base_s"));
}

#[test]
fn plot_draws_at_every_narrow_width_and_reads_a_wide_header() {
    // Widths 200 to 229 hung with memory climbing (the legend's width was
    // subtracted from a narrower plot and wrapped around into ~39 million x ticks).
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("one.csv");
    std::fs::write(&csv, "x,y\n1,1\n").unwrap();
    for width in [200, 215, 229] {
        let png = dir.path().join(format!("p{width}.png"));
        herd()
            .arg("plot")
            .arg(&csv)
            .args(["--x", "x", "--y", "y", "--chart-size"])
            .arg(format!("{width}x620"))
            .arg("--out")
            .arg(&png)
            .assert()
            .success();
        let picture = Picture::read(&png);
        assert_eq!((picture.width, picture.height), (width, 620));
        // The single point is drawn (a dot of the first line colour, Okabe–Ito's blue).
        let blue = (0, 114, 178);
        assert!(
            !picture.row_bands(blue).is_empty(),
            "no point at width {width}"
        );
    }
    // 100 000 columns took 21 s before "no data rows" (a pairwise
    // duplicate check); now the refusal comes from the one linear pass.
    let wide = dir.path().join("wide.csv");
    let header: Vec<String> = (0..100_000).map(|i| format!("c{i}")).collect();
    std::fs::write(&wide, header.join(",") + "\n").unwrap();
    herd()
        .arg("plot")
        .arg(&wide)
        .args(["--x", "c1", "--y", "c2", "--out"])
        .arg(dir.path().join("w.png"))
        .assert()
        .code(2)
        .stderr(predicate::str::ends_with("no data rows under the header\n"));
}

#[test]
fn the_extension_picks_the_format_or_is_refused_for_every_chart_flag() {
    // `--png out.svg` wrote PNG bytes under an SVG name.
    let dir = tempfile::tempdir().unwrap();
    for (flag, name, other) in [("--png", "out.svg", "--svg"), ("--svg", "out.png", "--png")] {
        herd()
            .args(["--clients", "5", flag])
            .arg(dir.path().join(name))
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(
                predicate::str::starts_with(format!("error: invalid {flag}: "))
                    .and(predicate::str::contains(format!(
                        "for {} use {other}",
                        &other[2..].to_uppercase()
                    )))
                    .and(
                        predicate::str::ends_with("\n")
                            .and(predicate::function(|e: &str| e.lines().count() == 1)),
                    ),
            );
    }
    herd()
        .args(["--clients", "5", "--png"])
        .arg(dir.path().join("out.jpg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("accepted extensions: .png"));
    let csv = dir.path().join("sweep.csv");
    std::fs::write(&csv, sweep_csv()).unwrap();
    herd()
        .arg("plot")
        .arg(&csv)
        .args(["--x", "clients", "--y", "peak", "--by", "strategy", "--out"])
        .arg(dir.path().join("p.jpg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "accepted extensions: .png, .svg (the extension picks the format)",
        ));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the CSV"
    );
    // The extension in any case picks the format; none means the flag's own.
    let upper = dir.path().join("P.SVG");
    herd()
        .arg("plot")
        .arg(&csv)
        .args(["--x", "clients", "--y", "peak", "--by", "strategy", "--out"])
        .arg(&upper)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&upper).unwrap().starts_with("<svg"));
    let bare = dir.path().join("histograms");
    herd()
        .args(["--clients", "5", "--svg"])
        .arg(&bare)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&bare).unwrap().starts_with("<svg"));
}

#[test]
fn plot_says_what_it_wrote_on_stderr_and_when_it_replaced_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    std::fs::write(&csv, sweep_csv()).unwrap();
    let out = dir.path().join("peak.png");
    let plot = || {
        let mut cmd = herd();
        cmd.arg("plot")
            .arg(&csv)
            .args(["--x", "clients", "--y", "peak", "--by", "strategy", "--out"])
            .arg(&out);
        cmd
    };
    plot()
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(format!("wrote {}\n", out.display()));
    plot()
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(format!(
            "wrote {} (replaced the file there)\n",
            out.display()
        ));
}

/// Runs `plot` on `csv` with `args` and returns its stderr, asserting exit 2 and one line.
fn plot_refusal(csv: &Path, args: &[&str]) -> String {
    let output = herd()
        .arg("plot")
        .arg(csv)
        .args(args)
        .arg("--out")
        .arg(csv.with_extension("png"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!csv.with_extension("png").exists());
    stderr
}

#[test]
fn plot_refusals_suggest_the_likely_intent() {
    let dir = tempfile::tempdir().unwrap();
    // A sweep over three strategies, plain and aggregated.
    let (rows, aggregate) = (dir.path().join("rows.csv"), dir.path().join("agg.csv"));
    for (path, extra) in [(&rows, None), (&aggregate, Some("--aggregate"))] {
        herd()
            .args([
                "sweep",
                "--clients",
                "10,100",
                "--strategy",
                "fixed,exponential,full-jitter",
            ])
            .args(["--seeds", "3", "--quiet"])
            .args(extra)
            .arg("--out")
            .arg(path)
            .assert()
            .success();
    }
    let e = plot_refusal(&rows, &["--x", "clients", "--y", "peak"]);
    assert!(
        e.contains("`strategy` takes 3 values") && e.contains("add --by strategy"),
        "{e}"
    );
    let e = plot_refusal(
        &aggregate,
        &["--x", "clients", "--y", "peak", "--by", "strategy"],
    );
    assert!(
        e.contains("no column `peak` in") && e.contains("(did you mean `peak_mean`?)"),
        "{e}"
    );
    let e = plot_refusal(
        &rows,
        &[
            "--x",
            "clients",
            "--y",
            "peak",
            "--by",
            "strategy",
            "--where",
            "strategy=full_jitter",
        ],
    );
    assert!(
        e.contains("(did you mean strategy=full-jitter?)")
            && e.contains("`strategy` holds fixed, exponential, full-jitter"),
        "{e}"
    );
    // A run's TOML scenario, and a plain run's CSV table.
    let toml = dir.path().join("herd.toml");
    std::fs::copy("configs/herd-down.toml", &toml).unwrap();
    let e = plot_refusal(&toml, &["--x", "clients", "--y", "peak"]);
    assert!(
        e.contains("this is a TOML file") && e.contains("--config"),
        "{e}"
    );
    let run = dir.path().join("run.csv");
    herd()
        .args([
            "--clients",
            "10",
            "--strategy",
            "all",
            "--format",
            "csv",
            "--out",
        ])
        .arg(&run)
        .assert()
        .success();
    let e = plot_refusal(&run, &["--x", "clients", "--y", "peak", "--by", "strategy"]);
    assert!(
        e.contains("plain run's table") && e.contains("herd-sim sweep"),
        "{e}"
    );
    // `fixture` given the TOML scenario says what it is and what fixture reads.
    herd().arg("fixture").arg(&toml).assert().code(2).stderr(
        predicate::str::contains("this is a TOML file").and(predicate::str::contains("JSON")),
    );
}

#[test]
fn plot_draws_an_aggregate_files_interval_as_the_band() {
    // The sd / interval columns of an `--aggregate` sweep were ignored.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("agg.csv");
    herd()
        .args([
            "sweep",
            "--clients",
            "10,100,1000",
            "--strategy",
            "fixed,full-jitter",
        ])
        .args(["--seeds", "5", "--quiet", "--aggregate", "--out"])
        .arg(&csv)
        .assert()
        .success();
    let svg = dir.path().join("agg.svg");
    herd()
        .arg("plot")
        .arg(&csv)
        .args([
            "--x",
            "clients",
            "--y",
            "peak_mean",
            "--by",
            "strategy",
            "--log-x",
            "--out",
        ])
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("line = mean over 5 seeds per point, band = its 95 % interval"),
        "{text}"
    );
    assert!(
        text.contains("most retries in one window, mean over seeds"),
        "{text}"
    );
    // Full jitter's peak varies over seeds: its band is a filled polygon (fixed's does not vary).
    assert_eq!(text.matches("<polygon").count(), 1, "{text}");
}
