//! A policy report's figures against their bands, one chart a scenario: a panel a metric, a
//! row a policy; on each row the band shaded between two edge lines (`lo`–`hi`, or the
//! tolerance around this report's value), a bar from the smallest to the largest of the seeds
//! and a dot at the mean, blue inside the band and vermillion outside it, its value beside it.
//! Built from the [`PolicyReport`] itself (the figures its table prints), so the chart cannot
//! disagree with the table; pure: the same report gives the same bytes.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::policy_report::markdown::{number, verdict};
use crate::policy_report::{check::unit, Expected, PolicyReport};

use super::axis::{Axis, Ticked};
use super::{
    draw_caption, draw_error, draw_mesh, draw_title_lines, palette, render, ChartError, ChartSize,
    Drawable, ImageFormat, FONT_FAMILY,
};

/// A palette colour as plotters takes it.
const fn rgb((r, g, b): palette::Rgb) -> RGBColor {
    RGBColor(r, g, b)
}

/// The picture's width.
pub const WIDTH: u32 = 760;
/// Radius of a figure's dot.
pub const DOT_R: u32 = 5;
/// A mean inside its band.
pub const INSIDE_COLOR: RGBColor = rgb(palette::BLUE);
/// A mean outside its band.
pub const OUTSIDE_COLOR: RGBColor = rgb(palette::VERMILLION);
/// A band's edges and, lighter, its fill.
pub const BAND_COLOR: RGBColor = rgb(palette::BLUISH_GREEN);
/// The seeds' bar, smallest to largest.
pub const SEEDS_COLOR: RGBColor = RGBColor(90, 90, 90);

const TITLE_H: u32 = 64;
const CAPTION_H: u32 = 26;
const ROW_H: u32 = 30;
const X_AXIS_H: u32 = 40;
const LABEL_W: u32 = 170;

/// One policy's figure of one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct BandRow {
    /// The policy's id.
    pub policy: String,
    /// Mean over the seeds.
    pub mean: f64,
    /// Smallest over the seeds.
    pub min: f64,
    /// Largest over the seeds.
    pub max: f64,
    /// The band drawn, `(lo, hi)`; a tolerance is drawn around this report's mean.
    pub band: Option<(f64, f64)>,
    /// The mean is outside a band `lo`–`hi`.
    pub out: bool,
}

/// One metric: its rows in the report's order.
#[derive(Clone, Debug, PartialEq)]
pub struct BandPanel {
    /// The metric column.
    pub metric: String,
    /// A row a policy with this figure.
    pub rows: Vec<BandRow>,
}

/// One scenario's figures, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct BandChart {
    /// First title line.
    pub title: String,
    /// Grey line under it.
    pub subtitle: String,
    /// A panel a metric, in the order the report's table first names them.
    pub panels: Vec<BandPanel>,
}

impl BandChart {
    /// The chart of `scenario`'s figures in `report`.
    pub fn from_report(report: &PolicyReport, scenario: &str) -> BandChart {
        let mut panels: Vec<BandPanel> = Vec::new();
        for f in report.figures.iter().filter(|f| f.scenario == scenario) {
            let band = match f.expected {
                Some(Expected::Band { lo, hi }) => Some((lo, hi)),
                Some(Expected::Tolerance(t)) => Some((f.mean - t, f.mean + t)),
                None => None,
            };
            let row = BandRow {
                policy: f.policy.clone(),
                mean: f.mean,
                min: f.min,
                max: f.max,
                band,
                out: verdict(f) == "OUT",
            };
            match panels.iter_mut().find(|p| p.metric == f.metric) {
                Some(panel) => panel.rows.push(row),
                None => panels.push(BandPanel {
                    metric: f.metric.clone(),
                    rows: vec![row],
                }),
            }
        }
        BandChart {
            title: format!("{scenario}: each policy's figures and bands"),
            subtitle: format!(
                "dot: the mean over {} seeds (blue inside its band, vermillion outside); bar: \
                 smallest to largest; green: the band",
                report.seeds
            ),
            panels,
        }
    }

    /// The picture's size: a title, then each panel's caption, rows and x axis.
    pub fn size(&self) -> ChartSize {
        let panels: u32 = self.panels.iter().map(panel_height).sum();
        ChartSize {
            width: WIDTH,
            height: TITLE_H + panels.max(ROW_H),
        }
    }

    /// The chart as SVG (or PNG) bytes.
    pub fn render(&self, format: ImageFormat) -> Result<Vec<u8>, ChartError> {
        render(self, format, self.size())
    }
}

fn panel_height(panel: &BandPanel) -> u32 {
    CAPTION_H + ROW_H.saturating_mul(panel.rows.len() as u32) + X_AXIS_H
}

