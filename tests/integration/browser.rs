//! Browser tabs through the binary: on the call loop (a capacity server after an outage), the
//! same bytes for any thread count; the tab counts in the JSON, the table and the sweep; bad
//! browser input refused in one line; and the guide's shipped experiment
//! (`configs/browser-tabs.toml`): its runs conserve every call and attempt, every figure its
//! prose quotes is recomputed from the runs' JSON, and its chart is what the script draws.

use serde_json::Value;

use crate::herd_sim as herd;
use crate::herd_sim_ok as run;

/// A herd of tabs against a capacity server out for 20 s, every browser option set.
const TABS_ON_CAPACITY: [&str; 30] = [
    "--clients",
    "3000",
    "--strategy",
    "naive,full-jitter,retry-after",
    "--retries",
    "4",
    "--server",
    "capacity",
    "--workers",
    "20",
    "--service-time",
    "exp:50ms",
    "--queue",
    "200",
    "--shed-retry-after",
    "1500ms",
    "--outage",
    "0s..20s",
    "--timeout",
    "2s",
    "--hidden",
    "0.4",
    "--visibility-switch",
    "30s",
    "--headers-visible",
    "0.7",
    "--retry-after-format",
    "http-date",
    "--clock-skew",
    "normal:0s,2s",
];

/// Every kind of retry control at once, over the tabs: a bucket of 2 retries a process (one
/// call each) denies every call's third retry.
const CONTROLS: [&str; 6] = [
    "--budget",
    "token-bucket:capacity=2",
    "--breaker",
    "calls",
    "--throttle",
    "aws-adaptive",
];

#[test]
fn tabs_on_the_call_loop_give_the_same_bytes_on_one_and_two_threads() {
    for (when_hidden, controls) in [
        ("retry", &[][..]),
        ("pause", &[]),
        ("retry", &CONTROLS),
        ("pause", &CONTROLS),
    ] {
        let mut args = TABS_ON_CAPACITY.to_vec();
        if !controls.is_empty() {
            // Out for the whole run: every call spends what the bucket allows.
            *args.iter_mut().find(|a| **a == "0s..20s").unwrap() = "0s..3600s";
        }
        args.extend(controls);
        args.extend(["--when-hidden", when_hidden, "--format", "json"]);
        let one = run(&[&args[..], &["--threads", "1"]].concat());
        let two = run(&[&args[..], &["--threads", "2"]].concat());
        assert!(
            one == two,
            "{when_hidden}: the JSON differs between 1 and 2 threads"
        );
        let json: Value = serde_json::from_slice(&one).unwrap();
        for result in json["results"].as_array().unwrap() {
            let count = |name: &str| result[name].as_u64().unwrap();
            // 40 % of 3000 tabs hidden at t = 0: the count's sd is 27; allow 5 sd.
            assert!(count("hidden_clients").abs_diff(1200) < 135);
            let n = count;
            // Every attempt answered, timed out or refused; the series sums to the totals.
            let series = &result["series"];
            let sum = |name: &str| {
                series[name]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .sum::<u64>()
            };
            assert_eq!(sum("attempts"), n("attempts"), "{when_hidden}");
            assert_eq!(sum("refused"), n("refusals_read"), "{when_hidden}");
            assert_eq!(sum("timed_out"), n("timed_out"), "{when_hidden}");
            assert_eq!(
                n("attempts"),
                sum("succeeded") + n("timed_out") + n("refusals_read"),
                "{when_hidden}"
            );
            // Every call succeeded, failed (given up, denied, rejected locally) or is paused.
            assert_eq!(
                n("calls"),
                n("succeeded") + n("gave_up") + n("paused"),
                "{when_hidden} {controls:?}"
            );
            if when_hidden == "pause" {
                assert_eq!(count("retries_while_hidden"), 0);
            }
            if !controls.is_empty() {
                // Each process's one call may retry twice, each retry charged once however
                // its tab paused it, against a server that refuses everything: every call
                // makes exactly 3 attempts and is denied its third retry.
                assert_eq!(n("retries_denied"), n("calls"), "{when_hidden}");
                assert_eq!(n("attempts"), 3 * n("calls"), "{when_hidden}");
            }
        }
    }
}

