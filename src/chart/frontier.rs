//! The Pareto frontier of a `tune` as a scatter of two of its terms: every candidate of the
//! last rung at its means, the frontier's points with their 95 % intervals as error bars in
//! both directions, and a ring around the recommended point. The chart is built from the
//! [`TuneReport`] itself (the same statistics the table and the JSON print), so it cannot
//! disagree with them; [`frontier_svg`] and [`frontier_png`] are what other reports embed.
//!
//! The axes are two terms of the tune file, by label (`amplification@flaky`, `retries`): the
//! first two objectives by default, then the constraints' terms when there is one objective
//! ([`FrontierAxes::resolve`]).

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::advice::tune_file::{Sense, Term, TuneFile};
use crate::advice::tune_frontier::{Stat, TuneReport};

use super::axis::{Axis, Ticked};
use super::{draw_error, draw_mesh, render, ChartError, ChartSize, Drawable, ImageFormat};
use super::{draw_title_lines, palette, FONT_FAMILY};

/// A palette colour as plotters takes it.
const fn rgb((r, g, b): palette::Rgb) -> RGBColor {
    RGBColor(r, g, b)
}

/// The picture's size when none is given.
pub const DEFAULT_SIZE: ChartSize = ChartSize {
    width: 1000,
    height: 700,
};

/// Radius of a frontier point, in pixels.
pub const FRONTIER_R: u32 = 5;
/// Radius of a point off the frontier.
pub const OTHER_R: u32 = 3;
/// Radius of the ring around the recommended point.
pub const RING_R: u32 = 11;
/// The frontier's colour.
pub const FRONTIER_COLOR: RGBColor = rgb(palette::BLUE);
/// The ring's colour.
pub const RING_COLOR: RGBColor = rgb(palette::VERMILLION);
/// Feasible candidates off the frontier (dominated): filled grey.
pub const DOMINATED_COLOR: RGBColor = RGBColor(150, 150, 150);
/// Candidates missing a constraint: hollow grey.
pub const INFEASIBLE_COLOR: RGBColor = RGBColor(190, 190, 190);

const TITLE_H: u32 = 78;

/// The two terms a frontier chart plots, by label; `None` takes the default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontierAxes {
    /// The term on the x axis (`--chart-x`).
    pub x: Option<String>,
    /// The term on the y axis (`--chart-y`).
    pub y: Option<String>,
}

impl FrontierAxes {
    /// The terms of `file` the chart plots: those named, else the objectives in order
    /// (minimize before maximize), then the constraints' terms, skipping one already taken.
    /// Refused when a label names no term of the file, when both name the same term, or when
    /// the file has fewer than two terms.
    pub fn resolve(&self, file: &TuneFile) -> Result<(Term, Term), ChartError> {
        let mut order: Vec<Term> = Vec::new();
        for term in file
            .objectives
            .iter()
            .map(|o| &o.term)
            .chain(file.constraints.iter().map(|c| &c.term))
        {
            if !order.contains(term) {
                order.push(term.clone());
            }
        }
        let labels = order
            .iter()
            .map(|t| t.label().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let named = |field: &'static str, label: &Option<String>| -> Result<_, ChartError> {
            match label {
                None => Ok(None),
                Some(l) => order
                    .iter()
                    .find(|t| t.label() == l)
                    .cloned()
                    .map(Some)
                    .ok_or_else(|| ChartError::Invalid {
                        field,
                        value: super::table::plain(l),
                        accepted: format!(
                            "accepted: a term of the tune file's objectives or constraints: {labels}"
                        ),
                    }),
            }
        };
        let x = named("--chart-x", &self.x)?;
        let y = named("--chart-y", &self.y)?;
        let taken = [x.clone(), y.clone()];
        let mut free = order
            .iter()
            .filter(|t| !taken.iter().any(|n| n.as_ref() == Some(*t)));
        let x = match x {
            Some(t) => t,
            None => free.next().cloned().ok_or_else(|| too_few(&labels))?,
        };
        let y = match y {
            Some(t) => t,
            None => free.next().cloned().ok_or_else(|| too_few(&labels))?,
        };
        if x == y {
            return Err(ChartError::Invalid {
                field: "--chart-y",
                value: super::table::plain(y.label()),
                accepted: "accepted: a term other than --chart-x's".into(),
            });
        }
        Ok((x, y))
    }
}

