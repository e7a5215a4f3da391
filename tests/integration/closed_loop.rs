//! Closed-loop clients through the binary: the semantics against the rate and duration,
//! open against closed loop on one server (Brooker 2023), bad input, and a sweep over K.

use crate::{herd_sim, refused_in_one_line};

const SERVER: [&str; 8] = [
    "--server",
    "capacity",
    "--workers",
    "1",
    "--service-time",
    "exp:100ms",
    "--strategy",
    "naive",
];

fn json(args: &[&str]) -> serde_json::Value {
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
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["results"][0].clone()
}

#[test]
fn bad_closed_loops_are_refused_in_one_line() {
    let poisson = [
        "--arrivals",
        "poisson",
        "--rate",
        "10/s",
        "--duration",
        "10s",
    ];
    let with = |extra: &[&'static str]| {
        let mut a: Vec<&str> = poisson.to_vec();
        a.extend_from_slice(extra);
        a
    };
    for (args, says) in [
        (
            with(&["--in-flight", "0", "--think-time", "1s"]),
            "--in-flight: 0",
        ),
        (vec!["--in-flight", "2"], "--arrivals poisson"),
        (with(&["--think-time", "1s"]), "--think-time"),
        (with(&["--in-flight", "1"]), "think time of positive mean"),
        (
            with(&[
                "--in-flight",
                "1",
                "--think-time",
                "1s",
                "--spike",
                "2s..3s@20/s",
            ]),
            "without --spike",
        ),
        (
            with(&["--in-flight", "1", "--think-time", "1s", "--hidden", "0.5"]),
            "browser tabs",
        ),
        (
            with(&[
                "--in-flight",
                "1",
                "--think-time",
                "exp:0s",
                "--breaker",
                "retries",
                "--latency",
                "10ms",
            ]),
            "think time of positive mean",
        ),
        (with(&["--in-flight", "-1"]), "--in-flight"),
        (
            with(&["--in-flight", "1", "--think-time", "soon"]),
            "--think-time",
        ),
    ] {
        let e = refused_in_one_line(&args);
        assert!(e.contains(says), "{args:?}: {e}");
    }
}

#[test]
fn a_round_trip_lets_a_closed_loop_think_for_no_time() {
    // One process, K = 1, no think time, a fixed 100 ms round trip against a server that
    // answers at once: a call every 100 ms from its first arrival t0, starting while
    // t0 + 0.1 j < 10 s. The first arrival is Exp(1 ms) (rate 1000/s), below 100 ms but with
    // probability e^-100, so j = 0..99: 100 calls.
    let r = json(&[
        "--clients",
        "1",
        "--arrivals",
        "poisson",
        "--rate",
        "1000/s",
        "--duration",
        "10s",
        "--in-flight",
        "1",
        "--latency",
        "100ms",
        "--server",
        "flaky",
        "--failure-rate",
        "0",
    ]);
    let calls = r["calls"].as_u64().unwrap();
    assert_eq!(calls, 100);
    assert_eq!(r["attempts"].as_u64(), Some(calls));
}

#[test]
fn open_and_closed_loops_on_one_server_follow_their_closed_forms() {
    // One worker of Exp(100 ms) at 80 % busy. Open: Poisson 8/s, M/M/1, sojourn Exp with
    // mean S/(1 − ρ) = 0.5 s, p99 0.5 ln 100 = 2.303 s. Closed: 10 clients thinking
    // Exp(968.5 ms), M/M/1//10 (p_0 = 0.2): mean response N/X − Z = 0.2815 s, p99 1.032 s
    // (by the arrival theorem, an arriving call finds the 9-client system's p_n and waits
    // n + 1 services, an Erlang mixture). 2000 s each, five seeds pooled.
    let base = [
        "--clients",
        "10",
        "--arrivals",
        "poisson",
        "--rate",
        "8/s",
        "--duration",
        "2000s",
    ];
    let (mut open, mut closed) = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0));
    for seed in ["1", "2", "3", "4", "5"] {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(&SERVER);
        args.extend_from_slice(&["--seed", seed]);
        let o = json(&args);
        args.extend_from_slice(&["--in-flight", "1", "--think-time", "exp:968.5ms"]);
        let c = json(&args);
        for (sum, r) in [(&mut open, o), (&mut closed, c)] {
            sum.0 += r["latency_mean_s"].as_f64().unwrap() / 5.0;
            sum.1 += r["latency_p99_s"].as_f64().unwrap() / 5.0;
            sum.2 += r["calls"].as_f64().unwrap() / 5.0;
        }
    }
    let near = |got: f64, want: f64, rel: f64| (got / want - 1.0).abs() <= rel;
    assert!(near(open.0, 0.5, 0.06), "open mean {}", open.0);
    assert!(near(open.1, 2.303, 0.08), "open p99 {}", open.1);
    assert!(near(closed.0, 0.2815, 0.04), "closed mean {}", closed.0);
    assert!(near(closed.1, 1.032, 0.06), "closed p99 {}", closed.1);
    // The same mean load: 8 calls a second, 16 000 over the run, either way.
    assert!(near(open.2, 16_000.0, 0.02) && near(closed.2, 16_000.0, 0.02));
}

