//! herd-sim's policies inside real clients: the strategy a run simulated as an iterator of
//! delays ([`Delays`]), and its budget, breaker and throttle as one small state machine over
//! an injected clock ([`Guard`] over a [`Clock`]: [`ManualClock`] for tests and simulations,
//! [`SystemClock`] — `std::time::Instant` — in production). Both call exactly the code the
//! simulator runs ([`Policy::decide`], [`ProcessControl`]) in the call loop's order, with the
//! simulator's generator, so a service can ship the policy it simulated; `examples/client.rs`
//! (feature `async-example`) retries real HTTP calls on tokio to a local server through them.
//!
//! A [`Guard`] is one client process's state (the simulator keeps one per process): wrap it in
//! a `Mutex` to share it between threads.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::policy::control::{CallEnd, Controls, Gate, Outcome, ProcessControl};
use crate::policy::{Decision, Hints, Policy};
use crate::rng::{ClientRng, ClientSeeds};
use crate::time::{SimDuration, SimTime};

/// Where a [`Guard`] reads the time: nanoseconds since an origin of the clock's choosing.
pub trait Clock {
    /// Now.
    fn now(&self) -> SimTime;
}

/// Real time: nanoseconds since the clock was made.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose zero is now.
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> SimTime {
        SimTime(u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
}

/// A clock moved by hand (tests, simulations).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: Cell<u64>,
}

impl ManualClock {
    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: SimDuration) {
        self.now.set(self.now.get().saturating_add(d.as_nanos()));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SimTime {
        SimTime(self.now.get())
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> SimTime {
        (**self).now()
    }
}

/// The waits a policy asks for after each failed attempt of one call, as an iterator: the
/// `k`-th item is the wait before retry `k`; it ends when the retries are spent (or the
/// policy's retry probability says stop). Each item is [`Policy::decide`] with the previous
/// wait, as the simulator calls it.
#[derive(Debug)]
pub struct Delays<'r> {
    policy: Policy,
    retries_made: u32,
    previous: SimDuration,
    hints: Hints,
    rng: &'r mut ClientRng,
}

impl<'r> Delays<'r> {
    /// The delays of one call drawn from `rng`.
    pub fn new(policy: Policy, rng: &'r mut ClientRng) -> Self {
        Delays {
            policy,
            retries_made: 0,
            previous: policy.backoff.base,
            hints: Hints::default(),
            rng,
        }
    }

    /// The delays of a call that has made `retries_made` retries, the last after waiting
    /// `previous` (`base` before the first): where a [`Delays`] left off, on `rng`.
    pub fn resume(
        policy: Policy,
        rng: &'r mut ClientRng,
        retries_made: u32,
        previous: SimDuration,
    ) -> Self {
        Delays {
            retries_made,
            previous,
            ..Delays::new(policy, rng)
        }
    }

    /// What the server said with its last refusal, for the header-reading strategies.
    pub fn hint(&mut self, hints: Hints) {
        self.hints = hints;
    }
}

impl Iterator for Delays<'_> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        match self
            .policy
            .decide(self.retries_made, self.previous, &self.hints, self.rng)
        {
            Decision::Retry { retry, delay } => {
                self.retries_made = retry;
                self.previous = delay;
                Some(Duration::from_nanos(delay.as_nanos()))
            }
            Decision::GiveUp => None,
        }
    }
}

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Sleep this long, then send the next attempt.
    RetryAfter(Duration),
    /// Stop: the call has failed (retries spent, or the breaker or budget refused).
    Fail,
}

/// Whether an attempt may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Send it.
    Go,
    /// Sleep this long and ask again (the adaptive throttle's token is not there yet).
    Wait(Duration),
    /// Do not send it: the call fails locally (an open breaker, a throttle's rejection).
    Reject,
}

/// One client process's retry policy and controls over a clock: the simulator's
/// [`ProcessControl`] and [`Policy`] behind four calls a client makes around each call —
/// [`Guard::start`], [`Guard::admit`] before each attempt, [`Guard::failed`] after a failed
/// one, [`Guard::succeeded`] after a success.
#[derive(Debug)]
pub struct Guard<C: Clock> {
    policy: Policy,
    controls: Controls,
    state: ProcessControl,
    rng: ClientRng,
    clock: C,
}

/// One call under a [`Guard`]: what it holds of the budget and how far it got.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallState {
    held: u64,
    trial: bool,
    retries_made: u32,
    previous: Option<SimDuration>,
    ended: bool,
}

impl<C: Clock> Guard<C> {
    /// A process's fresh state; `seed` seeds its draws as the simulator's client 0 of a run
    /// seeded `seed`.
    pub fn new(policy: Policy, controls: Controls, clock: C, seed: u64) -> Self {
        Guard {
            policy,
            controls,
            state: controls.start(),
            rng: ClientSeeds::starting_at(seed, 0).next_rng(),
            clock,
        }
    }

    /// The clock this guard reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// A call starts: `None` when the breaker rejects it (it fails locally, and is ended).
    pub fn start(&mut self) -> Option<CallState> {
        let now = self.clock.now();
        let mut call = CallState::default();
        if self
            .state
            .call_started(&self.controls, now, &mut call.trial)
        {
            Some(call)
        } else {
            self.end(&mut call, CallEnd::Rejected);
            None
        }
    }

    /// An attempt of `call` wants to go (ask again after a [`Admit::Wait`]). A rejection ends
    /// the call.
    pub fn admit(&mut self, call: &mut CallState) -> Admit {
        let now = self.clock.now();
        let rng = &mut self.rng;
        let draw = || crate::rng::unit_interval(rand::RngCore::next_u64(rng));
        match self.state.send(&self.controls, now, draw) {
            Gate::Go => Admit::Go,
            Gate::Wait(d) => Admit::Wait(Duration::from_nanos(d.as_nanos())),
            Gate::Reject => {
                self.end(call, CallEnd::Rejected);
                Admit::Reject
            }
        }
    }

