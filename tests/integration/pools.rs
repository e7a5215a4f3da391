//! Server pools behind a balancer (`--servers`, `--balancer`, `@server=K`,
//! `--rolling-restart`), checked against counts worked out by hand, conservation per server
//! and in total, the collapse verdict of a pool whose other servers keep serving, and
//! determinism across thread counts.

use serde_json::Value;

use crate::{herd_sim_ok, refused_in_one_line};

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    serde_json::from_slice(&herd_sim_ok(&all)).unwrap()
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Each server's `[attempts, succeeded, refused, timed_out, in_flight, served]`.
fn servers(result: &Value) -> Vec<[u64; 6]> {
    result["servers"]
        .as_array()
        .expect("a pool's servers")
        .iter()
        .map(|s| {
            [
                "attempts",
                "succeeded",
                "refused",
                "timed_out",
                "in_flight",
                "served",
            ]
            .map(|k| n(&s[k]))
        })
        .collect()
}

#[test]
fn round_robin_sends_attempt_k_to_server_k_mod_n() {
    // Ten calls of one attempt each over three servers: attempts 0..9 go to servers
    // 0, 1, 2, 0, ... so server 1 (the first) takes 0, 3, 6, 9 and the others 3 each.
    let v = json(&[
        "--clients",
        "10",
        "--strategy",
        "naive",
        "--server",
        "flaky",
        "--failure-rate",
        "0",
        "--servers",
        "3",
    ]);
    let r = &v["results"][0];
    let each: Vec<u64> = servers(r).iter().map(|s| s[0]).collect();
    assert_eq!(each, [4, 3, 3]);
    assert_eq!(n(&r["attempts"]), 10);
}

#[test]
fn one_down_server_in_three_with_immediate_retries_worked_by_hand() {
    // Naive retries go at once, queued after the herd's first attempts at t = 0. Server 1
    // (index 0) is out. Nine processes: first attempts 0..8, those of processes 0, 3, 6 at
    // server 1 refused; their retries are attempts 9, 10, 11: 9 at server 1 again (refused),
    // 10 and 11 served; its next is attempt 12, server 1 again, and then 13, served at
    // server 2. 9 + 3 + 1 + 1 = 14 attempts, 14/9 a call; server 1 takes 0, 3, 6, 9, 12 (5
    // refused), server 2 takes 1, 4, 7, 10, 13 and server 3 2, 5, 8, 11.
    let pool = |clients: &str| {
        json(&[
            "--clients",
            clients,
            "--strategy",
            "naive",
            "--retries",
            "3",
            "--server",
            "flaky",
            "--failure-rate",
            "0",
            "--servers",
            "3",
            "--outage",
            "0s..10s@server=1",
        ])
    };
    let v = pool("9");
    let r = &v["results"][0];
    assert_eq!(n(&r["attempts"]), 14);
    assert_eq!(n(&r["succeeded"]), 9);
    assert_eq!(
        servers(r),
        [[5, 0, 5, 0, 0, 0], [5, 5, 0, 0, 0, 5], [4, 4, 0, 0, 0, 4]]
    );
    // Three processes: attempts 0, 1, 2, process 0 refused; its retry is attempt 3, server
    // 1 again, refused; then attempt 4 at server 2: 5 attempts, 2 of them at server 1.
    let v = pool("3");
    let r = &v["results"][0];
    assert_eq!(n(&r["attempts"]), 5);
    assert_eq!(servers(r)[0], [2, 0, 2, 0, 0, 0]);
    // Every call succeeded while server 1 was out, and no answer came after: nothing to
    // recover from, so recovered at the outage's end, not stuck.
    assert_eq!(r["recovered_at_s"].as_f64(), Some(10.0));
}

/// A capacity pool under Poisson load with timeouts and a rolling restart: every balancer.
fn loaded(balancer: &str, threads: &str) -> Vec<u8> {
    herd_sim_ok(&[
        "--arrivals",
        "poisson",
        "--rate",
        "60/s",
        "--duration",
        "40s",
        "--server",
        "capacity",
        "--workers",
        "2",
        "--service-time",
        "exp:40ms",
        "--queue",
        "20",
        "--timeout",
        "300ms",
        "--strategy",
        "naive,full-jitter",
        "--retries",
        "3",
        "--base",
        "50ms",
        "--servers",
        "3",
        "--balancer",
        balancer,
        "--rolling-restart",
        "10s,4s",
        "--degrade",
        "5s..8s@0.5@server=2",
        "--settle",
        "5s",
        "--threads",
        threads,
        "--format",
        "json",
    ])
}

