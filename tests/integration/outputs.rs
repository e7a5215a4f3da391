//! Integration tests of the outputs rule: every output path (`--out`, `--series-out`, `--png`,
//! `--svg`, `plot --out`, `sweep --out`, `merge --out`) takes `-` for standard output, writes
//! straight into an existing device or FIFO and never replaces it, follows a symbolic link to
//! the file it names (the link stays), refuses two outputs of one run on the same file, and
//! honours the one lock of a path, so no writer replaces a file another herd-sim is writing.

use std::fs;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use herd_sim::output::OutputLock;

use crate::{herd_sim, herd_sim_ok};

/// A small call-loop run: it has a report, a time series and a chart.
const CALL_LOOP: [&str; 10] = [
    "--clients",
    "20",
    "--server",
    "capacity",
    "--workers",
    "2",
    "--timeout",
    "2s",
    "--outage",
    "0s..3s",
];

/// A small sweep.
const SWEEP: [&str; 7] = [
    "sweep",
    "--clients",
    "10,20",
    "--strategy",
    "fixed,full-jitter",
    "--seeds",
    "2",
];

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Starts reading `fifo` to its end on another thread.
fn read_fifo(fifo: &Path) -> thread::JoinHandle<Vec<u8>> {
    let fifo = fifo.to_path_buf();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        fs::File::open(&fifo)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        bytes
    })
}

/// Runs `herd-sim` with `args`, expecting a one-line `error:` with exit `code` that contains
/// every one of `expected`.
fn refused(args: &[&str], extra: &[&Path], code: i32, expected: &[&str]) {
    let out = herd_sim()
        .args(args)
        .args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    for e in expected {
        assert!(stderr.contains(e), "`{e}` not in {stderr}");
    }
    assert!(out.stdout.is_empty(), "nothing written to stdout");
}

/// `args` then `flag path`, as strings.
fn with_path(args: &[&str], flag: &str, path: &Path) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.push(flag.into());
    all.push(path.display().to_string());
    all
}

fn ok_with(args: &[String]) -> Vec<u8> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    herd_sim_ok(&args)
}

#[test]
fn a_fifo_is_written_into_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let expected = herd_sim_ok(&["--clients", "10", "--format", "json"]);
    // A plain run's report, then a sweep's rows, through the same FIFO.
    let reader = read_fifo(&fifo);
    ok_with(&with_path(
        &["--clients", "10", "--format", "json"],
        "--out",
        &fifo,
    ));
    // Checked before joining: a FIFO replaced by a file would leave the reader waiting.
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(
        reader.join().unwrap(),
        expected,
        "the reader got the report"
    );
    let sweep = herd_sim_ok(&SWEEP);
    let reader = read_fifo(&fifo);
    ok_with(&with_path(&SWEEP, "--out", &fifo));
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(reader.join().unwrap(), sweep, "the reader got the sweep");
    // Nothing was made beside it: no temporary, lock or journal.
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // A FIFO cannot be read back, so a sweep cannot resume from it, nor a shard record it.
    let mut resume = with_path(&SWEEP, "--out", &fifo);
    resume.push("--resume".into());
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    refused(&resume, &[], 2, &["--resume", "cannot be read back"]);
    let mut shard = with_path(&SWEEP, "--out", &fifo);
    shard.extend(["--shard".into(), "0/2".into()]);
    let shard: Vec<&str> = shard.iter().map(String::as_str).collect();
    refused(&shard, &[], 2, &["--shard", "a regular file"]);
}

#[test]
fn a_character_device_is_written_into_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let device = dir.path().join("null");
    // The same device as /dev/null (1, 3), made here so the test never risks the real one.
    let made = std::process::Command::new("mknod")
        .arg(&device)
        .args(["c", "1", "3"])
        .output();
    if !matches!(&made, Ok(out) if out.status.success()) {
        eprintln!("skipped: cannot create a character device here (mknod needs root): {made:?}");
        return;
    }
    let series = dir.path().join("series.csv");
    let mut args = with_path(&CALL_LOOP, "--out", &device);
    args.extend(["--png".into(), device.display().to_string()]);
    args.extend(["--series-out".into(), series.display().to_string()]);
    ok_with(&args);
    assert!(fs::metadata(&device).unwrap().file_type().is_char_device());
    assert!(fs::metadata(&series).unwrap().len() > 0);
    ok_with(&with_path(&SWEEP, "--out", &device));
    ok_with(&with_path(
        &[
            "plot",
            series.to_str().unwrap(),
            "--x",
            "window_start_s",
            "--y",
            "succeeded",
        ],
        "--out",
        &device,
    ));
    assert!(fs::metadata(&device).unwrap().file_type().is_char_device());
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 2, "only the device and the series: {names:?}");
}

