//! `capacity`: a server with finite capacity. `workers` requests are in service at once
//! (unlimited by default); the others wait in a queue of at most `queue` requests (unlimited by
//! default), taken first-in first-out or last-in first-out; beyond it a request is refused at
//! once (shed, with an optional Retry-After). A request's service time is fixed when it starts:
//! its demand (drawn by the client that sent it), plus `slowdown` for every request already in
//! service (Brooker's concurrency cost), divided by the capacity factor of a degradation.
//!
//! The server keeps no clock and schedules nothing: the engine ([`crate::engine::calls`])
//! tells it of arrivals and completions and schedules the completions it returns. Abandoned
//! work (a request whose client gave up) is still served unless `cancels` is set; then the
//! engine counts it out of the queue at the timeout ([`Capacity::cancel_waiting`]) and the
//! server skips it when its turn comes.
//!
//! Ties: requests arriving at the same time join the queue in the order the engine delivers
//! them (FIFO by scheduling order); a completion and an arrival at the same time are handled
//! in the same order, so a request arriving exactly when a worker frees takes it only if the
//! completion was scheduled first.

use std::collections::VecDeque;

use crate::policy::Hints;
use crate::time::SimDuration;
use crate::workload::Dist;

/// Which waiting request a freed worker takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueOrder {
    /// The one that waited longest.
    Fifo,
    /// The one that arrived last.
    Lifo,
}

impl QueueOrder {
    /// Both orders, the default first.
    pub const ALL: [QueueOrder; 2] = [QueueOrder::Fifo, QueueOrder::Lifo];

    /// `fifo` or `lifo`.
    pub const fn name(self) -> &'static str {
        match self {
            QueueOrder::Fifo => "fifo",
            QueueOrder::Lifo => "lifo",
        }
    }
}

/// The parameters of a capacity server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CapacityRule {
    /// Requests in service at once; `None` for unlimited.
    pub workers: Option<u32>,
    /// The service demand of a request (drawn by its client when it sends it).
    pub service: Dist,
    /// Added to a request's service time for every request in service when it starts.
    pub slowdown: SimDuration,
    /// Requests waiting for a worker at most; `None` for unlimited.
    pub queue: Option<u32>,
    /// Retry-After sent with a shed, if any.
    pub shed_retry_after: Option<SimDuration>,
    /// Which waiting request goes next.
    pub order: QueueOrder,
    /// Drop waiting requests whose client gave up.
    pub cancels: bool,
}

impl Default for CapacityRule {
    fn default() -> Self {
        CapacityRule {
            workers: None,
            service: Dist::Fixed(SimDuration::from_millis(50)),
            slowdown: SimDuration::ZERO,
            queue: None,
            shed_retry_after: None,
            order: QueueOrder::Fifo,
            cancels: false,
        }
    }
}

impl CapacityRule {
    /// Whether the server's answer to a request is known when the request arrives: first
    /// come first served, at least one worker, no queue limit, no slowdown, nothing
    /// cancelled. A request then starts on the earliest free worker (at once with unlimited
    /// workers) and its service time is fixed by its demand and the capacity factor at its
    /// start; nothing that arrives later changes either ([`Timeline`]).
    pub fn answers_at_arrival(&self) -> bool {
        self.order == QueueOrder::Fifo
            && !self.cancels
            && self.queue.is_none()
            && self.slowdown.is_zero()
            && self.workers != Some(0)
    }
}

/// When each worker of a server whose answers are known at arrival
/// ([`CapacityRule::answers_at_arrival`]) is next free: a request arriving at `t` starts at
/// the earliest of those times, or at `t` if that is later, and holds that worker until it
/// ends. The requests waiting are those whose start is still ahead; the order of a
/// completion and an arrival at one instant does not matter (a request arriving as a worker
/// frees starts then either way: at once, or taken from the queue by the completion).
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Each worker's next free time, ns (empty for unlimited workers): a binary min-heap,
    /// whose top is replaced as a request takes the earliest free worker.
    free_at: Vec<u64>,
}

impl Timeline {
    /// Every worker free from t = 0.
    pub fn new(rule: &CapacityRule) -> Self {
        let workers = rule.workers.map_or(0, |w| w as usize);
        Timeline {
            free_at: vec![0; workers],
        }
    }

