//! The series chart of a call-loop run: a row per strategy, in the report's order,
//! of three panels sharing one time axis — calls started, succeeded, timed out and refused per
//! second; requests in the server; p50 and p99 latency of the successful attempts — and with
//! browser tabs a fourth, after the first: the attempts sent by visible and by hidden tabs
//! per second. A panel with nothing to draw says so in words instead of a 0-to-1 scale. Every
//! trigger (`--spike`, `--outage`, `--degrade`, a `down` server until `--recover-at`) is shaded as
//! a translucent band on every panel and named in small text. A panel kind's value axis is
//! shared by all strategies, so rows compare at a glance ([`CountScale::Shared`], the default),
//! or fitted to each panel's own values ([`CountScale::PerPanel`]); a log axis is refused, as
//! most windows of a series hold zeros.
//!
//! Drawn from the report's [`crate::overload::Series`] rows, which leave out the windows in
//! which nothing happened and the server held nothing: those are zeros here, as the series'
//! rule says. A latency exists only for windows with a success; the latency lines are broken
//! where a window has none (an isolated window is a dot), never drawn as 0.
//!
//! When there are more windows than pixel columns, consecutive windows are grouped so there are
//! at most about as many points as columns, and each group shows its largest value (an
//! envelope: a peak is never averaged away). Points are made per group, not per window, so the
//! chart holds O(plot width) points whatever the run's length. Each value is drawn at its
//! group's centre. Pure: no I/O.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{number, Axis, Ticked};
use super::histogram::CountScale;
use super::palette;
use super::{
    draw_caption, draw_error, draw_mesh, draw_title_lines, render, ChartError, ChartSize, Drawable,
    ImageFormat, FONT_FAMILY,
};
use crate::config::{Scenario, ServerModel};
use crate::experiment::Report;
use crate::report::{call_loop_scenario, fixed, seconds};
use crate::series::SeriesRow;
use crate::time::SimDuration;
use crate::workload::Arrivals;

mod points;
#[cfg(test)]
mod tests;

use self::points::points;
pub use self::points::{Measure, PanelKind};

/// What a trigger band stands for; it picks the band's colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// `--outage`: requests refused at once.
    Outage,
    /// `--spike`: the call rate changed.
    Spike,
    /// `--degrade`: capacity times a factor.
    Degrade,
    /// The `down` server, until `--recover-at` (or for ever).
    Down,
}

/// Opacity of a trigger band over the white plot.
pub const BAND_ALPHA: f64 = 0.16;

impl TriggerKind {
    /// The band's colour before [`BAND_ALPHA`] is applied, as RGB bytes.
    pub const fn rgb(self) -> (u8, u8, u8) {
        match self {
            TriggerKind::Outage | TriggerKind::Down => palette::VERMILLION,
            TriggerKind::Spike => palette::ORANGE,
            TriggerKind::Degrade => palette::REDDISH_PURPLE,
        }
    }
}

/// A trigger's interval `[from_s, to_s)` and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerBand {
    /// What it is.
    pub kind: TriggerKind,
    /// Start, seconds.
    pub from_s: f64,
    /// End, seconds; `None` for a `down` server that never recovers (the band reaches the end
    /// of the time axis).
    pub to_s: Option<f64>,
    /// Small text in the band: `outage`, `spike 120/s`, `degrade ×0.5`.
    pub label: String,
}

/// One strategy's row. The rows are borrowed from the report: the chart copies no series.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategySeries<'a> {
    /// The strategy's name (caption start).
    pub name: String,
    /// The rest of the caption, in grey: calls, amplification, goodput, recovery.
    pub note: String,
    /// The series rows written, in window order (missing windows are zeros).
    pub rows: &'a [SeriesRow],
}

/// Time-series panels of a call-loop report. See the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesChart<'a> {
    /// First line of the title: the load.
    pub title: String,
    /// The server and the clients, one line each (`\n` between).
    pub subtitle: String,
    /// The series' window.
    pub bin: SimDuration,
    /// One row of panels per strategy, top to bottom.
    pub strategies: Vec<StrategySeries<'a>>,
    /// The trigger bands, drawn on every panel.
    pub triggers: Vec<TriggerBand>,
    /// Whether a panel kind's value axis is shared by the rows or fitted to each panel.
    pub scale: CountScale,
    /// True when the run modelled browser tabs: a fourth panel splits the attempts by the
    /// sending tab's visibility.
    pub tabs: bool,
}

