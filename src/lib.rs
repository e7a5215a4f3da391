//! herd-sim: a deterministic discrete-event simulator of thundering herds — N clients retrying
//! against a modelled server — that counts how many requests land in each window, how long
//! the work takes and how much traffic exists only to be refused.
//!
//! The layers, top to bottom: [`config`] (what the user asked for, validated once) →
//! [`experiment`] (runs strategies in parallel) → [`engine`] (the event loop) → [`policy`]
//! (retry strategies) and [`server`] (server models) → [`metrics`] (what is counted) →
//! [`report`] (tables, JSON, CSV), [`chart`] (PNG and SVG) and [`output`] (files written whole; [`input`] reads them, bounded).
//! [`sweep`] runs grids of scenarios over many seeds into CSV; [`boundary`], a layer above it,
//! searches an axis for the value at which the collapse probability crosses a level; [`advice`]
//! (lint, tune) sits on it too. [`time`] and [`rng`]
//! hold the two rules everything else relies on: integer nanoseconds, and one documented
//! seeding rule. [`fixture`] plays scripted scenarios through the same [`policy`] code, one
//! client at a time, to pin a retry policy in CI; [`client`] offers the same policies to real
//! clients, over a real clock; `adapters` (cargo features `tower`, `backon`) runs real retry
//! crates inside the herd and offers herd-sim's policies as theirs. The library never imports clap; the binary's
//! `cli` module (src/cli/) does.

#![warn(missing_docs)]

#[cfg(any(feature = "tower", feature = "backon"))]
pub mod adapters;
pub mod advice;
pub mod boundary;
pub mod chart;
pub mod client;
pub mod config;
pub mod engine;
pub mod experiment;
pub mod fixture;
pub mod input;
pub mod metrics;
pub mod output;
pub mod overload;
pub mod policy;
pub mod policy_report;
pub mod report;
pub mod rng;
pub mod series;
pub mod server;
pub mod sniff;
pub mod sweep;
pub mod time;
pub mod trace;
pub mod workload;
