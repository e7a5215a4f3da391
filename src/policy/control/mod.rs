//! Retry control kept per client process: budgets that bound the retries all of a process's
//! calls may make together ([`Budget`]), circuit breakers ([`Breaker`]) and adaptive throttles
//! ([`Throttle`], the AWS limiter's arithmetic in [`adaptive`]). The call loop ([`crate::engine::calls`]) keeps one
//! [`ProcessControl`] per process beside its random stream and tells it when calls start and
//! end and when attempts are sent and answered; each call keeps one word of it (`held`: what
//! it took from the budget and must give back). The call loop alone owns time: nothing here
//! schedules, reads a clock, allocates after the start, draws or does I/O.
//!
//! Texts (`--budget grpc:max_tokens=20`) are read by [`Budget::parse`]; defaults are the
//! sources' (see [`budget`] for each algorithm and docs/retry-control.md for files and versions).

pub mod adaptive;
pub mod breaker;
pub mod budget;
pub mod scope;
pub mod spec;
pub mod throttle;
pub mod window;

pub use breaker::{Breaker, BreakerState, Circuit};
pub use budget::{Budget, BudgetState, DepositOn, Outcome, BUDGETS};
pub use scope::{RunControls, Scope};
pub use spec::SpecError;
pub use throttle::{sre_rejection, Gate, Throttle, ThrottleState};

use crate::time::{SimDuration, SimTime};
use spec::{Catalogue, Params};

/// Every budget and the keys it takes.
const BUDGET_KEYS: Catalogue = &[
    ("none", &[]),
    ("token-bucket", &["deposit", "on", "cost", "capacity"]),
    ("grpc", &["max_tokens", "token_ratio"]),
    (
        "aws-standard",
        &["capacity", "cost", "timeout_cost", "success_increment"],
    ),
    ("envoy", &["percent", "min_concurrency"]),
    ("finagle", &["ttl", "min_per_s", "percent"]),
];

/// Every breaker and the keys it takes.
const BREAKER_KEYS: Catalogue = &[
    ("none", &[]),
    ("retries", &["ratio", "window"]),
    ("calls", &["ratio", "window", "min_calls", "open"]),
];

/// Every throttle and the keys it takes.
const THROTTLE_KEYS: Catalogue = &[
    ("none", &[]),
    ("sre", &["k", "window"]),
    ("aws-adaptive", &["beta", "scale", "smoothing", "min_rate"]),
];

/// Largest whole-number parameter accepted (a bound so sums of them cannot overflow).
const MOST: u64 = 1_000_000_000;

/// `v` in thousandths, truncated (gRPC reads 3 decimals and ignores more).
fn thousandths(v: f64) -> u64 {
    (v * 1000.0 + 1e-9).floor() as u64
}

