//! Brooker's 2022 retry-control study through the real binary: the closed forms of N retries
//! against independent failures, checked statistically on sweeps of the shipped
//! `configs/retry-budgets.toml`; the control sweep parameters (`--failure-rate`, `--budget`,
//! `--breaker`, `--throttle`), their determinism over thread counts and their refusals; and
//! the guide's study data, `docs/retry-budgets.csv` (written by scripts/retry-budgets.sh),
//! against fresh sweeps and against every figure the guide quotes from it.

use std::collections::BTreeMap;

const CONFIG: &str = "configs/retry-budgets.toml";
const STUDY: &str = "docs/retry-budgets.csv";

use crate::herd_sim as herd;

fn ok(args: &[&str]) -> String {
    String::from_utf8(crate::herd_sim_ok(args)).unwrap()
}

/// A CSV's rows as column → value maps.
pub fn rows(csv: &str) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn number(row: &BTreeMap<String, String>, column: &str) -> f64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} = {:?}", row[column]))
}

/// With N retries against independent failures of probability x, a call's attempts A are
/// min(G, N + 1) for G geometric with success 1 − x: P(A ≥ k) = x^(k−1), so
/// E[A] = Σ_{k=0..N} x^k and E[A²] = Σ_{k=1..N+1} (2k − 1) x^(k−1). Returns (E[A], Var A).
fn attempts_law(x: f64, retries: u32) -> (f64, f64) {
    let mean: f64 = (0..=retries).map(|k| x.powi(k as i32)).sum();
    let square: f64 = (1..=retries + 1)
        .map(|k| f64::from(2 * k - 1) * x.powi(k as i32 - 1))
        .sum();
    (mean, square - mean * mean)
}

#[test]
fn n_retries_follow_the_closed_forms_through_a_sweep() {
    // The shipped config (Poisson 1000 calls/s over 60 s, 100 processes, immediate retries),
    // swept over x and N. Given a row's n calls, which are independent, attempts per call
    // (`amplification`) has mean Σ_{k=0..N} x^k and sd sqrt(Var A / n), and the success
    // fraction (`goodput_pct` / 100) mean 1 − x^(N+1) and sd sqrt(p(1 − p) / n). Allow 5 sd
    // each: a false alarm about once in 1.7 million per check, 36 checks. At x = 0 both are
    // exact (sd 0): every call succeeds first time.
    let csv = ok(&[
        "sweep",
        "--config",
        CONFIG,
        "--failure-rate",
        "0,0.1,0.5,0.9",
        "--retries",
        "0,1,3",
        "--clients",
        "100",
        "--seeds",
        "1",
    ]);
    let rows = rows(&csv);
    assert_eq!(rows.len(), 12);
    for row in &rows {
        let (x, retries) = (number(row, "failure_rate"), number(row, "retries") as u32);
        let n = number(row, "calls");
        // 60 s at 1000/s: 60 000 calls give or take a few sd (245).
        assert!((58_500.0..61_500.0).contains(&n), "{n}");
        let (mean, variance) = attempts_law(x, retries);
        let sd = (variance / n).sqrt();
        let load = number(row, "amplification");
        assert!(
            (load - mean).abs() <= 5.0 * sd + 1e-12,
            "x {x}, N {retries}: load {load} vs {mean} ± {sd}"
        );
        let p = 1.0 - x.powi(retries as i32 + 1);
        let sd = (p * (1.0 - p) / n).sqrt();
        let success = number(row, "goodput_pct") / 100.0;
        assert!(
            (success - p).abs() <= 5.0 * sd + 1e-12,
            "x {x}, N {retries}: success {success} vs {p} ± {sd}"
        );
        // No control: nothing denied, nothing rejected; the columns say so.
        assert_eq!(row["budget"], "none");
        assert_eq!(row["breaker"], "none");
        assert_eq!(row["throttle"], "none");
        assert_eq!(row["retries_denied"], "0");
        assert_eq!(row["calls_rejected_locally"], "0");
    }
}

