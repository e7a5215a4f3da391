//! A [`TuneReport`] as text: the table a person reads (the frontier, the recommended point
//! marked, the runs it cost) and the JSON a script or report reads
//! (`{"recommended": {PARAM: VALUE}, "frontier": [{"params", "objectives": {"M@S": {"mean",
//! "low", "high"}}}], "runs"}` and a few more keys). No I/O.

use serde_json::{json, Map, Value as Json};

use super::tune_file::{Term, TuneFile};
use super::tune_frontier::{Evaluated, Rung, Stat, TuneReport, RULE};

/// A number for the table: four significant decimals, trimmed.
fn short(x: f64) -> String {
    let text = if x.abs() >= 1000.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    };
    let text = match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    };
    if text == "-0" {
        "0".into()
    } else {
        text
    }
}

fn stat_text(s: Option<Stat>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.low == s.high => short(s.mean),
        Some(s) => format!("{} [{}, {}]", short(s.mean), short(s.low), short(s.high)),
    }
}

/// The parameters of `e` as JSON: numbers as numbers, the rest as text.
fn params_json(file: &TuneFile, e: &Evaluated) -> Json {
    let mut map = Map::new();
    for (d, &l) in file.dimensions.iter().zip(&e.candidate.levels) {
        let level = &d.levels[l];
        let plain = level.text.parse::<f64>().ok();
        let value = match (plain, level.number) {
            (Some(x), Some(_)) if x.fract() == 0.0 && x.abs() < 9e15 => json!(x as i64),
            (Some(x), Some(_)) => json!(x),
            _ => json!(level.text),
        };
        map.insert(d.name.clone(), value);
    }
    Json::Object(map)
}

fn stat_json(s: Option<Stat>) -> Json {
    match s {
        Some(s) => json!({"mean": s.mean, "low": s.low, "high": s.high, "n": s.n}),
        None => Json::Null,
    }
}

