//! How clients behave, as written: the strategy list and the round-trip latency. Parsing only;
//! ranges are checked by [`super::ScenarioFile::validate`].

use serde::{Deserialize, Deserializer, Serialize};

use crate::engine::Latency;
use crate::policy::{Strategy, UnknownStrategy};
use crate::time::parse_duration;

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

impl Serialize for LatencyText {
    /// As written in a config: `110ms`, `uniform:100ms..120ms`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for LatencyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
