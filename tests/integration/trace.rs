//! `--trace`: every attempt exactly once (the trace's lines sum to the summary's attempts,
//! served, refused and timed-out counts on every path), each client's sends follow from its
//! previous answer and wait, times worked out by hand for an exponential herd, the same bytes
//! for any `--threads`, CSV carrying the JSON lines' rows, a seeded sample keeping whole
//! clients, and bad input refused in one line before anything is written.

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;

use crate::{herd_sim, herd_sim_ok};

/// Runs `args` with `--format json` and `--trace` into a scratch file: the report and the
/// trace's lines.
fn traced(args: &[&str], extra: &[&str]) -> (Value, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut all: Vec<&str> = args.to_vec();
    all.extend_from_slice(&["--format", "json", "--trace", path.to_str().unwrap()]);
    all.extend_from_slice(extra);
    let report: Value = serde_json::from_slice(&herd_sim_ok(&all)).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (report, lines)
}

fn count(lines: &[Value], run: u64, key: &str, value: &str) -> u64 {
    lines
        .iter()
        .filter(|l| l["run"] == run && l[key] == value)
        .count() as u64
}

fn seconds_ns(v: &Value) -> u64 {
    // Exact below 10^6 s: the trace writes the integer nanoseconds as a decimal of at most
    // nine places, and the nearest double times 10^9 rounds back to them.
    (v.as_f64().unwrap() * 1e9).round() as u64
}

/// Every attempt once: per run, lines = attempts, served lines = served requests, refused
/// lines = refusals, timed-out lines = timeouts; within each call the attempts are numbered
/// 0, 1, … in order, each retry sent no earlier than the previous attempt ended plus its wait
/// (exactly then where nothing delays it), and only the last attempt of a call is not a retry.
fn check_every_attempt_once(args: &[&str], exact_sends: bool) {
    let (report, lines) = traced(args, &[]);
    let results = report["results"].as_array().unwrap();
    for (run, r) in results.iter().enumerate() {
        let run = run as u64;
        let mine: Vec<&Value> = lines.iter().filter(|l| l["run"] == run).collect();
        assert!(
            mine.iter().all(|l| l["strategy"] == r["strategy"]),
            "{args:?}"
        );
        let attempts = r.get("attempts").and_then(Value::as_u64);
        let attempts = attempts.unwrap_or_else(|| r["requests"].as_u64().unwrap());
        assert_eq!(
            mine.len() as u64,
            attempts,
            "{args:?} run {run}: lines vs attempts"
        );
        let served = count(&lines, run, "outcome", "served");
        let refused = count(&lines, run, "outcome", "refused");
        let timed_out = count(&lines, run, "outcome", "timed_out");
        match r.get("timed_out").and_then(Value::as_u64) {
            Some(t) => {
                assert_eq!(timed_out, t, "{args:?}");
                assert_eq!(refused, r["refusals_read"].as_u64().unwrap(), "{args:?}");
                assert_eq!(served, r["calls_succeeded"].as_u64().unwrap_or(served));
            }
            None => {
                assert_eq!(timed_out, 0);
                assert_eq!(refused, r["refused"].as_u64().unwrap(), "{args:?}");
                assert_eq!(served + refused, r["requests"].as_u64().unwrap());
            }
        }
        assert_eq!(served, r["succeeded"].as_u64().unwrap(), "{args:?}");
        let mut calls: BTreeMap<(u64, u64), Vec<&Value>> = BTreeMap::new();
        for l in &mine {
            let key = (l["client"].as_u64().unwrap(), l["call"].as_u64().unwrap());
            calls.entry(key).or_default().push(l);
        }
        for (key, attempts) in &calls {
            for (k, a) in attempts.iter().enumerate() {
                assert_eq!(a["attempt"].as_u64(), Some(k as u64), "{args:?} {key:?}");
                let last = k + 1 == attempts.len();
                // A paused tab draws its wait once visible: it may retry after "paused".
                let goes_on = a["next"] == "retry" || a["next"] == "paused";
                assert!(last || goes_on, "{args:?} {key:?}: {a}");
                assert!(!last || a["next"] != "retry", "{args:?} {key:?}: {a}");
                assert_eq!(a["wait"].is_null(), a["next"] != "retry");
                if k > 0 && attempts[k - 1]["next"] == "retry" {
                    let before = attempts[k - 1];
                    let due = seconds_ns(&before["ended"]) + seconds_ns(&before["wait"]);
                    let sent = seconds_ns(&a["sent"]);
                    if exact_sends {
                        assert_eq!(sent, due, "{args:?} {key:?} attempt {k}");
                    } else {
                        assert!(sent >= due, "{args:?} {key:?} attempt {k}");
                    }
                }
                assert!(seconds_ns(&a["ended"]) >= seconds_ns(&a["sent"]));
            }
        }
    }
}

