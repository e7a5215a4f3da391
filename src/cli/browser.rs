//! Flags of the browser-tab model.

use clap::Args;

use herd_sim::engine::browser::{ClockSkew, HiddenTimers, RetryAfterFormat, WhenHidden};
use herd_sim::time::SimDuration;

use super::values::*;

/// Flags of the browser-tab model: hidden tabs, throttled timers, pausing while
/// hidden, HTTP-date Retry-After and clock skew. With none of them a run is what it was.
#[derive(Debug, Args)]
#[command(next_help_heading = "Browser tabs")]
pub struct BrowserArgs {
    /// Fraction of clients that are hidden tabs at t = 0, 0 to 1 [default: 0].
    #[arg(long, value_name = "F", value_parser = parse_number, allow_hyphen_values = true)]
    pub hidden: Option<f64>,

    /// Mean of the exponential dwell between a tab's visibility flips, e.g. 3m [default: never].
    #[arg(long, value_name = "MEAN", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub visibility_switch: Option<SimDuration>,

    /// A hidden tab's timers: Chrome's 1 s alignment and 1 min after 5 min hidden (the retry
    /// loop a timer chain), the 1 s alignment only, or none [default: chrome].
    #[arg(long, value_name = "RULE", value_parser = HiddenTimers::NAMES)]
    pub hidden_timers: Option<String>,

    /// What a hidden tab does about a retry: send it, or wait until visible [default: retry].
    #[arg(long, value_name = "ACTION", value_parser = WhenHidden::NAMES)]
    pub when_hidden: Option<String>,

    /// How limiters write Retry-After: seconds, or an HTTP date read against the client's
    /// clock [default: seconds].
    #[arg(long, value_name = "FORMAT", value_parser = RetryAfterFormat::NAMES)]
    pub retry_after_format: Option<String>,

    /// Each tab's clock minus the server's: 2s, -1s, uniform:-5s..5s, normal:0s,2s [default: 0s].
    #[arg(long, value_name = "DIST", value_parser = parse_text::<ClockSkew>, allow_hyphen_values = true)]
    pub clock_skew: Option<ClockSkew>,
}
