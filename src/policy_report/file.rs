//! A policy report file as written (TOML, or JSON by extension): scenarios, policies and the
//! bands their figures must stay in. Like a fixture file: every key named, unknown keys
//! refused, ids unique; like a config file: a scenario is a config file (its path relative
//! to the report file) with keys laid over it, a policy the keys of a config file. Reading
//! only.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{ConfigError, ScenarioFile};

use super::ReportError;

/// One scenario: a config file and keys over it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioEntry {
    /// Unique name, the report's row label.
    pub id: String,
    /// The config file, as written (relative to the report file).
    pub config: Option<String>,
    /// The scenario: the config file with the entry's other keys over it.
    pub file: ScenarioFile,
}

/// One policy: the keys of a config file laid over every scenario (`strategy`, `retries`,
/// `base`, `cap`, `budget`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyEntry {
    /// Unique name, the report's column label.
    pub id: String,
    /// The keys, as a scenario file.
    pub keys: ScenarioFile,
    /// The keys as written, `key = value` each, for the report's record.
    pub written: Vec<String>,
}

/// Where a figure must be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expected {
    /// Within `[lo, hi]`.
    Band {
        /// Lowest accepted.
        lo: f64,
        /// Highest accepted.
        hi: f64,
    },
    /// Within this much of the committed report's value.
    Tolerance(f64),
}

/// A band on one metric, for some or all scenarios and policies.
#[derive(Clone, Debug, PartialEq)]
pub struct BandEntry {
    /// A sweep metric column (`goodput_pct`, `peak`, …).
    pub metric: String,
    /// The scenario it applies to; every scenario when `None`.
    pub scenario: Option<String>,
    /// The policy it applies to; every policy when `None`.
    pub policy: Option<String>,
    /// The band.
    pub expected: Expected,
}

