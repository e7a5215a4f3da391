//! A probe: one small run that shows a figure, written once as the herd-sim flags a user can
//! replay (`herd-sim --clients 1000 --strategy exponential ... --seed N`) and run through the
//! sweep layer ([`crate::sweep::Plan`]), so that lint and tune use the sweep's runner, seed
//! derivation and metric columns rather than a runner of their own. No I/O.

use std::collections::BTreeMap;

use crate::config::{Scenario, ScenarioFile};
use crate::policy::{Hints, JitterOrder, Policy, Strategy};
use crate::rng::ClientSeeds;
use crate::sweep::parameter::parameter;
use crate::sweep::{Plan, SweepError, SweepSpec};
use crate::time::SimDuration;

/// The flags of a run, in the order written; the one text both replayed and run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Probe {
    flags: Vec<(&'static str, String)>,
}

/// Flags whose config key lives in the `[server]` table.
const SERVER_FLAGS: [(&str, &str); 7] = [
    ("server", "model"),
    ("recover-at", "recover_at"),
    ("limit", "limit"),
    ("window", "window"),
    ("store", "store"),
    ("clients-per-address", "clients_per_address"),
    ("failure-rate", "failure_rate"),
];

/// Flags whose values are numbers in a config file (the rest are strings).
const NUMBER_FLAGS: [&str; 8] = [
    "retry-probability",
    "clients",
    "retries",
    "multiplier",
    "seed",
    "limit",
    "clients-per-address",
    "failure-rate",
];

impl Probe {
    /// No flags: herd-sim's default scenario.
    pub fn new() -> Probe {
        Probe::default()
    }

    /// This probe with `--flag value` (replacing an earlier value of the same flag).
    pub fn with(mut self, flag: &'static str, value: impl ToString) -> Probe {
        let value = value.to_string();
        match self.flags.iter_mut().find(|(f, _)| *f == flag) {
            Some(slot) => slot.1 = value,
            None => self.flags.push((flag, value)),
        }
        self
    }

    /// This probe with every flag of `policy` ([`PolicyFlags`]) added.
    pub fn with_policy(mut self, policy: &PolicyFlags) -> Probe {
        for (flag, value) in &policy.flags {
            self = self.with(flag, value);
        }
        self
    }

    /// The value of `flag`, if given.
    pub fn get(&self, flag: &str) -> Option<&str> {
        self.flags
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }

    /// The command line that replays this probe: `herd-sim --flag value ...`.
    pub fn command(&self) -> String {
        let mut line = String::from("herd-sim");
        for (flag, value) in &self.flags {
            line.push_str(&format!(" --{flag} {}", shell_word(value)));
        }
        line
    }

    /// The same scenario as a config file would give it (through TOML, so that every value
    /// is read by the same code as a user's file).
    pub fn file(&self) -> Result<ScenarioFile, SweepError> {
        let mut top = String::new();
        let mut server = String::new();
        for (flag, value) in &self.flags {
            let value_text = match NUMBER_FLAGS.contains(flag) {
                true => value.clone(),
                false => serde_json::to_string(value).unwrap_or_default(),
            };
            match SERVER_FLAGS.iter().find(|(f, _)| f == flag) {
                Some((_, key)) => server.push_str(&format!("{key} = {value_text}\n")),
                None => top.push_str(&format!("{} = {value_text}\n", flag.replace('-', "_"))),
            }
        }
        if !server.is_empty() {
            top.push_str("[server]\n");
            top.push_str(&server);
        }
        ScenarioFile::parse(&top, Some("toml")).map_err(|message| {
            SweepError::Config(crate::config::ConfigError::Invalid {
                field: "probe",
                value: self.command(),
                accepted: message,
            })
        })
    }

    /// Runs this probe once through the sweep layer: the run seed is the sweep's replicate 0
    /// of this cell under `--seed` (or 2015), and the command [`Measured::command`] gives
    /// names it, so the figures are exactly what the command prints.
    pub fn measure(&self, threads: Option<usize>) -> Result<Measured, SweepError> {
        let plan = Plan::new(SweepSpec {
            base: self.file()?,
            seeds: 1,
            threads,
            ..Default::default()
        })?;
        let header = plan.header();
        let fields = plan.row(0)?;
        let metrics: BTreeMap<String, String> = header.into_iter().zip(fields).collect();
        let seed = metrics
            .get("seed")
            .and_then(|s| s.parse().ok())
            .unwrap_or_default();
        Ok(Measured {
            probe: self.clone().with("seed", seed),
            seed,
            metrics,
        })
    }
}

