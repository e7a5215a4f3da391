//! Closed-loop clients as written (`--in-flight K`, `--think-time DIST`), validated into a
//! [`ClosedLoop`], and what the estimates take of them: the calls a closed loop can start
//! ([`Scenario::closed_call_bound`]) and the shortest a client's turn from one call's start
//! to the next can be on average ([`Scenario::closed_cycle_floor`]).

use super::saturating::Sat;
use super::{invalid, ConfigError, Scenario, ScenarioFile};
use crate::engine::calls::ClosedLoop;
use crate::engine::{Latency, NetworkDelay};
use crate::policy::control::{Breaker, Throttle};
use crate::time::SimDuration;
use crate::workload::{Arrivals, Dist};

impl ScenarioFile {
    /// The closed loop, validated against the arrivals: `None` for open-loop clients.
    pub(crate) fn closed_loop(
        &self,
        arrivals: &Arrivals,
    ) -> Result<Option<ClosedLoop>, ConfigError> {
        let Some(k) = self.in_flight else {
            if let Some(think) = self.think_time {
                return Err(invalid(
                    "--think-time",
                    think,
                    "accepted with --in-flight K (closed-loop clients: the wait after a call ends before the next)",
                ));
            }
            return Ok(None);
        };
        if k == 0 {
            return Err(invalid(
                "--in-flight",
                0,
                "accepted: a whole number of at least 1, the calls a client process has in flight at most",
            ));
        }
        let Arrivals::Poisson(schedule) = arrivals else {
            return Err(invalid(
                "--in-flight",
                k,
                "accepted with --arrivals poisson: a client's first arrival starts its calls and --duration ends the load",
            ));
        };
        if !schedule.spikes.is_empty() {
            return Err(invalid(
                "--in-flight",
                k,
                "accepted without --spike: a closed loop reads the rate only for each client's first arrival, so a spike would not reach the server",
            ));
        }
        if self.browser_keys().iter().any(|(_, set)| *set) {
            return Err(invalid(
                "--in-flight",
                k,
                "accepted without the browser tabs' keys (--hidden, --visibility-switch, ...): a call paused for good in a hidden tab never ends, so its client would never start another",
            ));
        }
        Ok(Some(ClosedLoop {
            in_flight: k,
            think: self
                .think_time
                .map_or(Dist::Fixed(SimDuration::ZERO), |d| d.0),
        }))
    }
}

impl Scenario {
    /// The shortest a closed-loop client's turn can be on average, from a call's start to
    /// the next call's start in its place: the think time's mean, plus the shortest round
    /// trip (or the timeout, if shorter) when every call sends at least one attempt and waits
    /// for its answer. With a breaker or a throttle (or retry layers, whose breakers can
    /// refuse a call) a call can end without an attempt, so only the think time counts.
    pub(crate) fn closed_cycle_floor(&self, closed: &ClosedLoop) -> SimDuration {
        let o = &self.overload;
        let rejects = self.controls.breaker != Breaker::None
            || self.controls.throttle != Throttle::None
            || o.layers.is_active();
        let trip = if rejects {
            SimDuration::ZERO
        } else {
            let trip = match o.network {
                Some(NetworkDelay::Fixed(d)) => SimDuration(d.as_nanos().saturating_mul(2)),
                Some(NetworkDelay::Uniform { low, .. }) => {
                    SimDuration(low.as_nanos().saturating_mul(2))
                }
                Some(_) => SimDuration::ZERO,
                None => match self.latency {
                    Latency::Fixed(d) => d,
                    Latency::Uniform { low, .. } => low,
                },
            };
            o.timeout.map_or(trip, |t| trip.min(t))
        };
        SimDuration(
            closed
                .think
                .mean()
                .as_nanos()
                .saturating_add(trip.as_nanos()),
        )
    }

    /// Calls a closed loop starts at most: each of its `clients × K` places starts one call
    /// at its client's first arrival and then one a turn, whose mean is at least
    /// [`Scenario::closed_cycle_floor`] `m` and whose spread is at most an exponential's, so
    /// over the load's `T` a place starts `T / m` calls on average with a standard deviation
    /// of at most `sqrt(T / m)`; counted at the mean plus ten of them and 100, as Poisson
    /// arrivals are ([`Scenario::call_bound`]). `None` for open-loop clients.
    pub(crate) fn closed_call_bound(&self) -> Option<u128> {
        let closed = self.overload.closed.as_ref()?;
        let Arrivals::Poisson(schedule) = &self.overload.arrivals else {
            return None;
        };
        let places = Sat::from(self.clients) * Sat::from(closed.in_flight);
        let floor = self.closed_cycle_floor(closed).as_nanos().max(1) as f64;
        let turns = schedule.end.as_nanos() as f64 / floor;
        let per_place = Sat::ceil(turns + 10.0 * turns.sqrt() + 100.0) + 1;
        Some((places * per_place).0)
    }

    /// Refuses a closed loop whose calls could all end at once with no think time: its
    /// clients would start calls forever at one instant.
    pub(crate) fn check_closed_loop(&self) -> Result<(), ConfigError> {
        let Some(closed) = &self.overload.closed else {
            return Ok(());
        };
        if self.closed_cycle_floor(closed).is_zero() {
            return Err(invalid(
                "--think-time",
                closed.think,
                "accepted: a think time of positive mean (or, without a breaker, throttle or layers, a positive --latency or --network-delay): calls that can end at once with no think time would start forever at one instant",
            ));
        }
        Ok(())
    }
}