#[test]
fn an_exponential_herd_sends_at_0_1_3_7_15_seconds() {
    // By hand: waits 1, 2, 4, 8 s against a down server, so each client sends at 0, 1, 3, 7
    // and 15 s, is refused each time and gives up after the fourth retry.
    let (_, lines) = traced(&["--clients", "4", "--strategy", "exponential"], &[]);
    assert_eq!(lines.len(), 20);
    for (i, l) in lines.iter().enumerate() {
        let (client, attempt) = (i / 5, i % 5);
        assert_eq!(l["client"].as_u64(), Some(client as u64));
        assert_eq!(l["attempt"].as_u64(), Some(attempt as u64));
        assert_eq!(
            l["sent"].as_f64(),
            Some([0.0, 1.0, 3.0, 7.0, 15.0][attempt])
        );
        assert_eq!(l["ended"], l["sent"]);
        assert_eq!(l["outcome"], "refused");
        let wait = [Some(1.0), Some(2.0), Some(4.0), Some(8.0), None][attempt];
        assert_eq!(l["wait"].as_f64(), wait);
        assert_eq!(l["next"], if attempt < 4 { "retry" } else { "gave_up" });
        assert!(l["hidden"].is_null());
    }
}

#[test]
fn every_attempt_is_traced_once_on_every_path() {
    // The independent path (two blocks), the event queue (a limiter, items), occ, the call
    // loop (capacity, timeouts, an outage, Poisson arrivals), and tabs on both.
    let cases: [(&[&str], bool); 8] = [
        (
            &[
                "--clients",
                "66000",
                "--strategy",
                "full-jitter",
                "--recover-at",
                "3s",
            ],
            true,
        ),
        (
            &[
                "--clients",
                "60",
                "--server",
                "fixed-window",
                "--limit",
                "10",
                "--window",
                "5s",
                "--items",
                "3",
                "--latency",
                "uniform:10ms..50ms",
            ],
            true,
        ),
        (
            &[
                "--clients",
                "30",
                "--server",
                "occ",
                "--strategy",
                "full-jitter,decorrelated-jitter",
            ],
            true,
        ),
        (
            &[
                "--clients",
                "40",
                "--server",
                "down",
                "--pool",
                "70",
                "--recover-at",
                "2s",
            ],
            true,
        ),
        (
            &[
                "--clients",
                "20",
                "--server",
                "capacity",
                "--workers",
                "2",
                "--timeout",
                "300ms",
                "--outage",
                "0s..2s",
                "--network-delay",
                "exp:20ms",
            ],
            true,
        ),
        (
            &[
                "--clients",
                "5",
                "--arrivals",
                "poisson",
                "--rate",
                "30/s",
                "--duration",
                "3s",
                "--server",
                "capacity",
                "--workers",
                "1",
                "--service-time",
                "exp:40ms",
                "--timeout",
                "100ms",
                "--budget",
                "finagle",
            ],
            true,
        ),
        (
            &[
                "--clients",
                "300",
                "--hidden",
                "0.5",
                "--visibility-switch",
                "5s",
                "--recover-at",
                "20s",
                "--when-hidden",
                "pause",
            ],
            false,
        ),
        (
            &[
                "--clients",
                "50",
                "--server",
                "capacity",
                "--workers",
                "1",
                "--outage",
                "0s..10s",
                "--timeout",
                "1s",
                "--hidden",
                "0.5",
                "--visibility-switch",
                "3s",
            ],
            false,
        ),
    ];
    for (args, exact) in cases {
        check_every_attempt_once(args, exact);
    }
}

