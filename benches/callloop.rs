//! The call loop against its limits, in attempts per second, on one scenario: 10 client
//! processes starting Poisson calls at 80/s in all, a capacity server of 10 workers of
//! Exp(100 ms) (80 % busy, first come first served, unlimited queue), a 1 s timeout, up to 3
//! full-jitter retries (base 1 s, cap 30 s), no network delay; 10^6 attempts (12 500 s).
//! - `engine`: herd-sim's call loop ([`simulate_calls`]), everything it counts.
//! - `engine_figures`: the same run writing figures only, as a sweep's row or a table report
//!   runs it: its windows folded, so, with no trigger to judge recovery after, none recorded.
//!   Checked here to count what `engine` counts, its rows aside. Unguarded, as the reference.
//! - `engine_figures_guarded`: the same figures-only run with the in-flight guard on, as every
//!   plain run and sweep row has it (a budget it stays well within: the guard's bookkeeping,
//!   never its refusal). Checked here to count what `engine` counts.
//! - `reference`: a minimal program of the same model written for speed
//!   (`common/callloop_reference.rs`): the limit. Checked here to give the same numbers.
//!   Since this round it has no general event queue (a lane for each kind of event: the
//!   processes' next starts, the timeouts in the order they are due, a heap of retries) and
//!   draws its starts with the schedule's arithmetic inline, so the limit moved up.
//! - `heapq_peer`: the same model as a plain-Python heapq program
//!   (`scripts/peers/callloop_heapq.py`, agreeing within noise: its `--check`), run as a
//!   process on 2.5 × 10^5 attempts, timed by itself (skipped without python3).
//!
//! Run: cargo bench --features bench --bench callloop -- --warm-up-time 1 --measurement-time 3
//! and compare the throughputs of the same run (docs/performance.md).
//!
//! What each change to the call loop bought, `engine` in attempts/s on the 2-core machine
//! (each step measured against the one before in one sitting; every output byte the same,
//! `scripts/same-output.sh`):
//! - before: 3.07 M/s (reference 9.22 M/s, peer 0.30 M/s).
//! - the queue's lane for events at the current time (no binary search and shift of the
//!   run for an arrival or answer with no delay): 3.34 M/s, +9 %.
//! - quantiles and clears of the latency sketch over its used buckets only (a window's 80
//!   latencies span a few hundred of its 8 192): 3.64 M/s, +9 %.
//! - an inline exact `round` for each exponential draw (no library call): 3.76 M/s, +3 %.
//!
//! Then, counted in instructions, repeatable where wall time on the shared machine is not:
//! `simulate_calls` inclusive under `valgrind --tool=callgrind target/release/herd-sim
//! --clients 10 --server capacity --arrivals poisson --rate 80/s --duration 1250s --retries 3
//! --workers 10 --service-time exp:100ms --timeout 1s --strategy full-jitter --format json`
//! (this scenario at 10^5 attempts): 205.2 M before,
//! - a window's p50 and p99 selected from its few dozen latencies instead of scanning and
//!   clearing the ~2 200 sketch buckets between its shortest and longest: 181.7 M, -11.5 %.
//! - an arrival or an answer with no delay handled straight after the event that caused it
//!   when nothing else is due then, without the queue: 171.7 M, -5.5 %.
//! - no timeout scheduled for an attempt reaching a free worker at once and answered before
//!   its timeout: 158.2 M, -7.9 %.
//!
//! Later, the same count on main after pools, closed loops and the in-flight guard landed:
//! 180.8 M, then
//! - a run of at most 8 pending events that a push lands inside, and a bucket of at most 8
//!   taken into the run, sorted by insertion (no search and library move, no sort of keys;
//!   the bench's runs are a few events long): 172.4 M, -4.7 %.
//! - the answer's scheduling inlined where a request completes, and only the closed loop's
//!   test inlined where a call ends (its handler, out of line, no longer called on every
//!   call of an open run): 162.8 M, -5.6 %.
//!
//! One run of all three after them, on the loaded machine: engine 0.95 M attempts/s,
//! reference 1.81 M/s (1.9× the engine, was 2.45×), peer 0.052 M/s (engine 18×, reference
//! 35×); 4.41 events handled an attempt.
//!
//! One run after the two changes above and the reference's lanes (docs/performance.md
//! quotes it), on the quiet machine: engine 5.26 M attempts/s, reference 13.6 M/s (2.6× the
//! engine), peer 0.275 M/s (engine 19×, reference 49×); 4.41 events handled an attempt.
//!
//! Then the reference's own shortcut, in the engine: the same count on main, 161.1 M, then
//! - a first-come first-served server's answers known at arrival (`engine::calls::known`):
//!   no completion and no answer is an event; when a request leaves the server and when its
//!   answer is read are reached in time order between events (the series' windows close at
//!   them as at the events), a timeout is scheduled only for an answer that will be late:
//!   136.8 M, -15 %; 1.00 event handled an attempt (was 4.41).
//! - inlining the test for ends and the success's accounting where they are reached: 140.4 M
//!   against 138.1 M for the same code without (on main after the tally's plain totals),
//!   +1.7 %, so not kept.
//!
//! One run after the known answers (docs/performance.md quotes it), on the loaded machine
//! (other builds holding both cores): engine 1.25 M attempts/s, reference 2.10 M/s (1.68×
//! the engine), peer 0.0574 M/s (engine 21.8×, reference 36.6×); 1.00 event an attempt.
//!
//! Then the per-attempt work the reference does not do, the same count (`run_calls`
//! inclusive, as `simulate_calls` is inlined into it; 100 071 attempts) on main, 145.2 M
//! (1 451 an attempt), then
//! - the known answers' ends in a binary heap of their own on times alone (ends at one
//!   instant change the same whichever goes first), instead of `BinaryHeap` comparing
//!   (time, what) pairs: 139.1 M, -4.2 % (push and pop 179 instructions an attempt to 122).
//! - the workers' free times in a heap of their own whose top sinks in place (not
//!   `BinaryHeap`'s `PeekMut`), a cursor for the completions' windows (no division past the
//!   exact limit), no per-server counts or balancing with one server (reported only for a
//!   pool), the tally's `earliest` inlined: 133.7 M, -3.9 % (1 337 an attempt).
//! - whether the run has retry controls kept as a flag (asked at every start, send and end,
//!   it was two loads and tests of the controls' states): 131.8 M, -1.5 % (1 317 an
//!   attempt).
//!
//! In the bench's own build (thin LTO, one codegen unit), callgrind over the bench's setup
//! (`valgrind --tool=callgrind` on the bench binary with a filter matching no bench, which
//! still runs both loops once at 10^6 attempts): the engine's `run_calls` 1 295 instructions
//! an attempt after the changes above (1 316 before the controls' flag), the reference's
//! `run` 661: 1.96× the reference's instructions. One run after them (`cargo bench
//! --features bench --bench callloop -- --warm-up-time 1 --measurement-time 3`, load
//! average 11 to 13 from other builds on the two cores): engine 0.528 M attempts/s (1.89 s,
//! interval 1.69 to 2.13 s), reference 1.43 M/s (0.699 s, 0.643 to 0.744 s), 2.71× the
//! engine's time; peer 0.0829 M/s (engine 6.4×, reference 17.2×). Under that load the
//! intervals span ±10 to 30 % and the three moved apart: against the run above the engine
//! ran 2.4 times slower, the reference 1.5 times, the peer 1.4 times faster. The
//! instructions, which the load does not change, say the engine's work an attempt is 9 %
//! less than before these changes (1 451 to 1 317 in the release binary); the wall ratio
//! of this run is the machine's, and the 1.5× goal is judged on the lead's quiet rerun.
//!
//! Then at the bench's own length, where the tally's windows outrun its dense vector (12 500 s
//! of 100 ms windows): `run_calls` inclusive under `valgrind --tool=callgrind
//! target/release/herd-sim` with the command above at `--duration 12500s` (999 574
//! attempts), 1 352.6 M on main (1 353 an attempt), then
//! - the tally's histograms count a window of the block written last inline, without the
//!   call that finds its block (every served request's count past the dense windows made
//!   it): 1 328.5 M, -1.8 % (1 329 an attempt).
//! - a window cursor that misses steps to the next or the previous window by a bin instead of
//!   dividing (the completions' cursor, whose times go back and forth across a window's
//!   end, divided for nearly every request: 11.2 M), and a window's p50 chosen by a
//!   quickselect of its own, its p99 of at most 100 latencies (their largest) by one pass
//!   (25.4 M against the library's selection's 30.2 M): 1 320.9 M, -0.6 % (1 321 an attempt).
//!
//! In the bench's own build, callgrind over its setup as above (999 574 attempts): `run_calls`
//! 1 298.6 M on main just before these two changes (1 299 an attempt), 1 264.7 M after them
//! (1 265 an attempt, -2.6 %); the reference's `run` 658.9 M (659): 1.92× the reference's
//! instructions, against the 1.5× wanted (about 990 an attempt).
//!
//! Then what a run records, by what reads it (`engine::calls::windows`, a type parameter of
//! the loop): a run that writes figures only (a sweep's row, and so the tuner's and the
//! boundary search's; a table report) folds its windows, and now records only what its
//! figures read. Without a trigger to judge recovery after (its verdict is none whatever its
//! windows say) it records no window: none counted into, tested for its end or closed, and
//! no completion's window found for the tally, which folds. With one, its windows are folded
//! into the verdict without their latencies (no figure reads a folded window's p50 or p99).
//! In the bench's own build, callgrind over its setup as above, on main just before (after
//! the queue's chunked store, 1 279.1 M): `engine` 1 279.5 M after (the queue's pop, refill
//! and small sort now inlined into each of the loop's instances: left to the compiler, a
//! second instance put them out of line and cost the full run 18 an attempt), and
//! `engine_figures` 1 170.5 M (1 171 an attempt, -8.5 %): 1.78× the reference's 658.9 M, the
//! reference computing no more than it does. On the bench binary's `target/release/herd-sim`
//! (`run_calls` inclusive, the command above at `--duration 12500s`, every output byte the
//! same): `--format table` 1 288.7 M to 1 200.4 M (-6.9 %; the in-flight guard on, as every
//! plain run has it); with `--outage 12499s..12500s` (a trigger: folded, without latencies)
//! 1 304.4 M to 1 236.9 M (-5.2 %).
//!
//! What separates `engine_figures` from the reference is then the work of each attempt, by
//! the same count of that instance (an attempt): the general queue (120 on its own lines),
//! the known answers' ends in their heap, reached one by one (`reach` 135 besides the
//! success), the admission with the workers' heap (`admit_known` 182), the success's
//! accounting (`succeeded` 106: the tally's finishes and the call slot besides the
//! reference's sketch and sum), the send's own work (208 with the demand's draw, the log
//! aside). The ends cannot be counted at the admission as the reference counts them: the
//! in-flight guard of every plain run and sweep row judges the call slots and the requests
//! in the server as they are at each start. Since, on main with the queue's radix sort
//! (`engine` 1 282.5 M, `engine_figures` 1 171.5 M by the same count):
//! - an arrival's window found only for a retry (the one count an arrival makes in a window
//!   whatever its answer; a known answer's arrival made it for nothing): `engine` 1 266.6 M
//!   (-1.2 %), `engine_figures` 1 156.5 M (-1.3 %, 1 157 an attempt): 1.76× the reference's
//!   658.9 M.
//! - a run that records no window counts an answer known at arrival there, as the reference
//!   does, with no end in a heap (`engine::calls::known`: nothing it writes reads when a
//!   success is counted, its figures being counts, sums, the sketch and maxima; guarded, its
//!   slot is held and its request counted waiting until every answer admitted so far is
//!   read, a bound the guard may judge, redone on the server's events beyond it):
//!   `engine_figures` 971.0 M (-16.0 %, 971 an attempt): 1.47× the reference's 658.9 M;
//!   `engine` 1 282.5 M by the same count.
//!
//! Then by the release profile's own `target/release/herd-sim` (`cargo build --release`, no
//! LTO: its counts are not the bench profile's, and the two must not be compared; the
//! release-binary figures first given for the change above compared the two), `run_calls`
//! inclusive, the command above at `--duration 12500s`; on main before the change above,
//! `--format table` (guarded, as every plain run) 1 211.2 M, `--format json` 1 317.7 M:
//! - the change above: table 1 119.0 M (-7.6 %), json 1 330.4 M (+1.0 %: the latest times
//!   taken as maxima in every run);
//! - the latest times as maxima only where the run records no window (in time order
//!   elsewhere), and no judging of the in-flight guard at a start that reuses a slot (what
//!   it judges grows only where a slot is added or a request admitted, each judged there):
//!   table 1 071.9 M (-11.5 % against main before both), json 1 296.1 M (-1.6 %). In the
//!   bench's own build, callgrind over its setup as above: `engine` 1 258.6 M (was 1 282.5 M,
//!   and 1 266.6 M before the change above), `engine_figures` 962.0 M (962 an attempt):
//!   1.46× the reference's 658.9 M.
//!
//! Tried and not kept: the processes' next starts beside the queue instead of in it, with
//! the queue's tie rule kept exactly (an event pushed into the queue at the very time of a
//! pending start first moves that start into the queue; on a tie the queue goes first). As
//! a heap of one start a process, with a set of their times for that test: 1 355.4 M
//! against 1 320.9 M (the push alone 77 instructions a start); as a table of at most 16
//! processes scanned for the earliest after each start: 1 353.5 M. At ten processes the
//! queue's push and pop of a start (its run of a few events sorted by insertion) cost less
//! than either lane, so the start's share of the gap is smaller than its events suggested.

