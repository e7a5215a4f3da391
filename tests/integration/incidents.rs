//! The shapes of real incidents, each checked against a value worked out by hand or a closed
//! form: probabilistic retry (`--retry-probability`), sticky failures (`--sticky-failures`),
//! the scope of budgets and breakers (`scope=client|global`) and deadline propagation
//! (`--deadline-propagation`).

use herd_sim::config::{ScenarioFile, StrategyList};
use herd_sim::engine::{simulate, simulate_all, Path};
use herd_sim::policy::Strategy;
use herd_sim::time::SimDuration;

use crate::herd_sim;

fn refused(args: &[&str]) -> String {
    let out = herd_sim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "args {args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout for {args:?}");
    assert!(
        stderr.starts_with("error:") && stderr.lines().count() == 1,
        "{stderr}"
    );
    stderr
}

// ---------------------------------------------------------------- retry probability

/// Attempts of a call with `n` retries, each made with probability `p`, against a server that
/// refuses everything: `1 + X` where retry k is made when the first k coins all come up, so
/// `P(attempts > k) = p^k` for k ≤ n. Mean `(1 − p^(n+1))/(1 − p)`; the variance from
/// `E[A²] = Σ_k (2k + 1) P(A > k)`.
fn attempts_moments(p: f64, n: u32) -> (f64, f64) {
    let mean: f64 = (0..=n).map(|k| p.powi(k as i32)).sum();
    let second: f64 = (0..=n).map(|k| (2 * k + 1) as f64 * p.powi(k as i32)).sum();
    (mean, second - mean * mean)
}

fn down_scenario(
    clients: u64,
    retries: u32,
    p: f64,
    extra: ScenarioFile,
) -> herd_sim::config::Scenario {
    ScenarioFile {
        clients: Some(clients),
        strategy: Some(StrategyList(vec![Strategy::FullJitter])),
        retries: Some(retries),
        retry_probability: Some(p),
        ..extra
    }
    .validate()
    .expect("valid scenario")
}

#[test]
fn the_closed_form_itself_is_right() {
    // p = 0.5, n = 2: attempts 1, 2, 3 with probabilities 1/2, 1/4, 1/4.
    let (mean, var) = attempts_moments(0.5, 2);
    assert_eq!(mean, 1.75);
    assert_eq!(mean, (1.0 - 0.5f64.powi(3)) / (1.0 - 0.5));
    assert_eq!(var, 0.5 + 4.0 * 0.25 + 9.0 * 0.25 - 1.75 * 1.75);
}

#[test]
fn retry_probability_against_a_down_server_gives_the_closed_form_mean() {
    let clients = 200_000u64;
    for (p, n) in [(0.5, 4), (0.25, 3), (0.9, 6)] {
        let (mean, var) = attempts_moments(p, n);
        let closed = (1.0 - f64::powi(p, n as i32 + 1)) / (1.0 - p);
        assert!((mean - closed).abs() < 1e-12);
        let s = down_scenario(clients, n, p, ScenarioFile::default());
        for path in [Path::EventQueue, Path::Independent] {
            let tally = simulate(&s.run_spec(Strategy::FullJitter), path);
            let got = tally.requests as f64 / clients as f64;
            // Five standard errors: a wrong model (no coin, or a coin per attempt) is off by
            // hundreds of them.
            let tolerance = 5.0 * (var / clients as f64).sqrt();
            assert!(
                (got - mean).abs() < tolerance,
                "p {p}, n {n}, {path:?}: {got} vs {mean} ± {tolerance}"
            );
            assert_eq!(tally.succeeded, 0);
            assert_eq!(tally.gave_up, clients);
        }
    }
}

