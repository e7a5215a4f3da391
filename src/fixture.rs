//! The deterministic retry fixture (Experiment 3 of the spec): one client, a scripted server,
//! a simulated clock and a safety label, so that a team can pin what its retry policy does in
//! CI without a network.
//!
//! This module owns the scenario file format (JSON), its one validation, the state machine that
//! plays a scenario, the comparison with `expect` blocks and the table and JSON renderings.
//! Every delay comes from the simulator's own [`Policy::decide`] and [`floor_at_retry_after`]
//! (no second copy of the backoff maths), and every draw from [`crate::rng`]: layer `i` of a
//! scenario (the application is layer 0) draws as client `i` of a simulator run whose run seed
//! is the scenario's seed. Nothing here reads a clock, sleeps or knows about clap; the only
//! I/O is [`Fixture::read`].
//!
//! The rules, in the order they are applied after each failed attempt of a layer:
//! 1. a response the layer may not retry (see [`ResponseKind::retryable`]) ends the layer with
//!    `failed-permanent`;
//! 2. the attempt limit (`retry_limit`, the first attempt included) is checked before each
//!    attempt, so the layer gives up with `retry-limit-exhausted` and no delay is ever committed
//!    after the final attempt;
//! 3. a retry of a non-idempotent operation is refused (`refused`);
//! 4. the delay is the policy's, floored at `Retry-After`; if it would take the clock past the
//!    deadline (strictly), nothing is committed and the scenario stops with
//!    `deadline-exceeded`, reporting the clock the wait would have reached.
//!
//! Attempts themselves take no simulated time; only committed delays move the clock.

use std::collections::HashMap;
use std::fmt;
use std::path::Path as FsPath;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

use crate::config::DEFAULT_SEED;
use crate::policy::{floor_at_retry_after, Backoff, Decision, Hints, Policy, Strategy};
use crate::rng::{ClientRng, ClientSeeds};
use crate::time::{parse_duration, SimDuration, NANOS_PER_SEC};

/// Largest `retry_limit` of one layer: a fixture is a handful of attempts, and the bound keeps
/// a typo from spinning for minutes.
pub const MAX_RETRY_LIMIT: u32 = 1000;
/// Largest product of the layers' `retry_limit`s (the worst-case number of requests).
pub const MAX_WORST_CASE_REQUESTS: u64 = 1_000_000;
/// Largest deadline in seconds (well inside the ~584 years integer nanoseconds can hold).
pub const MAX_DEADLINE_S: f64 = 1e9;

/// A fixture file that cannot be read, parsed or accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FixtureError {
    /// The file could not be read, or is not valid JSON of the expected shape.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong, with line and column where the parser gives them.
        message: String,
    },
    /// A field's value is outside what is accepted.
    #[error("{place}: invalid {field}: {value}; {accepted}")]
    Invalid {
        /// Where: `scenario `x``, `scenario `x` layer `sdk``, or `file policy`.
        place: String,
        /// The key, as written in the file.
        field: &'static str,
        /// The offending value, as given.
        value: String,
        /// What would be accepted.
        accepted: String,
    },
    /// Two scenarios share an id.
    #[error("duplicate scenario id `{id}` (scenarios {first} and {second}); ids must be unique")]
    DuplicateId {
        /// The repeated id.
        id: String,
        /// 1-based position of its first use.
        first: usize,
        /// 1-based position of its second use.
        second: usize,
    },
    /// `--check` was asked for but a scenario has nothing to be checked against.
    #[error("--check needs an expect block in every scenario; scenario `{0}` has none")]
    MissingExpectation(String),
}

fn invalid(
    place: &str,
    field: &'static str,
    value: impl fmt::Display,
    accepted: impl Into<String>,
) -> FixtureError {
    FixtureError::Invalid {
        place: place.to_string(),
        field,
        value: value.to_string(),
        accepted: accepted.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Scripted responses
// ---------------------------------------------------------------------------------------------

/// What the scripted server answers, without its hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    /// The request succeeded.
    Success,
    /// 429 Too Many Requests.
    TooManyRequests,
    /// 503 Service Unavailable.
    Unavailable,
    /// 500 Internal Server Error.
    ServerError,
    /// 400 Bad Request.
    BadRequest,
    /// No answer before the client's timeout.
    Timeout,
}

impl ResponseKind {
    /// Every kind, in the order error messages list them.
    pub const ALL: [ResponseKind; 6] = [
        ResponseKind::Success,
        ResponseKind::TooManyRequests,
        ResponseKind::Unavailable,
        ResponseKind::ServerError,
        ResponseKind::BadRequest,
        ResponseKind::Timeout,
    ];

    /// The name used in scenario files and output.
    pub const fn name(self) -> &'static str {
        match self {
            ResponseKind::Success => "success",
            ResponseKind::TooManyRequests => "429",
            ResponseKind::Unavailable => "503",
            ResponseKind::ServerError => "500",
            ResponseKind::BadRequest => "400",
            ResponseKind::Timeout => "timeout",
        }
    }

    /// The retryable table: 400 never (it fails the same way every time); 429, 503 and timeout
    /// always; 500 only when the layer's policy sets `retry_500` (a 500 may mean the work was
    /// partly done). Success is never retried because it is not a failure.
    pub const fn retryable(self, retry_500: bool) -> bool {
        match self {
            ResponseKind::TooManyRequests | ResponseKind::Unavailable | ResponseKind::Timeout => {
                true
            }
            ResponseKind::ServerError => retry_500,
            ResponseKind::Success | ResponseKind::BadRequest => false,
        }
    }

    /// True for the kinds that may carry `retry-after=` and `reset-in=` hints.
    const fn takes_hints(self) -> bool {
        matches!(
            self,
            ResponseKind::TooManyRequests | ResponseKind::Unavailable
        )
    }
}

/// One scripted response: a kind and the headers the client can read, written
/// `"429 retry-after=5"` or `"503 retry-after=1.5s reset-in=10"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// What the server answers.
    pub kind: ResponseKind,
    /// `Retry-After` and time-to-reset, as the policy sees them.
    pub hints: Hints,
}

