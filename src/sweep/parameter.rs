//! The table of parameters a sweep can vary, and the parsing of what a user writes for one
//! (`100,1000`, `2..8`, `100ms..1s step 100ms`) into an [`Axis`] of values.
//!
//! The table is data: one [`Parameter`] per scenario key, saying how its values parse, how one
//! is laid over a [`ScenarioFile`] and how the effective value of a validated [`Scenario`] is
//! written in the CSV. A new scenario parameter is one more entry in [`PARAMETERS`]; the command
//! line (`herd-sim sweep --NAME`), the `[sweep]` table, the CSV columns and the seed labels all
//! follow from it. Stepped ranges are computed in integers (nanoseconds, billionths), so
//! `100ms..1s step 100ms` ends exactly at 1 s and `1..2 step 0.1` exactly at 2. No I/O here.

use crate::config::{
    Bound, DistText, IntervalText, Intervals, LatencyText, LimiterRule, RateText, Scenario,
    ScenarioFile, ServerModel, StrategyList,
};
use crate::engine::{Latency, Work};
use crate::policy::Strategy;
use crate::server::CapacityRule;
use crate::time::{parse_duration, SimDuration};
use crate::workload::{Arrivals, Dist};

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
    fn name(&self) -> &'static str {
        match self {
            Value::Name(n) => n,
            Value::Strategy(s) => s.name(),
            other => panic!("sweep table: expected a name, got {other:?}"),
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
    /// One line for `--help`.
    pub help: &'static str,
    /// Lays one value over a scenario file.
    pub set: fn(&mut ScenarioFile, &Value),
    /// The effective value in a validated scenario of one strategy, as written in the CSV and
    /// in the seed label; empty when the parameter does not apply (no recovery time, say).
    pub get: fn(&Scenario) -> String,
}

fn seconds(d: SimDuration) -> String {
    // f64's shortest round-trip form: 100 ms is `0.1`, 1 s is `1`.
    d.as_secs_f64().to_string()
}

fn server_file(file: &mut ScenarioFile) -> &mut crate::config::ServerFile {
    file.server.get_or_insert_with(Default::default)
}

