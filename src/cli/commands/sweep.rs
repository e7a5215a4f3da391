//! `herd-sim sweep` and `herd-sim merge`: plan the grid, open the CSV (and the page) before
//! anything runs, stream the rows with a progress bar; merge shards into one file.

use herd_sim::config::{check_work, human_bytes};
use herd_sim::output::OutputFile;
use herd_sim::report::html::SWEEP_ROWS_MAX;
use herd_sim::sweep::sink::Destination;
use herd_sim::sweep::{self, shard::ShardRun, sink::RowSink, Plan, SweepError};

use crate::cli::outputs::{check_output, commit, create_output, progress_bar};
use crate::cli::{MergeArgs, SweepArgs};

pub fn sweep(args: SweepArgs) -> anyhow::Result<()> {
    if args.plan {
        print!("{}", args.plan_text()?);
        return Ok(());
    }
    // Bad output paths are bad input, said before the grid is even planned.
    check_output("--out", &args.out)?;
    if let Some(path) = &args.html {
        check_output("--html", path)?;
    }
    let (spec, destination, start) = args.spec()?;
    let spec_for_page = spec.clone();
    let (plan, shard) = match args.shard()? {
        None => (Plan::new(spec)?, None),
        Some(shard) => {
            let (plan, run) = ShardRun::prepare(spec, shard, &destination)?;
            (plan, Some(run))
        }
    };
    // Refused in `Plan::new` without --yes; with it, said once the output is open.
    let what = if shard.is_some() { "shard" } else { "sweep" };
    let note = check_work(plan.work_estimate(), what, args.yes)?;
    // Threads started after the input is validated and before the output is opened.
    let pool = sweep::thread_pool(args.threads.map(|n| n as usize))?;
    let html = match &args.html {
        Some(path) => Some(sweep_html_output(
            &plan,
            path,
            &destination,
            shard.is_some(),
        )?),
        None => None,
    };
    // Opened before anything is simulated: a bad path fails at once.
    let mut sink = RowSink::open(&plan, &destination, start)?;
    let copy = match html {
        Some(_) => Some(sink.keep_copy(&plan)?),
        None => None,
    };
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    if let Some(run) = &shard {
        run.begin()?;
    }
    let bar = progress_bar(plan.rows(), args.quiet, "rows");
    let outcome = sweep::run_in(&pool, &plan, sink, &|done| bar.set_position(done));
    bar.finish_and_clear();
    match outcome {
        // `herd-sim sweep | head`: the reader has all it wanted.
        Err(SweepError::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::BrokenPipe => {
            return Ok(())
        }
        other => other?,
    }
    if let Some(run) = shard {
        run.finish()?;
    }
    if let (Some(out), Some(copy)) = (html, copy) {
        commit(
            out,
            &crate::cli::html::sweep_page(&spec_for_page, &copy.take())?,
        )?;
    }
    Ok(())
}

/// Checks a sweep's `--html` before anything runs and opens it: not with a shard (a page
/// shows the whole sweep), not on standard output beside the CSV, at most
/// [`SWEEP_ROWS_MAX`] rows, and the page's copy of the rows within the memory limit.
pub fn sweep_html_output(
    plan: &Plan,
    path: &std::path::Path,
    destination: &Destination,
    shard: bool,
) -> anyhow::Result<OutputFile> {
    let refuse = |accepted: String| SweepError::Setting {
        field: "--html",
        value: path.display().to_string(),
        accepted,
    };
    if shard {
        return Err(refuse(
            "accepted: --html on a whole sweep, not a shard (draw the merged file with herd-sim plot)".into(),
        )
        .into());
    }
    if path.as_os_str() == "-" && *destination == Destination::Stdout {
        return Err(refuse(
            "standard output already carries the CSV; accepted: --out FILE for the CSV, or another path for --html".into(),
        )
        .into());
    }
    if plan.rows() > SWEEP_ROWS_MAX {
        return Err(refuse(format!(
            "accepted: a sweep of at most {SWEEP_ROWS_MAX} rows (this one has {}; --aggregate makes one row a cell)",
            plan.rows()
        ))
        .into());
    }
    // The copy of the rows, their table and the data block: three copies of the CSV, each
    // row at most the sweep's own buffer estimate of a row.
    let page = plan
        .rows()
        .saturating_mul(plan.row_bytes())
        .saturating_mul(3);
    let limit = plan.memory_limit();
    let total = plan.memory_estimate().total().saturating_add(page);
    if total > limit {
        return Err(refuse(format!(
            "the page needs {} beside the sweep's {}, past the memory limit of {}; accepted: --aggregate, fewer seeds or a larger --memory-limit",
            human_bytes(page),
            human_bytes(plan.memory_estimate().total()),
            human_bytes(limit)
        ))
        .into());
    }
    create_output("--html", path)
}

/// `herd-sim merge`: the shards of one sweep into the file one machine writes.
pub fn merge(args: MergeArgs) -> anyhow::Result<()> {
    check_output("--out", &args.out)?;
    sweep::merge::merge(&args.inputs, &args.out, args.aggregate)?;
    Ok(())
}
