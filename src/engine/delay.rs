//! The network delay of one message ([`NetworkDelay`]): fixed, or drawn per message from the
//! client's own generator (exponential, uniform, or a normal folded at zero). Plain data, its
//! parser and one draw function; no I/O.
//!
//! The normal is drawn by Marsaglia's polar method (Marsaglia & Bray 1964) from
//! [`ClientRng`] words, written here rather than borrowed from a distribution crate so that a
//! dependency upgrade cannot change a published figure. Folded at zero as Brooker's 2015
//! simulator does (`abs(random.normalvariate(mean, sd))`), then rounded to whole nanoseconds.

use std::fmt;
use std::str::FromStr;

use rand::RngCore;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rng::{uniform_below, ClientRng};
use crate::time::{parse_duration, SimDuration};

/// How long one message (a request or an answer) takes to cross the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NetworkDelay {
    /// The same for every message (`10ms`).
    Fixed(SimDuration),
    /// Exponential with this mean (`exp:10ms`).
    Exp {
        /// The mean delay.
        mean: SimDuration,
    },
    /// Uniform over whole nanoseconds in `[low, high)` (`uniform:5ms..15ms`).
    Uniform {
        /// Shortest delay.
        low: SimDuration,
        /// Longest delay (exclusive).
        high: SimDuration,
    },
    /// `|Normal(mean, sd)|`, the normal folded at zero (`normal:10ms,2ms`, Brooker's 2015
    /// network).
    Normal {
        /// Mean of the normal before folding.
        mean: SimDuration,
        /// Standard deviation of the normal before folding.
        sd: SimDuration,
    },
}

/// Brooker's 2015 network: `|Normal(10 ms, 2 ms)|` per message.
pub const STUDY_NETWORK: NetworkDelay = NetworkDelay::Normal {
    mean: SimDuration(10_000_000),
    sd: SimDuration(2_000_000),
};

/// A uniform `f64` in `[0, 1)` with 53 random bits.
#[inline(always)]
pub(super) fn unit(rng: &mut ClientRng) -> f64 {
    crate::rng::unit_interval(rng.next_u64())
}

/// One standard normal draw, Marsaglia's polar method (the second value is discarded, so a
/// draw depends on nothing but the stream).
#[inline]
pub(super) fn standard_normal(rng: &mut ClientRng) -> f64 {
    loop {
        let u = 2.0 * unit(rng) - 1.0;
        let v = 2.0 * unit(rng) - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * (-2.0 * s.ln() / s).sqrt();
        }
    }
}

/// Nanoseconds from a non-negative `f64`, rounded, saturating.
fn nanos(x: f64) -> SimDuration {
    // `x.round().min(u64::MAX as f64) as u64`, which reads NaN as the largest value.
    SimDuration(if x.is_nan() {
        u64::MAX
    } else {
        crate::workload::round_to_u64(x)
    })
}

impl NetworkDelay {
    /// One message's delay. A fixed delay draws nothing, so it leaves the client's stream
    /// alone.
    #[inline(always)]
    pub fn draw(&self, rng: &mut ClientRng) -> SimDuration {
        match *self {
            NetworkDelay::Fixed(d) => d,
            NetworkDelay::Exp { mean } => {
                // 1 − u is in (0, 1], so its logarithm is finite.
                nanos(-(mean.as_nanos() as f64) * (1.0 - unit(rng)).ln())
            }
            NetworkDelay::Uniform { low, high } => {
                SimDuration(low.as_nanos() + uniform_below(rng, high.as_nanos() - low.as_nanos()))
            }
            NetworkDelay::Normal { mean, sd } => {
                let z = standard_normal(rng);
                nanos((mean.as_nanos() as f64 + sd.as_nanos() as f64 * z).abs())
            }
        }
    }

    /// A delay no draw exceeds in practice, for the up-front memory estimate: the largest for
    /// a fixed or uniform delay; for the unbounded ones a point beyond which a draw falls with
    /// probability below 1e-20 (mean + 10 sd for the normal, 50 means for the exponential).
    pub fn practical_max(&self) -> SimDuration {
        match *self {
            NetworkDelay::Fixed(d) => d,
            NetworkDelay::Exp { mean } => SimDuration(mean.as_nanos().saturating_mul(50)),
            NetworkDelay::Uniform { high, .. } => high,
            NetworkDelay::Normal { mean, sd } => SimDuration(
                mean.as_nanos()
                    .saturating_add(sd.as_nanos().saturating_mul(10)),
            ),
        }
    }
}

impl fmt::Display for NetworkDelay {
    /// The form the command line and configs accept: `10ms`, `exp:10ms`, `uniform:5ms..15ms`,
    /// `normal:10ms,2ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkDelay::Fixed(d) => write!(f, "{d}"),
            NetworkDelay::Exp { mean } => write!(f, "exp:{mean}"),
            NetworkDelay::Uniform { low, high } => write!(f, "uniform:{low}..{high}"),
            NetworkDelay::Normal { mean, sd } => write!(f, "normal:{mean},{sd}"),
        }
    }
}

