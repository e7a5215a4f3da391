use super::*;

fn param(name: &str) -> &'static Parameter {
    parameter(name).unwrap()
}

fn values(name: &str, text: &str) -> Vec<Value> {
    let axis = parse_axis(param(name), text).unwrap();
    (0..axis.len()).map(|i| axis.value(i)).collect()
}

fn error(name: &str, text: &str) -> String {
    parse_axis(param(name), text).unwrap_err().to_string()
}

#[test]
fn stepped_duration_ranges_end_exactly() {
    let v = values("base", "100ms..1s step 100ms");
    assert_eq!(v.len(), 10);
    assert_eq!(v[0], Value::Duration(SimDuration::from_millis(100)));
    assert_eq!(v[2], Value::Duration(SimDuration::from_millis(300)));
    assert_eq!(v[9], Value::Duration(SimDuration::from_secs(1)));
    // The last value is the largest not past the end: 100, 400, 700, 1000 / 100, 500, 900.
    assert_eq!(values("base", "100ms..1s step 300ms").len(), 4);
    let v = values("base", "100ms..1s step 400ms");
    assert_eq!(v[2], Value::Duration(SimDuration::from_millis(900)));
    assert_eq!(v.len(), 3);
}

#[test]
fn decimal_ranges_do_not_drift() {
    // 0.1 has no exact binary form: summing it ten times in f64 gives 1.9999999999999998.
    let v = values("multiplier", "1..2 step 0.1");
    assert_eq!(v.len(), 11);
    assert_eq!(v[10].decimal(), 2.0);
    assert_eq!(v[3].decimal(), 1.3);
    assert_eq!(values("multiplier", "1.5,2")[0].decimal(), 1.5);
}

#[test]
fn whole_ranges_are_inclusive_with_step_one_by_default() {
    let v = values("retries", "2..8");
    assert_eq!(v.first(), Some(&Value::Whole(2)));
    assert_eq!(v.last(), Some(&Value::Whole(8)));
    assert_eq!(v.len(), 7);
    assert_eq!(values("clients", "100..1000 step 450").len(), 3);
    assert_eq!(values("clients", "1_000,10")[0], Value::Whole(1000));
}

#[test]
fn names_expand_and_keep_the_given_order() {
    assert_eq!(values("strategy", "all").len(), Strategy::ALL.len());
    assert_eq!(
        values("strategy", "fixed,naive"),
        [
            Value::Strategy(Strategy::Fixed),
            Value::Strategy(Strategy::Naive)
        ]
    );
    assert_eq!(values("server", "down"), [Value::Name("down")]);
    // The sweep offers every model `--server` does, from the one list.
    let every: Vec<Value> = crate::config::SERVER_MODELS
        .iter()
        .map(|&name| Value::Name(name))
        .collect();
    assert_eq!(
        values(
            "server",
            "down,fixed-window,sliding-window,token-bucket,occ,capacity,flaky"
        ),
        every
    );
}

#[test]
fn huge_ranges_are_counted_not_built() {
    let axis = parse_axis(param("clients"), "1..1000000000000").unwrap();
    assert_eq!(axis.len(), 1_000_000_000_000);
    assert_eq!(axis.value(999_999_999_999), Value::Whole(1_000_000_000_000));
}

#[test]
fn bad_values_get_one_clear_error() {
    let e = error("clients", "");
    assert!(e.contains("--clients") && e.contains("empty list"), "{e}");
    let e = error("clients", "100,,1000");
    assert!(e.contains("empty value"), "{e}");
    let e = error("retries", "8..2");
    assert!(e.contains("reversed") && e.contains("8..2"), "{e}");
    let e = error("base", "100ms..1s step 0ms");
    assert!(e.contains("zero step"), "{e}");
    let e = error("base", "100ms..1s");
    assert!(e.contains("needs a step"), "{e}");
    let e = error("strategy", "full-jitter,slow");
    assert!(
        e.contains("unknown strategy `slow`") && e.contains("accepted"),
        "{e}"
    );
    let e = error("strategy", "a..b");
    assert!(e.contains("names cannot be ranged"), "{e}");
    let e = error("server", "up");
    assert!(e.contains("accepted: down"), "{e}");
    let e = error("clients", "10,10");
    assert!(e.contains("twice"), "{e}");
    let e = error("multiplier", "1.5.2");
    assert!(e.contains("not a number"), "{e}");
    let e = error("base", "100");
    assert!(e.contains("--base") && e.contains("unit"), "{e}");
}

