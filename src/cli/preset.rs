//! `--preset NAME` and `herd-sim presets`: named production clients (the library's
//! `herd_sim::config::PRESETS`).

use clap::Args;

/// The preset flag of a plain run.
#[derive(Debug, Args)]
#[command(next_help_heading = "Retry control")]
pub struct PresetArgs {
    /// A production client's retry settings: aws-standard, aws-adaptive, grpc, envoy, finagle,
    /// polly, resilience4j, axios-retry, tenacity (`herd-sim presets` lists what each sets).
    /// Flags and config keys given override it.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
}

/// Flags of `herd-sim presets` (none).
#[derive(Debug, Args)]
pub struct PresetsArgs {}
