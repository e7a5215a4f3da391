//! Integration tests of the `occ` server (Brooker 2015's contention model) through the real
//! binary: the shipped config, determinism over thread counts, and bad input.

use serde_json::Value;

const CONFIG: &str = "configs/occ-contention.toml";

use crate::herd_sim as herd;

use crate::herd_sim_ok as ok;

/// Runs with `args`, expects an `error:` naming `flag` on the first line, exit 2, nothing on
/// stdout; returns stderr.
fn refused(args: &[&str], flag: &str) -> String {
    let out = herd().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(stderr.starts_with("error:"), "{stderr}");
    assert!(
        stderr.lines().next().unwrap().contains(flag),
        "{flag} in {stderr}"
    );
    stderr
}

/// [`refused`], and the error is that one line (a scenario error, not clap's usage text).
fn refused_in_one_line(args: &[&str], flag: &str) {
    let stderr = refused(args, flag);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn the_shipped_config_runs_the_study_and_conserves_writes() {
    let out = ok(&["--config", CONFIG, "--clients", "50", "--format", "json"]);
    let report: Value = serde_json::from_slice(&out).unwrap();
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    for r in results {
        let (attempts, refused) = (r["attempts"].as_u64(), r["refused"].as_u64());
        assert_eq!(attempts, r["requests"].as_u64(), "{r}");
        assert_eq!(
            attempts.unwrap(),
            50 + refused.unwrap(),
            "{}",
            r["strategy"]
        );
        assert_eq!(r["succeeded"], 50);
        assert!(r["server"].as_str().unwrap().contains("normal:10ms,2ms"));
    }
    // The other servers' JSON has no `attempts`.
    let down: Value = serde_json::from_slice(&ok(&["--clients", "5", "--format", "json"])).unwrap();
    assert!(down["results"][0].get("attempts").is_none());
}

#[test]
fn same_seed_same_bytes_for_one_and_two_threads() {
    let run = |threads: &str| {
        ok(&[
            "--config",
            CONFIG,
            "--clients",
            "200",
            "--format",
            "json",
            "--threads",
            threads,
        ])
    };
    assert_eq!(run("1"), run("2"));
    let sweep = |threads: &str| {
        ok(&[
            "sweep",
            "--config",
            CONFIG,
            "--clients",
            "20,60",
            "--seeds",
            "3",
            "--aggregate",
            "--threads",
            threads,
        ])
    };
    let one = sweep("1");
    assert_eq!(one, sweep("2"));
    let text = String::from_utf8(one).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert!(header.contains(&"attempts_mean") && header.contains(&"finish_s_mean"));
    assert_eq!(text.lines().count(), 1 + 2 * 5);
}

#[test]
fn occ_flags_elsewhere_and_other_flags_with_occ_are_refused() {
    // The network delay is each direction of the call loop for other servers, and cannot be
    // given with their round-trip --latency.
    refused_in_one_line(
        &["--network-delay", "10ms", "--latency", "20ms"],
        "--network-delay",
    );
    refused_in_one_line(
        &[
            "--server",
            "token-bucket",
            "--latency",
            "20ms",
            "--network-delay",
            "normal:10ms,2ms",
        ],
        "--network-delay",
    );
    // The call loop's keys are refused with occ.
    refused_in_one_line(&["--server", "occ", "--timeout", "1s"], "--timeout");
    // Other servers' flags given to occ.
    refused_in_one_line(&["--server", "occ", "--recover-at", "5s"], "--recover-at");
    refused_in_one_line(&["--server", "occ", "--limit", "10"], "--limit");
    refused_in_one_line(&["--server", "occ", "--capacity", "3"], "--capacity");
    refused_in_one_line(&["--server", "occ", "--latency", "110ms"], "--latency");
    refused_in_one_line(&["--server", "occ", "--items", "3"], "--items");
    refused_in_one_line(&["--server", "occ", "--pool", "2000"], "--pool");
    refused_in_one_line(&["--config", CONFIG, "--recover-at", "1s"], "--recover-at");
    // A malformed delay (clap's parse error; its rendering is the command line's).
    refused(
        &["--server", "occ", "--network-delay", "normal:10ms"],
        "--network-delay",
    );
    // The independent path cannot run clients that interact.
    refused_in_one_line(&["--server", "occ", "--engine", "independent"], "--engine");
}

/// The guide's study data, `docs/occ-contention.csv` (written by scripts/occ-contention.sh):
/// `(strategy, clients)` → `(attempts_mean, finish_s_mean, base_s)`.
type Study = std::collections::BTreeMap<(String, u64), (f64, f64, f64)>;

fn study() -> Study {
    let mut reader = csv::Reader::from_path("docs/occ-contention.csv").unwrap();
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (strategy, clients, base) = (column("strategy"), column("clients"), column("base_s"));
    let (attempts, finish) = (column("attempts_mean"), column("finish_s_mean"));
    let gave_up = column("gave_up_max");
    let mut out = Study::new();
    for record in reader.records() {
        let r = record.unwrap();
        // Retries are never spent (see configs/occ-contention.toml): no client gave up.
        assert_eq!(&r[gave_up], "0", "{r:?}");
        let number = |i: usize| r[i].parse::<f64>().unwrap();
        out.insert(
            (r[strategy].to_string(), r[clients].parse().unwrap()),
            (number(attempts), number(finish), number(base)),
        );
    }
    out
}

#[test]
fn the_committed_study_data_is_what_the_sweeps_write() {
    // The script's two sweeps, cut to 10, 50 and 100 clients: their rows are the file's.
    let committed = std::fs::read_to_string("docs/occ-contention.csv").unwrap();
    let lines: std::collections::BTreeSet<&str> = committed.lines().collect();
    let header = committed.lines().next().unwrap();
    let mut rows = 0;
    for extra in [
        &["--strategy", "naive,exponential,full-jitter,equal-jitter"][..],
        &["--strategy", "decorrelated-jitter", "--base", "5ms"][..],
    ] {
        let mut args = vec!["sweep", "--config", CONFIG, "--clients", "10,50,100"];
        args.extend(extra);
        args.push("--aggregate");
        let out = String::from_utf8(ok(&args)).unwrap();
        let mut fresh = out.lines();
        assert_eq!(fresh.next(), Some(header));
        for line in fresh {
            assert!(
                lines.contains(line),
                "not in docs/occ-contention.csv: {line}"
            );
            rows += 1;
        }
    }
    assert_eq!(rows, 15);
    // The whole file: 19 client counts × 5 strategies, every client done.
    assert_eq!(study().len(), 19 * 5);
    assert!(committed.lines().count() == 1 + 19 * 5);
}

#[test]
fn the_readmes_contention_figures_are_the_committed_datas() {
    let text = std::fs::read_to_string("docs/experiments.md").unwrap();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let data = study();
    let get = |s: &str, n: u64| data[&(s.to_string(), n)];
    let work = |s: &str, n: u64| get(s, n).0;
    let time = |s: &str, n: u64| get(s, n).1;
    let strategies = [
        "naive",
        "exponential",
        "full-jitter",
        "equal-jitter",
        "decorrelated-jitter",
    ];
    for s in strategies {
        let row = text
            .lines()
            // The contention table's row: its strategy, base and six figures.
            .find(|l| l.starts_with(&format!("| `{s}` |")) && l.matches('|').count() == 9)
            .unwrap_or_else(|| panic!("docs/experiments.md: no contention row for {s}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let base = format!("{} ms", get(s, 10).2 * 1000.0);
        let mut expected = vec![base];
        expected.extend([10, 100, 1000].map(|n| format!("{:.1}", work(s, n))));
        expected.extend([10, 100, 1000].map(|n| format!("{:.2}", time(s, n))));
        assert_eq!(cells[2..9], expected[..], "{s}");
    }
    let says = |sentence: String| {
        assert!(
            flat.contains(&sentence),
            "docs/experiments.md should say: {sentence}"
        );
    };
    let exponent =
        |s: &str, a: u64, b: u64| (work(s, b) / work(s, a)).ln() / (b as f64 / a as f64).ln();
    let percent = |a: f64, b: f64| 100.0 * (a / b - 1.0);
    says(format!(
        "Ours grows as N^{:.2} from 10 to 100 clients and N^{:.2} from 100 to 1000",
        exponent("naive", 10, 100),
        exponent("naive", 100, 1000)
    ));
    says(format!(
        "1000 clients make {:.3} of N(N+1)/2",
        work("naive", 1000) / 500_500.0
    ));
    let jittered = ["full-jitter", "equal-jitter", "decorrelated-jitter"];
    let slowest = |n: u64| jittered.iter().map(|s| time(s, n)).fold(0.0, f64::max);
    says(format!(
        "Ours: {:.2} s at 100 clients, {:.1} times the slowest jittered strategy, and {:.1} times at 1000; it also does {:.2} times full jitter's work at 100 clients",
        time("exponential", 100),
        time("exponential", 100) / slowest(100),
        time("exponential", 1000) / slowest(1000),
        work("exponential", 100) / work("full-jitter", 100)
    ));
    // Equal against full jitter: more work at 100 clients, less at 1000, longer at 100.
    let (e100, e1000) = (
        percent(work("equal-jitter", 100), work("full-jitter", 100)),
        percent(work("equal-jitter", 1000), work("full-jitter", 1000)),
    );
    let longer = percent(time("equal-jitter", 100), time("full-jitter", 100));
    assert!(e100 > 0.0 && e1000 < 0.0 && longer > 0.0);
    says(format!(
        "equal jitter does {e100:.1} % more at 100 clients, but {:.1} % less at 1000; its time is the longer ({longer:.1} % at 100 clients)",
        -e1000
    ));
    let (d100, d1000) = (
        percent(work("decorrelated-jitter", 100), work("full-jitter", 100)),
        percent(work("decorrelated-jitter", 1000), work("full-jitter", 1000)),
    );
    assert!(d100 > 0.0 && d1000 > 0.0);
    says(format!(
        "Ours: {d100:.1} % more than full jitter at 100 clients, {d1000:.1} % at 1000"
    ));
    let (t100, t1000) = (
        percent(time("full-jitter", 100), time("decorrelated-jitter", 100)),
        percent(time("full-jitter", 1000), time("decorrelated-jitter", 1000)),
    );
    assert!(t100 > 0.0 && t1000 < 0.0);
    says(format!(
        "less work, and {t100:.1} % longer, as published; at 1000 clients full jitter is {:.1} % shorter",
        -t1000
    ));
    // "At 10 clients decorrelated jitter does the least work."
    let least = strategies
        .iter()
        .min_by(|a, b| work(a, 10).total_cmp(&work(b, 10)))
        .unwrap();
    assert_eq!(*least, "decorrelated-jitter");
    says("At 10 clients decorrelated jitter does the least work".into());
}
