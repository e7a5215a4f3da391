//! The file `herd-sim tune --config TUNE.toml` reads, checked before anything runs: the seeds,
//! the scenarios (a herd-sim config relative to the file, inline keys, or both), the
//! parameters to tune in sweep syntax (`"budget.max_tokens" = "10..100 step 10"` for a key of a
//! budget, breaker or throttle), the objectives (`constraints`, `minimize`, `maximize`) and the
//! search settings. Each mistake is one [`TuneError`] naming the key, the value and what is
//! accepted. No simulation here, and no I/O but reading the scenario files named.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::ScenarioFile;
use crate::sweep::parameter::{parameter, parse_axis, Control, Kind, Value};
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

/// One scenario the candidates are run in.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneScenario {
    /// Its name, as constraints and objectives write it (`goodput_pct@flaky`).
    pub name: String,
    /// The scenario: the config file named, with the inline keys over it.
    pub file: ScenarioFile,
}

/// One value of a tuned parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// As the sweep reads it back (`250ms`, `0.1`, `grpc`).
    pub text: String,
    /// The value as a number in its unit (durations in seconds); `None` for names.
    pub number: Option<f64>,
}

/// What a tuned parameter sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A sweep parameter (`retries`, `base`, `budget`).
    Parameter(&'static str),
    /// One key of a retry control (`budget.max_tokens`): the control's parameter and the key.
    ControlKey(&'static str, String),
}

/// One tuned parameter and its values, in the order the file lists them (ranges ascending).
#[derive(Clone, Debug, PartialEq)]
pub struct Dimension {
    /// The key as written in `[params]`.
    pub name: String,
    /// What it sets.
    pub target: Target,
    /// Its values.
    pub levels: Vec<Level>,
}

impl Dimension {
    /// True for a parameter whose values are numbers.
    pub fn is_numeric(&self) -> bool {
        self.levels.iter().all(|l| l.number.is_some())
    }
}

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
        /// The scenario's index in [`TuneFile::scenarios`].
        scenario: usize,
        /// As written, `METRIC@SCENARIO`.
        label: String,
    },
    /// A tuned parameter itself (`retries`): its value, the same in every run.
    Parameter {
        /// The dimension's index in [`TuneFile::dimensions`].
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

/// How candidates are chosen and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every point of the grid, each with the file's seeds.
    Exhaustive,
    /// A Latin hypercube of `design` candidates, then successive halving
    /// ([`crate::advice::tune_search`]).
    Halving {
        /// Candidates of the design.
        design: u64,
        /// Keep the best 1/eta, with eta times the seeds.
        eta: u64,
        /// No rung runs more seeds a candidate than this.
        max_seeds: u64,
    },
}

impl Method {
    /// `exhaustive` or `halving`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exhaustive => "exhaustive",
            Method::Halving { .. } => "halving",
        }
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

/// The `[search]` table: the method asked for (`None`: auto), halving's settings, the most
/// candidates an exhaustive search runs.
fn search(
    value: Option<&toml::Value>,
    seeds: u64,
) -> Result<(Option<Method>, Method, u64), TuneError> {
    let empty = toml::Table::new();
    let table = match value {
        None => &empty,
        Some(toml::Value::Table(t)) => t,
        Some(other) => {
            return Err(invalid(
                "search",
                other.to_string(),
                "not a table",
                format!("[search] with {SEARCH_KEYS}"),
            ))
        }
    };
    let mut method = None;
    let mut max = DEFAULT_MAX_CANDIDATES;
    let (mut design, mut eta, mut max_seeds) = (DEFAULT_DESIGN, DEFAULT_ETA, None);
    let mut halving = false;
    for (key, v) in table {
        match key.as_str() {
            "method" => match v.as_str() {
                Some("auto") => method = None,
                Some("exhaustive") => method = Some(Method::Exhaustive),
                Some("halving") => halving = true,
                _ => {
                    return Err(invalid(
                        "search.method",
                        v.to_string(),
                        "not a search method",
                        "\"auto\" (exhaustive up to max_candidates, else halving), \"exhaustive\", \"halving\"",
                    ))
                }
            },
            "max_candidates" => max = whole(v, "search.max_candidates", 1, 1_000_000)?,
            "candidates" => design = whole(v, "search.candidates", 2, 100_000)?,
            "eta" => eta = whole(v, "search.eta", 2, 100)?,
            "max_seeds" => max_seeds = Some(whole(v, "search.max_seeds", 1, crate::sweep::MAX_SEEDS)?),
            other => {
                return Err(invalid(
                    "search key",
                    other,
                    "not a key of [search]",
                    SEARCH_KEYS,
                ))
            }
        }
    }
    let max_seeds = max_seeds.unwrap_or(seeds.saturating_mul(eta * eta));
    if max_seeds < seeds {
        return Err(invalid(
            "search.max_seeds",
            max_seeds.to_string(),
            format!("fewer than the {seeds} seeds every candidate starts with"),
            "max_seeds at least seeds",
        ));
    }
    let halving_method = Method::Halving {
        design,
        eta,
        max_seeds,
    };
    if halving {
        method = Some(halving_method);
    }
    Ok((method, halving_method, max))
}

