//! A minimal program of the call loop's bench scenario, written for speed: the limit the call
//! loop is measured against. Same model, same random-number rule (each process's stream from
//! [`ClientSeeds`], its draws in the same order: a call's service demand, then the process's
//! next start; at a timeout the strategy's draw; at a retry's send its demand) and the same tie
//! rule, so it gives the call loop's numbers exactly on runs without simultaneous events.
//!
//! What it skips, because the model allows it on this scenario (a first-come first-served
//! server without a queue limit, no network delay, answers read at once): a request's start
//! and end are known when it arrives (the earliest free worker), so a success needs no event
//! and a timeout is scheduled only when the answer will be late. Its events are the calls'
//! starts, the retries' sends and the timeouts that fire. It keeps no time series and no
//! histograms: only the run's figures.
//!
//! Nor a general event queue: each kind of event has a lane that its times make cheap. A
//! process has one start pending at a time (an array, its earliest found again only after a
//! start); a timeout is always the send's time plus the one timeout, so timeouts come due in
//! the order they are scheduled (a FIFO); only the retries' sends, at random waits, need a
//! heap. Every event carries its scheduling number, and the earliest (time, number) of the
//! three lanes' heads goes next: the queue's tie rule, FIFO among equal times. The next
//! start is the schedule's own arithmetic for a rate without spikes
//! ([`RateSchedule::next_start`]'s draw and rounding, the same numbers).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use herd_sim::policy::Backoff;
use herd_sim::rng::{uniform_below, ClientRng, ClientSeeds};
use herd_sim::series::Sketch;
use herd_sim::time::SimDuration;
use herd_sim::workload::{round_to_u64, unit_exponential, Dist, RateSchedule};

/// The scenario: `processes` Poisson streams sharing `rate` calls/s over `[0, end)`, `workers`
/// workers of Exp(`service`), a `timeout`, up to `retries` full-jitter retries.
pub struct Scenario {
    pub seed: u64,
    pub processes: u32,
    pub schedule: RateSchedule,
    pub workers: usize,
    pub service: SimDuration,
    pub timeout: SimDuration,
    pub retries: u32,
    pub backoff: Backoff,
}

/// The run's figures, as the call loop's totals name them.
#[derive(Debug, PartialEq, Eq)]
pub struct Figures {
    pub calls: u64,
    pub attempts: u64,
    pub calls_succeeded: u64,
    pub calls_failed: u64,
    pub timed_out: u64,
    pub late: u64,
    pub latency_sum_ns: u128,
    pub abandoned_work_ns: u64,
    pub latency_p50_ns: Option<u64>,
    pub latency_p99_ns: Option<u64>,
}

/// A call waiting for its timeout or its retry.
#[derive(Clone, Copy)]
struct Call {
    process: u32,
    retries_made: u32,
    sent: u64,
}

/// No start pending (the process's load has ended).
const NEVER: (u64, u64) = (u64::MAX, u64::MAX);

