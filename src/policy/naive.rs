//! `naive`: retry at once. The baseline every other strategy is measured against.

use crate::time::SimDuration;

/// Always zero.
#[inline(always)]
pub(super) fn delay() -> SimDuration {
    SimDuration::ZERO
}
