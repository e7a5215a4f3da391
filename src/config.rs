//! Scenario types: what a config file (TOML or JSON) or the command line may say, the
//! defaults, and the one validation that turns it into an immutable [`Scenario`].
//!
//! Two stages, as in ripgrep: [`ScenarioFile`] mirrors what the user wrote (every field
//! optional, unknown keys refused); [`ScenarioFile::overridden_by`] lays command-line values
//! over a file's; [`ScenarioFile::validate`] applies defaults, checks everything once and
//! builds the [`Scenario`] the engine receives. Nothing here knows about clap.
//!
//! Defaults (Experiment 1 of the spec): 1000 clients, strategy `full-jitter`, 4 retries, base
//! 1 s, cap 30 s, multiplier 2, 100 ms windows, seed 2015, a server that stays down, a memory
//! budget of 16 GiB; one item per client, zero latency, one replicate.
//!
//! Rate-limited servers (`[server] model = "fixed-window" | "sliding-window" | "token-bucket"`)
//! default to Laravel's throttle: first-hit windows, the whole-second store, whole-second
//! headers that clients can read, one key per client, epoch phase 0.

use std::fmt;
use std::path::Path as FsPath;

use serde::{Deserialize, Deserializer, Serialize};

use std::collections::BTreeMap;

use crate::engine::{Latency, Path, RunSpec, Work};
use crate::policy::{Backoff, Policy, Strategy, UnknownStrategy};
use crate::server::{
    Down, FixedWindow, FixedWindowRule, HeaderStyle, Headers, Keying, Limited, Limiter, Refill,
    Server, SlidingWindow, SlidingWindowRule, Store, TokenBucket, TokenBucketRule, WallClock,
    WindowStart,
};
use crate::time::{parse_duration, SimDuration, SimTime, NANOS_PER_SEC};

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
    #[error("this run needs an estimated {estimate}, over the memory budget of {budget}; lower --clients, --retries or --cap, widen --bin, or raise --memory-limit")]
    TooBig {
        /// Estimated bytes, human-readable.
        estimate: String,
        /// The budget, human-readable.
        budget: String,
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

fn invalid(
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

/// A list of strategies: `all`, one name, a comma list, or (in a file) an array of names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StrategyList(pub Vec<Strategy>);

impl std::str::FromStr for StrategyList {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "all" {
            return Ok(StrategyList(Strategy::ALL.to_vec()));
        }
        let mut list = Vec::new();
        for name in s.split(',') {
            let strategy: Strategy = name.parse().map_err(UnknownStrategy::or_all)?;
            if !list.contains(&strategy) {
                list.push(strategy);
            }
        }
        Ok(StrategyList(list))
    }
}

impl<'de> Deserialize<'de> for StrategyList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(String),
            Many(Vec<String>),
        }
        let text = match OneOrMany::deserialize(deserializer)? {
            OneOrMany::One(s) => s,
            OneOrMany::Many(v) => v.join(","),
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The server model as written: `[server]` in a file, `--server` and friends on the command line.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    /// `down`, `fixed-window`, `sliding-window` or `token-bucket`.
    pub model: Option<String>,
    /// For `down`: from this time on the server serves.
    pub recover_at: Option<SimDuration>,
    /// Windows: requests admitted per window (`--limit`).
    pub limit: Option<u32>,
    /// Windows: the window length (`--window`).
    pub window: Option<SimDuration>,
    /// Fixed window: `first-hit` or `aligned` (`--window-start`).
    pub window_start: Option<String>,
    /// Fixed window: `whole-second`, `precise` or `at-stamp` (`--store`).
    pub store: Option<String>,
    /// Token bucket: tokens held (`--capacity`).
    pub capacity: Option<u32>,
    /// Token bucket: tokens returned per interval (`--refill`).
    pub refill: Option<u32>,
    /// Token bucket: the refill interval (`--refill-interval`).
    pub refill_interval: Option<SimDuration>,
    /// Token bucket: `continuous` or `ticks` (`--refill-mode`).
    pub refill_mode: Option<String>,
    /// Limiters: `whole-seconds`, `exact` or `round-up` (`--headers`).
    pub headers: Option<String>,
    /// Limiters: whether clients can read the headers (`--headers-visible`).
    pub headers_visible: Option<bool>,
    /// Limiters: clients sharing one address and so one key (`--clients-per-address`).
    pub clients_per_address: Option<u32>,
    /// Limiters: where in its second the run starts on the wall clock (`--epoch-phase`).
    pub epoch_phase: Option<SimDuration>,
}

