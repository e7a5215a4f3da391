//! Integration tests: one binary (`autotests = false`), one module per capability, driving the
//! real `herd-sim` binary (through [`cmd`]) where the command line is what is tested.

mod boundary;
mod browser;
mod budgets;
mod charts;
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
mod incidents;
mod limiter;
mod lint;
mod occ;
mod outage_presets;
mod outputs;
mod overload;
mod picture;
mod properties;
mod readme;
mod series_chart;
mod shard;
mod sweep;
mod trace;
mod trace_policy;
mod verdict;

/// The `herd-sim` binary built for these tests.
pub fn herd_sim() -> cmd::Command {
    cmd::Command::cargo_bin("herd-sim").unwrap()
}

/// Runs `herd-sim` with `args`, which must succeed, and returns its standard output.
pub fn herd_sim_ok(args: &[&str]) -> Vec<u8> {
    let out = herd_sim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