#[test]
fn tabs_are_reported_hidden_or_visible() {
    let (_, lines) = traced(
        &["--clients", "200", "--hidden", "0.5", "--recover-at", "5s"],
        &[],
    );
    let hidden = lines.iter().filter(|l| l["hidden"] == true).count();
    let visible = lines.iter().filter(|l| l["hidden"] == false).count();
    assert_eq!(hidden + visible, lines.len());
    // Without switching, a tab stays as it opened: half of 200 hidden, sd 7; every line of a
    // client says the same.
    let clients_hidden = (0..200u64)
        .filter(|&c| {
            lines
                .iter()
                .any(|l| l["client"] == c && l["hidden"] == true)
        })
        .count();
    assert!((65..=135).contains(&clients_hidden), "{clients_hidden}");
    for c in 0..200u64 {
        let states: Vec<&Value> = lines
            .iter()
            .filter(|l| l["client"] == c)
            .map(|l| &l["hidden"])
            .collect();
        assert!(states.windows(2).all(|w| w[0] == w[1]), "client {c}");
    }
}

#[test]
fn the_trace_is_the_same_for_any_thread_count_and_in_csv() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &[
            "--clients",
            "66000",
            "--strategy",
            "full-jitter,equal-jitter",
            "--recover-at",
            "2s",
        ][..],
        &[
            "--clients",
            "30",
            "--server",
            "capacity",
            "--workers",
            "2",
            "--timeout",
            "200ms",
            "--outage",
            "0s..1s",
        ][..],
        // The call loop, over more attempts than two of the batches its trace is handed
        // over in (a thread formats them when the run has two).
        &[
            "--clients",
            "10",
            "--server",
            "capacity",
            "--arrivals",
            "poisson",
            "--rate",
            "80/s",
            "--duration",
            "120s",
            "--workers",
            "10",
            "--service-time",
            "exp:100ms",
            "--timeout",
            "1s",
        ][..],
    ] {
        let mut traces = Vec::new();
        for threads in ["1", "2"] {
            let path = dir.path().join(format!("t{threads}.jsonl"));
            let mut all = args.to_vec();
            all.extend([
                "--threads",
                threads,
                "--out",
                "/dev/null",
                "--trace",
                path.to_str().unwrap(),
            ]);
            herd_sim_ok(&all);
            traces.push(fs::read(&path).unwrap());
        }
        assert_eq!(traces[0], traces[1], "{args:?}");
        if args[5] == "poisson" {
            let lines = traces[0].iter().filter(|&&b| b == b'\n').count();
            assert!(lines > 2 * herd_sim::trace::HANDOFF_ATTEMPTS, "{lines}");
        }
        if args[1] == "66000" {
            continue;
        }
        let csv = dir.path().join("t.csv");
        let mut all = args.to_vec();
        all.extend(["--out", "/dev/null", "--trace", csv.to_str().unwrap()]);
        herd_sim_ok(&all);
        let csv = fs::read_to_string(&csv).unwrap();
        let mut rows = csv.lines();
        let header: Vec<&str> = rows.next().unwrap().split(',').collect();
        let json = String::from_utf8(traces.remove(0)).unwrap();
        let mut n = 0;
        for (row, line) in rows.zip(json.lines()) {
            let line: Value = serde_json::from_str(line).unwrap();
            let keys: Vec<&String> = line.as_object().unwrap().keys().collect();
            assert_eq!(keys.len(), header.len());
            for (name, cell) in header.iter().zip(row.split(',')) {
                let v = &line[*name];
                match v {
                    Value::Null => assert_eq!(cell, "", "{name}"),
                    Value::String(s) => assert_eq!(cell, s, "{name}"),
                    Value::Bool(b) => assert_eq!(cell, b.to_string(), "{name}"),
                    other => assert_eq!(cell.parse::<f64>().ok(), other.as_f64(), "{name}"),
                }
            }
            n += 1;
        }
        assert_eq!(n, json.lines().count());
    }
}

