//! The README and the guide cannot drift: every command and output block in `README.md` and
//! `docs/*.md` is run here, every picture they show is drawn again and compared byte for byte,
//! every link resolves, and the figures quoted in Experiment 1's prose are computed here and
//! compared with the text (the other studies' figures are checked by their modules: occ.rs,
//! budgets.rs, overload.rs, browser.rs, outage_presets.rs).
//!
//! **The convention** (for every file and section, present and future — a block that does not
//! follow it fails this test with a message saying what to do):
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
//! - ` ```python ` blocks are notebook snippets reading what the file's commands wrote: each is
//!   compiled by `python3`, and run in the scratch folder when pandas is installed.
//! - ` ```text ` (or any other) blocks are refused: show output in a ` ```console ` block with
//!   the command that prints it.
//!
//! Each file's commands run in its order in a scratch folder of its own holding a copy of
//! `configs/` and of the data in `docs/` (`*.csv`), so a command can read what an earlier one of
//! the same file wrote (`output/sweep.csv`) and nothing is written into the repository. A
//! command that writes a picture into `docs/` (`--png docs/X.png`, `plot ... --out
//! docs/X.png`) must draw exactly the committed file. Arguments are split on spaces; `'…'` and
//! `"…"` quote.

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
const NOT_RUN: [(&str, &str); 8] = [
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
        "bash deploy/slurm/",
        "needs a Slurm cluster; scripts/slurm-e2e.sh (CI) runs it on a one-node Slurm, \
         tests/integration/deploy.rs through a stand-in sbatch",
    ),
    (
        "docker build",
        "needs a container engine (none runs here); scripts/containerfile-build.sh (CI) runs \
         the Containerfile's cargo build, deploy.rs checks its stages",
    ),
    ("docker push", "needs a container engine and a registry"),
    (
        "kubectl",
        "needs a Kubernetes cluster; deploy.rs runs the manifests' container commands",
    ),
    (
        "IMAGE=",
        "runs deploy/k8s/run.sh against a Kubernetes cluster; deploy.rs runs it through a \
         stand-in kubectl",
    ),
];

/// Lines of ` ```sh ` blocks that run a script of the repository (with `bash`, in the scratch
/// folder, the herd-sim under test first on `PATH`).
const SCRIPTS: [&str; 1] = ["deploy/local.sh"];

/// The files checked here: the README, then the guide in `docs/` (every `.md` there must be
/// listed: [`every_markdown_file_of_the_guide_is_checked`]).
const DOCS: [&str; 16] = [
    "README.md",
    "docs/README.md",
    "docs/model.md",
    "docs/experiments.md",
    "docs/overload.md",
    "docs/retry-control.md",
    "docs/browser-tabs.md",
    "docs/sweeps-and-clusters.md",
    "docs/boundary.md",
    "docs/charts-and-reports.md",
    "docs/reports.md",
    "docs/fixture.md",
    "docs/incidents.md",
    "docs/performance.md",
    "docs/advice.md",
    "docs/crates.md",
];

/// Pictures drawn by a script whose own test compares them with the committed files, rather
/// than by a command shown in the guide.
const SCRIPTED_PICTURES: [(&str, &str); 3] = [
    ("docs/collapse-spike.png", "scripts/overload-charts.sh"),
    ("docs/outage-recovery.png", "scripts/overload-charts.sh"),
    ("docs/browser-tabs.png", "scripts/browser-tabs.sh"),
];

fn doc(name: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
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
    assert!(open.is_none(), "a fenced block is never closed");
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

/// A scratch folder with a copy of `configs/`, where a file's commands run.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    copy_tree(&configs, &dir.path().join("configs"));
    // The data the guide's charts are drawn from (written by the scripts it names).
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

/// Copies the folder `from` (its files and folders) to `to`.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        match path.is_dir() {
            true => copy_tree(&path, &target),
            false => drop(fs::copy(&path, &target).unwrap()),
        }
    }
}

