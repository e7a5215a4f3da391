//! The event queue: pending client attempts ordered by simulated time.
//!
//! **Tie rule (the only one in the simulator):** events at equal times come out in the order
//! they were pushed (FIFO). Every client's first attempt is at t = 0 and is answered in
//! client-id order, client 0 first, before any later event (the engine answers them as if
//! they had been queued in that order); after that, an event scheduled earlier goes earlier.
//!
//! The implementation is a monotone radix queue with a 256-way radix (a radix heap whose digits
//! are bytes) feeding a short sorted *run*. It relies on the discrete-event invariant that
//! nothing is scheduled before the event being processed: every push is at or after the time of
//! the last pop.
//!
//! - The **run** holds the next events, sorted, read from the front. Every event in the run is
//!   at or before the **base** time; every event in a bucket is after it.
//! - A push after the base is filed in a **bucket** by the highest byte in which its time
//!   differs from the base (the level) and its value there (the digit), so each bucket holds a
//!   contiguous, ordered slice of the future. A push at the base is appended to the run; a push
//!   before it (a short delay landing inside the run's span) is inserted in the run after every
//!   event at or before its time.
//! - A push at the **current time** (the time of the last pop: an answer or an arrival with no
//!   delay) before the base goes to the **lane**, a FIFO of its own. Every event at the current time still in
//!   the run was pushed before any event in the lane (the run's are all there by the time the
//!   first of them is popped), so a pop takes the run's events at the current time first, then
//!   the lane's in order: the same order as inserting them into the run, without the binary
//!   search and the shift of the run's tail that an insertion costs.
//! - When the run is used up, the lowest non-empty bucket is taken. A small one (at most
//!   [`SMALL`] events, 4096; 256 at the top level) is sorted into the new run, FIFO among
//!   equal times, and its latest time becomes the base (a bucket of a few events, the usual
//!   one when few are pending, by insertion; a larger one by sorting keys, which at ten
//!   million pending events spares the buckets of a few hundred events a second re-filing;
//!   from 64 events a byte of time below its level, by radix, whose cost an event does not
//!   grow with the bucket as a comparison sort's does, so denser buckets cost no more).
//!   A larger one's earliest time, which each bucket keeps as it is filled, becomes the
//!   base; its events at that time form the run and the rest are re-filed at lower levels,
//!   in one pass (at ten million pending events such a bucket is larger than the core's
//!   cache: a pass to find its earliest time first would read it from memory twice).
//! - A bucket is a chain of fixed-size **blocks** taken from one shared store. A bucket
//!   emptied gives its blocks back to a free stack, and the next bucket to grow takes the
//!   block freed last, still in cache. Nothing is copied when a bucket grows, and memory
//!   follows the events pending (about their size: 24 or 32 bytes a client in the engine),
//!   not the most each bucket ever held.
//! - The store is in **chunks** of 2^14 blocks. The first grows as a vector does; every
//!   later one is reserved whole, never moved, and asked (on Linux) to be backed by 2 MiB
//!   pages, so filing into hundreds of buckets' blocks scattered over hundreds of megabytes
//!   does not miss the address translation cache at every block.
//!
//! An event is therefore re-filed at most eight times in its life and in practice once or
//! twice for delays under a minute (1 M clients × 4 retries of full jitter: 1.05 re-filings
//! per event, buckets of 42 events on average sorted into runs; at 10 M clients, ten times as
//! dense, 1.25 and 143), always by sequential appends, so the cost per event stays nearly
//! flat from a thousand clients to ten million, where a binary heap of a million entries
//! misses the cache on every pop. Buckets stay consistent when the base moves because the new
//! base always comes from the lowest bucket, so it shares every byte above that bucket's level
//! with the old one (the classic radix-heap argument).
//!
//! FIFO holds because an event's bucket depends only on its time and the base: two events with
//! equal times always share a bucket, buckets are appended to and re-filed in order, runs are
//! sorted on keys that end in the position in the bucket, and insertions into the run go after
//! equal times.
//!
//! Cost: push O(1), or O(run length ≤ [`SMALL`]) when it lands inside the run after the
//! current time; pop O(1) amortised.

use crate::time::SimTime;