const ACCEPTED: &str = "accepted: a duration such as 10ms, exp:MEAN, uniform:LOW..HIGH or \
                        normal:MEAN,SD, e.g. normal:10ms,2ms";

impl FromStr for NetworkDelay {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let duration = |s: &str| {
            parse_duration(s).map_err(|e| format!("network delay `{t}`: {e}; {ACCEPTED}"))
        };
        if let Some(mean) = t.strip_prefix("exp:") {
            let mean = duration(mean)?;
            if mean.is_zero() {
                return Err(format!("network delay `{t}` has a zero mean; {ACCEPTED}"));
            }
            return Ok(NetworkDelay::Exp { mean });
        }
        if let Some(range) = t.strip_prefix("uniform:") {
            let (low, high) = range
                .split_once("..")
                .ok_or_else(|| format!("network delay `{t}` is not a range; {ACCEPTED}"))?;
            let (low, high) = (duration(low)?, duration(high)?);
            if high <= low {
                return Err(format!(
                    "network delay `{t}` has HIGH not above LOW; {ACCEPTED}"
                ));
            }
            return Ok(NetworkDelay::Uniform { low, high });
        }
        if let Some(pair) = t.strip_prefix("normal:") {
            let (mean, sd) = pair
                .split_once(',')
                .ok_or_else(|| format!("network delay `{t}` is not MEAN,SD; {ACCEPTED}"))?;
            return Ok(NetworkDelay::Normal {
                mean: duration(mean)?,
                sd: duration(sd)?,
            });
        }
        duration(t).map(NetworkDelay::Fixed)
    }
}

impl Serialize for NetworkDelay {
    /// As written in a config (the [`fmt::Display`] form).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for NetworkDelay {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_and_sd(delay: NetworkDelay, n: u32) -> (f64, f64) {
        let mut rng = ClientRng::new(2015);
        let draws: Vec<f64> = (0..n)
            .map(|_| delay.draw(&mut rng).as_nanos() as f64)
            .collect();
        let mean = draws.iter().sum::<f64>() / f64::from(n);
        let var = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / f64::from(n - 1);
        (mean, var.sqrt())
    }

    #[test]
    fn every_form_parses_and_prints_back() {
        for text in ["10ms", "exp:10ms", "uniform:5ms..15ms", "normal:10ms,2ms"] {
            let d: NetworkDelay = text.parse().unwrap();
            assert_eq!(d.to_string(), text);
        }
        assert_eq!("normal:10ms,2ms".parse::<NetworkDelay>(), Ok(STUDY_NETWORK));
        for bad in [
            "normal:10ms",
            "uniform:5ms..5ms",
            "exp:0s",
            "10",
            "gauss:1ms,1ms",
        ] {
            let e = bad.parse::<NetworkDelay>().unwrap_err();
            assert!(e.contains(bad) && e.contains("normal:MEAN,SD"), "{e}");
        }
    }

    #[test]
    fn fixed_draws_nothing() {
        let mut rng = ClientRng::new(9);
        let untouched = rng;
        let d = NetworkDelay::Fixed(SimDuration::from_millis(10));
        assert_eq!(d.draw(&mut rng), SimDuration::from_millis(10));
        assert_eq!(rng, untouched);
    }

    #[test]
    fn draws_have_the_moments_of_their_law() {
        let n = 200_000;
        // Normal(10 ms, 2 ms) is folded with probability Φ(−5) ≈ 3e-7: mean 10 ms, sd 2 ms.
        // Standard error of the mean 2/√n ≈ 0.0045 ms; 6 of them ≈ 0.027 ms. The sample sd of a
        // normal has standard error sd/√(2n) ≈ 0.0032 ms.
        let (mean, sd) = mean_and_sd(STUDY_NETWORK, n);
        assert!((mean / 1e6 - 10.0).abs() < 0.027, "{mean}");
        assert!((sd / 1e6 - 2.0).abs() < 0.02, "{sd}");
        // Folded Normal(0, 1 ms): mean √(2/π) ms ≈ 0.79788 ms, sd √(1 − 2/π) ≈ 0.60281 ms.
        let folded = NetworkDelay::Normal {
            mean: SimDuration::ZERO,
            sd: SimDuration::from_millis(1),
        };
        let (mean, sd) = mean_and_sd(folded, n);
        assert!((mean / 1e6 - 0.797_88).abs() < 0.005, "{mean}");
        assert!((sd / 1e6 - 0.602_81).abs() < 0.005, "{sd}");
        // Exponential with mean 10 ms: sd 10 ms; standard error of the mean ≈ 0.022 ms.
        let (mean, sd) = mean_and_sd(
            NetworkDelay::Exp {
                mean: SimDuration::from_millis(10),
            },
            n,
        );
        assert!((mean / 1e6 - 10.0).abs() < 0.14, "{mean}");
        assert!((sd / 1e6 - 10.0).abs() < 0.3, "{sd}");
    }
}
