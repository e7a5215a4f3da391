//! `retry-after`: sleep what the server's `Retry-After` says; when it sends none (or the client
//! cannot read it), back off exponentially. Capped like every strategy.

use super::{Backoff, Hints};
use crate::time::SimDuration;

/// `Retry-After` if present, else `e_k`; never above the cap.
#[inline(always)]
pub(super) fn delay(retry: u32, hints: &Hints, backoff: &Backoff) -> SimDuration {
    hints
        .retry_after
        .unwrap_or_else(|| backoff.exponential(retry))
        .min(backoff.cap)
}
