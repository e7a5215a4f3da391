//! The simulation loop: advances simulated time through an [`EventQueue`] of client attempts,
//! asks the [`Server`] for each answer and the [`Policy`] for each next step, and counts
//! everything in a [`Tally`].
//!
//! Two paths give the same numbers:
//! - [`Path::EventQueue`], the general one: every attempt of every client goes through the
//!   queue in time order, so a server whose answers depend on other clients' requests (a shared
//!   rate limiter) sees them in the order they happen.
//! - [`Path::Independent`]: when the server is stateless ([`Server::clients_independent`]),
//!   each client's life is simulated start to finish, clients in parallel blocks with rayon.
//!   No queue, no per-client memory.
//!
//! A third, [`calls`], serves runs whose answers take time or whose load keeps coming (a
//! capacity server, timeouts, network delay, Poisson arrivals, outages): same queue, same
//! policies, same servers, with server and timeout events beside the clients'.
//!
//! They agree exactly because a client's random draws depend only on the run seed, its index
//! and its own history (see [`crate::rng`]), and a stateless server's answer only on the time.
//! `tests/integration` checks the agreement for every strategy. Nothing here does I/O.
//!
//! The two herd paths serve runs with browser tabs too ([`browser`]): what a client carries
//! is a type parameter of their loops, its tab or nothing (a run without tabs compiles as it
//! would without the parameter). Three loops in all, then: the herd's two and the call loop.
//!
//! This file is the engine's surface and the choice among those paths ([`Path`], [`simulate`]
//! and its variants). What a run is, [`RunSpec`], is in `run_spec.rs`; the herd's two paths in
//! `event_queue_path.rs` and `independent_path.rs`, sharing a client and what it carries
//! (`client.rs`) and its step at each answer (`herd_run.rs`; with a tab, `browser/herd.rs`);
//! the call loop in [`calls`].
//!
//! [`Server`]: crate::server::Server
//! [`Server::clients_independent`]: crate::server::Server::clients_independent
//! [`Policy`]: crate::policy::Policy

pub mod browser;
pub mod calls;
mod client;
pub mod delay;
mod event_queue_path;
mod herd_run;
mod independent_path;
mod known;
pub mod queue;
mod run_spec;
pub mod work;

pub use browser::Browser;
pub use calls::{simulate_calls, InFlightGuard, Overload};
pub use delay::{NetworkDelay, STUDY_NETWORK};
pub use event_queue_path::simulate_event_queue;
pub use independent_path::simulate_independent;
pub use queue::{Event, EventQueue};
pub use run_spec::{RunSpec, EXPERIMENT1_BIN};
pub use work::{Latency, Work};

use crate::metrics::Tally;
use crate::trace::{NoTrace, Observer};
use event_queue_path::event_queue_observed;
use independent_path::{new_block, simulate_block};

// What the herd loops' step with a browser tab ([`browser::herd`]) builds on.
use client::{Carried, Client, Exchange, NoTab, PreviousWait};
use herd_run::{FindWindow, Run};
use independent_path::{in_order, over_blocks};
use known::Known;

/// Clients simulated per parallel block on the independent path. Large enough that seeding a
/// block's ChaCha and merging its histogram are noise; small enough to balance two cores.
pub const CLIENTS_PER_BLOCK: u32 = 1 << 16;

/// Which way a run is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Path {
    /// The independent path when the server allows it, the event queue otherwise.
    #[default]
    Auto,
    /// Always the general event queue.
    EventQueue,
    /// Clients one after another; refused (panics) for a server whose clients interact.
    Independent,
}

/// Simulates `spec` and returns what was counted (for a call-loop run, without its
/// overload totals: see [`simulate_all`]).
pub fn simulate(spec: &RunSpec, path: Path) -> Tally {
    simulate_all(spec, path).0
}

/// Simulates `spec`: what every path counts, and the overload totals and series of a
/// call-loop run (`None` on the herd paths). The path is ignored for a call-loop run.
pub fn simulate_all(spec: &RunSpec, path: Path) -> (Tally, Option<crate::series::OverloadTally>) {
    simulate_observed(spec, path, NoTrace)
}