/// A scripted response that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// The first word is not a known response.
    #[error("unknown response `{0}`; accepted: success, 429, 503, 500, 400, timeout (429 and 503 may add retry-after=SECONDS and reset-in=SECONDS)")]
    Unknown(String),
    /// A hint that is not `retry-after=` or `reset-in=` with a duration.
    #[error("bad hint `{hint}` in response `{response}`; accepted: retry-after=SECONDS or reset-in=SECONDS (whole seconds, or a duration such as 1.5s), each at most once")]
    BadHint {
        /// The whole response text.
        response: String,
        /// The hint that was refused.
        hint: String,
    },
    /// A hint on a response that cannot carry one.
    #[error("response `{0}` cannot carry hints; only 429 and 503 take retry-after= and reset-in=")]
    HintNotAllowed(String),
}

fn parse_hint_duration(value: &str) -> Option<SimDuration> {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = value.parse().ok()?;
        return secs.checked_mul(NANOS_PER_SEC).map(SimDuration);
    }
    parse_duration(value).ok()
}

impl FromStr for Response {
    type Err = ResponseError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or("");
        let kind = ResponseKind::ALL
            .into_iter()
            .find(|kind| kind.name() == first)
            .ok_or_else(|| ResponseError::Unknown(text.trim().to_string()))?;
        let mut hints = Hints::default();
        for hint in words {
            if !kind.takes_hints() {
                return Err(ResponseError::HintNotAllowed(text.trim().to_string()));
            }
            let bad = || ResponseError::BadHint {
                response: text.trim().to_string(),
                hint: hint.to_string(),
            };
            let (key, value) = hint.split_once('=').ok_or_else(bad)?;
            let slot = match key {
                "retry-after" => &mut hints.retry_after,
                "reset-in" => &mut hints.reset_in,
                _ => return Err(bad()),
            };
            if slot.is_some() {
                return Err(bad());
            }
            *slot = Some(parse_hint_duration(value).ok_or_else(bad)?);
        }
        Ok(Response { kind, hints })
    }
}

impl fmt::Display for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        if let Some(after) = self.hints.retry_after {
            write!(f, " retry-after={after}")?;
        }
        if let Some(reset) = self.hints.reset_in {
            write!(f, " reset-in={reset}")?;
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Response {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

// ---------------------------------------------------------------------------------------------
// The file as written
// ---------------------------------------------------------------------------------------------

/// A retry policy as written, at file level, in a scenario or in a layer. Every key is optional;
/// a scenario's keys override the file's. Defaults: `exponential`, base 1 s, no cap,
/// multiplier 2, seed 2015, 500 not retried.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Strategy name, as on the simulator's command line.
    pub strategy: Option<Strategy>,
    /// First delay, e.g. `"1s"`.
    pub base: Option<SimDuration>,
    /// Largest delay; none by default, so the spec's `base · 2^(n-1)` holds at any n.
    pub cap: Option<SimDuration>,
    /// Growth per retry, at least 1.
    pub multiplier: Option<f64>,
    /// Seed of the scenario's draws (not accepted in a layer: one seed per scenario).
    pub seed: Option<u64>,
    /// Whether a 500 may be retried.
    pub retry_500: Option<bool>,
}

impl PolicySpec {
    fn overridden_by(&self, over: Option<&PolicySpec>) -> PolicySpec {
        let Some(over) = over else {
            return self.clone();
        };
        PolicySpec {
            strategy: over.strategy.or(self.strategy),
            base: over.base.or(self.base),
            cap: over.cap.or(self.cap),
            multiplier: over.multiplier.or(self.multiplier),
            seed: over.seed.or(self.seed),
            retry_500: over.retry_500.or(self.retry_500),
        }
    }
}

/// A retry layer under the application's (an SDK's own retries), as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    /// A label for the output; `layer-1`, `layer-2`, … by default.
    pub name: Option<String>,
    /// Attempts this layer makes per call from the layer above, the first included (signed so
    /// that a negative value gets the same message as zero).
    pub retry_limit: i64,
    /// This layer's policy, over the file's (not the scenario's: an SDK does not share the
    /// application's settings).
    pub policy: Option<PolicySpec>,
}

/// What a scenario is expected to give; the keys are the JSON output's. Only the keys given are
/// compared.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Requests that reached the server.
    pub attempts: Option<u32>,
    /// Committed simulated delay, in seconds (compared to the nanosecond).
    pub delay_s: Option<f64>,
    /// How the scenario ended.
    pub result: Option<Outcome>,
    /// The safety label.
    pub disposition: Option<Disposition>,
    /// The clock a refused wait would have reached; `null` expects none.
    #[serde(default, deserialize_with = "present")]
    pub would_reach_s: Option<Option<f64>>,
}

/// Tells a key given as `null` (`Some(None)`) from a key left out (`None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// One scenario as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Unique name.
    pub id: String,
    /// Scripted answers, in order; the last one repeats once the script ends.
    pub responses: Vec<Response>,
    /// Maximum attempts of the application layer, the first included (signed so that a
    /// negative value gets the same message as zero).
    pub retry_limit: i64,
    /// Simulated seconds the committed delays may add up to.
    pub deadline: f64,
    /// Whether the operation may be replayed.
    pub idempotent: bool,
    /// The application's policy, over the file's.
    pub policy: Option<PolicySpec>,
    /// Retry layers under the application's, outermost first.
    #[serde(default)]
    pub layers: Vec<LayerSpec>,
    /// What `--check` compares the result with.
    pub expect: Option<Expectation>,
}

/// A fixture file as written: an optional file-wide policy and the scenarios.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureFile {
    /// Policy keys every scenario and layer starts from.
    pub policy: Option<PolicySpec>,
    /// The scenarios, run and reported in this order.
    pub scenarios: Vec<ScenarioSpec>,
}

// ---------------------------------------------------------------------------------------------
// Validated scenarios
// ---------------------------------------------------------------------------------------------

/// One retry layer of a validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Label for the output (`application` for the outermost).
    pub name: String,
    /// Attempts per call from the layer above, the first included.
    pub retry_limit: u32,
    /// The simulator's policy; `max_retries` is `retry_limit - 1`.
    pub policy: Policy,
    /// Whether a 500 may be retried.
    pub retry_500: bool,
}

