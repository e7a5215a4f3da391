//! Measurements of one run: the window histogram of retry arrivals, the histograms of every
//! request split into served and refused, when clients finished, and the summary figures
//! (peak, non-empty windows, span, totals, outcomes, waste). Counting only: no formatting, no
//! I/O.
//!
//! A window is `floor(t / bin)` in integer nanoseconds, so an arrival at exactly 1 s with a
//! 100 ms bin is in window 10 (which starts at 1.0 s), never 9.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::time::{SimDuration, SimTime};

/// Windows of `bin`: which window a time falls in, without a division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    bin: u64,
    /// `ceil(2^64 / bin)` (0 for a bin of 1 ns): below `exact_to`, the high word of `t · magic`
    /// is `floor(t / bin)` itself, one multiplication.
    magic: u64,
    /// The largest time the one multiplication is exact for: `t · (magic · bin − 2^64)` must
    /// stay below 2^64 (about 184 s at 100 ms bins, every time for a power-of-two bin).
    exact_to: u64,
    /// `floor((2^64 − 1) / bin)`: for later times, the high word of `t · reciprocal` is
    /// `floor(t / bin)` or up to two less, corrected (a 64-bit division costs tens of cycles,
    /// the largest single cost of an event).
    reciprocal: u64,
}

impl Windows {
    /// Windows of `bin` (which must not be zero).
    pub fn new(bin: SimDuration) -> Self {
        assert!(!bin.is_zero(), "histogram bin must be positive");
        let bin = bin.as_nanos();
        // ceil(2^64 / bin) = floor((2^64 − 1) / bin) + 1 for a bin of 2 or more; the error
        // magic · bin − 2^64 (mod 2^64) is below bin. t = q · bin + r with r < bin: the high
        // word of t · magic is q + floor((r + t · error / 2^64) / bin), which is q while
        // t · error < 2^64. A bin of 1 ns keeps no magic (exact only at 0).
        let (magic, exact_to) = if bin == 1 {
            (0, 0)
        } else {
            let magic = u64::MAX / bin + 1;
            let error = magic.wrapping_mul(bin);
            (magic, u64::MAX.checked_div(error).unwrap_or(u64::MAX))
        };
        Windows {
            bin,
            magic,
            exact_to,
            reciprocal: u64::MAX / bin,
        }
    }

    /// The window `t` falls in: `floor(t / bin)`.
    #[inline(always)]
    pub fn window_of(&self, t: SimTime) -> usize {
        let t = t.as_nanos();
        if t <= self.exact_to {
            return ((u128::from(t) * u128::from(self.magic)) >> 64) as usize;
        }
        window_of_late(t, self.bin, self.reciprocal)
    }
}

/// [`Windows::window_of`] past `exact_to`, for windows of `bin` whose `reciprocal` is
/// `floor((2^64 − 1) / bin)`. Not inlined, and given numbers rather than the [`Windows`], so
/// that a loop's windows and what lies beside them stay in registers.
#[inline(never)]
fn window_of_late(t: u64, bin: u64, reciprocal: u64) -> usize {
    // The high word of t · reciprocal is floor(t / bin) or up to two less (the reciprocal is
    // floored, and t < 2^64); the corrections make it exact.
    let mut q = ((u128::from(t) * u128::from(reciprocal)) >> 64) as u64;
    let mut rest = t - q * bin;
    if rest >= bin {
        q += 1;
        rest -= bin;
    }
    if rest >= bin {
        q += 1;
    }
    q as usize
}

/// Windows counted in a plain vector from window 0 (128 KiB at most: 27 minutes at 100 ms
/// bins, so every ordinary run is counted there, at the speed of a vector).
pub const DENSE_WINDOWS: usize = 1 << 14;
/// Windows per block beyond [`DENSE_WINDOWS`]: a block is the unit of allocation (128 bytes).
pub const BLOCK_WINDOWS: usize = 1 << BLOCK_BITS;
const BLOCK_BITS: u32 = 4;
const BLOCK_MASK: usize = BLOCK_WINDOWS - 1;
/// Blocks a directory always covers (a 4 KiB table).
const DIRECTORY_MIN: usize = 1024;
/// A directory covers at most this many block numbers per block held, so that its size follows
/// the blocks, not the span.
const DIRECTORY_PER_BLOCK: usize = 4;

/// Arrivals counted per window of `bin`, in memory that follows the non-empty windows, never
/// the simulated span: the first [`DENSE_WINDOWS`] windows in a vector grown as far as they
/// are used, later ones in blocks of [`BLOCK_WINDOWS`] allocated only when they receive a
/// count (a few requests hours apart at 1 ms bins take a few blocks, not a count for every
/// millisecond).
///
/// Blocks live in one arena in the order they were first touched. A block number below the
/// directory's length is found by indexing the directory; the directory grows only while it
/// stays within four entries per block held (or 1024 entries), and
/// blocks beyond it are kept in an ordered map. The block last written is remembered.
///
/// A histogram may be limited to a number of blocks ([`Histogram::limit_blocks`]): a count
/// that would need one more is dropped and the histogram marked outgrown
/// ([`Histogram::outgrown`]), so a run guarded by its memory budget stops growing there and
/// is refused instead of holding more than the budget.
#[derive(Clone, Debug)]
pub struct Histogram {
    windows: Windows,
    /// Counts of windows `0..dense.len()` (never beyond [`DENSE_WINDOWS`]).
    dense: Vec<u64>,
    /// The counts of every block, `BLOCK_WINDOWS` a block, in the order blocks were created.
    arena: Vec<u64>,
    /// Block number → arena slot + 1 (0: no block), for block numbers below its length.
    directory: Vec<u32>,
    /// Block number → arena slot, for block numbers at or beyond the directory's length.
    beyond: BTreeMap<usize, u32>,
    /// The block last written and its slot (`usize::MAX`: none yet).
    last_block: usize,
    last_slot: usize,
    /// Blocks this histogram may allocate (`usize::MAX`: no limit).
    block_limit: usize,
    /// A count was dropped because it needed a block past `block_limit`.
    outgrown: bool,
}

impl PartialEq for Histogram {
    fn eq(&self, other: &Self) -> bool {
        self.windows == other.windows && self.non_empty().eq(other.non_empty())
    }
}

impl Eq for Histogram {}

impl Histogram {
    /// An empty histogram with windows of `bin` (which must not be zero).
    pub fn new(bin: SimDuration) -> Self {
        Histogram {
            windows: Windows::new(bin),
            dense: Vec::new(),
            arena: Vec::new(),
            directory: Vec::new(),
            beyond: BTreeMap::new(),
            last_block: usize::MAX,
            last_slot: 0,
            block_limit: usize::MAX,
            outgrown: false,
        }
    }