#[test]
fn attempts_are_conserved_per_server_and_in_total_whatever_the_balancer() {
    for balancer in ["round-robin", "random", "least-outstanding", "power-of-two"] {
        let v: Value = serde_json::from_slice(&loaded(balancer, "1")).unwrap();
        for r in v["results"].as_array().unwrap() {
            let each = servers(r);
            assert_eq!(each.len(), 3);
            for s in &each {
                // attempts = succeeded + refused + timed out + in flight.
                assert_eq!(s[0], s[1] + s[2] + s[3] + s[4], "{balancer}: {s:?}");
                // Served in time is served.
                assert!(s[5] >= s[1], "{balancer}: {s:?}");
            }
            let sum = |i: usize| each.iter().map(|s| s[i]).sum::<u64>();
            assert_eq!(sum(0), n(&r["attempts"]), "{balancer}");
            assert_eq!(sum(1), n(&r["succeeded"]), "{balancer}");
            assert_eq!(sum(2), n(&r["refusals_read"]), "{balancer}");
            assert_eq!(sum(3), n(&r["timed_out"]), "{balancer}");
            assert_eq!(
                n(&r["attempts"]),
                n(&r["succeeded"]) + n(&r["refusals_read"]) + n(&r["timed_out"]) + sum(4)
            );
            // The restart took every server down in turn: each refused some attempts
            // (out) and served others.
            for s in &each {
                assert!(s[2] > 0 && s[1] > 0, "{balancer}: {each:?}");
            }
        }
    }
}

#[test]
fn a_pool_run_is_the_same_on_one_thread_and_two() {
    // The JSON holds each server's series too.
    for balancer in ["random", "power-of-two"] {
        let one = loaded(balancer, "1");
        assert!(one.windows(8).any(|w| w == b"\"series\""));
        assert_eq!(one, loaded(balancer, "2"), "{balancer}");
    }
}

#[test]
fn a_pool_of_one_is_the_run_without_a_pool() {
    let base = [
        "--arrivals",
        "poisson",
        "--rate",
        "30/s",
        "--duration",
        "20s",
        "--server",
        "capacity",
        "--workers",
        "2",
        "--service-time",
        "exp:50ms",
        "--timeout",
        "500ms",
        "--outage",
        "5s..8s",
        "--strategy",
        "all",
    ];
    let mut one = base.to_vec();
    one.extend(["--servers", "1"]);
    assert_eq!(herd_sim_ok(&base), herd_sim_ok(&one));
    // A balancer with one server is a key the run never reads.
    one.extend(["--balancer", "random"]);
    assert!(refused_in_one_line(&one).contains("--balancer"));
}

#[test]
fn one_server_out_is_a_trigger_and_the_pool_recovers_when_it_is_back() {
    // Three capacity servers with room to spare, server 2 out over 10..20 s, retries at
    // once: a call whose attempt is refused by server 2 retries at the next server of the
    // rotation, so every call succeeds. The outage is the run's last trigger: the verdict
    // is judged from 20 s, when all three serve, and the run recovered at 20 s.
    let v = json(&[
        "--arrivals",
        "poisson",
        "--rate",
        "30/s",
        "--duration",
        "40s",
        "--server",
        "capacity",
        "--workers",
        "8",
        "--service-time",
        "10ms",
        "--timeout",
        "1s",
        "--strategy",
        "naive",
        "--retries",
        "2",
        "--servers",
        "3",
        "--outage",
        "10s..20s@server=2",
    ]);
    let r = &v["results"][0];
    assert_eq!(r["trigger_end_s"].as_f64(), Some(20.0));
    assert_eq!(r["goodput_pct"].as_f64(), Some(100.0));
    assert_eq!(r["recovered_at_s"].as_f64(), Some(20.0));
    let each = servers(r);
    assert!(each[1][2] > 0, "server 2 refused while out: {each:?}");
    assert_eq!(each[0][2] + each[2][2], 0, "{each:?}");
    // A rolling restart is a trigger too: the last server's outage ends at 3 x 10 s + 2 s.
    let v = json(&[
        "--arrivals",
        "poisson",
        "--rate",
        "30/s",
        "--duration",
        "40s",
        "--server",
        "capacity",
        "--workers",
        "8",
        "--service-time",
        "10ms",
        "--strategy",
        "naive",
        "--retries",
        "2",
        "--servers",
        "3",
        "--rolling-restart",
        "10s,2s",
    ]);
    let r = &v["results"][0];
    assert_eq!(r["trigger_end_s"].as_f64(), Some(32.0));
    assert_eq!(r["recovered_at_s"].as_f64(), Some(32.0));
}

