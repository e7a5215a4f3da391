//! The call loop: the engine's path for runs where answers take time or load keeps coming —
//! a server with finite capacity, client timeouts, network delay, open-loop (Poisson)
//! arrivals, outages and degradations. Same [`EventQueue`], same [`Policy`](crate::policy::Policy), same [`Server`]
//! models and the same [`Tally`] as the herd paths, which stay as they are for runs that
//! need none of this ([`RunSpec::uses_call_loop`]).
//!
//! **Model.** A client *process* (one per `--clients`) starts *calls*: all at t = 0 (herd),
//! or as a Poisson stream (see [`crate::workload`]). A call sends an *attempt*; the request
//! travels to the server (one network delay), is served, queued or refused there, and the
//! answer travels back (another delay). With a timeout, an attempt unanswered `timeout` after
//! it was sent is abandoned: the client counts a timeout and follows its strategy, the retry's
//! wait counting from the timeout; the late answer is ignored (and the server's time on it
//! counted as abandoned work). A refusal is followed by the strategy too. A call ends when an
//! attempt succeeds or its retries are spent. Calls of one process run concurrently and share
//! the process's random stream.
//!
//! **Events:** call start, retry send, arrival at the server, completion at the server,
//! answer delivery at the client, timeout. Every attempt has a number in its call's slot; an
//! answer or a timeout whose number is no longer the slot's outstanding attempt is stale and
//! dropped, so nothing is ever removed from the queue.
//!
//! **Ties** (the queue's rule, FIFO by scheduling order): events at one time are handled in
//! the order they were scheduled. So a timeout, scheduled when the attempt was sent, comes
//! before an answer due at the same instant, which was scheduled later: an answer must arrive
//! strictly before the timeout to count. At t = 0 of a herd, processes start in id order.
//!
//! **Random draws**, all from the process's own stream ([`crate::rng`]), in this order: when
//! a call starts, its first send, then the process's next start (Poisson); at every send, the
//! service demand (capacity server with a random service time), then the request's network
//! delay, then the answer's (`--network-delay`), or the round trip (`--latency`); at every
//! retry decision, the strategy's draw. Results therefore do not depend on the thread count.
//!
//! **Latency vs network delay.** `--latency L` keeps its meaning: the request reaches the
//! server at once and the answer is read `L` later (the whole round trip on the way back).
//! `--network-delay D` draws each direction from `D` independently; the two are exclusive.
//!
//! **Exact and approximate.** Counts, times and recovery are exact (integer nanoseconds);
//! latency quantiles come from a sketch within 0.4 % ([`crate::series::Sketch`]); the mean
//! latency is exact. Runs go on until nothing is pending, so `pending` is always 0 and
//! `attempts = succeeded + timed_out + refused` (+ attempts dropped unread by a cancelling
//! server, which are timed out first).

use crate::metrics::{Tally, WindowCursor};
use crate::policy::{Decision, Hints};
use crate::rng::{ClientRng, ClientSeeds};
use crate::series::{recovered_at, OverloadTally, SeriesBuilder, Sketch};
use crate::server::{Admission, Job, Response, Server, Triggers};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Arrivals, Dist};

use super::{Event, EventQueue, NetworkDelay, RunSpec};

/// What the call loop adds to a run: arrivals, timeouts, network delay, triggers and the
/// series. The default adds nothing (a herd, no timeout, no delay, no trigger).
#[derive(Clone, Debug, PartialEq)]
pub struct Overload {
    /// When calls start.
    pub arrivals: Arrivals,
    /// An attempt unanswered this long after it was sent is abandoned.
    pub timeout: Option<SimDuration>,
    /// Delay of each direction, drawn per message (instead of the round-trip latency).
    pub network: Option<NetworkDelay>,
    /// Outages and degradations.
    pub triggers: Triggers,
    /// Window of the series.
    pub series_bin: SimDuration,
    /// How long the series must stay healthy to count as recovered.
    pub recovery_hold: SimDuration,
}

impl Default for Overload {
    fn default() -> Self {
        Overload {
            arrivals: Arrivals::Herd,
            timeout: None,
            network: None,
            triggers: Triggers::default(),
            series_bin: SimDuration::from_secs(1),
            recovery_hold: SimDuration::from_secs(5),
        }
    }
}

impl Overload {
    /// True when any part of it asks for the call loop.
    pub fn is_active(&self) -> bool {
        self.arrivals != Arrivals::Herd
            || self.timeout.is_some()
            || self.network.is_some()
            || !self.triggers.is_empty()
    }

