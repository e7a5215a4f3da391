//! Server pools as written (`--servers N`, `--balancer KIND`, `--rolling-restart
//! INTERVAL,DOWNTIME`, and a trigger's `@server=K`) and their validation into a
//! [`Pool`]. Servers are named from 1 on the command line and in configs (`server=1` is the
//! first), 0-based inside the engine. No I/O, no clap.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::workload::IntervalText;
use super::{choose, invalid, ConfigError, ScenarioFile, ServerModel};
use crate::server::{Balancer, Degrade, Pool, RollingRestart, Triggers};
use crate::time::{parse_duration, SimDuration, SimTime};

/// The most servers a pool takes: each is a whole server's state, cloned per run.
pub const MAX_SERVERS: u32 = 10_000;

/// What `--rolling-restart` accepts, for messages.
const ROLLING_ACCEPTED: &str =
    "accepted: INTERVAL,DOWNTIME with both positive, such as 20s,5s (server i is out over \
     i x INTERVAL .. i x INTERVAL + DOWNTIME)";

/// `INTERVAL,DOWNTIME` as written (`20s,5s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RollingText(pub RollingRestart);

impl std::str::FromStr for RollingText {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let (interval, downtime) = t
            .split_once(',')
            .ok_or_else(|| format!("`{t}` is not INTERVAL,DOWNTIME; {ROLLING_ACCEPTED}"))?;
        let parse = |s: &str| parse_duration(s).map_err(|e| format!("{e}; {ROLLING_ACCEPTED}"));
        let (interval, downtime) = (parse(interval)?, parse(downtime)?);
        if interval.is_zero() || downtime.is_zero() {
            return Err(format!("`{t}` has a zero duration; {ROLLING_ACCEPTED}"));
        }
        Ok(RollingText(RollingRestart { interval, downtime }))
    }
}

impl fmt::Display for RollingText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.0.interval, self.0.downtime)
    }
}

impl<'de> Deserialize<'de> for RollingText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Serialize for RollingText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

/// The servers a trigger list names: the run's own (no `@server=`) and each server's
/// (1-based as written, kept 0-based), `@server=K` taken off each text's value.
pub(super) struct ByServer {
    /// The triggers of every server.
    pub(super) all: Vec<IntervalText>,
    /// `(server, trigger)`, the server 0-based.
    pub(super) own: Vec<(u32, IntervalText)>,
}

impl ScenarioFile {
    /// The servers in the run as given (1 without `--servers`).
    pub(super) fn server_count(&self) -> u32 {
        self.servers.unwrap_or(1)
    }

    /// Splits `list` (the texts of `field`) by the server each names with a final
    /// `@server=K`, K from 1 to the number of servers.
    pub(super) fn by_server(
        &self,
        field: &'static str,
        list: &[IntervalText],
    ) -> Result<ByServer, ConfigError> {
        let n = self.server_count();
        let mut split = ByServer {
            all: Vec::new(),
            own: Vec::new(),
        };
        for i in list {
            let Some(value) = i.value.as_deref() else {
                split.all.push(i.clone());
                continue;
            };
            let (rest, named) = match value.rsplit_once('@') {
                Some((rest, named)) => (Some(rest.to_string()), named),
                None => (None, value),
            };
            let Some(k) = named.strip_prefix("server=") else {
                split.all.push(i.clone());
                continue;
            };
            let accepted = if n == 1 {
                "accepted: server=1, the only server (--servers N gives a pool)".to_string()
            } else {
                format!("accepted: server=K with K from 1 to {n} (--servers), the first being 1")
            };
            let k: u32 = k
                .trim()
                .parse()
                .ok()
                .filter(|k| (1..=n).contains(k))
                .ok_or_else(|| invalid(field, &i.text, accepted))?;
            split.own.push((
                k - 1,
                IntervalText {
                    value: rest,
                    ..i.clone()
                },
            ));
        }
        Ok(split)
    }

