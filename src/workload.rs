//! Open-loop load and the distributions of the overload model: when calls start
//! ([`Arrivals`]: a herd at t = 0, or Poisson processes following a [`RateSchedule`]), and the
//! [`Dist`] of a service time or of one network direction. Plain data and draw functions from a
//! client process's own generator; no I/O.
//!
//! Poisson arrivals are exact in integer nanoseconds up to the rounding of each gap: a process
//! of rate `r` draws `E = −ln U` (U uniform on (0, 1], 53 bits) and waits `E / r`. When the gap
//! would cross a change of rate (the edge of a spike), the process moves to the change and
//! draws again at the new rate; by the memoryless property of the exponential this is exactly
//! a Poisson process with a piecewise-constant rate.

use std::fmt;

use rand::RngCore;

use crate::rng::{uniform_below, ClientRng};
use crate::time::{SimDuration, SimTime, NANOS_PER_SEC};

/// One draw of `E = −ln U`, `U` uniform on (0, 1] from the 53 high bits of one word: an
/// exponential of mean 1.
#[inline(always)]
pub fn unit_exponential(rng: &mut ClientRng) -> f64 {
    let u = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    -u.ln()
}

/// `x.round() as u64` (half away from zero, saturating at 0 and `u64::MAX`, NaN to 0) without
/// the library call `round` is on a baseline x86-64, where it was 2 % of a call-loop run.
/// Exact: below 2^52, `x − trunc(x)` is exact (Sterbenz), so comparing it with 0.5 decides as
/// `round` does; from 2^52 on every double is an integer already.
#[inline(always)]
pub fn round_to_u64(x: f64) -> u64 {
    const WHOLE: f64 = (1u64 << 52) as f64;
    if x.partial_cmp(&WHOLE) != Some(std::cmp::Ordering::Less) {
        // Integers, infinity and NaN: as `round` leaves them.
        return x as u64;
    }
    let t = x as u64;
    t + u64::from(x - t as f64 >= 0.5)
}

/// A distribution of a duration: a service time or one direction of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dist {
    /// Always this long (draws nothing).
    Fixed(SimDuration),
    /// Exponential with this mean, rounded to the nanosecond (one draw).
    Exp(SimDuration),
    /// Uniform over whole nanoseconds in `[low, high)` (one draw).
    Uniform {
        /// Shortest.
        low: SimDuration,
        /// Longest (exclusive).
        high: SimDuration,
    },
}

impl Default for Dist {
    fn default() -> Self {
        Dist::Fixed(SimDuration::ZERO)
    }
}

impl Dist {
    /// One value, from `rng` (a fixed value leaves it alone).
    #[inline(always)]
    pub fn draw(&self, rng: &mut ClientRng) -> SimDuration {
        match *self {
            Dist::Fixed(d) => d,
            Dist::Exp(mean) => {
                SimDuration(round_to_u64(unit_exponential(rng) * mean.as_nanos() as f64))
            }
            Dist::Uniform { low, high } => {
                SimDuration(low.as_nanos() + uniform_below(rng, high.as_nanos() - low.as_nanos()))
            }
        }
    }

    /// The mean.
    pub fn mean(&self) -> SimDuration {
        match *self {
            Dist::Fixed(d) | Dist::Exp(d) => d,
            Dist::Uniform { low, high } => SimDuration((low.as_nanos() + high.as_nanos()) / 2),
        }
    }

    /// The same shape with mean `mean`, the rule of a sweep axis over a distribution's mean:
    /// a fixed value or an exponential takes it; a uniform's ends scale by
    /// `mean / self.mean()` (the exact ratio `2·mean / (low + high)`, each end rounded to the
    /// nanosecond, halves up), so its spread scales with it; a uniform whose scaled ends meet
    /// (a mean of a few nanoseconds) becomes fixed at `mean`.
    pub fn with_mean(&self, mean: SimDuration) -> Dist {
        match *self {
            Dist::Fixed(_) => Dist::Fixed(mean),
            Dist::Exp(_) => Dist::Exp(mean),
            Dist::Uniform { low, high } => {
                // round(x · 2m / (low + high)) without overflow: x · m fits in u128.
                let sum = u128::from(low.as_nanos()) + u128::from(high.as_nanos());
                let scale = |x: SimDuration| {
                    let product = u128::from(x.as_nanos()) * u128::from(mean.as_nanos());
                    let (q, r) = (product / sum, product % sum);
                    let twice = 2 * q + (4 * r + sum) / (2 * sum);
                    SimDuration(u64::try_from(twice).unwrap_or(u64::MAX))
                };
                let (low, high) = (scale(low), scale(high));
                if high > low {
                    Dist::Uniform { low, high }
                } else {
                    Dist::Fixed(mean)
                }
            }
        }
    }

    /// A value no draw exceeds in practice: the value itself, the high end, or for the
    /// exponential 40 means (a draw beyond it has probability e^−40 ≈ 4·10^−18). For bounds.
    pub fn practical_max(&self) -> SimDuration {
        match *self {
            Dist::Fixed(d) => d,
            Dist::Exp(mean) => SimDuration(mean.as_nanos().saturating_mul(40)),
            Dist::Uniform { high, .. } => high,
        }
    }

