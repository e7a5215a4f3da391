//! Unit tests of the series chart's layout, axes and sizes: drawn at their default size with
//! one, many and no rows; shared and per-panel axes; refused sizes and scales.

use super::*;
use crate::chart::histogram::CountScale;

/// A window with `calls_started` calls, as many successes, and both latencies `p50_ns`.
pub(super) fn row(window: u64, calls_started: u64, p50_ns: Option<u64>) -> SeriesRow {
    SeriesRow {
        window,
        calls_started,
        succeeded: calls_started,
        latency_p50_ns: p50_ns,
        latency_p99_ns: p50_ns,
        ..SeriesRow::default()
    }
}

fn chart<'a>(rows: &'a [SeriesRow], strategies: usize) -> SeriesChart<'a> {
    SeriesChart {
        title: "load".into(),
        subtitle: "server\nclients".into(),
        bin: SimDuration::from_secs(1),
        strategies: (0..strategies)
            .map(|i| StrategySeries {
                name: format!("s{i}"),
                note: String::new(),
                rows,
            })
            .collect(),
        triggers: vec![TriggerBand {
            kind: TriggerKind::Down,
            from_s: 0.0,
            to_s: None,
            label: "down".into(),
        }],
        scale: CountScale::Shared,
        tabs: false,
    }
}

#[test]
fn one_many_and_empty_series_draw_at_their_default_size() {
    let rows = [row(0, 3, Some(1_000_000)), row(4, 2, Some(3_000_000))];
    for (rows, strategies) in [(&rows[..], 1), (&rows[..], 6), (&[][..], 2)] {
        let chart = chart(rows, strategies);
        let png = chart.render(ImageFormat::Png, None).unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        let svg = String::from_utf8(chart.render(ImageFormat::Svg, None).unwrap()).unwrap();
        let size = chart.default_size();
        assert!(svg.starts_with(&format!(
            "<svg width=\"{}\" height=\"{}\"",
            size.width, size.height
        )));
        // A `down` server that never recovers is shaded to the end on every panel.
        assert_eq!(svg.matches(">\ndown\n</text>").count(), 3 * strategies);
    }
    // Without rows or a trigger end, the axis still spans one window.
    assert_eq!(chart(&[], 1).time_axis().hi, 1.0);
    assert_eq!(chart(&rows, 1).time_axis().hi, 5.0);
}

#[test]
fn per_panel_axes_fit_each_row_and_a_log_scale_is_refused() {
    // 100 and 10 calls started in a 1 s window: 100 and 10 per s, plus 8 % headroom.
    let (big, small) = ([row(0, 100, None)], [row(0, 10, None)]);
    let mut c = chart(&big, 1);
    c.strategies.push(StrategySeries {
        name: "small".into(),
        note: String::new(),
        rows: &small,
    });
    let hi = |c: &SeriesChart<'_>, i| c.value_axis(PanelKind::Calls, i).unwrap().hi;
    assert!((hi(&c, 1) - 108.0).abs() < 1e-9);
    c.scale = CountScale::PerPanel;
    assert!((hi(&c, 0) - 108.0).abs() < 1e-9 && (hi(&c, 1) - 10.8).abs() < 1e-9);
    // No latency anywhere: no axis to draw (the panel says so instead of a 0-to-1 scale).
    assert_eq!(c.value_axis(PanelKind::Latency, 0), None);
    let e = SeriesChart::check_scale(CountScale::Log)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "invalid --chart-scale: log; a call-loop run's series chart takes shared or per-panel"
        ),
        "{e}"
    );
}

#[test]
fn a_size_too_small_for_the_rows_is_refused() {
    let narrow = ChartSize {
        width: 400,
        height: 800,
    };
    let e = SeriesChart::check_size(2, narrow).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid --chart-size: 400x800; the series chart's 2 rows of 3 panels need at least 426x294 pixels"
    );
    assert!(SeriesChart::check_size(
        2,
        ChartSize {
            width: 426,
            height: 294
        }
    )
    .is_ok());
}

#[test]
fn an_empty_panel_says_what_is_missing_instead_of_a_scale_of_0_to_1() {
    // Calls that never succeed: no latency, nobody in the server.
    let refused = |window| SeriesRow {
        window,
        calls_started: 5,
        attempts: 5,
        refused: 5,
        ..SeriesRow::default()
    };
    // Ten windows, so the time axis has whole ticks.
    let rows = [refused(0), refused(9)];
    let c = chart(&rows, 1);
    assert_eq!(c.value_axis(PanelKind::InSystem, 0), None);
    assert_eq!(c.value_axis(PanelKind::Latency, 0), None);
    assert!(c.value_axis(PanelKind::Calls, 0).is_some());
    let svg = String::from_utf8(c.render(ImageFormat::Svg, None).unwrap()).unwrap();
    assert!(svg.contains("no successful attempt"), "{svg}");
    assert!(svg.contains("no request in the server in any window"));
    // The only value labels are the calls panel's and the time axis's: no 0.5 on an empty
    // value axis.
    assert!(!svg.contains(">\n0.5\n</text>"), "{svg}");
}

#[test]
fn with_browser_tabs_a_fourth_panel_splits_the_attempts_by_the_tabs_visibility() {
    let rows = [SeriesRow {
        window: 0,
        calls_started: 10,
        attempts: 10,
        attempts_hidden: 4,
        succeeded: 10,
        ..SeriesRow::default()
    }];
    let mut c = chart(&rows, 2);
    assert_eq!(c.panels().len(), 3);
    c.tabs = true;
    assert_eq!(c.panels(), PanelKind::WITH_TABS);
    // 6 attempts a second from visible tabs and 4 from hidden ones.
    assert_eq!(Measure::SentVisible.value(&rows[0], 1.0), Some(6.0));
    assert_eq!(Measure::SentHidden.value(&rows[0], 1.0), Some(4.0));
    let svg = String::from_utf8(c.render(ImageFormat::Svg, None).unwrap()).unwrap();
    assert!(svg.contains("by hidden tabs") && svg.contains("by visible tabs"));
    assert!(svg.starts_with("<svg width=\"1900\""));
    // The down band on each of the four panels of both rows.
    assert_eq!(svg.matches(">\ndown\n</text>").count(), 4 * 2);
    let e = SeriesChart::check_size_of(
        2,
        4,
        ChartSize {
            width: 426,
            height: 294,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.ends_with("2 rows of 4 panels need at least 568x294 pixels"),
        "{e}"
    );
}
