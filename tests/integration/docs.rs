//! What ships beside the code: the licence files Cargo.toml names.

use std::fs;
use std::path::Path;

fn repo_file(name: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_licence_cargo_toml_names_ships_in_its_standard_text() {
    let manifest: toml::Value = toml::from_str(&repo_file("Cargo.toml")).unwrap();
    let expression = manifest["package"]["license"].as_str().unwrap();
    let ids: Vec<&str> = expression.split(" OR ").collect();
    assert_eq!(ids, ["MIT", "Apache-2.0"], "{expression}");
    for id in ids {
        match id {
            "MIT" => {
                let text = repo_file("LICENSE-MIT");
                let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(text.starts_with("MIT License\n\nCopyright (c) herd-sim contributors\n"));
                for sentence in [
                    "Permission is hereby granted, free of charge, to any person obtaining a copy \
                     of this software and associated documentation files (the \"Software\"), to \
                     deal in the Software without restriction,",
                    "The above copyright notice and this permission notice shall be included in \
                     all copies or substantial portions of the Software.",
                    "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND,",
                ] {
                    assert!(flat.contains(sentence), "LICENSE-MIT: {sentence}");
                }
            }
            "Apache-2.0" => {
                let text = repo_file("LICENSE-APACHE");
                let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(flat.starts_with(
                    "Apache License Version 2.0, January 2004 http://www.apache.org/licenses/"
                ));
                // All nine sections, in order, and the end of the terms.
                let mut at = 0;
                for heading in [
                    "1. Definitions.",
                    "2. Grant of Copyright License.",
                    "3. Grant of Patent License.",
                    "4. Redistribution.",
                    "5. Submission of Contributions.",
                    "6. Trademarks.",
                    "7. Disclaimer of Warranty.",
                    "8. Limitation of Liability.",
                    "9. Accepting Warranty or Additional Liability.",
                    "END OF TERMS AND CONDITIONS",
                ] {
                    at += flat[at..]
                        .find(heading)
                        .unwrap_or_else(|| panic!("LICENSE-APACHE: {heading}"));
                }
            }
            other => panic!("Cargo.toml names {other}: ship its text"),
        }
    }
}

/// The README is the front door: short, a picture on its first screen, the install command,
/// the quick start's two commands as they have always been, an example of every subcommand,
/// and the way to the guide.
#[test]
fn the_readme_is_a_front_door() {
    let text = repo_file("README.md");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 250, "README.md has {} lines", lines.len());
    let picture = lines.iter().position(|l| l.starts_with("![")).unwrap();
    assert!(picture < 12, "the first picture is on line {}", picture + 1);
    assert!(text.contains("```sh\ncargo install --path . --locked "));
    assert!(text.contains(
        "## Quick start\n\n```sh\n\
         cargo run --release -- --clients 1000 --strategy all   # the simulator\n\
         cargo test --release                                   # the tests\n```\n"
    ));
    assert!(text.contains("](docs/README.md)"));
    // Every subcommand `--help` lists has an example.
    let help = String::from_utf8(crate::herd_sim_ok(&["--help"])).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    assert!(commands.len() >= 5, "{help}");
    for command in commands {
        assert!(
            text.lines().any(|l| l
                .trim_start_matches("$ ")
                .starts_with(&format!("herd-sim {command} "))
                || l.trim_start_matches("$ ") == format!("herd-sim {command}")),
            "README.md has no example of `herd-sim {command}`"
        );
    }
}

/// Every figure of `name` is the text's words joined by single spaces (prose wraps anywhere).
fn says(name: &str, sentence: &str) {
    let flat = repo_file(name)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains(sentence), "{name} should say: {sentence}");
}

#[test]
fn the_work_figure_the_model_guide_quotes_is_the_estimate() {
    let scenario =
        herd_sim::config::ScenarioFile::parse("clients = 10000000\nstrategy = \"all\"\n", None)
            .unwrap()
            .validate()
            .unwrap();
    let events = scenario.work_estimate();
    // Six strategies against the down server, five requests a client, plus each run's setup.
    assert_eq!(scenario.strategies.len(), 6);
    assert_eq!(
        events,
        6 * (10_000_000 * 5 + herd_sim::config::RUN_SETUP_EVENTS)
    );
    says(
        "docs/model.md",
        &format!(
            "10 M clients with `--strategy all` against the down server is {} M events",
            (events + 500_000) / 1_000_000
        ),
    );
}

