//! Value parsers and value enums shared by the flag structs: they check only what the user
//! typed; ranges and relations between fields are checked by `ScenarioFile::validate`.

use clap::ValueEnum;

use herd_sim::chart::{ChartSize, CountScale};
use herd_sim::config::{LatencyText, StrategyList};
use herd_sim::engine::{NetworkDelay, Path};
use herd_sim::policy::Strategy;
use herd_sim::report::Format;
use herd_sim::time::{parse_duration, SimDuration};

/// `--format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned text table.
    Table,
    /// JSON object with a `results` array.
    Json,
    /// One CSV row per strategy.
    Csv,
}

impl From<FormatArg> for Format {
    fn from(value: FormatArg) -> Format {
        match value {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
        }
    }
}

/// `--chart-scale` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ChartScaleArg {
    /// One linear count axis shared by every panel (walls and drizzle compare directly).
    Shared,
    /// One logarithmic count axis shared by every panel (small counts stay readable).
    Log,
    /// Each panel's linear axis fitted to its own peak.
    PerPanel,
}

impl From<ChartScaleArg> for CountScale {
    fn from(value: ChartScaleArg) -> CountScale {
        match value {
            ChartScaleArg::Shared => CountScale::Shared,
            ChartScaleArg::Log => CountScale::Log,
            ChartScaleArg::PerPanel => CountScale::PerPanel,
        }
    }
}

/// `--engine` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// Independent clients when the server allows, the event queue otherwise.
    Auto,
    /// Always the general event queue.
    EventQueue,
    /// Independent clients (refused for servers whose clients interact).
    Independent,
}

impl From<EngineArg> for Path {
    fn from(value: EngineArg) -> Path {
        match value {
            EngineArg::Auto => Path::Auto,
            EngineArg::EventQueue => Path::EventQueue,
            EngineArg::Independent => Path::Independent,
        }
    }
}

pub(crate) fn strategy_help() -> String {
    format!(
        "Strategy, a comma list, or `all` [default: full-jitter].\n\nAccepted: {}, all.",
        Strategy::accepted_names()
    )
}

pub(crate) fn parse_strategies(text: &str) -> Result<StrategyList, String> {
    text.parse()
        .map_err(|e: herd_sim::policy::UnknownStrategy| e.to_string())
}

pub(crate) fn parse_chart_size(text: &str) -> Result<ChartSize, String> {
    text.parse().map_err(|e| match e {
        herd_sim::chart::ChartError::Invalid { accepted, .. } => accepted,
        other => other.to_string(),
    })
}

pub(crate) fn parse_filter(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((column, value)) if !column.trim().is_empty() => {
            Ok((column.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("`{text}` is not COLUMN=VALUE, e.g. base=1")),
    }
}

pub(crate) fn parse_duration_arg(text: &str) -> Result<SimDuration, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

pub(crate) fn parse_latency(text: &str) -> Result<LatencyText, String> {
    text.parse()
}

pub(crate) fn parse_network_delay(text: &str) -> Result<NetworkDelay, String> {
    text.parse()
}

pub(crate) fn parse_whole(text: &str) -> Result<u64, String> {
    let cleaned = text.trim().replace('_', "");
    cleaned.parse().map_err(|e: std::num::ParseIntError| {
        if *e.kind() == std::num::IntErrorKind::PosOverflow {
            format!("`{text}` is too large; at most {}", u64::MAX)
        } else {
            format!("`{text}` is not a whole number; write digits only, e.g. 1000")
        }
    })
}

/// The most worker threads accepted: far above any machine's cores, far below what makes
/// thread creation itself the work.
pub const MAX_THREADS: u32 = 1024;

pub(crate) fn parse_threads(text: &str) -> Result<u32, String> {
    match parse_whole(text)? {
        n @ 1..=1024 => Ok(n as u32),
        _ => Err(format!(
            "accepted: 1 to {MAX_THREADS} (the default is all cores)"
        )),
    }
}

pub(crate) fn parse_whole_u32(text: &str) -> Result<u32, String> {
    let n = parse_whole(text)?;
    u32::try_from(n).map_err(|_| format!("`{text}` is too large; at most {}", u32::MAX))
}

pub(crate) fn parse_number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .map_err(|_| format!("`{text}` is not a number, e.g. 2 or 1.5"))
}

pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => {
            return Err(format!(
                "`{text}` is not a size; write e.g. 512MiB or 16GiB"
            ))
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("`{text}` is not a size; write e.g. 512MiB or 16GiB"))
}

pub(crate) fn parse_text<T: std::str::FromStr<Err = String>>(text: &str) -> Result<T, String> {
    text.parse()
}
