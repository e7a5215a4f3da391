//! Scenario types: what a config file (TOML or JSON) or the command line may say, the
//! defaults, and the one validation that turns it into an immutable [`Scenario`].
//!
//! Two stages, as in ripgrep: [`ScenarioFile`] mirrors what the user wrote (every field
//! optional, unknown keys refused); [`ScenarioFile::overridden_by`] lays command-line values
//! over a file's; [`ScenarioFile::validate`] applies defaults, checks everything once and
//! builds the [`Scenario`] the engine receives. Nothing here knows about clap.
//!
//! Defaults (Experiment 1, docs/experiments.md): 1000 clients, strategy `full-jitter`, 4 retries, base
//! 1 s, cap 30 s, multiplier 2, 100 ms windows, seed 2015, a server that stays down, a memory
//! budget of 16 GiB; one item per client, zero latency, one replicate.
//!
//! The `occ` server (one row under optimistic concurrency, Brooker 2015) takes no server keys;
//! its attempts' four messages each take `network_delay` (`--network-delay`, by default the
//! study's `normal:10ms,2ms`), and it accepts neither `--latency` nor `--items`/`--pool` (each
//! client makes one successful write), nor the overload keys. For any other server,
//! `network_delay` is the delay of each direction of the call loop (see
//! [`crate::engine::calls`]), exclusive with `--latency` (a round trip).
//!
//! Rate-limited servers (`[server] model = "fixed-window" | "sliding-window" | "token-bucket"`)
//! default to Laravel's throttle: first-hit windows, the whole-second store, whole-second
//! headers that clients can read, one key per client, epoch phase 0.

mod browser;
mod client;
mod closed_loop;
mod layers;
mod memory;
mod output;
mod pool;
mod preset;
mod requests;
mod saturating;
mod server;
mod trace_size;
mod unread;
mod workload;

pub use browser::HeadersVisible;
pub use client::{LatencyText, StrategyList};
pub use layers::{LayerFile, LayerStack, LAYER_KEYS, LAYER_SEPARATOR};
pub use memory::{default_threads, human_bytes, reservable, MemoryEstimate, Part};
pub use output::Published;
pub use pool::{RollingText, MAX_SERVERS};
pub use preset::{presets_table, Preset, PRESETS};
pub use requests::{
    check_requests, check_work, describe_work, CALL_LOOP_SETUP_EVENTS, DEFAULT_MAX_REQUESTS,
    EVENTS_PER_SECOND, RUN_SETUP_EVENTS, WORK_THRESHOLD,
};
pub use saturating::Sat;
pub use server::{LimitedModel, LimiterRule, ServerFile, ServerModel, SERVER_MODELS};
pub use trace_size::TRACE_BYTES_LIMIT;
pub use unread::Unread;
pub use workload::{Bound, DistText, IntervalText, Intervals, RateText, MIN_DEGRADE_FACTOR};

use std::fmt;
use std::path::Path as FsPath;

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::engine::{Browser, Latency, NetworkDelay, Overload, Path, RunSpec, Work, STUDY_NETWORK};
use crate::policy::control::{Breaker, Budget, Controls, Scope, SpecError, Throttle};
use crate::policy::{Backoff, JitterOrder, Policy, RetryChance, Strategy, UnknownStrategy};
use crate::time::{SimDuration, NANOS_PER_SEC};

/// Default number of clients.
pub const DEFAULT_CLIENTS: u64 = 1000;
/// Default retries per client.
pub const DEFAULT_RETRIES: u32 = 4;
/// Default master seed (the year of Brooker's jitter post).
pub const DEFAULT_SEED: u64 = 2015;
/// Default memory budget in bytes: runs whose estimate exceeds it are refused up front.
pub const DEFAULT_MEMORY_LIMIT: u64 = 16 << 30;

