//! Integration tests of sharded sweeps: shards run as separate processes with the schedulers'
//! environment variables, merged, and compared byte for byte with one `sweep`; merges that must
//! be refused; bad `--shard` values.

use std::fs;
use std::path::{Path, PathBuf};

use crate::cmd::Command;

/// The variables `--shard auto` reads: removed from every child, so that a test run inside a
/// real Slurm or Kubernetes job is not steered by it.
const SCHEDULER_VARIABLES: [&str; 6] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "JOB_COMPLETION_INDEX",
    "HERD_SIM_SHARDS",
];

fn herd() -> Command {
    let mut command = Command::cargo_bin("herd-sim").unwrap();
    for name in SCHEDULER_VARIABLES {
        command.env_remove(name);
    }
    command
}

fn ok(command: &mut Command) {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `command`, expecting one `error:` line containing every one of `expected`, exit 2.
fn refused(command: &mut Command, expected: &[&str]) -> String {
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for e in expected {
        assert!(stderr.contains(e), "`{e}` not in {stderr}");
    }
    stderr
}

/// A grid whose cells differ in cost by three orders of magnitude: 10 to 30 000 clients.
const GRID: [&str; 8] = [
    "--clients",
    "10,300,30000",
    "--strategy",
    "fixed,full-jitter",
    "--retries",
    "2",
    "--seeds",
    "3",
];
const GRID_ROWS: usize = 3 * 2 * 3;

fn one_machine(dir: &Path, extra: &[&str]) -> Vec<u8> {
    let out = dir.join(format!("one{}.csv", extra.join("")));
    ok(herd()
        .arg("sweep")
        .args(GRID)
        .args(extra)
        .arg("--out")
        .arg(&out));
    fs::read(out).unwrap()
}

/// How the shard of index `k` of `n` is started: each scheduler's variables in turn.
fn run_shard(k: u64, n: u64, out: &Path, style: usize) {
    let mut command = herd();
    command.arg("sweep").args(GRID).arg("--out").arg(out);
    match style % 5 {
        // Slurm, sbatch --array=0-(n-1).
        0 => command
            .args(["--shard", "auto"])
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", n.to_string()),
        // Slurm, sbatch --array=1-n (no count variable: min and max).
        1 => command
            .args(["--shard", "auto"])
            .env("SLURM_ARRAY_TASK_ID", (k + 1).to_string())
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env("SLURM_ARRAY_TASK_MAX", n.to_string()),
        // Kubernetes Indexed Job, count from the manifest's variable.
        2 => command
            .args(["--shard", "auto"])
            .env("JOB_COMPLETION_INDEX", k.to_string())
            .env("HERD_SIM_SHARDS", n.to_string()),
        // Kubernetes Indexed Job, count as a flag.
        3 => command
            .args(["--shard", "auto", "--shards", &n.to_string()])
            .env("JOB_COMPLETION_INDEX", k.to_string()),
        // By hand.
        _ => command.args(["--shard", &format!("{k}/{n}")]),
    };
    ok(&mut command);
}

fn shard_dir(dir: &Path, n: u64) -> PathBuf {
    let shards = dir.join(format!("shards-{n}"));
    for k in 0..n {
        run_shard(
            k,
            n,
            &shards.join(format!("part-{k:03}.csv")),
            (k + n) as usize,
        );
    }
    shards
}

fn data_rows(path: &Path) -> usize {
    fs::read_to_string(path).unwrap().lines().count() - 1
}

#[test]
fn shards_under_each_scheduler_merge_into_the_one_machine_file() {
    let dir = tempfile::tempdir().unwrap();
    let whole = one_machine(dir.path(), &[]);
    assert_eq!(
        String::from_utf8_lossy(&whole).lines().count(),
        GRID_ROWS + 1
    );
    // N = 1, a few, and more shards than rows (most of them empty).
    for n in [1u64, 4, 7, GRID_ROWS as u64 + 7] {
        let shards = shard_dir(dir.path(), n);
        let rows: usize = (0..n)
            .map(|k| data_rows(&shards.join(format!("part-{k:03}.csv"))))
            .sum();
        assert_eq!(rows, GRID_ROWS, "every row in exactly one shard of {n}");
        let merged = dir.path().join(format!("merged-{n}.csv"));
        ok(herd().args(["merge", "--out"]).arg(&merged).arg(&shards));
        assert_eq!(fs::read(&merged).unwrap(), whole, "{n} shards");
    }
    // Balanced by work, not count. Rows of 10, 300 and 30 000 clients with 3 attempts each
    // cost 1000 + 30, 1000 + 900 and 1000 + 90 000; a strategy's block of 9 rows sums to
    // 281 790, the grid to C = 563 580. Row i goes to shard ⌊4·(P + c/2)/C⌋ (P: the cost before
    // it): fixed's rows 0–6 have middles up to 54 290, under C/4 = 140 895 (shard 0); rows 7
    // and 8 at 145 290 and 236 290 (shard 1); full jitter repeats this half a grid later.
    let counts: Vec<usize> = (0..4)
        .map(|k| data_rows(&dir.path().join(format!("shards-4/part-{k:03}.csv"))))
        .collect();
    assert_eq!(counts.iter().sum::<usize>(), GRID_ROWS);
    assert_eq!(counts, [7, 2, 7, 2]);
    // The aggregate merge is what `sweep --aggregate` writes.
    let aggregate = one_machine(dir.path(), &["--aggregate"]);
    let merged = dir.path().join("merged-aggregate.csv");
    ok(herd()
        .args(["merge", "--aggregate", "--out"])
        .arg(&merged)
        .arg(dir.path().join("shards-4")));
    assert_eq!(fs::read(&merged).unwrap(), aggregate);
}

#[test]
fn a_shard_resumes_and_duplicates_that_agree_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let whole = one_machine(dir.path(), &[]);
    let shards = shard_dir(dir.path(), 3);
    let part = shards.join("part-001.csv");
    let finished = fs::read(&part).unwrap();
    // Cut after the header and one row, as a kill would leave it, then resume.
    let text = String::from_utf8(finished.clone()).unwrap();
    let cut: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    fs::write(&part, cut).unwrap();
    ok(herd()
        .arg("sweep")
        .args(GRID)
        .args(["--shard", "1/3", "--resume", "--out"])
        .arg(&part));
    assert_eq!(fs::read(&part).unwrap(), finished);
    // A copy of a shard (and a rerun of the whole sweep as one shard) overlap the others.
    fs::copy(&part, shards.join("copy.csv")).unwrap();
    fs::copy(
        shards.join("part-001.csv.shard.json"),
        shards.join("copy.csv.shard.json"),
    )
    .unwrap();
    run_shard(0, 1, &shards.join("all.csv"), 4);
    let merged = dir.path().join("merged.csv");
    ok(herd().args(["merge", "--out"]).arg(&merged).arg(&shards));
    assert_eq!(fs::read(&merged).unwrap(), whole);
}

