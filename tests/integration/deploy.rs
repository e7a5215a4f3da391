//! The files of `deploy/` are checked as far as this machine can without a cluster: the shell
//! scripts pass `bash -n`, the Kubernetes manifests parse as YAML and hang together (volumes,
//! claims, counts), and then each is *run* with a small sweep — `deploy/local.sh` as it is, the
//! Slurm script through a stand-in `sbatch` that runs an array's tasks with the variables Slurm
//! sets, the manifests' container commands with the variables the Job controller sets and their
//! mount paths moved into a scratch folder — and the merged file is compared byte for byte with
//! one `herd-sim sweep` of the same grid. Neither a real Slurm nor a real Kubernetes ran here.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use yaml_rust2::{Yaml, YamlLoader};

const SCHEDULER_VARIABLES: [&str; 13] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_CPUS_PER_TASK",
    "SLURM_CPUS_ON_NODE",
    "SLURM_MEM_PER_NODE",
    "SLURM_MEM_PER_CPU",
    "SBATCH_MEM_PER_NODE",
    "SBATCH_MEM_PER_CPU",
    "SBATCH_CPUS_PER_TASK",
    "JOB_COMPLETION_INDEX",
    "HERD_SIM_SHARDS",
];

/// A small grid of uneven cells: 10 to 3000 clients, two strategies, three seeds (18 rows).
const GRID: [&str; 6] = [
    "--clients",
    "10,300,3000",
    "--strategy",
    "fixed,full-jitter",
    "--seeds",
    "3",
];

/// One cell estimated past 1 MiB (its 100 000 clients' events behind a limiter, some 8 MiB).
const BIG: [&str; 6] = [
    "--clients",
    "100000",
    "--server",
    "sliding-window",
    "--limit",
    "20",
];

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A command with no scheduler variable inherited from a real job the tests may run in.
fn process(program: impl AsRef<std::ffi::OsStr>) -> Process {
    let mut command = Process::new(program);
    for name in SCHEDULER_VARIABLES {
        command.env_remove(name);
    }
    command
}

/// Runs `command`, which must be refused as bad input: exit 2, one `error:` line on stderr
/// and nothing on stdout. Returns the line.
fn refused(command: &mut Process) -> String {
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{command:?}: {stderr}");
    assert!(
        output.stdout.is_empty(),
        "{command:?}: stdout {:?}",
        output.stdout
    );
    assert_eq!(stderr.lines().count(), 1, "{command:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr
}

fn succeed(command: &mut Process) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `herd-sim sweep ARGS --out OUT` on one machine: what every deployment must reproduce.
fn one_machine(args: &[&str], out: &Path) -> Vec<u8> {
    succeed(
        process(env!("CARGO_BIN_EXE_herd-sim"))
            .arg("sweep")
            .args(args)
            .arg("--out")
            .arg(out),
    );
    fs::read(out).unwrap()
}

/// `PATH` with the folder of the herd-sim under test first (and `extra` before it).
fn path_with(extra: Option<&Path>) -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_herd-sim"));
    let mut dirs: Vec<PathBuf> = extra.map(Path::to_path_buf).into_iter().collect();
    dirs.push(bin.parent().unwrap().to_path_buf());
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn the_shell_scripts_pass_bash_n_and_the_sbatch_directives_are_options() {
    for script in [
        "deploy/local.sh",
        "deploy/slurm/sweep.sbatch",
        "scripts/slurm-e2e.sh",
        "scripts/containerfile-build.sh",
        "scripts/k8s-validate.sh",
        "deploy/k8s/run.sh",
    ] {
        succeed(process("bash").arg("-n").arg(repository().join(script)));
    }
    let sbatch = fs::read_to_string(repository().join("deploy/slurm/sweep.sbatch")).unwrap();
    let directives: Vec<&str> = sbatch
        .lines()
        .filter_map(|l| l.strip_prefix("#SBATCH "))
        .collect();
    assert!(directives.len() >= 4, "{directives:?}");
    for d in &directives {
        // sbatch reads `--name=value` or `--name` (no spaces, no short forms, for clarity).
        let name = d
            .strip_prefix("--")
            .unwrap_or_else(|| panic!("#SBATCH {d}"));
        let name = name.split('=').next().unwrap();
        assert!(
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
            "#SBATCH {d}"
        );
    }
    // Directives are read only before the first command.
    let first_command = sbatch
        .lines()
        .position(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap();
    assert!(sbatch
        .lines()
        .skip(first_command)
        .all(|l| !l.starts_with("#SBATCH")));
}

#[test]
fn local_sh_runs_the_shards_on_this_machines_cores_into_the_one_machine_file() {
    let dir = tempfile::tempdir().unwrap();
    for (n, extra) in [(5, None), (3, Some("--aggregate"))] {
        let args: Vec<&str> = GRID.iter().copied().chain(extra).collect();
        let whole = one_machine(&args, &dir.path().join(format!("one-{n}.csv")));
        let out = dir.path().join(format!("local-{n}.csv"));
        succeed(
            process("bash")
                .arg(repository().join("deploy/local.sh"))
                .arg(n.to_string())
                .arg(&out)
                .args(&args)
                .env("PATH", path_with(None))
                .env("JOBS", "2"),
        );
        assert_eq!(fs::read(&out).unwrap(), whole, "{n} shards {extra:?}");
        let shards = fs::read_dir(dir.path().join(format!("local-{n}.csv.shards")))
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".shard.json")
            })
            .count();
        assert_eq!(shards, n);
    }
}