    /// Empties this histogram and gives it windows of `bin` and no block limit, as
    /// [`Histogram::new`] makes one, keeping its buffers' memory to count into again.
    pub fn clear(&mut self, bin: SimDuration) {
        self.windows = Windows::new(bin);
        self.dense.clear();
        self.arena.clear();
        self.directory.clear();
        self.beyond.clear();
        self.last_block = usize::MAX;
        self.last_slot = 0;
        self.block_limit = usize::MAX;
        self.outgrown = false;
    }

    /// Bytes held by this histogram's buffers, used or not (its ordered map's entries at
    /// their keys' and slots' size).
    pub fn capacity_bytes(&self) -> usize {
        let words = self.dense.capacity().saturating_add(self.arena.capacity());
        words
            .saturating_mul(size_of::<u64>())
            .saturating_add(self.directory.capacity().saturating_mul(size_of::<u32>()))
            .saturating_add(self.beyond.len().saturating_mul(size_of::<(usize, u32)>()))
    }

    /// Limits the blocks beyond the dense windows to `blocks`: a count that would need
    /// another is dropped and the histogram marked [`Histogram::outgrown`].
    pub fn limit_blocks(&mut self, blocks: usize) {
        self.block_limit = blocks;
    }

    /// Whether a count was dropped for want of a block ([`Histogram::limit_blocks`]): its
    /// counts are then incomplete, and the run that made them is refused.
    pub fn outgrown(&self) -> bool {
        self.outgrown
    }

    /// Blocks of [`BLOCK_WINDOWS`] counts allocated beyond the dense windows.
    pub fn blocks_held(&self) -> usize {
        self.arena.len() >> BLOCK_BITS
    }

    /// The window width.
    pub fn bin(&self) -> SimDuration {
        SimDuration(self.windows.bin)
    }

    /// This histogram's windows.
    pub fn windows(&self) -> Windows {
        self.windows
    }

    /// The window `t` falls in: `floor(t / bin)`.
    #[inline(always)]
    pub fn window_of(&self, t: SimTime) -> usize {
        self.windows.window_of(t)
    }

    /// A [`WindowCursor`] over this histogram's windows.
    pub fn cursor(&self) -> WindowCursor {
        WindowCursor {
            windows: self.windows,
            start: 0,
            window: 0,
        }
    }

    /// Counts one arrival at `t`.
    #[inline(always)]
    pub fn record(&mut self, t: SimTime) {
        self.record_window(self.window_of(t));
    }

    /// Counts one arrival in window `w` (from [`Histogram::window_of`]), so that several
    /// histograms of one bin share a single division.
    #[inline(always)]
    pub fn record_window(&mut self, w: usize) {
        if let Some(count) = self.dense.get_mut(w) {
            *count += 1;
        } else if w >> BLOCK_BITS == self.last_block {
            // The block written last, where a long run's counts mostly go (its windows come
            // in order): counted here, without a call. A dense window's block is never it.
            self.arena[(self.last_slot << BLOCK_BITS) | (w & BLOCK_MASK)] += 1;
        } else {
            self.add_beyond(w, 1);
        }
    }

    /// Adds `count` arrivals to window `w`, which is not in the dense vector yet.
    fn add_beyond(&mut self, w: usize, count: u64) {
        if w < DENSE_WINDOWS {
            let len = (w + 1).max(2 * self.dense.len()).min(DENSE_WINDOWS);
            self.dense.resize(len, 0);
            self.dense[w] += count;
            return;
        }
        let block = w >> BLOCK_BITS;
        let slot = if block == self.last_block {
            self.last_slot
        } else {
            match self.slot_of(block) {
                Some(slot) => slot,
                None => return,
            }
        };
        self.arena[(slot << BLOCK_BITS) | (w & BLOCK_MASK)] += count;
    }

    /// The arena slot of `block`, created if needed; remembered as the last block. `None`
    /// when it would be a block past the limit (the histogram is then outgrown).
    fn slot_of(&mut self, block: usize) -> Option<usize> {
        let slot = match self.directory.get(block) {
            Some(&s) if s != 0 => (s - 1) as usize,
            _ => self.new_or_beyond(block)?,
        };
        self.last_block = block;
        self.last_slot = slot;
        Some(slot)
    }

    /// The slot of a block not in the directory: from the map, or a new block (`None` past
    /// the limit).
    fn new_or_beyond(&mut self, block: usize) -> Option<usize> {
        if block >= self.directory.len() {
            if let Some(&slot) = self.beyond.get(&block) {
                return Some(slot as usize);
            }
        }
        let slot = self.arena.len() >> BLOCK_BITS;
        if slot >= self.block_limit {
            self.outgrown = true;
            return None;
        }
        self.arena.resize(self.arena.len() + BLOCK_WINDOWS, 0);
        let allowed = (DIRECTORY_PER_BLOCK * (slot + 1)).max(DIRECTORY_MIN);
        if block < self.directory.len() {
            self.directory[block] = slot as u32 + 1;
        } else if block < allowed {
            // Grow the directory over this block (doubling, within what is allowed) and move
            // the blocks it now covers out of the map.
            let len = (block + 1).max(2 * self.directory.len()).min(allowed);
            self.directory.resize(len, 0);
            self.directory[block] = slot as u32 + 1;
            let rest = self.beyond.split_off(&len);
            for (b, s) in std::mem::replace(&mut self.beyond, rest) {
                self.directory[b] = s + 1;
            }
        } else {
            self.beyond.insert(block, slot as u32);
        }
        Some(slot)
    }