impl Budget {
    /// Reads `NAME[:key=value,...]`; defaults are the sources'.
    pub fn parse(text: &str) -> Result<Budget, SpecError> {
        if text.trim().split(':').next().map(str::trim) == Some("tower-tps") {
            return Budget::parse_tower(text);
        }
        let mut p = Params::parse(text, BUDGET_KEYS)?;
        let positive = |v: f64| v > 0.0 && v <= MOST as f64;
        let budget = match p.name() {
            "none" => Budget::None,
            "token-bucket" => {
                let above = "above 0 and at most 1e9 (thousandths kept)";
                let rule = |word: &str| match word {
                    "success" => Some(DepositOn::Success),
                    "call" => Some(DepositOn::Call),
                    _ => None,
                };
                // `deposit=success|call` names the rule and keeps the default amount;
                // `deposit=0.2,on=call` sets both.
                let (deposit, rule_in_deposit) = match p.text("deposit") {
                    None => (0.1, None),
                    Some(word) if rule(word).is_some() => (0.1, rule(word)),
                    Some(amount) => match amount.replace('_', "").parse::<f64>() {
                        Ok(v) if v.is_finite() && (0.0..=MOST as f64).contains(&v) => (v, None),
                        _ => {
                            return Err(SpecError {
                                value: text.trim().to_string(),
                                accepted: format!(
                                    "deposit={amount} is out of range; accepted: deposit from 0 to 1e9 (thousandths kept), or success or call (the deposit rule)"
                                ),
                            })
                        }
                    },
                };
                let on = match (p.text("on"), rule_in_deposit) {
                    (None, rule_in_deposit) => rule_in_deposit.unwrap_or(DepositOn::Success),
                    (Some(word), None) => rule(word).ok_or_else(|| SpecError {
                        value: text.trim().to_string(),
                        accepted: format!(
                            "on={word} is out of range; accepted: on success (Brooker's post: a successful call deposits) or call (his simulator's code: every call deposits at its start)"
                        ),
                    })?,
                    (Some(_), Some(_)) => {
                        return Err(SpecError {
                            value: text.trim().to_string(),
                            accepted: "the deposit rule is given twice; accepted: deposit=success|call, or deposit=AMOUNT with on=success|call".to_string(),
                        })
                    }
                };
                Budget::TokenBucket {
                    deposit: thousandths(deposit),
                    on,
                    cost: thousandths(p.number(
                        "cost",
                        1.0,
                        |v| v >= 0.001 && positive(v),
                        above,
                    )?),
                    capacity: thousandths(p.number(
                        "capacity",
                        5.0,
                        |v| v >= 0.001 && positive(v),
                        above,
                    )?),
                }
            }
            "grpc" => Budget::Grpc {
                max_tokens: thousandths(p.number(
                    "max_tokens",
                    10.0,
                    |v| v >= 0.001 && positive(v),
                    "above 0 (A6), at most 1e9, 3 decimals kept",
                )?),
                token_ratio: thousandths(p.number(
                    "token_ratio",
                    0.1,
                    |v| v >= 0.001 && positive(v),
                    "above 0 (A6) with up to 3 decimals, such as 0.1",
                )?),
            },
            "aws-standard" => Budget::AwsStandard {
                capacity: p.whole("capacity", 500, 1, MOST)?,
                cost: p.whole("cost", 5, 0, MOST)?,
                timeout_cost: p.whole("timeout_cost", 10, 0, MOST)?,
                success_increment: p.whole("success_increment", 1, 0, MOST)?,
            },
            "envoy" => Budget::Envoy {
                percent: p.number(
                    "percent",
                    20.0,
                    |v| (0.0..=100.0).contains(&v),
                    "from 0 to 100",
                )?,
                min_concurrency: p.whole("min_concurrency", 3, 0, MOST)?,
            },
            "finagle" => Budget::Finagle {
                ttl: p.duration(
                    "ttl",
                    SimDuration::from_secs(10),
                    |d| {
                        d.as_nanos() % 1_000_000_000 == 0
                            && (1..=60).contains(&(d.as_nanos() / 1_000_000_000))
                    },
                    "whole seconds from 1s to 60s (Finagle's range)",
                )?,
                min_per_s: p.whole("min_per_s", 10, 0, MOST)?,
                percent: p.number(
                    "percent",
                    20.0,
                    |v| (0.0..=100_000.0).contains(&v),
                    "from 0 to 100000 (Finagle's percentCanRetry up to 1000)",
                )?,
            },
            other => unreachable!("{other} is in the catalogue"),
        };
        p.finish()?;
        Ok(budget)
    }

    /// `tower-tps[:ttl=..,min_per_s=..,percent=..]`: tower's own budget, or one line naming
    /// the feature it needs.
    fn parse_tower(text: &str) -> Result<Budget, SpecError> {
        #[cfg(feature = "tower")]
        return crate::adapters::tower::TpsParams::parse(text).map(Budget::TowerTps);
        #[cfg(not(feature = "tower"))]
        Err(SpecError {
            value: text.trim().to_string(),
            accepted: "tower-tps runs tower's own TpsBudget and needs the cargo feature `tower` (cargo build --release --features tower); accepted without it: none, token-bucket, grpc, aws-standard, envoy, finagle".to_string(),
        })
    }