/// A valid scenario, ready to play.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Unique name.
    pub id: String,
    /// Scripted answers; never empty.
    pub script: Vec<Response>,
    /// The clock may reach it but not pass it.
    pub deadline: SimDuration,
    /// Whether retries are allowed at all.
    pub idempotent: bool,
    /// The application's layer first, then the layers under it.
    pub layers: Vec<Layer>,
    /// Seed of every draw of the scenario.
    pub seed: u64,
    /// What `--check` compares with.
    pub expect: Option<Expectation>,
}

/// A valid fixture file.
#[derive(Clone, Debug, PartialEq)]
pub struct Fixture {
    /// The scenarios, in file order.
    pub scenarios: Vec<Scenario>,
}

fn seconds_to_duration(secs: f64) -> Option<SimDuration> {
    if !(0.0..=MAX_DEADLINE_S).contains(&secs) {
        return None;
    }
    Some(SimDuration((secs * NANOS_PER_SEC as f64).round() as u64))
}

fn resolve_policy(
    spec: &PolicySpec,
    retry_limit: i64,
    place: &str,
) -> Result<(u32, Policy, bool), FixtureError> {
    let retry_limit = u32::try_from(retry_limit)
        .ok()
        .filter(|limit| (1..=MAX_RETRY_LIMIT).contains(limit))
        .ok_or_else(|| {
            invalid(
                place,
                "retry_limit",
                retry_limit,
                format!("accepted: a whole number of attempts from 1 to {MAX_RETRY_LIMIT}, the first attempt included"),
            )
        })?;
    let base = spec.base.unwrap_or(SimDuration::from_secs(1));
    if base.is_zero() {
        return Err(invalid(
            place,
            "policy.base",
            base,
            "accepted: a positive duration such as 100ms or 1s",
        ));
    }
    let cap = spec.cap.unwrap_or(SimDuration::MAX);
    if cap < base {
        return Err(invalid(
            place,
            "policy.cap",
            cap,
            format!("accepted: a duration at least policy.base ({base})"),
        ));
    }
    let multiplier = spec.multiplier.unwrap_or(2.0);
    if !multiplier.is_finite() || multiplier < 1.0 {
        return Err(invalid(
            place,
            "policy.multiplier",
            multiplier,
            "accepted: a finite number of at least 1, such as 2 or 1.5",
        ));
    }
    let policy = Policy {
        strategy: spec.strategy.unwrap_or(Strategy::Exponential),
        backoff: Backoff {
            base,
            cap,
            multiplier,
        },
        max_retries: retry_limit - 1,
    };
    Ok((retry_limit, policy, spec.retry_500.unwrap_or(false)))
}

fn check_expectation(expect: &Expectation, place: &str) -> Result<(), FixtureError> {
    if expect == &Expectation::default() {
        return Err(invalid(
            place,
            "expect",
            "{}",
            "accepted: at least one of attempts, delay_s, result, disposition, would_reach_s",
        ));
    }
    let seconds = [
        ("expect.delay_s", expect.delay_s),
        ("expect.would_reach_s", expect.would_reach_s.flatten()),
    ];
    for (field, value) in seconds {
        if let Some(v) = value {
            if seconds_to_duration(v).is_none() {
                return Err(invalid(
                    place,
                    field,
                    v,
                    format!("accepted: seconds from 0 to {MAX_DEADLINE_S}"),
                ));
            }
        }
    }
    Ok(())
}

impl FixtureFile {
    /// Parses fixture JSON; errors carry serde's line and column.
    pub fn parse(text: &str) -> Result<FixtureFile, String> {
        serde_json::from_str(text).map_err(|e| {
            if crate::sniff::looks_like_toml(text) {
                format!(
                    "this is a TOML file (a scenario: run it with `herd-sim --config FILE`); \
                     fixture reads a JSON file of scenarios, such as configs/scenarios.json ({e})"
                )
            } else {
                e.to_string()
            }
        })
    }

    /// Applies defaults and checks every scenario once.
    pub fn validate(self) -> Result<Fixture, FixtureError> {
        let file_policy = self.policy.unwrap_or_default();
        if self.scenarios.is_empty() {
            return Err(invalid(
                "file",
                "scenarios",
                "[]",
                "accepted: a list of at least one scenario",
            ));
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (index, spec) in self.scenarios.iter().enumerate() {
            if let Some(first) = seen.insert(spec.id.as_str(), index + 1) {
                return Err(FixtureError::DuplicateId {
                    id: spec.id.clone(),
                    first,
                    second: index + 1,
                });
            }
        }
        let scenarios = self
            .scenarios
            .into_iter()
            .map(|spec| validate_scenario(spec, &file_policy))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fixture { scenarios })
    }
}