/// An invalid scenario: names the field, the value and what is accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A field's value is outside what is accepted.
    #[error("invalid {field}: {value}; {accepted}")]
    Invalid {
        /// The flag or key, as the user writes it (`--clients`).
        field: &'static str,
        /// The offending value, as given.
        value: String,
        /// What would be accepted.
        accepted: String,
    },
    /// The run would not fit in the memory budget.
    #[error(
        "this run needs an estimated {estimate}, over the memory budget of {budget}; {advice}"
    )]
    TooBig {
        /// Estimated bytes, human-readable: the whole estimate, whichever check refused it,
        /// and in brackets its largest part, with its bytes and what bounds it.
        estimate: String,
        /// The budget, human-readable.
        budget: String,
        /// The flags that shrink the largest part, or raise the budget.
        advice: String,
    },
    /// The run's calls in flight and server queue grew past what the memory budget left
    /// them ([`Scenario::guard_in_flight`]): the run stopped there.
    #[error("this run outgrew the memory budget of {budget}: {held}; lower --rate or --duration, bound the queue (--queue), or raise --memory-limit")]
    Outgrown {
        /// The budget, human-readable.
        budget: String,
        /// When, what it held and what the estimate and the budget allowed, in words.
        held: String,
    },
    /// A herd run's histograms needed more blocks than the memory budget left them
    /// ([`Scenario::guard_in_flight`]): their counts are incomplete, nothing is written.
    #[error("this run outgrew the memory budget of {budget}: {held}; widen --bin, lower --items (or --pool), or raise --memory-limit")]
    HistogramsOutgrown {
        /// The budget, human-readable.
        budget: String,
        /// Which run and what its histograms were allowed, in words.
        held: String,
    },
    /// The run fits the budget but the system refused to set its estimated memory aside.
    #[error("this run needs an estimated {estimate}, which the system refused to allocate (--memory-limit {budget} allows it); {advice}")]
    Unavailable {
        /// Estimated bytes, human-readable, and in brackets its largest part.
        estimate: String,
        /// The budget, human-readable.
        budget: String,
        /// The flags that shrink the largest part.
        advice: String,
    },
    /// The run's requests estimate is over the limit (`--max-requests`).
    #[error("this {what}'s requests estimate is {estimate} requests (an upper bound on what it sends), over the limit of {limit}; narrow it, or allow it with --max-requests {estimate}")]
    TooLong {
        /// `run`, `sweep` or `shard`.
        what: &'static str,
        /// The estimate (as text: it may exceed u64).
        estimate: String,
        /// The limit in force.
        limit: u64,
    },
    /// The run's work estimate is past [`WORK_THRESHOLD`] and `--yes` was not given.
    #[error(
        "this {what}'s work estimate is {estimate}, over the {threshold} events (about {minutes} min) run without asking; narrow it, or run it anyway with --yes",
        threshold = WORK_THRESHOLD,
        minutes = WORK_THRESHOLD / EVENTS_PER_SECOND / 60
    )]
    TooMuchWork {
        /// `run`, `sweep` or `shard`.
        what: &'static str,
        /// The estimate in events and time ([`describe_work`]).
        estimate: String,
    },
    /// A config file could not be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong, with line and column where the parser gives them.
        message: String,
    },
}

pub(crate) fn invalid(
    field: &'static str,
    value: impl fmt::Display,
    accepted: impl Into<String>,
) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        accepted: accepted.into(),
    }
}

pub(crate) fn positive_count(field: &'static str, value: u32) -> Result<u32, ConfigError> {
    if value == 0 {
        return Err(invalid(field, 0, "accepted: a whole number of at least 1"));
    }
    Ok(value)
}

pub(crate) fn positive_duration(
    field: &'static str,
    value: Option<SimDuration>,
    default_secs: u64,
) -> Result<SimDuration, ConfigError> {
    let value = value.unwrap_or(SimDuration::from_secs(default_secs));
    if value.is_zero() {
        return Err(invalid(
            field,
            value,
            "accepted: a positive duration such as 1s or 60s",
        ));
    }
    Ok(value)
}

/// One of a closed set of named options; the first is the default.
pub(crate) fn choose<T: Copy>(
    field: &'static str,
    given: Option<String>,
    options: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, ConfigError> {
    let Some(text) = given else {
        return Ok(options[0]);
    };
    options
        .iter()
        .copied()
        .find(|&o| name(o) == text.trim())
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|&o| name(o)).collect();
            invalid(field, text, format!("accepted: {}", names.join(", ")))
        })
}

/// The retry controls as written, validated: any server but `occ` (whose clients make one
/// write each, outside the call loop).
fn controls(file: &ScenarioFile, server: &ServerModel) -> Result<Controls, ConfigError> {
    let named = |field: &'static str| move |e: SpecError| invalid(field, e.value, e.accepted);
    // `scope=client|global` is split off before the control's own keys are read.
    let scoped = |field: &'static str, text: Option<&str>| -> Result<_, ConfigError> {
        let Some(text) = text else {
            return Ok((None, Scope::Client));
        };
        let (rest, scope) = Scope::split(text).map_err(named(field))?;
        if scope == Scope::Global && rest == "none" {
            return Err(invalid(
                field,
                text,
                "scope=global given without a control; accepted: scope with a named control",
            ));
        }
        Ok((Some(rest), scope))
    };
    let (budget, budget_scope) = scoped("--budget", file.budget.as_deref())?;
    let (breaker, breaker_scope) = scoped("--breaker", file.breaker.as_deref())?;
    let controls = Controls {
        budget: match budget.as_deref() {
            Some(t) => Budget::parse(t).map_err(named("--budget"))?,
            None => Budget::None,
        },
        breaker: match breaker.as_deref() {
            Some(t) => Breaker::parse(t).map_err(named("--breaker"))?,
            None => Breaker::None,
        },
        budget_scope,
        breaker_scope,
        throttle: match file.throttle.as_deref() {
            Some(t) => Throttle::parse(t).map_err(named("--throttle"))?,
            None => Throttle::None,
        },
    };
    if server.is_occ() {
        for (field, set, name) in [
            (
                "--budget",
                controls.budget != Budget::None,
                controls.budget.name(),
            ),
            (
                "--breaker",
                controls.breaker != Breaker::None,
                controls.breaker.name(),
            ),
            (
                "--throttle",
                controls.throttle != Throttle::None,
                controls.throttle.name(),
            ),
        ] {
            if set {
                return Err(invalid(field, name, "accepted with any server but occ"));
            }
        }
    }
    Ok(controls)
}

