//! Layered retries ([`Layers`], `[[layer]]`, `--layer SPEC`): an app retrying around an SDK
//! retrying around a mesh. The run's own policy (`--strategy`, `--retries`, `--timeout`,
//! `--budget`, ...) is the innermost layer, the one whose attempts reach the server; the
//! layers above it are listed outermost first, each with its own strategy, retries, backoff,
//! timeout and budget, breaker or throttle. An outer layer's attempt is a whole call of the
//! layer below it: when that call fails (its retries spent, a retry denied, or rejected
//! locally by its breaker or throttle), the outer layer's strategy and control decide, and a
//! retry starts a fresh call of the layer below after the outer layer's wait (every layer
//! below starts from its first attempt, its controls told of a new call). A success ends
//! every layer's call at once.
//!
//! **An outer layer's timeout** bounds its attempt: when the call below it has not ended
//! `timeout` after it started, that call is abandoned whole. Every layer below it stops
//! where it is: the attempt at the server, if one is outstanding, is counted timed out (its
//! late answer ignored, its work still done, as for the run's own timeout), a pending retry
//! of any layer below is never made, and their controls are told their calls failed. The
//! outer layer then retries after its wait, or gives up, as when the call below fails. With
//! deadline propagation an attempt's deadline is the earliest of its own timeout's and every
//! outer layer's. **An outer layer's throttle** gates each of its attempts as the run's own
//! gates each request: one it rejects fails that layer's call without the attempt (counted
//! rejected locally), one it delays starts when its token comes.
//!
//! So against a server that refuses everything, a call of layers with `r1, r2, ..., rn`
//! retries makes `(1 + r1)(1 + r2)...(1 + rn)` attempts at the server. Each layer reports its
//! attempts (the calls it made of the layer below; the innermost's, the requests sent) and
//! its amplification (attempts per call made of it); their product is the run's end-to-end
//! amplification, attempts at the server per call.
//!
//! One call slot carries the whole stack: the innermost layer's state is the slot's own
//! (`Call`), each outer layer's is a [`LayerState`] beside it. The one call loop runs it:
//! the hook is where the innermost call ends failed ([`Loop::outer_retry`]), one event
//! ([`super::Ev::Restart`]) that starts an outer layer's attempt (a retry, or one its throttle
//! delayed) and the layers below it, and one ([`super::Ev::LayerTimeout`]) for an outer
//! layer's timeout. Nothing is removed from the queue: an outer layer's restart and timeout
//! carry its state's sequence number, which moves on whenever its attempt starts or ends or
//! its call is abandoned, and are dropped when it has; an abandoned innermost call's attempt
//! number moves on, so its pending retry, token wait, answer and timeout are stale. Outer
//! layers make no random draw but their strategy's and their throttle's, from the process's
//! stream, so a run without layers is unchanged. A layered run has no browser tabs.

use rand::RngCore;

use crate::policy::control::{
    Breaker, Budget, CallEnd, Controls, Gate, Outcome, RunControls, Throttle,
};
use crate::policy::{Backoff, Decision, Hints, JitterOrder, Policy, RetryChance};
use crate::time::{SimDuration, SimTime};
use crate::trace::{Attempt, Next, Observer, Outcome as Ended};

use super::windows::Windows;
use super::{Ev, Loop};

/// One layer above the run's own policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layer {
    /// Its strategy, backoff, retries and retry probability.
    pub policy: Policy,
    /// Its budget, breaker and throttle, per process or shared as the run's are.
    pub controls: Controls,
    /// Its own timeout: its attempt, the whole call of the layer below, is abandoned when it
    /// has not ended this long after it started; `None` for none.
    pub timeout: Option<SimDuration>,
}