    /// As `--budget` writes it, every parameter given (thousandths written as decimals).
    pub fn text(&self) -> String {
        let milli = |v: u64| format!("{}", v as f64 / 1000.0);
        match *self {
            Budget::None => "none".to_string(),
            Budget::TokenBucket {
                deposit,
                on: DepositOn::Success,
                cost,
                capacity,
            } => format!(
                "token-bucket:deposit={},cost={},capacity={}",
                milli(deposit),
                milli(cost),
                milli(capacity)
            ),
            Budget::TokenBucket {
                deposit,
                on: DepositOn::Call,
                cost,
                capacity,
            } => format!(
                "token-bucket:deposit={},on=call,cost={},capacity={}",
                milli(deposit),
                milli(cost),
                milli(capacity)
            ),
            Budget::Grpc {
                max_tokens,
                token_ratio,
            } => format!(
                "grpc:max_tokens={},token_ratio={}",
                milli(max_tokens),
                milli(token_ratio)
            ),
            Budget::AwsStandard {
                capacity,
                cost,
                timeout_cost,
                success_increment,
            } => format!(
                "aws-standard:capacity={capacity},cost={cost},timeout_cost={timeout_cost},success_increment={success_increment}"
            ),
            Budget::Envoy {
                percent,
                min_concurrency,
            } => format!("envoy:percent={percent},min_concurrency={min_concurrency}"),
            Budget::Finagle {
                ttl,
                min_per_s,
                percent,
            } => format!("finagle:ttl={ttl},min_per_s={min_per_s},percent={percent}"),
            #[cfg(feature = "tower")]
            Budget::TowerTps(params) => params.text(),
        }
    }
}

impl Breaker {
    /// Reads `none`, `retries[:ratio=0.1,window=W|all]` or
    /// `calls[:ratio=0.5,window=10s,min_calls=20,open=5s]`.
    pub fn parse(text: &str) -> Result<Breaker, SpecError> {
        let mut p = Params::parse(text, BREAKER_KEYS)?;
        let positive = |d: SimDuration| d.as_nanos() >= 1_000_000;
        let in_unit = |v: f64| v > 0.0 && v <= 1.0;
        let breaker = match p.name() {
            "none" => Breaker::None,
            "retries" => {
                let ratio = p.number("ratio", 0.1, in_unit, "above 0 and at most 1")?;
                let window = match p.text("window") {
                    None | Some("all") => None,
                    Some(w) => Some(
                        crate::time::parse_duration(w)
                            .ok()
                            .filter(|&d| positive(d))
                            .ok_or_else(|| SpecError {
                                value: text.trim().to_string(),
                                accepted: format!(
                                    "window={w} is out of range; accepted: window a duration of at least 1ms, or all"
                                ),
                            })?,
                    ),
                };
                Breaker::Retries { ratio, window }
            }
            "calls" => Breaker::Calls {
                ratio: p.number("ratio", 0.5, in_unit, "above 0 and at most 1")?,
                window: p.duration(
                    "window",
                    SimDuration::from_secs(10),
                    positive,
                    "a duration of at least 1ms",
                )?,
                min_calls: p.whole("min_calls", 20, 1, MOST)?,
                open: p.duration(
                    "open",
                    SimDuration::from_secs(5),
                    positive,
                    "a duration of at least 1ms",
                )?,
            },
            other => unreachable!("{other} is in the catalogue"),
        };
        p.finish()?;
        Ok(breaker)
    }

    /// As `--breaker` writes it, every parameter given.
    pub fn text(&self) -> String {
        match *self {
            Breaker::None => "none".to_string(),
            Breaker::Retries { ratio, window } => format!(
                "retries:ratio={ratio},window={}",
                window.map_or("all".to_string(), |w| w.to_string())
            ),
            Breaker::Calls {
                ratio,
                window,
                min_calls,
                open,
            } => format!("calls:ratio={ratio},window={window},min_calls={min_calls},open={open}"),
        }
    }
}

