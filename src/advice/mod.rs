//! Advice, a layer above [`crate::sweep`]: `lint` finds the known footguns of a retry policy
//! and `tune` recommends settings that meet a team's constraints. Both describe
//! every run they make as a [`probe::Probe`] (the flags a user can replay) and run it through
//! the sweep's plan, seeds and thread pool: no runner of their own. No I/O, no clap.

pub mod lint;
pub mod probe;
pub mod tune;
pub mod tune_export;
pub mod tune_file;
pub mod tune_frontier;
pub mod tune_library;
pub mod tune_search;