#[test]
fn the_edges_are_exact_and_the_call_loop_draws_the_same_coins() {
    // p = 0: one attempt a call; p = 1: every retry, as without the flag.
    for (p, per_call) in [(0.0, 1), (1.0, 5)] {
        let s = down_scenario(1000, 4, p, ScenarioFile::default());
        let tally = simulate(&s.run_spec(Strategy::Fixed), Path::Auto);
        assert_eq!(tally.requests, 1000 * per_call, "p {p}");
    }
    // The call loop (a timeout that never fires) against the same down server: the same
    // coins from the same streams, so the same attempts; amplification is attempts per call.
    let herd = down_scenario(5000, 4, 0.5, ScenarioFile::default());
    let calls = down_scenario(
        5000,
        4,
        0.5,
        ScenarioFile {
            timeout: Some(SimDuration::from_secs(3600)),
            ..Default::default()
        },
    );
    let spec = calls.run_spec(Strategy::FullJitter);
    assert!(spec.uses_call_loop());
    let (tally, totals) = simulate_all(&spec, Path::Auto);
    let totals = totals.unwrap();
    let herd_requests = simulate(&herd.run_spec(Strategy::FullJitter), Path::Auto).requests;
    assert_eq!(tally.requests, herd_requests);
    assert_eq!(totals.attempts, herd_requests);
    assert_eq!(totals.calls, 5000);
}

#[test]
fn retry_probability_is_printed_swept_and_refused_outside_zero_to_one() {
    let out = String::from_utf8(crate::herd_sim_ok(&[
        "--clients",
        "10",
        "--retry-probability",
        "0.5",
    ]))
    .unwrap();
    assert!(out.contains("4 retries made with probability 0.5"), "{out}");
    let json = crate::core::json_of(&["--clients", "10", "--retry-probability", "0.25"]);
    assert_eq!(json["results"][0]["retry_probability"], 0.25);
    let json = crate::core::json_of(&["--clients", "10"]);
    assert!(json["results"][0].get("retry_probability").is_none());
    // A sweep over it: p = 0 sends one request a client, p = 1 five.
    let csv = String::from_utf8(crate::herd_sim_ok(&[
        "sweep",
        "--clients",
        "100",
        "--retry-probability",
        "0,1",
    ]))
    .unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (p, requests) = (column("retry_probability"), column("requests"));
    let rows: Vec<(String, String)> = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[p].to_string(), cells[requests].to_string())
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("0".to_string(), "100".to_string()),
            ("1".to_string(), "500".to_string())
        ]
    );
    for bad in ["1.5", "-0.1", "NaN"] {
        let e = refused(&["--retry-probability", bad]);
        assert!(
            e.contains("--retry-probability") && e.contains(bad) && e.contains("0 to 1"),
            "{e}"
        );
    }
    let e = refused(&["--retries", "0", "--retry-probability", "0.5"]);
    assert!(
        e.contains("--retry-probability") && e.contains("--retries"),
        "{e}"
    );
}

// ---------------------------------------------------------------- sticky failures and scope

fn call_loop(text: &str) -> (herd_sim::metrics::Tally, herd_sim::series::OverloadTally) {
    let s = ScenarioFile::parse(text, Some("toml"))
        .unwrap()
        .validate()
        .expect("valid scenario");
    let spec = s.run_spec(s.strategies[0]);
    assert!(spec.uses_call_loop());
    let (tally, totals) = simulate_all(&spec, Path::Auto);
    (tally, totals.unwrap())
}

#[test]
fn sticky_failures_leave_exactly_one_minus_f_of_the_calls_to_succeed() {
    // A server that serves everyone else: 1000 processes, one call each, 200 sticky. The
    // 800 succeed on their first attempt; the 200 spend all 3 retries: 800 + 200 × 4 attempts.
    let (tally, totals) = call_loop(
        "clients = 1000\nstrategy = \"naive\"\nretries = 3\nsticky_failures = 0.2\n\
         [server]\nmodel = \"flaky\"\nfailure_rate = 0.0\n",
    );
    assert_eq!(totals.calls, 1000);
    assert_eq!(totals.calls_succeeded, 800);
    assert_eq!(totals.attempts, 800 + 200 * 4);
    assert_eq!(tally.gave_up, 200);
    // A budget cannot help them either, per process or shared: the 800 never retry.
    for scope in ["client", "global"] {
        let (_, t) = call_loop(&format!(
            "clients = 1000\nstrategy = \"naive\"\nretries = 3\nsticky_failures = 0.2\n\
             budget = \"token-bucket:scope={scope}\"\n[server]\nmodel = \"flaky\"\nfailure_rate = 0.0\n"
        ));
        assert_eq!(t.calls_succeeded, 800, "{scope}");
    }
}

