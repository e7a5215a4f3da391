//! Clock skew ([`ClockSkew`]): how far a tab's clock is off the server's, as written on the
//! command line and in configs (`2s`, `uniform:-5s..5s`, `normal:0s,2s`), and drawn once per
//! tab.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::delay::standard_normal;
use crate::rng::{uniform_below, ClientRng};
use crate::time::{parse_duration, SimDuration};

/// How far a client's clock is ahead of the server's (negative: behind), in nanoseconds,
/// drawn once per tab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockSkew {
    /// The same for every tab (`2s`, `-500ms`, `0s`).
    Fixed(i64),
    /// Uniform over whole nanoseconds in `[low, high)` (`uniform:-5s..5s`).
    Uniform {
        /// Lowest skew.
        low: i64,
        /// Highest (exclusive).
        high: i64,
    },
    /// Normal (`normal:0s,2s`), rounded to the nanosecond.
    Normal {
        /// Mean skew.
        mean: i64,
        /// Standard deviation.
        sd: u64,
    },
}

impl Default for ClockSkew {
    fn default() -> Self {
        ClockSkew::Fixed(0)
    }
}

impl ClockSkew {
    /// One tab's skew.
    pub(super) fn draw(&self, rng: &mut ClientRng) -> i64 {
        match *self {
            ClockSkew::Fixed(s) => s,
            ClockSkew::Uniform { low, high } => low + uniform_below(rng, high.abs_diff(low)) as i64,
            ClockSkew::Normal { mean, sd } => {
                mean + (standard_normal(rng) * sd as f64).round() as i64
            }
        }
    }

    /// The largest skew a tab can have in practice, either way (for bounds): the normal's
    /// 40 standard deviations.
    pub fn practical_max(&self) -> u64 {
        match *self {
            ClockSkew::Fixed(s) => s.unsigned_abs(),
            ClockSkew::Uniform { low, high } => low.unsigned_abs().max(high.unsigned_abs()),
            ClockSkew::Normal { mean, sd } => mean.unsigned_abs().saturating_add(40 * sd),
        }
    }
}

/// A signed duration as written: `-2s`, `+1.5s`, `500ms`.
fn parse_signed(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, rest) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let d = i64::try_from(parse_duration(rest).ok()?.as_nanos()).ok()?;
    Some(if negative { -d } else { d })
}

fn signed(f: &mut fmt::Formatter<'_>, nanos: i64) -> fmt::Result {
    let sign = if nanos < 0 { "-" } else { "" };
    write!(f, "{sign}{}", SimDuration(nanos.unsigned_abs()))
}

impl fmt::Display for ClockSkew {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ClockSkew::Fixed(s) => signed(f, s),
            ClockSkew::Uniform { low, high } => {
                f.write_str("uniform:")?;
                signed(f, low)?;
                f.write_str("..")?;
                signed(f, high)
            }
            ClockSkew::Normal { mean, sd } => {
                f.write_str("normal:")?;
                signed(f, mean)?;
                write!(f, ",{}", SimDuration(sd))
            }
        }
    }
}

impl FromStr for ClockSkew {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{text}` is not a clock skew; accepted: a signed duration (2s, -500ms), \
                 uniform:LOW..HIGH (uniform:-5s..5s) or normal:MEAN,SD (normal:0s,2s)"
            )
        };
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("uniform:") {
            let (low, high) = rest.split_once("..").ok_or_else(bad)?;
            let (low, high) = (
                parse_signed(low).ok_or_else(bad)?,
                parse_signed(high).ok_or_else(bad)?,
            );
            if high <= low {
                return Err(format!(
                    "`{text}` is an empty range; accepted: uniform:LOW..HIGH with LOW below HIGH"
                ));
            }
            return Ok(ClockSkew::Uniform { low, high });
        }
        if let Some(rest) = t.strip_prefix("normal:") {
            let (mean, sd) = rest.split_once(',').ok_or_else(bad)?;
            let mean = parse_signed(mean).ok_or_else(bad)?;
            let sd = parse_duration(sd).map_err(|_| bad())?.as_nanos();
            return Ok(ClockSkew::Normal { mean, sd });
        }
        parse_signed(t).map(ClockSkew::Fixed).ok_or_else(bad)
    }
}

impl Serialize for ClockSkew {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ClockSkew {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
