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

use plotters::coord::Shift;
use plotters::prelude::*;

use std::collections::{HashMap, HashSet};

use super::axis::{self, Axis, Ticked};
use super::palette;
use super::table::{plain, DataTable};
use super::{
    draw_error, draw_mesh, render, ChartError, ChartSize, Drawable, ImageFormat, FONT_FAMILY,
};

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

/// The table rows (indices) that share one x value of one line.
type RowsAtX = (f64, Vec<usize>);

fn same_value(a: &str, b: &str) -> bool {
    a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

impl LineChart {
    /// Groups the rows of `table` as `spec` says. See the module documentation.
    pub fn from_table(table: &DataTable, spec: &PlotSpec) -> Result<LineChart, ChartError> {
        let ix = table.column("--x", &spec.x)?;
        let iy = table.column("--y", &spec.y)?;
        let iby = match &spec.by {
            Some(name) => Some(table.column("--by", name)?),
            None => None,
        };
        let mut filters = Vec::new();
        for (name, value) in &spec.filters {
            filters.push((table.column("--where", name)?, value.as_str()));
        }
        let selected: Vec<usize> = (0..table.rows.len())
            .filter(|&r| {
                filters
                    .iter()
                    .all(|&(c, v)| same_value(&table.rows[r][c], v))
            })
            .collect();
        if selected.is_empty() {
            return Err(no_match(table, spec, &filters));
        }
        // A sweep writes its parameters, then `replicate, seed`; an `--aggregate` sweep its
        // parameters, then `seeds`.
        let replicates = table
            .columns
            .iter()
            .position(|c| c == "replicate" || c == "seed" || c == "seeds");
        let parameters: Vec<usize> = match replicates {
            Some(first) => (0..first)
                .filter(|&c| c != ix && c != iy && Some(c) != iby)
                .filter(|&c| !filters.iter().any(|&(f, _)| f == c))
                .collect(),
            None => Vec::new(),
        };
        if is_plain_run(table)
            && selected
                .iter()
                .all(|&r| same_value(&table.rows[r][ix], &table.rows[selected[0]][ix]))
        {
            return Err(ChartError::Invalid {
                field: "CSV",
                value: table.source_name.clone(),
                accepted: format!(
                    "this is a plain run's table (one row per strategy, every parameter fixed), \
                     so every line would be a single point at {} = {}; draw the run's histograms \
                     with --png, or sweep a parameter (herd-sim sweep --clients 10,100,1000 --out \
                     sweep.csv) and plot that",
                    spec.x,
                    plain(&table.rows[selected[0]][ix])
                ),
            });
        }
        let band = Band::of(table, &spec.y);
        let seeds = table.columns.iter().position(|c| c == "seeds");

        // Line name → (x → row indices), lines in first-appearance order, points in x order.
        let mut lines: Vec<(String, Vec<RowsAtX>)> = Vec::new();
        let mut line_of: HashMap<&str, usize> = HashMap::new();
        let mut point_of: HashMap<(usize, u64), usize> = HashMap::new();
        for &r in &selected {
            let name: &str = iby.map_or(spec.y.as_str(), |c| table.rows[r][c].as_str());
            let x = table.number("--x", r, ix)?;
            if spec.log_x && x <= 0.0 {
                return Err(not_positive("--log-x", &spec.x, r, x));
            }
            let line = *line_of.entry(name).or_insert_with(|| {
                lines.push((name.to_string(), Vec::new()));
                lines.len() - 1
            });
            // `+ 0.0` makes -0 and 0 one point.
            let groups = &mut lines[line].1;
            let point = *point_of
                .entry((line, (x + 0.0).to_bits()))
                .or_insert_with(|| {
                    groups.push((x, Vec::new()));
                    groups.len() - 1
                });
            groups[point].1.push(r);
        }

        let mut out: Vec<Line> = Vec::new();
        let mut drawn: HashMap<Vec<[u64; 5]>, usize> = HashMap::new();
        let mut counts = Vec::new();
        for (name, mut groups) in lines {
            groups.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut points = Vec::new();
            for (x, rows) in groups {
                for &c in &parameters {
                    check_one_value(table, spec, c, &rows, &name, x)?;
                }
                let mut ys = Vec::with_capacity(rows.len());
                let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
                for &r in &rows {
                    let y = table.number("--y", r, iy)?;
                    if spec.log_y && y <= 0.0 {
                        return Err(not_positive("--log-y", &spec.y, r, y));
                    }
                    let (lo, hi) = band.around(table, r, y)?;
                    low = low.min(lo);
                    high = high.max(hi);
                    ys.push(y);
                }
                if spec.log_y {
                    // An interval reaching to or below 0 is cut at the point on a log axis.
                    low = if low > 0.0 {
                        low
                    } else {
                        ys.iter().copied().fold(f64::INFINITY, f64::min)
                    };
                }
                let n = ys.len();
                let seeds_here = match (seeds, band) {
                    (Some(c), Band::Interval { .. } | Band::Sd { .. }) => {
                        let mut total = 0usize;
                        for &r in &rows {
                            total = total.saturating_add(table.rows[r][c].parse().unwrap_or(0));
                        }
                        total
                    }
                    _ => n,
                };
                counts.push(seeds_here);
                points.push(LinePoint {
                    x,
                    mean: ys.iter().sum::<f64>() / n as f64,
                    min: low,
                    max: high,
                    n,
                });
            }
            // Lines that coincide are drawn once, named together: the legend never lists a
            // line that cannot be seen. Found by hash, so many lines stay linear.
            let key: Vec<[u64; 5]> = points
                .iter()
                .map(|p| {
                    let bits = |v: f64| (v + 0.0).to_bits();
                    [
                        bits(p.x),
                        bits(p.mean),
                        bits(p.min),
                        bits(p.max),
                        p.n as u64,
                    ]
                })
                .collect();
            match drawn.get(&key) {
                Some(&i) => {
                    let same: &mut Line = &mut out[i];
                    same.name = format!("{} = {name}", same.name);
                }
                None => {
                    drawn.insert(key, out.len());
                    out.push(Line { name, points });
                }
            }
        }

        let (fewest, most) = (
            counts.iter().copied().min().unwrap_or(0),
            counts.iter().copied().max().unwrap_or(0),
        );
        let per_point = if fewest == most {
            format!("{most}")
        } else {
            format!("{fewest} to {most}")
        };
        let rows_are = if table.columns.iter().any(|c| c == "seed" || c == "seeds") {
            "seeds"
        } else {
            "rows"
        };
        let title = capitalised(&format!(
            "{} against {}",
            readable(statistic_of(&spec.y).0),
            readable(&spec.x)
        ));
        let what = match band {
            Band::Range => {
                format!("line = mean over {per_point} {rows_are} per point, band = min to max")
            }
            Band::Interval { .. } => {
                format!("line = mean over {per_point} seeds per point, band = its 95 % interval")
            }
            Band::Sd { .. } => {
                format!("line = mean over {per_point} seeds per point, band = mean ± sd")
            }
        };
        let mut subtitle = format!("{}: {what}", table.source_name);
        for (k, v) in &spec.filters {
            subtitle.push_str(&format!(" · {} = {}", readable(k), plain(v)));
        }
        Ok(LineChart {
            title,
            subtitle,
            x_label: axis_name(&spec.x, spec.log_x),
            y_label: axis_name(&spec.y, spec.log_y),
            lines: out,
            log_x: spec.log_x,
            log_y: spec.log_y,
            legend_title: spec.by.as_deref().map(readable),
            y_floor: floor(statistic_of(&spec.y).0),
        })
    }

    /// The chart as PNG or SVG bytes, at `size` (or [`DEFAULT_SIZE`]).
    pub fn render(
        &self,
        format: ImageFormat,
        size: Option<ChartSize>,
    ) -> Result<Vec<u8>, ChartError> {
        render(self, format, size.unwrap_or(DEFAULT_SIZE))
    }

    fn axes(&self) -> (Axis, Axis) {
        let points = || self.lines.iter().flat_map(|l| &l.points);
        let x_lo = points().map(|p| p.x).fold(f64::INFINITY, f64::min);
        let x_hi = points().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
        let y_lo = points().map(|p| p.min).fold(f64::INFINITY, f64::min);
        let y_hi = points().map(|p| p.max).fold(f64::NEG_INFINITY, f64::max);
        let x = if self.log_x {
            Axis {
                lo: x_lo / 1.1,
                hi: x_hi * 1.1,
                log: true,
            }
        } else {
            let pad = (x_hi - x_lo).abs().max(x_hi.abs() * 0.1).max(1e-9) * 0.03;
            Axis {
                lo: x_lo - pad,
                hi: x_hi + pad,
                log: false,
            }
        };
        let y = if self.log_y {
            Axis {
                lo: y_lo / 1.3,
                hi: y_hi * 1.3,
                log: true,
            }
        } else {
            // From 0 for counts, times and percentages; a ratio's axis starts at its floor (or
            // its lowest value, an interval's end may dip below it), not at 0 where no value
            // can be, with a little room below.
            let ratio = self.y_floor != 0.0;
            let floor = match ratio {
                true => y_lo.min(self.y_floor),
                false => y_lo.min(0.0),
            };
            let hi = if y_hi > floor {
                y_hi + (y_hi - floor) * 0.08
            } else {
                floor + 1.0
            };
            let lo = match ratio {
                true => floor - (hi - floor) * 0.04,
                false => floor,
            };
            Axis { lo, hi, log: false }
        };
        (x, y)
    }
}

/// What the shaded band around a line spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Band {
    /// The smallest to the largest y of the point's rows (the seeds of a sweep cell).
    Range,
    /// An `--aggregate` file's 95 % interval of the mean: `Y_ci95_low` to `Y_ci95_high` for
    /// `--y Y_mean`.
    Interval {
        /// Column of the low end.
        low: usize,
        /// Column of the high end.
        high: usize,
    },
    /// An `--aggregate` file's `Y_sd` around `--y Y_mean`, when it has no interval columns.
    Sd {
        /// Column of the standard deviation.
        sd: usize,
    },
}

