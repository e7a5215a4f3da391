//! A two-axis [`PlaneReport`] as bytes: a table of each case's grid of collapse probabilities
//! (the default), JSON with every cell and the contour's squares, CSV of the cells (one row
//! each, both axis columns). Pure: serialisation only.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::export::{stop_text, Format};
use super::plane::PlaneReport;
use super::unit_of;

/// An axis as the JSON of either search gives it: its name, unit and range in that unit.
#[derive(Serialize)]
pub(super) struct JsonAxis {
    pub(super) name: &'static str,
    pub(super) unit: &'static str,
    pub(super) range: [f64; 2],
}

#[derive(Serialize)]
struct JsonReport<'a> {
    axis: &'static str,
    unit: &'static str,
    axes: Vec<JsonAxis>,
    level: f64,
    verdict_rule: &'a str,
    method: &'a str,
    seed_rule: &'a str,
    results: Vec<JsonResult<'a>>,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    strategy: &'a str,
    with: BTreeMap<&'a str, &'a str>,
    runs: u64,
    stop: &'static str,
    cells: Vec<JsonCell>,
    contour: Vec<JsonSquare>,
}

#[derive(Serialize)]
struct JsonCell {
    values: [f64; 2],
    seeds: u64,
    collapsed: u64,
    p: f64,
    p_low: f64,
    p_high: f64,
    run_seeds: Vec<u64>,
    collapsed_seeds: Vec<u64>,
}

#[derive(Serialize)]
struct JsonSquare {
    from: [f64; 2],
    to: [f64; 2],
}

impl PlaneReport {
    /// The report in `format`.
    pub fn serialize(&self, format: Format) -> Vec<u8> {
        match format {
            Format::Table => self.table().into_bytes(),
            Format::Json => {
                let mut bytes = serde_json::to_vec_pretty(&self.json()).unwrap_or_default();
                bytes.push(b'\n');
                bytes
            }
            Format::Csv => self.csv(),
        }
    }

    fn json(&self) -> JsonReport<'_> {
        JsonReport {
            axis: self.axes[0].name,
            unit: unit_of(self.axes[0]),
            axes: (0..2)
                .map(|i| JsonAxis {
                    name: self.axes[i].name,
                    unit: unit_of(self.axes[i]),
                    range: [
                        self.in_unit(i, self.ranges[i].0 as f64),
                        self.in_unit(i, self.ranges[i].1 as f64),
                    ],
                })
                .collect(),
            level: self.level,
            verdict_rule: &self.verdict_rule,
            method: &self.method,
            seed_rule: &self.seed_rule,
            results: self
                .results
                .iter()
                .map(|r| JsonResult {
                    strategy: &r.case.strategy,
                    with: r
                        .case
                        .with
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect(),
                    runs: r.search.runs,
                    stop: stop_text(r.search.stop),
                    cells: r
                        .search
                        .cells
                        .iter()
                        .map(|c| {
                            let e = c.estimate();
                            JsonCell {
                                values: self.values(c.values),
                                seeds: c.point.seeds(),
                                collapsed: c.point.collapsed(),
                                p: e.p,
                                p_low: e.low,
                                p_high: e.high,
                                run_seeds: c.point.outcomes.iter().map(|o| o.seed).collect(),
                                collapsed_seeds: c
                                    .point
                                    .outcomes
                                    .iter()
                                    .filter(|o| o.collapsed)
                                    .map(|o| o.seed)
                                    .collect(),
                            }
                        })
                        .collect(),
                    contour: r
                        .search
                        .contour
                        .iter()
                        .map(|q| JsonSquare {
                            from: self.values((q.a.0, q.b.0)),
                            to: self.values((q.a.1, q.b.1)),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    fn values(&self, (a, b): (u64, u64)) -> [f64; 2] {
        [self.in_unit(0, a as f64), self.in_unit(1, b as f64)]
    }

    fn csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "strategy",
            "with",
            self.axes[0].column,
            self.axes[1].column,
            "seeds",
            "collapsed",
            "p",
            "p_low",
            "p_high",
        ]);
        for r in &self.results {
            let with: Vec<String> = r
                .case
                .with
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            for c in &r.search.cells {
                let e = c.estimate();
                let [a, b] = self.values(c.values);
                let _ = w.write_record([
                    r.case.strategy.clone(),
                    with.join(";"),
                    a.to_string(),
                    b.to_string(),
                    c.point.seeds().to_string(),
                    c.point.collapsed().to_string(),
                    e.p.to_string(),
                    e.low.to_string(),
                    e.high.to_string(),
                ]);
            }
        }
        w.into_inner().unwrap_or_default()
    }

    /// A value of axis `i` as the table shows it: its unit, at most four decimals.
    fn shown(&self, i: usize, units: u64) -> String {
        let text = format!("{:.4}", self.in_unit(i, units as f64));
        let text = text.trim_end_matches('0').trim_end_matches('.');
        match unit_of(self.axes[i]) {
            "s" => format!("{text}s"),
            _ => text.to_string(),
        }
    }

    fn table(&self) -> String {
        let [a, b] = self.axes;
        let with_unit = |i: usize| match unit_of(self.axes[i]) {
            "" => self.axes[i].name.to_string(),
            u => format!("{} ({u})", self.axes[i].name),
        };
        let mut out = format!(
            "phase diagram of {} against {} where the collapse probability crosses {}\n{}\nmethod: {}\nseeds: {}\n\n",
            with_unit(1), with_unit(0), self.level, self.verdict_rule, self.method, self.seed_rule
        );
        let names: Vec<String> = self.results.iter().map(|r| r.case.name()).collect();
        let width = names.iter().map(String::len).max().unwrap_or(0).max(8);
        out.push_str(&format!(
            "{:<width$}  {:>5}  {:>5}  {:>7}  stop\n{}  -----  -----  -------  ----\n",
            "strategy",
            "runs",
            "cells",
            "contour",
            "-".repeat(width)
        ));
        for (r, name) in self.results.iter().zip(&names) {
            out.push_str(&format!(
                "{:<width$}  {:>5}  {:>5}  {:>7}  {}\n",
                name,
                r.search.runs,
                r.search.cells.len(),
                r.search.contour.len(),
                stop_text(r.search.stop)
            ));
        }
        for (r, name) in self.results.iter().zip(&names) {
            let cells: BTreeMap<(u64, u64), f64> = r
                .search
                .cells
                .iter()
                .map(|c| (c.values, c.estimate().p))
                .collect();
            let columns: BTreeSet<u64> = cells.keys().map(|k| k.0).collect();
            let rows: BTreeSet<u64> = cells.keys().map(|k| k.1).collect();
            let heads: Vec<String> = columns.iter().map(|&v| self.shown(0, v)).collect();
            let cw = heads.iter().map(String::len).max().unwrap_or(4).max(4);
            let rw = rows
                .iter()
                .map(|&v| self.shown(1, v).len())
                .max()
                .unwrap_or(0)
                .max(b.name.len());
            out.push_str(&format!(
                "\n{name}: collapse probability ({} down, {} across; . not evaluated)\n{:>rw$}",
                b.name, a.name, b.name
            ));
            for h in &heads {
                out.push_str(&format!("  {h:>cw$}"));
            }
            out.push('\n');
            for &row in rows.iter().rev() {
                out.push_str(&format!("{:>rw$}", self.shown(1, row)));
                for &col in &columns {
                    let cell = cells
                        .get(&(col, row))
                        .map_or(".".to_string(), |p| format!("{p:.2}"));
                    out.push_str(&format!("  {cell:>cw$}"));
                }
                out.push('\n');
            }
        }
        out
    }
}
