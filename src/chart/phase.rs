//! The phase diagram of a two-axis boundary search ([`crate::boundary::plane::PlaneReport`]):
//! one panel a case, the collapse probability over the rectangle as a heat map (each pixel
//! block coloured as the nearest evaluated cell, distances measured in shares of each range),
//! the evaluated cells as dots, and the level's contour in black (marching squares through the
//! squares it crosses, [`crate::boundary::plane::contour_segments`]). A colour bar gives the
//! scale. Built from the same report the table and JSON are written from; pure.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::boundary::plane::{contour_segments, PlaneReport};
use crate::boundary::unit_of;

use super::axis::{Axis, Ticked};
use super::{
    draw_caption, draw_error, draw_mesh, draw_title_lines, render, ChartError, ChartSize, Drawable,
    ImageFormat, FONT_FAMILY,
};

/// Heat map blocks along each side of a panel.
const RASTER: usize = 64;
/// Panels side by side at most.
const COLUMNS: usize = 3;
const TITLE_H: u32 = 80;
const PANEL_H: u32 = 440;
const BAR_W: u32 = 90;

/// One case's panel.
#[derive(Clone, Debug, PartialEq)]
pub struct PhasePanel {
    /// The case's name.
    pub name: String,
    /// Each evaluated cell: both values in the axes' units, and the collapse probability.
    pub cells: Vec<(f64, f64, f64)>,
    /// The contour's segments, in the axes' units.
    pub contour: Vec<[(f64, f64); 2]>,
}

/// A phase diagram ready to draw. Build it with [`PhaseChart::from_report`].
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseChart {
    /// Title line.
    pub title: String,
    /// Subtitle lines.
    pub subtitle: String,
    /// The first axis's name and unit (horizontal).
    pub x_label: String,
    /// The second axis's (vertical).
    pub y_label: String,
    /// The ranges, in the axes' units.
    pub ranges: [(f64, f64); 2],
    /// One panel a case.
    pub panels: Vec<PhasePanel>,
}