impl Throttle {
    /// Reads `none`, `sre[:k=2,window=2m]` or
    /// `aws-adaptive[:beta=0.7,scale=0.4,smoothing=0.8,min_rate=0.5]`.
    pub fn parse(text: &str) -> Result<Throttle, SpecError> {
        let mut p = Params::parse(text, THROTTLE_KEYS)?;
        let throttle = match p.name() {
            "none" => Throttle::None,
            "sre" => Throttle::Sre {
                k: p.number(
                    "k",
                    2.0,
                    |v| (1.0..=1e6).contains(&v),
                    "from 1 to 1e6, such as 2",
                )?,
                window: p.duration(
                    "window",
                    SimDuration::from_secs(120),
                    |d| d.as_nanos() >= 1_000_000,
                    "a duration of at least 1ms, such as 2m",
                )?,
            },
            "aws-adaptive" => {
                let unit = |v: f64| v > 0.0 && v < 1.0;
                Throttle::AwsAdaptive {
                    beta: p.number("beta", 0.7, unit, "above 0 and below 1, such as 0.7")?,
                    scale: p.number(
                        "scale",
                        0.4,
                        |v| v > 0.0 && v <= 1e6,
                        "above 0 and at most 1e6, such as 0.4",
                    )?,
                    smoothing: p.number(
                        "smoothing",
                        0.8,
                        |v| v > 0.0 && v <= 1.0,
                        "above 0 and at most 1, such as 0.8",
                    )?,
                    min_rate: p.number(
                        "min_rate",
                        0.5,
                        |v| (0.001..=1e6).contains(&v),
                        "from 0.001 to 1e6 tokens a second, such as 0.5",
                    )?,
                }
            }
            other => unreachable!("{other} is in the catalogue"),
        };
        p.finish()?;
        Ok(throttle)
    }

    /// As `--throttle` writes it, every parameter given.
    pub fn text(&self) -> String {
        match *self {
            Throttle::None => "none".to_string(),
            Throttle::Sre { k, window } => format!("sre:k={k},window={window}"),
            Throttle::AwsAdaptive {
                beta,
                scale,
                smoothing,
                min_rate,
            } => format!(
                "aws-adaptive:beta={beta},scale={scale},smoothing={smoothing},min_rate={min_rate}"
            ),
        }
    }
}

impl Budget {
    /// As `--budget` takes it, shortest: the name, then only the parameters that differ from
    /// its defaults (`grpc:max_tokens=20`); read back, the same budget.
    pub fn short_text(&self) -> String {
        let default = Budget::parse(self.name()).map(|d| d.text());
        shortest(&self.text(), &default.unwrap_or_default())
    }
}

impl Breaker {
    /// As `--breaker` takes it, shortest (see [`Budget::short_text`]).
    pub fn short_text(&self) -> String {
        let default = Breaker::parse(self.name()).map(|d| d.text());
        shortest(&self.text(), &default.unwrap_or_default())
    }
}

impl Throttle {
    /// As `--throttle` takes it, shortest (see [`Budget::short_text`]).
    pub fn short_text(&self) -> String {
        let default = Throttle::parse(self.name()).map(|d| d.text());
        shortest(&self.text(), &default.unwrap_or_default())
    }
}

/// `full` (`NAME:key=value,...`, every parameter given) without the pairs that `default` (the
/// same name with its defaults) also has.
fn shortest(full: &str, default: &str) -> String {
    let Some((name, pairs)) = full.split_once(':') else {
        return full.to_string();
    };
    let defaults: Vec<&str> = default
        .split_once(':')
        .map_or(Vec::new(), |(_, d)| d.split(',').collect());
    let kept: Vec<&str> = pairs
        .split(',')
        .filter(|pair| !defaults.contains(pair))
        .collect();
    match kept.is_empty() {
        true => name.to_string(),
        false => format!("{name}:{}", kept.join(",")),
    }
}

/// The controls of a run, the same for every process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Controls {
    /// The retry budget.
    pub budget: Budget,
    /// The circuit breaker.
    pub breaker: Breaker,
    /// The adaptive throttle.
    pub throttle: Throttle,
    /// Whose state the budget keeps: each process its own, or one for all.
    pub budget_scope: Scope,
    /// Whose state the breaker keeps.
    pub breaker_scope: Scope,
}

impl Default for Controls {
    fn default() -> Self {
        Controls {
            budget: Budget::None,
            breaker: Breaker::None,
            throttle: Throttle::None,
            budget_scope: Scope::Client,
            breaker_scope: Scope::Client,
        }
    }
}

impl Controls {
    /// True when nothing is controlled (the call loop then keeps no per-process state).
    pub fn is_none(&self) -> bool {
        *self == Controls::default()
    }

    /// The budget as `--budget` takes it, shortest, with its scope when global
    /// (`token-bucket:scope=global`).
    pub fn budget_text(&self) -> String {
        let text = self.budget.short_text();
        format!("{text}{}", self.budget_scope.suffix(&text))
    }

