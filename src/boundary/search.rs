//! The adaptive search for the axis value at which the collapse probability crosses the level:
//! a noisy bisection whose every probe is a sequential test. No simulation here: the search
//! asks an [`Oracle`] for batches of seeds at axis values and decides where to spend the next
//! batch from the answers alone, so it is deterministic whatever order the runs finish in.
//!
//! **The method.** Each point gets `batch` seeds at a time. A point is *below* when the upper
//! end of its 95 % interval ([`super::wilson::estimate`]) is under the level, *above* when the
//! lower end is over it, *unsure* otherwise. The ends of the range are evaluated first (they
//! fix the direction, and say whether the curve crosses the level in the range at all). Then,
//! repeatedly: an unsure point between the brackets gets another batch, up to
//! `max_seeds` (a sequential test: seeds go where the answer is uncertain); when every unsure
//! point has its `max_seeds`, the widest gap between a bracket and the nearest unsure point (or
//! between the brackets, when there is none) is bisected. It stops when the brackets are at
//! most twice the tolerance apart, when `max_runs` would be passed, or when no whole axis unit
//! is left to bisect. This is bisection on a noisy monotone response with repeated queries at
//! each probe, the baseline of Karp and Kleinberg's *noisy binary search* (SODA 2007; the
//! problem as stated at <https://cstheory.stackexchange.com/questions/46482>), rather than
//! the Bayesian probabilistic bisection of Waeber, Frazier and Henderson ("Bisection search
//! with noisy responses", SIAM J. Control Optim. 51(3), 2013,
//! <https://bibbase.org/network/publication/waeber-frazier-henderson-bisectionsearchwithnoisyresponses-2013>),
//! whose fixed-accuracy oracle does not hold near the crossing, where a seed's verdict is a
//! fair coin.
//!
//! **The interval.** The boundary lies between the highest point on the range's first side
//! and the lowest point on its far side (for a curve rising along the axis: the highest
//! *below* point under the lowest *above* point). Each of the two ends is wrong only if its
//! one-sided 97.5 % bound is, so the interval covers the crossing of a monotone curve with
//! probability at least 95 % (Bonferroni) for the points it names.

use std::collections::BTreeMap;
use std::ops::Range;

use super::wilson::{estimate, Estimate};

/// A batch of seeds to run at one axis value: replicates `replicates` of the cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The axis value, in the axis's integer unit (a nanosecond, a billionth, one).
    pub value: u64,
    /// The replicates to run (sweep replicate numbers).
    pub replicates: Range<u64>,
}

/// The verdict of one seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The run seed (a plain run with `--seed` this value replays it).
    pub seed: u64,
    /// True when the run collapsed.
    pub collapsed: bool,
}

/// What the search asks of the simulator.
pub trait Oracle {
    /// The error a batch can fail with.
    type Error;
    /// Runs every probe and returns each one's outcomes in replicate order.
    fn run(&self, probes: &[Probe]) -> Result<Vec<Vec<Outcome>>, Self::Error>;
}

/// How a search proceeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// The range's ends, in integer units, `low < high`.
    pub range: (u64, u64),
    /// The collapse probability whose crossing is sought, in (0, 1).
    pub level: f64,
    /// Seeds added to a point at a time.
    pub batch: u64,
    /// Seeds a point gets at most.
    pub max_seeds: u64,
    /// The interval's half-width to reach, in integer units.
    pub tolerance: u64,
    /// Runs the search may spend at most.
    pub max_runs: u64,
}

/// One evaluated axis value.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The axis value, in integer units.
    pub value: u64,
    /// Each seed's verdict, replicates `0..outcomes.len()` in order.
    pub outcomes: Vec<Outcome>,
}

impl Point {
    /// Seeds run.
    pub fn seeds(&self) -> u64 {
        self.outcomes.len() as u64
    }

    /// Seeds that collapsed.
    pub fn collapsed(&self) -> u64 {
        self.outcomes.iter().filter(|o| o.collapsed).count() as u64
    }

    /// The collapse probability and its 95 % interval.
    pub fn estimate(&self) -> Estimate {
        estimate(self.collapsed(), self.seeds())
    }

    /// Where the point lies against `level`.
    pub fn side(&self, level: f64) -> Side {
        let e = self.estimate();
        if e.high < level {
            Side::Below
        } else if e.low > level {
            Side::Above
        } else {
            Side::Unsure
        }
    }
}