/// A shell word: as it is when it holds nothing a shell reads specially, else single-quoted.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:,=/@".contains(c));
    match plain {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

/// The figures of one probe run.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The probe with the run's own `--seed`.
    pub probe: Probe,
    /// The run seed.
    pub seed: u64,
    /// Every column of the sweep row (parameters and metrics), by name.
    pub metrics: BTreeMap<String, String>,
}

impl Measured {
    /// A metric as a number; `None` when the run has no such column or it is empty.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).and_then(|v| v.parse().ok())
    }

    /// The command that replays this run.
    pub fn command(&self) -> String {
        self.probe.command()
    }
}

/// A retry policy as the flags that set it, read from a validated scenario: strategy,
/// retries, the curve a strategy reads, and any budget, breaker and throttle. A preset's
/// values come out as plain flags, so a probe replays without it.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyFlags {
    /// The strategy.
    pub strategy: Strategy,
    /// The policy as the engine runs it.
    pub policy: Policy,
    /// `(flag, value)`, in the order written.
    pub flags: Vec<(&'static str, String)>,
    /// The budget, breaker and throttle flags alone (empty when there are none).
    pub controls: Vec<(&'static str, String)>,
}

impl PolicyFlags {
    /// The policy of `strategy` in `scenario`.
    pub fn of(scenario: &Scenario, strategy: Strategy) -> PolicyFlags {
        let b = scenario.backoff;
        let mut flags: Vec<(&'static str, String)> = vec![
            ("strategy", strategy.name().to_string()),
            ("retries", scenario.retries.to_string()),
        ];
        if strategy != Strategy::Naive {
            flags.push(("base", b.base.to_string()));
            flags.push(("cap", b.cap.to_string()));
        }
        if !matches!(
            strategy,
            Strategy::Naive | Strategy::Fixed | Strategy::DecorrelatedJitter
        ) {
            flags.push(("multiplier", b.multiplier.to_string()));
        }
        let draws_below_curve = matches!(
            strategy,
            Strategy::FullJitter | Strategy::EqualJitter | Strategy::RetryAfterJitter
        );
        if draws_below_curve && b.jitter_order == JitterOrder::BeforeCap {
            flags.push(("jitter-order", b.jitter_order.name().to_string()));
        }
        if !scenario.retry_chance.is_always() {
            flags.push((
                "retry-probability",
                scenario.retry_chance.probability().to_string(),
            ));
        }
        let mut controls = Vec::new();
        for name in ["budget", "breaker", "throttle"] {
            let Some(p) = parameter(name) else { continue };
            let text = (p.get)(scenario);
            if text != "none" && !text.is_empty() {
                controls.push((p.name, text));
            }
        }
        PolicyFlags {
            strategy,
            policy: Policy {
                strategy,
                backoff: b,
                max_retries: scenario.retries,
                retry_chance: scenario.retry_chance,
            },
            flags,
            controls,
        }
    }

    /// The schedule flags and the controls.
    pub fn with_controls(&self) -> PolicyFlags {
        let mut all = self.clone();
        all.flags.extend(self.controls.iter().cloned());
        all
    }

    /// True when a budget, breaker or throttle bounds the retries.
    pub fn is_controlled(&self) -> bool {
        !self.controls.is_empty()
    }
}

/// Every wait of every client of a herd run against a server that refuses everything: client
/// `i`'s waits before its retries 1..R, drawn exactly as the run of `seed` draws them (client
/// seeds from [`ClientSeeds`], no hints, each wait fed back as the previous one). A test
/// checks that the arrival times they give bin into the run's own peak and windows.
pub fn herd_waits(policy: &Policy, clients: u32, seed: u64) -> Vec<Vec<SimDuration>> {
    let mut seeds = ClientSeeds::starting_at(seed, 0);
    let none = Hints::default();
    (0..clients)
        .map(|_| {
            let mut rng = seeds.next_rng();
            let mut previous = policy.backoff.base;
            let mut waits = Vec::with_capacity(policy.max_retries as usize);
            while let crate::policy::Decision::Retry { delay, .. } =
                policy.decide(waits.len() as u32, previous, &none, &mut rng)
            {
                waits.push(delay);
                previous = delay;
            }
            waits
        })
        .collect()
}
