//! The seeded sample of clients a trace keeps (`--trace-sample`): a fraction in (0, 1] and
//! the rule that says whether a client of a run is kept (see [`crate::trace`]).

use crate::config::ConfigError;

/// The salt of the sample's stream (`trace` in ASCII).
const SAMPLE_SALT: u64 = 0x74_7261_6365;
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The fraction of clients a trace keeps (see [`crate::trace`] for the rule).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    fraction: f64,
}

impl Default for Sample {
    fn default() -> Self {
        Sample { fraction: 1.0 }
    }
}

impl Sample {
    /// A fraction in (0, 1].
    pub fn new(fraction: f64) -> Result<Sample, ConfigError> {
        if fraction > 0.0 && fraction <= 1.0 {
            Ok(Sample { fraction })
        } else {
            Err(ConfigError::Invalid {
                field: "--trace-sample",
                value: fraction.to_string(),
                accepted: "accepted: a fraction of clients above 0 and at most 1, e.g. 0.01".into(),
            })
        }
    }

    /// The fraction kept.
    pub fn fraction(self) -> f64 {
        self.fraction
    }

    /// True when client `client` of a run with seed `seed` is kept.
    pub fn keeps(self, seed: u64, client: u32) -> bool {
        if self.fraction >= 1.0 {
            return true;
        }
        let mut state =
            (seed ^ SAMPLE_SALT).wrapping_add(u64::from(client).wrapping_mul(GOLDEN_GAMMA));
        let word = crate::rng::splitmix64(&mut state);
        (word as f64) < self.fraction * 18_446_744_073_709_551_616.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_keeps_its_fraction_and_is_seeded() {
        // 100 000 clients at 0.1: a binomial count with sd 95; 5 sd either side.
        let sample = Sample::new(0.1).unwrap();
        let kept = (0..100_000).filter(|&c| sample.keeps(2015, c)).count();
        assert!((9_525..=10_475).contains(&kept), "{kept}");
        let other = (0..100_000).filter(|&c| sample.keeps(2016, c)).count();
        assert_ne!(
            (0..1000).map(|c| sample.keeps(2015, c)).collect::<Vec<_>>(),
            (0..1000).map(|c| sample.keeps(2016, c)).collect::<Vec<_>>()
        );
        assert!((9_525..=10_475).contains(&other), "{other}");
        assert!((0..1000).all(|c| Sample::default().keeps(1, c)));
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            assert!(Sample::new(bad).is_err(), "{bad}");
        }
    }
}
