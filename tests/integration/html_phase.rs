//! `herd-sim boundary --html` over two axes: the page of a phase diagram is the same bytes for
//! one thread and two, its tables are the `--format json` output cell for cell in the JSON's own
//! number text, its diagram is inline, it names nothing outside itself, and its command (with
//! the seed) and its config replay the search byte for byte.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use serde_json::value::RawValue;

use crate::boundary_plane::{config, plane_args};
use crate::herd_sim_ok_in;
use crate::html::{pre_block, summary_cells, table_cells};

/// The page and the JSON of the guide's small phase diagram on `threads` threads, written in
/// the folder `name` of `dir` as `page.html` and `report.json` (the same words whatever the
/// folder).
fn page_and_json(dir: &Path, name: &str, threads: &str) -> (String, String) {
    let config = config();
    let mut args = plane_args(&config, "json", threads);
    args.extend(["--html", "page.html", "--out", "report.json"]);
    let here = dir.join(name);
    fs::create_dir(&here).unwrap();
    herd_sim_ok_in(&here, &args);
    (
        fs::read_to_string(here.join("page.html")).unwrap(),
        fs::read_to_string(here.join("report.json")).unwrap(),
    )
}

/// The JSON `args` write to `report.json`, run in the folder `name` of `dir` after `files`
/// (name, text) are written there.
fn replayed(dir: &Path, name: &str, files: &[(&str, &str)], args: &[&str]) -> String {
    let here = dir.join(name);
    fs::create_dir(&here).unwrap();
    for (file, text) in files {
        fs::write(here.join(file), text).unwrap();
    }
    herd_sim_ok_in(&here, args);
    fs::read_to_string(here.join("report.json")).unwrap()
}

type Raw = HashMap<String, Box<RawValue>>;

/// `raw`'s text as a table shows it: a string bare, a number as the JSON wrote it.
fn text(raw: &RawValue) -> String {
    match serde_json::from_str::<String>(raw.get()) {
        Ok(s) => s,
        Err(_) => raw.get().to_string(),
    }
}

fn objects(raw: &RawValue) -> Vec<Raw> {
    serde_json::from_str(raw.get()).unwrap()
}

/// The two values of a `[first, second]` pair, in the JSON's text.
fn pair(raw: &RawValue) -> [String; 2] {
    let [a, b]: [Box<RawValue>; 2] = serde_json::from_str(raw.get()).unwrap();
    [text(&a), text(&b)]
}

