//! The overload model as written: arrivals (`--arrivals`, `--rate`, `--duration`,
//! `--spike`), client timeouts and network delay (`--timeout`, `--network-delay`), triggers
//! (`--outage`, `--degrade`) and the series (`--series-bin`, `--recovery-hold`); the texts
//! they are written in (`40/s`, `exp:50ms`, `20s..25s@80/s`, `unlimited`); and their
//! validation into an [`Overload`]. No I/O, no clap.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{invalid, ConfigError, ScenarioFile, ServerModel};
use crate::engine::calls::{DeadlinePropagation, StickyFailures};
use crate::engine::Overload;
use crate::server::{Degrade, Triggers};
use crate::time::{parse_duration, SimDuration, SimTime};
use crate::workload::{Arrivals, Dist, RateSchedule, Spike};

/// Implements `Deserialize` (from a string) and `Serialize` (as its display) for a text type.
macro_rules! text_serde {
    ($t:ty) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.to_string())
            }
        }
    };
}

/// What `--rate` accepts, for messages.
pub const RATE_ACCEPTED: &str = "accepted: a positive rate such as 40/s, 2400/m or 10/h";
/// What a distribution accepts, for messages.
pub const DIST_ACCEPTED: &str =
    "accepted: a duration (50ms), exp:MEAN (exp:50ms) or uniform:LOW..HIGH (uniform:40ms..60ms)";

/// The lowest capacity factor `--degrade` accepts: service times at most a thousand times
/// longer (below it a service time of nanoseconds outlasts any run).
pub const MIN_DEGRADE_FACTOR: f64 = 0.001;

/// A rate as written: `40/s`, `2400/m`, `10/h`; kept in calls per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateText(pub f64);

impl std::str::FromStr for RateText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (number, unit) = t
            .split_once('/')
            .ok_or_else(|| format!("rate `{t}` has no unit; {RATE_ACCEPTED}"))?;
        let per = match unit.trim() {
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(format!("rate `{t}` has an unknown unit; {RATE_ACCEPTED}")),
        };
        let n: f64 = number
            .trim()
            .parse()
            .map_err(|_| format!("rate `{t}` is not a number per unit; {RATE_ACCEPTED}"))?;
        if !n.is_finite() || n < 0.0 {
            return Err(format!("rate `{t}` is negative; {RATE_ACCEPTED}"));
        }
        Ok(RateText(n / per))
    }
}

impl fmt::Display for RateText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", self.0)
    }
}
text_serde!(RateText);

/// A distribution as written: `50ms`, `exp:50ms`, `uniform:40ms..60ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistText(pub Dist);

impl std::str::FromStr for DistText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let dur = |s: &str| parse_duration(s).map_err(|e| format!("{e}; {DIST_ACCEPTED}"));
        if let Some(mean) = t.strip_prefix("exp:") {
            return Ok(DistText(Dist::Exp(dur(mean)?)));
        }
        if let Some(range) = t.strip_prefix("uniform:") {
            let (low, high) = range
                .split_once("..")
                .ok_or_else(|| format!("`{t}` is not a range; {DIST_ACCEPTED}"))?;
            let (low, high) = (dur(low)?, dur(high)?);
            if high <= low {
                return Err(format!("`{t}` has HIGH not above LOW; {DIST_ACCEPTED}"));
            }
            return Ok(DistText(Dist::Uniform { low, high }));
        }
        Ok(DistText(Dist::Fixed(dur(t)?)))
    }
}

impl fmt::Display for DistText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
text_serde!(DistText);

/// `N` or `unlimited` (workers, queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound(pub Option<u32>);

impl std::str::FromStr for Bound {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if t == "unlimited" {
            return Ok(Bound(None));
        }
        t.replace('_', "")
            .parse()
            .map(|n| Bound(Some(n)))
            .map_err(|_| format!("`{t}` is not a whole number or `unlimited`"))
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("unlimited"),
        }
    }
}

impl<'de> Deserialize<'de> for Bound {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum NumberOrText {
            Number(u32),
            Text(String),
        }
        match NumberOrText::deserialize(deserializer)? {
            NumberOrText::Number(n) => Ok(Bound(Some(n))),
            NumberOrText::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl Serialize for Bound {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => serializer.serialize_u32(n),
            None => serializer.serialize_str("unlimited"),
        }
    }
}

/// An interval as written, `FROM..TO`, optionally followed by `@VALUE` (a rate for a spike, a
/// factor for a degradation); the value is kept as typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntervalText {
    /// Start.
    pub from: SimDuration,
    /// End.
    pub to: SimDuration,
    /// What follows `@`, if anything.
    pub value: Option<String>,
    /// The whole text, for messages.
    pub text: String,
}

