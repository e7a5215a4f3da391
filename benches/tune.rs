//! `herd-sim tune`'s successive halving against an exhaustive grid of the same resolution: the
//! gRPC throttle's max_tokens (2..40 step 2) × retries (1..10), 200 candidates, against a
//! server failing half the attempts and one failing all of them; halving starts from a Latin
//! hypercube of 27 with 2 seeds and ends with 18, the grid runs every candidate with 18 seeds.
//! Runs and time side by side in one run, so the ratio is measured under the same load; the
//! recommendation of each is printed beside the other's.
//!
//! Run: cargo bench --features bench --locked --profile release --bench tune
//! (one pass of each, under a minute on two threads; a plain harness, not criterion's: a
//! search is one sample).

use std::path::Path;
use std::time::Instant;

use herd_sim::advice::tune::Tuner;
use herd_sim::advice::tune_file::TuneFile;
use herd_sim::sweep::thread_pool;

const THREADS: usize = 2;

const FILE: &str = r#"
seeds = 2
[[scenario]]
name = "flaky"
clients = 10
strategy = "naive"
arrivals = "poisson"
rate = "100/s"
duration = "5s"
[scenario.server]
model = "flaky"
failure_rate = 0.5
[[scenario]]
name = "down"
clients = 10
strategy = "naive"
arrivals = "poisson"
rate = "100/s"
duration = "5s"
[scenario.server]
model = "flaky"
failure_rate = 1
[params]
retries = "1..10"
budget = "grpc"
"budget.max_tokens" = "2..40 step 2"
[objectives]
constraints = ["amplification@down <= 1.1"]
maximize = ["goodput_pct@flaky"]
"#;

fn search(text: &str) -> (u64, f64, String) {
    let file = TuneFile::parse(text, Path::new("."), "bench.toml").expect("a valid tune file");
    let tuner = Tuner::new(file, THREADS, u64::MAX).expect("valid candidates");
    let pool = thread_pool(Some(THREADS)).expect("threads");
    let started = Instant::now();
    let report = tuner.run(&pool, &|_| {}).expect("the search runs");
    let seconds = started.elapsed().as_secs_f64();
    let chosen = report
        .recommended
        .map(|i| report.evaluated[i].candidate.describe(tuner.file()))
        .unwrap_or_else(|| "none".into());
    (report.runs, seconds, chosen)
}

fn main() {
    let (halving_runs, halving_s, halving_pick) = search(&format!(
        "{FILE}[search]\nmethod = \"halving\"\nmax_seeds = 18\n"
    ));
    let (grid_runs, grid_s, grid_pick) = search(&FILE.replace("seeds = 2", "seeds = 18").replace(
        "[objectives]",
        "[search]\nmethod = \"exhaustive\"\nmax_candidates = 200\n[objectives]",
    ));
    println!(
        "tune/halving   {halving_runs:>6} runs  {halving_s:>7.2} s  recommends {halving_pick}"
    );
    println!("tune/exhaustive {grid_runs:>5} runs  {grid_s:>7.2} s  recommends {grid_pick}");
    println!(
        "halving spends {:.3} of the grid's runs ({:.1}x fewer), {:.3} of its time",
        halving_runs as f64 / grid_runs as f64,
        grid_runs as f64 / halving_runs as f64,
        halving_s / grid_s
    );
}
