//! Flags of a plain run (also the scenario part of a sweep): the scenario, the limiters and
//! the overload model, and the one function that turns them into a [`ScenarioFile`].

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::Args;

use herd_sim::chart::ChartSize;
use herd_sim::config::{
    Bound, DistText, HeadersVisible, IntervalText, Intervals, LatencyText, RateText, RollingText,
    ScenarioFile, ServerFile, StrategyList, SERVER_MODELS,
};
use herd_sim::engine::NetworkDelay;
use herd_sim::time::SimDuration;

use super::values::*;
use super::{BrowserArgs, ControlArgs, GENERAL, SCENARIO};

/// Flags of a plain run. Every scenario flag overrides the same key of `--config`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML, or JSON by extension); flags override its keys.
    #[arg(help_heading = GENERAL, long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Number of clients, all failing together at t = 0 [default: 1000].
    #[arg(help_heading = SCENARIO, long, value_name = "N", value_parser = parse_whole)]
    pub clients: Option<u64>,

    /// Strategy, a comma list, or `all` [default: full-jitter].
    #[arg(help_heading = SCENARIO, long, value_name = "NAMES", value_parser = parse_strategies,
          long_help = strategy_help())]
    pub strategy: Option<StrategyList>,

    /// Retries per client after the first failed request [default: 4].
    #[arg(help_heading = SCENARIO, long, value_name = "N", value_parser = parse_whole_u32)]
    pub retries: Option<u32>,

    /// First backoff delay, e.g. 250ms, 1s, 1.5s [default: 1s].
    #[arg(help_heading = SCENARIO, long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub base: Option<SimDuration>,

    /// Largest delay of any strategy, header-reading ones included [default: 30s].
    #[arg(help_heading = SCENARIO, long, visible_alias = "max-delay", value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub cap: Option<SimDuration>,

    /// Growth of the backoff per retry, at least 1 [default: 2].
    #[arg(help_heading = SCENARIO, long, value_name = "X", value_parser = parse_number, allow_hyphen_values = true)]
    pub multiplier: Option<f64>,

    /// Probability that each retry is made, else the call fails there [default: 1].
    ///
    /// From 0 to 1. Against a server that refuses everything a call then makes
    /// (1 − P^(N+1))/(1 − P) attempts on average with N retries.
    #[arg(help_heading = SCENARIO, long, value_name = "P", value_parser = parse_number, allow_hyphen_values = true)]
    pub retry_probability: Option<f64>,
    /// Where jittered strategies meet the cap: after-cap draws below the capped curve,
    /// before-cap clamps a draw below the uncapped curve (most draws become the cap) [default: after-cap].
    #[arg(help_heading = SCENARIO, long, value_name = "ORDER", hide_short_help = true)]
    pub jitter_order: Option<String>,

    /// Histogram window width [default: 100ms].
    #[arg(help_heading = SCENARIO, long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub bin: Option<SimDuration>,

    /// Master seed; printed with every result [default: 2015].
    #[arg(help_heading = SCENARIO, long, value_name = "N", value_parser = parse_whole)]
    pub seed: Option<u64>,

    /// Server model [default: down].
    ///
    /// `occ`: one row under optimistic concurrency control (Brooker 2015), each client reading
    /// then writing until one write succeeds.
    #[arg(help_heading = SCENARIO, long, value_name = "MODEL",
          value_parser = PossibleValuesParser::new(SERVER_MODELS.iter().copied()))]
    pub server: Option<String>,

    /// For `--server down`: the server serves from this time on.
    #[arg(help_heading = SCENARIO, long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub recover_at: Option<SimDuration>,

    #[command(flatten)]
    pub limiter: LimiterArgs,

    #[command(flatten)]
    pub overload: OverloadArgs,

    #[command(flatten)]
    pub control: ControlArgs,

    #[command(flatten)]
    pub preset: super::PresetArgs,

    #[command(flatten)]
    pub browser: BrowserArgs,

    /// Items each client fetches, one after another [default: 1].
    #[arg(help_heading = SCENARIO, long, value_name = "K", value_parser = parse_whole_u32)]
    pub items: Option<u32>,

    /// Items shared by all clients instead of --items (at least one per client).
    #[arg(help_heading = SCENARIO, long, value_name = "P", value_parser = parse_whole)]
    pub pool: Option<u64>,

    /// Round-trip latency of every request: a duration (110ms) or uniform:LOW..HIGH [default: 0s].
    #[arg(help_heading = SCENARIO, long, value_name = "LATENCY", value_parser = parse_latency, allow_hyphen_values = true)]
    pub latency: Option<LatencyText>,

    /// Network delay of each message [default: none; normal:10ms,2ms with --server occ].
    ///
    /// 10ms, exp:MEAN, uniform:LOW..HIGH or normal:MEAN,SD folded at zero. For `--server occ`
    /// every message (read, its answer, write, its answer); for the call loop each way.
    #[arg(help_heading = SCENARIO, long, value_name = "DELAY", value_parser = parse_network_delay, allow_hyphen_values = true)]
    pub network_delay: Option<NetworkDelay>,

    /// Runs per strategy, reported as mean and range [default: 1].
    ///
    /// Replicates spread the epoch phase over the second and derive their seeds.
    #[arg(help_heading = SCENARIO, long, value_name = "N", value_parser = parse_whole_u32)]
    pub replicates: Option<u32>,

    /// Output format on stdout (or in --out).
    #[arg(help_heading = GENERAL, long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,

    /// Write the output to this file instead of stdout (whole or not at all; `-`: stdout; a
    /// device or FIFO is written into, never replaced).
    #[arg(help_heading = GENERAL, long, value_name = "PATH")]
    pub out: Option<PathBuf>,

    /// Also draw the run as a PNG chart (`-`: stdout).
    ///
    /// `.png` or no extension. A herd draws its per-window histograms, one panel per strategy; a call-loop run draws
    /// its time series, a row of panels per strategy, triggers shaded.
    #[arg(help_heading = GENERAL, long, value_name = "PATH")]
    pub png: Option<PathBuf>,

    /// Also draw the same chart as an SVG file (`-`: stdout).
    ///
    /// `.svg` or no extension.
    #[arg(help_heading = GENERAL, long, value_name = "PATH")]
    pub svg: Option<PathBuf>,

    /// Count axis of --png/--svg.
    ///
    /// One linear axis for all panels, one log axis, or one per panel (a call-loop run's
    /// series chart: shared or per-panel).
    #[arg(help_heading = GENERAL, long, value_enum, default_value_t = ChartScaleArg::Shared)]
    pub chart_scale: ChartScaleArg,

    /// Picture size of --png/--svg, WIDTHxHEIGHT in pixels.
    ///
    /// [default: 1200 wide, 152 per panel; a call-loop run's series chart 1500 wide (1900 with
    /// browser tabs), 172 per strategy]
    #[arg(help_heading = GENERAL, long, value_name = "WxH", value_parser = parse_chart_size)]
    pub chart_size: Option<ChartSize>,

    /// One self-contained HTML page of the run (`-`: stdout).
    ///
    /// The scenario in words, the summary table, the chart as inline SVG, a per-client
    /// timeline for runs of up to 5000 clients, and the command, seed and config that
    /// reproduce the run; no network, no external file. docs/reports.md describes it.
    #[arg(help_heading = GENERAL, long, value_name = "PATH")]
    pub html: Option<PathBuf>,

    /// Every attempt as a JSON line (CSV for .csv; `-`: stdout).
    ///
    /// `.jsonl`, `.ndjson` or no extension: JSON lines; `.csv`: CSV with a header. Streamed
    /// as the run goes; docs/reports.md lists the fields. The clients kept by
    /// --trace-sample are drawn from the run seed.
    #[arg(help_heading = GENERAL, long, value_name = "PATH")]
    pub trace: Option<PathBuf>,

    /// With --trace: fraction of clients kept [default: 1].
    #[arg(help_heading = GENERAL, long, value_name = "F", value_parser = parse_number,
          hide_short_help = true)]
    pub trace_sample: Option<f64>,

    /// Simulation path; results are the same on every path.
    ///
    /// `auto` takes the fast independent-client path when the server allows.
    #[arg(help_heading = GENERAL, long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,

    /// Worker threads, 1 to 1024 [default: all cores]. Results never depend on it.
    #[arg(help_heading = GENERAL, long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<u32>,

    /// Refuse runs estimated to send more requests [default: 10000000000].
    ///
    /// The estimate is an upper bound on the requests sent.
    #[arg(help_heading = GENERAL, long, value_name = "N", value_parser = parse_whole)]
    pub max_requests: Option<u64>,

    /// Refuse runs estimated to need more memory, e.g. 512MiB [default: 16GiB].
    #[arg(help_heading = GENERAL, long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,

    /// Run work estimated past 3000000000 events (about 5 minutes) instead of refusing it.
    ///
    /// The estimate is printed on stderr.
    #[arg(help_heading = GENERAL, long)]
    pub yes: bool,
}

