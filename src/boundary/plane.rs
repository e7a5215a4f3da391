//! Two axes: the phase diagram of a scenario, the collapse probability over a rectangle of two
//! numeric sweep parameters, refined where it crosses the level. Validation reuses the one-axis
//! plan ([`BoundaryPlan::new`], at both ends of the second axis); every cell is a row of the
//! one-cell sweep of both values ([`SweepOracle`]), so a cell replays as a sweep with both flags.
//!
//! **The method.** A coarse grid of [`COARSE_POINTS`] × [`COARSE_POINTS`] values (ends
//! included) gets `batch` seeds each. A square of the grid *straddles* the level when its four
//! corners' 95 % intervals ([`super::wilson`]) are not all on one side of it: one holds the
//! level, or one is below and another above. Then, repeatedly: the corners of straddling
//! squares whose interval holds the level get another batch, up to `max_seeds` (the one-axis
//! search's sequential test); once none has room, every straddling square wider than the finest
//! resolution is split in four (its edges' midpoints and centre evaluated), a quadtree
//! refinement of the cells the contour crosses, as adaptive contouring does (Bloomenthal,
//! "Polygonization of implicit surfaces", CAGD 5(4), 1988, <https://doi.org/10.1016/0167-8396(88)90013-2>).
//! The finest resolution is the one at which a square is at most twice the tolerance on each
//! axis. The search stops when no straddling square can be split (`converged`; `axis resolution
//! reached` when whole units run out first), when the next batch would pass `max_runs`, or at
//! once when no square of the coarse grid straddles (`no crossing in the range`). The contour is
//! drawn through the straddling squares by marching squares (Lorensen & Cline, "Marching
//! cubes", SIGGRAPH 1987, <https://doi.org/10.1145/37402.37422>): on each edge whose ends lie on
//! either side of the level, the crossing interpolated linearly between their estimates.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::atomic::AtomicU64;

use crate::config::ScenarioFile;
use crate::sweep::parameter::{parse_axis, Parameter};

use super::evaluate::{value_text, SweepOracle};
use super::search::{Outcome, Point, Side, Stop};
use super::wilson::Estimate;
use super::{seed_rule, BoundaryError, BoundaryPlan, BoundarySpec, Case};

/// Values a side of the coarse grid gets (ends included).
pub const COARSE_POINTS: u64 = 5;

/// Splits of a coarse square at most, whatever the tolerance.
const MAX_DEPTH: u32 = 8;

/// A batch of seeds at one pair of values: replicates `replicates` of the cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellProbe {
    /// The two axes' values, in their integer units.
    pub values: (u64, u64),
    /// The replicates to run.
    pub replicates: Range<u64>,
}

/// What the plane search asks of the simulator.
pub trait PlaneOracle {
    /// The error a batch can fail with.
    type Error;
    /// Runs every probe and returns each one's outcomes in replicate order.
    fn run(&self, probes: &[CellProbe]) -> Result<Vec<Vec<Outcome>>, Self::Error>;
}

/// How a plane search proceeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneSettings {
    /// Each axis's range, in integer units, `low < high`.
    pub ranges: [(u64, u64); 2],
    /// The level, in (0, 1).
    pub level: f64,
    /// Seeds added to a cell at a time.
    pub batch: u64,
    /// Seeds a cell gets at most.
    pub max_seeds: u64,
    /// Times a coarse square may be split in four.
    pub depth: u32,
    /// Runs the search may spend at most.
    pub max_runs: u64,
}

/// One evaluated pair of values.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The two axes' values, in integer units.
    pub values: (u64, u64),
    /// The seeds run there and their verdicts (its `value` is the first axis's).
    pub point: Point,
}

/// A square of the lattice, in the axes' integer units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Square {
    /// The first axis's low and high values.
    pub a: (u64, u64),
    /// The second axis's.
    pub b: (u64, u64),
}

/// A finished plane search.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneSearch {
    /// The cells evaluated, by (second axis, first axis).
    pub cells: Vec<Cell>,
    /// The finest squares the level's contour crosses, by position.
    pub contour: Vec<Square>,
    /// Runs spent.
    pub runs: u64,
    /// Why it stopped.
    pub stop: Stop,
}