/// A stand-in for `sbatch`: runs the job at once, an array's tasks one after another with the
/// variables Slurm gives them (`SLURM_ARRAY_TASK_ID`, `_MIN`, `_MAX`, `_COUNT`), their output
/// into log files as Slurm does; a job with `--dependency=afterok:ID` runs only if job ID
/// succeeded. Every call is logged to `$FAKE_SBATCH_STATE/calls`.
const FAKE_SBATCH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
state=${FAKE_SBATCH_STATE:?}
parsable=0 array="" dependency=""
# The task's memory in MB as Slurm gives it: SBATCH_MEM_PER_NODE over the script's #SBATCH.
while [ "$#" -gt 0 ]; do
    case "$1" in
        --parsable) parsable=1 ;;
        --array=*) array=${1#--array=} ;;
        --dependency=*) dependency=${1#--dependency=} ;;
        --job-name=* | --output=*) ;;
        --*) echo "fake sbatch: unexpected option $1" >&2; exit 1 ;;
        *) break ;;
    esac
    shift
done
script=$1
shift
mem=${SBATCH_MEM_PER_NODE:-$(sed -n 's/^#SBATCH --mem=//p' "$script")}
case "$mem" in
    *G) mem=$((${mem%G} * 1024)) ;;
    *M) mem=${mem%M} ;;
