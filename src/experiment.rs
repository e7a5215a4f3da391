//! Runs a validated [`Scenario`]: one run per strategy, in parallel with rayon, collected in
//! the scenario's strategy order. The result of a strategy does not depend on which other
//! strategies run beside it, nor on the number of threads (each run is single-seeded and its
//! parallel blocks merge by addition). With replicates, each strategy runs once per replicate
//! (spread epoch phases, derived seeds) and its figures are summarised as mean and range. No
//! I/O.

use rayon::prelude::*;
use serde::Serialize;

use crate::config::{Published, Scenario};
use crate::engine::{simulate, simulate_observed};
use crate::metrics::{Histogram, ReplicateSpread, Summary};
use crate::overload::CallLoopResult;
use crate::policy::Strategy;
use crate::time::SimTime;
use crate::trace::{NoTrace, Observer, RunInfo, TraceWriter};

/// One strategy's result: the scenario it ran, its summary figures and its histogram. The
/// field names are the JSON names (docs/model.md documents each).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    /// Strategy name.
    pub strategy: Strategy,
    /// Number of clients.
    pub clients: u32,
    /// Retries per client.
    pub retries: u32,
    /// The run seed.
    pub seed: u64,
    /// Backoff base, seconds.
    pub base_s: f64,
    /// Backoff cap, seconds.
    pub cap_s: f64,
    /// Backoff multiplier.
    pub multiplier: f64,
    /// The probability that each retry is made (`--retry-probability`): absent from the JSON
    /// when it is 1, every retry made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_probability: Option<f64>,
    /// Window width, seconds.
    pub bin_s: f64,
    /// The server model.
    pub server: String,
    /// Summary figures.
    #[serde(flatten)]
    pub summary: Summary,
    /// Retry arrivals per window, from window 0 to the last non-empty one (held sparsely,
    /// written densely).
    pub histogram: Histogram,
    /// What each client fetched (`1 items each`, `pool of 40 items`).
    pub work: String,
    /// Round-trip latency, as the command line writes it.
    pub latency: String,
    /// Served requests (first attempts and retries) per window.
    pub histogram_served: Histogram,
    /// Refused requests per window; with `histogram_served`, every request once.
    pub histogram_refused: Histogram,
    /// When the limiter's windows opened, seconds: a fixed-window limiter with a single key
    /// only, at most [`crate::server::MAX_WINDOW_STARTS`]; absent from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_starts_s: Option<Vec<f64>>,
    /// When each client stopped (its work done or its retries spent), seconds, in client
    /// order: runs of at most [`crate::metrics::MAX_CLIENT_FINISHES`] clients only; absent
    /// from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_finish_s: Option<Vec<Option<f64>>>,
    /// True when the server is a rate limiter (not `down`), so its requests are drawn split
    /// into served and refused. Not in the JSON: `server` names the model.
    #[serde(skip)]
    pub rate_limited: bool,
    /// The work figures over all replicates, when there is more than one (the summary and
    /// histograms above are replicate 0's).
    pub over_replicates: Option<ReplicateSpread>,
    /// The published figures of this strategy, when the scenario carries them.
    pub published: Option<Published>,
    /// A call-loop run's summary figures and series (replicate 0's), beside the others in
    /// the JSON; absent on the herd paths.
    #[serde(flatten)]
    pub calls: Option<CallLoopResult>,
    /// True when a histogram of one of its replicates needed more blocks than the run's
    /// guard allowed ([`crate::metrics::Tally::outgrown`]): its counts are incomplete and the
    /// run is refused. Not in the JSON.
    #[serde(skip)]
    pub outgrown: bool,
}

/// All results of one scenario, in strategy order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// One entry per strategy.
    pub results: Vec<RunResult>,
}

/// Runs every strategy of `scenario` (in parallel) and reports them in order.
pub fn run(scenario: &Scenario) -> Report {
    let results = scenario
        .strategies
        .par_iter()
        .map(|&strategy| run_one(scenario, strategy))
        .collect();
    Report { results }
}