#[test]
fn a_sample_keeps_whole_clients_and_their_lines_unchanged() {
    let args = [
        "--clients",
        "2000",
        "--strategy",
        "full-jitter",
        "--recover-at",
        "2s",
    ];
    let (_, all) = traced(&args, &[]);
    let (_, half) = traced(&args, &["--trace-sample", "0.25"]);
    let kept: std::collections::BTreeSet<u64> =
        half.iter().map(|l| l["client"].as_u64().unwrap()).collect();
    // 2000 clients at 0.25: 500, sd 19.4; 5 sd either side.
    assert!((403..=597).contains(&kept.len()), "{}", kept.len());
    let expected: Vec<&Value> = all
        .iter()
        .filter(|l| kept.contains(&l["client"].as_u64().unwrap()))
        .collect();
    assert_eq!(half.iter().collect::<Vec<_>>(), expected);
}

#[test]
fn bad_trace_input_is_one_error_line_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(Vec<String>, &str); 5] = [
        (
            vec![
                "--trace".into(),
                dir.path().join("t.parquet").display().to_string(),
            ],
            "--trace",
        ),
        (
            vec![
                "--trace".into(),
                dir.path().join("t.jsonl").display().to_string(),
                "--trace-sample".into(),
                "0".into(),
            ],
            "--trace-sample",
        ),
        (
            vec!["--trace-sample".into(), "0.5".into()],
            "--trace-sample",
        ),
        // The report already goes to standard output.
        (vec!["--trace".into(), "-".into()], "--trace"),
        (
            vec!["--trace".into(), dir.path().display().to_string()],
            "folder",
        ),
    ];
    for (args, named) in cases {
        let out = herd_sim()
            .args(["--clients", "10"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(named),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        if !named.contains("folder") {
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        }
    }
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
    // A trace too large for the limit is refused; a sample or --yes lets it through.
    let out = herd_sim()
        .args([
            "--clients",
            "10000000",
            "--strategy",
            "all",
            "--retries",
            "10",
            "--trace",
            "/dev/null",
            "--out",
            "/dev/null",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--trace-sample") && stderr.contains("--yes"),
        "{stderr}"
    );
}

#[test]
fn a_device_takes_the_trace_and_standard_output_can_carry_it() {
    let args = ["--clients", "3", "--strategy", "exponential"];
    let (_, lines) = traced(&args, &[]);
    herd_sim_ok(&["--clients", "3", "--trace", "/dev/null"]);
    let stdout = herd_sim_ok(&[
        "--clients",
        "3",
        "--strategy",
        "exponential",
        "--out",
        "/dev/null",
        "--trace",
        "-",
    ]);
    let stdout: Vec<Value> = String::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(stdout, lines);
}

#[test]
fn the_guides_schema_lists_the_fields_in_order() {
    let guide =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reports.md")).unwrap();
    let documented: Vec<&str> = guide
        .lines()
        .skip_while(|l| !l.starts_with("| field | type | meaning |"))
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| l[3..].split('`').next().unwrap())
        .collect();
    // Keys in the order written: every `"name":` of a line (no value holds a quote).
    let keys = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["--clients", "1", "--out", "/dev/null", "--trace", "-"];
        args.extend_from_slice(extra);
        let line = String::from_utf8(herd_sim_ok(&args)).unwrap();
        let first = line.lines().next().unwrap();
        first
            .split('"')
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[1].starts_with(':'))
            .map(|w| w[0].to_string())
            .collect()
    };
    // A layered run's lines have every field; a run without layers all but `layer`.
    let layered = keys(&["--layer", "retries=1"]);
    assert_eq!(documented, layered);
    let plain: Vec<&str> = documented
        .iter()
        .copied()
        .filter(|&k| k != "layer")
        .collect();
    assert_eq!(plain, keys(&[]));
    assert_eq!(documented.len(), plain.len() + 1);
    // The README lists them in one sentence, in the same order.
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let listed = readme
        .split("its fields in order ")
        .nth(1)
        .and_then(|rest| rest.split(" ([docs/reports.md]").next())
        .expect("the README lists the trace's fields");
    let listed: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
    assert_eq!(listed, documented, "README.md's list of the trace's fields");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    herd_sim_ok(&[
        "--clients",
        "1",
        "--out",
        "/dev/null",
        "--trace",
        csv.to_str().unwrap(),
    ]);
    let csv = fs::read_to_string(&csv).unwrap();
    assert_eq!(
        csv.lines().next().unwrap().split(',').collect::<Vec<_>>(),
        plain
    );
}