/// A point's place against the level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Its whole interval is under the level.
    Below,
    /// Its whole interval is over the level.
    Above,
    /// Its interval holds the level.
    Unsure,
}

/// Why a search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The brackets are within twice the tolerance.
    Converged,
    /// Both ends of the range lie on one side of the level: no crossing in the range.
    NoCrossing,
    /// Another batch would pass `max_runs`.
    Budget,
    /// No whole axis unit is left between the points to bisect.
    Resolution,
}

/// The brackets of the crossing, in integer units (`None`: that side is not bracketed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Bracket {
    /// The last point on the range's first side before the crossing.
    pub low: Option<u64>,
    /// The first point on the far side.
    pub high: Option<u64>,
}

/// A finished search.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    /// The points evaluated, by value.
    pub points: Vec<Point>,
    /// Runs spent.
    pub runs: u64,
    /// Why it stopped.
    pub stop: Stop,
    /// True when the collapse probability rises along the axis (from the range's ends).
    pub rising: bool,
    /// The brackets (both `None` with [`Stop::NoCrossing`]).
    pub bracket: Bracket,
}

/// The direction of the curve from its ends: rising unless the far end's estimate is lower.
fn rising(points: &BTreeMap<u64, Point>) -> bool {
    let p = |point: Option<&Point>| point.map_or(0.0, |p| p.estimate().p);
    p(points.values().next_back()) >= p(points.values().next())
}

/// The brackets of `points` for a curve rising (or falling) along the axis.
pub fn bracket<'a>(
    points: impl Iterator<Item = &'a Point> + Clone,
    level: f64,
    rising: bool,
) -> Bracket {
    let (first, far) = match rising {
        true => (Side::Below, Side::Above),
        false => (Side::Above, Side::Below),
    };
    let high = points
        .clone()
        .filter(|p| p.side(level) == far)
        .map(|p| p.value)
        .min();
    let low = points
        .filter(|p| p.side(level) == first && high.is_none_or(|h| p.value < h))
        .map(|p| p.value)
        .max();
    Bracket { low, high }
}

/// Runs the search.
pub fn search<O: Oracle>(oracle: &O, settings: &Settings) -> Result<Search, O::Error> {
    let (lo, hi) = settings.range;
    let mut points: BTreeMap<u64, Point> = BTreeMap::new();
    let mut runs = 0u64;
    let mut pending: Vec<u64> = vec![lo, hi];
    let stop = loop {
        if !pending.is_empty() {
            let probes: Vec<Probe> = pending
                .iter()
                .map(|&value| {
                    let start = points.get(&value).map_or(0, Point::seeds);
                    Probe {
                        value,
                        replicates: start..start + settings.batch,
                    }
                })
                .collect();
            let cost = settings.batch * probes.len() as u64;
            if runs + cost > settings.max_runs {
                break Stop::Budget;
            }
            for (probe, outcomes) in probes.iter().zip(oracle.run(&probes)?) {
                points
                    .entry(probe.value)
                    .or_insert_with(|| Point {
                        value: probe.value,
                        outcomes: Vec::new(),
                    })
                    .outcomes
                    .extend(outcomes);
            }
            runs += cost;
            pending.clear();
        }
        match next(&points, settings) {
            Ok(values) => pending = values,
            Err(stop) => break stop,
        }
    };
    let up = rising(&points);
    let bracket = match stop {
        Stop::NoCrossing => Bracket::default(),
        _ => bracket(points.values(), settings.level, up),
    };
    Ok(Search {
        points: points.into_values().collect(),
        runs,
        stop,
        rising: up,
        bracket,
    })
}

