//! What a run may cost before it starts: the latest time anything can happen (so how long
//! histograms can grow) and the bytes a run needs at most, part by part
//! ([`MemoryEstimate`]), checked against `--memory-limit`. A refusal names the whole estimate,
//! its largest part and the flags that drive that part. All arithmetic saturates
//! ([`Sat`]): an absurd input gives an estimate too big to run, never a small one.

use super::saturating::Sat;
use super::{ConfigError, LimitedModel, LimiterRule, Scenario, ServerModel};
use crate::engine::{Path, Work, CLIENTS_PER_BLOCK};
use crate::metrics::{BLOCK_WINDOWS, DENSE_WINDOWS, MAX_CLIENT_FINISHES};
use crate::policy::Strategy;
use crate::server::MAX_WINDOW_STARTS;
use crate::time::SimDuration;
use crate::workload::Arrivals;

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

fn nanos(d: SimDuration) -> Sat {
    Sat::from(d.as_nanos())
}

fn instant(bound: Sat) -> SimDuration {
    SimDuration(bound.to_u64())
}

impl Scenario {
    /// The latest time anything can happen in a run of this scenario: what its histograms
    /// can span. Every wait is at most the cap (every strategy is capped) plus a round trip.
    /// - Any server: a client sends at most `retries + 1` requests an item.
    /// - Down for good: every request is refused, so each client gives up on its first item,
    ///   after the longest waits its strategy can draw (see `longest_refused_waits`).
    /// - Down until `t`: from `t` on every request is served; a client still trying sends
    ///   within one wait of `t`, then one request a round trip for each item left.
    /// - A rate limiter: a refused request proves that its key admitted (served) a request
    ///   within the limiter's memory before it — the window, or one token's refill interval
    ///   — plus the 1 s a whole-second store may keep a key. So while work is left, every
    ///   stretch of one wait plus that memory serves an item, and there are only so many
    ///   items.
    /// - `occ`: a write fails only when another succeeded after its read, at most two message
    ///   delays `d` before it; and any unfinished client has a write arriving within one wait
    ///   and four delays of any instant. So while clients remain, every stretch of one wait
    ///   and six delays holds a success, and each client makes one: the last answer comes
    ///   within `clients × (wait + 6d) + d`, or sooner `retries + 1` attempts of `wait + 4d`.
    ///   `d` is the network delay's [`crate::engine::NetworkDelay::practical_max`].
    pub fn horizon(&self) -> SimDuration {
        instant(self.horizon_bound())
    }

    fn horizon_bound(&self) -> Sat {
        if self.run_spec(self.strategies[0]).uses_call_loop() {
            return self.call_loop_horizon();
        }
        const SECOND: u128 = 1_000_000_000;
        let round_trip = nanos(self.latency.max());
        let wait = nanos(self.backoff.cap.max(self.backoff.base))
            + self.beyond_cap()
            + round_trip
            + self.tab_delay();
        let requests_per_item = Sat::from(self.retries) + 1;
        let (items_per_client, items) = match self.work {
            Work::Items(k) => (Sat::from(k), Sat::from(k) * Sat::from(self.clients)),
            Work::Pool(p) => (Sat::from(p), Sat::from(p)),
        };
        let each_client = wait * requests_per_item * items_per_client;
        match self.server {
            ServerModel::Down { recover_at: None } => (wait * requests_per_item).min(
                self.longest_refused_waits() + (round_trip + self.tab_delay()) * requests_per_item,
            ),
            ServerModel::Down {
                recover_at: Some(t),
            } => each_client.min(nanos(t) + wait + items_per_client * round_trip),
            // Call-loop runs are bounded by `call_loop_horizon` above.
            ServerModel::Capacity(_) | ServerModel::Flaky(_) => wait * requests_per_item,
            ServerModel::Limited(m) => {
                let memory = match m.rule {
                    LimiterRule::FixedWindow(r) => r.window,
                    LimiterRule::SlidingWindow(r) => r.window,
                    LimiterRule::TokenBucket(r) => r.interval,
                };
                let stretch = wait + nanos(memory) + SECOND;
                each_client.min((items + 1) * stretch + wait)
            }
            ServerModel::Occ => {
                let d = nanos(self.network_delay.practical_max());
                let attempts = requests_per_item * (wait + d * 4);
                attempts.min(Sat::from(self.clients) * (wait + d * 6)) + d
            }
        }
    }

    /// What browser tabs can add to one wait: a hidden tab's timer runs up to a minute late
    /// (Chrome's minute alignment), and a pausing tab waits for its flip to visible, which in
    /// practice (an exponential dwell beyond 40 means has probability e^−40) comes within 40
    /// mean dwells, counted twice (paused on reading, and again when the timer ran hidden).
    fn tab_delay(&self) -> Sat {
        use crate::engine::browser::WhenHidden;
        let b = &self.browser;
        let mut extra = Sat::ZERO;
        if b.hidden > 0.0 || b.switch_mean.is_some() {
            extra = extra + 60_000_000_000;
        }
        if let (WhenHidden::Pause, Some(mean)) = (b.when_hidden, b.switch_mean) {
            extra = extra + nanos(mean) * (2 * 40);
        }
        extra
    }

