//! `full-jitter`: `U(0, e_k)`, uniform over whole nanoseconds in `[0, e_k)` (AWS Architecture
//! Blog, "Exponential Backoff And Jitter", 2015). Spreads each wave over its whole interval.

use rand::RngCore;

use super::Curve;
use crate::rng::uniform_below;
use crate::time::SimDuration;

/// A uniform draw below the exponential delay of retry `retry` (1-based), or below the
/// uncapped curve and then clamped, with [`super::JitterOrder::BeforeCap`].
#[inline(always)]
pub(super) fn delay<C: Curve + ?Sized, R: RngCore + ?Sized>(
    retry: u32,
    curve: &C,
    rng: &mut R,
) -> SimDuration {
    let drawn = uniform_below(rng, curve.jitter_ceiling(retry).as_nanos());
    SimDuration(drawn.min(curve.backoff().cap.as_nanos()))
}
