use super::parameter::PARAMETERS;
use super::*;
use crate::config::DEFAULT_SEED;
use crate::policy::Strategy;
use crate::rng::derive_seed;

/// The plan of a sweep over `grid` with `seeds` seeds, the rest at the defaults (shard's tests
/// use it too).
pub(in crate::sweep) fn plan(grid: &[(&str, &str)], seeds: u64) -> Plan {
    Plan::new(SweepSpec {
        grid: grid
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        seeds,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn the_grid_runs_in_table_order_last_parameter_fastest_seeds_innermost() {
    // Given out of table order on purpose: the order written does not matter.
    let p = plan(
        &[
            ("retries", "2,3"),
            ("clients", "10,20"),
            ("strategy", "fixed"),
        ],
        2,
    );
    assert_eq!(p.cells(), 4);
    assert_eq!(p.rows(), 8);
    let keys: Vec<(String, String, String)> = (0..8)
        .map(|r| {
            let k = p.key(r).unwrap();
            (k[1].clone(), k[2].clone(), k[PARAMETERS.len()].clone())
        })
        .collect();
    let expected = [
        ("10", "2", "0"),
        ("10", "2", "1"),
        ("10", "3", "0"),
        ("10", "3", "1"),
        ("20", "2", "0"),
        ("20", "2", "1"),
        ("20", "3", "0"),
        ("20", "3", "1"),
    ];
    for (got, want) in keys.iter().zip(expected) {
        assert_eq!((got.0.as_str(), got.1.as_str(), got.2.as_str()), want);
    }
}

#[test]
fn a_cell_has_the_same_seed_in_any_grid_and_strategies_share_it() {
    let small = plan(&[("clients", "20")], 3);
    let large = plan(
        &[
            ("clients", "10,20,30"),
            ("strategy", "all"),
            ("base", "1s,2s"),
        ],
        3,
    );
    let seeds_of = |p: &Plan, clients: &str, base: &str| -> Vec<(String, String)> {
        (0..p.rows())
            .map(|r| p.key(r).unwrap())
            .filter(|k| k[1] == clients && k[3] == base)
            .map(|k| (k[0].clone(), k[PARAMETERS.len() + 1].clone()))
            .collect()
    };
    let alone = seeds_of(&small, "20", "1");
    let inside = seeds_of(&large, "20", "1");
    assert_eq!(alone.len(), 3);
    assert_eq!(inside.len(), 3 * Strategy::ALL.len());
    for (strategy, seed) in &inside {
        let replicate = inside
            .iter()
            .filter(|(s, _)| s == strategy)
            .position(|(_, s)| s == seed)
            .unwrap();
        assert_eq!(seed, &alone[replicate].1, "{strategy}");
    }
    // Replicates differ, and a different base is a different cell.
    assert_ne!(alone[0].1, alone[1].1);
    assert_ne!(seeds_of(&large, "20", "2")[0].1, alone[0].1);
}

#[test]
fn default_values_stay_out_of_the_label() {
    // `--clients 1000` is the default scenario: same seeds as a sweep not naming clients.
    let named = plan(&[("clients", "1000")], 1);
    let unnamed = plan(&[], 1);
    assert_eq!(named.key(0).unwrap(), unnamed.key(0).unwrap());
    let label_seed = derive_seed(DEFAULT_SEED, "replicate=0");
    assert_eq!(
        unnamed.key(0).unwrap()[PARAMETERS.len() + 1],
        label_seed.to_string()
    );
}

#[test]
fn grids_over_the_limit_and_invalid_cells_are_refused_before_running() {
    let e = Plan::new(SweepSpec {
        grid: vec![("clients".into(), "1..20000".into())],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("20000 cells") && e.contains("--max-cells 20000"),
        "{e}"
    );
    let e = Plan::new(SweepSpec {
        grid: vec![
            ("clients".into(), "1..1000000000000".into()),
            ("retries".into(), "1..1000000000000".into()),
        ],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("more than"), "{e}");
    let e = Plan::new(SweepSpec {
        grid: vec![("cap".into(), "500ms,2s".into())],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("cell 0 (cap=500ms): invalid --cap"), "{e}");
    // Nothing varies: the one cell is named by every parameter given, never "cell 0 ()".
    let e = Plan::new(SweepSpec {
        grid: vec![("base".into(), "1s".into()), ("cap".into(), "500ms".into())],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("cell 0 (strategy=full-jitter, base=1s, cap=500ms): invalid --cap"),
        "{e}"
    );
    let e = Plan::new(SweepSpec {
        grid: vec![("clinets".into(), "5".into())],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown sweep parameter `clinets`"), "{e}");
}

#[test]
fn the_memory_estimate_counts_a_row_a_thread_and_a_window_of_waiting_rows() {
    // Event-queue rows (a limiter): one run a row, so a row on every thread is the same
    // row as on one.
    let spec = |threads, seeds, memory_limit: Option<u64>| SweepSpec {
        base: ScenarioFile {
            memory_limit,
            ..ScenarioFile::parse(
                "clients = 10000\n[server]\nmodel = \"sliding-window\"\nlimit = 20\n",
                Some("toml"),
            )
            .unwrap()
        },
        seeds,
        threads: Some(threads),
        ..Default::default()
    };
    // A row is guarded as a plain run is: its estimate is the guarded plain run's.
    let mut one_row = ScenarioFile::parse(
        "clients = 10000\n[server]\nmodel = \"sliding-window\"\nlimit = 20\n",
        Some("toml"),
    )
    .unwrap()
    .validate_on(Some(1))
    .unwrap();
    one_row.guard_in_flight(false);
    let one_row = one_row.memory_estimate();
    let plan = Plan::new(spec(3, 5, None)).unwrap();
    let m = plan.memory_estimate();
    let columns = plan.header().len() as u64;
    assert_eq!((m.rows_in_flight, m.row), (3, one_row));
    assert_eq!(m.row_on_every_thread, one_row);
    // Five rows wait at most, each a line, and three rows in flight hold their fields.
    assert_eq!(m.buffers, 5 * (columns * 49 + 64) + 3 * columns * 49);
    assert_eq!(m.total(), 3 * one_row + m.buffers);
    // Two rows: a third thread holds none.
    assert_eq!(
        Plan::new(spec(3, 2, None))
            .unwrap()
            .memory_estimate()
            .rows_in_flight,
        2
    );
    // A budget one row fits but three rows at once do not: refused before running,
    // naming the rows in flight; with one thread it runs. (One row and three threads'
    // buffers, so that the margin does not depend on how many columns a sweep has.)
    let budget = one_row + m.buffers;
    let e = Plan::new(spec(3, 5, Some(budget))).unwrap_err().to_string();
    assert!(
        e.starts_with("this sweep needs an estimated ") && e.contains("(3 rows at once"),
        "{e}"
    );
    assert!(
        e.contains("lower --threads") && e.contains("--memory-limit"),
        "{e}"
    );
    assert!(Plan::new(spec(1, 5, Some(budget))).is_ok());
}

#[test]
fn the_work_estimate_sums_each_rows_requests_and_setup() {
    // Worked by hand: 3 seeds of (1000 + 1000 × 5) and of (1000 + 1 000 000 × 5) events.
    let spec = |layout| SweepSpec {
        grid: vec![("clients".into(), "1000,1000000".into())],
        seeds: 3,
        layout,
        ..Default::default()
    };
    let tidy = Plan::new(spec(Layout::Tidy)).unwrap();
    assert_eq!(tidy.work_estimate(), 3 * (6_000 + 5_001_000));
    assert_eq!(tidy.work_of(3..5).unwrap(), 2 * 5_001_000);
    assert_eq!(tidy.work_of(2..4).unwrap(), 6_000 + 5_001_000);
    let aggregate = Plan::new(spec(Layout::Aggregate)).unwrap();
    assert_eq!(aggregate.work_estimate(), tidy.work_estimate());
    assert_eq!(aggregate.work_of(1..2).unwrap(), 3 * 5_001_000);
}

#[test]
fn limiter_parameters_fill_their_columns_only_where_they_apply() {
    let p = plan(
        &[
            ("server", "fixed-window,sliding-window"),
            ("limit", "10,30"),
            ("window", "60s"),
        ],
        1,
    );
    let header = p.header();
    let at = |p: &Plan, row: u64, name: &str| {
        p.key(row).unwrap()[header.iter().position(|h| h == name).unwrap()].clone()
    };
    // Grid order: server slower than limit.
    assert_eq!(at(&p, 0, "server"), "fixed-window");
    assert_eq!(
        (at(&p, 1, "limit"), at(&p, 1, "window_s")),
        ("30".into(), "60".into())
    );
    assert_eq!(at(&p, 2, "server"), "sliding-window");
    assert_eq!(at(&p, 2, "limit"), "10");
    assert_eq!(at(&p, 3, "clients_per_address"), "1");
    let down = plan(&[], 1);
    assert_eq!(at(&down, 0, "limit"), "");
    assert_eq!(at(&down, 0, "clients_per_address"), "");
    // Limiter keys on a down server: refused before anything runs, naming the cell.
    let e = Plan::new(SweepSpec {
        grid: vec![
            ("server".into(), "down,fixed-window".into()),
            ("limit".into(), "10".into()),
        ],
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cell 0 (server=down)") && e.contains("--limit"),
        "{e}"
    );
}

#[test]
fn metric_columns_follow_the_summary() {
    let names = metric_names(false);
    assert_eq!(names.first().map(String::as_str), Some("peak"));
    assert!(names.iter().any(|n| n == "last_success_s"));
    let p = plan(&[("clients", "50")], 1);
    let row = p.row(0).unwrap();
    assert_eq!(row.len(), p.header().len());
    // 50 clients, 4 retries each, server down: 200 retries, 250 requests, all refused.
    let column = |name: &str| {
        let i = p.header().iter().position(|h| h == name).unwrap();
        row[i].clone()
    };
    assert_eq!(column("total"), "200");
    assert_eq!(column("requests"), "250");
    assert_eq!(column("refused"), "250");
    assert_eq!(column("gave_up"), "50");
}

#[test]
fn aggregates_describe_the_tidy_rows() {
    let spec = |layout| SweepSpec {
        grid: vec![("clients".into(), "30".into())],
        seeds: 4,
        layout,
        ..Default::default()
    };
    let tidy = Plan::new(spec(Layout::Tidy)).unwrap();
    let aggregate = Plan::new(spec(Layout::Aggregate)).unwrap();
    let peak = PARAMETERS.len() + 2;
    let peaks: Vec<f64> = (0..4)
        .map(|r| tidy.row(r).unwrap()[peak].parse().unwrap())
        .collect();
    let row = aggregate.row(0).unwrap();
    let header = aggregate.header();
    let at = |name: &str| row[header.iter().position(|h| h == name).unwrap()].clone();
    assert_eq!(at("seeds"), "4");
    let mean = peaks.iter().sum::<f64>() / 4.0;
    assert_eq!(at("peak_mean").parse::<f64>().unwrap(), mean);
    let max = peaks.iter().copied().fold(0.0, f64::max);
    assert_eq!(at("peak_max").parse::<f64>().unwrap(), max);
    // No client ever succeeds against a server that stays down: nothing to describe.
    assert_eq!(at("last_success_s_mean"), "");
}
