//! The table of parameters a sweep can vary, and the parsing of what a user writes for one
//! (`100,1000`, `2..8`, `100ms..1s step 100ms`) into an [`Axis`] of values.
//!
//! The table is data: one [`Parameter`] per scenario key, saying how its values parse, how one
//! is laid over a [`ScenarioFile`] and how the effective value of a validated [`Scenario`] is
//! written in the CSV. A new scenario parameter is one more entry in [`PARAMETERS`]; the command
//! line (`herd-sim sweep --NAME`), the `[sweep]` table, the CSV columns and the seed labels all
//! follow from it. Stepped ranges are computed in integers (nanoseconds, billionths), so
//! `100ms..1s step 100ms` ends exactly at 1 s and `1..2 step 0.1` exactly at 2. No I/O here.
//!
//! For a command that picks its own points along one axis (a boundary search), the small API:
//! [`numeric_parameters`] lists the axes it can vary and [`parameter`] finds one by name;
//! [`Parameter::check`] refuses an axis the scenario has nothing to vary with (a trigger axis
//! without its trigger); [`Parameter::parse_value`] reads one value as a user writes it,
//! [`Parameter::value_at`] makes one from a number in the axis's unit (durations in seconds)
//! and [`Value::number`] reads it back; [`Parameter::apply`] lays a value over a
//! [`ScenarioFile`], which the caller then validates. A value's `Display` is a text that
//! `--NAME` and [`parse_axis`] read back as the same value, so a point can be run as a sweep.

mod axis;
mod table;
#[cfg(test)]
mod tests;

pub use axis::{parse_axis, Axis};
pub use table::{FROM_PRESET, PARAMETERS, PRESET_NAMES};

use crate::config::{Scenario, ScenarioFile};
use crate::policy::control::{Breaker, Budget, Scope, SpecError, Throttle};
use crate::policy::Strategy;
use crate::time::SimDuration;

use self::axis::{parse_list, problem};
use super::SweepError;

/// How the values of a parameter are written and compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Whole numbers: lists, and ranges `2..8` (step 1 unless `step N` is given).
    Whole,
    /// Durations (`250ms`, `1s`): lists, and ranges with a step, `100ms..1s step 100ms`.
    Duration,
    /// Decimal numbers with up to nine decimals (`2`, `1.5`): lists, and ranges with a step.
    Decimal,
    /// Strategy names, or `all`: lists only.
    Strategy,
    /// One of a fixed set of names: lists only.
    Choice(&'static [&'static str]),
    /// A retry control as its flag writes it, `NAME[:key=value,...]`: lists only, where a
    /// `key=value` item belongs to the value before it (see [`parse_axis`]).
    Control(Control),
}

/// What a parameter reshapes, which the scenario must already have: a trigger-shape axis
/// (`spike-duration`, `outage-duration`, `degrade-factor`, `degrade-duration`) changes every
/// trigger of its kind and is refused ([`Parameter::check`]) when the scenario has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Any scenario (validation refuses a value the scenario's server cannot use).
    Nothing,
    /// A spike (`--spike`); Poisson arrivals.
    Spike,
    /// An outage (`--outage`).
    Outage,
    /// A degradation (`--degrade`); a capacity server.
    Degrade,
    /// Retry layers above the run's policy (`--layer`, `[[layer]]`).
    Layer,
    /// A pool's rolling restart (`--rolling-restart`, `rolling_restart`).
    RollingRestart,
}

impl Needs {
    /// The flag that gives the trigger, and an example, for messages; `None` for [`Needs::Nothing`].
    fn trigger(self) -> Option<(&'static str, &'static str)> {
        match self {
            Needs::Nothing => None,
            Needs::Spike => Some(("--spike", "spike = \"20s..25s@80/s\"")),
            Needs::Outage => Some(("--outage", "outage = \"20s..30s\"")),
            Needs::Degrade => Some(("--degrade", "degrade = \"10s..20s@0.25\"")),
            Needs::Layer => Some(("--layer", "--layer \"strategy=naive retries=3\"")),
            Needs::RollingRestart => Some(("--rolling-restart", "rolling_restart = \"20s,5s\"")),
        }
    }

    /// True when `file` has a trigger of this kind (always for [`Needs::Nothing`]).
    fn met_by(self, file: &ScenarioFile) -> bool {
        let has =
            |i: &Option<crate::config::Intervals>| i.as_ref().is_some_and(|i| !i.0.is_empty());
        match self {
            Needs::Nothing => true,
            Needs::Spike => has(&file.spike),
            Needs::Outage => has(&file.outage),
            Needs::Degrade => has(&file.degrade),
            Needs::Layer => file.layer.as_ref().is_some_and(|l| !l.is_empty()),
            Needs::RollingRestart => file.rolling_restart.is_some(),
        }
    }
}

