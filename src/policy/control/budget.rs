//! Retry budgets: how many retries a client process may make, whatever each call's own
//! `--retries` allows. One enum arm per production budget, each with its source's arithmetic
//! in integers (tokens in thousandths where the source has fractions), so hand-worked token
//! sequences hold exactly:
//!
//! - **token-bucket** (Brooker 2022, "Fixing retries with token buckets and circuit
//!   breakers"): by the post's rule (`on=success`) a call that succeeds deposits `deposit`
//!   tokens, up to `capacity`, and a retry needs `cost` whole tokens and spends them; by the
//!   rule of the post's simulator (`on=call`, `AdaptiveRetryStrategy` in
//!   mbrooker/simulator_example `retry_sim/retry_strategy.py`) every call deposits at its start
//!   and a retry goes while more than `cost` is left. The bucket starts full.
//! - **grpc** (gRPC proposal A6, "Client Retries", retry throttling): tokens start at
//!   `max_tokens`; every failed attempt takes 1 (never below 0), every successful call gives
//!   `token_ratio` back (never above the maximum); a retry is allowed only while tokens exceed
//!   `max_tokens / 2`, judged after the failure's decrement. Thousandths, as A6's 3 decimals.
//! - **aws-standard** (botocore `retries/quota.py` and `retries/standard.py`): a quota of
//!   `capacity`; a retry acquires `cost`, or `timeout_cost` after a timeout, and is refused
//!   when that is more than what is left; a call that succeeds gives back what its last retry
//!   acquired, or `success_increment` when it never retried; never above `capacity`.
//! - **envoy** (Envoy `RetryBudget`, `resource_manager_impl.h`): a retry is allowed while the
//!   active retries are fewer than max(⌊percent/100 × active requests⌋, `min_concurrency`);
//!   a retry is active from its scheduling to its answer (Envoy's `retries().inc()` in
//!   `shouldRetry`, `dec()` at the next decision or the end), a request while its attempt is
//!   on the wire.
//! - **finagle** (`RetryBudget.scala`): every call deposits 1000; a retry withdraws
//!   ⌊1000 / (percent/100)⌋ when the balance, the deposits of the last `ttl` (a
//!   [`Windowed`] sum) plus a reserve of `min_per_s × ttl × withdrawal`, covers it.
//! - **tower-tps** (cargo feature `tower`): not a model but tower's own `TpsBudget`, run on
//!   simulated time by `adapters::tower` (feature `tower`); every call deposits, a retry withdraws.

use crate::time::{SimDuration, SimTime};

use super::window::Windowed;

/// A retry budget and its parameters (validated: see [`super::spec`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// No budget: only `--retries` bounds retries.
    None,
    /// Brooker's retry token bucket, in thousandths of a token.
    TokenBucket {
        /// Deposited by each successful call (or each call, by [`DepositOn::Call`]).
        deposit: u64,
        /// When a deposit is made, and so which retry rule holds.
        on: DepositOn,
        /// Needed and spent by a retry.
        cost: u64,
        /// Most the bucket holds (and its start).
        capacity: u64,
    },
    /// gRPC A6 retry throttling, in thousandths of a token.
    Grpc {
        /// Start and most.
        max_tokens: u64,
        /// Given back by each successful call.
        token_ratio: u64,
    },
    /// The AWS SDKs' retry quota (standard mode).
    AwsStandard {
        /// Start and most.
        capacity: u64,
        /// Acquired by a retry after an error.
        cost: u64,
        /// Acquired by a retry after a timeout.
        timeout_cost: u64,
        /// Given back by a call that succeeds without retrying.
        success_increment: u64,
    },
    /// Envoy's retry budget.
    Envoy {
        /// Active retries allowed, in percent of active requests.
        percent: f64,
        /// Active retries always allowed.
        min_concurrency: u64,
    },
    /// Finagle's `RetryBudget`.
    Finagle {
        /// How long a deposit counts (whole seconds, 1 to 60).
        ttl: SimDuration,
        /// Retries a second always allowed (the reserve).
        min_per_s: u64,
        /// Retries allowed in percent of calls.
        percent: f64,
    },
    /// tower's own `TpsBudget` (tower's parameters: `percent` is its `retry_percent`, a
    /// fraction).
    #[cfg(feature = "tower")]
    TowerTps(crate::adapters::tower::TpsParams),
}

/// The two published rules of Brooker's token bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepositOn {
    /// The post's: a successful call deposits at its end; a retry needs `cost` tokens.
    Success,
    /// The post's simulator's: every call deposits at its start; a retry needs more than
    /// `cost` tokens.
    Call,
}

