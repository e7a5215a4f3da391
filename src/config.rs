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
//! budget of 16 GiB.

use std::fmt;
use std::path::Path as FsPath;

use serde::{Deserialize, Deserializer, Serialize};

use crate::engine::{Path, RunSpec};
use crate::policy::{Backoff, Policy, Strategy};
use crate::server::{Down, Server};
use crate::time::{SimDuration, SimTime};

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
    type Err = crate::policy::UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "all" {
            return Ok(StrategyList(Strategy::ALL.to_vec()));
        }
        let mut list = Vec::new();
        for name in s.split(',') {
            let strategy: Strategy = name.parse()?;
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
    /// `down` (the only model so far).
    pub model: Option<String>,
    /// For `down`: from this time on the server serves.
    pub recover_at: Option<SimDuration>,
}

impl ServerFile {
    fn overridden_by(self, over: ServerFile) -> ServerFile {
        ServerFile {
            model: over.model.or(self.model),
            recover_at: over.recover_at.or(self.recover_at),
        }
    }
}

/// A scenario as the user wrote it, before defaults and validation. Every key of a config
/// file is a field here; any other key is an error.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
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
        let server_file = self.server.unwrap_or_default();
        let model = server_file.model.as_deref().unwrap_or("down");
        let server = match model {
            "down" => ServerModel::Down {
                recover_at: server_file.recover_at,
            },
            other => {
                return Err(invalid("--server", other, "accepted: down"));
            }
        };
        let scenario = Scenario {
            clients: clients as u32,
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
        };
        scenario.check_memory()?;
        Ok(scenario)
    }
}

/// The server model of a validated scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum ServerModel {
    /// Refuses everything, until `recover_at` if given.
    Down {
        /// From this time on the server serves.
        recover_at: Option<SimDuration>,
    },
}

impl ServerModel {
    /// A fresh server in its initial state.
    pub fn build(&self) -> Server {
        match *self {
            ServerModel::Down { recover_at } => Server::Down(Down {
                recover_at: recover_at.map(|d| SimTime::ZERO + d),
            }),
        }
    }

    /// A short description for titles and tables.
    pub fn describe(&self) -> String {
        match self {
            ServerModel::Down { recover_at: None } => "down".to_string(),
            ServerModel::Down {
                recover_at: Some(at),
            } => format!("down, recovers at {at}"),
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
}

impl Scenario {
    /// The run of one strategy.
    pub fn run_spec(&self, strategy: Strategy) -> RunSpec {
        RunSpec {
            clients: self.clients,
            policy: Policy {
                strategy,
                backoff: self.backoff,
                max_retries: self.retries,
            },
            server: self.server.build(),
            bin: self.bin,
            seed: self.seed,
        }
    }

    /// Upper bound on the bytes one run needs: per-client state on the event-queue path, and
    /// a histogram per parallel block covering the longest possible run (every retry waiting
    /// the largest delay).
    pub fn memory_estimate(&self) -> u64 {
        let longest_wait = self.backoff.cap.max(self.backoff.base).as_nanos();
        let horizon = u128::from(longest_wait) * u128::from(self.retries);
        let windows = horizon / u128::from(self.bin.as_nanos()) + 1;
        let threads = rayon::current_num_threads() as u128 + 1;
        let histograms = windows * 8 * threads * self.strategies.len() as u128;
        let independent =
            self.path != Path::EventQueue && self.server.build().clients_independent();
        // Event queue: 24 B of client state, 16 B per queued event, twice for re-filing slack.
        let per_client: u128 = if independent { 0 } else { 24 + 32 };
        let clients = u128::from(self.clients)
            * per_client
            * self.strategies.len().min(threads as usize) as u128;
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
