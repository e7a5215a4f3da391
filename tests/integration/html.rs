//! `--html PATH`: the page's summary is the run's JSON, number for number; the bytes do not
//! depend on `--threads`; the page names nothing outside itself; a small run carries every
//! attempt for its timeline (as many as the run's requests) and a large one none.

use std::fs;

use crate::{herd_sim_ok, refused_in_one_line};

/// The `data-key` cells of the page's summary table, row by row.
fn summary_cells(page: &str) -> Vec<Vec<(String, String)>> {
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
    let json: serde_json::Value =
        serde_json::from_slice(&herd_sim_ok(&[&run[..], &["--format", "json"]].concat())).unwrap();
    let results = json["results"].as_array().unwrap();
    let rows = summary_cells(&one);
    assert_eq!(rows.len(), results.len());
    let mut compared = 0;
    for (row, result) in rows.iter().zip(results) {
        for (key, cell) in row {
            let expected = match &result[key] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "-".into(),
                v => v.to_string(),
            };
            assert_eq!(cell, &expected, "{key}");
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
