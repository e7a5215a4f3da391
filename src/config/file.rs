//! Reading a scenario file (TOML or JSON) into a [`ScenarioFile`], and laying the command
//! line's values over it ([`ScenarioFile::overridden_by`]): the first of the two stages,
//! what the user wrote, unchecked. Separate from validation, which reads the result.

use std::path::Path as FsPath;

use super::{ConfigError, ScenarioFile};

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
}

/// A TOML error on one line: the line breaks of its snippet as spaces, and so any carriage
/// return the quoted line of the file holds (which would print as a second line).
pub(crate) fn toml_message(error: &toml::de::Error) -> String {
    error.to_string().trim_end().replace(['\n', '\r'], " ")
}