#[test]
fn sticky_failures_beside_independent_failures_follow_the_product() {
    // Poisson calls over 500 processes, a flaky server failing 30 % of attempts, 2 retries,
    // 20 % sticky: a call succeeds when its process is not sticky and one of its 3 attempts
    // gets through, (1 − F)(1 − x^3) = 0.8 × 0.973.
    let (_, totals) = call_loop(
        "clients = 500\nstrategy = \"naive\"\nretries = 2\nsticky_failures = 0.2\n\
         arrivals = \"poisson\"\nrate = \"400/s\"\nduration = \"60s\"\n\
         [server]\nmodel = \"flaky\"\nfailure_rate = 0.3\n",
    );
    let n = totals.calls as f64;
    let expected = 0.8 * (1.0 - 0.3f64.powi(3));
    let got = totals.calls_succeeded as f64 / n;
    let tolerance = 5.0 * (expected * (1.0 - expected) / n).sqrt();
    assert!(n > 20_000.0, "{n}");
    assert!(
        (got - expected).abs() < tolerance,
        "{got} vs {expected} ± {tolerance}"
    );
}

#[test]
fn a_global_budget_is_one_bucket_for_all_and_a_client_budget_one_each() {
    // A server down for good, one call a process, naive retries (10 allowed): the token
    // bucket starts full at 5 tokens and a retry takes 1, nothing deposits (no success).
    // Per process: each call makes 5 retries; shared: the first 5 retries of the run drain
    // the one bucket and every other call stops at its first attempt.
    let run = |scope: &str| {
        call_loop(&format!(
            "clients = 100\nstrategy = \"naive\"\nretries = 10\n\
             budget = \"token-bucket:scope={scope}\"\n"
        ))
        .1
    };
    let client = run("client");
    assert_eq!(client.attempts, 100 * (1 + 5));
    assert_eq!(client.retries_denied, 100);
    let global = run("global");
    assert_eq!(global.attempts, 100 + 5);
    assert_eq!(global.retries_denied, 100);
}

#[test]
fn sticky_failures_and_scopes_are_swept_printed_and_refused_when_wrong() {
    let out = String::from_utf8(crate::herd_sim_ok(&[
        "--clients",
        "10",
        "--server",
        "flaky",
        "--sticky-failures",
        "0.2",
    ]))
    .unwrap();
    assert!(
        out.contains("sticky failures 0.2 (2 client processes fail every attempt)"),
        "{out}"
    );
    let csv = String::from_utf8(crate::herd_sim_ok(&[
        "sweep",
        "--clients",
        "10",
        "--server",
        "flaky",
        "--sticky-failures",
        "0,0.5",
        "--budget",
        "token-bucket:scope=global",
    ]))
    .unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (sticky, budget) = (column("sticky_failures"), column("budget"));
    let rows: Vec<(String, String)> = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[sticky].to_string(), cells[budget].to_string())
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("0".to_string(), "token-bucket:scope=global".to_string()),
            ("0.5".to_string(), "token-bucket:scope=global".to_string())
        ]
    );
    for bad in ["1.5", "-0.1"] {
        let e = refused(&["--sticky-failures", bad]);
        assert!(e.contains("--sticky-failures") && e.contains(bad), "{e}");
    }
    let e = refused(&["--budget", "grpc:scope=world"]);
    assert!(e.contains("--budget") && e.contains("scope=world"), "{e}");
    let e = refused(&["--breaker", "none:scope=global"]);
    assert!(e.contains("--breaker") && e.contains("scope"), "{e}");
    let e = refused(&["--server", "occ", "--sticky-failures", "0.1"]);
    assert!(e.contains("--sticky-failures"), "{e}");
}

