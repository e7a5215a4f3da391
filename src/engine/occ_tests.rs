//! The `occ` server on the event queue, worked out by hand and in closed form.

use super::{simulate, NetworkDelay, Path, RunSpec, STUDY_NETWORK};
use crate::metrics::Histogram;
use crate::policy::{Backoff, Policy, Strategy};
use crate::server::{Occ, Server};
use crate::time::{SimDuration, SimTime};

const MS: u64 = 1_000_000;

fn occ(strategy: Strategy, clients: u32, network: NetworkDelay) -> RunSpec {
    RunSpec {
        network,
        ..RunSpec::new(
            clients,
            Policy {
                strategy,
                backoff: Backoff {
                    base: SimDuration::from_millis(10),
                    cap: SimDuration::from_secs(2),
                    multiplier: 2.0,
                    jitter_order: Default::default(),
                },
                max_retries: 1_000_000,
                retry_chance: crate::policy::RetryChance::ALWAYS,
            },
            Server::Occ(Occ::default()),
            SimDuration::from_millis(10),
            2015,
        )
    }
}

fn fixed(ms: u64) -> NetworkDelay {
    NetworkDelay::Fixed(SimDuration::from_millis(ms))
}

fn windows_with(h: &Histogram) -> Vec<(usize, u64)> {
    h.counts()
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(w, &c)| (w, c))
        .collect()
}

#[test]
fn two_clients_by_hand() {
    // Every message 10 ms, exponential from 10 ms. Both send their reads at 0; both reads
    // arrive at 10 ms and see version 0; both writes arrive at 30 ms. Client 0's was
    // scheduled first (FIFO), so it succeeds and bumps the version to 1; client 1's
    // carries version 0 and fails. Client 0 reads its answer at 40 ms and stops. Client 1
    // reads its failure at 40 ms, waits e_1 = 10 ms, reads again at 60 ms (version 1),
    // writes at 80 ms: nothing was written since, so it succeeds; answer at 90 ms.
    let t = simulate(&occ(Strategy::Exponential, 2, fixed(10)), Path::Auto);
    assert_eq!((t.requests, t.refused, t.succeeded), (3, 1, 2));
    assert_eq!(
        t.client_finishes,
        Some(vec![Some(SimTime(40 * MS)), Some(SimTime(90 * MS))])
    );
    assert_eq!(t.last_finish, Some(SimTime(90 * MS)));
    // 10 ms windows: the two writes at 30 ms (one served, one refused), the retry at 80.
    assert_eq!(windows_with(&t.served_windows), [(3, 1), (8, 1)]);
    assert_eq!(windows_with(&t.refused_windows), [(3, 1)]);
    assert_eq!(windows_with(&t.retries), [(8, 1)]);
    assert_eq!((t.first_retry, t.gave_up), (Some(SimTime(80 * MS)), 0));
}

#[test]
fn without_backoff_n_clients_take_n_rounds_of_one_success_each() {
    // Fixed delay d, no backoff: all writes of round k arrive together at 3d + 4d(k − 1)
    // (read d, answer d, write d; then answer d and straight back). The first of them in
    // queue order succeeds, the others read before it and fail. So round k sends
    // N − k + 1 writes: N(N + 1)/2 in all, N(N − 1)/2 failed, and client k (the k-th to
    // win) reads its answer at 4d(k + 1); the last at 4dN.
    let d = 7;
    for n in [1u64, 2, 3, 10, 57] {
        let t = simulate(&occ(Strategy::Naive, n as u32, fixed(d)), Path::EventQueue);
        assert_eq!(t.requests, n * (n + 1) / 2, "{n} clients");
        assert_eq!(t.refused, n * (n - 1) / 2, "{n} clients");
        assert_eq!(t.last_finish, Some(SimTime(4 * d * n * MS)), "{n} clients");
        let finishes = t.client_finishes.unwrap();
        for (k, f) in finishes.iter().enumerate() {
            assert_eq!(*f, Some(SimTime(4 * d * (k as u64 + 1) * MS)), "client {k}");
        }
    }
}

#[test]
fn exponential_without_jitter_keeps_the_herd_whole_and_only_adds_the_waits() {
    // The same rounds as without backoff (every loser has failed as often as the others,
    // so all wait alike): the same work, and the finish later by the waits between rounds,
    // e_1 + … + e_(N−1) with e_k = min(2 s, 10 ms · 2^(k−1)).
    let d = 10;
    for n in [2u64, 5, 12] {
        let t = simulate(
            &occ(Strategy::Exponential, n as u32, fixed(d)),
            Path::EventQueue,
        );
        assert_eq!(t.requests, n * (n + 1) / 2, "{n} clients");
        let waits: u64 = (1..n).map(|k| ((10 * MS) << (k - 1)).min(2000 * MS)).sum();
        assert_eq!(
            t.last_finish,
            Some(SimTime(4 * d * n * MS + waits)),
            "{n} clients"
        );
    }
}

#[test]
fn every_client_writes_once_successfully_and_every_other_write_failed() {
    // Conservation, with random delays and every strategy of the study: attempts =
    // clients + failed writes; the served histogram holds one write a client.
    for strategy in [
        Strategy::Naive,
        Strategy::Exponential,
        Strategy::FullJitter,
        Strategy::EqualJitter,
        Strategy::DecorrelatedJitter,
    ] {
        let n = 300;
        let t = simulate(&occ(strategy, n, STUDY_NETWORK), Path::Auto);
        assert_eq!(t.succeeded, u64::from(n), "{strategy}");
        assert_eq!(t.completed, u64::from(n), "{strategy}");
        assert_eq!(t.requests, u64::from(n) + t.refused, "{strategy}");
        assert_eq!(t.served_windows.total(), u64::from(n), "{strategy}");
        assert_eq!(t.refused_windows.total(), t.refused, "{strategy}");
        assert_eq!(t.retries.total(), t.refused, "{strategy}");
        assert!(t.refused > 0, "{strategy}: 300 clients always collide");
        assert_eq!(t.gave_up, 0);
    }
}

#[test]
fn a_client_out_of_retries_gives_up_after_reading_its_last_failure() {
    // Three clients, 10 ms messages, no backoff, one retry each: round 1 at 30 ms (client
    // 0 wins), round 2 at 70 ms (client 1 wins, client 2 fails its only retry and gives up
    // on reading the answer at 80 ms).
    let mut s = occ(Strategy::Naive, 3, fixed(10));
    s.policy.max_retries = 1;
    let t = simulate(&s, Path::Auto);
    assert_eq!(
        (t.requests, t.refused, t.gave_up, t.completed),
        (5, 3, 1, 2)
    );
    assert_eq!(
        t.client_finishes,
        Some(vec![
            Some(SimTime(40 * MS)),
            Some(SimTime(80 * MS)),
            Some(SimTime(80 * MS))
        ])
    );
}