/// [`run`], every attempt of replicate 0 of each strategy written to `trace`: the
/// strategies one after another, in order, so the trace is the same for any thread count.
pub fn run_traced<W: std::io::Write + Send>(
    scenario: &Scenario,
    trace: &mut TraceWriter<W>,
) -> Report {
    let results = scenario
        .strategies
        .iter()
        .enumerate()
        .map(|(index, &strategy)| {
            let spec = scenario.replicate_spec(strategy, 0);
            trace.begin_run(RunInfo {
                index: index as u32,
                strategy: strategy.to_string(),
                seed: spec.seed,
                clients: spec.clients,
                per_client: !spec.uses_call_loop()
                    && (spec.work != crate::engine::Work::Items(1)
                        || spec.server.reads_before_writing()),
                layered: spec.overload.layers.is_active(),
            });
            run_one_observed(scenario, strategy, &mut *trace)
        })
        .collect();
    Report { results }
}

/// Runs one strategy of `scenario` (every replicate of it).
pub fn run_one(scenario: &Scenario, strategy: Strategy) -> RunResult {
    run_one_observed(scenario, strategy, NoTrace)
}

/// [`run_one`], replicate 0's attempts told to `trace`.
fn run_one_observed<O: Observer>(scenario: &Scenario, strategy: Strategy, trace: O) -> RunResult {
    let spec = scenario.replicate_spec(strategy, 0);
    let (tally, calls) = simulate_observed(&spec, scenario.path, trace);
    let calls = calls.map(|totals| {
        let o = &scenario.overload;
        CallLoopResult::new(
            totals,
            o.describe_load(),
            o.describe_client(&scenario.latency.to_string()),
            o.describe_triggers(),
            o.recovery_hold,
            o.settle,
        )
        .with_controls(scenario.has_retry_controls())
    });
    let occ = scenario.server.is_occ();
    let outgrown = std::sync::atomic::AtomicBool::new(tally.outgrown());
    let over_replicates = (scenario.replicates > 1).then(|| {
        // Five numbers a replicate, not its summary or tally (the estimate counts them), and
        // whether its histograms outgrew their guard.
        let mut figures = vec![ReplicateSpread::figures(&Summary::with_attempts(
            &tally, occ,
        ))];
        figures.par_extend((1..scenario.replicates).into_par_iter().map(|i| {
            let tally = simulate(&scenario.replicate_spec(strategy, i), scenario.path);
            if tally.outgrown() {
                outgrown.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            ReplicateSpread::figures(&Summary::with_attempts(&tally, occ))
        }));
        ReplicateSpread::of_figures(&figures)
    });
    let mut result = RunResult {
        strategy,
        clients: scenario.clients,
        retries: scenario.retries,
        seed: spec.seed,
        base_s: scenario.backoff.base.as_secs_f64(),
        cap_s: scenario.backoff.cap.as_secs_f64(),
        multiplier: scenario.backoff.multiplier,
        retry_probability: (!scenario.retry_chance.is_always())
            .then(|| scenario.retry_chance.to_string().parse().unwrap_or(1.0)),
        bin_s: scenario.bin.as_secs_f64(),
        server: if occ {
            format!(
                "{}, network {} a message",
                scenario.server.describe(),
                scenario.network_delay
            )
        } else if scenario.browser.is_active() {
            format!(
                "{}; {}",
                scenario.server.describe(),
                scenario.browser.describe()
            )
        } else if scenario.overload.sticky.is_active() {
            format!(
                "{}; {}",
                scenario.server.describe(),
                scenario.overload.sticky.describe()
            )
        } else {
            scenario.server.describe()
        },
        summary: Summary::with_attempts(&tally, occ),
        histogram: tally.retries,
        work: scenario.work.to_string(),
        latency: scenario.latency.to_string(),
        histogram_served: tally.served_windows,
        histogram_refused: tally.refused_windows,
        window_starts_s: tally
            .window_starts
            .as_ref()
            .map(|starts| starts.iter().map(|t| t.as_secs_f64()).collect()),
        client_finish_s: tally.client_finishes.as_ref().map(|finishes| {
            finishes
                .iter()
                .map(|t| t.map(SimTime::as_secs_f64))
                .collect()
        }),
        rate_limited: scenario.server.is_limited(),
        over_replicates,
        published: scenario.published_for(strategy).cloned(),
        calls,
        outgrown: outgrown.into_inner(),
    };
    if let Some(pool) = scenario.overload.pool.describe() {
        result.server = format!("{pool}, each {}", result.server);
    }
    result
}
