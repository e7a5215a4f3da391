//! The call loop checked against values worked out by hand and closed forms (M/M/1, M/D/1),
//! and for conservation of attempts and calls.

use super::*;
use crate::engine::NetworkDelay;
use crate::policy::Strategy;
use crate::server::{Capacity, CapacityRule, QueueOrder, Triggers};
use crate::workload::RateSchedule;

const S: u64 = 1_000_000_000;

fn spec(clients: u32, rule: CapacityRule, strategy: Strategy, retries: u32) -> RunSpec {
    let mut spec =
        RunSpec::experiment1(clients, strategy, Server::Capacity(Capacity::new(rule)), 7);
    spec.policy.max_retries = retries;
    spec
}

fn fixed(secs: u64) -> Dist {
    Dist::Fixed(SimDuration::from_secs(secs))
}

fn close(got: Option<u64>, exact_s: f64, rel: f64) -> bool {
    let got = got.expect("a quantile") as f64 / 1e9;
    (got - exact_s).abs() <= rel * exact_s
}

#[test]
fn two_workers_fifo_by_hand() {
    // Five clients at t = 0, 2 workers, 1 s each, FIFO, timeout 2.5 s, naive, 1 retry.
    // c0, c1 serve 0–1; c2, c3 1–2; c4 2–3, but its timeout fires at 2.5 (3 ≥ 2.5), so
    // the answer at 3 is late (1 s of abandoned work). Its retry is sent at 2.5 and finds
    // the second worker free (since 2): served 2.5–3.5. Latencies 1, 1, 2, 2, 1.
    let mut s = spec(
        5,
        CapacityRule {
            workers: Some(2),
            service: fixed(1),
            ..CapacityRule::default()
        },
        Strategy::Naive,
        1,
    );
    s.overload.timeout = Some(SimDuration(2_500_000_000));
    let (tally, t) = simulate_calls(&s);
    assert_eq!((t.calls, t.attempts, t.calls_succeeded), (5, 6, 5));
    assert_eq!((t.timed_out, t.late, t.refused, t.pending), (1, 1, 0, 0));
    assert_eq!(t.abandoned_work_ns, S);
    assert_eq!(t.latency_sum_ns, 7 * u128::from(S));
    // Events: 5 call starts, 1 retry send, and the first attempts' 5 arrivals (each sent
    // while the other starts at t = 0 were due, so through the queue) and 5 timeouts
    // (scheduled when sent, the answer not yet known; 4 find their attempt answered). The
    // server's answers are known at arrival, so no completion and no answer is an event
    // (`known`); the retry, sent at 2.5 with nothing else due then, arrives at once and is
    // answered at 3.5, before its timeout at 5, so none is scheduled: 5 + 1 + 5 + 5.
    assert_eq!(t.events, 16);
    // Nearest rank of 1, 1, 1, 2, 2: p50 the 3rd (1 s), p99 the 5th (2 s); sketch 0.4 %.
    assert!(close(t.latency_p50_ns, 1.0, 1.0 / 256.0));
    assert!(close(t.latency_p99_ns, 2.0, 1.0 / 256.0));
    let finishes: Vec<u64> = tally
        .client_finishes
        .unwrap()
        .iter()
        .map(|f| f.unwrap().as_nanos())
        .collect();
    assert_eq!(finishes, [S, S, 2 * S, 2 * S, 3 * S + S / 2]);
    // The series, window by window: (calls started, attempts, succeeded, timed out,
    // in system at the window's end).
    let rows: Vec<_> = t
        .rows
        .iter()
        .map(|r| {
            (
                r.window,
                r.calls_started,
                r.attempts,
                r.succeeded,
                r.timed_out,
                r.in_system,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (0, 5, 5, 0, 0, 5),
            (1, 0, 0, 2, 0, 3),
            (2, 0, 1, 2, 1, 2),
            (3, 0, 0, 1, 0, 0)
        ]
    );
    assert_eq!(tally.retries.total(), 1);
    assert_eq!(tally.requests, 6);
}

fn lifo_or_fifo(order: QueueOrder, cancels: bool) -> (Vec<u64>, OverloadTally) {
    let mut s = spec(
        4,
        CapacityRule {
            workers: Some(1),
            service: fixed(1),
            order,
            cancels,
            ..CapacityRule::default()
        },
        Strategy::Naive,
        0,
    );
    s.overload.timeout = Some(SimDuration(2_500_000_000));
    let (tally, t) = simulate_calls(&s);
    let finishes = tally
        .client_finishes
        .unwrap()
        .iter()
        .map(|f| f.unwrap().as_nanos())
        .collect();
    (finishes, t)
}

#[test]
fn lifo_serves_the_latest_first_by_hand() {
    // Four clients at t = 0, one worker, 1 s each, timeout 2.5 s, no retries.
    // FIFO: c0 0–1, c1 1–2 (served), c2 2–3 and c3 3–4 answer after their timeouts
    // (2.5 s): 2 s of abandoned work. LIFO: c0 0–1, then the last to arrive, c3, 1–2;
    // c2 2–3 and c1 3–4 are late. With --server-cancels the request still waiting at the
    // timeout (FIFO c3, LIFO c1) is dropped: 1 s of abandoned work.
    let half = 2 * S + S / 2;
    let (fifo, t) = lifo_or_fifo(QueueOrder::Fifo, false);
    assert_eq!(fifo, [S, 2 * S, half, half]);
    assert_eq!(
        (t.calls_succeeded, t.calls_failed, t.abandoned_work_ns),
        (2, 2, 2 * S)
    );
    let (lifo, t) = lifo_or_fifo(QueueOrder::Lifo, false);
    assert_eq!(lifo, [S, half, half, 2 * S]);
    assert_eq!(
        (t.calls_succeeded, t.abandoned_work_ns, t.dropped),
        (2, 2 * S, 0)
    );
    for order in QueueOrder::ALL {
        let (_, t) = lifo_or_fifo(order, true);
        // The one dropped is neither served nor refused: counted `dropped`.
        assert_eq!(
            (t.calls_succeeded, t.abandoned_work_ns, t.late, t.dropped),
            (2, S, 1, 1),
            "{order:?}"
        );
        // At 3 s (the end of window 2) one request is in service and the cancelled one
        // no longer counts; without cancelling both do.
        assert_eq!(t.rows[2].in_system, 1, "{order:?}");
        assert_eq!(lifo_or_fifo(order, false).1.rows[2].in_system, 2);
    }
}

fn poisson(rate: f64, duration_s: u64, service: Dist, seed: u64) -> OverloadTally {
    let mut s = spec(
        1,
        CapacityRule {
            workers: Some(1),
            service,
            ..CapacityRule::default()
        },
        Strategy::Naive,
        0,
    );
    s.seed = seed;
    s.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: rate,
        spikes: Vec::new(),
        end: SimTime(duration_s * S),
    });
    s.overload.series_bin = SimDuration::from_secs(3600);
    simulate_calls(&s).1
}