impl Band {
    /// The band for `--y y` in `table`.
    fn of(table: &DataTable, y: &str) -> Band {
        let Some(stem) = y.strip_suffix("_mean") else {
            return Band::Range;
        };
        let find = |suffix: &str| {
            let name = format!("{stem}_{suffix}");
            table.columns.iter().position(|c| *c == name)
        };
        match (find("ci95_low"), find("ci95_high"), find("sd")) {
            (Some(low), Some(high), _) => Band::Interval { low, high },
            (_, _, Some(sd)) => Band::Sd { sd },
            _ => Band::Range,
        }
    }

    /// The band's ends at row `r` whose y is `y`. An empty cell (one seed: no interval) is no
    /// band; a number is required otherwise.
    fn around(self, table: &DataTable, r: usize, y: f64) -> Result<(f64, f64), ChartError> {
        let cell = |c: usize| -> Result<Option<f64>, ChartError> {
            if table.rows[r][c].is_empty() {
                Ok(None)
            } else {
                table.number("--y", r, c).map(Some)
            }
        };
        Ok(match self {
            Band::Range => (y, y),
            Band::Interval { low, high } => match (cell(low)?, cell(high)?) {
                (Some(lo), Some(hi)) => (lo.min(y), hi.max(y)),
                _ => (y, y),
            },
            Band::Sd { sd } => match cell(sd)? {
                Some(sd) => (y - sd.abs(), y + sd.abs()),
                None => (y, y),
            },
        })
    }
}

