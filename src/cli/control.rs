//! Flags of retry control: the flaky server, budgets, breakers and throttles.

use clap::Args;

use super::values::*;
use herd_sim::config::{LayerFile, LayerStack};

/// Flags of retry control: the `flaky` server, and the budgets, breakers and throttles each
/// client process keeps (see `herd_sim::policy::control`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Retry control")]
pub struct ControlArgs {
    /// Flaky: probability that an attempt fails with a 503, independently, 0 to 1 [default: 0].
    #[arg(long, value_name = "X", value_parser = parse_number, allow_hyphen_values = true)]
    pub failure_rate: Option<f64>,

    /// Retry budget of each client process: none, token-bucket[:deposit=0.1,cost=1,capacity=5],
    /// grpc[:max_tokens=10,token_ratio=0.1],
    /// aws-standard[:capacity=500,cost=5,timeout_cost=10,success_increment=1],
    /// envoy[:percent=20,min_concurrency=3], finagle[:ttl=10s,min_per_s=10,percent=20]
    /// [default: none].
    #[arg(long, value_name = "NAME[:K=V,..]", allow_hyphen_values = true)]
    pub budget: Option<String>,

    /// Circuit breaker of each client process: none, retries[:ratio=0.1,window=all] (retries
    /// stop while failed attempts / calls exceed the ratio), or
    /// calls[:ratio=0.5,window=10s,min_calls=20,open=5s] (closed, open, half-open)
    /// [default: none].
    #[arg(long, value_name = "NAME[:K=V,..]", allow_hyphen_values = true)]
    pub breaker: Option<String>,

    /// Adaptive throttle of each client process: none, sre[:k=2,window=2m] (Google SRE
    /// client-side throttling: reject locally with probability
    /// max(0, (requests - k*accepts)/(requests + 1))), or
    /// aws-adaptive[:beta=0.7,scale=0.4,smoothing=0.8,min_rate=0.5] (the AWS SDKs' rate
    /// limiter with a CUBIC fill rate, on after the first throttling error; attempts wait for
    /// a token) [default: none].
    #[arg(long, value_name = "NAME[:K=V,..]", allow_hyphen_values = true)]
    pub throttle: Option<String>,

    /// A retry layer above the run's own policy (which stays the innermost), repeatable,
    /// outermost first: space-separated key=value pairs of preset, strategy, retries, base,
    /// cap, multiplier, retry_probability, jitter_order, timeout, budget, breaker, throttle,
    /// e.g. --layer "strategy=naive retries=3 timeout=5s". Its attempt is a whole call of the
    /// layer below; its timeout abandons that whole call (every layer's pending retry with
    /// it) and counts as a failed attempt.
    #[arg(long, value_name = "SPEC", value_parser = parse_text::<LayerFile>)]
    pub layer: Vec<LayerFile>,

    /// The whole stack of retry layers in one value, outermost first, separated by `;`, the
    /// last the innermost (the run's own policy, whose attempts reach the server), e.g. --layers "retries=3 ; retries=3 ; retries=2" (4 x 4 x 3
    /// attempts a call). The same as --layer for each but the last and the last's keys as the
    /// run's flags, so it is refused beside --layer and the run's policy flags.
    #[arg(
        long,
        value_name = "STACK",
        value_parser = parse_text::<LayerStack>,
        conflicts_with_all = [
            "layer", "preset", "strategy", "retries", "base", "cap", "multiplier",
            "retry_probability", "jitter_order", "budget", "breaker", "throttle", "timeout",
        ]
    )]
    pub layers: Option<LayerStack>,
}
