//! What a run costs in work before it starts: an upper bound on the requests it sends (the
//! requests estimate), checked against `--max-requests`, so that a valid but huge run (four
//! billion clients, a million seeds of a large grid) is refused up front, naming the estimate
//! and the flag that allows it, instead of running for hours; and the work estimate (events
//! to simulate, each run's setup counted), which past [`WORK_THRESHOLD`] — minutes of work —
//! needs the user's `--yes` instead of running silently.

use super::saturating::Sat;
use super::{ConfigError, Scenario};
use crate::engine::Work;

/// The largest requests estimate run without `--max-requests`: ten billion requests, minutes
/// of work on the event queue, far above every experiment of the guide (docs/).
pub const DEFAULT_MAX_REQUESTS: u64 = 10_000_000_000;

/// The simulator's speed the work estimate is turned into time with: about 10 M events a
/// second on one core (the overload bench measured 10.26 M on the call loop and 13.96 M
/// requests/s for the down herd in one run).
pub const EVENTS_PER_SECOND: u128 = 10_000_000;

/// The most work run without `--yes`: 3 000 000 000 events, about five minutes at
/// [`EVENTS_PER_SECOND`]. A normal run stays far below it (10 M clients, 4 retries and the six
/// strategies `all` runs against a down server are 300 M events); a million replicates of a
/// large run does not.
pub const WORK_THRESHOLD: u128 = 3_000_000_000;

/// The fixed work of one run on the herd paths, in events: building its tally, server and
/// generators and summarising it. A one-client run measured about 1 µs (10 events' worth).
pub const RUN_SETUP_EVENTS: u128 = 10;

/// The fixed work of one call-loop run, in events: its series and two latency sketches of
/// 64 KiB; a one-client run measured about 15 µs (150 events' worth).
pub const CALL_LOOP_SETUP_EVENTS: u128 = 150;

impl Scenario {
    /// Attempts one run simulates at most: [`Scenario::requests_per_run`], or on the call
    /// loop, whose Poisson arrivals start calls beyond the clients, `retries + 1` for each
    /// call it can start ([`Scenario::call_bound`]) if more.
    pub fn attempts_per_run(&self) -> u128 {
        let requests = self.requests_per_run();
        if !self.run_spec(self.strategies[0]).uses_call_loop() {
            return requests;
        }
        requests.max(self.call_bound().saturating_mul(self.tries_per_call()))
    }

    /// Visibility flips one run steps its tabs through: none without `--visibility-switch`;
    /// with it, a tab (one a client, or a client process on the call loop) flips after
    /// exponential dwells of mean `m` (each rounded to at least 1 ns, which keeps their mean
    /// at or above `m`), stepped up to the last time it is read, within the horizon: about
    /// `horizon / m + 1` flips a tab. This is the expected count, not a bound, since the
    /// work estimate says how long a run takes: a mean of 1 ns is a flip a nanosecond of
    /// every tab's life, hours of stepping for a thousand tabs over a minute.
    pub fn flips_per_run(&self) -> u128 {
        let Some(mean) = self.browser.switch_mean else {
            return 0;
        };
        let per_tab = Sat::from(self.horizon().as_nanos()) / Sat::from(mean.as_nanos()) + 1;
        (per_tab * Sat::from(self.clients)).0
    }

    /// The events of one run's simulation (one strategy, one replicate), its setup apart:
    /// its attempts at most ([`Scenario::attempts_per_run`]) and its tabs' visibility flips
    /// ([`Scenario::flips_per_run`]).
    pub fn events_per_run(&self) -> u128 {
        self.attempts_per_run().saturating_add(self.flips_per_run())
    }

    /// Events one run (one strategy, one replicate) simulates: [`Scenario::events_per_run`]
    /// and the run's setup ([`RUN_SETUP_EVENTS`], or [`CALL_LOOP_SETUP_EVENTS`] on the call
    /// loop).
    pub fn work_per_run(&self) -> u128 {
        let setup = if self.run_spec(self.strategies[0]).uses_call_loop() {
            CALL_LOOP_SETUP_EVENTS
        } else {
            RUN_SETUP_EVENTS
        };
        self.events_per_run().saturating_add(setup)
    }