fn too_few(labels: &str) -> ChartError {
    ChartError::Invalid {
        field: "--png/--svg",
        value: format!("(the tune file's terms: {labels})"),
        accepted:
            "accepted: a tune file with two terms at least among its objectives and constraints, \
                   since the frontier is drawn as a scatter of two"
                .into(),
    }
}

/// What a point of the chart is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointKind {
    /// On the frontier, and the recommended point.
    Recommended,
    /// On the frontier.
    Frontier,
    /// Meets the constraints, dominated by a frontier point.
    Dominated,
    /// Misses a constraint.
    Infeasible,
}

/// One candidate at its means, with the intervals.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontierPoint {
    /// The x term's statistics.
    pub x: Stat,
    /// The y term's statistics.
    pub y: Stat,
    /// What it is.
    pub kind: PointKind,
    /// Its parameters, `name=value, ...`.
    pub label: String,
}

impl FrontierPoint {
    /// What the chart draws of it: the intervals of a frontier point, the means of another.
    fn bar(&self) -> (Stat, Stat) {
        match self.kind {
            PointKind::Recommended | PointKind::Frontier => (self.x, self.y),
            _ => {
                let at = |s: Stat| Stat {
                    low: s.mean,
                    high: s.mean,
                    ..s
                };
                (at(self.x), at(self.y))
            }
        }
    }
}

/// A tune's frontier, ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct FrontierChart {
    /// First title line.
    pub title: String,
    /// Grey lines under it (split at `\n`).
    pub subtitle: String,
    /// The x axis' name.
    pub x_label: String,
    /// The y axis' name.
    pub y_label: String,
    /// Every candidate with both terms' values: off the frontier first, so the frontier is
    /// drawn over them, then the frontier in grid order.
    pub points: Vec<FrontierPoint>,
}

fn axis_name(term: &Term, file: &TuneFile) -> String {
    let sense = file
        .objectives
        .iter()
        .find(|o| &o.term == term)
        .map(|o| match o.sense {
            Sense::Minimize => " (minimize)",
            Sense::Maximize => " (maximize)",
        });
    let sense = sense.unwrap_or_else(|| {
        if file.constraints.iter().any(|c| &c.term == term) {
            " (constrained)"
        } else {
            ""
        }
    });
    format!("{}{sense}", term.label())
}

impl FrontierChart {
    /// The chart of `report` over the terms `axes` picks.
    pub fn from_report(report: &TuneReport, axes: &FrontierAxes) -> Result<Self, ChartError> {
        let file = &report.file;
        let (tx, ty) = axes.resolve(file)?;
        let mut points = Vec::new();
        let mut front = Vec::new();
        for (i, e) in report.evaluated.iter().enumerate() {
            let (Some(x), Some(y)) = (e.stat(&tx), e.stat(&ty)) else {
                continue;
            };
            let kind = if Some(i) == report.recommended {
                PointKind::Recommended
            } else if report.frontier.contains(&i) {
                PointKind::Frontier
            } else if e.feasible {
                PointKind::Dominated
            } else {
                PointKind::Infeasible
            };
            let point = FrontierPoint {
                x,
                y,
                kind,
                label: e.candidate.describe(file),
            };
            match kind {
                PointKind::Recommended | PointKind::Frontier => front.push(point),
                _ => points.push(point),
            }
        }
        points.extend(front);
        let chosen = match report.recommended {
            Some(i) => format!(
                "ring: the recommended point, {}",
                report.evaluated[i].candidate.describe(file)
            ),
            None => "no candidate meets the constraints: nothing recommended".into(),
        };
        let seeds = report.rungs.last().map_or(file.seeds, |r| r.seeds);
        Ok(FrontierChart {
            title: format!(
                "Tune frontier: {} of {} candidates",
                report.frontier.len(),
                report.evaluated.len()
            ),
            subtitle: format!(
                "blue: the frontier, bars its 95 % intervals over {seeds} seeds; grey: dominated; \
                 hollow: misses a constraint\n{chosen}"
            ),
            x_label: axis_name(&tx, file),
            y_label: axis_name(&ty, file),
            points,
        })
    }

