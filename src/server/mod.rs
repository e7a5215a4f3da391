//! Server models: small state machines that answer each arriving request with "served" or
//! "refused, with these headers". One file per model, one arm of [`Server`] each.
//!
//! A model sees only the arrival time and the client; it never schedules anything, draws no
//! random numbers and does no I/O, so the engine alone owns time.

mod down;

pub use down::Down;

use crate::policy::Hints;
use crate::time::SimTime;

/// The server's answer to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// The request succeeded.
    Served,
    /// The request was refused; the hints are what the client can read of the refusal.
    Refused(Hints),
}

/// A modelled server.
#[derive(Clone, Debug, PartialEq)]
pub enum Server {
    /// Down from the start; optionally serving from a recovery time on.
    Down(Down),
}

impl Server {
    /// Answers a request from `client` arriving at `now`.
    #[inline]
    pub fn respond(&mut self, now: SimTime, client: u32) -> Response {
        match self {
            Server::Down(down) => down.respond(now, client),
        }
    }

    /// True when one client's answers cannot depend on another's requests, so clients may be
    /// simulated one after another instead of through the shared event queue.
    pub fn clients_independent(&self) -> bool {
        match self {
            Server::Down(_) => true,
        }
    }
}
