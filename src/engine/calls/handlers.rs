//! The call loop's event handlers: a call starts, an attempt is sent, arrives at the server,
//! completes there, is answered or times out, and the strategy decides what follows.

use rand::RngCore;

use crate::policy::control::{CallEnd, Gate, Outcome};
use crate::policy::{Decision, Hints};
use crate::server::{Admission, Job, Response, Server};
use crate::time::{SimDuration, SimTime};
use crate::trace::{Attempt, Next, Observer, Outcome as Ended};
use crate::workload::Arrivals;

use super::windows::Windows;
use super::{header, unheader, Answer, Call, Ev, Loop, Phase};
use crate::engine::browser::Reading;
use crate::engine::Event;

impl<O: Observer, W: Windows> Loop<'_, O, W> {
    pub(super) fn in_system(&self) -> u64 {
        if let Some(known) = &self.known {
            return known.in_system;
        }
        self.servers
            .iter()
            .map(|server| match server {
                Server::Capacity(c) => c.in_system(),
                _ => 0,
            })
            .sum()
    }

    pub(super) fn push(&mut self, time: SimTime, item: Ev) {
        self.queue.push(Event { time, item });
    }

    /// Schedules `item` at `now`, the time of the event being handled. When nothing else is
    /// due at `now` the queue would give it next (FIFO: anything pushed after it at `now`
    /// comes later), so it is kept aside and handled straight after this event instead.
    #[inline(always)]
    pub(super) fn push_now(&mut self, now: SimTime, item: Ev) {
        if self.next.is_none() && !self.queue.has_due_now() {
            self.next = Some(Event { time: now, item });
        } else {
            self.push(now, item);
        }
    }

    /// Schedules `item` after `delay`, at once ([`push_now`](Self::push_now)) when it is 0.
    #[inline(always)]
    fn push_after(&mut self, now: SimTime, delay: SimDuration, item: Ev) {
        if delay.is_zero() {
            self.push_now(now, item);
        } else {
            self.push(now + delay, item);
        }
    }

    pub(super) fn start_call(&mut self, now: SimTime, process: u32) {
        if let Some(c) = &mut self.closed {
            c.started(process);
        }
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
            held: 0,
            trial: false,
            outcome: Outcome::Error,
            charged: false,
            server: 0,
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
                // What the guard judges grows only here and where a request is admitted or
                // queued (with known answers, where its bound grows: [`known`](super::known)),
                // and each is judged there: a start that reuses a slot holds no more.
                self.calls.push(call);
                self.guard_in_flight(now);
                (self.calls.len() - 1) as u32
            }
        };
        if O::ON {
            let started = &mut self.traced.calls[process as usize];
            let traced = super::TracedSlot {
                number: *started,
                arrived: None,
            };
            *started += 1;
            match self.traced.slots.get_mut(slot as usize) {
                Some(s) => *s = traced,
                None => self.traced.slots.push(traced),
            }
        }
        if let Some(t) = &mut self.tabs {
            match t.readings.get_mut(slot as usize) {
                Some(r) => *r = Reading::default(),
                None => t.readings.push(Reading::default()),
            }
        }
        // Layered: the outer layers' calls start first, and may reject it.
        if self.layered.is_none() || self.layers_start(now, slot) {
            let admitted = !self.controls.is_active()
                || self
                    .controls
                    .call_started(process, now, &mut self.calls[slot as usize].trial);
            if admitted {
                self.send(now, slot);
            } else {
                self.reject_locally(now, slot);
            }
        }
        if let (Arrivals::Poisson(schedule), None) = (&self.spec.overload.arrivals, &self.closed) {
            let rng = &mut self.rngs[process as usize];
            if let Some(next) = schedule.next_start(now, self.spec.clients, rng) {
                self.push(next, Ev::Start { process });
            }
        }
    }

    pub(super) fn send(&mut self, now: SimTime, slot: u32) {
        let process = self.calls[slot as usize].process;
        if self.controls.is_active() {
            let rng = &mut self.rngs[process as usize];
            // The throttle's draw, when it may reject: 53 bits, uniform in [0, 1).
            let draw = || crate::rng::unit_interval(rng.next_u64());
            match self.controls.send(process, now, draw) {
                Gate::Go => {}
                Gate::Reject => {
                    self.reject_locally(now, slot);
                    return;
                }
                // No token yet (aws-adaptive): botocore sleeps before sending; the attempt
                // asks again when the token is due.
                Gate::Wait(wait) => {
                    let attempt = self.calls[slot as usize].attempt;
                    self.push(
                        now + wait,
                        Ev::Wake {
                            call: slot,
                            attempt,
                        },
                    );
                    return;
                }
            }
        }
        let server = self.route();
        let call = &mut self.calls[slot as usize];
        call.server = server;
        call.attempt = call.attempt.wrapping_add(1);
        call.outstanding = true;
        call.phase = Phase::Elsewhere;
        call.sent = now;
        if O::ON {
            self.traced.slots[slot as usize].arrived = None;
        }
        let rng = &mut self.rngs[call.process as usize];
        let demand = self.service.map_or(0, |d| d.draw(rng).as_nanos());
        let fails = match &self.servers[server as usize] {
            Server::Flaky(f) => f.fails(rng.next_u64()),
            _ => false,
        };
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
            fails,
            server,
        };
        self.totals.attempts += 1;
        self.series.counts().attempts += 1;
        if let Some(t) = &mut self.tabs {
            if t.rules.hidden_at(&mut t.tabs[job.process as usize], now) {
                self.series.counts().attempts_hidden += 1;
            }
        }
        // Handled next (no delay, nothing else due now), so nothing reaches the server
        // before it: whether it starts at once, and when it is answered, is known now.
        let next = there.is_zero() && self.next.is_none() && !self.queue.has_due_now();
        if next && self.known.is_some() && !self.refused_at(now, &job) {
            // Its arrival, handled now, is served: when its answer comes is known, and so
            // whether its timeout would find it answered.
            self.arrival_counts(now, &job);
            if !self.admit_known(now, job) {
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
            return;
        }
        self.push_after(now, there, Ev::Arrive(job));
        if let Some(timeout) = self.spec.overload.timeout {
            if next && self.answered_before(now, &job, timeout) {
                // Its timeout would find it answered (stale) and do nothing.
                return;
            }
            self.push(
                now + timeout,
                Ev::Timeout {
                    call: slot,
                    attempt: job.attempt,
                },
            );
        }
    }

    /// Whether `job`, sent and arriving at `now` before anything else reaches the server,
    /// is certainly answered before its `timeout`: a capacity server, not out, starts it at
    /// once (as [`arrive`](Self::arrive) will), and its service and way back end strictly
    /// before the timeout (which comes first on a tie). Its answer is then sure: a started
    /// request always completes and is delivered.
    fn answered_before(&self, now: SimTime, job: &Job, timeout: SimDuration) -> bool {
        let Server::Capacity(c) = &self.servers[job.server as usize] else {
            return false;
        };
        if self.out_at(now, job.server) {
            return false;
        }
        c.service_if_free(job.demand, self.factor_at(now, job.server))
            .is_some_and(|service| service.as_nanos().saturating_add(job.back) < timeout.as_nanos())
    }

    /// Stops the run ([`OverloadTally::outgrown`](crate::series::OverloadTally)) when its
    /// call slots and queued requests are past what its guard allows.
    #[inline]
    pub(super) fn guard_in_flight(&mut self, now: SimTime) {
        let guard = self.spec.overload.in_flight;
        if let Some(known) = &mut self.known {
            if guard.outgrown(self.calls.len() as u64, known.waiting_bound(W::RECORDS)) {
                known.redo = true;
            }
            return;
        }
        let places = self
            .servers
            .iter()
            .map(|server| match server {
                Server::Capacity(c) => c.queued(),
                _ => 0,
            })
            .sum();
        let calls = self.calls.len() as u64;
        if guard.outgrown(calls, places) {
            self.totals.outgrown = Some((now, calls, places));
        }
    }

    pub(super) fn abandoned(calls: &[Call], job: &Job) -> bool {
        let call = &calls[job.call as usize];
        call.attempt != job.attempt || !call.outstanding
    }

    /// Refuses `job`; `throttling` when the refusal is a throttling error to the client (a
    /// capacity server's shed, a limiter's 429), not a plain 503 (flaky, outage, down).
    pub(super) fn refuse(
        &mut self,
        now: SimTime,
        window: usize,
        job: Job,
        hints: Hints,
        throttling: bool,
    ) {
        self.tally.refused += 1;
        self.tally.answer_in_window(window, false);
        // A reset is announced as an instant; the client reads it one trip later (a tab
        // reads it against its own clock from the refusal's time).
        let reset_in = match self.tabs {
            Some(_) => hints.reset_in,
            None => hints
                .reset_in
                .map(|r| SimDuration(r.as_nanos().saturating_sub(job.back))),
        };
        self.push_after(
            now,
            SimDuration(job.back),
            Ev::Deliver {
                call: job.call,
                attempt: job.attempt,
                answer: Answer::Refused {
                    retry_after: header(hints.retry_after),
                    reset_in: header(reset_in),
                    throttling,
                    at: now.as_nanos(),
                },
            },
        );
    }

    /// Whether `job`, arriving at `now`, is refused whatever the server holds: its server
    /// is out, or its client's calls always fail.
    #[inline]
    fn refused_at(&self, now: SimTime, job: &Job) -> bool {
        self.out_at(now, job.server) || self.spec.overload.sticky.fails(job.process)
    }

    /// What an arrival counts whatever its answer: a request, a retry in its window (found
    /// only for a retry: an arrival whose answer is known counts nothing else in one).
    #[inline]
    fn arrival_counts(&mut self, now: SimTime, job: &Job) {
        self.tally.requests += 1;
        if O::ON && job.attempt == self.calls[job.call as usize].attempt {
            self.traced.slots[job.call as usize].arrived = Some(now);
        }
        if let Some(t) = &mut self.tabs {
            if job.attempt == self.calls[job.call as usize].attempt {
                t.rules
                    .arrives(now, job.retry, &t.readings[job.call as usize]);
            }
        }
        if job.retry {
            let window = self.windows.window_of(now);
            self.tally.retry_in_window(window);
            self.tally.first_retry = Some(self.tally.first_retry.map_or(now, |f| f.min(now)));
            self.tally.last_retry = Some(now);
        }
    }

    pub(super) fn arrive(&mut self, now: SimTime, job: Job) {
        self.arrival_counts(now, &job);
        if self.refused_at(now, &job) {
            let window = self.windows.window_of(now);
            self.refuse(now, window, job, Hints::default(), false);
            return;
        }
        if self.known.is_some() {
            // Counts its answer in its window where it is reached, if the tally keeps them.
            self.admit_known(now, job);
            return;
        }
        // The window its answer is counted in, served or refused, at the server's events.
        let window = self.windows.window_of(now);
        // Which refusals read as throttling: a shed or a limiter's 429, not a 503.
        let throttling = matches!(self.servers[0], Server::Capacity(_) | Server::Limited(_));
        let factor = self.factor_at(now, job.server);
        let admission = match &mut self.servers[job.server as usize] {
            Server::Capacity(c) => {
                if c.rule.cancels && Self::abandoned(&self.calls, &job) {
                    // Its client gave up while it travelled: dropped unread.
                    self.totals.dropped += 1;
                    return;
                }
                c.arrive(job, factor)
            }
            Server::Flaky(_) if job.fails => Admission::Shed(Hints::default()),
            Server::Flaky(_) => Admission::Start(SimDuration::ZERO),
            other => match other.respond(now, job.process) {
                Response::Served => Admission::Start(SimDuration::ZERO),
                Response::Refused(hints) => Admission::Shed(hints),
            },
        };
        match admission {
            Admission::Start(service) => {
                if service.is_zero() && !matches!(self.servers[0], Server::Capacity(_)) {
                    self.complete_instantly(now, window, job);
                } else {
                    self.start_service(now, job, service);
                }
            }
            Admission::Queued => {
                if !Self::abandoned(&self.calls, &job) {
                    self.calls[job.call as usize].phase = Phase::Waiting;
                }
                self.guard_in_flight(now);
            }
            Admission::Shed(hints) => self.refuse(now, window, job, hints, throttling),
        }
    }

    /// A server without service time answers at arrival.
    pub(super) fn complete_instantly(&mut self, now: SimTime, window: usize, job: Job) {
        self.tally.answer_in_window(window, true);
        self.served_at(job.server);
        self.deliver_served(now, job, 0);
    }

    #[inline]
    pub(super) fn deliver_served(&mut self, now: SimTime, job: Job, service: u64) {
        self.push_after(
            now,
            SimDuration(job.back),
            Ev::Deliver {
                call: job.call,
                attempt: job.attempt,
                answer: Answer::Served { service },
            },
        );
    }

    pub(super) fn complete(&mut self, now: SimTime, job: Job, service: u64) {
        let window = self.windows.window_of(now);
        self.tally.answer_in_window(window, true);
        self.served_at(job.server);
        self.deliver_served(now, job, service);
        self.take_next(now, job.server);
    }

    /// A worker of server `k` is free at `now`: it takes the next waiting request, if any.
    pub(super) fn take_next(&mut self, now: SimTime, k: u32) {
        let factor = self.factor_at(now, k);
        let calls = &self.calls;
        let next = match &mut self.servers[k as usize] {
            Server::Capacity(c) => c.complete(factor, |j| Self::abandoned(calls, j)),
            _ => None,
        };
        if let Some((job, service)) = next {
            if !Self::abandoned(&self.calls, &job) {
                self.calls[job.call as usize].phase = Phase::Elsewhere;
            }
            self.start_service(now, job, service);
        }
    }

    pub(super) fn deliver(&mut self, now: SimTime, slot: u32, attempt: u32, answer: Answer) {
        let call = &mut self.calls[slot as usize];
        if call.attempt != attempt || !call.outstanding {
            self.totals.late += 1;
            if let Answer::Served { service } = answer {
                self.totals.abandoned_work_ns += service;
            }
            return;
        }
        call.outstanding = false;
        let (sent, process, server) = (call.sent, call.process, call.server);
        self.released(server, Some(matches!(answer, Answer::Served { .. })));
        let seen = self.seen(slot);
        match answer {
            Answer::Served { .. } => {
                self.observe(now, seen, Ended::Served, Next::Done);
                self.succeeded(now, slot, sent, process);
            }
            Answer::Refused {
                retry_after,
                reset_in,
                throttling,
                at,
            } => {
                self.totals.refused += 1;
                self.series.counts().refused += 1;
                let hints = Hints {
                    retry_after: unheader(retry_after),
                    reset_in: unheader(reset_in),
                };
                let outcome = if throttling {
                    Outcome::Throttled
                } else {
                    Outcome::Error
                };
                if let Some(t) = &mut self.tabs {
                    let tab = &t.tabs[process as usize];
                    let reading = &mut t.readings[slot as usize];
                    t.rules.note(SimTime(at), now, tab, reading, hints);
                }
                self.control_attempt(now, slot, outcome);
                let next = self.retry_or_fail(now, slot, &hints, outcome);
                self.observe(now, seen, Ended::Refused, next);
            }
        }
    }

    /// The call in `slot` of `process`, its attempt sent at `sent`, read its success at `now`.
    #[inline]
    pub(super) fn succeeded(&mut self, now: SimTime, slot: u32, sent: SimTime, process: u32) {
        self.count_success(now, sent, process);
        self.control_attempt(now, slot, Outcome::Success);
        self.control_call_end(now, slot, CallEnd::Succeeded);
        if self.layered.is_some() {
            self.layers_succeeded(now, slot);
        }
        self.free.push(slot);
        self.call_over(now, process);
    }

    /// What a success read at `now` of an attempt sent at `sent` counts: its latency, the
    /// sums, the tally's counts and its latest times (as maxima where the run records no
    /// window, so that a success counted before the events around it, as
    /// [`known`](super::known) counts it there, counts the same).
    #[inline]
    pub(super) fn count_success(&mut self, now: SimTime, sent: SimTime, process: u32) {
        let latency = (now - sent).as_nanos();
        self.series.success(latency);
        self.sketch.record(latency);
        self.totals.latency_sum_ns += u128::from(latency);
        self.totals.calls_succeeded += 1;
        self.tally.succeeded += 1;
        if W::RECORDS {
            self.tally.last_success = Some(now);
        } else {
            self.tally.last_success = self.tally.last_success.max(Some(now));
        }
        self.finished(now, process, true);
    }

    /// Counts `process` stopping at `now`: in time order where the run records windows, in
    /// any order where it may count successes in advance ([`known`](super::known)).
    #[inline(always)]
    fn finished(&mut self, now: SimTime, process: u32, completed: bool) {
        if W::RECORDS {
            self.tally.finish(now, process, completed);
        } else {
            self.tally.finish_in_any_order(now, process, completed);
        }
    }

    /// What the trace records of the attempt outstanding in `slot`, before its call moves on:
    /// its process, number, attempt, send and arrival (nothing without a trace).
    #[inline(always)]
    fn seen(&mut self, slot: u32) -> Option<Seen> {
        if !O::ON {
            return None;
        }
        // Outer layers' lines that end with it wait for its line.
        self.traced.deferring = self.layered.is_some();
        let call = &self.calls[slot as usize];
        let traced = self.traced.slots[slot as usize];
        Some(Seen {
            process: call.process,
            call: traced.number,
            attempt: call.retries_made,
            sent: call.sent,
            arrived: traced.arrived,
        })
    }

    /// Tells the observer that the attempt `seen` ended at `now` with `outcome`, followed by
    /// `next`.
    #[inline(always)]
    pub(super) fn observe(&mut self, now: SimTime, seen: Option<Seen>, outcome: Ended, next: Next) {
        let Some(seen) = seen else { return };
        let hidden = self.tabs.as_ref().map(|t| {
            let mut tab = t.tabs[seen.process as usize];
            t.rules.hidden_at(&mut tab, now)
        });
        self.trace.attempt(&Attempt {
            client: seen.process,
            call: Some(seen.call),
            layer: self.innermost_layer(),
            attempt: seen.attempt,
            sent: Some(seen.sent),
            arrived: seen.arrived,
            ended: now,
            outcome,
            next,
            hidden,
        });
        if self.layered.is_some() {
            self.tell_deferred();
        }
    }

    /// Tells the process's control that an attempt of the call in `slot` ended.
    #[inline]
    fn control_attempt(&mut self, now: SimTime, slot: u32, outcome: Outcome) {
        let call = &mut self.calls[slot as usize];
        if self.controls.is_active() {
            self.controls
                .attempt_ended(call.process, now, outcome, &mut call.held);
        }
    }

    /// Tells the process's control that the call in `slot` ended.
    #[inline]
    pub(super) fn control_call_end(&mut self, now: SimTime, slot: u32, end: CallEnd) {
        let call = &mut self.calls[slot as usize];
        if self.controls.is_active() {
            self.controls
                .call_ended(call.process, now, end, &mut call.held, call.trial);
        }
    }

    /// The call in `slot` is rejected locally (open breaker, throttle): it fails without a
    /// request, counted in `calls_rejected_locally`.
    pub(super) fn reject_locally(&mut self, now: SimTime, slot: u32) {
        self.totals.calls_rejected_locally += 1;
        self.series.counts().rejected_locally += 1;
        self.end_failed(now, slot, CallEnd::Rejected);
    }

    /// The call in `slot` ends without success.
    pub(super) fn end_failed(&mut self, now: SimTime, slot: u32, end: CallEnd) {
        self.control_call_end(now, slot, end);
        if self.layered.is_some() {
            let outcome = match end {
                CallEnd::Rejected => Outcome::Error,
                _ => self.calls[slot as usize].outcome,
            };
            if self.outer_retry(now, slot, outcome) {
                return;
            }
        }
        self.end_whole_failed(now, slot);
    }

    /// The whole call in `slot` ends without success (every layer's, when layered).
    pub(super) fn end_whole_failed(&mut self, now: SimTime, slot: u32) {
        let process = self.calls[slot as usize].process;
        self.totals.calls_failed += 1;
        self.tally.gave_up += 1;
        self.finished(now, process, false);
        self.free.push(slot);
        self.call_over(now, process);
    }

    /// A call of `process` is over, its slot freed: a closed-loop client starts its next
    /// one after a think time drawn from its stream. (Only the check is inlined: an open
    /// loop pays a test a call, not a call.)
    #[inline(always)]
    fn call_over(&mut self, now: SimTime, process: u32) {
        if self.closed.is_some() {
            self.closed_call_over(now, process);
        }
    }

    #[inline(never)]
    fn closed_call_over(&mut self, now: SimTime, process: u32) {
        if let Some(c) = &mut self.closed {
            let rng = &mut self.rngs[process as usize];
            if let Some(next) = c.ended(now, process, |d| d.draw(rng)) {
                self.push(next, Ev::Start { process });
            }
        }
    }

    pub(super) fn timeout(&mut self, now: SimTime, slot: u32, attempt: u32) {
        let call = &mut self.calls[slot as usize];
        if call.attempt != attempt || !call.outstanding {
            return;
        }
        let seen = self.abandon_attempt(now, slot);
        let next = self.retry_or_fail(now, slot, &Hints::default(), Outcome::Timeout);
        self.observe(now, seen, Ended::TimedOut, next);
    }

    /// The attempt outstanding in `slot` is given up at `now`, by its timeout or an outer
    /// layer's: its late answer will be ignored, its place in a cancelling server's queue
    /// freed; counted timed out, its control told. Returns what the trace records of it.
    #[inline(always)]
    pub(super) fn abandon_attempt(&mut self, now: SimTime, slot: u32) -> Option<Seen> {
        let call = &mut self.calls[slot as usize];
        call.outstanding = false;
        let server = call.server;
        if call.phase == Phase::Waiting {
            call.phase = Phase::Elsewhere;
            if let Server::Capacity(c) = &mut self.servers[server as usize] {
                if c.rule.cancels {
                    c.cancel_waiting();
                }
            }
        }
        self.released(server, None);
        if let Some(t) = &mut self.tabs {
            // Nothing read: the strategy backs off as without headers.
            t.readings[slot as usize].forget_headers();
        }
        self.totals.timed_out += 1;
        self.series.counts().timed_out += 1;
        let seen = self.seen(slot);
        self.control_attempt(now, slot, Outcome::Timeout);
        seen
    }

    /// The strategy decides; a retry it wants goes only if the process's control allows it
    /// (a denied retry ends the call, counted in `retries_denied`). Returns what it did.
    pub(super) fn retry_or_fail(
        &mut self,
        now: SimTime,
        slot: u32,
        hints: &Hints,
        outcome: Outcome,
    ) -> Next {
        let policy = self.spec.policy;
        let call = &mut self.calls[slot as usize];
        // What an outer layer reads of the call, should it end here.
        call.outcome = outcome;
        let read;
        let hints = match &mut self.tabs {
            None => hints,
            Some(t) => {
                if call.retries_made >= policy.max_retries {
                    self.end_failed(now, slot, CallEnd::Failed);
                    return Next::GaveUp;
                }
                if t.rules.pauses(&mut t.tabs[call.process as usize], now) {
                    call.outcome = outcome;
                    self.pause(slot);
                    return Next::Paused;
                }
                read = t.readings[slot as usize].at(now);
                &read
            }
        };
        let rng = &mut self.rngs[call.process as usize];
        if let Decision::Retry { retry, delay } =
            policy.decide(call.retries_made, call.previous, hints, rng)
        {
            // A retry the control allowed before its tab paused it is not judged twice.
            let allowed = std::mem::take(&mut call.charged)
                || !self.controls.is_active()
                || self
                    .controls
                    .allow_retry(call.process, now, outcome, &mut call.held);
            if allowed {
                call.retries_made = retry;
                call.previous = delay;
                let attempt = call.attempt;
                self.push(
                    now + delay,
                    Ev::Send {
                        call: slot,
                        attempt,
                    },
                );
                return Next::Retry(delay);
            }
            self.totals.retries_denied += 1;
            self.series.counts().retries_denied += 1;
            self.end_failed(now, slot, CallEnd::Failed);
            return Next::Denied;
        }
        self.end_failed(now, slot, CallEnd::Failed);
        Next::GaveUp
    }
}

/// An attempt as the trace sees it when it ends, taken before its call moves on.
#[derive(Clone, Copy)]
pub(super) struct Seen {
    process: u32,
    call: u32,
    attempt: u32,
    sent: SimTime,
    arrived: Option<SimTime>,
}
