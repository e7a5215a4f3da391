//! Browser tabs on the call loop, worked out by hand: a hidden tab's throttled timer, a
//! paused call resuming when its tab is visible, an HTTP date read by a skewed clock; the
//! books kept; and the herd path's answers for the same tabs.

use super::*;
use crate::engine::browser::{Browser, ClockSkew, RetryAfterFormat, Tab, WhenHidden};
use crate::engine::{simulate, Path};
use crate::policy::Strategy;
use crate::server::{Capacity, CapacityRule, Down};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// `clients` processes against a capacity server out over [0, `out_s`), `strategy` from
/// `base`, 4 retries.
fn spec(clients: u32, strategy: Strategy, base: SimDuration, out_s: u64, b: Browser) -> RunSpec {
    let mut s = RunSpec::experiment1(
        clients,
        strategy,
        Server::Capacity(Capacity::new(CapacityRule::default())),
        1,
    );
    s.policy.backoff.base = base;
    s.overload.triggers.outages = vec![(SimTime::ZERO, SimTime(out_s * S))];
    s.browser = b;
    s
}

/// The first run seed from 1 whose tab 0 satisfies `good`.
fn seed_where(b: &Browser, good: impl Fn(&Tab) -> bool) -> u64 {
    (1..).find(|&seed| good(&Tab::new(b, seed, 0))).unwrap()
}

#[test]
fn a_hidden_tabs_retry_due_at_1_3_s_runs_at_2_0_s_of_its_clock() {
    // One hidden tab, never flipping, fixed waits of 1.3 s against a server out for 10 s.
    // Its clock is `p` into its second at t = 0 (p below 0.7 s, by the choice of seed), so
    // the retry due at t = 1.3 s (its clock: 1.3 s + p, in (1 s, 2 s]) runs when its clock
    // shows 2.0 s: t = 2 s − p. Visible, it runs at 1.3 s.
    let hidden = Browser {
        hidden: 1.0,
        ..Browser::default()
    };
    let base = SimDuration(1300 * MS);
    let seed = seed_where(&hidden, |t| t.phase().as_nanos() % S < 700 * MS);
    let p = Tab::new(&hidden, seed, 0).phase().as_nanos() % S;
    let mut s = spec(1, Strategy::Fixed, base, 10, hidden);
    s.seed = seed;
    let (tally, totals) = simulate_calls(&s);
    assert_eq!(tally.first_retry, Some(SimTime(2 * S - p)));
    let b = tally.browser.unwrap();
    assert_eq!((b.hidden_clients, b.retries_while_hidden), (1, 4));
    assert_eq!((totals.attempts, totals.calls_failed), (5, 1));

    let mut visible = spec(1, Strategy::Fixed, base, 10, Browser::default());
    visible.seed = seed;
    visible.browser.skew = ClockSkew::Fixed(1); // active, never hidden
    let (tally, _) = simulate_calls(&visible);
    assert_eq!(tally.first_retry, Some(SimTime(1300 * MS)));
    assert_eq!(tally.browser.unwrap().retries_while_hidden, 0);
}

