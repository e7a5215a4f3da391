//! What `--aggregate` writes for one metric over a cell's seeds: mean, sample standard
//! deviation, min, max and a 95 % confidence interval of the mean (Student's t). Pure
//! arithmetic, in seed order, so the figures are the same on any thread count. No I/O.
//!
//! The values stream through an [`Accumulator`] of a few numbers, so a cell's memory does not
//! grow with its seeds: whole values are summed exactly in integers (their sample variance is
//! then an exact fraction, rounded once), and any other value switches the metric to
//! Welford's update.

/// The statistics of one metric, in CSV column order (see [`STATISTICS`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Described {
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1); `None` with one value.
    pub sd: Option<f64>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// 95 % interval of the mean, `mean ∓ t(0.975, n−1) · sd / √n`; `None` with one value.
    pub ci95: Option<(f64, f64)>,
}

/// The suffixes of the aggregate columns of one metric, in order.
pub const STATISTICS: [&str; 6] = ["mean", "sd", "min", "max", "ci95_low", "ci95_high"];

/// Describes `values`; `None` when there are none (a metric that did not apply to any seed).
pub fn describe(values: &[f64]) -> Option<Described> {
    let mut acc = Accumulator::default();
    for &v in values {
        acc.push(v);
    }
    acc.describe()
}

/// Whole values up to this magnitude are summed exactly: their squares times a million seeds
/// stay far inside `i128`.
const EXACT_LIMIT: f64 = (1u64 << 53) as f64;

/// One metric's values so far, in constant memory: count, sum, min, max, and the spread as
/// exact integer sums while every value is whole, else Welford's running mean and sum of
/// squared deviations.
#[derive(Clone, Copy, Debug, Default)]
pub struct Accumulator {
    n: u64,
    /// The values added in order, as `values.iter().sum()` does, for the mean.
    sum: f64,
    min: f64,
    max: f64,
    /// `Some((Σv, Σv²))` while every value is whole and small enough.
    exact: Option<(i128, i128)>,
    /// Welford's running mean and sum of squared deviations, once a value is not whole.
    welford: (f64, f64),
}

