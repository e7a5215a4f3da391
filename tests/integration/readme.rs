//! The README cannot drift: every command and output block in it is run here, and the figures
//! quoted in its prose are computed here and compared with the text.
//!
//! **The convention** (for every section, present and future — a block that does not follow
//! it fails this test with a message saying what to do):
//! - ` ```console ` blocks: a line `$ herd-sim ARGS` is a command; the lines after it, up to
//!   the next `$ ` line or the end of the block, are exactly its standard output (trailing
//!   spaces ignored). A line `...` stands for any number of lines (an elision). The command
//!   must exit 0.
//! - ` ```sh ` blocks: each line is a command, optionally followed by `# comment`. A line
//!   starting with `herd-sim ` is run and must exit 0; its output is not compared. Any other
//!   line must start with one of the prefixes of [`NOT_RUN`], which says why it is not run
//!   (`cargo run --release -- ARGS` is run as `herd-sim ARGS`).
//! - ` ```toml ` blocks are config files: each must parse as a scenario with an optional
//!   `[sweep]` table, and every cell of its grid must validate.
//! - ` ```text ` (or any other) blocks are refused: show output in a ` ```console ` block with
//!   the command that prints it.
//!
//! Commands run in README order in one scratch folder holding a copy of `configs/`, so a command
//! can read what an earlier one wrote (`output/sweep.csv`) and nothing is written into the
//! repository. Arguments are split on spaces; `'…'` and `"…"` quote.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::cmd::Command;

use herd_sim::config::ScenarioFile;
use herd_sim::experiment;
use herd_sim::policy::Strategy;
use herd_sim::sweep::file::SweepFile;
use herd_sim::sweep::{Plan, SweepSpec, DEFAULT_MAX_CELLS};

/// Lines of ` ```sh ` blocks that are shown but not run, by prefix, with the reason.
const NOT_RUN: [(&str, &str); 7] = [
    (
        "cargo test",
        "the test suite itself: this test is part of it",
    ),
    (
        "cargo install",
        "installs into the user's Cargo folder; the suite runs the binary it built",
    ),
    (
        "cargo build",
        "builds the binary this suite already runs (the dist profile takes minutes)",
    ),
    (
        "/usr/bin/time",
        "a measurement of time and memory at 10 M clients, quoted in the README as measured",
    ),
    (
        "bash deploy/slurm/",
        "needs a Slurm cluster; tests/integration/deploy.rs runs it through a stand-in sbatch",
    ),
    (
        "docker build",
        "needs a container engine (none runs here); deploy.rs checks the Containerfile's stages",
    ),
    (
        "kubectl",
        "needs a Kubernetes cluster; deploy.rs runs the manifests' container commands",
    ),
];

/// Lines of ` ```sh ` blocks that run a script of the repository (with `bash`, in the scratch
/// folder, the herd-sim under test first on `PATH`).
const SCRIPTS: [&str; 1] = ["deploy/local.sh"];

fn readme() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// A fenced block: its language, its first line's number (1-based) and its lines.
struct Block {
    language: String,
    line: usize,
    lines: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    language: info.split_whitespace().next().unwrap_or("").to_string(),
                    line: i + 1,
                    lines: Vec::new(),
                })
            }
            (Some(_), Some("")) => blocks.push(open.take().unwrap()),
            (Some(block), _) => block.lines.push(line.to_string()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README: a fenced block is never closed");
    blocks
}

/// Shell-like words: split on spaces, `'…'` and `"…"` quote, `#` outside quotes starts a
/// comment.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in `{line}`");
    words.extend(word);
    words
}

/// A scratch folder with a copy of `configs/`, where the README's commands run.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    fs::create_dir(dir.path().join("configs")).unwrap();
    for entry in fs::read_dir(configs).unwrap() {
        let entry = entry.unwrap();
        fs::copy(
            entry.path(),
            dir.path().join("configs").join(entry.file_name()),
        )
        .unwrap();
    }
    // The data the README's charts are drawn from (written by the scripts it names).
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    fs::create_dir(dir.path().join("docs")).unwrap();
    for entry in fs::read_dir(docs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csv") {
            fs::copy(
                &path,
                dir.path().join("docs").join(path.file_name().unwrap()),
            )
            .unwrap();
        }
    }
    dir
}

