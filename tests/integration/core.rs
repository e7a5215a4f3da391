//! Integration tests of the core: Experiment 1 worked out by hand, jitter checked against its
//! analytic distribution, determinism, and the command line's answers to bad input.

use serde_json::Value;

use herd_sim::config::ScenarioFile;
use herd_sim::engine::{simulate, Path};
use herd_sim::experiment;
use herd_sim::policy::Strategy;
use herd_sim::time::SimDuration;

use crate::herd_sim;
use crate::refused_in_one_line as refused;

fn scenario(
    clients: u64,
    strategy: Strategy,
    retries: u32,
    seed: u64,
) -> herd_sim::config::Scenario {
    ScenarioFile {
        clients: Some(clients),
        strategy: Some(herd_sim::config::StrategyList(vec![strategy])),
        retries: Some(retries),
        seed: Some(seed),
        ..Default::default()
    }
    .validate()
    .expect("valid scenario")
}

/// The JSON report of a run with `args` (shared with the other modules).
pub(crate) fn json_of(args: &[&str]) -> Value {
    let out = herd_sim()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

// ---------------------------------------------------------------- Experiment 1, by hand

#[test]
fn fixed_and_exponential_herds_land_whole_in_the_windows_worked_out_by_hand() {
    // fixed 1 s: retries at 1, 2, 3, 4 s → windows 10, 20, 30, 40 (100 ms bins).
    // exponential: 1, 1+2, 1+2+4, 1+2+4+8 = 1, 3, 7, 15 s → windows 10, 30, 70, 150.
    let report = json_of(&["--clients", "1000", "--strategy", "fixed,exponential"]);
    let results = report["results"].as_array().unwrap();
    for (result, windows) in results.iter().zip([[10, 20, 30, 40], [10, 30, 70, 150]]) {
        let histogram: Vec<u64> = result["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        for (w, &count) in histogram.iter().enumerate() {
            let expected = if windows.contains(&w) { 1000 } else { 0 };
            assert_eq!(count, expected, "{} window {w}", result["strategy"]);
        }
        assert_eq!(result["peak"], 1000);
        assert_eq!(result["windows"], 4);
        assert_eq!(result["total"], 4000);
        assert_eq!(result["peak_window_s"], 1.0);
    }
    assert_eq!(results[0]["span_s"], 3.0);
    assert_eq!(results[1]["span_s"], 14.0);
}

#[test]
fn every_strategy_sends_n_times_retries_and_its_histogram_sums_to_the_total() {
    let report = json_of(&["--clients", "777", "--strategy", "all", "--retries", "5"]);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), Strategy::ALL.len());
    for (result, strategy) in results.iter().zip(Strategy::ALL) {
        assert_eq!(result["strategy"], strategy.name(), "table order is fixed");
        let sum: u64 = result["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(result["total"], 777 * 5);
        assert_eq!(sum, 777 * 5);
        // Conservation: every request is refused by a server that stays down, and every
        // client gives up after its last retry.
        assert_eq!(result["requests"], 777 * 6);
        assert_eq!(result["refused"], 777 * 6);
        assert_eq!(result["gave_up"], 777);
        assert_eq!(result["succeeded"], 0);
    }
}

#[test]
fn json_has_every_documented_field() {
    let report = json_of(&["--clients", "10"]);
    let result = &report["results"][0];
    for field in [
        "strategy",
        "clients",
        "retries",
        "seed",
        "peak",
        "peak_window_s",
        "windows",
        "span_s",
        "total",
        "bin_s",
        "histogram",
        "requests",
        "refused",
        "succeeded",
        "gave_up",
        "last_success_s",
        "base_s",
        "cap_s",
        "multiplier",
        "server",
    ] {
        assert!(result.get(field).is_some(), "missing {field} in {result}");
    }
    assert_eq!(result["seed"], 2015, "the default seed is printed");
    assert_eq!(result["bin_s"], 0.1);
}