/// Runs the repository's script `script` with `args` through bash in `dir`; asserts exit 0.
fn run_script(dir: &Path, script: &str, args: &[String], at: &str) {
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
        "{at}: `{script} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `herd-sim ARGS` in `dir`; asserts exit 0 and returns stdout.
fn run(dir: &Path, args: &[String], at: &str) -> String {
    let output = Command::cargo_bin("herd-sim")
        .unwrap()
        .args(args)
        .current_dir(dir)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{at}: `herd-sim {}` failed: {}",
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
fn command_of(line: &str, at: &str) -> Option<Vec<String>> {
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
        "{at}: `{line}` is neither a herd-sim command nor listed in NOT_RUN \
         (tests/integration/readme.rs) with the reason it is not run"
    );
    None
}

/// The pictures a command writes into `docs/`: the paths after `--png`, `--svg` and (for
/// `plot`) `--out`.
fn pictures_of(args: &[String]) -> Vec<String> {
    args.windows(2)
        .filter(|w| {
            matches!(w[0].as_str(), "--png" | "--svg")
                || (w[0] == "--out" && args.first().is_some_and(|a| a == "plot"))
        })
        .map(|w| w[1].clone())
        .filter(|path| path.starts_with("docs/"))
        .collect()
}

/// Runs every block of `name` in a scratch folder of its own (see the module's convention);
/// compares every picture a command draws into `docs/` with the committed one. Returns the
/// number of blocks and commands checked, the pictures compared and the scratch folder.
fn check_doc(name: &str) -> (usize, Vec<String>, tempfile::TempDir) {
    let dir = scratch();
    let text = doc(name);
    let mut checked = 0;
    let mut pictures = Vec::new();
    let mut compare = |args: &[String], at: &str| {
        for picture in pictures_of(args) {
            let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(&picture);
            assert!(
                fs::read(dir.path().join(&picture)).unwrap() == fs::read(&committed).unwrap(),
                "{at}: `herd-sim {}` draws a {picture} that differs from the committed one: \
                 run the command in the repository to draw it again",
                args.join(" ")
            );
            pictures.push(picture);
        }
    };
    for block in blocks(&text) {
        let at = |i: usize| format!("{name} line {}", block.line + 1 + i);
        match block.language.as_str() {
            "sh" => {
                for (i, line) in block.lines.iter().enumerate() {
                    let w = words(line.trim());
                    if let Some(script) = SCRIPTS.iter().find(|s| w.first() == Some(&s.to_string()))
                    {
                        run_script(dir.path(), script, &w[1..], &at(i));
                        checked += 1;
                        continue;
                    }
                    if let Some(args) = command_of(line.trim(), &at(i)) {
                        run(dir.path(), &args, &at(i));
                        compare(&args, &at(i));
                        checked += 1;
                    }
                }
            }
            "console" => {
                let mut commands: Vec<(String, Vec<String>, Vec<&str>)> = Vec::new();
                for (i, line) in block.lines.iter().enumerate() {
                    match line.strip_prefix("$ ") {
                        Some(command) => {
                            let args = words(command);
                            assert_eq!(
                                args.first().map(String::as_str),
                                Some("herd-sim"),
                                "{}: a console command must be herd-sim",
                                at(i)
                            );
                            commands.push((at(i), args[1..].to_vec(), Vec::new()));
                        }
                        None => commands
                            .last_mut()
                            .unwrap_or_else(|| {
                                panic!("{}: a console block starts with `$ `", at(0))
                            })
                            .2
                            .push(line),
                    }
                }
                for (line, args, expected) in commands {
                    let stdout = run(dir.path(), &args, &line);
                    let actual: Vec<&str> = stdout.lines().collect();
                    assert!(
                        matches(&expected, &actual),
                        "{line}: `herd-sim {}` prints\n{stdout}\nnot what {name} shows\n{}",
                        args.join(" "),
                        expected.join("\n")
                    );
                    compare(&args, &line);
                    checked += 1;
                }
            }
            "toml" => {
                let file = SweepFile::parse(&block.lines.join("\n"), false)
                    .unwrap_or_else(|e| panic!("{}: {e}", at(0)));
                let spec = SweepSpec {
                    base: file.base,
                    grid: file.grid,
                    seeds: file.seeds.unwrap_or(1),
                    max_cells: file.max_cells.unwrap_or(DEFAULT_MAX_CELLS),
                    ..Default::default()
                };
                Plan::new(spec).unwrap_or_else(|e| panic!("{}: {e}", at(0)));
                checked += 1;
            }
            "python" => {
                run_python(dir.path(), &block.lines.join("\n"), &at(0));
                checked += 1;
            }
            other => panic!(
                "{}: a ```{other} block is not checked; show output in a ```console block \
                 with its `$ herd-sim` command (see tests/integration/readme.rs)",
                at(0)
            ),
        }
    }
    (checked, pictures, dir)
}

/// The files a `sweep`'s shards were merged into in `dir`'s `output/` are `whole`, byte for byte.
fn assert_merged_equal(dir: &Path, whole: &str, merged: &[&str]) {
    let output = dir.join("output");
    let whole_bytes = fs::read(output.join(whole)).unwrap();
    for file in merged {
        assert!(
            fs::read(output.join(file)).unwrap() == whole_bytes,
            "output/{file} is not output/{whole}"
        );
    }
}

#[test]
fn every_block_of_the_readme_is_what_the_binary_does() {
    let (checked, pictures, dir) = check_doc("README.md");
    assert!(checked >= 10, "only {checked} blocks and commands found");
    assert_eq!(pictures, ["docs/herd.png"]);
    // `merge` joins the two shards into what one machine's sweep wrote.
    assert_merged_equal(dir.path(), "peak-by-clients.csv", &["merged.csv"]);
}

#[test]
fn every_block_of_the_sweeps_guide_is_what_the_binary_does() {
    let (checked, _, dir) = check_doc("docs/sweeps-and-clusters.md");
    assert!(checked >= 6, "only {checked} blocks and commands found");
    // "Outgrowing one machine": the shards merged by hand and by deploy/local.sh are the
    // one-machine sweep of "Sweeps", byte for byte.
    assert_merged_equal(
        dir.path(),
        "peak-by-clients.csv",
        &["peak-by-clients-merged.csv", "local.csv"],
    );
}

/// Compiles a ` ```python ` block with `python3`, and runs it in `dir` when pandas is there.
fn run_python(dir: &Path, source: &str, at: &str) {
    let check = "import sys, importlib.util\n\
                 src = sys.stdin.read()\n\
                 code = compile(src, 'block', 'exec')\n\
                 if importlib.util.find_spec('pandas'):\n    exec(code, {})\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", check])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{at}: python3: {e}"));
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), source.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{at}: the python block fails: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks one file of the guide; returns the pictures its commands drew and compared.
fn guide(name: &str, at_least: usize) -> Vec<String> {
    let (checked, pictures, _dir) = check_doc(name);
    assert!(
        checked >= at_least,
        "{name}: only {checked} blocks and commands found"
    );
    pictures
}

