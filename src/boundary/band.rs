//! The vulnerable band of a load axis (`boundary --band`): its two edges, each the rate at
//! which the collapse probability crosses the level. *Knocked over* is the ordinary boundary,
//! the scenario's own trigger; *stays down* is the same search over runs that start collapsed,
//! the scenario's triggers replaced by one knock-over degradation ([`KnockOver`]). Between the two
//! the system is metastable: stable until a trigger comes, down for good after one.
//!
//! This module owns what is particular to the band: which axes are a load, the knock-over and
//! its scenario, the analytic floor, and the band's part of the output. The search is the
//! boundary's ([`super::search`]) over the boundary's oracle ([`super::evaluate`]), only its
//! base scenario differs, so the seeds, the verdict and the replay are the same.

use serde::Serialize;

use crate::config::{
    IntervalText, Intervals, Scenario, ScenarioFile, ServerModel, MIN_DEGRADE_FACTOR,
};
use crate::sweep::parameter::Parameter;
use crate::time::SimDuration;

use super::export::{stop_text, JsonPoint};
use super::search::{Point, Search, Stop};
use super::{curve, BoundaryError, CaseResult, Report};

/// The axes that are a load: the band's edges are loads at which a trigger is or is not
/// needed to collapse the system.
pub const LOAD_AXES: [&str; 1] = ["rate"];

/// The sweep parameters that shape a trigger: the knock-over replaces the triggers, so they
/// cannot be listed as cases with `--band`.
pub const TRIGGER_PARAMETERS: [&str; 6] = [
    "spike-rate",
    "spike-duration",
    "outage",
    "outage-duration",
    "degrade-factor",
    "degrade-duration",
];

/// How a run starts collapsed, and the analytic floor, in words (`band_rule` in JSON).
pub const BAND_RULE: &str = "vulnerable band: `knocked over` is the boundary above, the \
lowest rate at which the scenario's own trigger collapses the run; `stays down` is the lowest \
rate at which a run started collapsed stays collapsed, found by the same search, verdict and \
seeds over the scenario with its triggers (spikes, outages, degradations) replaced by one \
knock-over: the load stays the rate throughout while the server's capacity mu (workers / mean \
service time) is cut to half the floor (a degradation by 1 / (2 x attempts a call makes at \
most), rounded down to 4 decimals), for the longest a call can last (the default settle \
without the hold; from 0 if that is longer) up to where the scenario's last trigger ends, so \
that every call in flight is timing out and retrying when it ends and the verdict judges the \
same span after it; between the edges the system is stable only until a trigger comes. No \
collapse can persist below the floor mu / (attempts a call makes at most): there even calls \
that all fail cannot hold the server past its capacity";

/// The knock-over of one case: a degradation to half the floor that ends where the
/// scenario's last trigger ends and lasts the longest a call can (from 0 if that is longer).
/// At any rate at or above the floor the degraded server is overloaded twice over by the
/// calls' first attempts alone, so at its end the run is collapsed at the rate itself (not at
/// a spike's), and the verdict judges the same span after it as after the scenario's own
/// trigger: the two edges differ only in how the run got there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KnockOver {
    /// Its start: the longest a call can last before its end (0 if that is earlier).
    pub from: SimDuration,
    /// Its end: the scenario's last trigger's.
    pub to: SimDuration,
    /// The server's capacity mu, in calls per second: workers / mean service time.
    pub capacity: f64,
    /// The attempts a call makes at most (every layer's `1 + retries`).
    pub tries: u128,
}

impl KnockOver {
    /// The knock-over of `scenario` (a case at the range's low end), or what it lacks.
    pub fn of(scenario: &Scenario) -> Result<KnockOver, String> {
        let ServerModel::Capacity(rule) = scenario.server else {
            return Err(format!(
                "a {} server has no capacity to knock over",
                scenario.server.name()
            ));
        };
        let (Some(workers), mean) = (rule.workers, rule.service.mean()) else {
            return Err("a capacity server without --workers has no capacity to pass".into());
        };
        if mean.is_zero() {
            return Err("a capacity server of zero service time has no capacity to pass".into());
        }
        if scenario.overload.timeout.is_none() {
            return Err(
                "without --timeout no attempt times out, so no retries hold a collapse up".into(),
            );
        }
        let o = &scenario.overload;
        let Some(end) = o.trigger_end() else {
            return Err("the scenario has no trigger whose end the knock-over could take".into());
        };
        let longest = o.longest_call(scenario.retries, scenario.backoff.cap);
        Ok(KnockOver {
            from: SimDuration(end.as_nanos().saturating_sub(longest.as_nanos())),
            to: SimDuration(end.as_nanos()),
            capacity: f64::from(workers) * 1e9 / mean.as_nanos() as f64,
            tries: scenario.tries_per_call(),
        })
    }