use std::process::Command;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use herd_sim::engine::{simulate_calls, RunSpec};
use herd_sim::server::{Capacity, CapacityRule, Server};
use herd_sim::time::{SimDuration, SimTime};
use herd_sim::workload::{Arrivals, Dist, RateSchedule};

mod common;
#[path = "common/callloop_reference.rs"]
mod reference;

const RATE: f64 = 80.0;
/// The peer runs a quarter of the attempts (about 2.5 × 10^5): its time per attempt does not
/// depend on the run's length, and ten samples of the full run would take a minute.
const PEER_DURATION_S: u64 = 3_125;
const DURATION_S: u64 = 12_500;

fn schedule(duration_s: u64) -> RateSchedule {
    RateSchedule {
        base: RATE,
        spikes: Vec::new(),
        end: SimTime::ZERO.saturating_add(SimDuration::from_secs(duration_s)),
    }
}

fn spec(duration_s: u64) -> RunSpec {
    let mut spec = common::full_jitter_herd(
        10,
        Server::Capacity(Capacity::new(CapacityRule {
            workers: Some(10),
            service: Dist::Exp(SimDuration::from_millis(100)),
            ..CapacityRule::default()
        })),
    );
    spec.policy.max_retries = 3;
    spec.overload.arrivals = Arrivals::Poisson(schedule(duration_s));
    spec.overload.timeout = Some(SimDuration::from_secs(1));
    spec
}