impl Layer {
    /// The layer as `--layer` takes it, which given back makes the same layer: its strategy,
    /// retries, base and cap (which bounds the settle and the estimates whatever the
    /// strategy), then its multiplier, retry probability, jitter order, timeout, budget,
    /// breaker and throttle when not the defaults, each control with only the parameters
    /// that differ from its own defaults and its scope when global
    /// (`budget=grpc:max_tokens=20,scope=global`).
    pub fn text(&self) -> String {
        let p = &self.policy;
        let mut text = format!(
            "strategy={} retries={} base={} cap={}",
            p.strategy.name(),
            p.max_retries,
            p.backoff.base,
            p.backoff.cap
        );
        if p.backoff.multiplier != Backoff::DEFAULT_MULTIPLIER {
            text.push_str(&format!(" multiplier={}", number(p.backoff.multiplier)));
        }
        if !p.retry_chance.is_always() {
            // The fewest decimals that read back as the same probability (it is held in steps
            // of 2^-53, so its own digits have a binary tail).
            let chance = p.retry_chance;
            let shown = (1..=17)
                .map(|places| {
                    let digits = format!("{:.places$}", chance.probability());
                    digits
                        .trim_end_matches('0')
                        .trim_end_matches('.')
                        .to_string()
                })
                .find(|d| d.parse().is_ok_and(|q| RetryChance::new(q) == chance))
                .unwrap_or_else(|| number(chance.probability()));
            text.push_str(&format!(" retry-probability={shown}"));
        }
        if p.backoff.jitter_order != JitterOrder::default() {
            text.push_str(&format!(" jitter-order={}", p.backoff.jitter_order.name()));
        }
        if let Some(t) = self.timeout {
            text.push_str(&format!(" timeout={t}"));
        }
        let c = &self.controls;
        if c.budget != Budget::None {
            text.push_str(&format!(" budget={}", c.budget_text()));
        }
        if c.breaker != Breaker::None {
            text.push_str(&format!(" breaker={}", c.breaker_text()));
        }
        if c.throttle != Throttle::None {
            text.push_str(&format!(" throttle={}", c.throttle.short_text()));
        }
        text
    }
}

/// `v` as a `key=value` pair's number reads it back: f64's shortest form, in exponent form
/// when that is a whole number past what an integer holds.
fn number(v: f64) -> String {
    let text = v.to_string();
    match text.contains('.') || text.parse::<i64>().is_ok() {
        true => text,
        false => format!("{v:e}"),
    }
}

/// The layers above the run's own policy, outermost first; empty by default (one layer, the
/// run's own).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layers {
    /// Outermost first.
    pub outer: Vec<Layer>,
}

impl Layers {
    /// True when the run has layers above its own policy.
    #[inline]
    pub fn is_active(&self) -> bool {
        !self.outer.is_empty()
    }

    /// The layers as `--layer` takes them ([`Layer::text`]), outermost first: `2 retry
    /// layers around the policy below, outermost first: [strategy=naive retries=2 base=1s
    /// cap=30s timeout=5s] [strategy=full-jitter retries=3 base=1s cap=30s
    /// budget=token-bucket:scope=global]`; `None` without layers.
    pub fn describe(&self) -> Option<String> {
        if !self.is_active() {
            return None;
        }
        let each: Vec<String> = self
            .outer
            .iter()
            .map(|l| format!("[{}]", l.text()))
            .collect();
        let n = self.outer.len();
        let layers = if n == 1 { "layer" } else { "layers" };
        Some(format!(
            "{n} retry {layers} around the policy below, outermost first: {}",
            each.join(" ")
        ))
    }

    /// Attempts of every layer per call at most, the lines a trace writes for a call: the
    /// outermost's `1 + r1`, the next's `(1 + r1)(1 + r2)`, ..., the innermost's (at the
    /// server) [`Self::tries_per_call`], `inner_retries` the run's own (saturating).
    pub fn attempts_of_every_layer_per_call(&self, inner_retries: u32) -> u128 {
        let mut product = 1u128;
        let mut sum = 0u128;
        for layer in &self.outer {
            product = product.saturating_mul(u128::from(layer.policy.max_retries) + 1);
            sum = sum.saturating_add(product);
        }
        sum.saturating_add(product.saturating_mul(u128::from(inner_retries) + 1))
    }

    /// Attempts at the server per call at most: the product of every layer's `1 + retries`,
    /// `inner_retries` the run's own (saturating).
    pub fn tries_per_call(&self, inner_retries: u32) -> u128 {
        self.outer
            .iter()
            .fold(u128::from(inner_retries) + 1, |product, layer| {
                product.saturating_mul(u128::from(layer.policy.max_retries) + 1)
            })
    }

    /// Outer layers' timeouts one call can leave in the queue at most: each attempt of a
    /// layer with a timeout schedules one, pending until it is due even when the attempt
    /// ended before (saturating).
    pub fn timeouts_per_call(&self) -> u128 {
        let mut product = 1u128;
        let mut sum = 0u128;
        for layer in &self.outer {
            product = product.saturating_mul(u128::from(layer.policy.max_retries) + 1);
            if layer.timeout.is_some() {
                sum = sum.saturating_add(product);
            }
        }
        sum
    }

