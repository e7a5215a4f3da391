//! `sliding-window`: a log of admitted times per key; a request is admitted when fewer than
//! `limit` were admitted in the last `window`. The allowance returns one request at a time, as
//! each logged request leaves the window, so a client that waits for the oldest to leave gets
//! exactly one more. Refusals announce the instant the oldest entry leaves.
//!
//! Storage is one ring of `limit` wall times per key in a single flat buffer (8 · limit bytes
//! a key, allocated once in `prepare`); an answer costs O(1) amortised. No I/O, no randomness.

use super::clock::Refusal;
use crate::time::SimDuration;

/// The parameters of a sliding window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlidingWindowRule {
    /// Requests admitted in any window of length `window`; at least 1.
    pub limit: u32,
    /// The window; positive.
    pub window: SimDuration,
}

/// A sliding-window limiter over a table of keys.
#[derive(Clone, Debug, PartialEq)]
pub struct SlidingWindow {
    /// The rule.
    pub rule: SlidingWindowRule,
    /// `limit` admitted wall times per key, as rings.
    log: Vec<u64>,
    /// Per key: index of the oldest entry in its ring, and how many entries it holds.
    rings: Vec<(u32, u32)>,
}

impl SlidingWindow {
    /// A limiter with no key seen yet.
    pub fn new(rule: SlidingWindowRule) -> Self {
        SlidingWindow {
            rule,
            log: Vec::new(),
            rings: Vec::new(),
        }
    }

    /// Makes room for `keys` keys, all with empty logs.
    pub fn prepare(&mut self, keys: usize) {
        self.log = vec![0; keys * self.rule.limit as usize];
        self.rings = vec![(0, 0); keys];
    }

    /// Admits (`Ok`) or refuses a request for `key` at wall time `wall`.
    #[inline(always)]
    pub fn admit(&mut self, wall: u64, key: usize) -> Result<(), Refusal> {
        let limit = self.rule.limit;
        let window = self.rule.window.as_nanos();
        let ring = &mut self.log[key * limit as usize..(key + 1) * limit as usize];
        let (head, len) = &mut self.rings[key];
        // Entries admitted at or before wall − window have left.
        while *len > 0 && ring[*head as usize].saturating_add(window) <= wall {
            *head = (*head + 1) % limit;
            *len -= 1;
        }
        if *len < limit {
            ring[((*head + *len) % limit) as usize] = wall;
            *len += 1;
            return Ok(());
        }
        let available_at = ring[*head as usize].saturating_add(window);
        Err(Refusal::at(available_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::clock::{hint_millis, HeaderStyle, Headers, WallClock};
    use crate::time::SimTime;

    const MS: u64 = 1_000_000;

    #[test]
    fn allowance_returns_as_each_admitted_request_leaves() {
        // Limit 3 per 10 s, phase 0.5 s. Requests at t = 0, 1, 2, 3, 9.8, 10.2, 10.6, 11.5 s.
        // Admitted: 0, 1, 2 (log 0.5, 1.5, 2.5 wall). t=3 (wall 3.5): refused, oldest leaves
        // at 10.5: Retry-After floor(10.5) - floor(3.5) = 7 s, reset 10 s → 6.5 s away.
        // t=9.8 (wall 10.3): refused, same oldest: Retry-After 10 - 10 = 0, reset past.
        // t=10.2 (wall 10.7): 0.5 left, admitted (log 1.5, 2.5, 10.7).
        // t=10.6 (wall 11.1): 1.5 left at 11.5 → refused, Retry-After 11 - 11 = 0.
        // t=11.5 (wall 12.0): 1.5 gone at 11.5, admitted.
        let mut limiter = SlidingWindow::new(SlidingWindowRule {
            limit: 3,
            window: SimDuration::from_secs(10),
        });
        limiter.prepare(2);
        let headers = Headers {
            clock: WallClock {
                phase: SimDuration::from_millis(500),
            },
            style: HeaderStyle::WholeSeconds,
            visible: true,
        };
        let answers: Vec<Option<(u64, u64)>> = [0, 1000, 2000, 3000, 9800, 10_200, 10_600, 11_500]
            .into_iter()
            .map(|ms| {
                let now = SimTime(ms * MS);
                limiter
                    .admit(headers.clock.wall(now), 1)
                    .err()
                    .map(|r| hint_millis(headers.hints(now, r)))
            })
            .collect();
        assert_eq!(
            answers,
            [
                None,
                None,
                None,
                Some((7000, 6500)),
                Some((0, 0)),
                None,
                Some((0, 0)),
                None
            ]
        );
        // Key 0 is untouched by key 1.
        assert!(limiter.admit(headers.clock.wall(SimTime(0)), 0).is_ok());
    }
}
