//! `occ`: one row under optimistic concurrency control, the contention model of Brooker's
//! 2015 "Exponential Backoff And Jitter" (AWS Architecture Blog) and its simulator
//! (`aws-samples/aws-arch-backoff-simulator`, `OccServer`). A client's attempt reads the row's
//! version, then writes carrying it; the write succeeds, and bumps the version, only if the
//! version is still the one read.
//!
//! The server never sees the read as an event. The engine schedules an attempt at its write's
//! arrival `t_w` and says when its read arrived (`t_r`); writes are answered in time order
//! (FIFO among equal times, the queue's one tie rule), so the version changed between the read
//! and the write exactly when a successful write arrived in `(t_r, t_w]`, and it is enough to
//! keep the time of the last successful write.
//!
//! **Tie rule at the read:** a successful write arriving at exactly `t_r` is seen by the read
//! (the read comes after it), so it does not fail the attempt. Ties at the write follow the
//! queue: of two writes arriving together, the one scheduled first is answered first.

use crate::policy::Hints;
use crate::server::Response;
use crate::time::SimTime;

/// The row: when its version last changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Occ {
    /// Arrival time of the last successful write; `None` before any.
    pub last_write: Option<SimTime>,
}

impl Occ {
    /// Answers a write arriving at `now` whose read arrived at `read_at` (at or before `now`):
    /// served, and the version bumped, unless a successful write arrived after the read.
    /// Refusals carry no headers.
    #[inline(always)]
    pub fn write(&mut self, now: SimTime, read_at: SimTime) -> Response {
        match self.last_write {
            Some(last) if last > read_at => Response::Refused(Hints::default()),
            _ => {
                self.last_write = Some(now);
                Response::Served
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_fails_exactly_when_another_succeeded_after_its_read() {
        let mut row = Occ::default();
        // First write ever: nothing changed the version.
        assert_eq!(row.write(SimTime(30), SimTime(10)), Response::Served);
        // Read at 10 (version 0), write at 31: the write at 30 changed it.
        assert!(matches!(
            row.write(SimTime(31), SimTime(10)),
            Response::Refused(_)
        ));
        // A failed write changes nothing: a read at 30 saw the write at 30 (tie rule).
        assert_eq!(row.write(SimTime(40), SimTime(30)), Response::Served);
        // Two writes at the same instant read before it: the first answered wins.
        assert!(matches!(
            row.write(SimTime(40), SimTime(35)),
            Response::Refused(_)
        ));
        assert_eq!(row.last_write, Some(SimTime(40)));
    }
}
