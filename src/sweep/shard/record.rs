//! A shard's [`Record`] beside its CSV: the fingerprint of what decides its rows, `K/N`, its
//! block, the sweep itself and, once complete, its file's length and digest. Separate
//! because `merge` reads it without running anything.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Shard, SEED_RULE, VERSION};
use crate::config::ScenarioFile;
use crate::sweep::{Layout, Plan, SweepError, SweepSpec};

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
    /// [`RECORD_FORMAT`](super::RECORD_FORMAT).
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
