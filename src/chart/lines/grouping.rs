//! Grouping a table's rows into lines and points ([`LineChart::from_table`]): the rows of one
//! x and one by-value become a point (their mean, and a band over their spread or an
//! `--aggregate` file's interval), and a point that would mix sweep cells is refused with the
//! values it mixes. Separate from the drawing: it reads the table and refuses, never draws.

use std::collections::{HashMap, HashSet};

use super::names::{axis_name, capitalised, floor, readable, statistic_of};
use super::{Line, LineChart, LinePoint, PlotSpec};
use crate::chart::axis;
use crate::chart::table::{plain, DataTable};
use crate::chart::ChartError;

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

fn not_positive(field: &'static str, column: &str, row: usize, value: f64) -> ChartError {
    ChartError::Invalid {
        field,
        value: format!("column `{column}` holds {value} in row {}", row + 1),
        accepted: "a log axis needs values above 0; drop the flag or filter the rows with --where"
            .into(),
    }
}
