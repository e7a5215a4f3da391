//! What a run may cost before it starts: the latest time anything can happen (so how long
//! histograms can grow) and the bytes a run needs at most, part by part
//! ([`MemoryEstimate`]), checked against `--memory-limit`. A refusal names the whole estimate,
//! its largest part and the flags that drive that part. All arithmetic saturates
//! ([`Sat`]): an absurd input gives an estimate too big to run, never a small one.
//!
//! This module holds the estimate's parts and the sizes they are counted in; the bounds and
//! the checks that use them are its submodules, one concept each.

mod calls;
mod estimate;
mod guard;
mod horizon;
mod refusal;
#[cfg(test)]
mod tests;

pub use refusal::{human_bytes, reservable};

use super::saturating::Sat;
use crate::metrics::BLOCK_WINDOWS;
use crate::time::SimDuration;

/// Bytes of one window of a call-loop series.
const SERIES_ROW: u128 = std::mem::size_of::<crate::series::SeriesRow>() as u128;

/// Bytes of one place in a capacity server's queue: the request (32 B) and its late answer's
/// pending event (48 B), each three times over (a buffer grown by doubling, the event
/// queue's part-filled blocks).
const QUEUE_PLACE: u128 = 3 * 32 + 3 * 48;

/// The call loop's event queue beyond three times its events: its table of 2 048 buckets
/// and the first blocks of 64 events its buckets take, part filled, whatever the run
/// (without it `tests/memory` found the estimate 114 KiB short of the peak at 8 calls/s and
/// 166 KiB at 800; at 192 KiB, 62 KiB short of a closed-loop run of ten processes over
/// 60 000 s whose few pending events took a block each: 465 kB held, 403 kB counted).
const EVENT_TABLE: u128 = 256 << 10;

/// The thread pool's jobs and small buffers, and a call-loop run's two latency sketches.
const OVERHEAD: u128 = 64 << 10;

/// A part of what a run holds; each an upper bound, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// Per client: the herd paths' pending events, items left and finish times; the call
    /// loop's generators, retry controls, tabs and next starts.
    Clients,
    /// The tallies' histograms (retries, served, refused) over the windows of the horizon.
    Histograms,
    /// A rate limiter's keys (and a fixed window's starts).
    Keys,
    /// The call loop's calls in flight: their slots, places in the server's queue and
    /// pending events.
    Calls,
    /// The call loop's series: a row a `--series-bin` window of the horizon.
    Series,
    /// The results of the other strategies, kept until the report is built.
    Results,
    /// The figures of every replicate, kept to compute their spread.
    Replicates,
    /// The dense JSON report, chart or `--series-out` rows being written.
    Report,
    /// The thread pool's jobs and small buffers, and the call loop's latency sketches.
    Overhead,
}

impl Part {
    /// Every part, in the order they are listed.
    pub const ALL: [Part; 9] = [
        Part::Clients,
        Part::Histograms,
        Part::Keys,
        Part::Calls,
        Part::Series,
        Part::Results,
        Part::Replicates,
        Part::Report,
        Part::Overhead,
    ];
}

/// What a run may hold at once, part by part, in bytes; each part an upper bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryEstimate {
    bytes: [u64; Part::ALL.len()],
}

impl MemoryEstimate {
    /// The bytes of one part.
    pub fn get(&self, part: Part) -> u64 {
        self.bytes[part as usize]
    }

    fn add(&mut self, part: Part, bytes: Sat) {
        let slot = &mut self.bytes[part as usize];
        *slot = (Sat::from(*slot) + bytes).to_u64();
    }

    /// The sum of the parts.
    pub fn total(&self) -> u64 {
        self.bytes
            .iter()
            .fold(0u64, |sum, &b| sum.saturating_add(b))
    }

    /// The largest part and its bytes (the first of equals).
    pub fn largest(&self) -> (Part, u64) {
        Part::ALL
            .iter()
            .map(|&p| (p, self.get(p)))
            .fold((Part::Clients, 0), |best, next| {
                if next.1 > best.1 {
                    next
                } else {
                    best
                }
            })
    }
}

/// Bytes of a tab and a reading ([`crate::engine::browser`]): what browser tabs add to a
/// client's event on the herd paths, and at most to a process plus a call on the call loop.
fn tab_bytes() -> u128 {
    use crate::engine::browser::{Reading, Tab};
    (std::mem::size_of::<Tab>() + std::mem::size_of::<Reading>()) as u128
}

/// Bytes a histogram block beyond the dense windows is counted at: its 16 counts (128 B)
/// twice while the arena grows, its directory entries and map node.
const BLOCK_BYTES: u128 = 2 * 8 * BLOCK_WINDOWS as u128 + 2 * 4 * 4 + 64;

fn nanos(d: SimDuration) -> Sat {
    Sat::from(d.as_nanos())
}

fn instant(bound: Sat) -> SimDuration {
    SimDuration(bound.to_u64())
}

/// The worker threads a run gets without `--threads`: what rayon's own pool starts with
/// (`RAYON_NUM_THREADS` when a positive number, else one a core), worked out without
/// starting any thread. Asking rayon (`current_num_threads`) would start its global pool
/// during validation, before the input is checked and beside the pool `--threads` builds.
pub fn default_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