esac
id=$(cat "$state/next" 2>/dev/null || echo 1000)
echo $((id + 1)) > "$state/next"
echo "job $id array=$array dependency=$dependency args=$*" >> "$state/calls"
[ "$parsable" = 1 ] || { echo "fake sbatch: call without --parsable" >&2; exit 1; }
status=ok
if [ -n "$dependency" ]; then
    case "$dependency" in
        afterok:*) [ "$(cat "$state/status-${dependency#afterok:}")" = ok ] || status=never ;;
        *) echo "fake sbatch: unexpected dependency $dependency" >&2; exit 1 ;;
    esac
fi
if [ "$status" = ok ] && [ -n "$array" ]; then
    range=${array%%\%*}
    min=${range%-*} max=${range#*-}
    for ((task = min; task <= max; task++)); do
        SLURM_JOB_ID=$id SLURM_ARRAY_JOB_ID=$id SLURM_ARRAY_TASK_ID=$task \
        SLURM_ARRAY_TASK_MIN=$min SLURM_ARRAY_TASK_MAX=$max \
        SLURM_ARRAY_TASK_COUNT=$((max - min + 1)) SLURM_CPUS_PER_TASK=1 \
        SLURM_CPUS_ON_NODE=1 SLURM_MEM_PER_NODE=$mem \
            bash "$script" "$@" > "$state/log-${id}_$task" 2>&1 || status=failed
    done
elif [ "$status" = ok ]; then
    SLURM_JOB_ID=$id bash "$script" "$@" > "$state/log-$id" 2>&1 || status=failed
fi
echo "$status" > "$state/status-$id"
echo "$id;cluster"
"#;

#[test]
fn the_slurm_script_submits_an_array_of_shards_and_a_dependent_merge() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let state = dir.path().join("state");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&state).unwrap();
    let sbatch = bin.join("sbatch");
    fs::write(&sbatch, FAKE_SBATCH).unwrap();
    succeed(process("chmod").arg("+x").arg(&sbatch));
    let submit = |n: u64, out: &Path, args: &[&str]| {
        let mut command = process("bash");
        command
            .arg(repository().join("deploy/slurm/sweep.sbatch"))
            .arg("submit")
            .arg(n.to_string())
            .arg(out)
            .args(args)
            .env("PATH", path_with(Some(&bin)))
            .env("FAKE_SBATCH_STATE", &state)
            .current_dir(dir.path());
        command
    };
    // More shards than rows (18), and a few; tidy and aggregated.
    for (n, extra) in [(25u64, None), (4, Some("--aggregate"))] {
        let args: Vec<&str> = GRID.iter().copied().chain(extra).collect();
        let whole = one_machine(&args, &dir.path().join(format!("one-{n}.csv")));
        let out = dir.path().join(format!("slurm-{n}.csv"));
        let said = succeed(&mut submit(n, &out, &args));
        assert!(said.contains(&format!("({n} tasks)")), "{said}");
        assert_eq!(fs::read(&out).unwrap(), whole, "{n} shards {extra:?}");
    }
    let calls = fs::read_to_string(state.join("calls")).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert!(lines[0].starts_with("job 1000 array=0-24 dependency= args=shard "));
    assert!(lines[1].starts_with("job 1001 array= dependency=afterok:1000 args=merge "));
    assert!(lines[3].contains("dependency=afterok:1002") && lines[3].ends_with("--aggregate"));
    // The plan ran first, with the tasks' memory (the script's --mem=2G) as the limit.
    let said = succeed(&mut submit(2, &dir.path().join("planned.csv"), &GRID));
    assert!(said.contains("under the limit of 2.0 GiB"), "{said}");
    assert!(said.contains("shards: 2,"), "{said}");
    let calls_before = fs::read_to_string(state.join("calls")).unwrap();
    // A flag the sweep refuses, a shard over its memory (SBATCH_MEM_PER_NODE, as sbatch
    // reads it, of 1 MiB) or a flag given twice: refused at submit, nothing submitted, no
    // folder made (before, the tasks failed and the merge waited forever).
    let out = dir.path().join("never.csv");
    let line = refused(&mut submit(2, &out, &["--clients", "0"]));
    assert!(line.contains("--clients"), "{line}");
    let line = refused(submit(2, &out, &BIG).env("SBATCH_MEM_PER_NODE", "1M"));
    assert!(line.contains("memory budget of 1.0 MiB"), "{line}");
    let line = refused(&mut submit(2, &out, &["--threads", "2"]));
    assert!(line.contains("--threads"), "{line}");
    // A --memory-limit of the user's wins over the task's.
    succeed(
        submit(
            2,
            &dir.path().join("own-limit.csv"),
            &[&BIG[..], &["--memory-limit", "64MiB"]].concat(),
        )
        .env("SBATCH_MEM_PER_NODE", "1M"),
    );
    let calls = fs::read_to_string(state.join("calls")).unwrap();
    assert_eq!(
        calls.lines().count(),
        calls_before.lines().count() + 2,
        "{calls}"
    );
    assert!(!out.exists());
    assert!(!dir.path().join("never.csv.shards").exists());
}

/// The shard role inside a task, with the memory variables Slurm sets: the task's memory is
/// herd-sim's --memory-limit, in MiB.
#[test]
fn a_slurm_tasks_memory_becomes_the_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |vars: &[(&str, &str)], extra: &[&str]| {
        let mut command = process("bash");
        command
            .arg(repository().join("deploy/slurm/sweep.sbatch"))
            .arg("shard")
            .arg(dir.path())
            .args(BIG)
            .args(extra)
            .env("PATH", path_with(None))
            .envs([
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "1"),
            ])
            .envs(vars.iter().copied());
        command
    };
    // A cell of 100 000 clients' events behind a limiter (some 8 MiB): 2 MiB is too little.
    let line = refused(&mut shard(&[("SLURM_MEM_PER_NODE", "2")], &[]));
    assert!(line.contains("over the memory budget of 2.0 MiB"), "{line}");
    // Per CPU: 1 MB times the 2 CPUs of the node.
    let line = refused(&mut shard(
        &[("SLURM_MEM_PER_CPU", "1"), ("SLURM_CPUS_ON_NODE", "2")],
        &[],
    ));
    assert!(line.contains("over the memory budget of 2.0 MiB"), "{line}");
    assert!(!dir.path().join("part-0.csv").exists());
    // The flag of the user's wins; then a task with enough memory runs its shard.
    succeed(&mut shard(
        &[("SLURM_MEM_PER_NODE", "2")],
        &["--memory-limit", "1GiB"],
    ));
    fs::remove_file(dir.path().join("part-0.csv")).unwrap();
    succeed(&mut shard(&[("SLURM_MEM_PER_NODE", "2048")], &[]));
    let whole = one_machine(&BIG, &dir.path().join("one.csv"));
    assert_eq!(fs::read(dir.path().join("part-0.csv")).unwrap(), whole);
}

