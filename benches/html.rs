//! `--html` against the same run without it, measured in one run (compare the difference):
//! 1 000 000 clients of full jitter against a down server (5 000 000 attempts), the default
//! scenario, run alone and run then made into its page as `herd-sim --clients 1000000 --html`
//! makes it: the JSON and table outputs, the histogram chart as SVG, the scenario as a config
//! file and the page itself (past 5000 clients a page carries no timeline, so nothing is
//! simulated twice).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};

use herd_sim::chart::{CountScale, HistogramChart, ImageFormat};
use herd_sim::config::{Scenario, ScenarioFile};
use herd_sim::experiment::{self, Report};
use herd_sim::report::html::{self, HtmlPage};
use herd_sim::report::Format;

const CLIENTS: u64 = 1_000_000;

fn page(report: &Report, file: &ScenarioFile, scenario: &Scenario) -> usize {
    let json = String::from_utf8(Format::Json.exporter().serialize(report).unwrap()).unwrap();
    let table = String::from_utf8(Format::Table.exporter().serialize(report).unwrap()).unwrap();
    let words = table.lines().next().unwrap_or_default().to_string();
    let chart = HistogramChart::from_report(report, CountScale::Shared)
        .unwrap()
        .render(ImageFormat::Svg, None)
        .unwrap();
    let mut file = file.clone();
    file.seed = Some(scenario.seed);
    let config = toml::to_string(&file).unwrap();
    let page = HtmlPage {
        title: "herd-sim run",
        words: &words,
        json: &json,
        charts: vec![chart],
        attempts: None,
        command: "herd-sim --clients 1000000 --seed 2015",
        seed: scenario.seed,
        config: &config,
    };
    html::render(&page).unwrap().len()
}

fn bench(c: &mut Criterion) {
    let file = ScenarioFile {
        clients: Some(CLIENTS),
        ..Default::default()
    };
    let scenario = file.clone().validate().unwrap();
    let mut group = c.benchmark_group("html");
    group.sample_size(10);
    group.bench_function("run 1M clients", |b| {
        b.iter(|| black_box(experiment::run(black_box(&scenario))))
    });
    group.bench_function("run 1M clients and its --html page", |b| {
        b.iter(|| {
            let report = experiment::run(black_box(&scenario));
            black_box(page(&report, &file, &scenario))
        })
    });
    group.bench_function("the --html page alone", |b| {
        let report = experiment::run(&scenario);
        b.iter(|| black_box(page(black_box(&report), &file, &scenario)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