#[test]
fn a_phase_diagrams_page_is_its_json_in_the_jsons_own_text_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (one, json) = page_and_json(dir.path(), "one", "1");
    let (two, json_two) = page_and_json(dir.path(), "two", "2");
    assert!(one == two, "the phase page differs between 1 and 2 threads");
    assert_eq!(json, json_two);

    let report: Raw = serde_json::from_str(&json).unwrap();
    let axes: Vec<Raw> = objects(&report["axes"]);
    let names: Vec<String> = axes.iter().map(|a| text(&a["name"])).collect();
    assert_eq!(names, ["spike-rate", "spike-duration"]);
    let results = objects(&report["results"]);
    assert_eq!(results.len(), 1);
    let result = &results[0];
    assert_eq!(text(&result["strategy"]), "naive");

    // The cases: runs and stop as the JSON writes them, and how many cells and squares it has.
    let cells = objects(&result["cells"]);
    let contour = objects(&result["contour"]);
    let want = [
        ("case", "naive".to_string()),
        ("runs", text(&result["runs"])),
        ("stop", text(&result["stop"])),
        ("cells", cells.len().to_string()),
        ("contour", contour.len().to_string()),
    ];
    let cases = summary_cells(&one);
    assert_eq!(cases.len(), 1);
    let got: Vec<(&str, &str)> = cases[0]
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let want_refs: Vec<(&str, &str)> = want.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(got, want_refs);
    assert!(cells.len() >= 25, "the coarse grid at least");
    assert!(!contour.is_empty());

    // Every cell, in order: both values under the axes' names, then its figures, each the
    // JSON's own text (a float parsed and written again may move its last digit).
    let rows = table_cells(&one, "cells");
    assert_eq!(rows.len(), cells.len());
    let mut compared = 0;
    for (row, c) in rows.iter().zip(&cells) {
        let [a, b] = pair(&c["values"]);
        let mut want = vec![
            ("case".to_string(), "naive".to_string()),
            (names[0].clone(), a),
            (names[1].clone(), b),
        ];
        for key in ["seeds", "collapsed", "p", "p_low", "p_high"] {
            want.push((key.to_string(), text(&c[key])));
        }
        assert_eq!(row, &want);
        compared += want.len();
    }
    // Every contour square, from its low corner to its high one.
    let rows = table_cells(&one, "contour");
    assert_eq!(rows.len(), contour.len());
    for (row, q) in rows.iter().zip(&contour) {
        let [fa, fb] = pair(&q["from"]);
        let [ta, tb] = pair(&q["to"]);
        let want = vec![
            ("case".to_string(), "naive".to_string()),
            (format!("from {}", names[0]), fa),
            (format!("from {}", names[1]), fb),
            (format!("to {}", names[0]), ta),
            (format!("to {}", names[1]), tb),
        ];
        assert_eq!(row, &want);
        compared += want.len();
    }
    assert!(compared > 300, "{compared} cells compared");
    // Some probability keeps more digits than a round trip through f64 text would promise.
    assert!(one.contains("<td data-key=\"p_high\">0.4592581264399005</td>"));

    // The diagram inline, its contour black lines, its scale stated; the JSON
    // whole as a data block; no address but SVG's namespace.
    assert_eq!(one.matches("<figure><svg").count(), 1);
    // Marching squares draws one segment through a square, or two through a saddle.
    let segments = one.matches("stroke=\"#000000\" stroke-width=\"2\"").count();
    assert!(
        (1..=2 * contour.len()).contains(&segments),
        "{segments} segments through {} squares",
        contour.len()
    );
    assert!(one.contains("fill=\"#4575B4\""), "p = 0 drawn");
    assert!(one.contains("#4575B4 (blue) at a collapse probability of 0, #FFFFBF (pale yellow) at 0.5 and #D73027 (red) at 1"));
    assert!(one.contains(&format!(
        "<script type=\"application/json\" id=\"boundary-json\">\n{json}</script>"
    )));
    assert_eq!(
        one.matches("http").count(),
        one.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(one.contains(
        "<p id=\"scenario\">Where the collapse probability crosses 0.5 over spike-rate (per s) and spike-duration (s), for 1 case: a 5 x 5 grid"
    ));
}

#[test]
fn a_phase_diagrams_page_replays_from_its_command_and_from_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let (page, json) = page_and_json(dir.path(), "page", "2");
    let command = pre_block(&page, "command");
    assert!(
        command.ends_with("--format json --out report.json --seed 2015"),
        "{command}"
    );
    assert!(!command.contains("--html") && !command.contains("--threads"));
    assert!(page.contains("<span id=\"seed\">2015</span>"));
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[0], "herd-sim");
    assert!(words.iter().all(|w| !w.contains('\'')), "{command}");
    // The command, run elsewhere, writes the same JSON; so does it with the page's config in
    // place of the config it names.
    assert_eq!(replayed(dir.path(), "command", &[], &words[1..]), json);
    let config = pre_block(&page, "config");
    assert!(config.contains("seed = 2015"), "{config}");
    let at = words.iter().position(|w| *w == "--config").unwrap();
    let mut replay = words[1..].to_vec();
    replay[at] = "scenario.toml";
    let files = [("scenario.toml", config.as_str())];
    assert_eq!(replayed(dir.path(), "config", &files, &replay), json);
}