/// A lattice square: its low corner and side in lattice steps.
type Node = (u64, u64, u64);

struct Lattice {
    ranges: [(u64, u64); 2],
    steps: u64,
}

impl Lattice {
    fn value(&self, axis: usize, i: u64) -> u64 {
        let (lo, hi) = self.ranges[axis];
        lo + ((hi - lo) as u128 * u128::from(i) / u128::from(self.steps)) as u64
    }

    fn values(&self, (i, j): (u64, u64)) -> (u64, u64) {
        (self.value(0, i), self.value(1, j))
    }

    fn corners(&self, (i, j, s): Node) -> [(u64, u64); 4] {
        [(i, j), (i + s, j), (i, j + s), (i + s, j + s)].map(|c| self.values(c))
    }

    fn square(&self, (i, j, s): Node) -> Square {
        Square {
            a: (self.value(0, i), self.value(0, i + s)),
            b: (self.value(1, j), self.value(1, j + s)),
        }
    }
}

/// True when the corners' sides are not all below or all above the level.
fn straddles(sides: &[Side]) -> bool {
    sides.contains(&Side::Unsure) || (sides.contains(&Side::Below) && sides.contains(&Side::Above))
}

/// Runs the plane search.
pub fn search<O: PlaneOracle>(oracle: &O, s: &PlaneSettings) -> Result<PlaneSearch, O::Error> {
    let coarse = COARSE_POINTS - 1;
    let lattice = Lattice {
        ranges: s.ranges,
        steps: coarse << s.depth,
    };
    let side = 1u64 << s.depth;
    let mut leaves: BTreeSet<Node> = (0..coarse)
        .flat_map(|i| (0..coarse).map(move |j| (i * side, j * side, side)))
        .collect();
    let mut cells: BTreeMap<(u64, u64), Point> = BTreeMap::new();
    let mut runs = 0u64;
    let mut pending: Vec<(u64, u64)> = (0..=coarse)
        .flat_map(|j| (0..=coarse).map(move |i| (i * side, j * side)))
        .map(|c| lattice.values(c))
        .collect();
    // The leaves before a split, put back if its new corners cannot be paid for.
    let mut unsplit: Option<BTreeSet<Node>> = None;
    let stop = loop {
        pending.sort_unstable();
        pending.dedup();
        if !pending.is_empty() {
            let probes: Vec<CellProbe> = pending
                .iter()
                .map(|&values| {
                    let start = cells.get(&values).map_or(0, Point::seeds);
                    CellProbe {
                        values,
                        replicates: start..start + s.batch,
                    }
                })
                .collect();
            let cost = s.batch * probes.len() as u64;
            if runs + cost > s.max_runs {
                if let Some(before) = unsplit.take() {
                    leaves = before;
                }
                break Stop::Budget;
            }
            unsplit = None;
            for (probe, outcomes) in probes.iter().zip(oracle.run(&probes)?) {
                cells
                    .entry(probe.values)
                    .or_insert_with(|| Point {
                        value: probe.values.0,
                        outcomes: Vec::new(),
                    })
                    .outcomes
                    .extend(outcomes);
            }
            runs += cost;
            pending.clear();
        }
        let side_of = |v: &(u64, u64)| cells[v].side(s.level);
        let straddling: Vec<Node> = leaves
            .iter()
            .copied()
            .filter(|&n| straddles(&lattice.corners(n).map(|c| side_of(&c))))
            .collect();
        if straddling.is_empty() {
            break Stop::NoCrossing;
        }
        // Seeds first, where a corner's interval still holds the level.
        pending = straddling
            .iter()
            .flat_map(|&n| lattice.corners(n))
            .filter(|c| side_of(c) == Side::Unsure && cells[c].seeds() < s.max_seeds)
            .collect();
        if !pending.is_empty() {
            continue;
        }
        // Then the straddling squares are split in four, where whole units allow.
        let splittable: Vec<Node> = straddling.into_iter().filter(|n| n.2 >= 2).collect();
        if splittable.is_empty() {
            break Stop::Converged;
        }
        let mut split_any = false;
        unsplit = Some(leaves.clone());
        for (i, j, size) in splittable {
            let half = size / 2;
            let before = lattice.square((i, j, size));
            leaves.remove(&(i, j, size));
            for (di, dj) in [(0, 0), (half, 0), (0, half), (half, half)] {
                leaves.insert((i + di, j + dj, half));
            }
            for (di, dj) in [
                (half, 0),
                (0, half),
                (half, half),
                (size, half),
                (half, size),
            ] {
                let at = lattice.values((i + di, j + dj));
                let new_value = (at.0 > before.a.0 && at.0 < before.a.1)
                    || (at.1 > before.b.0 && at.1 < before.b.1);
                split_any |= new_value;
                if !cells.contains_key(&at) {
                    pending.push(at);
                }
            }
        }
        if pending.is_empty() && !split_any {
            break Stop::Resolution;
        }
    };
    let contour = match stop {
        Stop::NoCrossing => Vec::new(),
        _ => {
            let mut squares: Vec<Square> = leaves
                .iter()
                .filter(|&&n| {
                    lattice.corners(n).iter().all(|c| cells.contains_key(c))
                        && straddles(&lattice.corners(n).map(|c| cells[&c].side(s.level)))
                })
                .map(|&n| lattice.square(n))
                .collect();
            squares.sort_unstable_by_key(|q| (q.b, q.a));
            squares.dedup();
            squares
        }
    };
    let mut cells: Vec<Cell> = cells
        .into_iter()
        .map(|(values, point)| Cell { values, point })
        .collect();
    cells.sort_by_key(|c| (c.values.1, c.values.0));
    Ok(PlaneSearch {
        cells,
        contour,
        runs,
        stop,
    })
}

