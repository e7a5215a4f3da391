//! One numeric axis, linear or base-10 logarithmic, and its tick marks. Charts plot in "axis
//! space" (the value itself, or its log10) on plain f64 coordinates, with the ticks chosen
//! here as key points, so linear and log charts share one coordinate type and one drawing path.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};

/// A numeric axis from `lo` to `hi` (in data units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Axis {
    /// Lowest value shown (data units; positive when `log`).
    pub lo: f64,
    /// Highest value shown (data units).
    pub hi: f64,
    /// Base-10 logarithmic when true.
    pub log: bool,
}

impl Axis {
    /// The axis-space position of a data value.
    pub fn place(&self, value: f64) -> f64 {
        if self.log {
            value.max(f64::MIN_POSITIVE).log10()
        } else {
            value
        }
    }

    /// The axis-space range.
    pub fn range(&self) -> std::ops::Range<f64> {
        let (lo, hi) = (self.place(self.lo), self.place(self.hi));
        if hi > lo {
            lo..hi
        } else {
            lo..lo + 1.0
        }
    }

    /// Tick positions in axis space: about `wanted` "nice" values (1, 2, 5 × 10^k) on a linear
    /// axis; powers of ten on a log axis (with 2 and 5 between them when it spans under two
    /// decades, so a short log axis still has more than one label).
    pub fn ticks(&self, wanted: usize) -> Vec<f64> {
        let range = self.range();
        if self.log {
            let (a, b) = (range.start.floor() as i32, range.end.ceil() as i32);
            let multiples: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let mut ticks = Vec::new();
            for power in a..=b {
                for m in multiples {
                    let t = (m * 10f64.powi(power)).log10();
                    if t >= range.start - 1e-9 && t <= range.end + 1e-9 {
                        ticks.push(t);
                    }
                }
            }
            ticks
        } else {
            let step = nice_step((range.end - range.start) / wanted.max(1) as f64);
            let first = (range.start / step).ceil() as i64;
            let last = (range.end / step + 1e-9).floor() as i64;
            (first..=last).map(|i| i as f64 * step).collect()
        }
    }

    /// The label of a tick at axis-space position `t`.
    pub fn label(&self, t: f64) -> String {
        let value = if self.log { 10f64.powf(t) } else { t };
        number(value)
    }
}

/// An [`Axis`] as a plotters coordinate: maps axis space linearly to pixels, offers exactly
/// the axis's ticks as key points (no light grid lines) and labels them in data units.
pub(crate) struct Ticked {
    axis: Axis,
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    /// The coordinate of `axis` with about `wanted` ticks.
    pub fn new(axis: Axis, wanted: usize) -> Ticked {
        Ticked {
            axis,
            range: axis.range(),
            ticks: axis.ticks(wanted),
        }
    }
}

impl Ticked {
    /// The same coordinate without fractional ticks on a linear axis: counts are whole, so an
    /// axis of a few requests reads 0, 1, 2 rather than 0, 0.5, 1. Ticks of 1 and up are whole
    /// already and stay as they are.
    pub fn whole_numbers(mut self) -> Ticked {
        if !self.axis.log {
            self.ticks.retain(|t| t.fract() == 0.0);
        }
        self
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = NoDefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = (value - self.range.start) / (self.range.end - self.range.start);
        let pixel = f64::from(limit.0) + fraction * f64::from(limit.1 - limit.0);
        // Clamped so a far-off value cannot overflow the backend's i32 coordinates.
        pixel.round().clamp(-1e6, 1e6) as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format(value: &f64) -> String {
        number(*value)
    }

    fn format_ext(&self, value: &f64) -> String {
        self.axis.label(*value)
    }
}

/// A step of 1, 2 or 5 × 10^k, the smallest not below `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * magnitude >= raw * (1.0 - 1e-9) {
            return m * magnitude;
        }
    }
    10.0 * magnitude
}

/// A number for a tick label: whole numbers in full up to ten million (so one axis never
/// mixes `8000` and `10k`), beyond that in exponent form (`2.5e7`); fractions with up to
/// three decimals, trailing zeros dropped.
pub(crate) fn number(value: f64) -> String {
    let rounded = (value * 1e6).round() / 1e6;
    if rounded.abs() >= 1e7 {
        return format!("{rounded:e}");
    }
    if rounded.fract() == 0.0 {
        return format!("{}", rounded as i64);
    }
    let text = format!("{rounded:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_inside() {
        let axis = Axis {
            lo: 0.0,
            hi: 1150.0,
            log: false,
        };
        assert_eq!(axis.ticks(4), [0.0, 500.0, 1000.0]);
        let axis = Axis {
            lo: 0.0,
            hi: 14.5,
            log: false,
        };
        assert_eq!(axis.ticks(6), [0.0, 5.0, 10.0]);
    }

    #[test]
    fn log_ticks_are_powers_of_ten() {
        let axis = Axis {
            lo: 0.5,
            hi: 8000.0,
            log: true,
        };
        let labels: Vec<String> = axis.ticks(4).iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["1", "10", "100", "1000"]);
        let short = Axis {
            lo: 1.0,
            hi: 40.0,
            log: true,
        };
        let labels: Vec<String> = short.ticks(4).iter().map(|&t| short.label(t)).collect();
        assert_eq!(labels, ["1", "2", "5", "10", "20"]);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(number(1000.0), "1000");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(25000.0), "25000");
        assert_eq!(number(25_000_000.0), "2.5e7");
        assert_eq!(number(2.0000001), "2");
    }
}