/// A scenario as the user wrote it, before defaults and validation. Every key of a config
/// file is a field here; any other key is an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// A `[sweep]` table: read by `herd-sim sweep`, ignored by a plain run so one file can
    /// serve both. (Not written back: a sweep shard records its grid apart.)
    #[serde(default, skip_serializing)]
    pub sweep: Option<serde::de::IgnoredAny>,
    /// A named production client (`--preset`) whose keys lie under every other key given:
    /// flags > this file > the preset > the defaults.
    pub preset: Option<String>,
    /// Number of clients (`--clients`).
    pub clients: Option<u64>,
    /// Strategies to run (`--strategy`).
    pub strategy: Option<StrategyList>,
    /// Retries per client after the first failed request (`--retries`).
    pub retries: Option<u32>,
    /// First delay (`--base`).
    pub base: Option<SimDuration>,
    /// Largest delay (`--cap`).
    pub cap: Option<SimDuration>,
    /// Growth per retry (`--multiplier`).
    pub multiplier: Option<f64>,
    /// The probability that each retry is made, else the call fails (`--retry-probability`).
    pub retry_probability: Option<f64>,
    /// The fraction of client processes whose every attempt fails (`--sticky-failures`).
    pub sticky_failures: Option<f64>,
    /// `after-cap` or `before-cap`: where jitter meets the cap (`--jitter-order`).
    pub jitter_order: Option<String>,
    /// The fraction of a service a capacity server spends dropping a request whose deadline
    /// cannot be met (`--deadline-propagation`).
    pub deadline_propagation: Option<f64>,
    /// Closed-loop clients: the calls a client process has in flight at most (`--in-flight`).
    pub in_flight: Option<u32>,
    /// Closed-loop clients: the wait after a call ends before the next (`--think-time`).
    pub think_time: Option<DistText>,
    /// Histogram window (`--bin`).
    pub bin: Option<SimDuration>,
    /// Master seed (`--seed`).
    pub seed: Option<u64>,
    /// Memory budget in bytes (`--memory-limit`).
    pub memory_limit: Option<u64>,
    /// The server.
    pub server: Option<ServerFile>,
    /// Items each client fetches in sequence (`--items`).
    pub items: Option<u32>,
    /// Items shared by all clients instead (`--pool`).
    pub pool: Option<u64>,
    /// Round-trip latency (`--latency`).
    pub latency: Option<LatencyText>,
    /// The delay of each message: `occ`'s four messages an attempt, or each direction of the
    /// call loop for the other servers (`--network-delay`).
    pub network_delay: Option<NetworkDelay>,
    /// Runs per strategy over spread epoch phases and derived seeds (`--replicates`).
    pub replicates: Option<u32>,
    /// Published figures per strategy name, printed beside ours.
    pub published: Option<BTreeMap<String, Published>>,
    /// When calls start: `herd` or `poisson` (`--arrivals`).
    pub arrivals: Option<String>,
    /// Total call rate of Poisson arrivals (`--rate`).
    pub rate: Option<RateText>,
    /// Calls start in `[0, duration)` (`--duration`).
    pub duration: Option<SimDuration>,
    /// Spikes of the rate, `FROM..TO@RATE` (`--spike`).
    pub spike: Option<Intervals>,
    /// Client timeout per attempt (`--timeout`).
    pub timeout: Option<SimDuration>,
    /// Outages, `FROM..TO` (`--outage`).
    pub outage: Option<Intervals>,
    /// Degradations, `FROM..TO@FACTOR` (`--degrade`).
    pub degrade: Option<Intervals>,
    /// Window of the overload series (`--series-bin`).
    pub series_bin: Option<SimDuration>,
    /// How long the series must stay healthy to count as recovered (`--recovery-hold`).
    pub recovery_hold: Option<SimDuration>,
    /// How long calls keep starting after the last trigger ends, at least (`--settle`;
    /// default: [`crate::engine::calls::Overload::default_settle`]).
    pub settle: Option<SimDuration>,
    /// Retry budget per client process, `NAME[:key=value,...]` (`--budget`).
    pub budget: Option<String>,
    /// Circuit breaker per client process (`--breaker`).
    pub breaker: Option<String>,
    /// Adaptive throttle per client process (`--throttle`).
    pub throttle: Option<String>,
    /// Fraction of clients that are hidden browser tabs at t = 0 (`--hidden`).
    pub hidden: Option<f64>,
    /// Mean dwell between a tab's visibility flips (`--visibility-switch`).
    pub visibility_switch: Option<SimDuration>,
    /// `chrome`, `chrome-unchained` or `none` (`--hidden-timers`).
    pub hidden_timers: Option<String>,
    /// `retry` or `pause` (`--when-hidden`).
    pub when_hidden: Option<String>,
    /// `seconds` or `http-date` (`--retry-after-format`).
    pub retry_after_format: Option<String>,
    /// Each tab's clock minus the server's (`--clock-skew`).
    pub clock_skew: Option<crate::engine::browser::ClockSkew>,
    /// Retry layers above the run's own policy, outermost first (`[[layer]]`, `--layer`).
    pub layer: Option<Vec<LayerFile>>,
    /// Servers in a pool behind a balancer (`--servers`, 1 by default).
    pub servers: Option<u32>,
    /// How the pool's balancer routes attempts (`--balancer`).
    pub balancer: Option<String>,
    /// Each server of the pool down in turn, `INTERVAL,DOWNTIME` (`--rolling-restart`).
    pub rolling_restart: Option<RollingText>,
}

