//! What a run may cost before it starts: the latest time anything can happen (so how long
//! histograms can grow) and the bytes a run needs at most, checked against `--memory-limit`.

use super::{ConfigError, LimiterRule, Scenario, ServerModel};
use crate::engine::{Path, Work};
use crate::time::SimDuration;
use crate::workload::Arrivals;

impl Scenario {
    /// The latest time anything can happen in a run of this scenario: what its histograms
    /// can span. Every wait is at most the cap (every strategy is capped) plus a round trip.
    /// - Any server: a client sends at most `retries + 1` requests an item.
    /// - Down for good: every request is refused, so each client gives up on its first item.
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
        let wait = u128::from(self.backoff.cap.max(self.backoff.base).as_nanos()) + round_trip;
        let requests_per_item = u128::from(self.retries) + 1;
        let (items_per_client, items) = match self.work {
            Work::Items(k) => (u128::from(k), u128::from(k) * u128::from(self.clients)),
            Work::Pool(p) => (u128::from(p), u128::from(p)),
        };
        let each_client = wait * requests_per_item * items_per_client;
        let bound = match self.server {
            ServerModel::Down { recover_at: None } => wait * requests_per_item,
            ServerModel::Down {
                recover_at: Some(t),
            } => each_client.min(u128::from(t.as_nanos()) + wait + items_per_client * round_trip),
            // Call-loop runs are bounded by `call_loop_horizon` above.
            ServerModel::Capacity(_) => wait * requests_per_item,
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

    /// Estimated bytes a run of this scenario needs at most: per-client state on the
    /// event-queue path, and histograms covering the [`Scenario::horizon`], for as many runs
    /// (strategies × replicates) and parallel blocks as can be in flight at once.
    pub fn memory_estimate(&self) -> u64 {
        let windows = u128::from(self.horizon().as_nanos() / self.bin.as_nanos()) + 1;
        let threads = rayon::current_num_threads() as u128;
        let strategies = self.strategies.len() as u128;
        let runs = strategies * u128::from(self.replicates);
        let independent = self.path != Path::EventQueue
            && self.run_spec(self.strategies[0]).clients_independent();
        // Tallies alive at once: one a busy thread, and each strategy's replicate 0, held
        // while its other replicates run; never more than there are runs (times blocks of
        // clients on the independent path).
        let blocks = if independent {
            u128::from(self.clients.div_ceil(crate::engine::CLIENTS_PER_BLOCK))
        } else {
            1
        };
        let held = if self.replicates > 1 { strategies } else { 0 };
        let tallies = (threads + held).min(runs * blocks);
        // Three histograms (retries, served, refused) of 8 B a window, and each client's
        // finish (16 B) in small runs.
        let finishes = if self.clients as usize <= crate::metrics::MAX_CLIENT_FINISHES {
            16 * u128::from(self.clients)
        } else {
            0
        };
        let histograms = (windows * 24 + finishes) * tallies;
        // Event queue: one pending event a client, 24 or 32 B (measured peaks at 10 M clients:
        // 24 and 32 B a client), with half again for a run that outgrew its start and blocks
        // part-filled: 48 B; 4 B more for items left with several items each; and a limiter's
        // key table (a sliding window logs `limit` times of 8 B a key), or the larger events of
        // `occ`. One queue a busy
        // thread.
        let key_bytes: u128 = match self.server {
            // `occ` keeps one time, but its events carry their read's offset: 8 B more a client,
            // half again for the queue's slack.
            ServerModel::Occ => 12,
            ServerModel::Down { .. } | ServerModel::Capacity(_) => 0,
            ServerModel::Limited(m) => {
                let per_key = match m.rule {
                    LimiterRule::SlidingWindow(r) => 8 * u128::from(r.limit) + 8,
                    LimiterRule::FixedWindow(_) => 24,
                    LimiterRule::TokenBucket(_) => 32,
                };
                per_key.div_ceil(u128::from(m.clients_per_address))
            }
        };
        let items_bytes = match self.work {
            Work::Items(k) if k > 1 => 4,
            _ => 0,
        };
        let queues = if independent { 0 } else { threads.min(runs) };
        let clients = u128::from(self.clients) * (48 + items_bytes + key_bytes) * queues;
        (histograms + clients + self.call_loop_bytes() * threads.min(runs))
            .min(u128::from(u64::MAX)) as u64
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
    /// each of its attempts a wait (the cap), two network trips and either the timeout or
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
        let per_try = u128::from(self.backoff.cap.as_nanos()) + trip + answer;
        let bound = start.max(outage) + tries * per_try + backlog;
        SimDuration(bound.min(u128::from(u64::MAX)) as u64)
    }

    /// Bytes of one call-loop run beyond its histograms: a generator per client (8 B), and
    /// per call that can be in flight a slot (32 B), its pending events (an answer or
    /// completion and a timeout, 56 B each) and its place in the server's queue (32 B), with
    /// half again for vectors grown by doubling; the series (one 88 B row a window of the
    /// horizon) and two latency sketches (64 KiB each). 0 on the herd paths.
    fn call_loop_bytes(&self) -> u128 {
        if !self.run_spec(self.strategies[0]).uses_call_loop() {
            return 0;
        }
        let windows =
            u128::from(self.horizon().as_nanos() / self.overload.series_bin.as_nanos()) + 1;
        let calls = self.call_bound() * (32 + 2 * 56 + 32) * 3 / 2;
        u128::from(self.clients) * 8 + calls + windows * 88 + 2 * 65_536
    }

    pub(crate) fn check_memory(&self) -> Result<(), ConfigError> {
        let estimate = self.memory_estimate();
        if estimate > self.memory_limit {
            return Err(ConfigError::TooBig {
                estimate: human_bytes(estimate),
                budget: human_bytes(self.memory_limit),
            });
        }
        Ok(())
    }
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
