//! `herd-sim lint`: the known footguns of a retry policy, each found by a small run that shows
//! it ([`super::probe::Probe`]) and reported with the figure measured and the command that
//! replays it. The checks, their probes and thresholds (docs/advice.md repeats them):
//!
//! - [`Check::JitterAtCap`]: of the retries made once the curve reaches the cap, the fraction
//!   whose wait lands in the window just below the cap (`[cap − bin, cap]`): the fleet waits the
//!   cap itself, in lockstep. After the cap, full jitter puts `bin / cap` there (0.33 % for
//!   100 ms of 30 s); before the cap most draws are clamped onto it.
//! - [`Check::RetryEnvelope`]: the share of calls still retrying when a server that refuses
//!   everything comes back after 10 s, 60 s and 5 min (a herd whose server recovers then).
//! - [`Check::WindowLimiter`]: retries spent while refused until a 60 s window resets.
//! - [`Check::RetryAfterLockstep`]: header-reading strategies without jitter against a shared
//!   limiter: the share of retries landing in one window.
//! - [`Check::UnboundedAmplification`]: attempts per call against a server that fails every
//!   attempt, without a budget, breaker or throttle, beside the same policy under each budget.
//! - [`Check::QuotaDisablesBackoff`]: a budget exhausted first ends calls at once, with no
//!   backoff (aws-sdk-go-v2#3413).
//!
//! Library only: the binary formats nothing but what [`Report`] serialises. No I/O.

use std::fmt;

use serde::Serialize;

use super::probe::{herd_waits, Measured, PolicyFlags, Probe};
use crate::config::Scenario;
use crate::policy::{JitterOrder, Strategy};
use crate::sweep::SweepError;
use crate::time::SimDuration;

/// How bad a finding is; `--deny LEVEL` fails on any finding at or above `LEVEL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Likely to hurt in an incident.
    Warning,
    /// Hurts whenever the situation arises.
    Error,
}

impl Severity {
    /// Every level, lowest first.
    pub const ALL: [Severity; 3] = [Severity::Info, Severity::Warning, Severity::Error];

    /// The name `--deny` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The checks, by the names CI configurations use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Check {
    /// Delays that reach the cap in lockstep.
    #[serde(rename = "jitter-at-cap")]
    JitterAtCap,
    /// The longest outage a call rides through.
    #[serde(rename = "retry-envelope")]
    RetryEnvelope,
    /// Retries spent before a 60 s window resets.
    #[serde(rename = "window-limiter")]
    WindowLimiter,
    /// Retry-After read without jitter.
    #[serde(rename = "retry-after-lockstep")]
    RetryAfterLockstep,
    /// Retries without a budget, breaker or throttle.
    #[serde(rename = "unbounded-amplification")]
    UnboundedAmplification,
    /// A quota exhausted first switches backoff off.
    #[serde(rename = "quota-disables-backoff")]
    QuotaDisablesBackoff,
}

impl Check {
    /// Every check, in the order they run and print.
    pub const ALL: [Check; 6] = [
        Check::JitterAtCap,
        Check::RetryEnvelope,
        Check::WindowLimiter,
        Check::RetryAfterLockstep,
        Check::UnboundedAmplification,
        Check::QuotaDisablesBackoff,
    ];

    /// The check's name.
    pub const fn name(self) -> &'static str {
        match self {
            Check::JitterAtCap => "jitter-at-cap",
            Check::RetryEnvelope => "retry-envelope",
            Check::WindowLimiter => "window-limiter",
            Check::RetryAfterLockstep => "retry-after-lockstep",
            Check::UnboundedAmplification => "unbounded-amplification",
            Check::QuotaDisablesBackoff => "quota-disables-backoff",
        }
    }
}

/// One finding: what is wrong, the figure measured and the run that shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The check.
    pub check: Check,
    /// How bad.
    pub severity: Severity,
    /// What is wrong, in words, with the figure and its unit.
    pub message: String,
    /// The figure measured, as a number (the message says its unit).
    pub figure: f64,
    /// The herd-sim command of the run that shows it.
    pub command: String,
}

/// Every finding of a policy, in check order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    /// The findings.
    pub findings: Vec<Finding>,
}