#[test]
fn bad_pool_input_is_one_line() {
    for (args, names) in [
        (&["--servers", "0"][..], "--servers"),
        (
            &["--servers", "3", "--outage", "1s..2s@server=4"][..],
            "from 1 to 3",
        ),
        (&["--outage", "1s..2s@server=2"][..], "--servers N"),
        (
            &["--servers", "2", "--rolling-restart", "5s"][..],
            "--rolling-restart",
        ),
        (
            &["--servers", "2", "--balancer", "fastest"][..],
            "--balancer",
        ),
        (&["--servers", "2", "--server", "occ"][..], "--server occ"),
        (
            &["--servers", "2", "--outage", "1s..2s@server=x"][..],
            "--outage",
        ),
    ] {
        let line = refused_in_one_line(args);
        assert!(line.contains(names), "{args:?}: {line}");
    }
}

#[test]
fn servers_and_balancer_are_sweep_axes_with_their_columns() {
    // The hand-worked pool of nine calls (14 attempts) beside one server out over 0..5 s
    // (every attempt refused: 9 x 4 = 36), on the same dice: servers and balancer stay out
    // of the seed label.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pool.toml");
    std::fs::write(
        &config,
        "clients = 9\nstrategy = \"naive\"\nretries = 3\noutage = \"0s..5s@server=1\"\n\
         [server]\nmodel = \"flaky\"\nfailure_rate = 0\n",
    )
    .unwrap();
    let rows = sweep_rows(
        config.to_str().unwrap(),
        &["--servers", "1,3", "--balancer", "round-robin"],
    );
    let cells: Vec<[&str; 3]> = rows
        .iter()
        .map(|r| [&r["servers"], &r["balancer"], &r["requests"]].map(String::as_str))
        .collect();
    assert_eq!(cells, [["", "", "36"], ["3", "round-robin", "14"]]);
    assert_eq!(rows[0]["seed"], rows[1]["seed"]);
}

/// The rows of `herd-sim sweep --config CONFIG ARGS`, each a map from column to cell.
fn sweep_rows(config: &str, args: &[&str]) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut all = vec!["sweep", "--config", config, "--quiet", "--out", "-"];
    all.extend(args);
    crate::budgets::rows(&String::from_utf8(herd_sim_ok(&all)).unwrap())
}

