//! What a run may cost before it starts: the latest time anything can happen (so how long
//! histograms can grow) and the bytes a run needs at most, checked against `--memory-limit`.

use super::{ConfigError, LimitedModel, LimiterRule, Scenario, ServerModel};
use crate::engine::{Path, Work, CLIENTS_PER_BLOCK};
use crate::metrics::{BLOCK_WINDOWS, DENSE_WINDOWS, MAX_CLIENT_FINISHES};
use crate::policy::Strategy;
use crate::server::MAX_WINDOW_STARTS;
use crate::time::SimDuration;
use crate::workload::Arrivals;

/// Bytes of one window of a call-loop series.
const SERIES_ROW: u128 = std::mem::size_of::<crate::series::SeriesRow>() as u128;

/// What a run may hold at once, term by term, in bytes; each term an upper bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The runs being simulated at once (one per busy thread): their tallies, pending events,
    /// items left and limiter keys, or on the independent path one block of clients each.
    pub in_flight: u64,
    /// The results kept until the report is built, one per strategy.
    pub results: u64,
    /// The figures of every replicate, kept to compute their spread.
    pub replicates: u64,
}

impl MemoryEstimate {
    /// The sum of the terms.
    pub fn total(&self) -> u64 {
        self.in_flight
            .saturating_add(self.results)
            .saturating_add(self.replicates)
    }
}

/// Bytes of a tab and a reading ([`crate::engine::browser`]): what browser tabs add to a
/// client's event on the herd paths, and at most to a process plus a call on the call loop.
fn tab_bytes() -> u128 {
    use crate::engine::browser::{Reading, Tab};
    (std::mem::size_of::<Tab>() + std::mem::size_of::<Reading>()) as u128
}

fn saturate(bytes: u128) -> u64 {
    bytes.min(u128::from(u64::MAX)) as u64
}