impl Report {
    /// One line a finding: severity, check, message, then the command that replays it;
    /// a last line counts them.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for f in &self.findings {
            text.push_str(&format!(
                "{} {}: {}; replay: {}\n",
                f.severity,
                f.check.name(),
                f.message,
                f.command
            ));
        }
        let count = |s: Severity| self.findings.iter().filter(|f| f.severity == s).count();
        text.push_str(&format!(
            "{} findings ({} error, {} warning, {} info) from {} checks\n",
            self.findings.len(),
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
            Check::ALL.len()
        ));
        text
    }

    /// `{"findings": [{"check", "severity", "message", "figure", "command"}]}`, pretty-printed.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// The findings at or above `level`.
    pub fn at_or_above(&self, level: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity >= level).count()
    }
}

/// Clients of the herd probes: enough that a share is read to a tenth of a percent.
pub const HERD_CLIENTS: u32 = 1000;

/// The outage lengths of the retry envelope's table.
pub const OUTAGES: [SimDuration; 3] = [
    SimDuration::from_secs(10),
    SimDuration::from_secs(60),
    SimDuration::from_secs(300),
];

/// The share of capped retries in the window below the cap from which a policy is in
/// lockstep: a warning at 10 %, an error at 50 %.
pub const LOCKSTEP_WARNING: f64 = 0.10;

/// See [`LOCKSTEP_WARNING`].
pub const LOCKSTEP_ERROR: f64 = 0.50;

/// One check: a finding, or none, for one strategy's policy.
type CheckFn = fn(&PolicyFlags, &Scenario, Option<usize>) -> Result<Option<Finding>, SweepError>;

/// Lints every strategy of `scenario` (its policy: strategy, retries, curve, controls).
pub fn lint(scenario: &Scenario, threads: Option<usize>) -> Result<Report, SweepError> {
    let mut findings = Vec::new();
    for &strategy in &scenario.strategies {
        let policy = PolicyFlags::of(scenario, strategy);
        let checks: [CheckFn; 6] = [
            jitter_at_cap,
            retry_envelope,
            window_limiter,
            retry_after_lockstep,
            unbounded_amplification,
            quota_disables_backoff,
        ];
        for check in checks {
            if let Some(finding) = check(&policy, scenario, threads)? {
                findings.push(finding);
            }
        }
    }
    Ok(Report { findings })
}

