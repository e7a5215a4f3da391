//! `herd-sim boundary --png/--svg`: the chart drawn from the search the report gives (a line
//! a case, each boundary named as the JSON has it), the picture at its size, and bad outputs
//! refused before any run, nothing written.

use std::fs;

use crate::{herd_sim_ok, refused_in_one_line};

fn config() -> String {
    format!("{}/configs/collapse-spike.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_chart_draws_each_case_of_the_report_and_the_png_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let (svg, png, json) = (
        dir.path().join("b.svg"),
        dir.path().join("b.png"),
        dir.path().join("b.json"),
    );
    let config = config();
    let search = |threads: &'static str| {
        herd_sim_ok(&[
            "boundary",
            "--config",
            &config,
            "--axis",
            "spike-rate",
            "--range",
            "40..120",
            "--seeds",
            "10",
            "--tolerance",
            "5%",
            "--format",
            "json",
            "--out",
            json.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
            "--png",
            png.to_str().unwrap(),
            "--chart-size",
            "900x560",
            "--threads",
            threads,
        ]);
        (fs::read(&svg).unwrap(), fs::read(&png).unwrap())
    };
    let (svg_1, png_1) = search("1");
    let report: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    let text = String::from_utf8(svg_1.clone()).unwrap();
    let results = report["results"].as_array().unwrap();
    // One curve (the 2-pixel lines) a case, through as many points as the case evaluated.
    let curves: Vec<&str> = text
        .split("<polyline")
        .skip(1)
        .filter(|e| e.split("/>").next().unwrap().contains("stroke-width=\"2\""))
        .collect();
    assert_eq!(curves.len(), results.len(), "{text}");
    for (curve, result) in curves.iter().zip(results) {
        let points = curve
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(
            points.split_whitespace().count(),
            result["points"].as_array().unwrap().len()
        );
        // The legend names the case and its boundary, three decimals at most.
        let b = result["boundary"].as_f64().unwrap();
        let shown = format!("{:.3}", b);
        let shown = shown.trim_end_matches('0').trim_end_matches('.');
        assert!(
            text.contains(&format!("boundary {shown} (95 %: ")),
            "{shown}: {text}"
        );
        assert!(text.contains(&format!("\n{}\n", result["strategy"].as_str().unwrap())));
    }
    let decoder = png::Decoder::new(std::io::Cursor::new(&png_1));
    let info = decoder.read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (900, 560));
    assert_eq!(search("2"), (svg_1, png_1));
}

#[test]
fn a_bad_picture_output_is_refused_before_any_run_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.svg");
    let (out_s, config) = (out.to_str().unwrap().to_string(), config());
    let svg_as_png = dir.path().join("chart.svg");
    let base = [
        "boundary",
        "--config",
        config.as_str(),
        "--axis",
        "spike-rate",
        "--range",
        "40..120",
        "--out",
        out_s.as_str(),
    ];
    let with = |more: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(more);
        refused_in_one_line(&args)
    };
    let e = with(&["--png", svg_as_png.to_str().unwrap()]);
    assert!(e.starts_with("error: invalid --png: "), "{e}");
    assert!(e.contains("accepted extensions: .png"), "{e}");
    let e = with(&["--svg", &out_s]);
    assert!(
        e.starts_with("error: invalid --svg: ") && e.contains("--out writes there too"),
        "{e}"
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}