impl DepositOn {
    /// The word `on=` takes.
    pub fn name(self) -> &'static str {
        match self {
            DepositOn::Success => "success",
            DepositOn::Call => "call",
        }
    }
}

/// The accepted budget names, for messages and help.
pub const BUDGETS: [&str; 6] = [
    "none",
    "token-bucket",
    "grpc",
    "aws-standard",
    "envoy",
    "finagle",
];

/// Finagle's fixed-point scale (`TokenRetryBudget.ScaleFactor`).
const FINAGLE_SCALE: i64 = 1000;

impl Budget {
    /// The name `--budget` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Budget::None => "none",
            Budget::TokenBucket { .. } => "token-bucket",
            Budget::Grpc { .. } => "grpc",
            Budget::AwsStandard { .. } => "aws-standard",
            Budget::Envoy { .. } => "envoy",
            Budget::Finagle { .. } => "finagle",
            #[cfg(feature = "tower")]
            Budget::TowerTps(_) => "tower-tps",
        }
    }

    /// Finagle's deposit and withdrawal amounts (`RetryBudget.apply`).
    fn finagle_amounts(percent: f64) -> (i64, i64) {
        if percent == 0.0 {
            (0, 1)
        } else {
            (
                FINAGLE_SCALE,
                (FINAGLE_SCALE as f64 / (percent / 100.0)) as i64,
            )
        }
    }

    /// Finagle's reserve: `min_per_s × ttl` withdrawals always covered.
    fn finagle_reserve(ttl: SimDuration, min_per_s: u64, percent: f64) -> i64 {
        let (_, withdrawal) = Budget::finagle_amounts(percent);
        min_per_s as i64 * (ttl.as_nanos() / 1_000_000_000) as i64 * withdrawal
    }

    /// A process's budget in its initial state.
    pub fn start(&self) -> BudgetState {
        match *self {
            Budget::None => BudgetState::None,
            Budget::TokenBucket { capacity, .. } => BudgetState::Tokens(capacity),
            Budget::Grpc { max_tokens, .. } => BudgetState::Tokens(max_tokens),
            Budget::AwsStandard { capacity, .. } => BudgetState::Tokens(capacity),
            Budget::Envoy { .. } => BudgetState::Envoy {
                active_requests: 0,
                active_retries: 0,
            },
            Budget::Finagle { ttl, .. } => BudgetState::Finagle(Windowed::new(ttl.as_nanos())),
            #[cfg(feature = "tower")]
            Budget::TowerTps(params) => {
                BudgetState::Tower(Box::new(crate::adapters::tower::TpsState::new(
                    params,
                    crate::adapters::tower::PausedClock::new(),
                )))
            }
        }
    }

    /// `n` processes' budgets in their initial state. tower's budgets share one paused tokio
    /// clock, the run's (one runtime a run, not one a process).
    pub fn start_many(&self, n: usize) -> Vec<BudgetState> {
        match *self {
            #[cfg(feature = "tower")]
            Budget::TowerTps(params) => {
                let clock = crate::adapters::tower::PausedClock::new();
                (0..n)
                    .map(|_| {
                        BudgetState::Tower(Box::new(crate::adapters::tower::TpsState::new(
                            params,
                            clock.clone(),
                        )))
                    })
                    .collect()
            }
            _ => (0..n).map(|_| self.start()).collect(),
        }
    }

    /// Heap a process's budget state holds beyond its size (tower's budget is boxed), for
    /// the up-front memory estimates.
    pub fn heap_bytes_per_state(&self) -> u128 {
        match self {
            #[cfg(feature = "tower")]
            Budget::TowerTps(_) => crate::adapters::tower::TpsState::HEAP_BYTES,
            _ => 0,
        }
    }
}

/// What a process's budget holds. Not `Copy` with the feature `tower`: tower's budget is an
/// object of its own (a process's state is moved, never copied, in the call loop).
#[derive(Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "tower"), derive(Clone, Copy))]
pub enum BudgetState {
    /// No budget.
    None,
    /// Tokens left (thousandths for the token bucket and gRPC, whole for AWS).
    Tokens(u64),
    /// Envoy's two gauges.
    Envoy {
        /// Attempts on the wire.
        active_requests: u64,
        /// Retries scheduled and not yet answered.
        active_retries: u64,
    },
    /// Finagle's deposits and withdrawals of the last `ttl`.
    Finagle(Windowed),
    /// tower's own budget on the run's paused tokio clock.
    #[cfg(feature = "tower")]
    Tower(Box<crate::adapters::tower::TpsState>),
}