pub fn run(s: &Scenario) -> Figures {
    assert!(
        s.schedule.spikes.is_empty(),
        "the reference draws starts at one rate"
    );
    let mut seeds = ClientSeeds::starting_at(s.seed, 0);
    let mut rngs: Vec<ClientRng> = (0..s.processes).map(|_| seeds.next_rng()).collect();
    let service = Dist::Exp(s.service);
    let timeout = s.timeout.as_nanos();
    let end = s.schedule.end.as_nanos();
    let per_process = s.schedule.base / f64::from(s.processes);
    // RateSchedule::next_start without spikes: the same draw, the same rounding.
    let next_start = |from: u64, rng: &mut ClientRng| -> Option<u64> {
        if from >= end {
            return None;
        }
        let gap = unit_exponential(rng) / per_process * 1e9;
        if gap < (end - from) as f64 {
            let at = from + round_to_u64(gap);
            return (at < end).then_some(at);
        }
        None
    };
    // (time, scheduling number) of each process's pending start, and the earliest's index.
    let mut seq = 0u64;
    let mut starts: Vec<(u64, u64)> = Vec::with_capacity(s.processes as usize);
    for rng in &mut rngs {
        starts.push(next_start(0, rng).map_or(NEVER, |t| {
            seq += 1;
            (t, seq)
        }));
    }
    let earliest =
        |starts: &[(u64, u64)]| (0..starts.len()).min_by_key(|&p| starts[p]).unwrap_or(0);
    let mut first = earliest(&starts);
    let mut timeouts: VecDeque<(u64, u64, u32)> = VecDeque::new();
    let mut sends: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
    let mut free_at = vec![0u64; s.workers];
    let mut calls: Vec<Call> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut sketch = Sketch::new();
    let mut f = Figures {
        calls: 0,
        attempts: 0,
        calls_succeeded: 0,
        calls_failed: 0,
        timed_out: 0,
        late: 0,
        latency_sum_ns: 0,
        abandoned_work_ns: 0,
        latency_p50_ns: None,
        latency_p99_ns: None,
    };
    // Sends an attempt of `call` (process, retries made) at `now`: the earliest free worker
    // takes it; a timeout is scheduled only if the answer comes at or after it.
    let mut attempt = |now: u64,
                       process: u32,
                       retries_made: u32,
                       slot: Option<u32>,
                       rng: &mut ClientRng,
                       seq: &mut u64,
                       timeouts: &mut VecDeque<(u64, u64, u32)>,
                       calls: &mut Vec<Call>,
                       free: &mut Vec<u32>,
                       f: &mut Figures| {
        f.attempts += 1;
        let demand = service.draw(rng).as_nanos();
        let mut w = 0;
        for i in 1..free_at.len() {
            if free_at[i] < free_at[w] {
                w = i;
            }
        }
        let done = now.max(free_at[w]) + demand;
        free_at[w] = done;
        if done < now + timeout {
            let latency = done - now;
            sketch.record(latency);
            f.latency_sum_ns += u128::from(latency);
            f.calls_succeeded += 1;
            if let Some(slot) = slot {
                free.push(slot);
            }
            return;
        }
        f.late += 1;
        f.abandoned_work_ns += demand;
        let call = Call {
            process,
            retries_made,
            sent: now,
        };
        let slot = match slot {
            Some(slot) => {
                calls[slot as usize] = call;
                slot
            }
            None => match free.pop() {
                Some(slot) => {
                    calls[slot as usize] = call;
                    slot
                }
                None => {
                    calls.push(call);
                    (calls.len() - 1) as u32
                }
            },
        };
        *seq += 1;
        timeouts.push_back((now + timeout, *seq, slot));
    };
    loop {
        // The earliest of the three lanes' heads, by (time, scheduling number).
        let start = starts.get(first).copied().unwrap_or(NEVER);
        let timed = timeouts.front().map_or(NEVER, |&(t, n, _)| (t, n));
        let sent = sends.peek().map_or(NEVER, |&Reverse((t, n, _))| (t, n));
        if start <= timed && start <= sent {
            if start == NEVER {
                break;
            }
            let now = start.0;
            let process = first as u32;
            f.calls += 1;
            let rng = &mut rngs[first];
            attempt(
                now,
                process,
                0,
                None,
                rng,
                &mut seq,
                &mut timeouts,
                &mut calls,
                &mut free,
                &mut f,
            );
            starts[first] = next_start(now, rng).map_or(NEVER, |t| {
                seq += 1;
                (t, seq)
            });
            first = earliest(&starts);
        } else if sent < timed {
            let Some(Reverse((now, _, index))) = sends.pop() else {
                unreachable!("a send was at the head");
            };
            let call = calls[index as usize];
            let rng = &mut rngs[call.process as usize];
            attempt(
                now,
                call.process,
                call.retries_made,
                Some(index),
                rng,
                &mut seq,
                &mut timeouts,
                &mut calls,
                &mut free,
                &mut f,
            );
        } else {
            let Some((now, _, index)) = timeouts.pop_front() else {
                unreachable!("a timeout was at the head");
            };
            f.timed_out += 1;
            let call = &mut calls[index as usize];
            debug_assert_eq!(call.sent + timeout, now);
            if call.retries_made >= s.retries {
                f.calls_failed += 1;
                free.push(index);
                continue;
            }
            call.retries_made += 1;
            let rng = &mut rngs[call.process as usize];
            let wait = uniform_below(rng, s.backoff.exponential(call.retries_made).as_nanos());
            seq += 1;
            sends.push(Reverse((now + wait, seq, index)));
        }
    }
    f.latency_p50_ns = sketch.quantile(0.5);
    f.latency_p99_ns = sketch.quantile(0.99);
    f
}