impl std::str::FromStr for IntervalText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (span, value) = match t.split_once('@') {
            Some((span, value)) => (span, Some(value.trim().to_string())),
            None => (t, None),
        };
        let accepted =
            "accepted: FROM..TO such as 20s..25s (with @RATE for --spike, @FACTOR for --degrade)";
        let (from, to) = span
            .split_once("..")
            .ok_or_else(|| format!("`{t}` is not FROM..TO; {accepted}"))?;
        let from = parse_duration(from).map_err(|e| format!("{e}; {accepted}"))?;
        let to = parse_duration(to).map_err(|e| format!("{e}; {accepted}"))?;
        Ok(IntervalText {
            from,
            to,
            value,
            text: t.to_string(),
        })
    }
}

impl fmt::Display for IntervalText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
text_serde!(IntervalText);

/// A list of intervals: one string, or (in a file) an array.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize)]
pub struct Intervals(pub Vec<IntervalText>);

impl<'de> Deserialize<'de> for Intervals {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(IntervalText),
            Many(Vec<IntervalText>),
        }
        Ok(match OneOrMany::deserialize(deserializer)? {
            OneOrMany::One(i) => Intervals(vec![i]),
            OneOrMany::Many(v) => Intervals(v),
        })
    }
}

fn at(d: SimDuration) -> SimTime {
    SimTime::ZERO + d
}

/// A degradation's text, `FROM..TO@FACTOR`, checked.
fn degrade_of(d: &IntervalText) -> Result<Degrade, ConfigError> {
    let accepted = format!(
        "accepted: FROM..TO@FACTOR with FACTOR from {MIN_DEGRADE_FACTOR} to 1 (the capacity \
         left: 0.5 doubles service times), such as 30s..40s@0.5, or 30s..40s@0.5@server=K"
    );
    let factor: f64 = d
        .value
        .as_deref()
        .and_then(|v| v.parse().ok())
        .filter(|f: &f64| (MIN_DEGRADE_FACTOR..=1.0).contains(f))
        .ok_or_else(|| invalid("--degrade", &d.text, accepted))?;
    Ok(Degrade {
        from: at(d.from),
        to: at(d.to),
        factor,
    })
}

/// Checks intervals: each FROM < TO, none overlapping; sorted by start.
pub(super) fn intervals(
    field: &'static str,
    list: &[IntervalText],
    end: Option<SimDuration>,
) -> Result<Vec<IntervalText>, ConfigError> {
    let mut sorted = list.to_vec();
    for i in &sorted {
        if i.from >= i.to {
            return Err(invalid(
                field,
                &i.text,
                "accepted: FROM..TO with FROM before TO, such as 20s..25s",
            ));
        }
        if let Some(end) = end {
            if i.to > end {
                return Err(invalid(
                    field,
                    &i.text,
                    format!("accepted: an interval within --duration ({end})"),
                ));
            }
        }
    }
    sorted.sort_by_key(|i| i.from);
    for pair in sorted.windows(2) {
        if pair[1].from < pair[0].to {
            return Err(invalid(
                field,
                &pair[1].text,
                format!(
                    "accepted: intervals that do not overlap (it overlaps {})",
                    pair[0].text
                ),
            ));
        }
    }
    Ok(sorted)
}

