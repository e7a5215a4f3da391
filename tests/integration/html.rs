//! `--html PATH`: the page's summary is the run's JSON, number for number; the bytes do not
//! depend on `--threads`; the page names nothing outside itself; a small run carries every
//! attempt for its timeline (as many as the run's requests) and a large one none.

use std::fs;

use crate::{herd_sim_ok, refused_in_one_line};

/// The `data-key` cells of the page's summary table, row by row.
pub(crate) fn summary_cells(page: &str) -> Vec<Vec<(String, String)>> {
    let table = page
        .split("<table id=\"summary\">")
        .nth(1)
        .unwrap()
        .split("</table>")
        .next()
        .unwrap();
    table
        .split("<tr>")
        .skip(2)
        .map(|row| {
            row.split("<td data-key=\"")
                .skip(1)
                .map(|cell| {
                    let (key, rest) = cell.split_once("\">").unwrap();
                    let value = rest.split("</td>").next().unwrap();
                    (key.to_string(), value.to_string())
                })
                .collect()
        })
        .collect()
}

fn page(args: &[&str], dir: &std::path::Path, name: &str) -> String {
    let path = dir.join(name);
    let mut all = args.to_vec();
    all.extend(["--html", path.to_str().unwrap(), "--out", "/dev/null"]);
    herd_sim_ok(&all);
    fs::read_to_string(path).unwrap()
}

#[test]
fn the_pages_numbers_are_the_jsons_and_threads_do_not_change_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let run = [
        "--clients",
        "300",
        "--strategy",
        "full-jitter,exponential",
        "--recover-at",
        "3s",
    ];
    let one = page(
        &[&run[..], &["--threads", "1"]].concat(),
        dir.path(),
        "one.html",
    );
    let two = page(
        &[&run[..], &["--threads", "2"]].concat(),
        dir.path(),
        "two.html",
    );
    assert!(one == two, "the page differs between 1 and 2 threads");
    let text = herd_sim_ok(&[&run[..], &["--format", "json"]].concat());
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let results = json["results"].as_array().unwrap();
    // Each value's own text in the JSON, as written: the page must show these digits, not a
    // float parsed and written again.
    #[derive(serde::Deserialize)]
    struct Raw {
        results: Vec<std::collections::HashMap<String, Box<serde_json::value::RawValue>>>,
    }
    let raw: Raw = serde_json::from_slice(&text).unwrap();
    let rows = summary_cells(&one);
    assert_eq!(rows.len(), results.len());
    let mut compared = 0;
    let mut fractions = 0;
    for ((row, result), written) in rows.iter().zip(results).zip(&raw.results) {
        for (key, cell) in row {
            let expected = match written[key].get() {
                "null" => "-".to_string(),
                quoted if quoted.starts_with('"') => serde_json::from_str(quoted).unwrap(),
                number => number.to_string(),
            };
            assert_eq!(cell, &expected, "{key}");
            fractions += usize::from(expected.contains('.'));
            compared += 1;
        }
        // Every scalar of the JSON is in the table.
        let scalars = result
            .as_object()
            .unwrap()
            .values()
            .filter(|v| !v.is_array() && !v.is_object())
            .count();
        assert_eq!(row.len(), scalars);
    }
    assert!(fractions > 4, "{fractions} fractional figures compared");
    assert!(compared > 20, "{compared}");
    // The timeline's data: every attempt of the run once (replicate 0 is the run).
    let attempts = one
        .split("<script type=\"application/x-ndjson\" id=\"attempts\">\n")
        .nth(1)
        .unwrap()
        .split("</script>")
        .next()
        .unwrap()
        .lines()
        .count() as u64;
    let requests: u64 = results
        .iter()
        .map(|r| r["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(attempts, requests);
    // Client 0 of full jitter is drawn in the page itself, for readers without scripts.
    let first = one.split("<p id=\"shown\">").nth(1).unwrap();
    assert!(
        first.starts_with("client 0 of full-jitter: "),
        "{first:.80}"
    );
    // The command reproduces the run, seed included, without --threads or --html.
    assert!(one.contains(
        "<pre id=\"command\">herd-sim --clients 300 --strategy full-jitter,exponential --recover-at 3s --out /dev/null --seed 2015</pre>"
    ));
}

#[test]
fn the_page_names_nothing_outside_itself_and_large_runs_carry_no_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let text = page(&["--clients", "20000"], dir.path(), "big.html");
    for outside in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "<link",
        "@import",
        "<img",
    ] {
        assert!(!text.contains(outside), "{outside}");
    }
    // The only address is SVG's namespace, which no viewer fetches.
    let addresses = text.matches("http").count();
    assert_eq!(
        addresses,
        text.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(text.contains("<svg"), "the chart is inline");
    assert!(
        text.contains("src: url(data:font/ttf;base64,"),
        "the font is inside"
    );
    assert!(
        !text.contains("id=\"attempts\""),
        "no timeline past 5000 clients"
    );
    assert!(text.contains("Okabe–Ito"));
}

