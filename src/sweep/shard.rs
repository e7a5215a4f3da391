//! Shards: one sweep cut into N blocks of rows that separate processes run apart (the tasks of
//! a Slurm job array, the pods of a Kubernetes Indexed Job, the cores of one machine), each
//! into its own file, for [`super::merge`] to join into exactly the file one process writes.
//!
//! The rules this module keeps ("Outgrowing one machine" in docs/sweeps-and-clusters.md repeats them):
//! - **Which rows.** Shard `K` of `N` (0-based) is one contiguous block of the grid's rows in
//!   grid order, balanced by estimated work rather than by count. A row's cost is
//!   [`ROW_OVERHEAD`] plus the requests its run can make at most
//!   ([`Scenario::requests_per_run`]: `clients × items × (retries + 1)`, or
//!   `(pool + clients) × (retries + 1)` with a shared pool), capped at [`MAX_ROW_COST`]. With `P` the cost of the rows before row `i`, `c` its own and `C`
//!   the total, row `i` belongs to shard `⌊N·(2P + c) / 2C⌋`: the shard whose slice of the
//!   total holds the middle of the row. Integers only, from the grid alone, so every machine
//!   cuts the same blocks; each shard's cost is within one row's cost of `C/N`, and with more
//!   shards than rows some shards are empty. `--max-requests` applies to the shard's rows.
//! - **Fingerprint.** [`fingerprint`] hashes everything that decides the rows: the herd-sim
//!   version, the seed rule, the master seed, the seed count, the columns, the base scenario
//!   and every axis's values. Shards merge only when their fingerprints agree.
//! - **Record.** Beside a shard's CSV `FILE` (the same columns as the sweep's, its header
//!   and its block of rows) lies `FILE.shard.json`, a [`Record`]: the fingerprint, `K/N`, the
//!   block, the sweep itself (so `merge` needs no flags) and, once the shard is complete, the
//!   file's length and digest. It is written whole (temporary file and rename) when the shard
//!   starts, marked unfinished, and again when it ends.
//! - **`--shard auto`.** The index and count come from the scheduler: a Slurm job array
//!   (`SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`, of `SLURM_ARRAY_TASK_COUNT` or
//!   `MAX − MIN + 1`), else a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, of `--shards N`
//!   or [`COUNT_VARIABLE`]), else an error naming both.
//!
//! `--resume` works on a shard as on a whole sweep: the shard's file is a sweep of its block.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{check_requests, check_work, Scenario, ScenarioFile};

use super::sink::Destination;
use super::{Layout, Plan, SweepError, SweepSpec};

/// The fixed cost of a row, in requests: validating, running and writing a cell with one
/// client is worth about this many requests of a large one.
pub const ROW_OVERHEAD: u128 = 1_000;

/// The largest cost a row is counted at (2⁴⁰ requests, days of work), so that sums over any
/// grid fit in 128 bits.
pub const MAX_ROW_COST: u128 = 1 << 40;

/// The most shards a sweep can be cut into.
pub const MAX_SHARDS: u64 = 1 << 20;

/// The environment variable a Kubernetes manifest sets to the number of shards (its
/// `completions`), read by `--shard auto` when `--shards` is not given.
pub const COUNT_VARIABLE: &str = "HERD_SIM_SHARDS";

/// The seed rule, named in every fingerprint (see [`crate::rng::derive_seed`]).
pub const SEED_RULE: &str =
    "derive_seed(master, label) v1: FNV-1a of the cell's label, mixed by SplitMix64";

/// What the first field of every record says.
pub const RECORD_FORMAT: &str = "herd-sim shard record 1";

/// The herd-sim version in fingerprints and records.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Shard `index` of `count` (0-based), written `K/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    /// K, from 0.
    pub index: u64,
    /// N, at least 1.
    pub count: u64,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What `--shard` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardChoice {
    /// `--shard K/N`.
    Fixed(Shard),
    /// `--shard auto`: from the scheduler's environment.
    Auto,
}