    /// The breaker as `--breaker` takes it, shortest, with its scope when global.
    pub fn breaker_text(&self) -> String {
        let text = self.breaker.short_text();
        format!("{text}{}", self.breaker_scope.suffix(&text))
    }

    /// A process's control state at the start.
    pub fn start(&self) -> ProcessControl {
        ProcessControl {
            budget: self.budget.start(),
            breaker: self.breaker.start(),
            throttle: self.throttle.start(),
        }
    }

    /// `n` processes' control states at the start ([`Budget::start_many`]).
    pub fn start_many(&self, n: usize) -> Vec<ProcessControl> {
        self.budget
            .start_many(n)
            .into_iter()
            .map(|budget| ProcessControl {
                budget,
                breaker: self.breaker.start(),
                throttle: self.throttle.start(),
            })
            .collect()
    }
}

/// How a call ended, as the controls see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallEnd {
    /// An attempt succeeded.
    Succeeded,
    /// Its last attempt failed and no retry followed.
    Failed,
    /// Rejected locally (open breaker, throttle) when an attempt was to go out.
    Rejected,
}

/// One client process's control state (all its calls share it); not `Copy` with the feature
/// `tower` (see [`BudgetState`]).
#[derive(Debug, PartialEq)]
#[cfg_attr(not(feature = "tower"), derive(Clone, Copy))]
pub struct ProcessControl {
    /// What the budget holds.
    pub budget: BudgetState,
    /// The breaker's counts and circuit.
    pub breaker: BreakerState,
    /// The throttle's counts.
    pub throttle: ThrottleState,
}

impl ProcessControl {
    /// A call wants to start at `now`: false when the breaker rejects it locally; `trial` is
    /// set for a half-open breaker's trial call.
    #[inline]
    pub fn call_started(&mut self, c: &Controls, now: SimTime, trial: &mut bool) -> bool {
        if !self.breaker.admit_call(now, trial) {
            return false;
        }
        self.budget.call_started(&c.budget, now);
        true
    }

    /// An attempt wants to go at `now`: the throttle says whether it goes, is rejected
    /// locally or waits (`draw` gives a uniform in [0, 1), called only when the throttle may
    /// reject). When it goes, the attempt is on the wire.
    #[inline]
    pub fn send(&mut self, c: &Controls, now: SimTime, draw: impl FnOnce() -> f64) -> Gate {
        let gate = self.throttle.admit(&c.throttle, now, draw);
        if gate == Gate::Go {
            self.budget.sent();
        }
        gate
    }

    /// An attempt is on the wire (budget gauges only; [`ProcessControl::send`] does this
    /// after the throttle).
    #[inline]
    pub fn sent(&mut self) {
        self.budget.sent();
    }

    /// An attempt of a call holding `held` ended with `outcome` at `now`.
    #[inline]
    pub fn attempt_ended(&mut self, c: &Controls, now: SimTime, outcome: Outcome, held: &mut u64) {
        self.budget.attempt_ended(&c.budget, outcome, held);
        self.breaker.attempt_ended(now, outcome != Outcome::Success);
        self.throttle.attempt_ended(now, outcome);
    }

    /// True when the retry the strategy wants after `outcome` may go: the breaker first, then
    /// the budget, which is charged only when both allow it.
    #[inline]
    pub fn allow_retry(
        &mut self,
        c: &Controls,
        now: SimTime,
        outcome: Outcome,
        held: &mut u64,
    ) -> bool {
        self.breaker.allow_retry(&c.breaker, now)
            && self.budget.allow_retry(&c.budget, now, outcome, held)
    }