#[test]
fn both_published_token_bucket_rules_follow_their_conservation_laws() {
    // Brooker's post deposits d = 0.1 token per successful call (`on=success`); the code of
    // his simulator deposits it at every call's start and lets a retry through while more than
    // 1 token is left (`on=call`). Either way the retries a process makes are its deposits
    // plus the capacity C = 5 it starts with, less what is left at the end and what a full
    // bucket could not take. At x = 0.5 and 0.9 retries are wanted far more often than tokens
    // come (up to 3 a call against 0.1), so the bucket runs dry and the load A (attempts per
    // call) of n calls over P = 100 processes is, by the code's rule, between 1 + d and
    // 1 + d + C·P/n; by the post's, with S = (1 − x)·n·A successes (each attempt succeeds
    // with 1 − x and ends its call), n·A = n + d·S + (0..C·P), so A lies between
    // 1/(1 − d(1 − x)) and (1 + C·P/n)/(1 − d(1 − x)), less 5 sd of S's noise. At x = 0.5
    // that is 1.1 to 1.108 against 1.053 to 1.061: the 1.107 and 1.060 the two rules give.
    let csv = ok(&[
        "sweep",
        "--config",
        CONFIG,
        "--failure-rate",
        "0.5,0.9",
        "--clients",
        "100",
        "--budget",
        "token-bucket:deposit=success",
        "token-bucket:deposit=call",
        "--seeds",
        "1",
    ]);
    let rows = rows(&csv);
    assert_eq!(rows.len(), 4);
    let (d, capacity, processes) = (0.1, 5.0, 100.0);
    for row in &rows {
        let (x, n, load) = (
            number(row, "failure_rate"),
            number(row, "calls"),
            number(row, "amplification"),
        );
        let start = capacity * processes / n;
        let noise = 5.0 * d * (load * x * (1.0 - x) / n).sqrt();
        let (low, high) = match row["budget"].as_str() {
            "token-bucket" => {
                let scale = 1.0 / (1.0 - d * (1.0 - x));
                (scale - noise, (1.0 + start) * scale + noise)
            }
            "token-bucket:on=call" => (1.0 + d, 1.0 + d + start),
            other => panic!("budget column {other}"),
        };
        assert!(
            (low..=high).contains(&load),
            "{} at x {x}: load {load} outside {low}..{high}",
            row["budget"]
        );
        // Successes are the successful attempts: (1 − x) of all, within 5 sd.
        let success = number(row, "goodput_pct") / 100.0;
        let sd = (load * x * (1.0 - x) / n).sqrt();
        assert!(
            (success - (1.0 - x) * load).abs() <= 5.0 * sd,
            "{} at x {x}: success {success} vs {}",
            row["budget"],
            (1.0 - x) * load
        );
    }
}

/// A small control grid of the shipped config cut to 5 s of calls: 3 budgets × 2 breakers ×
/// 2 failure rates × 2 seeds, with the SRE throttle.
fn control_sweep(config: &std::path::Path, threads: &str) -> String {
    ok(&[
        "sweep",
        "--config",
        config.to_str().unwrap(),
        "--clients",
        "10",
        "--failure-rate",
        "0.2,0.6",
        "--budget",
        "none",
        "token-bucket:capacity=5",
        "grpc:max_tokens=20,token_ratio=0.2",
        "--breaker",
        "none,retries:ratio=0.1,window=all",
        "--throttle",
        "sre:k=2",
        "--seeds",
        "2",
        "--threads",
        threads,
    ])
}

#[test]
fn a_control_sweep_is_the_same_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("short.toml");
    let text = std::fs::read_to_string(CONFIG).unwrap();
    assert!(text.contains("duration = \"60s\""));
    std::fs::write(
        &config,
        text.replace("duration = \"60s\"", "duration = \"5s\""),
    )
    .unwrap();
    let one = control_sweep(&config, "1");
    assert_eq!(one, control_sweep(&config, "2"));
    let rows = rows(&one);
    assert_eq!(rows.len(), 3 * 2 * 2 * 2);
    // Values are written shortest: parameters at their defaults are left out.
    let budgets: Vec<&str> = rows.iter().map(|r| r["budget"].as_str()).collect();
    assert!(budgets.contains(&"token-bucket"));
    assert!(budgets.contains(&"grpc:max_tokens=20,token_ratio=0.2"));
    assert!(rows.iter().any(|r| r["breaker"] == "retries"));
    assert!(rows.iter().all(|r| r["throttle"] == "sre"));
    for row in &rows {
        let controlled = row["budget"] != "none" || row["breaker"] != "none";
        let denied = number(row, "retries_denied");
        // At x = 0.6 every control here denies retries; without one, only the throttle acts
        // (it rejects attempts locally, and denies no retry).
        if number(row, "failure_rate") == 0.6 {
            assert_eq!(denied > 0.0, controlled, "{row:?}");
            assert!(number(row, "calls_rejected_locally") > 0.0, "{row:?}");
        }
    }
}