    /// The chart as PNG or SVG bytes, at `size` (or [`DEFAULT_SIZE`]).
    pub fn render(
        &self,
        format: ImageFormat,
        size: Option<ChartSize>,
    ) -> Result<Vec<u8>, ChartError> {
        render(self, format, size.unwrap_or(DEFAULT_SIZE))
    }

    /// Each axis spans every point's mean and the frontier's intervals (the bars drawn), with
    /// 5 % room on each side; a point off the frontier has no bar, and its interval over few
    /// seeds would only squeeze the frontier.
    fn axes(&self) -> (Axis, Axis) {
        let span = |lo: f64, hi: f64| {
            let (lo, hi) = if lo.is_finite() && hi.is_finite() {
                (lo, hi)
            } else {
                (0.0, 1.0)
            };
            let pad = (hi - lo).abs().max(hi.abs().max(lo.abs()) * 0.02).max(1e-9) * 0.05;
            Axis {
                lo: lo - pad,
                hi: hi + pad,
                log: false,
            }
        };
        let fold = |f: fn(&FrontierPoint) -> f64, min: bool| {
            let values = self.points.iter().map(f);
            match min {
                true => values.fold(f64::INFINITY, f64::min),
                false => values.fold(f64::NEG_INFINITY, f64::max),
            }
        };
        (
            span(
                fold(|p| p.bar().0.low, true),
                fold(|p| p.bar().0.high, false),
            ),
            span(
                fold(|p| p.bar().1.low, true),
                fold(|p| p.bar().1.high, false),
            ),
        )
    }
}

impl Drawable for FrontierChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (band, plot) = root.split_vertically(TITLE_H);
        draw_title_lines(&band, &self.title, &self.subtitle, 70, 18)?;
        let (x, y) = self.axes();
        let (width, _) = plot.dim_in_pixel();
        let mut chart = ChartBuilder::on(&plot)
            .margin_top(22)
            .margin_right(24)
            .y_label_area_size(70)
            .x_label_area_size(50)
            .build_cartesian_2d(
                Ticked::new(x, (width / 110).max(2) as usize),
                Ticked::new(y, 6),
            )
            .map_err(draw_error)?;
        draw_mesh(&mut chart, &self.x_label, true)?;
        plot.draw_text(
            &self.y_label,
            &(FONT_FAMILY, 14).into_font().color(&BLACK),
            (8, 2),
        )
        .map_err(draw_error)?;
        for p in &self.points {
            let at = (p.x.mean, p.y.mean);
            match p.kind {
                PointKind::Infeasible => chart
                    .draw_series(std::iter::once(Circle::new(
                        at,
                        OTHER_R,
                        INFEASIBLE_COLOR.stroke_width(1),
                    )))
                    .map_err(draw_error)?,
                PointKind::Dominated => chart
                    .draw_series(std::iter::once(Circle::new(
                        at,
                        OTHER_R,
                        DOMINATED_COLOR.filled(),
                    )))
                    .map_err(draw_error)?,
                PointKind::Frontier | PointKind::Recommended => {
                    let bar = FRONTIER_COLOR.mix(0.6).stroke_width(1);
                    let mut bars = Vec::new();
                    if p.x.high > p.x.low {
                        bars.push(PathElement::new(
                            vec![(p.x.low, p.y.mean), (p.x.high, p.y.mean)],
                            bar,
                        ));
                    }
                    if p.y.high > p.y.low {
                        bars.push(PathElement::new(
                            vec![(p.x.mean, p.y.low), (p.x.mean, p.y.high)],
                            bar,
                        ));
                    }
                    chart.draw_series(bars).map_err(draw_error)?;
                    chart
                        .draw_series(std::iter::once(Circle::new(
                            at,
                            FRONTIER_R,
                            FRONTIER_COLOR.filled(),
                        )))
                        .map_err(draw_error)?
                }
            };
        }
        // The ring and its label last, over everything.
        for p in self
            .points
            .iter()
            .filter(|p| p.kind == PointKind::Recommended)
        {
            let at = (p.x.mean, p.y.mean);
            chart
                .draw_series(std::iter::once(Circle::new(
                    at,
                    RING_R,
                    RING_COLOR.stroke_width(2),
                )))
                .map_err(draw_error)?;
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at(at)
                        + Text::new(
                            p.label.clone(),
                            (14, -24),
                            (FONT_FAMILY, 13).into_font().color(&RING_COLOR),
                        ),
                ))
                .map_err(draw_error)?;
        }
        Ok(())
    }
}