#[test]
fn every_block_of_the_models_guide_is_what_the_binary_does() {
    guide("docs/model.md", 5);
}

#[test]
fn every_block_of_the_experiments_guide_is_what_the_binary_does() {
    guide("docs/experiments.md", 5);
}

#[test]
fn every_block_of_the_overload_guide_is_what_the_binary_does() {
    guide("docs/overload.md", 4);
}

#[test]
fn every_block_of_the_retry_control_guide_is_what_the_binary_does() {
    guide("docs/retry-control.md", 5);
}

#[test]
fn every_block_of_the_browser_tabs_guide_is_what_the_binary_does() {
    guide("docs/browser-tabs.md", 3);
}

#[test]
fn every_block_of_the_boundary_guide_is_what_the_binary_does() {
    guide("docs/boundary.md", 3);
}

#[test]
fn every_block_of_the_charts_guide_is_what_the_binary_does() {
    guide("docs/charts-and-reports.md", 5);
}

#[test]
fn every_block_of_the_incidents_guide_is_what_the_binary_does() {
    guide("docs/incidents.md", 2);
}

#[test]
fn every_block_of_the_reports_guide_is_what_the_binary_does() {
    guide("docs/reports.md", 4);
}

#[test]
fn every_block_of_the_fixture_guide_is_what_the_binary_does() {
    guide("docs/fixture.md", 3);
}