fn scenarios(value: Option<&toml::Value>, folder: &Path) -> Result<Vec<TuneScenario>, TuneError> {
    let example =
        "[[scenario]] tables, each with name = \"...\" and config = \"FILE\" or a scenario's keys";
    let items = match value {
        Some(toml::Value::Array(items)) if !items.is_empty() => items,
        Some(other) => {
            return Err(invalid(
                "scenario",
                other.to_string(),
                "not a list of tables",
                example,
            ))
        }
        None => return Err(invalid("scenario", "(none)", "no scenario", example)),
    };
    let mut scenarios: Vec<TuneScenario> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("scenario[{i}]");
        let Some(table) = item.as_table() else {
            return Err(invalid(field, item.to_string(), "not a table", example));
        };
        let mut table = table.clone();
        let name = match table.remove("name") {
            Some(toml::Value::String(name)) => name,
            other => {
                return Err(invalid(
                    format!("{field}.name"),
                    other.map_or("(none)".to_string(), |v| v.to_string()),
                    "missing or not a string",
                    "a name of letters, digits, - and _, e.g. name = \"flaky\"",
                ))
            }
        };
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !plain {
            return Err(invalid(
                format!("{field}.name"),
                format!("\"{name}\""),
                "not a plain name",
                "letters, digits, - and _, e.g. name = \"flaky\"",
            ));
        }
        if scenarios.iter().any(|s| s.name == name) {
            return Err(invalid(
                format!("{field}.name"),
                format!("\"{name}\""),
                "given to two scenarios",
                "a different name for each scenario",
            ));
        }
        let config = match table.remove("config") {
            None => ScenarioFile::default(),
            Some(toml::Value::String(path)) => {
                let path = folder.join(path);
                ScenarioFile::read(&path).map_err(|e| TuneError::File {
                    path: path.display().to_string(),
                    message: format!("scenario `{name}`: {e}"),
                })?
            }
            Some(other) => {
                return Err(invalid(
                    format!("{field}.config"),
                    other.to_string(),
                    "not a path",
                    "a herd-sim config file, relative to the tune file",
                ))
            }
        };
        let inline: ScenarioFile =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    invalid(
                        format!("scenario `{name}`"),
                        "(its keys)",
                        e.message().trim().to_string(),
                        "the keys of a herd-sim config file (docs/configuration.md)",
                    )
                })?;
        scenarios.push(TuneScenario {
            name,
            file: config.overridden_by(inline),
        });
    }
    Ok(scenarios)
}

/// The controls whose keys `CONTROL.KEY` tunes.
const CONTROLS: [&str; 3] = ["budget", "breaker", "throttle"];

