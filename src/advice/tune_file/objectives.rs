//! The `objectives` table: the constraints a candidate must meet and the metrics to
//! minimize or maximize, each a [`Term`] (a metric in a scenario, or a tuned parameter).
//! Separate because terms and their comparison are what the search and the report read.

use super::{invalid, Dimension, TuneError, TuneScenario};

/// A comparison in a constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `<=`
    AtMost,
    /// `>=`
    AtLeast,
    /// `<`
    Below,
    /// `>`
    Above,
}

impl Op {
    /// As written.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::AtMost => "<=",
            Op::AtLeast => ">=",
            Op::Below => "<",
            Op::Above => ">",
        }
    }

    /// True when `value OP bound`.
    pub fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::AtMost => value <= bound,
            Op::AtLeast => value >= bound,
            Op::Below => value < bound,
            Op::Above => value > bound,
        }
    }
}

/// What a constraint or objective measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// A summary metric of one scenario (`goodput_pct@flaky`): its mean over seeds.
    Metric {
        /// The metric column of a sweep row.
        metric: String,
        /// The scenario's index in [`TuneFile::scenarios`](super::TuneFile::scenarios).
        scenario: usize,
        /// As written, `METRIC@SCENARIO`.
        label: String,
    },
    /// A tuned parameter itself (`retries`): its value, the same in every run.
    Parameter {
        /// The dimension's index in [`TuneFile::dimensions`](super::TuneFile::dimensions).
        dimension: usize,
        /// As written.
        label: String,
    },
}

impl Term {
    /// As written.
    pub fn label(&self) -> &str {
        match self {
            Term::Metric { label, .. } | Term::Parameter { label, .. } => label,
        }
    }
}

/// `TERM OP VALUE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// What is compared.
    pub term: Term,
    /// How.
    pub op: Op,
    /// With what.
    pub bound: f64,
}

impl Constraint {
    /// As written, normalised: `goodput_pct@flaky >= 99.9`.
    pub fn text(&self) -> String {
        format!("{} {} {}", self.term.label(), self.op.symbol(), self.bound)
    }
}

/// Minimise or maximise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    /// Lower is better.
    Minimize,
    /// Higher is better.
    Maximize,
}

impl Sense {
    /// `minimize` or `maximize`.
    pub fn name(self) -> &'static str {
        match self {
            Sense::Minimize => "minimize",
            Sense::Maximize => "maximize",
        }
    }
}

/// One objective: a term and its sense.
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    /// What is optimised.
    pub term: Term,
    /// Which way.
    pub sense: Sense,
}

pub(super) fn constraint(
    text: &str,
    scenarios: &[TuneScenario],
    dims: &[Dimension],
) -> Result<Constraint, TuneError> {
    let field = "objectives.constraints";
    let shown = format!("\"{text}\"");
    let form = "\"METRIC@SCENARIO OP VALUE\" with OP one of <=, >=, <, >, e.g. \"goodput_pct@flaky >= 99.9\"";
    let found = ["<=", ">=", "<", ">"]
        .iter()
        .find_map(|op| text.split_once(op).map(|(l, r)| (*op, l, r)));
    let Some((op, left, right)) = found else {
        return Err(invalid(field, shown, "no comparison", form));
    };
    let op = match op {
        "<=" => Op::AtMost,
        ">=" => Op::AtLeast,
        "<" => Op::Below,
        _ => Op::Above,
    };
    let bound: f64 = match right.trim().parse::<f64>() {
        Ok(b) if b.is_finite() => b,
        _ => {
            return Err(invalid(
                field,
                shown,
                format!("`{}` is not a number", right.trim()),
                form,
            ))
        }
    };
    let term = term(left.trim(), field, text, scenarios, dims)?;
    Ok(Constraint { term, op, bound })
}

pub(super) fn term(
    text: &str,
    field: &str,
    whole_text: &str,
    scenarios: &[TuneScenario],
    dims: &[Dimension],
) -> Result<Term, TuneError> {
    let shown = format!("\"{whole_text}\"");
    match text.split_once('@') {
        Some((metric, scenario)) => {
            let Some(index) = scenarios.iter().position(|s| s.name == scenario.trim()) else {
                return Err(invalid(
                    field,
                    shown,
                    format!("unknown scenario `{}`", scenario.trim()),
                    format!(
                        "a scenario of the file: {}",
                        scenarios
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            let metric = metric.trim();
            if metric.is_empty() {
                return Err(invalid(
                    field,
                    shown,
                    "no metric before @",
                    "METRIC@SCENARIO, e.g. goodput_pct@flaky",
                ));
            }
            Ok(Term::Metric {
                metric: metric.to_string(),
                scenario: index,
                label: format!("{metric}@{}", scenario.trim()),
            })
        }
        None => match dims.iter().position(|d| d.name == text && d.is_numeric()) {
            Some(dimension) => Ok(Term::Parameter {
                dimension,
                label: text.to_string(),
            }),
            None => Err(invalid(
                field,
                shown,
                format!("`{text}` is neither METRIC@SCENARIO nor a numeric tuned parameter"),
                format!(
                    "METRIC@SCENARIO (a summary metric of one scenario), or one of: {}",
                    dims.iter()
                        .filter(|d| d.is_numeric())
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        },
    }
}
