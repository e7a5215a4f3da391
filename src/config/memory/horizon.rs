//! The latest time anything can happen in a run: what its histograms and series can span,
//! so what bounds their windows. Kept apart from the byte counts because it is a bound on
//! time, worked out from the strategies' waits and the server's model, that the estimate and
//! the advice only read.

use super::{instant, nanos, Sat};
use crate::config::{LimiterRule, Scenario, ServerModel};
use crate::engine::Work;
use crate::policy::Strategy;
use crate::time::SimDuration;
use crate::workload::Arrivals;

impl Scenario {
    /// The latest time anything can happen in a run of this scenario: what its histograms
    /// can span. Every wait is at most the cap (every strategy is capped) plus a round trip.
    /// - Any server: a client sends at most `retries + 1` requests an item.
    /// - Down for good: every request is refused, so each client gives up on its first item,
    ///   after the longest waits its strategy can draw (see `longest_refused_waits`).
    /// - Down until `t`: from `t` on every request is served; a client still trying sends
    ///   within one wait of `t`, then one request a round trip for each item left.
    /// - A rate limiter: a refused request proves that its key admitted (served) a request
    ///   within the limiter's memory before it — the window, or one token's refill interval
    ///   — plus the 1 s a whole-second store may keep a key. So while work is left, every
    ///   stretch of one wait plus that memory serves an item, and there are only so many
    ///   items.
    /// - `occ`: a write fails only when another succeeded after its read, at most two message
    ///   delays `d` before it; and any unfinished client has a write arriving within one wait
    ///   and four delays of any instant. So while clients remain, every stretch of one wait
    ///   and six delays holds a success, and each client makes one: the last answer comes
    ///   within `clients × (wait + 6d) + d`, or sooner `retries + 1` attempts of `wait + 4d`.
    ///   `d` is the network delay's [`crate::engine::NetworkDelay::practical_max`].
    pub fn horizon(&self) -> SimDuration {
        instant(self.horizon_bound())
    }

    pub(super) fn horizon_bound(&self) -> Sat {
        if self.run_spec(self.strategies[0]).uses_call_loop() {
            return self.call_loop_horizon();
        }
        const SECOND: u128 = 1_000_000_000;
        let round_trip = nanos(self.latency.max());
        let wait = nanos(self.backoff.cap.max(self.backoff.base))
            + self.beyond_cap()
            + round_trip
            + self.tab_delay();
        let requests_per_item = Sat::from(self.retries) + 1;
        let (items_per_client, items) = match self.work {
            Work::Items(k) => (Sat::from(k), Sat::from(k) * Sat::from(self.clients)),
            Work::Pool(p) => (Sat::from(p), Sat::from(p)),
        };
        let each_client = wait * requests_per_item * items_per_client;
        match self.server {
            ServerModel::Down { recover_at: None } => (wait * requests_per_item).min(
                self.longest_refused_waits() + (round_trip + self.tab_delay()) * requests_per_item,
            ),
            ServerModel::Down {
                recover_at: Some(t),
            } => each_client.min(nanos(t) + wait + items_per_client * round_trip),
            // Call-loop runs are bounded by `call_loop_horizon` above.
            ServerModel::Capacity(_) | ServerModel::Flaky(_) => wait * requests_per_item,
            ServerModel::Limited(m) => {
                let memory = match m.rule {
                    LimiterRule::FixedWindow(r) => r.window,
                    LimiterRule::SlidingWindow(r) => r.window,
                    LimiterRule::TokenBucket(r) => r.interval,
                };
                let stretch = wait + nanos(memory) + SECOND;
                each_client.min((items + 1) * stretch + wait)
            }
            ServerModel::Occ => {
                let d = nanos(self.network_delay.practical_max());
                let attempts = requests_per_item * (wait + d * 4);
                attempts.min(Sat::from(self.clients) * (wait + d * 6)) + d
            }
        }
    }