/// The colour of collapse probability `p`: blue at 0, pale yellow at 0.5, red at 1.
pub fn colour(p: f64) -> RGBColor {
    let stops = [
        (69.0, 117.0, 180.0),
        (255.0, 255.0, 191.0),
        (215.0, 48.0, 39.0),
    ];
    let p = p.clamp(0.0, 1.0) * 2.0;
    let (k, t) = if p >= 1.0 { (1, p - 1.0) } else { (0, p) };
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    let (a, b) = (stops[k], stops[k + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The heat map's scale in words, its colours read off [`colour`]: a page states it beside
/// the Okabe–Ito palette of the other charts. The claim on colour-vision deficiencies is the
/// simulation the tests run (`the_scale_stays_apart_under_simulated_colour_vision_deficiencies`).
pub fn scale_words() -> String {
    let hex = |p: f64| {
        let c = colour(p);
        super::palette::hex((c.0, c.1, c.2))
    };
    format!(
        "the heat map has its own scale, not the Okabe–Ito palette of the other charts: {} \
         (blue) at a collapse probability of 0, {} (pale yellow) at 0.5 and {} (red) at 1, \
         mixed linearly between them, three colours of ColorBrewer's RdYlBu scheme, which \
         ColorBrewer lists as colour-blind safe; under simulated protanopia, deuteranopia and \
         tritanopia (Machado, Oliveira and Fernandes 2009) the colours of 0, 0.5 and 1 stay at \
         least 50 ΔE*ab apart. The evaluated cells are dark grey dots, the contour is black",
        hex(0.0),
        hex(0.5),
        hex(1.0)
    )
}

impl PhaseChart {
    /// The chart of `report`: every case's cells and contour, in the axes' units.
    pub fn from_report(report: &PlaneReport) -> PhaseChart {
        let label = |i: usize| match unit_of(report.axes[i]) {
            "" => report.axes[i].name.to_string(),
            u => format!("{} ({u})", report.axes[i].name),
        };
        let unit = |i: usize, v: f64| report.in_unit(i, v);
        let panels = report
            .results
            .iter()
            .map(|r| PhasePanel {
                name: r.case.name(),
                cells: r
                    .search
                    .cells
                    .iter()
                    .map(|c| {
                        (
                            unit(0, c.values.0 as f64),
                            unit(1, c.values.1 as f64),
                            c.estimate().p,
                        )
                    })
                    .collect(),
                contour: contour_segments(&r.search, report.level)
                    .into_iter()
                    .map(|s| s.map(|(a, b)| (unit(0, a), unit(1, b))))
                    .collect(),
            })
            .collect();
        PhaseChart {
            title: format!(
                "Collapse probability over {} and {}",
                report.axes[0].name, report.axes[1].name
            ),
            subtitle: format!(
                "colour = share of seeds collapsed at the nearest evaluated cell (dots)\n\
                 black line = where it crosses the level {} (marching squares through the refined squares)",
                report.level
            ),
            x_label: label(0),
            y_label: label(1),
            ranges: [0, 1].map(|i| {
                (
                    unit(i, report.ranges[i].0 as f64),
                    unit(i, report.ranges[i].1 as f64),
                )
            }),
            panels,
        }
    }

    /// The default size: 1000 wide, a row of up to three panels 440 high each.
    pub fn default_size(&self) -> ChartSize {
        let rows = self.panels.len().div_ceil(COLUMNS).max(1) as u32;
        ChartSize {
            width: 1000,
            height: (TITLE_H + PANEL_H * rows).min(super::MAX_SIDE),
        }
    }

    /// The chart as PNG or SVG bytes, at `size` (or [`PhaseChart::default_size`]).
    pub fn render(
        &self,
        format: ImageFormat,
        size: Option<ChartSize>,
    ) -> Result<Vec<u8>, ChartError> {
        render(self, format, size.unwrap_or_else(|| self.default_size()))
    }

    /// The chart as SVG text (for a page that embeds it).
    pub fn svg(&self, size: Option<ChartSize>) -> Result<String, ChartError> {
        String::from_utf8(self.render(ImageFormat::Svg, size)?)
            .map_err(|e| ChartError::Draw(format!("the SVG is not UTF-8: {e}")))
    }

    /// The probability at the nearest cell of `panel` to `(x, y)`, in shares of each range
    /// (the first cell on a tie).
    fn nearest(&self, panel: &PhasePanel, x: f64, y: f64) -> f64 {
        let [(x0, x1), (y0, y1)] = self.ranges;
        let share = |v: f64, lo: f64, hi: f64| (v - lo) / (hi - lo).max(f64::MIN_POSITIVE);
        let mut best = (f64::INFINITY, 0.0);
        for &(cx, cy, p) in &panel.cells {
            let (dx, dy) = (share(cx - x + x0, x0, x1), share(cy - y + y0, y0, y1));
            let d = dx * dx + dy * dy;
            if d < best.0 {
                best = (d, p);
            }
        }
        best.1
    }
}

impl Drawable for PhaseChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (title, body) = root.split_vertically(TITLE_H);
        draw_title_lines(&title, &self.title, &self.subtitle, 70, 18)?;
        let (width, height) = body.dim_in_pixel();
        let bar_w = BAR_W.min(width / 4);
        let (panels, bar) = body.split_horizontally(width - bar_w);
        let n = self.panels.len().max(1);
        let columns = n.min(COLUMNS);
        let rows = n.div_ceil(COLUMNS);
        let areas = panels.split_evenly((rows, columns));
        let [(x0, x1), (y0, y1)] = self.ranges;
        let axis = |lo: f64, hi: f64| Axis { lo, hi, log: false };
        for (panel, area) in self.panels.iter().zip(&areas) {
            let (caption, plot) = area.split_vertically(24);
            draw_caption(&caption, &panel.name, &format!("up: {}", self.y_label), 70)?;
            let (pw, _) = plot.dim_in_pixel();
            let mut chart = ChartBuilder::on(&plot)
                .margin_right(14)
                .margin_top(6)
                .y_label_area_size(64)
                .x_label_area_size(44)
                .build_cartesian_2d(
                    Ticked::new(axis(x0, x1), (pw / 110).max(2) as usize),
                    Ticked::new(axis(y0, y1), 5),
                )
                .map_err(draw_error)?;
            // Each raster row as runs of one colour: one rectangle a run.
            let (dx, dy) = ((x1 - x0) / RASTER as f64, (y1 - y0) / RASTER as f64);
            let mut blocks = Vec::new();
            for j in 0..RASTER {
                let y = y0 + (j as f64 + 0.5) * dy;
                let mut start = 0;
                let mut p = self.nearest(panel, x0 + 0.5 * dx, y);
                for i in 1..=RASTER {
                    let next =
                        (i < RASTER).then(|| self.nearest(panel, x0 + (i as f64 + 0.5) * dx, y));
                    if next != Some(p) {
                        blocks.push(Rectangle::new(
                            [
                                (x0 + start as f64 * dx, y0 + j as f64 * dy),
                                (x0 + i as f64 * dx, y0 + (j + 1) as f64 * dy),
                            ],
                            colour(p).filled(),
                        ));
                        start = i;
                        p = next.unwrap_or(p);
                    }
                }
            }
            chart.draw_series(blocks).map_err(draw_error)?;
            draw_mesh(&mut chart, &self.x_label, true)?;
            chart
                .draw_series(
                    panel
                        .cells
                        .iter()
                        .map(|&(x, y, _)| Circle::new((x, y), 2, RGBColor(60, 60, 60).filled())),
                )
                .map_err(draw_error)?;
            chart
                .draw_series(
                    panel
                        .contour
                        .iter()
                        .map(|s| PathElement::new(s.to_vec(), BLACK.stroke_width(2))),
                )
                .map_err(draw_error)?;
        }
        // The colour bar: 0 at the bottom, 1 at the top.
        let top = 40i32;
        let bottom = (height as i32 - 60).max(top + 20);
        let steps = 50;
        for k in 0..steps {
            let p = (k as f64 + 0.5) / steps as f64;
            let y_hi = bottom - (bottom - top) * (k + 1) / steps;
            let y_lo = bottom - (bottom - top) * k / steps;
            bar.draw(&Rectangle::new(
                [(10, y_hi), (30, y_lo)],
                colour(p).filled(),
            ))
            .map_err(draw_error)?;
        }
        let label = (FONT_FAMILY, 13).into_font().color(&BLACK);
        for (p, text) in [(0.0, "0"), (0.5, "0.5"), (1.0, "1")] {
            let y = bottom - ((bottom - top) as f64 * p) as i32;
            bar.draw_text(text, &label, (36, y - 7))
                .map_err(draw_error)?;
        }
        bar.draw_text("collapse", &label, (4, top - 34))
            .map_err(draw_error)?;
        bar.draw_text("probability", &label, (4, top - 18))
            .map_err(draw_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collapsed (p = 1) right of x = 50 + y / 2 over 0..100 by 0..100, else 0.
    fn chart(cases: usize) -> PhaseChart {
        let mut cells = Vec::new();
        for i in 0..=10 {
            for j in 0..=10 {
                let (x, y) = (i as f64 * 10.0, j as f64 * 10.0);
                cells.push((x, y, if x > 50.0 + y / 2.0 { 1.0 } else { 0.0 }));
            }
        }
        let panel = |k: usize| PhasePanel {
            name: format!("case {k}"),
            cells: cells.clone(),
            contour: vec![[(55.0, 0.0), (105.0, 100.0)]],
        };
        PhaseChart {
            title: "t".into(),
            subtitle: "s".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            ranges: [(0.0, 100.0), (0.0, 100.0)],
            panels: (0..cases).map(panel).collect(),
        }
    }

    #[test]
    fn the_colours_run_from_blue_through_yellow_to_red() {
        assert_eq!(colour(0.0), RGBColor(69, 117, 180));
        assert_eq!(colour(0.5), RGBColor(255, 255, 191));
        assert_eq!(colour(1.0), RGBColor(215, 48, 39));
        assert_eq!(colour(0.25), RGBColor(162, 186, 186));
    }

    /// `c` as seen with a dichromacy: Machado, Oliveira and Fernandes's matrix of severity 1
    /// ("A physiologically-based model for simulation of color vision deficiency", IEEE TVCG
    /// 15(6), 2009) on linear sRGB, then CIE L*a*b* (D65).
    fn seen(c: RGBColor, m: [[f64; 3]; 3]) -> [f64; 3] {
        let linear = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        let rgb = [linear(c.0), linear(c.1), linear(c.2)];
        let [r, g, b] =
            m.map(|row| (row[0] * rgb[0] + row[1] * rgb[1] + row[2] * rgb[2]).clamp(0.0, 1.0));
        let (x, y, z) = (
            (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
            0.2126 * r + 0.7152 * g + 0.0722 * b,
            (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
        );
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        [
            116.0 * f(y) - 16.0,
            500.0 * (f(x) - f(y)),
            200.0 * (f(y) - f(z)),
        ]
    }

    #[test]
    fn the_scale_stays_apart_under_simulated_colour_vision_deficiencies() {
        let simulations = [
            (
                "protanopia",
                [
                    [0.152286, 1.052583, -0.204868],
                    [0.114503, 0.786281, 0.099216],
                    [-0.003882, -0.048116, 1.051998],
                ],
            ),
            (
                "deuteranopia",
                [
                    [0.367322, 0.860646, -0.227968],
                    [0.280085, 0.672501, 0.047413],
                    [-0.011820, 0.042940, 0.968881],
                ],
            ),
            (
                "tritanopia",
                [
                    [1.255528, -0.076749, -0.178779],
                    [-0.078411, 0.930809, 0.147602],
                    [0.004733, 0.691367, 0.303900],
                ],
            ),
        ];
        let distance = |a: [f64; 3], b: [f64; 3]| {
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        };
        for (name, m) in simulations {
            // The page's claim: 0, 0.5 and 1 at least 50 apart.
            let ends = [0.0, 0.5, 1.0].map(|p| seen(colour(p), m));
            for (i, j) in [(0, 1), (1, 2), (0, 2)] {
                let d = distance(ends[i], ends[j]);
                assert!(d >= 50.0, "{name}: {i} and {j} are {d:.1} apart");
            }
            // And no tenth of the scale looks like the next.
            for k in 0..10 {
                let d = distance(
                    seen(colour(k as f64 / 10.0), m),
                    seen(colour((k + 1) as f64 / 10.0), m),
                );
                assert!(d >= 9.0, "{name}: tenth {k} is {d:.1} from the next");
            }
        }
        assert!(scale_words().contains("#4575B4 (blue) at a collapse probability of 0, #FFFFBF"));
    }

    #[test]
    fn each_case_is_a_panel_with_its_contour_and_the_png_has_both_sides() {
        let c = chart(2);
        let svg = c.svg(None).unwrap();
        assert_eq!(svg.matches("\ncase ").count(), 2, "{svg}");
        // One black 2-pixel contour line a panel.
        assert_eq!(
            svg.matches("stroke=\"#000000\" stroke-width=\"2\"").count(),
            2
        );
        let size = c.default_size();
        assert_eq!((size.width, size.height), (1000, 520));
        let bytes = c.render(ImageFormat::Png, None).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes))
            .read_info()
            .unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!((info.width, info.height), (1000, 520));
        let count = |c: RGBColor| {
            rgb.chunks(3)
                .filter(|p| (p[0], p[1], p[2]) == (c.0, c.1, c.2))
                .count()
        };
        // Left of the line uncollapsed (blue), right of it collapsed (red): the red side is
        // the triangle right of x = 50 + y / 2, 2 500 of the 10 000 square, a quarter (within
        // the raster's and the nearest cell's blocks).
        let (blue, red) = (count(colour(0.0)), count(colour(1.0)));
        let share = red as f64 / (blue + red) as f64;
        assert!((share - 0.25).abs() < 0.04, "{blue} {red}");
        assert_eq!(bytes, c.render(ImageFormat::Png, None).unwrap());
    }
}
