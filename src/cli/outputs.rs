//! The outputs every command shares: an output file opened before any work and committed
//! whole, two outputs refused when they name one file, standard output that a closed pipe
//! does not fail, and the one progress bar.

use std::io::{IsTerminal, Write};

use anyhow::Context;

use herd_sim::config::ConfigError;
use herd_sim::output::{OutputFile, OutputTarget};

/// Prepares an output file, so a path that cannot be written fails before any work.
pub fn create_output(path: &std::path::Path) -> anyhow::Result<OutputFile> {
    OutputFile::create(path).with_context(|| format!("cannot write {}", path.display()))
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
        let this =
            OutputTarget::of(path).with_context(|| format!("cannot write {}", path.display()))?;
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
