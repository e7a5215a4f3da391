use super::quantiles::select;
use super::*;
use crate::time::SimTime;

#[test]
fn sketch_quantiles_are_within_their_bound() {
    // Exact nearest-rank quantiles of 1..=100 000 scaled by 1 000 (1 µs .. 100 ms): p50 is
    // 50 000 µs, p99 99 000 µs; the sketch must be within 1/256 of each.
    let mut s = Sketch::new();
    for v in 1..=100_000u64 {
        s.record(v * 1000);
    }
    for (q, exact) in [(0.5, 50_000_000.0), (0.99, 99_000_000.0)] {
        let got = s.quantile(q).unwrap() as f64;
        assert!((got - exact).abs() / exact <= 1.0 / 256.0, "{q}: {got}");
    }
    let mut small = Sketch::new();
    for v in [5, 3, 9] {
        small.record(v);
    }
    assert_eq!(small.quantile(0.5), Some(5));
    assert_eq!(small.quantile(0.99), Some(9));
    assert_eq!(Sketch::new().quantile(0.5), None);
    // Every bucket's midpoint maps back to the bucket, up to the largest value.
    for v in [127u64, 128, 129, 255, 256, 1 << 40, u64::MAX] {
        let b = Sketch::bucket(v);
        assert_eq!(Sketch::bucket(Sketch::value(b)), b, "{v}");
        let mid = Sketch::value(b) as f64;
        assert!((mid - v as f64).abs() / v as f64 <= 1.0 / 128.0, "{v}");
    }
}

#[test]
fn a_window_gives_the_sketch_quantiles_of_its_values() {
    // Windows of 0 to 3 000 values (past WINDOW_VALUES, so some spill into the sketch and
    // later ones come back to values), skewed, with ties and tiny values: each window's
    // p50 and p99 are a fresh sketch's of the same values.
    let mut state = 99u64;
    let mut window = WindowLatencies::new();
    for n in [
        0, 1, 2, 3, 7, 100, 101, 1023, 1024, 1025, 3000, 5, 0, 64, 2048, 1,
    ] {
        let mut sketch = Sketch::new();
        for _ in 0..n {
            let word = crate::rng::splitmix64(&mut state);
            let v = match word % 4 {
                0 => word >> 60,
                1 => 5_000,
                _ => (word >> 40) * ((word & 0xff) + 1),
            };
            window.record(v);
            sketch.record(v);
        }
        assert_eq!(
            window.take_p50_p99(),
            (sketch.quantile(0.5), sketch.quantile(0.99)),
            "{n} values"
        );
    }
}

#[test]
fn select_finds_the_kth_smallest_and_partitions_around_it() {
    // Lengths 1 to 130, values from a few distinct ones (many ties) to all distinct, every
    // rank: the value a sort puts there, nothing larger before it, nothing smaller after.
    let mut state = 7u64;
    for n in 1..=130usize {
        for spread in [1u64, 3, 50, u64::MAX] {
            let values: Vec<u64> = (0..n)
                .map(|_| crate::rng::splitmix64(&mut state) % spread.max(1))
                .map(|v| if spread == 1 { 42 } else { v })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable();
            for k in 0..n {
                let mut v = values.clone();
                let x = select(&mut v, k);
                assert_eq!(x, sorted[k], "n {n}, spread {spread}, k {k}");
                assert_eq!(v[k], x);
                assert!(v[..k].iter().all(|&a| a <= x) && v[k + 1..].iter().all(|&a| a >= x));
                v.sort_unstable();
                assert_eq!(v, sorted, "a permutation of the values");
            }
        }
    }
}

#[test]
fn windows_close_in_order_and_quiet_ones_are_left_out() {
    let bin = SimDuration::from_secs(1);
    let mut b = SeriesBuilder::new(bin, Recovery::new(bin, SimTime::ZERO, 1, None));
    b.counts().calls_started += 1;
    b.success(100);
    b.advance(SimTime(1_500_000_000), 2);
    b.counts().attempts += 1;
    // Windows 2..4 pass with 1 request in the server: written; 5..9 with none: left out.
    b.advance(SimTime(5_000_000_000), 1);
    b.advance(SimTime(10_000_000_000), 0);
    b.counts().refused += 1;
    let (rows, _) = b.finish(0);
    let windows: Vec<u64> = rows.iter().map(|r| r.window).collect();
    assert_eq!(windows, [0, 1, 2, 3, 4, 10]);
    assert_eq!(rows[0].in_system, 2);
    assert_eq!(rows[0].latency_p50_ns, Some(100));
    assert_eq!(rows[1].latency_p50_ns, None);
    assert_eq!(rows[3].in_system, 1);
    assert_eq!(rows[5].refused, 1);
}

