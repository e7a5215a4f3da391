//! The `params` table: each parameter to tune in sweep syntax, a key of the scenario or of a
//! budget, breaker or throttle, and its levels ([`Dimension`]). Separate because it speaks
//! the sweep's parameter language and the retry controls' keys.

use std::collections::BTreeMap;

use super::{invalid, TuneError};
use crate::sweep::parameter::{parameter, parse_axis, Control, Kind, Value};
use crate::sweep::SweepError;

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

/// The controls whose keys `CONTROL.KEY` tunes.
const CONTROLS: [&str; 3] = ["budget", "breaker", "throttle"];

pub(super) fn dimensions(table: &toml::Table) -> Result<Vec<Dimension>, TuneError> {
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