fn percent(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// The herd probe of a policy's schedule: 1000 clients, the policy's strategy and curve (no
/// controls: the schedule is what is checked), the scenario's seed.
fn herd(policy: &PolicyFlags, scenario: &Scenario) -> Probe {
    Probe::new()
        .with("clients", HERD_CLIENTS)
        .with_policy(policy)
        .with("seed", scenario.seed)
}

/// The lockstep figure of a herd: over the retries made once the curve reaches the cap, the
/// share whose wait lies in `[cap − bin, cap]`; `None` when no retry reaches the cap.
pub fn capped_lockstep(
    policy: &crate::policy::Policy,
    waits: &[Vec<SimDuration>],
    bin: SimDuration,
) -> Option<f64> {
    let b = policy.backoff;
    let cap = b.cap.as_nanos();
    let floor = cap.saturating_sub(bin.as_nanos());
    let (mut capped, mut at_cap) = (0u64, 0u64);
    for client in waits {
        let mut previous = b.base;
        for (k, wait) in client.iter().enumerate() {
            let retry = k as u32 + 1;
            // The curve has reached the cap when its top (uncapped before the cap) is there;
            // decorrelated jitter's top is three times the previous wait.
            let reached = match policy.strategy {
                Strategy::Naive | Strategy::Fixed => false,
                Strategy::DecorrelatedJitter => previous.as_nanos().saturating_mul(3) >= cap,
                _ => {
                    crate::policy::Backoff {
                        jitter_order: JitterOrder::BeforeCap,
                        ..b
                    }
                    .jitter_ceiling(retry)
                    .as_nanos()
                        >= cap
                }
            };
            if reached {
                capped += 1;
                at_cap += u64::from(wait.as_nanos() >= floor);
            }
            previous = *wait;
        }
    }
    (capped > 0).then(|| at_cap as f64 / capped as f64)
}

fn jitter_at_cap(
    policy: &PolicyFlags,
    scenario: &Scenario,
    threads: Option<usize>,
) -> Result<Option<Finding>, SweepError> {
    if matches!(policy.strategy, Strategy::Naive | Strategy::Fixed) {
        return Ok(None);
    }
    let run = herd(policy, scenario).measure(threads)?;
    let waits = herd_waits(&policy.policy, HERD_CLIENTS, run.seed);
    let Some(share) = capped_lockstep(&policy.policy, &waits, scenario.bin) else {
        return Ok(None);
    };
    let severity = match share {
        s if s >= LOCKSTEP_ERROR => Severity::Error,
        s if s >= LOCKSTEP_WARNING => Severity::Warning,
        _ => return Ok(None),
    };
    let b = policy.policy.backoff;
    let cause = match (policy.strategy, b.jitter_order) {
        (Strategy::Exponential | Strategy::RetryAfter | Strategy::ResetAware, _) => {
            "no jitter: every capped wait is the cap itself"
        }
        (Strategy::DecorrelatedJitter, _) => {
            "decorrelated jitter clamps U(base, 3 × previous) at the cap"
        }
        (_, JitterOrder::BeforeCap) => {
            "jitter is drawn before the cap (--jitter-order before-cap) and clamped onto it"
        }
        (_, JitterOrder::AfterCap) => "the jitter left below the cap is narrow",
    };
    Ok(Some(Finding {
        check: Check::JitterAtCap,
        severity,
        message: format!(
            "{}: {} of the retries made once the curve reaches the cap ({}) wait within one {} \
             window of it ({cause}); jitter drawn below a capped curve puts {} there",
            policy.strategy,
            percent(share),
            b.cap,
            scenario.bin,
            percent(scenario.bin.as_secs_f64() / b.cap.as_secs_f64()),
        ),
        figure: share,
        command: run.command(),
    }))
}

/// The herd of [`herd`] against a server down until `outage`, then serving everything.
fn outage_probe(policy: &PolicyFlags, scenario: &Scenario, outage: SimDuration) -> Probe {
    herd(policy, scenario)
        .with("server", "down")
        .with("recover-at", outage)
}

/// The share of calls of a down-until-`outage` run that were still retrying when it came
/// back (every one that succeeded).
fn ride_through(run: &Measured) -> f64 {
    run.number("succeeded").unwrap_or(0.0) / f64::from(HERD_CLIENTS)
}

fn retry_envelope(
    policy: &PolicyFlags,
    scenario: &Scenario,
    threads: Option<usize>,
) -> Result<Option<Finding>, SweepError> {
    let runs = OUTAGES
        .iter()
        .map(|&o| outage_probe(policy, scenario, o).measure(threads))
        .collect::<Result<Vec<_>, _>>()?;
    let shares: Vec<f64> = runs.iter().map(ride_through).collect();
    // The shortest outage most calls do not ride through decides the severity.
    let Some(first_lost) = shares.iter().position(|&s| s < 0.5) else {
        return Ok(None);
    };
    let severity = [Severity::Error, Severity::Warning, Severity::Info][first_lost];
    let waits = herd_waits(&policy.policy, HERD_CLIENTS, runs[0].seed);
    let mut envelopes: Vec<u64> = waits
        .iter()
        .map(|w| w.iter().map(|d| d.as_nanos()).sum())
        .collect();
    envelopes.sort_unstable();
    let median = SimDuration(envelopes[envelopes.len() / 2]);
    let table = OUTAGES
        .iter()
        .zip(&shares)
        .map(|(o, s)| format!("{o} {}", percent(*s)))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Some(Finding {
        check: Check::RetryEnvelope,
        severity,
        message: format!(
            "{}: a call retries for {:.1} s (median) and then gives up; calls still retrying \
             when the server returns after an outage of {table}; {} outages are lost",
            policy.strategy,
            median.as_secs_f64(),
            OUTAGES[first_lost],
        ),
        figure: shares[first_lost],
        command: runs[first_lost].command(),
    }))
}

/// The window a refused client waits for in [`Check::WindowLimiter`].
pub const LIMITER_WINDOW: SimDuration = SimDuration::from_secs(60);