/// Pixel layout: the title band (two subtitle lines), the column headings (name and legend),
/// each row's caption, the bottom axis band, each panel's label band and right margin.
const TITLE_H: u32 = 80;
const HEADER_H: u32 = 42;
const CAPTION_H: u32 = 22;
const X_AXIS_H: u32 = 48;
const Y_LABELS_W: u32 = 64;
const RIGHT_MARGIN: u32 = 18;
const TOP_MARGIN: u32 = 6;
/// Smallest plot that still reads, and the default plot height and picture width.
const MIN_PLOT_H: u32 = 40;
const MIN_PLOT_W: u32 = 60;
const PANEL_PLOT_H: u32 = 150;
const DEFAULT_WIDTH: u32 = 1500;
/// The default width with browser tabs (four panels a row).
const DEFAULT_WIDTH_TABS: u32 = 1900;
/// Room above the largest value, as a fraction of it.
const HEADROOM: f64 = 0.08;

impl<'a> SeriesChart<'a> {
    /// The chart of a call-loop `report` of `scenario` (whose triggers it marks), its value
    /// axes as `scale` says. A report that is not of call-loop runs is an error (the herd's
    /// chart is the histogram), and so is a scale [`Self::check_scale`] refuses.
    pub fn from_report(
        report: &'a Report,
        scenario: &Scenario,
        scale: CountScale,
    ) -> Result<SeriesChart<'a>, ChartError> {
        Self::check_scale(scale)?;
        let Some([load, server, clients]) = call_loop_scenario(report) else {
            return Err(ChartError::Draw(
                "the series chart needs a call-loop run".into(),
            ));
        };
        let first = &report.results[0];
        let mut strategies = Vec::new();
        let mut bin = SimDuration::from_secs(1);
        let mut tabs = false;
        for r in &report.results {
            let Some(c) = &r.calls else {
                return Err(ChartError::Draw(
                    "the series chart needs a call-loop run".into(),
                ));
            };
            bin = c.series.bin;
            tabs |= c.series.tabs;
            let recovery = match (c.trigger_end_s, c.recovered_at_s) {
                (None, _) => String::new(),
                (Some(_), None) => " · stuck: never recovers".into(),
                (Some(_), Some(t)) => format!(" · recovered at {}", seconds(t)),
            };
            strategies.push(StrategySeries {
                name: r.strategy.name().to_string(),
                note: format!(
                    "{} calls · {} attempts (×{}) · goodput {}% · {} timed out · {} refused{recovery}",
                    c.calls,
                    c.attempts,
                    fixed(c.amplification, 2),
                    fixed(c.goodput_pct, 1),
                    c.timed_out,
                    c.refusals_read
                ),
                rows: &c.series.rows,
            });
        }
        Ok(SeriesChart {
            title: load,
            subtitle: format!("{server}\n{clients} · seed {}", first.seed),
            bin,
            strategies,
            triggers: trigger_bands(scenario),
            scale,
            tabs,
        })
    }

    /// The panels of each row, left to right.
    pub fn panels(&self) -> &'static [PanelKind] {
        match self.tabs {
            true => &PanelKind::WITH_TABS,
            false => &PanelKind::ALL,
        }
    }

    /// Refuses [`CountScale::Log`]: a series is mostly zeros, which a log axis cannot show.
    /// Callers check before simulating.
    pub fn check_scale(scale: CountScale) -> Result<(), ChartError> {
        if scale == CountScale::Log {
            return Err(ChartError::Invalid {
                field: "--chart-scale",
                value: scale.name().into(),
                accepted: "a call-loop run's series chart takes shared or per-panel (its \
                           windows are mostly zeros, which a log axis cannot show)"
                    .into(),
            });
        }
        Ok(())
    }

    /// The default picture size: 1500 pixels wide (1900 with browser tabs), 150 pixels of
    /// plot per strategy.
    pub fn default_size(&self) -> ChartSize {
        let n = self.strategies.len().max(1) as u32;
        ChartSize {
            width: if self.tabs {
                DEFAULT_WIDTH_TABS
            } else {
                DEFAULT_WIDTH
            },
            height: TITLE_H + HEADER_H + X_AXIS_H + n * (CAPTION_H + PANEL_PLOT_H),
        }
    }

    /// Refuses a size too small for `strategies` rows of three readable panels; callers check
    /// before simulating so a bad size fails at once.
    pub fn check_size(strategies: usize, size: ChartSize) -> Result<(), ChartError> {
        Self::check_size_of(strategies, PanelKind::ALL.len(), size)
    }

    /// [`Self::check_size`] for the chart of `scenario`: its strategies, and four panels a row
    /// when it models browser tabs.
    pub fn check_size_for(scenario: &Scenario, size: ChartSize) -> Result<(), ChartError> {
        let panels = match scenario.browser.is_active() {
            true => PanelKind::WITH_TABS.len(),
            false => PanelKind::ALL.len(),
        };
        Self::check_size_of(scenario.strategies.len(), panels, size)
    }

    fn check_size_of(strategies: usize, panels: usize, size: ChartSize) -> Result<(), ChartError> {
        let n = strategies.max(1) as u32;
        let min_height = TITLE_H + HEADER_H + X_AXIS_H + n * (CAPTION_H + MIN_PLOT_H);
        let min_width = panels as u32 * (Y_LABELS_W + RIGHT_MARGIN + MIN_PLOT_W);
        if size.height < min_height || size.width < min_width {
            return Err(ChartError::Invalid {
                field: "--chart-size",
                value: size.to_string(),
                accepted: format!(
                    "the series chart's {n} row{} of {panels} panels need at least {min_width}x{min_height} pixels",
                    if n == 1 { "" } else { "s" }
                ),
            });
        }
        Ok(())
    }

    /// The chart as PNG or SVG bytes, at `size` (or [`Self::default_size`]).
    pub fn render(
        &self,
        format: ImageFormat,
        size: Option<ChartSize>,
    ) -> Result<Vec<u8>, ChartError> {
        let size = size.unwrap_or_else(|| self.default_size());
        Self::check_size_of(self.strategies.len(), self.panels().len(), size)?;
        render(self, format, size)
    }

    /// Plot height of each row at picture height `height`, and the pixels left over (given to
    /// the title band so every row's plots are the same height).
    fn plot_height(&self, height: u32) -> (u32, u32) {
        let n = self.strategies.len().max(1) as u32;
        let free = height - TITLE_H - HEADER_H - X_AXIS_H;
        let per_row = free / n;
        (per_row - CAPTION_H, free - per_row * n)
    }

    fn bin_s(&self) -> f64 {
        self.bin.as_secs_f64()
    }

    /// Windows the time axis spans: to the end of the last window written by any strategy
    /// and of every trigger that ends; at least one.
    fn windows(&self) -> u64 {
        let bin = self.bin.as_nanos().max(1);
        let rows = self
            .strategies
            .iter()
            .filter_map(|s| s.rows.last())
            .map(|r| r.window.saturating_add(1))
            .max()
            .unwrap_or(0);
        let triggers = self
            .triggers
            .iter()
            .filter_map(|t| t.to_s)
            .map(|s| ((s * 1e9).round() as u64).div_ceil(bin))
            .max()
            .unwrap_or(0);
        rows.max(triggers).max(1)
    }

    /// The time axis: from 0 to the end of the last window (exactly; no padding).
    pub(crate) fn time_axis(&self) -> Axis {
        Axis {
            lo: 0.0,
            hi: self.windows() as f64 * self.bin_s(),
            log: false,
        }
    }

    /// The value axis of a panel kind in row `index`: over every row's values, or over the
    /// row's own with [`CountScale::PerPanel`]; `None` when there is nothing to draw (no
    /// value above 0), which the panel says in words instead of a scale of 0 to 1.
    fn value_axis(&self, kind: PanelKind, index: usize) -> Option<Axis> {
        let bin_s = self.bin_s();
        let largest = self
            .strategies
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.scale != CountScale::PerPanel || i == index)
            .flat_map(|(_, s)| s.rows.iter())
            .flat_map(|row| kind.measures().iter().filter_map(|m| m.value(row, bin_s)))
            .fold(0.0, f64::max);
        (largest > 0.0).then_some(Axis {
            lo: 0.0,
            hi: largest * (1.0 + HEADROOM),
            log: false,
        })
    }

    fn draw_title<DB: DrawingBackend>(
        &self,
        band: &DrawingArea<DB, Shift>,
    ) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        draw_title_lines(band, &self.title, &self.subtitle, Y_LABELS_W as i32, 18)?;
        Ok(())
    }

    /// A column's heading: the panel's name, then its legend.
    fn draw_heading<DB: DrawingBackend>(
        &self,
        kind: PanelKind,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let x = Y_LABELS_W as i32;
        area.draw_text(
            &kind.heading(self.bin),
            &(FONT_FAMILY, 15).into_font().color(&BLACK),
            (x, 2),
        )
        .map_err(draw_error)?;
        let style = (FONT_FAMILY, 13).into_font().color(&BLACK);
        let mut left = x;
        for m in kind.measures() {
            let (r, g, b) = m.rgb();
            area.draw(&Rectangle::new(
                [(left, 27), (left + 16, 30)],
                RGBColor(r, g, b).filled(),
            ))
            .map_err(draw_error)?;
            left += 20;
            area.draw_text(m.name(), &style, (left, 21))
                .map_err(draw_error)?;
            let (w, _) = area
                .estimate_text_size(m.name(), &style)
                .map_err(draw_error)?;
            left += w as i32 + 14;
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        kind: PanelKind,
        index: usize,
        area: &DrawingArea<DB, Shift>,
        last: bool,
    ) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let series = &self.strategies[index];
        let time = self.time_axis();
        let fitted = self.value_axis(kind, index);
        let value = fitted.unwrap_or(Axis {
            lo: 0.0,
            hi: 1.0,
            log: false,
        });
        let (width, height) = area.dim_in_pixel();
        let plot_h = height.saturating_sub(if last { X_AXIS_H } else { 0 } + TOP_MARGIN);
        let mut y = Ticked::new(value, ((plot_h / 32).max(2)) as usize);
        if kind == PanelKind::InSystem {
            y = y.whole_numbers();
        }
        if fitted.is_none() {
            // Nothing to draw: the base line reads 0 for counts, a latency has no scale.
            y = y.empty(kind != PanelKind::Latency);
        }
        let mut chart = ChartBuilder::on(area)
            .margin_top(TOP_MARGIN)
            .margin_right(RIGHT_MARGIN)
            .y_label_area_size(Y_LABELS_W)
            .x_label_area_size(if last { X_AXIS_H } else { 0 })
            .build_cartesian_2d(Ticked::new(time, ((width / 110).max(2)) as usize), y)
            .map_err(draw_error)?;
        draw_mesh(&mut chart, if last { "time (s)" } else { "" }, true)?;
        let plotting = chart.plotting_area();
        let (x0, x1) = (time.range().start, time.range().end);
        let (y0, y1) = (value.range().start, value.range().end);

        // Bands first, so the lines stay their own colours on top of them.
        let label = (FONT_FAMILY, 11)
            .into_font()
            .color(&RGBColor(70, 70, 70))
            .pos(Pos::new(HPos::Left, VPos::Top));
        for band in &self.triggers {
            let from = band.from_s.clamp(x0, x1);
            let to = band.to_s.unwrap_or(x1).clamp(x0, x1);
            if to <= from {
                continue;
            }
            let (r, g, b) = band.kind.rgb();
            plotting
                .draw(&Rectangle::new(
                    [(from, y0), (to, y1)],
                    RGBColor(r, g, b).mix(BAND_ALPHA).filled(),
                ))
                .map_err(draw_error)?;
            plotting
                .draw(
                    &(EmptyElement::at((from, y1))
                        + Text::new(band.label.clone(), (3, 2), label.clone())),
                )
                .map_err(draw_error)?;
        }
        let plot_w = u64::from(plotting.dim_in_pixel().0.max(1));
        let group = self.windows().div_ceil(plot_w).max(1);
        for &m in kind.measures() {
            let (r, g, b) = m.rgb();
            let color = RGBColor(r, g, b);
            for segment in points(series.rows, m, self.bin, group, self.windows()) {
                if segment.len() == 1 {
                    plotting
                        .draw(&Circle::new(segment[0], 2, color.filled()))
                        .map_err(draw_error)?;
                } else {
                    plotting
                        .draw(&PathElement::new(segment, color.stroke_width(m.stroke())))
                        .map_err(draw_error)?;
                }
            }
        }
        if fitted.is_none() {
            let note = (FONT_FAMILY, 13)
                .into_font()
                .color(&RGBColor(110, 110, 110))
                .pos(Pos::new(HPos::Center, VPos::Center));
            plotting
                .draw(&Text::new(
                    kind.empty(),
                    ((x0 + x1) / 2.0, (y0 + y1) / 2.0),
                    note,
                ))
                .map_err(draw_error)?;
        }
        // The base line last: a line along 0 shows just above it.
        plotting
            .draw(&PathElement::new(
                [(x0, y0), (x1, y0)],
                RGBColor(120, 120, 120),
            ))
            .map_err(draw_error)?;
        Ok(())
    }
}

