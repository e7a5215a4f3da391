//! Bounded fuzzing of the three parsers that read users' files, on stable Rust in every
//! `cargo test`: scenario configs (TOML and JSON, with their `[sweep]` tables), fixture files
//! and the CSV files `plot` reads. Each starts from real inputs (the shipped configs and
//! fixtures, the committed sweep data and a fresh tidy sweep) and applies a few seeded
//! mutations per case (byte and token edits, numbers swapped for extreme ones, lines
//! duplicated, dropped or swapped, truncation) for a fixed number of cases from a fixed seed.
//! Every input must be accepted (and then validated, run or drawn without a panic) or refused
//! with one error line. `src/chart/fuzz.rs` does the same for plot from token soup.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use herd_sim::chart::{ChartSize, DataTable, ImageFormat, LineChart, PlotSpec};
use herd_sim::config::ScenarioFile;
use herd_sim::fixture::Fixture;
use herd_sim::sweep::{file::SweepFile, Plan, SweepSpec};

/// What mutations insert or swap in: syntax of the three formats, extreme and odd numbers,
/// odd text.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "-0",
    "0.0",
    "1e308",
    "1e309",
    "-1e309",
    "5e-324",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "1.5",
    "0ns",
    "1ns",
    "1h",
    "5000000h",
    "\"1s\"",
    "\"0s\"",
    "\"-1s\"",
    "\"\"",
    "\"",
    "'",
    "[",
    "]",
    "{",
    "}",
    "[[",
    ",",
    ":",
    "=",
    "..",
    "@",
    "\n",
    "\r\n",
    " ",
    "\t",
    "#",
    "null",
    "true",
    "false",
    "é",
    "😀",
    "\u{0}",
    "\u{feff}",
    "[server]",
    "[sweep]",
    "model = \"occ\"",
    "model = \"capacity\"",
    "all",
    "unlimited",
    "poisson",
    "exp:",
    "uniform:",
    "normal:",
];

/// Extreme replacements for a run of digits.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "1000000",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "1e308",
    "0.000001",
    "-1",
];

/// Replaces the digits from a random digit of `input` on with an extreme number.
fn replace_number(rng: &mut ChaCha8Rng, input: &mut Vec<u8>) {
    let len = input.len();
    let digits: Vec<usize> = (0..len).filter(|&i| input[i].is_ascii_digit()).collect();
    if let Some(&start) = digits.get(rng.random_range(0..digits.len().max(1))) {
        let end = (start..len)
            .find(|&i| !input[i].is_ascii_digit() && input[i] != b'.')
            .unwrap_or(len);
        let number = NUMBERS[rng.random_range(0..NUMBERS.len())].as_bytes();
        input.splice(start..end, number.iter().copied());
    }
}

/// One seeded mutation of `input`.
fn mutate_once(rng: &mut ChaCha8Rng, input: &mut Vec<u8>) {
    let len = input.len();
    let at = |rng: &mut ChaCha8Rng| rng.random_range(0..=len);
    match rng.random_range(0..9) {
        // Insert a token.
        0 | 1 => {
            let token = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
            let i = at(rng);
            input.splice(i..i, token.iter().copied());
        }
        2 | 3 => replace_number(rng, input),
        // Delete a short range.
        4 => {
            let i = at(rng);
            let end = (i + rng.random_range(1..16)).min(len);
            input.drain(i..end);
        }
        // Duplicate a range.
        5 => {
            let i = at(rng);
            let end = (i + rng.random_range(1..64)).min(len);
            let copy: Vec<u8> = input[i..end].to_vec();
            let j = at(rng);
            input.splice(j..j, copy);
        }
        // Flip one byte.
        6 => {
            if len > 0 {
                let i = rng.random_range(0..len);
                input[i] = rng.random();
            }
        }
        // Swap, drop or duplicate a whole line.
        7 => {
            let mut lines: Vec<Vec<u8>> =
                input.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            let n = lines.len();
            let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
            match rng.random_range(0..3) {
                0 => lines.swap(i, j),
                1 => {
                    lines.remove(i);
                }
                _ => {
                    let line = lines[i].clone();
                    lines.insert(j, line);
                }
            }
            *input = lines.join(&b'\n');
        }
        // Truncate.
        _ => input.truncate(at(rng)),
    }
}