const SHARD_ACCEPTED: &str =
    "accepted: K/N with N from 1 to 1048576 and K from 0 to N − 1 (0-based), e.g. 0/8, or auto";

fn setting(field: &'static str, value: &str, accepted: impl Into<String>) -> SweepError {
    SweepError::Setting {
        field,
        value: value.to_string(),
        accepted: accepted.into(),
    }
}

fn whole(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

impl Shard {
    /// Checks `index < count ≤ MAX_SHARDS`; `value` is what the user wrote, for the message.
    fn checked(
        index: u64,
        count: u64,
        field: &'static str,
        value: &str,
    ) -> Result<Shard, SweepError> {
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(setting(field, value, SHARD_ACCEPTED));
        }
        Ok(Shard { index, count })
    }
}

impl ShardChoice {
    /// Parses `K/N` or `auto`.
    pub fn parse(text: &str) -> Result<ShardChoice, SweepError> {
        if text.trim() == "auto" {
            return Ok(ShardChoice::Auto);
        }
        let parsed = text
            .split_once('/')
            .and_then(|(k, n)| Some((whole(k)?, whole(n)?)));
        match parsed {
            Some((k, n)) => Shard::checked(k, n, "--shard", text).map(ShardChoice::Fixed),
            None => Err(setting("--shard", text, SHARD_ACCEPTED)),
        }
    }