#[test]
fn a_rolling_restarts_interval_and_downtime_are_sweep_axes() {
    // Three servers behind round-robin, server i out over [i x I, i x I + D) with D < I, so
    // one is out at a time; naive retries go at once, to the next server of the rotation,
    // which is up: every call succeeds, and the run recovers at the first 1 s window from
    // the last restart's end, 3 x I + D (a run whose every call succeeded): 16 s, 17.5 s
    // (so 18 s), 31 s, 32.5 s (33 s).
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("roll.toml");
    std::fs::write(
        &config,
        "clients = 30\nstrategy = \"naive\"\nretries = 3\narrivals = \"poisson\"\n\
         rate = \"30/s\"\nduration = \"40s\"\nservers = 3\nrolling_restart = \"20s,5s\"\n\
         [server]\nmodel = \"flaky\"\nfailure_rate = 0\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let rows = sweep_rows(
        config,
        &[
            "--restart-interval",
            "5s,10s",
            "--restart-downtime",
            "1s,2500ms",
        ],
    );
    let cells: Vec<[&str; 4]> = rows
        .iter()
        .map(|r| {
            [
                &r["restart_interval_s"],
                &r["restart_downtime_s"],
                &r["recovered_at_s"],
                &r["goodput_pct"],
            ]
            .map(String::as_str)
        })
        .collect();
    assert_eq!(
        cells,
        [
            ["5", "1", "16", "100"],
            ["5", "2.5", "18", "100"],
            ["10", "1", "31", "100"],
            ["10", "2.5", "33", "100"],
        ]
    );
    // Points along the axes share their dice.
    assert!(rows.iter().all(|r| r["seed"] == rows[0]["seed"]));
    // Some attempts met a server out, and were retried elsewhere.
    assert!(rows.iter().all(|r| r["refused"] != "0"));
    for (args, names) in [
        (
            &["sweep", "--clients", "10", "--restart-interval", "5s"][..],
            "no rolling-restart",
        ),
        (
            &["sweep", "--config", config, "--restart-downtime", "0s"][..],
            "--rolling-restart: 20s,0s",
        ),
    ] {
        let line = refused_in_one_line(args);
        assert!(line.contains(names), "{args:?}: {line}");
    }
}

/// One-worker capacity servers of a fixed 100 ms service (10 calls a second each) behind a
/// random balancer, against `rate` Poisson calls with a 1 s timeout and 2 full-jitter retries.
const SLOW_POOL: &str =
    "clients = 100\nstrategy = \"full-jitter\"\nretries = 2\nbase = \"100ms\"\n\
    cap = \"1s\"\ntimeout = \"1s\"\narrivals = \"poisson\"\nduration = \"60s\"\nservers = 4\n\
    balancer = \"random\"\n";

