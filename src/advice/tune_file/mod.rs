//! The file `herd-sim tune --config TUNE.toml` reads, checked before anything runs: the seeds,
//! the scenarios (a herd-sim config relative to the file, inline keys, or both), the
//! parameters to tune in sweep syntax (`"budget.max_tokens" = "10..100 step 10"` for a key of a
//! budget, breaker or throttle), the objectives (`constraints`, `minimize`, `maximize`) and the
//! search settings. Each mistake is one [`TuneError`] naming the key, the value and what is
//! accepted. No simulation here, and no I/O but reading the scenario files named.
//!
//! The file's top-level keys and seeds are read here; each table has its own submodule:
//! `scenarios`, the tuned `params` (`dimensions`), the `objectives` and the `search`.

mod dimensions;
mod objectives;
mod scenarios;
mod search;
#[cfg(test)]
mod tests;

pub use dimensions::{control_of, control_text, Dimension, Level, Target};
pub use objectives::{Constraint, Objective, Op, Sense, Term};
pub use scenarios::TuneScenario;
pub use search::Method;

use std::path::Path;

use self::dimensions::dimensions;
use self::objectives::{constraint, term};
use self::scenarios::scenarios;
use self::search::search;
use crate::sweep::SweepError;

/// Seeds a candidate starts with unless the file says otherwise.
pub const DEFAULT_SEEDS: u64 = 10;

/// The most candidates an exhaustive search runs; `method = "auto"` searches a larger grid by
/// successive halving.
pub const DEFAULT_MAX_CANDIDATES: u64 = 100;

/// Candidates of the space-filling design successive halving starts from, unless
/// `[search] candidates` says otherwise.
pub const DEFAULT_DESIGN: u64 = 27;

/// The share successive halving keeps, 1/η, and the factor its seeds grow by, unless
/// `[search] eta` says otherwise.
pub const DEFAULT_ETA: u64 = 3;

/// A tune file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A key's value is not accepted.
    #[error("invalid {field} {value}: {problem}; accepted: {accepted}")]
    Invalid {
        /// The key, as written in the file (`objectives.constraints`).
        field: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        problem: String,
        /// What is accepted.
        accepted: String,
    },
    /// The file (or a scenario file it names) cannot be read or parsed.
    #[error("cannot read {path}: {message}")]
    File {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// A candidate in a scenario is not a valid sweep cell.
    #[error("scenario `{scenario}` with {candidate}: {error}")]
    Cell {
        /// The scenario's name.
        scenario: String,
        /// The candidate's parameters.
        candidate: String,
        /// The sweep's reason.
        error: Box<SweepError>,
    },
}

impl TuneError {
    /// True when the user's input is at fault (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        match self {
            TuneError::Cell { error, .. } => error.is_bad_input(),
            _ => true,
        }
    }
}

fn invalid(
    field: impl Into<String>,
    value: impl Into<String>,
    problem: impl Into<String>,
    accepted: impl Into<String>,
) -> TuneError {
    TuneError::Invalid {
        field: field.into(),
        value: value.into(),
        problem: problem.into(),
        accepted: accepted.into(),
    }
}

/// A tune file, parsed and checked (metric names are checked against the scenarios' columns
/// when the search is planned).
#[derive(Clone, Debug, PartialEq)]
pub struct TuneFile {
    /// Seeds every candidate gets (`seeds`).
    pub seeds: u64,
    /// Master seed (`seed`) laid over every scenario's; `None` keeps each scenario's own.
    pub seed: Option<u64>,
    /// The scenarios, in file order.
    pub scenarios: Vec<TuneScenario>,
    /// The tuned parameters, in `[params]` key order.
    pub dimensions: Vec<Dimension>,
    /// The constraints, in file order.
    pub constraints: Vec<Constraint>,
    /// `minimize` then `maximize`, each in file order: the recommendation rule reads them in
    /// this order.
    pub objectives: Vec<Objective>,
    /// The search: exhaustive when asked for or when the grid has at most `max_candidates`
    /// (`method = "auto"`, the default), else halving.
    pub method: Method,
    /// The most candidates the exhaustive search runs.
    pub max_candidates: u64,
}

const TOP_KEYS: &str = "seeds, seed, scenario, params, objectives, search";

const OBJECTIVE_KEYS: &str = "constraints, minimize, maximize";

const SEARCH_KEYS: &str = "method, max_candidates, candidates, eta, max_seeds";

impl TuneFile {
    /// Reads and checks a tune file; scenario files are read relative to its folder.
    pub fn read(path: &Path) -> Result<TuneFile, TuneError> {
        Ok(TuneFile::read_with_text(path)?.0)
    }