    /// The shard to run: `K/N` as given, or read from the scheduler's environment through
    /// `env` (`std::env::var` in the binary). `shards` is `--shards N` as typed.
    pub fn resolve(
        self,
        shards: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shard, SweepError> {
        let shards = shards
            .map(|text| {
                whole(text)
                    .filter(|&n| (1..=MAX_SHARDS).contains(&n))
                    .ok_or_else(|| {
                        setting(
                            "--shards",
                            text,
                            "accepted: a whole number from 1 to 1048576",
                        )
                    })
            })
            .transpose()?;
        let agree = |shard: Shard, source: &str| match shards {
            Some(n) if n != shard.count => Err(setting(
                "--shards",
                &n.to_string(),
                format!(
                    "{source} says {} shards; give the same count or leave --shards out",
                    shard.count
                ),
            )),
            _ => Ok(shard),
        };
        match self {
            ShardChoice::Fixed(shard) => agree(shard, &format!("--shard {shard}")),
            ShardChoice::Auto => {
                if let Some(id) = env("SLURM_ARRAY_TASK_ID") {
                    let shard = slurm(&id, env, shards)?;
                    agree(shard, "the Slurm job array")
                } else if let Some(index) = env("JOB_COMPLETION_INDEX") {
                    let shard = kubernetes(&index, env, shards)?;
                    agree(shard, "the Kubernetes job")
                } else {
                    Err(setting(
                        "--shard",
                        "auto",
                        "this process runs in neither a Slurm job array (no SLURM_ARRAY_TASK_ID) \
                         nor a Kubernetes Indexed Job (no JOB_COMPLETION_INDEX); accepted: \
                         --shard auto inside one of them, or --shard K/N",
                    ))
                }
            }
        }
    }
}

/// A whole number from an environment variable, or an error naming it.
fn variable(name: &'static str, value: &str) -> Result<u64, SweepError> {
    whole(value).ok_or_else(|| {
        setting(
            name,
            value,
            "accepted: a whole number (set by the scheduler)",
        )
    })
}

fn slurm(
    id: &str,
    env: &dyn Fn(&str) -> Option<String>,
    shards: Option<u64>,
) -> Result<Shard, SweepError> {
    let id = variable("SLURM_ARRAY_TASK_ID", id)?;
    let read = |name: &'static str| env(name).map(|v| variable(name, &v)).transpose();
    let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let max = read("SLURM_ARRAY_TASK_MAX")?;
    let count = read("SLURM_ARRAY_TASK_COUNT")?;
    let span = max.and_then(|max| max.checked_sub(min)).map(|d| d + 1);
    let count = match (count, span) {
        (Some(count), Some(span)) if count != span => {
            return Err(setting(
                "SLURM_ARRAY_TASK_COUNT",
                &count.to_string(),
                format!(
                    "the array runs {count} tasks over indices {min} to {}, so it has gaps (a step or a list); accepted: a contiguous array, sbatch --array=0-{}",
                    max.unwrap_or(min),
                    count.saturating_sub(1)
                ),
            ))
        }
        (Some(count), _) | (None, Some(count)) => count,
        (None, None) => shards.ok_or_else(|| {
            setting(
                "SLURM_ARRAY_TASK_ID",
                &id.to_string(),
                "without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX the count is unknown; accepted: an sbatch --array job, or --shards N",
            )
        })?,
    };
    let index = id.checked_sub(min).ok_or_else(|| {
        setting(
            "SLURM_ARRAY_TASK_ID",
            &id.to_string(),
            format!("it is below SLURM_ARRAY_TASK_MIN {min}"),
        )
    })?;
    Shard::checked(
        index,
        count,
        "--shard",
        &format!("auto (Slurm task {index} of {count})"),
    )
}

fn kubernetes(
    index: &str,
    env: &dyn Fn(&str) -> Option<String>,
    shards: Option<u64>,
) -> Result<Shard, SweepError> {
    let index = variable("JOB_COMPLETION_INDEX", index)?;
    let from_env = env(COUNT_VARIABLE)
        .map(|v| variable(COUNT_VARIABLE, &v))
        .transpose()?;
    let count = match (shards, from_env) {
        (Some(n), Some(m)) if n != m => {
            return Err(setting(
                "--shards",
                &n.to_string(),
                format!("{COUNT_VARIABLE} says {m}; give one count"),
            ))
        }
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => {
            return Err(setting(
                "--shard",
                "auto",
                format!("a Kubernetes Indexed Job (JOB_COMPLETION_INDEX={index}) does not tell the number of shards; accepted: --shards N or {COUNT_VARIABLE}=N, N the job's completions"),
            ))
        }
    };
    Shard::checked(
        index,
        count,
        "--shard",
        &format!("auto (Kubernetes index {index} of {count})"),
    )
}

/// The estimated cost of one run of `scenario` (see the module documentation).
pub fn row_cost(scenario: &Scenario) -> u128 {
    (ROW_OVERHEAD + scenario.requests_per_run()).min(MAX_ROW_COST)
}

/// How a grid's rows are cut into shards: the cost of each cell's rows and the running sums.
#[derive(Clone, Debug)]
pub struct Partition {
    rows_per_cell: u64,
    rows: u64,
    /// Cost of one row of each cell.
    cost: Vec<u128>,
    /// Requests of one row of each cell, at most (for `--max-requests`).
    requests: Vec<u128>,
    /// Cost of every row before each cell; one more entry, the total.
    before: Vec<u128>,
}

impl Partition {
    /// The costs of `plan`'s whole grid (its span is ignored).
    pub fn of(plan: &Plan) -> Result<Partition, SweepError> {
        let rows_per_cell = match plan.layout {
            Layout::Tidy => plan.seeds,
            Layout::Aggregate => 1,
        };
        let per_run = match plan.layout {
            Layout::Tidy => 1,
            Layout::Aggregate => u128::from(plan.seeds),
        };
        let mut cost = Vec::with_capacity(plan.cells as usize);
        let mut requests = Vec::with_capacity(plan.cells as usize);
        let mut before = Vec::with_capacity(plan.cells as usize + 1);
        let mut sum = 0u128;
        for cell in 0..plan.cells {
            let scenario = plan.cell_scenario(cell)?;
            let c = row_cost(&scenario) * per_run;
            requests.push(scenario.attempts_per_run() * per_run);
            before.push(sum);
            cost.push(c);
            sum += c * u128::from(rows_per_cell);
        }
        before.push(sum);
        Ok(Partition {
            rows_per_cell,
            rows: plan.grid_rows(),
            cost,
            requests,
            before,
        })
    }