    /// The longest outer layer's timeout (zero without one): how long after a call ends one
    /// of its stale timeouts can still be due.
    pub fn longest_timeout(&self) -> SimDuration {
        self.outer
            .iter()
            .filter_map(|l| l.timeout)
            .fold(SimDuration::ZERO, SimDuration::max)
    }
}

/// What one outer layer's call keeps, beside its slot.
#[derive(Clone, Copy, Debug)]
struct LayerState {
    retries_made: u32,
    previous: SimDuration,
    held: u64,
    trial: bool,
    /// When its current attempt (a call of the layer below) started.
    sent: SimTime,
    /// Moves on whenever its attempt starts or ends, or its call is abandoned: its timeout
    /// and its restart carry it and are stale once it has moved on. Kept across the calls of
    /// the slot.
    seq: u32,
    /// The earliest instant its current attempt or an outer layer's is abandoned at (the
    /// end of time without timeouts).
    deadline: SimTime,
}

/// A layered run's state: the outer layers' controls and each slot's outer states.
pub(super) struct LayerRun {
    layers: Vec<Layer>,
    controls: Vec<RunControls>,
    /// `slot × layers + layer`.
    states: Vec<LayerState>,
    /// Each slot's innermost live layer: the layers above it are in an attempt, it is in an
    /// attempt (the innermost) or waiting for one (its retry's wait, or its throttle's token).
    deepest: Vec<u32>,
    /// Calls started at each layer, outermost first, the innermost last.
    started: Vec<u64>,
}

impl LayerRun {
    pub(super) fn new(layers: &Layers, clients: u32) -> Option<LayerRun> {
        layers.is_active().then(|| LayerRun {
            layers: layers.outer.clone(),
            controls: layers
                .outer
                .iter()
                .map(|l| RunControls::new(&l.controls, clients))
                .collect(),
            states: Vec::new(),
            deepest: Vec::new(),
            started: vec![0; layers.outer.len() + 1],
        })
    }

    /// Each layer's attempts and the calls made of it, outermost first: an outer layer's
    /// attempts are the calls started of the layer below, the innermost's `sent`.
    pub(super) fn counts(&self, sent: u64) -> Vec<LayerCount> {
        (0..self.started.len())
            .map(|i| LayerCount {
                calls: self.started[i],
                attempts: self.started.get(i + 1).copied().unwrap_or(sent),
            })
            .collect()
    }

    /// Room for `slot`'s states.
    fn hold(&mut self, slot: u32, now: SimTime) {
        let n = self.layers.len();
        let need = (slot as usize + 1) * n;
        if self.states.len() < need {
            self.states.resize(
                need,
                LayerState {
                    retries_made: 0,
                    previous: SimDuration::ZERO,
                    held: 0,
                    trial: false,
                    sent: now,
                    seq: 0,
                    deadline: SimTime(u64::MAX),
                },
            );
            self.deepest.resize(slot as usize + 1, 0);
        }
    }

    /// The earliest outer deadline of the attempt at the server in `slot`.
    pub(super) fn deadline(&self, slot: u32) -> SimTime {
        let n = self.layers.len();
        self.states[slot as usize * n + n - 1].deadline
    }
}

/// One layer's totals: the calls made of it and the attempts it made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerCount {
    /// Calls made of this layer (the outermost's: the run's calls).
    pub calls: u64,
    /// Attempts it made: calls of the layer below, or the requests the innermost sent.
    pub attempts: u64,
}

