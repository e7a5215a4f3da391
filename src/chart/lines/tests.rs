use super::drawing::{Layout, LEGEND_W};
use super::names::{axis_name, readable};
use super::*;
use crate::chart::table::DataTable;

fn table(text: &str) -> DataTable {
    DataTable::parse(text.as_bytes(), "sweep.csv").unwrap()
}

fn spec(x: &str, y: &str, by: Option<&str>) -> PlotSpec {
    PlotSpec {
        x: x.into(),
        y: y.into(),
        by: by.map(str::to_string),
        ..Default::default()
    }
}

#[test]
fn rows_group_by_x_and_by_value_into_mean_and_range() {
    let t = table(
        "clients,strategy,seed,peak\n\
         10,a,1,4\n10,a,2,8\n20,a,1,9\n10,b,1,1\n20,b,1,2\n20,b,2,6\n20,a,2,12\n",
    );
    let chart = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy"))).unwrap();
    let names: Vec<&str> = chart.lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let a = &chart.lines[0].points;
    assert_eq!(
        (a[0].x, a[0].mean, a[0].min, a[0].max, a[0].n),
        (10.0, 6.0, 4.0, 8.0, 2)
    );
    assert_eq!(
        (a[1].x, a[1].mean, a[1].min, a[1].max),
        (20.0, 10.5, 9.0, 12.0)
    );
    let b = &chart.lines[1].points;
    assert_eq!((b[1].mean, b[1].min, b[1].max, b[1].n), (4.0, 2.0, 6.0, 2));
    assert!(
        chart.subtitle.contains("1 to 2 seeds"),
        "{}",
        chart.subtitle
    );
}

#[test]
fn a_point_mixing_parameter_values_is_refused_and_where_resolves_it() {
    let t = table("clients,base,strategy,seed,peak\n10,1,a,1,4\n10,2,a,1,8\n");
    let e = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`base` takes 2 values (1, 2)") && e.contains("--where base="),
        "{e}"
    );
    let mut s = spec("clients", "peak", Some("strategy"));
    s.filters.push(("base".into(), "2.0".into()));
    let chart = LineChart::from_table(&t, &s).unwrap();
    assert_eq!(chart.lines[0].points[0].mean, 8.0);
}

#[test]
fn every_width_lays_out_with_the_plot_and_legend_sharing_it() {
    // Widths 200 to 229 left `width - LEGEND_W` to wrap around.
    for width in 1..=super::super::MAX_SIDE {
        let l = Layout::of(width);
        assert_eq!(l.plot_w + l.legend_w, width, "{l:?}");
        assert!(l.plot_w >= l.legend_w * 2, "{width}: {l:?}");
        assert!(
            l.x_ticks >= 2 && l.x_ticks <= (width as usize / 110).max(2),
            "{width}: {l:?}"
        );
    }
    assert_eq!(Layout::of(1000).legend_w, LEGEND_W);
}

#[test]
fn a_one_point_chart_draws_at_every_narrow_width() {
    let t = table("x,y\n1,1\n");
    let chart = LineChart::from_table(&t, &spec("x", "y", None)).unwrap();
    for width in super::super::MIN_SIDE..=400 {
        let size = ChartSize { width, height: 620 };
        let svg = chart.render(ImageFormat::Svg, Some(size)).unwrap();
        let head = format!("<svg width=\"{width}\" height=\"620\"");
        assert!(svg.starts_with(head.as_bytes()), "{width}");
    }
    let png = chart
        .render(
            ImageFormat::Png,
            Some(ChartSize {
                width: 200,
                height: 200,
            }),
        )
        .unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    // Extreme values draw too (the axes stay finite).
    let t = table("x,y\n-1.7e308,1.7e308\n1.7e308,-1.7e308\n");
    let chart = LineChart::from_table(&t, &spec("x", "y", None)).unwrap();
    chart.render(ImageFormat::Svg, None).unwrap();
}