impl ScenarioFile {
    /// Reads a TOML (`.toml`) or JSON (`.json`) scenario file.
    pub fn read(path: &FsPath) -> Result<ScenarioFile, ConfigError> {
        let shown = path.display().to_string();
        let text = crate::input::read_to_string(path).map_err(|e| ConfigError::File {
            path: shown.clone(),
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text, path.extension().and_then(|e| e.to_str())).map_err(|message| {
            ConfigError::File {
                path: shown,
                message,
            }
        })
    }

    /// Parses scenario text; `extension` `json` selects JSON, anything else TOML.
    pub fn parse(text: &str, extension: Option<&str>) -> Result<ScenarioFile, String> {
        if extension == Some("json") {
            serde_json::from_str(text).map_err(|e| e.to_string())
        } else {
            toml::from_str(text).map_err(|e| toml_message(&e))
        }
    }

    /// This file with every field that `over` sets replaced (command-line flags over a file).
    pub fn overridden_by(self, over: ScenarioFile) -> ScenarioFile {
        let server = match (self.server, over.server) {
            (Some(a), Some(b)) => Some(a.overridden_by(b)),
            (a, b) => b.or(a),
        };
        ScenarioFile {
            sweep: over.sweep.or(self.sweep),
            preset: over.preset.or(self.preset),
            clients: over.clients.or(self.clients),
            strategy: over.strategy.or(self.strategy),
            retries: over.retries.or(self.retries),
            base: over.base.or(self.base),
            cap: over.cap.or(self.cap),
            multiplier: over.multiplier.or(self.multiplier),
            retry_probability: over.retry_probability.or(self.retry_probability),
            sticky_failures: over.sticky_failures.or(self.sticky_failures),
            jitter_order: over.jitter_order.or(self.jitter_order),
            deadline_propagation: over.deadline_propagation.or(self.deadline_propagation),
            in_flight: over.in_flight.or(self.in_flight),
            think_time: over.think_time.or(self.think_time),
            bin: over.bin.or(self.bin),
            seed: over.seed.or(self.seed),
            memory_limit: over.memory_limit.or(self.memory_limit),
            server,
            items: over.items.or(self.items),
            pool: over.pool.or(self.pool),
            latency: over.latency.or(self.latency),
            network_delay: over.network_delay.or(self.network_delay),
            replicates: over.replicates.or(self.replicates),
            published: over.published.or(self.published),
            arrivals: over.arrivals.or(self.arrivals),
            rate: over.rate.or(self.rate),
            duration: over.duration.or(self.duration),
            spike: over.spike.or(self.spike),
            timeout: over.timeout.or(self.timeout),
            outage: over.outage.or(self.outage),
            degrade: over.degrade.or(self.degrade),
            series_bin: over.series_bin.or(self.series_bin),
            recovery_hold: over.recovery_hold.or(self.recovery_hold),
            settle: over.settle.or(self.settle),
            budget: over.budget.or(self.budget),
            breaker: over.breaker.or(self.breaker),
            throttle: over.throttle.or(self.throttle),
            hidden: over.hidden.or(self.hidden),
            visibility_switch: over.visibility_switch.or(self.visibility_switch),
            hidden_timers: over.hidden_timers.or(self.hidden_timers),
            when_hidden: over.when_hidden.or(self.when_hidden),
            retry_after_format: over.retry_after_format.or(self.retry_after_format),
            clock_skew: over.clock_skew.or(self.clock_skew),
            layer: over.layer.or(self.layer),
            servers: over.servers.or(self.servers),
            balancer: over.balancer.or(self.balancer),
            rolling_restart: over.rolling_restart.or(self.rolling_restart),
        }
    }

    /// Lays the preset, if any, under the keys given, applies defaults and checks every field
    /// once, for a run on [`default_threads`].
    pub fn validate(self) -> Result<Scenario, ConfigError> {
        self.validate_on(None)
    }

    /// [`ScenarioFile::validate`] for a run on `threads` worker threads (`--threads`;
    /// [`default_threads`] when `None`): the memory estimate counts a run in flight on each.
    pub fn validate_on(self, threads: Option<usize>) -> Result<Scenario, ConfigError> {
        let given = self.clone();
        let scenario = self.validate_without_budget_on(threads)?;
        given.refuse_unread(&scenario)?;
        scenario.check_memory()?;
        Ok(scenario)
    }

    /// [`ScenarioFile::validate_on`] but for the keys the run never reads (see
    /// [`ScenarioFile::unread`]) and the memory budget, which the caller checks once
    /// it knows the path and the outputs ([`Scenario::check_memory_with`]), so that a refusal
    /// names the whole estimate whatever `--memory-limit` is.
    pub fn validate_without_budget_on(
        self,
        threads: Option<usize>,
    ) -> Result<Scenario, ConfigError> {
        preset::expand(self)?.validate_expanded(threads)
    }

    /// [`ScenarioFile::validate_without_budget_on`] once the preset is laid in.
    fn validate_expanded(self, threads: Option<usize>) -> Result<Scenario, ConfigError> {
        // The overload keys are checked against the validated server, once it exists.
        let whole = self.clone();
        let clients = self.clients.unwrap_or(DEFAULT_CLIENTS);
        if clients == 0 || clients > u64::from(u32::MAX) {
            return Err(invalid(
                "--clients",
                clients,
                format!("accepted: a whole number from 1 to {}", u32::MAX),
            ));
        }
        let strategies = self
            .strategy
            .map(|list| list.0)
            .unwrap_or_else(|| vec![Strategy::FullJitter]);
        if strategies.is_empty() {
            return Err(invalid(
                "--strategy",
                "(empty)",
                format!("accepted: {}, all", Strategy::accepted_names()),
            ));
        }
        // 0 is valid: no retries, the baseline every comparison needs.
        let retries = self.retries.unwrap_or(DEFAULT_RETRIES);
        let base = self.base.unwrap_or(SimDuration::from_secs(1));
        if base.is_zero() {
            return Err(invalid(
                "--base",
                base,
                "accepted: a positive duration such as 100ms or 1s",
            ));
        }
        let cap = self.cap.unwrap_or(SimDuration::from_secs(30));
        if cap < base {
            return Err(invalid(
                "--cap",
                cap,
                format!("accepted: a duration at least --base ({base})"),
            ));
        }
        let multiplier = self.multiplier.unwrap_or(Backoff::DEFAULT_MULTIPLIER);
        if !multiplier.is_finite() || multiplier < 1.0 {
            return Err(invalid(
                "--multiplier",
                multiplier,
                "accepted: a finite number of at least 1, such as 2 or 1.5",
            ));
        }
        let retry_chance = match self.retry_probability {
            None => RetryChance::ALWAYS,
            Some(p) if (0.0..=1.0).contains(&p) => RetryChance::new(p),
            Some(p) => {
                return Err(invalid(
                    "--retry-probability",
                    p,
                    "accepted: a probability from 0 to 1, such as 0.5",
                ))
            }
        };
        let jitter_order = choose(
            "--jitter-order",
            self.jitter_order.clone(),
            &JitterOrder::ALL,
            JitterOrder::name,
        )?;
        let bin = self.bin.unwrap_or(SimDuration::from_millis(100));
        if bin.is_zero() {
            return Err(invalid(
                "--bin",
                bin,
                "accepted: a positive duration such as 100ms",
            ));
        }
        let clients = clients as u32;
        let server = self.server.unwrap_or_default().validate(clients)?;
        let mut overload = whole.overload(&server)?;
        let settle = whole
            .settle
            .unwrap_or_else(|| overload.default_settle(retries, cap));
        overload.settle_load(settle);
        // `all` against a server that sends headers adds the header-reading strategies
        // (against one that sends none they would only repeat exponential and full jitter).
        let strategies = if strategies == Strategy::ALL && server.build().sends_headers() {
            Strategy::every().collect()
        } else {
            strategies
        };
        if server.is_occ() {
            let one_write = "accepted: not with --server occ, where each client stops after one \
                             successful write";
            if let Some(items) = self.items {
                return Err(invalid("--items", items, one_write));
            }
            if let Some(pool) = self.pool {
                return Err(invalid("--pool", pool, one_write));
            }
            if let Some(latency) = self.latency {
                return Err(invalid(
                    "--latency",
                    latency.0,
                    "accepted: not with --server occ, whose four messages an attempt each take \
                     --network-delay",
                ));
            }
        }
        let work = match (self.items, self.pool) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "--pool",
                    "given with --items",
                    "accepted: either --items (per client) or --pool (shared), not both",
                ))
            }
            (_, Some(pool)) if pool < u64::from(clients) => {
                return Err(invalid(
                    "--pool",
                    pool,
                    format!("accepted: at least one item per client ({clients})"),
                ))
            }
            (_, Some(pool)) => Work::Pool(pool),
            (Some(0), None) => {
                return Err(invalid(
                    "--items",
                    0,
                    "accepted: a whole number of at least 1",
                ))
            }
            (items, None) => Work::Items(items.unwrap_or(1)),
        };
        let controls = controls(&whole, &server)?;
        let browser = whole.browser(&server)?;
        let replicates = self.replicates.unwrap_or(1);
        if replicates == 0 {
            return Err(invalid(
                "--replicates",
                0,
                "accepted: a whole number of at least 1",
            ));
        }
        let mut published = Vec::new();
        for (name, row) in self.published.unwrap_or_default() {
            let strategy: Strategy = name
                .parse()
                .map_err(|e: UnknownStrategy| invalid("published", &name, e.to_string()))?;
            published.push((strategy, row));
        }
        // The preset's name, for a sweep's `preset` column (its keys are already laid in).
        let preset = match whole.preset.as_deref() {
            Some(name) => Some(Preset::named(name)?.name),
            None => None,
        };
        let scenario = Scenario {
            clients,
            strategies,
            retries,
            backoff: Backoff {
                base,
                cap,
                multiplier,
                jitter_order,
            },
            retry_chance,
            bin,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            server,
            memory_limit: self.memory_limit.unwrap_or(DEFAULT_MEMORY_LIMIT),
            path: Path::Auto,
            work,
            latency: self.latency.map_or(Latency::default(), |l| l.0),
            network_delay: self.network_delay.unwrap_or(STUDY_NETWORK),
            replicates,
            published,
            overload,
            controls,
            browser,
            preset,
            threads: threads.unwrap_or_else(default_threads).max(1),
        };
        scenario.check_closed_loop()?;
        Ok(scenario)
    }
}

