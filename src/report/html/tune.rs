//! A tune's page: the study in words (what is tuned, the candidates and the search, the
//! scenarios, the constraints and objectives, the runs spent); the recommended point and the
//! rule that picked it; the frontier as a table, a row a point with each term's mean and 95 %
//! interval, cell for cell the `--format json` output; the frontier chart
//! ([`crate::chart::frontier`]) as inline SVG; the search's rungs; the recommended point as
//! each library's configuration; and what reproduces the search: the command, the seeds, the
//! tune file as given and each scenario as the search ran it. The JSON is embedded as a data
//! block.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::boundary::{cell, Table};
use super::{escape, Skeleton};
use crate::advice::tune_export::snippet_title;

/// What a tune's page shows.
#[derive(Clone, Debug)]
pub struct TunePage<'a> {
    /// The tune's JSON output (`--format json`).
    pub json: &'a str,
    /// The frontier chart, an SVG document, or why it is not drawn.
    pub chart: Result<&'a str, &'a str>,
    /// The command that reproduces the search.
    pub command: &'a str,
    /// The seeds, as text: the master seed, or each scenario's.
    pub seeds: &'a str,
    /// The tune file as given.
    pub tune_file: &'a str,
    /// Each scenario by name, as the search ran it (a config file, TOML).
    pub scenarios: &'a [(String, String)],
}

type Object = BTreeMap<String, Box<RawValue>>;

/// A term's statistics as the JSON writes them (`null`: no run gave a value).
type Stats = BTreeMap<String, Option<Object>>;

#[derive(serde::Deserialize)]
struct Point {
    params: Object,
    objectives: Stats,
    constraints: Stats,
    seeds: Box<RawValue>,
}

#[derive(serde::Deserialize)]
struct Rung {
    candidates: Box<RawValue>,
    seeds: Box<RawValue>,
}

#[derive(serde::Deserialize)]
struct Tune {
    recommended: Option<Object>,
    frontier: Vec<Point>,
    runs: Box<RawValue>,
    exhaustive_runs: Box<RawValue>,
    method: String,
    rungs: Vec<Rung>,
    candidates: Box<RawValue>,
    feasible: Box<RawValue>,
    constraints: Vec<String>,
    objectives: Vec<String>,
    scenarios: Vec<String>,
    rule: String,
    configs: BTreeMap<String, String>,
}

/// The statistics the table shows of each term, in the JSON's names.
const STATS: [&str; 3] = ["mean", "low", "high"];

/// The terms the frontier table shows, by label: the objectives' (`minimize LABEL`), then the
/// constraints' (`LABEL OP BOUND`), each once; a tuned parameter is in its own column already.
fn terms(tune: &Tune, params: &[String]) -> Vec<String> {
    let objectives = tune
        .objectives
        .iter()
        .map(|o| o.split_once(' ').map_or(o.as_str(), |(_, label)| label));
    let constraints = tune
        .constraints
        .iter()
        .map(|c| c.split(' ').next().unwrap_or_default());
    let mut out: Vec<String> = Vec::new();
    for label in objectives.chain(constraints) {
        if !params.iter().any(|p| p == label) && !out.iter().any(|t| t == label) {
            out.push(label.to_string());
        }
    }
    out
}

/// The statistics of `label` at `point`: its objective's, else its constraint's.
fn stats_of<'a>(point: &'a Point, label: &str) -> Option<&'a Object> {
    if let Some(s) = point.objectives.get(label) {
        return s.as_ref();
    }
    point
        .constraints
        .iter()
        .find(|(text, _)| text.split(' ').next() == Some(label))
        .and_then(|(_, s)| s.as_ref())
}

/// The parameters of `point` as `name=value, ...`.
fn described(params: &Object) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", cell(Some(v))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The frontier table (a row a point: `recommended` marked `*`, the parameters, the seeds,
/// each term's mean, low and high) and the rungs table.
pub fn tables(json: &str) -> Result<[Table; 2], serde_json::Error> {
    let tune: Tune = serde_json::from_str(json)?;
    Ok(tables_of(&tune))
}