    /// [`TuneFile::read`], with the file's text as read (what a report quotes as the file
    /// given).
    pub fn read_with_text(path: &Path) -> Result<(TuneFile, String), TuneError> {
        let shown = path.display().to_string();
        let text = crate::input::read_to_string(path).map_err(|e| TuneError::File {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        let file = TuneFile::parse(&text, path.parent().unwrap_or(Path::new(".")), &shown)?;
        Ok((file, text))
    }

    /// Parses and checks the text of a tune file; `folder` is where its scenario files are.
    pub fn parse(text: &str, folder: &Path, shown: &str) -> Result<TuneFile, TuneError> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| TuneError::File {
            path: shown.to_string(),
            message: e.message().trim().to_string(),
        })?;
        for key in table.keys() {
            if !TOP_KEYS.split(", ").any(|k| k == key) {
                return Err(invalid("key", key, "not a key of a tune file", TOP_KEYS));
            }
        }
        let seeds = match table.get("seeds") {
            None => DEFAULT_SEEDS,
            Some(v) => whole(v, "seeds", 1, crate::sweep::MAX_SEEDS)?,
        };
        let seed = table
            .get("seed")
            .map(|v| whole(v, "seed", 0, i64::MAX as u64))
            .transpose()?;
        let scenarios = scenarios(table.get("scenario"), folder)?;
        let dimensions = match table.get("params") {
            Some(toml::Value::Table(t)) => dimensions(t)?,
            Some(other) => {
                return Err(invalid(
                    "params",
                    other.to_string(),
                    "not a table",
                    "[params] with one key a tuned parameter, e.g. retries = \"1..8\"",
                ))
            }
            None => Vec::new(),
        };
        if dimensions.is_empty() {
            return Err(invalid(
                "params",
                "{}",
                "nothing to tune",
                "[params] with at least one parameter given a list or range, e.g. retries = \"1..8\"",
            ));
        }
        let (asked, halving, max_candidates) = search(table.get("search"), seeds)?;
        let objectives_table = match table.get("objectives") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(other) => {
                return Err(invalid(
                    "objectives",
                    other.to_string(),
                    "not a table",
                    format!("[objectives] with {OBJECTIVE_KEYS}"),
                ))
            }
            None => toml::Table::new(),
        };
        for key in objectives_table.keys() {
            if !OBJECTIVE_KEYS.split(", ").any(|k| k == key) {
                return Err(invalid(
                    "objectives key",
                    key,
                    "not a key of [objectives]",
                    OBJECTIVE_KEYS,
                ));
            }
        }
        let terms = |key: &str| strings(objectives_table.get(key), &format!("objectives.{key}"));
        let mut constraints = Vec::new();
        for text in terms("constraints")? {
            constraints.push(constraint(&text, &scenarios, &dimensions)?);
        }
        let mut objectives = Vec::new();
        for sense in [Sense::Minimize, Sense::Maximize] {
            let field = format!("objectives.{}", sense.name());
            for text in terms(sense.name())? {
                let term = term(&text, &field, &text, &scenarios, &dimensions)?;
                if objectives.iter().any(|o: &Objective| o.term == term) {
                    return Err(invalid(
                        field,
                        format!("\"{text}\""),
                        "given twice",
                        "each objective once, in minimize or in maximize",
                    ));
                }
                objectives.push(Objective { term, sense });
            }
        }
        if objectives.is_empty() {
            return Err(invalid(
                "objectives",
                "(no minimize or maximize)",
                "no objective",
                "minimize = [\"METRIC@SCENARIO\", ...] or maximize = [...] (a tuned parameter's name too, e.g. minimize = [\"retries\"])",
            ));
        }
        let size = dimensions
            .iter()
            .fold(1u64, |n, d| n.saturating_mul(d.levels.len() as u64));
        let method = asked.unwrap_or(match size <= max_candidates {
            true => Method::Exhaustive,
            false => halving,
        });
        Ok(TuneFile {
            seeds,
            seed,
            scenarios,
            dimensions,
            constraints,
            objectives,
            method,
            max_candidates,
        })
    }

    /// Candidates in the full grid, saturating.
    pub fn grid_size(&self) -> u64 {
        self.dimensions
            .iter()
            .fold(1u64, |n, d| n.saturating_mul(d.levels.len() as u64))
    }

    /// Every term the search must measure: the constraints' then the objectives', each once.
    pub fn terms(&self) -> Vec<Term> {
        let mut all: Vec<Term> = Vec::new();
        let each = self
            .constraints
            .iter()
            .map(|c| &c.term)
            .chain(self.objectives.iter().map(|o| &o.term));
        for term in each {
            if !all.contains(term) {
                all.push(term.clone());
            }
        }
        all
    }
}

fn whole(value: &toml::Value, field: &str, low: u64, high: u64) -> Result<u64, TuneError> {
    match value.as_integer() {
        Some(n) if n >= 0 && (low..=high).contains(&(n as u64)) => Ok(n as u64),
        _ => Err(invalid(
            field,
            value.to_string(),
            "out of range",
            format!("a whole number from {low} to {high}"),
        )),
    }
}

fn strings(value: Option<&toml::Value>, field: &str) -> Result<Vec<String>, TuneError> {
    let bad = |v: &toml::Value| {
        invalid(
            field,
            v.to_string(),
            "not a list of strings",
            "a list of strings, e.g. [\"goodput_pct@flaky >= 99.9\"]",
        )
    };
    match value {
        None => Ok(Vec::new()),
        Some(toml::Value::String(s)) => Ok(vec![s.clone()]),
        Some(toml::Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(|| bad(i)))
            .collect(),
        Some(other) => Err(bad(other)),
    }
}