    /// The capacity left during the knock-over: `1 / (2 x tries)` rounded down to four
    /// decimals, at least [`MIN_DEGRADE_FACTOR`].
    pub fn factor(&self) -> f64 {
        let tenths_of_thousandths = 10_000 / (2 * self.tries.max(1));
        (tenths_of_thousandths as f64 / 1e4).max(MIN_DEGRADE_FACTOR)
    }

    /// The floor, in calls per second: the capacity over the attempts a call makes at most.
    pub fn floor(&self) -> f64 {
        self.capacity / self.tries as f64
    }

    /// The knock-over as `--degrade` takes it: `117s..180s@0.1666`.
    pub fn degrade(&self) -> String {
        format!("{}..{}@{}", self.from, self.to, self.factor())
    }

    /// `base` started collapsed: its triggers replaced by the knock-over.
    pub fn scenario(&self, base: &ScenarioFile) -> Result<ScenarioFile, BoundaryError> {
        let text = self.degrade();
        let degrade: IntervalText = text.parse().map_err(|problem| BoundaryError::Flag {
            flag: "--band",
            value: text.clone(),
            problem,
            accepted: "a knock-over the scenario can take".into(),
        })?;
        let mut file = base.clone();
        file.spike = None;
        file.outage = None;
        file.degrade = Some(Intervals(vec![degrade]));
        Ok(file)
    }
}

/// Refuses `--band` on an axis that is not a load, or with a trigger's shape as a case.
pub fn check_axis(axis: &Parameter, lists: &[(String, String)]) -> Result<(), BoundaryError> {
    if !LOAD_AXES.contains(&axis.name) {
        return Err(BoundaryError::Flag {
            flag: "--band",
            value: format!("with --axis {}", axis.name),
            problem: "not a load axis".into(),
            accepted: format!(
                "--axis {} (the Poisson load outside the triggers)",
                LOAD_AXES.join(", ")
            ),
        });
    }
    if let Some((name, _)) = lists
        .iter()
        .find(|(name, _)| TRIGGER_PARAMETERS.contains(&name.as_str()))
    {
        return Err(BoundaryError::Flag {
            flag: "--band",
            value: format!("with --{name} as a case"),
            problem: "the runs started collapsed replace the triggers it shapes".into(),
            accepted: format!(
                "cases of any parameter but a trigger's ({})",
                TRIGGER_PARAMETERS.join(", ")
            ),
        });
    }
    Ok(())
}

/// The band of one case: its knock-over and the stays-down search.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseBand {
    /// How its runs start collapsed.
    pub knock_over: KnockOver,
    /// The search over runs started collapsed.
    pub stays_down: Search,
    /// Where its isotonic fit crosses the level, in integer units (`None`: it never does).
    pub boundary: Option<f64>,
}

impl CaseBand {
    /// The band of a case from its stays-down search.
    pub fn new(knock_over: KnockOver, stays_down: Search, level: f64) -> CaseBand {
        let boundary = match stays_down.stop {
            Stop::NoCrossing => None,
            _ => curve::crossing(&stays_down.points, level, stays_down.rising),
        };
        CaseBand {
            knock_over,
            stays_down,
            boundary,
        }
    }
}

/// One edge in JSON: the fields a result gives its boundary.
#[derive(Serialize)]
pub(super) struct JsonEdge {
    boundary: Option<f64>,
    boundary_low: Option<f64>,
    boundary_high: Option<f64>,
    runs: u64,
    stop: &'static str,
    points: Vec<JsonPoint>,
}

/// A case's band in JSON.
#[derive(Serialize)]
pub(super) struct JsonBand {
    knock_over: String,
    capacity_per_s: f64,
    floor_per_s: f64,
    stays_down: JsonEdge,
    knocked_over: JsonEdge,
}

