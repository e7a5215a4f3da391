//! The table of sweep parameters ([`PARAMETERS`]): for each scenario key, how its values
//! parse, how one is laid over a [`ScenarioFile`] and how a validated [`Scenario`]'s effective
//! value is written in the CSV. No I/O.

use crate::config::{
    Bound, DistText, HeadersVisible, IntervalText, Intervals, LatencyText, LimiterRule, RateText,
    Scenario, ScenarioFile, ServerModel, StrategyList, SERVER_MODELS,
};
use crate::engine::browser::{ClockSkew, HiddenTimers, WhenHidden};
use crate::engine::{Latency, Work};
use crate::policy::Strategy;
use crate::server::CapacityRule;
use crate::time::SimDuration;
use crate::workload::{Arrivals, Dist};

use super::{Control, Kind, Needs, Parameter, Value};

fn seconds(d: SimDuration) -> String {
    // f64's shortest round-trip form: 100 ms is `0.1`, 1 s is `1`.
    d.as_secs_f64().to_string()
}

/// Durations in seconds, space-separated (one per trigger); empty without any.
fn spaced(durations: impl Iterator<Item = SimDuration>) -> String {
    durations.map(seconds).collect::<Vec<_>>().join(" ")
}

/// An interval as a file writes it, from its parts: `FROM..TO` or `FROM..TO@VALUE`.
fn interval_text(interval: &IntervalText) -> String {
    match &interval.value {
        Some(value) => format!("{}..{}@{value}", interval.from, interval.to),
        None => format!("{}..{}", interval.from, interval.to),
    }
}

/// `interval` made `length` long, its start kept.
fn reshape(interval: &mut IntervalText, length: SimDuration) {
    interval.to = interval.from + length;
    interval.text = interval_text(interval);
}

/// What the `balancer` axis takes.
static BALANCER_NAMES: [&str; 4] = [
    crate::server::Balancer::ALL[0].name(),
    crate::server::Balancer::ALL[1].name(),
    crate::server::Balancer::ALL[2].name(),
    crate::server::Balancer::ALL[3].name(),
];

fn server_file(file: &mut ScenarioFile) -> &mut crate::config::ServerFile {
    file.server.get_or_insert_with(Default::default)
}

