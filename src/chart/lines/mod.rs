//! Line charts of a table (a sweep CSV): one line per value of a `--by` column, x and y from
//! two numeric columns. Rows sharing an x and a by-value (the seeds of one sweep cell) become
//! one point: the line goes through their mean and a shaded band spans their minimum to their
//! maximum, so the spread over seeds is visible. Either axis can be base-10 logarithmic.
//!
//! A point must not silently mix different cells: when the table has a `replicate` or `seed`
//! column (a sweep writes `replicate, seed` after its parameters), the columns before the
//! first of them are taken as the sweep's parameters, and a parameter (other than x, by
//! and `--where` columns) that takes more than one value within a point is refused with the
//! values and a `--where` to pick one. Pure: no I/O.
//!
//! The chart's model and its entry points are here; grouping the table's rows into lines
//! ([`LineChart::from_table`]), the columns' names in words and the drawing are submodules.

mod drawing;
mod grouping;
mod names;
#[cfg(test)]
mod tests;

use super::{render, ChartError, ChartSize, ImageFormat};

/// What to plot from a table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlotSpec {
    /// Column for the horizontal axis (numeric).
    pub x: String,
    /// Column for the vertical axis (numeric).
    pub y: String,
    /// Column whose values each get a line; one line when absent.
    pub by: Option<String>,
    /// Keep only rows whose column (first) equals the value (second).
    pub filters: Vec<(String, String)>,
    /// Logarithmic horizontal axis.
    pub log_x: bool,
    /// Logarithmic vertical axis.
    pub log_y: bool,
}

/// One point of a line: the mean of the rows at this x, and their range.
#[derive(Clone, Debug, PartialEq)]
pub struct LinePoint {
    /// The x value.
    pub x: f64,
    /// Mean of y over the rows.
    pub mean: f64,
    /// Smallest y.
    pub min: f64,
    /// Largest y.
    pub max: f64,
    /// Number of rows (seeds).
    pub n: usize,
}

/// One line: a by-value and its points in increasing x.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The by-value (legend name).
    pub name: String,
    /// Points, sorted by x.
    pub points: Vec<LinePoint>,
}

/// A line chart ready to draw. Build it with [`LineChart::from_table`].
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Title line.
    pub title: String,
    /// Second line: source, what the line and band are.
    pub subtitle: String,
    /// Horizontal axis name.
    pub x_label: String,
    /// Vertical axis name.
    pub y_label: String,
    /// Lines in the order their by-value first appears in the table.
    pub lines: Vec<Line>,
    /// Logarithmic horizontal axis.
    pub log_x: bool,
    /// Logarithmic vertical axis.
    pub log_y: bool,
    /// The legend's heading: what the lines are per (the `--by` column in words).
    pub legend_title: Option<String>,
    /// Where a linear vertical axis starts when no value is below it: 0 for counts, times and
    /// percentages, 1 for a ratio of attempts to calls (never below one).
    pub y_floor: f64,
}

/// Default picture size of a line chart.
pub const DEFAULT_SIZE: ChartSize = ChartSize {
    width: 1000,
    height: 620,
};

impl LineChart {
    /// The chart as PNG or SVG bytes, at `size` (or [`DEFAULT_SIZE`]).
    pub fn render(
        &self,
        format: ImageFormat,
        size: Option<ChartSize>,
    ) -> Result<Vec<u8>, ChartError> {
        render(self, format, size.unwrap_or(DEFAULT_SIZE))
    }
}
