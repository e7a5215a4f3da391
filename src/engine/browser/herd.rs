//! The herd paths with tabs: [`super::super::simulate_event_queue`]'s and
//! [`super::super::simulate_independent`]'s loops with each client's [`Tab`] and [`Reading`]
//! carried in its pending event, following [`TabRules`].

use super::{Reading, Tab, TabRules, Timer};
use crate::engine::{
    in_order, over_blocks, Client, Event, EventQueue, FindWindow, NoWait, PreviousWait, Run,
    RunSpec, Single,
};
use crate::metrics::{Tally, WindowCursor, Windows};
use crate::policy::{Decision, Hints};
use crate::rng::{ClientRng, ClientSeeds};
use crate::server::{Response, Server};
use crate::time::{SimDuration, SimTime};
use crate::trace::{Attempt, Next, NoTrace, Observer, Outcome};

/// A client and its tab: the event of a run with tabs.
#[derive(Clone, Copy, Debug)]
pub(super) struct TabClient<W> {
    pub(super) client: Client<W, Single>,
    pub(super) tab: Tab,
    pub(super) reading: Reading,
    /// The pending event is the tab becoming visible while paused, not a request.
    resume: bool,
}

/// What the tab loops share: [`Run`] and the [`TabRules`].
pub(super) struct Tabs<'a, F, O = NoTrace> {
    pub(super) run: Run<'a, F, O>,
    pub(super) rules: TabRules,
}

impl<'a, F: FindWindow, O: Observer> Tabs<'a, F, O> {
    pub(super) fn new(spec: &RunSpec, run: Run<'a, F, O>) -> Self {
        Tabs {
            run,
            rules: TabRules::new(spec),
        }
    }

    pub(super) fn start<W: PreviousWait>(
        &mut self,
        spec: &RunSpec,
        id: u32,
        rng: ClientRng,
    ) -> TabClient<W> {
        TabClient {
            client: self.run.start(id, rng),
            tab: self.rules.open(spec.seed, id),
            reading: Reading::default(),
            resume: false,
        }
    }

    /// Handles `c`'s pending event at `time` (a request reaching the server, or the tab
    /// becoming visible while paused): returns the time of its next event, or `None` when
    /// the client is done.
    #[inline]
    pub(super) fn step<W: PreviousWait>(
        &mut self,
        time: SimTime,
        c: &mut TabClient<W>,
        server: &mut Server,
    ) -> Option<SimTime> {
        if c.resume {
            c.resume = false;
            c.tab.advance(time, self.rules.browser.switch_mean);
            let hints = c.reading.at(time);
            return self.decide(time, c, hints).0;
        }
        self.rules
            .arrives(time, c.client.retries_made > 0, &c.reading);
        c.reading = Reading::default();
        match server.respond(time, c.client.id) {
            Response::Served => {
                let (tab, rules) = (c.tab, &self.rules);
                let hidden = |t: SimTime| Some(rules.hidden_at(&mut tab.clone(), t));
                self.run
                    .answer_seen(time, &mut c.client, Response::Served, hidden)
            }
            Response::Refused(hints) => self.refused(time, c, hints),
        }
    }

    /// Tells the observer that `c`'s attempt that arrived at `arrived` and was refused, read
    /// at `read`, was followed by `next`.
    #[inline(always)]
    fn observe<W>(
        &mut self,
        c: &TabClient<W>,
        attempt: u32,
        arrived: SimTime,
        read: SimTime,
        next: Next,
    ) {
        if O::ON {
            let hidden = self.rules.hidden_at(&mut c.tab.clone(), read);
            self.run.trace.attempt(&Attempt {
                client: c.client.id,
                call: None,
                layer: None,
                attempt,
                sent: Some(arrived),
                arrived: Some(arrived),
                ended: read,
                outcome: Outcome::Refused,
                next,
                hidden: Some(hidden),
            });
        }
    }

    fn refused<W: PreviousWait>(
        &mut self,
        time: SimTime,
        c: &mut TabClient<W>,
        hints: Hints,
    ) -> Option<SimTime> {
        let run = &mut self.run;
        let window = run.windows.window_of(time);
        run.count_request(time, window, c.client.retries_made > 0, false);
        let read = time + run.latency.draw(&mut c.client.rng);
        self.rules.note(time, read, &c.tab, &mut c.reading, hints);
        let attempt = c.client.retries_made;
        if attempt >= self.run.policy.max_retries {
            self.observe(c, attempt, time, read, Next::GaveUp);
            self.run.count_finish(read, c.client.id, false);
            return None;
        }
        if self.rules.pauses(&mut c.tab, read) {
            self.observe(c, attempt, time, read, Next::Paused);
            return self.pause(c);
        }
        let hints = c.reading.at(read);
        let (next, what) = self.decide(read, c, hints);
        self.observe(c, attempt, time, read, what);
        next
    }