#[test]
fn boundary_and_tune_search_the_pool_size_from_one_server() {
    // A search over `servers` from 1 runs its one-server points although one server reads
    // no balancer: a key is refused only when no point of the search reads it (the tune
    // below, over one server alone).
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pool.toml");
    std::fs::write(
        &config,
        format!(
            "{SLOW_POOL}rate = \"25/s\"\noutage = \"10s..15s\"\n\
             [server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"100ms\"\n"
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    // By hand: 25 calls a second need 2.5 servers' worth; one or two are overloaded for good
    // (load 2.5, 1.25) and never recover from the outage, six are at 0.42, each queue's mean
    // wait 36 ms against the 1 s timeout. So the boundary lies between 2 and 6.
    let out = herd_sim_ok(&[
        "boundary", "--config", config, "--axis", "servers", "--range", "1..6", "--seeds", "10",
        "--format", "json",
    ]);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let result = &v["results"][0];
    let boundary = result["boundary"].as_f64().unwrap();
    assert!(2.0 < boundary && boundary < 6.0, "{boundary}");
    for point in result["points"].as_array().unwrap() {
        let (servers, p) = (
            point["value"].as_f64().unwrap(),
            point["p"].as_f64().unwrap(),
        );
        if servers <= 2.0 {
            assert_eq!(p, 1.0, "{point}");
        }
    }
    // Tune: the fewest servers for 95 % goodput at 15 calls a second. One server serves 10 a
    // second at most, 67 % of them, so the answer is at least 2.
    let tune = dir.path().join("tune.toml");
    let scenario = format!(
        "seeds = 3\n[[scenario]]\nname = \"pool\"\n{SLOW_POOL}rate = \"15/s\"\n\
         [scenario.server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"100ms\"\n"
    );
    let objectives =
        "[objectives]\nconstraints = [\"goodput_pct@pool >= 95\"]\nminimize = [\"servers\"]\n";
    std::fs::write(
        &tune,
        format!("{scenario}[params]\nservers = \"1..4\"\n{objectives}"),
    )
    .unwrap();
    let out = herd_sim_ok(&[
        "tune",
        "--config",
        tune.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ]);
    let v: Value = serde_json::from_slice(&out).unwrap();
    let servers = v["recommended"]["servers"].as_u64().unwrap();
    assert!((2..=4).contains(&servers), "{servers}");
    std::fs::write(
        &tune,
        format!("{scenario}[params]\nservers = \"1\"\n{objectives}"),
    )
    .unwrap();
    let line = refused_in_one_line(&["tune", "--config", tune.to_str().unwrap()]);
    assert!(
        line.contains("--balancer") && line.contains("no candidate of this search reads it"),
        "{line}"
    );
}

/// Each server's series as `[window_start_s, attempts, succeeded, refused, timed_out, served,
/// in_system]` rows.
fn server_series(result: &Value) -> Vec<Vec<[f64; 7]>> {
    result["servers"]
        .as_array()
        .expect("a pool's servers")
        .iter()
        .map(|s| {
            let column = |k: &str| s["series"][k].as_array().expect(k).clone();
            let starts = column("window_start_s");
            let counts = [
                "attempts",
                "succeeded",
                "refused",
                "timed_out",
                "served",
                "in_system",
            ]
            .map(column);
            (0..starts.len())
                .map(|i| {
                    let mut row = [starts[i].as_f64().unwrap(); 7];
                    for (c, col) in counts.iter().enumerate() {
                        row[c + 1] = n(&col[i]) as f64;
                    }
                    row
                })
                .collect()
        })
        .collect()
}

#[test]
fn each_server_has_its_series_worked_by_hand() {
    // The hand-worked pool of nine calls, its retries a fixed 1 s apart (windows of 1 s):
    // t = 0, attempts 0..8 to servers 1, 2, 3, 1, ...: server 1 (out) refuses the three of
    // processes 0, 3, 6. t = 1 s: their retries, attempts 9, 10, 11 to servers 1, 2, 3:
    // process 0's refused again. t = 2 s: attempt 12, server 1, refused. t = 3 s: attempt
    // 13, server 2, served.
    let args = [
        "--clients",
        "9",
        "--strategy",
        "fixed",
        "--base",
        "1s",
        "--retries",
        "3",
        "--server",
        "flaky",
        "--failure-rate",
        "0",
        "--servers",
        "3",
        "--outage",
        "0s..10s@server=1",
    ];
    let v = json(&args);
    let r = &v["results"][0];
    assert_eq!(n(&r["attempts"]), 14);
    // [start, attempts, succeeded, refused, timed out, served, in the server]
    let w = |t: f64, attempts: f64, ok: f64, refused: f64| [t, attempts, ok, refused, 0.0, ok, 0.0];
    assert_eq!(
        server_series(r),
        [
            vec![
                w(0.0, 3.0, 0.0, 3.0),
                w(1.0, 1.0, 0.0, 1.0),
                w(2.0, 1.0, 0.0, 1.0),
                w(3.0, 0.0, 0.0, 0.0)
            ],
            vec![
                w(0.0, 3.0, 3.0, 0.0),
                w(1.0, 1.0, 1.0, 0.0),
                w(2.0, 0.0, 0.0, 0.0),
                w(3.0, 1.0, 1.0, 0.0)
            ],
            vec![
                w(0.0, 3.0, 3.0, 0.0),
                w(1.0, 1.0, 1.0, 0.0),
                w(2.0, 0.0, 0.0, 0.0),
                w(3.0, 0.0, 0.0, 0.0)
            ],
        ]
    );
    // --series-out: the pool's row of each window (server `all`), then each server's, the
    // columns that are not a server's empty.
    let mut csv_args = args.to_vec();
    csv_args.extend(["--series-out", "-", "--out", "/dev/null"]);
    let out = String::from_utf8(herd_sim_ok(&csv_args)).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "strategy,server,window_start_s,calls_started,attempts,succeeded,timed_out,refused,\
         in_system,latency_p50_s,latency_p99_s,retries_denied,rejected_locally,served"
    );
    assert_eq!(lines.len(), 1 + 4 * 4);
    assert_eq!(lines[1], "fixed,all,0,9,9,6,0,3,0,0,0,0,0,");
    assert_eq!(lines[2], "fixed,1,0,,3,0,0,3,0,,,,,0");
    assert_eq!(lines[3], "fixed,2,0,,3,3,0,0,0,,,,,3");
    assert_eq!(lines[13], "fixed,all,3,0,1,1,0,0,0,0,0,0,0,");
    assert_eq!(lines[15], "fixed,2,3,,1,1,0,0,0,,,,,1");
}

#[test]
fn the_servers_series_sum_to_the_pools_window_by_window() {
    for balancer in ["round-robin", "random", "least-outstanding", "power-of-two"] {
        let v: Value = serde_json::from_slice(&loaded(balancer, "1")).unwrap();
        for r in v["results"].as_array().unwrap() {
            let each = server_series(r);
            // Every server has the same windows.
            let windows: Vec<f64> = each[0].iter().map(|row| row[0]).collect();
            for s in &each {
                assert_eq!(s.iter().map(|row| row[0]).collect::<Vec<_>>(), windows);
            }
            // Summed over the servers, window by window: attempts, succeeded, refused, timed
            // out and in the server are the pool's (a window missing on one side is zeros
            // there; the servers' have no calls started, the pool's no served).
            let series = &r["series"];
            let pool_column = |k: &str| -> Vec<(f64, u64)> {
                let starts = series["window_start_s"].as_array().unwrap();
                starts
                    .iter()
                    .zip(series[k].as_array().unwrap())
                    .map(|(t, c)| (t.as_f64().unwrap(), n(c)))
                    .collect()
            };
            for (column, k) in [
                (1, "attempts"),
                (2, "succeeded"),
                (3, "refused"),
                (4, "timed_out"),
                (6, "in_system"),
            ] {
                let mut summed: Vec<(f64, u64)> = windows
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (t, each.iter().map(|s| s[i][column] as u64).sum()))
                    .filter(|&(_, c)| c > 0)
                    .collect();
                let mut pool: Vec<(f64, u64)> =
                    pool_column(k).into_iter().filter(|&(_, c)| c > 0).collect();
                summed.sort_by(|a, b| a.0.total_cmp(&b.0));
                pool.sort_by(|a, b| a.0.total_cmp(&b.0));
                assert_eq!(summed, pool, "{balancer}: {k}");
            }
            // And each server's series sums to its totals.
            for (s, totals) in each.iter().zip(servers(r)) {
                let sum = |c: usize| s.iter().map(|row| row[c] as u64).sum::<u64>();
                // totals: [attempts, succeeded, refused, timed_out, in_flight, served]
                assert_eq!(
                    [sum(1), sum(2), sum(3), sum(4), sum(5)],
                    [totals[0], totals[1], totals[2], totals[3], totals[5]],
                    "{balancer}"
                );
            }
        }
    }
}

