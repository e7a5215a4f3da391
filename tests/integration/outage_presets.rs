//! The guide's table "The mission's herd through the presets": every row is rerun here, both
//! scenarios, and its attempts a call, goodput and recovery compared with what the guide says.

use serde_json::Value;

use crate::herd_sim_ok;

/// The table's rows: the preset (`None` for the no-retries row) and its six cells.
fn readme_rows() -> Vec<(Option<String>, Vec<String>)> {
    let readme = std::fs::read_to_string("docs/retry-control.md").unwrap();
    let start = readme
        .find("<!-- outage-presets table")
        .expect("the outage-presets table's marker in docs/retry-control.md");
    readme[start..]
        .lines()
        .skip(3) // the marker, the header and the rule
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            let preset = match cells[0].as_str() {
                "no retries" => None,
                named => Some(named.trim_matches('`').to_string()),
            };
            (preset, cells[1..].to_vec())
        })
        .collect()
}

/// Attempts a call, goodput and recovery of one run, as the guide writes them.
fn cells(config: &str, preset: &Option<String>) -> Vec<String> {
    let mut args = vec!["--config", config, "--format", "json"];
    match preset {
        Some(name) => args.extend(["--preset", name.as_str()]),
        None => args.extend(["--retries", "0"]),
    }
    let json: Value = serde_json::from_slice(&herd_sim_ok(&args)).unwrap();
    let result = &json["results"][0];
    let recovered = match result["recovered_at_s"].as_f64() {
        Some(t) => format!("{t} s"),
        None => "stuck".to_string(),
    };
    vec![
        format!("{:.2}", result["amplification"].as_f64().unwrap()),
        format!("{:.1} %", result["goodput_pct"].as_f64().unwrap()),
        recovered,
    ]
}

#[test]
fn readme_outage_presets_table_is_what_the_runs_give() {
    let rows = readme_rows();
    // No retries and every preset `herd-sim presets` lists.
    assert_eq!(rows.len(), 10, "{rows:?}");
    for (preset, written) in rows {
        let mut got = cells("configs/outage-presets.toml", &preset);
        got.extend(cells("configs/outage-presets-load.toml", &preset));
        assert_eq!(got, written, "preset {preset:?}");
    }
}
