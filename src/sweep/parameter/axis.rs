//! Parsing what a user writes for one parameter (`100,1000`, `2..8`, `100ms..1s step 100ms`)
//! into an [`Axis`] of values: lists, a retry control's items, and stepped ranges computed in
//! integers (nanoseconds, billionths) so a range ends exactly where written. Separate from the
//! table: it reads text against one [`Parameter`], whatever the parameter.

use super::{Kind, Parameter, Value, BILLION};
use crate::policy::Strategy;
use crate::sweep::SweepError;
use crate::time::{parse_duration, SimDuration};

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

pub(super) fn problem(parameter: &Parameter, message: String) -> SweepError {
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

pub(super) fn parse_list(parameter: &'static Parameter, text: &str) -> Result<Axis, SweepError> {
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
