//! `--html PATH`, the binary's side: gathers what a page shows (a run's JSON and table
//! outputs, its chart as SVG, the attempts of a small run; a sweep's rows; a boundary search's
//! JSON and curve, or its phase diagram over two axes; a tune's JSON, frontier and files; the command and the config that
//! reproduce them) and hands it to [`herd_sim::report::html`], which builds the
//! page.

use herd_sim::chart::{HistogramChart, ImageFormat, SeriesChart};
use herd_sim::config::DEFAULT_SEED;
use herd_sim::config::{Scenario, ScenarioFile};
use herd_sim::experiment::{self, Report};
use herd_sim::report::html::{
    self, HtmlPage, SweepPage, TIMELINE_ATTEMPTS_MAX, TIMELINE_CLIENTS_MAX,
};
use herd_sim::report::Format;
use herd_sim::sweep::{Layout, SweepSpec};
use herd_sim::trace::{Sample, TraceFormat, TraceWriter};

use super::RunArgs;

/// Flags left out of the page's command: they never change what the run computes.
const UNSHOWN: [&str; 2] = ["--threads", "--html"];

/// The command that reproduces the run: this invocation's words, without [`UNSHOWN`], with
/// `--seed` added when it was not given.
fn command(seed: u64) -> String {
    let (mut shown, seeded) = command_words();
    if !seeded {
        shown.push(format!("--seed {seed}"));
    }
    shown.join(" ")
}

/// This invocation's words, without [`UNSHOWN`], each quoted for a shell where it needs it,
/// and whether `--seed` is among them.
fn command_words() -> (Vec<String>, bool) {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let mut shown = vec!["herd-sim".to_string()];
    let mut skip = false;
    let mut seeded = false;
    for word in words {
        if std::mem::take(&mut skip) {
            continue;
        }
        if UNSHOWN.contains(&word.as_str()) {
            skip = true;
            continue;
        }
        if UNSHOWN.iter().any(|f| word.starts_with(&format!("{f}="))) {
            continue;
        }
        seeded |= word == "--seed" || word.starts_with("--seed=");
        shown.push(shell_word(&word));
    }
    (shown, seeded)
}

fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./,:=+%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The page of a finished run. `file` is the scenario as given (config and flags), written
/// into the page as the config that reproduces it.
pub fn page(
    report: &Report,
    scenario: &Scenario,
    file: &ScenarioFile,
    args: &RunArgs,
) -> anyhow::Result<Vec<u8>> {
    let json = String::from_utf8(Format::Json.exporter().serialize(report)?)?;
    let table = String::from_utf8(Format::Table.exporter().serialize(report)?)?;
    let words = table.lines().next().unwrap_or_default().to_string();
    let chart = if scenario.run_spec(scenario.strategies[0]).uses_call_loop() {
        SeriesChart::from_report(report, scenario, args.chart_scale.into())?
            .render(ImageFormat::Svg, args.chart_size)?
    } else {
        HistogramChart::from_report(report, args.chart_scale.into())?
            .render(ImageFormat::Svg, args.chart_size)?
    };
    // A small run is simulated again with every attempt kept in memory: the same attempts
    // as its --trace (replicate 0 of each strategy), for the timeline.
    let attempts = if scenario.clients <= TIMELINE_CLIENTS_MAX
        && scenario.requests_estimate() <= TIMELINE_ATTEMPTS_MAX
    {
        let mut lines = Vec::new();
        let mut writer = TraceWriter::new(&mut lines, TraceFormat::JsonLines, Sample::default());
        experiment::run_traced(scenario, &mut writer);
        writer.finish()?;
        Some(String::from_utf8(lines)?)
    } else {
        None
    };
    let mut file = file.clone();
    file.seed = Some(scenario.seed);
    let config = toml::to_string(&file)?;
    let command = command(scenario.seed);
    let page = HtmlPage {
        title: "herd-sim run",
        words: &words,
        json: &json,
        charts: vec![chart],
        attempts: attempts.as_deref(),
        command: &command,
        seed: scenario.seed,
        config: &config,
    };
    Ok(html::render(&page)?.into_bytes())
}