/// Every parameter a sweep can vary, in grid order: the first varies slowest, the last
/// fastest (docs/sweeps-and-clusters.md lists them). Strategy comes first so that a sweep's rows group by
/// strategy.
pub static PARAMETERS: [Parameter; 51] = [
    Parameter {
        name: "strategy",
        column: "strategy",
        kind: Kind::Strategy,
        needs: Needs::Nothing,
        label: false,
        help: "Strategies, a comma list or `all`",
        // `preset` (see `FROM_PRESET`) leaves the strategy to the cell's preset.
        set: |f, v| match v {
            Value::Name(FROM_PRESET) => {}
            v => f.strategy = Some(StrategyList(vec![strategy_of(v)])),
        },
        get: |s| s.strategies[0].name().to_string(),
    },
    Parameter {
        name: "clients",
        column: "clients",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        label: true,
        help: "Numbers of clients, e.g. 100,1000,10000 or 100..1000 step 100",
        set: |f, v| f.clients = Some(v.whole()),
        get: |s| s.clients.to_string(),
    },
    Parameter {
        name: "retries",
        column: "retries",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        label: true,
        help: "Retries per client, e.g. 2..8",
        set: |f, v| f.retries = Some(u32_of(v)),
        get: |s| s.retries.to_string(),
    },
    Parameter {
        name: "base",
        column: "base_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "First backoff delays, e.g. 100ms,1s or 100ms..1s step 100ms",
        set: |f, v| f.base = Some(v.duration()),
        get: |s| seconds(s.backoff.base),
    },
    Parameter {
        name: "cap",
        column: "cap_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "Largest backoff delays, e.g. 10s,30s",
        set: |f, v| f.cap = Some(v.duration()),
        get: |s| seconds(s.backoff.cap),
    },
    Parameter {
        name: "multiplier",
        column: "multiplier",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        label: true,
        help: "Backoff growth per retry, e.g. 1.5,2 or 1..3 step 0.5",
        set: |f, v| f.multiplier = Some(v.decimal()),
        get: |s| s.backoff.multiplier.to_string(),
    },
    Parameter {
        name: "retry-probability",
        column: "retry_probability",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        label: true,
        help: "The probability that each retry is made, e.g. 0.25,0.5,1 or 0..1 step 0.25",
        set: |f, v| f.retry_probability = Some(v.decimal()),
        get: |s| s.retry_chance.to_string(),
    },
    Parameter {
        name: "bin",
        column: "bin_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "Histogram window widths, e.g. 10ms,100ms",
        set: |f, v| f.bin = Some(v.duration()),
        get: |s| seconds(s.bin),
    },
    Parameter {
        name: "server",
        column: "server",
        kind: Kind::Choice(SERVER_MODELS),
        needs: Needs::Nothing,
        label: true,
        help: "Server models, e.g. down,fixed-window",
        set: |f, v| server_file(f).model = Some(v.name().to_string()),
        get: |s| s.server.name().to_string(),
    },
    Parameter {
        name: "recover-at",
        column: "recover_at_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
        help: "Token bucket: tokens it holds when full, e.g. 10,30",
        set: |f, v| server_file(f).capacity = Some(u32_of(v)),
        get: |s| token_rule(s).map_or(String::new(), |r| r.capacity.to_string()),
    },
    Parameter {
        name: "refill",
        column: "refill",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        label: true,
        help: "Token bucket: tokens added per refill interval, e.g. 1,5",
        set: |f, v| server_file(f).refill = Some(u32_of(v)),
        get: |s| token_rule(s).map_or(String::new(), |r| r.refill.to_string()),
    },
    Parameter {
        name: "refill-interval",
        column: "refill_interval_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "Token bucket: the refill interval, e.g. 1s,2s",
        set: |f, v| server_file(f).refill_interval = Some(v.duration()),
        get: |s| token_rule(s).map_or(String::new(), |r| seconds(r.interval)),
    },
    Parameter {
        name: "epoch-phase",
        column: "epoch_phase_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        needs: Needs::Nothing,
        label: true,
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
        name: "spike-duration",
        column: "spike_duration_s",
        kind: Kind::Duration,
        needs: Needs::Spike,
        label: false,
        help: "Poisson arrivals: the length of every spike the scenario has, its start kept, e.g. 5s..30s step 5s",
        set: |f, v| {
            if let Some(spikes) = &mut f.spike {
                for spike in &mut spikes.0 {
                    reshape(spike, v.duration());
                }
            }
        },
        get: |s| match &s.overload.arrivals {
            Arrivals::Poisson(schedule) => spaced(schedule.spikes.iter().map(|spike| spike.to - spike.from)),
            Arrivals::Herd => String::new(),
        },
    },
    Parameter {
        name: "workers",
        column: "workers",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        label: true,
        help: "Capacity server: requests in service at once, e.g. 50,100,200",
        set: |f, v| server_file(f).workers = Some(Bound(Some(u32_of(v)))),
        get: |s| capacity_rule(s).map_or(String::new(), |r| Bound(r.workers).to_string()),
    },
    Parameter {
        name: "service-time",
        column: "service_time_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
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
        name: "slowdown",
        column: "slowdown_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: false,
        help: "Capacity server: the time added to a request for each other one in service, e.g. 0ms..2ms step 500us",
        set: |f, v| server_file(f).slowdown = Some(v.duration()),
        // Empty at zero, as without a capacity server, so that configs without a slowdown
        // keep their seed labels.
        get: |s| match capacity_rule(s).map(|r| r.slowdown) {
            Some(d) if !d.is_zero() => seconds(d),
            _ => String::new(),
        },
    },
    Parameter {
        name: "queue",
        column: "queue",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        label: true,
        help: "Capacity server: requests waiting for a worker at most, e.g. 10,100",
        set: |f, v| server_file(f).queue = Some(Bound(Some(u32_of(v)))),
        get: |s| capacity_rule(s).map_or(String::new(), |r| Bound(r.queue).to_string()),
    },
    Parameter {
        name: "timeout",
        column: "timeout_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "Client timeout per attempt, e.g. 500ms..3s step 500ms",
        set: |f, v| f.timeout = Some(v.duration()),
        get: |s| s.overload.timeout.map_or(String::new(), seconds),
    },
    Parameter {
        name: "deadline-propagation",
        column: "deadline_propagation",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        // A server's policy compared on the same dice, as strategies are; configs without
        // it keep their seeds.
        label: false,
        help: "Capacity with a timeout: the fraction of a service a request dropped past its deadline costs, e.g. 0,0.1",
        set: |f, v| f.deadline_propagation = Some(v.decimal()),
        get: |s| s.overload.deadlines.cost.map_or(String::new(), |c| c.to_string()),
    },
    Parameter {
        name: "outage",
        column: "outage_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
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
    Parameter {
        name: "outage-duration",
        column: "outage_duration_s",
        kind: Kind::Duration,
        needs: Needs::Outage,
        label: false,
        help: "The length of every outage the scenario has, its start kept, e.g. 10s..60s step 10s",
        set: |f, v| {
            if let Some(outages) = &mut f.outage {
                for outage in &mut outages.0 {
                    reshape(outage, v.duration());
                }
            }
        },
        get: |s| spaced(s.overload.triggers.outages.iter().map(|(from, to)| *to - *from)),
    },
    Parameter {
        name: "degrade-factor",
        column: "degrade_factor",
        kind: Kind::Decimal,
        needs: Needs::Degrade,
        label: false,
        help: "Capacity server: the capacity left during every degradation the scenario has, e.g. 0.2..0.5 step 0.05",
        set: |f, v| {
            if let Some(degrades) = &mut f.degrade {
                for degrade in &mut degrades.0 {
                    degrade.value = Some(v.decimal().to_string());
                    degrade.text = interval_text(degrade);
                }
            }
        },
        get: |s| {
            s.overload
                .triggers
                .degrades
                .iter()
                .map(|d| d.factor.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        },
    },
    Parameter {
        name: "degrade-duration",
        column: "degrade_duration_s",
        kind: Kind::Duration,
        needs: Needs::Degrade,
        label: false,
        help: "Capacity server: the length of every degradation the scenario has, its start kept, e.g. 500ms..1s step 50ms",
        set: |f, v| {
            if let Some(degrades) = &mut f.degrade {
                for degrade in &mut degrades.0 {
                    reshape(degrade, v.duration());
                }
            }
        },
        get: |s| spaced(s.overload.triggers.degrades.iter().map(|d| d.to - d.from)),
    },
    Parameter {
        name: "failure-rate",
        column: "failure_rate",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        label: true,
        help: "Flaky server: the probability that an attempt fails, e.g. 0..0.9 step 0.1",
        set: |f, v| server_file(f).failure_rate = Some(v.decimal()),
        get: |s| match s.server {
            // Nine decimals, as the run's header writes it: the rate is kept in 2^-53 steps.
            ServerModel::Flaky(f) => ((f.rate() * 1e9).round() / 1e9).to_string(),
            _ => String::new(),
        },
    },
    Parameter {
        name: "sticky-failures",
        column: "sticky_failures",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        label: true,
        help: "The fraction of client processes whose every attempt fails, e.g. 0,0.1,0.2",
        set: |f, v| f.sticky_failures = Some(v.decimal()),
        get: |s| s.overload.sticky.fraction.to_string(),
    },
    Parameter {
        name: "in-flight",
        column: "in_flight",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        // Points along it share their dice (each client's first arrival), and configs
        // without it keep their seeds.
        label: false,
        help: "Poisson: closed-loop clients with at most K calls in flight each, e.g. 1,2,4",
        set: |f, v| f.in_flight = Some(u32_of(v)),
        get: |s| s.overload.closed.map_or(String::new(), |c| c.in_flight.to_string()),
    },
    Parameter {
        name: "think-time",
        column: "think_time_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: false,
        help: "With --in-flight: the mean wait after a call ends before its client's next, the scenario's think time scaled to it (fixed without one), e.g. 0s,10ms,100ms",
        // The axis keeps the shape: exp:1s at 250ms is exp:250ms (Dist::with_mean).
        set: |f, v| {
            let mean = v.duration();
            let think = f.think_time.map_or(Dist::Fixed(mean), |d| d.0.with_mean(mean));
            f.think_time = Some(DistText(think));
        },
        get: |s| match s.overload.closed.map(|c| c.think) {
            Some(Dist::Fixed(d)) => seconds(d),
            // Only a base scenario can set a random think time; written as configs write it.
            Some(other) => other.to_string(),
            None => String::new(),
        },
    },
    Parameter {
        name: "servers",
        column: "servers",
        kind: Kind::Whole,
        needs: Needs::Nothing,
        // Points along it share their dice (the clients' streams are the same in a pool),
        // and configs without it keep their seeds.
        label: false,
        help: "A pool of N servers of the scenario's model behind --balancer, e.g. 1,2,3,5",
        set: |f, v| f.servers = Some(u32_of(v)),
        // Empty for one server, as without a pool.
        get: |s| match s.overload.pool.servers {
            1 => String::new(),
            n => n.to_string(),
        },
    },
    Parameter {
        name: "balancer",
        column: "balancer",
        kind: Kind::Choice(&BALANCER_NAMES),
        needs: Needs::Nothing,
        label: false,
        help: "A pool's balancer, e.g. round-robin,least-outstanding,power-of-two",
        set: |f, v| f.balancer = Some(v.name().to_string()),
        get: |s| match s.overload.pool.is_active() {
            true => s.overload.pool.balancer.name().to_string(),
            false => String::new(),
        },
    },
    Parameter {
        name: "restart-interval",
        column: "restart_interval_s",
        kind: Kind::Duration,
        needs: Needs::RollingRestart,
        // Points along it share their dice, and configs without a restart keep their seeds.
        label: false,
        help: "A pool's rolling restart: the time between one server's going down and the next's, its downtime kept, e.g. 5s..30s step 5s",
        set: |f, v| {
            if let Some(r) = &mut f.rolling_restart {
                r.0.interval = v.duration();
            }
        },
        get: |s| s.overload.pool.rolling.map_or(String::new(), |r| seconds(r.interval)),
    },
    Parameter {
        name: "restart-downtime",
        column: "restart_downtime_s",
        kind: Kind::Duration,
        needs: Needs::RollingRestart,
        label: false,
        help: "A pool's rolling restart: how long each server is out, its interval kept, e.g. 1s..10s",
        set: |f, v| {
            if let Some(r) = &mut f.rolling_restart {
                r.0.downtime = v.duration();
            }
        },
        get: |s| s.overload.pool.rolling.map_or(String::new(), |r| seconds(r.downtime)),
    },
    Parameter {
        name: "layer-retries",
        column: "layer_retries",
        kind: Kind::Whole,
        needs: Needs::Layer,
        // Points along it share their dice, and configs without layers keep their seeds.
        label: false,
        help: "Retry layers: the retries of every layer above the run's own policy, e.g. 0..3",
        set: |f, v| {
            for layer in f.layer.iter_mut().flatten() {
                layer.retries = Some(u32_of(v));
            }
        },
        get: |s| {
            let each: Vec<String> = s
                .overload
                .layers
                .outer
                .iter()
                .map(|l| l.policy.max_retries.to_string())
                .collect();
            each.join(" ")
        },
    },
    Parameter {
        name: "budget",
        column: "budget",
        kind: Kind::Control(Control::Budget),
        needs: Needs::Nothing,
        label: true,
        help: "Retry budgets, e.g. none,token-bucket,grpc:max_tokens=20,token_ratio=0.2 (a key=value item belongs to the budget before it)",
        set: |f, v| f.budget = Some(v.text()),
        get: |s| s.controls.budget_text(),
    },
    Parameter {
        name: "breaker",
        column: "breaker",
        kind: Kind::Control(Control::Breaker),
        needs: Needs::Nothing,
        label: true,
        help: "Circuit breakers, e.g. none,retries:ratio=0.1,window=all (a key=value item belongs to the breaker before it)",
        set: |f, v| f.breaker = Some(v.text()),
        get: |s| s.controls.breaker_text(),
    },
    Parameter {
        name: "throttle",
        column: "throttle",
        kind: Kind::Control(Control::Throttle),
        needs: Needs::Nothing,
        label: true,
        help: "Adaptive throttles, e.g. none,sre:k=1.5 (a key=value item belongs to the throttle before it)",
        set: |f, v| f.throttle = Some(v.text()),
        get: |s| s.controls.throttle.short_text(),
    },
    Parameter {
        name: "preset",
        column: "preset",
        kind: Kind::Choice(&PRESET_NAMES),
        needs: Needs::Nothing,
        label: true,
        help: "Production clients (--preset), e.g. aws-standard,grpc,envoy; keys given by the sweep or the config override theirs",
        set: |f, v| f.preset = Some(v.name().to_string()),
        get: |s| s.preset.unwrap_or_default().to_string(),
    },
    Parameter {
        name: "hidden",
        column: "hidden",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        label: true,
        help: "Browser tabs: the fraction hidden at t = 0, e.g. 0,0.4 or 0..1 step 0.2",
        set: |f, v| f.hidden = Some(v.decimal()),
        get: |s| s.browser.hidden.to_string(),
    },
    Parameter {
        name: "visibility-switch",
        column: "visibility_switch_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "Browser tabs: the mean dwell between visibility flips, e.g. 1m,3m,10m",
        set: |f, v| f.visibility_switch = Some(v.duration()),
        get: |s| s.browser.switch_mean.map_or(String::new(), seconds),
    },
    Parameter {
        name: "hidden-timers",
        column: "hidden_timers",
        kind: Kind::Choice(&HiddenTimers::NAMES),
        needs: Needs::Nothing,
        label: true,
        help: "Browser tabs: a hidden tab's timers, e.g. chrome,none",
        set: |f, v| f.hidden_timers = Some(v.name().to_string()),
        get: |s| match tabs_hide(s) {
            true => s.browser.timers.name().to_string(),
            false => String::new(),
        },
    },
    Parameter {
        name: "when-hidden",
        column: "when_hidden",
        kind: Kind::Choice(&WhenHidden::NAMES),
        needs: Needs::Nothing,
        label: true,
        help: "Browser tabs: what a hidden tab does about a retry, e.g. retry,pause",
        set: |f, v| f.when_hidden = Some(v.name().to_string()),
        get: |s| match tabs_hide(s) {
            true => s.browser.when_hidden.name().to_string(),
            false => String::new(),
        },
    },
    Parameter {
        name: "headers-visible",
        column: "headers_visible",
        kind: Kind::Decimal,
        needs: Needs::Nothing,
        label: true,
        help: "Limiters and capacity: the fraction of tabs that can read the headers, e.g. 0,0.5,1",
        set: |f, v| server_file(f).headers_visible = Some(HeadersVisible(v.decimal())),
        // Empty when every tab can read them (or the server sends none), as in the default
        // scenario, so that seed labels name only a fraction below 1.
        get: |s| match (s.browser.headers_visible, s.server) {
            (Some(fraction), _) => fraction.to_string(),
            (None, ServerModel::Limited(m)) if !m.headers_visible => "0".to_string(),
            (None, _) => String::new(),
        },
    },
    Parameter {
        name: "clock-skew",
        column: "clock_skew_sd_s",
        kind: Kind::Duration,
        needs: Needs::Nothing,
        label: true,
        help: "Browser tabs: the standard deviation of clock skews centred on 0, e.g. 0s,1s,2s",
        set: |f, v| {
            f.clock_skew = Some(match v.duration() {
                d if d.is_zero() => ClockSkew::Fixed(0),
                d => ClockSkew::Normal {
                    mean: 0,
                    sd: d.as_nanos(),
                },
            });
        },
        get: |s| match s.browser.skew {
            ClockSkew::Fixed(0) => "0".to_string(),
            ClockSkew::Normal { mean: 0, sd } => seconds(SimDuration(sd)),
            // Only a base scenario can set another skew; written as configs write it.
            other => other.to_string(),
        },
    },
];

/// The strategy axis's one value when neither the sweep nor its config names a strategy but
/// a preset is given: each cell takes its preset's strategy.
pub const FROM_PRESET: &str = "preset";

/// The names `--preset` takes, in `herd-sim presets` order (a test checks them against
/// [`crate::config::PRESETS`]).
pub const PRESET_NAMES: [&str; 9] = [
    "aws-standard",
    "aws-adaptive",
    "grpc",
    "envoy",
    "finagle",
    "polly",
    "resilience4j",
    "axios-retry",
    "tenacity",
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

/// True when some tab can be hidden (the hidden-tab options then apply).
fn tabs_hide(scenario: &Scenario) -> bool {
    scenario.browser.hidden > 0.0 || scenario.browser.switch_mean.is_some()
}