/// True when `table` has the columns of a plain run's `--format csv` (strategy to seed, and
/// no `replicate`): one row per strategy of a single scenario.
fn is_plain_run(table: &DataTable) -> bool {
    let lead = &crate::report::CSV_COLUMNS[..9];
    table.columns.len() >= lead.len()
        && table.columns[..lead.len()]
            .iter()
            .zip(lead)
            .all(|(a, b)| a == b)
        && !table.columns.iter().any(|c| c == "replicate")
}

/// A cell's value for telling values apart: numbers by value (`1` = `1.0`), text as written.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Value<'a> {
    Number(u64),
    Text(&'a str),
}

fn value_key(text: &str) -> Value<'_> {
    match text.parse::<f64>() {
        Ok(v) if !v.is_nan() => Value::Number((v + 0.0).to_bits()),
        _ => Value::Text(text),
    }
}

/// Refuses a point whose rows take several values of parameter column `c`: without `--by`
/// the likely intent is a line per value (`--by strategy`), else a `--where` to pick one.
fn check_one_value(
    table: &DataTable,
    spec: &PlotSpec,
    c: usize,
    rows: &[usize],
    name: &str,
    x: f64,
) -> Result<(), ChartError> {
    let mut seen = HashSet::new();
    let mut values: Vec<String> = Vec::new();
    for &r in rows {
        let v = table.rows[r][c].as_str();
        if seen.insert(value_key(v)) && values.len() <= LISTED_VALUES {
            values.push(plain(v));
        }
    }
    if seen.len() < 2 {
        return Ok(());
    }
    if values.len() > LISTED_VALUES {
        values.truncate(LISTED_VALUES);
        values.push(format!("and {} more", seen.len() - LISTED_VALUES));
    }
    let column = &table.columns[c];
    let (count, listed) = (seen.len(), values.join(", "));
    Err(match &spec.by {
        None => ChartError::Invalid {
            field: "--by",
            value: "missing".into(),
            accepted: format!(
                "`{column}` takes {count} values ({listed}) at {} = {}; add --by {column} for a line per value, or --where {column}=VALUE to keep one",
                spec.x,
                axis::number(x)
            ),
        },
        Some(_) => ChartError::Invalid {
            field: "--where",
            value: format!("missing for column `{column}`"),
            accepted: format!(
                "`{column}` takes {count} values ({listed}) within one point ({} at {} = {}); pick one with --where {column}=VALUE",
                plain(name),
                spec.x,
                axis::number(x)
            ),
        },
    })
}