/// The x axis of a panel: every band edge and every seed's extreme, with 5 % room a side.
fn x_axis(panel: &BandPanel) -> Axis {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in &panel.rows {
        let (a, b) = r.band.unwrap_or((r.min, r.max));
        lo = lo.min(a).min(r.min);
        hi = hi.max(b).max(r.max);
    }
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = (hi - lo).max(hi.abs().max(lo.abs()) * 0.02).max(1e-9) * 0.05;
    Axis {
        lo: lo - pad,
        hi: hi + pad,
        log: false,
    }
}

impl Drawable for BandChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (band, mut rest) = root.split_vertically(TITLE_H);
        draw_title_lines(&band, &self.title, &self.subtitle, 12, 18)?;
        if self.panels.is_empty() {
            rest.draw_text(
                "no figures: no band of the report file names this scenario's metrics",
                &(FONT_FAMILY, 14).into_font().color(&SEEDS_COLOR),
                (12, 4),
            )
            .map_err(draw_error)?;
        }
        for panel in &self.panels {
            let (area, below) = rest.split_vertically(panel_height(panel));
            rest = below;
            draw_panel(root, &area, panel)?;
        }
        Ok(())
    }
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panel: &BandPanel,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let (caption, plot) = area.split_vertically(CAPTION_H);
    let unit = unit(&panel.metric).trim();
    let note = if unit.is_empty() {
        String::new()
    } else {
        format!("({unit})")
    };
    draw_caption(&caption, &panel.metric, &note, 12)?;
    let n = panel.rows.len();
    let (width, _) = plot.dim_in_pixel();
    let mut chart = ChartBuilder::on(&plot)
        .margin_right(28)
        .y_label_area_size(LABEL_W)
        .x_label_area_size(X_AXIS_H)
        .build_cartesian_2d(
            Ticked::new(x_axis(panel), ((width - LABEL_W) / 100).max(2) as usize),
            Ticked::new(
                Axis {
                    lo: 0.0,
                    hi: n as f64,
                    log: false,
                },
                1,
            )
            .empty(false),
        )
        .map_err(draw_error)?;
    draw_mesh(&mut chart, "", true)?;
    let x_start = chart.x_range().start;
    let name_style = (FONT_FAMILY, 13).into_font().color(&BLACK);
    for (i, row) in panel.rows.iter().enumerate() {
        // The first policy on top.
        let y = (n - i) as f64 - 0.5;
        if let Some((lo, hi)) = row.band {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(lo, y - 0.35), (hi, y + 0.35)],
                    BAND_COLOR.mix(0.18).filled(),
                )))
                .map_err(draw_error)?;
            chart
                .draw_series([lo, hi].map(|edge| {
                    PathElement::new(
                        vec![(edge, y - 0.35), (edge, y + 0.35)],
                        BAND_COLOR.stroke_width(2),
                    )
                }))
                .map_err(draw_error)?;
        }
        if row.max > row.min {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(row.min, y), (row.max, y)],
                    SEEDS_COLOR.stroke_width(2),
                )))
                .map_err(draw_error)?;
        }
        let color = if row.out { OUTSIDE_COLOR } else { INSIDE_COLOR };
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((row.mean, y))
                    + Circle::new((0, 0), DOT_R, color.filled())
                    + Text::new(
                        number(row.mean),
                        (9, -20),
                        (FONT_FAMILY, 12).into_font().color(&color),
                    ),
            ))
            .map_err(draw_error)?;
        let (_, py) = chart.backend_coord(&(x_start, y));
        root.draw_text(&row.policy, &name_style, (12, py - 6))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// `scenario`'s chart of `report` as SVG text.
pub fn bands_svg(report: &PolicyReport, scenario: &str) -> Result<String, ChartError> {
    let bytes = BandChart::from_report(report, scenario).render(ImageFormat::Svg)?;
    String::from_utf8(bytes).map_err(|e| ChartError::Draw(format!("the SVG is not UTF-8: {e}")))
}

#[cfg(test)]
mod tests {
    use super::super::frontier::circles;
    use super::*;

    fn row(policy: &str, mean: f64, spread: f64, band: (f64, f64)) -> BandRow {
        BandRow {
            policy: policy.into(),
            mean,
            min: mean - spread,
            max: mean + spread,
            band: Some(band),
            out: mean < band.0 || mean > band.1,
        }
    }

    fn chart() -> BandChart {
        BandChart {
            title: "t".into(),
            subtitle: "s".into(),
            panels: vec![
                BandPanel {
                    metric: "peak".into(),
                    rows: vec![
                        row("a", 150.0, 10.0, (0.0, 300.0)),
                        row("b", 1000.0, 0.0, (1000.0, 1000.0)),
                        row("c", 400.0, 20.0, (0.0, 300.0)),
                    ],
                },
                BandPanel {
                    metric: "goodput_pct".into(),
                    rows: vec![row("a", 80.0, 1.0, (50.0, 100.0))],
                },
            ],
        }
    }