#[test]
fn m_m_1_sojourn_quantiles_match_the_closed_form() {
    // λ = 0.5/s, μ = 1/s: the sojourn time is Exponential(μ − λ = 0.5/s), so
    // p50 = ln 2 / 0.5 = 1.386 s, p99 = ln 100 / 0.5 = 9.210 s, mean 2 s.
    // About 500 000 calls. Independent samples would give the median an sd of
    // sqrt(0.25 / n) / f(p50) = 0.0028 s (0.2 %) and p99 sqrt(0.0099 / n) / f(p99) =
    // 0.028 s (0.3 %); successive sojourns in one busy period are correlated, which at
    // ρ = 0.5 (relaxation time 1 / (μ(1 − √ρ)²) ≈ 12 s, about 6 calls) inflates the
    // variance by at most ~25 (sd ×5): 1 % and 1.5 %. Tolerances of 4 % and 6 % are 4 sd,
    // plus the sketch's 0.4 %.
    let t = poisson(0.5, 1_000_000, Dist::Exp(SimDuration::from_secs(1)), 11);
    assert!(t.calls > 490_000, "{}", t.calls);
    assert_eq!(t.calls_succeeded, t.calls);
    let p50 = 2.0 * std::f64::consts::LN_2;
    let p99 = 2.0 * 100f64.ln();
    assert!(close(t.latency_p50_ns, p50, 0.04), "{:?}", t.latency_p50_ns);
    assert!(close(t.latency_p99_ns, p99, 0.06), "{:?}", t.latency_p99_ns);
    let mean = t.latency_sum_ns as f64 / t.calls_succeeded as f64 / 1e9;
    assert!((mean - 2.0).abs() < 0.08, "{mean}");
}