/// Values of a column listed in a message; more are counted.
const LISTED_VALUES: usize = 20;

/// The error for `--where` filters that together keep no row: the first filter that alone
/// matches nothing, with the values its column holds (and the likeliest one meant); or, when
/// each matches some rows, that they match none together.
fn no_match(table: &DataTable, spec: &PlotSpec, filters: &[(usize, &str)]) -> ChartError {
    for (&(c, wanted), (name, _)) in filters.iter().zip(&spec.filters) {
        if table.rows.iter().any(|row| same_value(&row[c], wanted)) {
            continue;
        }
        let mut seen = std::collections::HashSet::new();
        let mut values: Vec<&str> = Vec::new();
        for row in &table.rows {
            if seen.insert(row[c].as_str()) {
                values.push(&row[c]);
            }
        }
        let normal = |v: &str| v.to_ascii_lowercase().replace('_', "-");
        let hint = values
            .iter()
            .find(|v| normal(v) == normal(wanted))
            .map(|v| format!(" (did you mean {name}={}?)", plain(v)))
            .unwrap_or_default();
        let mut listed: Vec<String> = values
            .iter()
            .take(LISTED_VALUES)
            .map(|v| plain(v))
            .collect();
        if values.len() > LISTED_VALUES {
            listed.push(format!("and {} more", values.len() - LISTED_VALUES));
        }
        return ChartError::Invalid {
            field: "--where",
            value: format!("{name}={}", plain(wanted)),
            accepted: format!(
                "no row of {} has it{hint}; `{name}` holds {}",
                table.source_name,
                listed.join(", ")
            ),
        };
    }
    let shown: Vec<String> = spec
        .filters
        .iter()
        .map(|(k, v)| format!("{k}={}", plain(v)))
        .collect();
    ChartError::Invalid {
        field: "--where",
        value: shown.join(" "),
        accepted: format!(
            "each matches some rows of {} but no row matches them all; drop one",
            table.source_name
        ),
    }
}

/// `column` without an `--aggregate` statistic suffix, and the suffix (`""` when none).
fn statistic_of(column: &str) -> (&str, &str) {
    for suffix in ["_mean", "_sd", "_min", "_max", "_ci95_low", "_ci95_high"] {
        if let Some(stem) = column.strip_suffix(suffix).filter(|s| !s.is_empty()) {
            return (stem, suffix);
        }
    }
    (column, "")
}

/// Where a linear axis of `column` (without its statistic) starts when no value is below it:
/// 1 for `amplification` (attempts per call: every call makes one), else 0.
fn floor(column: &str) -> f64 {
    match column {
        "amplification" => 1.0,
        _ => 0.0,
    }
}

/// `text` with its first letter upper case.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// An axis name: what the column means, in words, and the scale.
fn axis_name(column: &str, log: bool) -> String {
    let name = readable(column);
    if log {
        format!("{name} (log scale)")
    } else {
        name
    }
}

