//! The report as Markdown: the figures' table first, then links to its charts, then what
//! reproduces them (scenarios, policies, seeds, the herd-sim version and command). Pure: the same report gives the same
//! bytes. [`committed_figures`] reads the figures' table of a committed report back.

use std::fmt::Write;

use super::{Expected, Figure, PolicyReport};

/// The header of the figures' table (how [`committed_figures`] finds it).
pub const TABLE_HEADER: &str = "| scenario | policy | metric | mean | min | max | band | verdict |";

/// A figure as the report writes it: two decimals.
pub fn number(x: f64) -> String {
    let text = format!("{x:.2}");
    if text == "-0.00" {
        "0.00".into()
    } else {
        text
    }
}

/// A band as the report writes it: `85–100`, or `committed ± 2`.
pub fn band_text(expected: Option<Expected>) -> String {
    match expected {
        Some(Expected::Band { lo, hi }) => format!("{}–{}", short(lo), short(hi)),
        Some(Expected::Tolerance(t)) => format!("committed ± {}", short(t)),
        None => "—".into(),
    }
}

fn short(x: f64) -> String {
    // Shortest round-trip form, as written in the report file.
    format!("{x}")
}

/// `ok` or `OUT` for a band; `—` for a tolerance (checked against a committed report).
pub fn verdict(figure: &Figure) -> &'static str {
    match figure.expected {
        Some(Expected::Band { lo, hi }) if figure.mean >= lo && figure.mean <= hi => "ok",
        Some(Expected::Band { .. }) => "OUT",
        _ => "—",
    }
}

/// The whole report.
pub fn render(report: &PolicyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", report.title);
    let _ = writeln!(out, "{TABLE_HEADER}");
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---|---|");
    for f in &report.figures {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            f.scenario,
            f.policy,
            f.metric,
            number(f.mean),
            number(f.min),
            number(f.max),
            band_text(f.expected),
            verdict(f)
        );
    }
    let _ = writeln!(
        out,
        "\nEach figure is the mean of the metric over {} seeds of its scenario and policy (the \
         smallest and largest beside it); a band `lo–hi` is checked against the mean, a \
         tolerance against the committed report by `herd-sim report --check`.",
        report.seeds
    );
    if !report.charts.is_empty() {
        let _ = writeln!(
            out,
            "\n## Charts\n\nA chart a scenario, beside this report: a panel a metric, a row a \
             policy; the dot is the mean (blue inside its band, vermillion outside), the grey \
             bar the seeds' smallest to largest, the green band `lo–hi` (a tolerance drawn \
             around this report's value)."
        );
        for chart in &report.charts {
            let _ = writeln!(
                out,
                "\n![{}: figures and bands]({})",
                alt_text(&chart.scenario),
                chart.link
            );
        }
    }
    let _ = writeln!(out, "\n## Scenarios\n\n| scenario | config |\n|---|---|");
    for (id, config) in &report.scenarios {
        let config = config
            .as_deref()
            .map_or("—".to_string(), |c| format!("`{c}`"));
        let _ = writeln!(out, "| {id} | {config} |");
    }
    let _ = writeln!(
        out,
        "\n## Policies\n\n| policy | keys over each scenario |\n|---|---|"
    );
    for (id, keys) in &report.policies {
        let keys = if keys.is_empty() {
            "—".to_string()
        } else {
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(out, "| {id} | {keys} |");
    }
    let _ = writeln!(
        out,
        "\n## Seeds\n\nEach pair runs as a sweep of one cell: its seeds derive from the \
         scenario's master seed and the cell's parameters as `herd-sim sweep` derives them.\n\n\
         | scenario | policy | seeds |\n|---|---|---|"
    );
    for s in &report.pair_seeds {
        let seeds = s
            .seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(out, "| {} | {} | {seeds} |", s.scenario, s.policy);
    }
    let _ = writeln!(
        out,
        "\n## Reproduce\n\nherd-sim {}, in the report file's folder: `herd-sim report {}` writes \
         this report; `herd-sim report {} --check` compares a fresh run with it.",
        env!("CARGO_PKG_VERSION"),
        report.file,
        report.file
    );
    out
}

/// `text` for an image's alt text: `\`, `[` and `]` escaped.
fn alt_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A figure of a committed report: scenario, policy, metric and mean.
#[derive(Clone, Debug, PartialEq)]
pub struct Committed {
    /// Scenario id.
    pub scenario: String,
    /// Policy id.
    pub policy: String,
    /// Metric.
    pub metric: String,
    /// The mean as written.
    pub mean: f64,
}

/// The figures' table of a committed report; `None` when `text` has no such table.
pub fn committed_figures(text: &str) -> Option<Vec<Committed>> {
    let mut lines = text.lines().skip_while(|l| l.trim_end() != TABLE_HEADER);
    lines.next()?;
    lines.next()?;
    let mut figures = Vec::new();
    for line in lines.take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let [scenario, policy, metric, mean, ..] = cells[..] else {
            return None;
        };
        figures.push(Committed {
            scenario: scenario.into(),
            policy: policy.into(),
            metric: metric.into(),
            mean: mean.parse().ok()?,
        });
    }
    Some(figures)
}