    /// The allocated blocks in window order: `(block number, its counts)`.
    fn blocks(&self) -> impl Iterator<Item = (usize, &[u64])> + '_ {
        let in_directory = self
            .directory
            .iter()
            .enumerate()
            .filter(|(_, &s)| s != 0)
            .map(|(b, &s)| (b, (s - 1) as usize));
        let beyond = self.beyond.iter().map(|(&b, &s)| (b, s as usize));
        in_directory
            .chain(beyond)
            .map(move |(b, slot)| (b, &self.arena[slot << BLOCK_BITS..(slot + 1) << BLOCK_BITS]))
    }

    /// The non-empty windows in order, with their counts.
    pub fn non_empty(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(w, &c)| (w, c));
        let blocks = self.blocks().flat_map(|(b, counts)| {
            counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(move |(i, &c)| ((b << BLOCK_BITS) | i, c))
        });
        dense.chain(blocks)
    }

    /// The count of window `w`.
    pub fn count(&self, w: usize) -> u64 {
        if w < DENSE_WINDOWS {
            return self.dense.get(w).copied().unwrap_or(0);
        }
        let block = w >> BLOCK_BITS;
        let slot = match self.directory.get(block) {
            Some(&0) => return 0,
            Some(&s) => (s - 1) as usize,
            None => match self.beyond.get(&block) {
                Some(&s) => s as usize,
                None => return 0,
            },
        };
        self.arena[(slot << BLOCK_BITS) | (w & BLOCK_MASK)]
    }

    /// Adds another histogram with the same bin into this one.
    pub fn merge(&mut self, other: &Histogram) {
        assert_eq!(
            self.windows, other.windows,
            "merging histograms of different bins"
        );
        self.outgrown |= other.outgrown;
        if other.dense.len() > self.dense.len() {
            self.dense.resize(other.dense.len(), 0);
        }
        for (mine, theirs) in self.dense.iter_mut().zip(&other.dense) {
            *mine += theirs;
        }
        for (b, counts) in other.blocks() {
            for (i, &c) in counts.iter().enumerate() {
                if c > 0 {
                    self.add_beyond((b << BLOCK_BITS) | i, c);
                }
            }
        }
    }

    /// Windows from window 0 to the last non-empty one (0 when empty): the length of
    /// [`Histogram::counts`].
    pub fn len(&self) -> usize {
        let last_block = match self.beyond.last_key_value() {
            Some((&b, &s)) => Some((b, s as usize)),
            None => self
                .directory
                .iter()
                .rposition(|&s| s != 0)
                .map(|b| (b, (self.directory[b] - 1) as usize)),
        };
        match last_block {
            Some((b, slot)) => {
                let counts = &self.arena[slot << BLOCK_BITS..(slot + 1) << BLOCK_BITS];
                let last = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
                (b << BLOCK_BITS) + last + 1
            }
            None => self.dense.iter().rposition(|&c| c > 0).map_or(0, |w| w + 1),
        }
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counts per window from window 0 to the last non-empty one, in order, empty windows
    /// included: [`Histogram::len`] of them, without building them.
    pub fn dense(&self) -> impl Iterator<Item = u64> + '_ {
        let mut next = 0;
        self.non_empty().flat_map(move |(w, c)| {
            let gap = w - next;
            next = w + 1;
            std::iter::repeat_n(0, gap).chain(std::iter::once(c))
        })
    }

    /// Counts per window from window 0 to the last non-empty one, as a vector: as long as the
    /// span, so for output and tests only (a run never builds it).
    pub fn counts(&self) -> Vec<u64> {
        self.dense().collect()
    }

    /// [`Histogram::counts`] in a vector reserved fallibly: `None` when the system refuses
    /// its [`Histogram::len`] counts (a long sparse run at a fine bin).
    pub fn try_counts(&self) -> Option<Vec<u64>> {
        let mut counts = Vec::new();
        counts.try_reserve_exact(self.len()).ok()?;
        counts.extend(self.dense());
        Some(counts)
    }

    /// Sum of all counts.
    pub fn total(&self) -> u64 {
        self.dense.iter().sum::<u64>() + self.arena.iter().sum::<u64>()
    }

    /// The largest count and the first window holding it; `(0, 0)` when empty.
    pub fn peak(&self) -> (u64, usize) {
        let mut best = (0, 0);
        for (w, c) in self.non_empty() {
            if c > best.0 {
                best = (c, w);
            }
        }
        best
    }

    /// [`Histogram::peak`], [`Histogram::non_empty_windows`] and [`Histogram::total`] in one
    /// pass: a summary's three figures of a histogram. Its windows are mostly empty, so a
    /// run of eight is skipped at once when it holds nothing.
    pub fn figures(&self) -> ((u64, usize), usize, u64) {
        let mut figures = Figures::default();
        for (run, counts) in self.dense.chunks(8).enumerate() {
            figures.add_run(run * 8, counts);
        }
        for (b, counts) in self.blocks() {
            figures.add_run(b << BLOCK_BITS, counts);
        }
        (figures.peak, figures.windows, figures.total)
    }

    /// Number of windows with at least one arrival.
    pub fn non_empty_windows(&self) -> usize {
        self.non_empty().count()
    }

    /// Start time of window `w`.
    pub fn window_start(&self, w: usize) -> SimTime {
        SimTime(w as u64 * self.windows.bin)
    }

    /// Bytes this histogram holds on the heap (approximately, for tests of the memory bound).
    pub fn heap_bytes(&self) -> usize {
        (self.dense.capacity() + self.arena.capacity()) * 8
            + self.directory.capacity() * 4
            + self.beyond.len() * 48
    }
}

/// A histogram's summary figures gathered window by window in order ([`Histogram::figures`]).
#[derive(Default)]
struct Figures {
    /// The largest count and the first window holding it.
    peak: (u64, usize),
    windows: usize,
    total: u64,
}

impl Figures {
    /// Adds the counts of windows `first..first + counts.len()`.
    #[inline(always)]
    fn add_run(&mut self, first: usize, counts: &[u64]) {
        if counts.iter().fold(0, |any, &c| any | c) == 0 {
            return;
        }
        for (i, &c) in counts.iter().enumerate() {
            if c > 0 {
                self.windows += 1;
                self.total += c;
                if c > self.peak.0 {
                    self.peak = (c, first + i);
                }
            }
        }
    }
}

/// The JSON form is dense by definition: every window from 0 to the last non-empty one.
impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for c in self.dense() {
            seq.serialize_element(&c)?;
        }
        seq.end()
    }
}

/// A histogram's summary figures folded window by window (total, peak and its first window,
/// non-empty windows), for a run that counts its windows in time order and writes none of
/// them out: a few numbers however many windows the run spans, where a [`Histogram`] keeps
/// a count for each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowFold {
    /// The window being counted, and its count so far.
    open: usize,
    count: u64,
    /// Figures of the windows before it.
    total: u64,
    peak: u64,
    peak_window: usize,
    non_empty: usize,
}

impl WindowFold {
    /// Counts one arrival in window `w`, never earlier than the last one counted.
    #[inline(always)]
    pub fn record_window(&mut self, w: usize) {
        if w != self.open {
            debug_assert!(w > self.open, "windows are folded in order");
            self.close();
            self.open = w;
        }
        self.count += 1;
    }

    fn close(&mut self) {
        if self.count > 0 {
            self.total += self.count;
            self.non_empty += 1;
            if self.count > self.peak {
                (self.peak, self.peak_window) = (self.count, self.open);
            }
            self.count = 0;
        }
    }

    /// [`Histogram::peak`], [`Histogram::non_empty_windows`] and [`Histogram::total`] of the
    /// same arrivals.
    pub fn figures(&self) -> ((u64, usize), usize, u64) {
        let mut all = *self;
        all.close();
        ((all.peak, all.peak_window), all.non_empty, all.total)
    }
}

/// The window of the last time asked about, so that times that mostly stay in one window (the
/// event queue's, which never go back) pay for the division only when they cross into another.
#[derive(Clone, Debug)]
pub struct WindowCursor {
    windows: Windows,
    /// Where `window` starts.
    start: u64,
    window: usize,
}