    /// When the last trigger ends: an outage, a degradation or a spike.
    pub fn trigger_end(&self) -> Option<SimTime> {
        let spikes = match &self.arrivals {
            Arrivals::Poisson(s) => s.spikes.iter().map(|s| s.to).max(),
            Arrivals::Herd => None,
        };
        self.triggers.last_end().max(spikes)
    }
}

/// Where an attempt is, as far as a cancelling server needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// On the network, or answered.
    Elsewhere,
    /// In the server's queue.
    Waiting,
}

/// A call in flight, in a reusable slot.
#[derive(Clone, Copy, Debug)]
struct Call {
    process: u32,
    /// Number of the slot's latest attempt; keeps counting when the slot is reused, so an
    /// old call's attempts never match a new one's.
    attempt: u32,
    outstanding: bool,
    phase: Phase,
    retries_made: u32,
    previous: SimDuration,
    sent: SimTime,
}

/// The answer travelling back.
#[derive(Clone, Copy, Debug)]
enum Answer {
    /// Served, after this much server time (ns).
    Served { service: u64 },
    /// Refused; the headers in nanoseconds, `u64::MAX` for absent.
    Refused { retry_after: u64, reset_in: u64 },
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Start {
        process: u32,
    },
    Send {
        call: u32,
    },
    Arrive(Job),
    Complete {
        job: Job,
        service: u64,
    },
    Deliver {
        call: u32,
        attempt: u32,
        answer: Answer,
    },
    Timeout {
        call: u32,
        attempt: u32,
    },
}

const NONE: u64 = u64::MAX;

fn header(d: Option<SimDuration>) -> u64 {
    d.map_or(NONE, SimDuration::as_nanos)
}

fn unheader(n: u64) -> Option<SimDuration> {
    (n != NONE).then_some(SimDuration(n))
}

struct Loop<'a> {
    spec: &'a RunSpec,
    server: Server,
    queue: EventQueue<Ev>,
    rngs: Vec<ClientRng>,
    calls: Vec<Call>,
    free: Vec<u32>,
    tally: Tally,
    windows: WindowCursor,
    totals: OverloadTally,
    series: SeriesBuilder,
    sketch: Sketch,
    /// The service demand is drawn only for a capacity server.
    service: Option<Dist>,
}

