//! `herd-sim merge` against plain reading, in the same run: four shards of one sweep of
//! 200 000 rows (one client, one retry, one cell: rows of about 110 bytes, 22 MB in all).
//! - `merge/read_lines` (baseline): the shard files read line by line (`BufRead::read_until`
//!   over a 64 KiB buffer), nothing parsed or written: the speed of reading the CSV bytes.
//! - `merge/merge`: `herd-sim merge` of the same files into one, every row's key checked
//!   against the grid, every file's length and digest checked, the output written whole.
//!
//! Run: cargo bench --features bench --bench merge -- --warm-up-time 1 --measurement-time 5

use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use herd_sim::sweep::merge::merge;
use herd_sim::sweep::shard::{Shard, ShardRun};
use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run, SweepSpec};

const ROWS: u64 = 200_000;
const SHARDS: u64 = 4;

/// Writes the shards into `dir`; returns their CSV files.
fn shards(dir: &Path) -> Vec<PathBuf> {
    (0..SHARDS)
        .map(|index| {
            let spec = SweepSpec {
                grid: vec![
                    ("clients".into(), "1".into()),
                    ("retries".into(), "1".into()),
                ],
                seeds: ROWS,
                ..Default::default()
            };
            let csv = dir.join(format!("part-{index}.csv"));
            let out = Destination::File(csv.clone());
            let shard = Shard {
                index,
                count: SHARDS,
            };
            let (plan, record) = ShardRun::prepare(spec, shard, &out).expect("a valid shard");
            let sink = RowSink::open(&plan, &out, Start::Fresh).expect("open");
            record.begin().expect("record");
            run(&plan, sink, Some(2), &|_| {}).expect("run");
            record.finish().expect("record");
            csv
        })
        .collect()
}

fn read_lines(files: &[PathBuf]) -> u64 {
    let mut line = Vec::with_capacity(512);
    let mut lines = 0;
    for file in files {
        let mut reader = BufReader::with_capacity(1 << 16, File::open(file).expect("open"));
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).expect("read") == 0 {
                break;
            }
            lines += 1;
        }
    }
    lines
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let files = shards(dir.path());
    let bytes: u64 = files
        .iter()
        .map(|f| f.metadata().expect("a shard").len())
        .sum();
    let out = dir.path().join("merged.csv");
    let mut group = c.benchmark_group("merge");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("read_lines", |b| b.iter(|| black_box(read_lines(&files))));
    group.bench_function("merge", |b| {
        b.iter(|| black_box(merge(&files, &out, false).expect("merge").rows))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