    /// The attempt sent by `call` failed with `outcome` (not [`Outcome::Success`]): retry
    /// after the returned wait, or stop (the call is then ended).
    pub fn failed(&mut self, call: &mut CallState, outcome: Outcome, hints: Hints) -> Next {
        let now = self.clock.now();
        self.state
            .attempt_ended(&self.controls, now, outcome, &mut call.held);
        let previous = call.previous.unwrap_or(self.policy.backoff.base);
        if let Decision::Retry { retry, delay } =
            self.policy
                .decide(call.retries_made, previous, &hints, &mut self.rng)
        {
            if self
                .state
                .allow_retry(&self.controls, now, outcome, &mut call.held)
            {
                call.retries_made = retry;
                call.previous = Some(delay);
                return Next::RetryAfter(Duration::from_nanos(delay.as_nanos()));
            }
        }
        self.end(call, CallEnd::Failed);
        Next::Fail
    }

    /// The attempt sent by `call` succeeded: the call ends.
    pub fn succeeded(&mut self, call: &mut CallState) {
        let now = self.clock.now();
        self.state
            .attempt_ended(&self.controls, now, Outcome::Success, &mut call.held);
        self.end(call, CallEnd::Succeeded);
    }

    fn end(&mut self, call: &mut CallState, end: CallEnd) {
        if !std::mem::replace(&mut call.ended, true) {
            let now = self.clock.now();
            self.state
                .call_ended(&self.controls, now, end, &mut call.held, call.trial);
        }
    }

    /// The control state, as the simulator's process holds it.
    pub fn state(&self) -> &ProcessControl {
        &self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::control::Budget;
    use crate::policy::trace::{parse_script, trace, TraceSpec};
    use crate::policy::Strategy;

    fn policy(strategy: Strategy, retries: u32) -> Policy {
        Policy {
            max_retries: retries,
            ..Policy::experiment1(strategy)
        }
    }

    #[test]
    fn delays_are_the_strategies_decisions_in_order_and_stop_when_retries_are_spent() {
        for strategy in Strategy::every() {
            let p = policy(strategy, 6);
            let mut a = ClientRng::new(42);
            let mut b = ClientRng::new(42);
            let got: Vec<Duration> = Delays::new(p, &mut a).collect();
            let mut previous = p.backoff.base;
            let mut want = Vec::new();
            for k in 0..6 {
                let Decision::Retry { delay, .. } =
                    p.decide(k, previous, &Hints::default(), &mut b)
                else {
                    panic!("{strategy}: retry {k}");
                };
                want.push(Duration::from_nanos(delay.as_nanos()));
                previous = delay;
            }
            assert_eq!(got, want, "{strategy}");
        }
        // Exponential by hand: 1 s, 2 s, 4 s, 8 s, 16 s, then the cap of 30 s.
        let mut rng = ClientRng::new(1);
        let exponential: Vec<u64> = Delays::new(policy(Strategy::Exponential, 7), &mut rng)
            .map(|d| d.as_secs())
            .collect();
        assert_eq!(exponential, [1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn a_guard_on_a_manual_clock_makes_the_golden_traces_decisions() {
        // The same policy, budget and script through the guard, moving the clock as the
        // trace does (answers 100 ms after sending, the next call 1 s after the last): the
        // same waits and the same calls failing.
        let p = policy(Strategy::FullJitter, 3);
        let controls = Controls {
            budget: Budget::parse("grpc:max_tokens=4").unwrap(),
            ..Controls::default()
        };
        let script = parse_script("error*6,success,error*2,success").unwrap();
        let spec = TraceSpec {
            policy: p,
            controls,
            script: script.clone(),
            seed: 9,
            latency: SimDuration(100_000_000),
            gap: SimDuration::from_secs(1),
        };
        let lines = trace(&spec);
        let clock = ManualClock::default();
        let mut guard = Guard::new(p, controls, &clock, 9);
        let mut outcomes = script.into_iter();
        let mut seen = Vec::new();
        'calls: while outcomes.len() > 0 {
            let mut call = guard.start().expect("no breaker");
            loop {
                assert_eq!(guard.admit(&mut call), Admit::Go);
                let Some(outcome) = outcomes.next() else {
                    break 'calls;
                };
                clock.advance(spec.latency);
                if outcome == Outcome::Success {
                    guard.succeeded(&mut call);
                    seen.push(None);
                    clock.advance(spec.gap);
                    continue 'calls;
                }
                match guard.failed(&mut call, outcome, Hints::default()) {
                    Next::RetryAfter(d) => {
                        seen.push(Some(d));
                        clock.advance(SimDuration(d.as_nanos() as u64));
                    }
                    Next::Fail => {
                        seen.push(None);
                        clock.advance(spec.gap);
                        continue 'calls;
                    }
                }
            }
        }
        let traced: Vec<Option<Duration>> = lines
            .iter()
            .map(
                |l| match l.decision.starts_with("retry") && !l.decision.contains("denied") {
                    true => l.delay.map(|d| Duration::from_nanos(d.as_nanos())),
                    false => None,
                },
            )
            .collect();
        assert_eq!(seen, traced);
        assert!(traced.iter().any(Option::is_none) && traced.iter().any(Option::is_some));
    }

    #[test]
    fn the_system_clock_moves_forward() {
        let clock = SystemClock::new();
        let a = clock.now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(clock.now().as_nanos() >= a.as_nanos() + 2_000_000);
    }
}