impl Loop<'_> {
    fn in_system(&self) -> u64 {
        match &self.server {
            Server::Capacity(c) => c.in_system(),
            _ => 0,
        }
    }

    fn push(&mut self, time: SimTime, item: Ev) {
        self.queue.push(Event { time, item });
    }

    fn start_call(&mut self, now: SimTime, process: u32) {
        self.totals.calls += 1;
        self.series.counts().calls_started += 1;
        let call = Call {
            process,
            attempt: 0,
            outstanding: false,
            phase: Phase::Elsewhere,
            retries_made: 0,
            previous: self.spec.policy.backoff.base,
            sent: now,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                let old = self.calls[slot as usize].attempt;
                self.calls[slot as usize] = Call {
                    attempt: old,
                    ..call
                };
                slot
            }
            None => {
                self.calls.push(call);
                (self.calls.len() - 1) as u32
            }
        };
        self.send(now, slot);
        if let Arrivals::Poisson(schedule) = &self.spec.overload.arrivals {
            let rng = &mut self.rngs[process as usize];
            if let Some(next) = schedule.next_start(now, self.spec.clients, rng) {
                self.push(next, Ev::Start { process });
            }
        }
    }

    fn send(&mut self, now: SimTime, slot: u32) {
        let call = &mut self.calls[slot as usize];
        call.attempt = call.attempt.wrapping_add(1);
        call.outstanding = true;
        call.phase = Phase::Elsewhere;
        call.sent = now;
        let rng = &mut self.rngs[call.process as usize];
        let demand = self.service.map_or(0, |d| d.draw(rng).as_nanos());
        let (there, back) = match self.spec.overload.network {
            Some(d) => (d.draw(rng), d.draw(rng)),
            None => (SimDuration::ZERO, self.spec.latency.draw(rng)),
        };
        let job = Job {
            call: slot,
            attempt: call.attempt,
            process: call.process,
            demand,
            back: back.as_nanos(),
            retry: call.retries_made > 0,
        };
        self.totals.attempts += 1;
        self.series.counts().attempts += 1;
        self.push(now + there, Ev::Arrive(job));
        if let Some(timeout) = self.spec.overload.timeout {
            self.push(
                now + timeout,
                Ev::Timeout {
                    call: slot,
                    attempt: job.attempt,
                },
            );
        }
    }

    fn abandoned(calls: &[Call], job: &Job) -> bool {
        let call = &calls[job.call as usize];
        call.attempt != job.attempt || !call.outstanding
    }

    fn refuse(&mut self, now: SimTime, window: usize, job: Job, hints: Hints) {
        self.tally.refused += 1;
        self.tally.refused_windows.record_window(window);
        // A reset is announced as an instant; the client reads it one trip later.
        let reset_in = hints
            .reset_in
            .map(|r| SimDuration(r.as_nanos().saturating_sub(job.back)));
        self.push(
            now + SimDuration(job.back),
            Ev::Deliver {
                call: job.call,
                attempt: job.attempt,
                answer: Answer::Refused {
                    retry_after: header(hints.retry_after),
                    reset_in: header(reset_in),
                },
            },
        );
    }

    fn arrive(&mut self, now: SimTime, job: Job) {
        let window = self.windows.window_of(now);
        self.tally.requests += 1;
        if job.retry {
            self.tally.retries.record_window(window);
            self.tally.first_retry = Some(self.tally.first_retry.map_or(now, |f| f.min(now)));
            self.tally.last_retry = Some(now);
        }
        if self.spec.overload.triggers.out_at(now) {
            self.refuse(now, window, job, Hints::default());
            return;
        }
        let factor = self.spec.overload.triggers.factor_at(now);
        let admission = match &mut self.server {
            Server::Capacity(c) => {
                if c.rule.cancels && Self::abandoned(&self.calls, &job) {
                    // Its client gave up while it travelled: dropped unread.
                    return;
                }
                c.arrive(job, factor)
            }
            other => match other.respond(now, job.process) {
                Response::Served => Admission::Start(SimDuration::ZERO),
                Response::Refused(hints) => Admission::Shed(hints),
            },
        };
        match admission {
            Admission::Start(service) => {
                if service.is_zero() && !matches!(self.server, Server::Capacity(_)) {
                    self.complete_instantly(now, window, job);
                } else {
                    self.push(
                        now + service,
                        Ev::Complete {
                            job,
                            service: service.as_nanos(),
                        },
                    );
                }
            }
            Admission::Queued => {
                if !Self::abandoned(&self.calls, &job) {
                    self.calls[job.call as usize].phase = Phase::Waiting;
                }
            }
            Admission::Shed(hints) => self.refuse(now, window, job, hints),
        }
    }

    /// A server without service time answers at arrival.
    fn complete_instantly(&mut self, now: SimTime, window: usize, job: Job) {
        self.tally.served_windows.record_window(window);
        self.deliver_served(now, job, 0);
    }

    fn deliver_served(&mut self, now: SimTime, job: Job, service: u64) {
        self.push(
            now + SimDuration(job.back),
            Ev::Deliver {
                call: job.call,
                attempt: job.attempt,
                answer: Answer::Served { service },
            },
        );
    }

    fn complete(&mut self, now: SimTime, job: Job, service: u64) {
        let window = self.windows.window_of(now);
        self.tally.served_windows.record_window(window);
        self.deliver_served(now, job, service);
        let factor = self.spec.overload.triggers.factor_at(now);
        let calls = &self.calls;
        let next = match &mut self.server {
            Server::Capacity(c) => c.complete(factor, |j| Self::abandoned(calls, j)),
            _ => None,
        };
        if let Some((job, service)) = next {
            if !Self::abandoned(&self.calls, &job) {
                self.calls[job.call as usize].phase = Phase::Elsewhere;
            }
            self.push(
                now + service,
                Ev::Complete {
                    job,
                    service: service.as_nanos(),
                },
            );
        }
    }

    fn deliver(&mut self, now: SimTime, slot: u32, attempt: u32, answer: Answer) {
        let call = &mut self.calls[slot as usize];
        if call.attempt != attempt || !call.outstanding {
            self.totals.late += 1;
            if let Answer::Served { service } = answer {
                self.totals.abandoned_work_ns += service;
            }
            return;
        }
        call.outstanding = false;
        match answer {
            Answer::Served { .. } => {
                let latency = (now - call.sent).as_nanos();
                let process = call.process;
                self.series.success(latency);
                self.sketch.record(latency);
                self.totals.latency_sum_ns += u128::from(latency);
                self.totals.calls_succeeded += 1;
                self.tally.succeeded += 1;
                self.tally.last_success = Some(now);
                self.tally.finish(now, process, true);
                self.free.push(slot);
            }
            Answer::Refused {
                retry_after,
                reset_in,
            } => {
                self.totals.refused += 1;
                self.series.counts().refused += 1;
                let hints = Hints {
                    retry_after: unheader(retry_after),
                    reset_in: unheader(reset_in),
                };
                self.retry_or_fail(now, slot, &hints);
            }
        }
    }

    fn timeout(&mut self, now: SimTime, slot: u32, attempt: u32) {
        let call = &mut self.calls[slot as usize];
        if call.attempt != attempt || !call.outstanding {
            return;
        }
        call.outstanding = false;
        if call.phase == Phase::Waiting {
            call.phase = Phase::Elsewhere;
            if let Server::Capacity(c) = &mut self.server {
                if c.rule.cancels {
                    c.cancel_waiting();
                }
            }
        }
        self.totals.timed_out += 1;
        self.series.counts().timed_out += 1;
        self.retry_or_fail(now, slot, &Hints::default());
    }

    fn retry_or_fail(&mut self, now: SimTime, slot: u32, hints: &Hints) {
        let policy = self.spec.policy;
        let call = &mut self.calls[slot as usize];
        let rng = &mut self.rngs[call.process as usize];
        match policy.decide(call.retries_made, call.previous, hints, rng) {
            Decision::Retry { retry, delay } => {
                call.retries_made = retry;
                call.previous = delay;
                self.push(now + delay, Ev::Send { call: slot });
            }
            Decision::GiveUp => {
                let process = call.process;
                self.totals.calls_failed += 1;
                self.tally.gave_up += 1;
                self.tally.finish(now, process, false);
                self.free.push(slot);
            }
        }
    }
}

