//! Answers known at arrival. A first-come first-served capacity server whose answers are
//! known when a request arrives ([`CapacityRule::answers_at_arrival`]) needs no event of its
//! own: the request starts on the earliest free worker ([`Timeline`]), its service time is
//! fixed then, so when it leaves the server and when its answer reaches the client are known
//! at once. Neither is an event; both are kept as *ends* in time order and reached before the
//! next event after them is handled ([`Loop::reach`]):
//!
//! - a request leaving the server takes one from the count in the server, which the series
//!   samples as its windows close; a window that closes at an end closes there, with the
//!   count before it, as the completion event would have closed it;
//! - an answer read in time (strictly before the attempt's timeout) ends its call, succeeded,
//!   as the answer's event would have. No timeout is scheduled for an attempt answered in
//!   time whose arrival is handled when it is sent; one whose arrival waited for the queue
//!   has its timeout scheduled already, and it finds the attempt answered;
//! - a late answer (at or after the timeout, which comes first on a tie) would be read stale:
//!   it is counted late, with its abandoned work, at the arrival.
//!
//! The request is counted served in the window of its completion, as before. What an end
//! changes (counts, a freed call slot, the latency sketch) is the same whichever of two events
//! at one instant goes first, so an end at the instant of an event may be reached after it.
//! The order matters to the in-flight guard alone: a slot freed at that instant could be
//! taken by a call starting then. So the guard here judges what the run holds at most (its
//! slots, freed no earlier than the answer's event would have freed them, and every request
//! in the server as if waiting): when even that is within the budget the guarded run would
//! not have stopped either; when it is not, the run starts again on the server's own events
//! ([`KnownAnswers::redo`]), which stop it where they stop it.
//!
//! A run that records no window ([`Windows::RECORDS`]: a sweep's row, a table report, without
//! a trigger) reads neither the count in the server nor when a success is counted, only
//! figures that are the same in any order (counts, sums, the latency sketch, latest times as
//! maxima). So it keeps no ends: an answer read in time is counted at the arrival, its call
//! over then. Unguarded, its slot is freed at once (no output reads the slots). Guarded, the
//! guard must still judge at least what the events would hold: the slot is held, and the
//! request counted as waiting, until every answer admitted so far has been read ([`Held`]),
//! which is no earlier than the events would free or start them; beyond that bound the run
//! starts again on the server's own events, as above.
//!
//! Everything else (a server with a queue limit, last-in first-out, cancelling or slowing
//! down; deadlines, pools, retry controls, tabs, layers, closed loops, traces) keeps the
//! server's own events.

use std::collections::VecDeque;

use crate::metrics::WindowCursor;
use crate::server::{CapacityRule, Job, Server, Timeline};
use crate::time::{SimDuration, SimTime};
use crate::trace::Observer;

use super::windows::Windows;
use super::Loop;

/// The end takes its request out of the server.
const LEAVES: u64 = 1;
/// The end is its call's answer, read in time (the call's slot in the bits above these two).
const SUCCEEDS: u64 = 2;

/// The state of a run whose server's answers are known at arrival.
pub(super) struct KnownAnswers {
    timeline: Timeline,
    /// Ends not yet reached.
    ends: Ends,
    /// The tally's window of the last completion: completions come near one another, though
    /// not in order, so most find their window without a division.
    completions: WindowCursor,
    /// Requests in the server: admitted, not yet left (not kept in a run that records no
    /// window, where nothing reads it).
    pub(super) in_system: u64,
    /// What a guarded run that records no window holds ([`Held`]).
    held: Held,
    /// The in-flight guard might have stopped the run: it is simulated again with the
    /// server's own events.
    pub(super) redo: bool,
}

impl KnownAnswers {
    pub(super) fn new(rule: &CapacityRule, completions: WindowCursor) -> Self {
        KnownAnswers {
            timeline: Timeline::new(rule),
            ends: Ends::default(),
            completions,
            in_system: 0,
            held: Held::default(),
            redo: false,
        }
    }
}

impl KnownAnswers {
    /// At least the requests waiting for a worker now, for the in-flight guard: every
    /// request in the server, or, in a run that records no window (`records` false), every
    /// entry [`Held`] keeps.
    #[inline]
    pub(super) fn waiting_bound(&self, records: bool) -> u64 {
        if records {
            self.in_system
        } else {
            self.held.len()
        }
    }
}