const LEVELS: usize = 8;
const DIGITS: usize = 256;
/// Buckets this small are sorted straight into the run instead of being re-filed (at the top
/// level, `SMALL_TOP`).
pub const SMALL: usize = 1 << POSITION_BITS;
/// Bits of a small bucket's sort key that hold an event's position in the bucket, below its
/// time under the bucket's level (at most 48 bits below level 7).
const POSITION_BITS: usize = 12;
/// A level-7 bucket's times fill 56 bits below it, leaving a byte for the position.
const SMALL_TOP: usize = 1 << 8;
/// Runs and buckets this short are sorted by insertion, which beats a search or a sort of
/// keys on a handful of events.
const SHORT: usize = 8;
const _: () = assert!(SHORT <= BLOCK);
/// Events per block of bucket storage. A power of two, so a position splits by shifts.
const BLOCK: usize = 64;
/// A small bucket is sorted by radix, a pass a byte of time below its level, from this many
/// events a byte up (a bucket of level 2 from 256), and by comparison below.
const RADIX_PER_BYTE: usize = 64;
/// Blocks a small bucket can span.
const SMALL_BLOCKS: usize = SMALL.div_ceil(BLOCK);
/// Blocks per chunk of the store, 2^14: a chunk holds 2^20 events (24 MiB of the engine's
/// 24-byte events).
const CHUNK_BLOCKS: usize = 1 << CHUNK_SHIFT;
const CHUNK_SHIFT: usize = 14;

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

/// A bucket: a chain of blocks, filled in order; only the last may be partly filled.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    len: usize,
    /// The first block (meaningless while `len` is 0).
    head: u32,
    /// The block being filled.
    tail: u32,
    /// The earliest time filed in it (`u64::MAX` while empty): the base when it is re-filed,
    /// known without reading its events a first time.
    earliest: u64,
}

impl Default for Bucket {
    fn default() -> Self {
        Bucket {
            len: 0,
            head: 0,
            tail: 0,
            earliest: u64::MAX,
        }
    }
}

