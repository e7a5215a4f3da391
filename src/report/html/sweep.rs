//! A sweep's page: the grid in words; the rows as a table (the parameters that vary, the
//! replicate and seed or the seed count, and every metric some row has), cell for cell the
//! CSV the sweep writes; line charts of the key metrics against the first numeric parameter
//! that varies ([`plots`]), one line per strategy (or per value of the next parameter that
//! varies), the seeds of a point as its band; and what reproduces the sweep: the command, the
//! master seed and the sweep as a config file. The whole CSV is embedded as a data block.

use crate::chart::{ChartError, DataTable, ImageFormat, LineChart, PlotSpec};

use super::Skeleton;

/// The most rows a sweep may have for its page: the page holds every row (a few hundred bytes
/// each, in the table and in the data block), and the sweep keeps a copy of them until it
/// ends, so a larger sweep is refused (`--aggregate` makes one row of each cell's seeds).
pub const SWEEP_ROWS_MAX: u64 = 10_000;

/// The metrics charted, in order, when the rows have them: a run's peak window, when the herd
/// is done, the wasted share; the call loop's goodput, amplification and tail latency.
const CHARTED: [&str; 6] = [
    "peak",
    "finish_s",
    "wasted_pct",
    "goodput_pct",
    "amplification",
    "latency_p99_s",
];

/// What a sweep's page shows.
#[derive(Clone, Debug, Default)]
pub struct SweepPage<'a> {
    /// The page's heading.
    pub title: &'a str,
    /// The sweep's CSV (header and every row, in grid order), as written to `--out`.
    pub csv: &'a str,
    /// The command that reproduces the sweep.
    pub command: &'a str,
    /// The master seed.
    pub seed: u64,
    /// The sweep as a config file (TOML, scenario keys and a `[sweep]` table).
    pub config: &'a str,
}

/// The columns of a sweep's parameters: those before `replicate`/`seed` (tidy) or `seeds`
/// (aggregated).
fn parameter_count(table: &DataTable) -> usize {
    table
        .columns
        .iter()
        .position(|c| c == "replicate" || c == "seed" || c == "seeds")
        .unwrap_or(0)
}

/// The distinct values of column `c`, in first-appearance order.
fn distinct(table: &DataTable, c: usize) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for row in &table.rows {
        if !seen.contains(&row[c].as_str()) {
            seen.push(&row[c]);
        }
    }
    seen
}

/// The parameter columns whose value differs between rows, in column order.
fn varied(table: &DataTable) -> Vec<usize> {
    (0..parameter_count(table))
        .filter(|&c| distinct(table, c).len() > 1)
        .collect()
}

/// The charts the page draws: for each of `CHARTED` that every row has (its mean when
/// aggregated), against the first parameter that varies and is numeric in every row, a line
/// per strategy when strategies vary (else per value of the next parameter that varies); any
/// other parameter that varies is held at its first value (`--where`, said in the subtitle).
/// None when no numeric parameter varies.
pub fn plots(table: &DataTable) -> Vec<PlotSpec> {
    let varied = varied(table);
    let numeric = |c: usize| {
        table
            .rows
            .iter()
            .all(|r| !r[c].is_empty() && r[c].parse::<f64>().is_ok())
    };
    let Some(&x) = varied.iter().find(|&&c| numeric(c)) else {
        return Vec::new();
    };
    let strategy = table.columns.iter().position(|c| c == "strategy");
    let by = match strategy.filter(|s| varied.contains(s)) {
        Some(s) => Some(s),
        None => varied.iter().copied().find(|&c| c != x),
    };
    let filters: Vec<(String, String)> = varied
        .iter()
        .filter(|&&c| c != x && Some(c) != by)
        .map(|&c| (table.columns[c].clone(), table.rows[0][c].clone()))
        .collect();
    let aggregated = table.columns.iter().any(|c| c == "seeds");
    CHARTED
        .iter()
        .map(|m| match aggregated {
            true => format!("{m}_mean"),
            false => m.to_string(),
        })
        .filter(|y| match table.columns.iter().position(|c| c == y) {
            Some(c) => numeric(c),
            None => false,
        })
        .map(|y| PlotSpec {
            x: table.columns[x].clone(),
            y,
            by: by.map(|c| table.columns[c].clone()),
            filters: filters.clone(),
            log_x: false,
            log_y: false,
        })
        .collect()
}

/// The grid in words: the rows, and the values of each parameter that varies.
pub fn words(table: &DataTable) -> String {
    let varied = varied(table);
    let aggregated = table.columns.iter().position(|c| c == "seeds");
    let seeds = match (
        aggregated,
        table.columns.iter().position(|c| c == "replicate"),
    ) {
        (Some(c), _) => table.rows.first().map_or(0, |r| r[c].parse().unwrap_or(0)),
        (None, Some(c)) => distinct(table, c).len(),
        (None, None) => 1,
    };
    let rows = table.rows.len();
    let grid = if varied.is_empty() {
        "one cell, every parameter as in the config below".to_string()
    } else {
        varied
            .iter()
            .map(|&c| format!("{} {}", table.columns[c], distinct(table, c).join(", ")))
            .collect::<Vec<_>>()
            .join(" × ")
    };
    let layout = match aggregated {
        Some(_) => format!(
            "{rows} {} (one a cell, statistics over {seeds} {})",
            if rows == 1 { "row" } else { "rows" },
            if seeds == 1 { "seed" } else { "seeds" }
        ),
        None => format!(
            "{rows} {} ({seeds} {} a cell)",
            if rows == 1 { "row" } else { "rows" },
            if seeds == 1 { "seed" } else { "seeds" }
        ),
    };
    format!(
        "A sweep of {layout}: {grid}. Every other parameter is the same in every row (the \
         config below)."
    )
}

