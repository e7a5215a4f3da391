//! The herd paths worked out by hand, and checked against each other.

use super::client::{Client, NoWait, ReadWrite};
use super::{
    simulate, simulate_all_in, simulate_event_queue, simulate_independent, Event, Latency, Path,
    RunSpec, Work, CLIENTS_PER_BLOCK,
};
use crate::policy::Strategy;
use crate::server::{
    Down, FixedWindow, FixedWindowRule, HeaderStyle, Headers, Keying, Limited, Limiter, Server,
    Store, WindowStart,
};
use crate::time::{SimDuration, SimTime};

fn spec(strategy: Strategy, clients: u32, recover_at: Option<SimTime>) -> RunSpec {
    RunSpec::experiment1(clients, strategy, Server::Down(Down { recover_at }), 42)
}

#[test]
fn exponential_herd_lands_whole_at_1_3_7_15_seconds() {
    // Worked by hand: retry k arrives at Σ_{j<=k} 2^(j-1) s = 1, 3, 7, 15 s → windows
    // 10, 30, 70, 150 with a 100 ms bin.
    for path in [Path::EventQueue, Path::Independent] {
        let tally = simulate(&spec(Strategy::Exponential, 1000, None), path);
        let counts = tally.retries.counts();
        for (w, &c) in counts.iter().enumerate() {
            let expected = if [10, 30, 70, 150].contains(&w) {
                1000
            } else {
                0
            };
            assert_eq!(c, expected, "window {w} on {path:?}");
        }
        assert_eq!(tally.requests, 5000);
        assert_eq!(tally.refused, 5000);
        assert_eq!(tally.gave_up, 1000);
        assert_eq!(tally.succeeded, 0);
    }
}

#[test]
fn recovery_ends_the_retries_of_every_client_still_trying() {
    // Fixed 1 s: retries at 1, 2, 3, 4 s. Recovery at 2.5 s: retries 1 and 2 are refused,
    // retry 3 (t = 3 s) is served; nobody gives up; last success at 3 s.
    let t = simulate(
        &spec(Strategy::Fixed, 10, Some(SimTime(2_500_000_000))),
        Path::EventQueue,
    );
    assert_eq!(t.succeeded, 10);
    assert_eq!(t.gave_up, 0);
    assert_eq!(t.retries.total(), 30);
    assert_eq!(t.requests, 40);
    assert_eq!(t.refused, 30);
    assert_eq!(t.last_success, Some(SimTime(3_000_000_000)));
}

#[test]
fn events_are_as_small_as_documented() {
    use std::mem::size_of;
    assert_eq!(size_of::<Event<Client<NoWait>>>(), 24);
    assert_eq!(size_of::<Event<Client<SimDuration>>>(), 32);
    assert_eq!(size_of::<Event<Client<NoWait, ReadWrite>>>(), 32);
    assert_eq!(size_of::<Event<Client<SimDuration, ReadWrite>>>(), 40);
}

#[test]
fn both_paths_agree_for_every_strategy() {
    for strategy in Strategy::ALL {
        for recover in [None, Some(SimTime(5_000_000_000))] {
            let s = spec(strategy, 3 * CLIENTS_PER_BLOCK + 17, recover);
            assert_eq!(
                simulate_event_queue(&s),
                simulate_independent(&s),
                "{strategy} recover {recover:?}"
            );
        }
    }
}

#[test]
fn a_run_into_a_used_tally_counts_what_a_fresh_run_does() {
    // A tally of a longer run at a finer bin (15 000 windows, its clients more), then small
    // runs of every strategy into it, one after another, on each path (the event queue, and
    // the independent path's one block), and a limiter's herd whose clients interact: each
    // the same tally as the run on its own, and the first run's buffers kept throughout (a
    // run given a new tally would hold a small fraction of them).
    let mut first = spec(Strategy::Exponential, 40, None);
    first.bin = SimDuration::from_millis(1);
    let mut tally = simulate(&first, Path::Auto);
    assert_eq!(tally.retries.len(), 15_001);
    let held = tally.capacity_bytes();
    let mut runs = Vec::new();
    for strategy in Strategy::ALL {
        for recover in [None, Some(SimTime(5_000_000_000))] {
            for path in [Path::Independent, Path::EventQueue] {
                runs.push((spec(strategy, CLIENTS_PER_BLOCK.min(10), recover), path));
            }
        }
    }
    let mut limited = spec(Strategy::Exponential, 10, None);
    limited.server = fixed_window(3, 1, Store::Precise, HeaderStyle::WholeSeconds, 10);
    runs.push((limited, Path::Auto));
    for (s, path) in runs {
        let what = format!("{} against {:?} on {path:?}", s.policy.strategy, s.server);
        let (next, overload) = simulate_all_in(&s, path, tally);
        assert!(overload.is_none());
        assert_eq!(next, simulate(&s, path), "{what}");
        assert!(next.capacity_bytes() >= held, "{what}");
        tally = next;
    }
    // A run the shortcut does not take (more than a block) is simulate_all's.
    let s = spec(Strategy::Fixed, CLIENTS_PER_BLOCK + 1, None);
    assert_eq!(
        simulate_all_in(&s, Path::Auto, tally).0,
        simulate(&s, Path::Auto)
    );
}