impl WindowCursor {
    /// The window `t` falls in: `floor(t / bin)`, as [`Histogram::window_of`].
    #[inline(always)]
    pub fn window_of(&mut self, t: SimTime) -> usize {
        let t = t.as_nanos();
        if t < self.start || t - self.start >= self.windows.bin {
            self.move_to(t);
        }
        self.window
    }

    /// Moves to the window of `t`, outside the cursor's: the next or the previous one by
    /// adding or taking a bin (times read near one another, as completions are, mostly land
    /// there), any other by dividing.
    #[inline]
    fn move_to(&mut self, t: u64) {
        let bin = self.windows.bin;
        if t >= self.start {
            // Past the window: `t - start` is at least a bin, so taking one cannot wrap.
            if t - self.start - bin < bin {
                self.window += 1;
                self.start += bin;
                return;
            }
        } else if self.start - t <= bin {
            // Before it (the window is not the first): within the bin before its start.
            self.window -= 1;
            self.start -= bin;
            return;
        }
        self.window = self.windows.window_of(SimTime(t));
        self.start = self.window as u64 * bin;
    }
}

/// Runs of at most this many clients keep each client's finish time (8 bytes each would be
/// 80 MB at ten million clients, and no one reads ten million numbers).
pub const MAX_CLIENT_FINISHES: usize = 10_000;

/// Everything counted during one run, before it is summarised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Retry arrivals per window (the first request of each client is not a retry).
    pub retries: Histogram,
    /// The retry arrivals' figures folded as their windows passed, for a run that keeps no
    /// window ([`WindowFold`]): then `retries`, `served_windows` and `refused_windows` stay
    /// empty and the summary reads this instead.
    pub retries_folded: Option<WindowFold>,
    /// Requests of any kind, first attempts included.
    pub requests: u64,
    /// Requests the server refused.
    pub refused: u64,
    /// Requests served (one per item; with one item per client, the clients served).
    pub succeeded: u64,
    /// Clients that spent their retry budget without being served.
    pub gave_up: u64,
    /// Earliest retry arrival.
    pub first_retry: Option<SimTime>,
    /// Latest retry arrival.
    pub last_retry: Option<SimTime>,
    /// Latest success.
    pub last_success: Option<SimTime>,
    /// Served requests (first attempts and retries) per window of arrival.
    pub served_windows: Histogram,
    /// Refused requests per window of arrival; with `served_windows`, every request once.
    pub refused_windows: Histogram,
    /// Clients that fetched all their work (the rest gave up).
    pub completed: u64,
    /// When the first client stopped (finished its work or gave up), answer received.
    pub first_finish: Option<SimTime>,
    /// When the last client stopped: the time to finish all work.
    pub last_finish: Option<SimTime>,
    /// When each client stopped, by client id: kept only for runs of at most
    /// [`MAX_CLIENT_FINISHES`] clients ([`Tally::for_clients`]), `None` otherwise.
    pub client_finishes: Option<Vec<Option<SimTime>>>,
    /// When the limiter's windows opened ([`crate::server::Server::window_starts`]), read
    /// from the server once the run is over; `None` when it has none to mark. Only the
    /// event-queue path fills it: the independent path runs servers without windows.
    pub window_starts: Option<Vec<SimTime>>,
    /// What the browser tabs did, for a run with tabs ([`crate::engine::browser`]); `None`
    /// otherwise.
    pub browser: Option<BrowserCounts>,
}

/// What a run's browser tabs did: the summary's `hidden_clients`, `retries_while_hidden`,
/// `paused` and `early_retries`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BrowserCounts {
    /// Tabs hidden at t = 0.
    pub hidden_clients: u64,
    /// Retries sent while their tab was hidden.
    pub retries_while_hidden: u64,
    /// Tabs still waiting to become visible when the run ended.
    pub paused: u64,
    /// Retries that reached the server before the instant its refusal announced.
    pub early_retries: u64,
}

impl BrowserCounts {
    fn add(&mut self, other: &BrowserCounts) {
        self.hidden_clients += other.hidden_clients;
        self.retries_while_hidden += other.retries_while_hidden;
        self.paused += other.paused;
        self.early_retries += other.early_retries;
    }
}

impl Tally {
    /// Nothing counted yet.
    pub fn new(bin: SimDuration) -> Self {
        Tally {
            retries: Histogram::new(bin),
            retries_folded: None,
            requests: 0,
            refused: 0,
            succeeded: 0,
            gave_up: 0,
            first_retry: None,
            last_retry: None,
            last_success: None,
            served_windows: Histogram::new(bin),
            refused_windows: Histogram::new(bin),
            completed: 0,
            first_finish: None,
            last_finish: None,
            client_finishes: None,
            window_starts: None,
            browser: None,
        }
    }

    /// Nothing counted yet, for a run of `clients` clients: keeps each client's finish time
    /// when there are at most [`MAX_CLIENT_FINISHES`] of them.
    pub fn for_clients(bin: SimDuration, clients: u32) -> Self {
        Tally {
            client_finishes: (clients as usize <= MAX_CLIENT_FINISHES)
                .then(|| vec![None; clients as usize]),
            ..Tally::new(bin)
        }
    }

    /// Empties this tally into what [`Tally::for_clients`] makes for `bin` and `clients`,
    /// keeping its histograms' buffers ([`Histogram::clear`]) and its clients' finishes'
    /// vector, so that runs one after another grow them once.
    pub fn clear_for_clients(&mut self, bin: SimDuration, clients: u32) {
        let mut fresh = Tally::new(bin);
        for (mine, theirs) in [
            (&mut self.retries, &mut fresh.retries),
            (&mut self.served_windows, &mut fresh.served_windows),
            (&mut self.refused_windows, &mut fresh.refused_windows),
        ] {
            mine.clear(bin);
            std::mem::swap(mine, theirs);
        }
        let clients = clients as usize;
        fresh.client_finishes = (clients <= MAX_CLIENT_FINISHES).then(|| {
            let mut finishes = self.client_finishes.take().unwrap_or_default();
            finishes.clear();
            finishes.resize(clients, None);
            finishes
        });
        *self = fresh;
    }

    /// Bytes held by this tally's histograms and clients' finishes
    /// ([`Histogram::capacity_bytes`]).
    pub fn capacity_bytes(&self) -> usize {
        let finishes = self.client_finishes.as_ref().map_or(0, |f| {
            f.capacity().saturating_mul(size_of::<Option<SimTime>>())
        });
        [&self.retries, &self.served_windows, &self.refused_windows]
            .iter()
            .fold(finishes, |sum, h| sum.saturating_add(h.capacity_bytes()))
    }