impl BudgetState {
    /// Finagle's balance as a retry is weighed against it: the deposits and withdrawals of the
    /// last `ttl` plus the reserve, in its fixed point (1000 a deposit); `None` for the others.
    pub fn finagle_balance(&mut self, budget: &Budget, now: SimTime) -> Option<i64> {
        match (self, budget) {
            (
                BudgetState::Finagle(w),
                Budget::Finagle {
                    ttl,
                    min_per_s,
                    percent,
                },
            ) => Some(w.sum(now) + Budget::finagle_reserve(*ttl, *min_per_s, *percent)),
            _ => None,
        }
    }
}

/// How an attempt ended, as a budget sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with success.
    Success,
    /// Answered with an error that is not throttling (a 503, an outage, the down server).
    Error,
    /// Answered with a throttling error (a capacity server's shed, a rate limiter's 429);
    /// budgets and breakers count it as [`Outcome::Error`], the adaptive throttle apart.
    Throttled,
    /// Abandoned at the client's timeout.
    Timeout,
}

impl BudgetState {
    /// A call starts.
    #[inline]
    pub fn call_started(&mut self, budget: &Budget, now: SimTime) {
        match (self, budget) {
            (BudgetState::Finagle(w), Budget::Finagle { percent, .. }) => {
                let (deposit, _) = Budget::finagle_amounts(*percent);
                w.add(now, deposit);
            }
            (
                BudgetState::Tokens(tokens),
                Budget::TokenBucket {
                    deposit,
                    on: DepositOn::Call,
                    capacity,
                    ..
                },
            ) => *tokens = (*tokens + deposit).min(*capacity),
            #[cfg(feature = "tower")]
            (BudgetState::Tower(tps), _) => tps.deposit(now),
            _ => {}
        }
    }

    /// An attempt goes on the wire.
    #[inline]
    pub fn sent(&mut self) {
        if let BudgetState::Envoy {
            active_requests, ..
        } = self
        {
            *active_requests += 1;
        }
    }

    /// An attempt ended with `outcome`; `held` is what its call holds of the budget (see
    /// [`BudgetState::allow_retry`]).
    #[inline]
    pub fn attempt_ended(&mut self, budget: &Budget, outcome: Outcome, held: &mut u64) {
        match (self, budget) {
            (BudgetState::Tokens(tokens), Budget::Grpc { .. }) if outcome != Outcome::Success => {
                *tokens = tokens.saturating_sub(1000);
            }
            (
                BudgetState::Envoy {
                    active_requests,
                    active_retries,
                },
                _,
            ) => {
                *active_requests -= 1;
                // The retry that sent this attempt is answered: Envoy's resetRetry.
                if *held > 0 {
                    *active_retries -= 1;
                    *held = 0;
                }
            }
            _ => {}
        }
    }

    /// The call's strategy wants a retry after `outcome`: true when the budget allows it, and
    /// then the budget is charged (the call keeps in `held` what it must give back later).
    #[inline]
    pub fn allow_retry(
        &mut self,
        budget: &Budget,
        now: SimTime,
        outcome: Outcome,
        held: &mut u64,
    ) -> bool {
        match (self, budget) {
            (BudgetState::None, _) => true,
            (BudgetState::Tokens(tokens), Budget::TokenBucket { cost, on, .. }) => {
                let ok = match on {
                    DepositOn::Success => *tokens >= *cost,
                    DepositOn::Call => *tokens > *cost,
                };
                if ok {
                    *tokens -= cost;
                }
                ok
            }
            (BudgetState::Tokens(tokens), Budget::Grpc { max_tokens, .. }) => {
                2 * *tokens > *max_tokens
            }
            (
                BudgetState::Tokens(tokens),
                Budget::AwsStandard {
                    cost, timeout_cost, ..
                },
            ) => {
                let amount = if outcome == Outcome::Timeout {
                    *timeout_cost
                } else {
                    *cost
                };
                let ok = amount <= *tokens;
                if ok {
                    *tokens -= amount;
                    *held = amount;
                }
                ok
            }
            (
                BudgetState::Envoy {
                    active_requests,
                    active_retries,
                },
                Budget::Envoy {
                    percent,
                    min_concurrency,
                },
            ) => {
                let max =
                    ((percent / 100.0 * *active_requests as f64) as u64).max(*min_concurrency);
                let ok = *active_retries < max;
                if ok {
                    *active_retries += 1;
                    *held = 1;
                }
                ok
            }
            (
                BudgetState::Finagle(w),
                Budget::Finagle {
                    ttl,
                    min_per_s,
                    percent,
                },
            ) => {
                let (_, withdrawal) = Budget::finagle_amounts(*percent);
                let ok =
                    w.sum(now) + Budget::finagle_reserve(*ttl, *min_per_s, *percent) >= withdrawal;
                if ok {
                    w.add(now, -withdrawal);
                }
                ok
            }
            #[cfg(feature = "tower")]
            (BudgetState::Tower(tps), _) => tps.withdraw(now),
            (state, budget) => unreachable!("budget state {state:?} does not belong to {budget:?}"),
        }
    }