#[test]
fn controls_split_at_names_and_are_written_shortest() {
    // A `key=value` item belongs to the control before it; a `name:key=value` item starts
    // a new one. Parameters at their defaults are left out of the written value.
    assert_eq!(
        values(
            "budget",
            "none,grpc:max_tokens=20,token_ratio=0.2,token-bucket:capacity=5"
        ),
        [
            Value::Text("none".into()),
            Value::Text("grpc:max_tokens=20,token_ratio=0.2".into()),
            Value::Text("token-bucket".into()),
        ]
    );
    assert_eq!(
        values("breaker", "retries:ratio=0.1,window=all, calls:open=10s"),
        [
            Value::Text("retries".into()),
            Value::Text("calls:open=10s".into())
        ]
    );
    assert_eq!(
        values("breaker", "retries:window=1m"),
        [Value::Text("retries:window=60s".into())]
    );
    assert_eq!(
        values("throttle", "sre:k=2,window=2m"),
        [Value::Text("sre".into())]
    );
    // The written value reads back as the same control.
    let written = values("budget", "aws-standard:cost=7,capacity=500");
    assert_eq!(written, [Value::Text("aws-standard:cost=7".into())]);
    assert_eq!(
        Budget::parse("aws-standard:cost=7").unwrap(),
        Budget::parse("aws-standard:capacity=500,cost=7").unwrap()
    );
    // A range is not a list of controls: `..` is read as part of a value.
    assert!(error("budget", "none..grpc").contains("none..grpc"));
}

#[test]
fn bad_controls_name_the_value_and_what_is_accepted() {
    let e = error("budget", "none,gprc");
    assert!(
        e.starts_with("invalid --budget: gprc; accepted: none, token-bucket"),
        "{e}"
    );
    let e = error("budget", "max_tokens=20,grpc");
    assert!(
        e.contains("starts with the parameter `max_tokens=20`"),
        "{e}"
    );
    let e = error("breaker", "retries:ratio=1.5");
    assert!(e.contains("ratio=1.5 is out of range"), "{e}");
    // Two spellings of one control are one value twice.
    let e = error("budget", "grpc,grpc:max_tokens=10");
    assert!(e.contains("twice"), "{e}");
    let e = error("failure-rate", "0.1.2");
    assert!(e.contains("not a number"), "{e}");
}

#[test]
fn preset_names_are_the_presets() {
    let names: Vec<&str> = crate::config::PRESETS.iter().map(|p| p.name).collect();
    assert_eq!(names, PRESET_NAMES);
}

fn file(text: &str) -> ScenarioFile {
    ScenarioFile::parse(text, Some("toml")).unwrap()
}

const SPIKED: &str = "arrivals = \"poisson\"\nrate = \"40/s\"\nduration = \"60s\"\n\
                      spike = [\"20s..25s@80/s\", \"40s..41s@90/s\"]\n\
                      outage = \"5s..6s\"\n\
                      degrade = \"10s..12s@0.5\"\n[server]\nmodel = \"capacity\"\n";

#[test]
fn trigger_shapes_keep_each_start_and_set_the_length() {
    let mut f = file(SPIKED);
    let ten = Value::Duration(SimDuration::from_secs(10));
    param("spike-duration").apply(&mut f, &ten).unwrap();
    param("outage-duration").apply(&mut f, &ten).unwrap();
    param("degrade-duration")
        .apply(&mut f, &Value::Duration(SimDuration::from_millis(1500)))
        .unwrap();
    param("degrade-factor")
        .apply(
            &mut f,
            &param("degrade-factor").parse_value("0.25").unwrap(),
        )
        .unwrap();
    let texts = |i: &Option<crate::config::Intervals>| -> Vec<String> {
        i.as_ref()
            .unwrap()
            .0
            .iter()
            .map(|t| t.text.clone())
            .collect()
    };
    assert_eq!(texts(&f.spike), ["20s..30s@80/s", "40s..50s@90/s"]);
    assert_eq!(texts(&f.outage), ["5s..15s"]);
    assert_eq!(texts(&f.degrade), ["10s..11.5s@0.25"]);
    // The validated scenario has those triggers, and the columns say so in seconds.
    let s = f.validate().unwrap();
    let get = |name: &str| (param(name).get)(&s);
    assert_eq!(get("spike-duration"), "10 10");
    assert_eq!(get("spike-rate"), "80 90");
    assert_eq!(get("outage-duration"), "10");
    assert_eq!(get("degrade-duration"), "1.5");
    assert_eq!(get("degrade-factor"), "0.25");
    assert_eq!(s.overload.triggers.degrades[0].factor, 0.25);
    // A spike pushed past the run's end is the spike's own error, naming the new text.
    let mut f = file(SPIKED);
    param("spike-duration")
        .apply(&mut f, &Value::Duration(SimDuration::from_secs(30)))
        .unwrap();
    let e = f.validate().unwrap_err().to_string();
    assert!(e.contains("--spike") && e.contains("40s..70s@90/s"), "{e}");
}