impl ServerFile {
    fn overridden_by(self, over: ServerFile) -> ServerFile {
        ServerFile {
            model: over.model.or(self.model),
            recover_at: over.recover_at.or(self.recover_at),
            limit: over.limit.or(self.limit),
            window: over.window.or(self.window),
            window_start: over.window_start.or(self.window_start),
            store: over.store.or(self.store),
            capacity: over.capacity.or(self.capacity),
            refill: over.refill.or(self.refill),
            refill_interval: over.refill_interval.or(self.refill_interval),
            refill_mode: over.refill_mode.or(self.refill_mode),
            headers: over.headers.or(self.headers),
            headers_visible: over.headers_visible.or(self.headers_visible),
            clients_per_address: over.clients_per_address.or(self.clients_per_address),
            epoch_phase: over.epoch_phase.or(self.epoch_phase),
        }
    }

    /// The validated model, given the scenario's number of clients.
    fn validate(self, clients: u32) -> Result<ServerModel, ConfigError> {
        let model = self.model.as_deref().unwrap_or("down");
        self.refuse_foreign_keys(model)?;
        let rule = match model {
            "down" => {
                return Ok(ServerModel::Down {
                    recover_at: self.recover_at,
                })
            }
            "fixed-window" => LimiterRule::FixedWindow(FixedWindowRule {
                limit: positive_count("--limit", self.limit.unwrap_or(30))?,
                window: positive_duration("--window", self.window, 60)?,
                start: choose(
                    "--window-start",
                    self.window_start,
                    &WindowStart::ALL,
                    WindowStart::name,
                )?,
                store: choose("--store", self.store, &Store::ALL, Store::name)?,
            }),
            "sliding-window" => LimiterRule::SlidingWindow(SlidingWindowRule {
                limit: positive_count("--limit", self.limit.unwrap_or(30))?,
                window: positive_duration("--window", self.window, 60)?,
            }),
            "token-bucket" => LimiterRule::TokenBucket(TokenBucketRule {
                capacity: positive_count("--capacity", self.capacity.unwrap_or(30))?,
                refill: positive_count("--refill", self.refill.unwrap_or(1))?,
                interval: positive_duration("--refill-interval", self.refill_interval, 2)?,
                mode: choose(
                    "--refill-mode",
                    self.refill_mode,
                    &Refill::ALL,
                    Refill::name,
                )?,
            }),
            other => {
                return Err(invalid(
                    "--server",
                    other,
                    "accepted: down, fixed-window, sliding-window, token-bucket",
                ))
            }
        };
        let clients_per_address = self.clients_per_address.unwrap_or(1);
        if clients_per_address == 0 {
            return Err(invalid(
                "--clients-per-address",
                0,
                format!("accepted: a whole number from 1 to the number of clients ({clients})"),
            ));
        }
        let epoch_phase = self.epoch_phase.unwrap_or(SimDuration::ZERO);
        if epoch_phase.as_nanos() >= NANOS_PER_SEC {
            return Err(invalid(
                "--epoch-phase",
                epoch_phase,
                "accepted: a duration below one second, e.g. 0s, 250ms, 0.9s",
            ));
        }
        Ok(ServerModel::Limited(LimitedModel {
            rule,
            clients_per_address: clients_per_address.min(clients),
            headers: choose(
                "--headers",
                self.headers,
                &HeaderStyle::ALL,
                HeaderStyle::name,
            )?,
            headers_visible: self.headers_visible.unwrap_or(true),
            epoch_phase,
        }))
    }
}