/// `input` with one to four mutations; a third of the time only numbers are replaced, which
/// keeps most inputs well-formed, so the checks past the parser are reached too.
fn mutate(rng: &mut ChaCha8Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let numbers_only = rng.random_bool(1.0 / 3.0);
    for _ in 0..rng.random_range(1..=4) {
        if numbers_only {
            replace_number(rng, &mut out);
        } else {
            mutate_once(rng, &mut out);
        }
    }
    out
}

/// A refusal fit for the user: one line, not empty.
fn one_line(error: &dyn std::fmt::Display, input: &[u8]) {
    let text = error.to_string();
    assert!(
        !text.is_empty() && !text.contains(['\n', '\r']),
        "not one line: {text:?}\nfrom input {:?}",
        String::from_utf8_lossy(input)
    );
}

/// The scenario configs, as shipped (TOML) and as JSON (the same files written back).
fn config_corpus() -> Vec<(Vec<u8>, bool)> {
    let toml = [
        include_str!("../../configs/herd-down.toml"),
        include_str!("../../configs/fixed-window-one-client.toml"),
        include_str!("../../configs/fixed-window-five-clients.toml"),
        include_str!("../../configs/occ-contention.toml"),
        include_str!("../../configs/collapse-spike.toml"),
        include_str!("../../configs/outage-recovery.toml"),
        include_str!("../../configs/metastable-steps.toml"),
        include_str!("../../configs/browser-tabs.toml"),
        include_str!("../../configs/browser-tabs-limiter.toml"),
    ];
    let mut corpus = Vec::new();
    for text in toml {
        let file = ScenarioFile::parse(text, Some("toml")).expect("a shipped config parses");
        corpus.push((text.as_bytes().to_vec(), false));
        corpus.push((serde_json::to_vec_pretty(&file).unwrap(), true));
    }
    corpus
}

#[test]
fn mutated_configs_parse_validate_or_fail_in_one_line() {
    let corpus = config_corpus();
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let (mut valid, mut plans) = (0, 0);
    for _ in 0..3000 {
        let (input, json) = &corpus[rng.random_range(0..corpus.len())];
        let bytes = mutate(&mut rng, input);
        // A file that is not UTF-8 is refused when read; the parsers see its lossy text.
        let text = String::from_utf8_lossy(&bytes);
        let extension = if *json { "json" } else { "toml" };
        match ScenarioFile::parse(&text, Some(extension)) {
            Err(e) => one_line(&e, &bytes),
            // Validation only: nothing is simulated (a mutated size could be huge).
            Ok(file) => match file.validate_on(Some(2)) {
                Err(e) => one_line(&e, &bytes),
                Ok(_) => valid += 1,
            },
        }
        // The same text as a sweep file: its grid planned (every cell validated, nothing run).
        match SweepFile::parse(&text, *json) {
            Err(e) => one_line(&e, &bytes),
            Ok(file) => {
                let spec = SweepSpec {
                    base: file.base,
                    grid: file.grid,
                    seeds: file.seeds.unwrap_or(1),
                    max_cells: file.max_cells.unwrap_or(1000).min(1000),
                    threads: Some(2),
                    ..Default::default()
                };
                match Plan::new(spec) {
                    Err(e) => one_line(&e, &bytes),
                    Ok(_) => plans += 1,
                }
            }
        }
    }
    // The mutations leave many inputs valid: the checks past parsing are reached.
    assert!(valid > 300 && plans > 300, "valid {valid}, plans {plans}");
}