    /// What browser tabs can add to one wait: a hidden tab's timer runs up to a minute late
    /// (Chrome's minute alignment), and a pausing tab waits for its flip to visible, which in
    /// practice (an exponential dwell beyond 40 means has probability e^−40) comes within 40
    /// mean dwells, counted twice (paused on reading, and again when the timer ran hidden).
    pub(super) fn tab_delay(&self) -> Sat {
        use crate::engine::browser::WhenHidden;
        let b = &self.browser;
        let mut extra = Sat::ZERO;
        if b.hidden > 0.0 || b.switch_mean.is_some() {
            extra = extra + 60_000_000_000;
        }
        if let (WhenHidden::Pause, Some(mean)) = (b.when_hidden, b.switch_mean) {
            extra = extra + nanos(mean) * (2 * 40);
        }
        extra
    }

    /// The longest a client of any of the scenario's strategies can wait in all before its
    /// last retry against a server that answers nothing but refusals without headers (down
    /// for good): the sum of each retry's largest wait. Exponential-shaped strategies (and the
    /// header readers, which fall back to them) wait at most `e_k`; fixed waits `base`; naive
    /// nothing; decorrelated jitter's `k`-th wait stays below `min(cap, base · 3^k)`.
    /// The most any of the scenario's strategies' waits exceed the cap by
    /// ([`Strategy::beyond_cap`]: zero but for the real crates' strategies).
    pub(super) fn beyond_cap(&self) -> Sat {
        self.strategies
            .iter()
            .map(|s| nanos(s.beyond_cap(&self.backoff)))
            .max()
            .unwrap_or(Sat::ZERO)
    }

    fn longest_refused_waits(&self) -> Sat {
        let cap = nanos(self.backoff.cap);
        let base = nanos(self.backoff.base).min(cap);
        let mut longest = Sat::ZERO;
        for &strategy in &self.strategies {
            let wait = |k: u32| -> Sat {
                match strategy {
                    Strategy::Naive => Sat::ZERO,
                    Strategy::Fixed => base,
                    Strategy::DecorrelatedJitter => {
                        let mut w = base;
                        for _ in 0..k.min(64) {
                            w = (w * 3).min(cap);
                        }
                        w
                    }
                    _ => {
                        nanos(self.backoff.exponential(k))
                            + nanos(strategy.beyond_cap(&self.backoff))
                    }
                }
            };
            // Waits never shrink; once two in a row are equal (capped, or not growing) the
            // rest are the same.
            let mut total = Sat::ZERO;
            let mut previous = None;
            for k in 1..=self.retries {
                let w = wait(k);
                if previous == Some(w) {
                    total = total + w * Sat::from(self.retries - k + 1);
                    break;
                }
                total = total + w;
                previous = Some(w);
            }
            longest = longest.max(total);
        }
        longest
    }

    /// The latest time anything can happen on the call loop: the last call start, then for
    /// each of its attempts a wait (the cap, and what browser tabs add to it), two network
    /// trips and either the timeout or the server's backlog (its wait for a worker and its
    /// service, [`Scenario::service_bounds`]), then the backlog again (abandoned work is
    /// still done), and the longest outer layer's timeout (one may be pending that long
    /// after its call ended).
    fn call_loop_horizon(&self) -> Sat {
        let o = &self.overload;
        let start = match &o.arrivals {
            Arrivals::Herd => Sat::ZERO,
            Arrivals::Poisson(s) => Sat::from(s.end.as_nanos()),
        };
        // With retry layers, every layer's waits together are `tries − 1` of at most the
        // longest cap (each call of a layer waits one less than its attempts; summed over
        // the layers this telescopes to the attempts at the server, less one).
        let tries = Sat(self.tries_per_call());
        let trip = match o.network {
            Some(d) => nanos(d.practical_max()) * 2,
            None => nanos(self.latency.max()),
        };
        let (_, backlog) = self.service_bounds();
        let answer = o.timeout.map_or(backlog, |t| nanos(t).min(backlog));
        let outage = o
            .triggers
            .last_end()
            .max(o.pool.last_end())
            .map_or(Sat::ZERO, |t| Sat::from(t.as_nanos()));
        let cap = o
            .layers
            .outer
            .iter()
            .map(|l| l.policy.backoff.cap)
            .fold(self.backoff.cap, SimDuration::max);
        let per_try = nanos(cap) + self.beyond_cap() + trip + answer + self.tab_delay();
        // An outer layer's stale timeout can be due that long after the call ended.
        let stale = nanos(o.layers.longest_timeout());
        start.max(outage) + tries * per_try + backlog + stale
    }
}
