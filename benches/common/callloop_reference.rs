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

use herd_sim::engine::{Event, EventQueue};
use herd_sim::policy::Backoff;
use herd_sim::rng::{uniform_below, ClientRng, ClientSeeds};
use herd_sim::series::Sketch;
use herd_sim::time::{SimDuration, SimTime};
use herd_sim::workload::{Dist, RateSchedule};

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

const START: u32 = 0;
const SEND: u32 = 1 << 30;
const TIMEOUT: u32 = 2 << 30;
const TAG: u32 = 3 << 30;

/// A call waiting for its timeout or its retry.
#[derive(Clone, Copy)]
struct Call {
    process: u32,
    retries_made: u32,
    sent: u64,
}

pub fn run(s: &Scenario) -> Figures {
    let mut seeds = ClientSeeds::starting_at(s.seed, 0);
    let mut rngs: Vec<ClientRng> = (0..s.processes).map(|_| seeds.next_rng()).collect();
    let service = Dist::Exp(s.service);
    let timeout = s.timeout.as_nanos();
    let mut queue: EventQueue<u32> = EventQueue::new();
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
    for p in 0..s.processes {
        if let Some(t) = s
            .schedule
            .next_start(SimTime::ZERO, s.processes, &mut rngs[p as usize])
        {
            queue.push(Event {
                time: t,
                item: START | p,
            });
        }
    }
    // Sends an attempt of `call` (process, retries made) at `now`: the earliest free worker
    // takes it; a timeout is scheduled only if the answer comes at or after it.
    let mut attempt = |now: u64,
                       process: u32,
                       retries_made: u32,
                       slot: Option<u32>,
                       rng: &mut ClientRng,
                       queue: &mut EventQueue<u32>,
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
        queue.push(Event {
            time: SimTime(now + timeout),
            item: TIMEOUT | slot,
        });
    };
    while let Some(Event { time, item }) = queue.pop() {
        let now = time.as_nanos();
        let index = item & !TAG;
        match item & TAG {
            START => {
                f.calls += 1;
                let rng = &mut rngs[index as usize];
                attempt(
                    now, index, 0, None, rng, &mut queue, &mut calls, &mut free, &mut f,
                );
                if let Some(t) = s.schedule.next_start(time, s.processes, rng) {
                    queue.push(Event {
                        time: t,
                        item: START | index,
                    });
                }
            }
            SEND => {
                let call = calls[index as usize];
                let rng = &mut rngs[call.process as usize];
                attempt(
                    now,
                    call.process,
                    call.retries_made,
                    Some(index),
                    rng,
                    &mut queue,
                    &mut calls,
                    &mut free,
                    &mut f,
                );
            }
            _ => {
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
                queue.push(Event {
                    time: SimTime(now + wait),
                    item: SEND | index,
                });
            }
        }
    }
    f.latency_p50_ns = sketch.quantile(0.5);
    f.latency_p99_ns = sketch.quantile(0.99);
    f
}