#[test]
fn a_trigger_axis_without_its_trigger_is_refused_in_one_line() {
    let plain = ScenarioFile::default();
    for (name, trigger) in [
        ("spike-duration", "spike"),
        ("outage-duration", "outage"),
        ("degrade-factor", "degrade"),
        ("degrade-duration", "degrade"),
    ] {
        let e = param(name).check(&plain).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("invalid --{name}: the scenario has no {trigger} "))
                && e.contains("accepted with a scenario that has one, e.g.")
                && !e.contains('\n'),
            "{e}"
        );
    }
    // The slowdown needs no trigger; a server without service times refuses it.
    let mut f = ScenarioFile::default();
    param("slowdown")
        .apply(&mut f, &Value::Duration(SimDuration::from_millis(1)))
        .unwrap();
    let e = f.validate().unwrap_err().to_string();
    assert!(e.contains("--slowdown"), "{e}");
    // A degradation on a server without service times is refused by validation.
    let e = file("degrade = \"1s..2s@0.5\"\n")
        .validate()
        .unwrap_err()
        .to_string();
    assert!(e.contains("--degrade") && e.contains("capacity"), "{e}");
}

#[test]
fn numbers_in_the_axis_unit_round_to_the_kind() {
    assert_eq!(
        param("degrade-duration").value_at(0.65).unwrap(),
        Value::Duration(SimDuration::from_millis(650))
    );
    assert_eq!(param("workers").value_at(3.6).unwrap(), Value::Whole(4));
    assert_eq!(
        param("degrade-factor").value_at(0.4).unwrap(),
        Value::Decimal(400_000_000)
    );
    assert_eq!(
        param("rate").value_at(1.0 / 3.0).unwrap(),
        Value::Decimal(333_333_333)
    );
    for bad in [-1.0, f64::NAN, f64::INFINITY, 1e30] {
        let e = param("timeout").value_at(bad).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid --timeout: ") && e.contains("out of range"),
            "{e}"
        );
    }
    assert!(param("strategy").value_at(1.0).is_err());
    // `number` reads a value back in the unit; `Display` is a text that parses back.
    for (name, text, number) in [
        ("degrade-duration", "650ms", 0.65),
        ("spike-duration", "1.5s", 1.5),
        ("rate", "12.5", 12.5),
        ("retries", "4", 4.0),
        ("slowdown", "500us", 0.0005),
    ] {
        let value = param(name).parse_value(text).unwrap();
        assert_eq!(value.number(), Some(number), "{name}");
        assert_eq!(value.to_string(), text);
        assert_eq!(param(name).parse_value(&value.to_string()).unwrap(), value);
    }
    let e = param("rate").parse_value("1,2").unwrap_err().to_string();
    assert!(e.contains("not one value"), "{e}");
    assert_eq!(Value::Name("down").number(), None);
}

#[test]
fn the_numeric_axes_are_the_numeric_kinds() {
    let names: Vec<&str> = numeric_parameters().map(|p| p.name).collect();
    for name in [
        "clients",
        "retries",
        "rate",
        "spike-rate",
        "spike-duration",
        "workers",
        "service-time",
        "slowdown",
        "timeout",
        "outage-duration",
        "degrade-factor",
        "degrade-duration",
        "failure-rate",
        "base",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    for name in ["strategy", "server", "budget", "preset", "hidden-timers"] {
        assert!(!names.contains(&name), "{name}");
    }
}

#[test]
fn names_accept_underscores_as_in_files() {
    assert_eq!(param("recover_at").name, "recover-at");
    assert!(parameter("clinets").is_none());
}