/// The retry controls a sweep can vary: each reads and writes its own texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// `--budget`.
    Budget,
    /// `--breaker`.
    Breaker,
    /// `--throttle`.
    Throttle,
}

impl Control {
    /// `text` read as this control and written back in its shortest form: the name, then
    /// only the parameters that differ from the defaults (`grpc:max_tokens=20`), so that one
    /// control has one text in the CSV and the seed label however it was typed.
    pub fn canonical(self, text: &str) -> Result<String, SpecError> {
        // A budget's or breaker's `scope=global` is kept, last (see [`Scope::split`]).
        let scoped = |short: fn(&str) -> Result<String, SpecError>| {
            let (rest, scope) = Scope::split(text)?;
            let text = short(&rest)?;
            Ok::<_, SpecError>(format!("{text}{}", scope.suffix(&text)))
        };
        Ok(match self {
            Control::Budget => scoped(|t| Ok(Budget::parse(t)?.short_text()))?,
            Control::Breaker => scoped(|t| Ok(Breaker::parse(t)?.short_text()))?,
            Control::Throttle => Throttle::parse(text)?.short_text(),
        })
    }
}

/// One value of a parameter, exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A whole number.
    Whole(u64),
    /// A duration.
    Duration(SimDuration),
    /// A decimal number, in billionths (`1.5` is `1_500_000_000`).
    Decimal(u64),
    /// A strategy.
    Strategy(Strategy),
    /// A name from a [`Kind::Choice`].
    Name(&'static str),
    /// A retry control in its shortest form ([`Control::canonical`]).
    Text(String),
}

const BILLION: u64 = 1_000_000_000;

impl std::fmt::Display for Value {
    /// As a user writes it: `1000`, `100ms`, `1.5`, `full-jitter`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Whole(n) => write!(f, "{n}"),
            Value::Duration(d) => write!(f, "{d}"),
            Value::Decimal(_) => write!(f, "{}", self.decimal()),
            Value::Strategy(s) => f.write_str(s.name()),
            Value::Name(n) => f.write_str(n),
            Value::Text(t) => f.write_str(t),
        }
    }
}

impl Value {
    fn from_units(kind: Kind, units: u64) -> Value {
        match kind {
            Kind::Duration => Value::Duration(SimDuration(units)),
            Kind::Decimal => Value::Decimal(units),
            _ => Value::Whole(units),
        }
    }

    // The setters below receive only values parsed by their own parameter's kind (see
    // `parse_axis`), so a mismatch is a bug in the table, not bad input.
    fn whole(&self) -> u64 {
        match self {
            Value::Whole(n) => *n,
            other => panic!("sweep table: expected a whole number, got {other:?}"),
        }
    }
    fn duration(&self) -> SimDuration {
        match self {
            Value::Duration(d) => *d,
            other => panic!("sweep table: expected a duration, got {other:?}"),
        }
    }
    fn decimal(&self) -> f64 {
        match self {
            // Through the decimal text, so the f64 is the one nearest the exact value (1.3, not
            // 1 + 0.3 rounded twice).
            Value::Decimal(b) => format!("{}.{:09}", b / BILLION, b % BILLION)
                .parse()
                .unwrap_or(f64::NAN),
            other => panic!("sweep table: expected a number, got {other:?}"),
        }
    }
    /// The value as a number in its axis's unit: a whole number, a duration in seconds, a
    /// decimal; `None` for names, strategies and controls.
    pub fn number(&self) -> Option<f64> {
        match self {
            Value::Whole(n) => Some(*n as f64),
            Value::Duration(d) => Some(d.as_secs_f64()),
            Value::Decimal(_) => Some(self.decimal()),
            Value::Strategy(_) | Value::Name(_) | Value::Text(_) => None,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Value::Name(n) => n,
            Value::Strategy(s) => s.name(),
            other => panic!("sweep table: expected a name, got {other:?}"),
        }
    }
    fn text(&self) -> String {
        match self {
            Value::Text(t) => t.clone(),
            other => panic!("sweep table: expected a control, got {other:?}"),
        }
    }
}

