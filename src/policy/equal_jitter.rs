//! `equal-jitter`: `e_k/2 + U(0, e_k/2)`. Keeps at least half the backoff, so it spreads each
//! wave over half the interval of full jitter: taller peaks, as published.

use rand::RngCore;

use super::Curve;
use crate::rng::uniform_below;
use crate::time::SimDuration;

/// `⌊e_k/2⌋` plus a uniform draw in `[0, e_k − ⌊e_k/2⌋)`, so the result stays below `e_k`.
#[inline(always)]
pub(super) fn delay<C: Curve + ?Sized, R: RngCore + ?Sized>(
    retry: u32,
    curve: &C,
    rng: &mut R,
) -> SimDuration {
    // Before the cap, `e` is the uncapped curve and the sum is clamped.
    let e = curve.jitter_ceiling(retry).as_nanos();
    let half = e / 2;
    SimDuration((half + uniform_below(rng, e - half)).min(curve.backoff().cap.as_nanos()))
}