    /// This tally with each histogram limited to `blocks` blocks beyond the dense windows
    /// ([`Histogram::limit_blocks`]; `u64::MAX`: no limit).
    pub fn with_block_limit(mut self, blocks: u64) -> Self {
        let blocks = usize::try_from(blocks).unwrap_or(usize::MAX);
        for h in [
            &mut self.retries,
            &mut self.served_windows,
            &mut self.refused_windows,
        ] {
            h.limit_blocks(blocks);
        }
        self
    }

    /// Whether a histogram dropped a count for want of a block ([`Tally::with_block_limit`]).
    pub fn outgrown(&self) -> bool {
        self.retries.outgrown() || self.served_windows.outgrown() || self.refused_windows.outgrown()
    }

    /// Counts a request at `t`; `retry` says whether it is a retry (numbered 1 and up).
    #[inline(always)]
    pub fn request(&mut self, t: SimTime, retry: bool, served: bool) {
        // One division for the three histograms, which share a bin.
        self.request_in_window(t, self.retries.window_of(t), retry, served);
    }

    /// [`Tally::request`] with the window of `t` already found (by a [`WindowCursor`]).
    #[inline(always)]
    pub fn request_in_window(&mut self, t: SimTime, w: usize, retry: bool, served: bool) {
        self.request_windows(w, retry, served);
        let mut totals = Totals::default();
        totals.request(t, retry, served);
        totals.add_to(self);
    }

    /// Counts a request in window `w` in the histograms only (its counts and times are
    /// [`Totals::request`]'s): served or refused, and a retry's arrival.
    #[inline(always)]
    pub fn request_windows(&mut self, w: usize, retry: bool, served: bool) {
        if served {
            self.served_windows.record_window(w);
        } else {
            self.refused_windows.record_window(w);
        }
        if retry {
            self.retries.record_window(w);
        }
    }

    /// Counts a retry arriving in window `w`, in order of time: in the histogram, or folded
    /// ([`Tally::retries_folded`]).
    #[inline(always)]
    pub fn retry_in_window(&mut self, w: usize) {
        match &mut self.retries_folded {
            Some(fold) => fold.record_window(w),
            None => self.retries.record_window(w),
        }
    }

    /// Counts a request served (`served`) or refused in window `w` in its histogram, unless
    /// the tally keeps no window ([`Tally::retries_folded`]).
    #[inline(always)]
    pub fn answer_in_window(&mut self, w: usize, served: bool) {
        if self.retries_folded.is_none() {
            if served {
                self.served_windows.record_window(w);
            } else {
                self.refused_windows.record_window(w);
            }
        }
    }

    /// Counts client `id` stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    pub fn finish(&mut self, t: SimTime, id: u32, completed: bool) {
        if completed {
            self.completed += 1;
        }
        self.client_finished(id, t);
        self.first_finish = earliest(self.first_finish, Some(t));
        self.last_finish = self.last_finish.max(Some(t));
    }

    /// Keeps client `id`'s finish time `t`, if this tally keeps them ([`Tally::for_clients`]).
    #[inline(always)]
    pub fn client_finished(&mut self, id: u32, t: SimTime) {
        if let Some(finishes) = &mut self.client_finishes {
            finishes[id as usize] = Some(t);
        }
    }

    /// Adds a tally of other clients of the same run (the order of merging never matters).
    pub fn merge(&mut self, other: &Tally) {
        debug_assert!(
            self.retries_folded.is_none() && other.retries_folded.is_none(),
            "folded tallies are not merged"
        );
        self.retries.merge(&other.retries);
        self.requests += other.requests;
        self.refused += other.refused;
        self.succeeded += other.succeeded;
        self.gave_up += other.gave_up;
        self.first_retry = earliest(self.first_retry, other.first_retry);
        self.last_retry = self.last_retry.max(other.last_retry);
        self.last_success = self.last_success.max(other.last_success);
        self.served_windows.merge(&other.served_windows);
        self.refused_windows.merge(&other.refused_windows);
        self.completed += other.completed;
        self.first_finish = earliest(self.first_finish, other.first_finish);
        self.last_finish = self.last_finish.max(other.last_finish);
        match (&mut self.client_finishes, &other.client_finishes) {
            (Some(mine), Some(theirs)) => {
                for (m, t) in mine.iter_mut().zip(theirs) {
                    *m = m.or(*t);
                }
            }
            (mine @ None, Some(theirs)) => *mine = Some(theirs.clone()),
            _ => {}
        }
        match (&mut self.browser, &other.browser) {
            (Some(mine), Some(theirs)) => mine.add(theirs),
            (mine @ None, Some(theirs)) => *mine = Some(*theirs),
            _ => {}
        }
    }
}

/// The earlier of two times, either of which may be absent.
#[inline]
fn earliest(a: Option<SimTime>, b: Option<SimTime>) -> Option<SimTime> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// A [`Tally`]'s counts and first and last times while a loop counts requests: plain
/// integers, a time's absence told by its count, which the loop keeps in registers instead of
/// updating the tally's fields and `Option`s in memory at every request. Added to the tally
/// once the loop ends ([`Totals::add_to`]); the histograms are counted in the tally as the
/// loop goes ([`Tally::request_windows`]). The fewer it keeps, the fewer registers the loop
/// needs: the requests are the refused and the served, and whether any retry was made is told
/// by its first and last times (the first at or before the last exactly when there was one).
#[derive(Clone, Copy, Debug)]
pub struct Totals {
    refused: u64,
    succeeded: u64,
    gave_up: u64,
    completed: u64,
    first_retry: u64,
    last_retry: u64,
    last_success: u64,
    first_finish: u64,
    last_finish: u64,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            refused: 0,
            succeeded: 0,
            gave_up: 0,
            completed: 0,
            first_retry: u64::MAX,
            last_retry: 0,
            last_success: 0,
            first_finish: u64::MAX,
            last_finish: 0,
        }
    }
}

impl Totals {
    /// Counts a request at `t`; `retry` says whether it is a retry, `served` whether it was
    /// served (else refused).
    #[inline(always)]
    pub fn request(&mut self, t: SimTime, retry: bool, served: bool) {
        let t = t.as_nanos();
        if retry {
            self.first_retry = self.first_retry.min(t);
            self.last_retry = self.last_retry.max(t);
        }
        if served {
            self.succeeded += 1;
            self.last_success = self.last_success.max(t);
        } else {
            self.refused += 1;
        }
    }

    /// Counts a client stopping at `t`: `completed` when its work is done, else it gave up.
    #[inline(always)]
    pub fn finish(&mut self, t: SimTime, completed: bool) {
        let t = t.as_nanos();
        if completed {
            self.completed += 1;
        } else {
            self.gave_up += 1;
        }
        self.first_finish = self.first_finish.min(t);
        self.last_finish = self.last_finish.max(t);
    }