/// Flags of the rate-limited servers (`--server fixed-window | sliding-window | token-bucket`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Rate limiters")]
pub struct LimiterArgs {
    /// Windows: requests admitted per window [default: 30].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub limit: Option<u32>,

    /// Windows: the window length [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub window: Option<SimDuration>,

    /// Fixed window: where a window starts [default: first-hit].
    #[arg(long, value_name = "START", value_parser = ["first-hit", "aligned"])]
    pub window_start: Option<String>,

    /// Fixed window: when the cache store drops an expired key [default: whole-second].
    #[arg(long, value_name = "STORE", value_parser = ["whole-second", "precise", "at-stamp"])]
    pub store: Option<String>,

    /// Token bucket: tokens it holds [default: 30].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub capacity: Option<u32>,

    /// Token bucket: tokens returned per --refill-interval [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub refill: Option<u32>,

    /// Token bucket: the refill interval [default: 2s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub refill_interval: Option<SimDuration>,

    /// Token bucket: continuously (GCRA) or in ticks (Envoy) [default: continuous].
    #[arg(long, value_name = "MODE", value_parser = ["continuous", "ticks"])]
    pub refill_mode: Option<String>,

    /// How Retry-After and X-RateLimit-Reset are written [default: whole-seconds].
    #[arg(long, value_name = "STYLE", value_parser = ["whole-seconds", "exact", "round-up"])]
    pub headers: Option<String>,