/// A TOML error on one line: the line breaks of its snippet as spaces, and so any carriage
/// return the quoted line of the file holds (which would print as a second line).
pub(crate) fn toml_message(error: &toml::de::Error) -> String {
    error.to_string().trim_end().replace(['\n', '\r'], " ")
}

/// A valid scenario: what the engine runs. Build it with [`ScenarioFile::validate`].
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Number of clients.
    pub clients: u32,
    /// Strategies, in the order results are reported.
    pub strategies: Vec<Strategy>,
    /// Retries per client.
    pub retries: u32,
    /// The backoff curve.
    pub backoff: Backoff,
    /// The probability that each retry is made.
    pub retry_chance: RetryChance,
    /// Histogram window.
    pub bin: SimDuration,
    /// Master seed; a plain run uses it as every run's seed (see [`crate::rng`]).
    pub seed: u64,
    /// The server.
    pub server: ServerModel,
    /// Memory budget in bytes.
    pub memory_limit: u64,
    /// How to simulate.
    pub path: Path,
    /// What each client fetches.
    pub work: Work,
    /// Round-trip latency.
    pub latency: Latency,
    /// The delay of each message of an `occ` attempt.
    pub network_delay: NetworkDelay,
    /// Runs per strategy: replicate `i` of `R` starts the wall clock `i/R` of a second after
    /// the configured phase and, when `R > 1`, uses the seed `derive_seed(seed, "replicate=i")`.
    pub replicates: u32,
    /// Published figures to print beside ours, by strategy.
    pub published: Vec<(Strategy, Published)>,
    /// Arrivals, timeouts, network delay, triggers and the series (none by default).
    pub overload: Overload,
    /// Retry budgets kept per client process (none by default).
    pub controls: Controls,
    /// Browser tabs (none by default).
    pub browser: Browser,
    /// The production client (`--preset`) whose keys lie under the others, if any.
    pub preset: Option<&'static str>,
    /// The worker threads it runs on (the pool a binary starts for it): the memory estimate
    /// counts a run in flight on each. Never read from rayon, whose global pool asking would
    /// start.
    pub threads: usize,
}

