//! Layered retries as written: a config's `[[layer]]` list or the repeated `--layer SPEC`
//! (space-separated `key=value` pairs, `--layer "strategy=naive retries=3"`), outermost
//! first, each with a run's policy keys, or the whole stack in one `--layers` value
//! ([`LayerStack`], layers separated by `;`, the last the run's own); and their validation
//! into the engine's
//! [`Layers`](crate::engine::calls::Layers). The run's own policy keys stay the innermost
//! layer. No I/O, no clap.

use serde::{Deserialize, Serialize};

use super::{invalid, ConfigError, ScenarioFile, ServerModel, StrategyList};
use crate::engine::calls::{Layer, Layers};
use crate::policy::Policy;
use crate::time::SimDuration;

/// The keys a layer takes: a run's policy keys.
pub const LAYER_KEYS: &str =
    "preset, strategy, retries, base, cap, multiplier, retry_probability, jitter_order, timeout, budget, breaker, throttle";

/// One layer above the run's own policy, as written.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerFile {
    /// A named production client whose policy keys lie under the layer's others.
    pub preset: Option<String>,
    /// One strategy.
    pub strategy: Option<StrategyList>,
    /// Retries after the layer's first attempt.
    pub retries: Option<u32>,
    /// First delay.
    pub base: Option<SimDuration>,
    /// Largest delay.
    pub cap: Option<SimDuration>,
    /// Growth per retry.
    pub multiplier: Option<f64>,
    /// The probability that each retry is made.
    pub retry_probability: Option<f64>,
    /// `after-cap` or `before-cap`.
    pub jitter_order: Option<String>,
    /// Retry budget, as `--budget` takes it.
    pub budget: Option<String>,
    /// Circuit breaker, as `--breaker` takes it.
    pub breaker: Option<String>,
    /// Its own timeout: the whole call below it is abandoned when it has not ended this
    /// long after the layer's attempt started.
    pub timeout: Option<SimDuration>,
    /// Throttle, as `--throttle` takes it: gates each of the layer's attempts.
    pub throttle: Option<String>,
}

impl std::str::FromStr for LayerFile {
    type Err = String;
    /// `key=value` pairs separated by spaces (keys with `-` or `_`): `strategy=naive
    /// retries=3 budget=token-bucket:scope=global`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut toml = String::new();
        for pair in text.split_whitespace() {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                format!("`{pair}` is not key=value; accepted: space-separated key=value pairs of {LAYER_KEYS}")
            })?;
            let key = key.replace('-', "_");
            let quoted = !matches!(key.as_str(), "retries" | "multiplier" | "retry_probability");
            if quoted {
                toml.push_str(&format!("{key} = {value:?}\n"));
            } else {
                toml.push_str(&format!("{key} = {value}\n"));
            }
        }
        toml::from_str(&toml).map_err(|e| {
            format!(
                "`{text}`: {}; accepted: space-separated key=value pairs of {LAYER_KEYS}",
                super::toml_message(&e)
            )
        })
    }
}

/// What separates the layers of `--layers`: a character no `key=value` pair of a layer holds.
pub const LAYER_SEPARATOR: char = ';';

/// A whole stack of layers in one value, as `--layers` takes it: layers separated by `;`,
/// outermost first, the last the innermost (the run's own policy, whose attempts reach the
/// server): `--layers "retries=3 ; retries=3 ; retries=2"` is an app retrying 3 times around
/// an SDK retrying 3 times around a mesh retrying twice, 4 x 4 x 3 attempts a call against a
/// server that refuses all. The same as a `--layer` for each but the last, and the last's keys
/// as the run's own policy flags.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerStack {
    /// The layers around the innermost, outermost first (`--layer`, `[[layer]]`).
    pub outer: Vec<LayerFile>,
    /// The innermost layer: the run's own policy keys (it may take a timeout and a throttle).
    pub innermost: LayerFile,
}

