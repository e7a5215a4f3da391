//! Why a sweep cannot run or its output cannot be written ([`SweepError`]), and whether the
//! user's input is at fault. Its own file because every layer above the sweep (shards,
//! merge, boundary, tune) returns it.

use std::io;

use super::merge;
use crate::config::ConfigError;

/// A sweep that cannot run, or whose output cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A parameter's values do not parse.
    #[error("invalid --{parameter}: {message}")]
    Values {
        /// The parameter.
        parameter: &'static str,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// A name that is not a sweep parameter (in a `[sweep]` table).
    #[error("unknown sweep parameter `{name}`; accepted: {accepted}")]
    UnknownParameter {
        /// The name given.
        name: String,
        /// The accepted names.
        accepted: String,
    },
    /// A setting of the sweep itself (`--seeds`, `--max-cells`) is out of range.
    #[error("invalid {field}: {value}; {accepted}")]
    Setting {
        /// The flag.
        field: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        accepted: String,
    },
    /// The rows run at once would not fit in the memory budget.
    #[error("this sweep needs an estimated {estimate} ({rows} rows at once, one a thread, of up to {row} each, and its buffers), over the memory budget of {budget}; lower --threads, narrow the largest cells, or raise --memory-limit")]
    TooBig {
        /// Estimated bytes, human-readable.
        estimate: String,
        /// Rows in flight at once.
        rows: u64,
        /// The largest row's estimate, human-readable.
        row: String,
        /// The budget, human-readable.
        budget: String,
    },
    /// The grid is larger than the safety limit.
    #[error("this sweep has {cells} cells, over the limit of {limit}; narrow the grid, or raise the limit with --max-cells {cells}")]
    TooManyCells {
        /// Cells in the grid (as text: it may exceed u64).
        cells: String,
        /// The limit in force.
        limit: u64,
    },
    /// One cell of the grid is not a valid scenario.
    #[error("cell {cell} ({description}): {problem}")]
    Cell {
        /// The cell's position in grid order, from 0.
        cell: u64,
        /// The cell's varied parameters.
        description: String,
        /// Why the scenario is invalid (in the message, not a separate cause, so that
        /// `{:#}` prints it once).
        problem: ConfigError,
    },
    /// The base scenario (config file) is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--resume` found a file that this sweep did not write.
    #[error("cannot resume {path}: {reason}; rerun the sweep's own command with --resume, or leave --resume out to start over")]
    Resume {
        /// The output file.
        path: String,
        /// What does not match.
        reason: String,
    },
    /// Another process is writing the output, or its lock cannot be taken.
    #[error(transparent)]
    Locked(#[from] crate::output::LockError),
    /// The worker threads cannot be started.
    #[error("cannot start {threads} worker threads: {message}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// The system's reason, once.
        message: String,
    },
    /// `herd-sim merge` refused its shards (see [`merge`]).
    #[error(transparent)]
    Merge(#[from] merge::MergeError),
    /// The output cannot be written.
    #[error("cannot write {path}: {cause}")]
    Io {
        /// The file (or `stdout`).
        path: String,
        /// The system's reason.
        cause: io::Error,
    },
}

impl SweepError {
    /// True when the user's input is at fault (exit code 2), false for I/O failures.
    pub fn is_bad_input(&self) -> bool {
        match self {
            SweepError::Io { .. } | SweepError::Locked(_) | SweepError::Threads { .. } => false,
            SweepError::Merge(e) => e.is_bad_input(),
            _ => true,
        }
    }
}
