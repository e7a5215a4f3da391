//! A boundary [`Report`] as bytes: a table for people (the default), JSON for scripts and CI,
//! CSV of the points (one row each). Pure: serialisation only, the binary writes the bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::band::{JsonBand, KNOCKED_OVER, STAYS_DOWN};
use super::search::{Point, Stop};
use super::{unit_of, CaseResult, Report};

/// The output formats of `herd-sim boundary`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned text.
    #[default]
    Table,
    /// One JSON document.
    Json,
    /// One CSV row a point.
    Csv,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    axis: &'static str,
    unit: &'static str,
    axes: [super::plane_export::JsonAxis; 1],
    level: f64,
    verdict_rule: &'a str,
    method: &'a str,
    seed_rule: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    band_rule: Option<&'a str>,
    results: Vec<JsonResult<'a>>,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    strategy: &'a str,
    with: BTreeMap<&'a str, &'a str>,
    boundary: Option<f64>,
    boundary_low: Option<f64>,
    boundary_high: Option<f64>,
    runs: u64,
    stop: &'static str,
    settle_at_low_s: f64,
    settle_at_high_s: f64,
    points: Vec<JsonPoint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    band: Option<JsonBand>,
}

#[derive(Serialize)]
pub(super) struct JsonPoint {
    value: f64,
    seeds: u64,
    collapsed: u64,
    p: f64,
    p_low: f64,
    p_high: f64,
    run_seeds: Vec<u64>,
    collapsed_seeds: Vec<u64>,
}

/// Why a search stopped, in words.
pub fn stop_text(stop: Stop) -> &'static str {
    match stop {
        Stop::Converged => "converged",
        Stop::NoCrossing => "no crossing in the range",
        Stop::Budget => "max runs spent",
        Stop::Resolution => "axis resolution reached",
    }
}