#[test]
fn merges_of_missing_foreign_or_tampered_shards_are_refused_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let shards = shard_dir(dir.path(), 4);
    let out = dir.path().join("never.csv");
    let merge = |inputs: &[PathBuf]| {
        let mut command = herd();
        command.args(["merge", "--out"]).arg(&out).args(inputs);
        command
    };
    let part = |k: u64| shards.join(format!("part-{k:03}.csv"));
    let all: Vec<PathBuf> = (0..4).map(part).collect();

    // A missing shard: its cells and its K/N are named.
    let without_2: Vec<PathBuf> = [0, 1, 3].map(part).to_vec();
    refused(
        &mut merge(&without_2),
        &[
            "7 of the sweep's 18 rows are missing",
            "cell 3 (strategy=full-jitter, clients=10)",
            "rerun shard 2/4",
        ],
    );
    assert!(!out.exists());

    // A shard of another grid.
    let other = dir.path().join("other.csv");
    ok(herd()
        .args(["sweep", "--clients", "10,20", "--shard", "0/1", "--out"])
        .arg(&other));
    let mut with_other = all.clone();
    with_other.push(other.clone());
    refused(
        &mut merge(&with_other),
        &["shards of different sweeps", "other.csv"],
    );
    assert!(!out.exists());

    // A tampered metric (the last field of the first row) and a tampered seed.
    let original = fs::read_to_string(part(2)).unwrap();
    let mut lines: Vec<String> = original.lines().map(String::from).collect();
    let cut = lines[1].rfind(',').unwrap();
    lines[1] = format!("{}9{}", &lines[1][..=cut], &lines[1][cut + 1..]);
    fs::write(part(2), lines.join("\n") + "\n").unwrap();
    refused(
        &mut merge(&all),
        &[
            "part-002.csv was changed after shard 2/4 wrote it",
            "digest",
        ],
    );
    assert!(!out.exists());
    let mut lines: Vec<String> = original.lines().map(String::from).collect();
    let fields: Vec<&str> = lines[2].split(',').collect();
    let seed_column = original
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "seed")
        .unwrap();
    let mut changed: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    changed[seed_column] = "12345".into();
    lines[2] = changed.join(",");
    fs::write(part(2), lines.join("\n") + "\n").unwrap();
    refused(
        &mut merge(&all),
        &["part-002.csv was changed", "its row 2 is not row"],
    );
    assert!(!out.exists());

    // Two copies of one shard that disagree.
    fs::write(part(2), &original).unwrap();
    let copy = shards.join("copy.csv");
    let mut lines: Vec<String> = original.lines().map(String::from).collect();
    let cut = lines[3].rfind(',').unwrap();
    lines[3] = format!("{}9{}", &lines[3][..=cut], &lines[3][cut + 1..]);
    fs::write(&copy, lines.join("\n") + "\n").unwrap();
    fs::copy(
        shards.join("part-002.csv.shard.json"),
        shards.join("copy.csv.shard.json"),
    )
    .unwrap();
    let mut with_copy = all.clone();
    with_copy.push(copy);
    refused(
        &mut merge(&with_copy),
        &["differs between", "part-002.csv", "copy.csv"],
    );
    assert!(!out.exists());

    // Untouched, the same shards merge.
    ok(&mut merge(&all));
    assert_eq!(data_rows(&out), GRID_ROWS);
}