#[test]
fn m_d_1_mean_wait_matches_pollaczek_khinchine() {
    // λ = 0.5/s, service exactly 1 s (ρ = 0.5): Pollaczek–Khinchine gives the mean wait
    // W_q = ρ / (2μ(1 − ρ)) = 0.5 s, so the mean sojourn is 1.5 s. Over 500 000 calls the
    // correlated sample mean has an sd well under 1 %; allow 3 %.
    let t = poisson(0.5, 1_000_000, fixed(1), 12);
    let mean = t.latency_sum_ns as f64 / t.calls_succeeded as f64 / 1e9;
    assert!((mean - 1.5).abs() < 0.045, "{mean}");
    // Nobody waits less than the service time.
    assert!(t.latency_p50_ns.unwrap() as f64 >= 1e9 * (1.0 - 1.0 / 256.0));
}

#[test]
fn every_attempt_and_every_call_is_accounted_for() {
    // A busy mix: Poisson with a spike, 3 workers, a queue of 5 with Retry-After on sheds,
    // slowdown, exponential service, network delay, an outage, a degradation, a timeout,
    // retries; every strategy, with and without cancelling.
    for strategy in Strategy::every() {
        for cancels in [false, true] {
            let mut s = spec(
                7,
                CapacityRule {
                    workers: Some(3),
                    service: Dist::Exp(SimDuration::from_millis(80)),
                    slowdown: SimDuration::from_millis(5),
                    queue: Some(5),
                    shed_retry_after: Some(SimDuration::from_millis(300)),
                    order: QueueOrder::Lifo,
                    cancels,
                },
                strategy,
                3,
            );
            s.policy.backoff.base = SimDuration::from_millis(100);
            s.overload.arrivals = Arrivals::Poisson(RateSchedule {
                base: 30.0,
                spikes: vec![crate::workload::Spike {
                    from: SimTime(10 * S),
                    to: SimTime(15 * S),
                    rate: 90.0,
                }],
                end: SimTime(40 * S),
            });
            s.overload.timeout = Some(SimDuration::from_millis(400));
            s.overload.network = Some(NetworkDelay::Exp {
                mean: SimDuration::from_millis(20),
            });
            s.overload.triggers = Triggers {
                outages: vec![(SimTime(20 * S), SimTime(22 * S))],
                degrades: vec![crate::server::Degrade {
                    from: SimTime(25 * S),
                    to: SimTime(30 * S),
                    factor: 0.5,
                }],
            };
            let (tally, t) = simulate_calls(&s);
            assert_eq!(t.pending, 0);
            assert_eq!(
                t.attempts,
                t.calls_succeeded + t.timed_out + t.refused,
                "{strategy} {cancels}"
            );
            assert_eq!(t.calls, t.calls_succeeded + t.calls_failed);
            assert!(t.timed_out > 0 && t.refused > 0 && t.calls > 800);
            let sum = |f: fn(&crate::series::SeriesRow) -> u64| t.rows.iter().map(f).sum::<u64>();
            assert_eq!(sum(|r| r.calls_started), t.calls);
            assert_eq!(sum(|r| r.attempts), t.attempts);
            assert_eq!(sum(|r| r.succeeded), t.calls_succeeded);
            assert_eq!(sum(|r| r.timed_out), t.timed_out);
            assert_eq!(sum(|r| r.refused), t.refused);
            assert_eq!(t.rows.last().unwrap().in_system, 0);
            assert_eq!(
                (tally.completed, tally.gave_up),
                (t.calls_succeeded, t.calls_failed)
            );
            assert_eq!(tally.refused, t.refused);
            assert!(tally.requests <= t.attempts);
            // Same spec, same bytes.
            assert_eq!(simulate_calls(&s), (tally, t));
        }
    }
}