#[test]
fn a_symbolic_link_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let expected = herd_sim_ok(&["--clients", "10", "--format", "json"]);
    // Dangling at first: the file it names is created.
    for _ in 0..2 {
        ok_with(&with_path(
            &["--clients", "10", "--format", "json"],
            "--out",
            &link,
        ));
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), expected);
    }
    // A sweep grows the file the link names, its lock and journal beside that file.
    let sweep = herd_sim_ok(&SWEEP);
    let rows = dir.path().join("rows.csv");
    std::os::unix::fs::symlink(&real, &rows).unwrap();
    ok_with(&with_path(&SWEEP, "--out", &rows));
    assert!(fs::symlink_metadata(&rows)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read(&real).unwrap(), sweep);
    // A link to standard output (as /dev/stdout is): the report reaches stdout, the link stays.
    let stdout_link = dir.path().join("stdout");
    std::os::unix::fs::symlink("/dev/stdout", &stdout_link).unwrap();
    let through = ok_with(&with_path(
        &["--clients", "10", "--format", "json"],
        "--out",
        &stdout_link,
    ));
    assert_eq!(through, expected);
    assert!(fs::symlink_metadata(&stdout_link)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Each output flag with `-` gives on stdout exactly the bytes it writes to a file.
#[test]
fn a_dash_is_standard_output_for_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name);
    let json = ["--format", "json"];
    let run: Vec<&str> = CALL_LOOP.iter().chain(&json).copied().collect();
    // --out
    ok_with(&with_path(&run, "--out", &file("report.json")));
    let mut dash: Vec<&str> = run.clone();
    dash.extend(["--out", "-"]);
    assert_eq!(herd_sim_ok(&dash), fs::read(file("report.json")).unwrap());
    // --series-out, --png, --svg (the report going to a file so stdout is free).
    for (flag, name) in [
        ("--series-out", "series.csv"),
        ("--png", "chart.png"),
        ("--svg", "chart.svg"),
    ] {
        let mut args = with_path(&run, "--out", &file("r.json"));
        args.extend([flag.into(), file(name).display().to_string()]);
        assert!(ok_with(&args).is_empty());
        let mut args = with_path(&run, "--out", &file("r.json"));
        args.extend([flag.into(), "-".into()]);
        assert_eq!(ok_with(&args), fs::read(file(name)).unwrap(), "{flag} -");
    }
    // sweep --out
    ok_with(&with_path(&SWEEP, "--out", &file("sweep.csv")));
    let mut args: Vec<&str> = SWEEP.to_vec();
    args.extend(["--out", "-"]);
    assert_eq!(herd_sim_ok(&args), fs::read(file("sweep.csv")).unwrap());
    // plot --out
    let plot = |out: &str| {
        herd_sim()
            .args(["plot"])
            .arg(file("sweep.csv"))
            .args([
                "--x", "clients", "--y", "peak", "--by", "strategy", "--out", out,
            ])
            .output()
            .unwrap()
    };
    let to_file = plot(file("peak.png").to_str().unwrap());
    assert!(to_file.status.success());
    let to_stdout = plot("-");
    assert!(to_stdout.status.success());
    assert_eq!(to_stdout.stdout, fs::read(file("peak.png")).unwrap());
    assert!(
        to_stdout.stderr.is_empty(),
        "no `wrote` note for stdout: {}",
        String::from_utf8_lossy(&to_stdout.stderr)
    );
    // merge --out
    let shards: Vec<PathBuf> = (0..2).map(|k| file(&format!("shard-{k}.csv"))).collect();
    for (k, shard) in shards.iter().enumerate() {
        let mut args = with_path(&SWEEP, "--out", shard);
        args.extend(["--shard".into(), format!("{k}/2")]);
        ok_with(&args);
    }
    let merge = |out: &str| {
        herd_sim()
            .args(["merge", "--out", out])
            .args(&shards)
            .output()
            .unwrap()
    };
    assert!(merge(file("merged.csv").to_str().unwrap()).status.success());
    let merged = merge("-");
    assert!(merged.status.success());
    assert_eq!(merged.stdout, fs::read(file("merged.csv")).unwrap());
    assert_eq!(merged.stdout, fs::read(file("sweep.csv")).unwrap());
}