#[test]
fn an_aggregate_file_draws_the_interval_or_the_sd_as_the_band() {
    // Two cells of an `--aggregate` sweep; the second has one seed, so no interval.
    let t = table(
        "clients,strategy,seeds,peak_mean,peak_sd,peak_ci95_low,peak_ci95_high\n\
         10,a,5,4,1.5,2.5,5.5\n20,a,1,9,,,\n",
    );
    let chart = LineChart::from_table(&t, &spec("clients", "peak_mean", Some("strategy"))).unwrap();
    let p = &chart.lines[0].points;
    assert_eq!((p[0].mean, p[0].min, p[0].max), (4.0, 2.5, 5.5));
    assert_eq!((p[1].mean, p[1].min, p[1].max), (9.0, 9.0, 9.0));
    assert!(
        chart
            .subtitle
            .ends_with("line = mean over 1 to 5 seeds per point, band = its 95 % interval"),
        "{}",
        chart.subtitle
    );
    assert_eq!(chart.y_label, "most retries in one window, mean over seeds");
    // Without interval columns, mean ± sd.
    let t = table("clients,seeds,peak_mean,peak_sd\n10,4,4,1.5\n");
    let chart = LineChart::from_table(&t, &spec("clients", "peak_mean", None)).unwrap();
    let p = &chart.lines[0].points[0];
    assert_eq!((p.min, p.max), (2.5, 5.5));
    assert!(
        chart.subtitle.ends_with("band = mean ± sd"),
        "{}",
        chart.subtitle
    );
    // The `seeds` column marks the parameters: a strategy mixed into a point is refused.
    let t = table("clients,strategy,seeds,peak_mean\n10,a,3,4\n10,b,3,6\n");
    let e = LineChart::from_table(&t, &spec("clients", "peak_mean", None))
        .unwrap_err()
        .to_string();
    assert!(e.contains("add --by strategy"), "{e}");
}

#[test]
fn coinciding_lines_are_drawn_once_and_named_together() {
    let t = table(
        "clients,strategy,seed,peak\n10,fixed,1,10\n20,fixed,1,20\n\
         10,jitter,1,3\n20,jitter,1,5\n10,exponential,1,10\n20,exponential,1,20\n",
    );
    let chart = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy"))).unwrap();
    let names: Vec<&str> = chart.lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["fixed = exponential", "jitter"]);
    // The legend is drawn from `lines`: the SVG names each entry once.
    let svg = String::from_utf8(chart.render(ImageFormat::Svg, None).unwrap()).unwrap();
    assert_eq!(svg.matches("\nexponential\n").count(), 0, "{svg}");
    assert_eq!(svg.matches("fixed = exponential").count(), 1);
}

#[test]
fn a_legend_too_long_for_the_picture_counts_the_rest() {
    let mut text = String::from("x,name,y\n");
    for i in 0..100 {
        text.push_str(&format!("{i},n{i},{i}\n"));
    }
    let chart = LineChart::from_table(&table(&text), &spec("x", "y", Some("name"))).unwrap();
    assert_eq!(chart.lines.len(), 100);
    // 620 high: a 558-pixel body holds 24 rows of 22 pixels; 23 names, then the count.
    let svg = String::from_utf8(chart.render(ImageFormat::Svg, None).unwrap()).unwrap();
    assert!(svg.contains("\nn22\n") && !svg.contains("\nn23\n"), "{svg}");
    assert!(svg.contains("and 77 more lines"));
    // 100 000 distinct one-point lines group and compare by hash (a pairwise search for
    // coinciding lines took over a minute): each is kept, the 2 coinciding ones merged.
    let mut text = String::from("x,name,y\n");
    for i in 0..100_000 {
        text.push_str(&format!("{i},n{i},{i}\n"));
    }
    text.push_str("5,twin,5\n");
    let chart = LineChart::from_table(&table(&text), &spec("x", "y", Some("name"))).unwrap();
    assert_eq!(chart.lines.len(), 100_000);
    assert_eq!(chart.lines[5].name, "n5 = twin");
}

#[test]
fn several_strategies_in_one_point_suggest_by() {
    let t = table("clients,strategy,base_s,seed,peak\n10,fixed,1,1,4\n10,full-jitter,1,1,2\n");
    let e = LineChart::from_table(&t, &spec("clients", "peak", None))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "invalid --by: missing; `strategy` takes 2 values (fixed, full-jitter) at clients = 10; \
         add --by strategy for a line per value, or --where strategy=VALUE to keep one"
    );
}

