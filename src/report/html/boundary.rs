//! A boundary search's page: the question in words (the axis, its unit, the level and the
//! method); a table of each case's boundary with its 95 % interval, runs and why the search
//! stopped; a table of every evaluated point (seeds, collapsed, the probability and its
//! Wilson interval), cell for cell the `--format json` output; the probability curve
//! ([`crate::chart::boundary`]) as inline SVG; the verdict and seed rules; and what reproduces
//! the search: the command, the master seed and the scenario as a config file. The JSON is
//! embedded as a data block.

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;

use super::Skeleton;

/// What a boundary page shows.
#[derive(Clone, Debug, Default)]
pub struct BoundaryPage<'a> {
    /// The search's JSON output (`--format json`).
    pub json: &'a str,
    /// The chart, an SVG document: the probability curve, or the phase diagram of a search
    /// over two axes.
    pub chart: &'a str,
    /// The command that reproduces the search.
    pub command: &'a str,
    /// The master seed.
    pub seed: u64,
    /// The scenario as a config file (TOML).
    pub config: &'a str,
}

/// A JSON value's text as the table shows it: strings bare, `null` as `-`, numbers as the
/// JSON writes them (their own text: parsing a float and writing it again may move its last
/// digit).
pub fn cell(value: Option<&RawValue>) -> String {
    let Some(raw) = value else {
        return "-".into();
    };
    match raw.get() {
        "null" => "-".into(),
        text if text.starts_with('"') => serde_json::from_str(text).unwrap_or_default(),
        text => text.to_string(),
    }
}

/// A JSON object, its values in their own text.
pub(super) type Object = HashMap<String, Box<RawValue>>;

#[derive(serde::Deserialize)]
pub(super) struct Results {
    pub(super) results: Vec<Object>,
}

/// A result's case: its strategy and the values of its other lists.
pub(super) fn case(result: &Object) -> String {
    let mut name = cell(result.get("strategy").map(AsRef::as_ref));
    let with: BTreeMap<String, Box<RawValue>> = result
        .get("with")
        .and_then(|w| serde_json::from_str(w.get()).ok())
        .unwrap_or_default();
    for (k, v) in &with {
        name.push_str(&format!(", {k}={}", cell(Some(v))));
    }
    name
}

/// A table: its header and rows.
pub type Table = (Vec<String>, Vec<Vec<String>>);

/// A table's header: `case`, then `names`.
pub(super) fn columns(names: &[&str]) -> Vec<String> {
    std::iter::once("case".to_string())
        .chain(names.iter().map(|s| s.to_string()))
        .collect()
}

/// A row of case `name`: `object`'s values of `keys`, in order.
pub(super) fn row(name: &str, object: &Object, keys: &[&str]) -> Vec<String> {
    std::iter::once(name.to_string())
        .chain(keys.iter().map(|k| cell(object.get(*k).map(AsRef::as_ref))))
        .collect()
}

/// The boundaries table (a row a case) and the points table (a row a point of a case).
pub fn tables(json: &str) -> Result<[Table; 2], serde_json::Error> {
    let results = serde_json::from_str::<Results>(json)?.results;
    const CASE: [&str; 5] = ["boundary", "boundary_low", "boundary_high", "runs", "stop"];
    const POINT: [&str; 6] = ["value", "seeds", "collapsed", "p", "p_low", "p_high"];
    let mut cases = Vec::new();
    let mut points = Vec::new();
    for result in &results {
        let name = case(result);
        cases.push(row(&name, result, &CASE));
        let list: Vec<Object> = match result.get("points") {
            Some(raw) => serde_json::from_str(raw.get())?,
            None => Vec::new(),
        };
        for point in &list {
            points.push(row(&name, point, &POINT));
        }
    }
    Ok([(columns(&CASE), cases), (columns(&POINT), points)])
}

/// The whole page.
pub fn render_boundary(page: &BoundaryPage<'_>) -> Result<String, serde_json::Error> {
    let json: Object = serde_json::from_str(page.json)?;
    let text = |key: &str| cell(json.get(key).map(AsRef::as_ref));
    let [(case_header, cases), (point_header, points)] = tables(page.json)?;
    let mut out = Skeleton::start("herd-sim boundary");
    let along = format!("along {} ({})", text("axis"), text("unit"));
    question(&mut out, &json, &along, cases.len());
    out.heading("Boundaries");
    out.table("summary", &case_header, &cases);
    out.charts(&[page.chart.as_bytes().to_vec()]);
    out.heading("Points");
    out.table("points", &point_header, &points);
    rules_and_reproduce(&mut out, &json, page);
    out.colophon("one colour a case, in the palette's order");
    out.data("boundary-json", "application/json", page.json);
    Ok(out.finish())
}

/// The question in words: where the collapse probability crosses the level `along` the axes,
/// for `cases` cases, and the method.
pub(super) fn question(out: &mut Skeleton, json: &Object, along: &str, cases: usize) {
    let text = |key: &str| cell(json.get(key).map(AsRef::as_ref));
    out.scenario(&format!(
        "Where the collapse probability crosses {} {along}, for {cases} {}: {}.",
        text("level"),
        if cases == 1 { "case" } else { "cases" },
        text("method")
    ));
}

/// The sections both searches' pages end with: the verdict and seed rules, then the command,
/// the seed and the scenario as a config file.
pub(super) fn rules_and_reproduce(out: &mut Skeleton, json: &Object, page: &BoundaryPage<'_>) {
    let text = |key: &str| cell(json.get(key).map(AsRef::as_ref));
    out.heading("Rules");
    out.paragraph(&format!("Verdict: {}", text("verdict_rule")));
    out.paragraph(&format!("Seeds: {}", text("seed_rule")));
    out.reproduce(
        page.seed,
        page.command,
        "The scenario as a config file (the command's <code>--config</code>):",
        page.config,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_and_its_points_are_rows_in_the_jsons_text() {
        let json = r#"{"results":[{"strategy":"naive","with":{"retries":"2"},"boundary":75.0,
            "boundary_low":70.0,"boundary_high":null,"runs":40,"stop":"converged",
            "points":[{"value":40.0,"seeds":8,"collapsed":0,"p":0.0,"p_low":0.0,"p_high":0.9775825085499432}]}]}"#;
        let [(ch, cases), (ph, points)] = tables(json).unwrap();
        assert_eq!(ch[0], "case");
        assert_eq!(
            cases,
            [["naive, retries=2", "75.0", "70.0", "-", "40", "converged"]]
        );
        assert_eq!(ph.len(), 7);
        assert_eq!(
            points,
            // The last digit kept: serde_json's parse and write would give ...433.
            [[
                "naive, retries=2",
                "40.0",
                "8",
                "0",
                "0.0",
                "0.0",
                "0.9775825085499432"
            ]]
        );
    }
}
