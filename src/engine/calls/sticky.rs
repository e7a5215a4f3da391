//! Sticky failures ([`StickyFailures`], `--sticky-failures F`): a fraction F of the client
//! processes (users, keys) whose every attempt fails, beside whatever the server does to the
//! others — the partial outage of one shard, a poisoned key, an account a bug locks out.
//! Retries cannot help those users, so no policy brings their calls above 0 %: a run's success
//! rate is at most 1 − F, and exactly that against a server that serves everyone else.
//!
//! **Which processes.** Exactly `round(F · clients)` of them, spread evenly by id: process `p`
//! is sticky when `⌊(p + 1)·n / N⌋ > ⌊p·n / N⌋` (n sticky of N), so any run of consecutive
//! ids holds its share within one. No random draw, so the other processes' streams are those
//! of the same run without the flag.
//!
//! **Where they fail.** At arrival at the server, before it admits them, like an outage: a
//! plain failure (a 503, not a throttling error), no service time, not counted by a limiter's
//! window or a capacity server's queue.

/// The processes whose every attempt fails.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StickyFailures {
    /// The fraction asked for, in [0, 1].
    pub fraction: f64,
    /// Processes that fail: `round(fraction · clients)`.
    count: u32,
    /// The run's processes.
    clients: u32,
}

impl StickyFailures {
    /// `fraction` (in [0, 1]) of `clients` processes.
    pub fn new(fraction: f64, clients: u32) -> StickyFailures {
        let fraction = fraction.clamp(0.0, 1.0);
        StickyFailures {
            fraction,
            count: (fraction * f64::from(clients)).round() as u32,
            clients,
        }
    }

    /// True when some process fails every attempt.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.count > 0
    }

    /// `sticky failures 0.2 (200 client processes fail every attempt)`, as the run's header
    /// writes it after the server.
    pub fn describe(&self) -> String {
        format!(
            "sticky failures {} ({} client processes fail every attempt)",
            self.fraction, self.count
        )
    }

    /// How many processes fail every attempt.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// True when every attempt of `process` fails.
    #[inline]
    pub fn fails(&self, process: u32) -> bool {
        if self.count == 0 {
            return false;
        }
        let (n, all, p) = (
            u64::from(self.count),
            u64::from(self.clients.max(1)),
            u64::from(process),
        );
        // n ≤ N < 2^32 and p < N, so (p + 1)·n < 2^64.
        (p + 1) * n / all > p * n / all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_rounded_share_fails_spread_evenly() {
        // 2 of 10: ⌊(p+1)/5⌋ steps at p = 4 and p = 9.
        let s = StickyFailures::new(0.2, 10);
        let sticky: Vec<u32> = (0..10).filter(|&p| s.fails(p)).collect();
        assert_eq!(sticky, [4, 9]);
        for (fraction, clients, expected) in [
            (0.0, 1000, 0),
            (1.0, 1000, 1000),
            (0.2, 1000, 200),
            (0.25, 7, 2),
            (0.5, 3, 2),
            (0.001, 100, 0),
        ] {
            let s = StickyFailures::new(fraction, clients);
            let failing = (0..clients).filter(|&p| s.fails(p)).count() as u32;
            assert_eq!(failing, expected, "{fraction} of {clients}");
            assert_eq!(s.count(), expected);
        }
        // Any 100 consecutive processes of 1000 at 0.2 hold 20 of them, give or take one.
        let s = StickyFailures::new(0.2, 1000);
        for start in 0..900 {
            let n = (start..start + 100).filter(|&p| s.fails(p)).count();
            assert!((19..=21).contains(&n), "{start}: {n}");
        }
    }
}
