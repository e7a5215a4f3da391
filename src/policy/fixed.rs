//! `fixed`: the same wait, `base`, before every retry.

use super::Backoff;
use crate::time::SimDuration;

/// `base`, whatever the retry number (not capped: a fixed delay is what the user asked for).
#[inline(always)]
pub(super) fn delay(backoff: &Backoff) -> SimDuration {
    backoff.base
}