#[test]
fn every_block_of_the_advice_guide_is_what_the_binary_does() {
    guide("docs/advice.md", 2);
}

#[test]
fn every_block_of_the_performance_guide_and_the_index_is_what_the_binary_does() {
    guide("docs/performance.md", 0);
    guide("docs/README.md", 0);
}

#[test]
fn every_markdown_file_of_the_guide_is_checked() {
    let mut found: Vec<String> = fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    found.sort();
    let mut listed: Vec<String> = DOCS[1..].iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "every docs/*.md is listed in DOCS (tests/integration/readme.rs) and has a test running \
         its blocks"
    );
}

/// A heading's anchor as GitHub makes it: lower case, spaces to `-`, punctuation but `-` and
/// `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The `(text, target)` of every Markdown link and image outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Code spans hold no links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_link_of_the_readme_and_the_guide_resolves_and_every_picture_is_checked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pictures_shown = Vec::new();
    for name in DOCS {
        let text = doc(name);
        let folder = Path::new(name).parent().unwrap();
        for target in links(&text) {
            if target.starts_with("https://") {
                continue;
            }
            assert!(
                !target.starts_with("http://"),
                "{name}: link {target}: use https"
            );
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file = match path {
                "" => Path::new(name).to_path_buf(),
                path => folder.join(path),
            };
            assert!(
                root.join(&file).exists(),
                "{name}: link {target}: no such file"
            );
            if !fragment.is_empty() {
                let headings: Vec<String> = doc(file.to_str().unwrap())
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|l| anchor(l.trim_start_matches('#')))
                    .collect();
                assert!(
                    headings.iter().any(|h| h == fragment),
                    "{name}: link {target}: no heading with that anchor in {}",
                    file.display()
                );
            }
            if path.ends_with(".png") || path.ends_with(".svg") {
                pictures_shown.push(file.to_str().unwrap().to_string());
            }
        }
    }
    // Every picture shown is drawn again and compared: by a command of the guide, or by a
    // script whose test compares it.
    let mut compared: Vec<String> = Vec::new();
    for name in DOCS {
        for block in blocks(&doc(name)) {
            for line in &block.lines {
                let command = match block.language.as_str() {
                    "sh" => Some(line.as_str()),
                    "console" => line.strip_prefix("$ "),
                    _ => None,
                };
                let script = command.is_some_and(|c| SCRIPTS.iter().any(|s| c.starts_with(s)));
                if let Some(args) = command
                    .filter(|_| !script)
                    .and_then(|c| command_of(c.trim(), name))
                {
                    compared.extend(pictures_of(&args));
                }
            }
        }
    }
    for picture in &pictures_shown {
        let scripted = SCRIPTED_PICTURES.iter().find(|(p, _)| p == picture);
        if let Some((_, script)) = scripted {
            let text = doc(script);
            assert!(
                text.contains(&format!("--png {picture}")),
                "{script} does not draw {picture}"
            );
            continue;
        }
        assert!(
            compared.contains(picture),
            "{picture} is shown but no command of the guide draws it (a command writing it \
             is compared with the committed file), nor a script of SCRIPTED_PICTURES"
        );
    }
    // And every committed picture is shown somewhere.
    for entry in fs::read_dir(root.join("docs")).unwrap() {
        let name = format!("docs/{}", entry.unwrap().file_name().into_string().unwrap());
        if name.ends_with(".png") || name.ends_with(".svg") {
            assert!(
                pictures_shown.contains(&name) || compared.contains(&name),
                "{name} is committed but neither shown nor drawn by the guide: remove it"
            );
        }
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
        command_of("cargo run --release -- --clients 5", "here").unwrap(),
        ["--clients", "5"]
    );
    assert_eq!(
        command_of("cargo test --release   # the tests", "here"),
        None
    );
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
fn experiment_1_figures_over_seeds_0_to_99_are_the_guides() {
    let text = doc("docs/experiments.md");
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
            .unwrap_or_else(|| panic!("docs/experiments.md: no Experiment 1 row `| {label} |`"));
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
            assert!(
                flat.contains(&sentence),
                "docs/experiments.md should say: {sentence}"
            );
        }
    }
}