/// The marching-squares segments of the level's contour through `search`'s squares, in the
/// axes' integer units: on each edge of a square whose corners' estimates lie either side of
/// the level, the crossing interpolated linearly; a square with four crossings (a saddle) is
/// joined as two segments, each edge to its neighbour counter-clockwise.
pub fn contour_segments(search: &PlaneSearch, level: f64) -> Vec<[(f64, f64); 2]> {
    let p: BTreeMap<(u64, u64), f64> = search
        .cells
        .iter()
        .map(|c| (c.values, c.point.estimate().p))
        .collect();
    let mut segments = Vec::new();
    for q in &search.contour {
        let corners = [
            (q.a.0, q.b.0),
            (q.a.1, q.b.0),
            (q.a.1, q.b.1),
            (q.a.0, q.b.1),
        ];
        let Some(ps) = corners
            .iter()
            .map(|c| p.get(c).copied())
            .collect::<Option<Vec<f64>>>()
        else {
            continue;
        };
        let mut crossings = Vec::new();
        for k in 0..4 {
            let (c0, c1) = (corners[k], corners[(k + 1) % 4]);
            let (p0, p1) = (ps[k], ps[(k + 1) % 4]);
            if (p0 < level) != (p1 < level) {
                let t = (level - p0) / (p1 - p0);
                let at = |u: u64, v: u64| u as f64 + t * (v as f64 - u as f64);
                crossings.push((at(c0.0, c1.0), at(c0.1, c1.1)));
            }
        }
        for pair in crossings.chunks_exact(2) {
            segments.push([pair[0], pair[1]]);
        }
    }
    segments
}

