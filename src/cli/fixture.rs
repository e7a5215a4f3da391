//! Flags of `herd-sim fixture`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Flags of `herd-sim fixture`.
#[derive(Debug, Args)]
pub struct FixtureArgs {
    /// Scenario file (JSON): `{"policy": {...}, "scenarios": [...]}`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = FixtureFormat::Table)]
    pub format: FixtureFormat,

    /// Compare every scenario with its `expect` block; print each mismatch and exit 1 on any.
    #[arg(long)]
    pub check: bool,
}

/// `herd-sim fixture --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FixtureFormat {
    /// Aligned text table.
    Table,
    /// JSON object with a `scenarios` array.
    Json,
}