#[test]
fn a_paused_call_retries_only_after_its_tab_becomes_visible() {
    // Hidden at 0, pausing, flips of mean 60 s; the seed gives a first flip (to visible) f
    // after 1 s and a visible dwell longer than 1 s. Out over [0, 1 s): the first attempt
    // is refused at 0 and read while hidden, so nothing is drawn; at f the tab is visible,
    // waits its fixed 1 s and retries at f + 1 s, served. Two attempts, nothing between.
    let b = Browser {
        hidden: 1.0,
        switch_mean: Some(SimDuration::from_secs(60)),
        when_hidden: WhenHidden::Pause,
        ..Browser::default()
    };
    let seed = seed_where(&b, |t| {
        let f = t.next_flip().unwrap();
        let mut after = *t;
        after.advance(f, b.switch_mean);
        f.as_nanos() > S && after.next_flip().unwrap().as_nanos() > f.as_nanos() + S
    });
    let f = Tab::new(&b, seed, 0).next_flip().unwrap();
    let mut s = spec(1, Strategy::Fixed, SimDuration::from_secs(1), 1, b);
    s.seed = seed;
    let (tally, totals) = simulate_calls(&s);
    assert_eq!(tally.first_retry, Some(f + SimDuration::from_secs(1)));
    assert_eq!(tally.last_retry, tally.first_retry);
    assert_eq!((totals.attempts, totals.calls_succeeded), (2, 1));
    let counts = tally.browser.unwrap();
    assert_eq!((counts.retries_while_hidden, counts.paused), (0, 0));

    // Hidden for good: paused, neither succeeded nor failed, and no finish.
    let s = spec(
        1,
        Strategy::Fixed,
        SimDuration::from_secs(1),
        1,
        Browser {
            switch_mean: None,
            ..b
        },
    );
    let (tally, totals) = simulate_calls(&s);
    assert_eq!((totals.attempts, totals.calls_succeeded), (1, 0));
    assert_eq!((totals.calls_failed, tally.gave_up), (0, 0));
    assert_eq!(tally.browser.unwrap().paused, 1);
    assert_eq!(tally.last_finish, None);
}

#[test]
fn an_http_date_read_by_a_clock_two_seconds_ahead_wakes_two_seconds_early() {
    // One worker busy with process 0 over [0, 10 s), no queue: process 1 is shed at 0 with
    // Retry-After 5.5 s, as an HTTP date the server's second 5 s (floor of 5.5 s). A clock
    // 2 s ahead reads 5 s at t = 3 s and retries then (early: before 5 s), one 2 s behind
    // at 7 s, an exact one at 5 s. Ahead, every retry is early: shed at 3 s → date 8 s,
    // read at 6 s; → 11 s, read at 9 s (busy until 10 s); → 14 s, read at 12 s, served but
    // still before the date: 4 early retries. Behind: 7 s (shed) → date 12 s, read at 14 s,
    // served: none early; exact: 5 s (shed) → 10 s, served as the worker frees: none.
    for (skew, first, early) in [(2 * S as i64, 3, 4), (-2 * S as i64, 7, 0), (0, 5, 0)] {
        let mut s = spec(
            2,
            Strategy::RetryAfter,
            SimDuration::from_secs(1),
            0,
            Browser {
                retry_after_format: RetryAfterFormat::HttpDate,
                skew: ClockSkew::Fixed(skew),
                ..Browser::default()
            },
        );
        s.overload.triggers.outages.clear();
        s.server = Server::Capacity(Capacity::new(CapacityRule {
            workers: Some(1),
            service: Dist::Fixed(SimDuration::from_secs(10)),
            queue: Some(0),
            shed_retry_after: Some(SimDuration(5500 * MS)),
            ..CapacityRule::default()
        }));
        let (tally, totals) = simulate_calls(&s);
        assert_eq!(tally.first_retry, Some(SimTime(first * S)), "{skew}");
        assert_eq!(tally.browser.unwrap().early_retries, early, "{skew}");
        assert_eq!(totals.calls_succeeded, 2, "{skew}");
    }
}

