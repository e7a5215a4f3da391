use super::*;
use crate::engine::RunSpec;
use crate::time::SimTime;

fn err(file: ScenarioFile) -> String {
    file.validate().unwrap_err().to_string()
}

#[test]
fn defaults_are_experiment_one() {
    let s = ScenarioFile::default().validate().unwrap();
    assert_eq!(s.clients, 1000);
    assert_eq!(s.strategies, [Strategy::FullJitter]);
    assert_eq!(s.retries, 4);
    assert_eq!(s.backoff.base, SimDuration::from_secs(1));
    assert_eq!(s.backoff.cap, SimDuration::from_secs(30));
    assert_eq!(s.bin, SimDuration::from_millis(100));
    assert_eq!(s.server, ServerModel::Down { recover_at: None });
    // The tests' and benches' Experiment 1 is the same run as the default scenario's.
    assert_eq!(
        s.run_spec(Strategy::Fixed),
        RunSpec::experiment1(
            1000,
            Strategy::Fixed,
            crate::server::Server::Down(crate::server::Down::default()),
            DEFAULT_SEED
        )
    );
}

#[test]
fn bad_values_name_the_field_the_value_and_the_fix() {
    let e = err(ScenarioFile {
        clients: Some(0),
        ..Default::default()
    });
    assert!(e.contains("--clients") && e.contains(": 0;"), "{e}");
    let e = err(ScenarioFile {
        cap: Some(SimDuration::from_millis(500)),
        ..Default::default()
    });
    assert!(
        e.contains("--cap") && e.contains("500ms") && e.contains("1s"),
        "{e}"
    );
    let e = err(ScenarioFile {
        bin: Some(SimDuration::ZERO),
        ..Default::default()
    });
    assert!(e.contains("--bin"), "{e}");
    let e = err(ScenarioFile {
        multiplier: Some(f64::NAN),
        ..Default::default()
    });
    assert!(e.contains("--multiplier") && e.contains("NaN"), "{e}");
    let none = ScenarioFile {
        retries: Some(0),
        ..Default::default()
    };
    assert_eq!(none.validate().unwrap().retries, 0);
}

#[test]
fn a_run_too_big_for_memory_is_refused_with_the_estimate() {
    // Every replicate keeps five figures (80 B while collected): 4 billion of them are
    // hundreds of GiB. A 1 ns bin, by contrast, no longer costs anything up front: the
    // histograms hold only windows with counts.
    let e = err(ScenarioFile {
        replicates: Some(u32::MAX),
        ..Default::default()
    });
    assert!(e.contains("estimated") && e.contains("GiB"), "{e}");
    assert!(ScenarioFile {
        bin: Some(SimDuration::from_nanos(1)),
        ..Default::default()
    }
    .validate()
    .is_ok());
}

fn shipped(text: &str, threads: usize) -> Scenario {
    ScenarioFile::parse(text, Some("toml"))
        .unwrap()
        .validate_on(Some(threads))
        .unwrap()
}

#[test]
fn the_shipped_configs_fit_whatever_the_thread_count() {
    // The estimate counts runs in flight, and the histograms of a limiter run span what a
    // limiter lets happen, not a thousand capped retries of every item: so Experiment 2's
    // configs (1000 retries an item) fit the default budget on a 64-thread machine too.
    for text in [
        include_str!("../../configs/herd-down.toml"),
        include_str!("../../configs/fixed-window-one-client.toml"),
        include_str!("../../configs/fixed-window-five-clients.toml"),
        include_str!("../../configs/occ-contention.toml"),
    ] {
        let estimate = shipped(text, 64).memory_estimate();
        assert!(estimate < 1 << 30, "{} B for {text}", estimate);
    }
}

