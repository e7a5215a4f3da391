//! Integration tests: one binary (`autotests = false`), one module per capability, driving the
//! real `herd-sim` binary (through [`cmd`]) where the command line is what is tested.

mod adapters;
mod band;
mod boundary;
mod boundary_charts;
mod boundary_plane;
mod browser;
mod budgets;
mod charts;
mod closed_loop;
mod cmd;
mod control;
mod core;
mod deploy;
mod docs;
mod estimates;
mod fixture;
mod fuzz;
mod hardening;
mod help;
mod html;
mod html_phase;
mod incidents;
mod layer_description;
mod layer_timeouts;
mod limiter;
mod lint;
mod occ;
mod outage_presets;
mod outputs;
mod overload;
mod picture;
mod policy_report;
mod pools;
mod properties;
mod readme;
mod series_chart;
mod shard;
mod sweep;
mod trace;
mod trace_policy;
mod tune;
mod verdict;

/// The `herd-sim` binary built for these tests.
pub fn herd_sim() -> cmd::Command {
    cmd::Command::cargo_bin("herd-sim").unwrap()
}

/// Runs `herd-sim` with `args`, which must succeed, and returns its standard output.
pub fn herd_sim_ok(args: &[&str]) -> Vec<u8> {
    succeeded(herd_sim().args(args), args)
}

/// [`herd_sim_ok`] in the folder `dir`: relative paths among `args` are its.
pub fn herd_sim_ok_in(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    succeeded(herd_sim().args(args).current_dir(dir), args)
}

/// The standard output of `command` (run with `args`), which must succeed.
fn succeeded(command: &mut cmd::Command, args: &[&str]) -> Vec<u8> {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `herd-sim` with `args`, which must be refused as bad input the one way every command
/// refuses it: exit 2, nothing on standard output, exactly one line on standard error starting
/// `error: `, and no panic. Returns that line, for the caller to check what it names.
pub fn refused_in_one_line(args: &[&str]) -> String {
    let out = herd_sim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout for {args:?}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    stderr
}