impl Scenario {
    /// True when any layer has a retry control (`budget`, `breaker`, `throttle`): the run's
    /// own policy or a layer around it. The call loop's table then shows what they denied.
    pub fn has_retry_controls(&self) -> bool {
        !self.controls.is_none()
            || self
                .overload
                .layers
                .outer
                .iter()
                .any(|layer| !layer.controls.is_none())
    }

    /// The run of one strategy.
    pub fn run_spec(&self, strategy: Strategy) -> RunSpec {
        RunSpec {
            work: self.work,
            latency: self.latency,
            network: self.network_delay,
            overload: self.overload.clone(),
            controls: self.controls,
            browser: self.browser,
            ..RunSpec::new(
                self.clients,
                Policy {
                    strategy,
                    backoff: self.backoff,
                    max_retries: self.retries,
                    retry_chance: self.retry_chance,
                },
                self.server.build(),
                self.bin,
                self.seed,
            )
        }
    }

    /// The run of one strategy in replicate `index` (see [`Scenario::replicates`]); replicate
    /// 0 of a single-replicate scenario is exactly [`Scenario::run_spec`].
    pub fn replicate_spec(&self, strategy: Strategy, index: u32) -> RunSpec {
        let mut spec = self.run_spec(strategy);
        if self.replicates > 1 {
            spec.seed = crate::rng::derive_seed(self.seed, &format!("replicate={index}"));
            let base = match self.server {
                ServerModel::Limited(m) => m.epoch_phase.as_nanos(),
                ServerModel::Down { .. }
                | ServerModel::Occ
                | ServerModel::Capacity(_)
                | ServerModel::Flaky(_) => 0,
            };
            let step = u64::from(index) * NANOS_PER_SEC / u64::from(self.replicates);
            let phase = SimDuration((base + step) % NANOS_PER_SEC);
            spec.server = self.server.with_phase(phase).build();
        }
        spec
    }

