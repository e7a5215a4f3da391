//! Deadline propagation ([`DeadlinePropagation`], `--deadline-propagation COST`): the client
//! sends its deadline (the instant its timeout fires) with every attempt, and a capacity
//! server checks it when a worker takes the request. A request whose client has already
//! timed out, or whose deadline will pass before its service could end, is dropped: the
//! worker spends `COST` of the request's service time finding out (0: the check is free, 1:
//! as much as serving it), then takes the next request; no answer is sent (its client has
//! given up, or will have by the time an answer could come). What the worker spends on it
//! counts as abandoned work, as a late answer's service does without propagation, and the
//! request is counted `dropped`, beside those a cancelling server drops.
//!
//! This is the server half of gRPC's deadline propagation
//! (<https://grpc.io/docs/guides/deadlines/>): without it a queue that outlives its clients'
//! timeouts serves nobody (the collapse of docs/overload.md); with it the server skips
//! the dead requests and serves the live ones. The server never sees the answer's way back,
//! so a request that finishes in time for the deadline but whose answer arrives after it is
//! served (and arrives late).

use crate::server::Job;
use crate::time::{SimDuration, SimTime};
use crate::trace::Observer;

use super::Ev;

/// The check and its cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeadlinePropagation {
    /// `None`: deadlines are not propagated (the default); else the fraction of a request's
    /// service time a worker spends on a request it drops, in [0, 1].
    pub cost: Option<f64>,
}

impl DeadlinePropagation {
    /// True when the server checks deadlines.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.cost.is_some()
    }

    /// A worker takes at `now` a request of `service`, whose client's deadline is `deadline`
    /// (`None`: it has already timed out): `Some(time the worker spends)` when it is dropped,
    /// `None` when it is served.
    #[inline]
    pub fn drops(
        &self,
        now: SimTime,
        service: SimDuration,
        deadline: Option<SimTime>,
    ) -> Option<SimDuration> {
        let cost = self.cost?;
        let dead = deadline.is_none_or(|d| now + service > d);
        dead.then(|| {
            SimDuration(crate::workload::round_to_u64(
                service.as_nanos() as f64 * cost,
            ))
        })
    }
}

impl<O: Observer, W: super::windows::Windows> super::Loop<'_, O, W> {
    /// A worker takes `job` at `now` for `service`: served (its completion scheduled), or,
    /// with deadline propagation, dropped when its deadline cannot be met (the worker freed
    /// after the check's cost).
    pub(super) fn start_service(&mut self, now: SimTime, job: Job, service: SimDuration) {
        let deadlines = self.spec.overload.deadlines;
        if deadlines.is_active() {
            let deadline = match (
                Self::abandoned(&self.calls, &job),
                self.spec.overload.timeout,
            ) {
                (false, Some(timeout)) => Some(self.calls[job.call as usize].sent + timeout),
                // Validation asks for a timeout; without one no deadline passes.
                (false, None) => Some(SimTime(u64::MAX)),
                (true, _) => None,
            };
            // An outer layer's timeout may abandon the attempt earlier.
            let deadline = match &self.layered {
                Some(run) => deadline.map(|d| d.min(run.deadline(job.call))),
                None => deadline,
            };
            if let Some(spent) = deadlines.drops(now, service, deadline) {
                self.push(
                    now + spent,
                    Ev::Dropped {
                        spent: spent.as_nanos(),
                        server: job.server,
                    },
                );
                return;
            }
        }
        self.push(
            now + service,
            Ev::Complete {
                job,
                service: service.as_nanos(),
            },
        );
    }

    /// The worker that spent `spent` on a dropped request is free: no answer goes back, and
    /// the time counts as abandoned work and the request as dropped (requests = served +
    /// refused + dropped).
    pub(super) fn dropped(&mut self, now: SimTime, spent: u64, server: u32) {
        self.totals.dropped += 1;
        self.totals.abandoned_work_ns += spent;
        self.take_next(now, server);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_dropped_when_its_deadline_cannot_be_met() {
        let s = SimDuration::from_secs(1);
        let p = DeadlinePropagation { cost: Some(0.25) };
        let at = |secs: u64| SimTime::ZERO + SimDuration::from_secs(secs);
        // Finishes at 2 with the deadline at 2: in time (an answer must come strictly
        // before the timeout, but the server does not know the way back).
        assert_eq!(p.drops(at(1), s, Some(at(2))), None);
        assert_eq!(
            p.drops(at(2), s, Some(at(2))),
            Some(SimDuration::from_millis(250))
        );
        assert_eq!(p.drops(at(0), s, None), Some(SimDuration::from_millis(250)));
        assert_eq!(
            DeadlinePropagation::default().drops(at(5), s, Some(at(1))),
            None
        );
    }
}