/// A herd of `clients` calls, each retrying at once up to `retries` times, against a
/// server failing with probability `x`, over a 10 ms network each way.
fn flaky(clients: u32, x: f64, retries: u32, seed: u64) -> OverloadTally {
    let mut s = spec(clients, CapacityRule::default(), Strategy::Naive, retries);
    s.server = Server::Flaky(crate::server::Flaky::new(x));
    s.seed = seed;
    s.overload.network = Some(NetworkDelay::Fixed(SimDuration::from_millis(10)));
    simulate_calls(&s).1
}

#[test]
fn flaky_attempts_and_success_follow_the_closed_forms() {
    // With N retries and independent failures of probability x, a call's attempts A are
    // min(G, N + 1) for G geometric with success 1 − x: P(A ≥ k) = x^(k−1), so
    // E[A] = Σ_{k=0..N} x^k and E[A²] = Σ_{k=1..N+1} (2k − 1) x^(k−1); the call succeeds
    // with probability 1 − x^(N+1). Calls are independent, so over n calls the means have
    // sd sqrt(Var / n); allow 5 sd (a false alarm about once in 1.7 million per check).
    let n = 100_000u32;
    for (x, retries, seed) in [
        (0.1, 3, 1),
        (0.5, 3, 2),
        (0.9, 3, 3),
        (0.3, 0, 4),
        (0.7, 6, 5),
    ] {
        let t = flaky(n, x, retries, seed);
        assert_eq!(t.calls, u64::from(n));
        let mean: f64 = (0..=retries).map(|k| x.powi(k as i32)).sum();
        let square: f64 = (1..=retries + 1)
            .map(|k| f64::from(2 * k - 1) * x.powi(k as i32 - 1))
            .sum();
        let sd = ((square - mean * mean) / f64::from(n)).sqrt();
        let attempts = t.attempts as f64 / f64::from(n);
        assert!(
            (attempts - mean).abs() <= 5.0 * sd,
            "x {x}: {attempts} vs {mean} ± {sd}"
        );
        let success = 1.0 - x.powi(retries as i32 + 1);
        let sd = (success * (1.0 - success) / f64::from(n)).sqrt();
        let got = t.calls_succeeded as f64 / f64::from(n);
        assert!(
            (got - success).abs() <= 5.0 * sd,
            "x {x}: {got} vs {success} ± {sd}"
        );
        // Every failed attempt is a refusal, every call ends.
        assert_eq!(t.attempts, t.calls_succeeded + t.refused);
        assert_eq!(t.calls, t.calls_succeeded + t.calls_failed);
    }
    // The edges are exact: never failing is one attempt a call; always failing is N + 1
    // attempts and no success.
    let t = flaky(1000, 0.0, 3, 6);
    assert_eq!((t.attempts, t.calls_succeeded), (1000, 1000));
    let t = flaky(1000, 1.0, 3, 7);
    assert_eq!((t.attempts, t.calls_succeeded, t.refused), (4000, 0, 4000));
}

