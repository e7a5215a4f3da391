//! Flags of `herd-sim trace-policy`, and their reading into the library's
//! [`TraceSpec`](herd_sim::policy::trace::TraceSpec).

use std::path::PathBuf;

use clap::Args;

use herd_sim::config::{ConfigError, Preset};
use herd_sim::policy::control::{Breaker, Budget, Controls, SpecError, Throttle};
use herd_sim::policy::trace::{parse_script, TraceSpec, DEFAULT_SCRIPT, OUTCOME_WORDS};
use herd_sim::policy::{Backoff, Policy, RetryChance, Strategy};
use herd_sim::time::SimDuration;

/// Flags of `herd-sim trace-policy`.
#[derive(Debug, Args)]
pub struct TracePolicyArgs {
    /// A production client's policy (see `herd-sim presets`); the flags below are laid over it.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Backoff strategy (default: the preset's, else exponential).
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,
    /// Retries after the first attempt (default: the preset's, else 4).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// First delay (default: the preset's, else 1s).
    #[arg(long, value_name = "DURATION")]
    pub base: Option<String>,
    /// Largest delay (default: the preset's, else 30s).
    #[arg(long, value_name = "DURATION")]
    pub cap: Option<String>,
    /// Growth per retry (default: the preset's, else 2).
    #[arg(long, value_name = "FACTOR")]
    pub multiplier: Option<f64>,
    /// Retry budget, as a run's --budget (default: the preset's, else none).
    #[arg(long, value_name = "SPEC")]
    pub budget: Option<String>,
    /// Circuit breaker, as a run's --breaker (default none).
    #[arg(long, value_name = "SPEC")]
    pub breaker: Option<String>,
    /// Adaptive throttle, as a run's --throttle (default: the preset's, else none).
    #[arg(long, value_name = "SPEC")]
    pub throttle: Option<String>,
    /// The attempts' outcomes in order: success, error, throttled, timeout, each optionally
    /// *COUNT.
    #[arg(long, value_name = "SCRIPT", default_value = DEFAULT_SCRIPT)]
    pub outcomes: String,
    /// Seed of the run whose client 0 draws the delays.
    #[arg(long, default_value_t = 2015)]
    pub seed: u64,
    /// From an attempt's sending to its answer.
    #[arg(long, value_name = "DURATION", default_value = "100ms")]
    pub latency: String,
    /// From a call's end to the next call's start.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub gap: String,
    /// Write the trace here instead of stdout (`-` is stdout).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

fn invalid(field: &'static str, value: &str, accepted: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        accepted: accepted.into(),
    }
}

fn duration(field: &'static str, text: &str) -> Result<SimDuration, ConfigError> {
    text.parse::<SimDuration>().map_err(|_| {
        invalid(
            field,
            text,
            "accepted: a duration with a unit, such as 250ms, 1s, 1.5s, 2m",
        )
    })
}

fn control<T>(
    field: &'static str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, SpecError>,
) -> Result<T, ConfigError> {
    parse(text).map_err(|e| invalid(field, &e.value, e.accepted))
}

impl TracePolicyArgs {
    /// The trace these flags ask for, with the lines its header names (the command, the
    /// policy, the preset's source).
    pub fn spec(&self) -> Result<(TraceSpec, Vec<String>), ConfigError> {
        let preset = self.preset.as_deref().map(Preset::named).transpose()?;
        let strategy = match (&self.strategy, preset) {
            (Some(name), _) => name.parse::<Strategy>().map_err(|_| {
                invalid(
                    "--strategy",
                    name,
                    format!("accepted: {}", Strategy::accepted_names()),
                )
            })?,
            (None, Some(p)) => p.strategy,
            (None, None) => Strategy::Exponential,
        };
        let retries = self.retries.or(preset.map(|p| p.retries)).unwrap_or(4);
        if retries > 1000 {
            return Err(invalid(
                "--retries",
                &retries.to_string(),
                "accepted: a whole number from 0 to 1000",
            ));
        }
        let base = match &self.base {
            Some(text) => duration("--base", text)?,
            None => preset
                .and_then(|p| p.base)
                .unwrap_or(SimDuration::from_secs(1)),
        };
        let cap = match &self.cap {
            Some(text) => duration("--cap", text)?,
            None => preset
                .and_then(|p| p.cap)
                .unwrap_or(SimDuration::from_secs(30)),
        };
        let multiplier = self
            .multiplier
            .or(preset.and_then(|p| p.multiplier))
            .unwrap_or(2.0);
        if !(multiplier.is_finite() && (1.0..=1000.0).contains(&multiplier)) {
            return Err(invalid(
                "--multiplier",
                &multiplier.to_string(),
                "accepted: a number from 1 to 1000",
            ));
        }
        let budget = match (&self.budget, preset) {
            (Some(text), _) => control("--budget", text, Budget::parse)?,
            (None, Some(p)) => control("--budget", p.budget, Budget::parse)?,
            (None, None) => Budget::None,
        };
        let throttle = match (&self.throttle, preset) {
            (Some(text), _) => control("--throttle", text, Throttle::parse)?,
            (None, Some(p)) => control("--throttle", p.throttle, Throttle::parse)?,
            (None, None) => Throttle::None,
        };
        let breaker = match &self.breaker {
            Some(text) => control("--breaker", text, Breaker::parse)?,
            None => Breaker::None,
        };
        let script = parse_script(&self.outcomes).map_err(|e| {
            invalid(
                "--outcomes",
                &self.outcomes,
                format!("{e}; accepted: a comma-separated list of {OUTCOME_WORDS}"),
            )
        })?;
        let policy = Policy {
            strategy,
            backoff: Backoff {
                base: base.min(cap),
                cap,
                multiplier,
                jitter_order: Default::default(),
            },
            max_retries: retries,
            retry_chance: RetryChance::ALWAYS,
        };
        let controls = Controls {
            budget,
            breaker,
            throttle,
            ..Controls::default()
        };
        let spec = TraceSpec {
            policy,
            controls,
            script,
            seed: self.seed,
            latency: duration("--latency", &self.latency)?,
            gap: duration("--gap", &self.gap)?,
        };
        let mut header = Vec::new();
        if let Some(p) = preset {
            header.push(format!("preset {}: {}", p.name, p.source));
        }
        header.push(format!(
            "policy: {strategy}, {retries} retries, base {base}, cap {cap}, multiplier {multiplier}; budget {}; breaker {}; throttle {}",
            budget.text(),
            breaker.text(),
            throttle.text()
        ));
        header.push(format!(
            "script: {}; seed {}, client 0; answers {} after sending; next call {} after the last ends",
            self.outcomes, self.seed, spec.latency, spec.gap
        ));
        Ok((spec, header))
    }
}
