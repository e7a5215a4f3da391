use super::*;

const GOOD: &str = r#"
seeds = 3
[[scenario]]
name = "flaky"
clients = 10
arrivals = "poisson"
rate = "100/s"
duration = "5s"
[scenario.server]
model = "flaky"
failure_rate = 0.5
[params]
budget = "grpc"
"budget.max_tokens" = "10..30 step 10"
retries = "1,2"
[objectives]
constraints = ["goodput_pct@flaky >= 90"]
minimize = ["amplification@flaky"]
maximize = ["budget.max_tokens"]
"#;

fn parse(text: &str) -> Result<TuneFile, TuneError> {
    TuneFile::parse(text, Path::new("."), "t.toml")
}

fn error(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn the_example_parses_into_dimensions_constraints_and_objectives() {
    let t = parse(GOOD).unwrap();
    assert_eq!(t.seeds, 3);
    assert_eq!(t.scenarios[0].name, "flaky");
    let names: Vec<&str> = t.dimensions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["budget", "budget.max_tokens", "retries"]);
    let tokens: Vec<&str> = t.dimensions[1]
        .levels
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(tokens, ["10", "20", "30"]);
    assert_eq!(t.grid_size(), 6);
    assert_eq!(t.constraints[0].text(), "goodput_pct@flaky >= 90");
    assert_eq!(t.objectives.len(), 2);
    assert_eq!(t.objectives[1].sense, Sense::Maximize);
    assert_eq!(t.terms().len(), 3);
}

#[test]
fn bad_input_names_the_key_the_value_and_what_is_accepted() {
    let cases = [
        (
            GOOD.replace("@flaky >= 90", "@outage >= 90"),
            "unknown scenario `outage`; accepted: a scenario of the file: flaky",
        ),
        (
            GOOD.replace("10..30 step 10", "30..10 step 10"),
            "is a reversed range",
        ),
        (GOOD.replace("10..30 step 10", ""), "empty list"),
        (
            GOOD.replace("budget.max_tokens", "budget.percent"),
            "`percent` is a parameter of envoy, finagle, not of grpc",
        ),
        (
            GOOD.replace("retries = \"1,2\"", "colour = \"red\""),
            "not a parameter herd-sim can tune",
        ),
        (
            GOOD.replace("minimize = [\"amplification@flaky\"]", "")
                .replace("maximize = [\"budget.max_tokens\"]", ""),
            "no objective",
        ),
        (GOOD.replace(">= 90", "about 90"), "no comparison"),
        (GOOD.replace("budget = \"grpc\"", ""), "no budget is named"),
    ];
    for (text, expected) in cases {
        let e = error(&text);
        assert!(e.contains(expected), "{expected}: {e}");
        assert!(e.contains("accepted"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
