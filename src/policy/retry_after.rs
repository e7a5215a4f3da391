//! `retry-after`: sleep what the server's `Retry-After` says; when it sends none (or the client
//! cannot read it), back off exponentially. Capped like every strategy.

use super::{Curve, Hints};
use crate::time::SimDuration;

/// `Retry-After` if present, else `e_k`; never above the cap.
#[inline(always)]
pub(super) fn delay<C: Curve + ?Sized>(retry: u32, hints: &Hints, curve: &C) -> SimDuration {
    hints
        .retry_after
        .unwrap_or_else(|| curve.exponential(retry))
        .min(curve.backoff().cap)
}
