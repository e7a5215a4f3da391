//! Real retry crates inside the herd, and herd-sim's policies inside them, one file a crate,
//! each behind the cargo feature of its name (off by default, so the default build's
//! dependency tree does not grow):
//!
//! - [`tower`] (feature `tower`): `--budget tower-tps:...` runs tower's own
//!   `tower::retry::budget::TpsBudget` in every client process, on simulated time.
//!
//! Nothing here is a model of a crate: the crate's code decides, herd-sim only feeds it the
//! events and the time of the call loop.

#[cfg(feature = "tower")]
pub mod tower;
