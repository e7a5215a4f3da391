//! Real retry crates inside the herd (cargo features `tower` and `backon`): the crate's own
//! answers come back through herd-sim's retry-control interface and its runs, and where the
//! crate's arithmetic departs from herd-sim's model of the same algorithm, the runs differ by
//! what the departure predicts. Without a feature, naming its adapter is one error line.

#[cfg(not(feature = "tower"))]
#[test]
fn tower_tps_without_the_feature_says_which_feature_to_enable() {
    let out = crate::herd_sim()
        .args(["--budget", "tower-tps:percent=0.2", "--clients", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("the cargo feature `tower`"),
        "{err}"
    );
}

#[cfg(feature = "tower")]
mod tower {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;

    use herd_sim::policy::control::{Budget, Controls, Outcome};
    use herd_sim::time::SimTime;
    use tower::retry::budget::{Budget as _, TpsBudget};

    const S: u64 = 1_000_000_000;
    const MS: u64 = 1_000_000;

    /// What a script does at its time: a call starts (a deposit) or a retry asks (a withdrawal).
    #[derive(Clone, Copy, Debug)]
    enum Op {
        Deposit,
        Withdraw,
    }

    /// A script: ttl 10 s, 1 retry a second in reserve, retry_percent 0.5. By hand, in tower's
    /// arithmetic (tps_budget.rs of 0.5.3): a deposit is 1, a withdrawal ⌊1 / 0.5⌋ = 2, the
    /// reserve 1 × 10 × 2 = 20, slots of 1 s.
    /// - t = 0: ten withdrawals go (20 → 0), the eleventh finds 0 < 2.
    /// - 0.5 s: three deposits (3); one withdrawal goes (1), the next finds 1 < 2.
    /// - 5 s: the writer (−19) is committed to slot 0 and slots 1–4 are zeroed; the sum is
    ///   −19 + 20 = 1 < 2: refused.
    /// - 11.6 s: 6.6 s since the last expiry: slot 5 takes the writer (0) and the loop
    ///   zeroes while more than a slot is left, slots 6, 7, 8, 9, 0 (the −19) and 1: the
    ///   reserve alone, ten withdrawals again, the eleventh refused.
    fn script() -> (Vec<(u64, Op)>, Vec<bool>) {
        let mut ops = Vec::new();
        let mut want = Vec::new();
        let mut withdraws = |ops: &mut Vec<(u64, Op)>, t: u64, answers: &[bool]| {
            for &a in answers {
                ops.push((t, Op::Withdraw));
                want.push(a);
            }
        };
        let ten_then_no: Vec<bool> = (0..11).map(|k| k < 10).collect();
        withdraws(&mut ops, 0, &ten_then_no);
        for _ in 0..3 {
            ops.push((S / 2, Op::Deposit));
        }
        withdraws(&mut ops, S / 2, &[true, false]);
        withdraws(&mut ops, 5 * S, &[false]);
        withdraws(&mut ops, 11 * S + 600 * MS, &ten_then_no);
        (ops, want)
    }

    /// The crate alone: `TpsBudget` under tokio's paused clock, advanced with
    /// `tokio::time::advance` inside `block_on`, as tower's own tests do.
    fn tower_alone(ops: &[(u64, Op)], ttl: Duration, min_per_s: u32, percent: f32) -> Vec<bool> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let budget = TpsBudget::new(ttl, min_per_s, percent);
            let mut now = 0;
            let mut answers = Vec::new();
            for &(t, op) in ops {
                if t > now {
                    tokio::time::advance(Duration::from_nanos(t - now)).await;
                    now = t;
                }
                match op {
                    Op::Deposit => budget.deposit(),
                    Op::Withdraw => answers.push(budget.withdraw()),
                }
            }
            answers
        })
    }

    /// The same script through herd-sim's retry-control interface: a call started is a
    /// deposit, a retry asked for is a withdrawal.
    fn through_herd_sim(ops: &[(u64, Op)], budget: &str) -> Vec<bool> {
        let controls = Controls {
            budget: Budget::parse(budget).unwrap(),
            ..Controls::default()
        };
        let mut state = controls.start();
        let mut answers = Vec::new();
        for &(t, op) in ops {
            let now = SimTime(t);
            match op {
                Op::Deposit => assert!(state.call_started(&controls, now, &mut false)),
                Op::Withdraw => {
                    answers.push(state.allow_retry(&controls, now, Outcome::Error, &mut 0))
                }
            }
        }
        answers
    }

    #[test]
    fn a_hand_worked_script_through_herd_sim_gives_tower_s_own_answers() {
        let (ops, want) = script();
        let alone = tower_alone(&ops, Duration::from_secs(10), 1, 0.5);
        assert_eq!(
            alone, want,
            "tower by itself against the hand-worked answers"
        );
        let herd = through_herd_sim(&ops, "tower-tps:ttl=10s,min_per_s=1,percent=0.5");
        assert_eq!(herd, want, "tower through herd-sim");
        // herd-sim's model of the budget it copies, Finagle's, in percent: exact at 50 %.
        let model = through_herd_sim(&ops, "finagle:ttl=10s,min_per_s=1,percent=50");
        assert_eq!(model, want, "herd-sim's Finagle model");
    }

    #[test]
    fn the_truncation_of_one_over_retry_percent_in_a_script() {
        // No reserve; five deposits at t = 0, then withdrawals until refused. At 0.6 tower
        // withdraws (1 / 0.6) as isize = 1 a time: five retries. Finagle withdraws
        // ⌊1000 / 0.6⌋ = 1666 of 5000: three (4998), the fourth needs 6664. At 0.2 both allow
        // one (tower 5 of 5, Finagle 5000 of 5000); at 1.5 both seven (tower ⌊1000 / 1.5⌋ =
        // 666 of 5000: 7 × 666 = 4662, an eighth would need 5328).
        for (percent, tower_retries, finagle_retries) in [(0.6f32, 5, 3), (0.2, 1, 1), (1.5, 7, 7)]
        {
            let mut ops: Vec<(u64, Op)> = (0..5).map(|_| (0, Op::Deposit)).collect();
            ops.extend((0..10).map(|_| (0, Op::Withdraw)));
            let count = |v: Vec<bool>| v.iter().take_while(|&&a| a).count();
            let alone = tower_alone(&ops, Duration::from_secs(10), 0, percent);
            let herd = through_herd_sim(
                &ops,
                &format!("tower-tps:ttl=10s,min_per_s=0,percent={percent}"),
            );
            let model = through_herd_sim(
                &ops,
                &format!("finagle:ttl=10s,min_per_s=0,percent={}", percent * 100.0),
            );
            assert_eq!(alone, herd, "{percent}");
            assert_eq!(count(alone), tower_retries, "{percent}");
            assert_eq!(count(model), finagle_retries, "{percent}");
        }
    }

    /// One process, one call at a time against a server that is down: calls arrive as a
    /// Poisson stream of 4/s for 25 s, naive retries at once, no network delay, so each
    /// call's attempts are over before the next call starts; no reserve, and a ttl of 60 s
    /// forgets nothing of 25 s (Finagle's window holds at least 9 slices of 6 s; tower's at
    /// least 5, 30 s: see `tower_remembers_half_its_slots_under_steady_traffic`).
    fn down_server_run(budget: &str) -> (u64, u64) {
        let out = crate::herd_sim_ok(&[
            "--server",
            "down",
            "--clients",
            "1",
            "--arrivals",
            "poisson",
            "--rate",
            "4/s",
            "--duration",
            "25s",
            "--strategy",
            "naive",
            "--retries",
            "3",
            "--format",
            "json",
            "--budget",
            budget,
        ]);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let r = &v["results"][0];
        (
            r["calls"].as_u64().unwrap(),
            r["attempts"].as_u64().unwrap(),
        )
    }

    #[test]
    fn in_the_herd_the_crate_and_herd_sims_model_agree_at_0_2_and_1_5_and_part_at_0_6() {
        // C calls, each depositing before its first attempt fails; every retry fails too.
        // With a deposit D and a withdrawal W, retries are taken while the deposits cover
        // them, so the run makes C + ⌊C × D / W⌋ attempts (each call retries at most
        // ⌈D / W⌉ ≤ 2 ≤ 3 times):
        // - 0.2: tower D = 1, W = 5; Finagle 1000, 5000: C + ⌊C / 5⌋ both.
        // - 1.5: tower 1000, ⌊1000 / 1.5⌋ = 666; Finagle the same: C + ⌊1000 C / 666⌋ both.
        // - 0.6: tower 1, (1 / 0.6) as isize = 1: every call retries once, 2C; Finagle 1000,
        //   ⌊1000 / 0.6⌋ = 1666: C + ⌊1000 C / 1666⌋, about 1.6 C (tower-rs/tower#857).
        let none = "ttl=60s,min_per_s=0";
        for (percent, tower_w, tower_d, finagle_w) in
            [(0.2, 5, 1, 5000), (1.5, 666, 1000, 666), (0.6, 1, 1, 1666)]
        {
            let (c, tower) = down_server_run(&format!("tower-tps:{none},percent={percent}"));
            let (c2, model) =
                down_server_run(&format!("finagle:{none},percent={}", percent * 100.0));
            assert!(c > 50, "{c} calls");
            assert_eq!(tower, c + c * tower_d / tower_w, "tower at {percent}");
            assert_eq!(model, c2 + c2 * 1000 / finagle_w, "finagle at {percent}");
            if percent == 0.6 {
                assert_eq!(tower, 2 * c);
                assert!(tower > model, "{tower} {model}");
            } else {
                assert_eq!((c, tower), (c2, model), "agree at {percent}");
            }
        }
    }

    #[test]
    fn tower_remembers_half_its_slots_under_steady_traffic() {
        // A call every 97 ms from t = 0 to 19.982 s (207 deposits), ttl 10 s (slots of 1 s),
        // no reserve, one retry a deposit (retry_percent 1; Finagle 100 %); at 20 s, retries
        // until refused count the deposits the budget still holds.
        // Both expire at the first call 1 s or more after the last expiry: every 11th call
        // (11 × 97 = 1067 ms), so each committed slot holds 11 deposits; 18 expiries (calls
        // 11, 22, ..., 198), and calls 198 to 206 (9) are in the writer at 20 s.
        // - Finagle's WindowedAdder skips ⌊1067 / 1000⌋ − 1 = 0 slices: its ring of 9 holds
        //   the last 9 commits, 9 × 11 + 9 = 108.
        // - tower's expire zeroes a slot while more than one slot's time is left of the 1067
        //   ms, once: every expiry commits into one slot and zeroes the next, so 5 of its 10
        //   slots hold commits: 5 × 11 + 9 = 64. A deposit counts for 5 to 6 s of its 10 s.
        let mut ops: Vec<(u64, Op)> = (0..207).map(|k| (k * 97 * MS, Op::Deposit)).collect();
        ops.extend((0..200).map(|_| (20 * S, Op::Withdraw)));
        let count = |v: Vec<bool>| v.iter().take_while(|&&a| a).count();
        let alone = tower_alone(&ops, Duration::from_secs(10), 0, 1.0);
        let herd = through_herd_sim(&ops, "tower-tps:ttl=10s,min_per_s=0,percent=1");
        let model = through_herd_sim(&ops, "finagle:ttl=10s,min_per_s=0,percent=100");
        assert_eq!(alone, herd);
        assert_eq!(count(alone), 64);
        assert_eq!(count(model), 108);
    }

    #[test]
    fn tower_tps_refuses_bad_keys_in_one_line() {
        for (value, says) in [
            ("tower-tps:ttl=90s", "ttl=90s is out of range"),
            ("tower-tps:percent=2000", "percent=2000 is out of range"),
            ("tower-tps:min_per_s=x", "min_per_s=x is out of range"),
            ("tower-tps:cost=3", "unknown parameter `cost`"),
        ] {
            let out = crate::herd_sim()
                .args(["--budget", value, "--clients", "10"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{value}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.starts_with("error: ") && err.contains(says),
                "{value}: {err}"
            );
        }
    }

    #[test]
    fn herd_sim_s_budgets_as_tower_budgets_answer_as_the_simulator() {
        use herd_sim::adapters::tower::SimulatedBudget;
        use herd_sim::client::ManualClock;
        use herd_sim::time::SimDuration;

        // Finagle's model behind tower's trait, fed the hand-worked script: the answers tower's
        // own TpsBudget gives (a deposit where a call starts, a withdrawal where a retry asks).
        let (ops, want) = script();
        let budget = SimulatedBudget::new(
            Budget::parse("finagle:ttl=10s,min_per_s=1,percent=50").unwrap(),
            ManualClock::default(),
        )
        .unwrap();
        let mut answers = Vec::new();
        let mut now = 0;
        for &(t, op) in &ops {
            budget.clock().advance(SimDuration(t - now));
            now = t;
            match op {
                Op::Deposit => budget.deposit(),
                Op::Withdraw => answers.push(budget.withdraw()),
            }
        }
        assert_eq!(answers, want);
        // gRPC A6 by hand: 10 tokens; each withdrawal is a failed attempt (−1) asking to retry,
        // allowed while more than 5 are left: 9, 8, 7, 6 allowed, 5 refused; ten successes
        // (deposits of 0.1) make 6.0, a failure 5.0: refused; one more makes 6.1, then 5.1:
        // allowed.
        let grpc =
            SimulatedBudget::new(Budget::parse("grpc").unwrap(), ManualClock::default()).unwrap();
        let asked: Vec<bool> = (0..5).map(|_| grpc.withdraw()).collect();
        assert_eq!(asked, [true, true, true, true, false]);
        for _ in 0..10 {
            grpc.deposit();
        }
        assert!(!grpc.withdraw());
        for _ in 0..11 {
            grpc.deposit();
        }
        assert!(grpc.withdraw());
        // Envoy's gauges of requests in flight have no place in tower's two calls.
        assert!(
            SimulatedBudget::new(Budget::parse("envoy").unwrap(), ManualClock::default()).is_none()
        );
    }

    /// docs/crates.md's study, as scripts/crates-study.sh runs it: the script's scenario and
    /// rows, each run again here and compared with docs/crates.csv, and the guide's table
    /// with the file.
    #[test]
    fn the_study_in_the_guide_is_what_the_crate_does_in_the_herd() {
        let root = env!("CARGO_MANIFEST_DIR");
        let script = std::fs::read_to_string(format!("{root}/scripts/crates-study.sh")).unwrap();
        let scenario: Vec<String> = script
            .split("scenario=(")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert!(scenario.contains(&"--outage".to_string()), "{scenario:?}");
        let csv = std::fs::read_to_string(format!("{root}/docs/crates.csv")).unwrap();
        let guide = std::fs::read_to_string(format!("{root}/docs/crates.md")).unwrap();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("budget,retry_percent,flag,calls,attempts,attempts_per_call,retries_denied")
        );
        let mut per_call = std::collections::HashMap::new();
        let mut rows = 0;
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            let mut args = scenario.clone();
            args.extend(["--budget".to_string(), f[2].to_string()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let v: serde_json::Value = serde_json::from_slice(&crate::herd_sim_ok(&args)).unwrap();
            let r = &v["results"][0];
            let (calls, attempts) = (
                r["calls"].as_u64().unwrap(),
                r["attempts"].as_u64().unwrap(),
            );
            let fresh = format!(
                "{},{},{},{calls},{attempts},{:.3},{}",
                f[0],
                f[1],
                f[2],
                attempts as f64 / calls as f64,
                r["retries_denied"].as_u64().unwrap()
            );
            assert_eq!(line, fresh, "docs/crates.csv against a fresh run");
            let row = format!(
                "| {} | {} | {} | {} | {} | {} |",
                f[0], f[1], f[3], f[4], f[5], f[6]
            );
            assert!(guide.contains(&row), "docs/crates.md has no row {row}");
            per_call.insert(f[2].to_string(), (calls, attempts, f[5].to_string()));
            rows += 1;
        }
        assert_eq!(rows, 9);
        // The truncation: tower at 0.6 withdraws what it withdraws at 1, so the two runs are
        // the same run; the model at 60 % allows fewer retries than at 100 %, and tower more
        // than the model at every percent, and less than no budget.
        let get = |k: &str| per_call[k].clone();
        assert_eq!(get("tower-tps:percent=0.6"), get("tower-tps:percent=1"));
        let ratio = |k: &str| get(k).1 as f64 / get(k).0 as f64;
        assert!(ratio("finagle:percent=60") < ratio("finagle:percent=100"));
        for (tower, model) in [
            ("tower-tps:percent=0.2", "finagle:percent=20"),
            ("tower-tps:percent=0.6", "finagle:percent=60"),
            ("tower-tps:percent=1.5", "finagle:percent=150"),
        ] {
            assert!(ratio(tower) > ratio(model), "{tower}");
            assert!(ratio(tower) < ratio("none"), "{tower}");
        }
        for figure in [
            "2.310", "1.841", "2.051", "1.940", "1.630", "2.490", "2.286",
        ] {
            assert!(
                per_call.values().any(|(_, _, p)| p == figure),
                "{figure} quoted in the guide"
            );
        }
    }

    /// tower's `advance` is what the adapter relies on moving the clock at its first poll.
    #[test]
    fn tokio_advance_moves_the_clock_at_its_first_poll() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let _g = rt.enter();
        let start = tokio::time::Instant::now();
        let mut advance = pin!(tokio::time::advance(Duration::from_millis(1234)));
        let first = advance
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        assert!(matches!(first, Poll::Pending));
        assert_eq!(
            tokio::time::Instant::now() - start,
            Duration::from_millis(1234)
        );
    }
}