    /// The two-point polylines of `svg` in `color`, as `((x0, y0), (x1, y1))`.
    fn lines(svg: &str, color: RGBColor) -> Vec<((f64, f64), (f64, f64))> {
        let stroke = format!("stroke=\"{}\"", palette::hex((color.0, color.1, color.2)));
        svg.split("<polyline")
            .skip(1)
            .filter(|t| t[..t.find("/>").unwrap()].contains(&stroke))
            .map(|t| {
                let at = t.find("points=\"").unwrap() + 8;
                let xy: Vec<(f64, f64)> = t[at..at + t[at..].find('"').unwrap()]
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                (xy[0], xy[1])
            })
            .collect()
    }

    #[test]
    fn dots_bars_and_band_edges_sit_where_their_values_map() {
        let svg = String::from_utf8(chart().render(ImageFormat::Svg).unwrap()).unwrap();
        let dots = circles(&svg);
        assert_eq!(dots.len(), 4, "{dots:?}");
        // Peak panel: means 150, 1000, 400 on one linear axis: 400 is (400-150)/(1000-150)
        // of the way from the first dot to the second.
        let (a, b, c) = (&dots[0], &dots[1], &dots[2]);
        let px = |v: f64| a.0 + (b.0 - a.0) * (v - 150.0) / 850.0;
        assert!(
            (c.0 - px(400.0)).abs() <= 1.0,
            "{c:?} against {}",
            px(400.0)
        );
        // Rows top to bottom, a row apart.
        assert!(a.1 < b.1 && b.1 < c.1);
        assert!(((b.1 - a.1) - f64::from(ROW_H)).abs() <= 1.0);
        assert!(((c.1 - b.1) - f64::from(ROW_H)).abs() <= 1.0);
        // Blue inside its band, vermillion outside (400 > 300).
        let hex = |c: RGBColor| palette::hex((c.0, c.1, c.2));
        assert_eq!(a.3, hex(INSIDE_COLOR));
        assert_eq!(b.3, hex(INSIDE_COLOR));
        assert_eq!(c.3, hex(OUTSIDE_COLOR));
        // Band edges: vertical lines at lo and hi of each row, on the same mapping.
        let edges = lines(&svg, BAND_COLOR);
        assert_eq!(edges.len(), 8, "{edges:?}");
        for (edge, value, dot) in [
            (edges[0], 0.0, a),
            (edges[1], 300.0, a),
            (edges[2], 1000.0, b),
            (edges[3], 1000.0, b),
            (edges[4], 0.0, c),
            (edges[5], 300.0, c),
        ] {
            assert_eq!(edge.0 .0, edge.1 .0, "vertical");
            assert!((edge.0 .0 - px(value)).abs() <= 1.0, "{edge:?} at {value}");
            let (top, bottom) = (edge.0 .1.min(edge.1 .1), edge.0 .1.max(edge.1 .1));
            assert!(top < dot.1 && dot.1 < bottom, "spans its row");
        }
        // Seeds' bars from min to max: a's 140..160, c's 380..420; b's is a point, none.
        let bars = lines(&svg, SEEDS_COLOR);
        assert_eq!(bars.len(), 3, "{bars:?}");
        for (bar, (lo, hi), dot) in [(bars[0], (140.0, 160.0), a), (bars[1], (380.0, 420.0), c)] {
            assert!((bar.0 .0 - px(lo)).abs() <= 1.0 && (bar.1 .0 - px(hi)).abs() <= 1.0);
            assert_eq!(bar.0 .1, dot.1);
        }
        // The second panel's axis is its own: 80 inside 50..100, below the first panel.
        let d = &dots[3];
        assert!(d.1 > c.1 + f64::from(CAPTION_H));
        let second = &edges[6..];
        let share = (d.0 - second[0].0 .0) / (second[1].0 .0 - second[0].0 .0);
        assert!((share - 0.6).abs() < 0.01, "{share}");
        // The labels say the means as the report writes them.
        for text in ["150.00", "1000.00", "400.00", "80.00", "a", "goodput_pct"] {
            assert!(svg.contains(&format!(">\n{text}\n<")), "{text}");
        }
        // Inside the picture.
        let size = chart().size();
        for p in &dots {
            assert!(
                p.0 > f64::from(LABEL_W) && p.0 < f64::from(size.width),
                "{p:?}"
            );
            assert!(
                p.1 > f64::from(TITLE_H) && p.1 < f64::from(size.height),
                "{p:?}"
            );
        }
    }

    #[test]
    fn the_same_chart_gives_the_same_bytes() {
        let c = chart();
        assert_eq!(
            c.render(ImageFormat::Svg).unwrap(),
            c.render(ImageFormat::Svg).unwrap()
        );
    }
}