#[test]
fn a_recovering_server_serves_every_client_still_trying() {
    // Exponential: retries at 1, 3, 7, 15 s. Recovery at 5 s: retries 1 and 2 refused, retry 3
    // (7 s) served. Everyone succeeds at 7 s; nobody gives up.
    let report = json_of(&[
        "--clients",
        "50",
        "--strategy",
        "exponential",
        "--recover-at",
        "5s",
    ]);
    let r = &report["results"][0];
    assert_eq!(r["succeeded"], 50);
    assert_eq!(r["gave_up"], 0);
    assert_eq!(r["last_success_s"], 7.0);
    assert_eq!(r["total"], 150);
    assert_eq!(r["refused"], 150);
    // Recovery after the last retry: everyone gives up.
    let report = json_of(&[
        "--clients",
        "50",
        "--strategy",
        "exponential",
        "--recover-at",
        "16s",
    ]);
    assert_eq!(report["results"][0]["gave_up"], 50);
    assert_eq!(report["results"][0]["last_success_s"], Value::Null);
}

// ---------------------------------------------------------------- jitter, analytically

/// CDF of a sum of independent uniforms `U(0, a_i)` (the Irwin–Hall formula generalised to
/// unequal widths): `F(t) = Σ_{S ⊆ I} (−1)^|S| (t − Σ_S a)_+^n / (n! Π a)`.
fn uniform_sum_cdf(widths: &[f64], t: f64) -> f64 {
    let n = widths.len();
    let total: f64 = widths.iter().sum();
    if t <= 0.0 {
        return 0.0;
    }
    if t >= total {
        return 1.0;
    }
    let factorial: f64 = (1..=n).map(|i| i as f64).product();
    let product: f64 = widths.iter().product();
    let mut sum = 0.0;
    for subset in 0u32..(1 << n) {
        let shift: f64 = (0..n)
            .filter(|i| subset & (1 << i) != 0)
            .map(|i| widths[i])
            .sum();
        let x = t - shift;
        if x > 0.0 {
            let sign = if subset.count_ones() % 2 == 0 {
                1.0
            } else {
                -1.0
            };
            sum += sign * x.powi(n as i32);
        }
    }
    (sum / (factorial * product)).clamp(0.0, 1.0)
}

/// Expected retries per 100 ms window for N clients when retry k arrives at
/// `offset_k + Σ_{i≤k} U(0, width_i)`.
fn expected_per_window(clients: f64, offsets: &[f64], widths: &[f64], windows: usize) -> Vec<f64> {
    (0..windows)
        .map(|w| {
            let (lo, hi) = (w as f64 * 0.1, (w + 1) as f64 * 0.1);
            (1..=widths.len())
                .map(|k| {
                    let f = |t: f64| uniform_sum_cdf(&widths[..k], t - offsets[k - 1]);
                    clients * (f(hi) - f(lo))
                })
                .sum()
        })
        .collect()
}