    /// The most requests the rows `rows` can send.
    pub fn requests(&self, rows: Range<u64>) -> u128 {
        let mut total = 0;
        let mut row = rows.start;
        while row < rows.end {
            let cell = row / self.rows_per_cell;
            let end = ((cell + 1) * self.rows_per_cell).min(rows.end);
            total += u128::from(end - row) * self.requests[cell as usize];
            row = end;
        }
        total
    }

    /// The estimated cost of the whole grid.
    pub fn total(&self) -> u128 {
        self.before.last().copied().unwrap_or(0)
    }

    fn cost_of(&self, row: u64) -> u128 {
        self.cost[(row / self.rows_per_cell) as usize]
    }

    /// The cost of the rows before `row`.
    fn before(&self, row: u64) -> u128 {
        let cell = (row / self.rows_per_cell) as usize;
        self.before[cell] + u128::from(row % self.rows_per_cell) * self.cost[cell]
    }

    /// The shard of `count` that row `row` belongs to.
    pub fn shard_of(&self, row: u64, count: u64) -> u64 {
        let middle = 2 * self.before(row) + self.cost_of(row);
        let shard = u128::from(count) * middle / (2 * self.total());
        (shard as u64).min(count - 1)
    }

    /// The block of rows of `shard` (empty when the shard has none).
    pub fn range(&self, shard: Shard) -> Range<u64> {
        self.first_row_of(shard.index, shard.count)..self.first_row_of(shard.index + 1, shard.count)
    }

    /// The first row whose shard is `index` or later (`rows` when none is).
    fn first_row_of(&self, index: u64, count: u64) -> u64 {
        let (mut low, mut high) = (0, self.rows);
        while low < high {
            let mid = low + (high - low) / 2;
            if self.shard_of(mid, count) < index {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }
}

/// One shard of a sweep as [`plan_shards`] cuts it, checked as its process would check it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardPlan {
    /// `K/N`.
    pub shard: Shard,
    /// Its block of the grid's rows (empty when it has none).
    pub rows: Range<u64>,
    /// The most requests its rows can send (what `--max-requests` is checked against).
    pub requests: u128,
    /// Its work estimate in events (what `--yes` is needed past).
    pub work: u128,
}

/// Refuses `--aggregate` for `shard` (written as the user gave it, under `field`).
fn refuse_aggregate(spec: &SweepSpec, field: &'static str, shard: &str) -> Result<(), SweepError> {
    if spec.layout == Layout::Aggregate {
        return Err(setting(
            field,
            shard,
            "--aggregate cannot be sharded (a cell's statistics need all its seeds); accepted: shard the tidy sweep, then `herd-sim merge --aggregate`",
        ));
    }
    Ok(())
}

/// The plan of `spec`'s whole grid as shards see it, its partition, and the request limit and
/// `--yes` each shard is checked with (the whole grid's are not checked: a shard's are).
fn whole_grid(spec: SweepSpec) -> Result<(Plan, Partition, u64, bool), SweepError> {
    let limit = spec.max_requests;
    let yes = spec.yes;
    let plan = Plan::new(SweepSpec {
        max_requests: u64::MAX,
        yes: true,
        ..spec
    })?;
    let partition = Partition::of(&plan)?;
    Ok((plan, partition, limit, yes))
}

/// `shard` of `plan`: its block, checked against the request limit and the work needing `--yes`.
fn shard_plan(
    plan: &Plan,
    partition: &Partition,
    shard: Shard,
    limit: u64,
    yes: bool,
) -> Result<ShardPlan, SweepError> {
    let rows = partition.range(shard);
    let requests = partition.requests(rows.clone());
    check_requests(requests, limit, "shard")?;
    let work = plan.work_of(rows.clone())?;
    check_work(work, "shard", yes)?;
    Ok(ShardPlan {
        shard,
        rows,
        requests,
        work,
    })
}

/// The sweep `spec` cut into `count` shards, every one checked as [`ShardRun::prepare`] would
/// check it in its own process, without running or writing anything (`sweep --plan
/// --shards N`): the whole grid's plan and each shard's block, requests and work.
pub fn plan_shards(spec: SweepSpec, count: u64) -> Result<(Plan, Vec<ShardPlan>), SweepError> {
    if count == 0 || count > MAX_SHARDS {
        return Err(setting(
            "--shards",
            &count.to_string(),
            "accepted: a whole number from 1 to 1048576",
        ));
    }
    refuse_aggregate(&spec, "--shards", &count.to_string())?;
    let (plan, partition, limit, yes) = whole_grid(spec)?;
    let shards = (0..count)
        .map(|index| shard_plan(&plan, &partition, Shard { index, count }, limit, yes))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((plan, shards))
}

/// A 64-bit FNV-1a hash, fed in pieces: the digest of shard files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Digest {
    /// Feeds `bytes`.
    #[inline]
    pub fn update(&mut self, bytes: &[u8]) {
        let mut hash = self.0;
        for &byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = hash;
    }

