//! `exponential`: capped exponential backoff, `e_k = min(cap, base · multiplier^(k-1))`.
//! Moves the waves apart but keeps every wave whole: all clients that failed together retry
//! together.

use super::Curve;
use crate::time::SimDuration;

/// `e_k` for retry `retry` (1-based).
#[inline(always)]
pub(super) fn delay<C: Curve + ?Sized>(retry: u32, curve: &C) -> SimDuration {
    curve.exponential(retry)
}
