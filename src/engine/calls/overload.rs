//! What the call loop adds to a run's settings ([`Overload`]): arrivals, timeouts, network
//! delay, triggers and the series windows, and when its last trigger ends.

use crate::server::{Pool, Triggers};
use crate::time::{SimDuration, SimTime};
use crate::workload::Arrivals;

use crate::engine::NetworkDelay;

use super::{ClosedLoop, DeadlinePropagation, Layers, StickyFailures};

/// What the call loop adds to a run: arrivals, timeouts, network delay, triggers and the
/// series. The default adds nothing (a herd, no timeout, no delay, no trigger).
#[derive(Clone, Debug, PartialEq)]
pub struct Overload {
    /// When calls start.
    pub arrivals: Arrivals,
    /// An attempt unanswered this long after it was sent is abandoned.
    pub timeout: Option<SimDuration>,
    /// Delay of each direction, drawn per message (instead of the round-trip latency).
    pub network: Option<NetworkDelay>,
    /// Outages and degradations.
    pub triggers: Triggers,
    /// Window of the series.
    pub series_bin: SimDuration,
    /// How long the series must stay healthy to count as recovered.
    pub recovery_hold: SimDuration,
    /// Client processes whose every attempt fails (none by default).
    pub sticky: StickyFailures,
    /// Whether a capacity server drops requests whose deadline cannot be met.
    pub deadlines: DeadlinePropagation,
    /// Keep every window (the series' rows and the tally's histograms) for a report that
    /// writes them: a JSON report, a chart, `--series-out` (the default). Without, each
    /// window is folded into the figures as it closes (recovery, peak, windows) and dropped,
    /// so a run's memory follows its calls in flight, not simulated time; every figure is the
    /// same.
    pub keep_windows: bool,
    /// The retry layers above the run's own policy (none by default).
    pub layers: Layers,
    /// Closed-loop clients: at most K calls in flight a process, each next call after a
    /// think time (open loop by default).
    pub closed: Option<ClosedLoop>,
    /// How long calls keep starting after the last trigger ends ([`Overload::settle_load`]),
    /// so that the verdict ([`crate::series::verdict_rule`]) judges a load that went on.
    pub settle: SimDuration,
    /// What the calls held at once and a capacity server's queue may take, from the memory
    /// budget ([`crate::config::Scenario::guard_in_flight`]): a run past it stops there,
    /// outgrown ([`crate::series::OverloadTally::outgrown`]). Unguarded by default, when the
    /// estimate counts the worst case up front.
    pub in_flight: InFlightGuard,
    /// The servers behind a balancer (one, no pool, by default) and their own triggers.
    pub pool: Pool,
}

/// The bytes a call-loop run may hold in call slots and queued requests, each counted at
/// the estimate's figure ([`InFlightGuard::UNGUARDED`] by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlightGuard {
    /// The bytes allowed (`u64::MAX`: unguarded).
    pub bytes: u64,
    /// Bytes a call slot is counted at, with its pending events.
    pub per_call: u64,
    /// Bytes a place in the server's queue is counted at, with its late answer's event.
    pub per_place: u64,
    /// Blocks of counts each histogram of a herd-path run may allocate beyond its dense
    /// windows ([`crate::metrics::Tally::with_block_limit`]; `u64::MAX`: no limit): a run
    /// that needs more is refused, outgrown ([`crate::metrics::Tally::outgrown`]).
    pub blocks: u64,
}

impl InFlightGuard {
    /// No guard: the estimate counted the worst case.
    pub const UNGUARDED: InFlightGuard = InFlightGuard {
        bytes: u64::MAX,
        per_call: 0,
        per_place: 0,
        blocks: u64::MAX,
    };

    /// True when the call loop's calls and queue are guarded.
    pub fn is_on(&self) -> bool {
        self.bytes != u64::MAX
    }

    /// True when a herd-path run's histograms are limited.
    pub fn limits_blocks(&self) -> bool {
        self.blocks != u64::MAX
    }

