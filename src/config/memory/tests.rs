use super::*;
use crate::config::{Scenario, ScenarioFile};
use crate::engine::Path;

#[test]
fn an_allocation_past_isize_max_is_never_reservable_and_a_small_one_is() {
    assert!(!reservable(u64::MAX));
    assert!(!reservable(1 << 63));
    assert!(reservable(1 << 20));
}

#[test]
fn the_estimate_counts_the_threads_it_is_given_not_rayons() {
    use crate::config::ScenarioFile;
    // Four runs (one strategy, four replicates) on the event queue: each thread holds one
    // run in flight, so the in-flight term grows by the same amount a thread up to four
    // threads, then stays; the other terms do not depend on threads.
    let terms = |threads: Option<usize>| {
        let mut scenario = ScenarioFile {
            clients: Some(10_000),
            strategy: Some("fixed".parse().unwrap()),
            replicates: Some(4),
            ..Default::default()
        }
        .validate_on(threads)
        .unwrap();
        scenario.path = Path::EventQueue;
        let terms = scenario.memory_terms(false);
        let kept = (terms.get(Part::Results), terms.get(Part::Replicates));
        (scenario.threads, terms.total() - kept.0 - kept.1, kept)
    };
    let (one, two, three, four, five) = (
        terms(Some(1)),
        terms(Some(2)),
        terms(Some(3)),
        terms(Some(4)),
        terms(Some(5)),
    );
    let run = two.1 - one.1;
    assert!(
        run > 10_000 * 24,
        "one run holds an event a client: {run} B"
    );
    assert_eq!(three.1, one.1 + 2 * run);
    assert_eq!(four.1, one.1 + 3 * run);
    assert_eq!(
        (five.1, five.2),
        (four.1, four.2),
        "four runs: a fifth thread has none to hold"
    );
    assert_eq!(three.2, one.2);
    assert_eq!(terms(Some(3)).0, 3);
    assert_eq!(terms(None).0, default_threads());
}

fn scenario(text: &str) -> Scenario {
    crate::config::ScenarioFile::parse(text, Some("toml"))
        .unwrap()
        .validate_without_budget_on(Some(2))
        .unwrap()
}

#[test]
fn the_slowdown_counts_the_requests_in_service_not_every_attempt() {
    // 100 calls at once, 10 workers, 50 ms services slowed 1 ms by each other request in
    // service (at most 9): a service takes at most 59 ms; the last of 100 requests waits
    // for 100/10 = 10 rounds of completions, then its own service: 649 ms of backlog.
    // The horizon: the cap (30 s) and the backlog before the only answer, then the
    // backlog again. (Counting the slowdown of all 100 attempts gave 150 ms a service.)
    let s = scenario(
        "clients = 100\nretries = 0\n[server]\nmodel = \"capacity\"\nworkers = 10\n\
         service_time = \"50ms\"\nslowdown = \"1ms\"\n",
    );
    assert_eq!(s.horizon(), SimDuration::from_millis(30_000 + 649 + 649));
    // Every request is served once its turn comes: the run's last answer is within it.
    let tally = crate::engine::simulate(&s.run_spec(s.strategies[0]), Path::Auto);
    assert_eq!(tally.served_windows.total(), 100);
    let last = tally
        .served_windows
        .window_start(tally.served_windows.counts().len() - 1);
    assert!(last.as_nanos() <= s.horizon().as_nanos(), "{last:?}");
}

