//! `sweep --aggregate`: a cell's statistics stream over its seeds, so its memory does not grow
//! with them.

use herd_sim::config::ScenarioFile;
use herd_sim::sweep::{Layout, Plan, SweepSpec};

use crate::{peak_bytes, serial};

fn aggregate_row_peak(seeds: u64) -> (Vec<String>, usize) {
    // A trivial cell: one client, no retry, against a server that stays down.
    let plan = Plan::new(SweepSpec {
        base: ScenarioFile::parse("clients = 1\nretries = 0\n", Some("toml")).unwrap(),
        grid: vec![("strategy".into(), "fixed".into())],
        seeds,
        layout: Layout::Aggregate,
        ..Default::default()
    })
    .unwrap();
    peak_bytes(|| plan.row(0).unwrap())
}

#[test]
fn an_aggregate_cells_memory_is_flat_from_a_thousand_to_thirty_thousand_seeds() {
    let _serial = serial();
    let (small, small_peak) = aggregate_row_peak(1_000);
    let (large, large_peak) = aggregate_row_peak(30_000);
    // Every seed sends exactly one request at 0 s and nothing else happens: every figure is
    // the same at any seed count (mean the value, sd 0, the interval the mean); only the
    // `seeds` column differs.
    let differing: Vec<(&String, &String)> =
        small.iter().zip(&large).filter(|(a, b)| a != b).collect();
    assert_eq!(differing, [(&"1000".to_string(), &"30000".to_string())]);
    assert!(small.contains(&"1".to_string()) && small.contains(&"0".to_string()));
    // Keeping every seed's value of every metric (8 B each, 15 metrics) would add 3.4 MiB
    // between the two; streamed, the peaks are equal but for allocator noise.
    assert!(
        large_peak <= small_peak + 4096,
        "1 000 seeds: {small_peak} B, 30 000 seeds: {large_peak} B"
    );
}