impl<O: Observer, W: Windows> Loop<'_, O, W> {
    /// A whole call starts in `slot`: every outer layer's call starts, outermost first.
    /// False when one of their controls rejects it (the call then goes on as that layer's
    /// failed call: [`Self::outer_retry`] has been asked) or its throttle delays it.
    #[inline(never)]
    pub(super) fn layers_start(&mut self, now: SimTime, slot: u32) -> bool {
        self.start_layers_from(now, slot, 0)
    }

    /// Starts the calls of outer layers `from..` in `slot`, each with its first attempt;
    /// true when all started (the innermost's call is then to start), false when one was
    /// rejected and its failure handled, or its throttle delayed its attempt.
    fn start_layers_from(&mut self, now: SimTime, slot: u32, from: usize) -> bool {
        let process = self.calls[slot as usize].process;
        let Some(run) = &mut self.layered else {
            return true;
        };
        run.hold(slot, now);
        let n = run.layers.len();
        for i in from..n {
            let Some(run) = &mut self.layered else {
                return true;
            };
            run.started[i] += 1;
            let state = &mut run.states[slot as usize * n + i];
            *state = LayerState {
                retries_made: 0,
                previous: run.layers[i].policy.backoff.base,
                held: 0,
                trial: false,
                ..*state
            };
            let controls = &mut run.controls[i];
            if controls.is_active() && !controls.call_started(process, now, &mut state.trial) {
                self.reject_layer(now, slot, i);
                return false;
            }
            if !self.layer_attempt(now, slot, i) {
                return false;
            }
        }
        if let Some(run) = &mut self.layered {
            *run.started.last_mut().expect("the innermost layer") += 1;
            run.deepest[slot as usize] = n as u32;
        }
        true
    }

    /// Layer `i`'s attempt in `slot` is due: its throttle, if any, lets it go (it starts:
    /// true), rejects it (its call fails) or delays it (an [`Ev::Restart`] when its token
    /// comes).
    fn layer_attempt(&mut self, now: SimTime, slot: u32, i: usize) -> bool {
        let process = self.calls[slot as usize].process;
        let Some(run) = &mut self.layered else {
            return true;
        };
        let n = run.layers.len();
        let k = slot as usize * n + i;
        let controls = &mut run.controls[i];
        let gate = if controls.is_active() {
            let rng = &mut self.rngs[process as usize];
            // The throttle's draw, when it may reject: 53 bits, uniform in [0, 1).
            controls.send(process, now, || crate::rng::unit_interval(rng.next_u64()))
        } else {
            Gate::Go
        };
        match gate {
            Gate::Go => {}
            Gate::Wait(wait) => {
                let seq = run.states[k].seq;
                run.deepest[slot as usize] = i as u32;
                self.push(
                    now + wait,
                    Ev::Restart {
                        call: slot,
                        layer: i as u32,
                        seq,
                    },
                );
                return false;
            }
            Gate::Reject => {
                self.reject_layer(now, slot, i);
                return false;
            }
        }
        let outer = if i == 0 {
            SimTime(u64::MAX)
        } else {
            run.states[k - 1].deadline
        };
        let timeout = run.layers[i].timeout;
        let state = &mut run.states[k];
        state.seq = state.seq.wrapping_add(1);
        state.sent = now;
        state.deadline = timeout.map_or(outer, |t| outer.min(now + t));
        if let Some(t) = timeout {
            let seq = state.seq;
            self.push(
                now + t,
                Ev::LayerTimeout {
                    call: slot,
                    layer: i as u32,
                    seq,
                },
            );
        }
        true
    }

    /// Layer `i`'s call in `slot` is rejected locally (its breaker when it starts, its
    /// throttle at an attempt): it fails without that attempt, and the layers above decide.
    fn reject_layer(&mut self, now: SimTime, slot: u32, i: usize) {
        self.totals.calls_rejected_locally += 1;
        self.series.counts().rejected_locally += 1;
        self.end_layer(now, slot, i, CallEnd::Rejected);
        if !self.retry_above(now, slot, i, Outcome::Error, Ended::Failed) {
            self.end_whole_failed(now, slot);
        }
    }

    /// The innermost layer's call in `slot` failed on `outcome`: true when an outer layer
    /// retries (the slot then waits for its [`Ev::Restart`]), false when every layer gave up
    /// (the whole call fails).
    #[inline(never)]
    pub(super) fn outer_retry(&mut self, now: SimTime, slot: u32, outcome: Outcome) -> bool {
        let n = self.layered.as_ref().map_or(0, |r| r.layers.len());
        self.retry_above(now, slot, n, outcome, Ended::Failed)
    }

    /// Layer `failed`'s call in `slot` ended failed on `outcome`: the layers above it decide,
    /// innermost first, the first's attempt ending as `first` says (`failed`, or `timed_out`
    /// by its own timeout), the others' `failed`. True when one retries.
    fn retry_above(
        &mut self,
        now: SimTime,
        slot: u32,
        failed: usize,
        outcome: Outcome,
        first: Ended,
    ) -> bool {
        let process = self.calls[slot as usize].process;
        for j in (0..failed).rev() {
            let Some(run) = &mut self.layered else {
                return false;
            };
            let n = run.layers.len();
            let policy = run.layers[j].policy;
            let state = &mut run.states[slot as usize * n + j];
            // Its attempt ended: its timeout is stale.
            state.seq = state.seq.wrapping_add(1);
            let controls = &mut run.controls[j];
            if controls.is_active() {
                controls.attempt_ended(process, now, outcome, &mut state.held);
            }
            let rng = &mut self.rngs[process as usize];
            let seen = (state.retries_made, state.sent);
            let ended = if j + 1 == failed {
                first
            } else {
                Ended::Failed
            };
            let mut next = Next::GaveUp;
            if let Decision::Retry { retry, delay } =
                policy.decide(state.retries_made, state.previous, &Hints::default(), rng)
            {
                if !controls.is_active()
                    || controls.allow_retry(process, now, outcome, &mut state.held)
                {
                    state.retries_made = retry;
                    state.previous = delay;
                    let seq = state.seq;
                    run.deepest[slot as usize] = j as u32;
                    self.push(
                        now + delay,
                        Ev::Restart {
                            call: slot,
                            layer: j as u32,
                            seq,
                        },
                    );
                    self.observe_layer(now, slot, j, seen, ended, Next::Retry(delay));
                    return true;
                }
                self.totals.retries_denied += 1;
                self.series.counts().retries_denied += 1;
                next = Next::Denied;
            }
            self.observe_layer(now, slot, j, seen, ended, next);
            self.end_layer(now, slot, j, CallEnd::Failed);
        }
        false
    }

    /// Outer layer `layer`'s timeout in `slot`, set when its attempt numbered `seq` started,
    /// is due: unless that attempt has ended, the call below it is abandoned whole (every
    /// layer below stops where it is, innermost first: the attempt at the server, if one is
    /// outstanding, timed out; every pending retry or token wait stale; their controls told
    /// their calls failed), and the layer decides as when that call fails.
    #[inline(never)]
    pub(super) fn layer_timeout(&mut self, now: SimTime, slot: u32, layer: u32, seq: u32) {
        let Some(run) = &self.layered else {
            return;
        };
        let n = run.layers.len();
        let k = layer as usize;
        if run.states[slot as usize * n + k].seq != seq {
            return;
        }
        let deepest = run.deepest[slot as usize] as usize;
        if deepest == n {
            if self.calls[slot as usize].outstanding {
                let seen = self.abandon_attempt(now, slot);
                self.observe(now, seen, Ended::TimedOut, Next::Abandoned);
            }
            self.control_call_end(now, slot, CallEnd::Failed);
            // Its retry's wait, its token's, its answer and its timeout are stale.
            let call = &mut self.calls[slot as usize];
            call.attempt = call.attempt.wrapping_add(1);
        }
        for m in (k + 1..=deepest.min(n - 1)).rev() {
            let process = self.calls[slot as usize].process;
            let Some(run) = &mut self.layered else {
                return;
            };
            let state = &mut run.states[slot as usize * n + m];
            // Its timeout or its restart is stale.
            state.seq = state.seq.wrapping_add(1);
            let seen = (state.retries_made, state.sent);
            if m < deepest {
                // In an attempt, not waiting for one.
                let controls = &mut run.controls[m];
                if controls.is_active() {
                    controls.attempt_ended(process, now, Outcome::Timeout, &mut state.held);
                }
                self.observe_layer(now, slot, m, seen, Ended::TimedOut, Next::Abandoned);
            }
            self.end_layer(now, slot, m, CallEnd::Failed);
        }
        if !self.retry_above(now, slot, k + 1, Outcome::Timeout, Ended::TimedOut) {
            self.end_whole_failed(now, slot);
        }
    }

    /// The innermost layer's place in a trace's `layer` (the outermost is 0), when layered.
    #[inline]
    pub(super) fn innermost_layer(&self) -> Option<u16> {
        self.layered.as_ref().map(|r| r.layers.len() as u16)
    }

    /// Tells the observer that outer layer `layer`'s attempt `seen` (its number and when it
    /// started) in `slot` ended at `now` with `outcome`, followed by `next`.
    #[inline]
    fn observe_layer(
        &mut self,
        now: SimTime,
        slot: u32,
        layer: usize,
        seen: (u32, SimTime),
        outcome: Ended,
        next: Next,
    ) {
        if !O::ON {
            return;
        }
        let line = Attempt {
            client: self.calls[slot as usize].process,
            call: Some(self.traced.slots[slot as usize].number),
            layer: Some(layer as u16),
            attempt: seen.0,
            sent: Some(seen.1),
            arrived: None,
            ended: now,
            outcome,
            next,
            hidden: None,
        };
        if self.traced.deferring {
            self.traced.deferred.push(line);
        } else {
            self.trace.attempt(&line);
        }
    }

    /// Tells the outer layers' lines deferred behind an innermost attempt's, now told.
    pub(super) fn tell_deferred(&mut self) {
        self.traced.deferring = false;
        for line in self.traced.deferred.drain(..) {
            self.trace.attempt(&line);
        }
    }

    /// Layer `layer`'s call in `slot` ended: its controls are told.
    fn end_layer(&mut self, now: SimTime, slot: u32, layer: usize, end: CallEnd) {
        let process = self.calls[slot as usize].process;
        let Some(run) = &mut self.layered else {
            return;
        };
        let n = run.layers.len();
        let state = &mut run.states[slot as usize * n + layer];
        let controls = &mut run.controls[layer];
        if controls.is_active() {
            controls.call_ended(process, now, end, &mut state.held, state.trial);
        }
    }

    /// The whole call in `slot` succeeded: every outer layer's attempt and call succeeded,
    /// innermost first.
    #[inline(never)]
    pub(super) fn layers_succeeded(&mut self, now: SimTime, slot: u32) {
        let process = self.calls[slot as usize].process;
        let Some(run) = &mut self.layered else {
            return;
        };
        let n = run.layers.len();
        for j in (0..n).rev() {
            let state = &mut run.states[slot as usize * n + j];
            // Its attempt ended: its timeout is stale.
            state.seq = state.seq.wrapping_add(1);
            let seen = (state.retries_made, state.sent);
            let controls = &mut run.controls[j];
            if O::ON {
                self.trace.attempt(&Attempt {
                    client: process,
                    call: Some(self.traced.slots[slot as usize].number),
                    layer: Some(j as u16),
                    attempt: seen.0,
                    sent: Some(seen.1),
                    arrived: None,
                    ended: now,
                    outcome: Ended::Served,
                    next: Next::Done,
                    hidden: None,
                });
            }
            if controls.is_active() {
                controls.attempt_ended(process, now, Outcome::Success, &mut state.held);
                controls.call_ended(
                    process,
                    now,
                    CallEnd::Succeeded,
                    &mut state.held,
                    state.trial,
                );
            }
        }
    }

    /// Outer layer `layer`'s attempt in `slot` is due (its retry, or one its throttle
    /// delayed), unless its call was abandoned since (`seq` no longer its state's): it starts,
    /// then the calls of every layer below afresh, the innermost's last (its first attempt
    /// sent, or rejected locally).
    #[inline(never)]
    pub(super) fn restart(&mut self, now: SimTime, slot: u32, layer: u32, seq: u32) {
        let Some(run) = &self.layered else {
            return;
        };
        let n = run.layers.len();
        if run.states[slot as usize * n + layer as usize].seq != seq {
            return;
        }
        if !self.layer_attempt(now, slot, layer as usize)
            || !self.start_layers_from(now, slot, layer as usize + 1)
        {
            return;
        }
        let base = self.spec.policy.backoff.base;
        let call = &mut self.calls[slot as usize];
        call.retries_made = 0;
        call.previous = base;
        call.held = 0;
        call.trial = false;
        call.charged = false;
        let process = call.process;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Strategy;

    #[test]
    fn the_tries_per_call_are_the_product_of_every_layers() {
        let layer = |retries| Layer {
            policy: Policy {
                max_retries: retries,
                ..Policy::experiment1(Strategy::Naive)
            },
            controls: Controls::default(),
            timeout: None,
        };
        let layers = Layers {
            outer: vec![layer(3), layer(2)],
        };
        assert_eq!(layers.tries_per_call(1), 4 * 3 * 2);
        // A trace's lines: 4 of the outermost, 4 x 3 of the next, 4 x 3 x 2 at the server.
        assert_eq!(layers.attempts_of_every_layer_per_call(1), 4 + 12 + 24);
        assert_eq!(Layers::default().attempts_of_every_layer_per_call(4), 5);
        assert_eq!(Layers::default().tries_per_call(4), 5);
        let huge = Layers {
            outer: vec![layer(u32::MAX); 5],
        };
        assert_eq!(huge.tries_per_call(u32::MAX), u128::MAX);
        assert_eq!(huge.attempts_of_every_layer_per_call(u32::MAX), u128::MAX);
    }
}
