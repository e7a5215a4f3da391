//! The `search` table: how candidates are searched ([`Method`]: every one, or successive
//! halving from a space-filling design) and its settings.

use super::{
    invalid, whole, TuneError, DEFAULT_DESIGN, DEFAULT_ETA, DEFAULT_MAX_CANDIDATES, SEARCH_KEYS,
};

/// How candidates are chosen and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Every point of the grid, each with the file's seeds.
    Exhaustive,
    /// A Latin hypercube of `design` candidates, then successive halving
    /// ([`crate::advice::tune_search`]).
    Halving {
        /// Candidates of the design.
        design: u64,
        /// Keep the best 1/eta, with eta times the seeds.
        eta: u64,
        /// No rung runs more seeds a candidate than this.
        max_seeds: u64,
    },
}

impl Method {
    /// `exhaustive` or `halving`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exhaustive => "exhaustive",
            Method::Halving { .. } => "halving",
        }
    }
}

/// The `[search]` table: the method asked for (`None`: auto), halving's settings, the most
/// candidates an exhaustive search runs.
pub(super) fn search(
    value: Option<&toml::Value>,
    seeds: u64,
) -> Result<(Option<Method>, Method, u64), TuneError> {
    let empty = toml::Table::new();
    let table = match value {
        None => &empty,
        Some(toml::Value::Table(t)) => t,
        Some(other) => {
            return Err(invalid(
                "search",
                other.to_string(),
                "not a table",
                format!("[search] with {SEARCH_KEYS}"),
            ))
        }
    };
    let mut method = None;
    let mut max = DEFAULT_MAX_CANDIDATES;
    let (mut design, mut eta, mut max_seeds) = (DEFAULT_DESIGN, DEFAULT_ETA, None);
    let mut halving = false;
    for (key, v) in table {
        match key.as_str() {
            "method" => match v.as_str() {
                Some("auto") => method = None,
                Some("exhaustive") => method = Some(Method::Exhaustive),
                Some("halving") => halving = true,
                _ => {
                    return Err(invalid(
                        "search.method",
                        v.to_string(),
                        "not a search method",
                        "\"auto\" (exhaustive up to max_candidates, else halving), \"exhaustive\", \"halving\"",
                    ))
                }
            },
            "max_candidates" => max = whole(v, "search.max_candidates", 1, 1_000_000)?,
            "candidates" => design = whole(v, "search.candidates", 2, 100_000)?,
            "eta" => eta = whole(v, "search.eta", 2, 100)?,
            "max_seeds" => max_seeds = Some(whole(v, "search.max_seeds", 1, crate::sweep::MAX_SEEDS)?),
            other => {
                return Err(invalid(
                    "search key",
                    other,
                    "not a key of [search]",
                    SEARCH_KEYS,
                ))
            }
        }
    }
    let max_seeds = max_seeds.unwrap_or(seeds.saturating_mul(eta * eta));
    if max_seeds < seeds {
        return Err(invalid(
            "search.max_seeds",
            max_seeds.to_string(),
            format!("fewer than the {seeds} seeds every candidate starts with"),
            "max_seeds at least seeds",
        ));
    }
    let halving_method = Method::Halving {
        design,
        eta,
        max_seeds,
    };
    if halving {
        method = Some(halving_method);
    }
    Ok((method, halving_method, max))
}
