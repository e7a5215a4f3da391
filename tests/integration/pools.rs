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
    for balancer in ["random", "power-of-two"] {
        assert_eq!(loaded(balancer, "1"), loaded(balancer, "2"), "{balancer}");
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
    let out = herd_sim_ok(&[
        "sweep",
        "--config",
        config.to_str().unwrap(),
        "--servers",
        "1,3",
        "--balancer",
        "round-robin",
        "--quiet",
        "--out",
        "-",
    ]);
    let mut reader = ::csv::Reader::from_reader(&out[..]);
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<::csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    let cells = |r: &::csv::StringRecord| {
        (
            r[col("servers")].to_string(),
            r[col("balancer")].to_string(),
            r[col("requests")].to_string(),
        )
    };
    assert_eq!(cells(&rows[0]), ("".into(), "".into(), "36".into()));
    assert_eq!(
        cells(&rows[1]),
        ("3".into(), "round-robin".into(), "14".into())
    );
    assert_eq!(rows[0][col("seed")], rows[1][col("seed")]);
}