/// `GRID` with 4 retries and fixed waits only (6 rows): row costs worked out by hand below.
const PLAN_GRID: [&str; 10] = [
    "--clients",
    "10,300,3000",
    "--strategy",
    "fixed",
    "--retries",
    "4",
    "--seeds",
    "2",
    "--server",
    "down",
];

/// The rows of each of `count` shards as the documented rule cuts them: row i of cost c, with
/// P the cost before it and C the total, is in shard ⌊N·(2P + c) / 2C⌋.
fn rows_per_shard(costs: &[u128], count: u128) -> Vec<u64> {
    let total: u128 = costs.iter().sum();
    let mut rows = vec![0; count as usize];
    let mut before = 0;
    for &c in costs {
        let shard = (count * (2 * before + c) / (2 * total)).min(count - 1);
        rows[shard as usize] += 1;
        before += c;
    }
    rows
}

/// `shard\tfirst_row\trows\trequests\twork_events` lines of a plan: (first row, rows, work).
fn plan_table(plan: &str) -> Vec<(u64, u64, u128)> {
    let mut lines = plan.lines().skip_while(|l| !l.starts_with("shard\t"));
    assert_eq!(
        lines.next(),
        Some("shard\tfirst_row\trows\trequests\twork_events"),
        "{plan}"
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn sweep_plan_prints_the_grid_the_estimates_and_each_shards_rows_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.csv");
    let plan = |extra: &[&str]| {
        succeed(
            process(env!("CARGO_BIN_EXE_herd-sim"))
                .arg("sweep")
                .arg("--plan")
                .args(PLAN_GRID)
                .args(extra)
                .arg("--out")
                .arg(&out),
        )
    };
    // A run of c clients with 4 retries sends at most 5c requests (every one refused by the
    // down server); a row costs 1000 more: 1050, 2500 and 16 000 events, twice each.
    let costs: [u128; 6] = [1050, 1050, 2500, 2500, 16_000, 16_000];
    let whole = plan(&[]);
    assert!(whole.contains("\ncells: 3\n"), "{whole}");
    assert!(whole.contains("\nrows: 6 (3 cells × 2 seeds"), "{whole}");
    assert!(whole.contains("\nwork: 39100 events"), "{whole}");
    assert!(whole.contains("under the limit of 16.0 GiB"), "{whole}");
    // By hand for 2 shards: the middle of row 5 is at (2·23 100 + 16 000) / 2 = 31 100 of
    // 39 100, past the half: rows 0-4 and row 5.
    assert_eq!(rows_per_shard(&costs, 2), [5, 1]);
    for count in [1u64, 2, 3, 4, 25] {
        let text = plan(&["--shards", &count.to_string()]);
        let table = plan_table(&text);
        let rows: Vec<u64> = table.iter().map(|t| t.1).collect();
        assert_eq!(rows, rows_per_shard(&costs, u128::from(count)), "{text}");
        // Blocks in order, covering the grid; each shard's work is its rows' costs.
        let mut first = 0;
        for &(start, n, work) in &table {
            assert_eq!(start, first);
            let expected: u128 = costs[start as usize..(start + n) as usize].iter().sum();
            assert_eq!(work, expected, "{text}");
            first += n;
        }
        assert_eq!(first, 6);
        let largest = table.iter().map(|t| t.2).max().unwrap();
        let mean = 39_100.0 / count as f64;
        assert!(
            text.contains(&format!(
                "the largest is {largest} events, {:.2} × the mean",
                largest as f64 / mean
            )),
            "{text}"
        );
        // What the shards then run, as their records say.
        if count == 3 || count == 25 {
            for (k, &(start, n, _)) in table.iter().enumerate() {
                let part = dir.path().join(format!("run-{count}/part-{k}.csv"));
                fs::create_dir_all(part.parent().unwrap()).unwrap();
                succeed(
                    process(env!("CARGO_BIN_EXE_herd-sim"))
                        .arg("sweep")
                        .args(PLAN_GRID)
                        .args(["--shard", &format!("{k}/{count}"), "--out"])
                        .arg(&part),
                );
                let record = fs::read_to_string(format!("{}.shard.json", part.display())).unwrap();
                let record: serde_json::Value = serde_json::from_str(&record).unwrap();
                assert_eq!(record["first_row"], start, "{record}");
                assert_eq!(record["rows"], n, "{record}");
            }
        }
    }
    // --shard K/N shows the same table and names the shard.
    let one = plan(&["--shard", "1/3"]);
    assert!(one.contains("this process runs shard 1/3"), "{one}");
    assert_eq!(plan_table(&one), plan_table(&plan(&["--shards", "3"])));
    // The memory it prints is what a sweep under a smaller limit is refused with.
    let memory = whole
        .lines()
        .find_map(|l| l.strip_prefix("memory: "))
        .and_then(|l| l.split(" estimated").next())
        .unwrap()
        .to_string();
    let line = refused(
        process(env!("CARGO_BIN_EXE_herd-sim"))
            .args(["sweep", "--plan", "--memory-limit", "64KiB"])
            .args(PLAN_GRID),
    );
    assert!(
        line.contains(&format!("needs an estimated {memory} (")),
        "{line} / {memory}"
    );
    // Nothing written: not the output, its lock, its journal or a record.
    assert_eq!(
        fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| !e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("run-"))
            .count(),
        0
    );
}