impl std::str::FromStr for LayerStack {
    type Err = String;
    /// Layers separated by `;`, each as `--layer` takes it: none empty, each outer one checked
    /// as `--layer` is, so a bad layer is said with its place.
    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(LAYER_SEPARATOR).collect();
        let count = parts.len();
        let mut layers = Vec::with_capacity(count);
        for (i, part) in parts.iter().enumerate() {
            let index = i + 1;
            let place = match index == count {
                true => format!("layer {index} of {count} (the innermost)"),
                false => format!("layer {index} of {count} (outermost first)"),
            };
            let file: LayerFile = part.parse().map_err(|e| format!("{place}: {e}"))?;
            if file.is_empty() {
                return Err(format!(
                    "{place} is empty; accepted: layers separated by `{LAYER_SEPARATOR}`, each \
                     with at least one of {LAYER_KEYS}"
                ));
            }
            // The innermost's keys lie over the run's own (a config's), so it is checked with
            // them, as the run's policy; an outer layer stands alone.
            let checked = match index == count {
                true => Ok(()),
                false => file.outer_layer().map(|_| ()),
            };
            if let Err(e) = checked {
                return Err(match e {
                    ConfigError::Invalid {
                        field,
                        value,
                        accepted,
                    } => match field {
                        "--layer" => format!("{place}: {value}; {accepted}"),
                        _ => format!("{place}: {field} {value}; {accepted}"),
                    },
                    other => format!("{place}: {other}"),
                });
            }
            layers.push(file);
        }
        let innermost = layers.pop().unwrap_or_default();
        Ok(LayerStack {
            outer: layers,
            innermost,
        })
    }
}

impl LayerStack {
    /// Lays the stack over `file`: its outer layers replace the file's list, and the
    /// innermost's keys its own policy keys.
    pub fn lay_over(&self, file: &mut ScenarioFile) {
        let inner = &self.innermost;
        file.layer = Some(self.outer.clone());
        file.preset = inner.preset.clone().or(file.preset.take());
        file.jitter_order = inner.jitter_order.clone().or(file.jitter_order.take());
        file.budget = inner.budget.clone().or(file.budget.take());
        file.breaker = inner.breaker.clone().or(file.breaker.take());
        file.throttle = inner.throttle.clone().or(file.throttle.take());
        file.strategy = inner.strategy.clone().or(file.strategy.take());
        file.retries = inner.retries.or(file.retries);
        file.base = inner.base.or(file.base);
        file.cap = inner.cap.or(file.cap);
        file.multiplier = inner.multiplier.or(file.multiplier);
        file.retry_probability = inner.retry_probability.or(file.retry_probability);
        file.timeout = inner.timeout.or(file.timeout);
    }
}

impl LayerFile {
    fn is_empty(&self) -> bool {
        *self == LayerFile::default()
    }

    /// The layer as one around the run's own policy, validated: it needs a policy key and one
    /// strategy, its timeout and throttle as a run's own. Its own refusals name `--layer`
    /// without a place.
    fn outer_layer(&self) -> Result<Layer, ConfigError> {
        let refuse = |value: String, accepted: &str| Err(invalid("--layer", value, accepted));
        if self.is_empty() {
            return refuse(
                "(no policy)".into(),
                &format!("accepted: a layer with at least one of {LAYER_KEYS}"),
            );
        }
        let scenario = self.as_scenario().validate_without_budget_on(Some(1))?;
        let [strategy] = scenario.strategies[..] else {
            return refuse(
                "strategy (several)".into(),
                "accepted: one strategy a layer",
            );
        };
        Ok(Layer {
            policy: Policy {
                strategy,
                backoff: scenario.backoff,
                max_retries: scenario.retries,
                retry_chance: scenario.retry_chance,
            },
            controls: scenario.controls,
            timeout: scenario.overload.timeout,
        })
    }

    /// The layer as a scenario of its policy keys only, for the run's own validation.
    fn as_scenario(&self) -> ScenarioFile {
        ScenarioFile {
            preset: self.preset.clone(),
            strategy: self.strategy.clone(),
            retries: self.retries,
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            retry_probability: self.retry_probability,
            jitter_order: self.jitter_order.clone(),
            budget: self.budget.clone(),
            breaker: self.breaker.clone(),
            throttle: self.throttle.clone(),
            timeout: self.timeout,
            clients: Some(1),
            ..ScenarioFile::default()
        }
    }
}

/// `error` about layer `index` (1 the outermost) of `count`, as one `--layer` line.
fn about_layer(index: usize, count: usize, error: ConfigError) -> ConfigError {
    match error {
        ConfigError::Invalid {
            field,
            value,
            accepted,
        } => {
            let what = match field {
                "--layer" => value,
                _ => format!("{field} {value}"),
            };
            invalid(
                "--layer",
                format!("{what} in layer {index} of {count} (outermost first)"),
                accepted,
            )
        }
        other => other,
    }
}