#[test]
fn a_preset_sweep_takes_each_presets_keys_under_the_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("presets.toml");
    // The shipped config without its strategy and retries, 2 s of calls: the presets set them.
    let text = std::fs::read_to_string(CONFIG)
        .unwrap()
        .replace("strategy = \"naive\"\n", "")
        .replace("retries = 3\n", "")
        .replace("duration = \"60s\"", "duration = \"2s\"");
    std::fs::write(&config, text).unwrap();
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "--config",
            config.to_str().unwrap(),
            "--clients",
            "10",
            "--failure-rate",
            "0.3",
            "--preset",
            "aws-standard,grpc,envoy",
            "--seeds",
            "1",
        ];
        args.extend(extra);
        rows(&ok(&args))
    };
    // What each preset sets (guide, "Presets"): strategy, retries, base and budget.
    let expected = [
        ("aws-standard", "full-jitter", "2", "1", "aws-standard"),
        ("grpc", "full-jitter", "3", "0.1", "grpc"),
        ("envoy", "full-jitter", "1", "0.025", "envoy"),
    ];
    let rows = sweep(&[]);
    assert_eq!(rows.len(), 3);
    for (row, (preset, strategy, retries, base, budget)) in rows.iter().zip(expected) {
        assert_eq!(
            [
                &row["preset"],
                &row["strategy"],
                &row["retries"],
                &row["base_s"],
                &row["budget"]
            ],
            [preset, strategy, retries, base, budget]
        );
    }
    // A key the sweep gives lies over the preset's, in every cell.
    for row in sweep(&["--retries", "5", "--budget", "none"]) {
        assert_eq!(
            (row["retries"].as_str(), row["budget"].as_str()),
            ("5", "none")
        );
    }
}

#[test]
fn bad_control_values_are_one_line_naming_the_flag() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["--budget", "none,gprc"],
            "error: invalid --budget: gprc; accepted: none, token-bucket, grpc, aws-standard, envoy, finagle",
        ),
        (
            &["--breaker", "window=all,retries"],
            "error: invalid --breaker: `window=all,retries` starts with the parameter `window=all`; write a name first",
        ),
        (
            &["--budget", "grpc:capacity=5"],
            "error: invalid --budget: grpc:capacity=5; `capacity` is a parameter of token-bucket, aws-standard, not of grpc",
        ),
        (
            &["--failure-rate", "0.5,1.5"],
            "error: cell 1 (clients=10, failure-rate=1.5): invalid --failure-rate: 1.5; accepted: a probability from 0 to 1",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    for (args, expected) in cases {
        let output = herd()
            .args(["sweep", "--config", CONFIG])
            .args(args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty() && !out.exists(), "{args:?}");
    }
}

/// The guide's study data: `(control, processes, failure rate in thousandths)` → its row.
type Study = BTreeMap<(String, u64, u64), BTreeMap<String, String>>;

fn study() -> Study {
    let text = std::fs::read_to_string(STUDY).unwrap();
    rows(&text)
        .into_iter()
        .map(|row| {
            let x = (number(&row, "failure_rate") * 1000.0).round() as u64;
            let key = (row["control"].clone(), row["clients"].parse().unwrap(), x);
            (key, row)
        })
        .collect()
}

/// The controls of scripts/retry-budgets.sh and their sweep flags.
const CONTROLS: [(&str, &[&str]); 7] = [
    ("no retries", &["--retries", "0"]),
    ("3 retries", &[]),
    ("token bucket", &["--budget", "token-bucket"]),
    (
        "retry breaker",
        &["--breaker", "retries:ratio=0.1,window=all"],
    ),
    ("grpc", &["--budget", "grpc"]),
    ("aws-standard", &["--budget", "aws-standard"]),
    ("envoy", &["--budget", "envoy"]),
];

#[test]
fn the_committed_study_data_is_what_the_sweeps_write() {
    let committed = std::fs::read_to_string(STUDY).unwrap();
    let lines: std::collections::BTreeSet<&str> = committed.lines().collect();
    let header = committed.lines().next().unwrap();
    // One cell of three controls (x = 0.5, 1000 processes, 5 seeds), rerun: each line is the
    // file's, after the control's name.
    for (name, flags) in [CONTROLS[0], CONTROLS[2], CONTROLS[3]] {
        let mut args = vec![
            "sweep",
            "--config",
            CONFIG,
            "--failure-rate",
            "0.5",
            "--clients",
            "1000",
            "--aggregate",
        ];
        args.extend(flags);
        let out = ok(&args);
        let mut fresh = out.lines();
        assert_eq!(format!("control,{}", fresh.next().unwrap()), header);
        let line = fresh.next().unwrap();
        assert!(
            lines.contains(format!("{name},{line}").as_str()),
            "not in {STUDY}: {name},{line}"
        );
        assert_eq!(fresh.next(), None);
    }
    // The whole file: 7 controls × 19 failure rates × 3 splits, in the script's order.
    let data = study();
    assert_eq!(data.len(), 7 * 19 * 3);
    assert_eq!(committed.lines().count(), 1 + 7 * 19 * 3);
    for (name, _) in CONTROLS {
        for clients in [10, 100, 1000] {
            for x in (0..=900).step_by(50) {
                assert!(data.contains_key(&(name.to_string(), clients, x)));
            }
        }
    }
}

