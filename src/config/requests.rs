//! What a run costs in work before it starts: an upper bound on the requests it sends (the
//! requests estimate), checked against `--max-requests`, so that a valid but huge run (four
//! billion clients, a million seeds of a large grid) is refused up front, naming the estimate
//! and the flag that allows it, instead of running for hours.

use super::{ConfigError, Scenario};
use crate::engine::Work;

/// The largest requests estimate run without `--max-requests`: ten billion requests, minutes
/// of work on the event queue, far above every experiment of the README.
pub const DEFAULT_MAX_REQUESTS: u64 = 10_000_000_000;

impl Scenario {
    /// Most requests one run (one strategy, one replicate) can send: each item a client takes
    /// costs at most `retries + 1` requests; with `--items K` every client takes K items, with a
    /// shared pool of P items at most P are completed and each client abandons at most one.
    pub fn requests_per_run(&self) -> u128 {
        let per_item = u128::from(self.retries) + 1;
        let clients = u128::from(self.clients);
        let items = match self.work {
            Work::Items(k) => clients * u128::from(k),
            Work::Pool(p) => u128::from(p) + clients,
        };
        items * per_item
    }

    /// Most requests the whole run sends: [`Scenario::requests_per_run`] for every strategy
    /// and replicate.
    pub fn requests_estimate(&self) -> u128 {
        self.requests_per_run() * self.strategies.len() as u128 * u128::from(self.replicates)
    }
}

/// Refuses a requests estimate over `limit`: one line naming the estimate, the limit and the
/// flag that raises it.
pub fn check_requests(estimate: u128, limit: u64) -> Result<(), ConfigError> {
    if estimate > u128::from(limit) {
        return Err(ConfigError::TooLong {
            estimate: estimate.to_string(),
            limit,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScenarioFile;

    #[test]
    fn the_estimate_counts_every_request_a_run_can_send() {
        // 1000 clients, 4 retries, against a server that stays down: every client sends
        // exactly 5 requests, 5000 per strategy; `all` is 6 strategies.
        let scenario = ScenarioFile::parse("clients = 1000\nstrategy = \"all\"\n", None)
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(scenario.requests_per_run(), 5000);
        assert_eq!(scenario.requests_estimate(), 6 * 5000);
        let report = crate::experiment::run(&scenario);
        for result in &report.results {
            assert_eq!(
                u128::from(result.summary.requests),
                scenario.requests_per_run()
            );
        }
        // Three items each, two replicates: 3 × 5 requests a client at most, per replicate.
        let items = ScenarioFile::parse("clients = 10\nitems = 3\nreplicates = 2\n", None)
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(items.requests_estimate(), 10 * 3 * 5 * 2);
        let e = check_requests(21_474_836_475, DEFAULT_MAX_REQUESTS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("21474836475 requests") && e.contains("--max-requests 21474836475"),
            "{e}"
        );
        assert!(check_requests(u128::from(DEFAULT_MAX_REQUESTS), DEFAULT_MAX_REQUESTS).is_ok());
    }
}