/// A min-queue of [`Event`]s by time, FIFO among equal times. See the module documentation.
pub struct EventQueue<T> {
    /// Every event in the run is at or before it; every event in a bucket is after it.
    base: u64,
    /// The time of the last event popped: no push may be earlier.
    now: u64,
    /// The next events, sorted by time (FIFO among equal times), read from `front`.
    run: Vec<Event<T>>,
    front: usize,
    /// Events pushed at `now` while `now` is before `base`, in push order, read from
    /// `lane_front`; they come after the run's events at `now`. Emptied (and reset) before
    /// time moves on. (At the base, a push is appended to the run, which is as cheap.)
    lane: Vec<Event<T>>,
    lane_front: usize,
    /// `buckets[level * 256 + digit]`: events whose highest byte differing from `base` is
    /// `level`, and whose byte there is `digit`. A fixed-size array so that indexing it with a
    /// masked level and a byte needs no bounds check.
    buckets: Box<[Bucket; LEVELS * DIGITS]>,
    /// The buckets' events, in blocks of [`BLOCK`]. Blocks rather than a growing vector per
    /// bucket: nothing is copied when a bucket grows, and memory follows the events pending,
    /// not the largest each bucket ever held.
    store: Store<T>,
    /// `next[b]`: the block after block `b` in its bucket's chain.
    next: Vec<u32>,
    /// Blocks in no bucket. A stack, so the block just emptied, still in cache, is the next
    /// one filled.
    free: Vec<u32>,
    /// One bit per bucket: non-empty. Set when a push finds its bucket empty, cleared when the
    /// bucket is taken, so a push into a bucket already in use touches no bit.
    occupied: [[u64; DIGITS / 64]; LEVELS],
    /// One bit per level: some bucket of it is non-empty (so finding the lowest bucket reads
    /// one word per level instead of four).
    levels: u32,
    len: usize,
    /// Scratch space for sorting a small bucket: (time below the bucket's level, position).
    keys: Vec<u64>,
    /// The keys' other buffer while they are sorted by radix.
    spare: Vec<u64>,
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
            base: 0,
            now: 0,
            run: Vec::new(),
            front: 0,
            lane: Vec::new(),
            lane_front: 0,
            buckets: Box::new([Bucket::default(); LEVELS * DIGITS]),
            store: Store { chunks: Vec::new() },
            next: Vec::new(),
            free: Vec::new(),
            occupied: [[0; DIGITS / 64]; LEVELS],
            levels: 0,
            len: 0,
            keys: Vec::with_capacity(SMALL_TOP),
            spare: Vec::new(),
        }
    }

    /// An empty queue with room for `n` events at time zero, so a herd of `n` clients starting
    /// together does not grow the buffer step by step.
    pub fn with_capacity(n: usize) -> Self {
        let mut queue = Self::new();
        queue.run.reserve(n);
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
    /// builds, and is treated as that time in release builds.
    #[inline(always)]
    pub fn push(&mut self, event: Event<T>) {
        debug_assert!(
            event.time.0 >= self.now,
            "event scheduled in the past: {} < {}",
            event.time.0,
            self.now
        );
        self.len += 1;
        let time = event.time.0;
        if time > self.base {
            self.file(time ^ self.base, event);
        } else if time == self.base {
            self.run.push(event);
        } else if time <= self.now {
            // At the current time (never before it), with later events in the run: after
            // everything already pending at this time, without shifting the run.
            self.lane.push(event);
        } else {
            self.insert_into_run(event);
        }
    }

    /// Inserts an event that lands before the base, after every run event at or before its
    /// time (FIFO). The run is short here: it came from a small bucket.
    #[cold]
    fn insert_into_run(&mut self, event: Event<T>) {
        if self.run.len() - self.front <= SHORT {
            // A short run (the usual one when few events are pending): shift its later events
            // up one by one from the end, without a search and a call to move memory.
            self.run.push(event);
            let mut at = self.run.len() - 1;
            while at > self.front && self.run[at - 1].time > event.time {
                self.run[at] = self.run[at - 1];
                at -= 1;
            }
            self.run[at] = event;
            return;
        }
        let pending = &self.run[self.front..];
        let offset = pending.partition_point(|e| e.time <= event.time);
        self.run.insert(self.front + offset, event);
    }

    /// Files an event after the base in its bucket; `diff` is its time XOR the base (not 0).
    #[inline(always)]
    fn file(&mut self, diff: u64, event: Event<T>) {
        // The mask only tells the compiler what `diff > 0` already guarantees (level < 8).
        let level = ((63 - diff.leading_zeros() as usize) / 8) & (LEVELS - 1);
        let digit = ((event.time.0 >> (level * 8)) & 0xff) as usize;
        let index = level * DIGITS + digit;
        let Bucket {
            len,
            tail,
            earliest,
            ..
        } = self.buckets[index];
        let slot = len % BLOCK;
        let block = if slot == 0 {
            let block = self.new_block(event);
            let bucket = &mut self.buckets[index];
            if len == 0 {
                // The bits change only when a bucket becomes non-empty, so most pushes skip
                // them.
                bucket.head = block;
                self.occupied[level][digit / 64] |= 1 << (digit % 64);
                self.levels |= 1 << level;
            } else {
                self.next[tail as usize] = block;
            }
            bucket.tail = block;
            block
        } else {
            tail
        };
        *self.store.slot_mut(block, slot) = event;
        let bucket = &mut self.buckets[index];
        bucket.len = len + 1;
        bucket.earliest = earliest.min(event.time.0);
    }

    /// A block from the free stack, or a new one (its slots filled with copies of `filler`).
    #[inline(always)]
    fn new_block(&mut self, filler: Event<T>) -> u32 {
        match self.free.pop() {
            Some(block) => block,
            None => self.grow(filler),
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, filler: Event<T>) -> u32 {
        let block = u32::try_from(self.next.len()).expect("event queue: over 2^32 blocks");
        self.store.add_block(block, filler);
        self.next.push(0);
        block
    }

    /// Removes and returns the earliest event (FIFO among equal times). Inlined into each
    /// instance of a loop that pops, with the refill below.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Event<T>> {
        if self.lane_front < self.lane.len() {
            return Some(self.pop_now());
        }
        if self.front == self.run.len() {
            if self.len == 0 {
                return None;
            }
            self.refill();
        }
        let event = self.run[self.front];
        self.front += 1;
        self.len -= 1;
        self.now = event.time.0;
        Some(event)
    }

    /// The next event at the current time while the lane holds some: the run's first (pushed
    /// earlier) if it is at the current time, else the lane's.
    #[inline]
    fn pop_now(&mut self) -> Event<T> {
        self.len -= 1;
        if self.front < self.run.len() && self.run[self.front].time.0 == self.now {
            self.front += 1;
            return self.run[self.front - 1];
        }
        let event = self.lane[self.lane_front];
        self.lane_front += 1;
        if self.lane_front == self.lane.len() {
            self.lane.clear();
            self.lane_front = 0;
        }
        event
    }

    /// True when an event at or before the current time (the last popped event's) is
    /// pending: an event pushed now at that time would not be the next one out. (Every event
    /// in a bucket is after the base, which is at or after the current time.)
    #[inline(always)]
    pub fn has_due_now(&self) -> bool {
        self.lane_front < self.lane.len()
            || (self.front < self.run.len() && self.run[self.front].time.0 <= self.now)
    }

    /// The time of the earliest pending event, without removing it.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.lane_front < self.lane.len() {
            return Some(SimTime(self.now));
        }
        if self.front == self.run.len() {
            if self.len == 0 {
                return None;
            }
            self.refill();
        }
        Some(self.run[self.front].time)
    }

    /// Forms the next run from the lowest buckets. Called only when the run is used up and
    /// something is pending. Inlined (the call loop has an instance for each way it records
    /// its windows, and a call to it cost more than the refill's own work there).
    #[inline(always)]
    fn refill(&mut self) {
        self.run.clear();
        self.front = 0;
        loop {
            let (level, digit) = self.lowest_occupied();
            let index = level * DIGITS + digit;
            self.occupied[level][digit / 64] &= !(1 << (digit % 64));
            if self.occupied[level] == [0; DIGITS / 64] {
                self.levels &= !(1 << level);
            }
            let bucket = std::mem::take(&mut self.buckets[index]);
            let small = if level < LEVELS - 1 { SMALL } else { SMALL_TOP };
            if bucket.len <= small {
                self.sort_into_run(level, bucket);
                return;
            }
            self.refile(bucket);
            if !self.run.is_empty() {
                return;
            }
        }
    }

    /// Moves a small `bucket` of `level` into the (empty) run, sorted by time, FIFO among
    /// equal times, makes its latest time the base and frees its blocks.
    ///
    /// Every event of a level-`level` bucket shares all bytes from `level` up, so its time
    /// below them and its position in the bucket pack into one distinct `u64` key: sorting the
    /// keys (small integers, no stability needed) and then gathering the events moves each
    /// event once, instead of shifting it about in a stable sort. Inlined, as `refill`.
    #[inline(always)]
    fn sort_into_run(&mut self, level: usize, bucket: Bucket) {
        if bucket.len <= SHORT {
            // One block, a few events (the usual bucket when few events are pending): sorted
            // into the run by insertion, which keeps equal times in order, without keys.
            let block = self.store.block(bucket.head);
            for &event in &block[..bucket.len] {
                self.run.push(event);
                let mut at = self.run.len() - 1;
                while at > 0 && self.run[at - 1].time > event.time {
                    self.run[at] = self.run[at - 1];
                    at -= 1;
                }
                self.run[at] = event;
            }
            self.free.push(bucket.head);
            self.base = self.run[self.run.len() - 1].time.0;
            return;
        }
        let blocks = bucket.len.div_ceil(BLOCK);
        let mut chain = [bucket.head; SMALL_BLOCKS];
        for i in 1..blocks {
            chain[i] = self.next[chain[i - 1] as usize];
        }
        let first = self.store.block(bucket.head);
        let mut parts = [first; SMALL_BLOCKS];
        for i in 1..blocks {
            parts[i] = self.store.block(chain[i]);
        }
        let at = |position: usize| parts[position / BLOCK][position % BLOCK];
        if level == 0 {
            // Every event of a level-0 bucket has the same time: already in order.
            self.run.extend((0..bucket.len).map(at));
        } else {
            let low = (1u64 << (8 * level)) - 1;
            let bits = if level < LEVELS - 1 { POSITION_BITS } else { 8 };
            let mask = (1u64 << bits) - 1;
            self.keys.clear();
            self.keys.extend(
                (0..bucket.len)
                    .map(|position| ((at(position).time.0 & low) << bits) | position as u64),
            );
            if bucket.len >= RADIX_PER_BYTE * level {
                radix_sort(&mut self.keys, &mut self.spare, bits, level);
            } else {
                self.keys.sort_unstable();
            }
            self.run
                .extend(self.keys.iter().map(|&key| at((key & mask) as usize)));
        }
        self.free.extend_from_slice(&chain[..blocks]);
        self.base = self.run[self.run.len() - 1].time.0;
    }

    /// Takes a large `bucket`: its earliest time becomes the base, its events at that time
    /// form the run and the rest are re-filed at lower levels, in one pass over its events
    /// (the bucket kept its earliest time as it was filled: a bucket of millions of events,
    /// larger than the core's cache, is then read once instead of twice). Each block is freed
    /// as soon as it is read, so the re-filing reuses it at once.
    fn refile(&mut self, bucket: Bucket) {
        let minimum = bucket.earliest;
        self.base = minimum;
        let mut block = bucket.head;
        let mut left = bucket.len;
        loop {
            let filled = left.min(BLOCK);
            // Copied out before its events are filed: filing one may add a block to the store.
            let events = *self.store.block(block);
            for &event in &events[..filled] {
                let diff = event.time.0 ^ minimum;
                if diff == 0 {
                    self.run.push(event);
                } else {
                    self.file(diff, event);
                }
            }
            left -= filled;
            let next = self.next[block as usize];
            self.free.push(block);
            if left == 0 {
                return;
            }
            block = next;
        }
    }

    /// Bytes of heap the queue has written to: its buffers, counting blocks made rather than
    /// capacity reserved (which the system backs with memory only once touched).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        (self.run.capacity() + self.lane.capacity() + self.next.len() * BLOCK)
            * size_of::<Event<T>>()
            + (self.next.capacity() + self.free.capacity()) * size_of::<u32>()
            + (self.keys.capacity() + self.spare.capacity()) * size_of::<u64>()
            + size_of::<[Bucket; LEVELS * DIGITS]>()
    }

    #[inline]
    fn lowest_occupied(&self) -> (usize, usize) {
        debug_assert!(self.levels != 0, "refill called on an empty queue");
        let level = self.levels.trailing_zeros() as usize;
        let words = &self.occupied[level];
        let w = words.iter().position(|&word| word != 0).unwrap_or(0);
        (level, w * 64 + words[w].trailing_zeros() as usize)
    }
}