    /// Adds these counts and times to `tally`'s.
    #[inline(always)]
    pub fn add_to(&self, tally: &mut Tally) {
        let when = |count: u64, t: u64| (count > 0).then_some(SimTime(t));
        let finished = self.completed + self.gave_up;
        tally.requests += self.refused + self.succeeded;
        tally.refused += self.refused;
        tally.succeeded += self.succeeded;
        tally.gave_up += self.gave_up;
        tally.completed += self.completed;
        let retried = u64::from(self.first_retry <= self.last_retry);
        tally.first_retry = earliest(tally.first_retry, when(retried, self.first_retry));
        tally.last_retry = tally.last_retry.max(when(retried, self.last_retry));
        tally.last_success = tally
            .last_success
            .max(when(self.succeeded, self.last_success));
        tally.first_finish = earliest(tally.first_finish, when(finished, self.first_finish));
        tally.last_finish = tally.last_finish.max(when(finished, self.last_finish));
    }
}

/// The figures a run is reported by. Field names are the JSON and CSV names.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Largest number of retries in one window.
    pub peak: u64,
    /// Start of the first window holding the peak, in seconds.
    pub peak_window_s: f64,
    /// Windows with at least one retry.
    pub windows: usize,
    /// From the first retry arrival to the last, in seconds.
    pub span_s: f64,
    /// Retry arrivals; equals the sum of the histogram.
    pub total: u64,
    /// Requests of any kind (first attempts and retries).
    pub requests: u64,
    /// Requests refused.
    pub refused: u64,
    /// Clients eventually served.
    pub succeeded: u64,
    /// Clients that gave up after their last retry.
    pub gave_up: u64,
    /// Time of the last success in seconds, if any client succeeded.
    pub last_success_s: Option<f64>,
    /// Clients that fetched all their work.
    pub completed: u64,
    /// Refused requests as a percentage of all requests (0 when there were none).
    pub wasted_pct: f64,
    /// Time to finish all work: when the last client stopped, its last answer received, in
    /// seconds.
    pub finish_s: f64,
    /// Latest minus earliest client finish, in seconds.
    pub finish_spread_s: f64,
    /// `occ` only: writes sent, failed ones included (Brooker's "calls"), the same count as
    /// `requests` under the study's name. Absent from the JSON and the sweep's columns for
    /// the other servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u64>,
    /// Runs with browser tabs only (as the next three): tabs hidden at t = 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_clients: Option<u64>,
    /// Retries sent while their tab was hidden.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries_while_hidden: Option<u64>,
    /// Tabs still paused (hidden, waiting to become visible) when the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<u64>,
    /// Retries that reached the server before the instant its refusal announced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_retries: Option<u64>,
}

impl Summary {
    /// Summarises a tally.
    pub fn of(tally: &Tally) -> Self {
        let ((peak, peak_window), windows, total) = match &tally.retries_folded {
            Some(fold) => fold.figures(),
            None => tally.retries.figures(),
        };
        let span = match (tally.first_retry, tally.last_retry) {
            (Some(first), Some(last)) => last - first,
            _ => SimDuration::ZERO,
        };
        Summary {
            peak,
            peak_window_s: tally.retries.window_start(peak_window).as_secs_f64(),
            windows,
            span_s: span.as_secs_f64(),
            total,
            requests: tally.requests,
            refused: tally.refused,
            succeeded: tally.succeeded,
            gave_up: tally.gave_up,
            last_success_s: tally.last_success.map(SimTime::as_secs_f64),
            completed: tally.completed,
            wasted_pct: if tally.requests == 0 {
                0.0
            } else {
                100.0 * tally.refused as f64 / tally.requests as f64
            },
            finish_s: tally.last_finish.map_or(0.0, SimTime::as_secs_f64),
            finish_spread_s: match (tally.first_finish, tally.last_finish) {
                (Some(first), Some(last)) => (last - first).as_secs_f64(),
                _ => 0.0,
            },
            attempts: None,
            hidden_clients: tally.browser.map(|b| b.hidden_clients),
            retries_while_hidden: tally.browser.map(|b| b.retries_while_hidden),
            paused: tally.browser.map(|b| b.paused),
            early_retries: tally.browser.map(|b| b.early_retries),
        }
    }

    /// [`Summary::of`], with `attempts` filled in when `attempts` is true (an `occ` run).
    pub fn with_attempts(tally: &Tally, attempts: bool) -> Self {
        let mut summary = Summary::of(tally);
        summary.attempts = attempts.then_some(summary.requests);
        summary
    }
}