#[cfg(feature = "backon")]
mod backon {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use backon::{
        BackoffBuilder, BlockingRetryable, ConstantBuilder, ExponentialBuilder, FibonacciBuilder,
    };
    use herd_sim::adapters::backon::SimulatedBackoff;
    use herd_sim::client::Delays;
    use herd_sim::policy::{Decision, Hints, Policy, Strategy};
    use herd_sim::rng::ClientSeeds;
    use rand::RngCore;

    const SEED: u64 = 2015;

    /// backon's own iterator for `strategy` as a user writes it for base 250 ms, cap 8 s,
    /// factor 3, jitter on, seeded `seed`: nothing of herd-sim's adapter in it.
    fn crate_iterator(strategy: &str, seed: u64) -> Box<dyn Iterator<Item = Duration>> {
        let (base, cap) = (Duration::from_millis(250), Duration::from_secs(8));
        match strategy {
            "backon-exponential" => Box::new(
                ExponentialBuilder::new()
                    .with_min_delay(base)
                    .with_max_delay(cap)
                    .with_factor(3.0)
                    .with_jitter()
                    .with_jitter_seed(seed)
                    .with_max_times(10)
                    .build(),
            ),
            "backon-fibonacci" => Box::new(
                FibonacciBuilder::new()
                    .with_min_delay(base)
                    .with_max_delay(cap)
                    .with_jitter()
                    .with_jitter_seed(seed)
                    .with_max_times(10)
                    .build(),
            ),
            _ => Box::new(
                ConstantBuilder::new()
                    .with_delay(base)
                    .with_jitter()
                    .with_jitter_seed(seed)
                    .with_max_times(10)
                    .build(),
            ),
        }
    }

