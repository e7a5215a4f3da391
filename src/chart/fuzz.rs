//! Seeded fuzzing of the plot path: thousands of random and hostile CSV files and
//! plot specs through [`DataTable::parse`], [`LineChart::from_table`] and rendering. Each
//! must end in a chart or in a clean one-line input error, never a panic or a drawing
//! failure. Bounded (a fixed count from a fixed seed), so it runs on stable Rust in every
//! `cargo test`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{ChartError, ChartSize, DataTable, ImageFormat, LineChart, PlotSpec};

/// Pieces hostile files are made of: separators, quotes, line ends, odd numbers, odd text.
const TOKENS: &[&str] = &[
    ",",
    ",",
    ",",
    "\n",
    "\n",
    "\r\n",
    "\r",
    "\"",
    "\"\"",
    " ",
    "\t",
    "x",
    "y",
    "seed",
    "replicate",
    "strategy",
    "clients",
    "peak",
    "peak_mean",
    "peak_ci95_low",
    "peak_ci95_high",
    "peak_sd",
    "seeds",
    "0",
    "1",
    "-1",
    "2",
    "10",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "5e-324",
    "-0",
    "0.5",
    "NaN",
    "inf",
    "-inf",
    "1,5",
    "é",
    "😀",
    "\u{0}",
    "\u{feff}",
    "=",
    "[scenario]",
    "clients = 10",
    "#",
    "1e",
    ".",
    "--",
    "fixed",
    "full-jitter",
];

/// Cells of the well-formed tables: ordinary and extreme numbers.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "10",
    "-1",
    "0.5",
    "1e308",
    "-1e308",
    "5e-324",
    "-0",
    "100",
    "1000",
    "1.7976931348623157e308",
    "42",
    "7",
    "8",
];

/// Column names a spec picks from (some present in most files, some never).
const NAMES: &[&str] = &[
    "x",
    "y",
    "seed",
    "strategy",
    "clients",
    "peak",
    "peak_mean",
    "seeds",
    "missing",
    "",
];

fn hostile_file(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut text = String::new();
    match rng.random_range(0..3) {
        // Token soup.
        0 => {
            for _ in 0..rng.random_range(0..60) {
                text.push_str(TOKENS[rng.random_range(0..TOKENS.len())]);
            }
        }
        // A well-formed table of random cells (the chart path proper).
        1 => {
            let columns = rng.random_range(1..6);
            let header: Vec<&str> = (0..columns).map(|i| NAMES[i]).collect();
            text.push_str(&header.join(","));
            text.push('\n');
            for _ in 0..rng.random_range(0..12) {
                let row: Vec<&str> = (0..columns)
                    .map(|_| {
                        if rng.random_bool(0.9) {
                            NUMBERS[rng.random_range(0..NUMBERS.len())]
                        } else {
                            TOKENS[rng.random_range(0..TOKENS.len())]
                        }
                    })
                    .map(|t| {
                        if t.contains([',', '"', '\n', '\r']) {
                            "7"
                        } else {
                            t
                        }
                    })
                    .collect();
                text.push_str(&row.join(","));
                text.push('\n');
            }
        }
        // Random bytes, not even UTF-8.
        _ => {
            let bytes: Vec<u8> = (0..rng.random_range(0..80)).map(|_| rng.random()).collect();
            return bytes;
        }
    }
    text.into_bytes()
}

fn random_spec(rng: &mut ChaCha8Rng, table: &DataTable) -> PlotSpec {
    let mut pick = || {
        if rng.random_bool(0.85) {
            table.columns[rng.random_range(0..table.columns.len())].clone()
        } else {
            NAMES[rng.random_range(0..NAMES.len())].to_string()
        }
    };
    let (x, y, by, filter) = (pick(), pick(), pick(), pick());
    PlotSpec {
        x,
        y,
        by: rng.random_bool(0.5).then_some(by),
        filters: if rng.random_bool(0.3) {
            let value = if rng.random_bool(0.5) {
                NUMBERS[rng.random_range(0..NUMBERS.len())]
            } else {
                TOKENS[rng.random_range(0..TOKENS.len())]
            };
            vec![(filter, value.to_string())]
        } else {
            Vec::new()
        },
        log_x: rng.random_bool(0.3),
        log_y: rng.random_bool(0.3),
    }
}

/// The error is the user's to fix and fits one line.
fn assert_clean(error: &ChartError, input: &[u8]) {
    let text = error.to_string();
    assert!(error.is_bad_input(), "drawing failed on {input:?}: {text}");
    assert!(
        !text.contains(['\n', '\r']),
        "a message of several lines: {text:?}"
    );
}

#[test]
fn hostile_csv_files_and_specs_chart_or_fail_cleanly() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let small = ChartSize {
        width: 200,
        height: 200,
    };
    let (mut parsed, mut drawn) = (0, 0);
    for case in 0..3000 {
        let bytes = hostile_file(&mut rng);
        let table = match DataTable::parse(&bytes, "fuzz.csv") {
            Ok(table) => table,
            Err(e) => {
                assert_clean(&e, &bytes);
                continue;
            }
        };
        parsed += 1;
        assert!(table.rows.iter().all(|r| r.len() == table.columns.len()));
        for _ in 0..4 {
            let spec = random_spec(&mut rng, &table);
            match LineChart::from_table(&table, &spec) {
                Ok(chart) => {
                    drawn += 1;
                    // Every chart built draws; PNG for a sample (slower), SVG always.
                    chart.render(ImageFormat::Svg, Some(small)).unwrap();
                    if case % 10 == 0 {
                        chart.render(ImageFormat::Png, Some(small)).unwrap();
                    }
                }
                Err(e) => assert_clean(&e, &bytes),
            }
        }
    }
    // The generator reaches the deep paths, not only the parser's refusals.
    assert!(
        parsed > 1000 && drawn > 300,
        "parsed {parsed}, drawn {drawn}"
    );
}