    /// A call holding `held` ended at `now`; `trial` when it was a half-open trial.
    #[inline]
    pub fn call_ended(
        &mut self,
        c: &Controls,
        now: SimTime,
        end: CallEnd,
        held: &mut u64,
        trial: bool,
    ) {
        self.budget
            .call_ended(&c.budget, end == CallEnd::Succeeded, held);
        // A rejected call never reached the server, so the breaker does not count it; but a
        // trial rejected by the throttle must not leave the breaker half-open for ever.
        if end != CallEnd::Rejected || trial {
            self.breaker
                .call_ended(&c.breaker, now, end == CallEnd::Succeeded, trial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        let e = Budget::parse(text).unwrap_err();
        assert_eq!(e.value, text);
        e.accepted
    }

    #[test]
    fn budgets_parse_with_the_sources_defaults() {
        assert_eq!(Budget::parse("none").unwrap(), Budget::None);
        assert_eq!(
            Budget::parse("aws-standard").unwrap(),
            Budget::AwsStandard {
                capacity: 500,
                cost: 5,
                timeout_cost: 10,
                success_increment: 1
            }
        );
        let every = [
            "token-bucket:deposit=0.1,cost=1,capacity=5",
            "grpc:max_tokens=10,token_ratio=0.1",
            "aws-standard:capacity=500,cost=5,timeout_cost=10,success_increment=1",
            "envoy:percent=20,min_concurrency=3",
            "finagle:ttl=10s,min_per_s=10,percent=20",
        ];
        for text in every {
            let budget = Budget::parse(text).unwrap();
            assert_eq!(budget.text(), text);
            assert_eq!(
                Budget::parse(text.split(':').next().unwrap()).unwrap(),
                budget
            );
        }
    }

    #[test]
    fn aws_adaptive_parses_with_botocores_constants_and_refuses_out_of_range() {
        assert_eq!(
            Throttle::parse("aws-adaptive").unwrap(),
            Throttle::AwsAdaptive {
                beta: 0.7,
                scale: 0.4,
                smoothing: 0.8,
                min_rate: 0.5
            }
        );
        let e = Throttle::parse("aws-adaptive:beta=1.5").unwrap_err();
        assert!(
            e.accepted.contains("beta=1.5 is out of range") && e.accepted.contains("below 1"),
            "{e:?}"
        );
        let e = Throttle::parse("aws-adaptive:k=2").unwrap_err();
        assert!(
            e.accepted
                .contains("`k` is a parameter of sre, not of aws-adaptive"),
            "{e:?}"
        );
    }

    #[test]
    fn breakers_and_throttles_read_back_what_they_write() {
        for text in [
            "none",
            "retries:ratio=0.1,window=all",
            "retries:ratio=0.25,window=30s",
            "calls:ratio=0.5,window=10s,min_calls=20,open=5s",
        ] {
            assert_eq!(Breaker::parse(text).unwrap().text(), text);
        }
        assert_eq!(
            Breaker::parse("retries").unwrap().text(),
            "retries:ratio=0.1,window=all"
        );
        for text in [
            "none",
            "sre:k=2,window=120s",
            "sre:k=1.5,window=500ms",
            "aws-adaptive:beta=0.7,scale=0.4,smoothing=0.8,min_rate=0.5",
            "aws-adaptive:beta=0.5,scale=2,smoothing=1,min_rate=0.25",
        ] {
            assert_eq!(Throttle::parse(text).unwrap().text(), text);
        }
        assert_eq!(
            Throttle::parse("sre").unwrap().text(),
            "sre:k=2,window=120s"
        );
    }

    #[test]
    fn bad_budgets_name_the_value_and_what_is_accepted() {
        assert_eq!(
            refused("gprc"),
            "accepted: none, token-bucket, grpc, aws-standard, envoy, finagle"
        );
        let e = refused("aws-standard:capacity=0");
        assert!(
            e.contains("capacity=0 is out of range") && e.contains("from 1 to"),
            "{e}"
        );
        let e = refused("envoy:percent=-1");
        assert!(
            e.contains("percent=-1") && e.contains("from 0 to 100"),
            "{e}"
        );
        let e = refused("grpc:capacity=5");
        assert!(
            e.contains("`capacity` is a parameter of token-bucket, aws-standard, not of grpc")
                && e.contains("grpc:max_tokens=..,token_ratio=.."),
            "{e}"
        );
        let e = refused("grpc:speed=5");
        assert!(e.contains("unknown parameter `speed`"), "{e}");
        let e = refused("token-bucket:deposit");
        assert!(e.contains("`deposit` is not key=value"), "{e}");
        let e = refused("none:percent=3");
        assert!(e.contains("none (it takes no parameters)"), "{e}");
        assert!(refused("grpc:token_ratio=0.0004").contains("up to 3 decimals"));
        assert!(refused("finagle:ttl=90s").contains("1s to 60s"));
    }
}
