//! Answers known at arrival ([`super::known`]) give what the server's own events give: every
//! count, time and window of the series, with and without simultaneous events, delays,
//! outages and degradations, and a guarded run stops where the events stop it.

use super::*;
use crate::engine::{InFlightGuard, NetworkDelay};
use crate::policy::Strategy;
use crate::server::{Capacity, CapacityRule, Degrade, Triggers};
use crate::trace::Attempt;
use crate::workload::RateSchedule;

const S: u64 = 1_000_000_000;

/// An observer that sees every attempt: the run keeps the server's own events.
struct Watching;

impl Observer for Watching {
    const ON: bool = true;
    fn attempt(&mut self, _: &Attempt) {}
}

/// Runs `spec` both ways, checks that the known answers handled fewer events and that every
/// other figure is the same, and returns the totals.
fn same_both_ways(spec: &RunSpec) -> OverloadTally {
    let (tally, mut known) = simulate_calls(spec);
    let (events_tally, mut events) = simulate_calls_observed(spec, Watching);
    assert!(
        known.events < events.events,
        "the answers were known ({} events against {})",
        known.events,
        events.events
    );
    (known.events, events.events) = (0, 0);
    assert_eq!(tally, events_tally);
    assert_eq!(known, events);
    known
}

fn poisson_spec(workers: Option<u32>, service: Dist, seconds: u64) -> RunSpec {
    let rule = CapacityRule {
        workers,
        service,
        ..CapacityRule::default()
    };
    let mut s = RunSpec::experiment1(
        10,
        Strategy::FullJitter,
        Server::Capacity(Capacity::new(rule)),
        11,
    );
    s.policy.max_retries = 3;
    s.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: 80.0,
        spikes: Vec::new(),
        end: SimTime(seconds * S),
    });
    s.overload.timeout = Some(SimDuration::from_secs(1));
    s
}

fn exp_ms(ms: u64) -> Dist {
    Dist::Exp(SimDuration::from_millis(ms))
}

#[test]
fn poisson_load_near_the_knee_gives_the_same_run() {
    same_both_ways(&poisson_spec(Some(10), exp_ms(100), 300));
    // 96 % busy: some answers are late and some attempts time out, so every end is
    // exercised.
    let t = same_both_ways(&poisson_spec(Some(10), exp_ms(120), 300));
    assert!(t.late > 0 && t.timed_out > 0 && t.calls_succeeded > 0);
    let mut fine = poisson_spec(Some(10), exp_ms(100), 120);
    fine.overload.series_bin = SimDuration::from_millis(10);
    same_both_ways(&fine);
}

#[test]
fn delays_on_the_way_give_the_same_run() {
    let mut s = poisson_spec(Some(10), exp_ms(100), 200);
    s.overload.network = Some(NetworkDelay::Exp {
        mean: SimDuration::from_millis(5),
    });
    same_both_ways(&s);
    let mut s = poisson_spec(Some(10), exp_ms(100), 200);
    s.latency = crate::engine::Latency::Fixed(SimDuration::from_millis(20));
    same_both_ways(&s);
}

#[test]
fn outages_and_degradations_give_the_same_run() {
    let mut s = poisson_spec(Some(10), exp_ms(100), 200);
    s.overload.triggers = Triggers {
        outages: vec![(SimTime(50 * S), SimTime(60 * S))],
        degrades: vec![Degrade {
            from: SimTime(100 * S),
            to: SimTime(130 * S),
            factor: 0.5,
        }],
    };
    let t = same_both_ways(&s);
    assert!(t.refused > 0);
    same_both_ways(&poisson_spec(None, exp_ms(100), 100));
}

#[test]
fn simultaneous_answers_and_timeouts_give_the_same_run() {
    // A herd at t = 0 against fixed service times: completions, answers and timeouts fall
    // on the same instants (an answer at 3 s meets a timeout at 3 s, which comes first).
    let rule = CapacityRule {
        workers: Some(3),
        service: Dist::Fixed(SimDuration::from_secs(1)),
        ..CapacityRule::default()
    };
    let mut s = RunSpec::experiment1(
        20,
        Strategy::Naive,
        Server::Capacity(Capacity::new(rule)),
        5,
    );
    s.policy.max_retries = 2;
    s.overload.timeout = Some(SimDuration::from_secs(3));
    let t = same_both_ways(&s);
    assert!(t.late > 0 && t.timed_out > 0);
}

#[test]
fn a_guarded_run_stops_where_the_server_events_stop_it() {
    // The first window's load would fit; a backlog behind an outage does not.
    let mut s = poisson_spec(Some(10), exp_ms(100), 200);
    s.overload.triggers.degrades = vec![Degrade {
        from: SimTime(20 * S),
        to: SimTime(200 * S),
        factor: 0.25,
    }];
    s.overload.in_flight = InFlightGuard {
        bytes: 4_000,
        per_call: 48,
        per_place: 16,
        blocks: u64::MAX,
    };
    let (tally, known) = simulate_calls(&s);
    let (events_tally, events) = simulate_calls_observed(&s, Watching);
    assert!(known.outgrown.is_some());
    assert_eq!((tally, known), (events_tally, events));
    // With room enough, the guard never stops it, and the answers are known throughout.
    s.overload.in_flight.bytes = 1 << 40;
    let t = same_both_ways(&s);
    assert!(t.outgrown.is_none());
}