/// The backticked names of `name` between `from` and the next `(`.
fn listed(name: &str, from: &str) -> Vec<String> {
    let text = repo_file(name);
    let at = text
        .find(from)
        .unwrap_or_else(|| panic!("{name}: no `{from}`"))
        + from.len();
    let list = &text[at..at + text[at..].find('(').unwrap()];
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

#[test]
fn the_csv_columns_the_model_guide_lists_are_the_header() {
    let documented = listed("docs/model.md", "one row per strategy, in the columns");
    for args in [
        &["--clients", "10", "--format", "csv"][..],
        &[
            "--clients",
            "10",
            "--format",
            "csv",
            "--server",
            "fixed-window",
        ],
        &[
            "--clients",
            "10",
            "--format",
            "csv",
            "--items",
            "2",
            "--latency",
            "10ms",
        ],
    ] {
        let csv = String::from_utf8(crate::herd_sim_ok(args)).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        assert_eq!(header, documented, "{args:?}");
    }
    // The work fields Experiment 2's output names are the list's last six.
    let work = listed("docs/experiments.md", "has them in the columns");
    assert_eq!(work, documented[documented.len() - 6..]);
    // A call-loop run's columns follow, then a tab model's.
    let calls = listed("docs/model.md", "has, in the columns");
    let csv = String::from_utf8(crate::herd_sim_ok(&[
        "--clients",
        "10",
        "--format",
        "csv",
        "--server",
        "capacity",
        "--hidden",
        "0.5",
    ]))
    .unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mut expected: Vec<&str> = documented.iter().map(String::as_str).collect();
    expected.extend(calls.iter().map(String::as_str));
    expected.extend([
        "hidden_clients",
        "retries_while_hidden",
        "paused",
        "early_retries",
    ]);
    assert_eq!(header, expected);
}

#[test]
fn the_sweep_columns_the_sweeps_guide_lists_are_the_header() {
    let guide = repo_file("docs/sweeps-and-clusters.md");
    // The parameter table: `| --flag | column | values |`, in grid order.
    let parameters: Vec<String> = guide
        .lines()
        .skip_while(|l| !l.starts_with("| flag / key | CSV column |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(2))
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .collect();
    let metrics = listed(
        "docs/sweeps-and-clusters.md",
        "every metric of a run in this",
    );
    let csv =
        String::from_utf8(crate::herd_sim_ok(&["sweep", "--clients", "10", "--quiet"])).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mut documented: Vec<&str> = parameters.iter().map(String::as_str).collect();
    documented.extend(["replicate", "seed"]);
    documented.extend(metrics.iter().map(String::as_str));
    assert_eq!(header, documented);
}

/// The console blocks of a Markdown guide, joined: what `tests/integration/readme.rs` reruns.
fn console_blocks(text: &str) -> String {
    let mut blocks = String::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = !inside && line == "```console";
        } else if inside {
            blocks.push_str(line);
            blocks.push('\n');
        }
    }
    blocks
}

#[test]
fn the_boundary_studies_the_readme_quotes_are_the_guides_checked_figures() {
    // Every figure of the README's "ours" column, in backticks, is a whole token of an output
    // line of docs/boundary.md's console blocks, which the readme tests rerun: the README
    // quotes what the program prints, and cannot drift from it.
    let readme = repo_file("README.md");
    let tokens: std::collections::HashSet<String> = console_blocks(&repo_file("docs/boundary.md"))
        .lines()
        .filter(|line| !line.starts_with('$'))
        .flat_map(|line| {
            line.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let table = readme
        .split("| boundary study |")
        .nth(1)
        .expect("the README's table of boundary studies");
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 5, "the five studies");
    for row in rows {
        let ours = row.trim_end_matches('|').rsplit('|').next().unwrap();
        let figures: Vec<&str> = ours.split('`').skip(1).step_by(2).collect();
        assert!(figures.len() >= 2, "{row}");
        for figure in figures {
            assert!(
                tokens.contains(figure),
                "README quotes {figure}, which no output line of docs/boundary.md's blocks prints: {row}"
            );
        }
    }
}