#[test]
fn a_rolling_restart_shows_server_by_server() {
    // Three capacity servers with room to spare, restarted 10 s apart for 2 s each: server
    // k (from 1) is out over [10k, 10k + 2) s, windows 10k and 10k + 1 of 1 s. Its series
    // has refusals in those two windows and nowhere else, and no timeout anywhere; while it
    // is out the others serve.
    let v = json(&[
        "--arrivals",
        "poisson",
        "--rate",
        "30/s",
        "--duration",
        "40s",
        "--server",
        "capacity",
        "--workers",
        "8",
        "--service-time",
        "10ms",
        "--timeout",
        "1s",
        "--strategy",
        "naive",
        "--retries",
        "2",
        "--servers",
        "3",
        "--rolling-restart",
        "10s,2s",
    ]);
    let r = &v["results"][0];
    let each = server_series(r);
    for (k, s) in each.iter().enumerate() {
        let out = [10.0 * (k + 1) as f64, 10.0 * (k + 1) as f64 + 1.0];
        let refusing: Vec<f64> = s
            .iter()
            .filter(|row| row[3] > 0.0)
            .map(|row| row[0])
            .collect();
        assert_eq!(refusing, out, "server {}", k + 1);
        assert!(s.iter().all(|row| row[4] == 0.0), "server {}", k + 1);
        for (j, other) in each.iter().enumerate().filter(|&(j, _)| j != k) {
            for t in out {
                let row = other.iter().find(|row| row[0] == t).expect("a window");
                assert!(row[2] > 0.0, "server {} serves at {t}", j + 1);
            }
        }
    }
}
