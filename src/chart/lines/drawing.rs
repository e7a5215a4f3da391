//! Drawing a line chart: the axes' ranges from its points, the picture shared between the
//! plot and the legend ([`Layout`]), the lines, their bands and the legend. Separate from the
//! grouping: it takes a finished [`LineChart`] and only draws.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::LineChart;
use crate::chart::axis::{Axis, Ticked};
use crate::chart::palette;
use crate::chart::{draw_error, draw_mesh, ChartError, Drawable, FONT_FAMILY};

impl LineChart {
    pub(super) fn axes(&self) -> (Axis, Axis) {
        let points = || self.lines.iter().flat_map(|l| &l.points);
        let x_lo = points().map(|p| p.x).fold(f64::INFINITY, f64::min);
        let x_hi = points().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
        let y_lo = points().map(|p| p.min).fold(f64::INFINITY, f64::min);
        let y_hi = points().map(|p| p.max).fold(f64::NEG_INFINITY, f64::max);
        let x = if self.log_x {
            Axis {
                lo: x_lo / 1.1,
                hi: x_hi * 1.1,
                log: true,
            }
        } else {
            let pad = (x_hi - x_lo).abs().max(x_hi.abs() * 0.1).max(1e-9) * 0.03;
            Axis {
                lo: x_lo - pad,
                hi: x_hi + pad,
                log: false,
            }
        };
        let y = if self.log_y {
            Axis {
                lo: y_lo / 1.3,
                hi: y_hi * 1.3,
                log: true,
            }
        } else {
            // From 0 for counts, times and percentages; a ratio's axis starts at its floor (or
            // its lowest value, an interval's end may dip below it), not at 0 where no value
            // can be, with a little room below.
            let ratio = self.y_floor != 0.0;
            let floor = match ratio {
                true => y_lo.min(self.y_floor),
                false => y_lo.min(0.0),
            };
            let hi = if y_hi > floor {
                y_hi + (y_hi - floor) * 0.08
            } else {
                floor + 1.0
            };
            let lo = match ratio {
                true => floor - (hi - floor) * 0.04,
                false => floor,
            };
            Axis { lo, hi, log: false }
        };
        (x, y)
    }
}

const TITLE_H: u32 = 62;

/// Width of the legend column at the default size and above.
pub(super) const LEGEND_W: u32 = 230;

/// Horizontal pixels per x tick wanted.
const PX_PER_X_TICK: u32 = 110;

/// How a picture `width` pixels wide is shared between the plot and the legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    /// Width of the plot (axes included).
    pub(super) plot_w: u32,
    /// Width of the legend column on its right.
    pub(super) legend_w: u32,
    /// Ticks wanted on the x axis.
    pub(super) x_ticks: usize,
}

impl Layout {
    /// The legend takes [`LEGEND_W`], or less than a third of a narrow picture; the plot
    /// takes the rest. (Sizes are at least `MIN_SIDE`, but any width lays out.)
    pub(super) fn of(width: u32) -> Layout {
        let legend_w = LEGEND_W.min(width / 3);
        let plot_w = width - legend_w;
        Layout {
            plot_w,
            legend_w,
            x_ticks: (plot_w / PX_PER_X_TICK).max(2) as usize,
        }
    }
}

impl Drawable for LineChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (title, body) = root.split_vertically(TITLE_H);
        title
            .draw_text(
                &self.title,
                &(FONT_FAMILY, 22).into_font().color(&BLACK),
                (70, 10),
            )
            .map_err(draw_error)?;
        title
            .draw_text(
                &self.subtitle,
                &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
                (70, 38),
            )
            .map_err(draw_error)?;
        let (width, _) = body.dim_in_pixel();
        let layout = Layout::of(width);
        let (plot, legend) = body.split_horizontally(layout.plot_w);
        let (x, y) = self.axes();
        let mut chart = ChartBuilder::on(&plot)
            .margin_top(22)
            .margin_right(16)
            .y_label_area_size(70)
            .x_label_area_size(50)
            .build_cartesian_2d(Ticked::new(x, layout.x_ticks), Ticked::new(y, 6))
            .map_err(draw_error)?;
        draw_mesh(&mut chart, &self.x_label, true)?;
        // The y axis name sits above the axis, horizontal, where it never collides with ticks.
        plot.draw_text(
            &self.y_label,
            &(FONT_FAMILY, 14).into_font().color(&BLACK),
            (8, 2),
        )
        .map_err(draw_error)?;

        if let Some(heading) = &self.legend_title {
            legend
                .draw_text(
                    heading,
                    &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
                    (4, 2),
                )
                .map_err(draw_error)?;
        }
        // Legend entries that fit under one another (at least one).
        let fit = ((legend.dim_in_pixel().1.saturating_sub(24)) / 22).max(1) as usize;
        for (i, line) in self.lines.iter().enumerate() {
            let (r, g, b) = palette::LINES[i % palette::LINES.len()];
            let color = RGBColor(r, g, b);
            let at = |px: f64, py: f64| (x.place(px), y.place(py));
            if line.points.iter().any(|p| p.max > p.min) {
                let mut band: Vec<(f64, f64)> =
                    line.points.iter().map(|p| at(p.x, p.max)).collect();
                band.extend(line.points.iter().rev().map(|p| at(p.x, p.min)));
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.18).filled(),
                    )))
                    .map_err(draw_error)?;
            }
            chart
                .draw_series(std::iter::once(PathElement::new(
                    line.points
                        .iter()
                        .map(|p| at(p.x, p.mean))
                        .collect::<Vec<_>>(),
                    color.stroke_width(2),
                )))
                .map_err(draw_error)?;
            chart
                .draw_series(
                    line.points
                        .iter()
                        .map(|p| Circle::new(at(p.x, p.mean), 3, color.filled())),
                )
                .map_err(draw_error)?;
            if i >= fit {
                continue;
            }
            let row = 24 + 22 * i as i32;
            if i + 1 == fit && self.lines.len() > fit {
                // The legend is full: the rest are counted, not drawn off the picture.
                legend
                    .draw_text(
                        &format!("and {} more lines", self.lines.len() - i),
                        &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
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
                    &line.name,
                    &(FONT_FAMILY, 14).into_font().color(&BLACK),
                    (30, row),
                )
                .map_err(draw_error)?;
        }
        Ok(())
    }
}