fn fixed_window(
    limit: u32,
    window_s: u64,
    store: Store,
    style: HeaderStyle,
    per_address: u32,
) -> Server {
    Server::Limited(Limited {
        limiter: Limiter::FixedWindow(FixedWindow::new(FixedWindowRule {
            limit,
            window: SimDuration::from_secs(window_s),
            start: WindowStart::FirstHit,
            store,
        })),
        keying: Keying {
            clients_per_address: per_address,
        },
        headers: Headers {
            style,
            ..Headers::default()
        },
    })
}

#[test]
fn reset_aware_against_exact_headers_is_refused_once_per_window() {
    // One client, 100 items, 10 per 10 s (precise store, exact headers), 10 ms round trip.
    // Each window: 10 served at w, w+0.01, …, w+0.09; the 11th request (w+0.10) is refused
    // with the reset 9.9 s away; read 10 ms later, so the client sleeps 9.89 s and arrives
    // at exactly w+10 s, when the key is gone. Ten windows, the last needs no refusal:
    // 9 refusals, 109 requests, last answer at 90.09 + 0.01 = 90.1 s.
    let mut s = spec(Strategy::ResetAware, 1, None);
    s.server = fixed_window(10, 10, Store::Precise, HeaderStyle::Exact, 1);
    s.work = Work::Items(100);
    s.latency = Latency::Fixed(SimDuration::from_millis(10));
    s.policy.max_retries = 1000;
    let t = simulate(&s, Path::Auto);
    assert_eq!(t.refused, 9);
    assert_eq!(t.requests, 109);
    assert_eq!(t.succeeded, 100);
    assert_eq!(t.completed, 1);
    assert_eq!(t.last_finish, Some(SimTime(90_100_000_000)));
    assert_eq!(
        t.served_windows.total() + t.refused_windows.total(),
        t.requests
    );
}

#[test]
fn two_clients_behind_one_address_share_the_window_and_the_pool() {
    // Limit 3 per 10 s, one address, pool of 4, zero latency, exponential from 1 s.
    // t=0 in FIFO order: c0 served (1), c1 served (2), c0 served (3) and the pool is empty
    // so c0 finishes at 0; c1 refused. c1 retries at 1, 3, 7 s (refused: window until
    // 10 s, precise store) and 15 s (served). 4 served + 4 refused; finish 15 s, spread 15 s.
    let mut s = spec(Strategy::Exponential, 2, None);
    s.server = fixed_window(3, 10, Store::Precise, HeaderStyle::WholeSeconds, 2);
    s.work = Work::Pool(4);
    let t = simulate(&s, Path::Auto);
    assert_eq!((t.requests, t.refused, t.completed), (8, 4, 2));
    assert_eq!(t.first_finish, Some(SimTime::ZERO));
    assert_eq!(t.last_finish, Some(SimTime(15_000_000_000)));
    assert_eq!(
        t.client_finishes,
        Some(vec![Some(SimTime::ZERO), Some(SimTime(15_000_000_000))])
    );
    let refused_at: Vec<usize> = t
        .refused_windows
        .counts()
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(w, _)| w)
        .collect();
    assert_eq!(refused_at, [0, 10, 30, 70]);
    assert_eq!(t.retries.total(), 4);
}

#[test]
fn both_paths_agree_with_items_and_random_latency() {
    for strategy in [
        Strategy::FullJitter,
        Strategy::DecorrelatedJitter,
        Strategy::RetryAfter,
    ] {
        let mut s = spec(
            strategy,
            CLIENTS_PER_BLOCK + 5,
            Some(SimTime(3_000_000_000)),
        );
        s.work = Work::Items(3);
        s.latency = Latency::Uniform {
            low: SimDuration::from_millis(50),
            high: SimDuration::from_millis(150),
        };
        let queue = simulate_event_queue(&s);
        assert_eq!(queue, simulate_independent(&s), "{strategy}");
        assert_eq!(queue.completed + queue.gave_up, u64::from(s.clients));
    }
}