#[test]
fn budgets_bound_the_retries_of_an_always_failing_server() {
    // One call a process, retrying at once up to 1000 times against a server that always
    // fails, each process with its own budget. By hand: the token bucket starts with 5
    // tokens (5 retries, the 6th denied); gRPC's 10 tokens fall by 1 a failure and the
    // retry after the 5th (5 ≤ 10/2) is denied; the AWS quota pays 100 retries of 5; Envoy
    // bounds concurrent retries (one at a time here, below its floor of 3), not their
    // number; Finagle's reserve is 100 withdrawals and the call's deposit (1000) is a fifth
    // of one more.
    for (budget, attempts, denied) in [
        ("token-bucket", 6, 1),
        ("grpc", 5, 1),
        ("aws-standard", 101, 1),
        ("envoy", 1001, 0),
        ("finagle", 101, 1),
    ] {
        let mut s = spec(3, CapacityRule::default(), Strategy::Naive, 1000);
        s.server = Server::Flaky(crate::server::Flaky::new(1.0));
        s.controls.budget = crate::policy::control::Budget::parse(budget).unwrap();
        let (_, t) = simulate_calls(&s);
        assert_eq!(
            (t.attempts, t.retries_denied, t.calls_failed),
            (3 * attempts, 3 * denied, 3),
            "{budget}"
        );
        assert_series_keeps_the_control_books(&t);
    }
}

/// The series counts every denied retry and every local rejection once, in some window:
/// its columns sum to the totals.
fn assert_series_keeps_the_control_books(t: &OverloadTally) {
    let sum = |get: fn(&crate::series::SeriesRow) -> u64| t.rows.iter().map(get).sum::<u64>();
    assert_eq!(sum(|r| r.retries_denied), t.retries_denied);
    assert_eq!(sum(|r| r.rejected_locally), t.calls_rejected_locally);
    assert_eq!(sum(|r| r.calls_started), t.calls);
}

#[test]
fn breakers_and_throttles_reject_calls_locally_and_keep_the_books() {
    // A server that always fails, 5 processes of Poisson calls (50/s in all, 20 s), 3 retries
    // at once. The classic breaker opens after its first 20 failed calls and then lets one
    // trial through every 5 s; the SRE throttle rejects most attempts once accepts are 0.
    // Every call ends succeeded or failed, every attempt sent is answered, and the locally
    // rejected calls sent nothing more.
    let run = |breaker: &str, throttle: &str| {
        let mut s = spec(5, CapacityRule::default(), Strategy::Naive, 3);
        s.server = Server::Flaky(crate::server::Flaky::new(1.0));
        s.overload.arrivals = Arrivals::Poisson(RateSchedule {
            base: 50.0,
            spikes: Vec::new(),
            end: SimTime(20 * S),
        });
        s.controls.breaker = crate::policy::control::Breaker::parse(breaker).unwrap();
        s.controls.throttle = crate::policy::control::Throttle::parse(throttle).unwrap();
        let t = simulate_calls(&s).1;
        assert_eq!(t.calls, t.calls_succeeded + t.calls_failed);
        assert_eq!(t.attempts, t.refused);
        assert_eq!(t.calls_succeeded, 0);
        assert!(simulate_calls(&s).1 == t, "deterministic");
        assert_series_keeps_the_control_books(&t);
        t
    };
    let free = run("none", "none");
    assert_eq!(free.attempts, 4 * free.calls);
    assert_eq!(free.calls_rejected_locally, 0);
    let broken = run("calls", "none");
    // Per process: 20 calls reach the server before it opens (4 attempts each), then one
    // trial call (4 attempts) each 5 s: at most 20 + 4 trials per process over 20 s.
    assert!(broken.attempts <= 5 * 4 * (20 + 4), "{}", broken.attempts);
    assert_eq!(
        broken.calls_rejected_locally,
        broken.calls - broken.attempts / 4
    );
    let throttled = run("none", "sre");
    assert!(throttled.calls_rejected_locally > throttled.calls / 2);
    assert!(throttled.attempts < free.attempts / 2);
}