/// A validated two-axis search. Build with [`PlanePlan::new`], run with [`PlanePlan::run`].
#[derive(Debug)]
pub struct PlanePlan {
    base: ScenarioFile,
    axes: [&'static Parameter; 2],
    cases: Vec<Case>,
    settings: PlaneSettings,
    threads: usize,
    max_requests: u64,
    verdict_rule: String,
    work: u128,
}

/// `base` with `axis` set to `value` (integer units).
fn with_value(base: &ScenarioFile, axis: &'static Parameter, value: u64) -> ScenarioFile {
    let mut file = base.clone();
    if let Ok(parsed) = parse_axis(axis, &value_text(axis.kind, value)) {
        (axis.set)(&mut file, &parsed.value(0));
    }
    file
}

/// The splits that bring a coarse square's side (a quarter of the range) to at most twice the
/// tolerance.
fn depth_for(range: u64, tolerance: u64) -> u32 {
    let mut depth = 0;
    while depth < MAX_DEPTH && range > 2 * tolerance * ((COARSE_POINTS - 1) << depth) {
        depth += 1;
    }
    depth
}

impl PlanePlan {
    /// Checks everything before any run: both axes and ranges (as one-axis searches would,
    /// each at both ends of the other), that they differ, the seeds and the budget.
    pub fn new(spec: BoundarySpec) -> Result<PlanePlan, BoundaryError> {
        let Some((b_name, b_range)) = spec.second_axis.clone() else {
            return Err(BoundaryError::Flag {
                flag: "--axis",
                value: spec.axis.0.clone(),
                problem: "one axis given".into(),
                accepted: "two --axis NAME --range LO..HI pairs for a phase diagram".into(),
            });
        };
        if crate::sweep::parameter::parameter(&b_name)
            .zip(crate::sweep::parameter::parameter(&spec.axis.0))
            .is_some_and(|(a, b)| std::ptr::eq(a, b))
        {
            return Err(BoundaryError::Flag {
                flag: "--axis",
                value: b_name,
                problem: "given twice".into(),
                accepted: "two different numeric sweep parameters, each with its --range".into(),
            });
        }
        if spec.band {
            return Err(BoundaryError::Flag {
                flag: "--band",
                value: "with two axes".into(),
                problem: "the vulnerable band is a range of one load axis".into(),
                accepted: "--band with one --axis rate; two axes give the phase diagram".into(),
            });
        }
        if spec.curve.is_some() {
            return Err(BoundaryError::Flag {
                flag: "--curve",
                value: "with two axes".into(),
                problem: "a curve has one axis".into(),
                accepted: format!(
                    "one --axis for --curve; two axes give the phase diagram, a {COARSE_POINTS} x {COARSE_POINTS} grid refined near the level"
                ),
            });
        }
        let coarse = COARSE_POINTS * COARSE_POINTS * spec.seeds;
        if spec.max_runs < coarse {
            return Err(BoundaryError::Flag {
                flag: "--max-runs",
                value: spec.max_runs.to_string(),
                problem: format!("fewer than the {coarse} runs of the {COARSE_POINTS} x {COARSE_POINTS} coarse grid"),
                accepted: format!("at least --seeds × {} = {coarse} with two axes", COARSE_POINTS * COARSE_POINTS),
            });
        }
        // The first axis at both ends of the second, and the second at both ends of the
        // first: every corner of the rectangle is validated, every case at each.
        let one = |axis: (String, String), base: ScenarioFile| {
            BoundaryPlan::new(BoundarySpec {
                base,
                axis,
                second_axis: None,
                ..spec.clone()
            })
        };
        let along_a = one(spec.axis.clone(), spec.base.clone())?;
        let (a, a_range) = (along_a.axis, along_a.settings.range);
        let along_b = one(
            (b_name.clone(), b_range.clone()),
            with_value(&spec.base, a, a_range.0),
        )?;
        let (b, b_range_units) = (along_b.axis, along_b.settings.range);
        let far_b = one((b_name, b_range), with_value(&spec.base, a, a_range.1))?;
        let a_at_b_hi = one(
            spec.axis.clone(),
            with_value(&spec.base, b, b_range_units.1),
        )?;
        let depth = depth_for(a_range.1 - a_range.0, along_a.settings.tolerance).max(depth_for(
            b_range_units.1 - b_range_units.0,
            along_b.settings.tolerance,
        ));
        Ok(PlanePlan {
            base: spec.base,
            axes: [a, b],
            cases: along_a.cases,
            settings: PlaneSettings {
                ranges: [a_range, b_range_units],
                level: along_a.settings.level,
                batch: along_a.settings.batch,
                max_seeds: along_a.settings.max_seeds,
                depth,
                max_runs: along_a.settings.max_runs,
            },
            threads: along_a.threads,
            max_requests: along_a.max_requests,
            verdict_rule: along_a.verdict_rule,
            work: [along_a.work, along_b.work, far_b.work, a_at_b_hi.work]
                .into_iter()
                .max()
                .unwrap_or(0),
        })
    }