#[test]
fn bad_shard_and_merge_input_gets_one_clear_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.csv");
    let sweep = |args: &[&str]| {
        let mut command = herd();
        command
            .args(["sweep", "--clients", "10,20"])
            .args(args)
            .arg("--out")
            .arg(&out);
        command
    };
    refused(
        &mut sweep(&["--shard", "3/2"]),
        &["invalid --shard: 3/2", "K/N"],
    );
    refused(
        &mut sweep(&["--shard", "0/0"]),
        &["invalid --shard: 0/0", "K/N"],
    );
    refused(
        &mut sweep(&["--shard", "auto"]),
        &[
            "invalid --shard: auto",
            "SLURM_ARRAY_TASK_ID",
            "JOB_COMPLETION_INDEX",
        ],
    );
    refused(
        sweep(&["--shard", "auto"]).env("JOB_COMPLETION_INDEX", "1"),
        &["--shards N", "HERD_SIM_SHARDS"],
    );
    refused(
        &mut sweep(&["--shard", "1/2", "--aggregate"]),
        &["merge --aggregate"],
    );
    assert!(!out.exists());
    assert!(!dir.path().join("never.csv.shard.json").exists());

    let merge = |inputs: &[&Path]| {
        let mut command = herd();
        command.args(["merge", "--out"]).arg(&out).args(inputs);
        command
    };
    refused(&mut merge(&[]), &["nothing to merge"]);
    refused(&mut merge(&[dir.path()]), &["holds no shard records"]);
    // A plain sweep's CSV is not a shard.
    let plain = dir.path().join("plain.csv");
    ok(herd()
        .args(["sweep", "--clients", "10,20", "--out"])
        .arg(&plain));
    refused(
        &mut merge(&[&plain]),
        &["plain.csv is not a shard", "--shard K/N"],
    );
    // Shards of two sweeps (another master seed): two fingerprints.
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    ok(herd()
        .args(["sweep", "--clients", "10,20", "--shard", "0/2", "--out"])
        .arg(&a));
    ok(herd()
        .args([
            "sweep",
            "--clients",
            "10,20",
            "--seed",
            "7",
            "--shard",
            "1/2",
            "--out",
        ])
        .arg(&b));
    refused(&mut merge(&[&a, &b]), &["different sweeps", "fingerprints"]);
    assert!(!out.exists());
}
