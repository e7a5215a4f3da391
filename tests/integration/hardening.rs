//! Integration tests of the binary under hostile use: clap's errors as one line, two processes
//! on one output, files orphaned by a kill, and space-separated sweep lists.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::cmd::Command;

fn herd() -> Command {
    Command::cargo_bin("herd-sim").unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn clap_errors_are_one_line_naming_the_flag_the_value_and_what_is_accepted() {
    let cases: [(&[&str], &str); 24] = [
        (
            &["--headers-visible", "yes"],
            "error: invalid value 'yes' for --headers-visible: `yes` is not accepted; accepted: true, false, or the fraction of clients that can read the headers, from 0 to 1",
        ),
        (
            &["--server", "fixed-window", "--headers-visible", "1.5"],
            "error: invalid --headers-visible: 1.5; accepted: true, false, or the fraction of clients that can read the headers, a fraction from 0 to 1",
        ),
        (
            &["--hidden", "1.5"],
            "error: invalid --hidden: 1.5; accepted: the fraction of clients that are hidden tabs at t = 0, a fraction from 0 to 1",
        ),
        (
            &["--hidden", "-0.1"],
            "error: invalid --hidden: -0.1; accepted: the fraction of clients",
        ),
        (
            &["--visibility-switch", "-3m"],
            "error: invalid value '-3m' for --visibility-switch: `-3m` is negative; durations must be zero or more",
        ),
        (
            &["--clock-skew", "gaussian:2s"],
            "error: invalid value 'gaussian:2s' for --clock-skew: `gaussian:2s` is not a clock skew; accepted: a signed duration (2s, -500ms), uniform:LOW..HIGH (uniform:-5s..5s) or normal:MEAN,SD (normal:0s,2s)",
        ),
        (
            &["--when-hidden", "sleep"],
            "error: invalid value 'sleep' for --when-hidden; accepted: retry, pause",
        ),
        (
            &["--hidden", "0.4", "--server", "occ"],
            "error: invalid --hidden: given with --server occ; accepted: browser tabs with any server but occ",
        ),
        (
            &["fixture", "configs/scenarios.json", "--when-hidden", "pause"],
            "error: unexpected argument '--when-hidden' for `herd-sim fixture`; accepted: the flags listed by `herd-sim fixture --help` (hint: --when-hidden is an option of a plain run",
        ),
        (
            &["-1"],
            "error: unexpected argument '-1' for `herd-sim`; accepted: the flags listed by `herd-sim --help` (hint: a number is the value of a flag",
        ),
        (
            &["--clinets", "5"],
            "error: unexpected argument '--clinets' for `herd-sim`; accepted: the flags listed by `herd-sim --help` (hint: did you mean '--clients'?)",
        ),
        (
            &["--format", "xml"],
            "error: invalid value 'xml' for --format; accepted: table, json, csv",
        ),
        (
            &["--clients"],
            "error: a value is required for --clients; accepted: <N> (hint: write it after the flag, e.g. --clients <N>)",
        ),
        (
            &["--seeds", "3"],
            "(hint: --seeds belongs to `herd-sim sweep` and `herd-sim boundary`; or did you mean '--seed'?)",
        ),
        (
            &["sweep", "--seeds", "many"],
            "error: invalid value 'many' for --seeds: `many` is not a whole number",
        ),
        (&["plot", "a.csv"], "error: `herd-sim plot` needs --x, --y"),
        (
            &["plot"],
            "error: `herd-sim plot` needs --x, --y, CSV (hint: usage: herd-sim plot",
        ),
        (
            &["--clients", "abc"],
            "error: invalid value 'abc' for --clients: `abc` is not a whole number",
        ),
        (&["--clients", "1", "--clients", "2"], "error: --clients is given twice"),
        (
            &["--memory-limit", "1GB"],
            "error: invalid value '1GB' for --memory-limit: `1GB` is not a size",
        ),
        (
            &["sweep", "--frob"],
            "error: unexpected argument '--frob' for `herd-sim sweep`",
        ),
        (
            &["fixture", "a", "b"],
            "error: unexpected argument 'b' for `herd-sim fixture`",
        ),
        (
            &["sweep", "--check"],
            "for `herd-sim sweep`; accepted: the flags listed by `herd-sim sweep --help` (hint: --check belongs to `herd-sim fixture` and `herd-sim report`)",
        ),
        (
            &["merge", "--seeds", "3"],
            "(hint: --seeds belongs to `herd-sim sweep` and `herd-sim boundary`)",
        ),
    ];
    for (args, expected) in cases {
        let output = herd().args(args).output().unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    // The one list of server models is what --server offers.
    let server = herd().args(["--server", "dwn"]).output().unwrap();
    assert_eq!(server.status.code(), Some(2));
    assert_eq!(
        text(&server.stderr),
        format!(
            "error: invalid value 'dwn' for --server; accepted: {} (hint: did you mean 'down'?)\n",
            herd_sim::config::SERVER_MODELS.join(", ")
        )
    );
    // --help and --version are clap's own, on stdout, exit 0.
    let help = herd().arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(text(&help.stdout).contains("Usage: herd-sim [OPTIONS]"));
    let version = herd().arg("--version").output().unwrap();
    assert!(version.status.success());
    assert_eq!(
        text(&version.stdout),
        format!("herd-sim {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn sweep_strategies_separated_by_spaces_equal_the_comma_list_and_help_names_them() {
    let spaced = herd()
        .args([
            "sweep",
            "--strategy",
            "full-jitter",
            "fixed",
            "--clients",
            "10",
            "20",
        ])
        .output()
        .unwrap();
    assert!(spaced.status.success(), "{}", text(&spaced.stderr));
    let commas = herd()
        .args([
            "sweep",
            "--strategy",
            "full-jitter,fixed",
            "--clients",
            "10,20",
        ])
        .output()
        .unwrap();
    assert_eq!(spaced.stdout, commas.stdout);
    assert_eq!(text(&spaced.stdout).lines().count(), 1 + 4);
    // A stepped range still reads as one value.
    let stepped = herd()
        .args(["sweep", "--base", "100ms..300ms", "step", "100ms"])
        .output()
        .unwrap();
    assert!(stepped.status.success(), "{}", text(&stepped.stderr));
    assert_eq!(text(&stepped.stdout).lines().count(), 1 + 3);
    let help = text(&herd().args(["sweep", "--help"]).output().unwrap().stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("[default: full-jitter]")
            && help.contains("accepted: naive, fixed, exponential, full-jitter, equal-jitter"),
        "{help}"
    );
}

#[test]
fn orphan_temporary_files_of_dead_processes_are_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    let dead = dir.path().join(format!(".run.json.{}.tmp", dead_pid()));
    // This test process is alive while the run happens.
    let live = dir
        .path()
        .join(format!(".run.json.{}.tmp", std::process::id()));
    fs::write(&dead, "half a file").unwrap();
    fs::write(&live, "being written").unwrap();
    herd()
        .args(["--clients", "10", "--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert!(out.exists());
    assert!(!dead.exists(), "the dead process's orphan is gone");
    assert!(live.exists(), "a live process's temporary is left alone");
}

fn lines_of(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_second_process_on_the_same_sweep_output_is_refused_and_damages_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.csv");
    let lock = dir.path().join(".s.csv.lock");
    // Long enough to outlive the checks below (it is killed at the end): 1000 rows of 1 M
    // clients on one thread, allowed with --yes.
    let long = [
        "sweep",
        "--clients",
        "1000000",
        "--seeds",
        "1000",
        "--threads",
        "1",
        "--yes",
    ];
    let mut first = std::process::Command::new(env!("CARGO_BIN_EXE_herd-sim"))
        .args(long)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = first.id().to_string();
    let started = Instant::now();
    while lines_of(&out).len() < 2 && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(fs::read_to_string(&lock).unwrap().trim(), pid);
    // A second sweep and a --resume of the first, while it runs: one line naming its pid.
    for extra in [&[][..], &["--resume"][..]] {
        let second = herd()
            .args(long)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = text(&second.stderr);
        assert_eq!(second.status.code(), Some(1), "{extra:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: cannot write ")
                && stderr.contains(&format!("another herd-sim (pid {pid}) is writing it")),
            "{stderr}"
        );
    }
    first.kill().unwrap();
    first.wait().unwrap();
    // The first one's file: whole lines, each as wide as the header, rows in order.
    let lines = lines_of(&out);
    let width = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == width));
    let replicate = lines[0].split(',').position(|c| c == "replicate").unwrap();
    for (i, line) in lines[1..].iter().enumerate() {
        assert_eq!(line.split(',').nth(replicate), Some(i.to_string().as_str()));
    }
    // The killed process's lock file stays behind, and a new run takes it over.
    assert!(lock.exists());
    herd()
        .args(["sweep", "--clients", "10", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(lines_of(&out).len(), 2);
    assert!(!lock.exists(), "removed when the sweep finishes");
}

/// Runs the binary with every thread it starts asking for a 1 EiB stack (`RUST_MIN_STACK`,
/// which std's thread builder, and so rayon, reads): more than any address space, so every
/// spawn fails at once, deterministically, while the main thread runs as usual.
fn herd_without_threads(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_herd-sim"))
        .env("RUST_MIN_STACK", (1u64 << 60).to_string())
        .env_remove("RAYON_NUM_THREADS")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn threads_are_bounded_started_after_validation_and_a_failure_is_said_once() {
    for threads in ["0", "1025", "100000"] {
        let output = herd().args(["--threads", threads]).output().unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(text(&output.stderr).contains("accepted: 1 to 1024"));
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.toml");
    fs::write(&config, "not toml [[[").unwrap();
    let config = config.to_str().unwrap();
    let series = dir.path().join("series.csv");
    let series = series.to_str().unwrap();
    // Bad input fails before any thread is started, with or without --threads: a file that is
    // not TOML, and input found bad only once the scenario is valid and its memory estimated
    // (which once asked rayon for its thread count and so started its global pool, here a
    // panic: "The global thread pool has not been initialized").
    for (command, said) in [
        (&["--config", config][..], "TOML parse error"),
        (&["sweep", "--config", config][..], "TOML parse error"),
        (
            &["--server", "occ", "--engine", "independent"][..],
            "error: invalid --engine: independent; ",
        ),
        (
            &["--clients", "10", "--series-out", series][..],
            "error: invalid --series-out: ",
        ),
        (
            &["--clients", "10", "--memory-limit", "1KiB"][..],
            "over the memory budget of 1.0 KiB",
        ),
    ] {
        for threads in [None, Some("1000")] {
            let mut args = command.to_vec();
            args.extend(threads.map(|n| ["--threads", n]).into_iter().flatten());
            let output = herd_without_threads(&args);
            let stderr = text(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains(said), "{args:?}: {stderr}");
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        }
    }
    // Valid input whose threads cannot start: one line, the count asked for (all cores without
    // --threads), the system's reason once, exit 1, no output file.
    let out = dir.path().join("s.csv");
    let out = out.to_str().unwrap();
    let cores = std::thread::available_parallelism()
        .unwrap()
        .get()
        .to_string();
    for (args, threads) in [
        (&["--clients", "10", "--threads", "3"][..], "3"),
        (&["--clients", "10"][..], cores.as_str()),
        (
            &["sweep", "--clients", "10", "--threads", "4", "--out", out][..],
            "4",
        ),
    ] {
        let output = herd_without_threads(args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: cannot start {threads} worker threads: ")),
            "{stderr}"
        );
        assert_eq!(stderr.matches("os error").count(), 1, "{stderr}");
    }
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only bad.toml"
    );
}

#[test]
fn huge_runs_are_refused_up_front_naming_the_estimate_and_the_override() {
    // 4294967295 clients × 5 requests, worked out by hand.
    let output = herd()
        .args(["--clients", "4294967295", "--engine", "event-queue"])
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("requests estimate is 21474836475 requests")
            && stderr.contains("--max-requests 21474836475"),
        "{stderr}"
    );
    // The sweep's estimate sums its rows: (1000 + 1 000 000 clients) × 5 requests × 3 seeds.
    let output = herd()
        .args(["sweep", "--clients", "1000,1000000", "--seeds", "3"])
        .args(["--max-requests", "15014999"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("estimate is 15015000 requests"));
    // Seeds are bounded whatever the grid.
    let output = herd()
        .args(["sweep", "--seeds", "18446744073709551615"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("accepted: a whole number from 1 to 1000000"));
}

#[test]
fn a_run_the_system_cannot_hold_is_one_error_line_not_an_abort() {
    // Latencies up to 10 000 h at 1 ns windows: the dense JSON report alone would take more
    // than 8 EiB, past the largest allocation possible (isize::MAX bytes), yet inside the
    // raised budget. The allocator's refusal is asked up front (no byte is allocated), and
    // nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = herd()
        .args([
            "--latency",
            "uniform:0s..10000h",
            "--bin",
            "1ns",
            "--clients",
            "1",
        ])
        .args(["--format", "json", "--memory-limit", "16700000TiB", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("error: this run needs an estimated ")
            && e.contains(" EiB of it the dense JSON report, chart or series), which the system refused to allocate (--memory-limit 15.9 EiB allows it); widen --bin"),
        "{e}"
    );
    assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn huge_work_is_refused_without_yes_in_one_line_naming_the_estimate() {
    // Worked by hand: a run's work is (clients × (retries + 1) + 10 events of setup) a
    // strategy and replicate; a sweep row's is its requests and 1000 events of setup.
    let cases: [(&[&str], &str); 3] = [
        // 1000 replicates × (1 000 000 × 5 + 10) = 5 000 010 000 events: 500 s.
        (
            &["--clients", "1000000", "--replicates", "1000"],
            "error: this run's work estimate is 5000010000 events (about 8 min at ~10 M events/s), over the 3000000000 events (about 5 min) run without asking; narrow it, or run it anyway with --yes",
        ),
        // 100 rows × (10 000 000 × 5 + 1000) = 5 000 100 000 events.
        (
            &["sweep", "--clients", "10000000", "--seeds", "100"],
            "error: this sweep's work estimate is 5000100000 events (about 8 min at ~10 M events/s), over the 3000000000 events (about 5 min) run without asking; narrow it, or run it anyway with --yes",
        ),
        // The same grid with 200 seeds in two shards: the first holds 100 rows.
        (
            &["sweep", "--clients", "10000000", "--seeds", "200", "--shard", "0/2"],
            "error: this shard's work estimate is 5000100000 events (about 8 min at ~10 M events/s)",
        ),
    ];
    for (args, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.csv");
        let output = herd()
            .args(args)
            .arg("--out")
            .arg(&out)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?}: nothing written"
        );
    }
}

#[test]
fn huge_work_with_yes_is_accepted_and_stops_only_at_an_unwritable_output() {
    // Allowed with --yes, but the output cannot be written: the run stops there, before
    // simulating anything, and says nothing of running it.
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("a-file");
    fs::write(&blocker, "").unwrap();
    for args in [
        &["--clients", "1000000", "--replicates", "1000", "--yes"][..],
        &["sweep", "--clients", "10000000", "--seeds", "100", "--yes"][..],
    ] {
        let output = herd()
            .args(args)
            .arg("--out")
            .arg(blocker.join("out.csv"))
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: invalid --out"),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    // A run under the threshold needs no --yes and says nothing more: 1000 × 5 + 10 events.
    let output = herd()
        .args(["--clients", "1000", "--yes", "--format", "csv"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(text(&output.stderr), "");
}

#[test]
fn a_sweep_plot_or_fixture_flag_on_a_plain_run_names_its_subcommand() {
    let cases: [(&[&str], &str); 14] = [
        (&["--aggregate"], "sweep` and `herd-sim merge"),
        (&["--resume"], "sweep"),
        (&["--seeds", "3"], "sweep"),
        (&["--quiet"], "sweep"),
        (&["--max-cells", "3"], "sweep"),
        (&["--shard", "0/2"], "sweep"),
        (&["--shards", "2"], "sweep"),
        (&["--x", "clients"], "plot"),
        (&["--y", "peak"], "plot"),
        (&["--by", "strategy"], "plot"),
        (&["--where", "base=1"], "plot"),
        (&["--log-x"], "plot"),
        (&["--log-y"], "plot"),
        (&["--check"], "fixture"),
    ];
    for (args, owner) in cases {
        let output = herd().args(args).output().unwrap();
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        let flag = args[0];
        assert!(
            stderr.starts_with(&format!(
                "error: unexpected argument '{flag}' for `herd-sim`"
            )) && stderr.contains(&format!("(hint: {flag} belongs to `herd-sim {owner}`")),
            "{args:?}: {stderr}"
        );
        // No far-fetched flag of a plain run (`--aggregate` → `--failure-rate`); `--seeds`
        // may still be a slip for `--seed`.
        match flag {
            "--seeds" => assert!(stderr.contains("or did you mean '--seed'?"), "{stderr}"),
            _ => assert!(!stderr.contains("did you mean"), "{args:?}: {stderr}"),
        }
    }
}

/// clap checks a command's definition (names, conflicts, value lists) only in code built with
/// debug assertions, which the release profile turns on for clap_builder: each subcommand's
/// `--help` builds and checks its command, and a bad definition would panic (exit 101).
#[test]
fn every_commands_help_passes_claps_own_checks_of_the_definition() {
    let top = herd().arg("--help").output().unwrap();
    assert!(top.status.success(), "{}", text(&top.stderr));
    let top = text(&top.stdout);
    let commands: Vec<String> = top
        .split("Commands:\n")
        .nth(1)
        .expect("a Commands section")
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter(|line| !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next().map(String::from))
        .filter(|name| name != "help")
        .collect();
    assert_eq!(
        commands,
        [
            "fixture",
            "report",
            "plot",
            "sweep",
            "presets",
            "merge",
            "trace-policy",
            "boundary",
            "lint",
            "tune"
        ],
        "{top}"
    );
    for command in &commands {
        let help = herd().args([command.as_str(), "--help"]).output().unwrap();
        assert!(help.status.success(), "{command}: {}", text(&help.stderr));
        assert!(
            text(&help.stdout).contains(&format!("Usage: herd-sim {command}")),
            "{command}"
        );
    }
}

#[test]
fn memory_limits_read_binary_units_and_plain_bytes() {
    for limit in ["512MiB", "16GiB"] {
        let output = herd()
            .args(["--clients", "10", "--memory-limit", limit])
            .output()
            .unwrap();
        assert!(output.status.success(), "{limit}: {}", text(&output.stderr));
    }
    // A plain number is bytes: 100 B is below any run's estimate.
    let output = herd()
        .args(["--clients", "10", "--memory-limit", "100"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("over the memory budget of 100 B;"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_call_loop_runs_csv_json_and_sweep_row_carry_the_same_figures() {
    // One schema for the three: the call-loop columns a single run's CSV had dropped (calls,
    // attempts, goodput, latency) are its JSON's fields and its sweep row's columns, with
    // the same values for the same seed.
    // An outage of the first 2 s (a sweep's --outage is its length).
    let load = [
        "--clients",
        "200",
        "--server",
        "capacity",
        "--timeout",
        "500ms",
        "--workers",
        "5",
    ];
    let table = |bytes: Vec<u8>| -> Vec<Vec<String>> {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(&bytes[..])
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect()
    };
    let ok = |args: &[&str]| {
        let out = herd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        out.stdout
    };
    let sweep = table(ok(
        &[&["sweep", "--quiet", "--outage", "2s"][..], &load].concat()
    ));
    let column = |rows: &[Vec<String>], name: &str| -> String {
        let at = rows[0].iter().position(|c| c == name).unwrap();
        rows[1][at].clone()
    };
    let seed = column(&sweep, "seed");
    let run = |format: &str| {
        let given = ["--outage", "0s..2s", "--seed", &seed, "--format", format];
        ok(&[&load[..], &given].concat())
    };
    let csv = table(run("csv"));
    let json: serde_json::Value = serde_json::from_slice(&run("json")).unwrap();
    let result = &json["results"][0];
    let names = &csv[0][csv[0].iter().position(|c| c == "attempts").unwrap()..];
    assert_eq!(names.len(), 14, "{names:?}");
    for name in names {
        let value = column(&csv, name);
        assert_eq!(value, column(&sweep, name), "{name}");
        match (name.as_str(), &result[name.as_str()]) {
            ("stuck", serde_json::Value::Null) => {
                let recovered = result["recovered_at_s"].is_number();
                assert_eq!(value, if recovered { "0" } else { "1" });
            }
            (_, serde_json::Value::Number(n)) => {
                assert_eq!(value.parse::<f64>().unwrap(), n.as_f64().unwrap(), "{name}")
            }
            (_, other) => panic!("{name}: {other:?} in the JSON"),
        }
    }
    // The run is one refused through the outage, retrying and recovering: the figures are
    // not all zero.
    assert_eq!(column(&csv, "calls"), "200");
    assert!(column(&csv, "refusals_read").parse::<u64>().unwrap() > 0);
    assert_eq!(column(&csv, "stuck"), "0");
}

#[test]
fn an_input_file_of_more_than_16_mib_is_refused_in_one_line_without_reading_it_whole() {
    // A path given by mistake (a trace of gigabytes, /dev/zero) was read whole before parsing.
    // A sparse file of 64 MiB stands for it: it takes no disk, and is refused at 16 MiB.
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.toml");
    fs::File::create(&huge).unwrap().set_len(64 << 20).unwrap();
    let huge = huge.to_str().unwrap();
    let commands: [&[&str]; 7] = [
        &["--config", huge],
        &["sweep", "--config", huge],
        &["lint", "--config", huge],
        &[
            "boundary", "--axis", "clients", "--range", "1..10", "--config", huge,
        ],
        &["tune", "--config", huge],
        &["report", huge],
        &["fixture", huge],
    ];
    for args in commands {
        let out = herd().args(args).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ")
                && stderr.contains(huge)
                && stderr.contains("at most 16 MiB"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_whole_number_past_u64_is_said_to_be_too_large_not_to_be_no_number() {
    // 2^64 is a whole number: the line once told the user to write digits only.
    for args in [
        &["--max-requests", "18446744073709551616"][..],
        &[
            "--server",
            "token-bucket",
            "--capacity",
            "18446744073709551616",
        ],
        &["sweep", "--clients", "18446744073709551616"],
        &["sweep", "--retries", "1,18446744073709551616"],
    ] {
        let out = herd().args(args).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("`18446744073709551616` is too large; at most 18446744073709551615"),
            "{args:?}: {stderr}"
        );
    }
}