    /// A call ended, succeeding or not; `held` is what it holds of the budget.
    #[inline]
    pub fn call_ended(&mut self, budget: &Budget, succeeded: bool, held: &mut u64) {
        match (self, budget) {
            (
                BudgetState::Tokens(tokens),
                Budget::TokenBucket {
                    deposit,
                    on: DepositOn::Success,
                    capacity,
                    ..
                },
            ) if succeeded => *tokens = (*tokens + deposit).min(*capacity),
            (
                BudgetState::Tokens(tokens),
                Budget::Grpc {
                    max_tokens,
                    token_ratio,
                },
            ) if succeeded => *tokens = (*tokens + token_ratio).min(*max_tokens),
            (
                BudgetState::Tokens(tokens),
                Budget::AwsStandard {
                    capacity,
                    success_increment,
                    ..
                },
            ) if succeeded => {
                let back = if *held > 0 { *held } else { *success_increment };
                *tokens = (*tokens + back).min(*capacity);
            }
            (BudgetState::Envoy { active_retries, .. }, _) if *held > 0 => {
                // A retry denied elsewhere, or never sent: Envoy's destructor resets it.
                *active_retries -= 1;
            }
            _ => {}
        }
        *held = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CallEnd, Controls, ProcessControl};
    use super::*;

    const S: u64 = 1_000_000_000;

    fn process(text: &str) -> (Controls, ProcessControl) {
        let c = Controls {
            budget: Budget::parse(text).unwrap(),
            ..Controls::default()
        };
        (c, c.start())
    }

    fn tokens(p: &ProcessControl) -> u64 {
        match &p.budget {
            BudgetState::Tokens(t) => *t,
            other => panic!("{other:?}"),
        }
    }

    /// An attempt fails with `outcome` and its call asks for a retry at `t`.
    fn fail_and_ask(
        c: &Controls,
        p: &mut ProcessControl,
        t: u64,
        outcome: Outcome,
        held: &mut u64,
    ) -> bool {
        p.sent();
        p.attempt_ended(c, SimTime(0), outcome, held);
        p.allow_retry(c, SimTime(t), outcome, held)
    }

    #[test]
    fn token_bucket_spends_whole_tokens_and_refills_from_successes() {
        // Starts full (5 tokens): five retries of 1 token, the sixth refused at 0.
        let (c, mut p) = process("token-bucket");
        let mut held = 0;
        for _ in 0..5 {
            assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        }
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        // Nine successes deposit 0.9: still refused; the tenth makes 1.0, which a retry spends.
        for _ in 0..9 {
            p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        }
        assert_eq!(tokens(&p), 900);
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert_eq!(tokens(&p), 0);
        // A failed call deposits nothing; 60 successes fill to the capacity, not 6.
        p.call_ended(&c, SimTime(0), CallEnd::Failed, &mut held, false);
        assert_eq!(tokens(&p), 0);
        for _ in 0..60 {
            p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        }
        assert_eq!(tokens(&p), 5000);
    }