/// The bands of `scenario`'s triggers: spikes, outages, degradations, and a `down` server
/// until it recovers.
pub fn trigger_bands(scenario: &Scenario) -> Vec<TriggerBand> {
    let mut bands = Vec::new();
    if let ServerModel::Down { recover_at } = scenario.server {
        bands.push(TriggerBand {
            kind: TriggerKind::Down,
            from_s: 0.0,
            to_s: recover_at.map(SimDuration::as_secs_f64),
            label: "down".into(),
        });
    }
    if let Arrivals::Poisson(schedule) = &scenario.overload.arrivals {
        for spike in &schedule.spikes {
            bands.push(TriggerBand {
                kind: TriggerKind::Spike,
                from_s: spike.from.as_secs_f64(),
                to_s: Some(spike.to.as_secs_f64()),
                label: format!("spike {}/s", number(spike.rate)),
            });
        }
    }
    let triggers = &scenario.overload.triggers;
    for &(from, to) in &triggers.outages {
        bands.push(TriggerBand {
            kind: TriggerKind::Outage,
            from_s: from.as_secs_f64(),
            to_s: Some(to.as_secs_f64()),
            label: "outage".into(),
        });
    }
    for d in &triggers.degrades {
        bands.push(TriggerBand {
            kind: TriggerKind::Degrade,
            from_s: d.from.as_secs_f64(),
            to_s: Some(d.to.as_secs_f64()),
            label: format!("degrade ×{}", number(d.factor)),
        });
    }
    bands
}