#[test]
fn html_on_standard_output_beside_the_report_is_refused() {
    let line = refused_in_one_line(&["--clients", "10", "--html", "-"]);
    assert!(line.contains("--html"), "{line}");
}

/// The text of the `<pre id="ID">` block of a page, unescaped.
pub(crate) fn pre_block(page: &str, id: &str) -> String {
    page.split(&format!("<pre id=\"{id}\">"))
        .nth(1)
        .unwrap()
        .split("</pre>")
        .next()
        .unwrap()
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A sweep's page and CSV, written as `page.html` and `rows.csv` in the folder `name` of `dir`
/// (the same words on the command line whatever the folder).
fn sweep_page(args: &[&str], dir: &std::path::Path, name: &str) -> (String, String) {
    let here = dir.join(name);
    fs::create_dir(&here).unwrap();
    let mut all = vec!["sweep"];
    all.extend(args);
    all.extend(["--html", "page.html", "--out", "rows.csv"]);
    crate::herd_sim_ok_in(&here, &all);
    (
        fs::read_to_string(here.join("page.html")).unwrap(),
        fs::read_to_string(here.join("rows.csv")).unwrap(),
    )
}

#[test]
fn a_sweeps_page_holds_its_csv_cell_for_cell_and_its_config_reproduces_it() {
    let dir = tempfile::tempdir().unwrap();
    let grid = [
        "--clients",
        "10,100,1000",
        "--strategy",
        "full-jitter,exponential",
        "--retries",
        "2,4",
        "--seeds",
        "2",
    ];
    let (one, csv) = sweep_page(
        &[&grid[..], &["--threads", "1"]].concat(),
        dir.path(),
        "one",
    );
    let (two, csv_two) = sweep_page(
        &[&grid[..], &["--threads", "2"]].concat(),
        dir.path(),
        "two",
    );
    assert_eq!(csv, csv_two);
    assert!(
        one == two,
        "the sweep's page differs between 1 and 2 threads"
    );
    // Every cell of the page's table is the CSV's cell of the same row and column.
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let rows = summary_cells(&one);
    assert_eq!(rows.len(), 3 * 2 * 2 * 2);
    assert_eq!(rows.len(), records.len());
    let mut compared = 0;
    for (row, record) in rows.iter().zip(&records) {
        for (key, cell) in row {
            let c = header.iter().position(|h| h == key).unwrap();
            assert_eq!(cell, &record[c], "{key}");
            compared += 1;
        }
        // The parameters that vary, replicate and seed and the herd's 14 figures but
        // last_success_s, empty in every row (the server never recovers).
        assert_eq!(row.len(), 3 + 2 + 13, "{row:?}");
        assert!(!row.iter().any(|(k, _)| k == "last_success_s"));
    }
    assert_eq!(compared, 24 * 18);
    // The whole CSV is embedded.
    assert!(one.contains(&format!(
        "<script type=\"text/csv\" id=\"sweep-csv\">\n{csv}</script>"
    )));
    // Charts against clients, a line a strategy, retries held at 2: peak, finish and waste.
    assert_eq!(one.matches("<figure><svg").count(), 3);
    assert!(one.contains(
        "A sweep of 24 rows (2 seeds a cell): strategy full-jitter, exponential × clients 10, \
         100, 1000 × retries 2, 4."
    ));
    // The command and the config reproduce the rows.
    let command = pre_block(&one, "command");
    assert!(
        command.starts_with("herd-sim sweep --clients 10,100,1000 ")
            && command.ends_with(" --seed 2015"),
        "{command}"
    );
    assert!(
        !command.contains("--threads") && !command.contains("--html"),
        "{command}"
    );
    let config = dir.path().join("sweep.toml");
    fs::write(&config, pre_block(&one, "config")).unwrap();
    let again = herd_sim_ok(&["sweep", "--config", config.to_str().unwrap()]);
    assert_eq!(String::from_utf8(again).unwrap(), csv);
}

#[test]
fn a_sweeps_page_is_refused_in_one_line_where_it_cannot_be_whole() {
    let dir = tempfile::tempdir().unwrap();
    let line = refused_in_one_line(&["sweep", "--clients", "10,20", "--html", "-"]);
    assert!(line.contains("--html") && line.contains("CSV"), "{line}");
    let page = dir.path().join("big.html");
    let line = refused_in_one_line(&[
        "sweep",
        "--clients",
        "1..101",
        "--seeds",
        "100",
        "--html",
        page.to_str().unwrap(),
        "--out",
        "/dev/null",
    ]);
    assert!(
        line.contains("at most 10000 rows (this one has 10100"),
        "{line}"
    );
    assert!(!page.exists(), "nothing written");
}

/// The `data-key` cells of the page's table `id`, row by row.
pub(crate) fn table_cells(page: &str, id: &str) -> Vec<Vec<(String, String)>> {
    let after = page.split(&format!("<table id=\"{id}\">")).nth(1).unwrap();
    summary_cells(&format!("<table id=\"summary\">{after}"))
}

#[test]
fn a_boundary_searchs_page_holds_its_json_and_threads_do_not_change_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{}/configs/collapse-spike.toml", env!("CARGO_MANIFEST_DIR"));
    let search = [
        "boundary",
        "--config",
        &config,
        "--axis",
        "spike-rate",
        "--range",
        "40..120",
        "--seeds",
        "4",
        "--tolerance",
        "10%",
        "--quiet",
    ];
    let page = |threads: &str, name: &str| {
        let path = dir.path().join(name);
        herd_sim_ok(
            &[
                &search[..],
                &[
                    "--threads",
                    threads,
                    "--html",
                    path.to_str().unwrap(),
                    "--out",
                    "/dev/null",
                ],
            ]
            .concat(),
        );
        fs::read_to_string(path).unwrap()
    };
    let one = page("1", "one.html");
    let two = page("2", "two.html");
    assert!(
        one == two,
        "the boundary page differs between 1 and 2 threads"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&herd_sim_ok(&[&search[..], &["--format", "json"]].concat()))
            .unwrap();
    let results = json["results"].as_array().unwrap();
    // A cell is the JSON's value: the same string, `-` for null, the same number (within a
    // part in 10^15: serde_json's parse of a float may land a unit in the last place off,
    // the page keeps the JSON's own text).
    let same = |cell: &str, v: &serde_json::Value| match v {
        serde_json::Value::String(s) => cell == s,
        serde_json::Value::Null => cell == "-",
        v => match (cell.parse::<f64>(), v.as_f64()) {
            (Ok(a), Some(b)) => (a - b).abs() <= 1e-15 * b.abs().max(1.0),
            _ => false,
        },
    };
    // A row a case: its boundary, interval, runs and stop as the JSON writes them.
    let cases = summary_cells(&one);
    assert_eq!(cases.len(), results.len());
    for (row, result) in cases.iter().zip(results) {
        assert_eq!(row[0].0, "case");
        assert!(same(&row[0].1, &result["strategy"]), "{row:?}");
        for (key, cell) in &row[1..] {
            assert!(
                same(cell, &result[key]),
                "{key}: {cell} against {}",
                result[key]
            );
        }
        assert_eq!(row.len(), 6);
    }
    // A row a point of every case, in order.
    let points = table_cells(&one, "points");
    let want: Vec<&serde_json::Value> = results
        .iter()
        .flat_map(|r| r["points"].as_array().unwrap())
        .collect();
    assert_eq!(points.len(), want.len());
    for (row, point) in points.iter().zip(want) {
        for (key, cell) in &row[1..] {
            assert!(
                same(cell, &point[key]),
                "{key}: {cell} against {}",
                point[key]
            );
        }
    }
    // The curve inline, one line a case; the command and its seed.
    assert_eq!(one.matches("<figure><svg").count(), 1);
    let command = pre_block(&one, "command");
    assert!(
        command.starts_with("herd-sim boundary --config "),
        "{command}"
    );
    assert!(
        command.ends_with("--seed 2015") && !command.contains("--html"),
        "{command}"
    );
}

