//! `flaky`: a server that fails each attempt independently with a fixed probability (a 503,
//! without headers) and serves the others, answering at arrival; Brooker's 2022 model of a
//! downstream service with failure rate x. The draw is the engine's, made from the sending
//! process's own stream when the attempt is sent, so the model itself stays a pure function
//! of that draw: it keeps no state and never draws.

use std::fmt;

/// One in 2^53: the resolution of a failure rate and of the uniform draw it is compared with.
const SCALE: f64 = (1u64 << 53) as f64;

/// Fails an attempt when the high 53 bits of its draw, read as a uniform in [0, 1), fall
/// below the failure rate: probability exactly `threshold / 2^53`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Flaky {
    /// The failure rate times 2^53, rounded.
    threshold: u64,
}

impl Flaky {
    /// A server failing with probability `rate` in [0, 1] (rounded to a multiple of 2^-53).
    pub fn new(rate: f64) -> Flaky {
        Flaky {
            threshold: (rate.clamp(0.0, 1.0) * SCALE).round() as u64,
        }
    }

    /// The failure rate.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / SCALE
    }

    /// True when the attempt whose draw is `word` (64 uniform bits) fails.
    #[inline(always)]
    pub fn fails(&self, word: u64) -> bool {
        (word >> 11) < self.threshold
    }
}

impl fmt::Display for Flaky {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Nine decimals: enough for any rate typed, without the binary expansion's tail.
        let rate = (self.rate() * 1e9).round() / 1e9;
        write!(f, "flaky, failure rate {rate}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edges_never_and_always_fail() {
        let (never, always) = (Flaky::new(0.0), Flaky::new(1.0));
        for word in [0, 1, u64::MAX / 2, u64::MAX] {
            assert!(!never.fails(word));
            assert!(always.fails(word));
        }
        // A quarter: exactly the words whose top two bits are 00.
        let quarter = Flaky::new(0.25);
        assert!(quarter.fails((1 << 62) - 1));
        assert!(!quarter.fails(1 << 62));
        assert_eq!(quarter.rate(), 0.25);
    }
}