#[test]
fn in_flight_and_think_time_are_sweep_axes_with_their_columns() {
    // A sweep over in-flight over a config with a think time writes both columns.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("closed.toml");
    std::fs::write(
        &config,
        "clients = 10\nstrategy = \"naive\"\nretries = 0\narrivals = \"poisson\"\n\
         rate = \"100/s\"\nduration = \"20s\"\nthink_time = \"100ms\"\n\
         [server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"exp:100ms\"\n",
    )
    .unwrap();
    let out = dir.path().join("k.csv");
    herd_sim()
        .args(["sweep", "--config"])
        .arg(&config)
        .args(["--in-flight", "1,2", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let k = header.iter().position(|h| h == "in_flight").unwrap();
    let think = header.iter().position(|h| h == "think_time_s").unwrap();
    let calls = header.iter().position(|h| h == "calls").unwrap();
    let rows: Vec<_> = rows.records().map(|r| r.unwrap()).collect();
    assert_eq!((&rows[0][k], &rows[1][k]), ("1", "2"));
    assert_eq!(&rows[0][think], "0.1");
    // Ten processes of one call each: each turn is a call (0.1 s of service plus its wait)
    // and 0.1 s of thought, so at most 10 × 20 s / 0.2 s = 1000 calls; two calls a process
    // keep the one worker busier, at most 10 calls a second of 100 ms, about 2000 in all.
    let n: Vec<f64> = rows.iter().map(|r| r[calls].parse().unwrap()).collect();
    assert!(n[0] <= 1000.0 && n[1] > n[0], "{n:?}");
}

#[test]
fn closed_sticky_users_are_weighted_by_their_turns() {
    // Ten closed processes of one call, two of them sticky; a fixed 100 ms round trip, 1 s
    // of thought, 2 naive retries, a server that serves everyone else, load to 100 s. Each
    // process's first arrival t0 is Exp(10 ms) (1000/s over ten), below 100 ms. A healthy
    // turn is one trip and the thought, 1.1 s: starts at t0 + 1.1 j < 100, j = 0..90, 91
    // calls; a sticky one three trips and the thought, 1.3 s: j = 0..76, 77 calls. So 8 × 91
    // + 2 × 77 = 882 calls, 728 served, 728 + 154 × 3 = 1190 attempts: a closed loop's
    // success is 728 / 882 = 82.5 %, not 1 − F, since the failing users' turns are longer.
    let r = json(&[
        "--clients",
        "10",
        "--arrivals",
        "poisson",
        "--rate",
        "1000/s",
        "--duration",
        "100s",
        "--in-flight",
        "1",
        "--think-time",
        "1s",
        "--latency",
        "100ms",
        "--strategy",
        "naive",
        "--retries",
        "2",
        "--server",
        "flaky",
        "--failure-rate",
        "0",
        "--sticky-failures",
        "0.2",
    ]);
    assert_eq!(r["calls"].as_u64(), Some(882), "{r}");
    assert_eq!(r["attempts"].as_u64(), Some(1190));
    assert_eq!(r["succeeded"].as_u64(), Some(728));
}

#[test]
fn boundary_finds_the_concurrency_a_server_tips_over_at() {
    // Ten closed clients against one worker of Exp(100 ms), thinking Exp(968.5 ms), with a
    // 1 s timeout and 3 naive retries, and an outage over 50–60 s: with one call a client the
    // load stays at 80 % busy and recovers; with two, twenty places thinking about a second
    // each ask for some 20 calls a second of the worker's 10, the timeouts' retries join the
    // abandoned attempts in the queue, and it never drains. So the tipping point of in-flight lies
    // between 1 and 2, whatever the seeds.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("closed.toml");
    std::fs::write(
        &config,
        "clients = 10\nstrategy = \"naive\"\nretries = 3\narrivals = \"poisson\"\n\
         rate = \"8/s\"\nduration = \"200s\"\ntimeout = \"1s\"\noutage = \"50s..60s\"\n\
         in_flight = 1\nthink_time = \"exp:968.5ms\"\n\
         [server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"exp:100ms\"\n",
    )
    .unwrap();
    let out = herd_sim()
        .args(["boundary", "--config"])
        .arg(&config)
        .args([
            "--axis",
            "in-flight",
            "--range",
            "1..6",
            "--seeds",
            "2",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["results"][0];
    assert_eq!(
        (r["boundary_low"].as_f64(), r["boundary_high"].as_f64()),
        (Some(1.0), Some(2.0)),
        "{r}"
    );
}

#[test]
fn a_think_time_axis_scales_the_scenario_s_distribution() {
    // The axis sets the mean and keeps the shape: uniform:50ms..150ms (mean 100 ms) at 25 ms
    // is uniform:12.5ms..37.5ms, at 200 ms uniform:100ms..300ms; a fixed base stays fixed.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    for (think, want) in [
        (
            "uniform:50ms..150ms",
            ["uniform:12.5ms..37.5ms", "uniform:100ms..300ms"],
        ),
        ("exp:1s", ["exp:25ms", "exp:200ms"]),
        ("1s", ["0.025", "0.2"]),
    ] {
        let config = dir.path().join("closed.toml");
        std::fs::write(
            &config,
            format!(
                "clients = 10\nstrategy = \"naive\"\nretries = 0\narrivals = \"poisson\"\n\
                 rate = \"100/s\"\nduration = \"5s\"\nin_flight = 1\nthink_time = \"{think}\"\n\
                 [server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"10ms\"\n"
            ),
        )
        .unwrap();
        herd_sim()
            .args(["sweep", "--config"])
            .arg(&config)
            .args(["--think-time", "25ms,200ms", "--quiet", "--out"])
            .arg(&out)
            .assert()
            .success();
        let text = std::fs::read_to_string(&out).unwrap();
        let mut rows = csv::Reader::from_reader(text.as_bytes());
        let column = rows
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "think_time_s")
            .unwrap();
        let got: Vec<String> = rows
            .records()
            .map(|r| r.unwrap()[column].to_string())
            .collect();
        assert_eq!(got, want, "{think}");
    }
}

#[test]
fn boundary_finds_the_think_time_a_server_tips_over_at() {
    // Twenty closed clients of one call against one worker of Exp(S = 100 ms), thinking
    // Exp(T), with a 1 s timeout, 3 naive retries and an outage over 50–60 s. By the
    // asymptotic bound of a closed system the mean response without timeouts is at least
    // N·S − T = 2 s − T, past the 1 s timeout when T < 1 s: calls time out, their abandoned
    // attempts still take the worker, and the server stays down. In the worst state every
    // attempt times out, so a client sends 4 attempts in 4 s and then thinks T: 80 / (4 s + T)
    // attempts a second, under the worker's 10 when T > 4 s, so the queue drains and the
    // server recovers. The tipping point of think-time lies between 1 s and 4 s.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("closed.toml");
    std::fs::write(
        &config,
        "clients = 20\nstrategy = \"naive\"\nretries = 3\narrivals = \"poisson\"\n\
         rate = \"16/s\"\nduration = \"200s\"\ntimeout = \"1s\"\noutage = \"50s..60s\"\n\
         in_flight = 1\nthink_time = \"exp:1s\"\n\
         [server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"exp:100ms\"\n",
    )
    .unwrap();
    let out = herd_sim()
        .args(["boundary", "--config"])
        .arg(&config)
        .args([
            "--axis",
            "think-time",
            "--range",
            "500ms..8s",
            "--seeds",
            "2",
            "--tolerance",
            "250ms",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["results"][0];
    let (low, high) = (
        r["boundary_low"].as_f64().unwrap(),
        r["boundary_high"].as_f64().unwrap(),
    );
    assert!(1.0 <= low && low < high && high <= 4.0, "{r}");
}