/// Upper 99.9 % quantile of chi-square with `dof` degrees of freedom (Wilson–Hilferty).
fn chi_square_999(dof: f64) -> f64 {
    let z = 3.090_232;
    let a = 2.0 / (9.0 * dof);
    dof * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Pearson's statistic of observed against expected counts, pooling windows whose expectation
/// is under 5 into one cell. Returns (statistic, degrees of freedom).
fn chi_square(observed: &[u64], expected: &[f64]) -> (f64, f64) {
    let (mut stat, mut cells) = (0.0, 0.0);
    let (mut pooled_o, mut pooled_e) = (0.0, 0.0);
    for (w, &e) in expected.iter().enumerate() {
        let o = observed.get(w).copied().unwrap_or(0) as f64;
        if e < 5.0 {
            pooled_o += o;
            pooled_e += e;
        } else {
            stat += (o - e).powi(2) / e;
            cells += 1.0;
        }
    }
    let beyond: u64 = observed.iter().skip(expected.len()).sum();
    pooled_o += beyond as f64;
    if pooled_e >= 5.0 {
        stat += (pooled_o - pooled_e).powi(2) / pooled_e;
        cells += 1.0;
    } else {
        assert!(
            pooled_o <= 5.0 + 4.0 * pooled_e.sqrt().max(1.0),
            "mass where none is expected"
        );
    }
    (stat, cells - 1.0)
}

#[test]
fn full_jitter_first_retry_is_uniform_over_the_base_interval() {
    // One retry of U(0, 1 s): each of the ten 100 ms windows expects N/10.
    for seed in [1, 2, 3] {
        let s = scenario(100_000, Strategy::FullJitter, 1, seed);
        let tally = simulate(&s.run_spec(Strategy::FullJitter), Path::Auto);
        let expected = vec![10_000.0; 10];
        let (stat, dof) = chi_square(&tally.retries.counts(), &expected);
        assert_eq!(dof, 9.0);
        assert!(
            stat < chi_square_999(dof),
            "seed {seed}: chi-square {stat} on {dof} dof"
        );
    }
}

#[test]
fn full_and_equal_jitter_match_their_analytic_window_counts() {
    // Full jitter: retry k lands at Σ_{i≤k} U(0, 2^(i-1) s).
    // Equal jitter: at Σ_{i≤k} 2^(i-2) s + Σ_{i≤k} U(0, 2^(i-2) s).
    let n = 200_000u64;
    let full_widths = [1.0, 2.0, 4.0, 8.0];
    let half_widths = [0.5, 1.0, 2.0, 4.0];
    let cases = [
        (Strategy::FullJitter, [0.0, 0.0, 0.0, 0.0], &full_widths),
        (Strategy::EqualJitter, [0.5, 1.5, 3.5, 7.5], &half_widths),
    ];
    for (strategy, offsets, widths) in cases {
        let s = scenario(n, strategy, 4, 7);
        let tally = simulate(&s.run_spec(strategy), Path::Auto);
        let expected = expected_per_window(n as f64, &offsets, widths, 160);
        let (stat, dof) = chi_square(&tally.retries.counts(), &expected);
        assert!(
            stat < chi_square_999(dof),
            "{strategy}: chi-square {stat} on {dof} dof"
        );
    }
}

#[test]
fn the_analytic_model_itself_is_right() {
    // Sanity of the test's own mathematics: one uniform, two equal uniforms (triangle).
    assert!((uniform_sum_cdf(&[1.0], 0.25) - 0.25).abs() < 1e-12);
    assert!((uniform_sum_cdf(&[1.0, 1.0], 1.0) - 0.5).abs() < 1e-12);
    assert!((uniform_sum_cdf(&[1.0, 1.0], 0.5) - 0.125).abs() < 1e-12);
    assert!((uniform_sum_cdf(&[1.0, 2.0, 4.0], 7.0) - 1.0).abs() < 1e-12);
}

/// Mean and standard deviation of the peak over `seeds` runs of 1000 clients.
fn peak_over_seeds(strategy: Strategy, seeds: u64) -> (f64, f64, f64) {
    let mut peaks = Vec::new();
    let mut windows = Vec::new();
    for seed in 0..seeds {
        let s = scenario(1000, strategy, 4, seed);
        let result = experiment::run_one(&s, strategy);
        peaks.push(result.summary.peak as f64);
        windows.push(result.summary.windows as f64);
    }
    let mean = peaks.iter().sum::<f64>() / seeds as f64;
    let var = peaks.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (seeds - 1) as f64;
    let mean_windows = windows.iter().sum::<f64>() / seeds as f64;
    (mean, var.sqrt(), mean_windows)
}

#[test]
fn mean_peaks_over_seeds_sit_where_published_and_keep_their_order() {
    // An independent implementation gives a mean peak of about 160 for full jitter with a
    // standard deviation of about 9 per seed (the published single draw is 164). Over 100
    // seeds the mean's standard error is 9/√100 = 0.9; the band is four standard errors plus
    // 3 for the "about": 160 ± 6.6.
    let seeds = 100;
    let (full, full_sd, full_windows) = peak_over_seeds(Strategy::FullJitter, seeds);
    assert!(
        (153.4..=166.6).contains(&full),
        "full jitter mean peak {full}"
    );
    assert!(
        (5.0..=14.0).contains(&full_sd),
        "full jitter peak sd {full_sd}"
    );
    // Equal jitter keeps half of each backoff, so its waves are narrower and taller
    // (published: 208 against 164).
    let (equal, equal_sd, _) = peak_over_seeds(Strategy::EqualJitter, seeds);
    let se = ((full_sd.powi(2) + equal_sd.powi(2)) / seeds as f64).sqrt();
    assert!(equal > full + 4.0 * se, "equal {equal} vs full {full}");
    // Decorrelated jitter spreads wider still: more windows and a lower peak.
    let (decorrelated, _, decorrelated_windows) =
        peak_over_seeds(Strategy::DecorrelatedJitter, seeds);
    assert!(
        decorrelated < full,
        "decorrelated {decorrelated} vs full {full}"
    );
    assert!(decorrelated_windows > full_windows);
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_seed_same_bytes_whatever_the_threads_and_company() {
    let run = |args: &[&str]| -> Vec<u8> {
        let out = herd_sim().args(args).output().unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let base = ["--clients", "3000", "--format", "json", "--seed", "99"];
    let all_one_thread = run(&[&base[..], &["--strategy", "all", "--threads", "1"]].concat());
    let all_two_threads = run(&[&base[..], &["--strategy", "all", "--threads", "2"]].concat());
    assert_eq!(all_one_thread, all_two_threads);
    let all: Value = serde_json::from_slice(&all_one_thread).unwrap();
    for (i, strategy) in Strategy::ALL.iter().enumerate() {
        let alone: Value =
            serde_json::from_slice(&run(&[&base[..], &["--strategy", strategy.name()]].concat()))
                .unwrap();
        assert_eq!(alone["results"][0], all["results"][i], "{strategy}");
    }
    let other_seed = run(&[
        "--clients",
        "3000",
        "--format",
        "json",
        "--seed",
        "100",
        "--strategy",
        "all",
    ]);
    assert_ne!(other_seed, all_one_thread);
}

#[test]
fn both_engine_paths_print_the_same_bytes() {
    let run = |engine: &str| {
        herd_sim()
            .args(["--clients", "5000", "--strategy", "all", "--format", "json"])
            .args(["--recover-at", "6s", "--engine", engine])
            .output()
            .unwrap()
            .stdout
    };
    let queue = run("event-queue");
    assert!(!queue.is_empty());
    assert_eq!(queue, run("independent"));
    assert_eq!(queue, run("auto"));
}

#[test]
fn the_config_file_is_experiment_one_and_flags_override_it() {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let config = format!("{manifest}/configs/herd-down.toml");
    let report = json_of(&["--config", &config]);
    let results = report["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fixed",
            "exponential",
            "full-jitter",
            "equal-jitter",
            "decorrelated-jitter"
        ]
    );
    assert!(results
        .iter()
        .all(|r| r["clients"] == 1000 && r["retries"] == 4));
    let report = json_of(&[
        "--config",
        &config,
        "--clients",
        "20",
        "--strategy",
        "fixed",
    ]);
    assert_eq!(report["results"][0]["clients"], 20);
    assert_eq!(report["results"].as_array().unwrap().len(), 1);
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_flags_get_one_clear_error_naming_the_flag_and_what_is_accepted() {
    let e = refused(&["--clients", "0"]);
    assert!(e.contains("--clients") && e.contains("1 to"), "{e}");
    let e = refused(&["--clients", "-5"]);
    assert!(e.contains("--clients") && e.contains("-5"), "{e}");
    let e = refused(&["--base", "0s"]);
    assert!(e.contains("--base") && e.contains("positive"), "{e}");
    let e = refused(&["--base", "-1s"]);
    assert!(e.contains("--base") && e.contains("negative"), "{e}");
    let e = refused(&["--cap", "500ms"]);
    assert!(e.contains("--cap") && e.contains("--base"), "{e}");
    let e = refused(&["--bin", "0ms"]);
    assert!(e.contains("--bin"), "{e}");
    let e = refused(&["--strategy", "jittery"]);
    assert!(
        e.contains("jittery")
            && e.contains("full-jitter")
            && e.contains("decorrelated-jitter")
            && e.contains(", all"),
        "{e}"
    );
    let e = refused(&["--base", "1.5.2s"]);
    assert!(e.contains("--base") && e.contains("1.5.2s"), "{e}");
    let e = refused(&["--base", "1"]);
    assert!(e.contains("unit"), "{e}");
    let e = refused(&["--multiplier", "NaN"]);
    assert!(e.contains("--multiplier") && e.contains("NaN"), "{e}");
    let e = refused(&["--retries", "many"]);
    assert!(e.contains("--retries"), "{e}");
    let e = refused(&[
        "--clients",
        "10000000",
        "--retries",
        "1000000",
        "--bin",
        "1ms",
        "--max-requests",
        "100000000000000",
    ]);
    assert!(
        e.contains("estimated") && e.contains("--memory-limit"),
        "{e}"
    );
}

#[test]
fn bad_config_files_are_refused_with_the_key_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "clients = 10\nretires = 3\n").unwrap();
    let e = refused(&["--config", path.to_str().unwrap()]);
    assert!(e.contains("retires") && e.contains("line 2"), "{e}");
    std::fs::write(&path, "clients = 10\nbase = \"soon\"\n").unwrap();
    let e = refused(&["--config", path.to_str().unwrap()]);
    assert!(e.contains("soon"), "{e}");
    std::fs::write(&path, "clients = [\n").unwrap();
    refused(&["--config", path.to_str().unwrap()]);
    let e = refused(&["--config", "/nonexistent/herd.toml"]);
    assert!(e.contains("/nonexistent/herd.toml"), "{e}");
}

#[test]
fn an_output_file_is_written_whole_and_a_bad_path_fails_first() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("sub/run.json");
    herd_sim()
        .args(["--clients", "10", "--format", "json", "--out"])
        .arg(&target)
        .assert()
        .success();
    let written: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(written["results"][0]["clients"], 10);
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let out = herd_sim()
        .args(["--clients", "10", "--out"])
        .arg(blocker.join("run.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: invalid --out"));
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(leftovers, 2, "no temporary file left behind");
}

