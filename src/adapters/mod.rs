//! Real retry crates inside the herd, and herd-sim's policies inside them, one file a crate,
//! each behind the cargo feature of its name (off by default, so the default build's
//! dependency tree does not grow):
//!
//! - [`tower`] (feature `tower`): `--budget tower-tps:...` runs tower's own
//!   `tower::retry::budget::TpsBudget` in every client process, on simulated time.
//! - [`backon`] (feature `backon`): `--strategy backon-exponential|backon-fibonacci|backon-constant`
//!   draws each wait from backon's own builders with their jitter, seeded from the client's
//!   stream; and [`backon::SimulatedBackoff`] is backon's `BackoffBuilder` over herd-sim's
//!   strategies.
//!
//! Nothing here is a model of a crate: the crate's code decides, herd-sim only feeds it the
//! events and the time of the call loop.

#[cfg(feature = "backon")]
pub mod backon;
#[cfg(feature = "tower")]
pub mod tower;