/// The page of a finished sweep, from its CSV (header and rows in grid order).
pub fn sweep_page(spec: &SweepSpec, csv: &[u8]) -> anyhow::Result<Vec<u8>> {
    let seed = spec.base.seed.unwrap_or(DEFAULT_SEED);
    let mut base = spec.base.clone();
    base.seed = Some(seed);
    // The scenario keys, then the grid as the command line wrote it: `herd-sim sweep
    // --config` reads it back.
    let run = match spec.layout {
        Layout::Tidy => "herd-sim sweep --config sweep.toml",
        Layout::Aggregate => "herd-sim sweep --config sweep.toml --aggregate",
    };
    let mut config = format!("# {run}\n{}", toml::to_string(&base)?);
    config.push_str("\n[sweep]\n");
    for (name, values) in &spec.grid {
        let value = toml::Value::String(values.clone());
        config.push_str(&format!("{name} = {value}\n"));
    }
    config.push_str(&format!("seeds = {}\n", spec.seeds));
    let csv = String::from_utf8(csv.to_vec())?;
    let command = command(seed);
    let page = SweepPage {
        title: "herd-sim sweep",
        csv: &csv,
        command: &command,
        seed,
        config: &config,
    };
    Ok(html::render_sweep(&page)?.into_bytes())
}

/// The page of a finished boundary search.
pub fn boundary_page(
    args: &super::BoundaryArgs,
    report: &herd_sim::boundary::Report,
) -> anyhow::Result<Vec<u8>> {
    let json = String::from_utf8(report.serialize(herd_sim::boundary::export::Format::Json))?;
    let chart = herd_sim::chart::boundary::svg(report)?;
    search_page(args, &json, &chart, html::render_boundary)
}

/// The page of a finished boundary search over two axes: `chart` is its phase diagram.
pub fn phase_page(
    args: &super::BoundaryArgs,
    report: &herd_sim::boundary::plane::PlaneReport,
    chart: &herd_sim::chart::phase::PhaseChart,
) -> anyhow::Result<Vec<u8>> {
    let json = String::from_utf8(report.serialize(herd_sim::boundary::export::Format::Json))?;
    let chart = chart.svg(None)?;
    search_page(args, &json, &chart, html::render_phase)
}

/// A search's page by `render`, from its JSON and chart: the seed, the command and the
/// scenario as a config file added.
fn search_page(
    args: &super::BoundaryArgs,
    json: &str,
    chart: &str,
    render: fn(&html::BoundaryPage<'_>) -> Result<String, serde_json::Error>,
) -> anyhow::Result<Vec<u8>> {
    let mut base = args.spec()?.base;
    let seed = base.seed.unwrap_or(DEFAULT_SEED);
    base.seed = Some(seed);
    let config = toml::to_string(&base)?;
    let command = command(seed);
    let page = html::BoundaryPage {
        json,
        chart,
        command: &command,
        seed,
        config: &config,
    };
    Ok(render(&page)?.into_bytes())
}

/// The page of a finished tune: `text` is the tune file as given, `axes` the frontier chart's
/// terms (a file with fewer than two terms has no chart, said on the page).
pub fn tune_page(
    report: &herd_sim::advice::tune_frontier::TuneReport,
    text: &str,
    axes: &herd_sim::chart::frontier::FrontierAxes,
    size: Option<herd_sim::chart::ChartSize>,
) -> anyhow::Result<Vec<u8>> {
    let json = String::from_utf8(report.to_json())?;
    let file = &report.file;
    let chart = match axes.resolve(file) {
        Ok(_) => Ok(herd_sim::chart::frontier::frontier_svg(report, axes, size)?),
        Err(_) => Err(
            "the tune file has fewer than two terms among its objectives and constraints, and \
             the frontier is drawn as a scatter of two",
        ),
    };
    // Each scenario as its sweep ran it: the master seed over its own, else its own.
    let mut scenarios = Vec::new();
    let mut seeds = Vec::new();
    for s in &file.scenarios {
        let mut scenario = s.file.clone();
        scenario.seed = Some(file.seed.or(scenario.seed).unwrap_or(DEFAULT_SEED));
        seeds.push((s.name.clone(), scenario.seed.unwrap_or(DEFAULT_SEED)));
        scenarios.push((s.name.clone(), toml::to_string(&scenario)?));
    }
    let seeds = match file.seed {
        Some(seed) => format!("{seed}, the tune file's master seed, laid over every scenario's"),
        None if seeds.windows(2).all(|w| w[0].1 == w[1].1) => format!(
            "{}, every scenario's own (the tune file sets no master seed)",
            seeds.first().map_or(DEFAULT_SEED, |s| s.1)
        ),
        None => seeds
            .iter()
            .map(|(name, seed)| format!("{seed} ({name})"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let command = command_words().0.join(" ");
    let page = html::TunePage {
        json: &json,
        chart: chart.as_deref().map_err(|why| *why),
        command: &command,
        seeds: &seeds,
        tune_file: text,
        scenarios: &scenarios,
    };
    Ok(html::render_tune(&page)?.into_bytes())
}