impl TuneReport {
    /// The JSON report, pretty-printed, with a final newline.
    pub fn to_json(&self) -> Vec<u8> {
        let file = &self.file;
        let frontier: Vec<Json> = self
            .frontier
            .iter()
            .map(|&i| {
                let e = &self.evaluated[i];
                let mut objectives = Map::new();
                for o in &file.objectives {
                    objectives.insert(o.term.label().to_string(), stat_json(e.stat(&o.term)));
                }
                let mut constraints = Map::new();
                for c in &file.constraints {
                    constraints.insert(c.text(), stat_json(e.stat(&c.term)));
                }
                json!({
                    "params": params_json(file, e),
                    "objectives": objectives,
                    "constraints": constraints,
                    "seeds": e.seeds,
                })
            })
            .collect();
        let recommended = match self.recommended {
            Some(i) => params_json(file, &self.evaluated[i]),
            None => Json::Null,
        };
        let report = json!({
            "recommended": recommended,
            "frontier": frontier,
            "runs": self.runs,
            "exhaustive_runs": self.exhaustive_runs,
            "method": file.method.name(),
            "rungs": self.rungs.iter().map(|r| json!({"candidates": r.candidates, "seeds": r.seeds})).collect::<Vec<_>>(),
            "candidates": self.evaluated.len(),
            "feasible": self.feasible(),
            "constraints": file.constraints.iter().map(|c| c.text()).collect::<Vec<_>>(),
            "objectives": file.objectives.iter().map(|o| format!("{} {}", o.sense.name(), o.term.label())).collect::<Vec<_>>(),
            "scenarios": file.scenarios.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
            "rule": RULE,
            "configs": self.configs.iter().map(|c| (c.library.to_string(), json!(c.text))).collect::<Map<String, Json>>(),
        });
        let mut bytes = serde_json::to_vec_pretty(&report).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// The report as a table, the frontier's rows with the recommended one marked `*`.
    pub fn to_text(&self) -> String {
        let file = &self.file;
        // A tuned parameter's own value is in its column already.
        let terms: Vec<Term> = file
            .terms()
            .into_iter()
            .filter(|t| matches!(t, Term::Metric { .. }))
            .collect();
        let mut out = String::new();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let last = self.rungs.last().copied().unwrap_or(Rung {
            candidates: 0,
            seeds: file.seeds,
        });
        match self.rungs.len() {
            1 => out.push_str(&format!(
                "tune: {} search, {} × {} × {} seeds: {} runs (an exhaustive grid of the same resolution: {})\n",
                file.method.name(),
                plural(last.candidates as usize, "candidate"),
                plural(file.scenarios.len(), "scenario"),
                last.seeds,
                self.runs,
                self.exhaustive_runs,
            )),
            _ => out.push_str(&format!(
                "tune: latin-hypercube design of {} of the grid's {}, successive halving {} × {}: {} runs (an exhaustive grid of the same resolution with {} seeds: {})\n",
                self.rungs[0].candidates,
                file.grid_size(),
                self.rungs
                    .iter()
                    .map(|r| format!("{} at {} seeds", r.candidates, r.seeds))
                    .collect::<Vec<_>>()
                    .join(", "),
                plural(file.scenarios.len(), "scenario"),
                self.runs,
                last.seeds,
                self.exhaustive_runs,
            )),
        }
        if !file.constraints.is_empty() {
            out.push_str(&format!(
                "constraints (on the mean over seeds): {}; met by {} of {}\n",
                file.constraints
                    .iter()
                    .map(|c| c.text())
                    .collect::<Vec<_>>()
                    .join(", "),
                self.feasible(),
                self.evaluated.len()
            ));
        }
        out.push_str(&format!(
            "objectives: {}; frontier: {} (non-dominated among those meeting the constraints)\n",
            file.objectives
                .iter()
                .map(|o| format!("{} {}", o.sense.name(), o.term.label()))
                .collect::<Vec<_>>()
                .join(", "),
            plural(self.frontier.len(), "point"),
        ));
        let mut header: Vec<String> = vec![String::new()];
        header.extend(file.dimensions.iter().map(|d| d.name.clone()));
        header.push("seeds".into());
        header.extend(terms.iter().map(|t| t.label().to_string()));
        let mut rows = vec![header];
        for &i in &self.frontier {
            let e = &self.evaluated[i];
            let mut row = vec![if Some(i) == self.recommended { "*" } else { "" }.to_string()];
            row.extend(
                file.dimensions
                    .iter()
                    .zip(&e.candidate.levels)
                    .map(|(d, &l)| d.levels[l].text.clone()),
            );
            row.push(e.seeds.to_string());
            row.extend(terms.iter().map(|t| stat_text(e.stat(t))));
            rows.push(row);
        }
        let widths: Vec<usize> = (0..rows[0].len())
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        out.push('\n');
        for row in &rows {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, &w)| format!("{cell:<w$}"))
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        out.push('\n');
        match self.recommended {
            Some(i) => out.push_str(&format!(
                "recommended (*): {}\n",
                self.evaluated[i].candidate.describe(file)
            )),
            None => out.push_str(
                "recommended: none; no candidate meets the constraints (widen [params] or relax them)\n",
            ),
        }
        out.push_str(&format!(
            "rule: {RULE}; intervals are 95 % (Student's t over seeds)\n"
        ));
        for c in &self.configs {
            out.push_str(&format!(
                "\n{}:\n{}",
                snippet_title(c.library, &c.text),
                c.text
            ));
        }
        out
    }
}

/// What a configuration of the recommended point is, from its library (the JSON's `configs`
/// key) and its text.
pub fn snippet_title(library: &str, text: &str) -> &'static str {
    match library {
        "herd-sim" => "herd-sim config keys",
        "grpc" if text.contains("retryThrottling") => "gRPC service config (retryThrottling)",
        "grpc" => "gRPC service config (retryPolicy)",
        "envoy" if text.contains("retry_budget") => "Envoy retry_budget",
        "envoy" => "Envoy route retry_policy",
        "finagle" => "Finagle RetryBudget",
        _ => "AWS SDK shared config",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_trimmed() {
        assert_eq!(short(1.0), "1");
        assert_eq!(short(99.21875), "99.2188");
        assert_eq!(short(1.05), "1.05");
        assert_eq!(short(12345.67), "12345.7");
        assert_eq!(short(-0.00001), "0");
    }
}
