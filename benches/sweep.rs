//! Two measurements of the sweep, each against a baseline in the same run so the ratio is
//! measured under the same machine load.
//!
//! `sweep_240_cells`: the sweep's parallel speed-up, one grid of 240 cells (6 strategies × 40
//! client counts, one seed each) run with one worker thread and with two. Output goes to a
//! file in a temporary folder, as a real sweep's would.
//!
//! `small_rows`: what a row costs beyond its simulation. `sweep` is a sweep of one cell of 10
//! clients (the default herd against the down server) over 2000 seeds, on one thread, into a
//! file; `bare` runs the same scenario with the same 2000 seeds through the engine directly
//! (`engine::simulate`, no sweep machinery), so `sweep / bare - 1` is the overhead of a row:
//! its setup, seeding, figures, CSV line and writing. `boundary` is the boundary search's
//! oracle (the path `herd-sim boundary` and `herd-sim tune` take: one-cell sweeps whose rows
//! are read back as figures) on 8 spike rates × 25 seeds of a small call loop (10 Poisson
//! processes at 10 calls/s over 10 s against 4 workers), against `boundary_bare`, the same
//! scenarios and seeds through the engine.
//!
//! What each change to a row bought, in instructions a row (callgrind, `herd-sim sweep
//! --clients 10 --seeds 2000 --threads 1`, the engine's run about 19 900 of them throughout):
//! - before: 122 000 a row, the run a sixth of it: the cell validated again for each row
//!   (16 000), its seed label formatted from every parameter (16 000), the run's report built
//!   with its descriptions (7 000), the summary serialised through the csv crate, split and
//!   each number parsed and printed again (24 000), the line written by a csv writer of its
//!   own (20 000), and the allocations of all those strings;
//! - what a cell's rows share, worked out once per worker and cell (`RowCache`: the scenario,
//!   the parameters' CSV, the label's hash, so a seed hashes only `replicate=N`), the figures
//!   taken from the engine's tally through a serializer of numbers, and the line written
//!   straight from them (whole numbers by `itoa`, times in nanoseconds by their digits, other
//!   numbers by the standard library, so the bytes are those it printed): 32 900 a row, of
//!   which the summary of the run (`Summary::of`, the histogram's peak among it) 4 400, the
//!   figures' serializer and vector 2 400, writing them 2 000, the rest (sink, lock, rayon)
//!   about 4 000. Every output is the same, byte for byte (`scripts/same-output.sh`).
//! - the rows of a task, by the same count with the startup taken off (a sweep of 1 seed
//!   against one of 2001): 32 050 a row before, 25 970 after (the run and the drop of its
//!   tally about 21 400 of them). A worker runs a task of consecutive small rows (as many as
//!   make 64 000 events by the work estimate, at most 64; one row when rows are large) into
//!   one buffer and hands them to the sink under one lock, written by one system call; the
//!   summary's three figures of the retries' histogram are found in one pass that skips
//!   runs of eight empty windows at once (its peak, windows and total were three passes,
//!   4 200 with the summary, now 1 850); a cell's run spec is made once and its seed set
//!   for each row (the spec was 800 a row); the figures go straight into the line through
//!   the summary's serialisation instead of a vector of them. What is left beyond the run:
//!   the summary (1 850), the figures' serialisation and writing (2 600, most of it
//!   formatting 16 numbers). One run of the command below with `small_rows`, two cores under
//!   a load average of 10 from other builds: `sweep` 25.3 ms against `bare` 21.4 ms (1.18×;
//!   4.65× before these changes), `boundary` 105.6 against `boundary_bare` 115.0 ms (0.92×,
//!   within the noise of `boundary_bare`'s interval, 103 to 128 ms).
//! - waits outside the instructions: callgrind counts a row 1.29x its run (in this bench's
//!   build, `run_in` over these 2000 rows three times less once: 20 565 a row, against
//!   15 976 a run of the same seeds through `simulate_all`), yet
//!   the wall times read 1.5x to 1.8x. `perf trace` of sweep after sweep into one file found
//!   the process asleep in two system calls, 3 to 12 ms each time, quantised at the kernel's
//!   4 ms tick: ext4 flushes a file truncated to zero when it is closed, so closing the output
//!   lock (emptied with `set_len(0)` before its pid was written) waited for a write of a file
//!   already removed, and opening the output (`O_TRUNC`) waited for the last sweep's rows to
//!   reach the disk. The lock now writes its pid and cuts what follows (no release waits
//!   since); `sweep` removes the last file before each timed sweep, untimed, so each writes a
//!   new file as a sweep's first run does, instead of timing a disk write once a sweep. One
//!   run after both, the two cores under a load average of 10.7 from other builds: `sweep`
//!   17.8 ms against `bare` 9.69 ms (1.84x; 1.46x before them at a load of 7): under such a
//!   load a sweep's two hand-offs between threads (into the pool and back) and its 32 writes
//!   of 11 KB, each taking milliseconds when the thread is preempted in them, swamp the row's
//!   cost, so the ratio is for a quiet machine to settle.
//! - what is left, by the same callgrind count: about 4 600 instructions a row beyond its
//!   run, 29 % of the run's 15 976: the retries histogram's three figures (1 400, a scan of
//!   its dense windows eight at a time; a scan 64 at a time was tried and cost 1 900), the
//!   figures' formatting (1 800 for 14 numbers), the summary and its serialisation (1 100),
//!   the seed, the line and the task (300). The sink's file work alone (open, lock, journal,
//!   32 writes of 11 KB, finish; no row run) took 0.3 ms a sweep of 2000 rows, a few per cent
//!   of the bare runs. The larger lever is in the run itself: nearly half of its instructions
//!   are the allocator's and copies (malloc, realloc, free, memcpy and memset: about 7 300),
//!   its three histograms grown by doubling, merged into an empty tally and dropped, run
//!   after run; a worker that kept them, cleared and capped, would run a row for less than
//!   the bare run, but the engine must first take a tally to fill instead of making its own.
//! - a cell's rows count into the last row's tally, cleared (`engine::simulate_all_in`: a
//!   herd of independent clients that fits one block is simulated into the tally it is given,
//!   its histograms' buffers kept; any other run is `simulate_all`'s), kept while it holds at
//!   most 256 KiB. By callgrind on a release build of a harness that runs rows 0..N of this
//!   sweep through `Plan::row_line` with one `RowCache`, against `simulate_all` on the same
//!   seeds, less the rows' keys alone, at N = 3000 less N = 1000: 24 899 instructions a row
//!   against 20 376 a bare run before (1.22x), 13 768 against 19 726 after (0.70x): a row now
//!   costs less than the run it reports, the 4 600 beyond the run paid for by the
//!   allocations it no longer makes.
//! - the event queue's rows count into the last row's tally too, cleared as the independent
//!   path's are (`engine::simulate_all_in`). By callgrind on the release binary, a sweep of a
//!   limiter's herd (its clients interact, so the event queue), `herd-sim sweep --clients 10
//!   --server fixed-window --limit 3 --window 1s --clients-per-address 10 --seeds N --threads 1
//!   --quiet --out FILE`, N = 3000 less N = 1000 over 2000 rows: 98 717 instructions a row
//!   before, 91 016 after (0.92x). The independent path's rows by the same count (`--clients
//!   10`): 15 199 before and after.
//! - the call loop's rows take a new tally still: counting them into the last one cost more
//!   than it saved. A sweep's call loop folds its windows as they close, so its tally's
//!   histograms stay empty and only the clients' finishes (one small vector) are kept; by the
//!   same count on `herd-sim sweep --config loop.toml --seeds N --threads 1` (`SMALL_LOOP`
//!   below as the file), N = 600 less N = 200 over 400 rows, 1 168 463 instructions a row
//!   with a new tally, 1 169 104 into the last one (1.0005x): the call loop's function saved
//!   600 a row, emptying the tally and handing it down cost 1 320 (`Tally::clear_for_clients`
//!   making a new tally, its three histograms cleared and swapped in, the tally's copies).
//!
//! Run: cargo bench --features bench --bench sweep -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;
use std::sync::atomic::AtomicU64;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