/// A tune's page, written as `page.html` in the folder `name` of `dir` (the same words on
/// the command line whatever the folder), with `--out` to the null device.
fn tune_page(args: &[&str], dir: &std::path::Path, name: &str) -> String {
    let here = dir.join(name);
    fs::create_dir(&here).unwrap();
    let mut all = vec!["tune"];
    all.extend(args);
    all.extend(["--html", "page.html", "--out", "/dev/null"]);
    crate::herd_sim_ok_in(&here, &all);
    fs::read_to_string(here.join("page.html")).unwrap()
}

/// A cell is the JSON's value: the same string, `-` for null, the same number (within a part
/// in 10^15: serde_json's parse of a float may land a unit in the last place off, the page
/// keeps the JSON's own text).
fn same_as_json(cell: &str, v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => cell == s,
        serde_json::Value::Null => cell == "-",
        v => match (cell.parse::<f64>(), v.as_f64()) {
            (Ok(a), Some(b)) => (a - b).abs() <= 1e-15 * b.abs().max(1.0),
            _ => false,
        },
    }
}

#[test]
fn a_tunes_page_holds_its_json_and_threads_do_not_change_a_byte() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}/configs/tune/grpc-throttling.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let one = tune_page(&["--config", &config, "--threads", "1"], dir.path(), "one");
    let two = tune_page(&["--config", &config, "--threads", "2"], dir.path(), "two");
    assert!(one == two, "the tune page differs between 1 and 2 threads");
    let json: serde_json::Value = serde_json::from_slice(&herd_sim_ok(&[
        "tune", "--config", &config, "--format", "json",
    ]))
    .unwrap();
    // A row a point of the frontier, in order; each cell the JSON's figure of that point.
    let frontier = json["frontier"].as_array().unwrap();
    let rows = summary_cells(&one);
    assert_eq!(rows.len(), frontier.len());
    assert_eq!(rows.len(), 4, "the file's comments work out four points");
    let mut compared = 0;
    let mut marked = 0;
    for (row, point) in rows.iter().zip(frontier) {
        for (key, cell) in row {
            let want = if key == "recommended" {
                marked += usize::from(cell == "*");
                let chosen = point["params"] == json["recommended"];
                assert_eq!(cell, if chosen { "*" } else { "" });
                continue;
            } else if key == "seeds" {
                point["seeds"].clone()
            } else if let Some((term, stat)) = key.rsplit_once(' ') {
                // An objective's statistics, else the constraint's on that term.
                let constraint = point["constraints"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .find(|(text, _)| text.starts_with(&format!("{term} ")))
                    .map(|(_, s)| s[stat].clone());
                match point["objectives"].get(term) {
                    Some(s) => s[stat].clone(),
                    None => constraint.unwrap(),
                }
            } else {
                point["params"][key].clone()
            };
            assert!(same_as_json(cell, &want), "{key}: {cell} against {want}");
            compared += 1;
        }
        // The three parameters, the seeds, and goodput and amplification: mean, low, high.
        assert_eq!(row.len(), 1 + 3 + 1 + 2 * 3, "{row:?}");
    }
    assert_eq!(marked, 1, "one recommended point");
    assert_eq!(compared, 4 * 10);
    // The recommendation as the JSON has it, the rule, the study's figures.
    assert!(one.contains(
        "<strong id=\"recommended\">budget=grpc, budget.max_tokens=20, budget.token_ratio=0.05</strong>"
    ));
    assert!(one.contains(&format!("The rule: {}.", json["rule"].as_str().unwrap())));
    assert!(
        one.contains("40 candidates (an exhaustive search), each run in 2 scenarios (flaky, down)")
    );
    assert!(one.contains("8 of 40 meet the constraints, 4 points on the frontier"));
    // The frontier chart inline; no script runs (the JSON is a data block).
    assert_eq!(one.matches("<figure><svg").count(), 1);
    assert_eq!(one.matches("<script").count(), 1);
    assert!(one.contains("<script type=\"application/json\" id=\"tune-json\">"));
    // The command without --threads or --html, and the tune file as given: it reproduces the
    // search.
    assert_eq!(
        pre_block(&one, "command"),
        format!("herd-sim tune --config {config} --out /dev/null")
    );
    let given = pre_block(&one, "config");
    assert_eq!(given, fs::read_to_string(&config).unwrap());
    let again = dir.path().join("again.toml");
    fs::write(&again, &given).unwrap();
    let replay: serde_json::Value = serde_json::from_slice(&herd_sim_ok(&[
        "tune",
        "--config",
        again.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(replay, json);
    // Each scenario as it ran, with the seed of its runs.
    assert!(one.contains("<span id=\"seed\">2015, every scenario&#39;s own"));
    assert_eq!(one.matches("<pre class=\"scenario\"").count(), 2);
    assert!(one.contains("Okabe–Ito"));
}

#[test]
fn a_tunes_page_is_refused_in_one_line_where_it_cannot_be_whole() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{}/configs/tune/flaky-retries.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    // Standard output beside the report's; the report's own file.
    let line = refused_in_one_line(&["tune", "--config", &config, "--html", "-"]);
    assert!(line.contains("--html") && line.contains("--out"), "{line}");
    let out = dir.path().join("tune.txt");
    let out = out.to_str().unwrap();
    let line = refused_in_one_line(&["tune", "--config", &config, "--out", out, "--html", out]);
    assert!(line.contains("invalid --html"), "{line}");
    // An axis that is no term of the file, before any run.
    let page = dir.path().join("page.html");
    let page = page.to_str().unwrap();
    let line = refused_in_one_line(&[
        "tune",
        "--config",
        &config,
        "--out",
        out,
        "--html",
        page,
        "--chart-x",
        "peak@flaky",
    ]);
    assert!(line.contains("--chart-x: peak@flaky"), "{line}");
    // Under a regular file: bad input, the one line, exit 2, the report unwritten.
    let file = dir.path().join("notes.txt");
    fs::write(&file, "mine").unwrap();
    let under = file.join("page.html");
    let output = crate::herd_sim()
        .args(["tune", "--config", &config, "--out", out, "--html"])
        .arg(&under)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is not a directory"), "{stderr}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["notes.txt"], "nothing written");
    // A file with one term has a page without a chart, and says why.
    let text = tune_page(&["--config", &config], dir.path(), "one-term");
    assert!(
        text.contains("<figure><svg"),
        "retries and goodput: two terms"
    );
    let single = dir.path().join("single.toml");
    let original = fs::read_to_string(&config).unwrap();
    fs::write(
        &single,
        original.replace("constraints = [\"goodput_pct@flaky >= 98.9\"]\n", ""),
    )
    .unwrap();
    let text = tune_page(
        &["--config", single.to_str().unwrap()],
        dir.path(),
        "no-chart",
    );
    assert!(!text.contains("<figure>"));
    assert!(text.contains("No chart: the tune file has fewer than two terms"));
}