#[test]
fn two_outputs_of_one_run_on_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("same");
    let shown = same.display().to_string();
    // With no --out the report is on stdout: a chart cannot go there too.
    refused(
        &["--clients", "10", "--png", "-"],
        &[],
        2,
        &["--png", "standard output already carries the report"],
    );
    refused(
        &["--clients", "10", "--out", "-", "--svg", "-"],
        &[],
        2,
        &["--svg", "--out writes there too"],
    );
    let mut args: Vec<&str> = CALL_LOOP.to_vec();
    args.extend(["--out", &shown, "--series-out", &shown]);
    refused(
        &args,
        &[],
        2,
        &["--series-out", &shown, "--out writes there too"],
    );
    assert!(!same.exists(), "nothing written");
}

/// A sweep holds the lock of its output for the whole run (its `OutputLock`): a plain run, a
/// chart, a plot or a merge asked to write the same path is refused, and the file is untouched.
#[test]
fn every_writer_honours_a_sweeps_lock() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("rows.csv");
    fs::write(&target, "a sweep's rows\n").unwrap();
    let held = OutputLock::acquire(&target).unwrap();
    let busy = format!(
        "another herd-sim (pid {}) is writing it",
        std::process::id()
    );
    let shown = target.display().to_string();
    refused(&["--clients", "10", "--out", &shown], &[], 1, &[&busy]);
    let chart = dir.path().join("chart.png");
    let _chart_held = OutputLock::acquire(&chart).unwrap();
    refused(
        &[
            "--clients",
            "10",
            "--out",
            "/dev/null",
            "--png",
            chart.to_str().unwrap(),
        ],
        &[],
        1,
        &[&busy],
    );
    assert!(!chart.exists());
    let shards: Vec<PathBuf> = (0..2)
        .map(|k| dir.path().join(format!("shard-{k}.csv")))
        .collect();
    for (k, shard) in shards.iter().enumerate() {
        let mut args = with_path(&SWEEP, "--out", shard);
        args.extend(["--shard".into(), format!("{k}/2")]);
        ok_with(&args);
    }
    refused(
        &["merge", "--out", &shown],
        &[&shards[0], &shards[1]],
        1,
        &[&busy],
    );
    // Through a link to it, too: the lock is the file's, not the name's.
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut sweep: Vec<&str> = SWEEP.to_vec();
    let link_shown = link.display().to_string();
    sweep.extend(["--out", &link_shown]);
    refused(&sweep, &[], 1, &[&busy]);
    assert_eq!(fs::read(&target).unwrap(), b"a sweep's rows\n");
    drop(held);
    herd_sim_ok(&["--clients", "10", "--out", &shown]);
    assert!(fs::read(&target).unwrap().starts_with(b"10 clients"));
}

#[test]
fn merge_refuses_an_output_that_is_one_of_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<PathBuf> = (0..2)
        .map(|k| dir.path().join(format!("shard-{k}.csv")))
        .collect();
    for (k, shard) in shards.iter().enumerate() {
        let mut args = with_path(&SWEEP, "--out", shard);
        args.extend(["--shard".into(), format!("{k}/2")]);
        ok_with(&args);
    }
    let before: Vec<Vec<u8>> = shards.iter().map(|s| fs::read(s).unwrap()).collect();
    let record = dir.path().join("shard-1.csv.shard.json");
    let record_before = fs::read(&record).unwrap();
    let shown = |p: &Path| p.display().to_string();
    // The shard itself, its record, and the shard named through the folder that holds it.
    for out in [shards[0].clone(), record.clone()] {
        refused(
            &["merge", "--out", &shown(&out)],
            &[&shards[0], &shards[1]],
            2,
            &["is one of the inputs", &shown(&out)],
        );
    }
    refused(
        &["merge", "--out", &shown(&shards[1])],
        &[dir.path()],
        2,
        &["is one of the inputs"],
    );
    for (shard, bytes) in shards.iter().zip(&before) {
        assert_eq!(
            &fs::read(shard).unwrap(),
            bytes,
            "{} untouched",
            shard.display()
        );
    }
    assert_eq!(fs::read(&record).unwrap(), record_before);
}