    /// The validated pool, given the validated server and each server's outages and
    /// degradations (`degrade` makes a [`Degrade`] of a checked text).
    pub(super) fn server_pool(
        &self,
        server: &ServerModel,
        outages: &[(u32, IntervalText)],
        degrades: &[(u32, IntervalText)],
        degrade: impl Fn(&IntervalText) -> Result<Degrade, ConfigError>,
    ) -> Result<Pool, ConfigError> {
        let servers = self.server_count();
        if !(1..=MAX_SERVERS).contains(&servers) {
            return Err(invalid(
                "--servers",
                servers,
                format!("accepted: a whole number from 1 to {MAX_SERVERS}"),
            ));
        }
        let balancer = choose(
            "--balancer",
            self.balancer.clone(),
            &Balancer::ALL,
            Balancer::name,
        )?;
        if servers > 1 {
            if server.is_occ() {
                return Err(invalid(
                    "--servers",
                    servers,
                    "accepted: 1 with --server occ (one row, one server)",
                ));
            }
            if let Some((field, _)) = self.browser_keys().iter().find(|(_, set)| *set) {
                return Err(invalid(
                    field,
                    format!("given with --servers {servers}"),
                    "accepted with one server: browser tabs are not modelled behind a pool",
                ));
            }
        }
        let rolling = self.rolling_restart.map(|r| r.0);
        // A sweep's restart-interval or restart-downtime may set either to 0.
        if let Some(r) = rolling.filter(|r| r.interval.is_zero() || r.downtime.is_zero()) {
            return Err(invalid(
                "--rolling-restart",
                RollingText(r),
                ROLLING_ACCEPTED,
            ));
        }
        let mut triggers = vec![Triggers::default(); servers as usize];
        if let Some(r) = rolling {
            for (k, own) in triggers.iter_mut().enumerate() {
                own.outages.push(r.outage(k as u32));
            }
        }
        for k in 0..servers {
            let mine = |list: &[(u32, IntervalText)]| -> Vec<IntervalText> {
                list.iter()
                    .filter(|(i, _)| *i == k)
                    .map(|(_, t)| t.clone())
                    .collect()
            };
            let own = &mut triggers[k as usize];
            let own_outages = super::workload::intervals("--outage", &mine(outages), None)?;
            for o in own_outages {
                if o.value.is_some() {
                    return Err(invalid(
                        "--outage",
                        &o.text,
                        "accepted: FROM..TO or FROM..TO@server=K such as 0s..20s@server=2",
                    ));
                }
                let span = (at(o.from), at(o.to));
                if let Some(&(from, to)) = own
                    .outages
                    .iter()
                    .find(|&&(from, to)| span.0 < to && from < span.1)
                {
                    return Err(invalid(
                        "--outage",
                        &o.text,
                        format!(
                            "accepted: a server's outages not overlapping (server {}'s rolling \
                             restart is out over {}..{})",
                            k + 1,
                            SimDuration(from.as_nanos()),
                            SimDuration(to.as_nanos())
                        ),
                    ));
                }
                own.outages.push(span);
            }
            own.outages.sort_by_key(|&(from, _)| from);
            for d in super::workload::intervals("--degrade", &mine(degrades), None)? {
                own.degrades.push(degrade(&d)?);
            }
        }
        if triggers.iter().all(Triggers::is_empty) {
            triggers.clear();
        }
        Ok(Pool {
            servers,
            balancer,
            triggers,
            rolling,
        })
    }
}

fn at(d: SimDuration) -> SimTime {
    SimTime::ZERO + d
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
    fn a_pool_validates_and_refuses_what_it_cannot_take() {
        let s = ScenarioFile::parse(
            "servers = 3\nbalancer = \"least-outstanding\"\nrolling_restart = \"20s,5s\"\n\
             outage = [\"1s..2s@server=3\", \"3s..4s\"]\n[server]\nmodel = \"capacity\"\n",
            Some("toml"),
        )
        .unwrap()
        .validate()
        .unwrap();
        let pool = &s.overload.pool;
        assert_eq!(
            (pool.servers, pool.balancer),
            (3, Balancer::LeastOutstanding)
        );
        let secs = |n| SimTime::ZERO + SimDuration::from_secs(n);
        assert_eq!(pool.triggers[0].outages, [(secs(20), secs(25))]);
        assert_eq!(
            pool.triggers[2].outages,
            [(secs(1), secs(2)), (secs(60), secs(65))]
        );
        assert_eq!(s.overload.triggers.outages, [(secs(3), secs(4))]);
        assert_eq!(s.overload.trigger_end(), Some(secs(65)));
        for (text, field) in [
            ("servers = 0\n", "--servers"),
            ("servers = 3\noutage = \"1s..2s@server=4\"\n", "--outage"),
            ("servers = 3\noutage = \"1s..2s@server=0\"\n", "--outage"),
            ("outage = \"1s..2s@server=2\"\n", "--outage"),
            ("servers = 2\nbalancer = \"fastest\"\n", "--balancer"),
            (
                "servers = 2\nrolling_restart = \"20s,5s\"\noutage = \"21s..22s@server=1\"\n",
                "--outage",
            ),
            ("servers = 2\n[server]\nmodel = \"occ\"\n", "--servers"),
            ("servers = 2\nhidden = 0.5\n", "--hidden"),
        ] {
            let e = err(text);
            assert!(e.contains(field), "{text}: {e}");
        }
        let e = err("servers = 3\noutage = \"1s..2s@server=4\"\n");
        assert!(e.contains("from 1 to 3"), "{e}");
        assert!("20s".parse::<RollingText>().is_err());
        assert!("20s,0s".parse::<RollingText>().is_err());
    }
}
