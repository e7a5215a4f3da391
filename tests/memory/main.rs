//! Memory, measured: a counting global allocator (this binary's own, so no other test's
//! allocations mix in) records the peak of live heap bytes while a run executes. The tests
//! check that memory follows the work in flight and not simulated time, and that the up-front
//! estimate ([`Scenario::memory_estimate`]) bounds the real peak of every path.
//!
//! Each test holds a lock ([`serial`]), so the tests of this binary run one at a time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod aggregate;
mod closed;
mod estimate;
mod flat;
mod merge;
mod paths;
mod resume;
mod sparse;
mod sweep;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Counted as the new block arriving before the old one leaves, as a moving
            // reallocation needs.
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Held for a whole test: no other test of this binary allocates while it measures.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A pool of `threads` (1 or 2) workers for the whole binary, built once and never dropped: a
/// pool dropped at the end of a test would free its threads' memory while another measures.
/// Take it before measuring: building it allocates.
pub fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: [std::sync::OnceLock<rayon::ThreadPool>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    POOLS[threads - 1].get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    })
}

/// Runs `f` and returns its value and the peak of heap bytes allocated during it, above what
/// was live when it started. Call it under [`serial`].
pub fn peak_bytes<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.load(Ordering::SeqCst);
    PEAK.store(start, Ordering::SeqCst);
    let value = f();
    let peak = PEAK.load(Ordering::SeqCst);
    (value, peak.saturating_sub(start))
}

/// A two-thread pool, built before any measurement (its threads' own allocations stay out).
pub fn two_threads() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("two threads")
}
