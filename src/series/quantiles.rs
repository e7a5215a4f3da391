//! Latency quantiles: the log-bucketed [`Sketch`] (within 1/256 of the nearest-rank
//! quantile, 64 KiB whatever the samples) and a window's p50 and p99 ([`WindowLatencies`]),
//! found by selection among its few values and answered at the sketch's bucket midpoints.
//! Separate from the windows: it knows nothing of calls, only of nanosecond values.

const SUB_BITS: u32 = 7;

const SUB: u64 = 1 << SUB_BITS;

/// Buckets of a [`Sketch`]: values below 2^7 one each, then 128 per power of two up to 2^64.
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// A log-bucketed histogram of nanosecond values with relative error at most 1/256 (see the
/// module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sketch {
    counts: Vec<u64>,
    total: u64,
    /// The lowest and highest buckets counted in (`BUCKETS` and 0 when empty): every bucket
    /// outside them is zero.
    low: usize,
    high: usize,
}

impl Default for Sketch {
    fn default() -> Self {
        Self::new()
    }
}

impl Sketch {
    /// An empty sketch.
    pub fn new() -> Self {
        Sketch {
            counts: vec![0; BUCKETS],
            total: 0,
            low: BUCKETS,
            high: 0,
        }
    }

    #[inline(always)]
    pub(super) fn bucket(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros();
        let sub = (v >> (e - SUB_BITS)) - SUB;
        ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
    }

    /// The midpoint of bucket `b` (the value itself below 128).
    pub(super) fn value(b: usize) -> u64 {
        let b = b as u64;
        if b < SUB {
            return b;
        }
        let e = b / SUB + u64::from(SUB_BITS) - 1;
        let low = (SUB + b % SUB) << (e - u64::from(SUB_BITS));
        let width = 1u64 << (e - u64::from(SUB_BITS));
        low + width / 2
    }

    /// Counts one value.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        self.counts[b] += 1;
        self.total += 1;
        self.low = self.low.min(b);
        self.high = self.high.max(b);
    }

    /// Values counted.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The `q`-quantile (nearest rank: the ⌈q·n⌉-th smallest value), to within 1/256; `None`
    /// when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (b, &c) in self.counts[..=self.high].iter().enumerate().skip(self.low) {
            seen += c;
            if seen >= rank {
                return Some(Self::value(b));
            }
        }
        None
    }

    /// Forgets every value.
    pub fn clear(&mut self) {
        if self.total > 0 {
            self.counts[self.low..=self.high].fill(0);
            self.total = 0;
            self.low = BUCKETS;
            self.high = 0;
        }
    }
}

/// Latencies a window keeps as they are before it counts them in a [`Sketch`].
pub const WINDOW_VALUES: usize = 1024;

/// One window's latencies, for its p50 and p99: the values themselves while there are at
/// most [`WINDOW_VALUES`], then a sketch (see the module documentation). Its quantiles are a
/// [`Sketch`]'s of the same values, exactly.
#[derive(Clone, Debug, Default)]
pub struct WindowLatencies {
    values: Vec<u64>,
    /// Counting in the sketch (the window passed [`WINDOW_VALUES`]).
    spilled: bool,
    /// Allocated the first time a window spills, then reused.
    sketch: Option<Box<Sketch>>,
}

impl WindowLatencies {
    /// No latency yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one latency.
    #[inline(always)]
    pub fn record(&mut self, v: u64) {
        if !self.spilled && self.values.len() < WINDOW_VALUES {
            self.values.push(v);
        } else {
            self.record_in_sketch(v);
        }
    }

    #[cold]
    fn record_in_sketch(&mut self, v: u64) {
        let sketch = self.sketch.get_or_insert_with(|| Box::new(Sketch::new()));
        if !self.spilled {
            self.spilled = true;
            for &value in &self.values {
                sketch.record(value);
            }
            self.values.clear();
        }
        sketch.record(v);
    }

    /// The p50 and p99 of the latencies counted (`None` when none were), as
    /// [`Sketch::quantile`] gives them; then forgets every latency.
    pub fn take_p50_p99(&mut self) -> (Option<u64>, Option<u64>) {
        if self.spilled {
            self.spilled = false;
            let sketch = self
                .sketch
                .as_mut()
                .expect("a spilled window has its sketch");
            let quantiles = (sketch.quantile(0.5), sketch.quantile(0.99));
            sketch.clear();
            return quantiles;
        }
        let n = self.values.len();
        if n == 0 {
            return (None, None);
        }
        // Sketch::quantile's rank, 1-based; the p99's is at or above the p50's.
        let rank = |q: f64| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
        let (r50, r99) = (rank(0.5), rank(0.99));
        let p50 = select(&mut self.values, r50);
        let above = &mut self.values[r50 + 1..];
        let p99 = if r99 == r50 {
            p50
        } else if r99 == n - 1 {
            // The largest (every window of at most 100 latencies): one pass.
            above.iter().copied().fold(p50, u64::max)
        } else {
            select(above, r99 - r50 - 1)
        };
        self.values.clear();
        (
            Some(Sketch::value(Sketch::bucket(p50))),
            Some(Sketch::value(Sketch::bucket(p99))),
        )
    }
}

/// The `k`-th smallest of `values` (from 0), which it reorders so that none before `k` is
/// larger and none after it smaller: a quickselect, each step partitioning around the median
/// of its span's ends and middle (the order the library's `select_nth_unstable` leaves is the
/// same kind; this is about half its instructions on a window's few dozen latencies).
pub(super) fn select(values: &mut [u64], k: usize) -> u64 {
    debug_assert!(k < values.len());
    let (mut low, mut high) = (0, values.len() - 1);
    loop {
        if high <= low + 1 {
            if high == low + 1 && values[high] < values[low] {
                values.swap(low, high);
            }
            return values[k];
        }
        // The median of three at `low + 1`, the smallest at `low` and the largest at `high`:
        // they stop the scans below at the span's ends.
        values.swap((low + high) / 2, low + 1);
        if values[low] > values[high] {
            values.swap(low, high);
        }
        if values[low + 1] > values[high] {
            values.swap(low + 1, high);
        }
        if values[low] > values[low + 1] {
            values.swap(low, low + 1);
        }
        let pivot = values[low + 1];
        let (mut i, mut j) = (low + 1, high);
        loop {
            i += 1;
            while values[i] < pivot {
                i += 1;
            }
            j -= 1;
            while values[j] > pivot {
                j -= 1;
            }
            if j < i {
                break;
            }
            values.swap(i, j);
        }
        // The pivot to its place, `j`: none before it larger, none after it smaller.
        values[low + 1] = values[j];
        values[j] = pivot;
        if j >= k {
            high = j - 1;
        }
        if j <= k {
            low = i;
        }
    }
}
