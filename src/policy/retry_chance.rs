//! Probabilistic retry ([`RetryChance`]): each retry a strategy would make is made only with
//! probability P, else the call fails there (joemag1/queueingsimulator's `--retry_probability`,
//! <https://github.com/joemag1/queueingsimulator/blob/master/src/main.rs>, which retries a
//! failed request when `gen_bool(retry_probability)` comes up).
//!
//! Against a server that refuses everything, a call with N retries then makes
//! `1 + P + … + P^N = (1 − P^(N+1)) / (1 − P)` attempts on average (N + 1 at P = 1).

use std::fmt;

use rand::RngCore;

/// 2^53: the probability is held in steps of 2^-53, as the flaky server's failure rate.
const SCALE: f64 = (1u64 << 53) as f64;

/// The probability that a retry the strategy wants is made. One 64-bit draw from the
/// client's stream per decision, taken before the strategy's own draw, and only when the
/// probability is strictly between 0 and 1 (so P = 1, the default, draws nothing and leaves
/// every run as it was).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetryChance {
    /// The probability times 2^53, rounded.
    threshold: u64,
}

impl RetryChance {
    /// Every retry is made (the default).
    pub const ALWAYS: RetryChance = RetryChance { threshold: 1 << 53 };

    /// Retries made with probability `p` in [0, 1] (rounded to a multiple of 2^-53).
    pub fn new(p: f64) -> RetryChance {
        RetryChance {
            threshold: (p.clamp(0.0, 1.0) * SCALE).round() as u64,
        }
    }

    /// The probability.
    pub fn probability(self) -> f64 {
        self.threshold as f64 / SCALE
    }

    /// True unless retries can be declined (P = 1).
    pub fn is_always(self) -> bool {
        self == RetryChance::ALWAYS
    }

    /// Whether this retry is made: a draw from `rng` only when 0 < P < 1.
    #[inline(always)]
    pub fn allows<R: RngCore + ?Sized>(self, rng: &mut R) -> bool {
        match self.threshold {
            0 => false,
            t if t >= 1 << 53 => true,
            t => (rng.next_u64() >> 11) < t,
        }
    }
}

impl Default for RetryChance {
    fn default() -> Self {
        RetryChance::ALWAYS
    }
}

impl fmt::Display for RetryChance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Nine decimals: enough for any probability typed, without the binary tail.
        write!(f, "{}", (self.probability() * 1e9).round() / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ClientRng;

    #[test]
    fn the_edges_draw_nothing_and_the_middle_draws_one_word() {
        let mut rng = ClientRng::new(7);
        let untouched = rng;
        assert!(RetryChance::ALWAYS.allows(&mut rng));
        assert!(RetryChance::new(1.0).allows(&mut rng));
        assert!(!RetryChance::new(0.0).allows(&mut rng));
        assert_eq!(rng, untouched);
        let mut expected = rng;
        RetryChance::new(0.5).allows(&mut rng);
        expected.next_u64();
        assert_eq!(rng, expected);
    }

    #[test]
    fn a_half_allows_the_words_whose_top_bit_is_clear() {
        // (word >> 11) < 2^52 exactly when bit 63 is 0.
        struct Word(u64);
        impl RngCore for Word {
            fn next_u32(&mut self) -> u32 {
                self.0 as u32
            }
            fn next_u64(&mut self) -> u64 {
                self.0
            }
            fn fill_bytes(&mut self, _: &mut [u8]) {}
        }
        let half = RetryChance::new(0.5);
        assert!(half.allows(&mut Word(0)));
        assert!(half.allows(&mut Word(u64::MAX >> 1)));
        assert!(!half.allows(&mut Word(1 << 63)));
        assert!(!half.allows(&mut Word(u64::MAX)));
        assert_eq!(half.to_string(), "0.5");
        assert_eq!(RetryChance::default().probability(), 1.0);
    }
}