    /// The digest as 16 hexadecimal digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The sweep as a record holds it: enough for `merge` to rebuild the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedSweep {
    /// The base scenario.
    pub base: ScenarioFile,
    /// `(parameter, values as written)`.
    pub grid: Vec<(String, String)>,
    /// Seeds per cell.
    pub seeds: u64,
    /// The cell limit the sweep ran under.
    pub max_cells: u64,
}

impl RecordedSweep {
    /// The tidy sweep this record describes, with no limit on requests or work and one
    /// thread's rows in memory (a merge runs none).
    pub fn spec(&self) -> SweepSpec {
        SweepSpec {
            base: self.base.clone(),
            grid: self.grid.clone(),
            seeds: self.seeds,
            layout: Layout::Tidy,
            max_cells: self.max_cells,
            max_requests: u64::MAX,
            threads: Some(1),
            yes: true,
            keep_unread: false,
        }
    }
}

/// A shard's record, `FILE.shard.json` beside its CSV (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// [`RECORD_FORMAT`].
    pub format: String,
    /// The herd-sim version that ran the shard.
    pub version: String,
    /// [`fingerprint`] of the whole sweep.
    pub fingerprint: String,
    /// K.
    pub index: u64,
    /// N.
    pub count: u64,
    /// The grid row of the shard's first row.
    pub first_row: u64,
    /// Rows in the shard.
    pub rows: u64,
    /// True once every row is in the file.
    pub finished: bool,
    /// Length of the finished file in bytes.
    pub bytes: Option<u64>,
    /// [`Digest`] of the finished file.
    pub digest: Option<String>,
    /// The sweep.
    pub sweep: RecordedSweep,
}

impl Record {
    /// The shard.
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }

    /// The grid rows of the shard.
    pub fn span(&self) -> Range<u64> {
        self.first_row..self.first_row + self.rows
    }

    /// Writes the record to `path` whole or not at all.
    pub fn write(&self, path: &Path) -> Result<(), SweepError> {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        crate::output::write_atomic(path, text.as_bytes()).map_err(|cause| SweepError::Io {
            path: path.display().to_string(),
            cause,
        })
    }
}

/// The record of the shard whose CSV is `csv`: `csv` with `.shard.json` appended.
pub fn record_path(csv: &Path) -> PathBuf {
    let mut name = csv.as_os_str().to_owned();
    name.push(".shard.json");
    PathBuf::from(name)
}