/// The curve instead of a search: `points` evenly spaced values over the range (ends
/// included, rounded to whole units), each given `batch` seeds in one batch of runs.
pub fn grid<O: Oracle>(oracle: &O, settings: &Settings, points: u64) -> Result<Search, O::Error> {
    let (lo, hi) = settings.range;
    let mut values: Vec<u64> = (0..points)
        .map(|i| lo + ((hi - lo) as u128 * u128::from(i) / u128::from(points - 1)) as u64)
        .collect();
    values.dedup();
    let probes: Vec<Probe> = values
        .iter()
        .map(|&value| Probe {
            value,
            replicates: 0..settings.batch,
        })
        .collect();
    let evaluated: Vec<Point> = probes
        .iter()
        .zip(oracle.run(&probes)?)
        .map(|(probe, outcomes)| Point {
            value: probe.value,
            outcomes,
        })
        .collect();
    let by_value: BTreeMap<u64, Point> = evaluated.iter().map(|p| (p.value, p.clone())).collect();
    let up = rising(&by_value);
    let b = bracket(evaluated.iter(), settings.level, up);
    let sides: Vec<Side> = evaluated.iter().map(|p| p.side(settings.level)).collect();
    let (first, far) = match up {
        true => (Side::Below, Side::Above),
        false => (Side::Above, Side::Below),
    };
    let never = sides.iter().all(|&s| s == first) || sides.iter().all(|&s| s == far);
    let stop = match (never, b.low, b.high) {
        (true, _, _) => Stop::NoCrossing,
        (false, Some(l), Some(h)) if h - l <= 2 * settings.tolerance => Stop::Converged,
        _ => Stop::Resolution,
    };
    Ok(Search {
        runs: settings.batch * evaluated.len() as u64,
        points: evaluated,
        stop,
        rising: up,
        bracket: if never { Bracket::default() } else { b },
    })
}

