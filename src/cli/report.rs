//! `herd-sim report`: the flags of the policy report (see [`herd_sim::policy_report`]).

use std::path::PathBuf;

use clap::Args;
use herd_sim::config::ConfigError;
use herd_sim::policy_report::{self, ReportFile};
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
    /// into, never replaced).
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
/// writes the Markdown report; with `--check`, compares a fresh run with the committed report
/// and the bands, prints a line a changed or out-of-band figure, and fails (exit 1) when a
/// band is broken.
pub fn report(args: ReportArgs) -> anyhow::Result<()> {
    let file = ReportFile::read(&args.file)?;
    let threads = args.threads.map(|n| n as usize);
    let (plans, note) = policy_report::plan(&file, threads, args.yes)?;
    let committed = if args.check {
        let path = args.committed_path();
        let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::Invalid {
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
        Some((path, text, figures))
    } else {
        None
    };
    let out = args.out.as_deref().map(create_output).transpose()?;
    let pool = sweep::thread_pool(threads)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let report = policy_report::run(&file, &plans, &pool)?;
    let text = policy_report::markdown::render(&report);
    match out {
        Some(file) => commit(file, text.as_bytes())?,
        None if committed.is_none() => write_stdout(text.as_bytes())?,
        None => {}
    }
    let Some((path, committed_text, figures)) = committed else {
        return Ok(());
    };
    let checked = policy_report::check::check(&report, &figures);
    let mut said = String::new();
    for line in &checked.lines {
        said.push_str(line);
        said.push('\n');
    }
    let same = if committed_text == text {
        "the committed report is this run's, byte for byte".to_string()
    } else {
        format!(
            "{} differs from this run's report: write it again with `herd-sim report {} --out {}`",
            path.display(),
            args.file.display(),
            path.display()
        )
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
