//! Flags of `herd-sim plot`.

use std::path::PathBuf;

use clap::Args;

use herd_sim::chart::{ChartSize, PlotSpec};

use super::values::*;

/// Flags of `herd-sim plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The CSV file; its first line names the columns.
    #[arg(value_name = "CSV")]
    pub csv: PathBuf,

    /// Column for the horizontal axis (numeric).
    #[arg(long, value_name = "COLUMN")]
    pub x: String,

    /// Column for the vertical axis (numeric).
    #[arg(long, value_name = "COLUMN")]
    pub y: String,

    /// Column whose values each get a line [default: one line].
    #[arg(long, value_name = "COLUMN")]
    pub by: Option<String>,

    /// Keep only rows where COLUMN equals VALUE (numbers compare as numbers); repeatable.
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    pub filters: Vec<(String, String)>,

    /// Logarithmic horizontal axis (every x must be above 0).
    #[arg(long)]
    pub log_x: bool,

    /// Logarithmic vertical axis (every y must be above 0).
    #[arg(long)]
    pub log_y: bool,

    /// Output picture: `.png` or `.svg` picks the format (none: PNG; others are refused; `-`: PNG on stdout) [default: output/<Y>.png].
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// Picture size in pixels, WIDTHxHEIGHT [default: 1000x620].
    #[arg(long, value_name = "WxH", value_parser = parse_chart_size)]
    pub chart_size: Option<ChartSize>,
}

impl PlotArgs {
    /// The library's description of the plot.
    pub fn spec(&self) -> PlotSpec {
        PlotSpec {
            x: self.x.clone(),
            y: self.y.clone(),
            by: self.by.clone(),
            filters: self.filters.clone(),
            log_x: self.log_x,
            log_y: self.log_y,
        }
    }

    /// Where the picture goes.
    pub fn out_path(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from("output").join(format!("{}.png", self.y)))
    }
}
