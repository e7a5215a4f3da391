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
//!
//! Which shard a process is (`--shard K/N` or the scheduler's variables) is in `choice`,
//! the cut of the grid's rows by cost in `partition`, the record and its fingerprint in
//! `record`; a shard's plan and its run are here.
//!
//! [`Scenario::requests_per_run`]: crate::config::Scenario::requests_per_run

mod choice;
mod partition;
mod record;
#[cfg(test)]
mod tests;

pub use choice::ShardChoice;
pub use partition::{row_cost, Partition};
pub use record::{digest_file, fingerprint, record_path, Digest, Record, RecordedSweep};

use std::ops::Range;
use std::path::{Path, PathBuf};

use self::choice::setting;

use super::sink::Destination;
use super::{Layout, Plan, SweepError, SweepSpec};
use crate::config::{check_requests, check_work};

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