#[test]
fn an_outage_on_a_flaky_server_refuses_then_its_draws_decide() {
    // Never failing on its own, out over [0, 3 s), fixed 1 s waits: as the down server
    // recovering at 3 s, requests at 0, 1, 2 s are refused and the one at 3 s served.
    let mut s = spec(2, CapacityRule::default(), Strategy::Fixed, 5);
    s.server = Server::Flaky(crate::server::Flaky::new(0.0));
    s.overload.triggers.outages = vec![(SimTime::ZERO, SimTime(3 * S))];
    let (tally, t) = simulate_calls(&s);
    assert_eq!((t.refused, t.calls_succeeded, t.attempts), (6, 2, 8));
    assert_eq!(tally.last_success, Some(SimTime(3 * S)));
}

#[test]
fn an_outage_on_the_down_server_refuses_then_lets_through() {
    // Down recovering at 0 (always serving), an outage over [0, 3 s), fixed 1 s waits:
    // requests at 0, 1, 2 s are refused, the one at 3 s served.
    let mut s = spec(2, CapacityRule::default(), Strategy::Fixed, 5);
    s.server = Server::Down(crate::server::Down {
        recover_at: Some(SimTime::ZERO),
    });
    s.overload.triggers.outages = vec![(SimTime::ZERO, SimTime(3 * S))];
    let (tally, t) = simulate_calls(&s);
    assert_eq!((t.refused, t.calls_succeeded, t.attempts), (6, 2, 8));
    assert_eq!(tally.last_success, Some(SimTime(3 * S)));
    assert_eq!(t.recovered_at, Some(SimTime(3 * S)));
}

#[test]
fn aws_adaptive_paces_retries_after_a_shed_by_hand() {
    // One worker busy for 1000 s, no queue: process 0's call holds it, process 1's attempts
    // are shed (throttling) at once; naive retries, 3 of them, zero latency. By hand
    // (botocore's arithmetic, `adaptive.rs`): the shed at 0 turns the limiter on with rate
    // 0.7 × measured 0 = 0, so the bucket (empty) fills at its 0.5/s floor: the retry waits
    // 2 s. At 2 s the clock measures 0.8/s, the rate is 0.7 × min(0.8, 0.5) = 0.35, the floor
    // again: 2 s more, and so on: retries sent at 2, 4 and 6 s. Without the throttle all
    // three go at 0 s.
    let rule = CapacityRule {
        workers: Some(1),
        service: fixed(1000),
        queue: Some(0),
        ..CapacityRule::default()
    };
    let mut s = spec(2, rule, Strategy::Naive, 3);
    let free = simulate_calls(&s);
    assert_eq!(free.0.last_retry, Some(SimTime::ZERO));
    s.controls.throttle = crate::policy::control::Throttle::parse("aws-adaptive").unwrap();
    let (tally, t) = simulate_calls(&s);
    assert_eq!(tally.first_retry, Some(SimTime(2 * S)));
    assert_eq!(tally.last_retry, Some(SimTime(6 * S)));
    assert_eq!((t.attempts, t.refused, t.calls_succeeded), (5, 4, 1));
    // A wait is not a local rejection.
    assert_eq!(t.calls_rejected_locally, 0);
    assert_eq!((t.calls, t.calls_failed), (2, 1));
}

#[test]
fn aws_adaptive_stays_off_against_a_flaky_server() {
    // The flaky server's 503s are not throttling errors: the limiter never turns on, and
    // the run is the run without it, draw for draw.
    let mut s = spec(200, CapacityRule::default(), Strategy::FullJitter, 3);
    s.server = Server::Flaky(crate::server::Flaky::new(0.5));
    s.overload.network = Some(NetworkDelay::Fixed(SimDuration::from_millis(10)));
    let free = simulate_calls(&s);
    s.controls.throttle = crate::policy::control::Throttle::parse("aws-adaptive").unwrap();
    assert_eq!(simulate_calls(&s), free);
    assert!(free.1.refused > 100);
}

