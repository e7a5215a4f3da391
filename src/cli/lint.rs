//! Flags of `herd-sim lint`: the flags (or config) of a plain run, or `--preset NAME`, and
//! `--deny LEVEL` to fail a CI job on a finding.

use clap::{Args, ValueEnum};

use herd_sim::advice::lint::Severity;

use super::RunArgs;

/// `--deny` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DenyArg {
    /// Any finding.
    Info,
    /// Warnings and errors.
    Warning,
    /// Errors only.
    Error,
}

impl From<DenyArg> for Severity {
    fn from(value: DenyArg) -> Severity {
        match value {
            DenyArg::Info => Severity::Info,
            DenyArg::Warning => Severity::Warning,
            DenyArg::Error => Severity::Error,
        }
    }
}

/// Flags of `herd-sim lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Exit 1 when a finding at or above this severity is found (the report is printed first).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Option<DenyArg>,

    /// The policy, as a plain run's flags or config (`--format table|json`, `--out`).
    #[command(flatten)]
    pub run: RunArgs,
}
