//! What a scenario carries for its output: published figures to print beside ours.

use serde::{Deserialize, Serialize};

/// One strategy's published figures (Experiment 2, docs/experiments.md), kept beside the scenario that
/// reproduces them so a run prints ours beside theirs. Every figure is optional.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The source's name for the row, e.g. `backoff + jitter`.
    pub label: Option<String>,
    /// Time to finish all items, seconds.
    pub finish_s: Option<f64>,
    /// Requests sent.
    pub requests: Option<f64>,
    /// Requests refused.
    pub refused: Option<f64>,
    /// Refused / requests, percent.
    pub wasted_pct: Option<f64>,
    /// Latest minus earliest client finish, seconds.
    pub finish_spread_s: Option<f64>,
}