/// Bytes of a tally's three [`crate::metrics::Histogram`]s (retries, served, refused) of at
/// most `windows` windows and `requests` requests: each dense part (doubling as it grows), and
/// beyond it at most one block of 16 counts (128 B, twice while the arena grows) per window
/// counted, with its directory entries and map node. A request counts in served or refused
/// and perhaps in retries: at most two blocks a request over the three.
fn histograms_bytes(windows: u128, requests: u128) -> u128 {
    let dense_windows = windows.min(DENSE_WINDOWS as u128);
    let beyond = windows - dense_windows;
    let blocks = (3 * beyond.div_ceil(BLOCK_WINDOWS as u128)).min(2 * requests);
    let dense = 3 * 2 * 8 * dense_windows;
    let sparse = if blocks == 0 {
        0
    } else {
        blocks * (2 * 8 * BLOCK_WINDOWS as u128 + 2 * 4 * 4 + 64) + 3 * 8 * 1024
    };
    dense + sparse
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
        if self.run_spec(self.strategies[0]).uses_call_loop() {
            return self.call_loop_horizon();
        }
        const SECOND: u128 = 1_000_000_000;
        let round_trip = u128::from(self.latency.max().as_nanos());
        let wait = u128::from(self.backoff.cap.max(self.backoff.base).as_nanos())
            + round_trip
            + self.tab_delay();
        let requests_per_item = u128::from(self.retries) + 1;
        let (items_per_client, items) = match self.work {
            Work::Items(k) => (u128::from(k), u128::from(k) * u128::from(self.clients)),
            Work::Pool(p) => (u128::from(p), u128::from(p)),
        };
        let each_client = wait * requests_per_item * items_per_client;
        let bound = match self.server {
            ServerModel::Down { recover_at: None } => (wait * requests_per_item).min(
                self.longest_refused_waits() + (round_trip + self.tab_delay()) * requests_per_item,
            ),
            ServerModel::Down {
                recover_at: Some(t),
            } => each_client.min(u128::from(t.as_nanos()) + wait + items_per_client * round_trip),
            // Call-loop runs are bounded by `call_loop_horizon` above.
            ServerModel::Capacity(_) | ServerModel::Flaky(_) => wait * requests_per_item,
            ServerModel::Limited(m) => {
                let memory = match m.rule {
                    LimiterRule::FixedWindow(r) => r.window,
                    LimiterRule::SlidingWindow(r) => r.window,
                    LimiterRule::TokenBucket(r) => r.interval,
                };
                let stretch = wait + u128::from(memory.as_nanos()) + SECOND;
                each_client.min((items + 1) * stretch + wait)
            }
            ServerModel::Occ => {
                let d = u128::from(self.network_delay.practical_max().as_nanos());
                let attempts = requests_per_item * (wait + 4 * d);
                attempts.min(u128::from(self.clients) * (wait + 6 * d)) + d
            }
        };
        SimDuration(bound.min(u128::from(u64::MAX)) as u64)
    }

    /// What browser tabs can add to one wait: a hidden tab's timer runs up to a minute late
    /// (Chrome's minute alignment), and a pausing tab waits for its flip to visible, which in
    /// practice (an exponential dwell beyond 40 means has probability e^−40) comes within 40
    /// mean dwells, counted twice (paused on reading, and again when the timer ran hidden).
    fn tab_delay(&self) -> u128 {
        use crate::engine::browser::WhenHidden;
        let b = &self.browser;
        let mut extra = 0u128;
        if b.hidden > 0.0 || b.switch_mean.is_some() {
            extra += 60_000_000_000;
        }
        if let (WhenHidden::Pause, Some(mean)) = (b.when_hidden, b.switch_mean) {
            extra += 2 * 40 * u128::from(mean.as_nanos());
        }
        extra
    }

    /// The longest a client of any of the scenario's strategies can wait in all before its
    /// last retry against a server that answers nothing but refusals without headers (down
    /// for good): the sum of each retry's largest wait. Exponential-shaped strategies (and the
    /// header readers, which fall back to them) wait at most `e_k`; fixed waits `base`; naive
    /// nothing; decorrelated jitter's `k`-th wait stays below `min(cap, base · 3^k)`.
    fn longest_refused_waits(&self) -> u128 {
        let cap = u128::from(self.backoff.cap.as_nanos());
        let base = u128::from(self.backoff.base.as_nanos()).min(cap);
        let mut longest = 0u128;
        for &strategy in &self.strategies {
            let wait = |k: u32| -> u128 {
                match strategy {
                    Strategy::Naive => 0,
                    Strategy::Fixed => base,
                    Strategy::DecorrelatedJitter => {
                        let mut w = base;
                        for _ in 0..k.min(64) {
                            w = (w * 3).min(cap);
                        }
                        w
                    }
                    _ => u128::from(self.backoff.exponential(k).as_nanos()),
                }
            };
            // Waits never shrink; once two in a row are equal (capped, or not growing) the
            // rest are the same.
            let mut total = 0u128;
            let mut previous = None;
            for k in 1..=self.retries {
                let w = wait(k);
                if previous == Some(w) {
                    total += w * u128::from(self.retries - k + 1);
                    break;
                }
                total += w;
                previous = Some(w);
            }
            longest = longest.max(total);
        }
        longest
    }

    /// Estimated bytes a run of this scenario needs at most, on the path it will take
    /// ([`Scenario::path`]; set it before asking): see [`MemoryEstimate`].
    pub fn memory_estimate(&self) -> u64 {
        self.memory_terms().total()
    }

    /// The estimate term by term.
    pub fn memory_terms(&self) -> MemoryEstimate {
        let threads = self.threads.max(1) as u128;
        let clients = u128::from(self.clients);
        let strategies = self.strategies.len() as u128;
        let replicates = u128::from(self.replicates);
        let runs = strategies * replicates;
        let independent = match self.path {
            Path::EventQueue => false,
            Path::Auto | Path::Independent => {
                self.run_spec(self.strategies[0]).clients_independent()
            }
        };
        // Histograms: the windows the horizon allows, but never more blocks than requests.
        let windows = u128::from(self.horizon().as_nanos() / self.bin.as_nanos()) + 1;
        let requests_per_item = u128::from(self.retries) + 1;
        let requests = match self.work {
            Work::Items(k) => u128::from(k) * clients * requests_per_item,
            Work::Pool(p) => (u128::from(p) + clients) * requests_per_item,
        };
        let histograms = histograms_bytes(windows, requests);
        // Each client's finish time, in small runs (an `Option<SimTime>`, 16 B).
        let finishes = if self.clients as usize <= MAX_CLIENT_FINISHES {
            16 * clients
        } else {
            0
        };
        let tally = histograms + finishes;
        let window_starts = match self.server {
            ServerModel::Limited(LimitedModel {
                rule: LimiterRule::FixedWindow(_),
                ..
            }) => 8 * MAX_WINDOW_STARTS as u128,
            _ => 0,
        };
        // Runs in flight at once. The event queue: one run a busy thread, each with its tally,
        // its pending events (one a client: 24 or 32 B, three times that with the queue's blocks
        // part filled, measured up to 2.75 times the events' size with random latencies), items left
        // (4 B a client with several items each) and the limiter's keys
        // (a sliding window logs `limit` times of 8 B a key). The independent path: one block
        // of clients a busy thread, and as many partial tallies again being merged.
        let items_bytes = match self.work {
            Work::Items(k) if k > 1 => 4,
            _ => 0,
        };
        let in_flight = if independent {
            let blocks = runs * u128::from(self.clients.div_ceil(CLIENTS_PER_BLOCK));
            let block_clients = clients.min(u128::from(CLIENTS_PER_BLOCK));
            threads.min(blocks) * (2 * tally + items_bytes * block_clients)
        } else {
            let key_bytes: u128 = match self.server {
                ServerModel::Down { .. }
                | ServerModel::Occ
                | ServerModel::Capacity(_)
                | ServerModel::Flaky(_) => 0,
                ServerModel::Limited(m) => {
                    let keys = clients.div_ceil(u128::from(m.clients_per_address));
                    let per_key = match m.rule {
                        LimiterRule::SlidingWindow(r) => 8 * u128::from(r.limit) + 16,
                        LimiterRule::FixedWindow(_) => 32,
                        LimiterRule::TokenBucket(_) => 32,
                    };
                    keys * per_key
                }
            };
            let event = if self.strategies.contains(&Strategy::DecorrelatedJitter) {
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
            let per_run = tally + clients * (3 * event + items_bytes) + key_bytes + window_starts;
            threads.min(runs) * per_run
        };
        // Kept until the report is built: each other strategy's result (replicate 0's histograms,
        // finishes as seconds, window starts), and the figures of every other replicate (five
        // numbers of 8 B, twice while they are collected in parallel).
        // A call-loop run's result also keeps its series (a `SeriesRow` a window) and its
        // three description strings.
        let series = self.series_rows() * SERIES_ROW + 3 * 256;
        let results = (strategies - 1) * (tally + window_starts + series);
        let replicate_figures = if self.replicates > 1 {
            strategies * replicates * 2 * 40
        } else {
            0
        };
        // The thread pool's jobs and small buffers.
        const OVERHEAD: u128 = 64 << 10;
        // A call-loop run's calls, events and series (0 on the herd paths).
        let call_loop = self.call_loop_bytes() * threads.min(runs);
        MemoryEstimate {
            in_flight: saturate(in_flight + call_loop + OVERHEAD),
            results: saturate(results),
            replicates: saturate(replicate_figures),
        }
    }

    /// Calls a call-loop run starts at most: one a client for a herd; for Poisson arrivals
    /// the expected count plus ten standard deviations (a Poisson count's sd is its square
    /// root) and 100, beyond which the estimate is off with probability below 10^-20.
    pub fn call_bound(&self) -> u128 {
        match &self.overload.arrivals {
            Arrivals::Herd => u128::from(self.clients),
            Arrivals::Poisson(s) => {
                let mean = s.expected_calls();
                (mean + 10.0 * mean.sqrt() + 100.0).ceil() as u128
            }
        }
    }

    /// The latest time anything can happen on the call loop: the last call start, then for
    /// each of its attempts a wait (the cap, and what browser tabs add to it), two network
    /// trips and either the timeout or
    /// the server's whole backlog, then the backlog again (abandoned work is still done).
    /// The backlog: every attempt's longest service time (slowdown for every attempt in
    /// service, divided by the lowest capacity factor), shared by the workers.
    fn call_loop_horizon(&self) -> SimDuration {
        let o = &self.overload;
        let start = match &o.arrivals {
            Arrivals::Herd => 0,
            Arrivals::Poisson(s) => u128::from(s.end.as_nanos()),
        };
        let tries = u128::from(self.retries) + 1;
        let attempts = self.call_bound() * tries;
        let trip = match o.network {
            Some(d) => 2 * u128::from(d.practical_max().as_nanos()),
            None => u128::from(self.latency.max().as_nanos()),
        };
        let backlog = match self.server {
            ServerModel::Capacity(r) => {
                let lowest = o
                    .triggers
                    .degrades
                    .iter()
                    .map(|d| d.factor)
                    .fold(1.0, f64::min);
                let longest = u128::from(r.service.practical_max().as_nanos())
                    + u128::from(r.slowdown.as_nanos()) * attempts;
                let longest = (longest as f64 / lowest).ceil() as u128;
                let workers = r.workers.map_or(attempts, u128::from).max(1);
                longest * attempts.div_ceil(workers)
            }
            _ => 0,
        };
        let answer = o
            .timeout
            .map_or(backlog, |t| u128::from(t.as_nanos()).min(backlog));
        let outage = o
            .triggers
            .last_end()
            .map_or(0, |t| u128::from(t.as_nanos()));
        let per_try = u128::from(self.backoff.cap.as_nanos()) + trip + answer + self.tab_delay();
        let bound = start.max(outage) + tries * per_try + backlog;
        SimDuration(bound.min(u128::from(u64::MAX)) as u64)
    }

    /// Rows a call-loop run's series can hold at most: one a window of the horizon (0 on the
    /// herd paths).
    pub fn series_rows(&self) -> u128 {
        if !self.run_spec(self.strategies[0]).uses_call_loop() {
            return 0;
        }
        u128::from(self.horizon().as_nanos() / self.overload.series_bin.as_nanos()) + 1
    }

    /// Bytes of the series written out at most, by the JSON report (eleven pretty-printed
    /// arrays, a line of up to 30 B per value) or by `--series-out` (a row of twelve fields,
    /// up to 240 B), twice while the buffer grows, for every strategy.
    pub fn series_output_estimate(&self) -> u64 {
        saturate(2 * self.strategies.len() as u128 * self.series_rows() * 11 * 30)
    }

    /// Bytes of one call-loop run beyond its histograms: a generator per client (8 B) and its
    /// retry control if any, and per call that can be in flight a slot (48 B) and its place in the server's queue
    /// (32 B), three times over (a vector grown by doubling holds its old and new buffers at
    /// once), and up to three pending events (its start, its arrival or completion, its
    /// timeout: 48 B each) three times over (the queue's partly filled blocks and re-filing);
    /// the series (one `SeriesRow`, 104 B, a window of the horizon) and two latency sketches (64 KiB
    /// each). 0 on the herd paths. `tests/memory` measured 100 000 herd calls at 1.1× this.
    fn call_loop_bytes(&self) -> u128 {
        if !self.run_spec(self.strategies[0]).uses_call_loop() {
            return 0;
        }
        let calls = self.call_bound() * (3 * (48 + 32) + 3 * 3 * 48);
        // Each process's retry control, when there is one.
        let control = if self.controls.is_none() {
            0
        } else {
            std::mem::size_of::<crate::policy::control::ProcessControl>() as u128
        };
        // Browser tabs: a tab a process, and a reading a call slot (three times over, as the
        // slots).
        let tabs = if self.browser.is_active() {
            u128::from(self.clients) * tab_bytes() + self.call_bound() * 3 * tab_bytes()
        } else {
            0
        };
        u128::from(self.clients) * (8 + control)
            + calls
            + tabs
            + self.series_rows() * SERIES_ROW
            + 2 * 65_536
    }

    /// Bytes of the JSON report at most: every histogram is written densely, one pretty-printed
    /// line a window (`      12,` : up to 20 digits and 9 more bytes), three histograms a
    /// strategy, and the buffer may be twice its length while it grows.
    pub fn json_output_estimate(&self) -> u64 {
        let windows = u128::from(self.horizon().as_nanos() / self.bin.as_nanos()) + 1;
        let digits = u128::from(self.clients).to_string().len() as u128
            + u128::from(self.retries).to_string().len() as u128;
        saturate(2 * 3 * self.strategies.len() as u128 * windows * (9 + digits))
            .saturating_add(self.series_output_estimate())
    }

    /// Refuses a run whose [`Scenario::memory_estimate`] exceeds the budget. Check it once the
    /// path is chosen (validation checks the automatic path; `--engine` may change it).
    pub fn check_memory(&self) -> Result<(), ConfigError> {
        self.check_bytes(self.memory_estimate())
    }

    /// Refuses a run whose estimate plus its JSON report exceeds the budget.
    pub fn check_memory_with_json(&self) -> Result<(), ConfigError> {
        self.check_bytes(
            self.memory_estimate()
                .saturating_add(self.json_output_estimate()),
        )
    }

    fn check_bytes(&self, estimate: u64) -> Result<(), ConfigError> {
        if estimate > self.memory_limit {
            return Err(ConfigError::TooBig {
                estimate: human_bytes(estimate),
                budget: human_bytes(self.memory_limit),
            });
        }
        Ok(())
    }

    /// Asks the allocator for the estimated bytes at once and gives them back (untouched, so
    /// nothing is paged in): with `--memory-limit` raised past what the machine has, a run the
    /// system cannot hold fails here with one line instead of aborting on an allocation part
    /// way through. `with_json` adds the dense JSON report, chart or series.
    pub fn check_reservable(&self, with_json: bool) -> Result<(), ConfigError> {
        let run = self.memory_estimate();
        let (estimate, what) = if with_json {
            (
                run.saturating_add(self.json_output_estimate()),
                "the run with its dense JSON report, chart or series",
            )
        } else {
            (run, "the run")
        };
        if reservable(estimate) {
            return Ok(());
        }
        Err(ConfigError::Unavailable {
            estimate: human_bytes(estimate),
            what,
            budget: human_bytes(self.memory_limit),
        })
    }
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
            (scenario.threads, scenario.memory_terms())
        };
        let (one, two, three, four, five) = (
            terms(Some(1)).1,
            terms(Some(2)).1,
            terms(Some(3)).1,
            terms(Some(4)).1,
            terms(Some(5)).1,
        );
        let run = two.in_flight - one.in_flight;
        assert!(
            run > 10_000 * 24,
            "one run holds an event a client: {run} B"
        );
        assert_eq!(three.in_flight, one.in_flight + 2 * run);
        assert_eq!(four.in_flight, one.in_flight + 3 * run);
        assert_eq!(five, four, "four runs: a fifth thread has none to hold");
        assert_eq!(
            (three.results, three.replicates),
            (one.results, one.replicates)
        );
        assert_eq!(terms(Some(3)).0, 3);
        assert_eq!(terms(None).0, default_threads());
    }
}