    /// When a request arriving at `now` (ns) starts.
    #[inline]
    pub fn start(&self, now: u64) -> u64 {
        self.free_at.first().map_or(now, |&free| free.max(now))
    }

    /// The request starting now ([`start`](Self::start)) holds the earliest free worker
    /// until `done` (ns).
    #[inline]
    pub fn hold(&mut self, done: u64) {
        // `done` sinks from the top: no earlier than the time it replaces, it only goes down.
        let heap = &mut self.free_at[..];
        let len = heap.len();
        if len == 0 {
            return;
        }
        let mut hole = 0;
        loop {
            let mut child = 2 * hole + 1;
            if child >= len {
                break;
            }
            if child + 1 < len && heap[child + 1] < heap[child] {
                child += 1;
            }
            if heap[child] >= done {
                break;
            }
            heap[hole] = heap[child];
            hole = child;
        }
        heap[hole] = done;
    }
}

/// One request at the server: which attempt of which call, what it costs and how long its
/// answer travels back. The engine's; the server only stores and returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// The call's slot in the engine.
    pub call: u32,
    /// The attempt's number in that slot.
    pub attempt: u32,
    /// The client process that sent it.
    pub process: u32,
    /// Service demand before slowdown and degradation, nanoseconds.
    pub demand: u64,
    /// Delay of the answer back to the client, nanoseconds.
    pub back: u64,
    /// Whether the attempt is a retry.
    pub retry: bool,
    /// For the `flaky` server: whether this attempt fails (drawn when it was sent).
    pub fails: bool,
    /// The server of a pool it was routed to (0-based; 0 without a pool).
    pub server: u32,
}

/// What happens to an arriving request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Into service at once, for this long.
    Start(SimDuration),
    /// Waiting for a worker.
    Queued,
    /// Refused at once (shed).
    Shed(Hints),
}

/// A capacity server and its state.
#[derive(Clone, Debug, PartialEq)]
pub struct Capacity {
    /// Its parameters.
    pub rule: CapacityRule,
    busy: u64,
    waiting: VecDeque<Job>,
    /// Waiting requests counted out by [`Capacity::cancel_waiting`] and not yet skipped.
    cancelled: u64,
    /// Cancelled requests skipped at their turn so far.
    skipped: u64,
}

impl Capacity {
    /// An idle server.
    pub fn new(rule: CapacityRule) -> Self {
        Capacity {
            rule,
            busy: 0,
            waiting: VecDeque::new(),
            cancelled: 0,
            skipped: 0,
        }
    }

    /// Requests in the server: in service or waiting (abandoned ones included, unless
    /// cancelled).
    pub fn in_system(&self) -> u64 {
        self.busy + self.waiting.len() as u64 - self.cancelled
    }

    /// Places taken in the queue: waiting requests, cancelled ones not yet skipped included.
    pub fn queued(&self) -> u64 {
        self.waiting.len() as u64
    }

    /// Requests in service.
    pub fn busy(&self) -> u64 {
        self.busy
    }

    /// The service time of a request starting now with `demand`, under capacity `factor`.
    pub fn service_time(&self, demand: u64, factor: f64) -> SimDuration {
        let raw = demand + self.rule.slowdown.as_nanos() * self.busy;
        if factor == 1.0 {
            SimDuration(raw)
        } else {
            SimDuration(crate::workload::round_to_u64(raw as f64 / factor))
        }
    }

    /// The service time a request of `demand` arriving now would start with at once, under
    /// capacity `factor`: what [`arrive`](Self::arrive) answers when a worker is free; `None`
    /// when none is (it would wait or be shed).
    #[inline]
    pub fn service_if_free(&self, demand: u64, factor: f64) -> Option<SimDuration> {
        self.rule
            .workers
            .is_none_or(|w| self.busy < u64::from(w))
            .then(|| self.service_time(demand, factor))
    }

