//! Randomness: the documented rule that turns one master seed into every draw of a run.
//!
//! The rule, in full (docs/model.md repeats it):
//! 1. A run has one 64-bit **run seed**. A plain run uses the master seed (`--seed`) as its run
//!    seed, so every strategy of one invocation sees the same per-client streams (common random
//!    numbers: differences between strategies are the strategies', not the dice's). Sweeps derive
//!    a run seed per cell and replicate with [`derive_seed`].
//! 2. The run seed is expanded by SplitMix64 into a 256-bit ChaCha8 key ([`chacha_for_run`]).
//! 3. Client `i` (0-based) gets the `i`-th 64-bit word of that ChaCha8 stream as its **client
//!    seed** ([`ClientSeeds`]); ChaCha's counter lets any block of clients start anywhere, so
//!    clients can be seeded in parallel with identical results.
//! 4. Each client draws from its own [`ClientRng`] (SplitMix64, 8 bytes of state) started at its
//!    client seed. A client's draws therefore depend only on the run seed, its index and how
//!    many draws it made before — never on event order, thread count or the other clients —
//!    which is why the event-queue engine and the independent-client fast path agree exactly.
//! 5. A server pool's balancer ([`crate::server::Pool`]) draws from its own [`ClientRng`]
//!    started at `derive_seed(run seed, "balancer")`, one server a draw in the order the
//!    attempts are sent; the clients' streams are untouched, and one server draws nothing.
//!
//! Uniform integers come from [`uniform_below`] (Lemire's multiply-and-reject), written here
//! rather than borrowed so that a dependency upgrade cannot change a published figure.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of SplitMix64 (Steele, Lea & Flood 2014): advances `state` and returns a mixed word.
#[inline(always)]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A 64-bit word as a uniform `f64` in `[0, 1)`: its top 53 bits times 2^-53, exact, so every
/// caller that draws a probability from a word (the engine's delays, a throttle's rejection, the
/// golden traces, the client guard) turns the same word into the same number.
#[inline(always)]
pub fn unit_interval(word: u64) -> f64 {
    (word >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The ChaCha8 generator of a run: key = four SplitMix64 words from the run seed, stream 0.
pub fn chacha_for_run(run_seed: u64) -> ChaCha8Rng {
    let mut state = run_seed;
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    ChaCha8Rng::from_seed(key)
}

/// Derives a run seed from a master seed and a label (a sweep cell's canonical parameters and
/// replicate number): FNV-1a of the label, mixed with the master seed through SplitMix64.
///
/// Only the master seed and the label matter, so a cell gets the same seed in any sweep, in any
/// order, on any thread.
pub fn derive_seed(master: u64, label: &str) -> u64 {
    LabelHash::default().then(label.as_bytes()).seed(master)
}

/// FNV-1a over a label's bytes as they come, so that the labels sharing a start (a sweep
/// cell's parameters, then each replicate's number) hash that start once:
/// `LabelHash::default().then(a).then(b).seed(master)` is `derive_seed(master, a + b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelHash(u64);

impl Default for LabelHash {
    fn default() -> Self {
        LabelHash(0xcbf2_9ce4_8422_2325)
    }
}

impl LabelHash {
    /// The hash of the label so far followed by `bytes`.
    #[inline]
    pub fn then(self, bytes: &[u8]) -> LabelHash {
        let mut hash = self.0;
        for &byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        LabelHash(hash)
    }

    /// The run seed of the label hashed so far under `master` ([`derive_seed`]).
    #[inline]
    pub fn seed(self, master: u64) -> u64 {
        let mut state = master ^ self.0.rotate_left(32);
        splitmix64(&mut state)
    }
}

/// The client seeds of a run, read in client order from any starting client.
pub struct ClientSeeds {
    chacha: ChaCha8Rng,
}

impl ClientSeeds {
    /// Seeds for clients `first`, `first + 1`, … of the run with `run_seed`.
    pub fn starting_at(run_seed: u64, first: u64) -> Self {
        let mut chacha = chacha_for_run(run_seed);
        // Two 32-bit words per client seed.
        chacha.set_word_pos(u128::from(first) * 2);
        ClientSeeds { chacha }
    }

    /// The next client's seed.
    #[inline]
    pub fn next_seed(&mut self) -> u64 {
        self.chacha.next_u64()
    }

    /// The next client's generator.
    #[inline]
    pub fn next_rng(&mut self) -> ClientRng {
        ClientRng::new(self.next_seed())
    }
}

/// One client's generator: SplitMix64 from the client seed. Small (8 bytes), so ten million
/// clients keep their own streams in 80 MB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientRng {
    state: u64,
}

impl ClientRng {
    /// A generator started at `seed`.
    pub const fn new(seed: u64) -> Self {
        ClientRng { state: seed }
    }
}

impl RngCore for ClientRng {
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        (splitmix64(&mut self.state) >> 32) as u32
    }
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.state)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
    }
}

