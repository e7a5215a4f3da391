//! The estimate part by part ([`Scenario::memory_terms`]): what each run in flight holds on
//! the path it takes, what is kept until the report is built, and the dense report written
//! at the end. The call loop's own parts are counted in `calls`, the time they span in
//! `horizon`.

use super::{
    nanos, tab_bytes, MemoryEstimate, Part, Sat, BLOCK_BYTES, EVENT_TABLE, OVERHEAD, SERIES_ROW,
};
use crate::config::{LimitedModel, LimiterRule, Scenario, ServerModel};
use crate::engine::{Path, Work, CLIENTS_PER_BLOCK};
use crate::metrics::{BLOCK_WINDOWS, DENSE_WINDOWS, MAX_CLIENT_FINISHES};
use crate::policy::Strategy;
use crate::server::MAX_WINDOW_STARTS;

/// Bytes of a tally's three [`crate::metrics::Histogram`]s (retries, served, refused) of at
/// most `windows` windows and `blocks` blocks beyond the dense windows over the three: each
/// dense part (doubling as it grows), and beyond it at most one block of 16 counts per window
/// counted ([`BLOCK_BYTES`]), and the directories' first tables.
fn histograms_bytes(windows: Sat, blocks: Sat) -> Sat {
    let dense_windows = windows.min(Sat::from(DENSE_WINDOWS));
    let beyond = windows - dense_windows;
    let blocks = (beyond.div_ceil(Sat::from(BLOCK_WINDOWS)) * 3).min(blocks);
    let dense = dense_windows * (3 * 2 * 8);
    let sparse = if blocks == Sat::ZERO {
        Sat::ZERO
    } else {
        blocks * BLOCK_BYTES + 3 * 8 * 1024
    };
    dense + sparse
}

impl Scenario {
    /// Estimated bytes a run of this scenario needs at most, on the path it will take
    /// ([`Scenario::path`]; set it before asking): see [`MemoryEstimate`].
    pub fn memory_estimate(&self) -> u64 {
        self.memory_terms(false).total()
    }

    /// The estimate part by part; `report` adds the dense JSON report, chart or series
    /// ([`Part::Report`]).
    pub fn memory_terms(&self, report: bool) -> MemoryEstimate {
        let mut estimate = MemoryEstimate::default();
        let threads = Sat::from(self.threads.max(1));
        let clients = Sat::from(self.clients);
        let strategies = Sat::from(self.strategies.len());
        let replicates = Sat::from(self.replicates);
        let runs = strategies * replicates;
        let independent = self.runs_independent();
        // Histograms: the windows the horizon allows, but never more blocks than counted.
        let histograms = histograms_bytes(self.windows(), self.histogram_blocks());
        // Each client's finish time, in small runs (an `Option<SimTime>`, 16 B).
        let finishes = if self.clients as usize <= MAX_CLIENT_FINISHES {
            clients * 16
        } else {
            Sat::ZERO
        };
        let window_starts = match self.server {
            ServerModel::Limited(LimitedModel {
                rule: LimiterRule::FixedWindow(_),
                ..
            }) => Sat::from(8 * MAX_WINDOW_STARTS),
            _ => Sat::ZERO,
        };
        // Runs in flight at once. The event queue: one run a busy thread, each with its tally,
        // its pending events (one a client: 24 or 32 B, three times that with the queue's blocks
        // part filled, measured up to 2.75 times the events' size with random latencies), items left
        // (4 B a client with several items each) and the limiter's keys
        // (a sliding window logs `limit` times of 8 B a key). The independent path: one block
        // of clients a busy thread, and as many partial tallies again being merged.
        let items_bytes: u128 = match self.work {
            Work::Items(k) if k > 1 => 4,
            _ => 0,
        };
        let call_loop = self.run_spec(self.strategies[0]).uses_call_loop();
        if independent {
            let blocks = runs * Sat::from(self.clients.div_ceil(CLIENTS_PER_BLOCK));
            let block_clients = clients.min(Sat::from(CLIENTS_PER_BLOCK));
            let busy = threads.min(blocks);
            estimate.add(Part::Histograms, busy * histograms * 2);
            estimate.add(
                Part::Clients,
                busy * (finishes * 2 + block_clients * items_bytes),
            );
        } else {
            let key_bytes = match self.server {
                ServerModel::Down { .. }
                | ServerModel::Occ
                | ServerModel::Capacity(_)
                | ServerModel::Flaky(_) => Sat::ZERO,
                ServerModel::Limited(m) => {
                    let keys = clients.div_ceil(Sat::from(m.clients_per_address));
                    let per_key = match m.rule {
                        LimiterRule::SlidingWindow(r) => Sat::from(r.limit) * 8 + 16,
                        LimiterRule::FixedWindow(_) => Sat(32),
                        LimiterRule::TokenBucket(_) => Sat(32),
                    };
                    // A pool's servers keep a table each.
                    keys * per_key * Sat::from(self.overload.pool.len())
                }
            };
            let event: u128 = if self.strategies.contains(&Strategy::DecorrelatedJitter) {
                32
            } else {
                24
            } + if self.server == ServerModel::Occ {
                // `occ`'s events carry their read's offset.
                8
            } else {
                0
            } + if self.browser.is_active() {
                // A run with tabs carries each client's tab, its reading and a flag in its
                // event.
                tab_bytes() + 8
            } else {
                0
            };
            let busy = threads.min(runs);
            // A call loop that folds its windows keeps no histogram.
            if !call_loop || self.overload.keep_windows {
                estimate.add(Part::Histograms, busy * histograms);
            }
            // The call loop keeps its own per-client state (counted below), not the herd's
            // events.
            let per_client = if call_loop {
                Sat::ZERO
            } else {
                clients * (3 * event + items_bytes)
            };
            estimate.add(Part::Clients, busy * (finishes + per_client));
            estimate.add(Part::Keys, busy * (key_bytes + window_starts));
        }
        if call_loop {
            let busy = threads.min(runs);
            let (processes, calls, series) = self.call_loop_bytes();
            estimate.add(Part::Clients, busy * processes);
            estimate.add(Part::Calls, busy * calls);
            estimate.add(Part::Series, busy * series);
            estimate.add(Part::Overhead, busy * (2 * 65_536 + EVENT_TABLE));
            estimate.add(Part::Calls, busy * self.pool_bytes());
        }
        // Kept until the report is built: each other strategy's result (replicate 0's histograms,
        // finishes as seconds, window starts), and the figures of every other replicate (five
        // numbers of 8 B, twice while they are collected in parallel).
        // A call-loop run's result also keeps its series (a `SeriesRow` a window) and its
        // three description strings.
        let kept = if call_loop && !self.overload.keep_windows {
            Sat::ZERO
        } else {
            histograms + self.series_windows() * (SERIES_ROW + self.server_window_bytes())
        };
        estimate.add(
            Part::Results,
            (strategies - 1) * (kept + finishes + window_starts + 3 * 256),
        );
        if self.replicates > 1 {
            estimate.add(Part::Replicates, strategies * replicates * (2 * 40));
        }
        estimate.add(Part::Overhead, Sat(OVERHEAD));
        if report {
            // A run counted at its typical blocks writes its dense report from a span known
            // only once it ends: counted up front over the dense windows, and checked in full
            // before it is written ([`Scenario::check_dense_output`]).
            let windows = if self.counts_typical_blocks() {
                self.windows().min(Sat::from(DENSE_WINDOWS))
            } else {
                self.windows()
            };
            estimate.add(Part::Report, self.json_bytes(windows));
        }
        estimate
    }

