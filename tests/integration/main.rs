//! Integration tests: one binary (`autotests = false`), one module per capability, driving the
//! real `herd-sim` binary with assert_cmd where the command line is what is tested.

mod budgets;
mod charts;
mod control;
mod core;
mod deploy;
mod fixture;
mod fuzz;
mod hardening;
mod limiter;
mod occ;
mod overload;
mod picture;
mod properties;
mod readme;
mod series_chart;
mod shard;
mod sweep;
