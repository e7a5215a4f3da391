//! `herd-sim report`: the shipped report file's committed report and charts are what a fresh
//! run writes (its `--check` passes, as a team's CI runs it), the bytes do not depend on
//! `--threads`, the charts' marks sit where the report's numbers put them, a
//! band broken fails with the reviewer's line and exit 1, a changed figure inside its band is
//! said without failing, and bad input is one `error:` line with exit 2.

use std::fs;
use std::path::Path;

use crate::{herd_sim, herd_sim_ok};

const SHIPPED: &str = "configs/policy-report.toml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_committed_report_is_a_fresh_runs_and_its_check_passes() {
    let file = root().join(SHIPPED);
    let file = file.to_str().unwrap();
    let fresh = herd_sim()
        .current_dir(root())
        .args(["report", SHIPPED, "--threads", "1"])
        .output()
        .unwrap();
    assert!(
        fresh.status.success(),
        "{}",
        String::from_utf8_lossy(&fresh.stderr)
    );
    let committed = fs::read(root().join("configs/policy-report.md")).unwrap();
    assert!(
        fresh.stdout == committed,
        "configs/policy-report.md is not what `herd-sim report {SHIPPED}` writes: write it again"
    );
    let two = herd_sim()
        .current_dir(root())
        .args(["report", SHIPPED, "--threads", "2"])
        .output()
        .unwrap();
    assert_eq!(fresh.stdout, two.stdout, "1 and 2 threads");
    // Its charts, written beside a report written to a file, are the committed ones, the
    // same bytes for 1 and 2 threads.
    let charts = ["herd-down.svg", "outage-recovery.svg"];
    for threads in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("policy-report.md");
        herd_sim_ok(&[
            "report",
            file,
            "--threads",
            threads,
            "--out",
            md.to_str().unwrap(),
        ]);
        assert!(fs::read(&md).unwrap() == committed);
        for chart in charts {
            let at = |folder: &Path| folder.join("policy-report-charts").join(chart);
            assert!(
                fs::read(at(dir.path())).unwrap() == fs::read(at(&root().join("configs"))).unwrap(),
                "configs/policy-report-charts/{chart} is not what `herd-sim report {SHIPPED} \
                 --out configs/policy-report.md` draws ({threads} threads): write it again"
            );
        }
        let written = fs::read_dir(dir.path().join("policy-report-charts"))
            .unwrap()
            .count();
        assert_eq!(written, charts.len());
    }
    // The report does not depend on where it runs from or how its path is typed: from the
    // report's own folder as `./policy-report.toml`, and from elsewhere by absolute path.
    let elsewhere = tempfile::tempdir().unwrap();
    for (dir, path) in [
        (root().join("configs"), "./policy-report.toml"),
        (elsewhere.path().to_path_buf(), file),
    ] {
        let again = herd_sim()
            .current_dir(&dir)
            .args(["report", path, "--threads", "2"])
            .output()
            .unwrap();
        assert!(again.status.success(), "{path}");
        assert!(
            again.stdout == fresh.stdout,
            "`herd-sim report {path}` run in {} writes other bytes",
            dir.display()
        );
        let check = herd_sim()
            .current_dir(&dir)
            .args(["report", path, "--check"])
            .output()
            .unwrap();
        let said = String::from_utf8(check.stdout).unwrap();
        assert!(check.status.success(), "{path}: {said}");
        assert!(said.ends_with("byte for byte\n"), "{path}: {said}");
    }
    let check = herd_sim()
        .current_dir(root())
        .args(["report", SHIPPED, "--check"])
        .output()
        .unwrap();
    let said = String::from_utf8(check.stdout).unwrap();
    assert!(
        check.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(said.ends_with("byte for byte\n"), "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
}

/// A report file of one scenario and policy in `dir`, with `bands` appended.
fn write_report(dir: &Path, bands: &str) -> String {
    let path = dir.join("r.toml");
    fs::write(
        &path,
        format!(
            "title = \"t\"\nseeds = 2\n[[scenarios]]\nid = \"down\"\nclients = 100\n\
             [[policies]]\nid = \"exp\"\nstrategy = \"exponential\"\n{bands}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_broken_band_fails_with_the_reviewers_line_and_a_change_inside_is_said() {
    // 100 exponential clients against a down server: every retry of a wave lands in one
    // 100 ms window, so the peak is exactly 100, the same for every seed.
    let dir = tempfile::tempdir().unwrap();
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [90, 110]\n",
    );
    let md = dir.path().join("r.md");
    let out = herd_sim_ok(&["report", &file, "--out", md.to_str().unwrap()]);
    assert!(out.is_empty());
    let text = fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("| down | exp | peak | 100.00 | 100.00 | 100.00 | 90–110 | ok |"),
        "{text}"
    );
    // The committed report said 95: a change inside the band is said, exit 0.
    fs::write(&md, text.replace("| peak | 100.00 |", "| peak | 95.00 |")).unwrap();
    let check = herd_sim()
        .args(["report", &file, "--check"])
        .output()
        .unwrap();
    let said = String::from_utf8(check.stdout).unwrap();
    assert!(check.status.success(), "{said}");
    assert_eq!(
        said.lines().next(),
        Some("down / exp: peak 95.00 → 100.00, band 90–110: ok")
    );
    // The band moves so that 100 is out: exit 1, the line says OUT.
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [101, 200]\n",
    );
    let check = herd_sim()
        .args(["report", &file, "--check"])
        .output()
        .unwrap();
    let said = String::from_utf8(check.stdout).unwrap();
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert_eq!(
        said.lines().next(),
        Some("down / exp: peak 95.00 → 100.00, band 101–200: OUT")
    );
    let stderr = String::from_utf8(check.stderr).unwrap();
    assert_eq!(stderr, "error: 1 of 1 figures out of their bands\n");
}