    /// Whether clients can read the headers (false: a cross-origin response that does not
    /// expose them), or the fraction of clients that can, e.g. 0.7 [default: true].
    #[arg(long, value_name = "BOOL|F", value_parser = parse_text::<HeadersVisible>)]
    pub headers_visible: Option<HeadersVisible>,

    /// Clients behind one address; the limiter keys on the address [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub clients_per_address: Option<u32>,

    /// Where in its second the run starts on the wall clock, below 1s [default: 0s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub epoch_phase: Option<SimDuration>,
}

/// Flags of the overload model: open-loop arrivals, the capacity server, triggers, client
/// timeouts and network delay, and the series.
#[derive(Debug, Args)]
#[command(next_help_heading = "Overload: arrivals, capacity, timeouts")]
pub struct OverloadArgs {
    /// When calls start: every client at t = 0, or Poisson streams [default: herd].
    #[arg(long, value_name = "KIND", value_parser = ["herd", "poisson"])]
    pub arrivals: Option<String>,

    /// Poisson: total call rate over all clients, e.g. 40/s, 2400/m, 10/h.
    #[arg(long, value_name = "RATE", value_parser = parse_text::<RateText>, allow_hyphen_values = true)]
    pub rate: Option<RateText>,

    /// Poisson: calls start in [0, DURATION), e.g. 80s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub duration: Option<SimDuration>,

    /// Poisson: the total rate is RATE during [FROM, TO), e.g. 20s..25s@80/s (repeatable).
    #[arg(long, value_name = "FROM..TO@RATE", value_parser = parse_text::<IntervalText>, allow_hyphen_values = true)]
    pub spike: Vec<IntervalText>,

    /// Capacity: requests in service at once, or `unlimited` [default: unlimited].
    #[arg(long, value_name = "N", value_parser = parse_text::<Bound>)]
    pub workers: Option<Bound>,