    /// A request arrives; `factor` is the capacity factor now.
    #[inline]
    pub fn arrive(&mut self, job: Job, factor: f64) -> Admission {
        if let Some(service) = self.service_if_free(job.demand, factor) {
            self.busy += 1;
            return Admission::Start(service);
        }
        let waiting = self.waiting.len() as u64 - self.cancelled;
        if self.rule.queue.is_some_and(|q| waiting >= u64::from(q)) {
            return Admission::Shed(Hints {
                retry_after: self.rule.shed_retry_after,
                reset_in: None,
            });
        }
        self.waiting.push_back(job);
        Admission::Queued
    }

    /// A request in service finished: its worker takes the next waiting request (skipping
    /// cancelled ones, for which `abandoned` is true), returned with its service time.
    #[inline]
    pub fn complete(
        &mut self,
        factor: f64,
        mut abandoned: impl FnMut(&Job) -> bool,
    ) -> Option<(Job, SimDuration)> {
        self.busy -= 1;
        loop {
            let job = match self.rule.order {
                QueueOrder::Fifo => self.waiting.pop_front(),
                QueueOrder::Lifo => self.waiting.pop_back(),
            }?;
            if self.rule.cancels && abandoned(&job) {
                self.cancelled -= 1;
                self.skipped += 1;
                continue;
            }
            let service = self.service_time(job.demand, factor);
            self.busy += 1;
            return Some((job, service));
        }
    }

    /// Cancelled requests dropped from the queue at their turn, unserved, so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// A waiting request's client gave up and the server cancels: it no longer counts as
    /// waiting, and will be skipped when its turn comes.
    pub fn cancel_waiting(&mut self) {
        debug_assert!(self.rule.cancels);
        self.cancelled += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(call: u32) -> Job {
        Job {
            call,
            attempt: 0,
            process: call,
            demand: 1000,
            back: 0,
            retry: false,
            fails: false,
            server: 0,
        }
    }

    #[test]
    fn workers_queue_and_shed_in_order() {
        let mut s = Capacity::new(CapacityRule {
            workers: Some(1),
            queue: Some(2),
            shed_retry_after: Some(SimDuration::from_secs(3)),
            slowdown: SimDuration(10),
            ..CapacityRule::default()
        });
        assert_eq!(s.arrive(job(0), 1.0), Admission::Start(SimDuration(1000)));
        assert_eq!(s.arrive(job(1), 1.0), Admission::Queued);
        assert_eq!(s.arrive(job(2), 1.0), Admission::Queued);
        assert!(matches!(
            s.arrive(job(3), 1.0),
            Admission::Shed(Hints { retry_after: Some(d), .. }) if d == SimDuration::from_secs(3)
        ));
        assert_eq!(s.in_system(), 3);
        // FIFO: call 1 next; nobody else in service, so no slowdown; half capacity doubles.
        assert_eq!(
            s.complete(0.5, |_| false),
            Some((job(1), SimDuration(2000)))
        );
        let mut lifo = Capacity::new(CapacityRule {
            workers: Some(1),
            order: QueueOrder::Lifo,
            ..CapacityRule::default()
        });
        for c in 0..3 {
            lifo.arrive(job(c), 1.0);
        }
        assert_eq!(lifo.complete(1.0, |_| false).map(|(j, _)| j.call), Some(2));
    }

    #[test]
    fn slowdown_counts_requests_already_in_service() {
        let mut s = Capacity::new(CapacityRule {
            slowdown: SimDuration(10),
            ..CapacityRule::default()
        });
        let times: Vec<_> = (0..3).map(|c| s.arrive(job(c), 1.0)).collect();
        assert_eq!(
            times,
            [1000, 1010, 1020].map(|d| Admission::Start(SimDuration(d)))
        );
    }

    #[test]
    fn cancelled_requests_leave_the_count_at_once_and_the_queue_at_their_turn() {
        let mut s = Capacity::new(CapacityRule {
            workers: Some(1),
            queue: Some(1),
            cancels: true,
            ..CapacityRule::default()
        });
        s.arrive(job(0), 1.0);
        s.arrive(job(1), 1.0);
        s.cancel_waiting();
        assert_eq!(s.in_system(), 1);
        // The queue has room again.
        assert_eq!(s.arrive(job(2), 1.0), Admission::Queued);
        let next = s.complete(1.0, |j| j.call == 1).map(|(j, _)| j.call);
        assert_eq!(next, Some(2));
        assert_eq!(s.in_system(), 1);
    }
}
