//! The window histogram: which window a time falls in (`floor(t / bin)` in integer
//! nanoseconds, found without a division), the counts per window (dense up to
//! [`DENSE_WINDOWS`], then in blocks of [`BLOCK_WINDOWS`] filed as they are touched), the
//! figures read from them in one pass, and the cursor and fold the loops keep beside them.

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

/// `v`'s buffer, emptied, leaving `v` without one.
fn emptied<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut kept = std::mem::take(v);
    kept.clear();
    kept
}

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
        *self = Histogram {
            dense: emptied(&mut self.dense),
            arena: emptied(&mut self.arena),
            directory: emptied(&mut self.directory),
            ..Histogram::new(bin)
        };
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
