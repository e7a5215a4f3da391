//! Closed-loop clients on the call loop, checked by hand, against the closed system's
//! closed form (the machine-repairman model, M/M/1//N) and for the in-flight invariant,
//! which the loop checks after every event in a test build.

use super::*;
use crate::policy::Strategy;
use crate::server::{Capacity, CapacityRule};
use crate::workload::RateSchedule;

const S: u64 = 1_000_000_000;

fn closed_spec(
    clients: u32,
    rule: CapacityRule,
    closed: ClosedLoop,
    end_s: u64,
    rate: f64,
) -> RunSpec {
    let mut spec = RunSpec::experiment1(
        clients,
        Strategy::Naive,
        Server::Capacity(Capacity::new(rule)),
        7,
    );
    spec.policy.max_retries = 0;
    spec.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: rate,
        spikes: Vec::new(),
        end: SimTime(end_s * S),
    });
    spec.overload.closed = Some(closed);
    spec
}

/// The first arrival of process 0 of `spec`, drawn as the loop draws it.
fn first_arrival(spec: &RunSpec) -> SimTime {
    let Arrivals::Poisson(schedule) = &spec.overload.arrivals else {
        unreachable!()
    };
    let mut rng = ClientSeeds::starting_at(spec.seed, 0).next_rng();
    schedule
        .next_start(SimTime::ZERO, spec.clients, &mut rng)
        .expect("an arrival")
}

#[test]
fn one_client_by_hand() {
    // One worker, 1 s of service, think 0.5 s, load to 10 s, the first arrival t0 < 0.5 s
    // (rate 1000/s). K = 2: both calls start at t0, served t0..t0+1 and t0+1..t0+2; each
    // call ending at t0 + k starts the next at t0 + k + 0.5, which waits for the other
    // call's service to end at t0 + k + 1 and is served to t0 + k + 2: the worker is never
    // idle, a call ends at every t0 + k, and starts follow until t0 + k + 0.5 < 10, k <= 9:
    // 2 + 9 = 11 calls, latencies 1, 2 and nine of 1.5 (16.5 s).
    let rule = CapacityRule {
        workers: Some(1),
        service: Dist::Fixed(SimDuration::from_secs(1)),
        ..CapacityRule::default()
    };
    let think = Dist::Fixed(SimDuration(S / 2));
    let two = closed_spec(
        1,
        rule,
        ClosedLoop {
            in_flight: 2,
            think,
        },
        10,
        1000.0,
    );
    let t0 = first_arrival(&two);
    assert!(t0 < SimTime(S / 2), "{t0:?}");
    let (tally, t) = simulate_calls(&two);
    assert_eq!((t.calls, t.calls_succeeded, t.attempts), (11, 11, 11));
    assert_eq!(t.latency_sum_ns, 33 * u128::from(S) / 2);
    assert_eq!(tally.last_success, Some(t0 + SimDuration(11 * S)));
    assert_eq!(closed::LAST_PEAK.with(|p| p.get()), 2);
    // K = 1: a call of 1 s and 0.5 s of thought, starts at t0 + 1.5 j < 10: j <= 6, seven
    // calls of 1 s each, the last ending at t0 + 10.
    let one = closed_spec(
        1,
        rule,
        ClosedLoop {
            in_flight: 1,
            think,
        },
        10,
        1000.0,
    );
    let (tally, t) = simulate_calls(&one);
    assert_eq!((t.calls, t.calls_succeeded), (7, 7));
    assert_eq!(t.latency_sum_ns, 7 * u128::from(S));
    assert_eq!(tally.last_success, Some(t0 + SimDuration(10 * S)));
    assert_eq!(closed::LAST_PEAK.with(|p| p.get()), 1);
}