fn validate_scenario(
    spec: ScenarioSpec,
    file_policy: &PolicySpec,
) -> Result<Scenario, FixtureError> {
    let place = format!("scenario `{}`", spec.id);
    if spec.id.trim().is_empty() {
        return Err(invalid(
            "scenario",
            "id",
            "\"\"",
            "accepted: a non-empty name",
        ));
    }
    if spec.responses.is_empty() {
        return Err(invalid(
            &place,
            "responses",
            "[]",
            "accepted: at least one of success, 429, 503, 500, 400, timeout",
        ));
    }
    let deadline = seconds_to_duration(spec.deadline).ok_or_else(|| {
        invalid(
            &place,
            "deadline",
            spec.deadline,
            format!("accepted: simulated seconds from 0 to {MAX_DEADLINE_S}, e.g. 30 or 2.5"),
        )
    })?;
    let application = file_policy.overridden_by(spec.policy.as_ref());
    let (retry_limit, policy, retry_500) = resolve_policy(&application, spec.retry_limit, &place)?;
    let mut layers = vec![Layer {
        name: "application".to_string(),
        retry_limit,
        policy,
        retry_500,
    }];
    let mut worst_case = u64::from(retry_limit);
    for (index, layer) in spec.layers.iter().enumerate() {
        let name = layer
            .name
            .clone()
            .unwrap_or_else(|| format!("layer-{}", index + 1));
        let layer_place = format!("{place} layer `{name}`");
        if let Some(seed) = layer.policy.as_ref().and_then(|p| p.seed) {
            return Err(invalid(
                &layer_place,
                "policy.seed",
                seed,
                "accepted: no seed in a layer; set it in the scenario's or the file's policy",
            ));
        }
        let merged = file_policy.overridden_by(layer.policy.as_ref());
        let (retry_limit, policy, retry_500) =
            resolve_policy(&merged, layer.retry_limit, &layer_place)?;
        worst_case = worst_case.saturating_mul(u64::from(retry_limit));
        if worst_case > MAX_WORST_CASE_REQUESTS {
            return Err(invalid(
                &layer_place,
                "retry_limit",
                layer.retry_limit,
                format!("the layers' limits multiply past {MAX_WORST_CASE_REQUESTS} requests; accepted: smaller limits"),
            ));
        }
        layers.push(Layer {
            name,
            retry_limit,
            policy,
            retry_500,
        });
    }
    if let Some(expect) = &spec.expect {
        check_expectation(expect, &place)?;
    }
    Ok(Scenario {
        id: spec.id,
        script: spec.responses,
        deadline,
        idempotent: spec.idempotent,
        layers,
        seed: application.seed.unwrap_or(DEFAULT_SEED),
        expect: spec.expect,
    })
}

impl Fixture {
    /// Reads and validates a fixture file.
    pub fn read(path: &FsPath) -> Result<Fixture, FixtureError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| FixtureError::File {
            path: shown.clone(),
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(&text).map_err(|error| match error {
            FixtureError::File { message, .. } => FixtureError::File {
                path: shown,
                message,
            },
            other => other,
        })
    }

    /// Parses and validates fixture JSON.
    pub fn parse(text: &str) -> Result<Fixture, FixtureError> {
        FixtureFile::parse(text)
            .map_err(|message| FixtureError::File {
                path: "(text)".to_string(),
                message,
            })?
            .validate()
    }

    /// Fails unless every scenario has an expectation (what `--check` needs).
    pub fn require_expectations(&self) -> Result<(), FixtureError> {
        match self.scenarios.iter().find(|s| s.expect.is_none()) {
            Some(s) => Err(FixtureError::MissingExpectation(s.id.clone())),
            None => Ok(()),
        }
    }

    /// Plays every scenario; with `check`, compares each with its expectation.
    pub fn run(&self, check: bool) -> FixtureReport {
        let scenarios = self
            .scenarios
            .iter()
            .map(|scenario| {
                let mut report = play(scenario);
                if check {
                    let expect = scenario.expect.clone().unwrap_or_default();
                    report.mismatches = Some(compare(&report, &expect));
                }
                report
            })
            .collect();
        FixtureReport { scenarios }
    }
}

// ---------------------------------------------------------------------------------------------
// Playing a scenario
// ---------------------------------------------------------------------------------------------

/// How a scenario ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A request succeeded.
    Completed,
    /// The next wait would have taken the clock past the deadline.
    DeadlineExceeded,
    /// A retry was needed but the operation is not idempotent.
    Refused,
    /// Every allowed attempt failed with a retryable response.
    RetryLimitExhausted,
    /// A response the application may not retry.
    FailedPermanent,
}

impl Outcome {
    /// The name used in files and output.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::DeadlineExceeded => "deadline-exceeded",
            Outcome::Refused => "refused",
            Outcome::RetryLimitExhausted => "retry-limit-exhausted",
            Outcome::FailedPermanent => "failed-permanent",
        }
    }
}

/// The safety label: whether the operation may be replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// Idempotent: retries are allowed.
    ReplaySafe,
    /// Not idempotent: any retry is refused.
    UnsafeReplay,
}

impl Disposition {
    /// The name used in files and output.
    pub const fn name(self) -> &'static str {
        match self {
            Disposition::ReplaySafe => "replay-safe",
            Disposition::UnsafeReplay => "unsafe-replay",
        }
    }
}

/// What one layer did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayerReport {
    /// The layer's label (`application` for the outermost).
    pub name: String,
    /// Attempts per call from the layer above.
    pub retry_limit: u32,
    /// Attempts this layer made, over all calls: the innermost layer's count is the number of
    /// requests the server saw.
    pub attempts: u32,
    /// Most attempts this layer could make: the product of the limits down to it.
    pub worst_case: u64,
}

/// One field that differs from its expectation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// The output key.
    pub field: &'static str,
    /// The expected value, as written.
    pub expected: String,
    /// What the scenario gave.
    pub actual: String,
}

/// The result of one scenario. Field names are the JSON names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioReport {
    /// The scenario's id.
    pub id: String,
    /// Requests the server saw.
    pub attempts: u32,
    /// Committed simulated delay, in seconds.
    pub delay_s: f64,
    /// How it ended.
    pub result: Outcome,
    /// The safety label.
    pub disposition: Disposition,
    /// For `deadline-exceeded`: the clock the refused wait would have reached, in seconds.
    pub would_reach_s: Option<f64>,
    /// The seed of every draw (see the module documentation).
    pub seed: u64,
    /// Attempts per layer, application first.
    pub layers: Vec<LayerReport>,
    /// With `--check` only: the fields that differ from the expectation (empty when it is met).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mismatches: Option<Vec<Mismatch>>,
    /// Committed delay, exact.
    #[serde(skip)]
    pub delay: SimDuration,
    /// The refused wait's clock, exact.
    #[serde(skip)]
    pub would_reach: Option<SimDuration>,
}

/// Why a layer stopped.
enum LayerEnd {
    Served,
    /// The layer gave up with this last response; `permanent` when it was not retryable.
    Failed {
        response: Response,
        permanent: bool,
    },
    /// The whole scenario stops, whatever the layers above would do.
    Stopped(Stop),
}

enum Stop {
    Refused,
    DeadlineExceeded { would_reach: SimDuration },
}

struct Player<'a> {
    scenario: &'a Scenario,
    requests: usize,
    clock: SimDuration,
    rngs: Vec<ClientRng>,
    attempts: Vec<u32>,
}

