//! Keys a run would never read: an option given that the run's path or server cannot use is
//! refused in one line, never silently ignored (`--items` on the call loop, `--series-bin`
//! on a herd path, tab options without a tab that is ever hidden, `--retry-after-format`
//! against a server that sends no Retry-After, ...). A plain run refuses the first; a sweep
//! refuses a key no cell of its grid reads (a grid may well pair a key with cells it means
//! nothing to). The flags of a plain run are also refused when none of its strategies reads
//! them (`--multiplier` with fixed waits). No I/O.

use super::{invalid, ConfigError, Scenario, ScenarioFile, ServerModel};
use crate::policy::Strategy;

/// A key given that a run does not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    /// The flag, as the user writes it (`--items`).
    pub field: &'static str,
    /// The value given.
    pub value: String,
    /// What reads it, so what would make it mean something.
    pub accepted: &'static str,
}

impl Unread {
    /// The refusal: `invalid --items: 3; accepted: ...`.
    pub fn error(&self) -> ConfigError {
        invalid(self.field, &self.value, self.accepted)
    }

    /// The refusal of a key that many runs all leave unread, `why` said after what reads it:
    /// `invalid --balancer: random; accepted ...; no cell of this sweep reads it`.
    pub fn refusal(&self, why: &str) -> ConfigError {
        invalid(self.field, &self.value, format!("{}; {why}", self.accepted))
    }

    /// The keys of `lists` unread in every one of them, in the first's order: what no run of
    /// a search reads.
    pub fn in_every(lists: impl IntoIterator<Item = Vec<Unread>>) -> Vec<Unread> {
        let mut lists = lists.into_iter();
        let mut all = lists.next().unwrap_or_default();
        for here in lists {
            all.retain(|u| here.iter().any(|h| h.field == u.field));
        }
        all
    }
}

impl ScenarioFile {
    /// The keys of this file (as given: before any preset is laid in) that `scenario`, the
    /// scenario validated from it, never reads on its path or server, in the order of
    /// [`ScenarioFile`]'s fields.
    pub fn unread(&self, scenario: &Scenario) -> Vec<Unread> {
        let mut unread = Vec::new();
        let mut refuse = |given: Option<String>, field: &'static str, accepted: &'static str| {
            if let Some(value) = given {
                unread.push(Unread {
                    field,
                    value,
                    accepted,
                });
            }
        };
        let spec = scenario.run_spec(scenario.strategies[0]);
        if spec.uses_call_loop() {
            let one_call = "accepted only on the herd paths (a down server or a rate limiter, \
                            without the call loop's keys); the call loop starts one call a \
                            client, or --rate's calls with --arrivals poisson";
            refuse(self.items.map(|k| k.to_string()), "--items", one_call);
            refuse(self.pool.map(|p| p.to_string()), "--pool", one_call);
        } else if !scenario.server.is_occ() {
            // `occ` refuses the call loop's keys itself.
            let series = "accepted only on the call loop (a capacity or flaky server, \
                          --arrivals poisson, --timeout, --network-delay, --outage, --degrade, \
                          --budget, --breaker or --throttle); this run has no series";
            refuse(
                self.series_bin.map(|b| b.to_string()),
                "--series-bin",
                series,
            );
            refuse(
                self.recovery_hold.map(|h| h.to_string()),
                "--recovery-hold",
                series,
            );
            refuse(self.settle.map(|h| h.to_string()), "--settle", series);
        }
        if !scenario.overload.pool.is_active() {
            refuse(
                self.balancer.clone(),
                "--balancer",
                "accepted with --servers above 1 (one server has no balancer)",
            );
        }
        if scenario.retries == 0 {
            refuse(
                self.retry_probability.map(|p| p.to_string()),
                "--retry-probability",
                "accepted with --retries above 0 (with none there is no retry to make or skip)",
            );
        }
        let b = &scenario.browser;
        if b.hidden == 0.0 && b.switch_mean.is_none() {
            let never_hidden = "accepted with --hidden above 0 or --visibility-switch (no tab is \
                                ever hidden)";
            refuse(self.hidden_timers.clone(), "--hidden-timers", never_hidden);
            refuse(self.when_hidden.clone(), "--when-hidden", never_hidden);
        }
        let headers = spec.server.sends_headers();
        if !headers {
            refuse(
                self.retry_after_format.clone(),
                "--retry-after-format",
                "accepted with a server that sends Retry-After (a rate limiter whose headers \
                 are visible, or a capacity server with --shed-retry-after)",
            );
        }
        let limiter = matches!(scenario.server, ServerModel::Limited(_));
        let dates = b.retry_after_format == crate::engine::browser::RetryAfterFormat::HttpDate;
        if !(headers && (limiter || dates)) {
            refuse(
                self.clock_skew.map(|s| s.to_string()),
                "--clock-skew",
                "accepted when a tab reads a time against its clock: a rate limiter's visible \
                 X-RateLimit-Reset, or Retry-After as an HTTP date (--retry-after-format \
                 http-date)",
            );
        }
        unread
    }

    /// The backoff keys of this file that none of `scenario`'s strategies reads: for the
    /// flags of a plain run, typed for it (a config file's curve is there for whichever
    /// strategy a run picks, and a sweep pairs its strategies with every curve).
    pub fn unread_backoff(&self, scenario: &Scenario) -> Vec<Unread> {
        let mut unread = Vec::new();
        let mut refuse = |given: Option<String>, field: &'static str, accepted: &'static str| {
            if let Some(value) = given {
                unread.push(Unread {
                    field,
                    value,
                    accepted,
                });
            }
        };
        let reads = |f: fn(Strategy) -> bool| scenario.strategies.iter().any(|&s| f(s));
        // Naive retries at once; fixed waits `base` (not capped, but `--cap` is checked
        // against it); decorrelated jitter grows by its own factor of 3; the rest follow
        // `min(cap, base · multiplier^(k-1))`.
        if !reads(|s| s != Strategy::Naive) {
            refuse(
                self.base.map(|b| b.to_string()),
                "--base",
                "accepted with a strategy that waits (every one but naive)",
            );
        }
        if !reads(|s| s != Strategy::Naive) {
            // Fixed waits are not capped, but `--cap` must still be at least `--base`.
            refuse(
                self.cap.map(|c| c.to_string()),
                "--cap",
                "accepted with a strategy that waits (every one but naive)",
            );
        }
        if !reads(|s| {
            !matches!(
                s,
                Strategy::Naive | Strategy::Fixed | Strategy::DecorrelatedJitter
            )
        }) {
            refuse(
                self.multiplier.map(|m| m.to_string()),
                "--multiplier",
                "accepted with a strategy that multiplies its waits (every one but naive, fixed \
                 and decorrelated-jitter, which multiplies by up to 3)",
            );
        }
        if !reads(|s| {
            matches!(
                s,
                Strategy::FullJitter | Strategy::EqualJitter | Strategy::RetryAfterJitter
            )
        }) {
            refuse(
                self.jitter_order.clone(),
                "--jitter-order",
                "accepted with a strategy that draws below the curve (full-jitter,                  equal-jitter, retry-after-jitter; decorrelated-jitter always clamps its draw)",
            );
        }
        unread
    }

    /// [`ScenarioFile::unread`] as the refusal of the first key, if any.
    pub fn refuse_unread(&self, scenario: &Scenario) -> Result<(), ConfigError> {
        match self.unread(scenario).first() {
            Some(u) => Err(u.error()),
            None => Ok(()),
        }
    }
}