/// Sorts `keys` by their `bytes` bytes from bit `shift` up, a byte at a time from the lowest,
/// each pass keeping the order of keys equal in its byte (a radix sort). The keys' bits below
/// `shift` are their positions, ascending as given, so the keys end sorted whole.
fn radix_sort(keys: &mut Vec<u64>, spare: &mut Vec<u64>, shift: usize, bytes: usize) {
    spare.clear();
    spare.resize(keys.len(), 0);
    for byte in 0..bytes {
        let at = shift + 8 * byte;
        let digit = |key: u64| ((key >> at) & 0xff) as usize;
        let mut starts = [0usize; DIGITS];
        for &key in keys.iter() {
            starts[digit(key)] += 1;
        }
        if starts[digit(keys[0])] == keys.len() {
            // Every key has the same byte here: already in order.
            continue;
        }
        let mut start = 0;
        for count in starts.iter_mut() {
            (start, *count) = (start + *count, start);
        }
        for &key in keys.iter() {
            let d = digit(key);
            spare[starts[d]] = key;
            starts[d] += 1;
        }
        std::mem::swap(keys, spare);
    }
}

/// The buckets' blocks, in chunks of [`CHUNK_BLOCKS`]: block `b` is events
/// `(b % CHUNK_BLOCKS) * BLOCK..` of chunk `b / CHUNK_BLOCKS`.
///
/// The first chunk grows by doubling, as a vector does, so a queue of a few events holds a
/// few blocks; every later one is reserved whole when the first is full, so no chunk is ever
/// copied, and is asked to be backed by 2 MiB pages: at ten million clients the events
/// pending (240 MB) would be 60 000 pages of 4 KiB, and filing into hundreds of buckets'
/// blocks scattered over them, and re-filing them, would miss the translation cache at every
/// block (a growing vector cannot keep its large pages: the system moves its pages when it
/// grows, and splits them).
struct Store<T> {
    chunks: Vec<Vec<Event<T>>>,
}