/// A report file, read and checked for shape (the scenarios are validated when planned).
#[derive(Clone, Debug, PartialEq)]
pub struct ReportFile {
    /// The report's title.
    pub title: String,
    /// Seeds a cell (replicates, derived as a sweep derives them).
    pub seeds: u64,
    /// The scenarios, the report's rows, in order.
    pub scenarios: Vec<ScenarioEntry>,
    /// The policies, in order.
    pub policies: Vec<PolicyEntry>,
    /// The bands, in order.
    pub bands: Vec<BandEntry>,
    /// The file's path, as given.
    pub path: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    title: Option<String>,
    seeds: Option<u64>,
    scenarios: Vec<toml::Table>,
    policies: Vec<toml::Table>,
    #[serde(default)]
    bands: Vec<WrittenBand>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenBand {
    metric: String,
    scenario: Option<String>,
    policy: Option<String>,
    band: Option<Vec<f64>>,
    tolerance: Option<f64>,
}

/// Most seeds a cell.
pub const MAX_REPORT_SEEDS: u64 = 1000;

fn invalid(
    path: &Path,
    field: String,
    value: impl std::fmt::Display,
    accepted: impl Into<String>,
) -> ReportError {
    ReportError::Invalid {
        path: path.display().to_string(),
        field,
        value: value.to_string(),
        accepted: accepted.into(),
    }
}

impl ReportFile {
    /// Reads and checks `path`.
    pub fn read(path: &Path) -> Result<ReportFile, ReportError> {
        let shown = path.display().to_string();
        let file_error = |message: String| {
            ReportError::from(ConfigError::File {
                path: shown.clone(),
                message,
            })
        };
        let text = crate::input::read_to_string(path)
            .map_err(|e| file_error(format!("cannot read: {e}")))?;
        let json = path.extension().and_then(|e| e.to_str()) == Some("json");
        let written: Written = if json {
            serde_json::from_str(&text).map_err(|e| file_error(e.to_string()))?
        } else {
            toml::from_str(&text).map_err(|e| file_error(one_line(&e.to_string())))?
        };
        let folder = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let seeds = written.seeds.unwrap_or(3);
        if seeds == 0 || seeds > MAX_REPORT_SEEDS {
            return Err(invalid(
                path,
                "seeds".into(),
                seeds,
                format!("accepted: 1 to {MAX_REPORT_SEEDS}"),
            ));
        }
        if written.scenarios.is_empty() || written.policies.is_empty() {
            return Err(file_error(
                "a report names at least one scenario and one policy".into(),
            ));
        }
        let mut scenarios = Vec::new();
        for (i, table) in written.scenarios.into_iter().enumerate() {
            let (id, mut rest) = take_id(path, table, &format!("scenarios[{i}]"))?;
            let config = match rest.remove("config") {
                None => None,
                Some(toml::Value::String(s)) => Some(s),
                Some(other) => {
                    return Err(invalid(
                        path,
                        format!("scenarios[{i}].config"),
                        other,
                        "accepted: a path, relative to the report file",
                    ))
                }
            };
            let over = keys(path, rest, &format!("scenarios[{i}]"))?.0;
            let base = match &config {
                Some(c) => ScenarioFile::read(&folder.join(c))?,
                None => ScenarioFile::default(),
            };
            scenarios.push(ScenarioEntry {
                id,
                config,
                file: base.overridden_by(over),
            });
        }
        let mut policies = Vec::new();
        for (i, table) in written.policies.into_iter().enumerate() {
            let (id, rest) = take_id(path, table, &format!("policies[{i}]"))?;
            let (keys, written) = keys(path, rest, &format!("policies[{i}]"))?;
            policies.push(PolicyEntry { id, keys, written });
        }
        unique(path, scenarios.iter().map(|s| &s.id), "scenarios")?;
        unique(path, policies.iter().map(|p| &p.id), "policies")?;
        let mut bands = Vec::new();
        for (i, b) in written.bands.into_iter().enumerate() {
            let expected = match (b.band, b.tolerance) {
                (Some(band), None) => match band[..] {
                    [lo, hi] if lo.is_finite() && hi.is_finite() && lo <= hi => Expected::Band { lo, hi },
                    _ => {
                        return Err(invalid(
                            path,
                            format!("bands[{i}].band"),
                            format!("{band:?}"),
                            "accepted: [lo, hi], two finite numbers with lo <= hi",
                        ))
                    }
                },
                (None, Some(t)) if t.is_finite() && t >= 0.0 => Expected::Tolerance(t),
                (None, Some(t)) => {
                    return Err(invalid(path, format!("bands[{i}].tolerance"), t, "accepted: a finite number, 0 or more"))
                }
                _ => {
                    return Err(invalid(
                        path,
                        format!("bands[{i}]"),
                        &b.metric,
                        "accepted: exactly one of band = [lo, hi] or tolerance = T (around the committed value)",
                    ))
                }
            };
            for (key, named, list) in [
                (
                    "scenario",
                    &b.scenario,
                    scenarios.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
                ),
                (
                    "policy",
                    &b.policy,
                    policies.iter().map(|p| p.id.as_str()).collect(),
                ),
            ] {
                if let Some(n) = named {
                    if !list.contains(&n.as_str()) {
                        return Err(invalid(
                            path,
                            format!("bands[{i}].{key}"),
                            n,
                            format!("accepted: one of {}", list.join(", ")),
                        ));
                    }
                }
            }
            bands.push(BandEntry {
                metric: b.metric,
                scenario: b.scenario,
                policy: b.policy,
                expected,
            });
        }
        Ok(ReportFile {
            title: written
                .title
                .unwrap_or_else(|| "Retry policy report".into()),
            seeds,
            scenarios,
            policies,
            bands,
            path: path.to_path_buf(),
        })
    }
}

fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn take_id(
    path: &Path,
    mut table: toml::Table,
    at: &str,
) -> Result<(String, toml::Table), ReportError> {
    match table.remove("id") {
        Some(toml::Value::String(id))
            if !id.is_empty() && !id.contains('|') && !id.chars().any(char::is_control) =>
        {
            Ok((id, table))
        }
        Some(other) => Err(invalid(
            path,
            format!("{at}.id"),
            other,
            "accepted: a non-empty name without `|`",
        )),
        None => Err(invalid(
            path,
            format!("{at}.id"),
            "(missing)",
            "accepted: a non-empty name",
        )),
    }
}

/// The keys of a config file, laid over a scenario; an unknown key is refused as in a
/// config file.
fn keys(
    path: &Path,
    table: toml::Table,
    at: &str,
) -> Result<(ScenarioFile, Vec<String>), ReportError> {
    let written = table.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    let file =
        ScenarioFile::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::File {
            path: path.display().to_string(),
            message: format!("{at}: {}", one_line(&e.to_string())),
        })?;
    Ok((file, written))
}

fn unique<'a>(
    path: &Path,
    ids: impl Iterator<Item = &'a String>,
    what: &str,
) -> Result<(), ReportError> {
    let mut seen = std::collections::BTreeSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(invalid(
                path,
                format!("{what}[].id"),
                id,
                "accepted: names used once",
            ));
        }
    }
    Ok(())
}