#[test]
fn a_run_recording_fewer_windows_counts_what_one_recording_all_counts() {
    // Runs that fold their windows: known answers (Poisson against an unlimited FIFO queue),
    // the server's own events (a limited LIFO queue shedding, a herd), a flaky server over a
    // network, a retry budget; each without a trigger (no window recorded) and with an
    // outage (windows folded into the verdict without their latencies). Every total and
    // tally figure equals that of the same run folding every window with its latencies, and
    // of the run keeping its windows but for its rows.
    let poisson = |s: &mut RunSpec| {
        s.overload.arrivals = Arrivals::Poisson(RateSchedule {
            base: 20.0,
            spikes: Vec::new(),
            end: SimTime(60 * S),
        });
        s.overload.timeout = Some(SimDuration::from_millis(300));
    };
    let exp = Dist::Exp(SimDuration::from_millis(70));
    let mut known = spec(
        6,
        CapacityRule {
            workers: Some(3),
            service: exp,
            ..CapacityRule::default()
        },
        Strategy::FullJitter,
        3,
    );
    poisson(&mut known);
    let mut shedding = spec(
        6,
        CapacityRule {
            workers: Some(2),
            service: exp,
            queue: Some(3),
            order: QueueOrder::Lifo,
            ..CapacityRule::default()
        },
        Strategy::Exponential,
        4,
    );
    poisson(&mut shedding);
    let mut herd = shedding.clone();
    herd.clients = 300;
    herd.overload.arrivals = Arrivals::Herd;
    let mut flaky = spec(9, CapacityRule::default(), Strategy::Naive, 3);
    flaky.server = Server::Flaky(crate::server::Flaky::new(0.4));
    flaky.overload.network = Some(NetworkDelay::Fixed(SimDuration::from_millis(10)));
    poisson(&mut flaky);
    let mut budgeted = known.clone();
    budgeted.controls.budget = crate::policy::control::Budget::parse("token-bucket").unwrap();
    let mut verdicts = 0;
    for (name, plain) in [
        ("known", known),
        ("shedding", shedding),
        ("herd", herd),
        ("flaky", flaky),
        ("budgeted", budgeted),
    ] {
        let mut triggered = plain.clone();
        triggered.overload.triggers = Triggers {
            outages: vec![(SimTime(20 * S), SimTime(22 * S))],
            degrades: Vec::new(),
        };
        for (mut s, trigger) in [(plain, false), (triggered, true)] {
            let name = format!("{name}, trigger {trigger}");
            let (full_tally, full) = simulate_calls(&s);
            s.overload.keep_windows = false;
            let (tally, totals) = run_untraced::<SeriesBuilder>(&s);
            let fewer = match trigger {
                false => run_untraced::<windows::NoWindows>(&s),
                true => run_untraced::<windows::Folded>(&s),
            };
            assert_eq!((&fewer.0, &fewer.1), (&tally, &totals), "{name}");
            assert_eq!(simulate_calls(&s), fewer, "{name}");
            assert!(
                totals.calls > 100 && totals.attempts > totals.calls,
                "{name}"
            );
            assert!(!full.rows.is_empty() && totals.rows.is_empty(), "{name}");
            assert_eq!(totals.trigger_end.is_some(), trigger, "{name}");
            verdicts += u32::from(totals.recovered_at.is_some());
            assert_eq!(
                totals,
                OverloadTally {
                    rows: Vec::new(),
                    ..full
                },
                "{name}"
            );
            assert_eq!(
                (tally.requests, tally.completed, tally.last_finish),
                (
                    full_tally.requests,
                    full_tally.completed,
                    full_tally.last_finish
                ),
                "{name}"
            );
        }
    }
    assert!(verdicts > 0, "some runs recovered from their outage");
}
