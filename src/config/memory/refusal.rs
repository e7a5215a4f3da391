//! Checking the estimate against `--memory-limit` and against what the allocator grants,
//! and the one-line refusal: the whole estimate, its largest part and the flags that shrink
//! it. Separate from the count because it is about wording and advice, not bytes.

use super::estimate::longest_histogram;
use super::{MemoryEstimate, Part, Sat};
use crate::config::{ConfigError, Scenario, ServerModel};
use crate::time::SimDuration;
use crate::workload::Arrivals;

impl Scenario {
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