fn window_limiter(
    policy: &PolicyFlags,
    scenario: &Scenario,
    threads: Option<usize>,
) -> Result<Option<Finding>, SweepError> {
    let retries = policy.policy.max_retries;
    if retries == 0 {
        return Ok(None);
    }
    // Refused until the window resets, then served: a server down until 60 s.
    let run = outage_probe(policy, scenario, LIMITER_WINDOW).measure(threads)?;
    let clients = f64::from(HERD_CLIENTS);
    let spent = (run.number("refused").unwrap_or(0.0) - clients) / clients;
    let share = spent / f64::from(retries);
    let gave_up = run.number("gave_up").unwrap_or(0.0) / clients;
    if share < 0.5 {
        return Ok(None);
    }
    let severity = match gave_up >= 0.5 {
        true => Severity::Warning,
        false => Severity::Info,
    };
    let near_zero = match policy.strategy {
        Strategy::Naive => "retries at once",
        Strategy::FullJitter | Strategy::RetryAfterJitter => "full jitter draws from 0",
        _ => "the waits are short",
    };
    Ok(Some(Finding {
        check: Check::WindowLimiter,
        severity,
        message: format!(
            "{}: refused as a {LIMITER_WINDOW} rate-limit window fills, a call spends {spent:.2} \
             of its {retries} retries ({}) before the window resets ({near_zero}); {} of calls \
             give up before it does",
            policy.strategy,
            percent(share),
            percent(gave_up),
        ),
        figure: spent,
        command: run.command(),
    }))
}

/// The shared limiter of [`retry_after_lockstep`]: 1000 clients behind one address, 100 per
/// 10 s admitted, expired keys dropped at once (`--store precise`); one retry each.
fn limiter_probe(policy: &PolicyFlags, scenario: &Scenario) -> Probe {
    herd(policy, scenario)
        .with("retries", 1)
        .with("server", "fixed-window")
        .with("limit", 100)
        .with("window", "10s")
        .with("store", "precise")
        .with("clients-per-address", HERD_CLIENTS)
}

fn retry_after_lockstep(
    policy: &PolicyFlags,
    scenario: &Scenario,
    threads: Option<usize>,
) -> Result<Option<Finding>, SweepError> {
    if !matches!(policy.strategy, Strategy::RetryAfter | Strategy::ResetAware) {
        return Ok(None);
    }
    let run = limiter_probe(policy, scenario).measure(threads)?;
    let total = run.number("total").unwrap_or(0.0);
    if total == 0.0 {
        return Ok(None);
    }
    let share = run.number("peak").unwrap_or(0.0) / total;
    if share < LOCKSTEP_WARNING {
        return Ok(None);
    }
    let severity = match share >= LOCKSTEP_ERROR {
        true => Severity::Error,
        false => Severity::Warning,
    };
    let header = match policy.strategy {
        Strategy::ResetAware => "X-RateLimit-Reset",
        _ => "Retry-After",
    };
    Ok(Some(Finding {
        check: Check::RetryAfterLockstep,
        severity,
        message: format!(
            "{}: reads {header} without jitter, so a fleet refused together wakes together: {} \
             of its retries land in one {} window at {}s (retry-after-jitter keeps the header \
             as a floor and spreads them)",
            policy.strategy,
            percent(share),
            scenario.bin,
            run.metrics.get("peak_window_s").map_or("?", String::as_str),
        ),
        figure: share,
        command: run.command(),
    }))
}

/// The share of calls ended by the budget's refusal from which [`Check::QuotaDisablesBackoff`]
/// is reported.
pub const QUOTA_WARNING: f64 = 0.10;

/// Budgets the unbounded policy is compared with, each at its defaults.
pub const BUDGETS: [&str; 4] = ["grpc", "envoy", "finagle", "aws-standard"];

/// Every attempt fails: 10 client processes, 100 calls/s for 10 s, the policy's schedule and
/// controls.
fn failing_probe(policy: &PolicyFlags, scenario: &Scenario) -> Probe {
    Probe::new()
        .with("clients", 10)
        .with("arrivals", "poisson")
        .with("rate", "100/s")
        .with("duration", "10s")
        .with("server", "flaky")
        .with("failure-rate", 1)
        .with_policy(&policy.with_controls())
        .with("seed", scenario.seed)
}