use herd_sim::boundary::evaluate::SweepOracle;
use herd_sim::boundary::search::{Oracle, Probe};
use herd_sim::config::{Scenario, ScenarioFile};
use herd_sim::engine::simulate_all;
use herd_sim::sweep::parameter::parameter;
use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run, run_in, thread_pool, Plan, SweepSpec};

fn grid() -> Plan {
    Plan::new(SweepSpec {
        grid: vec![
            ("strategy".into(), "all".into()),
            ("clients".into(), "1000..40000 step 1000".into()),
        ],
        ..Default::default()
    })
    .expect("the bench grid is valid")
}

fn threads(c: &mut Criterion) {
    let plan = grid();
    assert!(plan.rows() >= 200);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let target = Destination::File(dir.path().join("sweep.csv"));
    let mut group = c.benchmark_group("sweep_240_cells");
    group.sample_size(10);
    for n in [1usize, 2] {
        group.bench_function(format!("threads_{n}"), |b| {
            b.iter(|| {
                let sink = RowSink::open(&plan, &target, Start::Fresh).expect("open");
                run(&plan, sink, Some(n), &|_| {}).expect("run");
            })
        });
    }
    group.finish();
}

const SMALL: &str = "clients = 10\n";
const SEEDS: u64 = 2000;

/// A small call loop for the boundary oracle: 10 Poisson processes, a spike half-way.
const SMALL_LOOP: &str = "clients = 10\nstrategy = \"full-jitter\"\nretries = 2\n\
     arrivals = \"poisson\"\nrate = \"10/s\"\nduration = \"10s\"\nspike = \"4s..6s@20/s\"\n\
     timeout = \"1s\"\n[server]\nmodel = \"capacity\"\nworkers = 4\nservice_time = \"exp:100ms\"\n";