/// The values to give a batch next, or why the search is over.
fn next(points: &BTreeMap<u64, Point>, s: &Settings) -> Result<Vec<u64>, Stop> {
    let (lo, hi) = s.range;
    let side = |v: u64| points[&v].side(s.level);
    let room = |v: u64| points[&v].seeds() < s.max_seeds;
    // The ends first: they say whether there is a crossing, and its direction.
    let (at_lo, at_hi) = (side(lo), side(hi));
    if at_lo == at_hi && at_lo != Side::Unsure {
        return Err(Stop::NoCrossing);
    }
    let unsure_ends: Vec<u64> = [lo, hi]
        .into_iter()
        .filter(|&v| side(v) == Side::Unsure && room(v))
        .collect();
    if !unsure_ends.is_empty() {
        return Ok(unsure_ends);
    }
    let up = rising(points);
    let (first, far) = match up {
        true => (Side::Below, Side::Above),
        false => (Side::Above, Side::Below),
    };
    // A curve already past the level at the range's start (or not yet at its end).
    if at_lo == far || at_hi == first {
        return Err(Stop::NoCrossing);
    }
    let b = bracket(points.values(), s.level, up);
    if let (Some(l), Some(h)) = (b.low, b.high) {
        if h - l <= 2 * s.tolerance {
            return Err(Stop::Converged);
        }
    }
    let (a, z) = (b.low.unwrap_or(lo), b.high.unwrap_or(hi));
    // Unsure points between the brackets: another batch to the one with fewest seeds.
    let unsure: Vec<u64> = points
        .range(a..=z)
        .filter(|(_, p)| p.side(s.level) == Side::Unsure)
        .map(|(&v, _)| v)
        .collect();
    if let Some(&v) = unsure
        .iter()
        .filter(|&&v| room(v))
        .min_by_key(|&&v| (points[&v].seeds(), v))
    {
        return Ok(vec![v]);
    }
    // Bisect the widest gap between a bracket and the nearest unsure point.
    let gaps = match (unsure.first(), unsure.last()) {
        (Some(&first), Some(&last)) => vec![(a, first), (last, z)],
        _ => vec![(a, z)],
    };
    let widest = gaps
        .into_iter()
        .filter(|(from, to)| to - from >= 2)
        .max_by_key(|&(from, to)| (to - from, std::cmp::Reverse(from)));
    match widest {
        Some((from, to)) => Ok(vec![from + (to - from) / 2]),
        None => Err(Stop::Resolution),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::derive_seed;
    use std::cell::Cell;

    /// A synthetic verdict: a seed collapses when its uniform draw is under `p(x)`, a logistic
    /// curve crossing 0.5 at `crossing` with scale `width` (or falling, with `rising` false).
    struct Logistic {
        crossing: f64,
        width: f64,
        rising: bool,
        runs: Cell<u64>,
    }

    impl Logistic {
        fn p(&self, x: f64) -> f64 {
            let z = (x - self.crossing) / self.width;
            let z = if self.rising { z } else { -z };
            1.0 / (1.0 + (-z).exp())
        }
    }

    impl Oracle for Logistic {
        type Error = ();
        fn run(&self, probes: &[Probe]) -> Result<Vec<Vec<Outcome>>, ()> {
            Ok(probes
                .iter()
                .map(|probe| {
                    probe
                        .replicates
                        .clone()
                        .map(|r| {
                            self.runs.set(self.runs.get() + 1);
                            let seed = derive_seed(7, &format!("x={};replicate={r}", probe.value));
                            let u = crate::rng::unit_interval(seed);
                            Outcome {
                                seed,
                                collapsed: u < self.p(probe.value as f64),
                            }
                        })
                        .collect()
                })
                .collect())
        }
    }

    fn settings(tolerance: u64) -> Settings {
        Settings {
            range: (0, 10_000),
            level: 0.5,
            batch: 20,
            max_seeds: 80,
            tolerance,
            max_runs: 2_000,
        }
    }

    #[test]
    fn a_sharp_crossing_is_bracketed_within_the_tolerance() {
        for (crossing, rising) in [(3_700.0, true), (8_123.0, true), (1_234.0, false)] {
            let oracle = Logistic {
                crossing,
                width: 20.0,
                rising,
                runs: Cell::new(0),
            };
            let s = search(&oracle, &settings(200)).unwrap();
            assert_eq!(s.stop, Stop::Converged, "{crossing}: {s:?}");
            assert_eq!(s.rising, rising);
            let (low, high) = (s.bracket.low.unwrap(), s.bracket.high.unwrap());
            assert!(high - low <= 400, "{low}..{high}");
            assert!(
                (low as f64) < crossing && crossing < high as f64,
                "{crossing} not in {low}..{high}"
            );
            // The reported boundary, the isotonic fit's crossing of the level, lies within the
            // tolerance of the true crossing too.
            let estimate = crate::boundary::curve::crossing(&s.points, 0.5, rising).unwrap();
            assert!(
                (estimate - crossing).abs() <= 200.0,
                "{estimate} is not within 200 of {crossing}"
            );
            assert_eq!(s.runs, oracle.runs.get());
            // A grid at the tolerance's resolution (51 points) whose every point has the seeds
            // the search gives a point at most (80) costs 4080 runs; one of 20 seeds a point
            // (the search's batch), 1020.
            assert!(s.runs * 4 <= 51 * 80, "{} runs", s.runs);
            assert!(s.runs <= 1_020 / 3, "{} runs", s.runs);
        }
    }

    #[test]
    fn a_gradual_crossing_spends_seeds_near_it_and_stops_at_the_budget() {
        let oracle = Logistic {
            crossing: 5_000.0,
            width: 1_000.0,
            rising: true,
            runs: Cell::new(0),
        };
        let s = search(&oracle, &settings(50)).unwrap();
        assert!(matches!(s.stop, Stop::Budget | Stop::Converged), "{s:?}");
        assert!(s.runs <= 2_000);
        let (low, high) = (s.bracket.low.unwrap(), s.bracket.high.unwrap());
        assert!(
            (low as f64) <= 5_000.0 && 5_000.0 <= high as f64,
            "{low}..{high}"
        );
        // The points with the most seeds are the unsure ones, near the crossing.
        let most = s.points.iter().max_by_key(|p| p.seeds()).unwrap();
        assert_eq!(most.seeds(), 80);
        assert!(
            (most.value as f64 - 5_000.0).abs() < 2_000.0,
            "{}",
            most.value
        );
    }

    #[test]
    fn a_curve_that_never_crosses_in_the_range_says_so() {
        let oracle = Logistic {
            crossing: 50_000.0,
            width: 100.0,
            rising: true,
            runs: Cell::new(0),
        };
        let s = search(&oracle, &settings(100)).unwrap();
        assert_eq!(s.stop, Stop::NoCrossing);
        assert_eq!(s.bracket, Bracket::default());
        assert_eq!(s.runs, 40);
    }

    #[test]
    fn whole_units_stop_when_nothing_is_left_to_bisect() {
        // A step at 3.5 over 0..8: bracketed by 3 and 4, one unit apart.
        let oracle = Logistic {
            crossing: 3.5,
            width: 0.01,
            rising: true,
            runs: Cell::new(0),
        };
        let s = search(
            &oracle,
            &Settings {
                range: (0, 8),
                tolerance: 0,
                ..settings(0)
            },
        )
        .unwrap();
        assert_eq!(s.stop, Stop::Resolution);
        assert_eq!(
            s.bracket,
            Bracket {
                low: Some(3),
                high: Some(4)
            }
        );
    }
}