impl<O: Observer, W: Windows> Loop<'_, O, W> {
    /// Whether this run's server answers at arrival and nothing else needs its events.
    pub(super) fn answers_known(&self) -> bool {
        let overload = &self.spec.overload;
        !O::ON
            && !self.controls.is_active()
            && self.tabs.is_none()
            && self.layered.is_none()
            && self.closed.is_none()
            && !overload.pool.is_active()
            && !overload.deadlines.is_active()
            && matches!(&self.servers[..], [Server::Capacity(c)] if c.rule.answers_at_arrival())
    }

    /// `job` arrives at `now` and is not refused: it is admitted, and when it leaves and when
    /// its answer is read become ends. Returns whether the answer is read in time (so the
    /// attempt's timeout, if any, would find it answered).
    pub(super) fn admit_known(&mut self, now: SimTime, job: Job) -> bool {
        let Some(known) = &self.known else {
            unreachable!("answers are known")
        };
        let start = known.timeline.start(now.as_nanos());
        let factor = self.factor_at(SimTime(start), job.server);
        let Server::Capacity(server) = &self.servers[0] else {
            unreachable!("answers are known of a capacity server")
        };
        let service = server.service_time(job.demand, factor);
        let done = SimTime(start) + service;
        let Some(known) = &mut self.known else {
            unreachable!("answers are known")
        };
        // A tally that folds its windows counts no served request in one.
        if W::MAY_KEEP && self.tally.retries_folded.is_none() {
            let window = known.completions.window_of(done);
            self.tally.answer_in_window(window, true);
        }
        let answered = done + SimDuration(job.back);
        let call = &self.calls[job.call as usize];
        let in_time = call.attempt == job.attempt
            && call.outstanding
            && self
                .spec
                .overload
                .timeout
                .is_none_or(|timeout| answered < call.sent + timeout);
        self.served_at(job.server);
        if !in_time {
            self.totals.late += 1;
            self.totals.abandoned_work_ns += service.as_nanos();
        }
        let Some(known) = &mut self.known else {
            unreachable!("answers are known")
        };
        known.timeline.hold(done.as_nanos());
        if !W::RECORDS {
            self.answer_at_admission(now, job.call, in_time, answered);
            return in_time;
        }
        known.in_system += 1;
        let slot = u64::from(job.call) << 2;
        match (in_time, answered == done) {
            (true, true) => known.ends.push(done.as_nanos(), LEAVES | SUCCEEDS | slot),
            (true, false) => {
                known.ends.push(done.as_nanos(), LEAVES);
                known.ends.push(answered.as_nanos(), SUCCEEDS | slot);
            }
            (false, _) => known.ends.push(done.as_nanos(), LEAVES),
        }
        if self.spec.overload.in_flight.is_on() {
            self.guard_in_flight(now);
        }
        in_time
    }

    /// The answer to `slot`'s attempt admitted at `now`, read at `answered`, in a run that
    /// records no window: a success in time is counted now, its call over; in a guarded run
    /// its slot is held until every answer admitted so far has been read ([`Held`]), and
    /// the guard judges what the run holds at most.
    #[inline]
    fn answer_at_admission(&mut self, now: SimTime, slot: u32, in_time: bool, answered: SimTime) {
        let guarded = self.spec.overload.in_flight.is_on();
        if guarded {
            let Some(known) = &mut self.known else {
                unreachable!("answers are known")
            };
            known
                .held
                .push(answered.as_nanos(), if in_time { slot } else { NO_SLOT });
        }
        if in_time {
            let call = &mut self.calls[slot as usize];
            call.outstanding = false;
            let (sent, process) = (call.sent, call.process);
            self.released(0, Some(true));
            // Retry controls, layers and closed loops keep the server's events: a success
            // ends nothing else here.
            self.count_success(answered, sent, process);
            if !guarded {
                self.free.push(slot);
            }
        }
        if guarded {
            self.guard_in_flight(now);
        }
    }

    /// Reaches every end before `now`, in time order: the series closes its windows at them
    /// as at events, requests leave the server, answers end their calls. In a run that
    /// records no window, frees the slots held past the answers read before `now`.
    #[inline]
    pub(super) fn reach(&mut self, now: SimTime) {
        if !W::RECORDS {
            if let Some(known) = &mut self.known {
                known.held.free_before(now.as_nanos(), &mut self.free);
            }
            return;
        }
        while let Some(known) = &mut self.known {
            let Some(End { at: t, what: end }) = known.ends.pop_before(now.as_nanos()) else {
                return;
            };
            let in_system = known.in_system;
            if end & LEAVES != 0 {
                known.in_system -= 1;
            }
            let t = SimTime(t);
            if self.series.due(t) {
                self.series.advance(t, in_system);
            }
            if end & SUCCEEDS != 0 {
                let slot = (end >> 2) as u32;
                let call = &mut self.calls[slot as usize];
                call.outstanding = false;
                let (sent, process) = (call.sent, call.process);
                self.released(0, Some(true));
                self.succeeded(t, slot, sent, process);
            }
        }
    }
}

