//! The chart of a boundary search ([`crate::boundary::Report`]): the collapse probability of
//! each case against the axis, in the axis's unit, a line through the evaluated points' shares
//! with a band over their 95 % Wilson intervals, the level as a grey line, and each case's
//! boundary marked where it crosses the level (a vertical line down to the axis) with its
//! 95 % interval as a bar on the level. One line a case, a legend naming each with its
//! boundary. Built from the same report the table, JSON and CSV are written from; pure.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::boundary::{unit_of, Report};

use super::axis::{self, Axis, Ticked};
use super::palette;
use super::{
    draw_error, draw_mesh, draw_title_lines, render, ChartError, ChartSize, Drawable, ImageFormat,
    FONT_FAMILY,
};

/// Default picture size of a boundary chart.
pub const DEFAULT_SIZE: ChartSize = ChartSize {
    width: 1000,
    height: 620,
};

/// One evaluated point of a case, in the axis's unit.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    /// The axis value.
    pub x: f64,
    /// The share of seeds that collapsed.
    pub p: f64,
    /// Low end of its 95 % interval.
    pub low: f64,
    /// High end.
    pub high: f64,
}

/// One case's curve and boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseCurve {
    /// The case's name (strategy, then its other listed values).
    pub name: String,
    /// Its points, by axis value.
    pub points: Vec<CurvePoint>,
    /// Where the curve crosses the level (`None`: it does not in the range).
    pub boundary: Option<f64>,
    /// The boundary's 95 % interval (`None` for a side not bracketed).
    pub interval: (Option<f64>, Option<f64>),
}

/// A boundary chart ready to draw. Build it with [`BoundaryChart::from_report`].
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryChart {
    /// Title line.
    pub title: String,
    /// Subtitle: what the lines, bands and marks are.
    pub subtitle: String,
    /// Horizontal axis name, with the unit.
    pub x_label: String,
    /// The range searched, in the axis's unit.
    pub range: (f64, f64),
    /// The level.
    pub level: f64,
    /// One curve a case, in the report's order.
    pub cases: Vec<CaseCurve>,
}

/// The axis's name with its unit, as the chart's x axis reads.
fn axis_label(report: &Report) -> String {
    match unit_of(report.axis) {
        "" => report.axis.name.to_string(),
        unit => format!("{} ({unit})", report.axis.name),
    }
}

/// A value in the axis's unit as the legend gives it.
fn shown(value: f64, unit: &str) -> String {
    let text = axis::number(value);
    match unit {
        "s" => format!("{text}s"),
        _ => text,
    }
}

impl BoundaryChart {
    /// The chart of `report`: every case's points, boundary and interval, in the axis's unit.
    pub fn from_report(report: &Report) -> BoundaryChart {
        let unit = |v: u64| report.in_unit(v as f64);
        let (lo, hi) = report
            .results
            .iter()
            .flat_map(|r| r.search.points.iter().map(|p| unit(p.value)))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
        let cases = report
            .results
            .iter()
            .map(|r| {
                let mut name = r.case.strategy.clone();
                for (k, v) in &r.case.with {
                    name.push_str(&format!(", {k}={v}"));
                }
                CaseCurve {
                    name,
                    points: r
                        .search
                        .points
                        .iter()
                        .map(|p| {
                            let e = p.estimate();
                            CurvePoint {
                                x: unit(p.value),
                                p: e.p,
                                low: e.low,
                                high: e.high,
                            }
                        })
                        .collect(),
                    boundary: r.boundary.map(|b| report.in_unit(b)),
                    interval: (
                        r.search.bracket.low.map(unit),
                        r.search.bracket.high.map(unit),
                    ),
                }
            })
            .collect();
        BoundaryChart {
            title: format!("Collapse probability against {}", report.axis.name),
            subtitle: format!(
                "line = share of seeds collapsed at each evaluated point, band = its 95 % Wilson interval\n\
                 grey line = the level {}; vertical line = the boundary, bar on the level = its 95 % interval",
                report.level
            ),
            x_label: axis_label(report),
            range: if lo <= hi { (lo, hi) } else { (0.0, 1.0) },
            level: report.level,
            cases,
        }
    }

    /// The chart as PNG or SVG bytes, at `size` (or [`DEFAULT_SIZE`]).
    pub fn render(
        &self,
        format: ImageFormat,
        size: Option<ChartSize>,
    ) -> Result<Vec<u8>, ChartError> {
        render(self, format, size.unwrap_or(DEFAULT_SIZE))
    }

    /// The chart as SVG text (for a page that embeds it), at `size` (or [`DEFAULT_SIZE`]).
    pub fn svg(&self, size: Option<ChartSize>) -> Result<String, ChartError> {
        String::from_utf8(self.render(ImageFormat::Svg, size)?)
            .map_err(|e| ChartError::Draw(format!("the SVG is not UTF-8: {e}")))
    }

