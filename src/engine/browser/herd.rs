//! What a herd client with a browser tab carries ([`TabState`]: its [`Tab`] and the
//! [`Reading`] of its last refusal, in its pending event) and the step the herd paths' loops
//! take for it, following [`TabRules`]. The loops are the herd paths' own, with the tab as
//! their [`Carried`] type parameter.

use super::{Reading, Tab, TabRules, Timer};
use crate::engine::{Carried, Client, Exchange, FindWindow, Known, PreviousWait, Run, RunSpec};
use crate::metrics::Tally;
use crate::policy::{Decision, Hints};
use crate::server::Response;
use crate::time::SimTime;
use crate::trace::{Attempt, Next, Observer, Outcome};

/// What a client carries with a tab: the tab, what it read of its last refusal, and whether
/// its pending event is the tab becoming visible while paused rather than a request.
#[derive(Clone, Copy, Debug)]
pub(in crate::engine) struct TabState {
    pub(super) tab: Tab,
    pub(super) reading: Reading,
    /// The pending event is the tab becoming visible while paused, not a request.
    resume: bool,
}

/// A client of a herd run with tabs.
type TabClient<W, X> = Client<W, X, TabState>;

impl Carried for TabState {
    const NOTHING: bool = false;
    type Rules = TabRules;

    fn rules(spec: &RunSpec) -> TabRules {
        TabRules::new(spec)
    }

    fn open(rules: &mut TabRules, seed: u64, id: u32) -> Self {
        TabState {
            tab: rules.open(seed, id),
            reading: Reading::default(),
            resume: false,
        }
    }

    /// Handles `c`'s pending event at `time` (a request reaching the server, or the tab
    /// becoming visible while paused).
    #[inline]
    fn step<F: FindWindow, O: Observer, K: Known, W: PreviousWait, X: Exchange>(
        run: &mut Run<'_, F, O, K>,
        rules: &mut TabRules,
        time: SimTime,
        c: &mut TabClient<W, X>,
        respond: impl FnOnce(SimTime, u32) -> Response,
    ) -> Option<SimTime> {
        TabStep { run, rules }.event(time, c, respond)
    }

    fn finish(rules: TabRules, tally: &mut Tally) {
        tally.browser = Some(rules.counts);
    }
}

/// What a step of a client with a tab works with: the run, and the tab rules it follows.
struct TabStep<'s, 'a, F, O, K> {
    run: &'s mut Run<'a, F, O, K>,
    rules: &'s mut TabRules,
}

impl<F: FindWindow, O: Observer, K: Known> TabStep<'_, '_, F, O, K> {
    #[inline(always)]
    fn event<W: PreviousWait, X: Exchange>(
        &mut self,
        time: SimTime,
        c: &mut TabClient<W, X>,
        respond: impl FnOnce(SimTime, u32) -> Response,
    ) -> Option<SimTime> {
        if c.carried.resume {
            c.carried.resume = false;
            c.carried.tab.advance(time, self.rules.browser.switch_mean);
            let hints = c.carried.reading.at(time);
            return self.decide(time, c, hints).0;
        }
        self.rules
            .arrives(time, c.retries_made > 0, &c.carried.reading);
        c.carried.reading = Reading::default();
        match respond(time, c.id) {
            Response::Served => {
                let (tab, rules) = (c.carried.tab, &*self.rules);
                let hidden = |t: SimTime| Some(rules.hidden_at(&mut tab.clone(), t));
                self.run.answer_seen(time, c, Response::Served, hidden)
            }
            Response::Refused(hints) => self.refused(time, c, hints),
        }
    }

    /// Tells the observer that `c`'s attempt that arrived at `arrived` and was refused, read
    /// at `read`, was followed by `next`.
    #[inline(always)]
    fn observe<W, X: Exchange>(
        &mut self,
        c: &TabClient<W, X>,
        attempt: u32,
        arrived: SimTime,
        read: SimTime,
        next: Next,
    ) {
        if O::ON {
            let hidden = self.rules.hidden_at(&mut c.carried.tab.clone(), read);
            self.run.trace.attempt(&Attempt {
                client: c.id,
                call: None,
                layer: None,
                attempt,
                sent: X::sent(arrived),
                arrived: Some(arrived),
                ended: read,
                outcome: Outcome::Refused,
                next,
                hidden: Some(hidden),
            });
        }
    }

    /// `c`'s request at `time` refused with `hints`: counted, read a round trip later, then
    /// given up, paused or retried. Inlined into the loop, as the loop's own answer is: out
    /// of line, with `#[inline]` alone, a run with tabs took 8 % more instructions.
    #[inline(always)]
    fn refused<W: PreviousWait, X: Exchange>(
        &mut self,
        time: SimTime,
        c: &mut TabClient<W, X>,
        hints: Hints,
    ) -> Option<SimTime> {
        let run = &mut *self.run;
        let window = run.windows.window_of(time);
        run.count_request(time, window, c.retries_made > 0, false);
        let read = time + X::answer_delay(&K::latency(&run.latency), &run.network, &mut c.rng);
        let (tab, reading) = (&mut c.carried.tab, &mut c.carried.reading);
        self.rules.note(time, read, tab, reading, hints);
        let attempt = c.retries_made;
        if attempt >= self.run.policy.max_retries {
            self.observe(c, attempt, time, read, Next::GaveUp);
            self.run.count_finish(read, c.id, false);
            return None;
        }
        if self.rules.pauses(&mut c.carried.tab, read) {
            self.observe(c, attempt, time, read, Next::Paused);
            return self.pause(c);
        }
        let hints = c.carried.reading.at(read);
        let (next, what) = self.decide(read, c, hints);
        self.observe(c, attempt, time, read, what);
        next
    }

    /// The strategy's wait, drawn at `now`, and the retry timer it sets: the time of the
    /// client's next event, and what it did.
    #[inline(always)]
    fn decide<W: PreviousWait, X: Exchange>(
        &mut self,
        now: SimTime,
        c: &mut TabClient<W, X>,
        hints: Hints,
    ) -> (Option<SimTime>, Next) {
        let policy = K::policy(&self.run.policy);
        match policy.decide_on(
            &self.run.curve,
            c.retries_made,
            c.previous.get(policy.backoff.base),
            &hints,
            &mut c.rng,
        ) {
            Decision::Retry { retry, delay } => {
                c.retries_made = retry;
                c.previous.set(delay);
                match self.rules.timer(&mut c.carried.tab, now + delay) {
                    Timer::Runs(at) => {
                        let arrives = c.exchange.send(at, &self.run.network, &mut c.rng);
                        (Some(arrives), Next::Retry(delay))
                    }
                    Timer::Paused => {
                        // The retry is not sent: it is drawn again once visible.
                        c.retries_made -= 1;
                        (self.pause(c), Next::Paused)
                    }
                }
            }
            Decision::GiveUp => {
                self.run.count_finish(now, c.id, false);
                (None, Next::GaveUp)
            }
        }
    }

    /// Waits for the tab to become visible; paused for good if it never does.
    fn pause<W, X>(&mut self, c: &mut TabClient<W, X>) -> Option<SimTime> {
        let visible = self.rules.resume_at(&c.carried.tab)?;
        c.carried.resume = true;
        Some(visible)
    }
}