#[test]
fn bad_report_input_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    for (bands, named) in [
        (
            "[[bands]]\nmetric = \"goodness\"\nband = [0, 1]\n",
            "bands[0].metric",
        ),
        (
            "[[bands]]\nmetric = \"peak\"\nband = [10, 1]\n",
            "bands[0].band",
        ),
        (
            "[[bands]]\nmetric = \"peak\"\nband = [1, 2]\ntolerance = 1\n",
            "bands[0]",
        ),
        (
            "[[bands]]\nmetric = \"peak\"\npolicy = \"nope\"\nband = [1, 2]\n",
            "bands[0].policy",
        ),
        ("[[bands]]\nmetric = \"peak\"\nbend = [1, 2]\n", "bend"),
    ] {
        let file = write_report(dir.path(), bands);
        let out = herd_sim().args(["report", &file]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bands}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(named),
            "{named}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    // --check without a committed report names the flag.
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [0, 1000]\n",
    );
    let out = herd_sim()
        .args(["report", &file, "--check"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--committed"), "{stderr}");
}

/// The circles of an SVG as `(cx, cy, fill)`, in drawing order.
fn circles(svg: &str) -> Vec<(f64, f64, String)> {
    svg.split("<circle")
        .skip(1)
        .map(|tag| {
            let tag = &tag[..tag.find("/>").unwrap()];
            (
                attribute(tag, "cx").parse().unwrap(),
                attribute(tag, "cy").parse().unwrap(),
                attribute(tag, "fill"),
            )
        })
        .collect()
}

/// The two-point polylines of an SVG stroked `color`, as `[(x0, y0), (x1, y1)]`.
fn lines(svg: &str, color: &str) -> Vec<[(f64, f64); 2]> {
    svg.split("<polyline")
        .skip(1)
        .map(|tag| &tag[..tag.find("/>").unwrap()])
        .filter(|tag| attribute(tag, "stroke") == color)
        .map(|tag| {
            let xy: Vec<(f64, f64)> = attribute(tag, "points")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            [xy[0], xy[1]]
        })
        .collect()
}

fn attribute(tag: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    let at = tag.find(&key).unwrap() + key.len();
    tag[at..at + tag[at..].find('"').unwrap()].to_string()
}

/// The figures' rows of a written report: policy, mean, min, max (one scenario, one metric).
fn table_rows(report: &str) -> Vec<(String, f64, f64, f64)> {
    report
        .lines()
        .skip_while(|l| !l.starts_with("| scenario | policy | metric |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            let n = |i: usize| cells[i].parse::<f64>().unwrap();
            (cells[1].to_string(), n(3), n(4), n(5))
        })
        .collect()
}

#[test]
fn the_charts_marks_are_the_reports_numbers_and_check_says_a_changed_chart() {
    // 100 clients against a down server: exponential's peak is exactly 100 (every wave in one
    // window); the jittered policies spread theirs, differently a seed.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.toml");
    fs::write(
        &file,
        "seeds = 3\n[[scenarios]]\nid = \"down\"\nclients = 100\n\
         [[policies]]\nid = \"exp\"\nstrategy = \"exponential\"\n\
         [[policies]]\nid = \"full\"\nstrategy = \"full-jitter\"\n\
         [[policies]]\nid = \"decorrelated\"\nstrategy = \"decorrelated-jitter\"\n\
         [[bands]]\nmetric = \"peak\"\npolicy = \"exp\"\nband = [0, 60]\n\
         [[bands]]\nmetric = \"peak\"\nband = [0, 120]\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let md = dir.path().join("out/r.md");
    herd_sim_ok(&[
        "report",
        file,
        "--out",
        md.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    let text = fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("\n![down: figures and bands](r-charts/down.svg)\n"),
        "{text}"
    );
    let chart = dir.path().join("out/r-charts/down.svg");
    let svg = fs::read_to_string(&chart).unwrap();
    let rows = table_rows(&text);
    assert_eq!(rows.len(), 3, "{text}");
    assert_eq!(rows[0], ("exp".to_string(), 100.0, 100.0, 100.0));
    // The band edges, two a row in table order: exp's 0 and 60, then 0 and 120 twice.
    let edges = lines(&svg, "#009E73");
    assert_eq!(edges.len(), 6, "{svg}");
    let (zero, sixty, one_twenty) = (edges[0][0].0, edges[1][0].0, edges[3][0].0);
    assert_eq!(edges[2][0].0, zero);
    assert_eq!(edges[5][0].0, one_twenty);
    // A linear axis: 60 half way from 0 to 120 (pixels are rounded).
    assert!(
        (sixty - (zero + one_twenty) / 2.0).abs() <= 1.0,
        "{edges:?}"
    );
    let px = |v: f64| zero + (one_twenty - zero) * v / 120.0;
    let dots = circles(&svg);
    assert_eq!(dots.len(), 3, "{svg}");
    let bars = lines(&svg, "#5A5A5A");
    let mut bar = bars.iter();
    for (i, ((policy, mean, min, max), dot)) in rows.iter().zip(&dots).enumerate() {
        assert!(
            (dot.0 - px(*mean)).abs() <= 1.0,
            "{policy}: {dot:?} for {mean}"
        );
        // Rows top to bottom in table order, each between its band's edges' ends.
        let edge = edges[2 * i];
        assert!(
            edge[1].1 < dot.1 && dot.1 < edge[0].1,
            "{policy}: {edge:?} {dot:?}"
        );
        // exp's 100 is outside 0–60: vermillion; the others inside 0–120: blue.
        let expected = if *mean > if i == 0 { 60.0 } else { 120.0 } {
            "#D55E00"
        } else {
            "#0072B2"
        };
        assert_eq!(dot.2, expected, "{policy}");
        assert!(
            svg.contains(&format!(">\n{mean:.2}\n<")),
            "{policy}: {mean:.2}"
        );
        // The seeds' bar from the smallest to the largest, on the dot's row.
        if max > min {
            let b = bar.next().unwrap();
            assert!((b[0].0 - px(*min)).abs() <= 1.0 && (b[1].0 - px(*max)).abs() <= 1.0);
            assert_eq!(b[0].1, dot.1);
        }
    }
    // --check against its own output: the chart is the same bytes; edited, it is said in
    // one line and in the summary, without failing on its own (the band broken does: exit 1).
    let check = |expect: i32| {
        let out = herd_sim()
            .args([
                "report",
                file,
                "--check",
                "--committed",
                md.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(expect));
        String::from_utf8(out.stdout).unwrap()
    };
    let said = check(1);
    assert!(
        said.ends_with("the committed report and its chart are this run's, byte for byte\n"),
        "{said}"
    );
    fs::write(&chart, svg.replace("#0072B2", "#000000")).unwrap();
    let said = check(1);
    let shown = chart.display().to_string();
    assert!(
        said.contains(&format!("\n{shown}: the chart differs from this run's\n")),
        "{said}"
    );
    assert!(
        said.contains("; 1 of 1 charts differ from this run's: write it again"),
        "{said}"
    );
    fs::remove_file(&chart).unwrap();
    let said = check(1);
    assert!(
        said.contains(&format!("\n{shown}: not there (this run draws it)\n")),
        "{said}"
    );
}

#[test]
fn charts_are_written_only_beside_a_report_written_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_report(
        dir.path(),
        "[[bands]]\nmetric = \"peak\"\nband = [0, 1000]\n",
    );
    for out in [None, Some("-"), Some("/dev/null")] {
        let mut args = vec!["report", file.as_str()];
        args.extend(out.iter().flat_map(|o| ["--out", o]));
        herd_sim()
            .current_dir(dir.path())
            .args(&args)
            .assert()
            .success();
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "{out:?}: {names:?}");
    }
    // A chart that cannot be written fails before anything runs and leaves no report.
    fs::write(dir.path().join("r-charts"), "a file where the folder goes").unwrap();
    let md = dir.path().join("r.md");
    let out = herd_sim()
        .args(["report", &file, "--out", md.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: invalid --out") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(!md.exists());
}
