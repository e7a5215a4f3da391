//! `--trace` against the same runs untraced, measured in one run (compare ratios): 200 000
//! clients of full jitter against a down server (a million attempts) on the independent path
//! (a traced run simulates its blocks in order) and on the event queue, and the call loop's
//! scenario of benches/callloop.rs over 1000 s (80 000 calls). Each traced run writes every attempt
//! as a JSON line into a file (created anew each iteration, under the system's temporary
//! folder), through the same writer as `--trace`.
//!
//! The floor under a herd path's traced run, in the same run: `write_only` writes the bytes
//! its traced run writes (its trace, read back once before it is timed) into a file created
//! anew each iteration, through the same `BufWriter`, in pieces of the trace writer's buffer
//! ([`BUFFER_BYTES`]), with nothing simulated or formatted. No trace of that path can cost less
//! than its `write_only`; when `write_only` alone passes twice the untraced run, a traced run
//! within 2× of it cannot be had by formatting faster.

use std::hint::black_box;
use std::io::{BufWriter, Write};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use herd_sim::engine::{simulate_observed, Path, RunSpec};
use herd_sim::server::{Capacity, CapacityRule, Down, Server};
use herd_sim::time::{SimDuration, SimTime};
use herd_sim::trace::{NoTrace, RunInfo, Sample, TraceFormat, TraceWriter, BUFFER_BYTES};
use herd_sim::workload::{Arrivals, Dist, RateSchedule};

mod common;

/// benches/callloop.rs's scenario (10 Poisson processes at 80 calls/s in all, 10 workers of
/// Exp(100 ms), 1 s timeout, 3 full-jitter retries) over `duration_s` seconds.
fn call_loop(duration_s: u64) -> RunSpec {
    let mut spec = common::full_jitter_herd(
        10,
        Server::Capacity(Capacity::new(CapacityRule {
            workers: Some(10),
            service: Dist::Exp(SimDuration::from_millis(100)),
            ..CapacityRule::default()
        })),
    );
    spec.policy.max_retries = 3;
    spec.overload.arrivals = Arrivals::Poisson(RateSchedule {
        base: 80.0,
        spikes: Vec::new(),
        end: SimTime::ZERO.saturating_add(SimDuration::from_secs(duration_s)),
    });
    spec.overload.timeout = Some(SimDuration::from_secs(1));
    spec
}

fn traced(spec: &RunSpec, path: Path, file: &std::path::Path) -> u64 {
    let out = std::fs::File::create(file).unwrap();
    let mut writer = TraceWriter::new(
        BufWriter::new(out),
        TraceFormat::JsonLines,
        Sample::default(),
    );
    writer.begin_run(RunInfo {
        index: 0,
        strategy: spec.policy.strategy.to_string(),
        seed: spec.seed,
        clients: spec.clients,
        per_client: false,
        layered: false,
    });
    let (tally, _) = simulate_observed(spec, path, &mut writer);
    assert_eq!(writer.finish().unwrap(), tally.requests);
    tally.requests
}

/// Writes `bytes` as a traced run writes its lines: into `file` created anew, through a
/// `BufWriter`, a trace writer's buffer at a time.
fn write_only(bytes: &[u8], file: &std::path::Path) -> usize {
    let mut out = BufWriter::new(std::fs::File::create(file).unwrap());
    for piece in bytes.chunks(BUFFER_BYTES) {
        out.write_all(piece).unwrap();
    }
    out.flush().unwrap();
    bytes.len()
}

fn trace(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trace.jsonl");
    let mut group = c.benchmark_group("trace");
    group.sample_size(10);
    let clients = 200_000;
    let herd = common::full_jitter_herd(clients, Server::Down(Down::default()));
    group.throughput(Throughput::Elements(u64::from(clients) * 5));
    for (name, path) in [
        ("independent", Path::Independent),
        ("event_queue", Path::EventQueue),
    ] {
        group.bench_function(format!("{name}/untraced"), |b| {
            b.iter(|| black_box(simulate_observed(&herd, path, NoTrace).0.requests))
        });
        group.bench_function(format!("{name}/traced"), |b| {
            b.iter(|| black_box(traced(&herd, path, &file)))
        });
        // The traced run's bytes, formatted once (one path's at a time: some 200 MB).
        traced(&herd, path, &file);
        let bytes = std::fs::read(&file).unwrap();
        group.bench_function(format!("{name}/write_only"), |b| {
            b.iter(|| black_box(write_only(&bytes, &file)))
        });
    }
    let calls = call_loop(1_000);
    group.bench_function("call_loop/untraced", |b| {
        b.iter(|| black_box(simulate_observed(&calls, Path::Auto, NoTrace).0.requests))
    });
    group.bench_function("call_loop/traced", |b| {
        b.iter(|| black_box(traced(&calls, Path::Auto, &file)))
    });
    group.finish();
}

criterion_group!(benches, trace);
criterion_main!(benches);
