//! A retry layer's description (`clients:` in the table, `client` in the JSON) is the layer as
//! `--layer` takes it: each `[...]` of it, given back as `--layer`, makes the same run.

use crate::herd_sim_ok;

/// Calls at 20/s for 30 s into 4 workers of Exp(100 ms), out over 10s..15s, behind `layers`
/// (each a `--layer` value), as JSON.
fn run(layers: &[String]) -> Vec<u8> {
    let mut args: Vec<&str> = vec![
        "--clients",
        "10",
        "--server",
        "capacity",
        "--workers",
        "4",
        "--service-time",
        "exp:100ms",
        "--arrivals",
        "poisson",
        "--rate",
        "20/s",
        "--duration",
        "30s",
        "--timeout",
        "1s",
        "--outage",
        "10s..15s",
        "--format",
        "json",
    ];
    for layer in layers {
        args.extend(["--layer", layer.as_str()]);
    }
    herd_sim_ok(&args)
}

/// The layers a run's JSON describes, outermost first: the text inside each `[...]`.
fn described(json: &[u8]) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_slice(json).unwrap();
    let client = report["results"][0]["client"].as_str().unwrap();
    let (_, layers) = client
        .split_once("outermost first: ")
        .unwrap_or_else(|| panic!("no layers in {client}"));
    layers
        .split('[')
        .skip(1)
        .map(|l| l.split(']').next().unwrap().to_string())
        .collect()
}

#[test]
fn a_layers_description_given_back_as_layer_makes_the_same_run() {
    for layers in [
        // A shared budget (printed as `budget=token-bucket` before: given back, one bucket a
        // process) and a throttle with a parameter of its own.
        &[
            "retries=2 budget=token-bucket:scope=global,capacity=3",
            "strategy=fixed base=100ms retries=1 throttle=sre:k=1.5",
        ][..],
        // A naive layer's cap, which sets the settle, and a preset's keys.
        &["strategy=naive retries=1 cap=2m timeout=4s", "preset=grpc"][..],
        &["retries=1 retry-probability=0.5 multiplier=3 breaker=calls:min_calls=5,scope=global"][..],
    ] {
        let layers: Vec<String> = layers.iter().map(|l| l.to_string()).collect();
        let first = run(&layers);
        let texts = described(&first);
        assert_eq!(texts.len(), layers.len(), "{layers:?}");
        // The same bytes, description included: it reads back as itself.
        let again = run(&texts);
        assert!(
            first == again,
            "{layers:?} described as {texts:?} ran differently"
        );
    }
    // The shared bucket and its capacity are in the description.
    let texts = described(&run(&[
        "retries=2 budget=token-bucket:scope=global,capacity=3".into(),
    ]));
    assert_eq!(
        texts,
        ["strategy=full-jitter retries=2 base=1s cap=30s budget=token-bucket:capacity=3,scope=global"]
    );
}
