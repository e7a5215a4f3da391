//! The backoff curve every strategy draws from: its shape ([`Backoff`]: base, cap, multiplier
//! and where jitter meets the cap), the curve's values by retry ([`Curve`]), and the table of
//! them a run works out once ([`CurveTable`]).

use crate::time::SimDuration;

/// The shape of the backoff curve: `e_k = min(cap, base · multiplier^(k-1))`. The cap
/// (`--cap`, also spelled `--max-delay`) bounds every strategy's wait, header-reading ones too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The first delay, and the floor of decorrelated jitter.
    pub base: SimDuration,
    /// No delay exceeds this.
    pub cap: SimDuration,
    /// Growth per retry; at least 1.
    pub multiplier: f64,
    /// Whether a jittered strategy draws below the capped curve or caps its draw.
    pub jitter_order: JitterOrder,
}

impl Backoff {
    /// The multiplier when none is given (`--multiplier`).
    pub const DEFAULT_MULTIPLIER: f64 = 2.0;
}

/// Where a jittered strategy applies the cap (`--jitter-order`). Real clients do both: AWS's
/// "Exponential Backoff And Jitter" caps the curve and draws below it (`after-cap`, the
/// default), while many libraries draw below the uncapped curve and clamp the result
/// (`before-cap`), so that once the curve passes the cap most draws become the cap itself
/// and the fleet retries in lockstep. Decorrelated jitter always clamps its draw
/// (`min(cap, U(base, 3 · previous))`, Brooker 2015) and is the same under both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JitterOrder {
    /// Draw below `e_k = min(cap, base · multiplier^(k-1))`.
    #[default]
    AfterCap,
    /// Draw below `base · multiplier^(k-1)`, then clamp at the cap.
    BeforeCap,
}

impl JitterOrder {
    /// Every order, the default first.
    pub const ALL: [JitterOrder; 2] = [JitterOrder::AfterCap, JitterOrder::BeforeCap];

    /// The name `--jitter-order` takes.
    pub const fn name(self) -> &'static str {
        match self {
            JitterOrder::AfterCap => "after-cap",
            JitterOrder::BeforeCap => "before-cap",
        }
    }
}

impl Backoff {
    /// `e_k = min(cap, base · multiplier^(k-1))` for retry `k ≥ 1`, in whole nanoseconds.
    ///
    /// Computed by repeated multiplication that stops at the cap, so it is exact for integer
    /// multipliers (1 s · 2^3 is exactly 8 s) and never overflows. Doubling, the usual
    /// multiplier, is a shift, inlined into the engine's loops; other multipliers multiply.
    #[inline(always)]
    pub fn exponential(&self, retry: u32) -> SimDuration {
        if self.multiplier == 2.0 {
            let cap = self.cap.as_nanos();
            let base = self.base.as_nanos().min(cap);
            let shift = retry.saturating_sub(1);
            let grown = if shift >= 64 || base.leading_zeros() < shift {
                u64::MAX
            } else {
                base << shift
            };
            return SimDuration(grown.min(cap));
        }
        exponential_multiplied(
            self.base.as_nanos(),
            self.cap.as_nanos(),
            self.multiplier,
            retry,
        )
    }

    /// The top of a jittered strategy's draw for retry `k`: [`Backoff::exponential`] after the
    /// cap, the uncapped `base · multiplier^(k-1)` (saturating) before it. The caller clamps
    /// its draw at the cap.
    #[inline(always)]
    pub fn jitter_ceiling(&self, retry: u32) -> SimDuration {
        match self.jitter_order {
            JitterOrder::AfterCap => self.exponential(retry),
            JitterOrder::BeforeCap => Backoff {
                cap: SimDuration(u64::MAX),
                ..*self
            }
            .exponential(retry),
        }
    }
}

/// [`Backoff::exponential`] for a multiplier other than 2, of a backoff from `base` capped at
/// `cap` (nanoseconds). Not inlined, and given numbers rather than the [`Backoff`], so that a
/// loop holding the backoff keeps what lies beside it in registers.
#[inline(never)]
fn exponential_multiplied(base: u64, cap: u64, multiplier: f64, retry: u32) -> SimDuration {
    let base = base.min(cap);
    let mut value = base as f64;
    for _ in 1..retry {
        value *= multiplier;
        if value >= cap as f64 {
            return SimDuration(cap);
        }
    }
    SimDuration((value as u64).min(cap))
}