    #[test]
    fn token_bucket_by_the_simulators_rule_deposits_at_each_start_and_keeps_one_token() {
        // on=call: starts full (5); a call's start deposits 0.1, clipped at 5. Retries go while
        // more than 1 token is left: 5 → 4 → 3 → 2 → 1, then refused (the post's rule makes a
        // fifth retry, down to 0).
        let (c, mut p) = process("token-bucket:deposit=call");
        assert_eq!(
            c.budget.text(),
            "token-bucket:deposit=0.1,on=call,cost=1,capacity=5"
        );
        let mut held = 0;
        p.call_started(&c, SimTime(0), &mut false);
        assert_eq!(tokens(&p), 5000);
        for left in [4000, 3000, 2000, 1000] {
            assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
            assert_eq!(tokens(&p), left);
        }
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        // Ends deposit nothing, successful or not. One start makes 1.1, more than 1: a retry,
        // to 0.1; nine more starts make 1.0, not more than 1: refused; the tenth allows one.
        p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        p.call_ended(&c, SimTime(0), CallEnd::Failed, &mut held, false);
        assert_eq!(tokens(&p), 1000);
        p.call_started(&c, SimTime(0), &mut false);
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert_eq!(tokens(&p), 100);
        for _ in 0..9 {
            p.call_started(&c, SimTime(0), &mut false);
        }
        assert_eq!(tokens(&p), 1000);
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        p.call_started(&c, SimTime(0), &mut false);
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert_eq!(tokens(&p), 100);
        // The amount and the rule together, and the rule's refusals.
        assert_eq!(
            Budget::parse("token-bucket:deposit=0.25,on=call").unwrap(),
            Budget::TokenBucket {
                deposit: 250,
                on: DepositOn::Call,
                cost: 1000,
                capacity: 5000
            }
        );
        assert_eq!(
            Budget::parse("token-bucket:deposit=success").unwrap(),
            Budget::parse("token-bucket").unwrap()
        );
        for (text, says) in [
            (
                "token-bucket:on=start",
                "on=start is out of range; accepted: on success",
            ),
            (
                "token-bucket:deposit=call,on=call",
                "the deposit rule is given twice",
            ),
            (
                "token-bucket:deposit=lots",
                "deposit=lots is out of range; accepted: deposit from 0",
            ),
        ] {
            let e = Budget::parse(text).unwrap_err();
            assert!(e.accepted.starts_with(says), "{text}: {}", e.accepted);
        }
    }

