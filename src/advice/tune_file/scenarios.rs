//! The `scenario` table: each scenario a candidate is measured in, from a herd-sim config
//! relative to the tune file, inline keys, or both ([`TuneScenario`]). Separate because it is
//! the one part of the file that reads other files.

use std::path::Path;

use super::{invalid, TuneError};
use crate::config::ScenarioFile;

/// One scenario the candidates are run in.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneScenario {
    /// Its name, as constraints and objectives write it (`goodput_pct@flaky`).
    pub name: String,
    /// The scenario: the config file named, with the inline keys over it.
    pub file: ScenarioFile,
}

pub(super) fn scenarios(
    value: Option<&toml::Value>,
    folder: &Path,
) -> Result<Vec<TuneScenario>, TuneError> {
    let example =
        "[[scenario]] tables, each with name = \"...\" and config = \"FILE\" or a scenario's keys";
    let items = match value {
        Some(toml::Value::Array(items)) if !items.is_empty() => items,
        Some(other) => {
            return Err(invalid(
                "scenario",
                other.to_string(),
                "not a list of tables",
                example,
            ))
        }
        None => return Err(invalid("scenario", "(none)", "no scenario", example)),
    };
    let mut scenarios: Vec<TuneScenario> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("scenario[{i}]");
        let Some(table) = item.as_table() else {
            return Err(invalid(field, item.to_string(), "not a table", example));
        };
        let mut table = table.clone();
        let name = match table.remove("name") {
            Some(toml::Value::String(name)) => name,
            other => {
                return Err(invalid(
                    format!("{field}.name"),
                    other.map_or("(none)".to_string(), |v| v.to_string()),
                    "missing or not a string",
                    "a name of letters, digits, - and _, e.g. name = \"flaky\"",
                ))
            }
        };
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !plain {
            return Err(invalid(
                format!("{field}.name"),
                format!("\"{name}\""),
                "not a plain name",
                "letters, digits, - and _, e.g. name = \"flaky\"",
            ));
        }
        if scenarios.iter().any(|s| s.name == name) {
            return Err(invalid(
                format!("{field}.name"),
                format!("\"{name}\""),
                "given to two scenarios",
                "a different name for each scenario",
            ));
        }
        let config = match table.remove("config") {
            None => ScenarioFile::default(),
            Some(toml::Value::String(path)) => {
                let path = folder.join(path);
                ScenarioFile::read(&path).map_err(|e| TuneError::File {
                    path: path.display().to_string(),
                    message: format!("scenario `{name}`: {e}"),
                })?
            }
            Some(other) => {
                return Err(invalid(
                    format!("{field}.config"),
                    other.to_string(),
                    "not a path",
                    "a herd-sim config file, relative to the tune file",
                ))
            }
        };
        let inline: ScenarioFile =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| {
                    invalid(
                        format!("scenario `{name}`"),
                        "(its keys)",
                        e.message().trim().to_string(),
                        "the keys of a herd-sim config file (docs/configuration.md)",
                    )
                })?;
        scenarios.push(TuneScenario {
            name,
            file: config.overridden_by(inline),
        });
    }
    Ok(scenarios)
}