/// [`simulate_all`] counting into `tally`, a tally of an earlier run (of any spec), emptied
/// first, so that a worker that runs small runs one after another grows its histograms once
/// instead of every run: on the event queue, and on the independent path for a herd that fits
/// one block (merging one block into an empty tally, as [`simulate_independent`] does, adds
/// nothing to it). Any other run (more blocks, browser tabs) is [`simulate_all`]'s, and
/// `tally` is dropped.
pub fn simulate_all_in(
    spec: &RunSpec,
    path: Path,
    tally: Tally,
) -> (Tally, Option<crate::series::OverloadTally>) {
    if spec.uses_call_loop() || spec.browser.is_active() {
        return simulate_all(spec, path);
    }
    if !takes_independent(spec, path) {
        let tally = spec.reuse_tally(tally);
        return (event_queue_observed::<_, NoTab>(spec, NoTrace, tally), None);
    }
    if (1..=CLIENTS_PER_BLOCK).contains(&spec.clients) {
        let mut tally = spec.reuse_tally(tally);
        simulate_block::<_, NoTab>(spec, 0, spec.clients, NoTrace, &mut tally);
        return (tally, None);
    }
    simulate_all(spec, path)
}

/// [`simulate_all`], telling `trace` every attempt as it ends (see [`crate::trace`]). The
/// counts are those of the run without it. The independent paths then tell the attempts in
/// client order, whatever the thread count: in parts joined in order when `trace` splits,
/// else blocks one after another.
pub fn simulate_observed<O: Observer>(
    spec: &RunSpec,
    path: Path,
    mut trace: O,
) -> (Tally, Option<crate::series::OverloadTally>) {
    // A loop on one thread leaves the others idle: the trace is formatted on one of them.
    if O::ON && (spec.uses_call_loop() || !takes_independent(spec, path)) {
        if let Some(run) = trace.handing_off(|handoff| simulate_on(spec, path, handoff)) {
            return run;
        }
    }
    simulate_on(spec, path, trace)
}

/// [`simulate_observed`], telling `trace` on this thread (or on the independent paths' parts).
fn simulate_on<O: Observer>(
    spec: &RunSpec,
    path: Path,
    trace: O,
) -> (Tally, Option<crate::series::OverloadTally>) {
    if spec.uses_call_loop() {
        let (tally, overload) = calls::simulate_calls_observed(spec, trace);
        return (tally, Some(overload));
    }
    (simulate_herd(spec, path, trace), None)
}

/// True when `path` takes the independent path for `spec`'s herd.
fn takes_independent(spec: &RunSpec, path: Path) -> bool {
    match path {
        Path::Auto => spec.clients_independent(),
        Path::EventQueue => false,
        Path::Independent => {
            assert!(
                spec.clients_independent(),
                "the independent path needs a server whose clients cannot interact"
            );
            true
        }
    }
}

/// The herd paths, each client carrying its browser tab when the run has tabs.
fn simulate_herd<O: Observer>(spec: &RunSpec, path: Path, trace: O) -> Tally {
    if spec.browser.is_active() {
        herd_carrying::<O, browser::herd::TabState>(spec, path, trace)
    } else {
        herd_carrying::<O, NoTab>(spec, path, trace)
    }
}

/// The herd path `path` takes for `spec`, each client carrying `T`.
fn herd_carrying<O: Observer, T: Carried>(spec: &RunSpec, path: Path, trace: O) -> Tally {
    match (takes_independent(spec, path), O::ON) {
        (true, false) => over_blocks(spec, |first, last| {
            new_block::<_, T>(spec, first, last, NoTrace)
        }),
        (true, true) => in_order(
            spec,
            trace,
            |first, last, trace| new_block::<_, T>(spec, first, last, trace),
            |first, last, part| new_block::<_, T>(spec, first, last, part),
        ),
        (false, _) => event_queue_observed::<_, T>(spec, trace, spec.new_tally()),
    }
}

#[cfg(test)]
mod occ_tests;
#[cfg(test)]
mod tests;