#[test]
fn a_layered_run_traces_every_layers_attempts_with_their_layer() {
    // By hand: 3 clients against a down server, a fixed 1 s wait and 1 retry (layer 1, the
    // run's own policy) inside a layer of 2 retries 10 s apart (layer 0): each call sends at
    // 0 and 1 s, gives up, and its outer layer sends it again at 1 + 10 = 11 s (then 12, 22,
    // 23). A client's lines, in the order attempts end: layer 1's two (attempt 0 and 1),
    // then layer 0's attempt (sent when its call below started, ended when that call gave
    // up, `failed`), three times: 9 lines a client, 27 in all; 6 a client of layer 1 (the
    // summary's attempts at the server) and 3 of layer 0 (its layer's attempts).
    let args = [
        "--clients",
        "3",
        "--server",
        "down",
        "--strategy",
        "fixed",
        "--retries",
        "1",
        "--layer",
        "strategy=fixed retries=2 base=10s cap=10s",
    ];
    let (report, mut lines) = traced(&args, &[]);
    let r = &report["results"][0];
    assert_eq!(r["attempts"].as_u64(), Some(18));
    assert_eq!(r["layers"][0]["attempts"].as_u64(), Some(9));
    assert_eq!(r["layers"][1]["attempts"].as_u64(), Some(18));
    assert_eq!(lines.len(), 27);
    for (layer, count) in [(0, 9), (1, 18)] {
        let of_layer = lines.iter().filter(|l| l["layer"] == layer).count() as u64;
        assert_eq!(of_layer, count, "layer {layer}");
        assert_eq!(Some(of_layer), r["layers"][layer]["attempts"].as_u64());
    }
    // Lines come in the order attempts end; a client's in its own order.
    lines.sort_by_key(|l| l["client"].as_u64());
    // (layer, attempt, sent, ended, outcome, next, wait) of a client's nine lines.
    type Line = (u64, u64, f64, f64, &'static str, &'static str, Option<f64>);
    let expected: [Line; 9] = [
        (1, 0, 0.0, 0.0, "refused", "retry", Some(1.0)),
        (1, 1, 1.0, 1.0, "refused", "gave_up", None),
        (0, 0, 0.0, 1.0, "failed", "retry", Some(10.0)),
        (1, 0, 11.0, 11.0, "refused", "retry", Some(1.0)),
        (1, 1, 12.0, 12.0, "refused", "gave_up", None),
        (0, 1, 11.0, 12.0, "failed", "retry", Some(10.0)),
        (1, 0, 22.0, 22.0, "refused", "retry", Some(1.0)),
        (1, 1, 23.0, 23.0, "refused", "gave_up", None),
        (0, 2, 22.0, 23.0, "failed", "gave_up", None),
    ];
    for (i, l) in lines.iter().enumerate() {
        let (client, k) = (i / 9, i % 9);
        let (layer, attempt, sent, ended, outcome, next, wait) = expected[k];
        assert_eq!(l["client"].as_u64(), Some(client as u64), "{l}");
        assert_eq!(l["call"].as_u64(), Some(0), "{l}");
        assert_eq!(l["layer"].as_u64(), Some(layer), "{l}");
        assert_eq!(l["attempt"].as_u64(), Some(attempt), "{l}");
        assert_eq!(l["sent"].as_f64(), Some(sent), "{l}");
        assert_eq!(l["ended"].as_f64(), Some(ended), "{l}");
        // Only the server's attempts arrive anywhere.
        let arrived = (layer == 1).then_some(sent);
        assert_eq!(l["arrived"].as_f64(), arrived, "{l}");
        assert_eq!(l["outcome"], outcome, "{l}");
        assert_eq!(l["next"], next, "{l}");
        assert_eq!(l["wait"].as_f64(), wait, "{l}");
    }
    // The CSV has the column too, after `call`, and the same lines.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let mut csv_args = args.to_vec();
    csv_args.extend_from_slice(&["--out", "/dev/null", "--trace", csv.to_str().unwrap()]);
    herd_sim_ok(&csv_args);
    let csv = fs::read_to_string(&csv).unwrap();
    let mut rows = csv.lines();
    assert!(rows
        .next()
        .unwrap()
        .starts_with("run,strategy,client,call,layer,attempt,"));
    assert_eq!(rows.clone().count(), 27);
    assert_eq!(rows.filter(|r| r.split(',').nth(4) == Some("0")).count(), 9);
}