/// The table's columns: the parameters that vary, the replicate and seed (or seed count),
/// and every metric some row has a value for.
fn shown_columns(table: &DataTable) -> Vec<usize> {
    let parameters = parameter_count(table);
    let mut shown = varied(table);
    for c in parameters..table.columns.len() {
        let metric = !matches!(table.columns[c].as_str(), "replicate" | "seed" | "seeds");
        if !metric || table.rows.iter().any(|r| !r[c].is_empty()) {
            shown.push(c);
        }
    }
    shown
}

/// The whole page. Fails on a CSV the sweep could not have written, or a chart that cannot
/// be drawn.
pub fn render_sweep(page: &SweepPage<'_>) -> Result<String, ChartError> {
    let table = DataTable::parse(page.csv.as_bytes(), "this sweep")?;
    let mut out = Skeleton::start(page.title);
    out.scenario(&words(&table));
    out.heading("Rows");
    out.paragraph(
        "The parameters that vary, then the figures of each row, as the CSV has them (empty: \
         the figure does not apply); the CSV, every column, is in the data block at the end.",
    );
    let shown = shown_columns(&table);
    let header: Vec<String> = shown.iter().map(|&c| table.columns[c].clone()).collect();
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|r| shown.iter().map(|&c| r[c].clone()).collect())
        .collect();
    out.table("summary", &header, &rows);
    let mut charts = Vec::new();
    for spec in plots(&table) {
        charts.push(LineChart::from_table(&table, &spec)?.render(ImageFormat::Svg, None)?);
    }
    if charts.is_empty() {
        out.paragraph("No numeric parameter varies, so there is no line to draw: the table holds every figure.");
    }
    out.charts(&charts);
    out.reproduce(
        page.seed,
        page.command,
        "The sweep as a config file (<code>herd-sim sweep --config sweep.toml</code> runs it):",
        page.config,
    );
    out.colophon("one colour a line, in the palette's order");
    out.data("sweep-csv", "text/csv", page.csv);
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> DataTable {
        DataTable::parse(text.as_bytes(), "t").unwrap()
    }

    #[test]
    fn the_first_numeric_parameter_that_varies_is_the_x_and_strategies_the_lines() {
        let t = table(
            "strategy,clients,retries,replicate,seed,peak,finish_s,goodput_pct\n\
             a,10,4,0,1,3,1.5,\n\
             a,100,5,0,2,30,2.5,\n\
             b,10,4,0,3,4,1.5,\n\
             b,100,5,0,4,40,3.5,\n",
        );
        let specs = plots(&t);
        // goodput is empty: not charted; retries varies too: held at its first value.
        let ys: Vec<&str> = specs.iter().map(|s| s.y.as_str()).collect();
        assert_eq!(ys, ["peak", "finish_s"]);
        assert_eq!(specs[0].x, "clients");
        assert_eq!(specs[0].by.as_deref(), Some("strategy"));
        assert_eq!(specs[0].filters, [("retries".to_string(), "4".to_string())]);
        assert_eq!(
            words(&t),
            "A sweep of 4 rows (1 seed a cell): strategy a, b × clients 10, 100 × retries 4, 5. \
             Every other parameter is the same in every row (the config below)."
        );
        // The table: the parameters that vary, the replicate, the seed and the figures some
        // row has.
        let shown: Vec<&str> = shown_columns(&t)
            .iter()
            .map(|&c| t.columns[c].as_str())
            .collect();
        assert_eq!(
            shown,
            [
                "strategy",
                "clients",
                "retries",
                "replicate",
                "seed",
                "peak",
                "finish_s"
            ]
        );
    }

    #[test]
    fn an_aggregated_sweep_charts_the_means_and_strategies_alone_draw_nothing() {
        let t = table(
            "strategy,clients,seeds,peak_mean,peak_sd\n\
             a,10,5,3,1\n\
             a,20,5,6,1\n",
        );
        let specs = plots(&t);
        assert_eq!(specs.len(), 1);
        assert_eq!(
            (
                specs[0].x.as_str(),
                specs[0].y.as_str(),
                specs[0].by.as_deref()
            ),
            ("clients", "peak_mean", None)
        );
        assert!(words(&t).starts_with("A sweep of 2 rows (one a cell, statistics over 5 seeds)"));
        let t = table("strategy,clients,replicate,seed,peak\na,10,0,1,3\nb,10,0,2,4\n");
        assert!(plots(&t).is_empty());
    }
}
