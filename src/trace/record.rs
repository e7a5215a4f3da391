//! What the engine tells an observer about each attempt ([`Attempt`]), and the observer hook
//! itself ([`Observer`]). The engine's loops call [`Observer::attempt`] once per attempt, when
//! the attempt has ended and its client has decided what follows, behind `if O::ON`: with
//! [`NoTrace`] (every run without `--trace`) the record is never built and the call compiles
//! away. No I/O.

use super::handoff::Handoff;
use super::writer::TracePart;
use crate::time::{SimDuration, SimTime};

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The server served it.
    Served,
    /// The server refused it (a 429 or 503, a shed, an outage, a failed `occ` write).
    Refused,
    /// The client's timeout fired before any answer (call loop); on an outer layer's line,
    /// that layer's own timeout.
    TimedOut,
    /// An outer layer's attempt (a whole call of the layer below it) failed: the call below
    /// spent its retries, had one denied, or was rejected locally.
    Failed,
}

impl Outcome {
    /// The name written in the trace.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Served => "served",
            Outcome::Refused => "refused",
            Outcome::TimedOut => "timed_out",
            Outcome::Failed => "failed",
        }
    }
}

/// What the client did once the attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing more for this call: it was served.
    Done,
    /// Its strategy drew this wait before the next attempt.
    Retry(SimDuration),
    /// It gave up (retries spent, or the strategy stopped).
    GaveUp,
    /// Its retry control denied the retry (budget, breaker, throttle).
    Denied,
    /// Its tab was hidden and pauses: the wait is drawn once it is visible again.
    Paused,
    /// An outer layer's timeout abandoned the call this attempt belonged to (retry layers).
    Abandoned,
}

impl Next {
    /// The name written in the trace.
    pub const fn name(self) -> &'static str {
        match self {
            Next::Done => "done",
            Next::Retry(_) => "retry",
            Next::GaveUp => "gave_up",
            Next::Denied => "denied",
            Next::Paused => "paused",
            Next::Abandoned => "abandoned",
        }
    }
}

/// One attempt, as the engine saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The client (process) index.
    pub client: u32,
    /// The call's number within its client, from 0; `None` on the herd paths, where the
    /// trace writer counts a client's items itself.
    pub call: Option<u32>,
    /// The retry layer whose attempt this is, 0 the outermost, when the run has layers
    /// above its own policy (whose attempts, the innermost layer's, reach the server); `None`
    /// without layers.
    pub layer: Option<u16>,
    /// 0 for a call's first attempt, `k` for its `k`-th retry.
    pub attempt: u32,
    /// When the client sent it; `None` for the `occ` server's attempts (four messages, the
    /// send not kept in the event), which the trace writer recovers from the previous one.
    pub sent: Option<SimTime>,
    /// When it reached the server; `None` when it timed out before arriving.
    pub arrived: Option<SimTime>,
    /// When the client read the answer, or when its timeout fired.
    pub ended: SimTime,
    /// How it ended.
    pub outcome: Outcome,
    /// What followed.
    pub next: Next,
    /// Whether the client's tab was hidden when the attempt ended; `None` without tabs.
    pub hidden: Option<bool>,
}

/// Receives every attempt of a run, in the order the engine ends them.
pub trait Observer {
    /// False for an observer that does nothing: the engine then skips building records.
    const ON: bool;
    /// One attempt has ended.
    fn attempt(&mut self, attempt: &Attempt);
    /// An observer of the current run's clients `first..last` alone, which a worker thread
    /// fills and [`Observer::join`] takes back, when this observer can be split so (the
    /// trace writer can): the independent paths then keep their threads. `None` by default.
    fn part(&mut self, _first: u32, _last: u32) -> Option<TracePart> {
        None
    }
    /// Takes back a part made by [`Observer::part`], its clients' attempts following those
    /// told so far; parts are joined in client order.
    fn join(&mut self, _part: TracePart) {}
    /// Runs `run`, a run's loop on one thread (the call loop, the event queue), telling a
    /// [`Handoff`] whose attempts another thread tells this observer in the same order, when
    /// this observer can be told so (the trace writer can, when the run has more than one
    /// thread); else `None`, `run` not called.
    fn handing_off<R, F: FnOnce(&mut Handoff) -> R>(&mut self, _run: F) -> Option<R> {
        None
    }
}

/// The observer of every run without a trace: does nothing, costs nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Observer for NoTrace {
    const ON: bool = false;
    #[inline(always)]
    fn attempt(&mut self, _attempt: &Attempt) {}
}

impl<T: Observer + ?Sized> Observer for &mut T {
    const ON: bool = T::ON;
    #[inline(always)]
    fn attempt(&mut self, attempt: &Attempt) {
        (**self).attempt(attempt)
    }
    fn part(&mut self, first: u32, last: u32) -> Option<TracePart> {
        (**self).part(first, last)
    }
    fn join(&mut self, part: TracePart) {
        (**self).join(part)
    }
    fn handing_off<R, F: FnOnce(&mut Handoff) -> R>(&mut self, run: F) -> Option<R> {
        (**self).handing_off(run)
    }
}
