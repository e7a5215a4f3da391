//! `reset-aware`: sleep until the announced `X-RateLimit-Reset`; without it, sleep
//! `Retry-After`; without either, back off exponentially. Capped like every strategy.

use super::{Backoff, Hints};
use crate::time::SimDuration;

/// Time to the reset, else `Retry-After`, else `e_k`; never above the cap.
#[inline(always)]
pub(super) fn delay(retry: u32, hints: &Hints, backoff: &Backoff) -> SimDuration {
    hints
        .reset_in
        .or(hints.retry_after)
        .unwrap_or_else(|| backoff.exponential(retry))
        .min(backoff.cap)
}
