//! The one place the boundary search meets the simulator: an [`Oracle`] that runs a batch of
//! seeds at axis values as rows of a one-cell sweep ([`Plan`]), on the sweep's thread pool.
//! A point's replicate `r` is the sweep's row of replicate `r` of the cell (the axis at that
//! value, the case's parameters), so its seed is the sweep's seed and `herd-sim sweep` with the
//! same values, or a plain run with `--seed`, replays it. No I/O.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::config::ScenarioFile;
use crate::sweep::parameter::{Kind, Parameter};
use crate::sweep::{Layout, Plan, RowCache, SweepSpec};
use crate::time::SimDuration;

use super::search::{Oracle, Outcome, Probe};
use super::BoundaryError;

/// A value of a numeric axis, in its integer unit, as the sweep parses it (`250ms`, `1.5`).
pub fn value_text(kind: Kind, units: u64) -> String {
    match kind {
        Kind::Duration => SimDuration(units).to_string(),
        Kind::Decimal => {
            let (whole, fraction) = (units / 1_000_000_000, units % 1_000_000_000);
            match fraction {
                0 => whole.to_string(),
                f => format!("{whole}.{}", format!("{f:09}").trim_end_matches('0')),
            }
        }
        _ => units.to_string(),
    }
}

/// A value of a numeric axis in the unit the output uses: seconds for durations, the number
/// itself otherwise (calls per second for rates).
pub fn value_in_unit(kind: Kind, units: f64) -> f64 {
    match kind {
        Kind::Duration | Kind::Decimal => units / 1e9,
        _ => units,
    }
}

/// Runs points of one case (a strategy and the other listed parameters) through the sweep.
pub struct SweepOracle<'a> {
    /// The scenario every point starts from.
    pub base: &'a ScenarioFile,
    /// The axis or axes, with the value of each but the searched one fixed by `fixed`.
    pub axis: &'static Parameter,
    /// `(parameter, value)` of the case, and of any axis held fixed.
    pub fixed: &'a [(String, String)],
    /// The worker threads.
    pub pool: &'a rayon::ThreadPool,
    /// `--threads` as resolved, for each plan's memory check.
    pub threads: usize,
    /// The requests limit of each batch.
    pub max_requests: u64,
    /// Told the runs finished so far, after each run.
    pub progress: &'a (dyn Fn(u64) + Sync),
    /// Runs finished so far, over every batch of this oracle and any other sharing it.
    pub done: &'a AtomicU64,
}

impl SweepOracle<'_> {
    /// The one-cell sweep of the axis at `value` with `seeds` replicates.
    pub fn plan(&self, value: u64, seeds: u64) -> Result<Plan, BoundaryError> {
        let mut grid = self.fixed.to_vec();
        grid.push((
            self.axis.name.to_string(),
            value_text(self.axis.kind, value),
        ));
        Ok(Plan::new(SweepSpec {
            base: self.base.clone(),
            grid,
            seeds,
            layout: Layout::Tidy,
            max_cells: 1,
            max_requests: self.max_requests,
            threads: Some(self.threads),
            // The boundary's own work estimate is checked once, up front, and so are the
            // keys no point reads (BoundaryPlan::new).
            yes: true,
            keep_unread: true,
        })?)
    }
}

impl Oracle for SweepOracle<'_> {
    type Error = BoundaryError;

    fn run(&self, probes: &[Probe]) -> Result<Vec<Vec<Outcome>>, BoundaryError> {
        let plans = probes
            .iter()
            .map(|p| self.plan(p.value, p.replicates.end))
            .collect::<Result<Vec<_>, _>>()?;
        let replicates: Vec<Range<u64>> = probes.iter().map(|p| p.replicates.clone()).collect();
        self.run_plans(&plans, &replicates)
    }
}

impl SweepOracle<'_> {
    /// Runs replicates `replicates[i]` of the one-cell sweep `plans[i]`, every run of every
    /// plan on the pool at once, and returns each plan's outcomes in replicate order.
    pub fn run_plans(
        &self,
        plans: &[Plan],
        replicates: &[Range<u64>],
    ) -> Result<Vec<Vec<Outcome>>, BoundaryError> {
        let Some(first) = plans.first() else {
            return Ok(Vec::new());
        };
        let Some(stuck) = first.metric_column("stuck") else {
            return Err(BoundaryError::NoVerdict);
        };
        let tasks: Vec<(usize, u64)> = replicates
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.clone().map(move |r| (i, r)))
            .collect();
        let outcomes = self.pool.install(|| {
            tasks
                .par_iter()
                .map_init(RowCache::default, |cache, &(i, replicate)| {
                    let run = plans[i].run_row(replicate, cache)?;
                    let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
                    (self.progress)(done);
                    let collapsed = match run.figures[stuck].number() {
                        Some(1.0) => true,
                        Some(0.0) => false,
                        _ => return Err(BoundaryError::NoVerdict),
                    };
                    Ok(Outcome {
                        seed: run.seed,
                        collapsed,
                    })
                })
                .collect::<Result<Vec<_>, BoundaryError>>()
        })?;
        let mut grouped: Vec<Vec<Outcome>> = plans.iter().map(|_| Vec::new()).collect();
        for (&(i, _), outcome) in tasks.iter().zip(outcomes) {
            grouped[i].push(outcome);
        }
        Ok(grouped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_the_sweep_parses_them() {
        assert_eq!(value_text(Kind::Decimal, 47_500_000_000), "47.5");
        assert_eq!(value_text(Kind::Decimal, 40_000_000_000), "40");
        assert_eq!(value_text(Kind::Decimal, 1), "0.000000001");
        assert_eq!(value_text(Kind::Duration, 650_000_000), "650ms");
        assert_eq!(value_text(Kind::Whole, 12), "12");
        assert_eq!(value_in_unit(Kind::Duration, 650_000_000.0), 0.65);
    }
}
