//! The interval of a collapse probability estimated from `k` collapses in `n` seeds: Wilson's
//! score interval at 95 %, and at the edges (no seed collapsed, or every one) the exact
//! Clopper–Pearson end. Pure arithmetic, no I/O.
//!
//! - Wilson (1927), "Probable inference, the law of succession, and statistical inference",
//!   <https://doi.org/10.1080/01621459.1927.10502953>: the `p` solving
//!   `|p̂ − p| = z·√(p(1 − p)/n)`, i.e. centre `(p̂ + z²/2n) / (1 + z²/n)` and half-width
//!   `z/(1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²)`, with `z` = 1.959964 (two-sided 95 %).
//! - No collapse in `n` seeds: the upper end is the exact `1 − 0.025^(1/n)` (the two-sided
//!   95 % Clopper–Pearson end, a one-sided 97.5 % bound, about 3.7/n), of which the "rule of
//!   three" `3/n` is the one-sided 95 % approximation (`1 − 0.05^(1/n)`). Every seed collapsed:
//!   the mirror image, `0.025^(1/n)`. Each end of every interval is so a one-sided 97.5 %
//!   bound, which is what the boundary's interval relies on ([`super::search`]).

/// z of a two-sided 95 % interval (the 97.5 % quantile of the standard normal).
pub const Z95: f64 = 1.959_963_984_540_054;

/// The tail each end of an interval leaves out: 2.5 %.
pub const TAIL: f64 = 0.025;

/// An estimated probability and its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// `k / n`.
    pub p: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// Wilson's 95 % score interval for `k` successes in `n` trials (`0 < n`, `k <= n`), without
/// the edge rule of [`estimate`].
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    let n_f = n as f64;
    let p = k as f64 / n_f;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denominator;
    let half = Z95 / denominator * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The estimate of `k` collapses in `n` seeds (`n >= 1`): Wilson's interval, or at `k = 0`
/// (`k = n`) the exact Clopper–Pearson upper (lower) end.
pub fn estimate(k: u64, n: u64) -> Estimate {
    assert!(n > 0 && k <= n, "estimate of {k} in {n}");
    let p = k as f64 / n as f64;
    let (mut low, mut high) = wilson(k, n);
    let edge = TAIL.powf(1.0 / n as f64);
    if k == 0 {
        (low, high) = (0.0, 1.0 - edge);
    }
    if k == n {
        (low, high) = (edge, 1.0);
    }
    Estimate { p, low, high }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_a_hand_worked_case() {
        // 7 of 20, z = 1.96 (worked by hand with z² = 3.8416):
        // p̂ = 0.35, centre = (0.35 + 0.096040) / 1.192080 = 0.374170,
        // half = 1.96 / 1.192080 · √(0.011375 + 0.002401) = 1.644185 · 0.117371 = 0.192979,
        // so [0.181191, 0.567149] (z = 1.959964 moves the sixth decimal at most).
        let (low, high) = wilson(7, 20);
        assert!((low - 0.181191).abs() < 2e-5, "{low}");
        assert!((high - 0.567149).abs() < 2e-5, "{high}");
        // The interval's ends solve the score equation |p̂ − p| = z √(p(1 − p)/n).
        for p in [low, high] {
            let gap = (0.35f64 - p).abs() - Z95 * (p * (1.0 - p) / 20.0).sqrt();
            assert!(gap.abs() < 1e-12, "{p}: {gap}");
        }
    }

    #[test]
    fn no_collapse_gives_the_exact_upper_bound_near_the_rule_of_three() {
        // 0 of 100: the chance of no collapse in 100 seeds at p = high is exactly 2.5 %.
        let e = estimate(0, 100);
        assert_eq!((e.p, e.low), (0.0, 0.0));
        assert!(((1.0 - e.high).powi(100) - 0.025).abs() < 1e-12);
        // About 3.7/n, above the one-sided 95 % rule of three (3/n) and 1 − 0.05^(1/n).
        assert!((e.high - 0.036208).abs() < 1e-5, "{}", e.high);
        assert!(e.high > 1.0 - 0.05f64.powf(0.01) && 1.0 - 0.05f64.powf(0.01) > 0.0295);
        // Every seed collapsed: the mirror image.
        let all = estimate(100, 100);
        assert!((all.low - (1.0 - e.high)).abs() < 1e-15 && all.high == 1.0);
        // In between, Wilson's.
        let mid = estimate(7, 20);
        assert_eq!((mid.low, mid.high), wilson(7, 20));
    }
}