    /// Whether `calls` slots and `places` queued requests are past the bytes allowed.
    #[inline]
    pub fn outgrown(&self, calls: u64, places: u64) -> bool {
        calls
            .saturating_mul(self.per_call)
            .saturating_add(places.saturating_mul(self.per_place))
            > self.bytes
    }
}

impl Default for Overload {
    fn default() -> Self {
        Overload {
            arrivals: Arrivals::Herd,
            timeout: None,
            network: None,
            triggers: Triggers::default(),
            series_bin: SimDuration::from_secs(1),
            recovery_hold: SimDuration::from_secs(5),
            sticky: StickyFailures::default(),
            deadlines: DeadlinePropagation::default(),
            keep_windows: true,
            layers: Layers::default(),
            closed: None,
            settle: SimDuration::ZERO,
            in_flight: InFlightGuard::UNGUARDED,
            pool: Pool::default(),
        }
    }
}

impl Overload {
    /// True when any part of it asks for the call loop.
    pub fn is_active(&self) -> bool {
        self.arrivals != Arrivals::Herd
            || self.timeout.is_some()
            || self.network.is_some()
            || !self.triggers.is_empty()
            || self.sticky.is_active()
            || self.layers.is_active()
            || self.pool.is_active()
    }

    /// When the last trigger ends: an outage, a degradation or a spike, the run's or one
    /// server's of a pool (a rolling restart's outages among them).
    pub fn trigger_end(&self) -> Option<SimTime> {
        let spikes = match &self.arrivals {
            Arrivals::Poisson(s) => s.spikes.iter().map(|s| s.to).max(),
            Arrivals::Herd => None,
        };
        self.triggers
            .last_end()
            .max(spikes)
            .max(self.pool.last_end())
    }
}

impl Overload {
    /// The settle by default: long enough for the retries of every call started at the last
    /// trigger's end to play out, whatever the policy, and then the recovery hold: the longest
    /// a call can last ([`Overload::longest_call`]) plus the hold.
    pub fn default_settle(&self, retries: u32, cap: SimDuration) -> SimDuration {
        SimDuration(
            self.longest_call(retries, cap)
                .as_nanos()
                .saturating_add(self.recovery_hold.as_nanos()),
        )
    }

    /// The longest a call can last from its start, whatever the policy: the run's own policy
    /// (`retries` and `cap`, the innermost layer) makes `(retries + 1) × timeout + retries ×
    /// cap`, and each retry layer around it, from the innermost out, repeats the call below it
    /// `1 + its retries` times with its own cap between: `(r + 1) × below + r × cap`. Every
    /// strategy waits at most its cap between attempts (retry controls only take retries
    /// away); without a timeout an attempt is not bounded by the client, and the timeouts
    /// count zero. Saturating.
    pub fn longest_call(&self, retries: u32, cap: SimDuration) -> SimDuration {
        let timeout = self.timeout.unwrap_or(SimDuration::ZERO).as_nanos();
        let call = |below: u64, retries: u32, cap: SimDuration| {
            below
                .saturating_mul(u64::from(retries) + 1)
                .saturating_add(cap.as_nanos().saturating_mul(u64::from(retries)))
        };
        let inner = call(timeout, retries, cap);
        SimDuration(self.layers.outer.iter().rev().fold(inner, |below, layer| {
            call(below, layer.policy.max_retries, layer.policy.backoff.cap)
        }))
    }

    /// Sets the settle of a run with a trigger (without one there is no verdict, and the
    /// settle stays zero) and, for Poisson arrivals, keeps calls starting at the base rate
    /// until at least the last trigger's end plus `settle` (a longer `--duration` stays as
    /// given).
    pub fn settle_load(&mut self, settle: SimDuration) {
        let end = self.trigger_end();
        self.settle = match end {
            Some(_) => settle,
            None => SimDuration::ZERO,
        };
        if let (Arrivals::Poisson(schedule), Some(end)) = (&mut self.arrivals, end) {
            schedule.end = schedule.end.max(end + settle);
        }
    }