    /// The work estimate, in events: every case spending its `--max-runs` on its costliest
    /// corner.
    pub fn work_estimate(&self) -> u128 {
        self.work
    }

    /// Runs the most the search may spend: every case's `--max-runs`.
    pub fn max_runs(&self) -> u64 {
        self.settings
            .max_runs
            .saturating_mul(self.cases.len() as u64)
    }

    /// Runs every case's search on `pool`; `progress` is told the runs finished so far.
    pub fn run(
        &self,
        pool: &rayon::ThreadPool,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<PlaneReport, BoundaryError> {
        let done = AtomicU64::new(0);
        let mut results = Vec::new();
        for case in &self.cases {
            let oracle = PlaneSweep {
                plan: self,
                pairs: &case.pairs,
                pool,
                progress,
                done: &done,
            };
            results.push(PlaneResult {
                case: case.clone(),
                search: search(&oracle, &self.settings)?,
            });
        }
        Ok(PlaneReport {
            axes: self.axes,
            ranges: self.settings.ranges,
            level: self.settings.level,
            verdict_rule: self.verdict_rule.clone(),
            method: format!(
                "{METHOD}; {} seeds a batch, at most {} a cell, squares split {} times at most",
                self.settings.batch, self.settings.max_seeds, self.settings.depth
            ),
            seed_rule: seed_rule(&self.base),
            results,
        })
    }
}

/// The plane method, as the output names it.
pub const METHOD: &str = "a 5 x 5 grid, then seeds added to the corners whose 95 % interval \
holds the level and a quadtree split of every square whose corners straddle it (Bloomenthal \
1988), down to twice the tolerance on each axis; the contour by marching squares (Lorensen & \
Cline 1987)";

/// Runs cells of one case through the sweep: the second axis's value joins the case's pairs.
struct PlaneSweep<'a> {
    plan: &'a PlanePlan,
    pairs: &'a [(String, String)],
    pool: &'a rayon::ThreadPool,
    progress: &'a (dyn Fn(u64) + Sync),
    done: &'a AtomicU64,
}

impl PlaneOracle for PlaneSweep<'_> {
    type Error = BoundaryError;

    fn run(&self, probes: &[CellProbe]) -> Result<Vec<Vec<Outcome>>, BoundaryError> {
        let [a, b] = self.plan.axes;
        let mut plans = Vec::new();
        let mut first = None;
        for probe in probes {
            let mut fixed = self.pairs.to_vec();
            fixed.push((b.name.to_string(), value_text(b.kind, probe.values.1)));
            let oracle = SweepOracle {
                base: &self.plan.base,
                axis: a,
                fixed: &fixed,
                pool: self.pool,
                threads: self.plan.threads,
                max_requests: self.plan.max_requests,
                progress: self.progress,
                done: self.done,
            };
            plans.push(oracle.plan(probe.values.0, probe.replicates.end)?);
            first.get_or_insert(fixed);
        }
        let fixed = first.unwrap_or_default();
        let oracle = SweepOracle {
            base: &self.plan.base,
            axis: a,
            fixed: &fixed,
            pool: self.pool,
            threads: self.plan.threads,
            max_requests: self.plan.max_requests,
            progress: self.progress,
            done: self.done,
        };
        let replicates: Vec<Range<u64>> = probes.iter().map(|p| p.replicates.clone()).collect();
        oracle.run_plans(&plans, &replicates)
    }
}

/// One case's plane search.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneResult {
    /// The case.
    pub case: Case,
    /// The cells, contour and stop.
    pub search: PlaneSearch,
}