#[test]
fn mutated_fixture_files_play_or_fail_in_one_line() {
    let corpus = [
        include_str!("../../configs/scenarios.json"),
        include_str!("../../configs/stacked.json"),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let mut played = 0;
    for _ in 0..3000 {
        let input = corpus[rng.random_range(0..corpus.len())].as_bytes();
        let bytes = mutate(&mut rng, input);
        let text = String::from_utf8_lossy(&bytes);
        match Fixture::parse(&text) {
            Err(e) => one_line(&e, &bytes),
            Ok(fixture) => {
                // Bounded by the fixture's own limits (attempts, worst-case requests).
                let report = fixture.run(false);
                assert_eq!(report.scenarios.len(), fixture.scenarios.len());
                report.to_table();
                report.to_json();
                if let Err(e) = fixture.require_expectations() {
                    one_line(&e, &bytes);
                } else {
                    fixture.run(true);
                }
                played += 1;
            }
        }
    }
    assert!(played > 100, "played {played}");
}

/// The committed aggregate data (its header and first rows) and a tidy sweep made now.
fn csv_corpus() -> Vec<Vec<u8>> {
    let aggregate: String = include_str!("../../docs/occ-contention.csv")
        .lines()
        .take(9)
        .map(|line| format!("{line}\n"))
        .collect();
    let tidy = crate::cmd::Command::cargo_bin("herd-sim")
        .unwrap()
        .args([
            "sweep",
            "--clients",
            "2,5",
            "--strategy",
            "full-jitter,fixed",
            "--retries",
            "2",
            "--seeds",
            "2",
            "--out",
            "-",
        ])
        .output()
        .unwrap();
    assert!(tidy.status.success());
    vec![aggregate.into_bytes(), tidy.stdout]
}

#[test]
fn mutated_sweep_csv_files_chart_or_fail_in_one_line() {
    let corpus = csv_corpus();
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let small = ChartSize {
        width: 200,
        height: 200,
    };
    let (mut parsed, mut drawn) = (0, 0);
    for case in 0..1500 {
        let input = &corpus[rng.random_range(0..corpus.len())];
        let bytes = mutate(&mut rng, input);
        let table = match DataTable::parse(&bytes, "fuzz.csv") {
            Ok(table) => table,
            Err(e) => {
                assert!(e.is_bad_input(), "{e}");
                one_line(&e, &bytes);
                continue;
            }
        };
        parsed += 1;
        // Specs a user would write for these files: mostly their own columns.
        let column = |rng: &mut ChaCha8Rng, names: &[&str]| {
            if rng.random_bool(0.5) && !table.columns.is_empty() {
                table.columns[rng.random_range(0..table.columns.len())].clone()
            } else {
                names[rng.random_range(0..names.len())].to_string()
            }
        };
        let spec = PlotSpec {
            x: column(&mut rng, &["clients", "retries", "seed", "cap_s"]),
            y: column(
                &mut rng,
                &["peak", "peak_mean", "requests", "finish_s", "span_s_mean"],
            ),
            by: rng
                .random_bool(0.7)
                .then(|| column(&mut rng, &["strategy", "retries", "clients"])),
            filters: if rng.random_bool(0.2) {
                vec![(
                    column(&mut rng, &["strategy", "clients"]),
                    column(&mut rng, &["fixed", "2", "x"]),
                )]
            } else {
                Vec::new()
            },
            log_x: rng.random_bool(0.3),
            log_y: rng.random_bool(0.3),
        };
        match LineChart::from_table(&table, &spec) {
            Ok(chart) => {
                drawn += 1;
                chart.render(ImageFormat::Svg, Some(small)).unwrap();
                if case % 20 == 0 {
                    chart.render(ImageFormat::Png, Some(small)).unwrap();
                }
            }
            Err(e) => {
                assert!(e.is_bad_input(), "drawing failed: {e}");
                one_line(&e, &bytes);
            }
        }
    }
    // How many draw depends on how many of a file's columns are numeric: a sweep's columns
    // for parameters its grid leaves unset (the trigger shapes here) are empty.
    assert!(parsed > 300 && drawn > 80, "parsed {parsed}, drawn {drawn}");
}

#[test]
fn a_toml_error_quoting_a_carriage_return_is_one_line() {
    // Found by the config fuzzing: TOML refuses a lone carriage return in a comment and quotes
    // the line, which printed as two lines on a terminal.
    let text = "# run it\rwith care\nclients = 1\n";
    let e = ScenarioFile::parse(text, Some("toml")).unwrap_err();
    assert!(e.contains("TOML parse error at line 1"), "{e}");
    one_line(&e, text.as_bytes());
    one_line(&SweepFile::parse(text, false).unwrap_err(), text.as_bytes());
}
