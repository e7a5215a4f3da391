//! An outer retry layer's own timeout and throttle (`--layer "... timeout=T throttle=NAME"`),
//! checked against timelines worked out by hand, conservation between the layers, the trace
//! and the summary, and the same bytes for any thread count.

use std::collections::HashMap;
use std::fs;

use serde_json::Value;

use crate::herd_sim_ok;

/// The JSON report and the trace's lines of a run of `args`, on `threads` threads.
fn run(args: &[&str], threads: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut all = args.to_vec();
    all.extend_from_slice(&[
        "--format",
        "json",
        "--threads",
        threads,
        "--trace",
        path.to_str().unwrap(),
    ]);
    let report: Value = serde_json::from_slice(&herd_sim_ok(&all)).unwrap();
    (report, fs::read_to_string(&path).unwrap())
}

fn lines(trace: &str) -> Vec<Value> {
    trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A fixed 1 s wait between retries.
const FIXED_1S: [&str; 6] = ["--strategy", "fixed", "--base", "1s", "--cap", "1s"];

/// One call against one worker that a first request keeps busy for 10 s (so nothing is
/// answered in time), the run's own timeout 1 s with `inner` retries 1 s apart, inside the
/// layer `layer`.
fn one_stuck_call(inner: &str, layer: &str) -> (Value, Vec<Value>) {
    let stuck = [
        "--clients",
        "1",
        "--server",
        "capacity",
        "--workers",
        "1",
        "--service-time",
        "10s",
        "--timeout",
        "1s",
        "--retries",
        inner,
        "--layer",
        layer,
    ];
    let (report, trace) = run(&[&stuck[..], &FIXED_1S[..]].concat(), "1");
    (report["results"][0].clone(), lines(&trace))
}

/// `(layer, attempt, sent, arrived, ended, outcome, next, wait)` of a line.
type Line = (
    u64,
    u64,
    f64,
    Option<f64>,
    f64,
    &'static str,
    &'static str,
    Option<f64>,
);

fn check_lines(lines: &[Value], expected: &[Line]) {
    assert_eq!(lines.len(), expected.len(), "{lines:#?}");
    for (l, e) in lines.iter().zip(expected) {
        let (layer, attempt, sent, arrived, ended, outcome, next, wait) = *e;
        assert_eq!(l["layer"].as_u64(), Some(layer), "{l}");
        assert_eq!(l["attempt"].as_u64(), Some(attempt), "{l}");
        assert_eq!(l["sent"].as_f64(), Some(sent), "{l}");
        assert_eq!(l["arrived"].as_f64(), arrived, "{l}");
        assert_eq!(l["ended"].as_f64(), Some(ended), "{l}");
        assert_eq!(l["outcome"], outcome, "{l}");
        assert_eq!(l["next"], next, "{l}");
        assert_eq!(l["wait"].as_f64(), wait, "{l}");
    }
}

#[test]
fn an_outer_timeout_abandons_the_call_below_and_the_layer_retries() {
    // By hand: the outer layer's attempt 0 starts at 0 s (its timeout at 2.5 s). The call
    // below sends at 0 s (the worker takes it for 10 s), times out at 1 s, waits 1 s, sends
    // again at 2 s (queued behind it), and is abandoned at 2.5 s with that request
    // outstanding (timed out; its third, due at 4 s, never sent). The outer layer waits
    // 500 ms: attempt 1 at 3 s (its timeout at 5.5 s) sends at 3 s, times out at 4 s, sends
    // at 5 s, abandoned at 5.5 s; the layer's retry spent, the call fails. Requests at 0, 2,
    // 3 and 5 s: 4, all reaching the server, all timed out, answered late (the worker serves
    // them at 10, 20, 30 and 40 s: 40 s of abandoned work); 2 calls of the run's own layer.
    let (r, lines) = one_stuck_call(
        "2",
        "strategy=fixed base=500ms cap=500ms retries=1 timeout=2500ms",
    );
    assert_eq!(r["attempts"], 4);
    assert_eq!(r["requests"], 4);
    assert_eq!(r["timed_out"], 4);
    assert_eq!(r["late_answers"], 4);
    assert_eq!(r["abandoned_work_s"], 40.0);
    assert_eq!(r["gave_up"], 1);
    assert_eq!(r["succeeded"], 0);
    assert_eq!(r["layers"][0]["attempts"], 2);
    assert_eq!(r["layers"][1]["attempts"], 4);
    // 4 requests over the 2 calls of the run's own layer.
    assert_eq!(r["layers"][1]["amplification"], 2.0);
    check_lines(
        &lines,
        &[
            (1, 0, 0.0, Some(0.0), 1.0, "timed_out", "retry", Some(1.0)),
            (1, 1, 2.0, Some(2.0), 2.5, "timed_out", "abandoned", None),
            (0, 0, 0.0, None, 2.5, "timed_out", "retry", Some(0.5)),
            (1, 0, 3.0, Some(3.0), 4.0, "timed_out", "retry", Some(1.0)),
            (1, 1, 5.0, Some(5.0), 5.5, "timed_out", "abandoned", None),
            (0, 1, 3.0, None, 5.5, "timed_out", "gave_up", None),
        ],
    );
    // Without the outer timeout each call below makes its 3 attempts (0, 2, 4 s; then 4.5,
    // 6.5, 8.5 s): 6.
    let (r, _) = one_stuck_call("2", "strategy=fixed base=500ms cap=500ms retries=1");
    assert_eq!(r["attempts"], 6);
}

#[test]
fn a_retry_the_call_below_waits_for_is_never_sent_once_abandoned() {
    // By hand: the request at 0 s times out at 1 s and the run's own layer waits 1 s to
    // retry at 2 s; the outer timeout at 1.5 s abandons the call first, with nothing
    // outstanding, and the outer layer (no retries) gives up: 1 request, 1 timed out, and
    // no request at 2 s.
    let (r, lines) = one_stuck_call("2", "strategy=fixed retries=0 timeout=1500ms");
    assert_eq!(r["attempts"], 1);
    assert_eq!(r["requests"], 1);
    assert_eq!(r["timed_out"], 1);
    assert_eq!(r["gave_up"], 1);
    check_lines(
        &lines,
        &[
            (1, 0, 0.0, Some(0.0), 1.0, "timed_out", "retry", Some(1.0)),
            (0, 0, 0.0, None, 1.5, "timed_out", "gave_up", None),
        ],
    );
}

#[test]
fn layered_timeouts_conserve_attempts_and_do_not_depend_on_threads() {
    // Poisson calls through two layers with timeouts around a timeout and retries of their
    // own, over an outage (after which the abandoned requests keep the server's queue full:
    // every kind of line occurs): every layer's attempts are the calls of the layer below, the
    // trace holds each layer's attempts once, its server attempts split as the summary's
    // outcomes, every outer timed-out line lasts its layer's timeout exactly, and one thread
    // or two give the same bytes.
    let args = [
        "--clients",
        "20",
        "--arrivals",
        "poisson",
        "--rate",
        "40/s",
        "--duration",
        "20s",
        "--server",
        "capacity",
        "--workers",
        "3",
        "--service-time",
        "exp:60ms",
        "--outage",
        "5s..8s",
        "--timeout",
        "300ms",
        "--strategy",
        "full-jitter",
        "--base",
        "100ms",
        "--cap",
        "1s",
        "--retries",
        "3",
        "--settle",
        "5s",
        "--layer",
        "strategy=exponential base=500ms cap=2s retries=2 timeout=2s",
        "--layer",
        "strategy=full-jitter base=200ms cap=1s retries=2 timeout=1s",
    ];
    let (report, trace) = run(&args, "1");
    let (report2, trace2) = run(&args, "2");
    assert_eq!(report, report2);
    assert!(trace == trace2, "the trace depends on the thread count");
    let r = &report["results"][0];
    let layers = r["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 3);
    // A layer's calls (its attempts over its amplification) are the attempts of the layer
    // above it, the outermost's the run's calls.
    let calls = |i: usize| {
        layers[i]["attempts"].as_f64().unwrap() / layers[i]["amplification"].as_f64().unwrap()
    };
    assert!((calls(0) - r["calls"].as_f64().unwrap()).abs() < 1e-6);
    for i in 1..3 {
        let above = layers[i - 1]["attempts"].as_f64().unwrap();
        assert!((calls(i) - above).abs() < 1e-6, "layer {i}");
    }
    assert_eq!(layers[2]["attempts"], r["attempts"]);
    let lines = lines(&trace);
    let of = |layer: u64, key: &str, value: &str| {
        lines
            .iter()
            .filter(|l| l["layer"] == layer && l[key] == value)
            .count() as u64
    };
    for (i, layer) in layers.iter().enumerate() {
        let n = lines.iter().filter(|l| l["layer"] == i as u64).count() as u64;
        assert_eq!(Some(n), layer["attempts"].as_u64(), "layer {i}");
    }
    let attempts = r["attempts"].as_u64().unwrap();
    let served = of(2, "outcome", "served");
    let refused = of(2, "outcome", "refused");
    let timed_out = of(2, "outcome", "timed_out");
    assert_eq!(served + refused + timed_out, attempts);
    assert_eq!(Some(timed_out), r["timed_out"].as_u64());
    assert_eq!(Some(refused), r["refused"].as_u64());
    assert_eq!(Some(served), r["succeeded"].as_u64());
    // The outer timeouts fired and abandoned attempts at the server: the test has teeth.
    let abandoned = of(2, "next", "abandoned");
    assert!(
        abandoned > 0 && of(0, "outcome", "timed_out") > 0,
        "{abandoned}"
    );
    for (layer, timeout) in [(0, 2.0), (1, 1.0)] {
        for l in lines.iter().filter(|l| {
            // Its own timeout, not an outer layer's abandoning it.
            l["layer"] == layer && l["outcome"] == "timed_out" && l["next"] != "abandoned"
        }) {
            let lasted = l["ended"].as_f64().unwrap() - l["sent"].as_f64().unwrap();
            assert!((lasted - timeout).abs() < 1e-6, "{l}");
        }
    }
    // Every abandoned line ends when an outer layer's timeout of its call fired: a line of a
    // layer above it, of its client and call, ending when it ends, timed out by its own
    // timeout. Those lines are looked up by client, call and end (the outermost layer's kept),
    // not searched for among all the lines for each abandoned one.
    let key = |l: &Value| {
        (
            l["client"].to_string(),
            l["call"].to_string(),
            l["ended"].to_string(),
        )
    };
    let mut fired = HashMap::new();
    for o in lines
        .iter()
        .filter(|o| o["outcome"] == "timed_out" && o["next"] != "abandoned")
    {
        let layer = fired.entry(key(o)).or_insert(o["layer"].as_u64());
        *layer = (*layer).min(o["layer"].as_u64());
    }
    for l in lines.iter().filter(|l| l["next"] == "abandoned") {
        assert!(
            fired
                .get(&key(l))
                .is_some_and(|&outer| outer < l["layer"].as_u64()),
            "{l}"
        );
    }
}

#[test]
fn an_outer_throttle_limits_its_layers_retries_as_the_runs_own_does() {
    // A layer of 5 fixed retries with Google SRE's throttle around a policy of none sends
    // what the run's own policy of 5 retries with that throttle sends: each of its attempts
    // is one request, gated by the same throttle on the same draws of the process's stream
    // (against a down server nothing else draws).
    let base = ["--clients", "40", "--server", "down", "--format", "json"];
    let with = |extra: &[&str]| -> Value {
        let args = [&base[..], &FIXED_1S[..], extra].concat();
        let report: Value = serde_json::from_slice(&herd_sim_ok(&args)).unwrap();
        report["results"][0].clone()
    };
    let own = with(&["--retries", "5", "--throttle", "sre"]);
    let layered = with(&[
        "--retries",
        "0",
        "--layer",
        "strategy=fixed base=1s cap=1s retries=5 throttle=sre",
    ]);
    for key in ["attempts", "calls_rejected_locally", "gave_up", "refused"] {
        assert_eq!(own[key], layered[key], "{key}");
    }
    // The throttle did reject: without it, 40 x 6 attempts.
    let rejected = layered["calls_rejected_locally"].as_u64().unwrap();
    assert!(rejected > 0, "{layered}");
    assert!(layered["attempts"].as_u64().unwrap() < 240);
    assert_eq!(layered["layers"][0]["attempts"], layered["attempts"]);
}
