//! `herd-sim merge` streams: its heap does not grow with the rows it merges. Shards of one
//! sweep of a single cell (one client, one retry) hold 2 500 and then 20 000 rows; the merge's
//! peak heap is measured for both and must not follow the eightfold growth.

use std::path::{Path, PathBuf};

use herd_sim::sweep::merge::merge;
use herd_sim::sweep::shard::{Shard, ShardRun};
use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run_in, SweepSpec};

use crate::{peak_bytes, pool, serial};

/// Writes the `count` shards of a sweep of `seeds` rows into `dir`; returns the folder.
fn shards(dir: &Path, seeds: u64, count: u64) -> PathBuf {
    let folder = dir.join(format!("shards-{seeds}"));
    for index in 0..count {
        let spec = SweepSpec {
            grid: vec![
                ("clients".into(), "1".into()),
                ("retries".into(), "1".into()),
            ],
            seeds,
            ..Default::default()
        };
        let out = Destination::File(folder.join(format!("part-{index}.csv")));
        let (plan, shard) = ShardRun::prepare(spec, Shard { index, count }, &out).unwrap();
        let sink = RowSink::open(&plan, &out, Start::Fresh).unwrap();
        shard.begin().unwrap();
        run_in(pool(1), &plan, sink, &|_| {}).unwrap();
        shard.finish().unwrap();
    }
    folder
}

#[test]
fn a_merge_holds_a_line_per_shard_not_the_rows() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for seeds in [2_500u64, 20_000] {
        let folder = shards(dir.path(), seeds, 4);
        let out = dir.path().join(format!("merged-{seeds}.csv"));
        let (merged, peak) = peak_bytes(|| merge(&[folder], &out, false).unwrap());
        assert_eq!(merged.rows, seeds);
        let bytes = std::fs::metadata(&out).unwrap().len();
        // A row is about 110 bytes: the small merge's output alone is over 250 kB.
        assert!(bytes > 100 * seeds, "{bytes} B");
        peaks.push((seeds, bytes, peak));
    }
    let (_, small_bytes, small) = peaks[0];
    let (_, large_bytes, large) = peaks[1];
    // Four read buffers and one write buffer of 64 KiB make the floor (320 KiB); the rows add
    // nothing: eight times the rows, not a 64 KiB buffer more, and a fifth of the 2.2 MB file
    // at most.
    assert!(large_bytes > 7 * small_bytes, "{peaks:?}");
    assert!(large < small + (64 << 10), "{peaks:?}");
    assert!(large < (large_bytes as usize) / 5, "{peaks:?}");
}
