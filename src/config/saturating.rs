//! [`Sat`]: the number type of the up-front estimates (bytes, events, requests, instants).
//! Every sum and product stops at `u128::MAX` instead of wrapping, and a float becomes the
//! nearest whole number at or above it, `u128::MAX` past it (NaN: `u128::MAX`), so an
//! absurd input makes an estimate too big to run, never a small one. No I/O.

use std::ops::{Add, Div, Mul, Sub};

/// A whole number that saturates at `u128::MAX`: `+`, `*` and `-` (at 0) never wrap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sat(pub u128);

impl Sat {
    /// Zero.
    pub const ZERO: Sat = Sat(0);
    /// The largest value: what every overflow becomes.
    pub const MAX: Sat = Sat(u128::MAX);

    /// `x` rounded up to a whole number; `u128::MAX` past it or for NaN, 0 below 0.
    pub fn ceil(x: f64) -> Sat {
        if x.is_nan() {
            return Sat::MAX;
        }
        // A float cast saturates at both ends.
        Sat(x.ceil() as u128)
    }

    /// The value, at most `u64::MAX`.
    pub fn to_u64(self) -> u64 {
        self.0.min(u128::from(u64::MAX)) as u64
    }

    /// The smaller of the two.
    pub fn min(self, other: Sat) -> Sat {
        Sat(self.0.min(other.0))
    }

    /// The larger of the two.
    pub fn max(self, other: Sat) -> Sat {
        Sat(self.0.max(other.0))
    }

    /// `self / d` rounded up (`d` of 0 counts as 1).
    pub fn div_ceil(self, d: Sat) -> Sat {
        Sat(self.0.div_ceil(d.0.max(1)))
    }

    /// As a float (for ratios in messages).
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Sat {
            fn from(n: $t) -> Sat {
                Sat(n as u128)
            }
        }
    )*};
}
from_unsigned!(u8, u16, u32, u64, u128, usize);

impl Add for Sat {
    type Output = Sat;
    fn add(self, other: Sat) -> Sat {
        Sat(self.0.saturating_add(other.0))
    }
}

impl Mul for Sat {
    type Output = Sat;
    fn mul(self, other: Sat) -> Sat {
        Sat(self.0.saturating_mul(other.0))
    }
}

impl Sub for Sat {
    type Output = Sat;
    fn sub(self, other: Sat) -> Sat {
        Sat(self.0.saturating_sub(other.0))
    }
}

/// Rounds down; a divisor of 0 counts as 1.
impl Div for Sat {
    type Output = Sat;
    fn div(self, other: Sat) -> Sat {
        Sat(self.0 / other.0.max(1))
    }
}

macro_rules! with_u128 {
    ($($op:ident $f:ident),*) => {$(
        impl $op<u128> for Sat {
            type Output = Sat;
            fn $f(self, other: u128) -> Sat {
                self.$f(Sat(other))
            }
        }
        impl $op<Sat> for u128 {
            type Output = Sat;
            fn $f(self, other: Sat) -> Sat {
                Sat(self).$f(other)
            }
        }
    )*};
}
with_u128!(Add add, Mul mul, Sub sub, Div div);

impl std::iter::Sum for Sat {
    fn sum<I: Iterator<Item = Sat>>(iter: I) -> Sat {
        iter.fold(Sat::ZERO, |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_products_stop_at_the_top_and_floats_round_up() {
        assert_eq!(Sat::MAX + 1, Sat::MAX);
        assert_eq!(Sat(u128::MAX / 2 + 1) * 2, Sat::MAX);
        assert_eq!(Sat(3) - 5, Sat::ZERO);
        assert_eq!(Sat(7) * 6 + 1, Sat(43));
        assert_eq!(Sat(7).div_ceil(Sat(2)), Sat(4));
        assert_eq!(Sat(7) / 0, Sat(7));
        assert_eq!(Sat::ceil(2.1), Sat(3));
        assert_eq!(Sat::ceil(1e50), Sat::MAX);
        assert_eq!(Sat::ceil(f64::INFINITY), Sat::MAX);
        assert_eq!(Sat::ceil(f64::NAN), Sat::MAX);
        assert_eq!(Sat::ceil(-3.0), Sat::ZERO);
        assert_eq!(Sat::MAX.to_u64(), u64::MAX);
        assert_eq!([Sat(1), Sat::MAX].into_iter().sum::<Sat>(), Sat::MAX);
    }
}