impl ScenarioFile {
    /// The overload part of the scenario, validated (given the validated server and whether
    /// a round-trip latency was given).
    pub(crate) fn overload(&self, server: &ServerModel) -> Result<Overload, ConfigError> {
        let arrivals = super::choose(
            "--arrivals",
            self.arrivals.clone(),
            &["herd", "poisson"],
            |n| n,
        )?;
        let arrivals = if arrivals == "poisson" {
            let rate = self.rate.ok_or_else(|| {
                invalid(
                    "--rate",
                    "(none)",
                    format!("--arrivals poisson needs a rate; {RATE_ACCEPTED}"),
                )
            })?;
            if rate.0 <= 0.0 {
                return Err(invalid("--rate", rate, RATE_ACCEPTED));
            }
            let duration = self.duration.ok_or_else(|| {
                invalid(
                    "--duration",
                    "(none)",
                    "--arrivals poisson needs one; accepted: a positive duration such as 80s",
                )
            })?;
            if duration.is_zero() {
                return Err(invalid(
                    "--duration",
                    duration,
                    "accepted: a positive duration such as 80s",
                ));
            }
            let mut spikes = Vec::new();
            for s in intervals(
                "--spike",
                &self.spike.clone().unwrap_or_default().0,
                Some(duration),
            )? {
                let accepted = "accepted: FROM..TO@RATE such as 20s..25s@80/s";
                let rate: RateText = s
                    .value
                    .as_deref()
                    .ok_or_else(|| invalid("--spike", &s.text, accepted))?
                    .parse()
                    .map_err(|_| invalid("--spike", &s.text, accepted))?;
                spikes.push(Spike {
                    from: at(s.from),
                    to: at(s.to),
                    rate: rate.0,
                });
            }
            Arrivals::Poisson(RateSchedule {
                base: rate.0,
                spikes,
                end: at(duration),
            })
        } else {
            for (field, given) in [
                ("--rate", self.rate.is_some()),
                ("--duration", self.duration.is_some()),
                ("--spike", self.spike.is_some()),
            ] {
                if given {
                    return Err(invalid(
                        field,
                        "given with --arrivals herd",
                        "accepted only with --arrivals poisson",
                    ));
                }
            }
            Arrivals::Herd
        };
        if let Some(t) = self.timeout {
            if t.is_zero() {
                return Err(invalid(
                    "--timeout",
                    t,
                    "accepted: a positive duration such as 3s",
                ));
            }
        }
        if let (Some(n), Some(l), false) = (&self.network_delay, &self.latency, server.is_occ()) {
            return Err(invalid(
                "--network-delay",
                n,
                format!(
                    "given with --latency {}; accepted: one of them (--latency is the round trip, --network-delay each direction)",
                    l.0
                ),
            ));
        }
        let outage = self.by_server("--outage", &self.outage.clone().unwrap_or_default().0)?;
        let outages = intervals("--outage", &outage.all, None)?;
        for o in &outages {
            if o.value.is_some() {
                return Err(invalid(
                    "--outage",
                    &o.text,
                    "accepted: FROM..TO such as 0s..20s, or FROM..TO@server=K for one server of a pool",
                ));
            }
        }
        let degrades = self.by_server("--degrade", &self.degrade.clone().unwrap_or_default().0)?;
        let first = degrades
            .all
            .first()
            .or(degrades.own.first().map(|(_, d)| d));
        if let (Some(d), false) = (first, matches!(server, ServerModel::Capacity(_))) {
            return Err(invalid(
                "--degrade",
                &d.text,
                "it needs a server with service times; accepted with --server capacity",
            ));
        }
        let mut degrade = Vec::new();
        for d in intervals("--degrade", &degrades.all, None)? {
            degrade.push(degrade_of(&d)?);
        }
        if server.is_occ() {
            for (field, given) in [
                ("--arrivals", self.arrivals.is_some()),
                ("--timeout", self.timeout.is_some()),
                ("--outage", self.outage.is_some()),
                ("--sticky-failures", self.sticky_failures.is_some()),
                ("--series-bin", self.series_bin.is_some()),
                ("--recovery-hold", self.recovery_hold.is_some()),
                ("--settle", self.settle.is_some()),
            ] {
                if given {
                    return Err(invalid(
                        field,
                        "given with --server occ",
                        "accepted with any server but occ",
                    ));
                }
            }
        }
        let positive = |field: &'static str, value: Option<SimDuration>, default: u64| {
            super::positive_duration(field, value, default)
        };
        let deadlines = match self.deadline_propagation {
            None => DeadlinePropagation::default(),
            Some(c) if !(0.0..=1.0).contains(&c) => {
                return Err(invalid(
                    "--deadline-propagation",
                    c,
                    "accepted: the fraction of a service a dropped request costs, from 0 to 1",
                ))
            }
            Some(c) if !matches!(server, ServerModel::Capacity(_)) || self.timeout.is_none() => {
                return Err(invalid(
                    "--deadline-propagation",
                    c,
                    "accepted with --server capacity and a --timeout (the deadline it propagates)",
                ))
            }
            Some(c) => DeadlinePropagation { cost: Some(c) },
        };
        Ok(Overload {
            closed: self.closed_loop(&arrivals)?,
            pool: self.server_pool(server, &outage.own, &degrades.own, degrade_of)?,
            layers: self.layers(server)?,
            deadlines,
            arrivals,
            timeout: self.timeout,
            // `occ` reads its network delay itself; on the call loop it is each direction.
            network: self.network_delay.filter(|_| !server.is_occ()),
            triggers: Triggers {
                outages: outages.iter().map(|o| (at(o.from), at(o.to))).collect(),
                degrades: degrade,
            },
            series_bin: positive("--series-bin", self.series_bin, 1)?,
            recovery_hold: positive("--recovery-hold", self.recovery_hold, 5)?,
            sticky: match self.sticky_failures {
                None => StickyFailures::default(),
                Some(f) if (0.0..=1.0).contains(&f) => {
                    // Validated before the overload keys: at most u32::MAX.
                    let clients = self.clients.unwrap_or(super::DEFAULT_CLIENTS) as u32;
                    StickyFailures::new(f, clients)
                }
                Some(f) => {
                    return Err(invalid(
                        "--sticky-failures",
                        f,
                        "accepted: a fraction of the client processes from 0 to 1, such as 0.2",
                    ))
                }
            },
            keep_windows: true,
            // Laid by validation once the retries and the cap are known (`settle_load`).
            settle: SimDuration::ZERO,
            in_flight: crate::engine::InFlightGuard::UNGUARDED,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        ScenarioFile::parse(text, Some("toml"))
            .map_err(|e| e.to_string())
            .and_then(|f| f.validate().map_err(|e| e.to_string()))
            .unwrap_err()
    }

    #[test]
    fn texts_parse_as_documented() {
        assert_eq!("40/s".parse::<RateText>().unwrap().0, 40.0);
        assert_eq!("2400/m".parse::<RateText>().unwrap().0, 40.0);
        assert_eq!("36/h".parse::<RateText>().unwrap().0, 0.01);
        assert!("40".parse::<RateText>().is_err());
        assert!("-4/s".parse::<RateText>().is_err());
        assert_eq!(
            "exp:100ms".parse::<DistText>().unwrap().0,
            Dist::Exp(SimDuration::from_millis(100))
        );
        assert!("uniform:60ms..40ms".parse::<DistText>().is_err());
        assert_eq!("unlimited".parse::<Bound>().unwrap(), Bound(None));
        let i: IntervalText = "20s..25s@80/s".parse().unwrap();
        assert_eq!(
            (i.from, i.to, i.value.as_deref()),
            (
                SimDuration::from_secs(20),
                SimDuration::from_secs(25),
                Some("80/s")
            )
        );
    }

    #[test]
    fn bad_overload_input_names_the_key_and_what_is_accepted() {
        let cases = [
            ("arrivals = \"poisson\"\nrate = \"0/s\"\nduration = \"10s\"\n", "--rate"),
            ("arrivals = \"poisson\"\nduration = \"10s\"\n", "--rate"),
            ("arrivals = \"poisson\"\nrate = \"4/s\"\nduration = \"10s\"\nspike = \"5s..12s@8/s\"\n", "--spike"),
            ("arrivals = \"poisson\"\nrate = \"4/s\"\nduration = \"10s\"\nspike = \"5s..5s@8/s\"\n", "--spike"),
            ("arrivals = \"poisson\"\nrate = \"4/s\"\nduration = \"10s\"\nspike = [\"1s..5s@8/s\", \"4s..6s@8/s\"]\n", "--spike"),
            ("rate = \"4/s\"\n", "--rate"),
            ("timeout = \"0s\"\n", "--timeout"),
            ("latency = \"10ms\"\nnetwork_delay = \"5ms\"\n", "--network-delay"),
            ("degrade = \"1s..2s@0.5\"\n", "--degrade"),
            ("degrade = \"1s..2s@0\"\n[server]\nmodel = \"capacity\"\n", "--degrade"),
            ("outage = \"3s..1s\"\n", "--outage"),
            ("series_bin = \"0s\"\n", "--series-bin"),
        ];
        for (text, field) in cases {
            let e = err(text);
            assert!(e.contains(field) && e.contains("accepted"), "{text}: {e}");
        }
    }

    #[test]
    fn a_spiked_poisson_scenario_validates_in_order() {
        let s = ScenarioFile::parse(
            "arrivals = \"poisson\"\nrate = \"40/s\"\nduration = \"80s\"\n\
             spike = [\"50s..55s@10/s\", \"20s..25s@80/s\"]\ntimeout = \"3s\"\n\
             network_delay = \"exp:100ms\"\noutage = \"1s..2s\"\n",
            Some("toml"),
        )
        .unwrap()
        .validate()
        .unwrap();
        let Arrivals::Poisson(schedule) = &s.overload.arrivals else {
            panic!("poisson expected");
        };
        assert_eq!(schedule.spikes[0].rate, 80.0);
        assert_eq!(schedule.spikes[1].rate, 10.0);
        assert_eq!(s.overload.trigger_end(), Some(SimTime(55_000_000_000)));
    }
}
