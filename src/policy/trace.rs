//! Golden traces of a retry policy: one client process plays a scripted sequence of attempt
//! outcomes through the simulator's own policy and control code, and every attempt becomes one
//! line — when it went, how it ended, the budget before and after, what was decided and the
//! delay drawn. SDK and crate authors diff their implementation against it
//! (`herd-sim trace-policy`); `docs/traces/` holds the trace of every preset.
//!
//! The order of the calls into [`Policy`] and [`ProcessControl`] is the call loop's
//! (`engine::calls::handlers`): a call starts (`call_started`: the breaker admits it, the
//! budget may deposit), each attempt passes the throttle (`send`), its answer reaches the
//! controls (`attempt_ended`), then the strategy draws its delay (`Policy::decide`) and only
//! then the breaker and the budget judge the retry (`allow_retry`), and a call's end reaches
//! them last (`call_ended`). The draws are the simulator's client 0 of a run seeded `seed`
//! ([`ClientSeeds`]), so a trace's delays are the ones that client would wait.
//!
//! Time: the first call starts at 0; an attempt is answered `latency` after it is sent; a
//! retry is sent its delay after the answer; a call ending (success, given up, denied or
//! rejected locally) starts the next `gap` later. A throttle that asks to wait delays the
//! attempt; one that rejects fails the call without an attempt, as does an open breaker; no
//! outcome of the script is used for either. The trace ends when the script is spent.
//! Pure: no clock, no I/O.

use std::fmt::Write as _;

use super::control::{BudgetState, CallEnd, Controls, Gate, Outcome, ProcessControl};
use super::{Decision, Hints, Policy};
use crate::rng::ClientSeeds;
use crate::time::{SimDuration, SimTime};

/// Most attempts a script may hold (a golden trace is read by people).
pub const MAX_SCRIPT: usize = 100_000;

/// What a trace plays: the policy, its controls, the script and the clock's steps.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// Strategy, curve and retries.
    pub policy: Policy,
    /// Budget, breaker and throttle.
    pub controls: Controls,
    /// Each attempt's outcome, in order.
    pub script: Vec<Outcome>,
    /// Seed of the run whose client 0 draws.
    pub seed: u64,
    /// From an attempt's sending to its answer.
    pub latency: SimDuration,
    /// From a call's end to the next call's start.
    pub gap: SimDuration,
}

/// A script that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScriptError(pub String);

/// The outcome words a script takes.
pub const OUTCOME_WORDS: &str = "success, error, throttled, timeout (each optionally *COUNT)";

fn word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Error => "error",
        Outcome::Throttled => "throttled",
        Outcome::Timeout => "timeout",
    }
}

/// Reads `error*3,success,timeout*2`: outcomes in order, `*COUNT` repeating one.
pub fn parse_script(text: &str) -> Result<Vec<Outcome>, ScriptError> {
    let mut script = Vec::new();
    for item in text.split(',').map(str::trim) {
        let (name, count) = match item.split_once('*') {
            Some((name, count)) => (name.trim(), count.trim()),
            None => (item, "1"),
        };
        let outcome = match name {
            "success" => Outcome::Success,
            "error" => Outcome::Error,
            "throttled" => Outcome::Throttled,
            "timeout" => Outcome::Timeout,
            _ => {
                return Err(ScriptError(format!(
                    "`{item}` is not an outcome; accepted: {OUTCOME_WORDS}"
                )))
            }
        };
        let count: usize = count.parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
            ScriptError(format!(
                "`{item}`: the count must be a whole number of at least 1"
            ))
        })?;
        if script.len().saturating_add(count) > MAX_SCRIPT {
            return Err(ScriptError(format!(
                "the script holds more than {MAX_SCRIPT} outcomes; accepted: at most {MAX_SCRIPT}"
            )));
        }
        script.extend(std::iter::repeat_n(outcome, count));
    }
    Ok(script)
}

/// The script of the shipped traces: a call that succeeds at once, one that succeeds on its
/// third attempt, a run of errors long enough to spend every preset's retries and drain the
/// budgets, a timeout, throttling, and recovery.
pub const DEFAULT_SCRIPT: &str =
    "success,error*2,success,error*30,timeout*2,throttled*3,success*5,error,success";

/// What happened to one attempt (or to a call rejected before any).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceLine {
    /// 1-based call number.
    pub call: u32,
    /// 1-based attempt of the call; 0 for a call rejected locally before its first attempt.
    pub attempt: u32,
    /// When the attempt went (or the rejection happened).
    pub sent: SimTime,
    /// The scripted outcome, or `None` when no attempt went.
    pub outcome: Option<Outcome>,
    /// The budget before the attempt's answer reached it, and after the decision.
    pub budget_before: String,
    /// See `budget_before`.
    pub budget_after: String,
    /// What followed.
    pub decision: String,
    /// The delay the strategy drew, when it drew one.
    pub delay: Option<SimDuration>,
}