/// What a column of a run, a sweep or an `--aggregate` sweep means, in words (`peak` is "most
/// retries in one window", `span_s_mean` "span, first retry to last (s), mean over seeds");
/// another column's name with `_s` read as seconds, `_pct` as percent and `_` as spaces.
pub(crate) fn readable(column: &str) -> String {
    const STATISTICS: [(&str, &str); 6] = [
        ("_mean", "mean over seeds"),
        ("_sd", "sd over seeds"),
        ("_min", "min over seeds"),
        ("_max", "max over seeds"),
        ("_ci95_low", "95 % interval, low end"),
        ("_ci95_high", "95 % interval, high end"),
    ];
    for (suffix, statistic) in STATISTICS {
        if let Some(stem) = column.strip_suffix(suffix) {
            if !stem.is_empty() {
                return format!("{}, {statistic}", readable(stem));
            }
        }
    }
    let known = match column {
        "clients" => "clients",
        "retries" => "retries per client",
        "base_s" => "base delay (s)",
        "cap_s" => "cap (s)",
        "bin_s" => "window width (s)",
        "items" => "items per client",
        "latency_s" => "round trip (s)",
        "limit" => "limit (requests per window)",
        "window_s" => "limiter window (s)",
        "seeds" => "seeds per cell",
        "peak" => "most retries in one window",
        "peak_window_s" => "start of the busiest window (s)",
        "windows" => "windows with a retry",
        "span_s" => "span, first retry to last (s)",
        "total" => "retries (all clients)",
        "requests" => "requests, first attempts included",
        "refused" => "requests refused",
        "succeeded" => "clients served",
        "gave_up" => "clients that gave up",
        "last_success_s" => "last success (s)",
        "completed" => "clients that fetched all their work",
        "wasted_pct" => "wasted: refused / requests (%)",
        "finish_s" => "finish, last client done (s)",
        "finish_spread_s" => "finish spread, latest − earliest client (s)",
        "attempts" => "attempts (failed ones included)",
        "calls" => "calls",
        "amplification" => "attempts per call",
        "goodput_pct" => "calls that succeeded (%)",
        "failure_rate" => "failure rate",
        "timed_out" => "attempts timed out",
        "refusals_read" => "refusals read in time",
        "latency_p50_s" => "p50 latency of successful attempts (s)",
        "latency_p99_s" => "p99 latency of successful attempts (s)",
        "abandoned_work_s" => "server time on answers nobody read (s)",
        "recovered_at_s" => "recovered at (s)",
        "stuck" => "runs that never recover (fraction)",
        "retries_denied" => "retries denied by the retry control",
        "calls_rejected_locally" => "calls rejected locally",
        "rate_per_s" => "call rate (per s)",
        "multiplier" => "backoff multiplier",
        "hidden" => "tabs hidden at t = 0 (fraction)",
        "retries_while_hidden" => "retries sent by hidden tabs",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    let (stem, unit) = if let Some(stem) = column.strip_suffix("_s") {
        (stem, " (s)")
    } else if let Some(stem) = column.strip_suffix("_pct") {
        (stem, " (%)")
    } else {
        (column, "")
    };
    let stem = if stem.is_empty() { column } else { stem };
    format!("{}{unit}", stem.replace('_', " "))
}

fn not_positive(field: &'static str, column: &str, row: usize, value: f64) -> ChartError {
    ChartError::Invalid {
        field,
        value: format!("column `{column}` holds {value} in row {}", row + 1),
        accepted: "a log axis needs values above 0; drop the flag or filter the rows with --where"
            .into(),
    }
}

const TITLE_H: u32 = 62;
/// Width of the legend column at the default size and above.
const LEGEND_W: u32 = 230;
/// Horizontal pixels per x tick wanted.
const PX_PER_X_TICK: u32 = 110;

/// How a picture `width` pixels wide is shared between the plot and the legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    /// Width of the plot (axes included).
    plot_w: u32,
    /// Width of the legend column on its right.
    legend_w: u32,
    /// Ticks wanted on the x axis.
    x_ticks: usize,
}

impl Layout {
    /// The legend takes [`LEGEND_W`], or less than a third of a narrow picture; the plot
    /// takes the rest. (Sizes are at least `MIN_SIDE`, but any width lays out.)
    fn of(width: u32) -> Layout {
        let legend_w = LEGEND_W.min(width / 3);
        let plot_w = width - legend_w;
        Layout {
            plot_w,
            legend_w,
            x_ticks: (plot_w / PX_PER_X_TICK).max(2) as usize,
        }
    }
}