fn scenario(spec: &RunSpec, duration_s: u64) -> reference::Scenario {
    reference::Scenario {
        seed: spec.seed,
        processes: spec.clients,
        schedule: schedule(duration_s),
        workers: 10,
        service: SimDuration::from_millis(100),
        timeout: SimDuration::from_secs(1),
        retries: spec.policy.max_retries,
        backoff: spec.policy.backoff,
    }
}

fn bench(c: &mut Criterion) {
    let spec = spec(DURATION_S);
    let (_, totals) = simulate_calls(&spec);
    let limit = scenario(&spec, DURATION_S);
    let figures = reference::run(&limit);
    assert_eq!(
        figures,
        reference::Figures {
            calls: totals.calls,
            attempts: totals.attempts,
            calls_succeeded: totals.calls_succeeded,
            calls_failed: totals.calls_failed,
            timed_out: totals.timed_out,
            late: totals.late,
            latency_sum_ns: totals.latency_sum_ns,
            abandoned_work_ns: totals.abandoned_work_ns,
            latency_p50_ns: totals.latency_p50_ns,
            latency_p99_ns: totals.latency_p99_ns,
        },
        "the reference loop must give the call loop's numbers"
    );
    // The same run writing figures only, as a sweep's row or a table report runs it: its
    // windows folded, and with no trigger to judge recovery after, none recorded. Every
    // total the same; no row kept.
    let mut figures_spec = spec.clone();
    figures_spec.overload.keep_windows = false;
    let (_, figures_only) = simulate_calls(&figures_spec);
    assert_eq!(
        figures_only,
        herd_sim::series::OverloadTally {
            rows: Vec::new(),
            ..totals.clone()
        },
        "a run writing figures only must count what the full run counts"
    );
    // The same again, guarded as a plain run or a sweep's row is: a call slot and a queued
    // request counted at a few hundred bytes each, against a budget the run never nears.
    let mut guarded_spec = figures_spec.clone();
    guarded_spec.overload.in_flight = herd_sim::engine::InFlightGuard {
        bytes: 1 << 30,
        per_call: 400,
        per_place: 240,
        blocks: u64::MAX,
    };
    let (_, guarded) = simulate_calls(&guarded_spec);
    assert_eq!(
        guarded, figures_only,
        "a guarded run within its budget must count what the unguarded run counts"
    );
    println!(
        "callloop: {} calls, {} attempts, {} timed out, {:.2} events an attempt",
        totals.calls,
        totals.attempts,
        totals.timed_out,
        totals.events as f64 / totals.attempts as f64
    );
    let mut group = c.benchmark_group("callloop");
    group.sample_size(10);
    group.throughput(Throughput::Elements(totals.attempts));
    group.bench_function("engine", |b| b.iter(|| simulate_calls(&spec).1.attempts));
    group.bench_function("engine_figures", |b| {
        b.iter(|| simulate_calls(&figures_spec).1.attempts)
    });
    group.bench_function("engine_figures_guarded", |b| {
        b.iter(|| simulate_calls(&guarded_spec).1.attempts)
    });
    group.bench_function("reference", |b| b.iter(|| reference::run(&limit).attempts));
    // The peer is timed by itself (its `wall_s`: the simulation, not the interpreter's start),
    // as the two loops above are timed without the process around them.
    let peer = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/peers/callloop_heapq.py"
    );
    let run_peer = || -> Option<(u64, f64)> {
        let out = Command::new("python3")
            .args([peer, "--duration", &PEER_DURATION_S.to_string()])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.trim().strip_prefix(&format!("\"{name}\": ")))
                .map(|v| v.trim_end_matches(',').to_string())
        };
        Some((
            field("attempts")?.parse().ok()?,
            field("wall_s")?.parse().ok()?,
        ))
    };
    match run_peer() {
        Some((attempts, _)) => {
            group.throughput(Throughput::Elements(attempts));
            group.bench_function("heapq_peer", |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| {
                            let (_, wall) = run_peer().expect("the peer ran before");
                            Duration::from_secs_f64(wall)
                        })
                        .sum()
                })
            });
        }
        None => println!("callloop/heapq_peer: skipped (python3 did not run the peer)"),
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