    /// The legend line of case `i`: its name, and its boundary with the interval.
    fn legend_note(&self, case: &CaseCurve, unit: &str) -> String {
        let end = |v: Option<f64>| v.map_or("?".to_string(), |v| shown(v, unit));
        match case.boundary {
            None => "no crossing in the range".to_string(),
            Some(b) => format!(
                "boundary {} (95 %: {}..{})",
                shown(b, unit),
                end(case.interval.0),
                end(case.interval.1)
            ),
        }
    }
}

/// The SVG text of `report`'s chart at the default size: what a page embeds.
pub fn svg(report: &Report) -> Result<String, ChartError> {
    BoundaryChart::from_report(report).svg(None)
}

/// The PNG bytes of `report`'s chart at the default size.
pub fn png(report: &Report) -> Result<Vec<u8>, ChartError> {
    BoundaryChart::from_report(report).render(ImageFormat::Png, None)
}

const TITLE_H: u32 = 80;
/// Width of the legend column at the default size and above.
const LEGEND_W: u32 = 260;
/// Horizontal pixels per x tick wanted.
const PX_PER_X_TICK: u32 = 110;
/// Rows of the legend: a case's name, then its boundary.
const LEGEND_ROW_H: i32 = 40;

impl Drawable for BoundaryChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (title, body) = root.split_vertically(TITLE_H);
        draw_title_lines(&title, &self.title, &self.subtitle, 70, 18)?;
        let (width, _) = body.dim_in_pixel();
        let legend_w = LEGEND_W.min(width / 3);
        let (plot, legend) = body.split_horizontally(width - legend_w);
        let (lo, hi) = self.range;
        let pad = (hi - lo).abs().max(hi.abs() * 0.1).max(1e-9) * 0.03;
        let x = Axis {
            lo: lo - pad,
            hi: hi + pad,
            log: false,
        };
        let y = Axis {
            lo: 0.0,
            hi: 1.0,
            log: false,
        };
        let ticks = ((width - legend_w) / PX_PER_X_TICK).max(2) as usize;
        let mut chart = ChartBuilder::on(&plot)
            .margin_top(22)
            .margin_right(16)
            .y_label_area_size(70)
            .x_label_area_size(50)
            .build_cartesian_2d(Ticked::new(x, ticks), Ticked::new(y, 5))
            .map_err(draw_error)?;
        draw_mesh(&mut chart, &self.x_label, true)?;
        plot.draw_text(
            "collapse probability",
            &(FONT_FAMILY, 14).into_font().color(&BLACK),
            (8, 2),
        )
        .map_err(draw_error)?;
        let grey = RGBColor(110, 110, 110);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x.lo, self.level), (x.hi, self.level)],
                grey.stroke_width(1),
            )))
            .map_err(draw_error)?;
        let unit = if self.x_label.ends_with("(s)") {
            "s"
        } else {
            ""
        };
        let fit = ((legend.dim_in_pixel().1.saturating_sub(8)) / LEGEND_ROW_H as u32).max(1);
        for (i, case) in self.cases.iter().enumerate() {
            let (r, g, b) = palette::LINES[i % palette::LINES.len()];
            let color = RGBColor(r, g, b);
            if case.points.len() > 1 {
                let mut band: Vec<(f64, f64)> = case.points.iter().map(|p| (p.x, p.high)).collect();
                band.extend(case.points.iter().rev().map(|p| (p.x, p.low)));
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.15).filled(),
                    )))
                    .map_err(draw_error)?;
            }
            chart
                .draw_series(std::iter::once(PathElement::new(
                    case.points.iter().map(|p| (p.x, p.p)).collect::<Vec<_>>(),
                    color.stroke_width(2),
                )))
                .map_err(draw_error)?;
            chart
                .draw_series(
                    case.points
                        .iter()
                        .map(|p| Circle::new((p.x, p.p), 3, color.filled())),
                )
                .map_err(draw_error)?;
            if let Some(boundary) = case.boundary {
                let (a, z) = case.interval;
                let (a, z) = (a.unwrap_or(lo), z.unwrap_or(hi));
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(a, self.level - 0.015), (z, self.level + 0.015)],
                        color.mix(0.45).filled(),
                    )))
                    .map_err(draw_error)?;
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(boundary, 0.0), (boundary, self.level)],
                        color.stroke_width(3),
                    )))
                    .map_err(draw_error)?;
            }
            let i = i as u32;
            if i >= fit {
                continue;
            }
            let row = 8 + LEGEND_ROW_H * i as i32;
            if i + 1 == fit && self.cases.len() as u32 > fit {
                legend
                    .draw_text(
                        &format!("and {} more cases", self.cases.len() as u32 - i),
                        &(FONT_FAMILY, 14).into_font().color(&grey),
                        (30, row),
                    )
                    .map_err(draw_error)?;
                continue;
            }
            legend
                .draw(&Rectangle::new(
                    [(4, row + 2), (22, row + 14)],
                    color.filled(),
                ))
                .map_err(draw_error)?;
            legend
                .draw_text(
                    &case.name,
                    &(FONT_FAMILY, 14).into_font().color(&BLACK),
                    (30, row),
                )
                .map_err(draw_error)?;
            legend
                .draw_text(
                    &self.legend_note(case, unit),
                    &(FONT_FAMILY, 13).into_font().color(&grey),
                    (30, row + 18),
                )
                .map_err(draw_error)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(cases: Vec<CaseCurve>) -> BoundaryChart {
        BoundaryChart {
            title: "Collapse probability against spike-rate".into(),
            subtitle: "a\nb".into(),
            x_label: "spike-rate (per s)".into(),
            range: (40.0, 120.0),
            level: 0.5,
            cases,
        }
    }

    fn curve(name: &str, crossing: f64) -> CaseCurve {
        let points = [40.0, 70.0, 80.0, 120.0]
            .iter()
            .map(|&x| {
                let p = if x < crossing { 0.1 } else { 0.9 };
                CurvePoint {
                    x,
                    p,
                    low: p - 0.1,
                    high: p + 0.1,
                }
            })
            .collect();
        CaseCurve {
            name: name.into(),
            points,
            boundary: Some(crossing),
            interval: (Some(70.0), Some(80.0)),
        }
    }

    /// The `points` of every `<polyline>` of `svg` drawn with `stroke` at `width`.
    fn polylines(svg: &str, stroke: &str, width: u32) -> Vec<Vec<(f64, f64)>> {
        let wanted = format!("stroke=\"{stroke}\" stroke-width=\"{width}\"");
        svg.split("<polyline")
            .skip(1)
            .filter(|e| e.split("/>").next().is_some_and(|e| e.contains(&wanted)))
            .map(|e| {
                let points = e
                    .split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                points
                    .split_whitespace()
                    .map(|xy| {
                        let (x, y) = xy.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// The x pixel of the tick label `text` under the x axis (labels are centred on their tick).
    fn tick_x(svg: &str, text: &str) -> f64 {
        let close = format!(">\n{text}\n</text>");
        let at = svg.find(&close).unwrap_or_else(|| panic!("no tick {text}"));
        let open = svg[..at].rfind("<text").unwrap();
        let x = svg[open..at]
            .split("x=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        x.parse().unwrap()
    }

    #[test]
    fn one_line_a_case_and_the_boundary_at_its_value_on_the_axis() {
        let c = chart(vec![curve("naive", 75.0), curve("full-jitter", 97.5)]);
        let svg = c.svg(None).unwrap();
        // 40 and 120 are ticks: the x scale in pixels is read off the picture.
        let (x40, x120) = (tick_x(&svg, "40"), tick_x(&svg, "120"));
        let pixel = |v: f64| x40 + (v - 40.0) / 80.0 * (x120 - x40);
        for (i, case) in c.cases.iter().enumerate() {
            let (r, g, b) = palette::LINES[i];
            let stroke = format!("#{r:02X}{g:02X}{b:02X}");
            let lines = polylines(&svg, &stroke, 2);
            assert_eq!(lines.len(), 1, "{stroke}: {svg}");
            assert_eq!(lines[0].len(), case.points.len());
            for (&(px, _), p) in lines[0].iter().zip(&case.points) {
                assert!((px - pixel(p.x)).abs() <= 1.0, "{px} vs {}", pixel(p.x));
            }
            let marks = polylines(&svg, &stroke, 3);
            assert_eq!(marks.len(), 1, "{stroke}");
            let boundary = case.boundary.unwrap();
            let [(top_x, top_y), (bottom_x, bottom_y)] = [marks[0][0], marks[0][1]];
            assert_eq!(top_x, bottom_x);
            assert!(
                (top_x - pixel(boundary)).abs() <= 1.0,
                "{top_x} vs {boundary}"
            );
            // From the axis (p = 0) up to the level, the level half-way up a 0..1 axis.
            assert!(top_y > bottom_y);
        }
        assert!(svg.contains("boundary 75 (95 %: 70..80)"), "{svg}");
        // Same chart, same bytes.
        assert_eq!(svg, c.svg(None).unwrap());
    }

    #[test]
    fn the_png_has_the_size_asked_and_the_cases_colours() {
        let c = chart(vec![
            curve("naive", 75.0),
            CaseCurve {
                boundary: None,
                interval: (None, None),
                ..curve("never", 200.0)
            },
        ]);
        let size = ChartSize {
            width: 800,
            height: 500,
        };
        let bytes = c.render(ImageFormat::Png, Some(size)).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width, info.height), (800, 500));
        let count = |rgb: (u8, u8, u8)| {
            pixels
                .chunks(3)
                .filter(|p| (p[0], p[1], p[2]) == rgb)
                .count()
        };
        // Each case's line and legend swatch (12 x 18 pixels at least) in its own colour.
        assert!(
            count(palette::LINES[0]) > 216,
            "{}",
            count(palette::LINES[0])
        );
        assert!(
            count(palette::LINES[1]) > 216,
            "{}",
            count(palette::LINES[1])
        );
        assert!(count((255, 255, 255)) < 800 * 500);
        assert_eq!(bytes, c.render(ImageFormat::Png, Some(size)).unwrap());
    }
}
