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
//!
//! Reading a file is in `file`, the validation in `validate`, what a valid scenario runs as
//! in `run_spec`; each table of the file (server, pool, layers, browser, ...) has its own
//! module, and the memory estimate `memory`.

mod browser;
mod client;
mod closed_loop;
mod file;
mod layers;
mod memory;
mod output;
mod pool;
mod preset;
mod requests;
mod run_spec;
mod saturating;
mod server;
#[cfg(test)]
mod tests;
mod trace_size;
mod unread;
mod validate;
mod workload;

pub use browser::HeadersVisible;
pub use client::{LatencyText, StrategyList};
pub(crate) use file::toml_message;
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

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::engine::{Browser, Latency, NetworkDelay, Overload, Path, Work, STUDY_NETWORK};
use crate::policy::control::{Breaker, Budget, Controls, Scope, SpecError, Throttle};
use crate::policy::{Backoff, JitterOrder, RetryChance, Strategy, UnknownStrategy};
use crate::time::SimDuration;

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