impl Accumulator {
    /// Adds one value.
    pub fn push(&mut self, v: f64) {
        if self.n == 0 {
            self.sum = v;
            self.min = v;
            self.max = v;
            self.exact = Some((0, 0));
        } else {
            self.sum += v;
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.exact = match self.exact {
            Some((sum, squares)) if v.fract() == 0.0 && v.abs() <= EXACT_LIMIT => {
                let w = v as i128;
                sum.checked_add(w)
                    .zip(w.checked_mul(w).and_then(|q| squares.checked_add(q)))
            }
            _ => None,
        };
        // Welford's update, kept always so that a switch away from exact sums loses nothing.
        let (mean, m2) = self.welford;
        let delta = v - mean;
        let mean = mean + delta / self.n as f64;
        self.welford = (mean, m2 + delta * (v - mean));
    }

    /// The values added so far.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// Sum of squared deviations from the mean, divided by `n − 1` (`n ≥ 2`).
    fn sample_variance(&self) -> f64 {
        let n = self.n as i128;
        if let Some((sum, squares)) = self.exact {
            // Σ(v − mean)² = (nΣv² − (Σv)²) / n, exactly, then one division.
            if let Some(numerator) = n
                .checked_mul(squares)
                .and_then(|a| a.checked_sub(sum.checked_mul(sum)?))
            {
                return numerator as f64 / (n * (n - 1)) as f64;
            }
        }
        self.welford.1.max(0.0) / (self.n - 1) as f64
    }

    /// The statistics of the values added; `None` when there are none.
    pub fn describe(&self) -> Option<Described> {
        let n = self.n;
        if n == 0 {
            return None;
        }
        let mean = self.sum / n as f64;
        let (sd, ci95) = if n < 2 {
            (None, None)
        } else {
            let sd = self.sample_variance().sqrt();
            let half = t_975(n - 1) * sd / (n as f64).sqrt();
            (Some(sd), Some((mean - half, mean + half)))
        };
        Some(Described {
            mean,
            sd,
            min: self.min,
            max: self.max,
            ci95,
        })
    }
}

impl Described {
    /// The six CSV fields, in [`STATISTICS`] order; a missing figure is an empty field.
    pub fn fields(described: Option<Described>) -> [String; 6] {
        let text = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
        match described {
            None => Default::default(),
            Some(d) => [
                text(Some(d.mean)),
                text(d.sd),
                text(Some(d.min)),
                text(Some(d.max)),
                text(d.ci95.map(|c| c.0)),
                text(d.ci95.map(|c| c.1)),
            ],
        }
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (`df ≥ 1`): a table to 30,
/// then the Cornish–Fisher expansion around the normal quantile, within 1e-4 from df 30 on.
pub fn t_975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706_204_7,
        4.302_652_7,
        3.182_446_3,
        2.776_445_1,
        2.570_581_8,
        2.446_911_9,
        2.364_624_3,
        2.306_004_1,
        2.262_157_2,
        2.228_138_9,
        2.200_985_2,
        2.178_812_8,
        2.160_368_7,
        2.144_786_7,
        2.131_449_5,
        2.119_905_3,
        2.109_815_6,
        2.100_922_0,
        2.093_024_1,
        2.085_963_4,
        2.079_613_8,
        2.073_873_1,
        2.068_657_6,
        2.063_898_6,
        2.059_538_6,
        2.055_529_4,
        2.051_830_5,
        2.048_407_1,
        2.045_229_6,
        2.042_272_5,
    ];
    if df == 0 {
        return f64::NAN;
    }
    if df <= 30 {
        return TABLE[df as usize - 1];
    }
    let z: f64 = 1.959_963_985;
    let v = df as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * v.powi(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_match_a_hand_computation() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squares sum 32, sd = sqrt(32/7).
        let d = describe(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(d.mean, 5.0);
        assert!((d.sd.unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!((d.min, d.max), (2.0, 9.0));
        // t(0.975, 7) = 2.3646; half width 2.3646 · 2.1381 / 2.8284 = 1.7875.
        let (low, high) = d.ci95.unwrap();
        assert!((high - 5.0 - 1.7875).abs() < 1e-3, "{high}");
        assert!((5.0 - low - 1.7875).abs() < 1e-3, "{low}");
    }

    #[test]
    fn whole_and_fractional_values_give_the_hand_computed_spread() {
        // 1, 2, 3, 4: mean 2.5, squares 2.25 + 0.25 + 0.25 + 2.25 = 5, variance 5/3 (exact
        // integer sums). The same shifted by a half: not whole, so Welford's update; the
        // spread is the same.
        let whole = describe(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(whole.mean, 2.5);
        assert_eq!(whole.sd.unwrap(), (5.0f64 / 3.0).sqrt());
        let halves = describe(&[1.5, 2.5, 3.5, 4.5]).unwrap();
        assert_eq!(halves.mean, 3.0);
        assert!((halves.sd.unwrap() - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        // Equal values have no spread at all, whole or not.
        assert_eq!(describe(&[7.0; 5]).unwrap().sd, Some(0.0));
        assert_eq!(describe(&[0.1; 5]).unwrap().sd, Some(0.0));
        // A value too large for exact sums: 2^60 and 2^60 + 2^9 differ by 512, sd 512/√2.
        let big = (1u64 << 60) as f64;
        let d = describe(&[big, big + 512.0]).unwrap();
        assert!((d.sd.unwrap() - 512.0 / 2f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn one_value_has_no_spread_and_none_has_no_figures() {
        let d = describe(&[3.0]).unwrap();
        assert_eq!((d.mean, d.min, d.max), (3.0, 3.0, 3.0));
        assert_eq!((d.sd, d.ci95), (None, None));
        assert_eq!(describe(&[]), None);
        assert_eq!(Described::fields(None), <[String; 6]>::default());
        assert_eq!(Described::fields(Some(d))[1], "");
    }

    #[test]
    fn the_expansion_joins_the_table_and_tends_to_the_normal() {
        // Published 0.975 quantiles: df 31 2.0395, df 40 2.0211.
        assert!((t_975(31) - 2.0395).abs() < 1e-4, "{}", t_975(31));
        assert!((t_975(40) - 2.0211).abs() < 1e-4, "{}", t_975(40));
        // Published value t(0.975, 60) = 2.0003, t(0.975, 120) = 1.9799.
        assert!((t_975(60) - 2.0003).abs() < 1e-4, "{}", t_975(60));
        assert!((t_975(120) - 1.9799).abs() < 1e-4, "{}", t_975(120));
        assert!(t_975(31) < t_975(30) && t_975(100_000) > 1.9599);
    }
}
