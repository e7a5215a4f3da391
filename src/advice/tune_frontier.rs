//! What a tune concludes from its runs: each candidate's mean and 95 % interval of every
//! term (Student's t over its seeds, [`crate::sweep::stats`]), the constraints met on the mean,
//! the Pareto frontier of the candidates that meet them (no other feasible candidate at least
//! as good on every objective and better on one), and the recommended point by
//! [`RULE`]. Pure arithmetic, in candidate order, so the report is the same for any thread
//! count. No I/O.

use std::cmp::Ordering;

use crate::sweep::stats::describe;

use super::tune::Candidate;
use super::tune_file::{Sense, Term, TuneFile};

/// The recommendation rule, as the report states it.
pub const RULE: &str = "among the frontier, the best mean of the first objective listed (minimize before maximize, each in file order); ties go to the next objective, then to the earlier candidate in grid order";

/// A term's mean over seeds and its 95 % interval (the mean itself with one seed, or for a
/// tuned parameter).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    /// Mean over the values.
    pub mean: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Values it is over.
    pub n: u64,
}

impl Stat {
    /// The statistics of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Stat> {
        let d = describe(values)?;
        let (low, high) = d.ci95.unwrap_or((d.mean, d.mean));
        Some(Stat {
            mean: d.mean,
            low,
            high,
            n: values.len() as u64,
        })
    }
}

/// One candidate's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluated {
    /// The candidate.
    pub candidate: Candidate,
    /// Seeds it has in every scenario (the fewest of any).
    pub seeds: u64,
    /// Each term of [`TuneFile::terms`], with its statistics (`None`: no run gave a value).
    pub stats: Vec<(Term, Option<Stat>)>,
    /// Every constraint holds on the mean.
    pub feasible: bool,
    /// The mean of each objective, in [`TuneFile::objectives`] order, with its sense; `None`
    /// when an objective has no value.
    pub objectives: Option<Vec<(f64, Sense)>>,
}

impl Evaluated {
    /// `candidate`'s figures from its values of each term.
    pub fn new(
        candidate: Candidate,
        seeds: u64,
        values: Vec<(Term, Vec<f64>)>,
        file: &TuneFile,
    ) -> Evaluated {
        let stats: Vec<(Term, Option<Stat>)> =
            values.into_iter().map(|(t, v)| (t, Stat::of(&v))).collect();
        let stat_of = |term: &Term| stats.iter().find(|(t, _)| t == term).and_then(|(_, s)| *s);
        let feasible = file
            .constraints
            .iter()
            .all(|c| stat_of(&c.term).is_some_and(|s| c.op.holds(s.mean, c.bound)));
        let objectives = file
            .objectives
            .iter()
            .map(|o| stat_of(&o.term).map(|s| (s.mean, o.sense)))
            .collect::<Option<Vec<_>>>();
        Evaluated {
            candidate,
            seeds,
            stats,
            feasible,
            objectives,
        }
    }

    /// The statistics of `term`.
    pub fn stat(&self, term: &Term) -> Option<Stat> {
        self.stats
            .iter()
            .find(|(t, _)| t == term)
            .and_then(|(_, s)| *s)
    }
}

/// `a` is better than `b` in the sense of the objective.
fn better(a: f64, b: f64, sense: Sense) -> bool {
    match sense {
        Sense::Minimize => a < b,
        Sense::Maximize => a > b,
    }
}

/// True when `a` dominates `b`: at least as good on every objective, better on one.
pub fn dominates(a: &[(f64, Sense)], b: &[(f64, Sense)]) -> bool {
    let no_worse = a
        .iter()
        .zip(b)
        .all(|(&(x, sense), &(y, _))| !better(y, x, sense));
    let one_better = a
        .iter()
        .zip(b)
        .any(|(&(x, sense), &(y, _))| better(x, y, sense));
    no_worse && one_better
}

/// The indices of `points` no other point dominates, in order (equal points are both kept).
pub fn frontier(points: &[Vec<(f64, Sense)>]) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| !points.iter().any(|p| dominates(p, &points[i])))
        .collect()
}

/// [`RULE`]'s order: better on the first objective first, then the next, then earlier.
pub fn rule_order(a: &Evaluated, b: &Evaluated) -> Ordering {
    let (Some(x), Some(y)) = (&a.objectives, &b.objectives) else {
        return Ordering::Equal;
    };
    for (&(u, sense), &(v, _)) in x.iter().zip(y) {
        if better(u, v, sense) {
            return Ordering::Less;
        }
        if better(v, u, sense) {
            return Ordering::Greater;
        }
    }
    a.candidate.index.cmp(&b.candidate.index)
}