#[test]
fn a_plain_runs_table_is_refused_with_what_to_do_instead() {
    let mut text = crate::report::CSV_COLUMNS.join(",");
    text.push('\n');
    for strategy in ["fixed", "full-jitter"] {
        let mut row = vec!["1"; crate::report::CSV_COLUMNS.len()];
        row[0] = strategy;
        text.push_str(&row.join(","));
        text.push('\n');
    }
    let t = table(&text);
    let e = LineChart::from_table(&t, &spec("clients", "peak", Some("strategy")))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("invalid CSV: sweep.csv; this is a plain run's table")
            && e.contains("herd-sim sweep"),
        "{e}"
    );
}

#[test]
fn the_title_and_legend_are_in_words_and_a_ratio_axis_starts_at_its_floor() {
    let t = table(
        "control,failure_rate,amplification_mean,requests_mean\n\
         none,0,1,100\nnone,0.5,1.875,187\nbucket,0,1,100\nbucket,0.5,1.06,106\n",
    );
    let c = LineChart::from_table(
        &t,
        &spec("failure_rate", "amplification_mean", Some("control")),
    )
    .unwrap();
    assert_eq!(c.title, "Attempts per call against failure rate");
    assert_eq!(c.legend_title.as_deref(), Some("control"));
    assert_eq!(c.y_label, "attempts per call, mean over seeds");
    // Attempts per call are never below 1: the axis starts just under 1, not at 0.
    let (_, y) = c.axes();
    assert!(y.lo > 0.9 && y.lo < 1.0, "{y:?}");
    // A count starts at 0.
    let c =
        LineChart::from_table(&t, &spec("failure_rate", "requests_mean", Some("control"))).unwrap();
    assert_eq!(c.axes().1.lo, 0.0);
    assert_eq!(
        c.title,
        "Requests, first attempts included against failure rate"
    );
}

#[test]
fn axis_names_say_what_the_column_means() {
    assert_eq!(readable("peak"), "most retries in one window");
    assert_eq!(
        readable("span_s_ci95_low"),
        "span, first retry to last (s), 95 % interval, low end"
    );
    assert_eq!(readable("queue_depth_s"), "queue depth (s)");
    assert_eq!(readable("drop_pct"), "drop (%)");
    assert_eq!(readable("_mean"), " mean");
    assert_eq!(readable("x"), "x");
    assert_eq!(axis_name("clients", true), "clients (log scale)");
}

#[test]
fn a_where_matching_nothing_lists_the_values_present() {
    let t = table("clients,strategy,seed,peak\n10,fixed,1,4\n10,full-jitter,1,2\n20,fixed,1,5\n");
    let mut s = spec("clients", "peak", None);
    s.filters.push(("strategy".into(), "full_jitter".into()));
    let e = LineChart::from_table(&t, &s).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid --where: strategy=full_jitter; no row of sweep.csv has it (did you mean \
         strategy=full-jitter?); `strategy` holds fixed, full-jitter"
    );
    s.filters = vec![
        ("strategy".into(), "full-jitter".into()),
        ("clients".into(), "20".into()),
    ];
    let e = LineChart::from_table(&t, &s).unwrap_err().to_string();
    assert!(e.contains("no row matches them all"), "{e}");
}

#[test]
fn bad_columns_and_log_of_zero_are_refused() {
    let t = table("clients,strategy,peak\n0,a,4\n");
    let e = LineChart::from_table(&t, &spec("client", "peak", None)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid --x: no column `client` in sweep.csv (did you mean `clients`?); columns: clients, strategy, peak"
    );
    let e = LineChart::from_table(&t, &spec("strategy", "peak", None)).unwrap_err();
    assert!(matches!(e, ChartError::NotNumeric { .. }), "{e}");
    let mut s = spec("clients", "peak", None);
    s.log_x = true;
    let e = LineChart::from_table(&t, &s).unwrap_err().to_string();
    assert!(e.contains("--log-x") && e.contains("above 0"), "{e}");
}