/// The budget's state as a reader checks it by hand.
fn budget_text(state: &ProcessControl, controls: &Controls, now: SimTime) -> String {
    use super::control::Budget;
    match (&state.budget, controls.budget) {
        (BudgetState::None, _) => "-".to_string(),
        (BudgetState::Tokens(t), Budget::AwsStandard { .. }) => format!("{t}"),
        (BudgetState::Tokens(t), _) => format!("{}.{:03}", *t / 1000, *t % 1000),
        (
            BudgetState::Envoy {
                active_requests,
                active_retries,
            },
            _,
        ) => format!("requests {active_requests}, retries {active_retries}"),
        // A copy, so that reading the balance expires nothing of the state itself.
        (BudgetState::Finagle(window), budget) => {
            format!(
                "{}",
                BudgetState::Finagle(*window)
                    .finagle_balance(&budget, now)
                    .unwrap_or_default()
            )
        }
        #[cfg(feature = "tower")]
        (BudgetState::Tower(tps), _) => format!("{}", tps.balance()),
    }
}

/// Plays `spec`: one line per attempt and per call rejected locally.
pub fn trace(spec: &TraceSpec) -> Vec<TraceLine> {
    let c = &spec.controls;
    let mut state = c.start();
    let mut rng = ClientSeeds::starting_at(spec.seed, 0).next_rng();
    let mut script = spec.script.iter().copied();
    let mut lines = Vec::new();
    let mut now = SimTime(0);
    let mut call = 0u32;
    'calls: loop {
        call += 1;
        let mut trial = false;
        let mut held = 0u64;
        let before = budget_text(&state, c, now);
        if !state.call_started(c, now, &mut trial) {
            let after = budget_text(&state, c, now);
            state.call_ended(c, now, CallEnd::Rejected, &mut held, trial);
            lines.push(TraceLine {
                call,
                attempt: 0,
                sent: now,
                outcome: None,
                budget_before: before,
                budget_after: after,
                decision: "rejected locally: breaker open".to_string(),
                delay: None,
            });
            now = now + spec.gap;
            continue;
        }
        let mut attempt = 0u32;
        let mut retries_made = 0u32;
        let mut previous = spec.policy.backoff.base;
        loop {
            // The throttle's draw, as the call loop makes it: 53 bits, uniform in [0, 1).
            let draw = || crate::rng::unit_interval(rand::RngCore::next_u64(&mut rng));
            match state.send(c, now, draw) {
                Gate::Go => {}
                Gate::Wait(wait) => {
                    now = now + wait;
                    continue;
                }
                Gate::Reject => {
                    let text = budget_text(&state, c, now);
                    state.call_ended(c, now, CallEnd::Rejected, &mut held, trial);
                    lines.push(TraceLine {
                        call,
                        attempt,
                        sent: now,
                        outcome: None,
                        budget_before: text.clone(),
                        budget_after: budget_text(&state, c, now),
                        decision: "rejected locally: throttle".to_string(),
                        delay: None,
                    });
                    now = now + spec.gap;
                    continue 'calls;
                }
            }
            let Some(outcome) = script.next() else {
                break 'calls;
            };
            attempt += 1;
            let sent = now;
            now = now + spec.latency;
            let before = budget_text(&state, c, now);
            state.attempt_ended(c, now, outcome, &mut held);
            let mut line = TraceLine {
                call,
                attempt,
                sent,
                outcome: Some(outcome),
                budget_before: before,
                budget_after: String::new(),
                decision: String::new(),
                delay: None,
            };
            if outcome == Outcome::Success {
                state.call_ended(c, now, CallEnd::Succeeded, &mut held, trial);
                line.decision = "call succeeded".to_string();
                line.budget_after = budget_text(&state, c, now);
                lines.push(line);
                now = now + spec.gap;
                continue 'calls;
            }
            let decision = spec
                .policy
                .decide(retries_made, previous, &Hints::default(), &mut rng);
            let Decision::Retry { retry, delay } = decision else {
                state.call_ended(c, now, CallEnd::Failed, &mut held, trial);
                line.decision = "gave up: retries spent".to_string();
                line.budget_after = budget_text(&state, c, now);
                lines.push(line);
                now = now + spec.gap;
                continue 'calls;
            };
            line.delay = Some(delay);
            // The breaker first, then the budget, charged only when both allow it: the
            // order of `ProcessControl::allow_retry`, split to say which refused.
            let denied = if !state.breaker.allow_retry(&c.breaker, now) {
                Some("breaker")
            } else if !state.budget.allow_retry(&c.budget, now, outcome, &mut held) {
                Some("budget")
            } else {
                None
            };
            if let Some(by) = denied {
                state.call_ended(c, now, CallEnd::Failed, &mut held, trial);
                line.decision = format!("retry {retry} denied by the {by}");
                line.budget_after = budget_text(&state, c, now);
                lines.push(line);
                now = now + spec.gap;
                continue 'calls;
            }
            line.decision = format!("retry {retry}");
            line.budget_after = budget_text(&state, c, now);
            lines.push(line);
            retries_made = retry;
            previous = delay;
            now = now + delay;
        }
    }
    lines
}

/// Seconds with nine decimals: exact for integer nanoseconds.
fn seconds(t: u64) -> String {
    format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000)
}