/// One rung of the search: candidates run, with this many seeds each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rung {
    /// Candidates in the running.
    pub candidates: u64,
    /// Seeds each has in every scenario.
    pub seeds: u64,
}

/// A finished tune.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneReport {
    /// The candidates of the last rung (every candidate of an exhaustive search), in grid
    /// order.
    pub evaluated: Vec<Evaluated>,
    /// The rungs, first to last (one for an exhaustive search).
    pub rungs: Vec<Rung>,
    /// The recommended point as each library's configuration (empty without one).
    pub configs: Vec<super::tune_library::Snippet>,
    /// Indices into `evaluated` of the frontier, in grid order.
    pub frontier: Vec<usize>,
    /// Index into `evaluated` of the recommended point; `None` when no candidate meets the
    /// constraints.
    pub recommended: Option<usize>,
    /// Runs simulated (each candidate × scenario × seed once).
    pub runs: u64,
    /// Runs an exhaustive grid of the same resolution costs with the seeds of the last rung.
    pub exhaustive_runs: u64,
    /// The file.
    pub file: TuneFile,
}

impl TuneReport {
    /// The frontier and recommendation of `evaluated`.
    pub fn new(
        file: &TuneFile,
        evaluated: Vec<Evaluated>,
        runs: u64,
        exhaustive_runs: u64,
        rungs: Vec<Rung>,
    ) -> TuneReport {
        let eligible: Vec<usize> = (0..evaluated.len())
            .filter(|&i| evaluated[i].feasible && evaluated[i].objectives.is_some())
            .collect();
        let points: Vec<Vec<(f64, Sense)>> = eligible
            .iter()
            .map(|&i| evaluated[i].objectives.clone().unwrap_or_default())
            .collect();
        let frontier: Vec<usize> = frontier(&points).into_iter().map(|k| eligible[k]).collect();
        let recommended = frontier
            .iter()
            .copied()
            .min_by(|&a, &b| rule_order(&evaluated[a], &evaluated[b]));
        TuneReport {
            evaluated,
            frontier,
            recommended,
            runs,
            exhaustive_runs,
            rungs,
            configs: Vec::new(),
            file: file.clone(),
        }
    }

    /// Candidates that meet every constraint.
    pub fn feasible(&self) -> usize {
        self.evaluated.iter().filter(|e| e.feasible).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(values: &[f64]) -> Vec<(f64, Sense)> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let sense = if i == 0 {
                    Sense::Minimize
                } else {
                    Sense::Maximize
                };
                (v, sense)
            })
            .collect()
    }

    #[test]
    fn dominance_is_better_on_one_and_no_worse_on_any() {
        // Minimise the first, maximise the second.
        assert!(dominates(&point(&[1.0, 5.0]), &point(&[2.0, 5.0])));
        assert!(dominates(&point(&[1.0, 6.0]), &point(&[2.0, 5.0])));
        assert!(!dominates(&point(&[1.0, 4.0]), &point(&[2.0, 5.0])));
        assert!(!dominates(&point(&[1.0, 5.0]), &point(&[1.0, 5.0])));
    }

    #[test]
    fn the_frontier_keeps_exactly_the_non_dominated_points() {
        // (cost, value): (1,1) (2,3) (3,3) (3,2) (4,5) (1,1) — by hand: (3,3) is dominated by
        // (2,3), (3,2) by (2,3); the two (1,1) tie and are both kept.
        let points: Vec<_> = [
            [1.0, 1.0],
            [2.0, 3.0],
            [3.0, 3.0],
            [3.0, 2.0],
            [4.0, 5.0],
            [1.0, 1.0],
        ]
        .iter()
        .map(|p| point(p))
        .collect();
        let f = frontier(&points);
        assert_eq!(f, [0, 1, 4, 5]);
        for &i in &f {
            for &j in &f {
                assert!(!dominates(&points[i], &points[j]), "{i} {j}");
            }
        }
        for i in (0..points.len()).filter(|i| !f.contains(i)) {
            assert!(f.iter().any(|&j| dominates(&points[j], &points[i])), "{i}");
        }
    }

    #[test]
    fn a_stat_is_the_t_interval_of_the_mean() {
        // 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.303: 2 ± 4.303/√3 = 2 ± 2.484.
        let s = Stat::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.mean, 2.0);
        assert!(
            (s.high - 2.0 - 4.302_652_7 / 3f64.sqrt()).abs() < 1e-4,
            "{s:?}"
        );
        assert_eq!(Stat::of(&[5.0]).unwrap().low, 5.0);
        assert!(Stat::of(&[]).is_none());
    }
}