#[test]
fn an_output_under_a_regular_file_says_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    fs::write(&file, "mine").unwrap();
    let under = file.join("deeper/out.json");
    let shown = under.display().to_string();
    let not_a_directory = format!("{} is not a directory", file.display());
    refused(
        &["--clients", "10", "--out", &shown],
        &[],
        2,
        &["invalid --out", &not_a_directory],
    );
    let mut sweep: Vec<&str> = SWEEP.to_vec();
    sweep.extend(["--out", &shown]);
    refused(&sweep, &[], 2, &["invalid --out", &not_a_directory]);
    assert_eq!(fs::read(&file).unwrap(), b"mine");
}

/// Every output of every command, given a folder or a path whose folder cannot be made (one
/// under `/proc`, where no file or folder can be made, root or not): bad input, one line
/// naming the flag, the path and why, exit 2, before anything runs, nothing written beside.
#[test]
fn an_output_that_cannot_be_a_file_is_bad_input_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("a-folder");
    fs::create_dir(&folder).unwrap();
    let shard = dir.path().join("shard.csv");
    let mut args = with_path(&SWEEP, "--out", &shard);
    args.extend(["--shard".into(), "0/1".into()]);
    ok_with(&args);
    let shard = shard.to_str().unwrap();
    let fine = |name: &str| dir.path().join(name).display().to_string();
    let (json, page, png) = (fine("r.json"), fine("p.html"), fine("c.png"));
    let run = ["--clients", "10", "--timeout", "1s", "--format", "json"];
    let boundary = [
        "boundary",
        "--config",
        "configs/collapse-spike.toml",
        "--axis",
        "spike-rate",
        "--range",
        "40..120",
    ];
    let tune = ["tune", "--config", "configs/tune/grpc-throttling.toml"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (run.to_vec(), "--out"),
        ([&run[..], &["--out", &json]].concat(), "--trace"),
        ([&run[..], &["--out", &json]].concat(), "--html"),
        ([&run[..], &["--out", &json]].concat(), "--png"),
        ([&run[..], &["--out", &json]].concat(), "--svg"),
        ([&run[..], &["--out", &json]].concat(), "--series-out"),
        (SWEEP.to_vec(), "--out"),
        ([&SWEEP[..], &["--out", &json]].concat(), "--html"),
        (vec!["merge", shard], "--out"),
        (vec!["lint", "--strategy", "naive"], "--out"),
        (vec!["report", "configs/policy-report.toml"], "--out"),
        (boundary.to_vec(), "--out"),
        ([&boundary[..], &["--out", &json]].concat(), "--png"),
        (
            [&boundary[..], &["--out", &json, "--png", &png]].concat(),
            "--html",
        ),
        (tune.to_vec(), "--out"),
        ([&tune[..], &["--out", &json]].concat(), "--html"),
        (
            [&tune[..], &["--out", &json, "--html", &page]].concat(),
            "--svg",
        ),
        (
            vec![
                "trace-policy",
                "--preset",
                "grpc",
                "--outcomes",
                "error*4,success",
            ],
            "--out",
        ),
    ];
    let folder_shown = folder.display().to_string();
    let nowhere = "/proc/herd-sim-no-such-folder/out";
    for (args, flag) in &cases {
        let at_folder = [&args[..], &[flag, &folder_shown]].concat();
        let said = format!("invalid {flag}: {folder_shown}");
        refused(&at_folder, &[], 2, &[&said, "is a folder, not a file"]);
        let svg_or_not = match *flag {
            "--svg" => format!("{nowhere}.svg"),
            "--png" => format!("{nowhere}.png"),
            _ => nowhere.to_string(),
        };
        let at_nowhere = [&args[..], &[flag, &svg_or_not]].concat();
        let said = format!("invalid {flag}: {svg_or_not}");
        refused(
            &at_nowhere,
            &[],
            2,
            &[&said, "no file can be made in /proc"],
        );
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("shard.csv") && !n.ends_with(".lock"))
            .collect();
        left.sort();
        assert_eq!(left, ["a-folder"], "{args:?} {flag}: nothing written");
        assert_eq!(fs::read_dir(&folder).unwrap().count(), 0);
    }
    // A device that fails while it is written is an I/O error, exit 1, as before.
    refused(
        &["--clients", "10", "--out", "/dev/full"],
        &[],
        1,
        &["/dev/full"],
    );
}
