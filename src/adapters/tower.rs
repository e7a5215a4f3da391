//! tower's retry budget in the herd (`--budget tower-tps:ttl=10s,min_per_s=10,percent=0.2`),
//! pinned at tower 0.5.3: each client process (or the run, with `scope=global`) holds tower's
//! own `tower::retry::budget::TpsBudget`; every call deposits at its start (Finagle's
//! `RetryFilter` rule, which tower's budget copies: "the percentage of calls to `deposit`
//! that can be retried") and every retry the strategy wants must withdraw. herd-sim's own
//! model of the same budget is `--budget finagle` (src/policy/control/budget.rs), in percent.
//! The other way, [`SimulatedBudget`] is tower's `Budget` trait over any of herd-sim's
//! budgets, so a tower client can spend the budget it simulated.
//!
//! # Simulated time: a paused tokio clock
//! `TpsBudget` reads the time itself, with `tokio::time::Instant::now()`, at its creation and
//! at every deposit and withdrawal; it takes no clock and no instant. So the adapter runs it
//! under a tokio clock that only simulated time moves: a current-thread runtime built with
//! `start_paused(true)` (tokio's `test-util`), one a run ([`PausedClock`], shared by the
//! run's budgets), never driven: before each deposit or withdrawal at simulated time `t` the
//! adapter enters the runtime's context (`Runtime::enter`, so `Instant::now()` reads its
//! clock) and advances the clock by what `t` is past the last time it showed, with
//! `tokio::time::advance`. `advance` moves the clock when first polled and then only yields
//! (so that timers due may fire: there are none), so the adapter polls it once with a no-op
//! waker instead of `block_on`: no scheduler turn per event, and it works when the caller is
//! itself inside a runtime (`block_on` would panic there). The tests check the clock moved
//! by exactly what was asked. Time only goes forward, as in the call loop.
//!
//! The other ways were worse: a mock of tokio's clock is not tower's code; `tokio::time::pause`
//! on the caller's runtime would freeze the caller's timers; and a runtime a process would
//! cost a time wheel (kilobytes) for each of thousands of processes.
//!
//! # What tower's arithmetic does
//! `TpsBudget::new` makes a deposit worth 1 and a withdrawal `(1 / retry_percent) as isize`
//! for `retry_percent ≤ 1`, else 1000 and `(1000 / retry_percent) as isize`: the cast
//! truncates, so `percent=0.6` withdraws 1 per deposit of 1 and allows a retry per call, not
//! 0.6 (tower-rs/tower#857). Deposits live in 10 slots of `ttl / 10` beside the one being
//! written, so a deposit counts for `ttl` to `1.1 × ttl`; Finagle's `WindowedAdder` keeps 9
//! beside the writer (0.9 to 1 × `ttl`). docs/crates.md measures both differences.

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;

use tower::retry::budget::{Budget as _, TpsBudget};

use crate::client::Clock;
use crate::policy::control::spec::{Catalogue, Params};
use crate::policy::control::{Budget, BudgetState, Outcome, SpecError};
use crate::time::{SimDuration, SimTime};

/// The keys `tower-tps` takes, tower's names for `TpsBudget::new`'s arguments.
const KEYS: Catalogue = &[("tower-tps", &["ttl", "min_per_s", "percent"])];

/// `TpsBudget::new`'s arguments, validated against its assertions (so it never panics).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TpsParams {
    /// How long a deposit counts: from 1 s to 60 s.
    pub ttl: SimDuration,
    /// Retries a second always allowed (the reserve).
    pub min_per_s: u32,
    /// tower's `retry_percent`: retries per deposit, a fraction (0.2 is 20 %), 0 to 1000.
    pub percent: f32,
}

impl Default for TpsParams {
    /// `TpsBudget::default()`: 10 s, 10 a second, 0.2.
    fn default() -> Self {
        TpsParams {
            ttl: SimDuration::from_secs(10),
            min_per_s: 10,
            percent: 0.2,
        }
    }
}

impl TpsParams {
    /// Reads `tower-tps[:ttl=10s,min_per_s=10,percent=0.2]` (tower's defaults).
    pub fn parse(text: &str) -> Result<TpsParams, SpecError> {
        let mut p = Params::parse(text, KEYS)?;
        let d = TpsParams::default();
        let ttl = p.duration(
            "ttl",
            d.ttl,
            |t| (1_000_000_000..=60_000_000_000).contains(&t.as_nanos()),
            "a duration from 1s to 60s (TpsBudget::new's range)",
        )?;
        let min_per_s = p.whole("min_per_s", d.min_per_s.into(), 0, i32::MAX as u64 - 1)? as u32;
        let percent = p.number(
            "percent",
            d.percent.into(),
            |v| (0.0..=1000.0).contains(&v),
            "from 0 to 1000, tower's retry_percent (a fraction: 0.2 is 20 %)",
        )? as f32;
        p.finish()?;
        Ok(TpsParams {
            ttl,
            min_per_s,
            percent,
        })
    }