/// The trace as an aligned table, one line per attempt, under a header of `preamble` lines
/// (each written as `# LINE`).
pub fn render(lines: &[TraceLine], preamble: &[String]) -> String {
    let mut out = String::new();
    for p in preamble {
        let _ = writeln!(out, "# {p}");
    }
    let rows: Vec<[String; 7]> = lines
        .iter()
        .map(|l| {
            [
                l.call.to_string(),
                l.attempt.to_string(),
                seconds(l.sent.as_nanos()),
                l.outcome.map_or("-", word).to_string(),
                format!("{} -> {}", l.budget_before, l.budget_after),
                l.delay.map_or("-".to_string(), |d| seconds(d.as_nanos())),
                l.decision.clone(),
            ]
        })
        .collect();
    let header = [
        "call", "attempt", "sent_s", "outcome", "budget", "delay_s", "decision",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:<w$}  ");
            }
        }
        text
    };
    let _ = writeln!(out, "{}", line(header.to_vec()));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::control::Budget;
    use crate::policy::Strategy;

    const S: u64 = 1_000_000_000;

    fn spec(budget: &str, script: &str, retries: u32) -> TraceSpec {
        TraceSpec {
            policy: Policy {
                max_retries: retries,
                ..Policy::experiment1(Strategy::Exponential)
            },
            controls: Controls {
                budget: Budget::parse(budget).unwrap(),
                ..Controls::default()
            },
            script: parse_script(script).unwrap(),
            seed: 1,
            latency: SimDuration(100_000_000),
            gap: SimDuration::from_secs(1),
        }
    }

    #[test]
    fn a_trace_follows_the_clock_the_curve_and_the_budget_by_hand() {
        // Exponential 1 s, 2 s, 4 s; 2 retries; token bucket of 5 (1 a retry, 0.1 a success).
        // Call 1: sent 0, error at 0.1 → retry 1 after 1 s (4 left); sent 1.1, error at 1.2 →
        // retry 2 after 2 s (3 left); sent 3.2, error at 3.3 → retries spent. Call 2 at 4.3:
        // success at 4.4 (3.1 left). Script spent: the third call's attempt has no outcome.
        let lines = trace(&spec("token-bucket", "error*3,success", 2));
        let got: Vec<_> = lines
            .iter()
            .map(|l| {
                (
                    l.call,
                    l.attempt,
                    l.sent.as_nanos(),
                    l.budget_before.as_str(),
                    l.budget_after.as_str(),
                    l.decision.as_str(),
                    l.delay.map(SimDuration::as_nanos),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, 1, 0, "5.000", "4.000", "retry 1", Some(S)),
                (1, 2, 11 * S / 10, "4.000", "3.000", "retry 2", Some(2 * S)),
                (
                    1,
                    3,
                    32 * S / 10,
                    "3.000",
                    "3.000",
                    "gave up: retries spent",
                    None,
                ),
                (2, 1, 43 * S / 10, "3.000", "3.100", "call succeeded", None),
            ]
        );
    }

    #[test]
    fn a_denied_retry_names_the_budget_and_still_shows_the_drawn_delay() {
        // gRPC max 2 (retries while tokens > 1 after the decrement): the first failure leaves
        // 1.0, not above 1: denied, though the strategy drew its 1 s.
        let lines = trace(&spec("grpc:max_tokens=2", "error", 3));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].decision, "retry 1 denied by the budget");
        assert_eq!(lines[0].delay, Some(SimDuration::from_secs(1)));
        assert_eq!(
            (
                lines[0].budget_before.as_str(),
                lines[0].budget_after.as_str()
            ),
            ("2.000", "1.000")
        );
    }

    #[test]
    fn the_delays_are_the_simulators_client_zero_draws() {
        // Full jitter, 4 retries, all errors: the delays are Policy::decide's with client 0's
        // generator of the run seed, drawn in order.
        let mut s = spec("none", "error*5", 4);
        s.policy.strategy = Strategy::FullJitter;
        let lines = trace(&s);
        let mut rng = ClientSeeds::starting_at(1, 0).next_rng();
        let mut previous = s.policy.backoff.base;
        for (k, line) in lines.iter().take(4).enumerate() {
            let Decision::Retry { delay, .. } =
                s.policy
                    .decide(k as u32, previous, &Hints::default(), &mut rng)
            else {
                panic!("retry {k}");
            };
            assert_eq!(line.delay, Some(delay));
            previous = delay;
        }
        assert_eq!(lines[4].decision, "gave up: retries spent");
    }

    #[test]
    fn scripts_parse_with_counts_and_refuse_what_they_cannot_read() {
        assert_eq!(
            parse_script("error*2, success").unwrap(),
            [Outcome::Error, Outcome::Error, Outcome::Success]
        );
        assert!(parse_script("eror")
            .unwrap_err()
            .0
            .contains("accepted: success, error"));
        assert!(parse_script("error*0")
            .unwrap_err()
            .0
            .contains("at least 1"));
        assert!(parse_script("error*1000000")
            .unwrap_err()
            .0
            .contains("at most 100000"));
        assert_eq!(parse_script(DEFAULT_SCRIPT).unwrap().len(), 46);
    }
}