/// Every parameter a sweep can vary, in grid order: the first varies slowest, the last
/// fastest (the README lists them). Strategy comes first so that a sweep's rows group by
/// strategy.
pub static PARAMETERS: [Parameter; 25] = [
    Parameter {
        name: "strategy",
        column: "strategy",
        kind: Kind::Strategy,
        help: "Strategies, a comma list or `all`",
        set: |f, v| f.strategy = Some(StrategyList(vec![strategy_of(v)])),
        get: |s| s.strategies[0].name().to_string(),
    },
    Parameter {
        name: "clients",
        column: "clients",
        kind: Kind::Whole,
        help: "Numbers of clients, e.g. 100,1000,10000 or 100..1000 step 100",
        set: |f, v| f.clients = Some(v.whole()),
        get: |s| s.clients.to_string(),
    },
    Parameter {
        name: "retries",
        column: "retries",
        kind: Kind::Whole,
        help: "Retries per client, e.g. 2..8",
        set: |f, v| f.retries = Some(u32_of(v)),
        get: |s| s.retries.to_string(),
    },
    Parameter {
        name: "base",
        column: "base_s",
        kind: Kind::Duration,
        help: "First backoff delays, e.g. 100ms,1s or 100ms..1s step 100ms",
        set: |f, v| f.base = Some(v.duration()),
        get: |s| seconds(s.backoff.base),
    },
    Parameter {
        name: "cap",
        column: "cap_s",
        kind: Kind::Duration,
        help: "Largest backoff delays, e.g. 10s,30s",
        set: |f, v| f.cap = Some(v.duration()),
        get: |s| seconds(s.backoff.cap),
    },
    Parameter {
        name: "multiplier",
        column: "multiplier",
        kind: Kind::Decimal,
        help: "Backoff growth per retry, e.g. 1.5,2 or 1..3 step 0.5",
        set: |f, v| f.multiplier = Some(v.decimal()),
        get: |s| s.backoff.multiplier.to_string(),
    },
    Parameter {
        name: "bin",
        column: "bin_s",
        kind: Kind::Duration,
        help: "Histogram window widths, e.g. 10ms,100ms",
        set: |f, v| f.bin = Some(v.duration()),
        get: |s| seconds(s.bin),
    },
    Parameter {
        name: "server",
        column: "server",
        kind: Kind::Choice(&[
            "down",
            "fixed-window",
            "sliding-window",
            "token-bucket",
            "occ",
            "capacity",
        ]),
        help: "Server models, e.g. down,fixed-window",
        set: |f, v| server_file(f).model = Some(v.name().to_string()),
        get: |s| s.server.name().to_string(),
    },
    Parameter {
        name: "recover-at",
        column: "recover_at_s",
        kind: Kind::Duration,
        help: "For a down server: when it starts serving, e.g. 5s..30s step 5s",
        set: |f, v| server_file(f).recover_at = Some(v.duration()),
        get: |s| match s.server {
            ServerModel::Down {
                recover_at: Some(at),
            } => seconds(at),
            _ => String::new(),
        },
    },
    Parameter {
        name: "limit",
        column: "limit",
        kind: Kind::Whole,
        help: "Window limiters: requests admitted per window, e.g. 10,30,60",
        set: |f, v| server_file(f).limit = Some(u32_of(v)),
        get: |s| match window_rule(s) {
            Some((limit, _)) => limit.to_string(),
            None => String::new(),
        },
    },
    Parameter {
        name: "window",
        column: "window_s",
        kind: Kind::Duration,
        help: "Window limiters: the window length, e.g. 1s,60s",
        set: |f, v| server_file(f).window = Some(v.duration()),
        get: |s| match window_rule(s) {
            Some((_, window)) => seconds(window),
            None => String::new(),
        },
    },
    Parameter {
        name: "clients-per-address",
        column: "clients_per_address",
        kind: Kind::Whole,
        help: "Limiters: clients sharing one address and so one counter, e.g. 1,5",
        set: |f, v| server_file(f).clients_per_address = Some(u32_of(v)),
        get: |s| match s.server {
            ServerModel::Limited(m) => m.clients_per_address.to_string(),
            ServerModel::Down { .. }
            | ServerModel::Occ
            | ServerModel::Capacity(_)
            | ServerModel::Flaky(_) => String::new(),
        },
    },
    Parameter {
        name: "capacity",
        column: "capacity",
        kind: Kind::Whole,
        help: "Token bucket: tokens it holds when full, e.g. 10,30",
        set: |f, v| server_file(f).capacity = Some(u32_of(v)),
        get: |s| token_rule(s).map_or(String::new(), |r| r.capacity.to_string()),
    },
    Parameter {
        name: "refill",
        column: "refill",
        kind: Kind::Whole,
        help: "Token bucket: tokens added per refill interval, e.g. 1,5",
        set: |f, v| server_file(f).refill = Some(u32_of(v)),
        get: |s| token_rule(s).map_or(String::new(), |r| r.refill.to_string()),
    },
    Parameter {
        name: "refill-interval",
        column: "refill_interval_s",
        kind: Kind::Duration,
        help: "Token bucket: the refill interval, e.g. 1s,2s",
        set: |f, v| server_file(f).refill_interval = Some(v.duration()),
        get: |s| token_rule(s).map_or(String::new(), |r| seconds(r.interval)),
    },
    Parameter {
        name: "epoch-phase",
        column: "epoch_phase_s",
        kind: Kind::Duration,
        help: "Limiters: where in the Unix second the run starts, e.g. 0ms..900ms step 100ms",
        set: |f, v| server_file(f).epoch_phase = Some(v.duration()),
        get: |s| match s.server {
            ServerModel::Limited(m) => seconds(m.epoch_phase),
            ServerModel::Down { .. }
            | ServerModel::Occ
            | ServerModel::Capacity(_)
            | ServerModel::Flaky(_) => String::new(),
        },
    },
    Parameter {
        name: "items",
        column: "items",
        kind: Kind::Whole,
        help: "Items each client fetches in sequence, e.g. 1,40",
        set: |f, v| f.items = Some(u32_of(v)),
        get: |s| match s.work {
            Work::Items(k) => k.to_string(),
            Work::Pool(_) => String::new(),
        },
    },
    Parameter {
        name: "latency",
        column: "latency_s",
        kind: Kind::Duration,
        help: "Round-trip latency, e.g. 0ms,50ms,110ms",
        set: |f, v| f.latency = Some(LatencyText(Latency::Fixed(v.duration()))),
        get: |s| match s.latency {
            Latency::Fixed(d) => seconds(d),
            // Only a base scenario can set a uniform latency; written as configs write it.
            uniform => uniform.to_string(),
        },
    },
    Parameter {
        name: "rate",
        column: "rate_per_s",
        kind: Kind::Decimal,
        help: "Poisson arrivals: total calls per second outside spikes, e.g. 10..90 step 10",
        set: |f, v| f.rate = Some(RateText(v.decimal())),
        get: |s| match &s.overload.arrivals {
            Arrivals::Poisson(schedule) => schedule.base.to_string(),
            Arrivals::Herd => String::new(),
        },
    },
    Parameter {
        name: "spike-rate",
        column: "spike_rate_per_s",
        kind: Kind::Decimal,
        help: "Poisson arrivals: the rate of every spike the scenario has, e.g. 60,80,100",
        set: |f, v| {
            if let Some(spikes) = &mut f.spike {
                for spike in &mut spikes.0 {
                    let rate = format!("{}/s", v.decimal());
                    spike.text = format!("{}..{}@{rate}", spike.from, spike.to);
                    spike.value = Some(rate);
                }
            }
        },
        get: |s| match &s.overload.arrivals {
            Arrivals::Poisson(schedule) => schedule
                .spikes
                .iter()
                .map(|spike| spike.rate.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            Arrivals::Herd => String::new(),
        },
    },
    Parameter {
        name: "workers",
        column: "workers",
        kind: Kind::Whole,
        help: "Capacity server: requests in service at once, e.g. 50,100,200",
        set: |f, v| server_file(f).workers = Some(Bound(Some(u32_of(v)))),
        get: |s| capacity_rule(s).map_or(String::new(), |r| Bound(r.workers).to_string()),
    },
    Parameter {
        name: "service-time",
        column: "service_time_s",
        kind: Kind::Duration,
        help: "Capacity server: a fixed service time, e.g. 10ms,50ms",
        set: |f, v| server_file(f).service_time = Some(DistText(Dist::Fixed(v.duration()))),
        get: |s| match capacity_rule(s).map(|r| r.service) {
            Some(Dist::Fixed(d)) => seconds(d),
            // Only a base scenario can set a random service time; written as configs write it.
            Some(other) => other.to_string(),
            None => String::new(),
        },
    },
    Parameter {
        name: "queue",
        column: "queue",
        kind: Kind::Whole,
        help: "Capacity server: requests waiting for a worker at most, e.g. 10,100",
        set: |f, v| server_file(f).queue = Some(Bound(Some(u32_of(v)))),
        get: |s| capacity_rule(s).map_or(String::new(), |r| Bound(r.queue).to_string()),
    },
    Parameter {
        name: "timeout",
        column: "timeout_s",
        kind: Kind::Duration,
        help: "Client timeout per attempt, e.g. 500ms..3s step 500ms",
        set: |f, v| f.timeout = Some(v.duration()),
        get: |s| s.overload.timeout.map_or(String::new(), seconds),
    },
    Parameter {
        name: "outage",
        column: "outage_s",
        kind: Kind::Duration,
        help: "An outage from 0 to D replacing the scenario's outages, e.g. 10s,20s,30s",
        set: |f, v| {
            let text = format!("0s..{}", v.duration());
            f.outage = Some(Intervals(vec![IntervalText {
                from: SimDuration::ZERO,
                to: v.duration(),
                value: None,
                text,
            }]));
        },
        get: |s| match s.overload.triggers.outages[..] {
            [] => String::new(),
            [(from, to)] if from.as_nanos() == 0 => seconds(SimDuration(to.as_nanos())),
            ref many => many
                .iter()
                .map(|(from, to)| {
                    format!(
                        "{}..{}",
                        SimDuration(from.as_nanos()),
                        SimDuration(to.as_nanos())
                    )
                })
                .collect::<Vec<_>>()
                .join(" "),
        },
    },
];

fn capacity_rule(scenario: &Scenario) -> Option<CapacityRule> {
    match scenario.server {
        ServerModel::Capacity(r) => Some(r),
        ServerModel::Down { .. }
        | ServerModel::Occ
        | ServerModel::Limited(_)
        | ServerModel::Flaky(_) => None,
    }
}

/// The rule of a token bucket; `None` for other servers.
fn token_rule(scenario: &Scenario) -> Option<crate::server::TokenBucketRule> {
    match scenario.server {
        ServerModel::Limited(m) => match m.rule {
            LimiterRule::TokenBucket(r) => Some(r),
            _ => None,
        },
        ServerModel::Down { .. }
        | ServerModel::Occ
        | ServerModel::Capacity(_)
        | ServerModel::Flaky(_) => None,
    }
}

/// The limit and window of a window limiter; `None` for other servers.
fn window_rule(scenario: &Scenario) -> Option<(u32, SimDuration)> {
    match scenario.server {
        ServerModel::Limited(m) => match m.rule {
            LimiterRule::FixedWindow(r) => Some((r.limit, r.window)),
            LimiterRule::SlidingWindow(r) => Some((r.limit, r.window)),
            LimiterRule::TokenBucket(_) => None,
        },
        ServerModel::Down { .. }
        | ServerModel::Occ
        | ServerModel::Capacity(_)
        | ServerModel::Flaky(_) => None,
    }
}

/// A whole number for a `u32` key; larger values saturate, and validation names the key.
fn u32_of(value: &Value) -> u32 {
    u32::try_from(value.whole()).unwrap_or(u32::MAX)
}

fn strategy_of(value: &Value) -> Strategy {
    match value {
        Value::Strategy(s) => *s,
        other => panic!("sweep table: expected a strategy, got {other:?}"),
    }
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
    match text.split_once("..") {
        Some((from, rest)) => parse_range(parameter, text, from, rest),
        None => parse_list(parameter, text),
    }
}

fn parse_list(parameter: &'static Parameter, text: &str) -> Result<Axis, SweepError> {
    let mut values = Vec::new();
    for item in text.split(',') {
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
        Kind::Strategy | Kind::Choice(_) => {
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
        _ => item.replace('_', "").parse::<u64>().map_err(|_| {
            problem(
                parameter,
                format!("`{item}` is not a whole number; write digits only, e.g. 1000"),
            )
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
    fn names_accept_underscores_as_in_files() {
        assert_eq!(param("recover_at").name, "recover-at");
        assert!(parameter("clinets").is_none());
    }
}