fn unbounded_amplification(
    policy: &PolicyFlags,
    scenario: &Scenario,
    threads: Option<usize>,
) -> Result<Option<Finding>, SweepError> {
    if policy.is_controlled() || policy.policy.max_retries == 0 {
        return Ok(None);
    }
    let run = failing_probe(policy, scenario).measure(threads)?;
    let amplification = run.number("amplification").unwrap_or(0.0);
    let mut budgeted = Vec::new();
    for budget in BUDGETS {
        let with = failing_probe(policy, scenario)
            .with("budget", budget)
            .measure(threads)?;
        budgeted.push(format!(
            "--budget {budget} {:.2}",
            with.number("amplification").unwrap_or(0.0)
        ));
    }
    Ok(Some(Finding {
        check: Check::UnboundedAmplification,
        severity: Severity::Warning,
        message: format!(
            "{}: no budget, breaker or throttle bounds the retries: {amplification:.2} attempts \
             per call when every attempt fails ({} retries a call at most), so an outage multiplies the load \
             by that; the same policy under a budget: {}",
            policy.strategy,
            policy.policy.max_retries,
            budgeted.join(", "),
        ),
        figure: amplification,
        command: run.command(),
    }))
}

fn quota_disables_backoff(
    policy: &PolicyFlags,
    scenario: &Scenario,
    threads: Option<usize>,
) -> Result<Option<Finding>, SweepError> {
    let has_budget = policy.controls.iter().any(|(flag, _)| *flag == "budget");
    if !has_budget || policy.policy.max_retries == 0 || policy.strategy == Strategy::Naive {
        return Ok(None);
    }
    let run = failing_probe(policy, scenario).measure(threads)?;
    let calls = run.number("calls").unwrap_or(0.0);
    if calls == 0.0 {
        return Ok(None);
    }
    let denied = run.number("retries_denied").unwrap_or(0.0) / calls;
    if denied < QUOTA_WARNING {
        return Ok(None);
    }
    let budget = policy
        .controls
        .iter()
        .find(|(flag, _)| *flag == "budget")
        .map_or("", |(_, v)| v.as_str());
    Ok(Some(Finding {
        check: Check::QuotaDisablesBackoff,
        severity: Severity::Warning,
        message: format!(
            "{}: the shared budget {budget} runs out first when every attempt fails: {} of \
             calls then end on its refusal at once, with no backoff wait (a caller that retries \
             on its own retries at once; aws-sdk-go-v2#3413)",
            policy.strategy,
            percent(denied),
        ),
        figure: denied,
        command: run.command(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScenarioFile;

    fn scenario(toml: &str) -> Scenario {
        ScenarioFile::parse(toml, Some("toml"))
            .unwrap()
            .validate()
            .unwrap()
    }

    fn finding(toml: &str, check: Check) -> Option<Finding> {
        lint(&scenario(toml), Some(1))
            .unwrap()
            .findings
            .into_iter()
            .find(|f| f.check == check)
    }

    #[test]
    fn jitter_before_the_cap_is_lockstep_and_after_it_is_not() {
        // Base 1 s doubling, cap 30 s, 8 retries: the curve reaches the cap at retries 6, 7, 8
        // (32, 64, 128 s uncapped). Before the cap the wait is min(30 s, U(0, E)), in the last
        // 100 ms below the cap with probability 1 - 29.9/E: the mean over the three retries is
        // (2.1/32 + 34.1/64 + 98.1/128) / 3 = 0.45495 (sd about 0.009 over 3000 retries).
        let before = "strategy = \"full-jitter\"\nretries = 8\njitter_order = \"before-cap\"\n";
        let f = finding(before, Check::JitterAtCap).unwrap();
        assert!((f.figure - 0.45495).abs() < 0.03, "{f:?}");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.command.contains("--jitter-order before-cap"), "{f:?}");
        // After the cap: U(0, 30 s) puts 0.1/30 = 0.33 % in that window; no finding.
        let after = scenario("strategy = \"full-jitter\"\nretries = 8\n");
        let policy = PolicyFlags::of(&after, Strategy::FullJitter);
        let share = capped_lockstep(
            &policy.policy,
            &herd_waits(&policy.policy, HERD_CLIENTS, 1),
            after.bin,
        )
        .unwrap();
        assert!((share - 0.1 / 30.0).abs() < 0.004, "{share}");
        assert!(finding(
            "strategy = \"full-jitter\"\nretries = 8\n",
            Check::JitterAtCap
        )
        .is_none());
        // No jitter at all: every capped wait is the cap.
        let f = finding(
            "strategy = \"exponential\"\nretries = 8\n",
            Check::JitterAtCap,
        )
        .unwrap();
        assert_eq!((f.figure, f.severity), (1.0, Severity::Error));
        // A curve that never reaches the cap has nothing to report.
        assert!(finding(
            "strategy = \"exponential\"\nretries = 4\n",
            Check::JitterAtCap
        )
        .is_none());
    }

    #[test]
    fn the_waits_drawn_are_the_runs_own() {
        // The retry times the probe's waits give bin into exactly the run's peak and windows.
        for toml in [
            "strategy = \"full-jitter\"\nretries = 8\njitter_order = \"before-cap\"\n",
            "strategy = \"decorrelated-jitter\"\nretries = 6\n",
        ] {
            let s = scenario(toml);
            let policy = PolicyFlags::of(&s, s.strategies[0]);
            let run = herd(&policy, &s).measure(Some(1)).unwrap();
            let waits = herd_waits(&policy.policy, HERD_CLIENTS, run.seed);
            let mut windows = std::collections::BTreeMap::<u64, u64>::new();
            for client in &waits {
                let mut t = 0u64;
                for w in client {
                    t += w.as_nanos();
                    *windows.entry(t / s.bin.as_nanos()).or_default() += 1;
                }
            }
            let peak = windows.values().copied().max().unwrap() as f64;
            assert_eq!(run.number("peak"), Some(peak), "{toml}");
            assert_eq!(run.number("windows"), Some(windows.len() as f64), "{toml}");
        }
    }

    #[test]
    fn the_retry_envelope_is_the_sum_of_the_waits() {
        // Exponential 1, 2, 4, 8 s: the last retry at 15 s. A 10 s outage is ridden through by
        // every call, a 60 s one by none: a warning whose figure is 0.
        let f = finding(
            "strategy = \"exponential\"\nretries = 4\n",
            Check::RetryEnvelope,
        )
        .unwrap();
        assert_eq!((f.severity, f.figure), (Severity::Warning, 0.0));
        assert!(
            f.message.contains("15.0 s (median)") && f.message.contains("10s 100.0 %"),
            "{f:?}"
        );
        // Ten retries capped at 60 s: 1+2+4+8+16+32+60+60+60+60 = 303 s, past 5 minutes.
        let long = "strategy = \"exponential\"\nretries = 10\ncap = \"60s\"\n";
        assert!(finding(long, Check::RetryEnvelope).is_none());
    }

    #[test]
    fn short_waits_spend_the_retries_before_a_window_resets() {
        // Retries at 1, 3, 7 and 15 s, all before 60 s: 4 spent, every call gives up.
        let f = finding(
            "strategy = \"exponential\"\nretries = 4\n",
            Check::WindowLimiter,
        )
        .unwrap();
        assert_eq!((f.severity, f.figure), (Severity::Warning, 4.0));
        // A first wait of 60 s lands on the reset and is served: none spent.
        let slow = "strategy = \"exponential\"\nretries = 2\nbase = \"60s\"\ncap = \"120s\"\n";
        assert!(finding(slow, Check::WindowLimiter).is_none());
    }

    #[test]
    fn retry_after_without_jitter_wakes_the_fleet_at_once() {
        // 1000 clients, 100 admitted at t = 0, 900 told Retry-After 10 s: all 900 retries land
        // in the window at 10 s.
        let f = finding("strategy = \"retry-after\"\n", Check::RetryAfterLockstep).unwrap();
        assert_eq!((f.severity, f.figure), (Severity::Error, 1.0));
        // With jitter on top of the floor the check does not apply, and the same run spreads
        // the 900 over the ten windows of U(0, 1 s): about 90 in each, the fullest under 15 %.
        assert!(finding(
            "strategy = \"retry-after-jitter\"\n",
            Check::RetryAfterLockstep
        )
        .is_none());
        let s = scenario("strategy = \"retry-after-jitter\"\n");
        let run = limiter_probe(&PolicyFlags::of(&s, s.strategies[0]), &s)
            .measure(Some(1))
            .unwrap();
        assert_eq!(run.number("total"), Some(900.0));
        assert!(run.number("peak").unwrap() / 900.0 < 0.15, "{run:?}");
    }

    #[test]
    fn retries_without_a_budget_multiply_a_failing_load_by_one_plus_retries() {
        let f = finding(
            "strategy = \"naive\"\nretries = 3\n",
            Check::UnboundedAmplification,
        )
        .unwrap();
        assert_eq!((f.severity, f.figure), (Severity::Warning, 4.0));
        // gRPC throttling at its defaults (10 tokens, each failure takes 1, a retry only while
        // more than 5 are left): a process's first call fails (9 left), retries three times
        // (8, 7, 6 left) and gives up; every later call's failure leaves 5 and is refused. 3
        // retries a process, 30 for the 10 processes.
        assert!(f.message.contains("--budget grpc"), "{f:?}");
        let budgeted = "strategy = \"naive\"\nretries = 3\nbudget = \"grpc\"\n";
        assert!(finding(budgeted, Check::UnboundedAmplification).is_none());
        let s = scenario(budgeted);
        let run = failing_probe(&PolicyFlags::of(&s, s.strategies[0]), &s)
            .measure(Some(1))
            .unwrap();
        let calls = run.number("calls").unwrap();
        let amplification = run.number("amplification").unwrap();
        assert!(
            ((calls + 30.0) / calls - amplification).abs() < 1e-9,
            "{run:?}"
        );
    }

    #[test]
    fn an_exhausted_quota_ends_calls_without_backoff() {
        // aws-standard: 500 tokens a process, 5 a retry, nothing refunded when all fail: 100
        // retries a process, 1000 in all. A call ends on a refusal unless it made both its
        // retries, which at most 500 calls can (2 × 500 = 1000).
        let toml = "strategy = \"full-jitter\"\nretries = 2\nbudget = \"aws-standard\"\n";
        let f = finding(toml, Check::QuotaDisablesBackoff).unwrap();
        let s = scenario(toml);
        let run = failing_probe(&PolicyFlags::of(&s, s.strategies[0]), &s)
            .measure(Some(1))
            .unwrap();
        let calls = run.number("calls").unwrap();
        assert!(
            ((calls + 1000.0) / calls - run.number("amplification").unwrap()).abs() < 1e-9,
            "{run:?}"
        );
        assert!(
            f.figure >= (calls - 500.0) / calls && f.figure <= 1.0,
            "{f:?}"
        );
        assert_eq!(f.figure, run.number("retries_denied").unwrap() / calls);
        // A point value by hand: a quota of 50 tokens is 10 retries a process; with one retry a
        // call, each process's first 10 calls (every process makes about 100) retry and every
        // later one ends on the refusal: (calls − 100) / calls exactly.
        let small =
            "strategy = \"full-jitter\"\nretries = 1\nbudget = \"aws-standard:capacity=50\"\n";
        let f = finding(small, Check::QuotaDisablesBackoff).unwrap();
        let s = scenario(small);
        let run = failing_probe(&PolicyFlags::of(&s, s.strategies[0]), &s)
            .measure(Some(1))
            .unwrap();
        let calls = run.number("calls").unwrap();
        assert!(
            (f.figure - (calls - 100.0) / calls).abs() < 1e-12,
            "{f:?} {calls}"
        );
        assert_eq!(f.severity, Severity::Warning);
        // A quota the outage cannot drain (at most 2000 retries × 5 = 10 000 tokens): none.
        let deep =
            "strategy = \"full-jitter\"\nretries = 2\nbudget = \"aws-standard:capacity=100000\"\n";
        assert!(finding(deep, Check::QuotaDisablesBackoff).is_none());
        assert!(finding("strategy = \"full-jitter\"\n", Check::QuotaDisablesBackoff).is_none());
    }

    #[test]
    fn the_checks_carry_the_documented_names_in_json_and_text() {
        let documented = [
            "jitter-at-cap",
            "retry-envelope",
            "window-limiter",
            "retry-after-lockstep",
            "unbounded-amplification",
            "quota-disables-backoff",
        ];
        let names: Vec<&str> = Check::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names, documented);
        for c in Check::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
    }

    #[test]
    fn every_finding_replays_its_figure() {
        let report = lint(
            &scenario("strategy = \"retry-after\"\nretries = 10\n"),
            Some(1),
        )
        .unwrap();
        assert!(report.findings.len() >= 4);
        let json: serde_json::Value = serde_json::from_slice(&report.to_json()).unwrap();
        for f in json["findings"].as_array().unwrap() {
            for key in ["check", "severity", "message", "figure", "command"] {
                assert!(!f[key].is_null(), "{f}");
            }
            assert!(f["command"].as_str().unwrap().starts_with("herd-sim --"));
        }
        assert_eq!(report.at_or_above(Severity::Info), report.findings.len());
        assert!(report.at_or_above(Severity::Error) >= 1);
    }
}
