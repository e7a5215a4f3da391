//! `reset-aware`: sleep until the announced `X-RateLimit-Reset`; without it, sleep
//! `Retry-After`; without either, back off exponentially. Capped like every strategy.

use super::{Curve, Hints};
use crate::time::SimDuration;

/// Time to the reset, else `Retry-After`, else `e_k`; never above the cap.
#[inline(always)]
pub(super) fn delay<C: Curve + ?Sized>(retry: u32, hints: &Hints, curve: &C) -> SimDuration {
    hints
        .reset_in
        .or(hints.retry_after)
        .unwrap_or_else(|| curve.exponential(retry))
        .min(curve.backoff().cap)
}