    /// Capacity: service time, e.g. 50ms, exp:50ms, uniform:40ms..60ms [default: 50ms].
    #[arg(long, value_name = "DIST", value_parser = parse_text::<DistText>, allow_hyphen_values = true)]
    pub service_time: Option<DistText>,

    /// Capacity: added to a request's service time per request in service when it starts [default: 0s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub slowdown: Option<SimDuration>,

    /// Capacity: requests waiting for a worker at most (more are shed), or `unlimited` [default: unlimited].
    #[arg(long, value_name = "N", value_parser = parse_text::<Bound>)]
    pub queue: Option<Bound>,

    /// Capacity: Retry-After sent with every shed.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub shed_retry_after: Option<SimDuration>,

    /// Capacity: which waiting request a freed worker takes [default: fifo].
    #[arg(long, value_name = "ORDER", value_parser = ["fifo", "lifo"])]
    pub queue_order: Option<String>,

    /// Capacity: drop waiting requests whose client gave up (otherwise they are still served).
    #[arg(long)]
    pub server_cancels: bool,

    /// Servers of the scenario's model behind a balancer, each with its own state [default: 1].
    #[arg(long, value_name = "N", value_parser = parse_whole_u32)]
    pub servers: Option<u32>,

    /// How the pool routes each attempt, retries alike [default: round-robin].
    #[arg(long, value_name = "KIND", value_parser = ["round-robin", "random", "least-outstanding", "power-of-two"])]
    pub balancer: Option<String>,

    /// Pool: server i (from 1) is out over [i x INTERVAL, i x INTERVAL + DOWNTIME), e.g. 20s,5s.
    #[arg(long, value_name = "INTERVAL,DOWNTIME", value_parser = parse_text::<RollingText>)]
    pub rolling_restart: Option<RollingText>,

    /// Any server: requests arriving in [FROM, TO) are refused, e.g. 0s..20s, 0s..20s@server=2 (repeatable).
    #[arg(long, value_name = "FROM..TO", value_parser = parse_text::<IntervalText>, allow_hyphen_values = true)]
    pub outage: Vec<IntervalText>,

    /// Capacity: service capacity times FACTOR for requests starting in [FROM, TO), e.g. 30s..40s@0.5 (repeatable).
    #[arg(long, value_name = "FROM..TO@FACTOR", value_parser = parse_text::<IntervalText>, allow_hyphen_values = true)]
    pub degrade: Vec<IntervalText>,

    /// Poisson: closed-loop clients with at most K calls in flight each; a client's first arrival starts K calls, then each call that ends starts the next after --think-time, until --duration ends the load.
    #[arg(long, value_name = "K", value_parser = parse_whole_u32)]
    pub in_flight: Option<u32>,

    /// With --in-flight: the wait after a call ends before its client's next, e.g. 10ms, exp:10ms, uniform:5ms..15ms [default: 0s].
    #[arg(long, value_name = "DIST", value_parser = parse_text::<DistText>, allow_hyphen_values = true)]
    pub think_time: Option<DistText>,

    /// Any server: the fraction of client processes whose every attempt fails, e.g. 0.2 [default: 0].
    #[arg(long, value_name = "F", value_parser = parse_number, allow_hyphen_values = true)]
    pub sticky_failures: Option<f64>,

    /// Client timeout per attempt: unanswered this long after sending, it is abandoned [default: none].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub timeout: Option<SimDuration>,

    /// Capacity, with --timeout: propagate each attempt's deadline; a worker drops a request whose deadline cannot be met, spending COST (0 to 1) of its service time.
    #[arg(long, value_name = "COST", value_parser = parse_number, allow_hyphen_values = true)]
    pub deadline_propagation: Option<f64>,

    /// Window of the overload time series [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub series_bin: Option<SimDuration>,

    /// Write the overload time series as CSV rows (strategy, window_start_s, ...) to PATH (`-`: stdout).
    #[arg(long, value_name = "PATH")]
    pub series_out: Option<PathBuf>,

    /// How long goodput must stay at 90 % of calls started to count as recovered [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub recovery_hold: Option<SimDuration>,
    /// How long calls keep starting after the last trigger ends, at least, for the collapse
    /// verdict [default: (retries + 1) x timeout + retries x cap, repeated by each --layer
    /// around it (1 + its retries times, its cap between), + the recovery hold].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub settle: Option<SimDuration>,
}