    /// The published figures of `strategy`, if the scenario has them.
    pub fn published_for(&self, strategy: Strategy) -> Option<&Published> {
        self.published
            .iter()
            .find(|(s, _)| *s == strategy)
            .map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn err(file: ScenarioFile) -> String {
        file.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_experiment_one() {
        let s = ScenarioFile::default().validate().unwrap();
        assert_eq!(s.clients, 1000);
        assert_eq!(s.strategies, [Strategy::FullJitter]);
        assert_eq!(s.retries, 4);
        assert_eq!(s.backoff.base, SimDuration::from_secs(1));
        assert_eq!(s.backoff.cap, SimDuration::from_secs(30));
        assert_eq!(s.bin, SimDuration::from_millis(100));
        assert_eq!(s.server, ServerModel::Down { recover_at: None });
        // The tests' and benches' Experiment 1 is the same run as the default scenario's.
        assert_eq!(
            s.run_spec(Strategy::Fixed),
            RunSpec::experiment1(
                1000,
                Strategy::Fixed,
                crate::server::Server::Down(crate::server::Down::default()),
                DEFAULT_SEED
            )
        );
    }

    #[test]
    fn bad_values_name_the_field_the_value_and_the_fix() {
        let e = err(ScenarioFile {
            clients: Some(0),
            ..Default::default()
        });
        assert!(e.contains("--clients") && e.contains(": 0;"), "{e}");
        let e = err(ScenarioFile {
            cap: Some(SimDuration::from_millis(500)),
            ..Default::default()
        });
        assert!(
            e.contains("--cap") && e.contains("500ms") && e.contains("1s"),
            "{e}"
        );
        let e = err(ScenarioFile {
            bin: Some(SimDuration::ZERO),
            ..Default::default()
        });
        assert!(e.contains("--bin"), "{e}");
        let e = err(ScenarioFile {
            multiplier: Some(f64::NAN),
            ..Default::default()
        });
        assert!(e.contains("--multiplier") && e.contains("NaN"), "{e}");
        let none = ScenarioFile {
            retries: Some(0),
            ..Default::default()
        };
        assert_eq!(none.validate().unwrap().retries, 0);
    }

    #[test]
    fn a_run_too_big_for_memory_is_refused_with_the_estimate() {
        // Every replicate keeps five figures (80 B while collected): 4 billion of them are
        // hundreds of GiB. A 1 ns bin, by contrast, no longer costs anything up front: the
        // histograms hold only windows with counts.
        let e = err(ScenarioFile {
            replicates: Some(u32::MAX),
            ..Default::default()
        });
        assert!(e.contains("estimated") && e.contains("GiB"), "{e}");
        assert!(ScenarioFile {
            bin: Some(SimDuration::from_nanos(1)),
            ..Default::default()
        }
        .validate()
        .is_ok());
    }

    fn shipped(text: &str, threads: usize) -> Scenario {
        ScenarioFile::parse(text, Some("toml"))
            .unwrap()
            .validate_on(Some(threads))
            .unwrap()
    }

    #[test]
    fn the_shipped_configs_fit_whatever_the_thread_count() {
        // The estimate counts runs in flight, and the histograms of a limiter run span what a
        // limiter lets happen, not a thousand capped retries of every item: so Experiment 2's
        // configs (1000 retries an item) fit the default budget on a 64-thread machine too.
        for text in [
            include_str!("../../configs/herd-down.toml"),
            include_str!("../../configs/fixed-window-one-client.toml"),
            include_str!("../../configs/fixed-window-five-clients.toml"),
            include_str!("../../configs/occ-contention.toml"),
        ] {
            let estimate = shipped(text, 64).memory_estimate();
            assert!(estimate < 1 << 30, "{} B for {text}", estimate);
        }
    }

    #[test]
    fn the_horizon_bounds_every_request_of_real_runs() {
        use crate::engine::simulate;
        // Fixed 1 s waits against a server down for good, 4 retries: requests at 0..=4 s;
        // the horizon is the 4 waits of 1 s. Then limiters and a recovery, every strategy, where
        // the last window with a request must start within the horizon.
        let tight = ScenarioFile {
            strategy: Some("fixed".parse().unwrap()),
            base: Some(SimDuration::from_secs(1)),
            cap: Some(SimDuration::from_secs(1)),
            ..Default::default()
        }
        .validate()
        .unwrap();
        assert_eq!(tight.horizon(), SimDuration::from_secs(4));
        let scenarios = [
            include_str!("../../configs/fixed-window-one-client.toml"),
            include_str!("../../configs/fixed-window-five-clients.toml"),
            "clients = 50\nstrategy = \"all\"\nretries = 50\nbase = \"100ms\"\ncap = \"2s\"\n\
             pool = 400\nlatency = \"20ms\"\n[server]\nmodel = \"token-bucket\"\n\
             capacity = 2\nrefill = 1\nrefill_interval = \"3s\"\nclients_per_address = 50\n",
            "clients = 20\nstrategy = \"all\"\nretries = 30\ncap = \"4s\"\nitems = 5\n\
             [server]\nmodel = \"sliding-window\"\nlimit = 3\nwindow = \"5s\"\n\
             clients_per_address = 20\n",
            "clients = 100\nstrategy = \"all\"\nitems = 3\nlatency = \"uniform:50ms..150ms\"\n\
             [server]\nrecover_at = \"7s\"\n",
            // One request a minute, waits of 1 s: the last request comes two windows in (about
            // 120 s), far beyond three items' worth of waits (a bound forgetting the window).
            "clients = 1\nstrategy = \"all\"\nbase = \"1s\"\ncap = \"1s\"\nretries = 200\n\
             items = 3\n[server]\nmodel = \"fixed-window\"\nlimit = 1\nwindow = \"60s\"\n",
            // Contention: the study's config, and a fixed network with no backoff, where the
            // last write comes at 4d·N − d (so N·(0 + 6d) + d bounds it).
            include_str!("../../configs/occ-contention.toml"),
            "clients = 40\nstrategy = \"naive\"\nretries = 100\nnetwork_delay = \"3ms\"\n\
             [server]\nmodel = \"occ\"\n",
        ];
        let mut checked = 0;
        for text in scenarios {
            let scenario = shipped(text, 2);
            let horizon = scenario.horizon();
            for &strategy in &scenario.strategies {
                let tally = simulate(&scenario.run_spec(strategy), Path::EventQueue);
                let last = tally
                    .served_windows
                    .counts()
                    .len()
                    .max(tally.refused_windows.counts().len())
                    - 1;
                let start = tally.served_windows.window_start(last);
                assert!(
                    start <= SimTime::ZERO + horizon,
                    "{strategy}: {start:?} > {horizon:?} in {text}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 20, "{checked}");
    }

    #[test]
    fn a_sweep_table_is_left_to_the_sweep() {
        let file =
            ScenarioFile::parse("clients = 7\n[sweep]\nclients = [1, 2]\n", Some("toml")).unwrap();
        assert_eq!(file.validate().unwrap().clients, 7);
    }

    #[test]
    fn files_refuse_unknown_keys_and_flags_override_files() {
        let e = ScenarioFile::parse("clients = 10\nclinets = 5\n", Some("toml")).unwrap_err();
        assert!(e.contains("clinets"), "{e}");
        let file = ScenarioFile::parse(
            "clients = 10\nstrategy = [\"fixed\", \"exponential\"]\nbase = \"250ms\"\n[server]\nrecover_at = \"20s\"\n",
            Some("toml"),
        )
        .unwrap();
        let flags = ScenarioFile {
            clients: Some(99),
            ..Default::default()
        };
        let s = file.overridden_by(flags).validate().unwrap();
        assert_eq!(s.clients, 99);
        assert_eq!(s.strategies, [Strategy::Fixed, Strategy::Exponential]);
        assert_eq!(s.backoff.base, SimDuration::from_millis(250));
        assert_eq!(
            s.server,
            ServerModel::Down {
                recover_at: Some(SimDuration::from_secs(20))
            }
        );
        let json =
            ScenarioFile::parse(r#"{"clients": 5, "strategy": "all"}"#, Some("json")).unwrap();
        assert_eq!(
            json.validate().unwrap().strategies.len(),
            Strategy::ALL.len()
        );
    }
}
