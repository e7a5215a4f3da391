//! A config file with a `[sweep]` table: the scenario keys of [`ScenarioFile`] plus the grid.
//!
//! ```toml
//! clients = 1000          # the base scenario, as for a plain run
//! [sweep]
//! clients = [100, 1000, 10000]
//! strategy = "all"
//! base = "100ms..1s step 100ms"
//! seeds = 30
//! ```
//!
//! In `[sweep]` a parameter's value is a string written as on the command line, a number, or an
//! array of either (joined by commas); `seeds` is the number of replicates and `max_cells` the
//! cell limit. Any other key is an error naming the accepted ones. Reading only; no clap.

use std::path::Path;

use crate::config::{ConfigError, ScenarioFile};

use super::parameter::{parameter, parameter_names};
use super::SweepError;

/// What a sweep config file says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepFile {
    /// The scenario keys (everything outside `[sweep]`).
    pub base: ScenarioFile,
    /// `(parameter, values)` from `[sweep]`, in the file's order.
    pub grid: Vec<(String, String)>,
    /// `seeds` from `[sweep]`.
    pub seeds: Option<u64>,
    /// `max_cells` from `[sweep]`.
    pub max_cells: Option<u64>,
}

impl SweepFile {
    /// Reads a TOML (`.toml`) or JSON (`.json`) file.
    pub fn read(path: &Path) -> Result<SweepFile, SweepError> {
        let shown = path.display().to_string();
        let file_error = |message: String| {
            SweepError::Config(ConfigError::File {
                path: shown.clone(),
                message,
            })
        };
        let text = crate::input::read_to_string(path)
            .map_err(|e| file_error(format!("cannot read: {e}")))?;
        let json = path.extension().and_then(|e| e.to_str()) == Some("json");
        Self::parse(&text, json).map_err(|e| match e {
            SweepError::Config(ConfigError::File { message, .. }) => file_error(message),
            other => other,
        })
    }

    /// Parses file text; JSON when `json`, TOML otherwise.
    pub fn parse(text: &str, json: bool) -> Result<SweepFile, SweepError> {
        let syntax = |message: String| {
            SweepError::Config(ConfigError::File {
                path: String::new(),
                message,
            })
        };
        // The scenario keys are read as a plain run reads them; only `[sweep]` goes through
        // JSON values (TOML tables map onto them one to one). The scenario keys do not: JSON
        // has no NaN or infinity, so `multiplier = nan` would become null, read as unset.
        let (base, sweep) = if json {
            let mut root: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?;
            let sweep = root.remove("sweep");
            let base: ScenarioFile = serde_json::from_value(serde_json::Value::Object(root))
                .map_err(|e| syntax(e.to_string()))?;
            (base, sweep)
        } else {
            let mut table: toml::Table =
                toml::from_str(text).map_err(|e| syntax(crate::config::toml_message(&e)))?;
            let sweep = table
                .remove("sweep")
                .map(|t| serde_json::to_value(t).unwrap_or_default());
            let base: ScenarioFile = toml::Value::Table(table)
                .try_into()
                .map_err(|e| syntax(crate::config::toml_message(&e)))?;
            (base, sweep)
        };
        let mut file = SweepFile {
            base,
            ..Default::default()
        };
        let Some(sweep) = sweep else {
            return Ok(file);
        };
        let serde_json::Value::Object(entries) = sweep else {
            return Err(syntax("`sweep` must be a table of parameters".into()));
        };
        for (key, value) in entries {
            let whole = |value: &serde_json::Value| {
                value.as_u64().ok_or_else(|| SweepError::Setting {
                    field: "[sweep]",
                    value: format!("{key} = {value}"),
                    accepted: "accepted: a whole number".into(),
                })
            };
            match key.as_str() {
                "seeds" => file.seeds = Some(whole(&value)?),
                "max_cells" | "max-cells" => file.max_cells = Some(whole(&value)?),
                name => {
                    let Some(parameter) = parameter(name) else {
                        return Err(SweepError::UnknownParameter {
                            name: name.to_string(),
                            accepted: format!("{}, seeds, max_cells", parameter_names()),
                        });
                    };
                    let text = values_text(&value).ok_or_else(|| SweepError::Values {
                        parameter: parameter.name,
                        message: format!(
                            "`{value}` in [sweep]; write a string such as \"100,1000\", a number, or an array"
                        ),
                    })?;
                    file.grid.push((parameter.name.to_string(), text));
                }
            }
        }
        Ok(file)
    }
}

/// A `[sweep]` value as command-line text: strings as written, numbers in decimal, arrays
/// joined by commas.
fn values_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|item| match item {
                serde_json::Value::Array(_) => None,
                other => values_text(other),
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(",")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_and_json_give_the_same_grid() {
        let toml = SweepFile::parse(
            "clients = 50\n[sweep]\nclients = [100, 1000]\nbase = \"100ms..1s step 100ms\"\nstrategy = [\"fixed\", \"naive\"]\nseeds = 3\n",
            false,
        )
        .unwrap();
        let json = SweepFile::parse(
            r#"{"clients": 50, "sweep": {"clients": [100, 1000], "base": "100ms..1s step 100ms", "strategy": ["fixed", "naive"], "seeds": 3}}"#,
            true,
        )
        .unwrap();
        assert_eq!(toml, json);
        assert_eq!(toml.base.clients, Some(50));
        assert_eq!(toml.seeds, Some(3));
        assert!(toml.grid.contains(&("clients".into(), "100,1000".into())));
        assert!(toml
            .grid
            .contains(&("strategy".into(), "fixed,naive".into())));
    }

    #[test]
    fn unknown_keys_are_refused_inside_and_outside_the_table() {
        let e = SweepFile::parse("[sweep]\nclinets = [1]\n", false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`clinets`") && e.contains("accepted: strategy"),
            "{e}"
        );
        let e = SweepFile::parse("clinets = 1\n", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("clinets"), "{e}");
        let e = SweepFile::parse("[sweep]\nseeds = \"many\"\n", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("seeds") && e.contains("whole number"), "{e}");
        assert_eq!(
            SweepFile::parse("[sweep]\nrecover_at = \"5s\"\n", false)
                .unwrap()
                .grid,
            [("recover-at".to_string(), "5s".to_string())]
        );
    }
}
