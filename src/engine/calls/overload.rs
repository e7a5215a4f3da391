//! What the call loop adds to a run's settings ([`Overload`]): arrivals, timeouts, network
//! delay, triggers and the series windows, and when its last trigger ends.

use crate::server::Triggers;
use crate::time::{SimDuration, SimTime};
use crate::workload::Arrivals;

use crate::engine::NetworkDelay;

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
    }

    /// When the last trigger ends: an outage, a degradation or a spike.
    pub fn trigger_end(&self) -> Option<SimTime> {
        let spikes = match &self.arrivals {
            Arrivals::Poisson(s) => s.spikes.iter().map(|s| s.to).max(),
            Arrivals::Herd => None,
        };
        self.triggers.last_end().max(spikes)
    }
}
