//! The outputs every command shares: an output file opened before any work and committed
//! whole, two outputs refused when they name one file, standard output that a closed pipe
//! does not fail, and the one progress bar.

use std::io::{IsTerminal, Write};

use anyhow::Context;

use herd_sim::config::ConfigError;
use herd_sim::output::{check_writable, OutputFile, OutputTarget};

/// Checks before any work that `path` can take the output of `flag`
/// ([`herd_sim::output::check_writable`]): a folder, a path whose folder cannot be made or
/// written, a file standing where a folder must be are bad input, one line naming the flag,
/// the path and why (exit 2). What fails later, while writing, stays an I/O error (exit 1).
pub fn check_output(flag: &'static str, path: &std::path::Path) -> anyhow::Result<OutputTarget> {
    check_writable(path).map_err(|e| {
        ConfigError::Invalid {
            field: flag,
            value: path.display().to_string(),
            accepted: format!(
                "cannot be written: {e}; accepted: a file in a folder that exists (or can be \
                 made) and takes new files, a device or FIFO, or - for standard output"
            ),
        }
        .into()
    })
}

/// Prepares the output file of `flag`, so a path that cannot be written fails before any
/// work: as bad input when [`check_output`] refuses it, else as the I/O error it is.
pub fn create_output(flag: &'static str, path: &std::path::Path) -> anyhow::Result<OutputFile> {
    check_output(flag, path)?;
    OutputFile::create(path).with_context(|| format!("cannot write {}", path.display()))
}

/// The flag that writes a chart of `format`: `--png` or `--svg`.
pub fn chart_flag(format: herd_sim::chart::ImageFormat) -> &'static str {
    match format {
        herd_sim::chart::ImageFormat::Png => "--png",
        herd_sim::chart::ImageFormat::Svg => "--svg",
    }
}

/// The outputs a search writes, opened before it runs: the report, the page and the charts.
pub type SearchOutputs = (
    OutputFile,
    Option<OutputFile>,
    Vec<(OutputFile, herd_sim::chart::ImageFormat)>,
);

/// Opens a search's `--out`, `--html` and charts (`--png`, `--svg`) before it runs.
pub fn open_outputs(
    out: &std::path::Path,
    html: Option<&std::path::Path>,
    charts: &[(&std::path::Path, herd_sim::chart::ImageFormat)],
) -> anyhow::Result<SearchOutputs> {
    let out = create_output("--out", out)?;
    let html = html.map(|p| create_output("--html", p)).transpose()?;
    let charts = charts
        .iter()
        .map(|&(path, format)| Ok((create_output(chart_flag(format), path)?, format)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((out, html, charts))
}

/// Writes `bytes` whole into `file` (renamed over a regular file, written into a device).
pub fn commit(file: OutputFile, bytes: &[u8]) -> anyhow::Result<()> {
    let shown = file.path().display().to_string();
    file.commit(bytes)
        .with_context(|| format!("cannot write {shown}"))
}

/// Refuses two outputs of one command that name the same file or both standard output (a
/// device such as `/dev/null` may take several).
pub fn distinct_outputs<'a>(
    outputs: impl Iterator<Item = (&'static str, &'a std::path::Path)>,
) -> anyhow::Result<()> {
    let mut taken: Vec<(&str, OutputTarget)> = Vec::new();
    for (flag, path) in outputs {
        let this = check_output(flag, path)?;
        if let Some((other, _)) = taken
            .iter()
            .find(|(_, t)| t.same_as(&this) && !matches!(t, OutputTarget::Special(_)))
        {
            return Err(ConfigError::Invalid {
                field: flag,
                value: path.display().to_string(),
                accepted: format!(
                    "{other} writes there too; accepted: a path no other output names"
                ),
            }
            .into());
        }
        taken.push((flag, this));
    }
    Ok(())
}

/// The one progress-bar factory: on stderr, with rate and ETA; hidden when stderr is not a
/// terminal (indicatif checks) or with `--quiet`, so stdout stays clean for the CSV.
pub fn progress_bar(rows: u64, quiet: bool, what: &str) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(rows);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what}  {{rate}}  ETA {{eta}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}/s", state.per_sec());
            },
        ),
    );
    bar
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