/// One parameter a sweep can vary.
#[derive(Debug)]
pub struct Parameter {
    /// The flag (`--NAME`) and the key of the `[sweep]` table.
    pub name: &'static str,
    /// The CSV column; durations are written in seconds, in a column ending `_s`.
    pub column: &'static str,
    /// How values are written.
    pub kind: Kind,
    /// The trigger it reshapes, if any.
    pub needs: Needs,
    /// True when a value other than the default enters the seed label. False for the strategy
    /// (see the sweep's seed rule), the trigger shapes and the slowdown: runs that differ only in a trigger's size or depth, or in the
    /// slowdown, share their dice (common random numbers, as strategies do), so that the
    /// points along such an axis differ only in it, and a config's seeds are what they were
    /// before these axes existed.
    pub label: bool,
    /// One line for `--help`.
    pub help: &'static str,
    /// Lays one value over a scenario file.
    pub set: fn(&mut ScenarioFile, &Value),
    /// The effective value in a validated scenario of one strategy, as written in the CSV and
    /// in the seed label; empty when the parameter does not apply (no recovery time, say).
    pub get: fn(&Scenario) -> String,
}

impl Parameter {
    /// True for the numeric parameters (whole numbers, durations, decimals): the axes a
    /// boundary search can bisect.
    pub fn is_numeric(&self) -> bool {
        matches!(self.kind, Kind::Whole | Kind::Duration | Kind::Decimal)
    }

    /// Refuses this parameter for a scenario file without the trigger it reshapes (see
    /// [`Needs`]); anything else the scenario cannot use is refused when the file with the
    /// value laid over it is validated.
    pub fn check(&'static self, file: &ScenarioFile) -> Result<(), SweepError> {
        match self.needs.trigger() {
            Some((flag, example)) if !self.needs.met_by(file) => Err(problem(
                self,
                format!(
                    "the scenario has no {flag} to reshape; accepted with a scenario that has one, e.g. {example}",
                    flag = flag.trim_start_matches('-')
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Lays `value` over `file` after [`Parameter::check`]: what a sweep does for each cell.
    /// Validate the file afterwards ([`ScenarioFile::validate`]) to learn whether its server
    /// can use the value.
    pub fn apply(&'static self, file: &mut ScenarioFile, value: &Value) -> Result<(), SweepError> {
        self.check(file)?;
        (self.set)(file, value);
        Ok(())
    }

    /// One value as a user writes it (`50`, `650ms`, `0.45`), checked as a list item is.
    pub fn parse_value(&'static self, text: &str) -> Result<Value, SweepError> {
        let axis = parse_list(self, text)?;
        match axis.len() {
            1 => Ok(axis.value(0)),
            _ => Err(problem(
                self,
                format!("`{text}` is not one value; give a single value"),
            )),
        }
    }

    /// The value `number` in the axis's unit (whole numbers; durations in seconds; decimals),
    /// rounded to the kind's resolution (1, a nanosecond, a billionth): how a search turns a
    /// point between two values into one the table can lay over a scenario. Refused for a
    /// negative, non-finite or too large number, and for a parameter that is not numeric.
    pub fn value_at(&'static self, number: f64) -> Result<Value, SweepError> {
        let scale = match self.kind {
            Kind::Whole => 1.0,
            Kind::Duration | Kind::Decimal => 1e9,
            _ => {
                return Err(problem(
                    self,
                    "it is not numeric; accepted: a numeric parameter".to_string(),
                ))
            }
        };
        let units = (number * scale).round();
        // 2^64 is exactly representable; anything at or past it does not fit.
        if !number.is_finite() || !(0.0..18_446_744_073_709_551_616.0).contains(&units) {
            return Err(problem(
                self,
                format!("{number} is out of range; accepted: a finite number from 0"),
            ));
        }
        Ok(Value::from_units(self.kind, units as u64))
    }
}

/// The numeric parameters, in table order: the axes a boundary search can vary.
pub fn numeric_parameters() -> impl Iterator<Item = &'static Parameter> {
    PARAMETERS.iter().filter(|p| p.is_numeric())
}

/// The parameter called `name` (`recover_at` is accepted for `recover-at`, as in files).
pub fn parameter(name: &str) -> Option<&'static Parameter> {
    let wanted = name.trim().replace('_', "-");
    PARAMETERS.iter().find(|p| p.name == wanted)
}

/// The strategy axis of a sweep or a boundary search that names no strategy: the base's
/// list, or with a preset (`preset`: in the base or among the axes) each cell's preset's
/// own, else the default scenario's (full jitter).
pub fn strategies_unnamed(
    base: &ScenarioFile,
    preset: bool,
) -> Result<Vec<Value>, crate::config::ConfigError> {
    Ok(match &base.strategy {
        Some(list) => list.0.iter().copied().map(Value::Strategy).collect(),
        None if preset => vec![Value::Name(FROM_PRESET)],
        None => ScenarioFile::default()
            .validate()?
            .strategies
            .into_iter()
            .map(Value::Strategy)
            .collect(),
    })
}

/// The accepted parameter names, comma-separated, for messages.
pub fn parameter_names() -> String {
    PARAMETERS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}