impl ServerFile {
    /// A limiter key given for the `down` server is an error (most likely `--server` was
    /// forgotten). Between limiters, keys of another algorithm are ignored, so that a config
    /// written for one limiter can be rerun with `--server` naming another.
    fn refuse_foreign_keys(&self, model: &str) -> Result<(), ConfigError> {
        let window = ["--limit", "--window"];
        let fixed = ["--window-start", "--store"];
        let bucket = [
            "--capacity",
            "--refill",
            "--refill-interval",
            "--refill-mode",
        ];
        let limiter = [
            "--headers",
            "--headers-visible",
            "--clients-per-address",
            "--epoch-phase",
        ];
        let applies: Vec<&str> = match model {
            "down" => vec!["--recover-at"],
            "fixed-window" | "sliding-window" | "token-bucket" => {
                [&window[..], &fixed, &bucket, &limiter].concat()
            }
            _ => return Ok(()),
        };
        let given = [
            ("--recover-at", self.recover_at.is_some()),
            ("--limit", self.limit.is_some()),
            ("--window", self.window.is_some()),
            ("--window-start", self.window_start.is_some()),
            ("--store", self.store.is_some()),
            ("--capacity", self.capacity.is_some()),
            ("--refill", self.refill.is_some()),
            ("--refill-interval", self.refill_interval.is_some()),
            ("--refill-mode", self.refill_mode.is_some()),
            ("--headers", self.headers.is_some()),
            ("--headers-visible", self.headers_visible.is_some()),
            ("--clients-per-address", self.clients_per_address.is_some()),
            ("--epoch-phase", self.epoch_phase.is_some()),
        ];
        match given
            .iter()
            .find(|(field, set)| *set && !applies.contains(field))
        {
            Some((field, _)) => Err(invalid(
                field,
                format!("given for server {model}"),
                format!(
                    "it applies only to a server it configures; accepted for {model}: {}",
                    applies.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }
}

fn positive_count(field: &'static str, value: u32) -> Result<u32, ConfigError> {
    if value == 0 {
        return Err(invalid(field, 0, "accepted: a whole number of at least 1"));
    }
    Ok(value)
}

fn positive_duration(
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
fn choose<T: Copy>(
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

/// A round-trip latency as written: `110ms` (fixed) or `uniform:100ms..120ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyText(pub Latency);

impl std::str::FromStr for LatencyText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let accepted =
            "accepted: a duration such as 110ms, or uniform:LOW..HIGH such as uniform:100ms..120ms";
        if let Some(range) = t.strip_prefix("uniform:") {
            let (low, high) = range
                .split_once("..")
                .ok_or_else(|| format!("latency `{t}` is not a range; {accepted}"))?;
            let low = parse_duration(low).map_err(|e| format!("latency {e}; {accepted}"))?;
            let high = parse_duration(high).map_err(|e| format!("latency {e}; {accepted}"))?;
            if high <= low {
                return Err(format!("latency `{t}` has HIGH not above LOW; {accepted}"));
            }
            return Ok(LatencyText(Latency::Uniform { low, high }));
        }
        parse_duration(t)
            .map(|d| LatencyText(Latency::Fixed(d)))
            .map_err(|e| format!("latency {e}; {accepted}"))
    }
}

impl<'de> Deserialize<'de> for LatencyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One strategy's published figures (Experiment 2 of the spec), kept beside the scenario that
/// reproduces them so a run prints ours beside theirs. Every figure is optional.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The source's name for the row, e.g. `backoff + jitter`.
    pub label: Option<String>,
    /// Time to finish all items, seconds.
    pub finish_s: Option<f64>,
    /// Requests sent.
    pub requests: Option<f64>,
    /// Requests refused.
    pub refused: Option<f64>,
    /// Refused / requests, percent.
    pub wasted_pct: Option<f64>,
    /// Latest minus earliest client finish, seconds.
    pub finish_spread_s: Option<f64>,
}

/// A scenario as the user wrote it, before defaults and validation. Every key of a config
/// file is a field here; any other key is an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// A `[sweep]` table: read by `herd-sim sweep`, ignored by a plain run so one file can
    /// serve both.
    #[serde(default)]
    pub sweep: Option<serde::de::IgnoredAny>,
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
    /// Runs per strategy over spread epoch phases and derived seeds (`--replicates`).
    pub replicates: Option<u32>,
    /// Published figures per strategy name, printed beside ours.
    pub published: Option<BTreeMap<String, Published>>,
}

impl ScenarioFile {
    /// Reads a TOML (`.toml`) or JSON (`.json`) scenario file.
    pub fn read(path: &FsPath) -> Result<ScenarioFile, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
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
            toml::from_str(text).map_err(|e| e.to_string().trim_end().replace('\n', " "))
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
            clients: over.clients.or(self.clients),
            strategy: over.strategy.or(self.strategy),
            retries: over.retries.or(self.retries),
            base: over.base.or(self.base),
            cap: over.cap.or(self.cap),
            multiplier: over.multiplier.or(self.multiplier),
            bin: over.bin.or(self.bin),
            seed: over.seed.or(self.seed),
            memory_limit: over.memory_limit.or(self.memory_limit),
            server,
            items: over.items.or(self.items),
            pool: over.pool.or(self.pool),
            latency: over.latency.or(self.latency),
            replicates: over.replicates.or(self.replicates),
            published: over.published.or(self.published),
        }
    }