/// A uniform integer in `[0, n)`; `0` when `n` is 0. Unbiased (Lemire 2019, multiply and
/// reject); one draw in almost every case.
#[inline(always)]
pub fn uniform_below<R: RngCore + ?Sized>(rng: &mut R, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_hashed_in_parts_gives_the_seed_of_the_whole_label() {
        let whole = derive_seed(2015, "clients=10;replicate=17");
        let parts = LabelHash::default()
            .then(b"clients=10;")
            .then(b"replicate=")
            .then(b"17");
        assert_eq!(parts.seed(2015), whole);
        assert_ne!(parts.seed(2016), whole);
        // FNV-1a of the empty label is its offset basis, by definition.
        assert_eq!(LabelHash::default().then(b""), LabelHash::default());
    }

    #[test]
    fn unit_interval_maps_words_onto_multiples_of_two_to_the_minus_53() {
        assert_eq!(unit_interval(0), 0.0);
        assert_eq!(unit_interval(1 << 63), 0.5);
        assert_eq!(
            unit_interval((1 << 11) - 1),
            0.0,
            "the low 11 bits are dropped"
        );
        assert_eq!(unit_interval(1 << 11), 2f64.powi(-53));
        assert_eq!(
            unit_interval(u64::MAX),
            1.0 - 2f64.powi(-53),
            "never reaches 1"
        );
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        let mut state = 0u64;
        assert_eq!(splitmix64(&mut state), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(&mut state), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(splitmix64(&mut state), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn client_seeds_do_not_depend_on_where_reading_starts() {
        let mut from_zero = ClientSeeds::starting_at(7, 0);
        let all: Vec<u64> = (0..100).map(|_| from_zero.next_seed()).collect();
        let mut from_37 = ClientSeeds::starting_at(7, 37);
        for expected in &all[37..] {
            assert_eq!(from_37.next_seed(), *expected);
        }
        let mut other_seed = ClientSeeds::starting_at(8, 0);
        assert_ne!(other_seed.next_seed(), all[0]);
    }

    #[test]
    fn derived_seeds_depend_on_master_and_label_only() {
        assert_eq!(derive_seed(1, "a"), derive_seed(1, "a"));
        assert_ne!(derive_seed(1, "a"), derive_seed(2, "a"));
        assert_ne!(derive_seed(1, "a"), derive_seed(1, "b"));
    }

    #[test]
    fn uniform_below_is_uniform_over_a_small_range() {
        // Chi-square over 10 cells, 100k draws: 9 degrees of freedom, 99.9 % quantile 27.88.
        let mut rng = ClientRng::new(12345);
        let mut counts = [0u64; 10];
        let draws = 100_000;
        for _ in 0..draws {
            counts[uniform_below(&mut rng, 10) as usize] += 1;
        }
        let expected = draws as f64 / 10.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 27.88, "chi-square {chi2} over {counts:?}");
        assert_eq!(uniform_below(&mut rng, 0), 0);
        assert_eq!(uniform_below(&mut rng, 1), 0);
    }
}