    /// As `--budget` writes it, every parameter given.
    pub fn text(&self) -> String {
        format!(
            "tower-tps:ttl={},min_per_s={},percent={}",
            self.ttl, self.min_per_s, self.percent
        )
    }

    /// tower's budget with these parameters, made under `clock` at `now`.
    fn budget(&self, clock: &PausedClock, now: SimTime) -> TpsBudget {
        let ttl = Duration::from_nanos(self.ttl.as_nanos());
        clock.at(now, || TpsBudget::new(ttl, self.min_per_s, self.percent))
    }
}

/// A paused tokio clock that simulated time moves (see the module's doc); cheap to clone,
/// shared by the budgets of one run.
#[derive(Clone)]
pub struct PausedClock {
    inner: Arc<ClockInner>,
}

struct ClockInner {
    runtime: tokio::runtime::Runtime,
    /// The simulated time the clock shows, ns since it was made.
    shown: AtomicU64,
}

impl fmt::Debug for PausedClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PausedClock")
            .field("shown_ns", &self.inner.shown.load(Ordering::Relaxed))
            .finish()
    }
}

impl PausedClock {
    /// A clock showing simulated time 0.
    pub fn new() -> PausedClock {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            // Building a current-thread runtime without I/O opens nothing that can fail short
            // of the allocator.
            .expect("a paused current-thread tokio runtime builds");
        PausedClock {
            inner: Arc::new(ClockInner {
                runtime,
                shown: AtomicU64::new(0),
            }),
        }
    }

    /// Runs `f` with tokio's clock showing `now` (never moved back: an earlier `now` runs at
    /// the time shown).
    pub fn at<T>(&self, now: SimTime, f: impl FnOnce() -> T) -> T {
        let _context = self.inner.runtime.enter();
        let shown = self.inner.shown.load(Ordering::Relaxed);
        if now.as_nanos() > shown {
            let step = Duration::from_nanos(now.as_nanos() - shown);
            // Its first poll moves the clock; what it awaits after is a yield, dropped.
            let advance = pin!(tokio::time::advance(step));
            let _ = advance.poll(&mut Context::from_waker(Waker::noop()));
            self.inner.shown.store(now.as_nanos(), Ordering::Relaxed);
        }
        f()
    }

    /// tokio's `Instant::now()` as the clock shows it.
    pub fn tokio_now(&self) -> tokio::time::Instant {
        let _context = self.inner.runtime.enter();
        tokio::time::Instant::now()
    }
}

impl Default for PausedClock {
    fn default() -> Self {
        PausedClock::new()
    }
}

/// One process's tower budget on its run's clock.
pub struct TpsState {
    budget: TpsBudget,
    clock: PausedClock,
}

impl TpsState {
    /// What one state holds on the heap beyond its box: the box itself, tower's 10 slots
    /// (a boxed slice) and two allocations' overhead; the clock is the run's, counted once.
    pub const HEAP_BYTES: u128 =
        (std::mem::size_of::<TpsState>() + 10 * std::mem::size_of::<isize>() + 2 * 16) as u128;

    /// A fresh budget of `params` on `clock`, made at the time the clock shows.
    pub fn new(params: TpsParams, clock: PausedClock) -> TpsState {
        let shown = SimTime(clock.inner.shown.load(Ordering::Relaxed));
        TpsState {
            budget: params.budget(&clock, shown),
            clock,
        }
    }

    /// tower's `deposit` at `now`.
    pub fn deposit(&self, now: SimTime) {
        self.clock.at(now, || self.budget.deposit());
    }

    /// tower's `withdraw` at `now`: true when the retry may go (and is charged).
    pub fn withdraw(&self, now: SimTime) -> bool {
        self.clock.at(now, || self.budget.withdraw())
    }

    /// tower's own account of the balance, as its `Debug` prints it (its sum of slots,
    /// writer and reserve, without expiring slots first: as of the last deposit or withdrawal).
    pub fn balance(&self) -> i64 {
        let debug = format!("{:?}", self.budget);
        debug
            .split("balance: ")
            .nth(1)
            .and_then(|rest| rest.trim_end_matches(" }").trim().parse().ok())
            .unwrap_or_default()
    }
}

