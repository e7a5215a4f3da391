//! `decorrelated-jitter` (Brooker 2015): `d_k = min(cap, U(base, 3 · d_{k-1}))`, `d_0 = base`.
//! Each wait grows from the previous one rather than from the retry number, so clients drift
//! apart and keep drifting.

use rand::RngCore;

use super::Backoff;
use crate::rng::uniform_below;
use crate::time::SimDuration;

/// A uniform draw in `[base, 3 · previous)`, capped. A previous wait below `base` (possible only
/// when a server hint set it) counts as `base`.
#[inline(always)]
pub(super) fn delay<R: RngCore + ?Sized>(
    previous: SimDuration,
    backoff: &Backoff,
    rng: &mut R,
) -> SimDuration {
    let base = backoff.base.as_nanos();
    let previous = previous.as_nanos().max(base);
    let top = previous.saturating_mul(3);
    let drawn = base + uniform_below(rng, top - base);
    SimDuration(drawn.min(backoff.cap.as_nanos()))
}