/// The frontier of `report` over `axes` as SVG text (the default size, or `size`).
pub fn frontier_svg(
    report: &TuneReport,
    axes: &FrontierAxes,
    size: Option<ChartSize>,
) -> Result<String, ChartError> {
    let bytes = FrontierChart::from_report(report, axes)?.render(ImageFormat::Svg, size)?;
    String::from_utf8(bytes).map_err(|e| ChartError::Draw(format!("the SVG is not UTF-8: {e}")))
}

/// The frontier of `report` over `axes` as PNG bytes.
pub fn frontier_png(
    report: &TuneReport,
    axes: &FrontierAxes,
    size: Option<ChartSize>,
) -> Result<Vec<u8>, ChartError> {
    FrontierChart::from_report(report, axes)?.render(ImageFormat::Png, size)
}

/// The circles of an SVG as `(cx, cy, r, fill, stroke)`, in drawing order: what the tests
/// read the points back from.
#[cfg(test)]
pub(crate) fn circles(svg: &str) -> Vec<(f64, f64, u32, String, String)> {
    let attr = |tag: &str, name: &str| -> String {
        let key = format!(" {name}=\"");
        tag.find(&key)
            .map(|at| {
                let rest = &tag[at + key.len()..];
                rest[..rest.find('"').unwrap_or(0)].to_string()
            })
            .unwrap_or_default()
    };
    svg.split("<circle")
        .skip(1)
        .map(|tag| {
            let tag = &tag[..tag.find("/>").unwrap_or(tag.len())];
            (
                attr(tag, "cx").parse().unwrap_or(f64::NAN),
                attr(tag, "cy").parse().unwrap_or(f64::NAN),
                attr(tag, "r").parse().unwrap_or(0),
                attr(tag, "fill"),
                attr(tag, "stroke"),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mean: f64, half: f64) -> Stat {
        Stat {
            mean,
            low: mean - half,
            high: mean + half,
            n: 3,
        }
    }

    fn point(x: f64, y: f64, kind: PointKind) -> FrontierPoint {
        FrontierPoint {
            x: stat(x, 0.1),
            y: stat(y, 0.5),
            kind,
            label: format!("x={x}"),
        }
    }

    fn chart() -> FrontierChart {
        FrontierChart {
            title: "t".into(),
            subtitle: "s".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            points: vec![
                point(3.0, 8.0, PointKind::Infeasible),
                point(3.0, 3.0, PointKind::Dominated),
                point(1.0, 10.0, PointKind::Frontier),
                point(2.0, 5.0, PointKind::Recommended),
                point(4.0, 2.0, PointKind::Frontier),
            ],
        }
    }

    #[test]
    fn points_sit_where_their_means_map_and_the_ring_is_on_the_recommended_one() {
        let svg = String::from_utf8(chart().render(ImageFormat::Svg, None).unwrap()).unwrap();
        let all = circles(&svg);
        let front: Vec<_> = all.iter().filter(|c| c.2 == FRONTIER_R).collect();
        assert_eq!(front.len(), 3, "{all:?}");
        // Drawn in the chart's order: (1, 10), (2, 5), (4, 2).
        let (a, b, c) = (front[0], front[1], front[2]);
        // A linear axis maps x = 1, 2, 4 to pixels a third and all of the way from the first
        // (within the pixel rounding of each end), y = 10, 5, 2 likewise, the y axis upwards.
        let third = (b.0 - a.0) / (c.0 - a.0);
        assert!((third - 1.0 / 3.0).abs() < 0.01, "{third}");
        let y_share = (b.1 - a.1) / (c.1 - a.1);
        assert!((y_share - 5.0 / 8.0).abs() < 0.01, "{y_share}");
        assert!(a.0 < b.0 && b.0 < c.0 && a.1 < b.1 && b.1 < c.1);
        // The grey points by the same mapping: x = 3 is two thirds of the way, y = 3 is 7/8.
        let px = |x: f64| a.0 + (c.0 - a.0) * (x - 1.0) / 3.0;
        let py = |y: f64| a.1 + (c.1 - a.1) * (10.0 - y) / 8.0;
        let others: Vec<_> = all.iter().filter(|c| c.2 == OTHER_R).collect();
        assert_eq!(others.len(), 2);
        assert!((others[0].0 - px(3.0)).abs() <= 1.5 && (others[0].1 - py(8.0)).abs() <= 1.5);
        assert_eq!(others[0].3, "none", "an infeasible point is hollow");
        assert!((others[1].0 - px(3.0)).abs() <= 1.5 && (others[1].1 - py(3.0)).abs() <= 1.5);
        assert_ne!(others[1].3, "none", "a dominated one filled");
        // Exactly one ring, centred on the recommended point (2, 5), not on another.
        let rings: Vec<_> = all.iter().filter(|c| c.2 == RING_R).collect();
        assert_eq!(rings.len(), 1);
        assert_eq!((rings[0].0, rings[0].1), (b.0, b.1));
        assert_eq!(rings[0].3, "none");
        // Inside the picture.
        for p in &all {
            assert!(
                p.0 > 70.0 && p.0 < 1000.0 && p.1 > 78.0 && p.1 < 700.0,
                "{p:?}"
            );
        }
    }

    #[test]
    fn the_error_bars_span_the_intervals() {
        let svg = String::from_utf8(chart().render(ImageFormat::Svg, None).unwrap()).unwrap();
        // Six bars (two a frontier point), each a two-point polyline.
        let bars: Vec<&str> = svg
            .split("<polyline")
            .skip(1)
            .filter(|t| t.contains(&format!("stroke=\"{}\"", palette::hex(palette::BLUE))))
            .collect();
        assert_eq!(bars.len(), 6, "{svg}");
        // The x bar of (1, 10) is 0.2 wide, the axis 1 to 4 spans 3 per (c.0 - a.0) pixels.
        let front: Vec<_> = circles(&svg)
            .into_iter()
            .filter(|c| c.2 == FRONTIER_R)
            .collect();
        let per_unit = (front[2].0 - front[0].0) / 3.0;
        let points = |tag: &str| -> Vec<(f64, f64)> {
            let at = tag.find("points=\"").unwrap() + 8;
            tag[at..tag[at..].find('"').unwrap() + at]
                .split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        };
        let first = points(bars[0]);
        assert!(
            (first[1].0 - first[0].0 - 0.2 * per_unit).abs() <= 1.5,
            "{first:?}"
        );
        assert_eq!(first[0].1, front[0].1);
    }

    #[test]
    fn the_same_chart_gives_the_same_bytes() {
        let c = chart();
        for format in [ImageFormat::Svg, ImageFormat::Png] {
            assert_eq!(
                c.render(format, None).unwrap(),
                c.render(format, None).unwrap()
            );
        }
    }
}