fn dimensions(table: &toml::Table) -> Result<Vec<Dimension>, TuneError> {
    let text_of = |key: &str, v: &toml::Value| -> Result<String, TuneError> {
        match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(n) => Ok(n.to_string()),
            toml::Value::Float(x) => Ok(x.to_string()),
            toml::Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    toml::Value::String(s) => Ok(s.clone()),
                    toml::Value::Integer(n) => Ok(n.to_string()),
                    toml::Value::Float(x) => Ok(x.to_string()),
                    other => Err(other),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|v| v.join(","))
                .map_err(|other| {
                    invalid(
                        format!("params.{key}"),
                        other.to_string(),
                        "not a value",
                        "a value, list or range in sweep syntax, e.g. \"1..8\"",
                    )
                }),
            other => Err(invalid(
                format!("params.{key}"),
                other.to_string(),
                "not a value",
                "a value, list or range in sweep syntax, e.g. \"1..8\"",
            )),
        }
    };
    let mut dims = Vec::new();
    // Controls first, so their keys find them; BTreeMap order otherwise (the file's keys sorted).
    let sorted: BTreeMap<&String, &toml::Value> = table.iter().collect();
    for (key, value) in &sorted {
        let text = text_of(key, value)?;
        let field = format!("params.\"{key}\"");
        if let Some((control, sub)) = key.split_once('.') {
            let Some(control) = CONTROLS.iter().find(|c| **c == control) else {
                return Err(invalid(
                    field,
                    format!("\"{text}\""),
                    format!("`{control}` has no keys to tune"),
                    "a sweep parameter, or budget.KEY, breaker.KEY, throttle.KEY",
                ));
            };
            // A unit (`10s`) makes the values durations; plain numbers are decimals.
            let unit = text.replace("step", "");
            let kind = match unit.chars().any(|c| c.is_ascii_alphabetic()) {
                true => "base",
                false => "multiplier",
            };
            let stand_in = parameter(kind).expect("in the table");
            let axis = parse_axis(stand_in, &text).map_err(|e| axis_error(&field, &text, e))?;
            let levels = (0..axis.len())
                .map(|i| level(&axis.value(i)))
                .collect::<Vec<_>>();
            dims.push(Dimension {
                name: key.to_string(),
                target: Target::ControlKey(control, sub.to_string()),
                levels,
            });
            continue;
        }
        let Some(p) = parameter(key) else {
            return Err(invalid(
                field,
                format!("\"{text}\""),
                "not a parameter herd-sim can tune",
                format!(
                    "a sweep parameter ({}) or budget.KEY, breaker.KEY, throttle.KEY",
                    crate::sweep::parameter::parameter_names()
                ),
            ));
        };
        if p.name == "preset" {
            return Err(invalid(
                field,
                format!("\"{text}\""),
                "a preset is a scenario's starting point, not a parameter tune varies",
                "preset = \"NAME\" in a scenario, and its keys in [params]",
            ));
        }
        let axis = parse_axis(p, &text).map_err(|e| axis_error(&field, &text, e))?;
        let levels = (0..axis.len())
            .map(|i| level(&axis.value(i)))
            .collect::<Vec<_>>();
        dims.push(Dimension {
            name: key.to_string(),
            target: Target::Parameter(p.name),
            levels,
        });
    }
    // Each control key needs its control named once, and must be one of that control's keys.
    for d in &dims {
        let Target::ControlKey(control, key) = &d.target else {
            continue;
        };
        let field = format!("params.\"{}\"", d.name);
        let Some(named) = dims.iter().find(|n| n.target == Target::Parameter(control)) else {
            return Err(invalid(
                field,
                format!("\"{}\"", d.levels[0].text),
                format!("no {control} is named to give the key to"),
                format!("{control} = \"NAME\" in [params] beside it, e.g. budget = \"grpc\""),
            ));
        };
        if named.levels.len() != 1 {
            return Err(invalid(
                format!("params.{control}"),
                format!("\"{}\"", joined(named)),
                format!("{control} lists several names beside its key {key}"),
                format!("one {control} when its keys are tuned"),
            ));
        }
        for level in &d.levels {
            let text = control_text(&named.levels[0].text, &[(key.as_str(), &level.text)]);
            control_of(control).canonical(&text).map_err(|e| {
                invalid(
                    field.clone(),
                    format!("\"{}\"", level.text),
                    e.value,
                    e.accepted,
                )
            })?;
        }
    }
    Ok(dims)
}