impl<T: Copy> Store<T> {
    #[inline(always)]
    fn block(&self, block: u32) -> &[Event<T>; BLOCK] {
        let block = block as usize;
        self.chunks[block >> CHUNK_SHIFT][(block % CHUNK_BLOCKS) * BLOCK..]
            .first_chunk()
            .expect("a block is whole")
    }

    #[inline(always)]
    fn slot_mut(&mut self, block: u32, slot: usize) -> &mut Event<T> {
        let block = block as usize;
        &mut self.chunks[block >> CHUNK_SHIFT][(block % CHUNK_BLOCKS) * BLOCK + slot]
    }

    /// Adds block `block`, the next one, its slots filled with copies of `filler`.
    fn add_block(&mut self, block: u32, filler: Event<T>) {
        let chunk = block as usize >> CHUNK_SHIFT;
        if chunk == self.chunks.len() {
            let mut events = Vec::new();
            if chunk > 0 {
                events.reserve_exact(CHUNK_BLOCKS * BLOCK);
                advise_large_pages(&mut events);
            }
            self.chunks.push(events);
        }
        let events = &mut self.chunks[chunk];
        events.resize(events.len() + BLOCK, filler);
    }
}

/// Asks the system to back `buffer`'s reserved memory (its capacity, not yet touched) with
/// 2 MiB pages where whole ones fit. Transparent large pages are often given only to memory
/// that asks for them (the `madvise` setting of
/// /sys/kernel/mm/transparent_hugepage/enabled); advice only, so a refusal changes nothing.
#[cfg(target_os = "linux")]
fn advise_large_pages<E>(buffer: &mut Vec<E>) {
    const LARGE_PAGE: usize = 2 << 20;
    let start = buffer.as_mut_ptr() as usize;
    let end = start + buffer.capacity() * std::mem::size_of::<E>();
    let (from, to) = (
        start.next_multiple_of(LARGE_PAGE),
        end / LARGE_PAGE * LARGE_PAGE,
    );
    if from < to {
        // SAFETY: the range is inside the vector's own allocation, and MADV_HUGEPAGE only
        // changes how the system backs it with pages: nothing is read, written, moved or
        // freed. (Unsafe only because madvise takes a raw address.)
        unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_large_pages<E>(_buffer: &mut Vec<E>) {}

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

    /// Drives the queue and a reference — std's BinaryHeap ordered by (time, push sequence),
    /// i.e. the documented rule — through the same workload and compares every pop.
    fn compare_with_reference(
        seed: u64,
        initial: u32,
        pops: usize,
        delay: impl Fn(&mut ClientRng) -> u64,
    ) {
        let mut rng = ClientRng::new(seed);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut push = |q: &mut EventQueue<u32>, r: &mut BinaryHeap<_>, t: u64, c: u32| {
            q.push(ev(t, c));
            r.push(std::cmp::Reverse((t, seq, c)));
            seq += 1;
        };
        for c in 0..initial {
            let t = uniform_below(&mut rng, 50);
            push(&mut q, &mut reference, t, c);
        }
        let mut popped = 0;
        while let Some(e) = q.pop() {
            let std::cmp::Reverse((t, _, c)) = reference.pop().unwrap();
            assert_eq!(
                (e.time.0, e.item),
                (t, c),
                "seed {seed}, after {popped} pops"
            );
            assert_eq!(q.len(), reference.len());
            popped += 1;
            if popped < pops {
                // Sometimes two follow-ups, sometimes none, so the queue grows and shrinks.
                for _ in 0..uniform_below(&mut rng, 3) {
                    let d = delay(&mut rng);
                    push(&mut q, &mut reference, t + d, e.item);
                }
            }
            // Due now: the reference's earliest pending event is at the time just popped.
            let due = reference.peek().is_some_and(|r| r.0 .0 <= t);
            assert_eq!(q.has_due_now(), due, "seed {seed}, after {popped} pops");
        }
        assert!(reference.is_empty());
    }

    #[test]
    fn matches_a_binary_heap_with_sequence_numbers_on_random_workloads() {
        // Zero delays (ties at the current time), delays landing inside the current run,
        // short, long and very long delays, mixed.
        compare_with_reference(3, 2_000, 30_000, |rng| match uniform_below(rng, 5) {
            0 => 0,
            1 => uniform_below(rng, 3),
            2 => uniform_below(rng, 1 << 12),
            3 => uniform_below(rng, 1 << 20),
            _ => uniform_below(rng, 1 << 40),
        });
        // A herd: big buckets of equal and nearly equal times, re-filed rather than sorted.
        compare_with_reference(4, 5_000, 40_000, |rng| 1_000 * uniform_below(rng, 4));
        // Dense small delays: most pushes land inside the run.
        compare_with_reference(5, 300, 20_000, |rng| uniform_below(rng, 40));
        for seed in 6..12 {
            compare_with_reference(seed, 100, 5_000, |rng| {
                let bits = uniform_below(rng, 48) as u32;
                uniform_below(rng, 1u64 << bits)
            });
        }
    }

    #[test]
    fn buckets_of_up_to_4096_events_are_sorted_by_time_then_push_order() {
        // Thousands of events in one bucket of levels 1 to 5, many at equal times: sorted
        // straight into the run on keys of the time below the level and a 12-bit position, by
        // radix (level 5's two highest bytes below it the same for all: passes skipped); a
        // hundred in one of level 3, by comparison.
        let mut rng = ClientRng::new(21);
        for (offset, span, events) in [
            (1_000u64, 256u64, 3_000u32),
            (100_000, 1 << 16, 4_000),
            (1 << 40, 1 << 24, 4_096),
            (1 << 41, 1 << 40, 2_000),
            (1 << 30, 1 << 16, 100),
        ] {
            let mut q = EventQueue::new();
            let mut expected = Vec::new();
            for c in 0..events {
                // A third of the events at a handful of times, the rest anywhere in the span.
                let t = if c % 3 == 0 {
                    offset + span / 2 + uniform_below(&mut rng, 4)
                } else {
                    offset + uniform_below(&mut rng, span)
                };
                q.push(ev(t, c));
                expected.push((t, c));
            }
            expected.sort_by_key(|&(t, _)| t);
            let popped: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
                .map(|e| (e.time.0, e.item))
                .collect();
            assert_eq!(popped, expected, "offset {offset}, span {span}");
        }
    }

    #[test]
    fn memory_follows_the_events_pending() {
        // The herd pattern at 200 000 clients: one event pending a client, delays of up to
        // 16 s spread over many buckets. The blocks a bucket grows by come back when it is
        // taken, so the queue holds about one event's bytes a pending event, plus the bucket
        // table and part-filled blocks (at most one a bucket): measured 1.16 times, bound 1.5.
        // (The earlier design, a growing vector a bucket keeping the most it ever held: 7.)
        let clients = 200_000u32;
        let mut rng = ClientRng::new(9);
        let mut q = EventQueue::new();
        let mut hops = vec![0u8; clients as usize];
        for c in 0..clients {
            q.push(ev(uniform_below(&mut rng, 1 << 30), c));
        }
        let mut peak = 0;
        while let Some(e) = q.pop() {
            peak = peak.max(q.heap_bytes());
            let hop = &mut hops[e.item as usize];
            if *hop < 4 {
                *hop += 1;
                q.push(ev(
                    e.time.0 + uniform_below(&mut rng, 1 << (30 + *hop)),
                    e.item,
                ));
            }
        }
        let event = std::mem::size_of::<Event<u32>>();
        assert!(
            peak < 3 * clients as usize * event / 2,
            "peak {peak} B for {clients} pending events of {event} B"
        );
    }

    #[test]
    fn events_in_several_chunks_come_out_in_order() {
        // More blocks than the first chunk holds: 1.2 M events in level 2's 256 buckets fill
        // more than 2^14 blocks, so the store takes a second, reserved chunk. A quarter of them
        // at one time, so a bucket re-filed and equal times in push order span chunks too.
        let events = 1_200_000u32;
        let mut rng = ClientRng::new(33);
        let mut q = EventQueue::new();
        let mut expected = Vec::with_capacity(events as usize);
        for c in 0..events {
            let t = if c % 4 == 0 {
                1 << 20
            } else {
                1 + uniform_below(&mut rng, 1 << 24)
            };
            q.push(ev(t, c));
            expected.push((t, c));
        }
        assert!(q.store.chunks.len() > 1, "{} chunks", q.store.chunks.len());
        expected.sort_by_key(|&(t, _)| t);
        let popped: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time.0, e.item))
            .collect();
        assert!(popped == expected, "the order differs");
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