/// Simulates `spec` on the call loop: the tally every path fills, and the overload totals
/// and series.
pub fn simulate_calls(spec: &RunSpec) -> (Tally, OverloadTally) {
    let overload = &spec.overload;
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let service = match &server {
        Server::Capacity(c) => Some(c.rule.service),
        _ => None,
    };
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let tally = Tally::for_clients(spec.bin, spec.clients);
    let windows = tally.retries.cursor();
    let mut run = Loop {
        spec,
        server,
        queue: EventQueue::new(),
        rngs: (0..spec.clients).map(|_| seeds.next_rng()).collect(),
        calls: Vec::new(),
        free: Vec::new(),
        tally,
        windows,
        totals: OverloadTally::default(),
        series: SeriesBuilder::new(overload.series_bin),
        sketch: Sketch::new(),
        service,
    };
    for process in 0..spec.clients {
        let first = match &overload.arrivals {
            Arrivals::Herd => Some(SimTime::ZERO),
            Arrivals::Poisson(schedule) => {
                schedule.next_start(SimTime::ZERO, spec.clients, &mut run.rngs[process as usize])
            }
        };
        if let Some(t) = first {
            run.push(t, Ev::Start { process });
        }
    }
    while let Some(Event { time: now, item }) = run.queue.pop() {
        let in_system = run.in_system();
        run.series.advance(now, in_system);
        match item {
            Ev::Start { process } => run.start_call(now, process),
            Ev::Send { call } => run.send(now, call),
            Ev::Arrive(job) => run.arrive(now, job),
            Ev::Complete { job, service } => run.complete(now, job, service),
            Ev::Deliver {
                call,
                attempt,
                answer,
            } => run.deliver(now, call, attempt, answer),
            Ev::Timeout { call, attempt } => run.timeout(now, call, attempt),
        }
    }
    let in_system = run.in_system();
    let mut totals = run.totals;
    totals.pending = run.calls.iter().filter(|c| c.outstanding).count() as u64;
    totals.latency_p50_ns = run.sketch.quantile(0.5);
    totals.latency_p99_ns = run.sketch.quantile(0.99);
    totals.rows = run.series.finish(in_system);
    totals.series_bin = overload.series_bin;
    totals.trigger_end = overload.trigger_end();
    let hold = overload
        .recovery_hold
        .as_nanos()
        .div_ceil(overload.series_bin.as_nanos());
    let until = match &overload.arrivals {
        Arrivals::Poisson(s) => Some(s.end),
        Arrivals::Herd => None,
    };
    totals.recovered_at = recovered_at(
        &totals.rows,
        overload.series_bin,
        totals.trigger_end.unwrap_or(SimTime::ZERO),
        hold,
        until,
    );
    let mut tally = run.tally;
    tally.window_starts = run.server.window_starts();
    (tally, totals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Backoff, Policy, Strategy};
    use crate::server::{Capacity, CapacityRule, QueueOrder};
    use crate::workload::RateSchedule;

    const S: u64 = 1_000_000_000;

    fn spec(clients: u32, rule: CapacityRule, strategy: Strategy, retries: u32) -> RunSpec {
        RunSpec::new(
            clients,
            Policy {
                strategy,
                backoff: Backoff {
                    base: SimDuration::from_secs(1),
                    cap: SimDuration::from_secs(30),
                    multiplier: 2.0,
                },
                max_retries: retries,
            },
            Server::Capacity(Capacity::new(rule)),
            SimDuration::from_millis(100),
            7,
        )
    }

    fn fixed(secs: u64) -> Dist {
        Dist::Fixed(SimDuration::from_secs(secs))
    }

    fn close(got: Option<u64>, exact_s: f64, rel: f64) -> bool {
        let got = got.expect("a quantile") as f64 / 1e9;
        (got - exact_s).abs() <= rel * exact_s
    }

    #[test]
    fn two_workers_fifo_by_hand() {
        // Five clients at t = 0, 2 workers, 1 s each, FIFO, timeout 2.5 s, naive, 1 retry.
        // c0, c1 serve 0–1; c2, c3 1–2; c4 2–3, but its timeout fires at 2.5 (3 ≥ 2.5), so
        // the answer at 3 is late (1 s of abandoned work). Its retry is sent at 2.5 and finds
        // the second worker free (since 2): served 2.5–3.5. Latencies 1, 1, 2, 2, 1.
        let mut s = spec(
            5,
            CapacityRule {
                workers: Some(2),
                service: fixed(1),
                ..CapacityRule::default()
            },
            Strategy::Naive,
            1,
        );
        s.overload.timeout = Some(SimDuration(2_500_000_000));
        let (tally, t) = simulate_calls(&s);
        assert_eq!((t.calls, t.attempts, t.calls_succeeded), (5, 6, 5));
        assert_eq!((t.timed_out, t.late, t.refused, t.pending), (1, 1, 0, 0));
        assert_eq!(t.abandoned_work_ns, S);
        assert_eq!(t.latency_sum_ns, 7 * u128::from(S));
        // Nearest rank of 1, 1, 1, 2, 2: p50 the 3rd (1 s), p99 the 5th (2 s); sketch 0.4 %.
        assert!(close(t.latency_p50_ns, 1.0, 1.0 / 256.0));
        assert!(close(t.latency_p99_ns, 2.0, 1.0 / 256.0));
        let finishes: Vec<u64> = tally
            .client_finishes
            .unwrap()
            .iter()
            .map(|f| f.unwrap().as_nanos())
            .collect();
        assert_eq!(finishes, [S, S, 2 * S, 2 * S, 3 * S + S / 2]);
        // The series, window by window: (calls started, attempts, succeeded, timed out,
        // in system at the window's end).
        let rows: Vec<_> = t
            .rows
            .iter()
            .map(|r| {
                (
                    r.window,
                    r.calls_started,
                    r.attempts,
                    r.succeeded,
                    r.timed_out,
                    r.in_system,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (0, 5, 5, 0, 0, 5),
                (1, 0, 0, 2, 0, 3),
                (2, 0, 1, 2, 1, 2),
                (3, 0, 0, 1, 0, 0)
            ]
        );
        assert_eq!(tally.retries.total(), 1);
        assert_eq!(tally.requests, 6);
    }

    fn lifo_or_fifo(order: QueueOrder, cancels: bool) -> (Vec<u64>, OverloadTally) {
        let mut s = spec(
            4,
            CapacityRule {
                workers: Some(1),
                service: fixed(1),
                order,
                cancels,
                ..CapacityRule::default()
            },
            Strategy::Naive,
            0,
        );
        s.overload.timeout = Some(SimDuration(2_500_000_000));
        let (tally, t) = simulate_calls(&s);
        let finishes = tally
            .client_finishes
            .unwrap()
            .iter()
            .map(|f| f.unwrap().as_nanos())
            .collect();
        (finishes, t)
    }

    #[test]
    fn lifo_serves_the_latest_first_by_hand() {
        // Four clients at t = 0, one worker, 1 s each, timeout 2.5 s, no retries.
        // FIFO: c0 0–1, c1 1–2 (served), c2 2–3 and c3 3–4 answer after their timeouts
        // (2.5 s): 2 s of abandoned work. LIFO: c0 0–1, then the last to arrive, c3, 1–2;
        // c2 2–3 and c1 3–4 are late. With --server-cancels the request still waiting at the
        // timeout (FIFO c3, LIFO c1) is dropped: 1 s of abandoned work.
        let half = 2 * S + S / 2;
        let (fifo, t) = lifo_or_fifo(QueueOrder::Fifo, false);
        assert_eq!(fifo, [S, 2 * S, half, half]);
        assert_eq!(
            (t.calls_succeeded, t.calls_failed, t.abandoned_work_ns),
            (2, 2, 2 * S)
        );
        let (lifo, t) = lifo_or_fifo(QueueOrder::Lifo, false);
        assert_eq!(lifo, [S, half, half, 2 * S]);
        assert_eq!((t.calls_succeeded, t.abandoned_work_ns), (2, 2 * S));
        for order in QueueOrder::ALL {
            let (_, t) = lifo_or_fifo(order, true);
            assert_eq!(
                (t.calls_succeeded, t.abandoned_work_ns, t.late),
                (2, S, 1),
                "{order:?}"
            );
            // At 3 s (the end of window 2) one request is in service and the cancelled one
            // no longer counts; without cancelling both do.
            assert_eq!(t.rows[2].in_system, 1, "{order:?}");
            assert_eq!(lifo_or_fifo(order, false).1.rows[2].in_system, 2);
        }
    }

    fn poisson(rate: f64, duration_s: u64, service: Dist, seed: u64) -> OverloadTally {
        let mut s = spec(
            1,
            CapacityRule {
                workers: Some(1),
                service,
                ..CapacityRule::default()
            },
            Strategy::Naive,
            0,
        );
        s.seed = seed;
        s.overload.arrivals = Arrivals::Poisson(RateSchedule {
            base: rate,
            spikes: Vec::new(),
            end: SimTime(duration_s * S),
        });
        s.overload.series_bin = SimDuration::from_secs(3600);
        simulate_calls(&s).1
    }

    #[test]
    fn m_m_1_sojourn_quantiles_match_the_closed_form() {
        // λ = 0.5/s, μ = 1/s: the sojourn time is Exponential(μ − λ = 0.5/s), so
        // p50 = ln 2 / 0.5 = 1.386 s, p99 = ln 100 / 0.5 = 9.210 s, mean 2 s.
        // About 500 000 calls. Independent samples would give the median an sd of
        // sqrt(0.25 / n) / f(p50) = 0.0028 s (0.2 %) and p99 sqrt(0.0099 / n) / f(p99) =
        // 0.028 s (0.3 %); successive sojourns in one busy period are correlated, which at
        // ρ = 0.5 (relaxation time 1 / (μ(1 − √ρ)²) ≈ 12 s, about 6 calls) inflates the
        // variance by at most ~25 (sd ×5): 1 % and 1.5 %. Tolerances of 4 % and 6 % are 4 sd,
        // plus the sketch's 0.4 %.
        let t = poisson(0.5, 1_000_000, Dist::Exp(SimDuration::from_secs(1)), 11);
        assert!(t.calls > 490_000, "{}", t.calls);
        assert_eq!(t.calls_succeeded, t.calls);
        let p50 = 2.0 * std::f64::consts::LN_2;
        let p99 = 2.0 * 100f64.ln();
        assert!(close(t.latency_p50_ns, p50, 0.04), "{:?}", t.latency_p50_ns);
        assert!(close(t.latency_p99_ns, p99, 0.06), "{:?}", t.latency_p99_ns);
        let mean = t.latency_sum_ns as f64 / t.calls_succeeded as f64 / 1e9;
        assert!((mean - 2.0).abs() < 0.08, "{mean}");
    }

    #[test]
    fn m_d_1_mean_wait_matches_pollaczek_khinchine() {
        // λ = 0.5/s, service exactly 1 s (ρ = 0.5): Pollaczek–Khinchine gives the mean wait
        // W_q = ρ / (2μ(1 − ρ)) = 0.5 s, so the mean sojourn is 1.5 s. Over 500 000 calls the
        // correlated sample mean has an sd well under 1 %; allow 3 %.
        let t = poisson(0.5, 1_000_000, fixed(1), 12);
        let mean = t.latency_sum_ns as f64 / t.calls_succeeded as f64 / 1e9;
        assert!((mean - 1.5).abs() < 0.045, "{mean}");
        // Nobody waits less than the service time.
        assert!(t.latency_p50_ns.unwrap() as f64 >= 1e9 * (1.0 - 1.0 / 256.0));
    }

    #[test]
    fn every_attempt_and_every_call_is_accounted_for() {
        // A busy mix: Poisson with a spike, 3 workers, a queue of 5 with Retry-After on sheds,
        // slowdown, exponential service, network delay, an outage, a degradation, a timeout,
        // retries; every strategy, with and without cancelling.
        for strategy in Strategy::every() {
            for cancels in [false, true] {
                let mut s = spec(
                    7,
                    CapacityRule {
                        workers: Some(3),
                        service: Dist::Exp(SimDuration::from_millis(80)),
                        slowdown: SimDuration::from_millis(5),
                        queue: Some(5),
                        shed_retry_after: Some(SimDuration::from_millis(300)),
                        order: QueueOrder::Lifo,
                        cancels,
                    },
                    strategy,
                    3,
                );
                s.policy.backoff.base = SimDuration::from_millis(100);
                s.overload.arrivals = Arrivals::Poisson(RateSchedule {
                    base: 30.0,
                    spikes: vec![crate::workload::Spike {
                        from: SimTime(10 * S),
                        to: SimTime(15 * S),
                        rate: 90.0,
                    }],
                    end: SimTime(40 * S),
                });
                s.overload.timeout = Some(SimDuration::from_millis(400));
                s.overload.network = Some(NetworkDelay::Exp {
                    mean: SimDuration::from_millis(20),
                });
                s.overload.triggers = Triggers {
                    outages: vec![(SimTime(20 * S), SimTime(22 * S))],
                    degrades: vec![crate::server::Degrade {
                        from: SimTime(25 * S),
                        to: SimTime(30 * S),
                        factor: 0.5,
                    }],
                };
                let (tally, t) = simulate_calls(&s);
                assert_eq!(t.pending, 0);
                assert_eq!(
                    t.attempts,
                    t.calls_succeeded + t.timed_out + t.refused,
                    "{strategy} {cancels}"
                );
                assert_eq!(t.calls, t.calls_succeeded + t.calls_failed);
                assert!(t.timed_out > 0 && t.refused > 0 && t.calls > 800);
                let sum =
                    |f: fn(&crate::series::SeriesRow) -> u64| t.rows.iter().map(f).sum::<u64>();
                assert_eq!(sum(|r| r.calls_started), t.calls);
                assert_eq!(sum(|r| r.attempts), t.attempts);
                assert_eq!(sum(|r| r.succeeded), t.calls_succeeded);
                assert_eq!(sum(|r| r.timed_out), t.timed_out);
                assert_eq!(sum(|r| r.refused), t.refused);
                assert_eq!(t.rows.last().unwrap().in_system, 0);
                assert_eq!(
                    (tally.completed, tally.gave_up),
                    (t.calls_succeeded, t.calls_failed)
                );
                assert_eq!(tally.refused, t.refused);
                assert!(tally.requests <= t.attempts);
                // Same spec, same bytes.
                assert_eq!(simulate_calls(&s), (tally, t));
            }
        }
    }

    #[test]
    fn an_outage_on_the_down_server_refuses_then_lets_through() {
        // Down recovering at 0 (always serving), an outage over [0, 3 s), fixed 1 s waits:
        // requests at 0, 1, 2 s are refused, the one at 3 s served.
        let mut s = spec(2, CapacityRule::default(), Strategy::Fixed, 5);
        s.server = Server::Down(crate::server::Down {
            recover_at: Some(SimTime::ZERO),
        });
        s.overload.triggers.outages = vec![(SimTime::ZERO, SimTime(3 * S))];
        let (tally, t) = simulate_calls(&s);
        assert_eq!((t.refused, t.calls_succeeded, t.attempts), (6, 2, 8));
        assert_eq!(tally.last_success, Some(SimTime(3 * S)));
        assert_eq!(t.recovered_at, Some(SimTime(3 * S)));
    }
}