    /// Applies defaults and checks every field once.
    pub fn validate(self) -> Result<Scenario, ConfigError> {
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
        let retries = self.retries.unwrap_or(DEFAULT_RETRIES);
        if retries == 0 {
            return Err(invalid(
                "--retries",
                0,
                "accepted: a whole number of at least 1",
            ));
        }
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
        let multiplier = self.multiplier.unwrap_or(2.0);
        if !multiplier.is_finite() || multiplier < 1.0 {
            return Err(invalid(
                "--multiplier",
                multiplier,
                "accepted: a finite number of at least 1, such as 2 or 1.5",
            ));
        }
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
        // `all` against a server that sends headers adds the header-reading strategies
        // (against one that sends none they would only repeat exponential and full jitter).
        let strategies = if strategies == Strategy::ALL && server.build().sends_headers() {
            Strategy::every().collect()
        } else {
            strategies
        };
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
        let scenario = Scenario {
            clients,
            strategies,
            retries,
            backoff: Backoff {
                base,
                cap,
                multiplier,
            },
            bin,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            server,
            memory_limit: self.memory_limit.unwrap_or(DEFAULT_MEMORY_LIMIT),
            path: Path::Auto,
            work,
            latency: self.latency.map_or(Latency::default(), |l| l.0),
            replicates,
            published,
        };
        scenario.check_memory()?;
        Ok(scenario)
    }
}

/// The server model of a validated scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerModel {
    /// Refuses everything, until `recover_at` if given.
    Down {
        /// From this time on the server serves.
        recover_at: Option<SimDuration>,
    },
    /// Up, behind a rate limiter.
    Limited(LimitedModel),
}

/// The algorithm of a rate-limited server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimiterRule {
    /// Fixed windows.
    FixedWindow(FixedWindowRule),
    /// A sliding window.
    SlidingWindow(SlidingWindowRule),
    /// A token bucket.
    TokenBucket(TokenBucketRule),
}

/// A validated rate-limited server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitedModel {
    /// The algorithm.
    pub rule: LimiterRule,
    /// Clients sharing one key.
    pub clients_per_address: u32,
    /// How headers are written.
    pub headers: HeaderStyle,
    /// Whether clients can read them.
    pub headers_visible: bool,
    /// Where in its second the run starts on the wall clock.
    pub epoch_phase: SimDuration,
}

impl ServerModel {
    /// A fresh server in its initial state.
    pub fn build(&self) -> Server {
        match *self {
            ServerModel::Down { recover_at } => Server::Down(Down {
                recover_at: recover_at.map(|d| SimTime::ZERO + d),
            }),
            ServerModel::Limited(m) => Server::Limited(Limited {
                limiter: match m.rule {
                    LimiterRule::FixedWindow(r) => Limiter::FixedWindow(FixedWindow::new(r)),
                    LimiterRule::SlidingWindow(r) => Limiter::SlidingWindow(SlidingWindow::new(r)),
                    LimiterRule::TokenBucket(r) => Limiter::TokenBucket(TokenBucket::new(r)),
                },
                keying: Keying {
                    clients_per_address: m.clients_per_address,
                },
                headers: Headers {
                    clock: WallClock {
                        phase: m.epoch_phase,
                    },
                    style: m.headers,
                    visible: m.headers_visible,
                },
            }),
        }
    }

    /// The same model with the wall clock starting at `phase` into its second (no effect on a
    /// server that sends no headers).
    pub fn with_phase(mut self, phase: SimDuration) -> ServerModel {
        if let ServerModel::Limited(m) = &mut self {
            m.epoch_phase = phase;
        }
        self
    }

    /// True for a rate-limited server, false for `down`.
    pub fn is_limited(&self) -> bool {
        matches!(self, ServerModel::Limited(_))
    }