// ---------------------------------------------------------------- deadline propagation

/// Four calls at t = 0 to one worker with a fixed 1 s service and no retries.
fn one_worker(timeout: &str, extra: &str) -> herd_sim::series::OverloadTally {
    call_loop(&format!(
        "clients = 4\nstrategy = \"naive\"\nretries = 0\ntimeout = \"{timeout}\"\n{extra}\
         [server]\nmodel = \"capacity\"\nworkers = 1\nservice_time = \"1s\"\n"
    ))
    .1
}

#[test]
fn a_propagated_deadline_drops_exactly_the_requests_that_cannot_make_it() {
    const S: u64 = 1_000_000_000;
    // Timeout 2.5 s, a drop costs 0.1 of a service. By hand: r0 is served 0–1 s and r1
    // 1–2 s (each ends before its deadline 2.5 s); at 2 s r2 would end at 3 s, past it:
    // dropped, the worker free at 2.1 s; r3 would end at 3.1 s: dropped, free at 2.2 s. The
    // two clients time out at 2.5 s; the server spent 0.2 s on them.
    let t = one_worker("2500ms", "deadline_propagation = 0.1\n");
    assert_eq!((t.calls_succeeded, t.timed_out, t.late), (2, 2, 0));
    assert_eq!((t.dropped, t.abandoned_work_ns), (2, 2 * S / 10));
    // Without propagation the worker serves r2 (2–3 s) and r3 (3–4 s) for nobody: two late
    // answers, 2 s of abandoned work.
    let t = one_worker("2500ms", "");
    assert_eq!((t.calls_succeeded, t.timed_out, t.late), (2, 2, 2));
    assert_eq!((t.dropped, t.abandoned_work_ns), (0, 2 * S));
    // Timeout 1.5 s, a drop costs 0.6: r0 is served 0–1 s; at 1 s r1 would end at 2 s:
    // dropped, free at 1.6 s. r2 and r3 timed out at 1.5 s while they queued: each dropped
    // at its turn (1.6 s, 2.2 s) for 0.6 s. 1.8 s of abandoned work, nothing late.
    let t = one_worker("1500ms", "deadline_propagation = 0.6\n");
    assert_eq!((t.calls_succeeded, t.timed_out, t.late), (1, 3, 0));
    assert_eq!((t.dropped, t.abandoned_work_ns), (3, 18 * S / 10));
    // A server that also cancels skips r2 and r3 for free: only r1's check is paid.
    let cancels = call_loop(
        "clients = 4\nstrategy = \"naive\"\nretries = 0\ntimeout = \"1500ms\"\n\
         deadline_propagation = 0.6\n[server]\nmodel = \"capacity\"\nworkers = 1\n\
         service_time = \"1s\"\nserver_cancels = true\n",
    )
    .1;
    assert_eq!((cancels.calls_succeeded, cancels.timed_out), (1, 3));
    // Dropped all the same: r1 past its deadline, r2 and r3 cancelled at their turn.
    assert_eq!(
        (cancels.dropped, cancels.abandoned_work_ns),
        (3, 6 * S / 10)
    );
}