    /// True when it is always zero.
    pub fn is_zero(&self) -> bool {
        *self == Dist::Fixed(SimDuration::ZERO)
    }
}

impl fmt::Display for Dist {
    /// As the command line writes it: `50ms`, `exp:50ms`, `uniform:40ms..60ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Fixed(d) => write!(f, "{d}"),
            Dist::Exp(mean) => write!(f, "exp:{mean}"),
            Dist::Uniform { low, high } => write!(f, "uniform:{low}..{high}"),
        }
    }
}

/// A total call rate in calls per second, as written `40/s`, `2400/m`, `144000/h`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", self.0)
    }
}

/// A spike: during `[from, to)` the total rate is `rate` instead of the base rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spike {
    /// Start (inclusive).
    pub from: SimTime,
    /// End (exclusive).
    pub to: SimTime,
    /// Total calls per second during the spike.
    pub rate: f64,
}

/// The total call rate over time: `base` except during the spikes, which do not overlap and
/// are sorted by start; nothing starts at or after `end`.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSchedule {
    /// Calls per second outside spikes.
    pub base: f64,
    /// Spikes in time order.
    pub spikes: Vec<Spike>,
    /// Calls start in `[0, end)`.
    pub end: SimTime,
}

impl RateSchedule {
    /// The rate at `t` and when it next changes (`end` at the latest).
    fn segment(&self, t: SimTime) -> (f64, SimTime) {
        for spike in &self.spikes {
            if t < spike.from {
                return (self.base, spike.from);
            }
            if t < spike.to {
                return (spike.rate, spike.to);
            }
        }
        (self.base, self.end)
    }

    /// The next call start of one of `processes` processes sharing the schedule evenly, after
    /// `from`, drawn from that process's `rng`; `None` when it would be at or after the end.
    pub fn next_start(
        &self,
        from: SimTime,
        processes: u32,
        rng: &mut ClientRng,
    ) -> Option<SimTime> {
        let mut t = from;
        loop {
            if t >= self.end {
                return None;
            }
            let (rate, change) = self.segment(t);
            if rate <= 0.0 {
                t = change;
                continue;
            }
            let per_process = rate / f64::from(processes);
            let gap = unit_exponential(rng) / per_process * NANOS_PER_SEC as f64;
            let left = (change.as_nanos() - t.as_nanos()) as f64;
            if gap < left {
                let at = SimTime(t.as_nanos() + round_to_u64(gap));
                // Rounding can reach the change only when the gap was within half a
                // nanosecond of it; the call then starts at the change, still before the end.
                return if at >= self.end { None } else { Some(at) };
            }
            // Memoryless: at the change, draw again at the new rate.
            t = change;
        }
    }

    /// Calls expected over the whole schedule.
    pub fn expected_calls(&self) -> f64 {
        let mut total = 0.0;
        let mut t = SimTime::ZERO;
        while t < self.end {
            let (rate, change) = self.segment(t);
            total += rate * (change - t).as_secs_f64();
            t = change;
        }
        total
    }

    /// The highest rate anywhere in the schedule.
    pub fn peak_rate(&self) -> f64 {
        self.spikes.iter().map(|s| s.rate).fold(self.base, f64::max)
    }
}

/// When calls start.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Arrivals {
    /// Every client process starts one call at t = 0 (Experiment 1's herd).
    #[default]
    Herd,
    /// Calls start as Poisson processes, one per client process, of total rate following the
    /// schedule.
    Poisson(RateSchedule),
}

