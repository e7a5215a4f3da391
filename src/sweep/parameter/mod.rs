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

mod table;

pub use table::{FROM_PRESET, PARAMETERS, PRESET_NAMES};

use crate::config::{Scenario, ScenarioFile};
use crate::policy::control::{Breaker, Budget, Scope, SpecError, Throttle};
use crate::policy::Strategy;
use crate::time::{parse_duration, SimDuration};

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

/// The accepted parameter names, comma-separated, for messages.
pub fn parameter_names() -> String {
    PARAMETERS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The values one parameter takes in a sweep, in the order given (lists) or ascending (ranges).
#[derive(Clone, Debug)]
pub struct Axis {
    /// The parameter varied.
    pub parameter: &'static Parameter,
    values: AxisValues,
}

#[derive(Clone, Debug)]
enum AxisValues {
    List(Vec<Value>),
    /// `start + i · step` for `i < count`, in the kind's integer unit. Never materialised, so
    /// a huge range costs nothing until the cell limit refuses it.
    Stepped {
        start: u64,
        step: u64,
        count: u64,
    },
}

impl Axis {
    /// An axis of the given values.
    pub fn of(parameter: &'static Parameter, values: Vec<Value>) -> Axis {
        Axis {
            parameter,
            values: AxisValues::List(values),
        }
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        match &self.values {
            AxisValues::List(v) => v.len() as u64,
            AxisValues::Stepped { count, .. } => *count,
        }
    }

    /// True when the axis has no values (never, once parsed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th value (`i < len()`).
    pub fn value(&self, i: u64) -> Value {
        match &self.values {
            AxisValues::List(v) => v[i as usize].clone(),
            AxisValues::Stepped { start, step, .. } => {
                Value::from_units(self.parameter.kind, start + i * step)
            }
        }
    }
}

fn problem(parameter: &Parameter, message: String) -> SweepError {
    SweepError::Values {
        parameter: parameter.name,
        message,
    }
}

/// Parses what the user wrote for `parameter`: a comma list (`100,1000`), an inclusive range
/// (`2..8`, whole numbers only), or a stepped inclusive range (`100ms..1s step 100ms`; the last
/// value is the largest not past the end).
pub fn parse_axis(parameter: &'static Parameter, text: &str) -> Result<Axis, SweepError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(problem(
            parameter,
            "empty list; give one value or more, separated by commas".into(),
        ));
    }
    match (parameter.kind, text.split_once("..")) {
        (Kind::Control(_), _) | (_, None) => parse_list(parameter, text),
        (_, Some((from, rest))) => parse_range(parameter, text, from, rest),
    }
}

fn parse_list(parameter: &'static Parameter, text: &str) -> Result<Axis, SweepError> {
    let mut values = Vec::new();
    let items = match parameter.kind {
        Kind::Control(_) => control_items(parameter, text)?,
        _ => text.split(',').map(str::to_string).collect(),
    };
    for item in &items {
        let item = item.trim();
        if item.is_empty() {
            return Err(problem(
                parameter,
                format!("empty value in the list `{text}`; separate values with single commas"),
            ));
        }
        let parsed = match parameter.kind {
            Kind::Strategy if item == "all" => Strategy::ALL.map(Value::Strategy).to_vec(),
            Kind::Strategy => vec![Value::Strategy(
                item.parse::<Strategy>()
                    .map_err(|e| problem(parameter, e.or_all().to_string()))?,
            )],
            Kind::Choice(names) => match names.iter().find(|n| **n == item) {
                Some(name) => vec![Value::Name(name)],
                None => {
                    return Err(problem(
                        parameter,
                        format!("unknown value `{item}`; accepted: {}", names.join(", ")),
                    ))
                }
            },
            Kind::Control(control) => {
                vec![Value::Text(control.canonical(item).map_err(|e| {
                    problem(parameter, format!("{}; {}", e.value, e.accepted))
                })?)]
            }
            kind => vec![Value::from_units(kind, parse_units(parameter, item)?)],
        };
        for value in parsed {
            if values.contains(&value) {
                return Err(problem(
                    parameter,
                    format!("`{item}` appears twice in `{text}`; list each value once"),
                ));
            }
            values.push(value);
        }
    }
    Ok(Axis::of(parameter, values))
}