/// The fingerprint of `plan`'s whole sweep: 32 hexadecimal digits of a 128-bit FNV-1a hash of
/// its canonical description (see the module documentation).
pub fn fingerprint(plan: &Plan) -> String {
    let mut base = plan.base.clone();
    // The master seed is listed on its own; the memory limit only refuses, never changes a row.
    base.seed = None;
    base.memory_limit = None;
    let mut text = format!(
        "herd-sim {VERSION}\nseed rule: {SEED_RULE}\nmaster seed: {}\nseeds: {}\ncolumns: {}\nbase: {}\n",
        plan.master_seed,
        plan.seeds,
        plan.header().join(","),
        serde_json::to_string(&base).unwrap_or_default(),
    );
    for axis in &plan.axes {
        let values: Vec<String> = (0..axis.len()).map(|i| axis.value(i).to_string()).collect();
        text.push_str(&format!("{}: {}\n", axis.parameter.name, values.join(",")));
    }
    let mut hash: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for byte in text.bytes() {
        hash ^= u128::from(byte);
        hash = hash.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    format!("{hash:032x}")
}

/// The length and [`Digest`] of a file, read in pieces.
pub fn digest_file(path: &Path) -> io::Result<(u64, Digest)> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut digest = Digest::default();
    let mut bytes = 0u64;
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buffer)?;
        if n == 0 {
            return Ok((bytes, digest));
        }
        digest.update(&buffer[..n]);
        bytes += n as u64;
    }
}

/// The file `shard` writes: `--out FILE`, a regular file or none yet (its record goes beside
/// it), never stdout or a device.
pub fn shard_output(shard: Shard, destination: &Destination) -> Result<&Path, SweepError> {
    let Destination::File(csv) = destination else {
        return Err(setting(
            "--shard",
            &shard.to_string(),
            "a shard needs --out FILE (its record goes beside it); accepted: --out FILE",
        ));
    };
    if !matches!(
        crate::output::OutputTarget::of(csv),
        Ok(crate::output::OutputTarget::Regular(_)) | Err(_)
    ) {
        return Err(setting(
            "--shard",
            &shard.to_string(),
            format!(
                "a shard needs --out FILE, a regular file (its record goes beside it), not {}; accepted: --out FILE",
                csv.display()
            ),
        ));
    }
    Ok(csv)
}

/// One shard being run: its record and where it goes. Build with [`ShardRun::prepare`].
#[derive(Debug)]
pub struct ShardRun {
    csv: PathBuf,
    record: Record,
}

impl ShardRun {
    /// The plan of `shard`'s block of the sweep `spec`, and the run that records it. Writes
    /// nothing: call [`ShardRun::begin`] once the output is open.
    pub fn prepare(
        spec: SweepSpec,
        shard: Shard,
        destination: &Destination,
    ) -> Result<(Plan, ShardRun), SweepError> {
        refuse_aggregate(&spec, "--shard", &shard.to_string())?;
        let csv = shard_output(shard, destination)?;
        let sweep = RecordedSweep {
            base: spec.base.clone(),
            grid: spec.grid.clone(),
            seeds: spec.seeds,
            max_cells: spec.max_cells,
        };
        // The request limit and the work needing --yes are the shard's: checked on its
        // rows, not the grid's.
        let (mut plan, partition, limit, yes) = whole_grid(spec)?;
        let checked = shard_plan(&plan, &partition, shard, limit, yes)?;
        let span = checked.rows;
        plan.work = checked.work;
        let record = Record {
            format: RECORD_FORMAT.into(),
            version: VERSION.into(),
            fingerprint: fingerprint(&plan),
            index: shard.index,
            count: shard.count,
            first_row: span.start,
            rows: span.end - span.start,
            finished: false,
            bytes: None,
            digest: None,
            sweep,
        };
        plan.span = span;
        Ok((
            plan,
            ShardRun {
                csv: csv.to_path_buf(),
                record,
            },
        ))
    }