/// The edge a CSV row of a band belongs to.
pub(super) const STAYS_DOWN: &str = "stays_down";
/// The edge of the ordinary boundary's rows.
pub(super) const KNOCKED_OVER: &str = "knocked_over";

impl Report {
    fn json_edge(&self, search: &Search, boundary: Option<f64>) -> JsonEdge {
        let bound = |v: Option<u64>| v.map(|v| self.in_unit(v as f64));
        JsonEdge {
            boundary: boundary.map(|b| self.in_unit(b)),
            boundary_low: bound(search.bracket.low),
            boundary_high: bound(search.bracket.high),
            runs: search.runs,
            stop: stop_text(search.stop),
            points: self.json_points(&search.points),
        }
    }

    /// The band of `r` in JSON, if it has one.
    pub(super) fn json_band(&self, r: &CaseResult) -> Option<JsonBand> {
        let band = r.band.as_ref()?;
        Some(JsonBand {
            knock_over: band.knock_over.degrade(),
            capacity_per_s: band.knock_over.capacity,
            floor_per_s: band.knock_over.floor(),
            stays_down: self.json_edge(&band.stays_down, band.boundary),
            knocked_over: self.json_edge(&r.search, r.boundary),
        })
    }

    /// The band's part of the table: both edges of each case, then each stays-down search's
    /// points. Empty without `--band`.
    pub(super) fn band_table(&self, names: &[String]) -> String {
        let Some(rule) = &self.band_rule else {
            return String::new();
        };
        let mut out = format!("\n{rule}\n\n");
        let width = names.iter().map(String::len).max().unwrap_or(0).max(8);
        let edge = |search: &Search, boundary: Option<f64>| {
            let end = |v: Option<u64>| v.map_or("?".to_string(), |v| self.shown(v as f64));
            let interval = match (search.bracket.low, search.bracket.high) {
                (None, None) => "-".to_string(),
                (low, high) => format!("{}..{}", end(low), end(high)),
            };
            let at = boundary.map_or("none".to_string(), |b| self.shown(b));
            (at, interval)
        };
        out.push_str(&format!(
            "{:<width$}  {:>10}  {:>18}  {:>12}  {:>18}  {:>8}  {:>8}  knock-over\n",
            "strategy",
            "stays down",
            "95% interval",
            "knocked over",
            "95% interval",
            "floor",
            "capacity"
        ));
        out.push_str(&format!(
            "{}  {}  {}  {}  {}  {}  {}  {}\n",
            "-".repeat(width),
            "-".repeat(10),
            "-".repeat(18),
            "-".repeat(12),
            "-".repeat(18),
            "-".repeat(8),
            "-".repeat(8),
            "-".repeat(10)
        ));
        for (r, name) in self.results.iter().zip(names) {
            let Some(band) = &r.band else { continue };
            let (down, down_interval) = edge(&band.stays_down, band.boundary);
            let (over, over_interval) = edge(&r.search, r.boundary);
            out.push_str(&format!(
                "{:<width$}  {:>10}  {:>18}  {:>12}  {:>18}  {:>8}  {:>8}  {}\n",
                name,
                down,
                down_interval,
                over,
                over_interval,
                per_s(band.knock_over.floor()),
                per_s(band.knock_over.capacity),
                band.knock_over.degrade()
            ));
        }
        for (r, name) in self.results.iter().zip(names) {
            let Some(band) = &r.band else { continue };
            out.push_str(&format!(
                "\n{name}: stays-down points (started collapsed: {}, {} runs, {})\n",
                band.knock_over.degrade(),
                band.stays_down.runs,
                stop_text(band.stays_down.stop)
            ));
            out.push_str(&self.points_table(&band.stays_down.points));
        }
        out
    }

    /// The band's CSV rows of `r` (the stays-down points), each ending with its edge.
    pub(super) fn band_points<'a>(&self, r: &'a CaseResult) -> &'a [Point] {
        r.band.as_ref().map_or(&[], |b| &b.stays_down.points)
    }
}

