//! `down`: a server that refuses everything, optionally until a recovery time after which it
//! serves everything. Experiment 1's server. Stateless, so clients cannot affect each other.

use crate::policy::Hints;
use crate::server::Response;
use crate::time::SimTime;

/// Refuses every request before `recover_at` (forever when `None`), serves every one after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Down {
    /// From this time on (inclusive) the server serves.
    pub recover_at: Option<SimTime>,
}

impl Down {
    /// Served exactly when the server has recovered by `now`. Sends no headers.
    #[inline(always)]
    pub fn respond(&self, now: SimTime, _client: u32) -> Response {
        match self.recover_at {
            Some(at) if now >= at => Response::Served,
            _ => Response::Refused(Hints::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_is_inclusive() {
        let down = Down {
            recover_at: Some(SimTime(20)),
        };
        assert!(matches!(down.respond(SimTime(19), 0), Response::Refused(_)));
        assert_eq!(down.respond(SimTime(20), 0), Response::Served);
        let forever = Down::default();
        assert!(matches!(
            forever.respond(SimTime(u64::MAX), 0),
            Response::Refused(_)
        ));
    }
}
