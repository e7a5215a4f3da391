//! `retry-after-jitter`: `Retry-After` as a floor with full jitter on top,
//! `Retry-After + U(0, e_k)` — Experiment 1's advice for a header sent to many clients at once.
//! Without the header it is plain full jitter. Capped like every strategy (the cap wins over
//! the floor).

use rand::RngCore;

use super::{Curve, Hints};
use crate::rng::uniform_below;
use crate::time::SimDuration;

/// `Retry-After` (zero when absent) plus a uniform draw below `e_k`, capped.
#[inline(always)]
pub(super) fn delay<C: Curve + ?Sized, R: RngCore + ?Sized>(
    retry: u32,
    hints: &Hints,
    curve: &C,
    rng: &mut R,
) -> SimDuration {
    let floor = hints.retry_after.unwrap_or(SimDuration::ZERO);
    let jitter = SimDuration(uniform_below(rng, curve.jitter_ceiling(retry).as_nanos()));
    (floor + jitter).min(curve.backoff().cap)
}