    /// Whether this scenario's runs take the herd paths' independent-client path.
    pub(super) fn runs_independent(&self) -> bool {
        match self.path {
            Path::EventQueue => false,
            Path::Auto | Path::Independent => {
                self.run_spec(self.strategies[0]).clients_independent()
            }
        }
    }

    /// Requests a run can make at most: every try of every item.
    fn requests_bound(&self) -> Sat {
        let requests_per_item = Sat(self.tries_per_call());
        let clients = Sat::from(self.clients);
        match self.work {
            Work::Items(k) => Sat::from(k) * clients * requests_per_item,
            Work::Pool(p) => (Sat::from(p) + clients) * requests_per_item,
        }
    }

    /// Whether the histograms are counted at what a run typically touches rather than their
    /// worst case: a herd run behind a rate limiter whose histograms are guarded as it goes
    /// ([`Scenario::guard_in_flight`]). Its worst case (every item tried to the last retry,
    /// every wait at the cap) is far from what it does: a client that is served sends its
    /// next item at once, so the served requests of a window of the limiter come in a burst
    /// and its refusals follow within a few backoffs.
    fn counts_typical_blocks(&self) -> bool {
        self.overload.in_flight.limits_blocks() && matches!(self.server, ServerModel::Limited(_))
    }

    /// Blocks beyond the dense windows the three histograms of a run are counted for: two a
    /// request at most (a request counts in served or refused, and perhaps in retries); for a
    /// guarded run behind a rate limiter ([`Scenario::counts_typical_blocks`]) one an item
    /// (`tests/memory/sparse.rs` measured 0.53 an item for one client fetching a million
    /// items through a fixed window, 1.25 requests an item).
    pub(super) fn histogram_blocks(&self) -> Sat {
        let worst = self.requests_bound() * 2;
        if !self.counts_typical_blocks() {
            return worst;
        }
        let items = match self.work {
            Work::Items(k) => Sat::from(k) * Sat::from(self.clients),
            Work::Pool(p) => Sat::from(p),
        };
        worst.min(items)
    }

    /// Bytes of the JSON report (or a chart) whose histograms are written densely over
    /// `windows` windows: see [`Scenario::json_output_estimate`].
    fn json_bytes(&self, windows: Sat) -> Sat {
        let digits = u128::from(self.clients).to_string().len() as u128
            + u128::from(self.retries).to_string().len() as u128;
        Sat::from(self.strategies.len()) * windows * (3 * 3 * (9 + digits))
            + Sat::from(self.series_output_estimate())
    }

    /// Windows of `--bin` the horizon spans.
    pub(super) fn windows(&self) -> Sat {
        self.horizon_bound() / nanos(self.bin) + 1
    }

    /// Bytes of the JSON report at most: every histogram is written densely, one pretty-printed
    /// line a window (`      12,` : up to 20 digits and 9 more bytes), three histograms a
    /// strategy, and the buffer may be three times its length while it grows (the old one
    /// and the new, twice as long, at once: `tests/memory/sparse.rs` measured 3.0 times).
    pub fn json_output_estimate(&self) -> u64 {
        self.json_bytes(self.windows()).to_u64()
    }

    /// Bytes the dense JSON report (or a chart) of a finished run takes at most, counted as
    /// [`Scenario::json_output_estimate`] counts them but over the windows its histograms
    /// reached.
    pub fn dense_output_estimate(&self, report: &crate::experiment::Report) -> u64 {
        self.json_bytes(Sat::from(longest_histogram(report)))
            .to_u64()
    }
}

/// Windows of the longest histogram of `report`, written densely from window 0.
pub(super) fn longest_histogram(report: &crate::experiment::Report) -> usize {
    report
        .results
        .iter()
        .flat_map(|r| [&r.histogram, &r.histogram_served, &r.histogram_refused])
        .map(|h| h.len())
        .max()
        .unwrap_or(0)
}
