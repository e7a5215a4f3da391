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
