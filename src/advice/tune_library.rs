//! The recommended point as the configuration of the real library, ready to paste: the
//! herd-sim keys (a config file's, which `--config` reads back), gRPC's service config
//! (`retryThrottling` {`maxTokens`, `tokenRatio`} and a `retryPolicy`, grpc/proposal
//! A6-client-retries.md), Envoy's `retry_budget` ({`budget_percent`, `min_retry_concurrency`}
//! in a cluster's `circuit_breakers.thresholds`, with the route's `retry_policy`), Finagle's
//! `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)` and the AWS SDKs' shared-config
//! `retry_mode` and `max_attempts`. Each library's block is given when the policy uses its
//! control (a gRPC budget gives the gRPC block, and so on); docs/advice.md cites the sources
//! and units. No I/O.

use crate::config::{LayerFile, Scenario, ScenarioFile};
use crate::policy::control::{Budget, Throttle};
use crate::policy::Strategy;
use crate::sweep::parameter::{parameter, Kind};
use crate::time::SimDuration;

/// One block to paste: the library's name and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// `herd-sim`, `grpc`, `envoy`, `finagle` or `aws`.
    pub library: &'static str,
    /// What to paste, lines ending in a newline.
    pub text: String,
}

/// A duration in seconds as protobuf's JSON and YAML write one: `0.1s`, `1s`.
fn proto_seconds(d: SimDuration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// A number as the shortest text that reads back exactly: `10`, `0.1`.
fn number(x: f64) -> String {
    format!("{x}")
}

/// The herd-sim config keys of `grid` (`(sweep parameter, value)`) laid over `base`: a TOML
/// fragment that `--config` reads, numbers bare, the rest quoted, each key where the config
/// takes it: a scenario key at the top, a server key (`workers`, `service_time`, ...) under
/// `[server]`. A parameter that sets no key of its own name is written as the keys it
/// changed, as they ran: `outage-duration` the scenario's `outage` with that length (its
/// start kept), `restart-interval` the pool's `rolling_restart`, `think-time` the base's
/// distribution at that mean (`exp:250ms`), `layer-retries` every `[[layer]]` of `base` with
/// those retries, after the other keys.
pub fn herd_sim_keys(base: &ScenarioFile, grid: &[(String, String)]) -> String {
    let mut file = base.clone();
    for (name, value) in grid {
        let Some(p) = parameter(name) else { continue };
        if let Ok(value) = p.parse_value(value) {
            let _ = p.apply(&mut file, &value);
        }
    }
    let ran = table_of(&file);
    let mut text = String::new();
    let mut server = String::new();
    let mut tables = String::new();
    for (name, value) in grid {
        let Some(p) = parameter(name) else { continue };
        match (p.name, &file.think_time, &file.layer) {
            ("think-time", Some(think), _) => {
                text.push_str(&format!(
                    "think_time = {}\n",
                    serde_json::json!(think.to_string())
                ));
                continue;
            }
            ("layer-retries", _, Some(layer)) => {
                #[derive(serde::Serialize)]
                struct Layers<'a> {
                    layer: &'a [LayerFile],
                }
                tables = toml::to_string(&Layers { layer }).unwrap_or_default();
                continue;
            }
            _ => {}
        }
        let key = p.name.replace('-', "_");
        let bare = matches!(p.kind, Kind::Whole | Kind::Decimal) && value.parse::<f64>().is_ok();
        let as_given = match bare {
            true => format!("{key} = {value}\n"),
            false => format!("{key} = {}\n", serde_json::json!(value)),
        };
        for (table, changed) in keys_set_by(p, value, base) {
            let line = match changed == key {
                true => as_given.clone(),
                false => {
                    let within = match table {
                        Some(t) => ran.get(t).and_then(|t| t.get(&changed)),
                        None => ran.get(&changed),
                    };
                    match within {
                        Some(v) => format!("{changed} = {v}\n"),
                        None => continue,
                    }
                }
            };
            match table {
                Some(_) => server.push_str(&line),
                None => text.push_str(&line),
            }
        }
    }
    if !server.is_empty() {
        text.push_str("\n[server]\n");
        text.push_str(&server);
    }
    if !tables.is_empty() && !text.is_empty() {
        text.push('\n');
    }
    text + &tables
}

/// `file` as a TOML table, its unset keys left out.
fn table_of(file: &ScenarioFile) -> toml::Table {
    match toml::Value::try_from(file) {
        Ok(toml::Value::Table(table)) => table,
        _ => toml::Table::new(),
    }
}

