//! Integration tests of call-loop runs (the overload model) through the real binary:
//! the table of a hand-worked case, the JSON summary and series against each other and against
//! conservation, `--series-out` against the JSON, determinism over thread counts, and bad input.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::herd_sim as herd;

use crate::herd_sim_ok as ok;

/// A busy scenario: Poisson load with a spike past capacity, 4 workers, a bounded queue that
/// sheds, a timeout, network delay, an outage; three strategies with 2 retries.
const BUSY: [&str; 28] = [
    "--server",
    "capacity",
    "--workers",
    "4",
    "--service-time",
    "exp:40ms",
    "--queue",
    "20",
    "--arrivals",
    "poisson",
    "--rate",
    "60/s",
    "--duration",
    "30s",
    "--spike",
    "10s..14s@200/s",
    "--timeout",
    "300ms",
    "--network-delay",
    "exp:5ms",
    "--outage",
    "20s..22s",
    "--strategy",
    "naive,full-jitter,exponential",
    "--retries",
    "2",
    "--clients",
    "8",
];

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&ok(&[args, &["--format", "json"]].concat())).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("a whole number: {v}"))
}

fn column(series: &Value, name: &str) -> Vec<u64> {
    series[name].as_array().unwrap().iter().map(u).collect()
}

#[test]
fn a_hand_worked_fifo_case_reads_in_the_table() {
    // Five clients at t = 0, 2 workers of 1 s each, FIFO, timeout 2.5 s, naive, 1 retry.
    // c0, c1 are served 0–1 s, c2, c3 1–2 s; c4 would be served 2–3 s but times out at 2.5 s
    // (1 s of abandoned work) and its retry, sent at 2.5 s, finds the worker free since 2 s:
    // served 2.5–3.5 s. 5 calls, 6 attempts (amplification 1.20), all succeed, 1 timeout;
    // latencies 1, 1, 2, 2, 1 s: p50 1 s, p99 2 s, shown as the sketch's bucket midpoints
    // (1 000 341 504 ns and 2 000 683 008 ns: 1s and 2.001s at three decimals). No trigger.
    let out = ok(&[
        "--clients",
        "5",
        "--server",
        "capacity",
        "--workers",
        "2",
        "--service-time",
        "1s",
        "--timeout",
        "2.5s",
        "--strategy",
        "naive",
        "--retries",
        "1",
    ]);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "load: herd at t = 0 (5 client processes)");
    assert!(lines[1].starts_with("server: capacity: 2 workers, service 1s"));
    assert!(lines[1].ends_with("; triggers: none"), "{}", lines[1]);
    assert!(lines[2].starts_with("clients: timeout 2.5s, round trip 0s; 1 retry"));
    let row: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("naive"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        ["naive", "5", "6", "1.20", "100.0%", "1", "0", "1s", "2.001s", "1s", "-"]
    );
}