impl Drawable for LineChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (title, body) = root.split_vertically(TITLE_H);
        title
            .draw_text(
                &self.title,
                &(FONT_FAMILY, 22).into_font().color(&BLACK),
                (70, 10),
            )
            .map_err(draw_error)?;
        title
            .draw_text(
                &self.subtitle,
                &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
                (70, 38),
            )
            .map_err(draw_error)?;
        let (width, _) = body.dim_in_pixel();
        let layout = Layout::of(width);
        let (plot, legend) = body.split_horizontally(layout.plot_w);
        let (x, y) = self.axes();
        let mut chart = ChartBuilder::on(&plot)
            .margin_top(22)
            .margin_right(16)
            .y_label_area_size(70)
            .x_label_area_size(50)
            .build_cartesian_2d(Ticked::new(x, layout.x_ticks), Ticked::new(y, 6))
            .map_err(draw_error)?;
        draw_mesh(&mut chart, &self.x_label, true)?;
        // The y axis name sits above the axis, horizontal, where it never collides with ticks.
        plot.draw_text(
            &self.y_label,
            &(FONT_FAMILY, 14).into_font().color(&BLACK),
            (8, 2),
        )
        .map_err(draw_error)?;

        if let Some(heading) = &self.legend_title {
            legend
                .draw_text(
                    heading,
                    &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
                    (4, 2),
                )
                .map_err(draw_error)?;
        }
        // Legend entries that fit under one another (at least one).
        let fit = ((legend.dim_in_pixel().1.saturating_sub(24)) / 22).max(1) as usize;
        for (i, line) in self.lines.iter().enumerate() {
            let (r, g, b) = palette::LINES[i % palette::LINES.len()];
            let color = RGBColor(r, g, b);
            let at = |px: f64, py: f64| (x.place(px), y.place(py));
            if line.points.iter().any(|p| p.max > p.min) {
                let mut band: Vec<(f64, f64)> =
                    line.points.iter().map(|p| at(p.x, p.max)).collect();
                band.extend(line.points.iter().rev().map(|p| at(p.x, p.min)));
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.18).filled(),
                    )))
                    .map_err(draw_error)?;
            }
            chart
                .draw_series(std::iter::once(PathElement::new(
                    line.points
                        .iter()
                        .map(|p| at(p.x, p.mean))
                        .collect::<Vec<_>>(),
                    color.stroke_width(2),
                )))
                .map_err(draw_error)?;
            chart
                .draw_series(
                    line.points
                        .iter()
                        .map(|p| Circle::new(at(p.x, p.mean), 3, color.filled())),
                )
                .map_err(draw_error)?;
            if i >= fit {
                continue;
            }
            let row = 24 + 22 * i as i32;
            if i + 1 == fit && self.lines.len() > fit {
                // The legend is full: the rest are counted, not drawn off the picture.
                legend
                    .draw_text(
                        &format!("and {} more lines", self.lines.len() - i),
                        &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
                        (30, row),
                    )
                    .map_err(draw_error)?;
                continue;
            }
            legend
                .draw(&Rectangle::new(
                    [(4, row + 2), (22, row + 14)],
                    color.filled(),
                ))
                .map_err(draw_error)?;
            legend
                .draw_text(
                    &line.name,
                    &(FONT_FAMILY, 14).into_font().color(&BLACK),
                    (30, row),
                )
                .map_err(draw_error)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> DataTable {
        DataTable::parse(text.as_bytes(), "sweep.csv").unwrap()
    }

    fn spec(x: &str, y: &str, by: Option<&str>) -> PlotSpec {
        PlotSpec {
            x: x.into(),
            y: y.into(),
            by: by.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn rows_group_by_x_and_by_value_into_mean_and_range() {
        let t = table(
            "clients,strategy,seed,peak\n\
             10,a,1,4\n10,a,2,8\n20,a,1,9\n10,b,1,1\n20,b,1,2\n20,b,2,6\n20,a,2,12\n",
        );
        let chart = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy"))).unwrap();
        let names: Vec<&str> = chart.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let a = &chart.lines[0].points;
        assert_eq!(
            (a[0].x, a[0].mean, a[0].min, a[0].max, a[0].n),
            (10.0, 6.0, 4.0, 8.0, 2)
        );
        assert_eq!(
            (a[1].x, a[1].mean, a[1].min, a[1].max),
            (20.0, 10.5, 9.0, 12.0)
        );
        let b = &chart.lines[1].points;
        assert_eq!((b[1].mean, b[1].min, b[1].max, b[1].n), (4.0, 2.0, 6.0, 2));
        assert!(
            chart.subtitle.contains("1 to 2 seeds"),
            "{}",
            chart.subtitle
        );
    }

    #[test]
    fn a_point_mixing_parameter_values_is_refused_and_where_resolves_it() {
        let t = table("clients,base,strategy,seed,peak\n10,1,a,1,4\n10,2,a,1,8\n");
        let e = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`base` takes 2 values (1, 2)") && e.contains("--where base="),
            "{e}"
        );
        let mut s = spec("clients", "peak", Some("strategy"));
        s.filters.push(("base".into(), "2.0".into()));
        let chart = LineChart::from_table(&t, &s).unwrap();
        assert_eq!(chart.lines[0].points[0].mean, 8.0);
    }

    #[test]
    fn every_width_lays_out_with_the_plot_and_legend_sharing_it() {
        // Issue 14, defect 2: widths 200 to 229 left `width - LEGEND_W` to wrap around.
        for width in 1..=super::super::MAX_SIDE {
            let l = Layout::of(width);
            assert_eq!(l.plot_w + l.legend_w, width, "{l:?}");
            assert!(l.plot_w >= l.legend_w * 2, "{width}: {l:?}");
            assert!(
                l.x_ticks >= 2 && l.x_ticks <= (width as usize / 110).max(2),
                "{width}: {l:?}"
            );
        }
        assert_eq!(Layout::of(1000).legend_w, LEGEND_W);
    }

    #[test]
    fn a_one_point_chart_draws_at_every_narrow_width() {
        let t = table("x,y\n1,1\n");
        let chart = LineChart::from_table(&t, &spec("x", "y", None)).unwrap();
        for width in super::super::MIN_SIDE..=400 {
            let size = ChartSize { width, height: 620 };
            let svg = chart.render(ImageFormat::Svg, Some(size)).unwrap();
            let head = format!("<svg width=\"{width}\" height=\"620\"");
            assert!(svg.starts_with(head.as_bytes()), "{width}");
        }
        let png = chart
            .render(
                ImageFormat::Png,
                Some(ChartSize {
                    width: 200,
                    height: 200,
                }),
            )
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        // Extreme values draw too (the axes stay finite).
        let t = table("x,y\n-1.7e308,1.7e308\n1.7e308,-1.7e308\n");
        let chart = LineChart::from_table(&t, &spec("x", "y", None)).unwrap();
        chart.render(ImageFormat::Svg, None).unwrap();
    }

    #[test]
    fn an_aggregate_file_draws_the_interval_or_the_sd_as_the_band() {
        // Two cells of an `--aggregate` sweep; the second has one seed, so no interval.
        let t = table(
            "clients,strategy,seeds,peak_mean,peak_sd,peak_ci95_low,peak_ci95_high\n\
             10,a,5,4,1.5,2.5,5.5\n20,a,1,9,,,\n",
        );
        let chart =
            LineChart::from_table(&t, &spec("clients", "peak_mean", Some("strategy"))).unwrap();
        let p = &chart.lines[0].points;
        assert_eq!((p[0].mean, p[0].min, p[0].max), (4.0, 2.5, 5.5));
        assert_eq!((p[1].mean, p[1].min, p[1].max), (9.0, 9.0, 9.0));
        assert!(
            chart
                .subtitle
                .ends_with("line = mean over 1 to 5 seeds per point, band = its 95 % interval"),
            "{}",
            chart.subtitle
        );
        assert_eq!(chart.y_label, "most retries in one window, mean over seeds");
        // Without interval columns, mean ± sd.
        let t = table("clients,seeds,peak_mean,peak_sd\n10,4,4,1.5\n");
        let chart = LineChart::from_table(&t, &spec("clients", "peak_mean", None)).unwrap();
        let p = &chart.lines[0].points[0];
        assert_eq!((p.min, p.max), (2.5, 5.5));
        assert!(
            chart.subtitle.ends_with("band = mean ± sd"),
            "{}",
            chart.subtitle
        );
        // The `seeds` column marks the parameters: a strategy mixed into a point is refused.
        let t = table("clients,strategy,seeds,peak_mean\n10,a,3,4\n10,b,3,6\n");
        let e = LineChart::from_table(&t, &spec("clients", "peak_mean", None))
            .unwrap_err()
            .to_string();
        assert!(e.contains("add --by strategy"), "{e}");
    }

    #[test]
    fn coinciding_lines_are_drawn_once_and_named_together() {
        let t = table(
            "clients,strategy,seed,peak\n10,fixed,1,10\n20,fixed,1,20\n\
             10,jitter,1,3\n20,jitter,1,5\n10,exponential,1,10\n20,exponential,1,20\n",
        );
        let chart = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy"))).unwrap();
        let names: Vec<&str> = chart.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["fixed = exponential", "jitter"]);
        // The legend is drawn from `lines`: the SVG names each entry once.
        let svg = String::from_utf8(chart.render(ImageFormat::Svg, None).unwrap()).unwrap();
        assert_eq!(svg.matches("\nexponential\n").count(), 0, "{svg}");
        assert_eq!(svg.matches("fixed = exponential").count(), 1);
    }

    #[test]
    fn a_legend_too_long_for_the_picture_counts_the_rest() {
        let mut text = String::from("x,name,y\n");
        for i in 0..100 {
            text.push_str(&format!("{i},n{i},{i}\n"));
        }
        let chart = LineChart::from_table(&table(&text), &spec("x", "y", Some("name"))).unwrap();
        assert_eq!(chart.lines.len(), 100);
        // 620 high: a 558-pixel body holds 24 rows of 22 pixels; 23 names, then the count.
        let svg = String::from_utf8(chart.render(ImageFormat::Svg, None).unwrap()).unwrap();
        assert!(svg.contains("\nn22\n") && !svg.contains("\nn23\n"), "{svg}");
        assert!(svg.contains("and 77 more lines"));
        // 100 000 distinct one-point lines group and compare by hash (a pairwise search for
        // coinciding lines took over a minute): each is kept, the 2 coinciding ones merged.
        let mut text = String::from("x,name,y\n");
        for i in 0..100_000 {
            text.push_str(&format!("{i},n{i},{i}\n"));
        }
        text.push_str("5,twin,5\n");
        let chart = LineChart::from_table(&table(&text), &spec("x", "y", Some("name"))).unwrap();
        assert_eq!(chart.lines.len(), 100_000);
        assert_eq!(chart.lines[5].name, "n5 = twin");
    }

    #[test]
    fn several_strategies_in_one_point_suggest_by() {
        let t = table("clients,strategy,base_s,seed,peak\n10,fixed,1,1,4\n10,full-jitter,1,1,2\n");
        let e = LineChart::from_table(&t, &spec("clients", "peak", None))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid --by: missing; `strategy` takes 2 values (fixed, full-jitter) at clients = 10; \
             add --by strategy for a line per value, or --where strategy=VALUE to keep one"
        );
    }

    #[test]
    fn a_plain_runs_table_is_refused_with_what_to_do_instead() {
        let mut text = crate::report::CSV_COLUMNS.join(",");
        text.push('\n');
        for strategy in ["fixed", "full-jitter"] {
            let mut row = vec!["1"; crate::report::CSV_COLUMNS.len()];
            row[0] = strategy;
            text.push_str(&row.join(","));
            text.push('\n');
        }
        let t = table(&text);
        let e = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy")))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid CSV: sweep.csv; this is a plain run's table")
                && e.contains("herd-sim sweep"),
            "{e}"
        );
    }

    #[test]
    fn the_title_and_legend_are_in_words_and_a_ratio_axis_starts_at_its_floor() {
        let t = table(
            "control,failure_rate,amplification_mean,requests_mean\n\
             none,0,1,100\nnone,0.5,1.875,187\nbucket,0,1,100\nbucket,0.5,1.06,106\n",
        );
        let c = LineChart::from_table(
            &t,
            &spec("failure_rate", "amplification_mean", Some("control")),
        )
        .unwrap();
        assert_eq!(c.title, "Attempts per call against failure rate");
        assert_eq!(c.legend_title.as_deref(), Some("control"));
        assert_eq!(c.y_label, "attempts per call, mean over seeds");
        // Attempts per call are never below 1: the axis starts just under 1, not at 0.
        let (_, y) = c.axes();
        assert!(y.lo > 0.9 && y.lo < 1.0, "{y:?}");
        // A count starts at 0.
        let c = LineChart::from_table(&t, &spec("failure_rate", "requests_mean", Some("control")))
            .unwrap();
        assert_eq!(c.axes().1.lo, 0.0);
        assert_eq!(
            c.title,
            "Requests, first attempts included against failure rate"
        );
    }

    #[test]
    fn axis_names_say_what_the_column_means() {
        assert_eq!(readable("peak"), "most retries in one window");
        assert_eq!(
            readable("span_s_ci95_low"),
            "span, first retry to last (s), 95 % interval, low end"
        );
        assert_eq!(readable("queue_depth_s"), "queue depth (s)");
        assert_eq!(readable("drop_pct"), "drop (%)");
        assert_eq!(readable("_mean"), " mean");
        assert_eq!(readable("x"), "x");
        assert_eq!(axis_name("clients", true), "clients (log scale)");
    }

    #[test]
    fn a_where_matching_nothing_lists_the_values_present() {
        let t =
            table("clients,strategy,seed,peak\n10,fixed,1,4\n10,full-jitter,1,2\n20,fixed,1,5\n");
        let mut s = spec("clients", "peak", None);
        s.filters.push(("strategy".into(), "full_jitter".into()));
        let e = LineChart::from_table(&t, &s).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid --where: strategy=full_jitter; no row of sweep.csv has it (did you mean \
             strategy=full-jitter?); `strategy` holds fixed, full-jitter"
        );
        s.filters = vec![
            ("strategy".into(), "full-jitter".into()),
            ("clients".into(), "20".into()),
        ];
        let e = LineChart::from_table(&t, &s).unwrap_err().to_string();
        assert!(e.contains("no row matches them all"), "{e}");
    }

    #[test]
    fn bad_columns_and_log_of_zero_are_refused() {
        let t = table("clients,strategy,peak\n0,a,4\n");
        let e = LineChart::from_table(&t, &spec("client", "peak", None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid --x: no column `client` in sweep.csv (did you mean `clients`?); columns: clients, strategy, peak"
        );
        let e = LineChart::from_table(&t, &spec("strategy", "peak", None)).unwrap_err();
        assert!(matches!(e, ChartError::NotNumeric { .. }), "{e}");
        let mut s = spec("clients", "peak", None);
        s.log_x = true;
        let e = LineChart::from_table(&t, &s).unwrap_err().to_string();
        assert!(e.contains("--log-x") && e.contains("above 0"), "{e}");
    }
}