fn tables_of(tune: &Tune) -> [Table; 2] {
    let params: Vec<String> = match (tune.frontier.first(), &tune.recommended) {
        (Some(p), _) => p.params.keys().cloned().collect(),
        (None, Some(r)) => r.keys().cloned().collect(),
        (None, None) => Vec::new(),
    };
    let terms = terms(tune, &params);
    let mut header = vec!["recommended".to_string()];
    header.extend(params.iter().cloned());
    header.push("seeds".into());
    for t in &terms {
        header.extend(STATS.iter().map(|s| format!("{t} {s}")));
    }
    let shown = |params: &Object| -> Vec<(String, String)> {
        params
            .iter()
            .map(|(k, v)| (k.clone(), v.get().to_string()))
            .collect()
    };
    let chosen = tune.recommended.as_ref().map(shown);
    let rows = tune
        .frontier
        .iter()
        .map(|point| {
            let mark = if chosen.as_ref() == Some(&shown(&point.params)) {
                "*"
            } else {
                ""
            };
            let mut row = vec![mark.to_string()];
            row.extend(
                params
                    .iter()
                    .map(|p| cell(point.params.get(p).map(AsRef::as_ref))),
            );
            row.push(cell(Some(&point.seeds)));
            for t in &terms {
                let stats = stats_of(point, t);
                row.extend(
                    STATS
                        .iter()
                        .map(|s| cell(stats.and_then(|o| o.get(*s)).map(AsRef::as_ref))),
                );
            }
            row
        })
        .collect();
    let rungs = tune
        .rungs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                (i + 1).to_string(),
                cell(Some(&r.candidates)),
                cell(Some(&r.seeds)),
            ]
        })
        .collect();
    [
        (header, rows),
        (
            vec!["rung".into(), "candidates".into(), "seeds".into()],
            rungs,
        ),
    ]
}

/// `n word`, the word plural unless `n` is 1.
fn counted(n: &str, word: &str) -> String {
    format!("{n} {word}{}", if n == "1" { "" } else { "s" })
}

/// The study in words.
fn words(tune: &Tune, params: &[String]) -> String {
    let tuned = match params.len() {
        0 => "the policy".to_string(),
        _ => params.join(", "),
    };
    let search = match tune.method.as_str() {
        "halving" => format!(
            "successive halving over {} rungs from a Latin hypercube design",
            tune.rungs.len()
        ),
        other => format!("an {other} search"),
    };
    let candidates = cell(Some(&tune.candidates));
    let constraints = match tune.constraints.len() {
        0 => "no constraint".to_string(),
        _ => format!(
            "the constraints {} (met on the mean over seeds)",
            tune.constraints.join(", ")
        ),
    };
    format!(
        "Which {tuned} to ship: {} ({search}), each run in {} ({}); {constraints}; objectives: \
         {}. {} of {} meet the constraints, {} on the frontier (non-dominated among them). {} \
         (an exhaustive grid of the same resolution: {}).",
        counted(&candidates, "candidate"),
        counted(&tune.scenarios.len().to_string(), "scenario"),
        tune.scenarios.join(", "),
        tune.objectives.join(", "),
        cell(Some(&tune.feasible)),
        candidates,
        counted(&tune.frontier.len().to_string(), "point"),
        counted(&cell(Some(&tune.runs)), "run"),
        cell(Some(&tune.exhaustive_runs)),
    )
}

