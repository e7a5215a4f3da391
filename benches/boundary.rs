//! The boundary search against a grid: on `configs/collapse-spike.toml`, the spike-rate
//! boundary of each strategy over 40..120 calls/s to ±2 % of the range (the default
//! `--tolerance`) by `herd-sim boundary`, beside a grid sweep at that resolution (51 spike rates
//! 1.6 calls/s apart, through the sweep itself) with the seeds per point the search gives a
//! point at most (4 batches of 20: the grid needs them at every point to resolve the points the
//! search resolves), and with one batch of 20 a point. Runs and time side by side, in one run,
//! so the ratios are measured under the same machine load; each grid's own interval (the same
//! bracket rule over its points) is printed beside the search's.
//!
//! Run: cargo bench --features bench --bench boundary
//! (one pass of each, about a minute on two threads; a plain harness, not criterion's, since a
//! grid of 8160 runs is one sample).

use std::time::Instant;

use herd_sim::boundary::search::{bracket, Outcome, Point};
use herd_sim::boundary::{BoundaryPlan, BoundarySpec, BATCHES_PER_POINT, DEFAULT_SEEDS};
use herd_sim::config::ScenarioFile;
use herd_sim::sweep::sink::{Destination, RowSink, Start};
use herd_sim::sweep::{run_in, thread_pool, Layout, Plan, SweepSpec};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/collapse-spike.toml");
const THREADS: usize = 2;

/// The grid's points per strategy, read back from its tidy CSV.
fn grid(base: &ScenarioFile, seeds: u64) -> (Vec<(String, Vec<Point>)>, u64, f64) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("grid.csv");
    let plan = Plan::new(SweepSpec {
        base: base.clone(),
        grid: vec![("spike-rate".into(), "40..120 step 1.6".into())],
        seeds,
        layout: Layout::Tidy,
        threads: Some(THREADS),
        ..Default::default()
    })
    .expect("the grid is valid");
    let pool = thread_pool(Some(THREADS)).expect("threads");
    let started = Instant::now();
    let sink = RowSink::open(&plan, &Destination::File(path.clone()), Start::Fresh).expect("open");
    run_in(&pool, &plan, sink, &|_| {}).expect("the grid runs");
    let seconds = started.elapsed().as_secs_f64();
    let mut reader = csv::Reader::from_path(&path).expect("the grid's csv");
    let header = reader.headers().expect("a header").clone();
    let at = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (strategy, rate, seed, stuck) = (
        at("strategy"),
        at("spike_rate_per_s"),
        at("seed"),
        at("stuck"),
    );
    let mut by_strategy: Vec<(String, Vec<Point>)> = Vec::new();
    for row in reader.records().map(|r| r.expect("a row")) {
        let name = row[strategy].to_string();
        let value = (row[rate].parse::<f64>().expect("a rate") * 1e9).round() as u64;
        let outcome = Outcome {
            seed: row[seed].parse().expect("a seed"),
            collapsed: &row[stuck] == "1",
        };
        if by_strategy.last().is_none_or(|(s, _)| *s != name) {
            by_strategy.push((name, Vec::new()));
        }
        let points = &mut by_strategy.last_mut().expect("a strategy").1;
        match points.last_mut() {
            Some(p) if p.value == value => p.outcomes.push(outcome),
            _ => points.push(Point {
                value,
                outcomes: vec![outcome],
            }),
        }
    }
    (by_strategy, plan.rows(), seconds)
}

fn interval(points: &[Point]) -> String {
    let b = bracket(points.iter(), 0.5, true);
    let end = |v: Option<u64>| v.map_or("?".to_string(), |v| format!("{}", v as f64 / 1e9));
    format!("{}..{}", end(b.low), end(b.high))
}

fn main() {
    let base = ScenarioFile::read(std::path::Path::new(CONFIG)).expect("the config");
    let plan = BoundaryPlan::new(BoundarySpec {
        base: base.clone(),
        axis: ("spike-rate".into(), "40..120".into()),
        threads: Some(THREADS),
        ..Default::default()
    })
    .expect("the search is valid");
    let pool = thread_pool(Some(THREADS)).expect("threads");
    let started = Instant::now();
    let report = plan.run(&pool, &|_| {}).expect("the search runs");
    let search_seconds = started.elapsed().as_secs_f64();
    let search_runs: u64 = report.results.iter().map(|r| r.search.runs).sum();
    let most = DEFAULT_SEEDS * BATCHES_PER_POINT;
    let (matched, matched_runs, matched_seconds) = grid(&base, most);
    let (single, single_runs, single_seconds) = grid(&base, DEFAULT_SEEDS);
    println!("spike-rate boundary of configs/collapse-spike.toml over 40..120, ±2 % of the range, {THREADS} threads");
    for (r, ((name, m), (_, s))) in report.results.iter().zip(matched.iter().zip(&single)) {
        let b = r.search.bracket;
        let end = |v: Option<u64>| v.map_or("?".to_string(), |v| format!("{}", v as f64 / 1e9));
        println!(
            "{name}: search {}..{} ({} runs, {}); grid of {most} seeds {}; grid of {DEFAULT_SEEDS} seeds {}",
            end(b.low),
            end(b.high),
            r.search.runs,
            herd_sim::boundary::export::stop_text(r.search.stop),
            interval(m),
            interval(s)
        );
    }
    println!(
        "search: {search_runs} runs, {search_seconds:.2} s; grid of {most} seeds a point: {matched_runs} runs, {matched_seconds:.2} s; grid of {DEFAULT_SEEDS}: {single_runs} runs, {single_seconds:.2} s"
    );
    let ratio = search_runs as f64 / matched_runs as f64;
    println!(
        "ratio (search / grid of {most}): {ratio:.3} of the runs, {:.3} of the time; (search / grid of {DEFAULT_SEEDS}): {:.3} of the runs, {:.3} of the time",
        search_seconds / matched_seconds,
        search_runs as f64 / single_runs as f64,
        search_seconds / single_seconds
    );
    assert!(
        ratio <= 0.25,
        "the search spent {ratio:.3} of the grid's runs"
    );
}