fn joined(d: &Dimension) -> String {
    d.levels
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn axis_error(field: &str, text: &str, e: SweepError) -> TuneError {
    let message = match e {
        SweepError::Values { message, .. } => message,
        other => other.to_string(),
    };
    let (problem, accepted) = match message.split_once("; ") {
        Some((p, a)) => (p.to_string(), a.to_string()),
        None => (
            message,
            "a value, list or range in sweep syntax, e.g. \"10..100 step 10\"".to_string(),
        ),
    };
    invalid(field, format!("\"{text}\""), problem, accepted)
}

/// The sweep's control of `name` (`budget`, `breaker`, `throttle`).
pub fn control_of(name: &str) -> Control {
    match parameter(name).map(|p| p.kind) {
        Some(Kind::Control(c)) => c,
        _ => Control::Budget,
    }
}

/// `base` (`grpc` or `grpc:token_ratio=0.2`) with `key=value` pairs added.
pub fn control_text(base: &str, pairs: &[(&str, &str)]) -> String {
    let mut text = base.to_string();
    for (key, value) in pairs {
        text.push(if text.contains(':') { ',' } else { ':' });
        text.push_str(&format!("{key}={value}"));
    }
    text
}

fn level(value: &Value) -> Level {
    Level {
        text: value.to_string(),
        number: value.number(),
    }
}

fn constraint(
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

fn term(
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

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
seeds = 3
[[scenario]]
name = "flaky"
clients = 10
arrivals = "poisson"
rate = "100/s"
duration = "5s"
[scenario.server]
model = "flaky"
failure_rate = 0.5
[params]
budget = "grpc"
"budget.max_tokens" = "10..30 step 10"
retries = "1,2"
[objectives]
constraints = ["goodput_pct@flaky >= 90"]
minimize = ["amplification@flaky"]
maximize = ["budget.max_tokens"]
"#;

    fn parse(text: &str) -> Result<TuneFile, TuneError> {
        TuneFile::parse(text, Path::new("."), "t.toml")
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn the_example_parses_into_dimensions_constraints_and_objectives() {
        let t = parse(GOOD).unwrap();
        assert_eq!(t.seeds, 3);
        assert_eq!(t.scenarios[0].name, "flaky");
        let names: Vec<&str> = t.dimensions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["budget", "budget.max_tokens", "retries"]);
        let tokens: Vec<&str> = t.dimensions[1]
            .levels
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(tokens, ["10", "20", "30"]);
        assert_eq!(t.grid_size(), 6);
        assert_eq!(t.constraints[0].text(), "goodput_pct@flaky >= 90");
        assert_eq!(t.objectives.len(), 2);
        assert_eq!(t.objectives[1].sense, Sense::Maximize);
        assert_eq!(t.terms().len(), 3);
    }

    #[test]
    fn bad_input_names_the_key_the_value_and_what_is_accepted() {
        let cases = [
            (
                GOOD.replace("@flaky >= 90", "@outage >= 90"),
                "unknown scenario `outage`; accepted: a scenario of the file: flaky",
            ),
            (
                GOOD.replace("10..30 step 10", "30..10 step 10"),
                "is a reversed range",
            ),
            (GOOD.replace("10..30 step 10", ""), "empty list"),
            (
                GOOD.replace("budget.max_tokens", "budget.percent"),
                "`percent` is a parameter of envoy, finagle, not of grpc",
            ),
            (
                GOOD.replace("retries = \"1,2\"", "colour = \"red\""),
                "not a parameter herd-sim can tune",
            ),
            (
                GOOD.replace("minimize = [\"amplification@flaky\"]", "")
                    .replace("maximize = [\"budget.max_tokens\"]", ""),
                "no objective",
            ),
            (GOOD.replace(">= 90", "about 90"), "no comparison"),
            (GOOD.replace("budget = \"grpc\"", ""), "no budget is named"),
        ];
        for (text, expected) in cases {
            let e = error(&text);
            assert!(e.contains(expected), "{expected}: {e}");
            assert!(e.contains("accepted"), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
}