    /// The delays trace-policy prints for `strategy`: client 0 of --seed, every attempt failing.
    fn traced(strategy: &str) -> Vec<Duration> {
        let out = crate::herd_sim_ok(&[
            "trace-policy",
            "--strategy",
            strategy,
            "--retries",
            "6",
            "--base",
            "250ms",
            "--cap",
            "8s",
            "--multiplier",
            "3",
            "--outcomes",
            "error*7",
            "--seed",
            &SEED.to_string(),
        ]);
        let text = String::from_utf8(out).unwrap();
        text.lines()
            .filter(|l| l.contains("retry "))
            .map(|l| {
                // call, attempt, sent_s, outcome, the budget `- -> -`, then the delay.
                let delay = l.split_whitespace().nth(7).unwrap();
                Duration::from_nanos((delay.parse::<f64>().unwrap() * 1e9).round() as u64)
            })
            .collect()
    }

    #[test]
    fn the_simulated_waits_are_the_crate_s_own_iterator_for_each_seed_drawn() {
        // Retry k of a call is item k of backon's iterator seeded with the k-th u64 of the
        // client's stream (src/adapters/backon.rs): the trace's waits, through the binary,
        // against backon's iterators built here as a user builds them.
        for strategy in ["backon-exponential", "backon-fibonacci", "backon-constant"] {
            let mut stream = ClientSeeds::starting_at(SEED, 0).next_rng();
            let want: Vec<Duration> = (0..6)
                .map(|k| crate_iterator(strategy, stream.next_u64()).nth(k).unwrap())
                .collect();
            let got = traced(strategy);
            assert_eq!(got.len(), 6, "{strategy}");
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                // The trace prints nanoseconds: equal to the nanosecond.
                assert_eq!(g, w, "{strategy}, retry {}", k + 1);
            }
            // And by hand, backon's ranges: the exponential's curve 0.25, 0.75, 2.25, 6.75, 8,
            // 8 s plus up to as much again; the constant's 0.25 s plus up to 0.25 s.
            if strategy == "backon-exponential" {
                for (g, e) in got.iter().zip([250, 750, 2250, 6750, 8000, 8000]) {
                    let e = Duration::from_millis(e);
                    assert!(*g >= e && *g < 2 * e, "{g:?} {e:?}");
                }
            }
            if strategy == "backon-constant" {
                assert!(got
                    .iter()
                    .all(|g| *g >= Duration::from_millis(250) && *g < Duration::from_millis(500)));
            }
        }
    }

    #[test]
    fn backon_strategies_run_in_the_herd_identically_for_any_thread_count() {
        let args = |threads: &'static str| {
            vec![
                "--clients",
                "2000",
                "--strategy",
                "backon-exponential,backon-fibonacci,backon-constant,full-jitter",
                "--format",
                "csv",
                "--threads",
                threads,
            ]
        };
        let one = crate::herd_sim_ok(&args("1"));
        let two = crate::herd_sim_ok(&args("2"));
        assert_eq!(one, two);
        let text = String::from_utf8(one).unwrap();
        for name in ["backon-exponential", "backon-fibonacci", "backon-constant"] {
            assert!(text.contains(name), "{text}");
        }
    }

    fn policy(strategy: Strategy) -> Policy {
        Policy {
            max_retries: 6,
            ..Policy::experiment1(strategy)
        }
    }

    /// What the simulator's client 0 of a run seeded `seed` waits: `Policy::decide` in turn.
    fn simulated(policy: Policy, seed: u64) -> Vec<Duration> {
        let mut rng = ClientSeeds::starting_at(seed, 0).next_rng();
        let mut waits = Vec::new();
        let mut previous = policy.backoff.base;
        loop {
            match policy.decide(waits.len() as u32, previous, &Hints::default(), &mut rng) {
                Decision::Retry { delay, .. } => {
                    previous = delay;
                    waits.push(Duration::from_nanos(delay.as_nanos()));
                }
                Decision::GiveUp => return waits,
            }
        }
    }

    #[test]
    fn herd_sim_s_strategies_as_backon_builders_wait_what_the_simulator_waits() {
        for strategy in Strategy::every() {
            let p = policy(strategy);
            let want = simulated(p, SEED);
            let built: Vec<Duration> = SimulatedBackoff::new(p, SEED).build().collect();
            assert_eq!(built, want, "{strategy}");
            // client::Delays is a backon backoff already (backon's blanket impl).
            let mut rng = ClientSeeds::starting_at(SEED, 0).next_rng();
            let borrowed: Vec<Duration> = Delays::new(p, &mut rng).build().collect();
            assert_eq!(borrowed, want, "{strategy}");
            // backon's own retry loop sleeps exactly those waits (a recording sleeper) and
            // calls the operation 1 + 6 times.
            let slept = Rc::new(RefCell::new(Vec::new()));
            let record = Rc::clone(&slept);
            let mut calls = 0;
            let result: Result<(), &str> = (|| {
                calls += 1;
                Err("503")
            })
            .retry(SimulatedBackoff::new(p, SEED))
            .sleep(move |d| record.borrow_mut().push(d))
            .call();
            assert_eq!(result, Err("503"));
            assert_eq!(calls, 7, "{strategy}");
            assert_eq!(*slept.borrow(), want, "{strategy}");
        }
        // Exponential by hand: 1, 2, 4, 8, 16, 30 s.
        let exp = simulated(policy(Strategy::Exponential), SEED);
        let by_hand: Vec<Duration> = [1, 2, 4, 8, 16, 30].map(Duration::from_secs).to_vec();
        assert_eq!(exp, by_hand);
    }
}