/// Runs the repository's script `script` with `args` through bash in `dir`; asserts exit 0.
fn run_script(dir: &Path, script: &str, args: &[String], at: usize) {
    let bin = Path::new(env!("CARGO_BIN_EXE_herd-sim"));
    let mut path = vec![bin.parent().unwrap().to_path_buf()];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let output = std::process::Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(script))
        .args(args)
        .current_dir(dir)
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("JOBS", "2")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "README line {at}: `{script} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `herd-sim ARGS` in `dir`; asserts exit 0 and returns stdout.
fn run(dir: &Path, args: &[String], at: usize) -> String {
    let output = Command::cargo_bin("herd-sim")
        .unwrap()
        .args(args)
        .current_dir(dir)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "README line {at}: `herd-sim {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// True when `actual` matches `expected`, where an expected line `...` matches any number of
/// lines; trailing spaces are ignored.
fn matches(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|skip| matches(rest, &actual[skip..])),
        Some((line, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a.trim_end() == line.trim_end() && matches(rest, more)),
    }
}

/// The `herd-sim` arguments of a `sh` line, or `None` when the line is not run (the reason
/// is in [`NOT_RUN`]).
fn command_of(line: &str, at: usize) -> Option<Vec<String>> {
    let words = words(line);
    let program = words.first()?;
    if program == "herd-sim" {
        return Some(words[1..].to_vec());
    }
    if words.starts_with(&[
        "cargo".into(),
        "run".into(),
        "--release".into(),
        "--".into(),
    ]) {
        return Some(words[4..].to_vec());
    }
    assert!(
        NOT_RUN.iter().any(|(prefix, _)| line.starts_with(prefix)),
        "README line {at}: `{line}` is neither a herd-sim command nor listed in NOT_RUN \
         (tests/integration/readme.rs) with the reason it is not run"
    );
    None
}

#[test]
fn every_command_and_output_block_of_the_readme_is_what_the_binary_does() {
    let dir = scratch();
    let text = readme();
    let mut checked = 0;
    for block in blocks(&text) {
        let at = block.line;
        match block.language.as_str() {
            "sh" => {
                for (i, line) in block.lines.iter().enumerate() {
                    let w = words(line.trim());
                    if let Some(script) = SCRIPTS.iter().find(|s| w.first() == Some(&s.to_string()))
                    {
                        run_script(dir.path(), script, &w[1..], at + 1 + i);
                        checked += 1;
                        continue;
                    }
                    if let Some(args) = command_of(line.trim(), at + 1 + i) {
                        run(dir.path(), &args, at + 1 + i);
                        checked += 1;
                    }
                }
            }
            "console" => {
                let mut commands: Vec<(usize, Vec<String>, Vec<&str>)> = Vec::new();
                for (i, line) in block.lines.iter().enumerate() {
                    match line.strip_prefix("$ ") {
                        Some(command) => {
                            let args = words(command);
                            assert_eq!(
                                args.first().map(String::as_str),
                                Some("herd-sim"),
                                "README line {}: a console command must be herd-sim",
                                at + 1 + i
                            );
                            commands.push((at + 1 + i, args[1..].to_vec(), Vec::new()));
                        }
                        None => commands
                            .last_mut()
                            .unwrap_or_else(|| {
                                panic!("README line {at}: a console block starts with `$ `")
                            })
                            .2
                            .push(line),
                    }
                }
                for (line, args, expected) in commands {
                    let stdout = run(dir.path(), &args, line);
                    let actual: Vec<&str> = stdout.lines().collect();
                    assert!(
                        matches(&expected, &actual),
                        "README line {line}: `herd-sim {}` prints\n{stdout}\nnot what the README shows\n{}",
                        args.join(" "),
                        expected.join("\n")
                    );
                    checked += 1;
                }
            }
            "toml" => {
                let file = SweepFile::parse(&block.lines.join("\n"), false)
                    .unwrap_or_else(|e| panic!("README line {at}: {e}"));
                let spec = SweepSpec {
                    base: file.base,
                    grid: file.grid,
                    seeds: file.seeds.unwrap_or(1),
                    max_cells: file.max_cells.unwrap_or(DEFAULT_MAX_CELLS),
                    ..Default::default()
                };
                Plan::new(spec).unwrap_or_else(|e| panic!("README line {at}: {e}"));
                checked += 1;
            }
            other => panic!(
                "README line {at}: a ```{other} block is not checked; show output in a \
                 ```console block with its `$ herd-sim` command (see tests/integration/readme.rs)"
            ),
        }
    }
    assert!(checked >= 20, "only {checked} blocks and commands found");
    // "Outgrowing one machine": the shards merged by hand and by deploy/local.sh are the
    // one-machine sweep of "Sweeps", byte for byte.
    let output = dir.path().join("output");
    let whole = fs::read(output.join("peak-by-clients.csv")).unwrap();
    for merged in ["peak-by-clients-merged.csv", "local.csv"] {
        assert!(
            fs::read(output.join(merged)).unwrap() == whole,
            "README: output/{merged} is not output/peak-by-clients.csv"
        );
    }
}

