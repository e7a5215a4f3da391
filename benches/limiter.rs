//! The shared limiter forces the event queue: 1 M clients × 1 item against ONE fixed-window
//! limiter (every client behind one address) with full jitter, beside a baseline measured in
//! the same run — the same herd through the event queue against a down server, which is the
//! engine's cheapest answer. Throughput is in events (requests reaching the server) per second,
//! on one thread (the event-queue path is single-threaded).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use herd_sim::engine::{simulate_event_queue, RunSpec};
use herd_sim::server::{
    Down, FixedWindow, FixedWindowRule, Headers, Keying, Limited, Limiter, Server, Store,
    WindowStart,
};
use herd_sim::time::SimDuration;

mod common;

const CLIENTS: u32 = 1_000_000;

fn spec(server: Server) -> RunSpec {
    common::full_jitter_herd(CLIENTS, server)
}

/// Laravel's limiter, 10 000 requests per second, one key for every client.
fn one_fixed_window() -> Server {
    Server::Limited(Limited {
        limiter: Limiter::FixedWindow(FixedWindow::new(FixedWindowRule {
            limit: 10_000,
            window: SimDuration::from_secs(1),
            start: WindowStart::FirstHit,
            store: Store::WholeSecond,
        })),
        keying: Keying {
            clients_per_address: CLIENTS,
        },
        headers: Headers::default(),
    })
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("limiter");
    group.sample_size(10);
    let cases = [
        ("down/event-queue", spec(Server::Down(Down::default()))),
        ("fixed-window/event-queue", spec(one_fixed_window())),
    ];
    for (name, spec) in &cases {
        let events = simulate_event_queue(spec).requests;
        group.throughput(Throughput::Elements(events));
        group.bench_function(*name, |b| {
            b.iter_batched(
                || (),
                |()| simulate_event_queue(spec),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