    /// Events the whole run simulates at most: [`Scenario::work_per_run`] for every strategy
    /// and replicate. Checked with [`check_work`].
    pub fn work_estimate(&self) -> u128 {
        self.work_per_run()
            .saturating_mul(self.strategies.len() as u128 * u128::from(self.replicates))
    }

    /// [`check_work`] of this run's [`Scenario::work_estimate`], the refusal naming the
    /// visibility flips when they are most of it (and `--visibility-switch`, which drives
    /// them).
    pub fn check_work(&self, yes: bool) -> Result<Option<String>, ConfigError> {
        let events = self.work_estimate();
        check_work(events, "run", yes).map_err(|e| match (e, self.browser.switch_mean) {
            (ConfigError::TooMuchWork { what, estimate }, Some(mean)) => {
                let flips = self
                    .flips_per_run()
                    .saturating_mul(self.strategies.len() as u128 * u128::from(self.replicates));
                let estimate = if flips.saturating_mul(2) > events {
                    format!(
                        "{estimate}, {flips} of them the flips of {} tabs switching every \
                         {mean} on average over a horizon of {} (raise --visibility-switch)",
                        self.clients,
                        self.horizon()
                    )
                } else {
                    estimate
                };
                ConfigError::TooMuchWork { what, estimate }
            }
            (e, _) => e,
        })
    }

    /// Attempts at the server one call (or item) costs at most: `retries + 1`, times `1 +
    /// retries` of every retry layer above the run's policy (`[[layer]]`), saturating. An
    /// outer layer's retry restarts the calls below it with one event, counted with the
    /// attempt it leads to.
    pub fn tries_per_call(&self) -> u128 {
        self.overload.layers.tries_per_call(self.retries)
    }

    /// Most requests one run (one strategy, one replicate) can send: each item a client takes
    /// costs at most [`Scenario::tries_per_call`] requests (a `--retry-probability` below 1 only skips some); with `--items K` every client takes K items, with a
    /// shared pool of P items at most P are completed and each client abandons at most one.
    pub fn requests_per_run(&self) -> u128 {
        self.items_per_run() * self.tries_per_call()
    }

    /// Items (calls) one run's clients take at most, Poisson arrivals apart.
    fn items_per_run(&self) -> u128 {
        let clients = u128::from(self.clients);
        match self.work {
            Work::Items(k) => clients * u128::from(k),
            Work::Pool(p) => u128::from(p) + clients,
        }
    }

    /// Lines one run's trace writes at most: its attempts ([`Scenario::attempts_per_run`]),
    /// and with retry layers every outer layer's attempts too, a line each
    /// ([`Layers::attempts_of_every_layer_per_call`](crate::engine::calls::Layers::attempts_of_every_layer_per_call)
    /// for each call it can start).
    pub fn trace_lines_per_run(&self) -> u128 {
        let layers = &self.overload.layers;
        if !layers.is_active() {
            return self.attempts_per_run();
        }
        let per_call = layers.attempts_of_every_layer_per_call(self.retries);
        self.items_per_run()
            .max(self.call_bound())
            .saturating_mul(per_call)
    }

    /// Most requests the whole run sends: [`Scenario::attempts_per_run`] (which counts the
    /// calls Poisson arrivals can start, not the clients) for every strategy and replicate.
    /// Checked against `--max-requests` with [`check_requests`].
    pub fn requests_estimate(&self) -> u128 {
        self.attempts_per_run()
            .saturating_mul(self.strategies.len() as u128 * u128::from(self.replicates))
    }
}

/// Refuses a requests estimate over `limit`: one line naming the estimate, the limit and the
/// flag that raises it. `what` names the work (`run`, `sweep`, `shard`).
pub fn check_requests(estimate: u128, limit: u64, what: &'static str) -> Result<(), ConfigError> {
    if estimate > u128::from(limit) {
        return Err(ConfigError::TooLong {
            what,
            estimate: estimate.to_string(),
            limit,
        });
    }
    Ok(())
}