    /// A short description for titles and tables.
    pub fn describe(&self) -> String {
        match self {
            ServerModel::Down { recover_at: None } => "down".to_string(),
            ServerModel::Down {
                recover_at: Some(at),
            } => format!("down, recovers at {at}"),
            ServerModel::Limited(m) => {
                let rule = match m.rule {
                    LimiterRule::FixedWindow(r) => format!(
                        "fixed-window {}/{} ({}, {} store)",
                        r.limit,
                        r.window,
                        r.start.name(),
                        r.store.name()
                    ),
                    LimiterRule::SlidingWindow(r) => {
                        format!("sliding-window {}/{}", r.limit, r.window)
                    }
                    LimiterRule::TokenBucket(r) => format!(
                        "token-bucket {} + {}/{} ({})",
                        r.capacity,
                        r.refill,
                        r.interval,
                        r.mode.name()
                    ),
                };
                let keys = if m.clients_per_address == 1 {
                    "per client".to_string()
                } else {
                    format!("{} clients per address", m.clients_per_address)
                };
                let headers = if m.headers_visible {
                    format!("{} headers", m.headers.name())
                } else {
                    "hidden headers".to_string()
                };
                format!("{rule}, {keys}, {headers}, phase {}", m.epoch_phase)
            }
        }
    }
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
    /// Runs per strategy: replicate `i` of `R` starts the wall clock `i/R` of a second after
    /// the configured phase and, when `R > 1`, uses the seed `derive_seed(seed, "replicate=i")`.
    pub replicates: u32,
    /// Published figures to print beside ours, by strategy.
    pub published: Vec<(Strategy, Published)>,
}

impl Scenario {
    /// The run of one strategy.
    pub fn run_spec(&self, strategy: Strategy) -> RunSpec {
        RunSpec {
            work: self.work,
            latency: self.latency,
            ..RunSpec::new(
                self.clients,
                Policy {
                    strategy,
                    backoff: self.backoff,
                    max_retries: self.retries,
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
                ServerModel::Down { .. } => 0,
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

    /// The latest time anything can happen in a run of this scenario: what its histograms
    /// can span. Every wait is at most the cap (every strategy is capped) plus a round trip.
    /// - Any server: a client sends at most `retries + 1` requests an item.
    /// - Down for good: every request is refused, so each client gives up on its first item.
    /// - Down until `t`: from `t` on every request is served; a client still trying sends
    ///   within one wait of `t`, then one request a round trip for each item left.
    /// - A rate limiter: a refused request proves that its key admitted (served) a request
    ///   within the limiter's memory before it — the window, or one token's refill interval
    ///   — plus the 1 s a whole-second store may keep a key. So while work is left, every
    ///   stretch of one wait plus that memory serves an item, and there are only so many
    ///   items.
    pub fn horizon(&self) -> SimDuration {
        const SECOND: u128 = 1_000_000_000;
        let round_trip = u128::from(self.latency.max().as_nanos());
        let wait = u128::from(self.backoff.cap.max(self.backoff.base).as_nanos()) + round_trip;
        let requests_per_item = u128::from(self.retries) + 1;
        let (items_per_client, items) = match self.work {
            Work::Items(k) => (u128::from(k), u128::from(k) * u128::from(self.clients)),
            Work::Pool(p) => (u128::from(p), u128::from(p)),
        };
        let each_client = wait * requests_per_item * items_per_client;
        let bound = match self.server {
            ServerModel::Down { recover_at: None } => wait * requests_per_item,
            ServerModel::Down {
                recover_at: Some(t),
            } => each_client.min(u128::from(t.as_nanos()) + wait + items_per_client * round_trip),
            ServerModel::Limited(m) => {
                let memory = match m.rule {
                    LimiterRule::FixedWindow(r) => r.window,
                    LimiterRule::SlidingWindow(r) => r.window,
                    LimiterRule::TokenBucket(r) => r.interval,
                };
                let stretch = wait + u128::from(memory.as_nanos()) + SECOND;
                each_client.min((items + 1) * stretch + wait)
            }
        };
        SimDuration(bound.min(u128::from(u64::MAX)) as u64)
    }

    /// Estimated bytes a run of this scenario needs at most: per-client state on the
    /// event-queue path, and histograms covering the [`Scenario::horizon`], for as many runs
    /// (strategies × replicates) and parallel blocks as can be in flight at once.
    pub fn memory_estimate(&self) -> u64 {
        let windows = u128::from(self.horizon().as_nanos() / self.bin.as_nanos()) + 1;
        let threads = rayon::current_num_threads() as u128;
        let strategies = self.strategies.len() as u128;
        let runs = strategies * u128::from(self.replicates);
        let independent = self.path != Path::EventQueue
            && self.run_spec(self.strategies[0]).clients_independent();
        // Tallies alive at once: one a busy thread, and each strategy's replicate 0, held
        // while its other replicates run; never more than there are runs (times blocks of
        // clients on the independent path).
        let blocks = if independent {
            u128::from(self.clients.div_ceil(crate::engine::CLIENTS_PER_BLOCK))
        } else {
            1
        };
        let held = if self.replicates > 1 { strategies } else { 0 };
        let tallies = (threads + held).min(runs * blocks);
        // Three histograms (retries, served, refused) of 8 B a window, and each client's
        // finish (16 B) in small runs.
        let finishes = if self.clients as usize <= crate::metrics::MAX_CLIENT_FINISHES {
            16 * u128::from(self.clients)
        } else {
            0
        };
        let histograms = (windows * 24 + finishes) * tallies;
        // Event queue: one pending event a client, 24 or 32 B (measured peaks at 10 M clients:
        // 24 and 32 B a client), with half again for a run that outgrew its start and blocks
        // part-filled: 48 B; 4 B more for items left with several items each; and a limiter's
        // key table (a sliding window logs `limit` times of 8 B a key). One queue a busy
        // thread.
        let key_bytes: u128 = match self.server {
            ServerModel::Down { .. } => 0,
            ServerModel::Limited(m) => {
                let per_key = match m.rule {
                    LimiterRule::SlidingWindow(r) => 8 * u128::from(r.limit) + 8,
                    LimiterRule::FixedWindow(_) => 24,
                    LimiterRule::TokenBucket(_) => 32,
                };
                per_key.div_ceil(u128::from(m.clients_per_address))
            }
        };
        let items_bytes = match self.work {
            Work::Items(k) if k > 1 => 4,
            _ => 0,
        };
        let queues = if independent { 0 } else { threads.min(runs) };
        let clients = u128::from(self.clients) * (48 + items_bytes + key_bytes) * queues;
        (histograms + clients).min(u128::from(u64::MAX)) as u64
    }

    fn check_memory(&self) -> Result<(), ConfigError> {
        let estimate = self.memory_estimate();
        if estimate > self.memory_limit {
            return Err(ConfigError::TooBig {
                estimate: human_bytes(estimate),
                budget: human_bytes(self.memory_limit),
            });
        }
        Ok(())
    }
}

/// `1.5 GiB`-style sizes for messages.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = err(ScenarioFile {
            retries: Some(0),
            ..Default::default()
        });
        assert!(e.contains("--retries"), "{e}");
    }

