//! The event queue: pending client attempts ordered by simulated time.
//!
//! **Tie rule (the only one in the simulator):** events at equal times come out in the order
//! they were pushed (FIFO). The engine pushes every client's first attempt in client-id order,
//! so at t = 0 client 0 goes first; after that, an event scheduled earlier goes earlier.
//!
//! The implementation is a monotone radix queue with a 256-way radix (a radix heap whose digits
//! are bytes). It relies on the discrete-event invariant that nothing is scheduled before the
//! event being processed: every push is at or after the time of the last pop. A key is filed by
//! the highest byte in which it differs from that last time, and within that byte by its value,
//! so a bucket holds a contiguous, ordered slice of the future. When the current time is used
//! up, the lowest non-empty bucket is scanned for its minimum, which becomes the new current
//! time, and its entries are re-filed one level lower. An entry therefore moves at most eight
//! times in its life — in practice about four for delays under a minute — always by sequential
//! appends, so the cost per event stays flat from a thousand clients to ten million, where a
//! binary heap of a million entries misses the cache on every pop.
//!
//! FIFO holds because an entry's bucket depends only on its time and the current time: two
//! entries with equal times always share a bucket, buckets are appended to and re-filed in
//! order, and the current-time bucket is read from the front.
//!
//! Cost: push O(1); pop O(1) amortised, with at most 8 re-filings per entry over its life.

use crate::time::SimTime;

const LEVELS: usize = 8;
const DIGITS: usize = 256;

/// One pending event: a time and what happens then. The engine's item is the whole state of
/// the client whose attempt it is, so processing an event never reads a per-client table (at a
/// million clients that random read, not the queue, would be the cost of an event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<T> {
    /// When the event happens.
    pub time: SimTime,
    /// What happens.
    pub item: T,
}

/// A min-queue of [`Event`]s by time, FIFO among equal times. See the module documentation.
pub struct EventQueue<T> {
    /// The time of the last event popped (or re-filed as the minimum); every push must be at
    /// or after it.
    current: u64,
    /// Entries whose time equals `current`, read from `front`.
    now: Vec<Event<T>>,
    front: usize,
    /// `buckets[level * 256 + digit]`: entries whose highest byte differing from `current` is
    /// `level`, and whose byte there is `digit`.
    buckets: Vec<Vec<Event<T>>>,
    /// One bit per bucket: non-empty.
    occupied: [[u64; DIGITS / 64]; LEVELS],
    /// One bit per level: some bucket of it is non-empty (so finding the lowest bucket reads
    /// one word per level instead of four).
    levels: u32,
    len: usize,
}