#[test]
fn summary_and_series_agree_and_every_attempt_is_accounted_for() {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("series.csv");
    let csv_arg = csv_path.to_str().unwrap();
    let report = json(&[&BUSY[..], &["--series-out", csv_arg]].concat());
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "strategy,window_start_s,calls_started,attempts,succeeded,timed_out,refused,in_system,\
         latency_p50_s,latency_p99_s,retries_denied,rejected_locally"
    );
    // The CSV rows, by strategy, in order.
    let mut by_strategy: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for line in lines {
        let cells: Vec<String> = line.split(',').map(str::to_string).collect();
        assert_eq!(cells.len(), 12, "{line}");
        by_strategy.entry(cells[0].clone()).or_default().push(cells);
    }
    for r in results {
        let name = r["strategy"].as_str().unwrap();
        let (calls, attempts) = (u(&r["calls"]), u(&r["attempts"]));
        let (succeeded, gave_up) = (u(&r["succeeded"]), u(&r["gave_up"]));
        let (timed_out, refused) = (u(&r["timed_out"]), u(&r["refusals_read"]));
        // Runs go on until nothing is pending: every attempt ends one of three ways, every
        // call one of two.
        assert_eq!(attempts, succeeded + timed_out + refused, "{name}");
        assert_eq!(calls, succeeded + gave_up, "{name}");
        // The spike (200/s against 4 / 40 ms = 100/s) and the outage leave marks.
        assert!(timed_out > 0 && refused > 0 && calls > 1500, "{name}: {r}");
        // Refusals read in time are at most the server's refusals (a refusal can also come
        // back after its timeout, read as late).
        assert!(refused <= u(&r["refused"]));
        assert_eq!(r["requests"], r["attempts"], "{name}");
        let amplification = r["amplification"].as_f64().unwrap();
        // serde_json reads floats to within an ulp, not always exactly.
        assert!((amplification - attempts as f64 / calls as f64).abs() < 1e-12);
        let goodput = r["goodput_pct"].as_f64().unwrap();
        assert!((goodput - 100.0 * succeeded as f64 / calls as f64).abs() < 1e-9);
        // The series sums to the summary.
        let series = &r["series"];
        for (col, total) in [
            ("calls_started", calls),
            ("attempts", attempts),
            ("succeeded", succeeded),
            ("timed_out", timed_out),
            ("refused", refused),
        ] {
            assert_eq!(
                column(series, col).iter().sum::<u64>(),
                total,
                "{name} {col}"
            );
        }
        // Windows are 1 s, in order, and the server is empty at the end.
        let starts: Vec<f64> = series["window_start_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]));
        assert!(starts.iter().all(|s| s.fract() == 0.0));
        assert_eq!(*column(series, "in_system").last().unwrap(), 0);
        // The outage [20 s, 22 s): the windows starting at 20 and 21 s hold no success of an
        // attempt sent then (timeout 300 ms), and refusals.
        let at = |s: f64| starts.iter().position(|&x| x == s).unwrap();
        assert!(column(series, "refused")[at(20.0)] > 0);
        // The CSV holds the same rows as the JSON, value for value.
        let rows = &by_strategy[name];
        assert_eq!(rows.len(), starts.len(), "{name}");
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row[1].parse::<f64>().unwrap(), starts[i]);
            for (c, col) in [
                "calls_started",
                "attempts",
                "succeeded",
                "timed_out",
                "refused",
                "in_system",
            ]
            .iter()
            .enumerate()
            {
                assert_eq!(row[2 + c].parse::<u64>().unwrap(), column(series, col)[i]);
            }
            for (c, col) in ["latency_p50_s", "latency_p99_s"].iter().enumerate() {
                let json = &series[*col][i];
                match json.as_f64() {
                    Some(v) => assert_eq!(row[8 + c].parse::<f64>().unwrap(), v),
                    None => assert_eq!(row[8 + c], "", "{name} {col} {i}"),
                }
            }
            // A latency exists exactly when something succeeded in the window.
            assert_eq!(
                series["latency_p50_s"][i].is_null(),
                column(series, "succeeded")[i] == 0
            );
        }
        // With a trigger, recovery is a time after its end or null ("stuck").
        assert_eq!(r["trigger_end_s"], 22.0);
        if let Some(t) = r["recovered_at_s"].as_f64() {
            assert!(t >= 22.0 && t.fract() == 0.0);
        }
    }
}

#[test]
fn same_seed_same_bytes_for_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let run = |threads: &str| {
        let path = dir.path().join(format!("s{threads}.csv"));
        let out = ok(&[
            &BUSY[..],
            &[
                "--format",
                "json",
                "--threads",
                threads,
                "--series-out",
                path.to_str().unwrap(),
            ],
        ]
        .concat());
        (out, std::fs::read(&path).unwrap())
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let table = |threads: &str| ok(&[&BUSY[..], &["--threads", threads]].concat());
    assert_eq!(table("1"), table("2"));
}

