//! A herd client between requests ([`Client`]), carried in its pending event, and the three
//! type parameters that keep it small: where it keeps its previous wait ([`PreviousWait`]),
//! what its attempt is made of on the wire ([`Exchange`]) and what else it carries, with the
//! rules that read it ([`Carried`]: nothing, or its browser tab).

use crate::metrics::Tally;
use crate::rng::ClientRng;
use crate::server::{Response, Server};
use crate::time::{SimDuration, SimTime};
use crate::trace::Observer;

use super::herd_run::{FindWindow, Run};
use super::known::Known;
use super::{Latency, NetworkDelay, RunSpec};

/// A client between requests. It travels inside its pending event, so the loop never looks a
/// client up in a table (a cache miss per event at a million clients). The queue moves every
/// event two or three times, so bytes count: with [`NoWait`] and [`Single`] a client is 16
/// bytes, 24 with the event's time; only decorrelated jitter carries its previous wait (32
/// bytes with the time), and only the `occ` server's attempts their read's offset
/// ([`ReadWrite`], 8 bytes more). Without tabs it carries nothing else ([`NoTab`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Client<W, X = Single, T = NoTab> {
    pub(super) id: u32,
    /// Retries sent for the current item (reset after each success).
    pub(super) retries_made: u32,
    pub(super) rng: ClientRng,
    /// The previous wait, if the strategy reads it.
    pub(super) previous: W,
    /// What the pending attempt carries besides its time.
    pub(super) exchange: X,
    /// What else the client carries: nothing, or its browser tab.
    pub(super) carried: T,
}

/// What a client carries besides its retries, and the rules that read it: nothing
/// ([`NoTab`]), or its browser tab ([`TabState`](super::browser::herd::TabState), following
/// [`TabRules`](super::browser::TabRules)). A type parameter like the two others, so that the
/// herd paths' two loops serve runs with tabs and without, and without tabs compile to what
/// they would without the parameter: nothing carried, no rules, each event a request whose
/// answer [`Run::answer`] handles.
pub(super) trait Carried: Copy {
    /// True when nothing is carried (the loops' instances that know the rules when compiled,
    /// [`known`](super::known), are made only then).
    const NOTHING: bool;
    /// The rules every client's carried state follows, with what they count.
    type Rules;
    /// The rules of `spec`'s run.
    fn rules(spec: &RunSpec) -> Self::Rules;
    /// What client `id` of the run with `seed` carries at t = 0.
    fn open(rules: &mut Self::Rules, seed: u64, id: u32) -> Self;
    /// Handles `client`'s pending event at `time` (a request reaching the server, answered by
    /// `respond`, or another event of what it carries): returns the time of its next event,
    /// or `None` when the client is done.
    fn step<F: FindWindow, O: Observer, K: Known, W: PreviousWait, X: Exchange>(
        run: &mut Run<'_, F, O, K>,
        rules: &mut Self::Rules,
        time: SimTime,
        client: &mut Client<W, X, Self>,
        respond: impl FnOnce(SimTime, u32) -> Response,
    ) -> Option<SimTime>;
    /// Adds what `rules` counted to `tally`, once the run is finished.
    fn finish(rules: Self::Rules, tally: &mut Tally);
}

/// Nothing carried besides the retries: a client without a tab. Its rules are nothing, and
/// its step is a request answered.
#[derive(Clone, Copy, Debug)]
pub(super) struct NoTab;

impl Carried for NoTab {
    const NOTHING: bool = true;
    type Rules = NoTab;
    #[inline(always)]
    fn rules(_spec: &RunSpec) -> NoTab {
        NoTab
    }
    #[inline(always)]
    fn open(_rules: &mut NoTab, _seed: u64, _id: u32) -> Self {
        NoTab
    }
    #[inline(always)]
    fn step<F: FindWindow, O: Observer, K: Known, W: PreviousWait, X: Exchange>(
        run: &mut Run<'_, F, O, K>,
        _rules: &mut NoTab,
        time: SimTime,
        client: &mut Client<W, X, Self>,
        respond: impl FnOnce(SimTime, u32) -> Response,
    ) -> Option<SimTime> {
        let response = respond(time, client.id);
        run.answer(time, client, response)
    }
    #[inline(always)]
    fn finish(_rules: NoTab, _tally: &mut Tally) {}
}

/// Where a client keeps its previous wait (`base` before the first retry), the input of
/// decorrelated jitter. A strategy that never reads it uses [`NoWait`] and events shrink by a
/// quarter; both give the same draws because only decorrelated jitter reads the value.
pub(super) trait PreviousWait: Copy {
    /// The value before the first retry.
    fn start(base: SimDuration) -> Self;
    /// The previous wait; `base` when it is not kept.
    fn get(self, base: SimDuration) -> SimDuration;
    /// Remembers `wait`, or forgets it.
    fn set(&mut self, wait: SimDuration);
}

