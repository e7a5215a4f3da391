use std::ops::Range;

use super::*;
use crate::config::ScenarioFile;
use crate::sweep::tests::plan;

fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }
}

fn resolve(text: &str, shards: Option<&str>, env: &[(&str, &str)]) -> Result<Shard, String> {
    ShardChoice::parse(text)
        .and_then(|c| c.resolve(shards, &env_of(env)))
        .map_err(|e| e.to_string())
}

#[test]
fn fixed_shards_parse_and_bad_ones_name_the_flag() {
    assert_eq!(resolve("3/8", None, &[]), Ok(Shard { index: 3, count: 8 }));
    for bad in [
        "3/2",
        "0/0",
        "2/2",
        "-1/4",
        "1/",
        "a/b",
        "3",
        "1/2/3",
        "0/2000000",
    ] {
        let e = resolve(bad, None, &[]).unwrap_err();
        assert!(e.starts_with(&format!("invalid --shard: {bad};")), "{e}");
        assert!(e.contains("K/N"), "{e}");
    }
    let e = resolve("1/4", Some("5"), &[]).unwrap_err();
    assert!(e.contains("--shards") && e.contains("4 shards"), "{e}");
}

#[test]
fn auto_reads_slurm_then_kubernetes_and_names_both_when_neither() {
    let slurm_count = [
        ("SLURM_ARRAY_TASK_ID", "5"),
        ("SLURM_ARRAY_TASK_COUNT", "8"),
    ];
    assert_eq!(
        resolve("auto", None, &slurm_count),
        Ok(Shard { index: 5, count: 8 })
    );
    // --array=1-8: ids 1..8 are shards 0..7.
    let slurm_range = [
        ("SLURM_ARRAY_TASK_ID", "8"),
        ("SLURM_ARRAY_TASK_MIN", "1"),
        ("SLURM_ARRAY_TASK_MAX", "8"),
    ];
    assert_eq!(
        resolve("auto", None, &slurm_range),
        Ok(Shard { index: 7, count: 8 })
    );
    // --array=0-14:2 runs 8 tasks over 15 indices: refused.
    let stepped = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
        ("SLURM_ARRAY_TASK_MAX", "14"),
        ("SLURM_ARRAY_TASK_COUNT", "8"),
    ];
    assert!(resolve("auto", None, &stepped)
        .unwrap_err()
        .contains("--array=0-7"));
    let k8s = [("JOB_COMPLETION_INDEX", "2")];
    assert_eq!(
        resolve("auto", Some("3"), &k8s),
        Ok(Shard { index: 2, count: 3 })
    );
    let k8s_env = [("JOB_COMPLETION_INDEX", "2"), (COUNT_VARIABLE, "4")];
    assert_eq!(
        resolve("auto", None, &k8s_env),
        Ok(Shard { index: 2, count: 4 })
    );
    let e = resolve("auto", None, &k8s).unwrap_err();
    assert!(
        e.contains("--shards N") && e.contains(COUNT_VARIABLE),
        "{e}"
    );
    let e = resolve("auto", Some("2"), &k8s).unwrap_err();
    assert!(
        e.starts_with("invalid --shard: auto (Kubernetes index 2 of 2)"),
        "{e}"
    );
    let e = resolve("auto", None, &[]).unwrap_err();
    assert!(
        e.contains("SLURM_ARRAY_TASK_ID") && e.contains("JOB_COMPLETION_INDEX"),
        "{e}"
    );
}

#[test]
fn blocks_follow_the_cost_and_cover_every_row_once() {
    // 4 seeds of 10 clients (cost 1000 + 10·5 = 1050 each), 4 of 200 000 (1000 + 10⁶).
    // Total 4 008 200; row 4's middle is at 4200 + 500 500 = 504 700, under a quarter
    // (1 002 050): shard 0 holds rows 0–4, and each big row after it a shard of its own.
    let p = plan(&[("clients", "10,200000")], 4);
    let partition = Partition::of(&p).unwrap();
    assert_eq!(partition.total(), 4 * 1050 + 4 * 1_001_000);
    let blocks: Vec<Range<u64>> = (0..4)
        .map(|k| partition.range(Shard { index: k, count: 4 }))
        .collect();
    assert_eq!(blocks, [0..5, 5..6, 6..7, 7..8]);
    // More shards than rows: every row once, in order, the rest empty.
    for count in [1, 2, 3, 7, 8, 9, 50] {
        let mut next = 0;
        for index in 0..count {
            let r = partition.range(Shard { index, count });
            assert_eq!(r.start, next, "{index}/{count}");
            for row in r.clone() {
                assert_eq!(partition.shard_of(row, count), index);
            }
            next = r.end;
        }
        assert_eq!(next, 8, "{count}");
    }
}

#[test]
fn the_request_limit_is_the_shards() {
    // 100 and 200 clients × 5 requests, 2 seeds: rows of 500, 500, 1000, 1000 requests
    // (costs 1500, 1500, 2000, 2000; half of 7000 falls before row 2).
    let spec = |max_requests| SweepSpec {
        grid: vec![("clients".into(), "100,200".into())],
        seeds: 2,
        max_requests,
        ..Default::default()
    };
    let out = Destination::File("x.csv".into());
    let run = |index, limit| ShardRun::prepare(spec(limit), Shard { index, count: 2 }, &out);
    assert!(Plan::new(spec(2000)).is_err(), "3000 requests in all");
    assert_eq!(run(0, 1000).unwrap().0.rows(), 2);
    assert_eq!(run(1, 2000).unwrap().0.rows(), 2);
    let e = run(1, 1999).unwrap_err().to_string();
    assert!(e.contains("2000") && e.contains("--max-requests"), "{e}");
}

#[test]
fn the_fingerprint_follows_the_rows_not_the_spelling() {
    let a = fingerprint(&plan(&[("clients", "100,200")], 2));
    let b = fingerprint(&plan(&[("clients", "100..200 step 100")], 2));
    assert_eq!(a, b);
    assert_eq!(a.len(), 32);
    assert_ne!(a, fingerprint(&plan(&[("clients", "100,300")], 2)));
    assert_ne!(a, fingerprint(&plan(&[("clients", "100,200")], 3)));
    let mut seeded = SweepSpec {
        grid: vec![("clients".into(), "100,200".into())],
        seeds: 2,
        ..Default::default()
    };
    seeded.base.seed = Some(7);
    assert_ne!(a, fingerprint(&Plan::new(seeded).unwrap()));
}

#[test]
fn a_record_round_trips_through_json() {
    let base = ScenarioFile::parse(
        "cap = \"10s\"\nlatency = \"uniform:1ms..3ms\"\nmultiplier = 1.3\n[server]\nmodel = \"token-bucket\"\n",
        Some("toml"),
    )
    .unwrap();
    let spec = SweepSpec {
        base,
        grid: vec![("clients".into(), "10,20".into())],
        seeds: 2,
        ..Default::default()
    };
    let (plan, run) = ShardRun::prepare(
        spec,
        Shard { index: 1, count: 2 },
        &Destination::File("x.csv".into()),
    )
    .unwrap();
    let text = serde_json::to_string(run.record()).unwrap();
    let back: Record = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, run.record());
    let rebuilt = Plan::new(back.sweep.spec()).unwrap();
    assert_eq!(fingerprint(&rebuilt), back.fingerprint);
    assert_eq!(plan.rows(), back.rows);
    assert_eq!(plan.key(0).unwrap(), rebuilt.key(back.first_row).unwrap());
}