#[test]
fn with_tabs_every_attempt_call_and_window_is_accounted_for() {
    // Random tabs against a small capacity server after an outage, with timeouts, network
    // delay and either hidden behaviour: attempts = succeeded + timed out + refused; calls =
    // succeeded + failed + paused; per window, served + refused = requests.
    for when_hidden in WhenHidden::ALL {
        for strategy in [Strategy::Naive, Strategy::FullJitter, Strategy::RetryAfter] {
            let mut s = spec(
                2000,
                strategy,
                SimDuration::from_secs(1),
                5,
                Browser {
                    hidden: 0.4,
                    switch_mean: Some(SimDuration::from_secs(20)),
                    when_hidden,
                    headers_visible: Some(0.5),
                    retry_after_format: RetryAfterFormat::HttpDate,
                    skew: ClockSkew::Normal { mean: 0, sd: S },
                    ..Browser::default()
                },
            );
            s.server = Server::Capacity(Capacity::new(CapacityRule {
                workers: Some(10),
                service: Dist::Fixed(SimDuration::from_millis(50)),
                queue: Some(100),
                shed_retry_after: Some(SimDuration(1500 * MS)),
                ..CapacityRule::default()
            }));
            s.overload.timeout = Some(SimDuration::from_secs(1));
            s.overload.network = Some(crate::engine::NetworkDelay::Fixed(SimDuration(5 * MS)));
            let (tally, t) = simulate_calls(&s);
            let b = tally.browser.unwrap();
            let label = format!("{strategy} {when_hidden:?}");
            assert_eq!(
                t.attempts,
                t.calls_succeeded + t.timed_out + t.refused,
                "{label}"
            );
            assert_eq!(
                t.calls,
                t.calls_succeeded + t.calls_failed + b.paused,
                "{label}"
            );
            assert_eq!(
                tally.served_windows.total() + tally.refused_windows.total(),
                tally.requests,
                "{label}"
            );
            assert_eq!(tally.retries.total(), tally.requests - t.calls, "{label}");
            assert!(b.hidden_clients > 600 && b.hidden_clients < 1000, "{label}");
            if when_hidden == WhenHidden::Retry {
                assert!(b.retries_while_hidden > 0, "{label}");
            } else {
                assert_eq!(b.retries_while_hidden, 0, "{label}");
            }
        }
    }
}

#[test]
fn the_call_loop_and_the_herd_paths_count_the_same_tabs_alike() {
    // A down server recovering at 20 s, zero latency, one call a process at t = 0: the call
    // loop draws as the herd paths do, so its retries, answers and tab counts are theirs,
    // whatever the tabs do.
    for when_hidden in WhenHidden::ALL {
        for strategy in [Strategy::Naive, Strategy::FullJitter, Strategy::Exponential] {
            let mut s = spec(
                3000,
                strategy,
                SimDuration::from_secs(1),
                0,
                Browser {
                    hidden: 0.4,
                    switch_mean: Some(SimDuration::from_secs(7)),
                    when_hidden,
                    ..Browser::default()
                },
            );
            s.overload.triggers.outages.clear();
            s.server = Server::Down(Down {
                recover_at: Some(SimTime(20 * S)),
            });
            let herd = simulate(&s, Path::EventQueue);
            let (calls, _) = simulate_calls(&s);
            let label = format!("{strategy} {when_hidden:?}");
            assert_eq!(calls.retries, herd.retries, "{label}");
            assert_eq!(calls.refused_windows, herd.refused_windows, "{label}");
            assert_eq!(calls.served_windows, herd.served_windows, "{label}");
            assert_eq!(calls.browser, herd.browser, "{label}");
            assert_eq!(
                (calls.requests, calls.succeeded, calls.gave_up),
                (herd.requests, herd.succeeded, herd.gave_up),
                "{label}"
            );
        }
    }
}

/// The flips of tab 0 of the run with `seed`: its first `n` visibility changes.
fn flips(b: &Browser, seed: u64, n: usize) -> Vec<SimTime> {
    let mut tab = Tab::new(b, seed, 0);
    let mut out = Vec::new();
    while out.len() < n {
        let Some(f) = tab.next_flip() else { break };
        out.push(f);
        tab.advance(f, b.switch_mean);
    }
    out
}

