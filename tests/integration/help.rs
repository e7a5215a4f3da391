//! `--help` reads as a guide: an example first, the general options (configuration, output,
//! charts, threads, limits) before the models' under their own heading, every option once, and
//! `-h` a summary that leaves the models' options to `--help`.

use std::fs;
use std::path::Path;

use crate::{herd_sim, herd_sim_ok};

/// The options every run has, whatever it models: the first heading lists exactly these.
const GENERAL: [&str; 17] = [
    "--config",
    "--format",
    "--out",
    "--png",
    "--svg",
    "--chart-scale",
    "--chart-size",
    "--html",
    "--trace",
    "--trace-sample",
    "--engine",
    "--threads",
    "--max-requests",
    "--memory-limit",
    "--yes",
    "--help",
    "--version",
];

/// The headings of a plain run's `--help`, in order.
const HEADINGS: [&str; 6] = [
    "Options",
    "Scenario: clients, backoff, server",
    "Rate limiters",
    "Overload: arrivals, capacity, timeouts",
    "Retry control",
    "Browser tabs",
];

/// A help text's option sections: `(heading, long option names in order)`, from the first
/// heading after `Usage:` (the commands' list excluded).
fn sections(help: &str) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    let after_usage = help.lines().skip_while(|line| !line.starts_with("Usage:"));
    for line in after_usage {
        if let Some(heading) = line.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
            sections.push((heading.to_string(), Vec::new()));
            continue;
        }
        let Some((_, options)) = sections.last_mut() else {
            continue;
        };
        // An option's line: `  -h, --help ...` or `      --out <PATH> ...`.
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let name = trimmed
            .strip_prefix("-h, ")
            .or_else(|| trimmed.strip_prefix("-V, "))
            .unwrap_or(trimmed);
        if (indent == 2 || indent == 6) && name.starts_with("--") {
            options.push(name.split_whitespace().next().unwrap().to_string());
        }
    }
    sections.retain(|(heading, _)| heading != "Commands" && heading != "Arguments");
    sections
}

fn help(args: &[&str]) -> String {
    String::from_utf8(herd_sim_ok(args)).unwrap()
}

#[test]
fn the_general_options_come_first_under_their_own_heading_then_one_heading_a_model() {
    let long = help(&["--help"]);
    let sections = sections(&long);
    let headings: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(headings, HEADINGS, "{long}");
    assert_eq!(
        sections[0].1, GENERAL,
        "the first heading holds the general options"
    );
    // Every option once, and the models' where they belong.
    let all: Vec<&String> = sections.iter().flat_map(|(_, o)| o).collect();
    let mut unique = all.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(all.len(), unique.len(), "an option listed twice: {all:?}");
    let under = |option: &str| {
        sections
            .iter()
            .find(|(_, o)| o.iter().any(|name| name == option))
            .map(|(h, _)| h.as_str())
    };
    for (option, heading) in [
        ("--clients", HEADINGS[1]),
        ("--items", HEADINGS[1]),
        ("--replicates", HEADINGS[1]),
        ("--limit", HEADINGS[2]),
        ("--workers", HEADINGS[3]),
        ("--budget", HEADINGS[4]),
        ("--preset", HEADINGS[4]),
        ("--hidden", HEADINGS[5]),
        ("--clock-skew", HEADINGS[5]),
    ] {
        assert_eq!(under(option), Some(heading), "{option}");
    }
}

#[test]
fn short_help_is_a_summary_of_the_general_and_scenario_options() {
    let long = help(&["--help"]);
    let short = help(&["-h"]);
    let (short_lines, long_lines) = (short.lines().count(), long.lines().count());
    assert!(
        short_lines <= 80 && short_lines * 4 <= long_lines,
        "-h has {short_lines} lines, --help {long_lines}:\n{short}"
    );
    let sections = sections(&short);
    let headings: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(headings, HEADINGS[..2], "{short}");
    // --trace-sample only in --help: -h keeps --trace.
    let general: Vec<&str> = GENERAL
        .into_iter()
        .filter(|o| *o != "--trace-sample")
        .collect();
    assert_eq!(sections[0].1, general);
    // Each option on one entry, no models' option, and where the rest is.
    for option in ["--limit", "--workers", "--budget", "--hidden"] {
        assert!(!short.contains(option), "-h lists {option}");
    }
    assert!(
        short.contains("`herd-sim --help` lists every option"),
        "{short}"
    );
}

#[test]
fn help_opens_with_examples_that_run() {
    let dir = tempfile::tempdir().unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    fs::create_dir(dir.path().join("configs")).unwrap();
    fs::copy(
        configs.join("collapse-spike.toml"),
        dir.path().join("configs/collapse-spike.toml"),
    )
    .unwrap();
    for flag in ["-h", "--help"] {
        let text = help(&[flag]);
        let before_usage = text.split("Usage:").next().unwrap();
        let examples: Vec<&str> = before_usage
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{flag}: no examples before Usage:\n{text}"))
            .lines()
            .filter_map(|l| l.strip_prefix("  herd-sim "))
            .collect();
        assert_eq!(examples.len(), 3, "{flag}: {before_usage}");
        if flag == "--help" {
            for example in examples {
                let out = herd_sim()
                    .args(example.split_whitespace())
                    .current_dir(dir.path())
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "`herd-sim {example}`: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    assert!(dir.path().join("output/collapse.png").is_file());
}

#[test]
fn sweep_help_lists_its_own_options_before_the_parameters_it_varies() {
    let text = help(&["sweep", "--help"]);
    let sections = sections(&text);
    let headings: Vec<&str> = sections.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(
        headings,
        [
            "Options",
            "Parameters to vary (each a comma list, a range 2..8 or a stepped range)"
        ],
        "{text}"
    );
    for option in ["--config", "--seeds", "--out", "--aggregate", "--threads"] {
        assert!(sections[0].1.iter().any(|o| o == option), "{option}");
    }
    for parameter in ["--clients", "--strategy", "--budget", "--hidden"] {
        assert!(sections[1].1.iter().any(|o| o == parameter), "{parameter}");
    }
}