    /// The strategy's wait, drawn at `now`, and the retry timer it sets: the time of the
    /// client's next event, and what it did.
    #[inline(always)]
    fn decide<W: PreviousWait>(
        &mut self,
        now: SimTime,
        c: &mut TabClient<W>,
        hints: Hints,
    ) -> (Option<SimTime>, Next) {
        let policy = self.run.policy;
        let client = &mut c.client;
        match policy.decide_on(
            &self.run.curve,
            client.retries_made,
            client.previous.get(policy.backoff.base),
            &hints,
            &mut client.rng,
        ) {
            Decision::Retry { retry, delay } => {
                client.retries_made = retry;
                client.previous.set(delay);
                match self.rules.timer(&mut c.tab, now + delay) {
                    Timer::Runs(at) => (Some(at), Next::Retry(delay)),
                    Timer::Paused => {
                        // The retry is not sent: it is drawn again once visible.
                        c.client.retries_made -= 1;
                        (self.pause(c), Next::Paused)
                    }
                }
            }
            Decision::GiveUp => {
                self.run.count_finish(now, client.id, false);
                (None, Next::GaveUp)
            }
        }
    }

    /// Waits for the tab to become visible; paused for good if it never does.
    fn pause<W>(&mut self, c: &mut TabClient<W>) -> Option<SimTime> {
        let visible = self.rules.resume_at(&c.tab)?;
        c.resume = true;
        Some(visible)
    }
}

/// The event-queue path with tabs: [`super::super::simulate_event_queue`]'s loop, each event
/// carrying its tab.
pub fn simulate_event_queue(spec: &RunSpec) -> Tally {
    simulate_event_queue_observed(spec, NoTrace)
}

/// [`simulate_event_queue`], telling `trace` every attempt.
pub fn simulate_event_queue_observed<O: Observer>(spec: &RunSpec, trace: O) -> Tally {
    if spec.policy.strategy.reads_previous_wait() {
        event_queue_loop::<SimDuration, O>(spec, trace)
    } else {
        event_queue_loop::<NoWait, O>(spec, trace)
    }
}

fn event_queue_loop<W: PreviousWait, O: Observer>(spec: &RunSpec, trace: O) -> Tally {
    let mut tally = spec.new_tally();
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let run: Run<WindowCursor, O> = Run::new(spec, 0, spec.clients, &mut tally, trace);
    let mut tabs: Tabs<_, O> = Tabs::new(spec, run);
    let mut seeds = ClientSeeds::starting_at(spec.seed, 0);
    let mut queue: EventQueue<TabClient<W>> = EventQueue::new();
    // First requests at t = 0 in client order, answered without queueing (as the herd loop).
    for id in 0..spec.clients {
        let mut c: TabClient<W> = tabs.start(spec, id, seeds.next_rng());
        if let Some(next) = tabs.step(SimTime::ZERO, &mut c, &mut server) {
            queue.push(Event {
                time: next,
                item: c,
            });
        }
    }
    while let Some(Event { time, item: mut c }) = queue.pop() {
        if let Some(next) = tabs.step(time, &mut c, &mut server) {
            queue.push(Event {
                time: next,
                item: c,
            });
        }
    }
    let counts = tabs.rules.counts;
    tabs.run.finish();
    tally.browser = Some(counts);
    tally.window_starts = server.window_starts();
    tally
}

/// The independent path with tabs: each client's life in turn, blocks in parallel.
pub fn simulate_independent(spec: &RunSpec) -> Tally {
    over_blocks(spec, |first, last| block(spec, first, last, NoTrace))
}

/// [`simulate_independent`] telling `trace` every attempt, in client order (see
/// [`in_order`]).
pub(crate) fn independent_in_order<O: Observer>(spec: &RunSpec, trace: O) -> Tally {
    in_order(
        spec,
        trace,
        |first, last, trace| block(spec, first, last, trace),
        |first, last, part| block(spec, first, last, part),
    )
}

fn block<O: Observer>(spec: &RunSpec, first: u32, last: u32, trace: O) -> Tally {
    if spec.policy.strategy.reads_previous_wait() {
        block_loop::<SimDuration, O>(spec, first, last, trace)
    } else {
        block_loop::<NoWait, O>(spec, first, last, trace)
    }
}

fn block_loop<W: PreviousWait, O: Observer>(
    spec: &RunSpec,
    first: u32,
    last: u32,
    trace: O,
) -> Tally {
    let mut tally = spec.new_tally();
    let mut server = spec.server.clone();
    server.prepare(spec.clients);
    let run: Run<Windows, O> = Run::new(spec, first, last - first, &mut tally, trace);
    let mut tabs: Tabs<_, O> = Tabs::new(spec, run);
    let mut seeds = ClientSeeds::starting_at(spec.seed, u64::from(first));
    for id in first..last {
        let mut c: TabClient<W> = tabs.start(spec, id, seeds.next_rng());
        let mut time = SimTime::ZERO;
        while let Some(next) = tabs.step(time, &mut c, &mut server) {
            time = next;
        }
    }
    let counts = tabs.rules.counts;
    tabs.run.finish();
    tally.browser = Some(counts);
    tally
}
