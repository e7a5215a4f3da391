//! The guard a run holds instead of its worst case: a call loop's calls and queue, or a
//! herd's histogram blocks behind a rate limiter, counted at what a run typically holds and
//! allowed what the budget leaves ([`Scenario::guard_in_flight`]), and the refusal of a run
//! that outgrew it. Separate from the up-front estimate because it is set on the scenario
//! and checked as the run goes.

use super::{human_bytes, Sat, BLOCK_BYTES, QUEUE_PLACE};
use crate::config::{ConfigError, Scenario, ServerModel};
use crate::metrics::DENSE_WINDOWS;

impl Scenario {
    /// Guards a call-loop run's calls in flight and server queue as it goes instead of
    /// counting their worst case up front (every call retrying to the cap, an unlimited queue
    /// keeping every abandoned attempt): the estimate then counts what a server that keeps up
    /// holds ([`Scenario::calls_at_once`], `Scenario::queued_at_most`), and the run may
    /// hold as many more bytes of them as the memory budget leaves beyond the whole estimate,
    /// shared by the runs held at once; a run past that stops where it is
    /// ([`crate::engine::Overload::in_flight`]) and is refused. On the herd paths, a run
    /// behind a rate limiter counts its histograms at what such a run touches
    /// (`Scenario::histogram_blocks`) and each histogram may take as many more blocks as
    /// the budget leaves, shared by the tallies held at once; a run that needs more is
    /// refused once it ends, nothing written. `report` as for [`Scenario::memory_terms`].
    pub fn guard_in_flight(&mut self, report: bool) {
        self.count_in_flight();
        let estimate = self.memory_terms(report).total();
        let runs = Sat::from(self.strategies.len()) * Sat::from(self.replicates);
        let busy = Sat::from(self.threads.max(1)).min(runs).max(Sat(1));
        // The independent path holds a block's tally and the one it merges into a thread.
        let held = if !self.run_spec(self.strategies[0]).uses_call_loop() && self.runs_independent()
        {
            busy * 2
        } else {
            busy
        };
        let spare = Sat::from(self.memory_limit.saturating_sub(estimate)) / held;
        self.allow_in_flight(spare.to_u64());
    }

    /// The first half of [`Scenario::guard_in_flight`]: turns the guard on, so that the
    /// estimate counts what a run holds in flight (a call loop's calls and queue, a herd
    /// behind a rate limiter's typical histogram blocks) instead of its worst case, and
    /// allows nothing beyond that yet ([`Scenario::allow_in_flight`] sets what it may take).
    /// A sweep's rows are guarded this way, each allowed its share of what the budget leaves
    /// beyond the sweep's estimate.
    pub fn count_in_flight(&mut self) {
        if self.run_spec(self.strategies[0]).uses_call_loop() {
            // Any number of bytes but "unguarded" turns the guarded count on.
            self.overload.in_flight = crate::engine::InFlightGuard {
                bytes: 0,
                per_call: self.call_slot_bytes() as u64,
                per_place: QUEUE_PLACE as u64,
                blocks: u64::MAX,
            };
        } else if matches!(self.server, ServerModel::Limited(_)) {
            // Any limit turns the typical count on; the real one follows from the estimate.
            self.overload.in_flight.blocks = 0;
        }
    }

    /// What a run guarded by [`Scenario::count_in_flight`] may hold: what the estimate counts
    /// in flight and `spare` bytes more (its share of what the budget leaves beyond the whole
    /// estimate). On the herd paths, the blocks of each histogram of a run behind a rate
    /// limiter: its share of the blocks counted and of `spare`. Nothing for a run the guard
    /// does not hold.
    pub fn allow_in_flight(&mut self, spare: u64) {
        let spare = Sat::from(spare);
        if self.overload.in_flight.is_on() {
            self.overload.in_flight.bytes = (Sat::from(self.in_flight_estimate()) + spare)
                .to_u64()
                .min(u64::MAX - 1);
        } else if self.overload.in_flight.limits_blocks() {
            let counted = self.histogram_blocks() * BLOCK_BYTES;
            self.overload.in_flight.blocks = ((counted + spare) / (3 * BLOCK_BYTES))
                .to_u64()
                .min(u64::MAX - 1);
        }
    }

    /// The refusal of a run its guard stopped ([`Scenario::guard_in_flight`]): `calls` when
    /// its calls and queue outgrew what it was allowed (when, in seconds, and the calls and
    /// queued requests it held), else a histogram of its run of `strategy`.
    pub fn outgrown(&self, calls: Option<(f64, u64, u64)>, strategy: &str) -> ConfigError {
        let budget = human_bytes(self.memory_limit);
        let guard = self.overload.in_flight;
        match calls {
            Some((at, calls, places)) => {
                let held = calls
                    .saturating_mul(guard.per_call)
                    .saturating_add(places.saturating_mul(guard.per_place));
                ConfigError::Outgrown {
                    budget,
                    held: format!(
                        "at {at:.1}s it held {calls} calls and {places} queued requests, {} by \
                         the estimate's count, where the estimate counted {} and the budget \
                         leaves {}",
                        human_bytes(held),
                        human_bytes(self.in_flight_estimate()),
                        human_bytes(guard.bytes)
                    ),
                }
            }
            None => ConfigError::HistogramsOutgrown {
                budget,
                held: format!(
                    "a histogram of {strategy} needed more than the {} blocks of 16 windows \
                     beyond the first {} the budget leaves it",
                    guard.blocks, DENSE_WINDOWS
                ),
            },
        }
    }
}
