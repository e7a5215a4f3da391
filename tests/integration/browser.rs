//! Browser tabs through the binary: on the call loop (a capacity server after an outage), the
//! same bytes for any thread count; the tab counts in the JSON, the table and the sweep; and
//! bad browser input refused in one line.

use assert_cmd::Command;
use serde_json::Value;

fn herd() -> Command {
    Command::cargo_bin("herd-sim").unwrap()
}

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

fn run(args: &[&str]) -> Vec<u8> {
    let output = herd().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

#[test]
fn tabs_on_the_call_loop_give_the_same_bytes_on_one_and_two_threads() {
    for when_hidden in ["retry", "pause"] {
        let mut args = TABS_ON_CAPACITY.to_vec();
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
            if when_hidden == "pause" {
                assert_eq!(count("retries_while_hidden"), 0);
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
            &["--server", "capacity", "--hidden", "0.3", "--budget", "token-bucket"],
            "error: invalid --hidden: given with retry controls (--budget, --breaker, --throttle); accepted: browser tabs with any server but occ, without retry controls",
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