/// Runs `args` writing into an empty folder; expects one `error:` line naming `flag`, exit 2,
/// nothing on stdout and nothing written.
fn refused(args: &[&str], flag: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out/report.json");
    let series = dir.path().join("out/series.csv");
    let out = herd()
        .args(args)
        .args(["--out", out_path.to_str().unwrap()])
        .args(["--series-out", series.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(stderr.starts_with("error:"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.contains(flag), "{flag} in {stderr}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{args:?} wrote {left:?}");
    assert!(!Path::new(&out_path).exists());
}

#[test]
fn the_issues_bad_input_is_refused_in_one_line() {
    let cap = ["--server", "capacity"];
    let poisson = [
        "--arrivals",
        "poisson",
        "--rate",
        "40/s",
        "--duration",
        "80s",
    ];
    refused(&[&cap[..], &["--workers", "0"]].concat(), "--workers");
    refused(
        &[
            "--arrivals",
            "poisson",
            "--rate",
            "0/s",
            "--duration",
            "10s",
        ],
        "--rate",
    );
    refused(
        &[
            "--arrivals",
            "poisson",
            "--rate",
            "-5/s",
            "--duration",
            "10s",
        ],
        "--rate",
    );
    refused(
        &[&poisson[..], &["--spike", "90s..95s@80/s"]].concat(),
        "--spike",
    );
    refused(
        &[&poisson[..], &["--spike", "70s..90s@80/s"]].concat(),
        "--spike",
    );
    refused(
        &[&poisson[..], &["--spike", "25s..20s@80/s"]].concat(),
        "--spike",
    );
    refused(
        &[&poisson[..], &["--spike", "20s..20s@80/s"]].concat(),
        "--spike",
    );
    refused(&["--timeout", "0s"], "--timeout");
    refused(&["--server", "down", "--workers", "4"], "--workers");
    refused(
        &["--server", "token-bucket", "--service-time", "10ms"],
        "--service-time",
    );
    refused(
        &[&cap[..], &["--latency", "100ms", "--network-delay", "10ms"]].concat(),
        "--network-delay",
    );
    // A series only a call-loop run has: a plain herd against `down` has none.
    refused(&["--clients", "5"], "--series-out");
}

/// A parsed CSV: header and rows of fields (no quoted fields in these sweeps).
fn table(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

fn field<'a>(header: &[String], row: &'a [String], name: &str) -> &'a str {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    &row[i]
}

/// A small collapse as a base scenario: 1 worker of 100 ms (10/s), Poisson 4/s with a spike
/// to 30/s over [5 s, 10 s), timeout 1 s, 2 naive retries, 30 s of calls.
const SMALL: &str = "clients = 2\nstrategy = \"naive\"\nretries = 2\nseed = 7\n\
    arrivals = \"poisson\"\nrate = \"4/s\"\nduration = \"30s\"\nspike = \"5s..10s@30/s\"\n\
    timeout = \"1s\"\n[server]\nmodel = \"capacity\"\nservice_time = \"100ms\"\n";

/// `herd-sim sweep --config (SMALL) ARGS`.
fn small_sweep(args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("small.toml");
    std::fs::write(&config, SMALL).unwrap();
    let mut all = vec!["sweep", "--quiet", "--config", config.to_str().unwrap()];
    all.extend(args);
    ok(&all)
}

const GRID: [&str; 8] = [
    "--workers",
    "1,4",
    "--rate",
    "2,6",
    "--timeout",
    "500ms,1s",
    "--seeds",
    "4",
];

#[test]
fn a_sweep_varies_the_overload_parameters_and_reports_the_call_metrics() {
    let (header, rows) = table(&small_sweep(&GRID));
    // 2 × 2 × 2 cells × 4 seeds.
    assert_eq!(rows.len(), 32);
    let mut stuck_by_cell: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for row in &rows {
        let f = |name: &str| field(&header, row, name);
        let n = |name: &str| f(name).parse::<u64>().unwrap();
        // The parameters land in their columns, as the scenario has them.
        assert!(["1", "4"].contains(&f("workers")));
        assert!(["2", "6"].contains(&f("rate_per_s")));
        assert!(["0.5", "1"].contains(&f("timeout_s")));
        assert_eq!(f("service_time_s"), "0.1");
        assert_eq!(f("spike_rate_per_s"), "30");
        assert_eq!(f("queue"), "unlimited");
        assert_eq!(f("outage_s"), "");
        // The call metrics obey conservation, row by row.
        assert_eq!(n("calls"), n("succeeded") + n("gave_up"));
        assert_eq!(n("attempts"), n("requests"));
        assert_eq!(
            n("attempts"),
            n("succeeded") + n("timed_out") + n("refusals_read")
        );
        // Recovered exactly when not stuck, and never before the spike ends.
        assert_eq!(f("recovered_at_s").is_empty(), f("stuck") == "1", "{row:?}");
        if !f("recovered_at_s").is_empty() {
            assert!(f("recovered_at_s").parse::<f64>().unwrap() >= 10.0);
        }
        stuck_by_cell
            .entry((
                f("workers").into(),
                f("rate_per_s").into(),
                f("timeout_s").into(),
            ))
            .or_default()
            .push(f("stuck").parse().unwrap());
    }
    // The aggregate's stuck_mean is the fraction of seeds that never recovered.
    let (header, rows) = table(&small_sweep(&[&GRID[..], &["--aggregate"]].concat()));
    assert_eq!(rows.len(), 8);
    for row in &rows {
        let key = (
            field(&header, row, "workers").to_string(),
            field(&header, row, "rate_per_s").to_string(),
            field(&header, row, "timeout_s").to_string(),
        );
        let values = &stuck_by_cell[&key];
        let fraction = values.iter().sum::<f64>() / values.len() as f64;
        let mean: f64 = field(&header, row, "stuck_mean").parse().unwrap();
        assert!((mean - fraction).abs() < 1e-12, "{key:?}");
    }
}

#[test]
fn an_outage_sweep_replaces_the_scenarios_outages() {
    // 50 clients at t = 0, fixed 1 s waits, 3 retries, 10 workers of 10 ms, timeout 1 s.
    // The swept outage [0, D) refuses the attempts at 0, 1, …, D − 1 s; the one at D s is
    // served (50 requests on 10 workers: done by 50 ms, inside the timeout). So D = 1 s:
    // 100 attempts, 50 refused; D = 3 s: 200 attempts, 150 refused. All 50 calls succeed, in
    // the window starting at D, which is healthy: recovered at D.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("outage.toml");
    std::fs::write(
        &config,
        "clients = 50\nstrategy = \"fixed\"\nretries = 3\nbase = \"1s\"\ntimeout = \"1s\"\n\
         outage = \"0s..10s\"\n[server]\nmodel = \"capacity\"\nworkers = 10\n\
         service_time = \"10ms\"\n",
    )
    .unwrap();
    let (header, rows) = table(&ok(&[
        "sweep",
        "--quiet",
        "--config",
        config.to_str().unwrap(),
        "--outage",
        "1s,3s",
    ]));
    let got: Vec<Vec<&str>> = rows
        .iter()
        .map(|row| {
            [
                "outage_s",
                "attempts",
                "refusals_read",
                "succeeded",
                "recovered_at_s",
                "stuck",
            ]
            .iter()
            .map(|name| field(&header, row, name))
            .collect()
        })
        .collect();
    assert_eq!(
        got,
        [
            ["1", "100", "50", "50", "1", "0"],
            ["3", "200", "150", "50", "3", "0"]
        ]
    );
}

/// Wilson's 95 % interval for `k` successes in `n` trials.
fn wilson(k: u64, n: u64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let d = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / d;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / d;
    (centre - half, centre + half)
}

/// `herd-sim sweep --config CONFIG --aggregate` as rows of (strategy, retries, rate, seeds
/// stuck, seeds).
fn stuck_counts(config: &str) -> Vec<(String, String, String, u64, u64)> {
    let (header, rows) = table(&ok(&[
        "sweep",
        "--config",
        config,
        "--aggregate",
        "--quiet",
    ]));
    rows.iter()
        .map(|row| {
            let f = |name: &str| field(&header, row, name).to_string();
            let seeds: u64 = f("seeds").parse().unwrap();
            let stuck = (f("stuck_mean").parse::<f64>().unwrap() * seeds as f64).round() as u64;
            (f("strategy"), f("retries"), f("rate_per_s"), stuck, seeds)
        })
        .collect()
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/overload.md")).unwrap()
}

/// Asserts the guide holds `sentence` (line breaks in the guide read as spaces).
fn readme_says(sentence: &str) {
    let text = readme().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains(sentence),
        "docs/overload.md should say: {sentence}"
    );
}

#[test]
fn the_readmes_collapse_probabilities_are_the_sweeps() {
    let parts: Vec<String> = stuck_counts("configs/collapse-spike.toml")
        .into_iter()
        .map(|(strategy, _, _, k, n)| {
            let (low, high) = wilson(k, n);
            format!(
                "{strategy} never recovers on {k} of {n} seeds (collapse probability {:.3}, \
                 {low:.3}–{high:.3})",
                k as f64 / n as f64
            )
        })
        .collect();
    readme_says(&parts.join(" and "));
}

#[test]
fn the_readmes_metastable_band_is_the_sweeps() {
    let mut parts = Vec::new();
    let rows = stuck_counts("configs/metastable-steps.toml");
    for retries in ["0", "2"] {
        // Consecutive rates with the same count, as `k of n at R1, R2 and R3/s`.
        let mut groups: Vec<(u64, u64, Vec<String>)> = Vec::new();
        for (_, _, rate, k, n) in rows.iter().filter(|row| row.1 == retries) {
            match groups.last_mut() {
                Some((gk, _, rates)) if gk == k => rates.push(rate.clone()),
                _ => groups.push((*k, *n, vec![rate.clone()])),
            }
        }
        let text: Vec<String> = groups
            .iter()
            .map(|(k, n, rates)| {
                let listed = match rates.len() {
                    1 => rates[0].clone(),
                    len => format!("{} and {}", rates[..len - 1].join(", "), rates[len - 1]),
                };
                format!("{k} of {n} at {listed}/s")
            })
            .collect();
        parts.push(format!(
            "with {retries} retries the seeds that stay down are {}",
            text.join("; ")
        ));
    }
    readme_says(&parts.join("; "));
}

/// The outage-recovery prose on exponential backoff: each wave of clients returning together
/// after the outage, how many the server answered in time and how many timed out, recomputed
/// from the run's series.
#[test]
fn the_guides_outage_waves_are_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("series.csv");
    let json = ok(&[
        "--config",
        "configs/outage-recovery.toml",
        "--strategy",
        "exponential",
        "--format",
        "json",
        "--series-out",
        series.to_str().unwrap(),
    ]);
    let result = &serde_json::from_slice::<Value>(&json).unwrap()["results"][0];
    let (header, rows) = table(&std::fs::read(&series).unwrap());
    let n = |row: &[String], name: &str| -> u64 { field(&header, row, name).parse().unwrap() };
    let second = |row: &[String]| -> u64 { field(&header, row, "window_start_s").parse().unwrap() };
    // A wave starts in a window after the outage (20 s) in which attempts arrive; its served
    // and timed-out attempts are the windows' up to the next wave.
    let mut waves: Vec<(u64, u64, u64, u64)> = Vec::new(); // (start, arrived, served, timed out)
    for row in rows.iter().filter(|row| second(row) >= 20) {
        if n(row, "attempts") > 0 {
            waves.push((second(row), n(row, "attempts"), 0, 0));
        }
        if let Some(wave) = waves.last_mut() {
            wave.2 += n(row, "succeeded");
            wave.3 += n(row, "timed_out");
        }
    }
    assert_eq!(waves.len(), 2, "{waves:?}");
    let [(t1, a1, s1, x1), (t2, a2, s2, x2)] = [waves[0], waves[1]];
    // Every client comes back in the first wave, and the second is the first's timed out.
    assert_eq!(a1, result["calls"].as_u64().unwrap());
    assert_eq!(a2, x1);
    assert_eq!(x1 + x2, result["timed_out"].as_u64().unwrap());
    let thousands = |x: u64| match x {
        10_000.. => format!("{} {:03}", x / 1000, x % 1000),
        _ => x.to_string(),
    };
    readme_says(&format!(
        "Exponential backoff brings all {} surviving clients back together at {t1} s: the server \
         answers {s1} of them within the 2 s timeout, the other {x1} time out and come back \
         together at {t2} s, where {s2} more are answered in time and the last {x2} time out \
         again, their retries spent ({} timeouts in all, {} s of abandoned work); {:.0} % of \
         calls succeed.",
        thousands(a1),
        x1 + x2,
        result["abandoned_work_s"].as_f64().unwrap(),
        result["goodput_pct"].as_f64().unwrap()
    ));
}
