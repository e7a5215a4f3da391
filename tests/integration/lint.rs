//! `herd-sim lint`: the command line around the library's checks (src/advice/lint.rs tests
//! each check's figure against a hand-worked value): `--deny` exit codes, JSON, and bad input.

use crate::{herd_sim, herd_sim_ok};

#[test]
fn deny_fails_on_a_finding_at_or_above_its_level_after_printing_them() {
    // Exponential 1, 2, 4, 8 s without a budget: the retry envelope (warning: the last retry
    // at 15 s, so no call rides a 60 s outage) and unbounded amplification (warning, 5.00).
    let args = ["lint", "--strategy", "exponential", "--format", "json"];
    let json: serde_json::Value = serde_json::from_slice(&herd_sim_ok(&args)).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let checks: Vec<&str> = findings
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(checks.contains(&"retry-envelope"), "{checks:?}");
    let amplification = findings
        .iter()
        .find(|f| f["check"] == "unbounded-amplification")
        .unwrap();
    assert_eq!(amplification["figure"].as_f64(), Some(5.0));
    assert!(findings.iter().all(|f| f["severity"] != "error"), "{json}");
    let out = herd_sim()
        .args(["lint", "--strategy", "exponential", "--deny", "warning"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("warning retry-envelope: "), "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: ") && stderr.contains("--deny warning"),
        "{stderr}"
    );
    let out = herd_sim()
        .args(["lint", "--strategy", "exponential", "--deny", "error"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // aws-standard's one error is counted in the singular, its warnings too when it is one.
    let out = herd_sim()
        .args(["lint", "--preset", "aws-standard", "--deny", "error"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr, "error: 1 finding at or above error (--deny error)\n",
        "{stderr}"
    );
}

#[test]
fn a_replayed_command_prints_the_figure() {
    // The window-limiter finding of exponential backoff: 4 retries spent before 60 s, so the
    // replayed run refuses 1000 first attempts and 4000 retries.
    let args = ["lint", "--strategy", "exponential", "--format", "json"];
    let json: serde_json::Value = serde_json::from_slice(&herd_sim_ok(&args)).unwrap();
    let finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "window-limiter")
        .unwrap();
    assert_eq!(finding["figure"].as_f64(), Some(4.0));
    let command = finding["command"].as_str().unwrap();
    let mut words: Vec<&str> = command.split(' ').skip(1).collect();
    words.extend(["--format", "json"]);
    let run: serde_json::Value = serde_json::from_slice(&herd_sim_ok(&words)).unwrap();
    assert_eq!(run["results"][0]["refused"].as_u64(), Some(5000));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (vec!["lint", "--deny", "bogus"], "--deny"),
        (vec!["lint", "--format", "csv"], "--format"),
        (vec!["lint", "--jitter-order", "sideways"], "--jitter-order"),
        (vec!["lint", "--png", "x.png"], "--png"),
        // A plain run's flags that lint would ignore: an output it never writes, or a setting
        // its own probes do not read.
        (vec!["lint", "--html", "x.html"], "--html"),
        (vec!["lint", "--trace", "x.jsonl"], "--trace"),
        (vec!["lint", "--trace-sample", "0.5"], "--trace-sample"),
        (vec!["lint", "--chart-scale", "log"], "--chart-scale"),
        (vec!["lint", "--chart-size", "800x600"], "--chart-size"),
        (vec!["lint", "--engine", "independent"], "--engine"),
        (vec!["lint", "--replicates", "3"], "--replicates"),
        (vec!["lint", "--preset", "nope"], "--preset"),
    ] {
        let out = herd_sim().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(needle),
            "{stderr}"
        );
    }
    // Jitter order means nothing to a strategy that does not draw below the curve.
    let out = herd_sim()
        .args(["--strategy", "exponential", "--jitter-order", "before-cap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_offers_the_formats_lint_writes() {
    // lint takes a plain run's flags; its --format once listed the run's csv (refused) and
    // described the run's JSON (`results`), not the findings it writes.
    let out = herd_sim().args(["lint", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let format = help
        .split("--format <FORMAT>")
        .nth(1)
        .and_then(|rest| rest.split("[default: table]").next())
        .unwrap();
    assert!(
        format.contains("- json:  JSON object with a `findings` array"),
        "{format}"
    );
    assert!(
        !format.contains("csv") && !format.contains("results"),
        "{format}"
    );
    let json = herd_sim()
        .args(["lint", "--preset", "grpc", "--format", "json"])
        .output()
        .unwrap();
    let findings: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(findings["findings"].is_array(), "{findings}");
}