#[test]
fn deadline_propagation_is_swept_printed_and_refused_where_it_cannot_work() {
    let out = String::from_utf8(crate::herd_sim_ok(&[
        "--clients",
        "4",
        "--server",
        "capacity",
        "--workers",
        "1",
        "--timeout",
        "2s",
        "--deadline-propagation",
        "0.1",
    ]))
    .unwrap();
    assert!(
        out.contains("timeout 2s propagated as a deadline (a drop costs 0.1 of a service)"),
        "{out}"
    );
    let csv = String::from_utf8(crate::herd_sim_ok(&[
        "sweep",
        "--clients",
        "4",
        "--server",
        "capacity",
        "--workers",
        "1",
        "--timeout",
        "2s",
        "--deadline-propagation",
        "0,1",
    ]))
    .unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|h| *h == "deadline_propagation")
        .unwrap();
    let values: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap())
        .collect();
    assert_eq!(values, ["0", "1"]);
    for (args, wanted) in [
        (
            &["--server", "capacity", "--deadline-propagation", "0.1"][..],
            "--timeout",
        ),
        (
            &[
                "--server",
                "flaky",
                "--timeout",
                "1s",
                "--deadline-propagation",
                "0.1",
            ][..],
            "--server capacity",
        ),
        (
            &[
                "--server",
                "capacity",
                "--timeout",
                "1s",
                "--deadline-propagation",
                "2",
            ][..],
            "from 0 to 1",
        ),
    ] {
        let e = refused(args);
        assert!(
            e.contains("--deadline-propagation") && e.contains(wanted),
            "{e}"
        );
    }
}

// ---------------------------------------------------------------- layered retries

/// `clients` calls at t = 0 against a server that refuses everything, the run's own policy
/// naive with `inner` retries, inside one layer of full jitter (10 ms) with `outer` retries.
fn two_layers(
    clients: u64,
    outer: u32,
    inner: u32,
    layer_extra: &str,
) -> herd_sim::series::OverloadTally {
    call_loop(&format!(
        "clients = {clients}\nstrategy = \"naive\"\nretries = {inner}\n[server]\nmodel = \"down\"\n\
         [[layer]]\nstrategy = \"full-jitter\"\nbase = \"10ms\"\nretries = {outer}\n{layer_extra}"
    ))
    .1
}

#[test]
fn two_layers_against_a_down_server_make_exactly_the_product_of_their_attempts() {
    for (r1, r2) in [(0, 0), (1, 3), (2, 3), (4, 2), (3, 0)] {
        let t = two_layers(20, r1, r2, "");
        let (a1, a2) = (u64::from(1 + r1), u64::from(1 + r2));
        // Every call fails; each outer attempt is a whole inner call of 1 + r2 attempts.
        assert_eq!((t.calls, t.calls_succeeded, t.calls_failed), (20, 0, 20));
        assert_eq!(t.attempts, 20 * a1 * a2, "r1 {r1}, r2 {r2}");
        assert_eq!(t.refused, t.attempts);
        assert_eq!(t.layers.len(), 2);
        assert_eq!((t.layers[0].calls, t.layers[0].attempts), (20, 20 * a1));
        assert_eq!(
            (t.layers[1].calls, t.layers[1].attempts),
            (20 * a1, 20 * a1 * a2)
        );
    }
}

#[test]
fn a_budget_at_one_layer_limits_that_layers_retries_only() {
    // 100 calls, the outer layer with 3 retries and one shared token bucket (5 tokens,
    // nothing deposited without a success): 5 outer retries in all, so 100 + 5 outer attempts,
    // each a whole inner call of 1 + 2 attempts: 315 at the server.
    let t = two_layers(100, 3, 2, "budget = \"token-bucket:scope=global\"\n");
    assert_eq!(t.layers[0].attempts, 105);
    assert_eq!(t.attempts, 105 * 3);
    // Every call is denied once: the herd's first outer attempts all fail at t = 0 in process
    // order, so the five tokens go to the first five calls' first retries, and each call's
    // next wanted retry is denied.
    assert_eq!(t.retries_denied, 100);
    // A bucket per process (one call each) allows all three: 100 × 4 × 3.
    let t = two_layers(100, 3, 2, "budget = \"token-bucket\"\n");
    assert_eq!(t.attempts, 100 * 4 * 3);
}