impl fmt::Debug for TpsState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TpsState({:?})", self.budget)
    }
}

impl PartialEq for TpsState {
    /// A budget is only ever equal to itself: tower's state is its own, not a value.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for TpsState {}

/// herd-sim's budget as tower's `Budget` (`tower::retry::budget::Budget`), over a
/// [`Clock`]: a tower retry `Policy` that deposits and withdraws through it spends exactly the
/// budget the herd simulated. tower's budget has two calls where herd-sim's budgets hear of
/// five events, so the adapter maps them to what each budget counts:
/// - `deposit()` is one call credited: it tells the budget a call started (Finagle's
///   deposit, the token bucket's `on=call`) and a call succeeded (the token bucket's
///   `on=success`, gRPC's `token_ratio`, AWS's `success_increment`); each budget acts on
///   the one of the two it counts. Call it where the budget's source does: Finagle (and
///   tower's `TpsBudget`) on every request, the others on every success.
/// - `withdraw()` is a failed attempt asking for a retry: gRPC takes its token for the
///   failure first, then every budget judges and charges the retry.
///
/// Envoy's budget counts requests in flight, which tower's two calls cannot report: it is
/// refused ([`SimulatedBudget::new`]). AWS's refund of a retried call's last acquisition
/// needs the call, which `deposit()` does not name: a success gives `success_increment`.
#[derive(Debug)]
pub struct SimulatedBudget<C: Clock> {
    budget: Budget,
    state: Mutex<BudgetState>,
    clock: C,
}

impl<C: Clock> SimulatedBudget<C> {
    /// `budget` in its initial state on `clock`; `None` for Envoy's (see the type's doc).
    pub fn new(budget: Budget, clock: C) -> Option<Self> {
        if matches!(budget, Budget::Envoy { .. }) {
            return None;
        }
        Some(SimulatedBudget {
            state: Mutex::new(budget.start()),
            budget,
            clock,
        })
    }

    /// The clock it reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The budget's state (for traces and tests).
    pub fn with_state<T>(&self, f: impl FnOnce(&BudgetState) -> T) -> T {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl<C: Clock> tower::retry::budget::Budget for SimulatedBudget<C> {
    fn deposit(&self) {
        let now = self.clock.now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.call_started(&self.budget, now);
        state.call_ended(&self.budget, true, &mut 0);
    }

    fn withdraw(&self) -> bool {
        let now = self.clock.now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut held = 0;
        state.attempt_ended(&self.budget, Outcome::Error, &mut held);
        state.allow_retry(&self.budget, now, Outcome::Error, &mut held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn the_paused_clock_moves_by_exactly_the_simulated_time() {
        let clock = PausedClock::new();
        let start = clock.tokio_now();
        clock.at(SimTime(1_500_000_001), || ());
        assert_eq!(
            clock.tokio_now() - start,
            Duration::from_nanos(1_500_000_001)
        );
        // Never back; and a real second passing does not move it.
        clock.at(SimTime(S), || ());
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            clock.tokio_now() - start,
            Duration::from_nanos(1_500_000_001)
        );
        // Inside another runtime too (block_on would panic there).
        let outer = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        outer.block_on(async { clock.at(SimTime(3 * S), || ()) });
        assert_eq!(clock.tokio_now() - start, Duration::from_secs(3));
    }

    #[test]
    fn params_read_back_and_bad_ones_name_tower_s_range() {
        let p = TpsParams::parse("tower-tps").unwrap();
        assert_eq!(p, TpsParams::default());
        assert_eq!(p.text(), "tower-tps:ttl=10s,min_per_s=10,percent=0.2");
        let q = TpsParams::parse("tower-tps:ttl=2500ms,min_per_s=0,percent=1.5").unwrap();
        assert_eq!(TpsParams::parse(&q.text()).unwrap(), q);
        for (text, says) in [
            (
                "tower-tps:ttl=500ms",
                "ttl=500ms is out of range; accepted: ttl a duration from 1s to 60s",
            ),
            ("tower-tps:ttl=61s", "ttl=61s is out of range"),
            (
                "tower-tps:percent=1001",
                "percent=1001 is out of range; accepted: percent from 0 to 1000",
            ),
            ("tower-tps:percent=-0.1", "percent=-0.1 is out of range"),
            ("tower-tps:min_per_s=-1", "min_per_s=-1 is out of range"),
            ("tower-tps:window=3s", "unknown parameter `window`"),
        ] {
            let e = TpsParams::parse(text).unwrap_err();
            assert!(e.accepted.contains(says), "{text}: {}", e.accepted);
        }
    }
}
