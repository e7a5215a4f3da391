//! Closed-loop clients ([`ClosedLoop`], `--in-flight K`, `--think-time DIST`): each client
//! process has at most K calls in flight, and starts the next only when one of them ends,
//! after a think time — the closed system of Schroeder, Wierman & Harchol-Balter ("Open
//! Versus Closed: A Cautionary Tale", NSDI 2006), where a slow server slows its own load
//! instead of growing a queue.
//!
//! **Against the workload's rate and duration.** A closed loop runs on Poisson arrivals: a
//! process's first Poisson arrival (drawn from the schedule as an open run draws it) starts
//! its K calls at once; from then on the rate is not read again. Each call that ends
//! (succeeded, failed or rejected locally, every layer's call when layered) draws a think
//! time from the process's stream at its end, and the process starts a call that much later
//! if that is before the end of the load (`--duration`, or the settle after the last trigger).
//! So the load the server sees follows its answers: `K · clients / (call time + think time)`
//! calls a second at most.
//!
//! **Invariant.** A process never has more than K calls in flight. It is checked at every
//! call start, and in a test build after every event against a count of the live call slots
//! ([`check_in_flight`]).

use crate::time::{SimDuration, SimTime};
use crate::workload::Dist;

/// A closed loop's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClosedLoop {
    /// Calls a client process has in flight at most (at least 1).
    pub in_flight: u32,
    /// The wait after a call ends before the process's next call starts.
    pub think: Dist,
}

impl ClosedLoop {
    /// `closed loop: at most 2 calls in flight a client process, think time exp:10ms`.
    pub fn describe(&self) -> String {
        let calls = if self.in_flight == 1 { "call" } else { "calls" };
        format!(
            "closed loop: at most {} {calls} in flight a client process, think time {}",
            self.in_flight, self.think
        )
    }
}

/// A closed-loop run's state: each process's calls in flight.
pub(super) struct ClientLoops {
    rule: ClosedLoop,
    /// The end of the load: no call starts at or after it.
    end: SimTime,
    in_flight: Vec<u32>,
    /// The most calls any process had in flight at once.
    #[cfg(test)]
    pub(super) peak: u32,
}

impl ClientLoops {
    pub(super) fn new(rule: ClosedLoop, end: SimTime, clients: u32) -> ClientLoops {
        ClientLoops {
            rule,
            end,
            in_flight: vec![0; clients as usize],
            #[cfg(test)]
            peak: 0,
        }
    }

    /// Calls a process starts at its first arrival.
    pub(super) fn first_calls(&self) -> u32 {
        self.rule.in_flight
    }

    /// A call of `process` starts.
    #[inline]
    pub(super) fn started(&mut self, process: u32) {
        let n = &mut self.in_flight[process as usize];
        *n += 1;
        assert!(
            *n <= self.rule.in_flight,
            "client process {process} has {n} calls in flight, more than its {}",
            self.rule.in_flight
        );
        #[cfg(test)]
        {
            self.peak = self.peak.max(*n);
        }
    }

    /// A call of `process` ended at `now`: when its next call starts, if before the end of
    /// the load, after a think time drawn by `draw`.
    #[inline]
    pub(super) fn ended(
        &mut self,
        now: SimTime,
        process: u32,
        draw: impl FnOnce(&Dist) -> SimDuration,
    ) -> Option<SimTime> {
        self.in_flight[process as usize] -= 1;
        let next = now + draw(&self.rule.think);
        (next < self.end).then_some(next)
    }

    /// Calls in flight of `process`, as counted.
    #[cfg(test)]
    pub(super) fn of(&self, process: u32) -> u32 {
        self.in_flight[process as usize]
    }

    /// Calls a process may have in flight.
    #[cfg(test)]
    pub(super) fn cap(&self) -> u32 {
        self.rule.in_flight
    }
}

#[cfg(test)]
thread_local! {
    /// The peak of the last closed-loop run on this thread, for tests.
    pub(super) static LAST_PEAK: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Checks, independently of the count [`ClientLoops`] keeps, that no process holds more
/// than `cap` live call slots: a slot is live unless it is on the free list. Panics naming
/// the process otherwise. `processes[slot]` is the process of each slot.
#[cfg(test)]
pub(super) fn check_in_flight(processes: &[u32], free: &[u32], clients: u32, cap: u32) -> Vec<u32> {
    let mut live = vec![true; processes.len()];
    for &slot in free {
        live[slot as usize] = false;
    }
    let mut count = vec![0u32; clients as usize];
    for (slot, &process) in processes.iter().enumerate() {
        if live[slot] {
            count[process as usize] += 1;
        }
    }
    for (process, &n) in count.iter().enumerate() {
        assert!(
            n <= cap,
            "client process {process} holds {n} live calls, more than its {cap}"
        );
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_counts_live_slots_and_trips_past_the_cap() {
        // Slots of processes 0, 1, 0, 0; slot 2 free: process 0 holds 2, process 1 holds 1.
        assert_eq!(check_in_flight(&[0, 1, 0, 0], &[2], 2, 2), [2, 1]);
        let tripped = std::panic::catch_unwind(|| check_in_flight(&[0, 1, 0, 0], &[], 2, 2));
        assert!(
            tripped.is_err(),
            "three live calls of process 0 pass a cap of 2"
        );
    }

    #[test]
    fn a_start_past_the_cap_trips_and_an_end_schedules_the_next_before_the_end() {
        let rule = ClosedLoop {
            in_flight: 2,
            think: Dist::Fixed(SimDuration::from_secs(1)),
        };
        let mut loops = ClientLoops::new(rule, SimTime(10_000_000_000), 1);
        loops.started(0);
        loops.started(0);
        assert_eq!(loops.of(0), 2);
        let next = loops.ended(SimTime(3_000_000_000), 0, |d| d.mean());
        assert_eq!(next, Some(SimTime(4_000_000_000)));
        // A think time reaching the end starts nothing.
        assert_eq!(loops.ended(SimTime(9_000_000_000), 0, |d| d.mean()), None);
        loops.started(0);
        loops.started(0);
        let tripped = std::panic::catch_unwind(move || {
            let mut loops = loops;
            loops.started(0)
        });
        assert!(tripped.is_err(), "a third call of a cap of 2 started");
    }
}