/// A list of controls split into its values: at commas, except that an item `key=value`
/// belongs to the value before it, so `none,grpc:max_tokens=20,token_ratio=0.2` is two values
/// (no control's name holds `=`).
fn control_items(parameter: &Parameter, text: &str) -> Result<Vec<String>, SweepError> {
    // `key=value` with no `:` before the `=`: `grpc:max_tokens=20` starts a value.
    let pair = |item: &str| {
        item.split_once('=')
            .is_some_and(|(key, _)| !key.contains(':'))
    };
    let mut items: Vec<String> = Vec::new();
    for item in text.split(',') {
        match items.last_mut() {
            Some(last) if pair(item) => {
                last.push(',');
                last.push_str(item.trim());
            }
            None if pair(item) => {
                return Err(problem(
                    parameter,
                    format!(
                        "`{text}` starts with the parameter `{}`; write a name first, e.g. grpc:max_tokens=20",
                        item.trim()
                    ),
                ))
            }
            _ => items.push(item.trim().to_string()),
        }
    }
    Ok(items)
}

fn parse_range(
    parameter: &'static Parameter,
    text: &str,
    from: &str,
    rest: &str,
) -> Result<Axis, SweepError> {
    let example = match parameter.kind {
        Kind::Whole => "2..8 or 100..1000 step 100",
        Kind::Duration => "100ms..1s step 100ms",
        Kind::Decimal => "1..3 step 0.5",
        Kind::Strategy | Kind::Choice(_) | Kind::Control(_) => {
            return Err(problem(
                parameter,
                format!("`{text}` is a range, but names cannot be ranged; list them with commas"),
            ))
        }
    };
    let (to, step) = match rest.split_once("step") {
        Some((to, step)) => (to, Some(step)),
        None => (rest, None),
    };
    let start = parse_units(parameter, from)?;
    let end = parse_units(parameter, to)?;
    let step = match step {
        Some(step) => parse_units(parameter, step)?,
        None if parameter.kind == Kind::Whole => 1,
        None => {
            return Err(problem(
                parameter,
                format!("the range `{text}` needs a step, e.g. {example}"),
            ))
        }
    };
    if start > end {
        return Err(problem(
            parameter,
            format!("`{text}` is a reversed range; write the smaller end first, e.g. {example}"),
        ));
    }
    if step == 0 {
        return Err(problem(
            parameter,
            format!("`{text}` has a zero step; the step must be positive, e.g. {example}"),
        ));
    }
    Ok(Axis {
        parameter,
        values: AxisValues::Stepped {
            start,
            step,
            count: (end - start) / step + 1,
        },
    })
}

/// One number of a numeric kind, in its integer unit (1, a nanosecond, a billionth).
fn parse_units(parameter: &Parameter, item: &str) -> Result<u64, SweepError> {
    let item = item.trim();
    match parameter.kind {
        Kind::Duration => parse_duration(item)
            .map(SimDuration::as_nanos)
            .map_err(|e| problem(parameter, e.to_string())),
        Kind::Decimal => parse_decimal(item).ok_or_else(|| {
            problem(
                parameter,
                format!("`{item}` is not a number; write e.g. 2 or 1.5 (at most nine decimals)"),
            )
        }),
        _ => item.replace('_', "").parse::<u64>().map_err(|e| {
            let message = if *e.kind() == std::num::IntErrorKind::PosOverflow {
                format!("`{item}` is too large; at most {}", u64::MAX)
            } else {
                format!("`{item}` is not a whole number; write digits only, e.g. 1000")
            };
            problem(parameter, message)
        }),
    }
}