#[test]
fn a_folding_builder_judges_recovery_as_one_keeping_its_rows_does() {
    // Random windows (good or bad, with gaps, some with requests in the server): the
    // verdict judged as rows close, kept or folded, with the end known before the run
    // (Poisson) or only after it (a herd, whose end is past its last row), is
    // recovered_at over the rows kept.
    let bin = SimDuration::from_millis(10);
    let mut state = 7u64;
    for round in 0..300 {
        let after = SimTime(crate::rng::splitmix64(&mut state) % 400 * 1_000_000);
        let hold = crate::rng::splitmix64(&mut state) % 6;
        let mut words = Vec::new();
        let mut now = 0u64;
        for _ in 0..60 {
            let word = crate::rng::splitmix64(&mut state);
            now += word % 40 * 1_000_000;
            words.push((now, word));
        }
        let late = SimTime(now + (hold + 2) * 10_000_000);
        for end in [None, Some(SimTime(now)), Some(SimTime(now / 2))] {
            let recovery = Recovery::new(bin, after, hold, end);
            let mut kept = SeriesBuilder::new(bin, recovery.clone());
            let mut folded = SeriesBuilder::folding(bin, recovery);
            for &(now, word) in &words {
                let in_system = (word >> 8) % 3;
                for b in [&mut kept, &mut folded] {
                    b.advance(SimTime(now), in_system);
                    let c = b.counts();
                    c.calls_started += (word >> 16) % 4;
                    c.timed_out += u64::from((word >> 20) % 5 == 0);
                    for _ in 0..(word >> 24) % 4 {
                        b.success(word >> 40);
                    }
                }
            }
            let (rows, kept) = kept.finish(1);
            let (none, folded) = folded.finish(1);
            assert!(none.is_empty());
            let end = end.unwrap_or(late);
            let whole = recovered_at(&rows, bin, after, hold, end);
            assert_eq!(kept.at(end), whole, "round {round}");
            assert_eq!(folded.at(end), whole, "round {round}");
        }
    }
}

fn row(window: u64, calls_started: u64, succeeded: u64, timed_out: u64) -> SeriesRow {
    SeriesRow {
        window,
        calls_started,
        attempts: calls_started + timed_out,
        succeeded,
        timed_out,
        ..SeriesRow::default()
    }
}

const S: u64 = 1_000_000_000;

#[test]
fn windows_read_good_bad_or_quiet() {
    assert_eq!(row(0, 10, 9, 1).reading(), Reading::Good);
    // 80 % of the calls started answered in the window: the rest may be on their way
    // (the 90 % of goodput is judged over the rest of the run).
    assert_eq!(row(0, 10, 8, 0).reading(), Reading::Good);
    assert_eq!(row(0, 10, 10, 2).reading(), Reading::Bad); // 2 of 12 answers failed
    assert_eq!(row(0, 0, 0, 5).reading(), Reading::Bad); // failures only
                                                         // Started, nothing answered yet: no evidence (the goodput over the rest of the run
                                                         // judges calls that are never answered).
    assert_eq!(row(0, 3, 0, 0).reading(), Reading::Quiet);
    assert_eq!(row(0, 0, 4, 0).reading(), Reading::Good); // a backlog draining
    assert_eq!(SeriesRow::default().reading(), Reading::Quiet);
    let waiting = SeriesRow {
        in_system: 7,
        ..SeriesRow::default()
    };
    assert_eq!(waiting.reading(), Reading::Quiet);
}

#[test]
fn a_series_that_recovers_and_stays_is_recovered_at_its_first_good_window() {
    // Trigger ends at 2.5 s; load ends at 12 s; hold 3 windows. Windows 3 and 4 bad, then
    // good from 5 (window 7 missing: quiet) to the end: recovered at 5 s.
    let rows = [
        row(1, 10, 0, 10),
        row(3, 10, 2, 8),
        row(4, 10, 5, 5),
        row(5, 10, 9, 1),
        row(6, 10, 10, 0),
        row(8, 10, 10, 0),
        row(11, 10, 10, 0),
        // After the load: not judged, whatever it says.
        row(12, 0, 0, 9),
    ];
    let recovered = recovered_at(
        &rows,
        SimDuration(S),
        SimTime(S * 5 / 2),
        3,
        SimTime(12 * S),
    );
    assert_eq!(recovered, Some(SimTime(5 * S)));
    // The hold must fit before the end: 5 + 3 <= 8, not 5 + 3 <= 7.
    assert_eq!(
        recovered_at(&rows, SimDuration(S), SimTime(S * 5 / 2), 3, SimTime(8 * S)),
        Some(SimTime(5 * S))
    );
    assert_eq!(
        recovered_at(&rows, SimDuration(S), SimTime(S * 5 / 2), 3, SimTime(7 * S)),
        None
    );
}