/// No slot to free: the answer was late, its call goes on.
const NO_SLOT: u32 = u32::MAX;

/// What a guarded run that records no window holds of the answers it has counted at
/// admission: for each admitted request, in order of admission, the latest time any answer
/// admitted so far is read (so these times never decrease, and a queue keeps them in order)
/// and the slot its success frees then, if it was in time. Whatever the events would hold
/// is held here too: a slot is freed no earlier than its answer's event would free it (the
/// latest answer so far comes no earlier than its own), and a request still waiting for a
/// worker at `t` starts at or after `t`, so its answer, and the latest so far with it, is
/// read at or after `t`: its entry is still here. So the held slots and the entries bound
/// from above the slots the events would hold and the requests they would count waiting.
#[derive(Default)]
struct Held {
    /// (latest answer so far, its slot or [`NO_SLOT`]) for each admission not yet passed.
    entries: VecDeque<(u64, u32)>,
    latest: u64,
}

impl Held {
    #[inline]
    fn push(&mut self, answered: u64, slot: u32) {
        self.latest = self.latest.max(answered);
        self.entries.push_back((self.latest, slot));
    }

    /// Passes every entry before `t`, freeing its slot.
    #[inline]
    fn free_before(&mut self, t: u64, free: &mut Vec<u32>) {
        while let Some(&(at, slot)) = self.entries.front() {
            if at >= t {
                return;
            }
            self.entries.pop_front();
            if slot != NO_SLOT {
                free.push(slot);
            }
        }
    }

    /// Requests admitted whose answers, or an earlier admission's, are read at or after the
    /// last time passed: at least those waiting for a worker then.
    fn len(&self) -> u64 {
        self.entries.len() as u64
    }
}

/// An end: its time (ns) and what it does ([`LEAVES`] | [`SUCCEEDS`] | slot << 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct End {
    at: u64,
    what: u64,
}

/// The ends not yet reached: a binary min-heap on their times alone. Ends at one instant
/// come out in no particular order, which changes nothing (what an end changes is the same
/// whichever goes first, as above); ordered on times alone, a push or a pop moves each end it
/// passes once, with one comparison of times, instead of comparing pairs.
#[derive(Default)]
struct Ends {
    heap: Vec<End>,
}

impl Ends {
    #[inline]
    fn push(&mut self, at: u64, what: u64) {
        let end = End { at, what };
        let mut hole = self.heap.len();
        self.heap.push(end);
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.heap[parent].at <= at {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = end;
    }

    /// Takes the earliest end if it is before `t`.
    #[inline]
    fn pop_before(&mut self, t: u64) -> Option<End> {
        let first = *self.heap.first()?;
        if first.at >= t {
            return None;
        }
        let last = self.heap.pop()?;
        let len = self.heap.len();
        if len == 0 {
            return Some(first);
        }
        // The last end sinks from the top into the hole the earliest left.
        let mut hole = 0;
        loop {
            let mut child = 2 * hole + 1;
            if child >= len {
                break;
            }
            if child + 1 < len && self.heap[child + 1].at < self.heap[child].at {
                child += 1;
            }
            if self.heap[child].at >= last.at {
                break;
            }
            self.heap[hole] = self.heap[child];
            hole = child;
        }
        self.heap[hole] = last;
        Some(first)
    }
}

#[cfg(test)]
mod ends_tests {
    use super::Ends;

    /// Ends pushed in a scrambled order, many at equal times, come out in time order, each
    /// once, and none at or after the time asked.
    #[test]
    fn ends_come_out_in_time_order() {
        let mut ends = Ends::default();
        let mut x = 12_345u64;
        let mut pushed = Vec::new();
        for i in 0..2000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let at = (x >> 33) % 300;
            ends.push(at, i);
            pushed.push((at, i));
            if i % 7 == 3 {
                // Take a few out as a run would, between pushes.
                let before = (x >> 20) % 300;
                while let Some(end) = ends.pop_before(before) {
                    assert!(end.at < before);
                    let k = pushed
                        .iter()
                        .position(|&p| p == (end.at, end.what))
                        .unwrap();
                    let min = pushed.iter().map(|p| p.0).min().unwrap();
                    assert_eq!(end.at, min, "the earliest comes out first");
                    pushed.swap_remove(k);
                }
            }
        }
        let mut last = 0;
        while let Some(end) = ends.pop_before(u64::MAX) {
            assert!(end.at >= last);
            last = end.at;
            let k = pushed
                .iter()
                .position(|&p| p == (end.at, end.what))
                .unwrap();
            pushed.swap_remove(k);
        }
        assert!(pushed.is_empty(), "every end came out");
    }
}