/// `1.5` → `1_500_000_000` billionths; `None` for anything but digits with at most one point
/// and nine decimals.
fn parse_decimal(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty())
        || !digits(whole)
        || !digits(fraction)
        || fraction.len() > 9
    {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let fraction: u64 = format!("{fraction:0<9}").parse().ok()?;
    whole.checked_mul(BILLION)?.checked_add(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str) -> &'static Parameter {
        parameter(name).unwrap()
    }

    fn values(name: &str, text: &str) -> Vec<Value> {
        let axis = parse_axis(param(name), text).unwrap();
        (0..axis.len()).map(|i| axis.value(i)).collect()
    }

    fn error(name: &str, text: &str) -> String {
        parse_axis(param(name), text).unwrap_err().to_string()
    }

    #[test]
    fn stepped_duration_ranges_end_exactly() {
        let v = values("base", "100ms..1s step 100ms");
        assert_eq!(v.len(), 10);
        assert_eq!(v[0], Value::Duration(SimDuration::from_millis(100)));
        assert_eq!(v[2], Value::Duration(SimDuration::from_millis(300)));
        assert_eq!(v[9], Value::Duration(SimDuration::from_secs(1)));
        // The last value is the largest not past the end: 100, 400, 700, 1000 / 100, 500, 900.
        assert_eq!(values("base", "100ms..1s step 300ms").len(), 4);
        let v = values("base", "100ms..1s step 400ms");
        assert_eq!(v[2], Value::Duration(SimDuration::from_millis(900)));
        assert_eq!(v.len(), 3);
    }

    #[test]
    fn decimal_ranges_do_not_drift() {
        // 0.1 has no exact binary form: summing it ten times in f64 gives 1.9999999999999998.
        let v = values("multiplier", "1..2 step 0.1");
        assert_eq!(v.len(), 11);
        assert_eq!(v[10].decimal(), 2.0);
        assert_eq!(v[3].decimal(), 1.3);
        assert_eq!(values("multiplier", "1.5,2")[0].decimal(), 1.5);
    }

    #[test]
    fn whole_ranges_are_inclusive_with_step_one_by_default() {
        let v = values("retries", "2..8");
        assert_eq!(v.first(), Some(&Value::Whole(2)));
        assert_eq!(v.last(), Some(&Value::Whole(8)));
        assert_eq!(v.len(), 7);
        assert_eq!(values("clients", "100..1000 step 450").len(), 3);
        assert_eq!(values("clients", "1_000,10")[0], Value::Whole(1000));
    }

    #[test]
    fn names_expand_and_keep_the_given_order() {
        assert_eq!(values("strategy", "all").len(), Strategy::ALL.len());
        assert_eq!(
            values("strategy", "fixed,naive"),
            [
                Value::Strategy(Strategy::Fixed),
                Value::Strategy(Strategy::Naive)
            ]
        );
        assert_eq!(values("server", "down"), [Value::Name("down")]);
        // The sweep offers every model `--server` does, from the one list.
        let every: Vec<Value> = crate::config::SERVER_MODELS
            .iter()
            .map(|&name| Value::Name(name))
            .collect();
        assert_eq!(
            values(
                "server",
                "down,fixed-window,sliding-window,token-bucket,occ,capacity,flaky"
            ),
            every
        );
    }

    #[test]
    fn huge_ranges_are_counted_not_built() {
        let axis = parse_axis(param("clients"), "1..1000000000000").unwrap();
        assert_eq!(axis.len(), 1_000_000_000_000);
        assert_eq!(axis.value(999_999_999_999), Value::Whole(1_000_000_000_000));
    }

    #[test]
    fn bad_values_get_one_clear_error() {
        let e = error("clients", "");
        assert!(e.contains("--clients") && e.contains("empty list"), "{e}");
        let e = error("clients", "100,,1000");
        assert!(e.contains("empty value"), "{e}");
        let e = error("retries", "8..2");
        assert!(e.contains("reversed") && e.contains("8..2"), "{e}");
        let e = error("base", "100ms..1s step 0ms");
        assert!(e.contains("zero step"), "{e}");
        let e = error("base", "100ms..1s");
        assert!(e.contains("needs a step"), "{e}");
        let e = error("strategy", "full-jitter,slow");
        assert!(
            e.contains("unknown strategy `slow`") && e.contains("accepted"),
            "{e}"
        );
        let e = error("strategy", "a..b");
        assert!(e.contains("names cannot be ranged"), "{e}");
        let e = error("server", "up");
        assert!(e.contains("accepted: down"), "{e}");
        let e = error("clients", "10,10");
        assert!(e.contains("twice"), "{e}");
        let e = error("multiplier", "1.5.2");
        assert!(e.contains("not a number"), "{e}");
        let e = error("base", "100");
        assert!(e.contains("--base") && e.contains("unit"), "{e}");
    }

    #[test]
    fn controls_split_at_names_and_are_written_shortest() {
        // A `key=value` item belongs to the control before it; a `name:key=value` item starts
        // a new one. Parameters at their defaults are left out of the written value.
        assert_eq!(
            values(
                "budget",
                "none,grpc:max_tokens=20,token_ratio=0.2,token-bucket:capacity=5"
            ),
            [
                Value::Text("none".into()),
                Value::Text("grpc:max_tokens=20,token_ratio=0.2".into()),
                Value::Text("token-bucket".into()),
            ]
        );
        assert_eq!(
            values("breaker", "retries:ratio=0.1,window=all, calls:open=10s"),
            [
                Value::Text("retries".into()),
                Value::Text("calls:open=10s".into())
            ]
        );
        assert_eq!(
            values("breaker", "retries:window=1m"),
            [Value::Text("retries:window=60s".into())]
        );
        assert_eq!(
            values("throttle", "sre:k=2,window=2m"),
            [Value::Text("sre".into())]
        );
        // The written value reads back as the same control.
        let written = values("budget", "aws-standard:cost=7,capacity=500");
        assert_eq!(written, [Value::Text("aws-standard:cost=7".into())]);
        assert_eq!(
            Budget::parse("aws-standard:cost=7").unwrap(),
            Budget::parse("aws-standard:capacity=500,cost=7").unwrap()
        );
        // A range is not a list of controls: `..` is read as part of a value.
        assert!(error("budget", "none..grpc").contains("none..grpc"));
    }

    #[test]
    fn bad_controls_name_the_value_and_what_is_accepted() {
        let e = error("budget", "none,gprc");
        assert!(
            e.starts_with("invalid --budget: gprc; accepted: none, token-bucket"),
            "{e}"
        );
        let e = error("budget", "max_tokens=20,grpc");
        assert!(
            e.contains("starts with the parameter `max_tokens=20`"),
            "{e}"
        );
        let e = error("breaker", "retries:ratio=1.5");
        assert!(e.contains("ratio=1.5 is out of range"), "{e}");
        // Two spellings of one control are one value twice.
        let e = error("budget", "grpc,grpc:max_tokens=10");
        assert!(e.contains("twice"), "{e}");
        let e = error("failure-rate", "0.1.2");
        assert!(e.contains("not a number"), "{e}");
    }

    #[test]
    fn preset_names_are_the_presets() {
        let names: Vec<&str> = crate::config::PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(names, PRESET_NAMES);
    }

    fn file(text: &str) -> ScenarioFile {
        ScenarioFile::parse(text, Some("toml")).unwrap()
    }

    const SPIKED: &str = "arrivals = \"poisson\"\nrate = \"40/s\"\nduration = \"60s\"\n\
                          spike = [\"20s..25s@80/s\", \"40s..41s@90/s\"]\n\
                          outage = \"5s..6s\"\n\
                          degrade = \"10s..12s@0.5\"\n[server]\nmodel = \"capacity\"\n";

    #[test]
    fn trigger_shapes_keep_each_start_and_set_the_length() {
        let mut f = file(SPIKED);
        let ten = Value::Duration(SimDuration::from_secs(10));
        param("spike-duration").apply(&mut f, &ten).unwrap();
        param("outage-duration").apply(&mut f, &ten).unwrap();
        param("degrade-duration")
            .apply(&mut f, &Value::Duration(SimDuration::from_millis(1500)))
            .unwrap();
        param("degrade-factor")
            .apply(
                &mut f,
                &param("degrade-factor").parse_value("0.25").unwrap(),
            )
            .unwrap();
        let texts = |i: &Option<crate::config::Intervals>| -> Vec<String> {
            i.as_ref()
                .unwrap()
                .0
                .iter()
                .map(|t| t.text.clone())
                .collect()
        };
        assert_eq!(texts(&f.spike), ["20s..30s@80/s", "40s..50s@90/s"]);
        assert_eq!(texts(&f.outage), ["5s..15s"]);
        assert_eq!(texts(&f.degrade), ["10s..11.5s@0.25"]);
        // The validated scenario has those triggers, and the columns say so in seconds.
        let s = f.validate().unwrap();
        let get = |name: &str| (param(name).get)(&s);
        assert_eq!(get("spike-duration"), "10 10");
        assert_eq!(get("spike-rate"), "80 90");
        assert_eq!(get("outage-duration"), "10");
        assert_eq!(get("degrade-duration"), "1.5");
        assert_eq!(get("degrade-factor"), "0.25");
        assert_eq!(s.overload.triggers.degrades[0].factor, 0.25);
        // A spike pushed past the run's end is the spike's own error, naming the new text.
        let mut f = file(SPIKED);
        param("spike-duration")
            .apply(&mut f, &Value::Duration(SimDuration::from_secs(30)))
            .unwrap();
        let e = f.validate().unwrap_err().to_string();
        assert!(e.contains("--spike") && e.contains("40s..70s@90/s"), "{e}");
    }

    #[test]
    fn a_trigger_axis_without_its_trigger_is_refused_in_one_line() {
        let plain = ScenarioFile::default();
        for (name, trigger) in [
            ("spike-duration", "spike"),
            ("outage-duration", "outage"),
            ("degrade-factor", "degrade"),
            ("degrade-duration", "degrade"),
        ] {
            let e = param(name).check(&plain).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("invalid --{name}: the scenario has no {trigger} "))
                    && e.contains("accepted with a scenario that has one, e.g.")
                    && !e.contains('\n'),
                "{e}"
            );
        }
        // The slowdown needs no trigger; a server without service times refuses it.
        let mut f = ScenarioFile::default();
        param("slowdown")
            .apply(&mut f, &Value::Duration(SimDuration::from_millis(1)))
            .unwrap();
        let e = f.validate().unwrap_err().to_string();
        assert!(e.contains("--slowdown"), "{e}");
        // A degradation on a server without service times is refused by validation.
        let e = file("degrade = \"1s..2s@0.5\"\n")
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--degrade") && e.contains("capacity"), "{e}");
    }

    #[test]
    fn numbers_in_the_axis_unit_round_to_the_kind() {
        assert_eq!(
            param("degrade-duration").value_at(0.65).unwrap(),
            Value::Duration(SimDuration::from_millis(650))
        );
        assert_eq!(param("workers").value_at(3.6).unwrap(), Value::Whole(4));
        assert_eq!(
            param("degrade-factor").value_at(0.4).unwrap(),
            Value::Decimal(400_000_000)
        );
        assert_eq!(
            param("rate").value_at(1.0 / 3.0).unwrap(),
            Value::Decimal(333_333_333)
        );
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e30] {
            let e = param("timeout").value_at(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("invalid --timeout: ") && e.contains("out of range"),
                "{e}"
            );
        }
        assert!(param("strategy").value_at(1.0).is_err());
        // `number` reads a value back in the unit; `Display` is a text that parses back.
        for (name, text, number) in [
            ("degrade-duration", "650ms", 0.65),
            ("spike-duration", "1.5s", 1.5),
            ("rate", "12.5", 12.5),
            ("retries", "4", 4.0),
            ("slowdown", "500us", 0.0005),
        ] {
            let value = param(name).parse_value(text).unwrap();
            assert_eq!(value.number(), Some(number), "{name}");
            assert_eq!(value.to_string(), text);
            assert_eq!(param(name).parse_value(&value.to_string()).unwrap(), value);
        }
        let e = param("rate").parse_value("1,2").unwrap_err().to_string();
        assert!(e.contains("not one value"), "{e}");
        assert_eq!(Value::Name("down").number(), None);
    }

    #[test]
    fn the_numeric_axes_are_the_numeric_kinds() {
        let names: Vec<&str> = numeric_parameters().map(|p| p.name).collect();
        for name in [
            "clients",
            "retries",
            "rate",
            "spike-rate",
            "spike-duration",
            "workers",
            "service-time",
            "slowdown",
            "timeout",
            "outage-duration",
            "degrade-factor",
            "degrade-duration",
            "failure-rate",
            "base",
        ] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        for name in ["strategy", "server", "budget", "preset", "hidden-timers"] {
            assert!(!names.contains(&name), "{name}");
        }
    }

    #[test]
    fn names_accept_underscores_as_in_files() {
        assert_eq!(param("recover_at").name, "recover-at");
        assert!(parameter("clinets").is_none());
    }
}