impl Drawable for SeriesChart<'_> {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (_, height) = root.dim_in_pixel();
        let (plot_h, spare) = self.plot_height(height);
        let (title, rest) = root.split_vertically(TITLE_H + spare);
        self.draw_title(&title)?;
        let (header, mut rest) = rest.split_vertically(HEADER_H);
        let panels = self.panels();
        for (kind, column) in panels.iter().zip(header.split_evenly((1, panels.len()))) {
            self.draw_heading(*kind, &column)?;
        }
        let n = self.strategies.len();
        for (index, series) in self.strategies.iter().enumerate() {
            let last = index + 1 == n;
            let (area, below) = if last {
                let whole = rest.clone();
                (whole, rest)
            } else {
                rest.split_vertically(CAPTION_H + plot_h)
            };
            let (caption, body) = area.split_vertically(CAPTION_H);
            draw_caption(&caption, &series.name, &series.note, Y_LABELS_W as i32)?;
            for (kind, column) in panels.iter().zip(body.split_evenly((1, panels.len()))) {
                self.draw_panel(*kind, index, &column, last)?;
            }
            rest = below;
        }
        if n == 0 {
            rest.draw_text(
                "no results",
                &(FONT_FAMILY, 15).into_font().color(&BLACK),
                (Y_LABELS_W as i32, 4),
            )
            .map_err(draw_error)?;
        }
        Ok(())
    }
}