/// Where a strategy reads its curve: [`Backoff`] works each value out when asked; a
/// [`CurveTable`] reads the first retries' values from a table made once for a run, so that
/// the engine's loops, which ask at every refusal, do not work them out again each time.
pub trait Curve {
    /// The backoff whose curve this is.
    fn backoff(&self) -> &Backoff;
    /// [`Backoff::exponential`] of retry `retry`.
    fn exponential(&self, retry: u32) -> SimDuration;
    /// [`Backoff::jitter_ceiling`] of retry `retry`.
    fn jitter_ceiling(&self, retry: u32) -> SimDuration;
}

impl Curve for Backoff {
    #[inline(always)]
    fn backoff(&self) -> &Backoff {
        self
    }
    #[inline(always)]
    fn exponential(&self, retry: u32) -> SimDuration {
        Backoff::exponential(self, retry)
    }
    #[inline(always)]
    fn jitter_ceiling(&self, retry: u32) -> SimDuration {
        Backoff::jitter_ceiling(self, retry)
    }
}

/// Retries a [`CurveTable`] holds the curve of (retry 0 is never asked about).
const TABLED_RETRIES: usize = 16;

/// A backoff's curve worked out once for the first `TABLED_RETRIES` retries (later ones are
/// worked out when asked, as [`Backoff`] does): the same values, read from a table.
#[derive(Clone, Copy, Debug)]
pub struct CurveTable {
    backoff: Backoff,
    exponential: [SimDuration; TABLED_RETRIES],
    jitter_ceiling: [SimDuration; TABLED_RETRIES],
}

impl CurveTable {
    /// The table of `backoff`'s curve.
    pub fn new(backoff: Backoff) -> Self {
        CurveTable {
            backoff,
            exponential: std::array::from_fn(|k| backoff.exponential(k as u32)),
            jitter_ceiling: std::array::from_fn(|k| backoff.jitter_ceiling(k as u32)),
        }
    }
}

impl Curve for CurveTable {
    #[inline(always)]
    fn backoff(&self) -> &Backoff {
        &self.backoff
    }
    #[inline(always)]
    fn exponential(&self, retry: u32) -> SimDuration {
        match self.exponential.get(retry as usize) {
            Some(&e) => e,
            None => self.backoff.exponential(retry),
        }
    }
    #[inline(always)]
    fn jitter_ceiling(&self, retry: u32) -> SimDuration {
        match self.jitter_ceiling.get(retry as usize) {
            Some(&e) => e,
            None => self.backoff.jitter_ceiling(retry),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Policy, Strategy};

    #[test]
    fn a_curve_table_reads_what_the_backoff_works_out() {
        let b = Policy::experiment1(Strategy::Exponential).backoff;
        let nanos = |s: u64| SimDuration(s);
        for backoff in [
            b,
            Backoff {
                jitter_order: JitterOrder::BeforeCap,
                ..b
            },
            Backoff {
                multiplier: 1.5,
                ..b
            },
            Backoff {
                multiplier: 3.0,
                jitter_order: JitterOrder::BeforeCap,
                ..b
            },
            // Doubling past 2^64 before the cap, and a base above the cap.
            Backoff {
                base: nanos(1 << 60),
                cap: nanos(u64::MAX),
                ..b
            },
            Backoff {
                base: nanos(50),
                cap: nanos(20),
                ..b
            },
        ] {
            let table = CurveTable::new(backoff);
            for retry in 0..=TABLED_RETRIES as u32 + 3 {
                assert_eq!(
                    Curve::exponential(&table, retry),
                    backoff.exponential(retry),
                    "{backoff:?} retry {retry}"
                );
                assert_eq!(
                    Curve::jitter_ceiling(&table, retry),
                    backoff.jitter_ceiling(retry),
                    "{backoff:?} retry {retry}"
                );
            }
        }
    }
}