    #[test]
    fn a_run_too_big_for_memory_is_refused_with_the_estimate() {
        let e = err(ScenarioFile {
            bin: Some(SimDuration::from_nanos(1)),
            ..Default::default()
        });
        assert!(e.contains("estimated") && e.contains("GiB"), "{e}");
    }

    fn shipped(text: &str) -> Scenario {
        ScenarioFile::parse(text, Some("toml"))
            .unwrap()
            .validate()
            .unwrap()
    }

    #[test]
    fn the_shipped_configs_fit_whatever_the_thread_count() {
        // The estimate counts runs in flight, and the histograms of a limiter run span what a
        // limiter lets happen, not a thousand capped retries of every item: so Experiment 2's
        // configs (1000 retries an item) fit the default budget on a 64-thread machine too.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(64)
            .build()
            .unwrap();
        for text in [
            include_str!("../configs/herd-down.toml"),
            include_str!("../configs/fixed-window-one-client.toml"),
            include_str!("../configs/fixed-window-five-clients.toml"),
        ] {
            let scenario = pool.install(|| shipped(text));
            let estimate = pool.install(|| scenario.memory_estimate());
            assert!(estimate < 1 << 30, "{} B for {text}", estimate);
        }
    }

    #[test]
    fn the_horizon_bounds_every_request_of_real_runs() {
        use crate::engine::simulate;
        // Fixed 1 s waits against a server down for good, 4 retries: requests at 0..=4 s;
        // the horizon is 5 waits of 1 s. Then limiters and a recovery, every strategy, where
        // the last window with a request must start within the horizon.
        let tight = ScenarioFile {
            strategy: Some("fixed".parse().unwrap()),
            base: Some(SimDuration::from_secs(1)),
            cap: Some(SimDuration::from_secs(1)),
            ..Default::default()
        }
        .validate()
        .unwrap();
        assert_eq!(tight.horizon(), SimDuration::from_secs(5));
        let scenarios = [
            include_str!("../configs/fixed-window-one-client.toml"),
            include_str!("../configs/fixed-window-five-clients.toml"),
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
        ];
        let mut checked = 0;
        for text in scenarios {
            let scenario = shipped(text);
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