#[test]
fn sweep_plan_refuses_what_the_sweep_or_a_shard_would_in_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.csv");
    for (args, named) in [
        (&["--clients", "0"][..], "--clients"),
        (&["--clients", "10", "--shards", "0"], "--shards"),
        (&["--clients", "10", "--shards", "x"], "--shards"),
        (
            &["--clients", "10", "--shards", "2", "--aggregate"],
            "--aggregate",
        ),
        (&["--clients", "10", "--shard", "2/2"], "--shard"),
        (&["--clients", "10", "--shard", "auto"], "--shard"),
        // A shard's own limits: each of 2 shards of 10^6 clients × 5 requests × 100 seeds.
        (
            &[
                "--clients",
                "1000000",
                "--seeds",
                "200",
                "--shards",
                "2",
                "--max-requests",
                "1000",
            ],
            "--max-requests 500000000",
        ),
        (&["--base", "2s", "--cap", "1s"], "cap"),
        (&["--bogus"], "--bogus"),
    ] {
        let line = refused(
            process(env!("CARGO_BIN_EXE_herd-sim"))
                .args(["sweep", "--plan"])
                .args(args)
                .arg("--out")
                .arg(&out),
        );
        assert!(line.contains(named), "{args:?}: {line}");
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn documents(path: &str) -> Vec<Yaml> {
    let text = fs::read_to_string(repository().join(path)).unwrap();
    YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn text(y: &Yaml) -> &str {
    y.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {y:?}"))
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec()
        .unwrap_or_else(|| panic!("expected a list, got {y:?}"))
        .iter()
        .map(|s| text(s).to_string())
        .collect()
}

/// One container of a Job, as the test runs it.
struct Container {
    args: Vec<String>,
    env: BTreeMap<String, String>,
    /// `(mount path, volume name)`.
    mounts: Vec<(String, String)>,
}

fn container(job: &Yaml, claims: &[String], config_maps: &[String]) -> Container {
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(text(&pod["restartPolicy"]), "Never");
    let containers = pod["containers"].as_vec().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert!(text(&c["image"]).starts_with("herd-sim:"));
    // The image runs as an unprivileged user that can write the volume through fsGroup, on
    // a read-only root (herd-sim writes only beside --out).
    let security = &pod["securityContext"];
    assert_eq!(security["runAsNonRoot"].as_bool(), Some(true));
    let containerfile = fs::read_to_string(repository().join("deploy/Containerfile")).unwrap();
    let user = containerfile
        .lines()
        .find_map(|l| l.strip_prefix("USER "))
        .unwrap();
    assert_eq!(
        format!(
            "{}:{}",
            security["runAsUser"].as_i64().unwrap(),
            security["runAsGroup"].as_i64().unwrap()
        ),
        user
    );
    assert!(security["fsGroup"].as_i64().is_some());
    assert_eq!(
        c["securityContext"]["readOnlyRootFilesystem"].as_bool(),
        Some(true)
    );
    assert_eq!(
        c["securityContext"]["allowPrivilegeEscalation"].as_bool(),
        Some(false)
    );
    // Values, or the container's own memory limit in bytes as the downward API gives it.
    let env = c["env"]
        .as_vec()
        .map(|v| {
            v.iter()
                .map(|e| {
                    let value = match e["value"].as_str() {
                        Some(value) => value.to_string(),
                        None => {
                            let field = &e["valueFrom"]["resourceFieldRef"];
                            assert_eq!(text(&field["containerName"]), text(&c["name"]));
                            assert_eq!(text(&field["resource"]), "limits.memory");
                            assert!(field["divisor"].is_badvalue(), "bytes: {field:?}");
                            quantity(text(&c["resources"]["limits"]["memory"])).to_string()
                        }
                    };
                    (text(&e["name"]).to_string(), value)
                })
                .collect()
        })
        .unwrap_or_default();
    // Every mount names a volume of the pod, and every volume is a claim or a ConfigMap
    // declared in the manifests.
    let volumes = pod["volumes"].as_vec().unwrap();
    let mounts: Vec<(String, String)> = c["volumeMounts"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|m| (text(&m["mountPath"]).into(), text(&m["name"]).into()))
        .collect();
    for (_, name) in &mounts {
        let volume = volumes
            .iter()
            .find(|v| text(&v["name"]) == name)
            .unwrap_or_else(|| panic!("no volume {name}"));
        let claim = volume["persistentVolumeClaim"]["claimName"].as_str();
        let map = volume["configMap"]["name"].as_str();
        assert!(
            claim.is_some_and(|c| claims.iter().any(|k| k == c))
                || map.is_some_and(|m| config_maps.iter().any(|k| k == m)),
            "volume {name}: {volume:?}"
        );
    }
    Container {
        args: strings(&c["args"]),
        env,
        mounts,
    }
}

/// A Kubernetes quantity of bytes (`2Gi`, `512Mi`, `1000`) in bytes.
fn quantity(text: &str) -> u64 {
    let (digits, scale) = match text.find(|c: char| !c.is_ascii_digit()) {
        None => (text, 1),
        Some(at) => (
            &text[..at],
            match &text[at..] {
                "Ki" => 1 << 10,
                "Mi" => 1 << 20,
                "Gi" => 1 << 30,
                "Ti" => 1 << 40,
                other => panic!("quantity suffix {other}"),
            },
        ),
    };
    digits.parse::<u64>().unwrap() * scale
}

/// Runs `c` as its pod would: `$(VAR)` in its arguments expanded from its environment (as the
/// kubelet does), every mount path moved under `root`.
fn run_pod(c: &Container, extra_env: &[(&str, String)], root: &Path) {
    succeed(&mut pod_process(c, extra_env, root));
}

fn pod_process(c: &Container, extra_env: &[(&str, String)], root: &Path) -> Process {
    let mut env = c.env.clone();
    env.extend(extra_env.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let args: Vec<String> = c
        .args
        .iter()
        .map(|a| {
            let mut a = a.clone();
            for (k, v) in &env {
                a = a.replace(&format!("$({k})"), v);
            }
            assert!(!a.contains("$("), "unexpanded {a}");
            for (mount, _) in &c.mounts {
                if let Some(rest) = a.strip_prefix(mount.as_str()) {
                    a = format!("{}{mount}{rest}", root.display());
                }
            }
            a
        })
        .collect();
    let mut command = process(env!("CARGO_BIN_EXE_herd-sim"));
    command.args(&args).envs(&env);
    command
}

#[test]
fn the_kubernetes_manifests_parse_hang_together_and_their_commands_merge_into_one_sweep() {
    let sweep = documents("deploy/k8s/sweep-job.yaml");
    let merge = documents("deploy/k8s/merge-job.yaml");
    let kind = |d: &Yaml| text(&d["kind"]).to_string();
    let name = |d: &Yaml| text(&d["metadata"]["name"]).to_string();
    let of = |kind_: &str| -> Vec<&Yaml> {
        sweep
            .iter()
            .chain(&merge)
            .filter(|d| kind(d) == kind_)
            .collect()
    };
    let claims: Vec<String> = of("PersistentVolumeClaim")
        .iter()
        .map(|d| name(d))
        .collect();
    for claim in of("PersistentVolumeClaim") {
        // Pods on several nodes write shards to it at once.
        assert!(strings(&claim["spec"]["accessModes"]).contains(&"ReadWriteMany".to_string()));
    }
    let maps = of("ConfigMap");
    assert_eq!(maps.len(), 1);
    let map_names = vec![name(maps[0])];
    let jobs = of("Job");
    assert_eq!(jobs.len(), 2);
    for job in &jobs {
        assert_eq!(text(&job["apiVersion"]), "batch/v1");
    }
    let shard_job = jobs
        .iter()
        .find(|j| j["spec"]["completionMode"].as_str() == Some("Indexed"))
        .expect("an Indexed Job");
    let merge_job = jobs
        .iter()
        .find(|j| j["spec"]["completionMode"].is_badvalue())
        .expect("a merge Job");
    let completions = shard_job["spec"]["completions"].as_i64().unwrap();
    let parallelism = shard_job["spec"]["parallelism"].as_i64().unwrap();
    assert!(0 < parallelism && parallelism <= completions);
    let shard = container(shard_job, &claims, &map_names);
    let merger = container(merge_job, &claims, &map_names);
    assert_eq!(shard.args[0], "sweep");
    assert_eq!(merger.args[0], "merge");
    // The pod learns its index from the controller, the count from the manifest: they agree.
    assert_eq!(shard.env["HERD_SIM_SHARDS"], completions.to_string());
    let at = shard.args.iter().position(|a| a == "--shard").unwrap();
    assert_eq!(shard.args[at + 1], "auto");

    // Run it: the ConfigMap's files where the pod mounts them, then every index, then the merge.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (config_mount, _) = shard
        .mounts
        .iter()
        .find(|(_, volume)| {
            let pod = &shard_job["spec"]["template"]["spec"];
            pod["volumes"]
                .as_vec()
                .unwrap()
                .iter()
                .any(|v| text(&v["name"]) == volume && !v["configMap"].is_badvalue())
        })
        .unwrap();
    let config_dir = PathBuf::from(format!("{}{config_mount}", root.display()));
    fs::create_dir_all(&config_dir).unwrap();
    let files = maps[0]["data"].as_hash().unwrap();
    for (file, body) in files {
        fs::write(config_dir.join(text(file)), text(body)).unwrap();
    }
    for (mount, _) in shard.mounts.iter().chain(&merger.mounts) {
        fs::create_dir_all(format!("{}{mount}", root.display())).unwrap();
    }
    // The container's memory limit is the shard's --memory-limit: under a limit of 1 MiB
    // (1048576 bytes from the downward API) the shard is refused in one line, writing nothing.
    assert_eq!(shard.env["HERD_SIM_MEMORY_LIMIT"], (2u64 << 30).to_string());
    let at = shard
        .args
        .iter()
        .position(|a| a == "--memory-limit")
        .unwrap();
    assert_eq!(shard.args[at + 1], "$(HERD_SIM_MEMORY_LIMIT)");
    let line = refused(&mut pod_process(
        &shard,
        &[
            ("JOB_COMPLETION_INDEX", "0".into()),
            ("HERD_SIM_MEMORY_LIMIT", "1048576".into()),
        ],
        root,
    ));
    assert!(line.contains("over the memory budget of 1.0 MiB"), "{line}");
    for index in 0..completions {
        run_pod(&shard, &[("JOB_COMPLETION_INDEX", index.to_string())], root);
    }
    run_pod(&merger, &[], root);
    let at = merger.args.iter().position(|a| a == "--out").unwrap();
    let merged = fs::read(format!("{}{}", root.display(), merger.args[at + 1])).unwrap();
    // The same sweep on one machine: the config the ConfigMap holds.
    let (file, _) = files.iter().next().unwrap();
    let config = config_dir.join(text(file));
    let whole = one_machine(
        &["--config", config.to_str().unwrap()],
        &root.join("one.csv"),
    );
    assert_eq!(merged, whole);
    assert!(String::from_utf8_lossy(&whole).lines().count() > completions as usize);

    // The fetch pod mounts the same claim, read-only, where the merge wrote, and run.sh reads
    // the merged file from there.
    let fetch = documents("deploy/k8s/fetch-pod.yaml");
    assert_eq!(fetch.len(), 1);
    let pod = &fetch[0]["spec"];
    let volume = &pod["volumes"][0];
    assert!(claims.contains(&text(&volume["persistentVolumeClaim"]["claimName"]).to_string()));
    let mount = &pod["containers"][0]["volumeMounts"][0];
    assert_eq!(text(&mount["name"]), text(&volume["name"]));
    assert_eq!(mount["readOnly"].as_bool(), Some(true));
    let (merge_mount, _) = &merger.mounts[0];
    assert_eq!(text(&mount["mountPath"]), merge_mount);
    let out = &merger.args[merger.args.iter().position(|a| a == "--out").unwrap() + 1];
    let run = fs::read_to_string(repository().join("deploy/k8s/run.sh")).unwrap();
    assert!(
        run.contains(&format!("kubectl exec {} -- cat {out} ", name(&fetch[0]))),
        "run.sh does not fetch {out}"
    );
    for job in &jobs {
        assert!(run.contains(&format!("wait_for_job {}\n", name(job))));
    }
}

#[test]
fn the_containerfile_builds_a_static_dist_binary_in_one_stage_and_runs_it_from_scratch() {
    let text = fs::read_to_string(repository().join("deploy/Containerfile")).unwrap();
    let stages: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(stages.len(), 2, "{stages:?}");
    assert!(stages[0].ends_with(" AS build"));
    assert_eq!(stages[1], "FROM scratch");
    assert!(text.contains("cargo build --profile dist --locked"));
    assert!(text.contains("+crt-static"));
    // The manifests' images run this entry point with their args.
    assert!(text.contains(r#"ENTRYPOINT ["/usr/local/bin/herd-sim"]"#));
    // Every path the build stage copies exists in the repository.
    for line in text
        .lines()
        .filter(|l| l.starts_with("COPY ") && !l.contains("--from"))
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        for source in &words[1..words.len() - 1] {
            assert!(repository().join(source).exists(), "{line}");
        }
    }
}

/// A stand-in for `kubectl`: `apply -f -` (or `-f FILE`) saves the manifest as
/// `$KUBE/applied-N.yaml`; `get job/NAME -o jsonpath=…` prints the conditions in
/// `$KUBE/NAME` (what the test says the Job reached); `wait`, `logs`, `delete` succeed;
/// `exec POD -- cat PATH` prints `$KUBE/files/PATH`. Every call is logged to `$KUBE/calls`.
const FAKE_KUBECTL: &str = r#"#!/usr/bin/env bash
set -euo pipefail
kube=${KUBE:?}
echo "$*" >> "$kube/calls"
case "$1" in
    apply)
        n=$(ls "$kube" | grep -c '^applied-' || true)
        if [ "$3" = - ]; then cat > "$kube/applied-$n.yaml"; else cp "$3" "$kube/applied-$n.yaml"; fi
        ;;
    get)
        case "$2" in
            job/*) cat "$kube/${2#job/}" 2> /dev/null || true ;;
            pods) ;;
        esac
        ;;
    exec)
        [ "$3" = -- ] && [ "$4" = cat ] || { echo "fake kubectl: exec $*" >&2; exit 1; }
        cat "$kube/files$5"
        ;;
    wait | logs | delete) ;;
    *) echo "fake kubectl: unexpected $1" >&2; exit 1 ;;
esac
"#;

#[test]
fn k8s_run_sh_applies_waits_for_complete_or_failed_and_fetches_the_merged_file() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("kubectl"), FAKE_KUBECTL).unwrap();
    succeed(process("chmod").arg("+x").arg(bin.join("kubectl")));
    let run = |kube: &Path, out: &Path| {
        let output = process("bash")
            .arg(repository().join("deploy/k8s/run.sh"))
            .arg(out)
            .env("PATH", path_with(Some(&bin)))
            .env("KUBE", kube)
            .env("IMAGE", "registry.test/team/herd-sim:0.1.0")
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // Both Jobs complete: the manifests go out with the image named, in order, and the merged
    // file comes back.
    let kube = dir.path().join("ok");
    fs::create_dir_all(kube.join("files/data")).unwrap();
    fs::write(kube.join("herd-sim-sweep"), "Complete ").unwrap();
    fs::write(kube.join("herd-sim-merge"), "Complete ").unwrap();
    fs::write(kube.join("files/data/sweep.csv"), "a,b\n1,2\n").unwrap();
    let out = dir.path().join("sweep.csv");
    let (code, stderr) = run(&kube, &out);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "a,b\n1,2\n");
    let calls = fs::read_to_string(kube.join("calls")).unwrap();
    let verbs: Vec<&str> = calls
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        verbs,
        ["apply", "get", "apply", "get", "apply", "wait", "exec", "delete"],
        "{calls}"
    );
    for (n, file) in ["sweep-job.yaml", "merge-job.yaml"].iter().enumerate() {
        let applied = fs::read_to_string(kube.join(format!("applied-{n}.yaml"))).unwrap();
        let original = fs::read_to_string(repository().join("deploy/k8s").join(file)).unwrap();
        assert_eq!(
            applied,
            original.replace(
                "image: herd-sim:0.1.0",
                "image: registry.test/team/herd-sim:0.1.0"
            )
        );
        assert!(!applied.contains("image: herd-sim:"));
    }
    // The sweep Job fails: run.sh stops at once (not after its timeout), exit 1, and applies
    // no merge.
    let kube = dir.path().join("failed");
    fs::create_dir_all(&kube).unwrap();
    fs::write(kube.join("herd-sim-sweep"), "FailureTarget Failed ").unwrap();
    let out = dir.path().join("never.csv");
    let (code, stderr) = run(&kube, &out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("error: job/herd-sim-sweep failed"),
        "{stderr}"
    );
    let calls = fs::read_to_string(kube.join("calls")).unwrap();
    assert_eq!(
        calls.lines().filter(|l| l.starts_with("apply")).count(),
        1,
        "{calls}"
    );
    assert!(!out.exists());
}
