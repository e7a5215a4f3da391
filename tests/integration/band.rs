//! `herd-sim boundary --band`: the vulnerable band of `configs/metastable-steps.toml` (10
//! workers of 100 ms, mu = 100 calls/s, a 1 s timeout, naive retries) for 0 and 2 retries.
//! Its edges are checked against the analytic floor mu / (1 + retries), below which no
//! collapse can persist, and against each other; the stays-down points replay as the sweep's
//! rows of the knock-over scenario; each case names its own settle; the output is the same
//! bytes on one thread and on two; bad input is one line, exit 2.

use crate::{herd_sim_ok, refused_in_one_line};

const STEPS: &str = "configs/metastable-steps.toml";

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn band_args<'a>(config: &'a str, format: &'a str, threads: &'a str) -> Vec<&'a str> {
    vec![
        "boundary",
        "--config",
        config,
        "--axis",
        "rate",
        "--range",
        "30..60",
        "--retries",
        "0,2",
        "--seeds",
        "10",
        "--tolerance",
        "5%",
        "--band",
        "--format",
        format,
        "--threads",
        threads,
    ]
}

#[test]
fn the_band_lies_between_the_floor_and_the_trigger_and_is_the_same_on_any_thread_count() {
    let config = repo(STEPS);
    let bytes = herd_sim_ok(&band_args(&config, "json", "1"));
    assert_eq!(bytes, herd_sim_ok(&band_args(&config, "json", "2")));
    let report: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(report["band_rule"]
        .as_str()
        .unwrap()
        .contains("cut to half the floor"));
    // By hand: mu = 10 workers / 100 ms = 100 calls/s; a call makes 1 + retries attempts.
    let mu = 10.0 / 0.1;
    for (result, retries) in report["results"].as_array().unwrap().iter().zip([0.0, 2.0]) {
        let band = &result["band"];
        let floor = mu / (1.0 + retries);
        assert_eq!(band["capacity_per_s"].as_f64().unwrap(), mu);
        assert!((band["floor_per_s"].as_f64().unwrap() - floor).abs() < 1e-9);
        // To the last trigger's end (180 s) for the longest call, (retries + 1) x the 1 s
        // timeout + retries x the 30 s cap, at 1 / (2 (1 + retries)) of the capacity (to four
        // decimals, rounded down).
        let from = 180.0 - (retries + 1.0) - retries * 30.0;
        let factor = (1e4 / (2.0 * (1.0 + retries))).floor() / 1e4;
        assert_eq!(band["knock_over"], format!("{from}s..180s@{factor}"));
        // The knocked-over edge is the result's own boundary.
        for key in [
            "boundary",
            "boundary_low",
            "boundary_high",
            "runs",
            "stop",
            "points",
        ] {
            assert_eq!(band["knocked_over"][key], result[key], "{key}");
        }
        // No collapse persists below the floor, and every stays-down point below it recovered.
        let down = &band["stays_down"];
        for point in down["points"].as_array().unwrap() {
            if point["value"].as_f64().unwrap() < floor {
                assert_eq!(point["collapsed"], 0, "{point}");
            }
        }
        if retries == 0.0 {
            // The floor is the capacity, past the range: nothing stays down in it.
            assert!(down["boundary"].is_null(), "{down}");
            assert_eq!(down["stop"], "no crossing in the range");
            continue;
        }
        // Edge (a) at or above the floor, its whole interval; at or below edge (b) within the
        // intervals (a run knocked over by the trigger is one that stays down); both below
        // the capacity, past which no run recovers even without retries.
        let (low, high) = (
            down["boundary_low"].as_f64().unwrap(),
            down["boundary_high"].as_f64().unwrap(),
        );
        let stays_down = down["boundary"].as_f64().unwrap();
        let knocked_over = result["boundary"].as_f64().unwrap();
        assert!(
            floor <= low && low <= stays_down && stays_down <= high,
            "{down}"
        );
        assert!(
            low <= result["boundary_high"].as_f64().unwrap(),
            "{down} {result}"
        );
        assert!(high <= mu && knocked_over <= mu);
    }
    // Each case names its own settle: (retries + 1) x 1 s + retries x 30 s + the 5 s hold.
    let rule = report["verdict_rule"].as_str().unwrap();
    for (result, settle) in report["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip([6.0, 68.0])
    {
        assert_eq!(result["settle_at_low_s"], settle);
        assert_eq!(result["settle_at_high_s"], settle);
    }
    assert!(
        rule.contains("for at least the case's settle after")
            && rule.contains("6s for naive, retries=0; 68s for naive, retries=2"),
        "{rule}"
    );
}

#[test]
fn a_stays_down_point_is_the_sweeps_rows_of_the_knock_over_scenario() {
    let config = repo(STEPS);
    let report: serde_json::Value = serde_json::from_slice(&herd_sim_ok(&[
        "boundary",
        "--config",
        &config,
        "--axis",
        "rate",
        "--range",
        "30..60",
        "--retries",
        "2",
        "--curve",
        "--points",
        "2",
        "--seeds",
        "3",
        "--band",
        "--format",
        "json",
    ]))
    .unwrap();
    let band = &report["results"][0]["band"];
    let knock_over = band["knock_over"].as_str().unwrap();
    // The scenario started collapsed, written as a config: the steps replaced by the
    // knock-over's degradation.
    let dir = tempfile::tempdir().unwrap();
    let collapsed = dir.path().join("collapsed.toml");
    let text: String = std::fs::read_to_string(&config)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("spike = "))
        .map(|l| match l.starts_with("timeout = ") {
            true => format!("{l}\ndegrade = \"{knock_over}\"\n"),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&collapsed, text).unwrap();
    let collapsed = collapsed.to_str().unwrap();
    let points = band["stays_down"]["points"].as_array().unwrap();
    for point in points {
        let rate = point["value"].to_string();
        let csv = herd_sim_ok(&[
            "sweep",
            "--config",
            collapsed,
            "--retries",
            "2",
            "--rate",
            &rate,
            "--seeds",
            "3",
        ]);
        let text = String::from_utf8(csv).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (seed, stuck) = (col("seed"), col("stuck"));
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let seeds: Vec<u64> = rows.iter().map(|r| r[seed].parse().unwrap()).collect();
        let collapsed_seeds: Vec<u64> = rows
            .iter()
            .filter(|r| r[stuck] == "1")
            .map(|r| r[seed].parse().unwrap())
            .collect();
        let of = |key: &str| -> Vec<u64> {
            point[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_u64().unwrap())
                .collect()
        };
        assert_eq!(seeds, of("run_seeds"), "rate {rate}");
        assert_eq!(collapsed_seeds, of("collapsed_seeds"), "rate {rate}");
    }
    // At 60/s, past the floor of 33/s, every run started collapsed stays down; at 30/s,
    // below it, none does.
    assert_eq!(points[0]["collapsed"], 0);
    assert_eq!(points[1]["collapsed"], 3);
}

#[test]
fn the_csv_says_which_edge_each_row_belongs_to() {
    let config = repo(STEPS);
    let args = [
        "boundary",
        "--config",
        &config,
        "--axis",
        "rate",
        "--range",
        "30..60",
        "--retries",
        "2",
        "--curve",
        "--points",
        "2",
        "--seeds",
        "2",
        "--band",
    ];
    let mut csv_args = args.to_vec();
    csv_args.extend(["--format", "csv"]);
    let text = String::from_utf8(herd_sim_ok(&csv_args)).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "strategy,with,rate_per_s,seeds,collapsed,p,p_low,p_high,edge"
    );
    let edges: Vec<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    assert_eq!(
        edges,
        ["knocked_over", "knocked_over", "stays_down", "stays_down"]
    );
    let table = String::from_utf8(herd_sim_ok(&args)).unwrap();
    assert!(
        table.contains("naive, retries=2: stays-down points (started collapsed: 117s..180s@0.1666"),
        "{table}"
    );
}