impl Player<'_> {
    fn next_response(&mut self) -> Response {
        let script = &self.scenario.script;
        let response = script[self.requests.min(script.len() - 1)];
        self.requests += 1;
        response
    }

    /// One call into layer `depth`: its attempts, each a call into the layer below (or a
    /// request to the server), with the rules of the module documentation between them.
    fn call(&mut self, depth: usize) -> LayerEnd {
        let scenario = self.scenario;
        let layer = &scenario.layers[depth];
        let mut retries_made = 0;
        let mut previous = layer.policy.backoff.base;
        loop {
            self.attempts[depth] += 1;
            let response = if depth + 1 < scenario.layers.len() {
                match self.call(depth + 1) {
                    LayerEnd::Failed { response, .. } => response,
                    end => return end,
                }
            } else {
                let response = self.next_response();
                if response.kind == ResponseKind::Success {
                    return LayerEnd::Served;
                }
                response
            };
            if !response.kind.retryable(layer.retry_500) {
                return LayerEnd::Failed {
                    response,
                    permanent: true,
                };
            }
            let decision = layer.policy.decide(
                retries_made,
                previous,
                &response.hints,
                &mut self.rngs[depth],
            );
            let delay = match decision {
                Decision::GiveUp => {
                    return LayerEnd::Failed {
                        response,
                        permanent: false,
                    }
                }
                Decision::Retry { retry, delay } => {
                    retries_made = retry;
                    delay
                }
            };
            if !scenario.idempotent {
                return LayerEnd::Stopped(Stop::Refused);
            }
            let delay = floor_at_retry_after(delay, &response.hints);
            let reach = self.clock + delay;
            if reach > scenario.deadline {
                return LayerEnd::Stopped(Stop::DeadlineExceeded { would_reach: reach });
            }
            self.clock = reach;
            previous = delay;
        }
    }
}

/// Plays one scenario. Pure: the same scenario gives the same report.
pub fn play(scenario: &Scenario) -> ScenarioReport {
    let mut seeds = ClientSeeds::starting_at(scenario.seed, 0);
    let mut player = Player {
        scenario,
        requests: 0,
        clock: SimDuration::ZERO,
        rngs: scenario.layers.iter().map(|_| seeds.next_rng()).collect(),
        attempts: vec![0; scenario.layers.len()],
    };
    let (result, would_reach) = match player.call(0) {
        LayerEnd::Served => (Outcome::Completed, None),
        LayerEnd::Failed {
            permanent: true, ..
        } => (Outcome::FailedPermanent, None),
        LayerEnd::Failed {
            permanent: false, ..
        } => (Outcome::RetryLimitExhausted, None),
        LayerEnd::Stopped(Stop::Refused) => (Outcome::Refused, None),
        LayerEnd::Stopped(Stop::DeadlineExceeded { would_reach }) => {
            (Outcome::DeadlineExceeded, Some(would_reach))
        }
    };
    let mut worst_case = 1u64;
    let layers = scenario
        .layers
        .iter()
        .zip(&player.attempts)
        .map(|(layer, &attempts)| {
            worst_case = worst_case.saturating_mul(u64::from(layer.retry_limit));
            LayerReport {
                name: layer.name.clone(),
                retry_limit: layer.retry_limit,
                attempts,
                worst_case,
            }
        })
        .collect();
    ScenarioReport {
        id: scenario.id.clone(),
        attempts: player.requests as u32,
        delay_s: player.clock.as_secs_f64(),
        result,
        disposition: if scenario.idempotent {
            Disposition::ReplaySafe
        } else {
            Disposition::UnsafeReplay
        },
        would_reach_s: would_reach.map(SimDuration::as_secs_f64),
        seed: scenario.seed,
        layers,
        mismatches: None,
        delay: player.clock,
        would_reach,
    }
}

/// The fields of `report` that differ from `expect`; delays are compared to the nanosecond.
pub fn compare(report: &ScenarioReport, expect: &Expectation) -> Vec<Mismatch> {
    let mut mismatches = Vec::new();
    let mut differ = |field: &'static str, expected: String, actual: String| {
        mismatches.push(Mismatch {
            field,
            expected,
            actual,
        });
    };
    let secs = |d: SimDuration| format_seconds(d.as_secs_f64());
    let same_time = |expected: f64, actual: SimDuration| {
        seconds_to_duration(expected).is_some_and(|e| e == actual)
    };
    if let Some(attempts) = expect.attempts {
        if attempts != report.attempts {
            differ(
                "attempts",
                attempts.to_string(),
                report.attempts.to_string(),
            );
        }
    }
    if let Some(delay) = expect.delay_s {
        if !same_time(delay, report.delay) {
            differ("delay_s", format_seconds(delay), secs(report.delay));
        }
    }
    if let Some(result) = expect.result {
        if result != report.result {
            differ("result", result.name().into(), report.result.name().into());
        }
    }
    if let Some(disposition) = expect.disposition {
        if disposition != report.disposition {
            differ(
                "disposition",
                disposition.name().into(),
                report.disposition.name().into(),
            );
        }
    }
    if let Some(would_reach) = expect.would_reach_s {
        let matches = match (would_reach, report.would_reach) {
            (None, None) => true,
            (Some(e), Some(a)) => same_time(e, a),
            _ => false,
        };
        if !matches {
            let show = |v: Option<String>| v.unwrap_or_else(|| "null".to_string());
            differ(
                "would_reach_s",
                show(would_reach.map(format_seconds)),
                show(report.would_reach.map(secs)),
            );
        }
    }
    mismatches
}

/// Seconds as JSON would print them: `3.0`, `0.5`, `1.234567891`.
fn format_seconds(secs: f64) -> String {
    let text = secs.to_string();
    if text.contains('.') || text.contains('e') {
        text
    } else {
        format!("{text}.0")
    }
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------

/// The results of a fixture file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FixtureReport {
    /// One entry per scenario, in file order.
    pub scenarios: Vec<ScenarioReport>,
}