#[test]
fn the_checker_matches_elisions_and_splits_words_as_documented() {
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches(&["a", "...", "d"], &["a", "d"]));
    assert!(!matches(&["a", "...", "d"], &["a", "b"]));
    assert!(matches(&["a  "], &["a"]));
    assert!(!matches(&["a"], &["a", "b"]));
    assert_eq!(
        words("herd-sim sweep --base \"100ms..1s step 100ms\" --out x.csv  # a comment"),
        [
            "herd-sim",
            "sweep",
            "--base",
            "100ms..1s step 100ms",
            "--out",
            "x.csv"
        ]
    );
    assert_eq!(
        command_of("cargo run --release -- --clients 5", 1).unwrap(),
        ["--clients", "5"]
    );
    assert_eq!(command_of("cargo test --release   # the tests", 1), None);
}

/// Experiment 1 over run seeds 0–99: per strategy the mean and sample standard deviation of
/// the peak, the mean number of windows, and the mean time of the last retry.
struct OverSeeds {
    peak_mean: f64,
    peak_sd: f64,
    windows_mean: f64,
    last_retry_mean: f64,
}

fn over_seeds(strategy: Strategy) -> OverSeeds {
    let (mut peaks, mut windows, mut last) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 0..100 {
        let scenario = ScenarioFile {
            strategy: Some(herd_sim::config::StrategyList(vec![strategy])),
            seed: Some(seed),
            ..Default::default()
        }
        .validate()
        .unwrap();
        let result = experiment::run_one(&scenario, strategy);
        peaks.push(result.summary.peak as f64);
        windows.push(result.summary.windows as f64);
        // Against a server that stays down a client stops when its last retry is refused,
        // with no latency at the instant it arrives.
        let finishes = result
            .client_finish_s
            .expect("1000 clients list their finish");
        last.push(finishes.iter().flatten().copied().fold(0.0, f64::max));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let peak_mean = mean(&peaks);
    let squares: f64 = peaks.iter().map(|p| (p - peak_mean).powi(2)).sum();
    OverSeeds {
        peak_mean,
        // The sample standard deviation (n − 1), as the sweep's `_sd` columns.
        peak_sd: (squares / (peaks.len() - 1) as f64).sqrt(),
        windows_mean: mean(&windows),
        last_retry_mean: mean(&last),
    }
}

/// `1000` for a figure that did not vary, else one decimal.
fn shown(x: f64) -> String {
    match x.fract() == 0.0 {
        true => format!("{x}"),
        false => format!("{x:.1}"),
    }
}

#[test]
fn experiment_1_figures_over_seeds_0_to_99_are_the_readmes() {
    let text = readme();
    let rows = [
        ("fixed 1 s", Strategy::Fixed),
        ("exponential", Strategy::Exponential),
        ("full jitter", Strategy::FullJitter),
        ("equal jitter", Strategy::EqualJitter),
        ("decorrelated jitter", Strategy::DecorrelatedJitter),
    ];
    for (label, strategy) in rows {
        let o = over_seeds(strategy);
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("README: no Experiment 1 row `| {label} |`"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let peak = match o.peak_sd {
            0.0 => shown(o.peak_mean),
            sd => format!("{:.1} ± {sd:.1}", o.peak_mean),
        };
        assert_eq!(cells[4], peak, "{label}: ours over 100 seeds, peak");
        assert_eq!(cells[7], shown(o.windows_mean), "{label}: windows");
        if strategy == Strategy::FullJitter {
            let default_seed = ScenarioFile {
                strategy: Some(herd_sim::config::StrategyList(vec![strategy])),
                ..Default::default()
            }
            .validate()
            .unwrap();
            let finishes = experiment::run_one(&default_seed, strategy)
                .client_finish_s
                .unwrap();
            let last = finishes.iter().flatten().copied().fold(0.0, f64::max);
            let sentence = format!(
                "its last retry lands at {:.1} s on average over seeds 0–99, at {last:.2} s with the default seed",
                o.last_retry_mean
            );
            // Prose wraps anywhere: compare with the text's words joined by single spaces.
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&sentence), "README should say: {sentence}");
        }
    }
}
