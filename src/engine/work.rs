//! What each client has to do and how long a round trip takes: [`Work`] (items per client, or a
//! pool shared by all clients) and [`Latency`] (fixed, or drawn per request from the client's
//! own generator). Plain data and one draw function; no I/O.

use std::fmt;

use crate::rng::{uniform_below, ClientRng};
use crate::time::SimDuration;

/// The work of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Work {
    /// Every client fetches this many items, one after another (at least 1).
    Items(u32),
    /// This many items shared by all clients (at least one per client): a client that finishes
    /// an item takes the next from the pool until it is empty.
    Pool(u64),
}

impl Default for Work {
    fn default() -> Self {
        Work::Items(1)
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Work::Items(1) => write!(f, "1 item each"),
            Work::Items(k) => write!(f, "{k} items each"),
            Work::Pool(p) => write!(f, "pool of {p} items"),
        }
    }
}

/// The round-trip time of one request: the server answers at the request's arrival and the
/// client reads the answer one round trip later, so its next request arrives
/// `latency + delay` after this one. A refused request costs a round trip like any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Latency {
    /// The same for every request (zero by default, as in Experiment 1).
    Fixed(SimDuration),
    /// Uniform over whole nanoseconds in `[low, high)`, one draw per request from the client's
    /// generator (after the strategy's draw for the same request, if any).
    Uniform {
        /// Shortest round trip.
        low: SimDuration,
        /// Longest round trip (exclusive).
        high: SimDuration,
    },
}

impl Default for Latency {
    fn default() -> Self {
        Latency::Fixed(SimDuration::ZERO)
    }
}

impl Latency {
    /// One round trip. A fixed latency draws nothing, so it leaves the client's stream alone.
    #[inline(always)]
    pub fn draw(&self, rng: &mut ClientRng) -> SimDuration {
        match *self {
            Latency::Fixed(d) => d,
            Latency::Uniform { low, high } => {
                SimDuration(low.as_nanos() + uniform_below(rng, high.as_nanos() - low.as_nanos()))
            }
        }
    }

    /// The longest round trip it can give.
    pub fn max(&self) -> SimDuration {
        match *self {
            Latency::Fixed(d) => d,
            Latency::Uniform { high, .. } => high,
        }
    }
}

impl fmt::Display for Latency {
    /// The form the command line and configs accept: `110ms`, `uniform:100ms..120ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Latency::Fixed(d) => write!(f, "{d}"),
            Latency::Uniform { low, high } => write!(f, "uniform:{low}..{high}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_latency_stays_in_range_and_fixed_draws_nothing() {
        let mut rng = ClientRng::new(9);
        let untouched = rng;
        assert_eq!(
            Latency::Fixed(SimDuration::from_millis(110)).draw(&mut rng),
            SimDuration::from_millis(110)
        );
        assert_eq!(rng, untouched);
        let uniform = Latency::Uniform {
            low: SimDuration::from_millis(100),
            high: SimDuration::from_millis(120),
        };
        let mut sum = 0u64;
        for _ in 0..10_000 {
            let d = uniform.draw(&mut rng);
            assert!(d >= SimDuration::from_millis(100) && d < SimDuration::from_millis(120));
            sum += d.as_nanos();
        }
        // Mean 110 ms; sd of the mean = 20 ms / sqrt(12 · 10 000) ≈ 0.058 ms; 6 sd = 0.35 ms.
        let mean_ms = sum as f64 / 10_000.0 / 1e6;
        assert!((mean_ms - 110.0).abs() < 0.35, "{mean_ms}");
        assert_eq!(uniform.to_string(), "uniform:100ms..120ms");
    }
}