/// What a two-axis search found, for its export and chart.
#[derive(Clone, Debug)]
pub struct PlaneReport {
    /// The two axes.
    pub axes: [&'static Parameter; 2],
    /// Their ranges, in integer units.
    pub ranges: [(u64, u64); 2],
    /// The level.
    pub level: f64,
    /// The collapse rule in words.
    pub verdict_rule: String,
    /// The method in words.
    pub method: String,
    /// How each cell's seeds derive.
    pub seed_rule: String,
    /// One result a case.
    pub results: Vec<PlaneResult>,
}

impl PlaneReport {
    /// `units` of axis `i` in the output's unit.
    pub fn in_unit(&self, i: usize, units: f64) -> f64 {
        super::evaluate::value_in_unit(self.axes[i].kind, units)
    }
}

impl Cell {
    /// The collapse probability and its 95 % interval.
    pub fn estimate(&self) -> Estimate {
        self.point.estimate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verdict that is deterministic in both axes: collapsed when a + 2b > 10 000, whatever
    /// the seed. Its contour is the line a = 10 000 − 2b.
    struct Line;

    impl PlaneOracle for Line {
        type Error = ();
        fn run(&self, probes: &[CellProbe]) -> Result<Vec<Vec<Outcome>>, ()> {
            Ok(probes
                .iter()
                .map(|p| {
                    p.replicates
                        .clone()
                        .map(|r| Outcome {
                            seed: r,
                            collapsed: p.values.0 + 2 * p.values.1 > 10_000,
                        })
                        .collect()
                })
                .collect())
        }
    }

    fn settings(depth: u32) -> PlaneSettings {
        PlaneSettings {
            ranges: [(0, 8_000), (0, 4_000)],
            level: 0.5,
            batch: 10,
            max_seeds: 40,
            depth,
            max_runs: 100_000,
        }
    }

    #[test]
    fn a_deterministic_line_is_found_within_the_resolution() {
        let s = search(&Line, &settings(3)).unwrap();
        assert_eq!(s.stop, Stop::Converged);
        // Every contour square is a finest one (8 000 / 32 by 4 000 / 32) that the line
        // crosses: its corners lie either side of a + 2b = 10 000.
        assert!(!s.contour.is_empty());
        for q in &s.contour {
            assert_eq!((q.a.1 - q.a.0, q.b.1 - q.b.0), (250, 125), "{q:?}");
            let f = |a: u64, b: u64| a as i64 + 2 * b as i64 - 10_000;
            let corners = [f(q.a.0, q.b.0), f(q.a.1, q.b.1)];
            assert!(corners[0] <= 0 && corners[1] > 0, "{q:?}");
        }
        // The line crosses the rectangle for b from 1 000 to 4 000; each b between the
        // finest rows is covered by a contour square holding a = 10 000 − 2b.
        for b in (1_000..4_000).step_by(37) {
            let a = 10_000 - 2 * b;
            assert!(
                s.contour
                    .iter()
                    .any(|q| q.b.0 <= b && b <= q.b.1 && q.a.0 <= a && a <= q.a.1),
                "b = {b}, a = {a}"
            );
        }
        // The segments lie on the line within one finest square.
        for [(a0, b0), (a1, b1)] in contour_segments(&s, 0.5) {
            for (a, b) in [(a0, b0), (a1, b1)] {
                assert!((a + 2.0 * b - 10_000.0).abs() <= 500.0, "{a}, {b}");
            }
        }
        // Far fewer runs than the finest grid: 33 x 33 cells of 10 seeds.
        assert!(s.runs * 4 <= 33 * 33 * 10, "{}", s.runs);
        // Seeds were never added: no cell of a deterministic verdict is unsure.
        assert!(s.cells.iter().all(|c| c.point.seeds() == 10));
    }

    #[test]
    fn no_crossing_and_the_budget_stop_the_search() {
        let none = PlaneSettings {
            ranges: [(0, 1_000), (0, 1_000)],
            ..settings(3)
        };
        let s = search(&Line, &none).unwrap();
        assert_eq!(
            (s.stop, s.runs, s.contour.len()),
            (Stop::NoCrossing, 250, 0)
        );
        let tight = PlaneSettings {
            max_runs: 400,
            ..settings(3)
        };
        let s = search(&Line, &tight).unwrap();
        assert_eq!(s.stop, Stop::Budget);
        assert!(s.runs <= 400);
        assert!(!s.contour.is_empty());
    }

    #[test]
    fn the_depth_brings_a_square_within_twice_the_tolerance() {
        // 4 coarse squares a side: 25 %, 12.5 %, 6.25 %, 3.125 % <= 2 x 2 %.
        assert_eq!(depth_for(10_000, 200), 3);
        assert_eq!(depth_for(10_000, 5_000), 0);
        assert_eq!(depth_for(10_000, 0), MAX_DEPTH);
    }
}