/// Mean, standard deviation and range of one figure over replicates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Spread {
        let values: Vec<f64> = values.into_iter().collect();
        if values.is_empty() {
            return Spread {
                mean: 0.0,
                sd: 0.0,
                min: 0.0,
                max: 0.0,
            };
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let sd = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Spread {
            mean,
            sd,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The work figures of a strategy over its replicates (epoch phases and seeds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReplicateSpread {
    /// Number of replicates.
    pub replicates: u32,
    /// Requests sent.
    pub requests: Spread,
    /// Requests refused.
    pub refused: Spread,
    /// Refused / requests, percent.
    pub wasted_pct: Spread,
    /// Time to finish all work, seconds.
    pub finish_s: Spread,
    /// Latest minus earliest client finish, seconds.
    pub finish_spread_s: Spread,
}

impl ReplicateSpread {
    /// The spread of each figure over `summaries`.
    pub fn of(summaries: &[Summary]) -> ReplicateSpread {
        let figures: Vec<[f64; 5]> = summaries.iter().map(Self::figures).collect();
        Self::of_figures(&figures)
    }

    /// The five figures of one replicate this spread describes, in field order: requests,
    /// refused, wasted_pct, finish_s, finish_spread_s.
    pub fn figures(s: &Summary) -> [f64; 5] {
        [
            s.requests as f64,
            s.refused as f64,
            s.wasted_pct,
            s.finish_s,
            s.finish_spread_s,
        ]
    }

    /// The spread of each figure over replicates given by [`ReplicateSpread::figures`].
    pub fn of_figures(figures: &[[f64; 5]]) -> ReplicateSpread {
        let over = |i: usize| Spread::of(figures.iter().map(|f| f[i]));
        ReplicateSpread {
            replicates: figures.len() as u32,
            requests: over(0),
            refused: over(1),
            wasted_pct: over(2),
            finish_s: over(3),
            finish_spread_s: over(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cleared_tally_is_a_new_one_with_its_buffers_kept() {
        let bin = SimDuration::from_millis(100);
        let mut tally = Tally::for_clients(SimDuration::from_millis(1), 3).with_block_limit(1);
        for (i, t) in [0, 5, 70_000, 2_000_000].into_iter().enumerate() {
            tally.request(SimTime(t * 1_000_000), i > 0, i % 2 == 0);
        }
        tally.finish(SimTime(9), 1, true);
        assert!(tally.outgrown(), "a second block past the limit of one");
        let held = tally.capacity_bytes();
        tally.clear_for_clients(bin, 2);
        assert_eq!(tally, Tally::for_clients(bin, 2));
        assert!(!tally.outgrown());
        assert_eq!(tally.retries.bin(), bin);
        assert_eq!(tally.retries.blocks_held(), 0);
        // Each histogram's one block was in its ordered map, which clearing frees; the rest is
        // kept.
        assert!(tally.capacity_bytes() >= held - 3 * size_of::<(usize, u32)>());
        // Counting into it again counts as into a new tally.
        let mut fresh = Tally::for_clients(bin, 2);
        for t in [tally_time(1), tally_time(3_000)] {
            tally.request(t, true, false);
            fresh.request(t, true, false);
        }
        assert_eq!(tally, fresh);
        assert_eq!(tally.retries.counts(), fresh.retries.counts());
        tally.clear_for_clients(bin, MAX_CLIENT_FINISHES as u32 + 1);
        assert_eq!(tally.client_finishes, None);
    }

    fn tally_time(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn spread_of_a_small_sample_by_hand() {
        // 2, 4, 6: mean 4, sample variance (4 + 0 + 4) / 2 = 4, sd 2.
        let s = Spread::of([2.0, 4.0, 6.0]);
        assert_eq!((s.mean, s.sd, s.min, s.max), (4.0, 2.0, 2.0, 6.0));
        assert_eq!(Spread::of([7.0]).sd, 0.0);
    }

    #[test]
    fn a_histogram_limited_to_two_blocks_drops_the_third_and_says_so() {
        // Windows beyond the dense ones fall in blocks of 16: window D and D + 5 share block
        // D/16, D + 16 is the next, D + 40 a third. Limited to two blocks, the third's count
        // is dropped and the histogram is outgrown; the dense windows are never limited. A
        // merge into an unlimited histogram carries the mark.
        let d = DENSE_WINDOWS;
        let mut h = Histogram::new(SimDuration::from_millis(100));
        h.limit_blocks(2);
        for w in [0, d - 1, d, d + 5, d + 16] {
            h.record_window(w);
        }
        assert!(!h.outgrown());
        assert_eq!(h.blocks_held(), 2);
        h.record_window(d + 40);
        h.record_window(d + 17);
        assert!(h.outgrown());
        assert_eq!(h.blocks_held(), 2);
        assert_eq!(h.total(), 6);
        assert_eq!(h.count(d + 40), 0);
        assert_eq!(h.count(d + 17), 1);
        let mut all = Histogram::new(SimDuration::from_millis(100));
        all.merge(&h);
        assert!(all.outgrown());
        // A tally limited to one block a histogram is outgrown as soon as any of its three
        // needs a second.
        let mut t = Tally::new(SimDuration::from_millis(100)).with_block_limit(1);
        t.request_in_window(SimTime::ZERO, d, true, true);
        t.request_in_window(SimTime::ZERO, d + 16, false, false);
        assert!(!t.outgrown(), "each histogram holds one block");
        t.request_in_window(SimTime::ZERO, d + 32, false, true);
        assert!(t.outgrown());
    }

    #[test]
    fn served_and_refused_windows_count_every_request_once() {
        let bin = SimDuration::from_millis(100);
        let mut t = Tally::new(bin);
        t.request(SimTime(50_000_000), false, true);
        t.request(SimTime(150_000_000), false, false);
        t.request(SimTime(160_000_000), true, true);
        t.finish(SimTime(170_000_000), 0, true);
        t.finish(SimTime(400_000_000), 1, false);
        assert_eq!(t.served_windows.counts(), [1, 1]);
        assert_eq!(t.refused_windows.counts(), [0, 1]);
        assert_eq!(
            t.served_windows.total() + t.refused_windows.total(),
            t.requests
        );
        let s = Summary::of(&t);
        assert_eq!(s.completed, 1);
        assert!((s.wasted_pct - 100.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.finish_s, 0.4);
        assert!((s.finish_spread_s - 0.23).abs() < 1e-12);
    }

    #[test]
    fn a_cursor_finds_the_same_windows_as_division_forward_and_back() {
        use crate::rng::{uniform_below, ClientRng};
        let mut rng = ClientRng::new(18);
        for bin in [1, 7, 100_000_000, 999_999_937, u64::MAX / 3, u64::MAX] {
            let h = Histogram::new(SimDuration(bin));
            let mut cursor = h.cursor();
            let mut t = 0u64;
            for _ in 0..20_000 {
                // Mostly small steps forward, some jumps, some steps back (the independent
                // path starts each client again at 0), some of up to two bins either way (as
                // completions out of order step into the next window and back).
                let near = 2 * bin.min(1 << 40) + 1;
                t = match uniform_below(&mut rng, 10) {
                    0 => uniform_below(&mut rng, t.saturating_add(1)),
                    1 => uniform_below(&mut rng, u64::MAX),
                    2 => u64::MAX - uniform_below(&mut rng, 3),
                    3 => t.saturating_sub(uniform_below(&mut rng, near)),
                    4 => t.saturating_add(uniform_below(&mut rng, near)),
                    _ => t.saturating_add(uniform_below(&mut rng, bin.min(1 << 40) / 4 + 1)),
                };
                assert_eq!(
                    cursor.window_of(SimTime(t)),
                    (t / bin) as usize,
                    "{t} / {bin}"
                );
            }
        }
    }

    #[test]
    fn window_of_is_exact_division() {
        use crate::rng::{uniform_below, ClientRng};
        let mut rng = ClientRng::new(17);
        for bin in [
            1,
            2,
            3,
            7,
            1 << 20,
            100_000_000,
            1_000_000_000,
            999_999_937,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let h = Histogram::new(SimDuration(bin));
            // Either side of the last time one multiplication is exact for.
            let exact_to = h.windows().exact_to;
            for t in [
                0,
                1,
                bin - 1,
                bin,
                bin.saturating_add(1),
                exact_to.saturating_sub(1),
                exact_to,
                exact_to.saturating_add(1),
                u64::MAX - 1,
                u64::MAX,
            ] {
                assert_eq!(h.window_of(SimTime(t)), (t / bin) as usize, "{t} / {bin}");
            }
            for _ in 0..20_000 {
                let t = match uniform_below(&mut rng, 5) {
                    0 => uniform_below(&mut rng, 1 << 40),
                    1 => uniform_below(&mut rng, u64::MAX),
                    2 => uniform_below(&mut rng, exact_to.saturating_add(1)),
                    3 => exact_to.saturating_add(uniform_below(&mut rng, 1 << 40)),
                    _ => uniform_below(&mut rng, 1 << 20)
                        .saturating_mul(bin)
                        .saturating_sub(1),
                };
                assert_eq!(h.window_of(SimTime(t)), (t / bin) as usize, "{t} / {bin}");
            }
        }
    }

    /// A dense reference: what the histogram held before it was sparse.
    fn dense_reference(windows: &[usize]) -> Vec<u64> {
        let mut counts = Vec::new();
        for &w in windows {
            if w >= counts.len() {
                counts.resize(w + 1, 0);
            }
            counts[w] += 1;
        }
        counts
    }

    #[test]
    fn sparse_blocks_hold_what_a_dense_vector_would() {
        use crate::rng::{uniform_below, ClientRng};
        let mut rng = ClientRng::new(19);
        // Forward steps, returns to 0 (the independent path), far jumps beyond the directory
        // (later covered by it as blocks accumulate), in every mix.
        for case in 0..40 {
            let mut windows = Vec::new();
            let mut w = 0usize;
            for _ in 0..uniform_below(&mut rng, 3000) {
                w = match uniform_below(&mut rng, 6) {
                    0 => 0,
                    1 => uniform_below(&mut rng, 1 << 18) as usize,
                    2 => uniform_below(&mut rng, (w + 1) as u64) as usize,
                    _ => w + uniform_below(&mut rng, 200) as usize,
                };
                windows.push(w);
            }
            let reference = dense_reference(&windows);
            let mut h = Histogram::new(SimDuration(1));
            for &w in &windows {
                h.record_window(w);
            }
            assert_eq!(h.counts(), reference, "case {case}");
            assert_eq!(h.len(), reference.len());
            assert_eq!(h.total(), windows.len() as u64);
            assert_eq!(
                h.non_empty_windows(),
                reference.iter().filter(|&&c| c > 0).count()
            );
            let mut best = (0, 0);
            for (w, &c) in reference.iter().enumerate() {
                if c > best.0 {
                    best = (c, w);
                }
            }
            assert_eq!(h.peak(), best);
            for (w, &c) in reference.iter().enumerate().step_by(7) {
                assert_eq!(h.count(w), c);
            }
            // The same windows in another order are the same histogram, and merging halves
            // gives the whole.
            let mut reversed = Histogram::new(SimDuration(1));
            let (first, second) = windows.split_at(windows.len() / 2);
            let mut other = Histogram::new(SimDuration(1));
            for &w in second.iter().rev() {
                reversed.record_window(w);
            }
            for &w in first {
                other.record_window(w);
            }
            reversed.merge(&other);
            assert_eq!(reversed, h, "case {case}");
            assert_eq!(
                serde_json::to_string(&h).unwrap(),
                serde_json::to_string(&reference).unwrap()
            );
        }
    }

    #[test]
    fn a_few_windows_far_apart_take_a_few_blocks() {
        // One arrival an hour for ten hours at 1 ms bins: 36 million windows dense (288 MB),
        // eleven blocks here.
        let mut h = Histogram::new(SimDuration::from_millis(1));
        for hour in 0..=10u64 {
            h.record(SimTime(hour * 3_600_000_000_000));
        }
        assert_eq!(h.len(), 36_000_001);
        assert_eq!(h.non_empty_windows(), 11);
        assert!(h.heap_bytes() < 16 * 1024, "{} B", h.heap_bytes());
        assert!(Histogram::new(SimDuration(1)).is_empty());
        assert_eq!(Histogram::new(SimDuration(1)).counts(), Vec::<u64>::new());
    }

    #[test]
    fn the_figures_in_one_pass_are_the_peak_the_windows_and_the_total() {
        // Worked out independently: the first window holding the largest count, the windows
        // counted, the counts summed, over dense windows, blocks and the map beyond them.
        let mut state = 0x5eed_u64;
        for case in 0..200u64 {
            let mut h = Histogram::new(SimDuration(1));
            let mut counts = std::collections::BTreeMap::new();
            let spread = [40, 20_000, DENSE_WINDOWS as u64 * 300][(case % 3) as usize];
            for _ in 0..case % 50 {
                let w = (crate::rng::splitmix64(&mut state) % spread) as usize;
                h.record_window(w);
                *counts.entry(w).or_insert(0u64) += 1;
            }
            let mut peak = (0, 0);
            for (&w, &c) in &counts {
                if c > peak.0 {
                    peak = (c, w);
                }
            }
            let total = counts.values().sum::<u64>();
            assert_eq!(h.figures(), (peak, counts.len(), total), "case {case}");
            assert_eq!(h.figures(), (h.peak(), h.non_empty_windows(), h.total()));
        }
    }

    #[test]
    fn window_boundaries_are_exact() {
        let mut h = Histogram::new(SimDuration::from_millis(100));
        h.record(SimTime(999_999_999)); // window 9
        h.record(SimTime(1_000_000_000)); // window 10, not 9
        h.record(SimTime(1_099_999_999)); // window 10
        assert_eq!(h.counts()[9], 1);
        assert_eq!(h.counts()[10], 2);
        assert_eq!(h.peak(), (2, 10));
        assert_eq!(h.non_empty_windows(), 2);
        assert_eq!(h.total(), 3);
    }

    #[test]
    fn each_client_finish_is_kept_for_small_runs_and_merges_by_client() {
        let bin = SimDuration::from_millis(100);
        assert!(Tally::for_clients(bin, MAX_CLIENT_FINISHES as u32 + 1)
            .client_finishes
            .is_none());
        let mut a = Tally::for_clients(bin, 3);
        let mut b = Tally::for_clients(bin, 3);
        a.finish(SimTime(5), 2, true);
        b.finish(SimTime(7), 0, false);
        b.finish(SimTime(9), 1, true);
        a.merge(&b);
        assert_eq!(
            a.client_finishes,
            Some(vec![Some(SimTime(7)), Some(SimTime(9)), Some(SimTime(5))])
        );
        assert_eq!(
            (a.first_finish, a.last_finish),
            (Some(SimTime(5)), Some(SimTime(9)))
        );
        let mut empty = Tally::new(bin);
        empty.merge(&a);
        assert_eq!(empty.client_finishes, a.client_finishes);
    }

    #[test]
    fn merging_adds_windows_and_widens_extremes() {
        let bin = SimDuration::from_millis(100);
        let mut a = Tally::new(bin);
        a.request(SimTime(0), false, false);
        a.request(SimTime::ZERO + SimDuration::from_secs(1), true, false);
        let mut b = Tally::new(bin);
        b.request(SimTime::ZERO + SimDuration::from_secs(3), true, true);
        a.merge(&b);
        assert_eq!(a.requests, 3);
        assert_eq!(a.refused, 2);
        assert_eq!(a.succeeded, 1);
        assert_eq!(a.retries.total(), 2);
        let s = Summary::of(&a);
        assert_eq!(s.span_s, 2.0);
        assert_eq!(s.last_success_s, Some(3.0));
        assert_eq!(s.peak, 1);
        assert_eq!(s.peak_window_s, 1.0);
    }
}