/// The whole page.
pub fn render_tune(page: &TunePage<'_>) -> Result<String, serde_json::Error> {
    let tune: Tune = serde_json::from_str(page.json)?;
    let [(header, rows), (rung_header, rungs)] = tables_of(&tune);
    let params: Vec<String> = header[1..]
        .iter()
        .take_while(|h| *h != "seeds")
        .cloned()
        .collect();
    let mut out = Skeleton::start("herd-sim tune");
    out.scenario(&words(&tune, &params));
    out.heading("Recommendation");
    match &tune.recommended {
        Some(chosen) => {
            out.raw(&format!(
                "<p>Recommended (<code>*</code> below): <strong id=\"recommended\">{}</strong>.</p>\n",
                escape(&described(chosen))
            ));
        }
        None => out.raw(
            "<p id=\"recommended\">None: no candidate meets the constraints (widen \
             <code>[params]</code> or relax them).</p>\n",
        ),
    }
    out.paragraph(&format!(
        "The rule: {}. Intervals are 95 % (Student's t over seeds).",
        tune.rule
    ));
    out.heading("Frontier");
    out.paragraph(
        "A row a point of the frontier: its parameters, the seeds it ran in every scenario, and \
         each term's mean with the ends of its 95 % interval, as the JSON has them (-: no run \
         gave a value).",
    );
    out.table("summary", &header, &rows);
    match page.chart {
        Ok(svg) => out.charts(&[svg.as_bytes().to_vec()]),
        Err(why) => out.paragraph(&format!("No chart: {why}.")),
    }
    out.heading("Search");
    out.paragraph(
        "The rungs, first to last: the candidates in the running and the seeds each has in \
         every scenario (one rung for an exhaustive search); the frontier is the last rung's.",
    );
    out.table("rungs", &rung_header, &rungs);
    if !tune.configs.is_empty() {
        out.heading("The recommended point as configuration");
        for (library, text) in &tune.configs {
            out.raw(&format!(
                "<p>{}:</p>\n<pre class=\"snippet\" data-library=\"{}\">{}</pre>\n",
                escape(snippet_title(library, text)),
                escape(library),
                escape(text)
            ));
        }
    }
    out.reproduce_seeds(
        "Seeds:",
        page.seeds,
        page.command,
        "The tune file as given (<code>herd-sim tune --config tune.toml</code> runs it; a \
         scenario's <code>config</code> is read relative to it):",
        page.tune_file,
    );
    out.paragraph(
        "Run r of a candidate in a scenario is replicate r of the one-cell sweep of the \
         candidate's values over the scenario, with the sweep's seed derivation, so herd-sim \
         sweep with the same values replays it. Each scenario as the search ran it (the file's \
         keys and its config's, the seed included):",
    );
    for (name, config) in page.scenarios {
        out.raw(&format!(
            "<p>{}:</p>\n<pre class=\"scenario\" data-name=\"{}\">{}</pre>\n",
            escape(name),
            escape(name),
            escape(config)
        ));
    }
    out.colophon(
        "blue: the frontier, its bars the 95 % intervals; vermillion: the ring of the \
         recommended point; grey: the candidates off it",
    );
    out.data("tune-json", "application/json", page.json);
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{"candidates": 3, "configs": {"herd-sim": "retries = 6\n"},
        "constraints": ["goodput_pct@flaky >= 98.9", "retries <= 9"], "exhaustive_runs": 9,
        "feasible": 2, "frontier": [
          {"constraints": {"goodput_pct@flaky >= 98.9": {"high": 99.3, "low": 99.1, "mean": 99.2, "n": 3},
                           "retries <= 9": {"high": 6.0, "low": 6.0, "mean": 6.0, "n": 1}},
           "objectives": {"retries": {"high": 6.0, "low": 6.0, "mean": 6.0, "n": 1},
                          "goodput_pct@flaky": {"high": 99.3, "low": 99.1, "mean": 99.2, "n": 3}},
           "params": {"retries": 6}, "seeds": 3},
          {"constraints": {"goodput_pct@flaky >= 98.9": null, "retries <= 9": {"high": 7.0, "low": 7.0, "mean": 7.0, "n": 1}},
           "objectives": {"retries": {"high": 7.0, "low": 7.0, "mean": 7.0, "n": 1}, "goodput_pct@flaky": null},
           "params": {"retries": 7}, "seeds": 3}],
        "method": "exhaustive", "objectives": ["minimize retries", "maximize goodput_pct@flaky"],
        "recommended": {"retries": 6}, "rule": "the rule", "rungs": [{"candidates": 3, "seeds": 3}],
        "runs": 9, "scenarios": ["flaky"]}"#;

    #[test]
    fn a_frontier_point_is_a_row_of_the_jsons_text_and_a_term_is_shown_once() {
        let [(header, rows), (_, rungs)] = tables(JSON).unwrap();
        // retries is a parameter (its own column), goodput an objective and a constraint.
        assert_eq!(
            header,
            [
                "recommended",
                "retries",
                "seeds",
                "goodput_pct@flaky mean",
                "goodput_pct@flaky low",
                "goodput_pct@flaky high"
            ]
        );
        assert_eq!(
            rows,
            [
                ["*", "6", "3", "99.2", "99.1", "99.3"],
                ["", "7", "3", "-", "-", "-"]
            ]
        );
        assert_eq!(rungs, [["1", "3", "3"]]);
    }

    #[test]
    fn the_page_states_the_study_the_pick_and_its_rule() {
        let scenarios = [("flaky".to_string(), "clients = 10\n".to_string())];
        let page = render_tune(&TunePage {
            json: JSON,
            chart: Err("the tune file has one term"),
            command: "herd-sim tune --config t.toml",
            seeds: "2015, laid over every scenario",
            tune_file: "seeds = 3\n",
            scenarios: &scenarios,
        })
        .unwrap();
        assert!(page.contains(
            "Which retries to ship: 3 candidates (an exhaustive search), each run in 1 scenario \
             (flaky); the constraints goodput_pct@flaky &gt;= 98.9, retries &lt;= 9 (met on the \
             mean over seeds); objectives: minimize retries, maximize goodput_pct@flaky. 2 of 3 \
             meet the constraints, 2 points on the frontier (non-dominated among them). 9 runs \
             (an exhaustive grid of the same resolution: 9)."
        ));
        assert!(page.contains("<strong id=\"recommended\">retries=6</strong>"));
        assert!(page.contains("The rule: the rule."));
        assert!(page.contains("No chart: the tune file has one term."));
        assert!(page.contains("<pre class=\"scenario\" data-name=\"flaky\">clients = 10\n</pre>"));
        assert!(page.contains("<p>herd-sim config keys:</p>"));
    }
}
