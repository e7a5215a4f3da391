//! `sweep --resume` reads back what an earlier run wrote as a stream: its heap does not hold
//! the output, however long the sweep.

use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run, Plan, SweepSpec};

use crate::{peak_bytes, serial};

#[test]
fn a_resume_reads_the_output_back_without_holding_it() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.csv");
    let destination = Destination::File(out.clone());
    let plan = Plan::new(SweepSpec {
        grid: vec![
            ("clients".into(), "1".into()),
            ("retries".into(), "1".into()),
        ],
        seeds: 10_000,
        ..Default::default()
    })
    .unwrap();
    let sink = RowSink::open(&plan, &destination, Start::Fresh).unwrap();
    run(&plan, sink, Some(1), &|_| {}).unwrap();
    let whole = std::fs::read(&out).unwrap();
    // An interrupted run: the file ends part way through row 6000 (a line cut short).
    let cut = whole
        .split(|&b| b == b'\n')
        .take(6001)
        .map(|line| line.len() + 1)
        .sum::<usize>()
        + 20;
    std::fs::write(&out, &whole[..cut]).unwrap();
    let (sink, peak) = peak_bytes(|| RowSink::open(&plan, &destination, Start::Resume).unwrap());
    // The header and 6000 whole rows are kept; the cut line goes.
    assert_eq!(sink.written(), 6000);
    drop(sink);
    // About 140 bytes a row: some 850 kB read back through one 64 KiB read buffer and the CSV
    // reader's own (reading the file whole peaked at twice its size: 1.7 MB).
    assert!(cut > 600_000, "{cut} B");
    assert!(peak < cut / 4, "resume peaked at {peak} B reading {cut} B");
}