impl FixtureReport {
    /// Scenarios whose expectation was checked and not met.
    pub fn failures(&self) -> usize {
        self.scenarios
            .iter()
            .filter(|s| s.mismatches.as_ref().is_some_and(|m| !m.is_empty()))
            .count()
    }

    /// `{"scenarios": [...]}`, pretty-printed, ending in a newline.
    pub fn to_json(&self) -> Vec<u8> {
        // Only strings, integers, finite floats and options: serialisation cannot fail.
        let mut bytes = serde_json::to_vec_pretty(self).expect("a fixture report serialises");
        bytes.push(b'\n');
        bytes
    }

    /// An aligned table for people: one row per scenario, then an indented line per stacked
    /// layer and per mismatch, and with `--check` a closing summary.
    pub fn to_table(&self) -> String {
        let header = [
            "scenario",
            "attempts",
            "delay",
            "result",
            "disposition",
            "would reach",
            "seed",
        ];
        let rows: Vec<[String; 7]> = self
            .scenarios
            .iter()
            .map(|s| {
                [
                    s.id.clone(),
                    s.attempts.to_string(),
                    s.delay.to_string(),
                    s.result.name().to_string(),
                    s.disposition.name().to_string(),
                    s.would_reach.map_or("-".to_string(), |d| d.to_string()),
                    s.seed.to_string(),
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[&str]| {
            let mut text = String::new();
            for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
                let numeric = i == 1;
                let padded = if numeric {
                    format!("{cell:>width$}")
                } else {
                    format!("{cell:<width$}")
                };
                if i > 0 {
                    text.push_str("  ");
                }
                text.push_str(&padded);
            }
            text.trim_end().to_string() + "\n"
        };
        let mut out = line(&header);
        for (scenario, row) in self.scenarios.iter().zip(&rows) {
            out += &line(&row.each_ref().map(String::as_str));
            if scenario.layers.len() > 1 {
                let stack: Vec<String> = scenario
                    .layers
                    .iter()
                    .map(|l| {
                        format!(
                            "{} {} attempts (limit {} per call, worst case {})",
                            l.name, l.attempts, l.retry_limit, l.worst_case
                        )
                    })
                    .collect();
                out += &format!("  layers: {}\n", stack.join(" -> "));
            }
            if let Some(mismatches) = &scenario.mismatches {
                for m in mismatches {
                    out += &format!(
                        "  mismatch {}: expected {}, got {}\n",
                        m.field, m.expected, m.actual
                    );
                }
            }
        }
        if self.scenarios.iter().any(|s| s.mismatches.is_some()) {
            let met = self.scenarios.len() - self.failures();
            out += &format!(
                "check: {met} of {} scenarios met their expectations\n",
                self.scenarios.len()
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{simulate_event_queue, RunSpec};
    use crate::server::{Down, Server};

    const SECOND: u64 = NANOS_PER_SEC;

    /// Plays the one scenario whose JSON fields are `fields`, under an optional file policy.
    fn play_one(file_policy: &str, fields: &str) -> ScenarioReport {
        let policy = if file_policy.is_empty() {
            String::new()
        } else {
            format!(r#""policy": {file_policy},"#)
        };
        let text = format!(r#"{{{policy} "scenarios": [{{"id": "s", {fields}}}]}}"#);
        let fixture = Fixture::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        play(&fixture.scenarios[0])
    }

    fn error(text: &str) -> String {
        Fixture::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn the_specs_three_scenarios_give_the_specs_figures() {
        let fixture = Fixture::parse(include_str!("../configs/scenarios.json")).unwrap();
        let report = fixture.run(true);
        let by_id = |id: &str| report.scenarios.iter().find(|s| s.id == id).unwrap();
        // 429 at 0 s, wait 1 s, 429, wait 2 s, success: 3 attempts, 1 + 2 = 3 s.
        let s = by_id("throttle-then-success");
        assert_eq!(
            (s.attempts, s.delay, s.result, s.would_reach),
            (3, SimDuration(3 * SECOND), Outcome::Completed, None)
        );
        assert_eq!(s.disposition, Disposition::ReplaySafe);
        // After attempt 3 the next wait is 4 s: 3 s + 4 s = 7 s > 5 s, so nothing is committed.
        let s = by_id("throttle-past-deadline");
        assert_eq!(
            (s.attempts, s.delay, s.result, s.would_reach),
            (
                3,
                SimDuration(3 * SECOND),
                Outcome::DeadlineExceeded,
                Some(SimDuration(7 * SECOND))
            )
        );
        // Not idempotent: the first retry is refused before any wait.
        let s = by_id("unsafe-replay");
        assert_eq!(
            (s.attempts, s.delay, s.result, s.disposition),
            (
                1,
                SimDuration::ZERO,
                Outcome::Refused,
                Disposition::UnsafeReplay
            )
        );
        assert_eq!(report.failures(), 0, "{}", report.to_table());
    }

    #[test]
    fn the_sources_change_one_input_experiments() {
        let s = play_one(
            "",
            r#""responses": ["success"], "retry_limit": 4, "deadline": 30, "idempotent": true"#,
        );
        assert_eq!(
            (s.attempts, s.delay, s.result),
            (1, SimDuration::ZERO, Outcome::Completed)
        );
        // Deadline 1: the 1 s wait reaches exactly 1 s (allowed), the 2 s wait would reach 3 s.
        let s = play_one(
            "",
            r#""responses": ["429", "429", "success"], "retry_limit": 4, "deadline": 1, "idempotent": true"#,
        );
        assert_eq!(
            (s.attempts, s.delay, s.result, s.would_reach),
            (
                2,
                SimDuration(SECOND),
                Outcome::DeadlineExceeded,
                Some(SimDuration(3 * SECOND))
            )
        );
        // Idempotent: 429 (wait 1 s), 429 (wait 2 s), 429 repeated, limit reached; the 4 s wait
        // after the final attempt is never committed, so 3 s and not 7 s.
        let s = play_one(
            "",
            r#""responses": ["429", "429"], "retry_limit": 3, "deadline": 30, "idempotent": true"#,
        );
        assert_eq!(
            (s.attempts, s.delay, s.result, s.would_reach),
            (
                3,
                SimDuration(3 * SECOND),
                Outcome::RetryLimitExhausted,
                None
            )
        );
    }

    #[test]
    fn the_retryable_table_is_applied() {
        let run = |policy: &str, first: &str| {
            play_one(
                policy,
                &format!(
                    r#""responses": ["{first}", "success"], "retry_limit": 5, "deadline": 30, "idempotent": true"#
                ),
            )
        };
        let s = run("", "400");
        assert_eq!(
            (s.attempts, s.delay, s.result),
            (1, SimDuration::ZERO, Outcome::FailedPermanent)
        );
        let s = run(r#"{"retry_500": true}"#, "400");
        assert_eq!(s.result, Outcome::FailedPermanent, "400 is never retried");
        let s = run("", "500");
        assert_eq!((s.attempts, s.result), (1, Outcome::FailedPermanent));
        for (policy, first) in [
            (r#"{"retry_500": true}"#, "500"),
            ("", "429"),
            ("", "503"),
            ("", "timeout"),
        ] {
            let s = run(policy, first);
            assert_eq!(
                (s.attempts, s.delay, s.result),
                (2, SimDuration(SECOND), Outcome::Completed),
                "{first}"
            );
        }
    }

    #[test]
    fn retry_after_is_a_floor_under_the_policys_delay() {
        // Exponential would wait 1 s; the server asks for 5 s.
        let s = play_one(
            "",
            r#""responses": ["429 retry-after=5", "success"], "retry_limit": 3, "deadline": 30, "idempotent": true"#,
        );
        assert_eq!(
            (s.delay, s.result),
            (SimDuration(5 * SECOND), Outcome::Completed)
        );
        // A floor below the policy's own 2 s changes nothing: 1 s + 2 s.
        let s = play_one(
            "",
            r#""responses": ["503", "503 retry-after=500ms", "success"], "retry_limit": 3, "deadline": 30, "idempotent": true"#,
        );
        assert_eq!(s.delay, SimDuration(3 * SECOND));
        // Honouring it can cost the deadline: 0 s + 5 s > 4 s.
        let s = play_one(
            "",
            r#""responses": ["429 retry-after=5"], "retry_limit": 3, "deadline": 4, "idempotent": true"#,
        );
        assert_eq!(
            (s.attempts, s.result, s.would_reach),
            (1, Outcome::DeadlineExceeded, Some(SimDuration(5 * SECOND)))
        );
        let hints = Hints {
            retry_after: Some(SimDuration(7)),
            reset_in: None,
        };
        assert_eq!(floor_at_retry_after(SimDuration(3), &hints), SimDuration(7));
        assert_eq!(floor_at_retry_after(SimDuration(9), &hints), SimDuration(9));
        assert_eq!(
            floor_at_retry_after(SimDuration(3), &Hints::default()),
            SimDuration(3)
        );
    }

    #[test]
    fn seeded_jitter_repeats_and_differs_between_seeds() {
        let fields =
            r#""responses": ["503"], "retry_limit": 6, "deadline": 1000, "idempotent": true"#;
        let with_seed = |seed: u64| {
            play_one(
                &format!(r#"{{"strategy": "full-jitter", "cap": "30s", "seed": {seed}}}"#),
                fields,
            )
        };
        let a = with_seed(7);
        assert_eq!(a, with_seed(7));
        assert_eq!(a.seed, 7);
        assert_ne!(a.delay, with_seed(8).delay);
        // Five full-jitter waits, each below e_k: under 1 + 2 + 4 + 8 + 16 = 31 s in total.
        assert_eq!(a.result, Outcome::RetryLimitExhausted);
        assert!(a.delay < SimDuration(31 * SECOND), "{}", a.delay);
        let seeds: std::collections::HashSet<u64> = (0..20)
            .map(|seed| with_seed(seed).delay.as_nanos())
            .collect();
        assert_eq!(seeds.len(), 20, "twenty seeds, twenty different totals");
    }

    #[test]
    fn a_scenario_draws_as_client_zero_of_a_simulator_run_with_its_seed() {
        // The documented seed rule, checked against the engine itself: one client, a server that
        // stays down, the same policy and seed. Its last retry lands at the sum of its waits.
        for strategy in [
            Strategy::FullJitter,
            Strategy::EqualJitter,
            Strategy::DecorrelatedJitter,
        ] {
            let s = play_one(
                &format!(r#"{{"strategy": "{strategy}", "cap": "30s", "seed": 99}}"#),
                r#""responses": ["503"], "retry_limit": 5, "deadline": 1000, "idempotent": true"#,
            );
            let tally = simulate_event_queue(&RunSpec {
                clients: 1,
                policy: Policy {
                    strategy,
                    backoff: Backoff {
                        base: SimDuration(SECOND),
                        cap: SimDuration(30 * SECOND),
                        multiplier: 2.0,
                    },
                    max_retries: 4,
                },
                server: Server::Down(Down { recover_at: None }),
                bin: SimDuration::from_millis(100),
                seed: 99,
                work: crate::engine::Work::default(),
                latency: crate::engine::Latency::default(),
                network: crate::engine::STUDY_NETWORK,
                overload: crate::engine::Overload::default(),
                controls: crate::policy::control::Controls::default(),
                browser: crate::engine::Browser::default(),
            });
            let last = tally.last_retry.unwrap();
            assert_eq!(s.delay.as_nanos(), last.as_nanos(), "{strategy}");
        }
    }

    #[test]
    fn stacked_layers_multiply_the_attempts() {
        // Each application attempt is one SDK call of up to 3 attempts with waits 1 s + 2 s; the
        // application waits 1 s and 2 s between its 3 calls: 9 requests, 3·3 + 1 + 2 = 12 s.
        let s = play_one(
            "",
            r#""responses": ["503"], "retry_limit": 3, "deadline": 100, "idempotent": true,
               "layers": [{"name": "sdk", "retry_limit": 3}]"#,
        );
        assert_eq!(
            (s.attempts, s.delay, s.result),
            (9, SimDuration(12 * SECOND), Outcome::RetryLimitExhausted)
        );
        let counts: Vec<(&str, u32, u64)> = s
            .layers
            .iter()
            .map(|l| (l.name.as_str(), l.attempts, l.worst_case))
            .collect();
        assert_eq!(counts, [("application", 3, 3), ("sdk", 9, 9)]);
        // The SDK retries 500s, the application does not: the SDK's three tries, then stop.
        let s = play_one(
            "",
            r#""responses": ["500"], "retry_limit": 3, "deadline": 100, "idempotent": true,
               "layers": [{"retry_limit": 3, "policy": {"retry_500": true}}]"#,
        );
        assert_eq!((s.attempts, s.result), (3, Outcome::FailedPermanent));
        assert_eq!(s.layers[1].name, "layer-1");
        // Success on the 5th request: the second SDK call succeeds on its second try.
        let s = play_one(
            "",
            r#""responses": ["503", "503", "503", "503", "success"], "retry_limit": 3, "deadline": 100,
               "idempotent": true, "layers": [{"retry_limit": 3}]"#,
        );
        // Waits: SDK 1 + 2, application 1, SDK 1: 5 s.
        assert_eq!(
            (s.attempts, s.delay, s.result),
            (5, SimDuration(5 * SECOND), Outcome::Completed)
        );
    }

    #[test]
    fn expectations_are_compared_field_by_field() {
        let text = r#"{"scenarios": [{"id": "s", "responses": ["429"], "retry_limit": 2,
            "deadline": 30, "idempotent": true,
            "expect": {"attempts": 3, "delay_s": 1.0, "result": "completed", "would_reach_s": 4}}]}"#;
        let report = Fixture::parse(text).unwrap().run(true);
        let mismatches = report.scenarios[0].mismatches.clone().unwrap();
        let fields: Vec<(&str, &str, &str)> = mismatches
            .iter()
            .map(|m| (m.field, m.expected.as_str(), m.actual.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                ("attempts", "3", "2"),
                ("result", "completed", "retry-limit-exhausted"),
                ("would_reach_s", "4.0", "null"),
            ]
        );
        assert_eq!(report.failures(), 1);
        let table = report.to_table();
        assert!(
            table.contains("mismatch attempts: expected 3, got 2"),
            "{table}"
        );
        assert!(table.contains("check: 0 of 1 scenarios met"), "{table}");
        let unchecked = Fixture::parse(text).unwrap().run(false);
        assert_eq!(unchecked.failures(), 0);
        assert!(!String::from_utf8(unchecked.to_json())
            .unwrap()
            .contains("mismatches"));
    }

    #[test]
    fn bad_input_gets_one_clear_error_each() {
        let scenario = |extra: &str| {
            format!(
                r#"{{"scenarios": [{{"id": "a", "responses": ["429"], "retry_limit": 3, "deadline": 1, "idempotent": true{extra}}}]}}"#
            )
        };
        let e = error("{\"scenarios\": [\n  {\"id\": \"a\",,}]}");
        assert!(e.contains("line 2 column"), "{e}");
        let e = error(
            r#"{"scenarios": [{"id": "a", "responses": ["429"], "retry_limit": 3, "idempotent": true}]}"#,
        );
        assert!(e.contains("missing field `deadline`"), "{e}");
        let e = error(&scenario(r#", "retries": 2"#));
        assert!(e.contains("unknown field `retries`"), "{e}");
        let e = error(&scenario("").replace("\"429\"", "\"404\""));
        assert!(
            e.contains("unknown response `404`") && e.contains("timeout"),
            "{e}"
        );
        let e = error(&scenario("").replace("\"retry_limit\": 3", "\"retry_limit\": 0"));
        assert!(e.contains("scenario `a`: invalid retry_limit: 0"), "{e}");
        let e = error(&scenario("").replace("\"deadline\": 1", "\"deadline\": -1"));
        assert!(e.contains("invalid deadline: -1"), "{e}");
        let twice = scenario("").replace("}]}", r#"}, {"id": "a", "responses": ["success"], "retry_limit": 1, "deadline": 0, "idempotent": false}]}"#);
        let e = error(&twice);
        assert!(
            e.contains("duplicate scenario id `a` (scenarios 1 and 2)"),
            "{e}"
        );
        let e = error(&scenario("").replace("\"429\"", "\"400 retry-after=3\""));
        assert!(e.contains("cannot carry hints"), "{e}");
        let e = error(&scenario(r#", "policy": {"base": "2s", "cap": "1s"}"#));
        assert!(e.contains("policy.cap") && e.contains("2s"), "{e}");
        let e = error(&scenario(
            r#", "layers": [{"retry_limit": 2, "policy": {"seed": 3}}]"#,
        ));
        assert!(
            e.contains("layer `layer-1`") && e.contains("policy.seed"),
            "{e}"
        );
        let e = error(&scenario(r#", "expect": {}"#));
        assert!(e.contains("invalid expect"), "{e}");
        let e = error(r#"{"scenarios": []}"#);
        assert!(e.contains("scenarios"), "{e}");
        // A run's TOML scenario given to `fixture` (issue 14): named, with where it belongs.
        let e = error(include_str!("../configs/herd-down.toml"));
        assert!(
            e.contains("this is a TOML file") && e.contains("--config") && e.contains("JSON"),
            "{e}"
        );
        let fixture = Fixture::parse(&scenario("")).unwrap();
        assert_eq!(
            fixture.require_expectations(),
            Err(FixtureError::MissingExpectation("a".into()))
        );
    }

    #[test]
    fn responses_parse_and_print_with_their_hints() {
        let r: Response = "429 retry-after=5 reset-in=1.5s".parse().unwrap();
        assert_eq!(r.kind, ResponseKind::TooManyRequests);
        assert_eq!(r.hints.retry_after, Some(SimDuration(5 * SECOND)));
        assert_eq!(r.hints.reset_in, Some(SimDuration(1_500_000_000)));
        assert_eq!(r.to_string(), "429 retry-after=5s reset-in=1.5s");
        assert!("429 retry-after=1 retry-after=2"
            .parse::<Response>()
            .is_err());
        assert!("429 wait=1".parse::<Response>().is_err());
        assert!("".parse::<Response>().is_err());
    }
}
