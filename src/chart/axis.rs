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

    /// The axis-space range: finite, and never empty (a degenerate axis is widened around
    /// its value by a step that survives rounding, however large the value).
    pub fn range(&self) -> std::ops::Range<f64> {
        let finite = |v: f64| {
            if v.is_nan() {
                0.0
            } else {
                v.clamp(-f64::MAX / 4.0, f64::MAX / 4.0)
            }
        };
        let (lo, hi) = (finite(self.place(self.lo)), finite(self.place(self.hi)));
        if hi > lo {
            lo..hi
        } else {
            lo..lo + lo.abs().max(1.0)
        }
    }

    /// Tick positions in axis space: about `wanted` "nice" values (1, 2, 5 × 10^k) on a linear
    /// axis; powers of ten on a log axis (with 2 and 5 between them when it spans under two
    /// decades, so a short log axis still has more than one label).
    ///
    /// Never more than [`MAX_TICKS`] + 1 ticks, whatever `wanted` and the range: the loops
    /// below run over an index range checked against that bound before they start.
    pub fn ticks(&self, wanted: usize) -> Vec<f64> {
        let range = self.range();
        let wanted = wanted.clamp(1, MAX_TICKS);
        if self.log {
            // Axis space of a log axis is log10 of an f64: within ±400 decades.
            let (a, b) = (
                range.start.floor().max(-400.0) as i32,
                range.end.ceil().min(400.0) as i32,
            );
            if i64::from(b) - i64::from(a) > 2 * wanted as i64 {
                // Far more decades than ticks wanted: a nice step of decades instead.
                return linear_ticks(range, wanted);
            }
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
            linear_ticks(range, wanted)
        }
    }

    /// The label of a tick at axis-space position `t`.
    pub fn label(&self, t: f64) -> String {
        let value = if self.log { 10f64.powf(t) } else { t };
        number(value)
    }
}

/// The most ticks an axis asks for (a tick per 8 pixels of the widest picture is 1000).
pub(crate) const MAX_TICKS: usize = 1000;

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

impl Ticked {
    /// The same coordinate with no tick but 0 (`zero`) or none: the value axis of a panel with
    /// nothing to draw, which must not read as a scale of 0 to 1.
    pub fn empty(mut self, zero: bool) -> Ticked {
        self.ticks.retain(|t| zero && *t == 0.0);
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

/// Linear ticks over axis-space `range`, a nice step apart, about `wanted` of them
/// (`1 <= wanted <= MAX_TICKS`); at most `MAX_TICKS + 1`.
fn linear_ticks(range: Range<f64>, wanted: usize) -> Vec<f64> {
    let n = wanted as f64;
    // Divided before subtracting, so the span of a range near ±f64::MAX stays finite.
    let step = nice_step(range.end / n - range.start / n);
    let first = (range.start / step).ceil();
    let last = (range.end / step + 1e-9).floor();
    // `step` is at least span / wanted, so this holds up to rounding; checked rather than
    // trusted, so no input can make the loop long.
    let count = last - first;
    if count.is_nan() || count > MAX_TICKS as f64 {
        return vec![range.start, range.end];
    }
    let (first, last) = (first as i64, last as i64);
    (first..=last).map(|i| i as f64 * step).collect()
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
    fn tick_count_is_bounded_whatever_is_asked_and_whatever_the_range() {
        // A chart once asked for ~39 million x ticks (a width below the legend's
        // wrapped around) and built them all. The bound holds for every request and range.
        let hostile = [
            (0.997, 1.003),
            (1.0, 1.0),
            (-f64::MAX, f64::MAX),
            (f64::MAX, f64::MAX),
            (-f64::MAX, -f64::MAX),
            (1e300, 1e300 * (1.0 + 1e-15)),
            (f64::MIN_POSITIVE, 2.0 * f64::MIN_POSITIVE),
            (0.0, f64::INFINITY),
            (f64::NEG_INFINITY, f64::NAN),
            (1e-300, 1e300),
        ];
        for (lo, hi) in hostile {
            for log in [false, true] {
                let axis = Axis { lo, hi, log };
                let range = axis.range();
                assert!(
                    range.start.is_finite() && range.end.is_finite() && range.end > range.start,
                    "{axis:?}: {range:?}"
                );
                for wanted in [0, 1, 2, 6, 1000, 1001, 39_000_000, usize::MAX] {
                    let ticks = axis.ticks(wanted);
                    assert!(
                        ticks.len() <= MAX_TICKS + 1,
                        "{axis:?} {wanted}: {}",
                        ticks.len()
                    );
                    if wanted <= 20 {
                        assert!(
                            ticks.len() <= 2 * wanted.max(1) + 3,
                            "{axis:?} {wanted}: {ticks:?}"
                        );
                    }
                }
            }
        }
        // Ordinary axes still get about what they ask for.
        let axis = Axis {
            lo: 0.0,
            hi: 100.0,
            log: false,
        };
        assert_eq!(axis.ticks(usize::MAX).len(), 1001);
        assert_eq!(axis.ticks(10).len(), 11);
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
