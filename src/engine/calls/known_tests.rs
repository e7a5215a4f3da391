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

/// Runs `spec` writing figures only, with no window recorded (its answers counted at
/// admission), and on the server's own events; checks that every figure is the same and
/// returns the totals and whether the first run was redone on the server's events (it
/// handled as many events).
fn figures_only_both_ways(spec: &RunSpec) -> (OverloadTally, bool) {
    let mut s = spec.clone();
    s.overload.keep_windows = false;
    assert!(
        s.overload.trigger_end().is_none(),
        "a run that records no window"
    );
    let (tally, mut known) = simulate_calls(&s);
    let (events_tally, mut events) = simulate_calls_observed(&s, Watching);
    let redone = known.events == events.events;
    assert!(redone || known.events < events.events);
    (known.events, events.events) = (0, 0);
    assert_eq!(tally, events_tally);
    assert_eq!(known, events);
    (known, redone)
}

#[test]
fn figures_only_runs_count_answers_at_admission_to_the_same_figures() {
    let room = InFlightGuard {
        bytes: 1 << 40,
        per_call: 48,
        per_place: 16,
        blocks: u64::MAX,
    };
    let mut delayed = poisson_spec(Some(10), exp_ms(100), 150);
    delayed.overload.network = Some(NetworkDelay::Exp {
        mean: SimDuration::from_millis(5),
    });
    let mut round_trip = poisson_spec(Some(10), exp_ms(100), 150);
    round_trip.latency = crate::engine::Latency::Fixed(SimDuration::from_millis(20));
    let mut no_timeout = poisson_spec(Some(10), exp_ms(90), 150);
    no_timeout.overload.timeout = None;
    let mut herd = RunSpec::experiment1(
        20,
        Strategy::Naive,
        Server::Capacity(Capacity::new(CapacityRule {
            workers: Some(3),
            service: Dist::Fixed(SimDuration::from_secs(1)),
            ..CapacityRule::default()
        })),
        5,
    );
    herd.policy.max_retries = 2;
    herd.overload.timeout = Some(SimDuration::from_secs(3));
    let runs = [
        poisson_spec(Some(10), exp_ms(100), 150),
        poisson_spec(Some(10), exp_ms(120), 300),
        delayed,
        round_trip,
        no_timeout,
        herd,
    ];
    for (i, spec) in runs.into_iter().enumerate() {
        for guard in [InFlightGuard::UNGUARDED, room] {
            let mut s = spec.clone();
            s.overload.in_flight = guard;
            let (t, redone) = figures_only_both_ways(&s);
            assert!(!redone && t.outgrown.is_none(), "run {i}");
            assert!(t.calls_succeeded > 0, "run {i}");
            if i == 1 || i == 5 {
                assert!(t.late > 0 && t.timed_out > 0, "run {i}");
            }
        }
    }
}

/// The least room (bytes allowed) with which `stops(room)` is false, `stops` being true
/// below some room and false from it on.
fn least_room(mut stops: impl FnMut(u64) -> bool) -> u64 {
    if !stops(0) {
        return 0;
    }
    let (mut stopped, mut ran) = (0, 1);
    while stops(ran) {
        stopped = ran;
        ran *= 2;
    }
    while ran - stopped > 1 {
        let mid = stopped + (ran - stopped) / 2;
        if stops(mid) {
            stopped = mid;
        } else {
            ran = mid;
        }
    }
    ran
}

#[test]
fn a_guarded_figures_only_run_is_redone_wherever_the_events_might_stop_it() {
    // 96 % busy, and fully busy: queues and late answers build up, slots with them.
    let mut s = poisson_spec(Some(10), exp_ms(120), 120);
    s.overload.keep_windows = false;
    let mut s2 = poisson_spec(Some(10), exp_ms(125), 120);
    s2.overload.keep_windows = false;
    let mut looser = 0;
    for spec in [s, s2] {
        // Slots alone, queued requests alone, both.
        for (per_call, per_place) in [(1, 0), (0, 1), (3, 2)] {
            let guarded = |bytes: u64| {
                let mut g = spec.clone();
                g.overload.in_flight = InFlightGuard {
                    bytes,
                    per_call,
                    per_place,
                    blocks: u64::MAX,
                };
                g
            };
            // The least room the server's events run to the end in, and the least in which
            // the run counting answers at admission is not redone: its bound of what the
            // run holds is never below what the events hold.
            let truth = least_room(|b| {
                simulate_calls_observed(&guarded(b), Watching)
                    .1
                    .outgrown
                    .is_some()
            });
            let bound = least_room(|b| figures_only_both_ways(&guarded(b)).1);
            assert!(
                truth > 0 && bound >= truth,
                "{truth} > 0, {bound} >= {truth}"
            );
            looser += u32::from(bound > truth);
            for b in [truth - 1, truth, bound - 1, bound, 2 * bound] {
                let (t, redone) = figures_only_both_ways(&guarded(b));
                assert_eq!(t.outgrown.is_some(), b < truth, "room {b}");
                assert_eq!(redone, b < bound, "room {b}");
            }
        }
    }
    // Some bound was above the truth: a run the events finish was redone for nothing, and
    // its figures are still the events' (checked above at `bound - 1`).
    assert!(looser > 0);
}