impl Arrivals {
    /// `herd` or `poisson`.
    pub fn name(&self) -> &'static str {
        match self {
            Arrivals::Herd => "herd",
            Arrivals::Poisson(_) => "poisson",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_to_u64_is_round_then_cast() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            -0.3,
            -0.7,
            1e-300,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
        ];
        let mut rng = ClientRng::new(5);
        for _ in 0..100_000 {
            // Exponentials at every scale, and halves exactly.
            let x = unit_exponential(&mut rng) * 10f64.powi((rng.next_u64() % 20) as i32);
            cases.push(x);
            cases.push((x as u64) as f64 + 0.5);
        }
        for x in cases {
            assert_eq!(round_to_u64(x), x.round() as u64, "{x:e}");
        }
    }

    fn schedule(spikes: Vec<Spike>) -> RateSchedule {
        RateSchedule {
            base: 40.0,
            spikes,
            end: SimTime(80 * NANOS_PER_SEC),
        }
    }

    #[test]
    fn exponential_draws_have_mean_one_and_the_right_tail() {
        // 200 000 draws: the mean's sd is 1/sqrt(200 000) ≈ 0.0022; 5 sd = 0.011. P(E > 3) =
        // e^−3 ≈ 0.0498, sd sqrt(p(1−p)/n) ≈ 0.00049; 5 sd = 0.0025.
        let mut rng = ClientRng::new(3);
        let n = 200_000;
        let (mut sum, mut above) = (0.0, 0);
        for _ in 0..n {
            let e = unit_exponential(&mut rng);
            assert!(e >= 0.0);
            sum += e;
            above += usize::from(e > 3.0);
        }
        assert!((sum / n as f64 - 1.0).abs() < 0.011);
        assert!((above as f64 / n as f64 - (-3.0f64).exp()).abs() < 0.0025);
    }

    #[test]
    fn poisson_counts_follow_the_schedule_with_a_spike() {
        // 40/s for 80 s plus a spike to 80/s over [20 s, 25 s): 40·75 + 80·5 = 3400 calls
        // expected; over 20 seeds of 4 processes the total is Poisson(68 000), sd 261; allow
        // 5 sd. The spike's own count: Poisson(400 · 20 = 8000), sd 89.4; 5 sd = 447.
        let s = schedule(vec![Spike {
            from: SimTime(20 * NANOS_PER_SEC),
            to: SimTime(25 * NANOS_PER_SEC),
            rate: 80.0,
        }]);
        assert!((s.expected_calls() - 3400.0).abs() < 1e-9);
        let (mut total, mut in_spike) = (0u64, 0u64);
        for seed in 0..20 {
            for p in 0..4u32 {
                let mut rng = ClientRng::new(seed * 31 + u64::from(p));
                let mut t = SimTime::ZERO;
                while let Some(next) = s.next_start(t, 4, &mut rng) {
                    assert!(next >= t && next < s.end);
                    total += 1;
                    in_spike += u64::from(next >= s.spikes[0].from && next < s.spikes[0].to);
                    t = next;
                }
            }
        }
        assert!((total as f64 - 68_000.0).abs() < 5.0 * 261.0, "{total}");
        assert!((in_spike as f64 - 8000.0).abs() < 447.0, "{in_spike}");
    }

    #[test]
    fn distributions_draw_in_range_and_fixed_draws_nothing() {
        let mut rng = ClientRng::new(5);
        let before = rng;
        assert_eq!(
            Dist::Fixed(SimDuration::from_millis(50)).draw(&mut rng),
            SimDuration::from_millis(50)
        );
        assert_eq!(rng, before);
        let u = Dist::Uniform {
            low: SimDuration::from_millis(40),
            high: SimDuration::from_millis(60),
        };
        for _ in 0..1000 {
            let d = u.draw(&mut rng);
            assert!(d >= SimDuration::from_millis(40) && d < SimDuration::from_millis(60));
        }
        assert_eq!(u.to_string(), "uniform:40ms..60ms");
        assert_eq!(
            Dist::Exp(SimDuration::from_millis(50)).to_string(),
            "exp:50ms"
        );
    }

    #[test]
    fn a_distribution_takes_a_new_mean_keeping_its_shape() {
        let ms = SimDuration::from_millis;
        assert_eq!(Dist::Fixed(ms(5)).with_mean(ms(20)), Dist::Fixed(ms(20)));
        assert_eq!(Dist::Exp(ms(5)).with_mean(ms(20)), Dist::Exp(ms(20)));
        // uniform:40ms..60ms has mean 50 ms; to 100 ms every point doubles, to 25 ms halves.
        let u = Dist::Uniform {
            low: ms(40),
            high: ms(60),
        };
        assert_eq!(
            u.with_mean(ms(100)),
            Dist::Uniform {
                low: ms(80),
                high: ms(120)
            }
        );
        assert_eq!(
            u.with_mean(ms(25)),
            Dist::Uniform {
                low: ms(20),
                high: ms(30)
            }
        );
        // 0..3 ns (mean 1.5 ns) to 1 ns: the ends scale by 2/3, to 0 and 2 ns.
        let tiny = Dist::Uniform {
            low: SimDuration(0),
            high: SimDuration(3),
        };
        assert_eq!(
            tiny.with_mean(SimDuration(1)),
            Dist::Uniform {
                low: SimDuration(0),
                high: SimDuration(2)
            }
        );
        // 1..3 ns (mean 2 ns) to 1 ns: ends 0.5 → 1 and 1.5 → 2 ns, halves up.
        let odd = Dist::Uniform {
            low: SimDuration(1),
            high: SimDuration(3),
        };
        assert_eq!(
            odd.with_mean(SimDuration(1)),
            Dist::Uniform {
                low: SimDuration(1),
                high: SimDuration(2)
            }
        );
        // Ends that meet make a fixed value, and a mean of zero is no wait at all.
        assert_eq!(u.with_mean(SimDuration(1)), Dist::Fixed(SimDuration(1)));
        assert_eq!(
            u.with_mean(SimDuration::ZERO),
            Dist::Fixed(SimDuration::ZERO)
        );
        // The largest durations saturate instead of overflowing.
        let wide = Dist::Uniform {
            low: SimDuration(u64::MAX - 1),
            high: SimDuration(u64::MAX),
        };
        assert_eq!(
            wide.with_mean(SimDuration(u64::MAX)),
            Dist::Uniform {
                low: SimDuration(u64::MAX - 1),
                high: SimDuration(u64::MAX)
            }
        );
    }
}