    /// Where the verdict stops judging a run whose last window ends at `run_end`: the end of
    /// Poisson arrivals (calls no longer start after it), or for a herd, whose calls all start
    /// at 0 and after whose run nothing happens, the later of `run_end` plus the recovery hold
    /// and the last trigger's end plus the settle. `None` without a trigger.
    pub fn verdict_end(&self, run_end: SimTime) -> Option<SimTime> {
        let end = self.trigger_end()?;
        Some(match &self.arrivals {
            Arrivals::Poisson(schedule) => schedule.end,
            Arrivals::Herd => (run_end + self.recovery_hold).max(end + self.settle),
        })
    }

    /// The collapse verdict of this run's settings in one sentence.
    pub fn verdict_rule(&self) -> String {
        crate::series::verdict_rule(self.recovery_hold, self.settle)
    }
}

/// A time as a duration since 0, as the command line writes it (`20s`, `2.5s`).
fn at(t: SimTime) -> SimDuration {
    SimDuration(t.as_nanos())
}

impl Overload {
    /// The load as the command line gives it: `herd at t = 0`, or `poisson 40/s over 0s..80s,
    /// spike 20s..25s@80/s`.
    pub fn describe_load(&self) -> String {
        match &self.arrivals {
            Arrivals::Herd => "herd at t = 0".to_string(),
            Arrivals::Poisson(s) => {
                let mut text = format!("poisson {}/s over 0s..{}", s.base, at(s.end));
                for spike in &s.spikes {
                    text.push_str(&format!(
                        ", spike {}..{}@{}/s",
                        at(spike.from),
                        at(spike.to),
                        spike.rate
                    ));
                }
                if let Some(closed) = &self.closed {
                    text.push_str(&format!("; {}", closed.describe()));
                }
                text
            }
        }
    }

    /// The triggers as the command line gives them (`spike 20s..25s@80/s, outage 0s..20s,
    /// degrade 30s..40s@0.5`), or `none`.
    pub fn describe_triggers(&self) -> String {
        let mut parts: Vec<String> = match &self.arrivals {
            Arrivals::Poisson(s) => s
                .spikes
                .iter()
                .map(|spike| {
                    format!(
                        "spike {}..{}@{}/s",
                        at(spike.from),
                        at(spike.to),
                        spike.rate
                    )
                })
                .collect(),
            Arrivals::Herd => Vec::new(),
        };
        parts.extend(
            self.triggers
                .outages
                .iter()
                .map(|&(from, to)| format!("outage {}..{}", at(from), at(to))),
        );
        parts.extend(
            self.triggers
                .degrades
                .iter()
                .map(|d| format!("degrade {}..{}@{}", at(d.from), at(d.to), d.factor)),
        );
        parts.extend(self.pool.describe_triggers());
        if let Some(r) = self.pool.rolling {
            parts.push(format!(
                "rolling restart every {}, {} down",
                r.interval, r.downtime
            ));
        }

        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    }

    /// The client's side: `timeout 3s, network exp:100ms each way` (`no timeout`; without a
    /// network delay, the round trip `latency` as given).
    pub fn describe_client(&self, latency: &str) -> String {
        let timeout = match self.timeout {
            Some(t) => format!("timeout {t}"),
            None => "no timeout".to_string(),
        };
        let timeout = match self.deadlines.cost {
            Some(cost) => {
                format!("{timeout} propagated as a deadline (a drop costs {cost} of a service)")
            }
            None => timeout,
        };
        let client = match self.network {
            Some(d) => format!("{timeout}, network {d} each way"),
            None => format!("{timeout}, round trip {latency}"),
        };
        match self.layers.describe() {
            Some(layers) => format!("{client}; {layers}"),
            None => client,
        }
    }
}