#[test]
fn a_band_needs_a_load_axis_no_trigger_cases_and_a_server_it_can_knock_over() {
    let collapse = repo("configs/collapse-spike.toml");
    let dir = tempfile::tempdir().unwrap();
    let flaky = dir.path().join("flaky.toml");
    std::fs::write(
        &flaky,
        "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"60s\"\ntimeout = \"1s\"\n\
         outage = \"10s..20s\"\n[server]\nmodel = \"flaky\"\nfailure_rate = 0.1\n",
    )
    .unwrap();
    let untimed = dir.path().join("untimed.toml");
    std::fs::write(
        &untimed,
        "arrivals = \"poisson\"\nrate = \"20/s\"\nduration = \"60s\"\n\
         outage = \"10s..20s\"\n[server]\nmodel = \"capacity\"\nworkers = 10\n\
         service_time = \"100ms\"\n",
    )
    .unwrap();
    let (flaky, untimed) = (flaky.to_str().unwrap(), untimed.to_str().unwrap());
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "--config",
                &collapse,
                "--axis",
                "spike-rate",
                "--range",
                "40..120",
            ],
            "error: invalid --band with --axis spike-rate: not a load axis; accepted: --axis rate",
        ),
        (
            &[
                "--config",
                &collapse,
                "--axis",
                "rate",
                "--range",
                "10..40",
                "--spike-rate",
                "60,80",
            ],
            "error: invalid --band with --spike-rate as a case: the runs started collapsed replace",
        ),
        (
            &["--config", flaky, "--axis", "rate", "--range", "10..40"],
            "error: invalid --band for full-jitter: a flaky server has no capacity to knock over",
        ),
        (
            &["--config", untimed, "--axis", "rate", "--range", "10..40"],
            "error: invalid --band for full-jitter: without --timeout no attempt times out",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["boundary", "--band"];
        all.extend_from_slice(args);
        let line = refused_in_one_line(&all);
        assert!(line.starts_with(expected), "{args:?}: {line}");
    }
}
