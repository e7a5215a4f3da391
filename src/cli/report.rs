//! `herd-sim report`: the flags of the policy report (see [`herd_sim::policy_report`]).

use std::path::{Path, PathBuf};

use clap::Args;
use herd_sim::config::ConfigError;
use herd_sim::output::OutputTarget;
use herd_sim::policy_report::{self, charts, ReportFile};
use herd_sim::sweep;

use crate::cli::outputs::{commit, create_output, write_stdout};

use super::values::parse_threads;

/// Flags of `herd-sim report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Report file (TOML, or JSON by extension): scenarios, policies and bands.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Rerun, compare with the committed report and the bands; print a line a changed or
    /// out-of-band figure and exit 1 when a band is broken.
    #[arg(long)]
    pub check: bool,

    /// The committed report --check compares with [default: FILE with the extension .md].
    #[arg(long, value_name = "PATH")]
    pub committed: Option<PathBuf>,

    /// Write the report here instead of stdout (`-`: stdout; a device or FIFO is written
    /// into, never replaced), and its charts beside it, in FILE's name with `-charts`.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// Worker threads, 1 to 1024 [default: all cores]. The report never depends on it.
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Run work estimated past 3000000000 events instead of refusing it.
    #[arg(long)]
    pub yes: bool,
}

impl ReportArgs {
    /// The committed report's path.
    pub fn committed_path(&self) -> PathBuf {
        self.committed
            .clone()
            .unwrap_or_else(|| self.file.with_extension("md"))
    }
}
/// `herd-sim report`: plays the report file's scenarios × policies through the sweep and
/// writes the Markdown report, and its charts beside a report written to a file; with
/// `--check`, compares a fresh run with the committed report, its charts and the bands,
/// prints a line a changed or out-of-band figure and a changed chart, and fails (exit 1) when
/// a band is broken.
pub fn report(args: ReportArgs) -> anyhow::Result<()> {
    let file = ReportFile::read(&args.file)?;
    let threads = args.threads.map(|n| n as usize);
    let (plans, note) = policy_report::plan(&file, threads, args.yes)?;
    let links = charts::charts(&file);
    let committed = if args.check {
        let path = args.committed_path();
        let text = herd_sim::input::read_to_string(&path).map_err(|e| ConfigError::Invalid {
            field: "--committed",
            value: path.display().to_string(),
            accepted: format!(
                "cannot read it ({e}); accepted: the report `herd-sim report {}` wrote",
                args.file.display()
            ),
        })?;
        let figures = policy_report::markdown::committed_figures(&text).ok_or_else(|| {
            ConfigError::Invalid {
                field: "--committed",
                value: path.display().to_string(),
                accepted: "accepted: a report herd-sim report wrote (no figures' table found)"
                    .into(),
            }
        })?;
        // Read now: `--out` may name the committed report, and its charts are written over.
        let charts: Vec<(PathBuf, Option<Vec<u8>>)> = links
            .iter()
            .map(|c| {
                let at = beside(&path, &c.link);
                let bytes = std::fs::read(&at).ok();
                (at, bytes)
            })
            .collect();
        Some((path, text, figures, charts))
    } else {
        None
    };
    let out = args
        .out
        .as_deref()
        .map(|p| create_output("--out", p))
        .transpose()?;
    // The charts go beside a report written to a file (their links are relative to it),
    // opened with it before anything runs.
    let chart_files = match args.out.as_deref() {
        Some(path) if matches!(OutputTarget::of(path), Ok(OutputTarget::Regular(_))) => links
            .iter()
            .map(|c| create_output("--out", &beside(path, &c.link)))
            .collect::<anyhow::Result<Vec<_>>>()?,
        _ => Vec::new(),
    };
    let pool = sweep::thread_pool(threads)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let report = policy_report::run(&file, &plans, &pool)?;
    let text = policy_report::markdown::render(&report);
    let drawn = report
        .charts
        .iter()
        .map(|c| charts::render(&report, c))
        .collect::<Result<Vec<_>, _>>()?;
    for (chart, bytes) in chart_files.into_iter().zip(&drawn) {
        commit(chart, bytes)?;
    }
    match out {
        Some(file) => commit(file, text.as_bytes())?,
        None if committed.is_none() => write_stdout(text.as_bytes())?,
        None => {}
    }
    let Some((path, committed_text, figures, committed_charts)) = committed else {
        return Ok(());
    };
    let checked = policy_report::check::check(&report, &figures);
    let mut said = String::new();
    for line in &checked.lines {
        said.push_str(line);
        said.push('\n');
    }
    let mut charts_differ = 0;
    for ((at, before), bytes) in committed_charts.iter().zip(&drawn) {
        let verdict = match before {
            Some(before) if before == bytes => continue,
            Some(_) => "the chart differs from this run's",
            None => "not there (this run draws it)",
        };
        charts_differ += 1;
        said.push_str(&format!("{}: {verdict}\n", at.display()));
    }
    let same = match (committed_text == text, charts_differ, drawn.len()) {
        (true, 0, 0) => "the committed report is this run's, byte for byte".to_string(),
        (true, 0, 1) => "the committed report and its chart are this run's, byte for byte".into(),
        (true, 0, n) => {
            format!("the committed report and its {n} charts are this run's, byte for byte")
        }
        (same_text, differ, n) => {
            let mut what = Vec::new();
            if !same_text {
                what.push(format!("{} differs from this run's report", path.display()));
            }
            if differ > 0 {
                what.push(format!("{differ} of {n} charts differ from this run's"));
            }
            format!(
                "{}: write {} again with `herd-sim report {} --out {}`",
                what.join(", "),
                if what.len() > 1 || differ > 1 {
                    "them"
                } else {
                    "it"
                },
                args.file.display(),
                path.display()
            )
        }
    };
    said.push_str(&format!(
        "check: {} of {} figures within their bands, {} changed since {}; {same}\n",
        checked.figures - checked.broken,
        checked.figures,
        checked.changed,
        path.display()
    ));
    write_stdout(said.as_bytes())?;
    match checked.broken {
        0 => Ok(()),
        n => anyhow::bail!("{n} of {} figures out of their bands", checked.figures),
    }
}

/// The path of `link` (relative to a report, `/`-separated) beside the report at `report`.
fn beside(report: &Path, link: &str) -> PathBuf {
    let folder = match report.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    link.split('/').fold(folder, |path, part| path.join(part))
}
