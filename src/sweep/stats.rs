//! What `--aggregate` writes for one metric over a cell's seeds: mean, sample standard
//! deviation, min, max and a 95 % confidence interval of the mean (Student's t). Pure
//! arithmetic, in seed order, so the figures are the same on any thread count. No I/O.

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
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (sd, ci95) = if n < 2 {
        (None, None)
    } else {
        let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
        let sd = (squares / (n - 1) as f64).sqrt();
        let half = t_975(n as u64 - 1) * sd / (n as f64).sqrt();
        (Some(sd), Some((mean - half, mean + half)))
    };
    Some(Described {
        mean,
        sd,
        min,
        max,
        ci95,
    })
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