/// The keys parameter `p` at `value` sets, each with the table it is in (`Some("server")`)
/// or at the top (`None`): those it changes in `base`, and those it sets in an empty scenario
/// (so a key `base` already has at that value is still written). Its own name when it changes
/// nothing, as a parameter whose value cannot apply was written before.
fn keys_set_by(
    p: &'static crate::sweep::parameter::Parameter,
    value: &str,
    base: &ScenarioFile,
) -> Vec<(Option<&'static str>, String)> {
    let mut keys: Vec<(Option<&'static str>, String)> = Vec::new();
    let Ok(value) = p.parse_value(value) else {
        return vec![(None, p.name.replace('-', "_"))];
    };
    for start in [base.clone(), ScenarioFile::default()] {
        let before = table_of(&start);
        let mut after = start;
        if p.apply(&mut after, &value).is_err() {
            continue;
        }
        for (key, now) in table_of(&after) {
            let was = before.get(&key);
            match (&now, was) {
                (toml::Value::Table(inner), Some(toml::Value::Table(was))) if key == "server" => {
                    for (k, v) in inner {
                        if was.get(k) != Some(v) && !keys.contains(&(Some("server"), k.clone())) {
                            keys.push((Some("server"), k.clone()));
                        }
                    }
                }
                (toml::Value::Table(inner), None) if key == "server" => {
                    for k in inner.keys() {
                        if !keys.contains(&(Some("server"), k.clone())) {
                            keys.push((Some("server"), k.clone()));
                        }
                    }
                }
                _ if was != Some(&now) && !keys.contains(&(None, key.clone())) => {
                    keys.push((None, key));
                }
                _ => {}
            }
        }
    }
    if keys.is_empty() {
        keys.push((None, p.name.replace('-', "_")));
    }
    keys
}

/// The snippets of the policy `scenario` runs (the recommended candidate laid over the first
/// scenario and validated), `keys` its herd-sim keys.
pub fn snippets(scenario: &Scenario, keys: &str) -> Vec<Snippet> {
    let mut out = vec![Snippet {
        library: "herd-sim",
        text: keys.to_string(),
    }];
    let b = scenario.backoff;
    let retries = scenario.retries;
    let strategy = scenario.strategies.first().copied();
    let controls = &scenario.controls;
    if let Budget::Grpc {
        max_tokens,
        token_ratio,
    } = controls.budget
    {
        let mut text = String::from("{\n");
        text.push_str(&format!(
            "  \"retryThrottling\": {{\"maxTokens\": {}, \"tokenRatio\": {}}}",
            number(max_tokens as f64 / 1000.0),
            number(token_ratio as f64 / 1000.0)
        ));
        // A6's backoff is full jitter on an exponential curve; another strategy has no
        // retryPolicy that matches it.
        if strategy == Some(Strategy::FullJitter) {
            text.push_str(&format!(
                ",\n  \"methodConfig\": [{{\"name\": [{{}}], \"retryPolicy\": {{\"maxAttempts\": {}, \"initialBackoff\": \"{}\", \"maxBackoff\": \"{}\", \"backoffMultiplier\": {}, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}}}]",
                retries + 1,
                proto_seconds(b.base),
                proto_seconds(b.cap),
                number(b.multiplier)
            ));
        }
        text.push_str("\n}\n");
        if strategy == Some(Strategy::FullJitter) && retries + 1 > 5 {
            text.push_str(&format!(
                "// maxAttempts {} is above 5: gRPC treats it as 5 (A6)\n",
                retries + 1
            ));
        }
        out.push(Snippet {
            library: "grpc",
            text,
        });
    }
    // Without a control, a full-jitter curve is still each library's own backoff: gRPC's
    // retryPolicy (A6: random(0, min(initialBackoff × multiplier^(n−1), maxBackoff))) and
    // Envoy's retry_back_off (fully jittered, the multiplier fixed at 2).
    if controls.budget == Budget::None
        && controls.throttle == Throttle::None
        && strategy == Some(Strategy::FullJitter)
    {
        let mut text = format!(
            "{{\n  \"methodConfig\": [{{\"name\": [{{}}], \"retryPolicy\": {{\"maxAttempts\": {}, \"initialBackoff\": \"{}\", \"maxBackoff\": \"{}\", \"backoffMultiplier\": {}, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}}}]\n}}\n",
            retries + 1,
            proto_seconds(b.base),
            proto_seconds(b.cap),
            number(b.multiplier)
        );
        if retries + 1 > 5 {
            text.push_str(&format!(
                "// maxAttempts {} is above 5: gRPC treats it as 5 (A6)\n",
                retries + 1
            ));
        }
        out.push(Snippet {
            library: "grpc",
            text,
        });
        if b.multiplier == 2.0 {
            out.push(Snippet {
                library: "envoy",
                text: format!(
                    "# route\nretry_policy:\n  retry_on: 5xx\n  num_retries: {retries}\n  retry_back_off:\n    base_interval: {}\n    max_interval: {}\n",
                    proto_seconds(b.base),
                    proto_seconds(b.cap)
                ),
            });
        }
    }
    if let Budget::Envoy {
        percent,
        min_concurrency,
    } = controls.budget
    {
        let mut text = format!(
            "# cluster\ncircuit_breakers:\n  thresholds:\n  - priority: DEFAULT\n    retry_budget:\n      budget_percent:\n        value: {}\n      min_retry_concurrency: {min_concurrency}\n",
            number_with_point(percent)
        );
        text.push_str(&format!(
            "# route\nretry_policy:\n  retry_on: 5xx\n  num_retries: {retries}\n"
        ));
        if strategy == Some(Strategy::FullJitter) {
            text.push_str(&format!(
                "  retry_back_off:\n    base_interval: {}\n    max_interval: {}\n",
                proto_seconds(b.base),
                proto_seconds(b.cap)
            ));
        }
        out.push(Snippet {
            library: "envoy",
            text,
        });
    }
    if let Budget::Finagle {
        ttl,
        min_per_s,
        percent,
    } = controls.budget
    {
        out.push(Snippet {
            library: "finagle",
            text: format!(
                "RetryBudget(ttl = Duration.fromSeconds({}), minRetriesPerSec = {min_per_s}, percentCanRetry = {})\n",
                ttl.as_nanos() / 1_000_000_000,
                number(percent / 100.0)
            ),
        });
    }
    let aws_mode = match (controls.budget, controls.throttle) {
        (_, Throttle::AwsAdaptive { .. }) => Some("adaptive"),
        (Budget::AwsStandard { .. }, _) => Some("standard"),
        _ => None,
    };
    if let Some(mode) = aws_mode {
        out.push(Snippet {
            library: "aws",
            text: format!(
                "[default]\nretry_mode = {mode}\nmax_attempts = {}\n",
                retries + 1
            ),
        });
    }
    out
}

/// `20` as `20.0`: Envoy's `budget_percent` is a double.
fn number_with_point(x: f64) -> String {
    let text = number(x);
    match text.contains('.') {
        true => text,
        false => format!("{text}.0"),
    }
}

/// The scenario `grid` gives over `base`, validated (the tuner validated it already).
pub fn resolve(base: &ScenarioFile, grid: &[(String, String)]) -> Option<Scenario> {
    let mut file = base.clone();
    for (name, value) in grid {
        let p = parameter(name)?;
        let value = p.parse_value(value).ok()?;
        p.apply(&mut file, &value).ok()?;
    }
    file.validate().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        ScenarioFile::parse(text, None).unwrap().validate().unwrap()
    }

    #[test]
    fn each_library_gets_its_own_names_and_units() {
        // gRPC: tokens in whole units (herd-sim keeps thousandths), backoffs as proto durations.
        let grpc = snippets(
            &scenario("strategy = \"full-jitter\"\nretries = 3\nbase = \"100ms\"\ncap = \"1s\"\nbudget = \"grpc:max_tokens=20,token_ratio=0.25\"\n"),
            "",
        );
        assert_eq!(grpc[1].library, "grpc");
        let json: serde_json::Value = serde_json::from_str(&grpc[1].text).unwrap();
        assert_eq!(json["retryThrottling"]["maxTokens"], 20.0);
        assert_eq!(json["retryThrottling"]["tokenRatio"], 0.25);
        let policy = &json["methodConfig"][0]["retryPolicy"];
        assert_eq!(policy["maxAttempts"], 4);
        assert_eq!(policy["initialBackoff"], "0.1s");
        assert_eq!(policy["maxBackoff"], "1s");
        // Envoy: percent as a double, min_retry_concurrency whole; YAML that parses.
        let envoy = snippets(
            &scenario("budget = \"envoy:percent=15,min_concurrency=2\"\n"),
            "",
        );
        assert!(
            envoy[1]
                .text
                .contains("budget_percent:\n        value: 15.0\n      min_retry_concurrency: 2\n"),
            "{}",
            envoy[1].text
        );
        // Finagle: percentCanRetry is a fraction (0.2 is 20 %), ttl whole seconds.
        let finagle = snippets(
            &scenario("budget = \"finagle:ttl=5s,min_per_s=3,percent=25\"\n"),
            "",
        );
        assert_eq!(
            finagle[1].text,
            "RetryBudget(ttl = Duration.fromSeconds(5), minRetriesPerSec = 3, percentCanRetry = 0.25)\n"
        );
        // AWS: max_attempts counts the first attempt.
        let aws = snippets(&scenario("retries = 2\nbudget = \"aws-standard\"\n"), "");
        assert_eq!(
            aws[1].text,
            "[default]\nretry_mode = standard\nmax_attempts = 3\n"
        );
        // No control and no jittered curve: the herd-sim keys alone.
        assert_eq!(
            snippets(
                &scenario("retries = 2\nstrategy = \"exponential\"\n"),
                "retries = 2\n"
            )
            .len(),
            1
        );
        // No control, full jitter: gRPC's retryPolicy alone (maxAttempts counts the first
        // attempt, above 5 said) and Envoy's route back-off.
        let plain = snippets(
            &scenario("strategy = \"full-jitter\"\nretries = 6\nbase = \"2s\"\ncap = \"1m\"\n"),
            "",
        );
        assert_eq!(plain[1].library, "grpc");
        let (json, note) = plain[1].text.split_once("}\n//").unwrap();
        let json: serde_json::Value = serde_json::from_str(&format!("{json}}}")).unwrap();
        let policy = &json["methodConfig"][0]["retryPolicy"];
        assert_eq!(policy["maxAttempts"], 7);
        assert_eq!(policy["initialBackoff"], "2s");
        assert_eq!(policy["maxBackoff"], "60s");
        assert!(json.get("retryThrottling").is_none());
        assert!(note.contains("above 5"), "{note}");
        assert_eq!(
            plain[2].text,
            "# route\nretry_policy:\n  retry_on: 5xx\n  num_retries: 6\n  retry_back_off:\n    base_interval: 2s\n    max_interval: 60s\n"
        );
    }

    #[test]
    fn herd_sim_keys_read_back_as_the_same_scenario() {
        let grid: Vec<(String, String)> = [
            ("retries", "6"),
            ("base", "250ms"),
            ("budget", "grpc:max_tokens=20"),
            ("retry-probability", "0.5"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let keys = herd_sim_keys(&ScenarioFile::default(), &grid);
        let read = ScenarioFile::parse(&keys, None).unwrap();
        assert_eq!(read.retries, Some(6));
        assert_eq!(read.base, Some(SimDuration::from_millis(250)));
        assert_eq!(read.budget.as_deref(), Some("grpc:max_tokens=20"));
        assert_eq!(read.retry_probability, Some(0.5));
        // Server keys under [server], where the config takes them, even one the base has at
        // that value already; a rolling restart's interval as the pool's whole restart.
        let base = ScenarioFile::parse(
            "servers = 3\nrolling_restart = \"10s,1s\"\n[server]\nmodel = \"capacity\"\nworkers = 2\n",
            Some("toml"),
        )
        .unwrap();
        let grid: Vec<(String, String)> = [
            ("retries", "6"),
            ("workers", "2"),
            ("service-time", "50ms"),
            ("restart-interval", "20s"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let keys = herd_sim_keys(&base, &grid);
        assert_eq!(
            keys,
            "retries = 6\nrolling_restart = \"20s,1s\"\n\n[server]\nworkers = 2\nservice_time = \"50ms\"\n"
        );
        let read = ScenarioFile::parse(&keys, Some("toml")).unwrap();
        let server = read.server.unwrap();
        assert_eq!(server.service_time.unwrap().to_string(), "50ms");
        assert!(server.workers.is_some());
    }

    #[test]
    fn reshaped_keys_are_written_as_they_ran() {
        // A think time of exp:1s at a mean of 250 ms ran as exp:250ms, and layer-retries set
        // the retries of the base's layer, keeping its strategy and waits.
        let base = ScenarioFile::parse(
            "in_flight = 1\nthink_time = \"exp:1s\"\n\
             [[layer]]\nstrategy = \"fixed\"\nbase = \"2s\"\nretries = 1\n",
            Some("toml"),
        )
        .unwrap();
        let grid: Vec<(String, String)> = [("layer-retries", "3"), ("think-time", "250ms")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let keys = herd_sim_keys(&base, &grid);
        let read = ScenarioFile::parse(&keys, Some("toml")).unwrap();
        assert_eq!(read.think_time.unwrap().to_string(), "exp:250ms", "{keys}");
        let layers = read.layer.unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(layers[0].retries, Some(3));
        assert_eq!(layers[0].base, Some(SimDuration::from_secs(2)));
        assert_eq!(layers[0].strategy.as_ref().unwrap().0, [Strategy::Fixed]);
        // Without a base shape, a fixed wait, as before.
        let grid = [("think-time".to_string(), "10ms".to_string())];
        let keys = herd_sim_keys(&ScenarioFile::default(), &grid);
        assert_eq!(keys, "think_time = \"10ms\"\n");
    }
}