impl Report {
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
            axis: self.axis.name,
            unit: unit_of(self.axis),
            axes: [super::plane_export::JsonAxis {
                name: self.axis.name,
                unit: unit_of(self.axis),
                range: [
                    self.in_unit(self.range.0 as f64),
                    self.in_unit(self.range.1 as f64),
                ],
            }],
            level: self.level,
            verdict_rule: &self.verdict_rule,
            method: &self.method,
            seed_rule: &self.seed_rule,
            band_rule: self.band_rule.as_deref(),
            results: self.results.iter().map(|r| self.json_result(r)).collect(),
        }
    }

    fn json_result<'a>(&self, r: &'a CaseResult) -> JsonResult<'a> {
        let bound = |v: Option<u64>| v.map(|v| self.in_unit(v as f64));
        JsonResult {
            strategy: &r.case.strategy,
            with: r
                .case
                .with
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
            boundary: r.boundary.map(|b| self.in_unit(b)),
            boundary_low: bound(r.search.bracket.low),
            boundary_high: bound(r.search.bracket.high),
            runs: r.search.runs,
            stop: stop_text(r.search.stop),
            settle_at_low_s: r.settle.0.as_secs_f64(),
            settle_at_high_s: r.settle.1.as_secs_f64(),
            points: self.json_points(&r.search.points),
            band: self.json_band(r),
        }
    }

    /// Points in JSON, each with its seeds and the seeds that collapsed.
    pub(super) fn json_points(&self, points: &[Point]) -> Vec<JsonPoint> {
        points
            .iter()
            .map(|p| {
                let e = p.estimate();
                JsonPoint {
                    value: self.in_unit(p.value as f64),
                    seeds: p.seeds(),
                    collapsed: p.collapsed(),
                    p: e.p,
                    p_low: e.low,
                    p_high: e.high,
                    run_seeds: p.outcomes.iter().map(|o| o.seed).collect(),
                    collapsed_seeds: p
                        .outcomes
                        .iter()
                        .filter(|o| o.collapsed)
                        .map(|o| o.seed)
                        .collect(),
                }
            })
            .collect()
    }

    /// The case's name in the table and the CSV: the strategy, then the other listed values.
    fn csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec![
            "strategy",
            "with",
            self.axis.column,
            "seeds",
            "collapsed",
            "p",
            "p_low",
            "p_high",
        ];
        // With --band, the edge each row belongs to, last.
        let band = self.band_rule.is_some();
        if band {
            header.push("edge");
        }
        let _ = w.write_record(header);
        for r in &self.results {
            let with: Vec<String> = r
                .case
                .with
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let edges = [
                (&r.search.points[..], KNOCKED_OVER),
                (self.band_points(r), STAYS_DOWN),
            ];
            for (points, edge) in edges {
                for p in points {
                    let e = p.estimate();
                    let mut record = vec![
                        r.case.strategy.clone(),
                        with.join(";"),
                        self.in_unit(p.value as f64).to_string(),
                        p.seeds().to_string(),
                        p.collapsed().to_string(),
                        e.p.to_string(),
                        e.low.to_string(),
                        e.high.to_string(),
                    ];
                    if band {
                        record.push(edge.to_string());
                    }
                    let _ = w.write_record(record);
                }
            }
        }
        w.into_inner().unwrap_or_default()
    }

    /// A value of the axis as the table shows it: its unit, at most four decimals.
    pub(super) fn shown(&self, units: f64) -> String {
        let v = self.in_unit(units);
        let text = format!("{v:.4}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        match unit_of(self.axis) {
            "s" => format!("{text}s"),
            _ => text.to_string(),
        }
    }

    fn table(&self) -> String {
        let unit = match unit_of(self.axis) {
            "" => String::new(),
            u => format!(" ({u})"),
        };
        let mut out = format!(
            "boundary of {}{unit} where the collapse probability crosses {}\n{}\nmethod: {}\nseeds: {}\n\n",
            self.axis.name, self.level, self.verdict_rule, self.method, self.seed_rule
        );
        let names: Vec<String> = self.results.iter().map(|r| r.case.name()).collect();
        let width = names.iter().map(String::len).max().unwrap_or(0).max(8);
        out.push_str(&format!(
            "{:<width$}  {:>10}  {:>22}  {:>5}  {:>6}  stop\n",
            "strategy", "boundary", "95% interval", "runs", "points"
        ));
        out.push_str(&format!(
            "{}  {}  {}  {}  {}  {}\n",
            "-".repeat(width),
            "-".repeat(10),
            "-".repeat(22),
            "-".repeat(5),
            "-".repeat(6),
            "-".repeat(4)
        ));
        for (r, name) in self.results.iter().zip(&names) {
            let end = |v: Option<u64>| v.map_or("?".to_string(), |v| self.shown(v as f64));
            let interval = match (r.search.bracket.low, r.search.bracket.high) {
                (None, None) => "-".to_string(),
                (low, high) => format!("{}..{}", end(low), end(high)),
            };
            out.push_str(&format!(
                "{:<width$}  {:>10}  {:>22}  {:>5}  {:>6}  {}\n",
                name,
                r.boundary.map_or("none".to_string(), |b| self.shown(b)),
                interval,
                r.search.runs,
                r.search.points.len(),
                stop_text(r.search.stop)
            ));
        }
        for (r, name) in self.results.iter().zip(&names) {
            out.push_str(&format!("\n{name}: points\n"));
            out.push_str(&self.points_table(&r.search.points));
        }
        out.push_str(&self.band_table(&names));
        out
    }

    /// A table of points: value, seeds, collapsed, the estimate and its interval.
    pub(super) fn points_table(&self, points: &[Point]) -> String {
        let mut out = format!(
            "{:>12}  {:>5}  {:>9}  {:>5}  {:>13}\n",
            self.axis.name, "seeds", "collapsed", "p", "95% interval"
        );
        for p in points {
            let e = p.estimate();
            out.push_str(&format!(
                "{:>12}  {:>5}  {:>9}  {:>5.3}  {:>13}\n",
                self.shown(p.value as f64),
                p.seeds(),
                p.collapsed(),
                e.p,
                format!("{:.3}..{:.3}", e.low, e.high)
            ));
        }
        out
    }
}