#[test]
fn calls_held_at_once_count_every_layers_tries_at_the_longest_cap() {
    // A call of 2 retries inside a layer of 1 makes 3 x 2 = 6 attempts with waits of at
    // most the longest cap (10 s): it can last as long as a call of 5 retries with that
    // cap and no layer, so a sweep counts as many calls held at once for both; without
    // the layer, 3 attempts, fewer.
    let base = "arrivals = \"poisson\"\nrate = \"5/s\"\nduration = \"1000s\"\n\
                outage = \"10s..20s\"\ntimeout = \"1s\"\nstrategy = \"fixed\"\n\
                base = \"2s\"\n[server]\nmodel = \"capacity\"\nworkers = 4\n";
    let at_once = |keys: &str, layer: &str| {
        ScenarioFile::parse(&format!("{keys}{base}{layer}"), Some("toml"))
            .unwrap()
            .validate()
            .unwrap()
            .calls_at_once()
    };
    let layer = "[[layer]]\nstrategy = \"fixed\"\nbase = \"10s\"\ncap = \"10s\"\nretries = 1\n";
    let layered = at_once("retries = 2\ncap = \"3s\"\n", layer);
    assert_eq!(layered, at_once("retries = 5\ncap = \"10s\"\n", ""));
    assert!(at_once("retries = 2\ncap = \"10s\"\n", "") < layered);
}

#[test]
fn estimates_saturate_instead_of_wrapping_however_large_the_input() {
    // Poisson calls at ever higher rates against a slowing server: every estimate grows
    // or stays, and ends saturated, never wrapping round to a small number.
    let mut previous = (0u64, 0u64, 0u128, 0u128);
    for exponent in [0, 3, 6, 12, 18, 24, 30, 36] {
        let s = scenario(&format!(
            "clients = 4000000000\nretries = 4294967295\narrivals = \"poisson\"\n\
             rate = \"1e{exponent}/s\"\nduration = \"100000000s\"\n\
             timeout = \"100000000s\"\n\
             [server]\nmodel = \"capacity\"\nworkers = 1\n\
             service_time = \"exp:100000000s\"\nslowdown = \"100000000s\"\n"
        ));
        let now = (
            s.horizon().as_nanos(),
            s.memory_terms(true).total(),
            s.work_estimate(),
            s.requests_estimate(),
        );
        assert!(
            now.0 >= previous.0
                && now.1 >= previous.1
                && now.2 >= previous.2
                && now.3 >= previous.3,
            "rate 1e{exponent}/s: {now:?} after {previous:?}"
        );
        previous = now;
    }
    assert_eq!(previous.0, u64::MAX);
    assert_eq!(previous.1, u64::MAX);
}

#[test]
fn a_refusal_names_the_whole_estimate_its_largest_part_and_the_flags_that_drive_it() {
    let refusal = |text: &str, report: bool| {
        let mut s = scenario(&format!("memory_limit = 1024\n{text}"));
        s.path = Path::EventQueue;
        let e = s.check_memory_with(report).unwrap_err().to_string();
        let total = human_bytes(s.memory_terms(report).total());
        assert!(
            e.starts_with(&format!("this run needs an estimated {total} (")),
            "{e}"
        );
        e
    };
    // The series of a long Poisson run in 1 ms windows.
    let e = refusal(
        "arrivals = \"poisson\"\nrate = \"1/s\"\nduration = \"10000s\"\n\
         series_bin = \"1ms\"\n[server]\nmodel = \"capacity\"\n",
        false,
    );
    assert!(e.contains("of it the series, up to "), "{e}");
    assert!(
        e.contains("widen --series-bin, or lower --duration, "),
        "{e}"
    );
    // A million clients' events.
    let e = refusal("clients = 1000000\n", false);
    assert!(
        e.contains("of it the 1000000 clients' pending events"),
        "{e}"
    );
    assert!(
        e.contains("; lower --clients, or raise --memory-limit"),
        "{e}"
    );
    // Long waits in 1 ms windows: the histograms, bounded by the cap and the retries.
    let e = refusal(
        "clients = 1\nretries = 100\ncap = \"1h\"\nbase = \"1h\"\nbin = \"1ms\"\n",
        false,
    );
    assert!(
        e.contains("of it the histograms, up to 360000001 windows"),
        "{e}"
    );
    assert!(
        e.contains("widen --bin, or lower --cap or --retries"),
        "{e}"
    );
    // The dense JSON report of the same run is the largest part once it is asked for.
    let e = refusal(
        "clients = 1\nretries = 100\ncap = \"1h\"\nbase = \"1h\"\nbin = \"1ms\"\n",
        true,
    );
    assert!(e.contains("of it the dense JSON report"), "{e}");
}
