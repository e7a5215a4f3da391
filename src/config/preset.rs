//! Named production clients (`--preset NAME`, config key `preset`): each sets the strategy,
//! retries, base, cap, multiplier, budget and throttle its source uses by default, or, where
//! the source has no default, the value its documentation's main example shows. What a preset
//! sets is a layer under the user's keys: **flags > config file > preset > herd-sim's
//! defaults**. Sources, versions and what our strategies cannot express exactly are in the
//! docs/retry-control.md ("Presets"). Data and layering only: no I/O.

use super::{invalid, ConfigError, ScenarioFile, StrategyList};
use crate::policy::Strategy;
use crate::time::SimDuration;

/// One named client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    /// The name `--preset` takes.
    pub name: &'static str,
    /// Its backoff, as the nearest of our strategies.
    pub strategy: Strategy,
    /// Retries after the first attempt.
    pub retries: u32,
    /// First delay, when the strategy uses one.
    pub base: Option<SimDuration>,
    /// Largest delay, when the source caps it.
    pub cap: Option<SimDuration>,
    /// Growth per retry, for the exponential ones.
    pub multiplier: Option<f64>,
    /// `--budget` text.
    pub budget: &'static str,
    /// `--throttle` text.
    pub throttle: &'static str,
    /// Where the values come from, in a few words (docs/retry-control.md has files and versions).
    pub source: &'static str,
}

const MS: u64 = 1_000_000;

/// Every preset, in the order `herd-sim presets` lists them.
pub const PRESETS: [Preset; 9] = [
    Preset {
        name: "aws-standard",
        strategy: Strategy::FullJitter,
        retries: 2,
        base: Some(SimDuration(1000 * MS)),
        cap: Some(SimDuration(20_000 * MS)),
        multiplier: Some(2.0),
        budget: "aws-standard",
        throttle: "none",
        source: "botocore retries/standard.py + quota.py (standard mode 2.0)",
    },
    Preset {
        name: "aws-adaptive",
        strategy: Strategy::FullJitter,
        retries: 2,
        base: Some(SimDuration(1000 * MS)),
        cap: Some(SimDuration(20_000 * MS)),
        multiplier: Some(2.0),
        budget: "aws-standard",
        throttle: "aws-adaptive",
        source: "aws-standard + botocore retries/adaptive.py, throttling.py, bucket.py",
    },
    Preset {
        name: "grpc",
        strategy: Strategy::FullJitter,
        retries: 3,
        base: Some(SimDuration(100 * MS)),
        cap: Some(SimDuration(1000 * MS)),
        multiplier: Some(2.0),
        budget: "grpc",
        throttle: "none",
        source: "gRPC A6 example retryPolicy (no defaults) + retryThrottling",
    },
    Preset {
        name: "envoy",
        strategy: Strategy::FullJitter,
        retries: 1,
        base: Some(SimDuration(25 * MS)),
        cap: Some(SimDuration(250 * MS)),
        multiplier: Some(2.0),
        budget: "envoy",
        throttle: "none",
        source: "Envoy router retries (1, 25 ms, 10x base) + retry_budget",
    },
    Preset {
        name: "finagle",
        strategy: Strategy::Naive,
        retries: 20,
        base: None,
        cap: None,
        multiplier: None,
        budget: "finagle",
        throttle: "none",
        source: "Finagle Retries.scala requeues (zero backoff) + RetryBudget",
    },
    Preset {
        name: "polly",
        strategy: Strategy::Fixed,
        retries: 3,
        base: Some(SimDuration(2000 * MS)),
        cap: None,
        multiplier: None,
        budget: "none",
        throttle: "none",
        source: "Polly v8 RetryStrategyOptions defaults",
    },
    Preset {
        name: "resilience4j",
        strategy: Strategy::Fixed,
        retries: 2,
        base: Some(SimDuration(500 * MS)),
        cap: None,
        multiplier: None,
        budget: "none",
        throttle: "none",
        source: "resilience4j RetryConfig defaults",
    },
    Preset {
        name: "axios-retry",
        strategy: Strategy::Naive,
        retries: 3,
        base: None,
        cap: None,
        multiplier: None,
        budget: "none",
        throttle: "none",
        source: "axios-retry DEFAULT_OPTIONS (retryDelay: noDelay)",
    },
    Preset {
        name: "tenacity",
        strategy: Strategy::FullJitter,
        retries: 6,
        base: Some(SimDuration(1000 * MS)),
        cap: Some(SimDuration(60_000 * MS)),
        multiplier: Some(2.0),
        budget: "none",
        throttle: "none",
        source: "tenacity README examples (no default stop or wait)",
    },
];

impl Preset {
    /// The preset called `name`, or an error listing them all.
    pub fn named(name: &str) -> Result<&'static Preset, ConfigError> {
        PRESETS
            .iter()
            .find(|p| p.name == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
                invalid("--preset", name, format!("accepted: {}", names.join(", ")))
            })
    }

    /// The keys the preset sets, as a scenario file.
    pub fn file(&self) -> ScenarioFile {
        ScenarioFile {
            strategy: Some(StrategyList(vec![self.strategy])),
            retries: Some(self.retries),
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            budget: Some(self.budget.to_string()),
            throttle: Some(self.throttle.to_string()),
            ..ScenarioFile::default()
        }
    }

    /// True when it sets a budget or a throttle (retry control, which `occ` does not take).
    pub fn controls(&self) -> bool {
        self.budget != "none" || self.throttle != "none"
    }
}