impl PreviousWait for SimDuration {
    #[inline(always)]
    fn start(base: SimDuration) -> Self {
        base
    }
    #[inline(always)]
    fn get(self, _base: SimDuration) -> SimDuration {
        self
    }
    #[inline(always)]
    fn set(&mut self, wait: SimDuration) {
        *self = wait;
    }
}

/// The previous wait is not kept (every strategy but decorrelated jitter).
#[derive(Clone, Copy, Debug)]
pub(super) struct NoWait;

impl PreviousWait for NoWait {
    #[inline(always)]
    fn start(_base: SimDuration) -> Self {
        NoWait
    }
    #[inline(always)]
    fn get(self, base: SimDuration) -> SimDuration {
        base
    }
    #[inline(always)]
    fn set(&mut self, _wait: SimDuration) {}
}

/// What an attempt is made of, on the wire: one request answered at its arrival ([`Single`],
/// every server but `occ`), or a read followed by a write ([`ReadWrite`], the `occ` server).
/// A type parameter, like [`PreviousWait`], so that the herd's events stay as small and its
/// loop as short as without `occ`.
pub(super) trait Exchange: Copy {
    /// True when every client's first attempt reaches the server at t = 0, so that the first
    /// attempts are answered in client order without being queued.
    const FIRST_AT_ZERO: bool;
    /// Nothing sent yet.
    fn new() -> Self;
    /// The server's answer to `client`'s attempt that reaches it at `time`.
    fn respond(self, server: &mut Server, time: SimTime, client: u32) -> Response;
    /// How long the answer takes to reach the client.
    fn answer_delay(latency: &Latency, network: &NetworkDelay, rng: &mut ClientRng) -> SimDuration;
    /// Sends an attempt at `send`: returns when it reaches the server (its event's time).
    fn send(&mut self, send: SimTime, network: &NetworkDelay, rng: &mut ClientRng) -> SimTime;
    /// When the attempt reaching the server at `arrival` was sent, if the event knows.
    fn sent(arrival: SimTime) -> Option<SimTime>;
}

/// One request, answered where it arrives; the round trip is [`Latency`], all of it counted
/// after the answer (the server answers at the arrival, the client reads it a round trip
/// later). Carries nothing.
#[derive(Clone, Copy, Debug)]
pub(super) struct Single;

impl Exchange for Single {
    const FIRST_AT_ZERO: bool = true;
    #[inline(always)]
    fn new() -> Self {
        Single
    }
    #[inline(always)]
    fn respond(self, server: &mut Server, time: SimTime, client: u32) -> Response {
        server.respond(time, client)
    }
    #[inline(always)]
    fn answer_delay(
        latency: &Latency,
        _network: &NetworkDelay,
        rng: &mut ClientRng,
    ) -> SimDuration {
        latency.draw(rng)
    }
    #[inline(always)]
    fn send(&mut self, send: SimTime, _network: &NetworkDelay, _rng: &mut ClientRng) -> SimTime {
        send
    }
    #[inline(always)]
    fn sent(arrival: SimTime) -> Option<SimTime> {
        Some(arrival)
    }
}

/// An `occ` attempt: read request, read answer and write request cross the network (three
/// draws of [`NetworkDelay`] from the client's stream, in that order, when it is sent), then
/// the write answer (a fourth, when it is answered). The event is the write's arrival `t_w`;
/// it carries how long before it the read arrived, `t_w − t_r` (the read answer's and write
/// request's delays).
#[derive(Clone, Copy, Debug)]
pub(super) struct ReadWrite {
    read_before: SimDuration,
}

impl Exchange for ReadWrite {
    const FIRST_AT_ZERO: bool = false;
    #[inline(always)]
    fn new() -> Self {
        ReadWrite {
            read_before: SimDuration::ZERO,
        }
    }
    #[inline(always)]
    fn respond(self, server: &mut Server, time: SimTime, client: u32) -> Response {
        server.respond_after_read(time, SimTime(time.0 - self.read_before.0), client)
    }
    #[inline(always)]
    fn answer_delay(
        _latency: &Latency,
        network: &NetworkDelay,
        rng: &mut ClientRng,
    ) -> SimDuration {
        network.draw(rng)
    }
    #[inline(always)]
    fn send(&mut self, send: SimTime, network: &NetworkDelay, rng: &mut ClientRng) -> SimTime {
        let read = send + network.draw(rng);
        let read_answer = network.draw(rng);
        let write = network.draw(rng);
        self.read_before = SimDuration(read_answer.0 + write.0);
        read + self.read_before
    }
    #[inline(always)]
    fn sent(_arrival: SimTime) -> Option<SimTime> {
        // Not kept in the event (it would grow every `occ` event by 8 bytes): the trace
        // writer takes it from the client's previous attempt.
        None
    }
}