const SPIKE_RATES: [u64; 8] = [10, 15, 20, 25, 30, 35, 40, 45];
const LOOP_SEEDS: u64 = 25;

fn scenario(text: &str) -> Scenario {
    ScenarioFile::parse(text, Some("toml"))
        .expect("the bench scenario parses")
        .validate_on(Some(1))
        .expect("the bench scenario is valid")
}

/// The engine alone on `scenario` with each of `seeds`: what a sweep row simulates.
fn bare(scenario: &Scenario, seeds: &[u64]) -> u64 {
    let strategy = scenario.strategies[0];
    let mut requests = 0;
    for &seed in seeds {
        let mut spec = scenario.run_spec(strategy);
        spec.seed = seed;
        let (tally, _) = simulate_all(&spec, scenario.path);
        requests += black_box(tally).requests;
    }
    requests
}

fn small_rows(c: &mut Criterion) {
    let pool = thread_pool(Some(1)).expect("a thread");
    let plan = Plan::new(SweepSpec {
        base: ScenarioFile::parse(SMALL, Some("toml")).expect("parses"),
        seeds: SEEDS,
        threads: Some(1),
        ..Default::default()
    })
    .expect("the bench sweep is valid");
    let header = plan.header();
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (seed, requests) = (column("seed"), column("requests"));
    let seeds: Vec<u64> = (0..plan.rows())
        .map(|r| plan.key(r).expect("a row")[seed].parse().expect("a seed"))
        .collect();
    let small = scenario(SMALL);
    // The same simulations: the rows' requests are the bare runs'.
    let swept: u64 = (0..10)
        .map(|r| {
            plan.row(r).expect("a row")[requests]
                .parse::<u64>()
                .expect("a count")
        })
        .sum();
    assert_eq!(swept, bare(&small, &seeds[..10]));

    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("rows.csv");
    let target = Destination::File(path.clone());
    let mut group = c.benchmark_group("small_rows");
    group.sample_size(10);
    group.bench_function("sweep", |b| {
        b.iter_batched(
            // Each sweep writes a new file, as a sweep's first run does: truncating the last
            // one waited for its data on disk (ext4 flushes a file truncated to zero when it
            // is closed), a wait a sweep pays once, not once every 2000 rows.
            || match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => panic!("{e}"),
                _ => (),
            },
            |()| {
                let sink = RowSink::open(&plan, &target, Start::Fresh).expect("open");
                run_in(&pool, &plan, sink, &|_| {}).expect("run");
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("bare", |b| b.iter(|| bare(&small, &seeds)));

    let base = ScenarioFile::parse(SMALL_LOOP, Some("toml")).expect("parses");
    let done = AtomicU64::new(0);
    let oracle = SweepOracle {
        base: &base,
        axis: parameter("spike-rate").expect("an axis"),
        fixed: &[],
        pool: &pool,
        threads: 1,
        max_requests: u64::MAX,
        progress: &|_| {},
        done: &done,
    };
    let probes: Vec<Probe> = SPIKE_RATES
        .iter()
        .map(|rate| Probe {
            value: rate * 1_000_000_000,
            replicates: 0..LOOP_SEEDS,
        })
        .collect();
    let outcomes = oracle.run(&probes).expect("the oracle runs");
    let cells: Vec<(Scenario, Vec<u64>)> = SPIKE_RATES
        .iter()
        .zip(&outcomes)
        .map(|(rate, outcomes)| {
            let text = SMALL_LOOP.replace("@20/s", &format!("@{rate}/s"));
            (
                scenario(&text),
                outcomes.iter().map(|o| o.seed).collect::<Vec<_>>(),
            )
        })
        .collect();
    // The same simulations: each seed's verdict is the bare run's.
    for ((cell, seeds), outcomes) in cells.iter().zip(&outcomes) {
        for (&seed, outcome) in seeds.iter().zip(outcomes) {
            let mut spec = cell.run_spec(cell.strategies[0]);
            spec.seed = seed;
            let (_, calls) = simulate_all(&spec, cell.path);
            let calls = calls.expect("a call loop");
            let stuck = herd_sim::overload::CallLoopResult::new(
                calls,
                String::new(),
                String::new(),
                String::new(),
                cell.overload.recovery_hold,
                cell.overload.settle,
            )
            .stuck();
            assert_eq!(stuck, outcome.collapsed, "seed {seed}");
        }
    }
    group.bench_function("boundary", |b| {
        b.iter(|| oracle.run(&probes).expect("the oracle runs"))
    });
    group.bench_function("boundary_bare", |b| {
        b.iter(|| {
            cells
                .iter()
                .map(|(cell, seeds)| bare(cell, seeds))
                .sum::<u64>()
        })
    });
    group.finish();
}

criterion_group!(benches, threads, small_rows);
criterion_main!(benches);