impl ScenarioFile {
    /// The layers above the run's policy, validated: each needs a policy key, one strategy,
    /// their timeouts and throttles as a run's own; not with `occ` or browser tabs.
    pub(crate) fn layers(&self, server: &ServerModel) -> Result<Layers, ConfigError> {
        let Some(files) = self.layer.as_deref().filter(|l| !l.is_empty()) else {
            return Ok(Layers::default());
        };
        let count = files.len();
        if count > usize::from(u16::MAX) {
            return Err(invalid(
                "--layer",
                format!("{count} layers"),
                "accepted: at most 65535 layers above the run's own policy (a trace names each by its number)",
            ));
        }
        if server.is_occ() {
            return Err(invalid(
                "--layer",
                "given with --server occ",
                "accepted with any server but occ (whose clients make one write each, outside the call loop)",
            ));
        }
        if self.browser_keys().iter().any(|(_, set)| *set) {
            return Err(invalid(
                "--layer",
                "given with browser tabs",
                "accepted without the browser tabs' keys (--hidden, --visibility-switch, ...): a tab's pauses and timers are the innermost layer's alone",
            ));
        }
        let mut outer = Vec::with_capacity(count);
        for (i, file) in files.iter().enumerate() {
            outer.push(
                file.outer_layer()
                    .map_err(|e| about_layer(i + 1, count, e))?,
            );
        }
        Ok(Layers { outer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{simulate, Path};
    use crate::time::SimTime;

    #[test]
    fn the_estimates_count_every_layers_attempts_and_waits() {
        // 20 calls against a server down for good: 3 retries inside layers of 2 and 1, every
        // wait exactly the cap (fixed, 2 s and 1 s): 20 × 4 × 3 × 2 = 480 attempts, and each
        // call's 23 waits at most 2 s each.
        let text = "clients = 20\nstrategy = \"fixed\"\nbase = \"1s\"\ncap = \"1s\"\n\
                    retries = 3\n[server]\nmodel = \"down\"\n\
                    [[layer]]\nstrategy = \"fixed\"\nbase = \"2s\"\ncap = \"2s\"\nretries = 2\n\
                    [[layer]]\nstrategy = \"fixed\"\nbase = \"1s\"\ncap = \"1s\"\nretries = 1\n";
        let scenario = ScenarioFile::parse(text, Some("toml"))
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(scenario.tries_per_call(), 24);
        assert_eq!(scenario.attempts_per_run(), 480);
        let spec = scenario.run_spec(scenario.strategies[0]);
        let tally = simulate(&spec, Path::Auto);
        assert_eq!(tally.gave_up, 20);
        // By hand: an inner call is 3 waits of 1 s; a middle one 2 inner calls and 1 s
        // between, 7 s; the outer 3 middle calls and two 2 s waits, 25 s: the last refusal
        // at 25 s, within the horizon (24 tries, each with a wait of at most 2 s).
        let last = tally.refused_windows.counts().len() - 1;
        let start = tally.refused_windows.window_start(last);
        assert_eq!(start, SimTime::ZERO + SimDuration::from_secs(25));
        assert!(
            start <= SimTime::ZERO + scenario.horizon(),
            "{:?}",
            scenario.horizon()
        );
    }

    #[test]
    fn the_default_settle_counts_every_layers_retries_and_caps() {
        // Timeout 1 s, the run's own policy 2 retries with a 3 s cap: its call lasts at most
        // 3 x 1 + 2 x 3 = 9 s. A layer of 1 retry and a 10 s cap around it: 2 x 9 + 10 = 28 s;
        // another of 2 retries and a 4 s cap around that: 3 x 28 + 2 x 4 = 92 s. The settle
        // adds the 5 s hold, and Poisson calls keep starting until the outage's end (20 s)
        // plus the settle.
        let base = "arrivals = \"poisson\"\nrate = \"5/s\"\nduration = \"30s\"\n\
                    outage = \"10s..20s\"\ntimeout = \"1s\"\nstrategy = \"fixed\"\n\
                    base = \"3s\"\ncap = \"3s\"\nretries = 2\n\
                    [server]\nmodel = \"capacity\"\nworkers = 4\n";
        let inner = "[[layer]]\nstrategy = \"fixed\"\nbase = \"10s\"\ncap = \"10s\"\nretries = 1\n";
        let outer = "[[layer]]\nstrategy = \"fixed\"\nbase = \"4s\"\ncap = \"4s\"\nretries = 2\n";
        for (layers, settle) in [
            (String::new(), 9 + 5),
            (inner.to_string(), 28 + 5),
            (format!("{outer}{inner}"), 92 + 5),
        ] {
            let scenario = ScenarioFile::parse(&format!("{base}{layers}"), Some("toml"))
                .unwrap()
                .validate()
                .unwrap();
            assert_eq!(
                scenario.overload.settle,
                SimDuration::from_secs(settle),
                "{layers}"
            );
            let crate::workload::Arrivals::Poisson(schedule) = &scenario.overload.arrivals else {
                panic!("poisson");
            };
            assert_eq!(
                schedule.end,
                SimTime::ZERO + SimDuration::from_secs(20 + settle)
            );
        }
    }

    #[test]
    fn a_layers_text_read_back_is_the_same_layer() {
        let layer = |text: &str| -> Layer {
            text.parse::<LayerFile>()
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .outer_layer()
                .unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        for (given, text) in [
            // A budget's scope and a control's parameters that differ from its defaults are
            // kept; the defaults are left out.
            (
                "strategy=full-jitter retries=3 budget=token-bucket:scope=global",
                "strategy=full-jitter retries=3 base=1s cap=30s budget=token-bucket:scope=global",
            ),
            (
                "retries=2 budget=grpc:max_tokens=20,token_ratio=0.1",
                "strategy=full-jitter retries=2 base=1s cap=30s budget=grpc:max_tokens=20",
            ),
            (
                "retries=1 budget=aws-standard:cost=7,scope=global breaker=calls:open=10s,scope=global throttle=sre:k=3",
                "strategy=full-jitter retries=1 base=1s cap=30s \
                 budget=aws-standard:cost=7,scope=global breaker=calls:open=10s,scope=global \
                 throttle=sre:k=3",
            ),
            // A naive layer keeps its cap, which bounds the settle and the estimates.
            (
                "strategy=naive retries=2 cap=1m timeout=2500ms",
                "strategy=naive retries=2 base=1s cap=60s timeout=2.5s",
            ),
            (
                "strategy=exponential base=10ms multiplier=1.5 retry-probability=0.3 jitter-order=before-cap",
                "strategy=exponential retries=4 base=10ms cap=30s multiplier=1.5 \
                 retry-probability=0.3 jitter-order=before-cap",
            ),
            // A probability of more than nine decimals is written whole.
            (
                "retries=1 retry-probability=0.12345678912345",
                "strategy=full-jitter retries=1 base=1s cap=30s retry-probability=0.12345678912345",
            ),
            (
                "strategy=fixed retries=3 retry-probability=0",
                "strategy=fixed retries=3 base=1s cap=30s retry-probability=0",
            ),
            // A multiplier past what an integer holds is written as an exponent.
            (
                "strategy=exponential retries=1 multiplier=1e20",
                "strategy=exponential retries=1 base=1s cap=30s multiplier=1e20",
            ),
            // A preset's keys are written out.
            (
                "preset=aws-adaptive",
                "strategy=full-jitter retries=2 base=1s cap=20s budget=aws-standard \
                 throttle=aws-adaptive",
            ),
        ] {
            let first = layer(given);
            assert_eq!(first.text(), text, "{given}");
            assert_eq!(layer(&first.text()), first, "{given}");
        }
    }

    #[test]
    fn a_spec_reads_as_the_same_keys_a_file_takes() {
        let spec: LayerFile = "strategy=naive retries=3 base=10ms retry-probability=0.5 budget=token-bucket:scope=global"
            .parse()
            .unwrap();
        assert_eq!(spec.retries, Some(3));
        assert_eq!(spec.base, Some(SimDuration::from_millis(10)));
        assert_eq!(spec.retry_probability, Some(0.5));
        assert_eq!(spec.budget.as_deref(), Some("token-bucket:scope=global"));
        let e = "retries".parse::<LayerFile>().unwrap_err();
        assert!(e.contains("not key=value"), "{e}");
        let e = "colour=red".parse::<LayerFile>().unwrap_err();
        assert!(e.contains("colour"), "{e}");
    }
}