#[test]
fn the_readmes_study_figures_are_the_committed_datas() {
    let text = std::fs::read_to_string("docs/retry-control.md").unwrap();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let says = |sentence: &str| {
        assert!(
            flat.contains(sentence),
            "docs/retry-control.md should say: {sentence}"
        );
    };
    let data = study();
    let row = |control: &str, clients: u64, x: u64| &data[&(control.to_string(), clients, x)];
    let load = |c: &str, n: u64, x: u64| number(row(c, n, x), "amplification_mean");
    let success = |c: &str, n: u64, x: u64| number(row(c, n, x), "goodput_pct_mean");
    let xs = [50, 100, 500, 900];

    // The table: every row, from the file.
    let mut table_rows = 0;
    for (name, _) in CONTROLS {
        let splits: &[u64] = match name {
            "no retries" | "3 retries" => &[100],
            _ => &[10, 100, 1000],
        };
        for &n in splits {
            let mut cells = vec![name.to_string(), n.to_string()];
            cells.extend(xs.map(|x| format!("{:.3}", load(name, n, x))));
            cells.extend(xs.map(|x| format!("{:.1}", success(name, n, x))));
            let line = format!("| {} |", cells.join(" | "));
            assert!(
                text.lines().any(|l| l == line),
                "docs/retry-control.md: no table row {line}"
            );
            table_rows += 1;
        }
    }
    assert_eq!(table_rows, 17);

    // No retries: exactly one attempt a call, everywhere.
    for ((control, _, _), r) in &data {
        if control == "no retries" {
            assert_eq!(number(r, "amplification_mean"), 1.0, "{r:?}");
        }
    }
    // The closed forms of 3 retries, by hand (not from the file), as the guide writes them.
    let trim = |v: f64, decimals: usize| {
        let t = format!("{v:.decimals$}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let x = xs.map(|x| x as f64 / 1000.0);
    let closed_load = x.map(|x| trim(1.0 + x + x * x + x * x * x, 4));
    let closed_success = x.map(|x| trim(100.0 * (1.0 - x.powi(4)), 4));
    says(&format!(
        "1 + x + x² + x³ is {}, {}, {} and {} at x = 0.05, 0.1, 0.5 and 0.9, and 1 − x⁴ is {} %, {} %, {} % and {} %",
        closed_load[0], closed_load[1], closed_load[2], closed_load[3],
        closed_success[0], closed_success[1], closed_success[2], closed_success[3]
    ));
    // The token bucket's peak load with 100 processes.
    let peak = (0..=900)
        .step_by(50)
        .max_by(|&a, &b| load("token bucket", 100, a).total_cmp(&load("token bucket", 100, b)))
        .unwrap();
    says(&format!(
        "with 100 processes its load is at most {:.3} (at x = {})",
        load("token bucket", 100, peak),
        peak as f64 / 1000.0
    ));
    // The breaker's trip: x(1 + x + x²) = 0.1, by bisection.
    let (mut low, mut high) = (0.0f64, 0.5f64);
    for _ in 0..60 {
        let mid = (low + high) / 2.0;
        if mid * (1.0 + mid + mid * mid) < 0.1 {
            low = mid;
        } else {
            high = mid;
        }
    }
    says(&format!("passes the ratio 0.1 at x = {low:.3}"));
    says(&format!(
        "1000 processes: {:.1} % success at x = 0.05",
        success("retry breaker", 1000, 50)
    ));
    // The bucket's bound at x = 0.9: 1 + 0.1 s + 5P/C, never exceeded, within 0.01.
    let bound: Vec<String> = [10, 100, 1000]
        .iter()
        .map(|&n| {
            let r = row("token bucket", n, 900);
            let s = number(r, "goodput_pct_mean") / 100.0;
            let bound = 1.0 + 0.1 * s + 5.0 * n as f64 / number(r, "calls_mean");
            let measured = load("token bucket", n, 900);
            // Means over seeds of per-seed bounds and of their ratio: equal to 1e-4 here.
            assert!(measured <= bound + 1e-4 && bound - measured < 0.01, "{n}");
            format!("{measured:.3} against {bound:.3}")
        })
        .collect();
    says(&format!(
        "{}, {} and {} for 10, 100 and 1000 processes",
        bound[0], bound[1], bound[2]
    ));
    // Production budgets, from the file.
    says(&format!("(load {:.3} at x = 0.5)", load("grpc", 1000, 500)));
    says(&format!(
        "(1000 processes: {:.3} at x = 0.9, near 3 retries' {:.3})",
        load("aws-standard", 1000, 900),
        load("3 retries", 100, 900)
    ));
    says(&format!(
        "(10 processes: {:.3})",
        load("aws-standard", 10, 900)
    ));
    says(&format!(
        "(100 processes: {:.3} at x = 0.9); at 100 calls a second per process (10 processes) it binds often ({:.3} at 0.9)",
        load("envoy", 100, 900),
        load("envoy", 10, 900)
    ));
}