    /// The shard's record as it stands.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// Writes the record, marked unfinished (a finished record of an earlier run of the same
    /// file no longer describes it).
    pub fn begin(&self) -> Result<(), SweepError> {
        self.record.write(&record_path(&self.csv))
    }

    /// Reads the finished file back for its length and digest and writes the finished record.
    pub fn finish(mut self) -> Result<(), SweepError> {
        let (bytes, digest) = digest_file(&self.csv).map_err(|cause| SweepError::Io {
            path: self.csv.display().to_string(),
            cause,
        })?;
        self.record.finished = true;
        self.record.bytes = Some(bytes);
        self.record.digest = Some(digest.hex());
        self.record.write(&record_path(&self.csv))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn resolve(text: &str, shards: Option<&str>, env: &[(&str, &str)]) -> Result<Shard, String> {
        ShardChoice::parse(text)
            .and_then(|c| c.resolve(shards, &env_of(env)))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn fixed_shards_parse_and_bad_ones_name_the_flag() {
        assert_eq!(resolve("3/8", None, &[]), Ok(Shard { index: 3, count: 8 }));
        for bad in [
            "3/2",
            "0/0",
            "2/2",
            "-1/4",
            "1/",
            "a/b",
            "3",
            "1/2/3",
            "0/2000000",
        ] {
            let e = resolve(bad, None, &[]).unwrap_err();
            assert!(e.starts_with(&format!("invalid --shard: {bad};")), "{e}");
            assert!(e.contains("K/N"), "{e}");
        }
        let e = resolve("1/4", Some("5"), &[]).unwrap_err();
        assert!(e.contains("--shards") && e.contains("4 shards"), "{e}");
    }

    #[test]
    fn auto_reads_slurm_then_kubernetes_and_names_both_when_neither() {
        let slurm_count = [
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        assert_eq!(
            resolve("auto", None, &slurm_count),
            Ok(Shard { index: 5, count: 8 })
        );
        // --array=1-8: ids 1..8 are shards 0..7.
        let slurm_range = [
            ("SLURM_ARRAY_TASK_ID", "8"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "8"),
        ];
        assert_eq!(
            resolve("auto", None, &slurm_range),
            Ok(Shard { index: 7, count: 8 })
        );
        // --array=0-14:2 runs 8 tasks over 15 indices: refused.
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "14"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
        ];
        assert!(resolve("auto", None, &stepped)
            .unwrap_err()
            .contains("--array=0-7"));
        let k8s = [("JOB_COMPLETION_INDEX", "2")];
        assert_eq!(
            resolve("auto", Some("3"), &k8s),
            Ok(Shard { index: 2, count: 3 })
        );
        let k8s_env = [("JOB_COMPLETION_INDEX", "2"), (COUNT_VARIABLE, "4")];
        assert_eq!(
            resolve("auto", None, &k8s_env),
            Ok(Shard { index: 2, count: 4 })
        );
        let e = resolve("auto", None, &k8s).unwrap_err();
        assert!(
            e.contains("--shards N") && e.contains(COUNT_VARIABLE),
            "{e}"
        );
        let e = resolve("auto", Some("2"), &k8s).unwrap_err();
        assert!(
            e.starts_with("invalid --shard: auto (Kubernetes index 2 of 2)"),
            "{e}"
        );
        let e = resolve("auto", None, &[]).unwrap_err();
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID") && e.contains("JOB_COMPLETION_INDEX"),
            "{e}"
        );
    }

    fn plan(grid: &[(&str, &str)], seeds: u64) -> Plan {
        Plan::new(SweepSpec {
            grid: grid
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            seeds,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn blocks_follow_the_cost_and_cover_every_row_once() {
        // 4 seeds of 10 clients (cost 1000 + 10·5 = 1050 each), 4 of 200 000 (1000 + 10⁶).
        // Total 4 008 200; row 4's middle is at 4200 + 500 500 = 504 700, under a quarter
        // (1 002 050): shard 0 holds rows 0–4, and each big row after it a shard of its own.
        let p = plan(&[("clients", "10,200000")], 4);
        let partition = Partition::of(&p).unwrap();
        assert_eq!(partition.total(), 4 * 1050 + 4 * 1_001_000);
        let blocks: Vec<Range<u64>> = (0..4)
            .map(|k| partition.range(Shard { index: k, count: 4 }))
            .collect();
        assert_eq!(blocks, [0..5, 5..6, 6..7, 7..8]);
        // More shards than rows: every row once, in order, the rest empty.
        for count in [1, 2, 3, 7, 8, 9, 50] {
            let mut next = 0;
            for index in 0..count {
                let r = partition.range(Shard { index, count });
                assert_eq!(r.start, next, "{index}/{count}");
                for row in r.clone() {
                    assert_eq!(partition.shard_of(row, count), index);
                }
                next = r.end;
            }
            assert_eq!(next, 8, "{count}");
        }
    }

    #[test]
    fn the_request_limit_is_the_shards() {
        // 100 and 200 clients × 5 requests, 2 seeds: rows of 500, 500, 1000, 1000 requests
        // (costs 1500, 1500, 2000, 2000; half of 7000 falls before row 2).
        let spec = |max_requests| SweepSpec {
            grid: vec![("clients".into(), "100,200".into())],
            seeds: 2,
            max_requests,
            ..Default::default()
        };
        let out = Destination::File("x.csv".into());
        let run = |index, limit| ShardRun::prepare(spec(limit), Shard { index, count: 2 }, &out);
        assert!(Plan::new(spec(2000)).is_err(), "3000 requests in all");
        assert_eq!(run(0, 1000).unwrap().0.rows(), 2);
        assert_eq!(run(1, 2000).unwrap().0.rows(), 2);
        let e = run(1, 1999).unwrap_err().to_string();
        assert!(e.contains("2000") && e.contains("--max-requests"), "{e}");
    }

    #[test]
    fn the_fingerprint_follows_the_rows_not_the_spelling() {
        let a = fingerprint(&plan(&[("clients", "100,200")], 2));
        let b = fingerprint(&plan(&[("clients", "100..200 step 100")], 2));
        assert_eq!(a, b);
        assert_eq!(a.len(), 32);
        assert_ne!(a, fingerprint(&plan(&[("clients", "100,300")], 2)));
        assert_ne!(a, fingerprint(&plan(&[("clients", "100,200")], 3)));
        let mut seeded = SweepSpec {
            grid: vec![("clients".into(), "100,200".into())],
            seeds: 2,
            ..Default::default()
        };
        seeded.base.seed = Some(7);
        assert_ne!(a, fingerprint(&Plan::new(seeded).unwrap()));
    }

    #[test]
    fn a_record_round_trips_through_json() {
        let base = ScenarioFile::parse(
            "cap = \"10s\"\nlatency = \"uniform:1ms..3ms\"\nmultiplier = 1.3\n[server]\nmodel = \"token-bucket\"\n",
            Some("toml"),
        )
        .unwrap();
        let spec = SweepSpec {
            base,
            grid: vec![("clients".into(), "10,20".into())],
            seeds: 2,
            ..Default::default()
        };
        let (plan, run) = ShardRun::prepare(
            spec,
            Shard { index: 1, count: 2 },
            &Destination::File("x.csv".into()),
        )
        .unwrap();
        let text = serde_json::to_string(run.record()).unwrap();
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, run.record());
        let rebuilt = Plan::new(back.sweep.spec()).unwrap();
        assert_eq!(fingerprint(&rebuilt), back.fingerprint);
        assert_eq!(plan.rows(), back.rows);
        assert_eq!(plan.key(0).unwrap(), rebuilt.key(back.first_row).unwrap());
    }
}