#[test]
fn a_retry_a_budget_allowed_and_a_hidden_tab_paused_is_charged_once() {
    // One tab, visible at 0, pausing when hidden, timers unthrottled; the seed gives flips
    // f (to hidden) before 1 s, g (visible) after 1 s and h (hidden) after g + 1 s. A token
    // bucket holding one retry (capacity = cost = 1 token). Refused at 0 (out over [0, 1 s)),
    // the tab is visible: the strategy waits its fixed 1 s and the bucket allows the retry
    // (1 token → 0). At 1 s the tab is hidden: the retry pauses; at g it is redrawn (1 s)
    // without a second charge, sent at g + 1 s and served. Charged twice, the empty bucket
    // would deny it at g: one attempt, a denied retry.
    let b = Browser {
        switch_mean: Some(SimDuration::from_secs(2)),
        when_hidden: WhenHidden::Pause,
        timers: crate::engine::browser::HiddenTimers::None,
        ..Browser::default()
    };
    let seed = (1..)
        .find(|&seed| {
            let f = flips(&b, seed, 3);
            f.len() == 3 && f[0].0 < S && f[1].0 > S && f[2].0 > f[1].0 + S
        })
        .unwrap();
    let g = flips(&b, seed, 3)[1];
    let one_retry = crate::policy::control::Budget::TokenBucket {
        deposit: 1000,
        on: crate::policy::control::DepositOn::Success,
        cost: 1000,
        capacity: 1000,
    };
    for (out_s, attempts, succeeded, denied) in [(1, 2, 1, 0), (1000, 2, 0, 1)] {
        let mut s = spec(1, Strategy::Fixed, SimDuration::from_secs(1), out_s, b);
        s.seed = seed;
        s.controls.budget = one_retry;
        let (tally, totals) = simulate_calls(&s);
        assert_eq!(
            tally.first_retry,
            Some(g + SimDuration::from_secs(1)),
            "{out_s}"
        );
        // Out for 1000 s, the retry at g + 1 s is refused and the next one denied: the one
        // token paid for exactly one retry.
        assert_eq!(
            (
                totals.attempts,
                totals.calls_succeeded,
                totals.retries_denied
            ),
            (attempts, succeeded, denied),
            "{out_s}"
        );
        let counts = tally.browser.unwrap();
        assert_eq!((counts.retries_while_hidden, counts.paused), (0, 0));
    }
}

#[test]
fn a_call_paused_before_its_strategy_decided_is_judged_on_its_last_outcome() {
    // One tab, hidden at 0 and pausing, flipping to visible at f. One worker busy for 10 s
    // with the tab's first attempt, which times out at 1 s (before f, by the seed): the tab is
    // hidden, so the call pauses undecided. At f the AWS quota (capacity 5, 5 a retry after
    // an error, 10 after a timeout) judges the retry on the timeout: 10 > 5, denied. Judged
    // as an error it would go (5 ≤ 5).
    let b = Browser {
        hidden: 1.0,
        switch_mean: Some(SimDuration::from_secs(30)),
        when_hidden: WhenHidden::Pause,
        ..Browser::default()
    };
    let seed = seed_where(&b, |t| t.next_flip().unwrap().0 > S);
    let mut s = spec(1, Strategy::Fixed, SimDuration::from_secs(1), 0, b);
    s.seed = seed;
    s.overload.triggers.outages.clear();
    s.overload.timeout = Some(SimDuration::from_secs(1));
    s.server = Server::Capacity(Capacity::new(CapacityRule {
        workers: Some(1),
        service: Dist::Fixed(SimDuration::from_secs(10)),
        ..CapacityRule::default()
    }));
    s.controls.budget = crate::policy::control::Budget::AwsStandard {
        capacity: 5,
        cost: 5,
        timeout_cost: 10,
        success_increment: 1,
    };
    let (_, totals) = simulate_calls(&s);
    assert_eq!(
        (totals.attempts, totals.timed_out, totals.retries_denied),
        (1, 1, 1)
    );
    assert_eq!(totals.calls_failed, 1);
}

#[test]
fn a_call_slot_still_fits_the_48_bytes_the_memory_estimate_counts() {
    // config/memory.rs counts 48 B a call slot; the tab fields (outcome, charged) fit in it.
    assert!(
        std::mem::size_of::<Call>() <= 48,
        "{}",
        std::mem::size_of::<Call>()
    );
}