#[test]
fn the_call_loops_table_and_the_sweep_carry_the_tab_counts() {
    let table = String::from_utf8(run(&TABS_ON_CAPACITY)).unwrap();
    let header = table.lines().find(|l| l.starts_with("strategy")).unwrap();
    assert!(
        header.ends_with("hidden tabs  sent hidden  paused  early"),
        "{header}"
    );
    let csv = String::from_utf8(run(&[
        "sweep",
        "--clients",
        "300",
        "--server",
        "capacity",
        "--outage",
        "10s",
        "--hidden",
        "0,0.5",
        "--when-hidden",
        "retry,pause",
        "--quiet",
    ]))
    .unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(header.ends_with(&[
        "hidden_clients",
        "retries_while_hidden",
        "paused",
        "early_retries"
    ]));
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    // Grid order: hidden 0 (retry, pause), then 0.5 (retry, pause). The hidden-tab options
    // are left empty where no tab can hide.
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), header.len());
        // No tab model at all for --hidden 0 --when-hidden retry (empty counts); no hidden
        // tab without --hidden; only pausing tabs send nothing hidden.
        let (hidden, pause) = (row[column("hidden")], i % 2 == 1);
        let written = [if hidden == "0" {
            ""
        } else if pause {
            "pause"
        } else {
            "retry"
        }];
        assert_eq!([row[column("when_hidden")]], written, "{row:?}");
        let count = row[column("hidden_clients")];
        match (hidden, pause) {
            ("0", false) => assert_eq!(count, "", "{row:?}"),
            ("0", true) => assert_eq!(count, "0", "{row:?}"),
            _ => assert!(count.parse::<u64>().unwrap() > 0, "{row:?}"),
        }
        if pause {
            assert_eq!(row[column("retries_while_hidden")], "0");
        }
    }
}

#[test]
fn bad_browser_input_is_one_line_naming_the_flag_the_value_and_what_is_accepted() {
    let fixture =
        std::env::temp_dir().join(format!("herd-tabs-fixture-{}.json", std::process::id()));
    std::fs::write(
        &fixture,
        r#"{"policy": {"strategy": "exponential", "hidden": 0.4}, "scenarios": []}"#,
    )
    .unwrap();
    let fixture = fixture.to_str().unwrap().to_string();
    let cases: [(&[&str], &str); 7] = [
        (
            &["--hidden", "NaN"],
            "error: invalid --hidden: NaN; accepted: the fraction of clients that are hidden tabs at t = 0, a fraction from 0 to 1",
        ),
        (
            &["--hidden", "0.4", "--visibility-switch", "0s"],
            "error: invalid --visibility-switch: 0s; accepted: a positive mean dwell",
        ),
        (
            &["--server", "capacity", "--headers-visible", "-0.2"],
            "error: invalid --headers-visible: -0.2; accepted: true, false, or the fraction of clients that can read the headers, a fraction from 0 to 1",
        ),
        (
            &["--clock-skew", "normal:0s,-2s"],
            "error: invalid value 'normal:0s,-2s' for --clock-skew: `normal:0s,-2s` is not a clock skew; accepted:",
        ),
        (
            &["--clock-skew", "uniform:5s..-5s"],
            "is an empty range; accepted: uniform:LOW..HIGH with LOW below HIGH",
        ),
        (
            &["--server", "occ", "--when-hidden", "pause"],
            "error: invalid --when-hidden: given with --server occ; accepted: browser tabs with any server but occ",
        ),
        (
            &["fixture", &fixture],
            "unknown field `hidden`, expected one of `strategy`",
        ),
    ];
    for (args, expected) in cases {
        let output = herd().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    std::fs::remove_file(&fixture).unwrap();
}

/// The guide's three runs of the shipped experiment: as configured (hidden tabs retry), with
/// `--when-hidden pause`, and with `--hidden 0`.
const SHIPPED: [&[&str]; 3] = [&[], &["--when-hidden", "pause"], &["--hidden", "0"]];

/// One run of `configs/browser-tabs.toml` with `extra` flags, as JSON results by strategy.
fn shipped(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["--config", "configs/browser-tabs.toml", "--format", "json"];
    args.extend(extra);
    let json: Value = serde_json::from_slice(&run(&args)).unwrap();
    let results = json["results"].as_array().unwrap().clone();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["naive", "full-jitter"], "{extra:?}");
    results
}