/// Three layers of 3 retries with fixed waits (the run's own and the middle one 100 ms, the
/// outer 1 s) against a server out over `0s..OUTAGE`: the JSON's `amplification` and layers.
fn three_layers(outage: &str) -> serde_json::Value {
    let out = crate::herd_sim_ok(&[
        "--clients",
        "10",
        "--server",
        "flaky",
        "--failure-rate",
        "0",
        "--outage",
        &format!("0s..{outage}"),
        "--strategy",
        "fixed",
        "--base",
        "100ms",
        "--retries",
        "3",
        "--layer",
        "strategy=fixed base=1s retries=3",
        "--layer",
        "strategy=fixed base=100ms retries=3",
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    report["results"][0].clone()
}

#[test]
fn three_layers_of_three_retries_against_an_outage_multiply() {
    let per_layer = |r: &serde_json::Value| -> Vec<(u64, f64)> {
        r["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["attempts"].as_u64().unwrap(),
                    l["amplification"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    // Out for 30 s: an inner call takes 0.3 s (four refusals 100 ms apart), a middle one
    // 4 × 0.3 + 3 × 0.1 = 1.5 s, an outer one 4 × 1.5 + 3 × 1 = 9 s, all inside the outage:
    // every call fails after 4 × 4 × 4 = 64 attempts.
    let r = three_layers("30s");
    assert_eq!(r["attempts"], 640);
    assert_eq!(r["amplification"], 64.0);
    assert_eq!(per_layer(&r), [(40, 4.0), (160, 4.0), (640, 4.0)]);
    // Out for 5 s: outer attempts at 0 s and 2.5 s fail (each 16 attempts over 1.5 s), the
    // third starts at 5 s, when the server is back: 16 + 16 + 1 = 33 attempts a call, the
    // middle layer 4 + 4 + 1 = 9.
    let r = three_layers("5s");
    assert_eq!(r["attempts"], 330);
    assert_eq!(r["goodput_pct"], 100.0);
    let layers = per_layer(&r);
    assert_eq!(layers[0], (30, 3.0));
    assert_eq!(layers[1], (90, 3.0));
    assert_eq!(layers[2].0, 330);
    // The layers' amplifications multiply to the end-to-end one.
    let product: f64 = layers.iter().map(|l| l.1).product();
    assert!((product - 33.0).abs() < 1e-9, "{product}");
}

/// A run of 10 calls against the default (down) server with `extra` flags, as JSON.
fn stacked(extra: &[&str]) -> Vec<u8> {
    let mut args = vec!["--clients", "10", "--format", "json"];
    args.extend_from_slice(extra);
    crate::herd_sim_ok(&args)
}

#[test]
fn a_stack_in_one_value_is_each_outer_layer_and_the_runs_own_policy() {
    // An app retrying 3 times around an SDK retrying 3 times around a mesh retrying twice,
    // against a server down for good: 4 x 4 x 3 = 48 attempts a call, 480 for 10 calls,
    // byte for byte what the repeated --layer form and the run's own --retries give.
    let one_value = stacked(&["--layers", "retries=3 ; retries=3 ; retries=2"]);
    let repeated = stacked(&[
        "--layer",
        "retries=3",
        "--layer",
        "retries=3",
        "--retries",
        "2",
    ]);
    assert_eq!(one_value, repeated);
    let report: serde_json::Value = serde_json::from_slice(&one_value).unwrap();
    let r = &report["results"][0];
    assert_eq!(
        (r["attempts"].as_u64(), r["amplification"].as_f64()),
        (Some(480), Some(48.0))
    );
    let layers: Vec<u64> = r["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["attempts"].as_u64().unwrap())
        .collect();
    assert_eq!(layers, [40, 160, 480]);
    // The fixed three-layer study against an outage over 0-5 s, every key of each layer, and
    // the innermost's timeout and throttle, which only the innermost takes.
    let outage = [
        "--server",
        "flaky",
        "--failure-rate",
        "0",
        "--outage",
        "0s..5s",
    ];
    let one_value = stacked(&[&outage[..], &["--layers", "strategy=fixed base=1s retries=3;strategy=fixed base=100ms retries=3 ; strategy=fixed base=100ms retries=3 timeout=1s throttle=sre"]].concat());
    let repeated = stacked(
        &[
            &outage[..],
            &[
                "--layer",
                "strategy=fixed base=1s retries=3",
                "--layer",
                "strategy=fixed base=100ms retries=3",
                "--strategy",
                "fixed",
                "--base",
                "100ms",
                "--retries",
                "3",
                "--timeout",
                "1s",
                "--throttle",
                "sre",
            ],
        ]
        .concat(),
    );
    assert_eq!(one_value, repeated);
    // One layer is the run's own policy alone; over a config, the stack replaces the config's
    // layers, and the innermost's keys lie over the config's own policy keys.
    assert_eq!(
        stacked(&["--layers", "retries=2"]),
        stacked(&["--retries", "2"])
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("layered.toml");
    std::fs::write(
        &config,
        "strategy = \"fixed\"\nretries = 5\n[[layer]]\nretries = 7\n[[layer]]\nretries = 9\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let over_config = stacked(&["--config", config, "--layers", "retries=1 ; retries=2"]);
    let plain = stacked(&[
        "--strategy",
        "fixed",
        "--layer",
        "retries=1",
        "--retries",
        "2",
    ]);
    assert_eq!(over_config, plain);
}

#[test]
fn a_stack_with_an_empty_or_misplaced_layer_or_beside_the_flags_it_sets_is_refused() {
    for (args, wanted) in [
        (
            &["--layers", "retries=3 ; ; retries=2"][..],
            "layer 2 of 3 (outermost first) is empty",
        ),
        (
            &["--layers", "retries=3 ;"][..],
            "layer 2 of 2 (the innermost) is empty",
        ),
        (
            &["--layers", ""][..],
            "layer 1 of 1 (the innermost) is empty",
        ),
        (
            &["--layers", "timeout=0s ; retries=2"][..],
            "layer 1 of 2 (outermost first): --timeout 0s",
        ),
        (&["--layers", "throttle=bogus ; retries=2"][..], "bogus"),
        (
            &["--layers", "strategy=naive,fixed ; retries=2"][..],
            "one strategy",
        ),
        (
            &["--layers", "retries=1 cap=1ms ; retries=2"][..],
            "--cap 1ms",
        ),
        (&["--layers", "retries=2 ; colour=red"][..], "colour"),
        (
            &["--layers", "retries=2", "--layer", "retries=1"][..],
            "--layer",
        ),
        (
            &["--layers", "retries=2", "--retries", "1"][..],
            "--retries",
        ),
        (
            &["--layers", "retries=2", "--timeout", "1s"][..],
            "--timeout",
        ),
    ] {
        let e = refused(args);
        assert!(
            e.contains("--layers") && e.contains(wanted),
            "{args:?}: {e}"
        );
    }
}

/// A flaky server that fails nothing but is out for the first 30 s, behind `stack`.
fn against_an_outage(stack: &str) -> [&str; 8] {
    [
        "--server",
        "flaky",
        "--failure-rate",
        "0",
        "--outage",
        "0s..30s",
        "--layers",
        stack,
    ]
}

#[test]
fn a_shared_budget_saves_more_at_the_inner_layer_than_at_the_outer() {
    // docs/incidents.md: the three fixed layers against a server out for 30 s, every call
    // failing. A shared bucket of 5 tokens that no success refills allows 5 retries in all.
    // At the outer layer each call's first outer attempt is a middle call of 4 x 4 = 16
    // attempts and each of the 5 retries another: 10 x 16 + 5 x 16 = 240. At the innermost,
    // each call's 4 x 4 = 16 inner calls make one attempt each, plus the 5 retries: 165.
    let attempts = |outer: &str, inner: &str| {
        let stack = format!(
            "strategy=fixed base=1s retries=3 {outer} ; strategy=fixed base=100ms retries=3 ; \
             strategy=fixed base=100ms retries=3 {inner}"
        );
        let out = stacked(&against_an_outage(&stack));
        let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
        report["results"][0]["attempts"].as_u64().unwrap()
    };
    let shared = "budget=token-bucket:scope=global";
    assert_eq!(attempts("", ""), 10 * 4 * 4 * 4);
    assert_eq!(attempts(shared, ""), 10 * 16 + 5 * 16);
    assert_eq!(attempts("", shared), 10 * 16 + 5);
}

#[test]
fn a_budget_on_an_outer_layer_alone_shows_its_denials_in_the_table() {
    // The shared bucket on the outer layer allows 5 outer retries in all; every call then
    // has its next retry denied, which ends it: 10 denials. The table shows the column as it
    // does for a budget on the run's own policy, with the JSON's count.
    let args = |format: &'static str| {
        let mut args = vec!["--clients", "10", "--format", format];
        args.extend(against_an_outage(
            "strategy=fixed base=1s retries=3 budget=token-bucket:scope=global ; \
             strategy=fixed base=100ms retries=3",
        ));
        args
    };
    let json: serde_json::Value =
        serde_json::from_slice(&crate::herd_sim_ok(&args("json"))).unwrap();
    let denied = json["results"][0]["retries_denied"].as_u64().unwrap();
    assert_eq!(denied, 10);
    let table = String::from_utf8(crate::herd_sim_ok(&args("table"))).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.contains("retries denied"))
        .unwrap_or_else(|| panic!("no retries denied column:\n{table}"));
    let column = |line: &str, at: usize| -> String {
        line.get(at..)
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    let at = lines[header].find("retries denied").unwrap();
    assert_eq!(column(lines[header + 2], at), denied.to_string(), "{table}");
}

#[test]
fn layers_without_a_policy_or_that_cannot_compose_are_refused_in_one_line() {
    for (args, wanted) in [
        (&["--layer", ""][..], "no policy"),
        // An outer layer's timeout and throttle are refused as a run's own would be.
        (&["--layer", "timeout=0s"][..], "--timeout 0s"),
        (&["--layer", "throttle=bogus"][..], "bogus"),
        (&["--layer", "strategy=naive,fixed"][..], "one strategy"),
        (&["--layer", "retries=1 cap=1ms"][..], "--cap"),
        (&["--server", "occ", "--layer", "retries=1"][..], "occ"),
        (&["--hidden", "0.5", "--layer", "retries=1"][..], "browser"),
        (&["--layer", "colour=red"][..], "colour"),
    ] {
        let e = refused(args);
        assert!(e.contains("--layer") && e.contains(wanted), "{args:?}: {e}");
    }
    let e = refused(&["sweep", "--clients", "10", "--layer-retries", "0..2"]);
    assert!(
        e.contains("--layer-retries") && e.contains("no layer"),
        "{e}"
    );
}

#[test]
fn sticky_users_behind_two_layers_make_the_product_and_no_policy_lifts_them() {
    // 1000 processes, 200 sticky, one call each against a server that serves everyone else,
    // through a layer of 2 retries around the run's 3: the 800 succeed at once, each of the
    // 200 makes exactly (1 + 2)(1 + 3) = 12 attempts, 800 + 200 × 12 = 3200.
    let (tally, t) = call_loop(
        "clients = 1000\nstrategy = \"naive\"\nretries = 3\nsticky_failures = 0.2\n\
         [[layer]]\nstrategy = \"naive\"\nretries = 2\n\
         [server]\nmodel = \"flaky\"\nfailure_rate = 0.0\n",
    );
    assert_eq!((t.calls, t.calls_succeeded, t.attempts), (1000, 800, 3200));
    assert_eq!(tally.gave_up, 200);
    // A retry breaker cannot lift them either, per process or shared: success stays 1 − F.
    for scope in ["client", "global"] {
        let (_, t) = call_loop(&format!(
            "clients = 1000\nstrategy = \"naive\"\nretries = 3\nsticky_failures = 0.2\n\
             breaker = \"retries:ratio=0.1,scope={scope}\"\n[server]\nmodel = \"flaky\"\nfailure_rate = 0.0\n"
        ));
        assert_eq!((t.calls, t.calls_succeeded), (1000, 800), "{scope}");
    }
}