    #[test]
    fn grpc_throttles_at_half_the_maximum_after_the_decrement() {
        // max 10, ratio 0.1: failures take 10 → 9, 8, 7, 6 (retries allowed: above 5), then
        // 5, which is not above max/2 = 5: throttled.
        let (c, mut p) = process("grpc");
        let mut held = 0;
        for left in [9000, 8000, 7000, 6000] {
            assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
            assert_eq!(tokens(&p), left);
        }
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Timeout, &mut held));
        assert_eq!(tokens(&p), 5000);
        // Ten successes give back 1.0 (6.0): a failure makes 5.0, still throttled; one more
        // success (6.1) and the failure leaves 5.1: allowed.
        for _ in 0..10 {
            p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        }
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        for _ in 0..11 {
            p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        }
        assert_eq!(tokens(&p), 6100);
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert_eq!(tokens(&p), 5100);
        // Never below 0, never above the maximum; successful attempts take nothing.
        for _ in 0..20 {
            fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held);
        }
        assert_eq!(tokens(&p), 0);
        p.attempt_ended(&c, SimTime(0), Outcome::Success, &mut held);
        assert_eq!(tokens(&p), 0);
        for _ in 0..200 {
            p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        }
        assert_eq!(tokens(&p), 10_000);
        // A6 keeps 3 decimals: 0.1239 is 0.123.
        assert_eq!(
            Budget::parse("grpc:token_ratio=0.1239,max_tokens=4").unwrap(),
            Budget::Grpc {
                max_tokens: 4000,
                token_ratio: 123
            }
        );
    }

    #[test]
    fn aws_quota_refunds_the_last_acquisition_or_one() {
        // 500: an error retry acquires 5 (495), a timeout retry 10 (485); the call then
        // succeeds and gives back what its last retry acquired (10): 495, the 5 is gone.
        let (c, mut p) = process("aws-standard");
        let mut held = 0;
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert_eq!((tokens(&p), held), (495, 5));
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Timeout, &mut held));
        assert_eq!((tokens(&p), held), (485, 10));
        p.sent();
        p.attempt_ended(&c, SimTime(0), Outcome::Success, &mut held);
        p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut held, false);
        assert_eq!((tokens(&p), held), (495, 0));
        // A call that succeeds first time gives 1, never past the capacity.
        let mut first = 0;
        p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut first, false);
        assert_eq!(tokens(&p), 496);
        for _ in 0..10 {
            p.call_ended(&c, SimTime(0), CallEnd::Succeeded, &mut first, false);
        }
        assert_eq!(tokens(&p), 500);
        // Capacity 12: an error retry leaves 7; a timeout retry (10 > 7) is refused, an error
        // retry (5 ≤ 7) leaves 2; then 5 > 2 refuses; a failed call gives nothing back.
        let (c, mut p) = process("aws-standard:capacity=12");
        let mut held = 0;
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Timeout, &mut held));
        assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held));
        assert_eq!(tokens(&p), 2);
        p.call_ended(&c, SimTime(0), CallEnd::Failed, &mut held, false);
        assert_eq!(tokens(&p), 2);
    }

    #[test]
    fn envoy_allows_a_percent_of_active_requests_with_a_floor() {
        // Nothing on the wire: the floor of 3 active retries.
        let (c, mut p) = process("envoy");
        let mut held = [0u64; 4];
        for h in &mut held[..3] {
            assert!(fail_and_ask(&c, &mut p, 0, Outcome::Error, h));
        }
        assert!(!fail_and_ask(&c, &mut p, 0, Outcome::Error, &mut held[3]));
        // 25 attempts on the wire; as each answers with an error the active requests are 24,
        // 23, 22, 21, 20, of which 20 % floors to 4 every time (above the floor of 3): the
        // active retries 0, 1, 2, 3 are below 4, the fifth answer finds 4 and is refused.
        let (c, mut p) = process("envoy");
        for _ in 0..25 {
            p.sent();
        }
        let mut calls = [0u64; 6];
        for (k, allowed) in [(0, true), (1, true), (2, true), (3, true), (4, false)] {
            p.attempt_ended(&c, SimTime(0), Outcome::Error, &mut calls[k]);
            assert_eq!(
                p.allow_retry(&c, SimTime(0), Outcome::Error, &mut calls[k]),
                allowed,
                "{k}"
            );
        }
        // Active 20, retries 4. The first retry is sent (21 active) and answered (20, its
        // retry no longer active): 3 < ⌊4.0⌋ allows another.
        p.sent();
        p.attempt_ended(&c, SimTime(0), Outcome::Error, &mut calls[0]);
        assert_eq!(calls[0], 0);
        assert!(p.allow_retry(&c, SimTime(0), Outcome::Error, &mut calls[5]));
        // 14 active requests: 20 % is 2.8, floored to 2, below the floor of 3.
        let (c, mut p) = process("envoy:min_concurrency=3,percent=20");
        for _ in 0..15 {
            p.sent();
        }
        let mut h = [0u64; 4];
        for (k, allowed) in [(0, true), (1, true), (2, true), (3, false)] {
            p.attempt_ended(&c, SimTime(0), Outcome::Error, &mut h[k]);
            assert_eq!(
                p.allow_retry(&c, SimTime(0), Outcome::Error, &mut h[k]),
                allowed
            );
        }
        // A call ending while its retry is still counted gives it back.
        p.call_ended(&c, SimTime(0), CallEnd::Failed, &mut h[0], false);
        assert!(p.allow_retry(&c, SimTime(0), Outcome::Error, &mut h[3]));
    }

    #[test]
    fn finagle_reserve_deposits_and_expiry() {
        // ttl 10 s, 10/s, 20 %: deposits of 1000, withdrawals of 1000 / 0.2 = 5000, a reserve
        // of 10 × 10 × 5000 = 500 000: 100 retries with no call at all, the 101st refused.
        let (c, mut p) = process("finagle");
        let mut held = 0;
        for _ in 0..100 {
            assert!(p.allow_retry(&c, SimTime(0), Outcome::Error, &mut held));
        }
        assert!(!p.allow_retry(&c, SimTime(0), Outcome::Error, &mut held));
        // Five calls at 1 s deposit 5000: one more retry.
        for _ in 0..5 {
            p.call_started(&c, SimTime(S), &mut false);
        }
        assert!(p.allow_retry(&c, SimTime(S), Outcome::Error, &mut held));
        assert!(!p.allow_retry(&c, SimTime(S), Outcome::Error, &mut held));
        // After a quiet ttl and more, the withdrawals have expired: 100 again.
        for _ in 0..100 {
            assert!(p.allow_retry(&c, SimTime(30 * S), Outcome::Error, &mut held));
        }
        assert!(!p.allow_retry(&c, SimTime(30 * S), Outcome::Error, &mut held));
        // No reserve and no percent: Finagle's empty budget never retries.
        let (c, mut p) = process("finagle:min_per_s=0,percent=0");
        p.call_started(&c, SimTime(0), &mut false);
        assert!(!p.allow_retry(&c, SimTime(0), Outcome::Error, &mut held));
    }
}