#[test]
fn a_series_that_recovers_then_relapses_is_collapsed() {
    // Good for 5 windows (more than the hold of 3), then bad again at 9 until the end:
    // the old rule (hold once reached) said recovered at 3 s; kept to the end, it is not.
    let mut rows: Vec<SeriesRow> = (3..9).map(|w| row(w, 10, 10, 0)).collect();
    rows.extend((9..20).map(|w| row(w, 10, 1, 9)));
    let bin = SimDuration(S);
    assert_eq!(
        recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(20 * S)),
        None
    );
    // A relapse that heals again: recovered from the first good window after it.
    rows.extend((20..30).map(|w| row(w, 10, 10, 0)));
    assert_eq!(
        recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(30 * S)),
        Some(SimTime(20 * S))
    );
}

#[test]
fn successes_may_lag_the_calls_started_but_must_keep_up() {
    // Calls take two windows: window w's successes are the calls started at w - 2 (10 a
    // window before 3). Starts of windows 3..14: 10, 10, 20, 20, 10, 10, 10, 10, 10, 10,
    // 0, 0, so one stretch's ratio swings while every answer is a success. From 3 on:
    // 20 + 120 successes (two windows of earlier calls among them) >= 90 % of 120.
    let started = [10, 10, 20, 20, 10, 10, 10, 10, 10, 10, 0, 0];
    let rows: Vec<SeriesRow> = (0..12)
        .map(|i| {
            let mut r = row(3 + i as u64, started[i], 0, 0);
            r.succeeded = if i >= 2 { started[i - 2] } else { 10 };
            r
        })
        .collect();
    // Stretch 5..8 alone: 50 started, 40 succeeded in it (80 %).
    let (c, s): (u64, u64) = rows[2..5]
        .iter()
        .fold((0, 0), |(c, s), r| (c + r.calls_started, s + r.succeeded));
    assert_eq!((c, s), (50, 40));
    let bin = SimDuration(S);
    assert_eq!(
        recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(13 * S)),
        Some(SimTime(3 * S))
    );
    // A server falling behind without failing anything (no timeout): 10 calls start a
    // window and 8 succeed, every stretch good, yet goodput is 80 % of the calls started
    // from any W on: collapsed.
    let behind: Vec<SeriesRow> = (3..30).map(|w| row(w, 10, 8, 0)).collect();
    assert_eq!(
        recovered_at(&behind, bin, SimTime(3 * S), 3, SimTime(30 * S)),
        None
    );
    // The load ending within the hold of the trigger leaves nothing to judge: collapsed.
    assert_eq!(
        recovered_at(&rows, bin, SimTime(3 * S), 3, SimTime(5 * S)),
        None
    );
}

#[test]
fn a_herd_whose_calls_all_failed_is_not_recovered() {
    // Every call timed out by window 6; nobody calls after: quiet windows to the end are
    // no recovery (the old rule read them as healthy and said recovered at 7 s).
    let rows = [row(0, 100, 0, 100), row(3, 0, 0, 100), row(6, 0, 0, 100)];
    let bin = SimDuration(S);
    assert_eq!(
        recovered_at(&rows, bin, SimTime(2 * S), 3, SimTime(60 * S)),
        None
    );
    // A series in which no call ever started is not recovered either.
    assert_eq!(
        recovered_at(&[], bin, SimTime(2 * S), 3, SimTime(60 * S)),
        None
    );
    // The herd's retries succeeding after the trigger: recovered where they start to.
    let rows = [row(0, 100, 0, 100), row(3, 0, 50, 0), row(4, 0, 50, 0)];
    assert_eq!(
        recovered_at(&rows, bin, SimTime(2 * S), 3, SimTime(60 * S)),
        Some(SimTime(3 * S))
    );
}

#[test]
fn the_rule_names_its_hold_and_settle() {
    let rule = verdict_rule(SimDuration::from_secs(5), SimDuration::from_secs(94));
    assert!(rule.starts_with("collapsed unless"), "{rule}");
    assert!(rule.contains("94s") && rule.contains("(5s)"), "{rule}");
    assert!(!rule.contains('\n'));
}