#[test]
fn no_client_passes_k_under_timeouts_retries_and_an_outage() {
    // 40 processes of at most 3 calls against two slow workers, a 300 ms timeout with
    // naive retries (calls end failed as well as served) and an outage: the loop checks
    // the live slots of every process after every event, and the peak reaches K.
    let rule = CapacityRule {
        workers: Some(2),
        service: Dist::Exp(SimDuration::from_millis(100)),
        ..CapacityRule::default()
    };
    let closed = ClosedLoop {
        in_flight: 3,
        think: Dist::Exp(SimDuration::from_millis(20)),
    };
    let mut spec = closed_spec(40, rule, closed, 20, 400.0);
    spec.policy.max_retries = 2;
    spec.overload.timeout = Some(SimDuration::from_millis(300));
    spec.overload.triggers.outages = vec![(SimTime(5 * S), SimTime(8 * S))];
    let (_, t) = simulate_calls(&spec);
    assert_eq!(closed::LAST_PEAK.with(|p| p.get()), 3);
    assert!(t.calls_failed > 0 && t.calls_succeeded > 0);
    assert_eq!(t.calls, t.calls_failed + t.calls_succeeded);
}

#[test]
fn ten_closed_clients_match_the_machine_repairman_closed_form() {
    // M/M/1//10: exponential thought of mean Z = 968.5 ms, one worker of Exp(100 ms).
    // With r = S/Z, p_n ∝ 10!/(10−n)! r^n; Z is the think time at which p_0 = 0.2 (the
    // server busy 80 % of the time, X = 8 calls/s), the mean response N/X − Z = 281.5 ms.
    // 2000 s: X within 3 %, the mean response within 5 % (sd of either below 1 %).
    let rule = CapacityRule {
        workers: Some(1),
        service: Dist::Exp(SimDuration::from_millis(100)),
        ..CapacityRule::default()
    };
    let closed = ClosedLoop {
        in_flight: 1,
        think: Dist::Exp(SimDuration(968_500_000)),
    };
    let spec = closed_spec(10, rule, closed, 2000, 8.0);
    let (_, t) = simulate_calls(&spec);
    let z: f64 = 0.9685;
    let r = 0.1 / z;
    let weights: Vec<f64> = (0..=10)
        .scan(1.0, |w, n| {
            let this = *w;
            *w *= f64::from(10 - n) * r;
            Some(this)
        })
        .collect();
    let p0 = 1.0 / weights.iter().sum::<f64>();
    let x = (1.0 - p0) / 0.1;
    let mean = 10.0 / x - z;
    assert!((p0 - 0.2).abs() < 1e-3, "{p0}");
    let throughput = t.calls_succeeded as f64 / 2000.0;
    assert!(
        (throughput / x - 1.0).abs() < 0.03,
        "{throughput} against {x}"
    );
    let got = t.latency_sum_ns as f64 / t.calls_succeeded as f64 / 1e9;
    assert!((got / mean - 1.0).abs() < 0.05, "{got} against {mean}");
    assert_eq!(closed::LAST_PEAK.with(|p| p.get()), 1);
}

#[test]
fn no_client_passes_k_behind_a_pool_of_servers() {
    // The same overloaded closed loop behind three servers, least-outstanding: calls end on
    // whichever server answered, and the live slots of every process are checked after every
    // event as before.
    let rule = CapacityRule {
        workers: Some(1),
        service: Dist::Exp(SimDuration::from_millis(100)),
        ..CapacityRule::default()
    };
    let closed = ClosedLoop {
        in_flight: 2,
        think: Dist::Exp(SimDuration::from_millis(20)),
    };
    let mut spec = closed_spec(20, rule, closed, 20, 200.0);
    spec.policy.max_retries = 2;
    spec.overload.timeout = Some(SimDuration::from_millis(300));
    spec.overload.pool = crate::server::Pool {
        servers: 3,
        balancer: crate::server::Balancer::LeastOutstanding,
        ..crate::server::Pool::default()
    };
    let (_, t) = simulate_calls(&spec);
    assert_eq!(closed::LAST_PEAK.with(|p| p.get()), 2);
    assert_eq!(t.calls, t.calls_failed + t.calls_succeeded);
    assert!(t.calls_succeeded > 0);
    assert_eq!(t.servers.len(), 3, "the pool routed the attempts");
}