/// A rate as the band's table shows it: at most four decimals.
fn per_s(v: f64) -> String {
    let text = format!("{v:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::workload::Arrivals;

    fn scenario(text: &str) -> Scenario {
        ScenarioFile::parse(text, Some("toml"))
            .unwrap()
            .validate()
            .unwrap()
    }

    #[test]
    fn the_knock_over_ends_with_the_last_trigger_and_lasts_the_longest_call() {
        // 10 workers of 100 ms: mu = 100/s. Timeout 1 s, 2 retries, cap 30 s by default:
        // the longest call is 3 x 1 + 2 x 30 = 63 s. The last trigger is the spike ending at
        // 100 s (the outage ends at 25 s): the knock-over is 37 s..100 s at 1/6 of the
        // capacity (0.1666), the floor 100 / 3 attempts.
        let text = "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"200s\"\n\
                    spike = \"90s..100s@90/s\"\noutage = \"20s..25s\"\ntimeout = \"1s\"\n\
                    retries = 2\nstrategy = \"naive\"\n[server]\nmodel = \"capacity\"\n\
                    workers = 10\nservice_time = \"exp:100ms\"\n";
        let k = KnockOver::of(&scenario(text)).unwrap();
        assert_eq!(k.from, SimDuration::from_secs(37));
        assert_eq!(k.to, SimDuration::from_secs(100));
        assert_eq!(k.capacity, 100.0);
        assert_eq!(k.tries, 3);
        assert_eq!(k.factor(), 0.1666);
        assert!((k.floor() - 100.0 / 3.0).abs() < 1e-12);
        assert_eq!(k.degrade(), "37s..100s@0.1666");
        // Started collapsed: the degradation alone, the spike and the outage gone; the settle
        // (63 s + the 5 s hold) keeps calls starting to 100 + 68 = 168 s, within the 200 s.
        let file = ScenarioFile::parse(text, Some("toml")).unwrap();
        let collapsed = k.scenario(&file).unwrap().validate().unwrap();
        assert!(collapsed.overload.triggers.outages.is_empty());
        let at = |s: u64| SimTime::ZERO + SimDuration::from_secs(s);
        let d = collapsed.overload.triggers.degrades[0];
        assert_eq!((d.from, d.to, d.factor), (at(37), at(100), 0.1666));
        let Arrivals::Poisson(schedule) = &collapsed.overload.arrivals else {
            panic!("poisson");
        };
        assert!(schedule.spikes.is_empty());
        assert_eq!(schedule.end, at(200));
        // A trigger ending before the longest call: the knock-over starts at 0, and a load
        // shorter than it is lengthened by the settle past its end.
        let early = text
            .replace("spike = \"90s..100s@90/s\"\n", "")
            .replace("duration = \"200s\"", "duration = \"22s\"");
        let k = KnockOver::of(&scenario(&early)).unwrap();
        assert_eq!(k.degrade(), "0s..25s@0.1666");
        let file = ScenarioFile::parse(&early, Some("toml")).unwrap();
        let collapsed = k.scenario(&file).unwrap().validate().unwrap();
        let Arrivals::Poisson(schedule) = &collapsed.overload.arrivals else {
            panic!("poisson");
        };
        assert_eq!(schedule.end, at(25 + 68));
        // No retries: one timeout long, at half the capacity.
        let once = early.replace("retries = 2", "retries = 0");
        let k = KnockOver::of(&scenario(&once)).unwrap();
        assert_eq!(k.degrade(), "24s..25s@0.5");
    }

    #[test]
    fn a_server_without_a_capacity_or_a_run_without_a_timeout_has_no_knock_over() {
        let poisson = "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"100s\"\n\
                       outage = \"20s..25s\"\n";
        let flaky = scenario(&format!(
            "{poisson}timeout = \"1s\"\n[server]\nmodel = \"flaky\"\nfailure_rate = 0.1\n"
        ));
        assert!(KnockOver::of(&flaky).unwrap_err().contains("flaky"));
        let unlimited = scenario(&format!(
            "{poisson}timeout = \"1s\"\n[server]\nmodel = \"capacity\"\n"
        ));
        assert!(KnockOver::of(&unlimited).unwrap_err().contains("--workers"));
        let untimed = scenario(&format!(
            "{poisson}[server]\nmodel = \"capacity\"\nworkers = 4\n"
        ));
        assert!(KnockOver::of(&untimed).unwrap_err().contains("--timeout"));
    }
}