impl<T: Copy> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> EventQueue<T> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            current: 0,
            now: Vec::new(),
            front: 0,
            buckets: (0..LEVELS * DIGITS).map(|_| Vec::new()).collect(),
            occupied: [[0; DIGITS / 64]; LEVELS],
            levels: 0,
            len: 0,
        }
    }

    /// An empty queue with room for `n` events at the current time, so a herd of `n` clients
    /// starting together does not grow the buffer step by step.
    pub fn with_capacity(n: usize) -> Self {
        let mut queue = Self::new();
        queue.now.reserve(n);
        queue
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedules `event`. Its time must not be before the last popped event's time (the
    /// discrete-event invariant); an earlier time is a bug in the caller and panics in debug
    /// builds, and is treated as the current time in release builds.
    #[inline]
    pub fn push(&mut self, event: Event<T>) {
        debug_assert!(
            event.time.0 >= self.current,
            "event scheduled in the past: {} < {}",
            event.time.0,
            self.current
        );
        self.len += 1;
        let time = event.time.0.max(self.current);
        let diff = time ^ self.current;
        if diff == 0 {
            self.now.push(event);
            return;
        }
        let level = (63 - diff.leading_zeros() as usize) / 8;
        let digit = ((time >> (level * 8)) & 0xff) as usize;
        self.file(level, digit, event);
    }

    #[inline(always)]
    fn file(&mut self, level: usize, digit: usize, event: Event<T>) {
        self.buckets[level * DIGITS + digit].push(event);
        self.occupied[level][digit / 64] |= 1 << (digit % 64);
        self.levels |= 1 << level;
    }

    /// Removes and returns the earliest event (FIFO among equal times).
    #[inline]
    pub fn pop(&mut self) -> Option<Event<T>> {
        if self.front < self.now.len() {
            let event = self.now[self.front];
            self.front += 1;
            self.len -= 1;
            return Some(event);
        }
        if self.len == 0 {
            return None;
        }
        self.now.clear();
        self.front = 0;
        self.advance();
        let event = self.now[0];
        self.front = 1;
        self.len -= 1;
        Some(event)
    }

    /// The time of the earliest pending event, without removing it.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.front < self.now.len() {
            return Some(SimTime(self.current));
        }
        if self.len == 0 {
            return None;
        }
        self.now.clear();
        self.front = 0;
        self.advance();
        Some(SimTime(self.current))
    }

    /// Moves the current time to the earliest pending entry and re-files the lowest bucket.
    /// Called only when the current-time bucket is empty and something is pending.
    fn advance(&mut self) {
        loop {
            let (level, digit) = self.lowest_occupied();
            let index = level * DIGITS + digit;
            self.occupied[level][digit / 64] &= !(1 << (digit % 64));
            if self.occupied[level] == [0; DIGITS / 64] {
                self.levels &= !(1 << level);
            }
            if self.buckets[index].len() == 1 {
                // A lone entry is the minimum: no re-filing (the common case at the lowest
                // levels, where buckets are a few hundred nanoseconds wide).
                let event = self.buckets[index].pop().expect("length checked");
                self.current = event.time.0;
                self.now.push(event);
                return;
            }
            let mut bucket = std::mem::take(&mut self.buckets[index]);
            let minimum = bucket
                .iter()
                .map(|e| e.time.0)
                .min()
                .unwrap_or(self.current);
            self.current = minimum;
            for event in bucket.drain(..) {
                let diff = event.time.0 ^ minimum;
                if diff == 0 {
                    self.now.push(event);
                } else {
                    let lower = (63 - diff.leading_zeros() as usize) / 8;
                    let d = ((event.time.0 >> (lower * 8)) & 0xff) as usize;
                    self.file(lower, d, event);
                }
            }
            // Give the emptied buffer back so its capacity is reused.
            self.buckets[index] = bucket;
            if !self.now.is_empty() {
                return;
            }
        }
    }

    #[inline]
    fn lowest_occupied(&self) -> (usize, usize) {
        debug_assert!(self.levels != 0, "advance called on an empty queue");
        let level = self.levels.trailing_zeros() as usize;
        let words = &self.occupied[level];
        let w = words.iter().position(|&word| word != 0).unwrap_or(0);
        (level, w * 64 + words[w].trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{uniform_below, ClientRng};
    use std::collections::BinaryHeap;

    fn ev(time: u64, item: u32) -> Event<u32> {
        Event {
            time: SimTime(time),
            item,
        }
    }

    #[test]
    fn equal_times_come_out_in_push_order() {
        let mut q = EventQueue::new();
        for c in 0..5 {
            q.push(ev(1_000, c));
        }
        q.push(ev(500, 9));
        assert_eq!(q.pop(), Some(ev(500, 9)));
        q.push(ev(1_000, 7)); // pushed later at the same time: goes after 0..5
        q.push(ev(500, 8)); // at the current time: next
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.item).collect();
        assert_eq!(order, [8, 0, 1, 2, 3, 4, 7]);
        assert!(q.is_empty());
    }

    #[test]
    fn matches_a_binary_heap_with_sequence_numbers_on_a_random_workload() {
        // Reference: std's BinaryHeap ordered by (time, push sequence), i.e. the documented rule.
        let mut rng = ClientRng::new(3);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        let mut push = |q: &mut EventQueue<u32>, r: &mut BinaryHeap<_>, t: u64, c: u32| {
            q.push(ev(t, c));
            r.push(std::cmp::Reverse((t, seq, c)));
            seq += 1;
        };
        for c in 0..2_000u32 {
            let t = uniform_below(&mut rng, 50);
            push(&mut q, &mut reference, t, c);
        }
        let mut popped = 0;
        while let Some(e) = q.pop() {
            let std::cmp::Reverse((t, _, c)) = reference.pop().unwrap();
            assert_eq!((e.time.0, e.item), (t, c), "after {popped} pops");
            assert!(e.time.0 >= now);
            now = e.time.0;
            popped += 1;
            if popped < 20_000 {
                // Mix of zero delays (ties at the current time), short and very long delays.
                let delay = match uniform_below(&mut rng, 4) {
                    0 => 0,
                    1 => uniform_below(&mut rng, 3),
                    2 => uniform_below(&mut rng, 1 << 20),
                    _ => uniform_below(&mut rng, 1 << 40),
                };
                push(&mut q, &mut reference, now + delay, e.item);
            }
        }
        assert!(reference.is_empty());
        assert_eq!(popped, 2_000 + 19_999);
    }

    #[test]
    fn peek_does_not_remove() {
        let mut q = EventQueue::new();
        assert_eq!(q.peek_time(), None);
        q.push(ev(300, 1));
        q.push(ev(200, 2));
        assert_eq!(q.peek_time(), Some(SimTime(200)));
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some(ev(200, 2)));
        assert_eq!(q.pop(), Some(ev(300, 1)));
        assert_eq!(q.pop(), None);
    }
}
