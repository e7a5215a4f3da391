//! Simulated time: integer nanoseconds, and the parsing and printing of durations.
//!
//! Everything in the simulator that has a time or a length of time uses [`SimTime`] or
//! [`SimDuration`]. Both are whole nanoseconds in a `u64` (about 584 years), so ordering is
//! total (no NaN in the event queue) and window boundaries are exact: 1 s / 100 ms is window
//! 10, never 9. Floating point appears only where a figure is printed. No I/O here.

use std::fmt;
use std::ops::{Add, Sub};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Nanoseconds in one microsecond.
pub const NANOS_PER_MICRO: u64 = 1_000;
/// Nanoseconds in one millisecond.
pub const NANOS_PER_MILLI: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A length of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);

    /// Nanoseconds since the start of the run.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the start of the run, for printing only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// The time `d` later, saturating at the end of representable time rather than wrapping.
    pub const fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The longest representable duration.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// A duration of whole nanoseconds.
    pub const fn from_nanos(n: u64) -> Self {
        SimDuration(n)
    }
    /// A duration of whole milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * NANOS_PER_MILLI)
    }
    /// A duration of whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * NANOS_PER_SEC)
    }
    /// The duration in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// The duration in seconds, for printing only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// True for the zero duration.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        self.saturating_add(d)
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    /// The time from `rhs` to `self`; zero if `rhs` is later.
    fn sub(self, rhs: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(rhs.0))
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(rhs.0))
    }
}

/// Why a duration could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing was given.
    #[error("empty duration; write a number and a unit, e.g. 250ms, 1s, 1.5s")]
    Empty,
    /// A minus sign: durations are never negative.
    #[error("`{0}` is negative; durations must be zero or more")]
    Negative(String),
    /// The text is not a number followed by a known unit.
    #[error("`{0}` is not a duration; write a number and a unit (ns, us, ms, s, m, h), e.g. 250ms, 1s, 1.5s")]
    Malformed(String),
    /// More decimal places than the unit has nanoseconds for.
    #[error("`{0}` is finer than a nanosecond")]
    TooPrecise(String),
    /// Larger than about 584 years.
    #[error("`{0}` is too long; the longest duration is about 584 years")]
    TooLong(String),
}

/// Parses `250ms`, `1s`, `1.5s`, `2m`, `100us`, `10ns`, `1h` exactly, without floating point.
///
/// A bare number is refused: a unit is always required, so that `--base 1` is never silently
/// one nanosecond.
pub fn parse_duration(text: &str) -> Result<SimDuration, DurationError> {
    let s = text.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    if s.starts_with('-') {
        return Err(DurationError::Negative(s.to_string()));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| DurationError::Malformed(s.to_string()))?;
    let (number, unit) = s.split_at(split);
    let unit_nanos = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => NANOS_PER_MICRO,
        "ms" => NANOS_PER_MILLI,
        "s" => NANOS_PER_SEC,
        "m" | "min" => 60 * NANOS_PER_SEC,
        "h" => 3600 * NANOS_PER_SEC,
        _ => return Err(DurationError::Malformed(s.to_string())),
    };
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if (whole.is_empty() && frac.is_empty()) || frac.contains('.') {
        return Err(DurationError::Malformed(s.to_string()));
    }
    let too_long = || DurationError::TooLong(s.to_string());
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_long())?
    };
    let mut nanos = whole.checked_mul(unit_nanos).ok_or_else(too_long)?;
    // The fraction is read digit by digit against the unit so that 1.5s is exactly 1_500_000_000.
    let mut scale = unit_nanos;
    for digit in frac.bytes() {
        let d = u64::from(digit - b'0');
        if scale % 10 != 0 {
            if d != 0 {
                return Err(DurationError::TooPrecise(s.to_string()));
            }
            continue;
        }
        scale /= 10;
        nanos = nanos.checked_add(d * scale).ok_or_else(too_long)?;
    }
    Ok(SimDuration(nanos))
}

impl FromStr for SimDuration {
    type Err = DurationError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_duration(s)
    }
}

impl fmt::Display for SimDuration {
    /// The shortest exact form in the largest unit that divides it: `100ms`, `1s`, `1.5s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n == 0 {
            return write!(f, "0s");
        }
        if n % NANOS_PER_MILLI != 0 && n < NANOS_PER_MILLI {
            return if n % NANOS_PER_MICRO == 0 {
                write!(f, "{}us", n / NANOS_PER_MICRO)
            } else {
                write!(f, "{n}ns")
            };
        }
        if n < NANOS_PER_SEC {
            return write_decimal(f, n, NANOS_PER_MILLI, "ms");
        }
        write_decimal(f, n, NANOS_PER_SEC, "s")
    }
}

fn write_decimal(f: &mut fmt::Formatter<'_>, n: u64, unit: u64, suffix: &str) -> fmt::Result {
    let whole = n / unit;
    let mut rest = n % unit;
    if rest == 0 {
        return write!(f, "{whole}{suffix}");
    }
    let mut digits = String::new();
    let mut scale = unit;
    while rest != 0 && scale > 1 {
        scale /= 10;
        digits.push(char::from(b'0' + (rest / scale) as u8));
        rest %= scale;
    }
    write!(f, "{whole}.{digits}{suffix}")
}

impl Serialize for SimDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms_exactly() {
        assert_eq!(parse_duration("250ms"), Ok(SimDuration(250_000_000)));
        assert_eq!(parse_duration("1s"), Ok(SimDuration(1_000_000_000)));
        assert_eq!(parse_duration("1.5s"), Ok(SimDuration(1_500_000_000)));
        assert_eq!(parse_duration("0.1s"), Ok(SimDuration(100_000_000)));
        assert_eq!(parse_duration("2m"), Ok(SimDuration(120_000_000_000)));
        assert_eq!(parse_duration("100us"), Ok(SimDuration(100_000)));
        assert_eq!(parse_duration("7ns"), Ok(SimDuration(7)));
        assert_eq!(parse_duration(".5s"), Ok(SimDuration(500_000_000)));
        assert_eq!(
            parse_duration("1.000000001s"),
            Ok(SimDuration(1_000_000_001))
        );
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        assert!(matches!(
            parse_duration("1"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("-1s"),
            Err(DurationError::Negative(_))
        ));
        assert!(matches!(
            parse_duration("1.5.2s"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("abc"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("1parsec"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("NaNs"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            parse_duration("1.5ns"),
            Err(DurationError::TooPrecise(_))
        ));
        assert!(matches!(
            parse_duration("99999999999h"),
            Err(DurationError::TooLong(_))
        ));
        assert_eq!(parse_duration(""), Err(DurationError::Empty));
    }

    #[test]
    fn prints_what_it_parses() {
        for text in [
            "100ms", "1s", "1.5s", "30s", "250ms", "7ns", "100us", "0s", "1.25ms",
        ] {
            assert_eq!(parse_duration(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn one_second_is_window_ten_of_100ms() {
        let t = parse_duration("1s").unwrap().as_nanos();
        let bin = parse_duration("100ms").unwrap().as_nanos();
        assert_eq!(t / bin, 10);
    }
}