/// A work estimate for messages: the events and about how long they take at
/// [`EVENTS_PER_SECOND`] (`5000000000 events (about 8 min at ~10 M events/s)`).
pub fn describe_work(events: u128) -> String {
    let seconds = events / EVENTS_PER_SECOND;
    let duration = match seconds {
        0..=89 => format!("{seconds} s"),
        90..=5_399 => format!("{} min", (seconds + 30) / 60),
        5_400..=172_799 => format!("{:.1} h", seconds as f64 / 3600.0),
        _ => format!("{} days", (seconds + 43_200) / 86_400),
    };
    format!("{events} events (about {duration} at ~10 M events/s)")
}

/// Refuses work past [`WORK_THRESHOLD`] unless `yes` (`--yes`): one line naming the estimate,
/// the threshold and the flag. `what` names the work (`run`, `sweep`, `shard`). With `yes`,
/// returns the note to print before running it; `None` when under the threshold.
pub fn check_work(
    events: u128,
    what: &'static str,
    yes: bool,
) -> Result<Option<String>, ConfigError> {
    if events <= WORK_THRESHOLD {
        return Ok(None);
    }
    if !yes {
        return Err(ConfigError::TooMuchWork {
            what,
            estimate: describe_work(events),
        });
    }
    Ok(Some(format!(
        "this {what}'s work estimate is {}; running it (--yes)",
        describe_work(events)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScenarioFile;
    use crate::time::{SimTime, NANOS_PER_SEC as NANOS};

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
        let e = check_requests(21_474_836_475, DEFAULT_MAX_REQUESTS, "run")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("21474836475 requests") && e.contains("--max-requests 21474836475"),
            "{e}"
        );
        assert!(check_requests(
            u128::from(DEFAULT_MAX_REQUESTS),
            DEFAULT_MAX_REQUESTS,
            "run"
        )
        .is_ok());
        // Poisson arrivals start calls beyond the clients: 1000/s for 60 s from 100 clients is
        // at most 62 550 calls (the bound worked out in the work estimate's test below) of 4
        // attempts each, 250 200 requests, not 100 clients' 400.
        let poisson = ScenarioFile::parse(
            "clients = 100\nretries = 3\narrivals = \"poisson\"\nrate = \"1000/s\"\n\
             duration = \"60s\"\n[server]\nmodel = \"flaky\"\nfailure_rate = 0.1\n",
            None,
        )
        .unwrap()
        .validate()
        .unwrap();
        assert_eq!(poisson.requests_per_run(), 400);
        assert_eq!(poisson.requests_estimate(), 250_200);
        let e = check_requests(poisson.requests_estimate(), 100_000, "run")
            .unwrap_err()
            .to_string();
        assert!(e.contains("250200 requests"), "{e}");
    }

    #[test]
    fn the_work_estimate_counts_each_request_and_each_runs_setup() {
        let work = |text: &str| {
            ScenarioFile::parse(text, Some("toml"))
                .unwrap()
                .validate_on(Some(1))
                .unwrap()
                .work_estimate()
        };
        // 10 M clients × 5 requests and 10 events of setup: 50 000 010, far under the
        // threshold; against a limiter `all` is nine strategies: 450 000 090.
        assert_eq!(work("clients = 10000000\n"), 50_000_010);
        assert_eq!(
            work("clients = 10000000\nstrategy = \"all\"\n[server]\nmodel = \"fixed-window\"\n"),
            9 * 50_000_010
        );
        // A thousand replicates of it: 50 000 010 000, over the threshold.
        assert_eq!(
            work("clients = 10000000\nreplicates = 1000\n"),
            50_000_010_000
        );
        // Ten million replicates of one client: (5 + 10) × 10 M.
        assert_eq!(
            work("clients = 1\nreplicates = 10000000\n[server]\nmodel = \"fixed-window\"\n"),
            150_000_000
        );
        // A call-loop run's setup is 150 events: 2 clients × 5 requests + 150.
        assert_eq!(work("clients = 2\n[server]\nmodel = \"capacity\"\n"), 160);
        // Poisson arrivals at 1000/s for 60 s: 60 000 calls expected, bounded by
        // 60 000 + 10 × √60 000 (2449.49) + 100 = 62 549.49, so 62 550 calls of 4 attempts
        // (3 retries), whatever the 100 clients: 250 200 + 150.
        assert_eq!(
            work(
                "clients = 100\nretries = 3\narrivals = \"poisson\"\nrate = \"1000/s\"\n\
                 duration = \"60s\"\n[server]\nmodel = \"flaky\"\nfailure_rate = 0.1\n"
            ),
            250_350
        );
    }

    #[test]
    fn the_work_estimate_counts_the_visibility_flips_each_tab_steps_through() {
        use crate::engine::browser::Tab;
        let scenario = |switch: &str| {
            ScenarioFile::parse(
                &format!("clients = 100\nvisibility_switch = \"{switch}\"\n"),
                Some("toml"),
            )
            .unwrap()
            .validate_on(Some(1))
            .unwrap()
        };
        // The down server, 4 retries of full jitter capped at 30 s, from 1 s: the longest
        // waits are 1 + 2 + 4 + 8 = 15 s, and each of the 5 requests may be a minute late
        // in a hidden tab: a horizon of 315 s. Flips of mean 1 ms: 315 000 a tab and one,
        // 100 tabs, beside 500 requests and 10 events of setup.
        let s = scenario("1ms");
        assert_eq!(s.horizon(), crate::time::SimDuration::from_millis(315_000));
        assert_eq!(s.flips_per_run(), 100 * 315_001);
        assert_eq!(s.work_estimate(), 100 * 315_001 + 500 + 10);
        // The tabs themselves, stepped flip by flip to the horizon: dwells of mean 1 ms make
        // a count of mean 315 000 a tab (the 1 ns rounding shifts a dwell's mean by under a
        // nanosecond) and, like a Poisson count, a standard deviation of its square root,
        // 5612 over the 100 tabs; six of them is 33 675.
        let mut stepped = 0u128;
        for id in 0..100 {
            let mut tab = Tab::new(&s.browser, s.seed, id);
            while let Some(f) = tab.next_flip().filter(|f| *f <= SimTime(315 * NANOS)) {
                tab.advance(f, s.browser.switch_mean);
                stepped += 1;
            }
        }
        let estimate = s.flips_per_run();
        assert!(
            stepped.abs_diff(estimate) < 33_675,
            "{stepped} flips stepped, {estimate} estimated"
        );
        // Without switching, no flips; a mean of 1 ns is a flip a nanosecond of every tab's
        // 315 s, 3.15 × 10^13 events, past the threshold, and the refusal says so.
        assert_eq!(
            ScenarioFile::parse("clients = 100\nhidden = 0.5\n", Some("toml"))
                .unwrap()
                .validate_on(Some(1))
                .unwrap()
                .flips_per_run(),
            0
        );
        let e = scenario("1ns").check_work(false).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "this run's work estimate is 31500000000610 events (about 36 days at ~10 M \
                 events/s), 31500000000100 of them the flips of 100 tabs switching every 1ns \
                 on average over a horizon of 315s (raise --visibility-switch), over the"
            ),
            "{e}"
        );
    }

    #[test]
    fn work_past_the_threshold_needs_yes_and_is_described_in_events_and_time() {
        assert_eq!(check_work(WORK_THRESHOLD, "run", false), Ok(None));
        assert_eq!(check_work(WORK_THRESHOLD, "run", true), Ok(None));
        let e = check_work(50_000_010_000, "run", false)
            .unwrap_err()
            .to_string();
        // 50 000 010 000 events at 10 M a second: 5000 s, 83 min.
        assert_eq!(
            e,
            "this run's work estimate is 50000010000 events (about 83 min at ~10 M events/s), \
             over the 3000000000 events (about 5 min) run without asking; narrow it, or run it \
             anyway with --yes"
        );
        assert_eq!(
            check_work(WORK_THRESHOLD + 1, "sweep", true).unwrap(),
            Some(
                "this sweep's work estimate is 3000000001 events (about 5 min at ~10 M \
                 events/s); running it (--yes)"
                    .into()
            )
        );
        assert_eq!(
            describe_work(899_999_999),
            "899999999 events (about 89 s at ~10 M events/s)"
        );
        assert_eq!(
            describe_work(54_000_000_000),
            "54000000000 events (about 1.5 h at ~10 M events/s)"
        );
        assert_eq!(
            describe_work(1_728_000_000_000),
            "1728000000000 events (about 2 days at ~10 M events/s)"
        );
    }
}