/// What the guide quotes of one strategy's run, recomputed from its JSON after checking that
/// the run conserves its calls and attempts.
#[derive(Debug)]
struct Figures {
    attempts: u64,
    retries: u64,
    succeeded: u64,
    sent_hidden: u64,
    timed_out: u64,
    /// Attempts in the series windows from 20 s on (after the outage).
    after_outage: u64,
    /// Successes in the series windows from 60 s on.
    after_a_minute: u64,
    goodput_pct: f64,
    abandoned_s: f64,
    p99_s: Option<f64>,
    last_success_s: Option<f64>,
    paused: u64,
}

fn figures(result: &Value, when: &str) -> Figures {
    let n = |name: &str| {
        result[name]
            .as_u64()
            .unwrap_or_else(|| panic!("{when}: {name}"))
    };
    let series = &result["series"];
    let column = |name: &str| -> Vec<f64> {
        series[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let starts = column("window_start_s");
    let sum_from = |name: &str, from: f64| -> u64 {
        starts
            .iter()
            .zip(column(name))
            .filter(|(t, _)| **t >= from)
            .map(|(_, v)| v as u64)
            .sum()
    };
    let calls = n("calls");
    assert_eq!(calls, 1000, "{when}: one call a tab");
    // Every call succeeded, gave up, or is still paused at the end.
    assert_eq!(n("succeeded") + n("gave_up") + n("paused"), calls, "{when}");
    // Every attempt is a call's first or one of its retries, at most 4 of them.
    let retries = n("attempts") - calls;
    assert_eq!(n("total"), retries, "{when}");
    assert!(n("attempts") <= 5 * calls, "{when}");
    // Every attempt was served, timed out or refused; the series holds each once.
    assert_eq!(sum_from("attempts", 0.0), n("attempts"), "{when}");
    assert_eq!(sum_from("succeeded", 0.0), n("succeeded"), "{when}");
    assert_eq!(sum_from("timed_out", 0.0), n("timed_out"), "{when}");
    assert_eq!(sum_from("refused", 0.0), n("refusals_read"), "{when}");
    assert_eq!(
        n("attempts"),
        n("succeeded") + n("timed_out") + n("refusals_read"),
        "{when}"
    );
    // A worker spends its 100 ms on each answer that comes after its attempt timed out.
    assert!(n("late_answers") <= n("timed_out"), "{when}");
    let abandoned_s = result["abandoned_work_s"].as_f64().unwrap();
    assert!(
        (abandoned_s - n("late_answers") as f64 * 0.1).abs() < 1e-9,
        "{when}: {abandoned_s} s for {} late answers",
        n("late_answers")
    );
    assert!(n("retries_while_hidden") <= retries, "{when}");
    let goodput_pct = 100.0 * n("succeeded") as f64 / calls as f64;
    assert!(
        (goodput_pct - result["goodput_pct"].as_f64().unwrap()).abs() < 1e-9,
        "{when}"
    );
    Figures {
        attempts: n("attempts"),
        retries,
        succeeded: n("succeeded"),
        sent_hidden: n("retries_while_hidden"),
        timed_out: n("timed_out"),
        after_outage: sum_from("attempts", 20.0),
        after_a_minute: sum_from("succeeded", 60.0),
        goodput_pct,
        abandoned_s,
        p99_s: result["latency_p99_s"].as_f64(),
        last_success_s: result["last_success_s"].as_f64(),
        paused: n("paused"),
    }
}

#[test]
fn the_shipped_experiment_conserves_its_calls_and_is_what_the_readmes_prose_says() {
    let runs: Vec<Vec<Value>> = SHIPPED.iter().map(|extra| shipped(extra)).collect();
    let [retry, pause, none_hidden] = [0, 1, 2].map(|i| {
        let when = format!("{:?}", SHIPPED[i]);
        [
            figures(&runs[i][0], &format!("naive {when}")),
            figures(&runs[i][1], &format!("full-jitter {when}")),
        ]
    });
    // 40 % of 1000 tabs hidden at t = 0 (sd 15.5: allow 5 sd); none with --hidden 0.
    for strategy in runs[..2].iter().flatten() {
        let hidden = strategy["hidden_clients"].as_u64().unwrap();
        assert!(hidden.abs_diff(400) < 78, "{hidden}");
    }
    for strategy in &runs[2] {
        assert_eq!(strategy["hidden_clients"].as_u64(), Some(0));
    }
    // Pausing tabs send nothing hidden; with --hidden 0 naive's retries are all sent at
    // t = 0, before any tab can flip, while full jitter's later ones can be.
    assert!(pause.iter().all(|f| f.sent_hidden == 0));
    assert_eq!(none_hidden[0].sent_hidden, 0);
    assert!(none_hidden[1].sent_hidden > 0);
    // Naive's immediate retries all fall inside the outage, which refuses each at once.
    for f in [&retry[0], &none_hidden[0]] {
        assert_eq!(
            (f.succeeded, f.after_outage, f.timed_out),
            (0, 0, 0),
            "{f:?}"
        );
    }

    let text = std::fs::read_to_string("docs/browser-tabs.md").unwrap();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let says = |sentence: String| {
        assert!(
            flat.contains(&sentence),
            "docs/browser-tabs.md should say: {sentence}"
        );
    };
    let share = |f: &Figures| 100.0 * f.sent_hidden as f64 / f.retries as f64;
    let [naive, jitter] = &retry;
    let [naive_0, jitter_0] = &none_hidden;
    let [naive_p, jitter_p] = &pause;
    assert_eq!(naive.goodput_pct, naive_0.goodput_pct);
    says(format!(
        "whether 40 % of the tabs are hidden or none: goodput {:.1} %. Full jitter's waits \
         outlast the outage: {:.1} %.",
        naive.goodput_pct, jitter.goodput_pct
    ));
    says(format!(
        "full jitter sends {} attempts instead of {} and naive {} instead of {} (a call sends \
         at most 5 whatever its tab does). But {} of full jitter's {} retries ({:.1} %) and {} \
         of naive's {} ({:.1} %) are sent by hidden tabs",
        jitter.attempts,
        jitter_0.attempts,
        naive.attempts,
        naive_0.attempts,
        jitter.sent_hidden,
        jitter.retries,
        share(jitter),
        naive.sent_hidden,
        naive.retries,
        share(naive)
    ));
    says(format!(
        "{} attempts reach the server after the outage instead of {}. At 40 requests a second \
         it times out {} attempts instead of {} ({:.1} s of worker time on answers nobody \
         waits for, against {:.1} s), and full jitter's goodput falls from {:.1} % to {:.1} %.",
        jitter.after_outage,
        jitter_0.after_outage,
        jitter.timed_out,
        jitter_0.timed_out,
        jitter.abandoned_s,
        jitter_0.abandoned_s,
        jitter_0.goodput_pct,
        jitter.goodput_pct
    ));
    // Pausing: no timeouts, no call left paused at the end (every tab becomes visible again).
    assert!(pause.iter().all(|f| f.timed_out == 0 && f.paused == 0));
    let saved = |with: &Figures, without: &Figures| without.attempts - with.attempts;
    says(format!(
        "full jitter sends {} attempts ({} fewer, {:.1} %) and naive {} ({} fewer); nothing \
         times out, the p99 of successful attempts falls from {:.3} s to {:.3} s, and goodput \
         rises to {:.1} % (full jitter) and {:.1} % (naive",
        jitter_p.attempts,
        saved(jitter_p, jitter),
        100.0 * saved(jitter_p, jitter) as f64 / jitter.attempts as f64,
        naive_p.attempts,
        saved(naive_p, naive),
        jitter.p99_s.unwrap(),
        jitter_p.p99_s.unwrap(),
        jitter_p.goodput_pct,
        naive_p.goodput_pct
    ));
    // Hidden tabs retrying, every success comes within the first minute.
    assert!(jitter.last_success_s.unwrap() < 60.0);
    let last = jitter_p.last_success_s.unwrap();
    says(format!(
        "{} of full jitter's {} successes come after the first minute, when their tab is \
         visible again, the last at {:.0} s ({} minutes). `paused` is {} at the end",
        jitter_p.after_a_minute,
        jitter_p.succeeded,
        last,
        (last / 60.0).floor(),
        jitter_p.paused
    ));
}

#[test]
fn the_shipped_experiment_gives_the_same_bytes_on_one_and_two_threads() {
    for extra in SHIPPED {
        let mut args = vec!["--config", "configs/browser-tabs.toml", "--format", "json"];
        args.extend(extra);
        let one = run(&[&args[..], &["--threads", "1"]].concat());
        let two = run(&[&args[..], &["--threads", "2"]].concat());
        assert!(
            one == two,
            "{extra:?}: the JSON differs between 1 and 2 threads"
        );
    }
}

#[test]
fn the_readmes_browser_tabs_chart_is_what_the_script_draws() {
    let drawn =
        super::series_chart::assert_script_draws_the_committed_pictures("scripts/browser-tabs.sh");
    assert_eq!(
        drawn, 1,
        "scripts/browser-tabs.sh draws docs/browser-tabs.png"
    );
}

/// The series splits the attempts by the sending tab's visibility: every tab hidden at t = 0
/// sends its first attempt hidden, and every retry sent hidden is one of the summary's
/// `retries_while_hidden`, so the hidden attempts of a herd sum to the two; pausing tabs send
/// nothing hidden. A run without tabs has no such column.
#[test]
fn the_series_counts_the_attempts_of_hidden_tabs_window_by_window() {
    for extra in [&[][..], &["--when-hidden", "pause"]] {
        for result in shipped(extra) {
            let series = &result["series"];
            let sum = |key: &str| -> u64 {
                series[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .sum()
            };
            let hidden = result["hidden_clients"].as_u64().unwrap();
            let retries_hidden = result["retries_while_hidden"].as_u64().unwrap();
            assert!(hidden > 0);
            assert_eq!(sum("attempts_hidden"), hidden + retries_hidden, "{extra:?}");
            assert!(sum("attempts_hidden") < sum("attempts"));
            if !extra.is_empty() {
                assert_eq!(retries_hidden, 0);
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("series.csv");
    for (args, column) in [
        (&["--config", "configs/browser-tabs.toml"][..], true),
        (&["--config", "configs/collapse-spike.toml"][..], false),
    ] {
        run(&[args, &["--series-out", csv.to_str().unwrap()]].concat());
        let text = std::fs::read_to_string(&csv).unwrap();
        let header = text.lines().next().unwrap();
        assert_eq!(
            header.starts_with("strategy,window_start_s,calls_started,attempts,attempts_hidden,"),
            column,
            "{header}"
        );
    }
}