#[test]
fn the_horizon_bounds_every_request_of_real_runs() {
    use crate::engine::simulate;
    // Fixed 1 s waits against a server down for good, 4 retries: requests at 0..=4 s;
    // the horizon is the 4 waits of 1 s. Then limiters and a recovery, every strategy, where
    // the last window with a request must start within the horizon.
    let tight = ScenarioFile {
        strategy: Some("fixed".parse().unwrap()),
        base: Some(SimDuration::from_secs(1)),
        cap: Some(SimDuration::from_secs(1)),
        ..Default::default()
    }
    .validate()
    .unwrap();
    assert_eq!(tight.horizon(), SimDuration::from_secs(4));
    let scenarios = [
        include_str!("../../configs/fixed-window-one-client.toml"),
        include_str!("../../configs/fixed-window-five-clients.toml"),
        "clients = 50\nstrategy = \"all\"\nretries = 50\nbase = \"100ms\"\ncap = \"2s\"\n\
         pool = 400\nlatency = \"20ms\"\n[server]\nmodel = \"token-bucket\"\n\
         capacity = 2\nrefill = 1\nrefill_interval = \"3s\"\nclients_per_address = 50\n",
        "clients = 20\nstrategy = \"all\"\nretries = 30\ncap = \"4s\"\nitems = 5\n\
         [server]\nmodel = \"sliding-window\"\nlimit = 3\nwindow = \"5s\"\n\
         clients_per_address = 20\n",
        "clients = 100\nstrategy = \"all\"\nitems = 3\nlatency = \"uniform:50ms..150ms\"\n\
         [server]\nrecover_at = \"7s\"\n",
        // One request a minute, waits of 1 s: the last request comes two windows in (about
        // 120 s), far beyond three items' worth of waits (a bound forgetting the window).
        "clients = 1\nstrategy = \"all\"\nbase = \"1s\"\ncap = \"1s\"\nretries = 200\n\
         items = 3\n[server]\nmodel = \"fixed-window\"\nlimit = 1\nwindow = \"60s\"\n",
        // Contention: the study's config, and a fixed network with no backoff, where the
        // last write comes at 4d·N − d (so N·(0 + 6d) + d bounds it).
        include_str!("../../configs/occ-contention.toml"),
        "clients = 40\nstrategy = \"naive\"\nretries = 100\nnetwork_delay = \"3ms\"\n\
         [server]\nmodel = \"occ\"\n",
    ];
    let mut checked = 0;
    for text in scenarios {
        let scenario = shipped(text, 2);
        let horizon = scenario.horizon();
        for &strategy in &scenario.strategies {
            let tally = simulate(&scenario.run_spec(strategy), Path::EventQueue);
            let last = tally
                .served_windows
                .counts()
                .len()
                .max(tally.refused_windows.counts().len())
                - 1;
            let start = tally.served_windows.window_start(last);
            assert!(
                start <= SimTime::ZERO + horizon,
                "{strategy}: {start:?} > {horizon:?} in {text}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn a_sweep_table_is_left_to_the_sweep() {
    let file =
        ScenarioFile::parse("clients = 7\n[sweep]\nclients = [1, 2]\n", Some("toml")).unwrap();
    assert_eq!(file.validate().unwrap().clients, 7);
}

#[test]
fn files_refuse_unknown_keys_and_flags_override_files() {
    let e = ScenarioFile::parse("clients = 10\nclinets = 5\n", Some("toml")).unwrap_err();
    assert!(e.contains("clinets"), "{e}");
    let file = ScenarioFile::parse(
        "clients = 10\nstrategy = [\"fixed\", \"exponential\"]\nbase = \"250ms\"\n[server]\nrecover_at = \"20s\"\n",
        Some("toml"),
    )
    .unwrap();
    let flags = ScenarioFile {
        clients: Some(99),
        ..Default::default()
    };
    let s = file.overridden_by(flags).validate().unwrap();
    assert_eq!(s.clients, 99);
    assert_eq!(s.strategies, [Strategy::Fixed, Strategy::Exponential]);
    assert_eq!(s.backoff.base, SimDuration::from_millis(250));
    assert_eq!(
        s.server,
        ServerModel::Down {
            recover_at: Some(SimDuration::from_secs(20))
        }
    );
    let json = ScenarioFile::parse(r#"{"clients": 5, "strategy": "all"}"#, Some("json")).unwrap();
    assert_eq!(
        json.validate().unwrap().strategies.len(),
        Strategy::ALL.len()
    );
}