/// Every preset and what it sets, as `herd-sim presets` prints it: one aligned row each,
/// `-` where a preset leaves the key to the defaults (the strategy does not use it).
pub fn presets_table() -> String {
    let shown = |d: Option<SimDuration>| d.map_or("-".to_string(), |d| d.to_string());
    let mut rows = vec![[
        "preset",
        "strategy",
        "retries",
        "base",
        "cap",
        "multiplier",
        "budget",
        "throttle",
        "source",
    ]
    .map(str::to_string)
    .to_vec()];
    for p in &PRESETS {
        rows.push(vec![
            p.name.to_string(),
            p.strategy.name().to_string(),
            p.retries.to_string(),
            shown(p.base),
            shown(p.cap),
            p.multiplier.map_or("-".to_string(), |m| m.to_string()),
            p.budget.to_string(),
            p.throttle.to_string(),
            p.source.to_string(),
        ]);
    }
    // Left-aligned all through: the table is read across, preset by preset.
    crate::report::aligned(&rows, 9)
}

/// `file` with its preset, if any, laid under its own keys; a preset that sets retry control
/// against `--server occ` (which takes none) is refused, unless the user's own keys replace
/// both.
pub(super) fn expand(file: ScenarioFile) -> Result<ScenarioFile, ConfigError> {
    let Some(name) = file.preset.clone() else {
        return Ok(file);
    };
    let preset = Preset::named(&name)?;
    let occ = file
        .server
        .as_ref()
        .and_then(|s| s.model.as_deref())
        .is_some_and(|m| m.trim() == "occ");
    let budget_from_preset = file.budget.is_none() && preset.budget != "none";
    let throttle_from_preset = file.throttle.is_none() && preset.throttle != "none";
    if occ && (budget_from_preset || throttle_from_preset) {
        let without: Vec<&str> = PRESETS
            .iter()
            .filter(|p| !p.controls())
            .map(|p| p.name)
            .collect();
        let mut sets = Vec::new();
        if budget_from_preset {
            sets.push(format!("--budget {}", preset.budget));
        }
        if throttle_from_preset {
            sets.push(format!("--throttle {}", preset.throttle));
        }
        return Err(invalid(
            "--preset",
            preset.name,
            format!(
                "it sets {}, which --server occ does not take; accepted with occ: {}",
                sets.join(" and "),
                without.join(", ")
            ),
        ));
    }
    Ok(preset.file().overridden_by(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_over_the_file_over_the_preset_over_the_defaults() {
        // The file names grpc and sets retries; the flags set the base and replace the
        // preset by envoy (a flag's preset wins like any key).
        let file = ScenarioFile {
            preset: Some("grpc".into()),
            retries: Some(7),
            ..ScenarioFile::default()
        };
        let flags = ScenarioFile {
            base: Some(SimDuration(5 * MS)),
            ..ScenarioFile::default()
        };
        let merged = expand(file.clone().overridden_by(flags)).unwrap();
        assert_eq!(merged.retries, Some(7), "file over preset");
        assert_eq!(merged.base, Some(SimDuration(5 * MS)), "flag over preset");
        assert_eq!(
            merged.cap,
            Some(SimDuration(1000 * MS)),
            "preset over default"
        );
        assert_eq!(merged.budget.as_deref(), Some("grpc"));
        assert_eq!(merged.seed, None, "left to the defaults");
        let envoy = ScenarioFile {
            preset: Some("envoy".into()),
            ..ScenarioFile::default()
        };
        let merged = expand(file.overridden_by(envoy)).unwrap();
        assert_eq!(merged.budget.as_deref(), Some("envoy"));
        assert_eq!(
            merged.retries,
            Some(7),
            "the file's key still beats any preset"
        );
        // Every preset validates to what it lists.
        for p in &PRESETS {
            let s = expand(ScenarioFile {
                preset: Some(p.name.into()),
                server: Some(super::super::ServerFile {
                    model: Some("flaky".into()),
                    ..Default::default()
                }),
                ..ScenarioFile::default()
            })
            .unwrap()
            .validate()
            .unwrap();
            assert_eq!(
                (s.strategies.clone(), s.retries),
                (vec![p.strategy], p.retries)
            );
            assert_eq!(s.controls.budget.name(), p.budget, "{}", p.name);
            assert_eq!(s.controls.throttle.name(), p.throttle, "{}", p.name);
            if let Some(base) = p.base {
                assert_eq!(s.backoff.base, base);
            }
        }
    }

    #[test]
    fn unknown_presets_and_occ_with_controls_are_refused_naming_the_flag() {
        let e = expand(ScenarioFile {
            preset: Some("hystrix".into()),
            ..ScenarioFile::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--preset") && e.contains("hystrix"), "{e}");
        assert!(
            e.contains(
                "accepted: aws-standard, aws-adaptive, grpc, envoy, finagle, polly, \
                 resilience4j, axios-retry, tenacity"
            ),
            "{e}"
        );
        let occ = |budget: Option<&str>| ScenarioFile {
            preset: Some("grpc".into()),
            budget: budget.map(str::to_string),
            server: Some(super::super::ServerFile {
                model: Some("occ".into()),
                ..Default::default()
            }),
            ..ScenarioFile::default()
        };
        let e = expand(occ(None)).unwrap_err().to_string();
        assert!(
            e.contains("--preset") && e.contains("--server occ does not take"),
            "{e}"
        );
        assert!(e.contains("accepted with occ: polly, resilience4j"), "{e}");
        // The user's own `budget = "none"` replaces the preset's: accepted.
        assert!(expand(occ(Some("none"))).is_ok());
    }
}