impl OverloadArgs {
    fn any_server_key(&self) -> bool {
        self.workers.is_some()
            || self.service_time.is_some()
            || self.slowdown.is_some()
            || self.queue.is_some()
            || self.shed_retry_after.is_some()
            || self.queue_order.is_some()
            || self.server_cancels
    }
}

pub(crate) fn intervals(list: &[IntervalText]) -> Option<Intervals> {
    (!list.is_empty()).then(|| Intervals(list.to_vec()))
}

impl LimiterArgs {
    fn any(&self) -> bool {
        self.limit.is_some()
            || self.window.is_some()
            || self.window_start.is_some()
            || self.store.is_some()
            || self.capacity.is_some()
            || self.refill.is_some()
            || self.refill_interval.is_some()
            || self.refill_mode.is_some()
            || self.headers.is_some()
            || self.headers_visible.is_some()
            || self.clients_per_address.is_some()
            || self.epoch_phase.is_some()
    }
}

impl RunArgs {
    /// The scenario keys these flags set, to lay over a config file.
    pub fn scenario_overrides(&self) -> ScenarioFile {
        let l = &self.limiter;
        let o = &self.overload;
        let server = if self.server.is_some()
            || self.recover_at.is_some()
            || l.any()
            || o.any_server_key()
            || self.control.failure_rate.is_some()
        {
            Some(ServerFile {
                model: self.server.clone(),
                recover_at: self.recover_at,
                limit: l.limit,
                window: l.window,
                window_start: l.window_start.clone(),
                store: l.store.clone(),
                capacity: l.capacity,
                refill: l.refill,
                refill_interval: l.refill_interval,
                refill_mode: l.refill_mode.clone(),
                headers: l.headers.clone(),
                headers_visible: l.headers_visible,
                clients_per_address: l.clients_per_address,
                epoch_phase: l.epoch_phase,
                workers: o.workers,
                service_time: o.service_time,
                slowdown: o.slowdown,
                queue: o.queue,
                shed_retry_after: o.shed_retry_after,
                queue_order: o.queue_order.clone(),
                server_cancels: o.server_cancels.then_some(true),
                failure_rate: self.control.failure_rate,
            })
        } else {
            None
        };
        let mut file = ScenarioFile {
            sweep: None,
            preset: self.preset.preset.clone(),
            clients: self.clients,
            strategy: self.strategy.clone(),
            retries: self.retries,
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            retry_probability: self.retry_probability,
            sticky_failures: o.sticky_failures,
            jitter_order: self.jitter_order.clone(),
            deadline_propagation: o.deadline_propagation,
            in_flight: o.in_flight,
            think_time: o.think_time,
            bin: self.bin,
            seed: self.seed,
            memory_limit: self.memory_limit,
            server,
            items: self.items,
            pool: self.pool,
            latency: self.latency,
            network_delay: self.network_delay,
            replicates: self.replicates,
            published: None,
            arrivals: o.arrivals.clone(),
            rate: o.rate,
            duration: o.duration,
            spike: intervals(&o.spike),
            timeout: o.timeout,
            outage: intervals(&o.outage),
            degrade: intervals(&o.degrade),
            series_bin: o.series_bin,
            recovery_hold: o.recovery_hold,
            settle: o.settle,
            budget: self.control.budget.clone(),
            breaker: self.control.breaker.clone(),
            throttle: self.control.throttle.clone(),
            hidden: self.browser.hidden,
            visibility_switch: self.browser.visibility_switch,
            hidden_timers: self.browser.hidden_timers.clone(),
            when_hidden: self.browser.when_hidden.clone(),
            retry_after_format: self.browser.retry_after_format.clone(),
            clock_skew: self.browser.clock_skew,
            layer: (!self.control.layer.is_empty()).then(|| self.control.layer.clone()),
            servers: o.servers,
            balancer: o.balancer.clone(),
            rolling_restart: o.rolling_restart,
        };
        if let Some(stack) = &self.control.layers {
            stack.lay_over(&mut file);
        }
        file
    }
}