    /// The longest a client of any of the scenario's strategies can wait in all before its
    /// last retry against a server that answers nothing but refusals without headers (down
    /// for good): the sum of each retry's largest wait. Exponential-shaped strategies (and the
    /// header readers, which fall back to them) wait at most `e_k`; fixed waits `base`; naive
    /// nothing; decorrelated jitter's `k`-th wait stays below `min(cap, base · 3^k)`.
    /// The most any of the scenario's strategies' waits exceed the cap by
    /// ([`Strategy::beyond_cap`]: zero but for the real crates' strategies).
    fn beyond_cap(&self) -> Sat {
        self.strategies
            .iter()
            .map(|s| nanos(s.beyond_cap(&self.backoff)))
            .max()
            .unwrap_or(Sat::ZERO)
    }

    fn longest_refused_waits(&self) -> Sat {
        let cap = nanos(self.backoff.cap);
        let base = nanos(self.backoff.base).min(cap);
        let mut longest = Sat::ZERO;
        for &strategy in &self.strategies {
            let wait = |k: u32| -> Sat {
                match strategy {
                    Strategy::Naive => Sat::ZERO,
                    Strategy::Fixed => base,
                    Strategy::DecorrelatedJitter => {
                        let mut w = base;
                        for _ in 0..k.min(64) {
                            w = (w * 3).min(cap);
                        }
                        w
                    }
                    _ => {
                        nanos(self.backoff.exponential(k))
                            + nanos(strategy.beyond_cap(&self.backoff))
                    }
                }
            };
            // Waits never shrink; once two in a row are equal (capped, or not growing) the
            // rest are the same.
            let mut total = Sat::ZERO;
            let mut previous = None;
            for k in 1..=self.retries {
                let w = wait(k);
                if previous == Some(w) {
                    total = total + w * Sat::from(self.retries - k + 1);
                    break;
                }
                total = total + w;
                previous = Some(w);
            }
            longest = longest.max(total);
        }
        longest
    }

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
    fn runs_independent(&self) -> bool {
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
    fn histogram_blocks(&self) -> Sat {
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
    fn windows(&self) -> Sat {
        self.horizon_bound() / nanos(self.bin) + 1
    }

    /// Calls a call-loop run starts at most: one a client for a herd; for Poisson arrivals
    /// the expected count plus ten standard deviations (a Poisson count's sd is its square
    /// root) and 100, beyond which the estimate is off with probability below 10^-20; for
    /// closed-loop clients, `Scenario::closed_call_bound`, which does not read the rate.
    pub fn call_bound(&self) -> u128 {
        if let Some(bound) = self.closed_call_bound() {
            return bound;
        }
        match &self.overload.arrivals {
            Arrivals::Herd => u128::from(self.clients),
            Arrivals::Poisson(s) => {
                let mean = s.expected_calls();
                Sat::ceil(mean + 10.0 * mean.sqrt() + 100.0).0
            }
        }
    }

    /// The longest one attempt can be in service at a capacity server, and the longest from
    /// its arrival to the end of its service (the backlog): a service takes at most the
    /// demand's practical maximum plus `slowdown` for each other request in service (at most
    /// `workers − 1`), divided by the lowest capacity factor. With bounded workers an arrival
    /// waits first for as many completions as requests are ahead of it, plus one: at most the
    /// queue's bound first-in first-out, else every other attempt (last-in first-out lets
    /// later ones pass); the workers complete at least one each per longest service.
    /// (0, 0) for other servers.
    fn service_bounds(&self) -> (Sat, Sat) {
        use crate::server::QueueOrder;
        let ServerModel::Capacity(r) = self.server else {
            return (Sat::ZERO, Sat::ZERO);
        };
        let attempts = Sat(self.call_bound()) * Sat(self.tries_per_call());
        // A pool's server degraded by its own and the run's at once: their product.
        let lowest_of =
            |t: &crate::server::Triggers| t.degrades.iter().map(|d| d.factor).fold(1.0, f64::min);
        let own = self
            .overload
            .pool
            .triggers
            .iter()
            .map(lowest_of)
            .fold(1.0, f64::min);
        let lowest = lowest_of(&self.overload.triggers) * own;
        let others_in_service = r.workers.map_or(attempts, Sat::from).min(attempts) - 1;
        let longest = nanos(r.service.practical_max()) + nanos(r.slowdown) * others_in_service;
        let longest = Sat::ceil(longest.as_f64() / lowest).max(longest);
        let Some(workers) = r.workers else {
            return (longest, longest);
        };
        let ahead = match (r.queue, r.order) {
            (Some(q), QueueOrder::Fifo) => Sat::from(q).min(attempts - 1),
            _ => attempts - 1,
        };
        let wait = longest * (ahead + 1).div_ceil(Sat::from(workers));
        (longest, wait + longest)
    }

    /// The latest time anything can happen on the call loop: the last call start, then for
    /// each of its attempts a wait (the cap, and what browser tabs add to it), two network
    /// trips and either the timeout or the server's backlog (its wait for a worker and its
    /// service, [`Scenario::service_bounds`]), then the backlog again (abandoned work is
    /// still done), and the longest outer layer's timeout (one may be pending that long
    /// after its call ended).
    fn call_loop_horizon(&self) -> Sat {
        let o = &self.overload;
        let start = match &o.arrivals {
            Arrivals::Herd => Sat::ZERO,
            Arrivals::Poisson(s) => Sat::from(s.end.as_nanos()),
        };
        // With retry layers, every layer's waits together are `tries − 1` of at most the
        // longest cap (each call of a layer waits one less than its attempts; summed over
        // the layers this telescopes to the attempts at the server, less one).
        let tries = Sat(self.tries_per_call());
        let trip = match o.network {
            Some(d) => nanos(d.practical_max()) * 2,
            None => nanos(self.latency.max()),
        };
        let (_, backlog) = self.service_bounds();
        let answer = o.timeout.map_or(backlog, |t| nanos(t).min(backlog));
        let outage = o
            .triggers
            .last_end()
            .max(o.pool.last_end())
            .map_or(Sat::ZERO, |t| Sat::from(t.as_nanos()));
        let cap = o
            .layers
            .outer
            .iter()
            .map(|l| l.policy.backoff.cap)
            .fold(self.backoff.cap, SimDuration::max);
        let per_try = nanos(cap) + self.beyond_cap() + trip + answer + self.tab_delay();
        // An outer layer's stale timeout can be due that long after the call ended.
        let stale = nanos(o.layers.longest_timeout());
        start.max(outage) + tries * per_try + backlog + stale
    }

    /// Rows a call-loop run's series can hold at most: one a window of the horizon (0 on the
    /// herd paths).
    pub fn series_rows(&self) -> u128 {
        self.series_windows().0
    }

    fn series_windows(&self) -> Sat {
        if !self.run_spec(self.strategies[0]).uses_call_loop() {
            return Sat::ZERO;
        }
        self.horizon_bound() / nanos(self.overload.series_bin) + 1
    }

    /// Bytes of the series written out at most, by the JSON report (eleven pretty-printed
    /// arrays, a line of up to 30 B per value) or by `--series-out` (a row of twelve fields,
    /// up to 240 B), twice while the buffer grows, for every strategy; a pool's servers add
    /// theirs (seven arrays each, or a row of fourteen fields, up to 210 B, each).
    pub fn series_output_estimate(&self) -> u64 {
        let servers = if self.overload.pool.is_active() {
            u128::from(self.overload.pool.len())
        } else {
            0
        };
        (Sat::from(self.strategies.len())
            * self.series_windows()
            * (2 * 11 * 30 + servers * (2 * 7 * 30)))
            .to_u64()
    }

    /// Bytes of a window of a pool's servers' series (a [`crate::server::ServerWindow`] a
    /// server), 0 without a pool.
    fn server_window_bytes(&self) -> u128 {
        if self.overload.pool.is_active() {
            u128::from(crate::server::ServerSeriesBuilder::window_bytes(u64::from(
                self.overload.pool.len(),
            )))
        } else {
            0
        }
    }

    /// The longest one call can last from its start: for each attempt of every retry layer
    /// ([`Scenario::tries_per_call`]) a wait (the longest layer's cap, and what browser tabs
    /// add to it), two network trips and either the timeout or the server's backlog
    /// ([`Scenario::call_loop_horizon`] without the last start), and the longest outer
    /// layer's timeout, pending that long after the call ended.
    fn longest_call(&self) -> Sat {
        let tries = Sat(self.tries_per_call());
        let cap = self
            .overload
            .layers
            .outer
            .iter()
            .map(|l| l.policy.backoff.cap)
            .fold(self.backoff.cap, SimDuration::max);
        let (_, backlog) = self.service_bounds();
        let answer = self
            .overload
            .timeout
            .map_or(backlog, |t| nanos(t).min(backlog));
        tries * (nanos(cap) + self.beyond_cap() + self.trip() + answer + self.tab_delay())
            + nanos(self.overload.layers.longest_timeout())
    }

    /// A request's two network trips (or the round trip of `--latency`), at their longest.
    fn trip(&self) -> Sat {
        match self.overload.network {
            Some(d) => nanos(d.practical_max()) * 2,
            None => nanos(self.latency.max()),
        }
    }

    /// Calls a call-loop run holds at once at most, in flight or leaving a stale timeout or a
    /// late answer pending: every call of a herd; for closed-loop clients K a process (slots
    /// are reused); for Poisson arrivals, the calls started
    /// within a span at the schedule's peak rate, plus ten standard deviations and 100 (as
    /// [`Scenario::call_bound`]), and never more than every call. The span is twice the
    /// longest a call can last (`Scenario::longest_call`; its last timeout can be pending
    /// that much longer); for a run guarded as it goes ([`Scenario::guard_in_flight`]), one
    /// attempt without a retry (a trip and the timeout or the longest service): a server
    /// that keeps up holds about that, and the guard stops a run that outgrows its budget.
    pub fn calls_at_once(&self) -> u128 {
        let all = self.call_bound();
        if let Some(closed) = &self.overload.closed {
            // Slots are reused: never more than K a process.
            return (u128::from(self.clients) * u128::from(closed.in_flight)).min(all);
        }
        match &self.overload.arrivals {
            Arrivals::Herd => all,
            Arrivals::Poisson(s) => {
                let span = if self.overload.in_flight.is_on() {
                    let (longest, _) = self.service_bounds();
                    let answer = self
                        .overload
                        .timeout
                        .map_or(longest, |t| nanos(t).min(longest));
                    self.trip() + answer
                } else {
                    self.longest_call() * 2
                };
                let mean = s.peak_rate() * span.as_f64() / 1e9;
                Sat::ceil(mean + 10.0 * mean.sqrt() + 100.0).0.min(all)
            }
        }
    }

    /// Requests a capacity server's queue is counted for: its bound and the workers' when it
    /// has one; an unlimited queue guarded at run time ([`Scenario::guard_in_flight`]) one a
    /// call held at once ([`Scenario::calls_at_once`]: a server that keeps up holds fewer),
    /// else one a call started over the run (the worst case of a collapse, where an
    /// unlimited queue keeps the abandoned attempts of calls long ended).
    fn queued_at_most(&self) -> Sat {
        let calls = Sat(self.call_bound());
        match self.server {
            ServerModel::Capacity(r) => match (r.queue, r.workers) {
                // Each server of a pool holds its own.
                (Some(q), Some(w)) => {
                    ((Sat::from(q) + Sat::from(w)) * Sat::from(self.overload.pool.len())).min(calls)
                }
                (None, Some(_)) if self.overload.in_flight.is_on() => Sat(self.calls_at_once()),
                _ => calls,
            },
            _ => Sat::ZERO,
        }
    }

    /// Bytes a call slot is counted at: the slot (48 B), up to three pending events (its
    /// start, its arrival or completion, its timeout: 48 B each), a tab's reading and, with
    /// outer layers' timeouts, one event for each attempt of theirs a call can make (each
    /// stays queued until due, its attempt over or not), each three times over (a vector
    /// grown by doubling holds its old and new buffers at once; the event queue's blocks are
    /// part filled).
    fn call_slot_bytes(&self) -> u128 {
        let tab = if self.browser.is_active() {
            tab_bytes()
        } else {
            0
        };
        // Outer layers' timeouts, one an attempt of theirs, each pending until due.
        let timeouts = self.overload.layers.timeouts_per_call();
        (3 * 48 + 3 * 3 * 48 + 3 * tab).saturating_add(timeouts.saturating_mul(3 * 48))
    }

    /// Bytes of a call-loop run's servers: a pool's, each a server's state (its queue
    /// counted in [`Scenario::in_flight_estimate`], its keys with the limiter's), its figures
    /// (48 B) and outstanding count (8 B), and its own triggers; 0 without a pool.
    fn pool_bytes(&self) -> Sat {
        let pool = &self.overload.pool;
        if !pool.is_active() {
            return Sat::ZERO;
        }
        let per_server = std::mem::size_of::<crate::server::Server>() as u128
            + 56
            + std::mem::size_of::<crate::server::Triggers>() as u128;
        let triggers: u128 = pool
            .triggers
            .iter()
            .map(|t| (16 * t.outages.len() + 24 * t.degrades.len()) as u128)
            .sum();
        Sat::from(pool.len()) * per_server + Sat(triggers)
    }

    /// The bytes of the calls held at once and the server's queue, as the estimate counts
    /// them ([`Part::Calls`]).
    pub fn in_flight_estimate(&self) -> u64 {
        (Sat(self.calls_at_once()) * self.call_slot_bytes() + self.queued_at_most() * QUEUE_PLACE)
            .to_u64()
    }

    /// Guards a call-loop run's calls in flight and server queue as it goes instead of
    /// counting their worst case up front (every call retrying to the cap, an unlimited queue
    /// keeping every abandoned attempt): the estimate then counts what a server that keeps up
    /// holds ([`Scenario::calls_at_once`], `Scenario::queued_at_most`), and the run may
    /// hold as many more bytes of them as the memory budget leaves beyond the whole estimate,
    /// shared by the runs held at once; a run past that stops where it is
    /// ([`crate::engine::Overload::in_flight`]) and is refused. On the herd paths, a run
    /// behind a rate limiter counts its histograms at what such a run touches
    /// (`Scenario::histogram_blocks`) and each histogram may take as many more blocks as
    /// the budget leaves, shared by the tallies held at once; a run that needs more is
    /// refused once it ends, nothing written. `report` as for [`Scenario::memory_terms`].
    pub fn guard_in_flight(&mut self, report: bool) {
        self.count_in_flight();
        let estimate = self.memory_terms(report).total();
        let runs = Sat::from(self.strategies.len()) * Sat::from(self.replicates);
        let busy = Sat::from(self.threads.max(1)).min(runs).max(Sat(1));
        // The independent path holds a block's tally and the one it merges into a thread.
        let held = if !self.run_spec(self.strategies[0]).uses_call_loop() && self.runs_independent()
        {
            busy * 2
        } else {
            busy
        };
        let spare = Sat::from(self.memory_limit.saturating_sub(estimate)) / held;
        self.allow_in_flight(spare.to_u64());
    }

    /// The first half of [`Scenario::guard_in_flight`]: turns the guard on, so that the
    /// estimate counts what a run holds in flight (a call loop's calls and queue, a herd
    /// behind a rate limiter's typical histogram blocks) instead of its worst case, and
    /// allows nothing beyond that yet ([`Scenario::allow_in_flight`] sets what it may take).
    /// A sweep's rows are guarded this way, each allowed its share of what the budget leaves
    /// beyond the sweep's estimate.
    pub fn count_in_flight(&mut self) {
        if self.run_spec(self.strategies[0]).uses_call_loop() {
            // Any number of bytes but "unguarded" turns the guarded count on.
            self.overload.in_flight = crate::engine::InFlightGuard {
                bytes: 0,
                per_call: self.call_slot_bytes() as u64,
                per_place: QUEUE_PLACE as u64,
                blocks: u64::MAX,
            };
        } else if matches!(self.server, ServerModel::Limited(_)) {
            // Any limit turns the typical count on; the real one follows from the estimate.
            self.overload.in_flight.blocks = 0;
        }
    }

    /// What a run guarded by [`Scenario::count_in_flight`] may hold: what the estimate counts
    /// in flight and `spare` bytes more (its share of what the budget leaves beyond the whole
    /// estimate). On the herd paths, the blocks of each histogram of a run behind a rate
    /// limiter: its share of the blocks counted and of `spare`. Nothing for a run the guard
    /// does not hold.
    pub fn allow_in_flight(&mut self, spare: u64) {
        let spare = Sat::from(spare);
        if self.overload.in_flight.is_on() {
            self.overload.in_flight.bytes = (Sat::from(self.in_flight_estimate()) + spare)
                .to_u64()
                .min(u64::MAX - 1);
        } else if self.overload.in_flight.limits_blocks() {
            let counted = self.histogram_blocks() * BLOCK_BYTES;
            self.overload.in_flight.blocks = ((counted + spare) / (3 * BLOCK_BYTES))
                .to_u64()
                .min(u64::MAX - 1);
        }
    }

    /// The refusal of a run its guard stopped ([`Scenario::guard_in_flight`]): `calls` when
    /// its calls and queue outgrew what it was allowed (when, in seconds, and the calls and
    /// queued requests it held), else a histogram of its run of `strategy`.
    pub fn outgrown(&self, calls: Option<(f64, u64, u64)>, strategy: &str) -> ConfigError {
        let budget = human_bytes(self.memory_limit);
        let guard = self.overload.in_flight;
        match calls {
            Some((at, calls, places)) => {
                let held = calls
                    .saturating_mul(guard.per_call)
                    .saturating_add(places.saturating_mul(guard.per_place));
                ConfigError::Outgrown {
                    budget,
                    held: format!(
                        "at {at:.1}s it held {calls} calls and {places} queued requests, {} by \
                         the estimate's count, where the estimate counted {} and the budget \
                         leaves {}",
                        human_bytes(held),
                        human_bytes(self.in_flight_estimate()),
                        human_bytes(guard.bytes)
                    ),
                }
            }
            None => ConfigError::HistogramsOutgrown {
                budget,
                held: format!(
                    "a histogram of {strategy} needed more than the {} blocks of 16 windows \
                     beyond the first {} the budget leaves it",
                    guard.blocks, DENSE_WINDOWS
                ),
            },
        }
    }

    /// Bytes of one call-loop run beyond its histograms, as (per process, calls in flight,
    /// series): a generator per client process (8 B), its retry control and tab if any, and
    /// its next start; per call held at once ([`Scenario::calls_at_once`]) a slot (48 B)
    /// three times over (a vector grown by doubling holds its old and new buffers at once),
    /// up to three pending events (its start, its arrival or completion, its timeout: 48 B
    /// each) three times over (the queue's partly filled blocks and re-filing), and a tab's
    /// reading; per request the server can queue (`Scenario::queued_at_most`) its place
    /// (32 B) three times over and a late answer's event; the series (one `SeriesRow`, 104 B,
    /// a window of the horizon, and a pool's a `ServerWindow` of 56 B a server twice over)
    /// when the run keeps its windows, else none.
    /// `tests/memory` measured 100 000 herd calls at 1.1× this.
    fn call_loop_bytes(&self) -> (Sat, Sat, Sat) {
        let control = if self.controls.is_none() {
            0
        } else {
            std::mem::size_of::<crate::policy::control::ProcessControl>() as u128
                + self.controls.budget.heap_bytes_per_state()
        };
        let tab = if self.browser.is_active() {
            tab_bytes()
        } else {
            0
        };
        // A process's generator, control and tab, and its pending start (48 B, three times
        // over as any event).
        let processes = Sat::from(self.clients) * (8 + control + tab + 3 * 48);
        let calls = Sat::from(self.in_flight_estimate());
        let series = if self.overload.keep_windows {
            // A pool's servers' rows, their vectors grown by doubling.
            self.series_windows() * (SERIES_ROW + 2 * self.server_window_bytes())
        } else {
            Sat::ZERO
        };
        (processes, calls, series)
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

    /// Refuses to write the dense JSON report, chart or page of a finished run whose
    /// histograms span more windows than the memory budget leaves room for, counted as
    /// [`Scenario::json_output_estimate`] counts them but over the windows the run reached:
    /// a guarded run behind a limiter counted its report up front over the dense windows
    /// only ([`Scenario::memory_terms`]). One line, nothing written.
    pub fn check_dense_output(
        &self,
        report: &crate::experiment::Report,
    ) -> Result<(), ConfigError> {
        let windows = longest_histogram(report);
        let mut terms = self.memory_terms(false);
        terms.add(Part::Report, Sat::from(self.dense_output_estimate(report)));
        if terms.total() <= self.memory_limit {
            return Ok(());
        }
        Err(ConfigError::TooBig {
            estimate: format!(
                "{} ({} of it the dense JSON report, chart or page of the {windows} windows the                  run reached)",
                human_bytes(terms.total()),
                human_bytes(terms.get(Part::Report))
            ),
            budget: human_bytes(self.memory_limit),
            advice: "widen --bin, or write a table or CSV without --png, --svg or --html, or                      raise --memory-limit"
                .into(),
        })
    }

    /// Refuses a run whose [`Scenario::memory_estimate`] exceeds the budget. Check it once the
    /// path is chosen (validation checks the automatic path; `--engine` may change it).
    pub fn check_memory(&self) -> Result<(), ConfigError> {
        self.check_terms(&self.memory_terms(false))
    }

    /// Refuses a run whose estimate, with the dense JSON report, chart or series when `report`,
    /// exceeds the budget; the refusal names the whole estimate and its largest part.
    pub fn check_memory_with(&self, report: bool) -> Result<(), ConfigError> {
        self.check_terms(&self.memory_terms(report))
    }

    fn check_terms(&self, terms: &MemoryEstimate) -> Result<(), ConfigError> {
        let estimate = terms.total();
        if estimate > self.memory_limit {
            let (part, advice) = self.explain(terms);
            return Err(ConfigError::TooBig {
                advice: format!("{advice}, or raise --memory-limit"),
                estimate: format!("{} ({part})", human_bytes(estimate)),
                budget: human_bytes(self.memory_limit),
            });
        }
        Ok(())
    }

    /// The largest part of `terms` as a phrase (`4.1 GiB of it the call loop's series, ...`)
    /// and the flags that shrink it.
    fn explain(&self, terms: &MemoryEstimate) -> (String, String) {
        let (part, bytes) = terms.largest();
        let horizon = self.horizon();
        let drivers = self.horizon_drivers(" and ");
        let lower = self.horizon_drivers(" or ");
        let (what, advice) = match part {
            Part::Clients => (
                format!("the {} clients' pending events and state", self.clients),
                "lower --clients".to_string(),
            ),
            Part::Histograms => (
                format!(
                    "the histograms, up to {} windows of --bin {} over a horizon of {horizon}, \
                     which {drivers} bound",
                    self.windows().0,
                    self.bin
                ),
                format!("widen --bin, or lower {lower}"),
            ),
            Part::Keys => (
                "the rate limiter's keys".to_string(),
                "lower --clients or raise --clients-per-address".to_string(),
            ),
            Part::Calls => (
                format!("up to {} calls in flight", self.calls_at_once()),
                "lower --rate or --duration (Poisson) or --clients (a herd)".to_string(),
            ),
            Part::Series => (
                format!(
                    "the series, up to {} windows of --series-bin {} over a horizon of \
                     {horizon}, which {drivers} bound",
                    self.series_rows(),
                    self.overload.series_bin
                ),
                format!("widen --series-bin, or lower {lower}"),
            ),
            Part::Results => (
                format!(
                    "the results of {} strategies kept for the report",
                    self.strategies.len()
                ),
                "run fewer strategies (--strategy)".to_string(),
            ),
            Part::Replicates => (
                format!("the figures of {} replicates", self.replicates),
                "lower --replicates".to_string(),
            ),
            Part::Report => (
                "the dense JSON report, chart or series".to_string(),
                "widen --bin or --series-bin, or write a table or CSV without --png, --svg \
                 or --series-out"
                    .to_string(),
            ),
            Part::Overhead => (
                "the buffers every run needs".to_string(),
                "this is the least a run needs".to_string(),
            ),
        };
        (format!("{} of it {what}", human_bytes(bytes)), advice)
    }

    /// The flags that bound the horizon of this scenario's runs, for advice, the last joined
    /// with `last` (` and `, ` or `).
    fn horizon_drivers(&self, last_join: &str) -> String {
        use crate::engine::browser::WhenHidden;
        let mut flags: Vec<&str> = Vec::new();
        if self.run_spec(self.strategies[0]).uses_call_loop() {
            if matches!(self.overload.arrivals, Arrivals::Poisson(_)) {
                flags.push("--duration");
            }
            flags.extend(["--cap", "--retries"]);
            if let ServerModel::Capacity(r) = self.server {
                flags.push("--timeout");
                flags.push("--service-time");
                if r.workers.is_some() {
                    flags.push("--workers");
                    if r.queue.is_none() {
                        flags.push("--queue");
                    }
                }
                if !r.slowdown.is_zero() {
                    flags.push("--slowdown");
                }
                if !self.overload.triggers.degrades.is_empty() {
                    flags.push("--degrade");
                }
            }
            if !self.overload.triggers.outages.is_empty() {
                flags.push("--outage");
            }
        } else {
            match self.server {
                ServerModel::Down { recover_at: None } => flags.extend(["--cap", "--retries"]),
                ServerModel::Down {
                    recover_at: Some(_),
                } => flags.extend(["--recover-at", "--cap", "--retries", "--items"]),
                ServerModel::Limited(_) => {
                    flags.extend(["--items (or --pool)", "--cap", "--retries", "--window"])
                }
                ServerModel::Occ => flags.extend(["--clients", "--retries", "--network-delay"]),
                ServerModel::Capacity(_) | ServerModel::Flaky(_) => {
                    flags.extend(["--cap", "--retries"])
                }
            }
            if !matches!(self.latency.max(), SimDuration::ZERO) {
                flags.push("--latency");
            }
        }
        if self.browser.when_hidden == WhenHidden::Pause && self.browser.switch_mean.is_some() {
            flags.push("--visibility-switch");
        }
        match flags.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{}{last_join}{last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// Asks the allocator for the estimated bytes at once and gives them back (untouched, so
    /// nothing is paged in): with `--memory-limit` raised past what the machine has, a run the
    /// system cannot hold fails here with one line instead of aborting on an allocation part
    /// way through. `report` adds the dense JSON report, chart or series.
    pub fn check_reservable(&self, report: bool) -> Result<(), ConfigError> {
        let terms = self.memory_terms(report);
        let estimate = terms.total();
        if reservable(estimate) {
            return Ok(());
        }
        let (part, advice) = self.explain(&terms);
        Err(ConfigError::Unavailable {
            estimate: format!("{} ({part})", human_bytes(estimate)),
            budget: human_bytes(self.memory_limit),
            advice,
        })
    }
}

/// Windows of the longest histogram of `report`, written densely from window 0.
fn longest_histogram(report: &crate::experiment::Report) -> usize {
    report
        .results
        .iter()
        .flat_map(|r| [&r.histogram, &r.histogram_served, &r.histogram_refused])
        .map(|h| h.len())
        .max()
        .unwrap_or(0)
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

/// Whether the allocator grants `bytes` in one piece (then freed at once). Past `isize::MAX`
/// no allocation can succeed, so the answer comes without asking the system.
pub fn reservable(bytes: u64) -> bool {
    let Ok(len) = usize::try_from(bytes) else {
        return false;
    };
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(len).is_ok()
}

/// `1.5 GiB`-style sizes for messages.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScenarioFile;

    #[test]
    fn an_allocation_past_isize_max_is_never_reservable_and_a_small_one_is() {
        assert!(!reservable(u64::MAX));
        assert!(!reservable(1 << 63));
        assert!(reservable(1 << 20));
    }

    #[test]
    fn the_estimate_counts_the_threads_it_is_given_not_rayons() {
        use crate::config::ScenarioFile;
        // Four runs (one strategy, four replicates) on the event queue: each thread holds one
        // run in flight, so the in-flight term grows by the same amount a thread up to four
        // threads, then stays; the other terms do not depend on threads.
        let terms = |threads: Option<usize>| {
            let mut scenario = ScenarioFile {
                clients: Some(10_000),
                strategy: Some("fixed".parse().unwrap()),
                replicates: Some(4),
                ..Default::default()
            }
            .validate_on(threads)
            .unwrap();
            scenario.path = Path::EventQueue;
            let terms = scenario.memory_terms(false);
            let kept = (terms.get(Part::Results), terms.get(Part::Replicates));
            (scenario.threads, terms.total() - kept.0 - kept.1, kept)
        };
        let (one, two, three, four, five) = (
            terms(Some(1)),
            terms(Some(2)),
            terms(Some(3)),
            terms(Some(4)),
            terms(Some(5)),
        );
        let run = two.1 - one.1;
        assert!(
            run > 10_000 * 24,
            "one run holds an event a client: {run} B"
        );
        assert_eq!(three.1, one.1 + 2 * run);
        assert_eq!(four.1, one.1 + 3 * run);
        assert_eq!(
            (five.1, five.2),
            (four.1, four.2),
            "four runs: a fifth thread has none to hold"
        );
        assert_eq!(three.2, one.2);
        assert_eq!(terms(Some(3)).0, 3);
        assert_eq!(terms(None).0, default_threads());
    }

    fn scenario(text: &str) -> Scenario {
        crate::config::ScenarioFile::parse(text, Some("toml"))
            .unwrap()
            .validate_without_budget_on(Some(2))
            .unwrap()
    }

    #[test]
    fn the_slowdown_counts_the_requests_in_service_not_every_attempt() {
        // 100 calls at once, 10 workers, 50 ms services slowed 1 ms by each other request in
        // service (at most 9): a service takes at most 59 ms; the last of 100 requests waits
        // for 100/10 = 10 rounds of completions, then its own service: 649 ms of backlog.
        // The horizon: the cap (30 s) and the backlog before the only answer, then the
        // backlog again. (Counting the slowdown of all 100 attempts gave 150 ms a service.)
        let s = scenario(
            "clients = 100\nretries = 0\n[server]\nmodel = \"capacity\"\nworkers = 10\n\
             service_time = \"50ms\"\nslowdown = \"1ms\"\n",
        );
        assert_eq!(s.horizon(), SimDuration::from_millis(30_000 + 649 + 649));
        // Every request is served once its turn comes: the run's last answer is within it.
        let tally = crate::engine::simulate(&s.run_spec(s.strategies[0]), Path::Auto);
        assert_eq!(tally.served_windows.total(), 100);
        let last = tally
            .served_windows
            .window_start(tally.served_windows.counts().len() - 1);
        assert!(last.as_nanos() <= s.horizon().as_nanos(), "{last:?}");
    }

    #[test]
    fn calls_held_at_once_count_every_layers_tries_at_the_longest_cap() {
        // A call of 2 retries inside a layer of 1 makes 3 x 2 = 6 attempts with waits of at
        // most the longest cap (10 s): it can last as long as a call of 5 retries with that
        // cap and no layer, so a sweep counts as many calls held at once for both; without
        // the layer, 3 attempts, fewer.
        let base = "arrivals = \"poisson\"\nrate = \"5/s\"\nduration = \"1000s\"\n\
                    outage = \"10s..20s\"\ntimeout = \"1s\"\nstrategy = \"fixed\"\n\
                    base = \"2s\"\n[server]\nmodel = \"capacity\"\nworkers = 4\n";
        let at_once = |keys: &str, layer: &str| {
            ScenarioFile::parse(&format!("{keys}{base}{layer}"), Some("toml"))
                .unwrap()
                .validate()
                .unwrap()
                .calls_at_once()
        };
        let layer = "[[layer]]\nstrategy = \"fixed\"\nbase = \"10s\"\ncap = \"10s\"\nretries = 1\n";
        let layered = at_once("retries = 2\ncap = \"3s\"\n", layer);
        assert_eq!(layered, at_once("retries = 5\ncap = \"10s\"\n", ""));
        assert!(at_once("retries = 2\ncap = \"10s\"\n", "") < layered);
    }

    #[test]
    fn estimates_saturate_instead_of_wrapping_however_large_the_input() {
        // Poisson calls at ever higher rates against a slowing server: every estimate grows
        // or stays, and ends saturated, never wrapping round to a small number.
        let mut previous = (0u64, 0u64, 0u128, 0u128);
        for exponent in [0, 3, 6, 12, 18, 24, 30, 36] {
            let s = scenario(&format!(
                "clients = 4000000000\nretries = 4294967295\narrivals = \"poisson\"\n\
                 rate = \"1e{exponent}/s\"\nduration = \"100000000s\"\n\
                 timeout = \"100000000s\"\n\
                 [server]\nmodel = \"capacity\"\nworkers = 1\n\
                 service_time = \"exp:100000000s\"\nslowdown = \"100000000s\"\n"
            ));
            let now = (
                s.horizon().as_nanos(),
                s.memory_terms(true).total(),
                s.work_estimate(),
                s.requests_estimate(),
            );
            assert!(
                now.0 >= previous.0
                    && now.1 >= previous.1
                    && now.2 >= previous.2
                    && now.3 >= previous.3,
                "rate 1e{exponent}/s: {now:?} after {previous:?}"
            );
            previous = now;
        }
        assert_eq!(previous.0, u64::MAX);
        assert_eq!(previous.1, u64::MAX);
    }

    #[test]
    fn a_refusal_names_the_whole_estimate_its_largest_part_and_the_flags_that_drive_it() {
        let refusal = |text: &str, report: bool| {
            let mut s = scenario(&format!("memory_limit = 1024\n{text}"));
            s.path = Path::EventQueue;
            let e = s.check_memory_with(report).unwrap_err().to_string();
            let total = human_bytes(s.memory_terms(report).total());
            assert!(
                e.starts_with(&format!("this run needs an estimated {total} (")),
                "{e}"
            );
            e
        };
        // The series of a long Poisson run in 1 ms windows.
        let e = refusal(
            "arrivals = \"poisson\"\nrate = \"1/s\"\nduration = \"10000s\"\n\
             series_bin = \"1ms\"\n[server]\nmodel = \"capacity\"\n",
            false,
        );
        assert!(e.contains("of it the series, up to "), "{e}");
        assert!(
            e.contains("widen --series-bin, or lower --duration, "),
            "{e}"
        );
        // A million clients' events.
        let e = refusal("clients = 1000000\n", false);
        assert!(
            e.contains("of it the 1000000 clients' pending events"),
            "{e}"
        );
        assert!(
            e.contains("; lower --clients, or raise --memory-limit"),
            "{e}"
        );
        // Long waits in 1 ms windows: the histograms, bounded by the cap and the retries.
        let e = refusal(
            "clients = 1\nretries = 100\ncap = \"1h\"\nbase = \"1h\"\nbin = \"1ms\"\n",
            false,
        );
        assert!(
            e.contains("of it the histograms, up to 360000001 windows"),
            "{e}"
        );
        assert!(
            e.contains("widen --bin, or lower --cap or --retries"),
            "{e}"
        );
        // The dense JSON report of the same run is the largest part once it is asked for.
        let e = refusal(
            "clients = 1\nretries = 100\ncap = \"1h\"\nbase = \"1h\"\nbin = \"1ms\"\n",
            true,
        );
        assert!(e.contains("of it the dense JSON report"), "{e}");
    }
}
