//! A phase diagram's page (a boundary search over two axes), on the one-axis page's design: the
//! question in words (both axes and their units, the level and the method); a table of each
//! case's runs, stop, cells and contour squares; the phase diagram ([`crate::chart::phase`]:
//! the heat map with the contour) as inline SVG; a table of every evaluated cell (both values,
//! seeds, collapsed, the probability and its Wilson interval) and one of the squares the
//! contour crosses, cell for cell the `--format json` output in its own number text; the
//! verdict and seed rules; and what reproduces the search: the command, the master seed and the
//! scenario as a config file. The heat map's colour scale is stated, since it is not the
//! Okabe–Ito palette. The JSON is embedded as a data block.

use serde_json::value::RawValue;

use super::boundary::{
    case, cell, columns, question, row, rules_and_reproduce, BoundaryPage, Object, Table,
};
use super::{escape, Skeleton};

/// An axis as the JSON names it.
#[derive(serde::Deserialize)]
struct Axis {
    name: String,
    unit: String,
}

impl Axis {
    /// The name with its unit, when it has one.
    fn with_unit(&self) -> String {
        match self.unit.as_str() {
            "" => self.name.clone(),
            unit => format!("{} ({unit})", self.name),
        }
    }
}

/// The parts of the JSON the page lays out.
#[derive(serde::Deserialize)]
struct Plane {
    axes: [Axis; 2],
    results: Vec<Object>,
}

/// The objects of list `key` of `object` (none when it has no such key).
fn list(object: &Object, key: &str) -> Result<Vec<Object>, serde_json::Error> {
    match object.get(key) {
        Some(raw) => serde_json::from_str(raw.get()),
        None => Ok(Vec::new()),
    }
}

/// A pair of values (`[first axis, second axis]`) as two cells, in the JSON's text.
fn pair(object: &Object, key: &str) -> Result<[String; 2], serde_json::Error> {
    let raw = object.get(key).map_or("null", |r| r.get());
    let [a, b]: [Option<Box<RawValue>>; 2] = serde_json::from_str(raw)?;
    Ok([cell(a.as_deref()), cell(b.as_deref())])
}

/// The cases table (a row a case: runs, stop, how many cells and contour squares), the cells
/// table (a row a cell of a case) and the contour table (a row a square of a case).
fn plane_tables(plane: &Plane) -> Result<[Table; 3], serde_json::Error> {
    const CASE: [&str; 2] = ["runs", "stop"];
    const CELL: [&str; 5] = ["seeds", "collapsed", "p", "p_low", "p_high"];
    let [a, b] = [&plane.axes[0].name, &plane.axes[1].name];
    let mut cases = Vec::new();
    let mut cells = Vec::new();
    let mut squares = Vec::new();
    for result in &plane.results {
        let name = case(result);
        let (result_cells, contour) = (list(result, "cells")?, list(result, "contour")?);
        let mut case_row = row(&name, result, &CASE);
        case_row.extend([result_cells.len(), contour.len()].map(|n| n.to_string()));
        cases.push(case_row);
        for c in &result_cells {
            let mut line = vec![name.clone()];
            line.extend(pair(c, "values")?);
            line.extend(row(&name, c, &CELL).into_iter().skip(1));
            cells.push(line);
        }
        for square in &contour {
            let mut line = vec![name.clone()];
            line.extend(pair(square, "from")?);
            line.extend(pair(square, "to")?);
            squares.push(line);
        }
    }
    let case_header = columns(&["runs", "stop", "cells", "contour"]);
    let mut cell_header = columns(&[a.as_str(), b.as_str()]);
    cell_header.extend(CELL.map(String::from));
    let square_header = columns(&[
        &format!("from {a}"),
        &format!("from {b}"),
        &format!("to {a}"),
        &format!("to {b}"),
    ]);
    Ok([
        (case_header, cases),
        (cell_header, cells),
        (square_header, squares),
    ])
}

/// The tables of a phase diagram's JSON (`--format json`): cases, cells, contour squares.
pub fn tables(json: &str) -> Result<[Table; 3], serde_json::Error> {
    plane_tables(&serde_json::from_str(json)?)
}

/// The whole page. `page.chart` is the phase diagram.
pub fn render_phase(page: &BoundaryPage<'_>) -> Result<String, serde_json::Error> {
    let json: Object = serde_json::from_str(page.json)?;
    let plane: Plane = serde_json::from_str(page.json)?;
    let [(case_header, cases), (cell_header, cells), (square_header, squares)] =
        plane_tables(&plane)?;
    let mut out = Skeleton::start("herd-sim boundary: phase diagram");
    let over = format!(
        "over {} and {}",
        plane.axes[0].with_unit(),
        plane.axes[1].with_unit()
    );
    question(&mut out, &json, &over, cases.len());
    out.heading("Cases");
    out.table("summary", &case_header, &cases);
    out.charts(&[page.chart.as_bytes().to_vec()]);
    out.heading("Cells");
    out.paragraph(
        "Every evaluated pair of values: its seeds, how many collapsed, the collapse \
         probability and its 95 % Wilson interval.",
    );
    out.table("cells", &cell_header, &cells);
    out.heading("Contour");
    out.paragraph(
        "The squares the contour crosses, each from its low corner to its high one: the black \
         line of the diagram runs through them.",
    );
    out.table("contour", &square_header, &squares);
    rules_and_reproduce(&mut out, &json, page);
    out.colophon_colours(&escape(&crate::chart::phase::scale_words()));
    out.data("boundary-json", "application/json", page.json);
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_its_cells_and_its_squares_are_rows_in_the_jsons_text() {
        let json = r#"{"axes":[{"name":"spike-rate","unit":"per s","range":[40.0,120.0]},
            {"name":"spike-duration","unit":"s","range":[1.0,15.0]}],
            "results":[{"strategy":"naive","with":{"retries":"2"},"runs":12,"stop":"converged",
            "cells":[{"values":[40.0,1.0],"seeds":6,"collapsed":0,"p":0.0,"p_low":0.0,
            "p_high":0.4592581264399005,"run_seeds":[1],"collapsed_seeds":[]},
            {"values":[60.0,1.0],"seeds":6,"collapsed":6,"p":1.0,"p_low":0.5407418735600995,
            "p_high":1.0,"run_seeds":[2],"collapsed_seeds":[2]}],
            "contour":[{"from":[40.0,1.0],"to":[60.0,4.5]}]}]}"#;
        let [(ch, cases), (lh, cells), (sh, squares)] = tables(json).unwrap();
        assert_eq!(ch, ["case", "runs", "stop", "cells", "contour"]);
        assert_eq!(cases, [["naive, retries=2", "12", "converged", "2", "1"]]);
        assert_eq!(
            lh,
            [
                "case",
                "spike-rate",
                "spike-duration",
                "seeds",
                "collapsed",
                "p",
                "p_low",
                "p_high"
            ]
        );
        assert_eq!(
            cells[1],
            [
                "naive, retries=2",
                "60.0",
                "1.0",
                "6",
                "6",
                "1.0",
                "0.5407418735600995",
                "1.0"
            ]
        );
        assert_eq!(
            sh,
            [
                "case",
                "from spike-rate",
                "from spike-duration",
                "to spike-rate",
                "to spike-duration"
            ]
        );
        assert_eq!(
            squares,
            [["naive, retries=2", "40.0", "1.0", "60.0", "4.5"]]
        );
    }
}