#[test]
fn durations_in_flags_are_exact() {
    // 1.5 s base, fixed: retries at 1.5, 3, 4.5, 6 s → windows 15, 30, 45, 60.
    let report = json_of(&["--clients", "3", "--strategy", "fixed", "--base", "1.5s"]);
    let h = report["results"][0]["histogram"].as_array().unwrap();
    let nonzero: Vec<usize> = (0..h.len()).filter(|&w| h[w] != 0).collect();
    assert_eq!(nonzero, [15, 30, 45, 60]);
    assert_eq!(SimDuration::from_millis(1500).to_string(), "1.5s");
}

#[test]
fn the_memory_guard_covers_the_forced_event_queue_and_replicates() {
    // The estimate was once checked before `--engine` chose the path (the
    // event queue holds an event a client: 4 billion clients are over 100 GiB), and ignored
    // the figures every replicate keeps (80 B each while collected: 4 billion are ~320 GiB).
    for args in [
        &["--clients", "4294967295", "--engine", "event-queue"][..],
        &[
            "--server",
            "fixed-window",
            "--clients",
            "1",
            "--replicates",
            "4294967295",
        ][..],
    ] {
        // The requests bound is another guard; lifted so that the memory one answers.
        let out = herd_sim()
            .args(args)
            .args(["--max-requests", "100000000000"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.starts_with("error: this run needs an estimated")
                && stderr.contains("GiB")
                && stderr.lines().count() == 1,
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn long_runs_at_fine_bins_no_longer_abort() {
    // These once allocated a count for every nanosecond window up to the
    // horizon (terabytes) and aborted; the histograms now hold only windows with counts.
    for args in [
        &[
            "--bin",
            "1ns",
            "--cap",
            "1h",
            "--clients",
            "100",
            "--memory-limit",
            "1000TiB",
        ][..],
        &[
            "--latency",
            "uniform:0s..5000000h",
            "--clients",
            "100",
            "--memory-limit",
            "1000TiB",
        ][..],
    ] {
        let out = herd_sim()
            .args(args)
            .args(["--format", "csv"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let csv = String::from_utf8(out.stdout).unwrap();
        // 100 clients, 4 retries, down for good: 400 retries, 500 requests.
        assert!(
            csv.lines().nth(1).unwrap().contains(",400,500,500,"),
            "{csv}"
        );
    }
}
