//! The per-window histogram chart: one panel per run (in the report's order, which is the
//! table's), stacked under one title, sharing the time axis, with each panel's peak marked
//! with its value. A panel holds one or more stacked [`Layer`]s (retries; or served and
//! refused against a rate limit) and optional vertical markers (a limiter's window
//! boundaries), so a server model with more to say needs no new chart.
//!
//! Count axis: [`CountScale::Shared`] (the default) gives every panel the same linear axis, so
//! walls and drizzle compare at a glance; [`CountScale::Log`] shares a log axis, so a drizzle
//! beside a 4000-retry wall stays readable; [`CountScale::PerPanel`] fits each panel to its own
//! peak. A non-empty window is always at least one pixel tall, whatever the scale.
//!
//! When there are more windows than pixel columns, each column shows the tallest window it
//! covers (an envelope): the peak is never averaged away. Pure: no I/O.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{number, Axis, Ticked};
use super::palette;
use super::{
    draw_caption, draw_error, draw_mesh, draw_title_lines, render, ChartError, ChartSize, Drawable,
    ImageFormat, FONT_FAMILY,
};
use crate::config::{human_bytes, Scenario};
use crate::experiment::{Report, RunResult};
use crate::metrics::Histogram;
use crate::report::seconds;
use crate::time::SimDuration;

/// How the count axes of the panels relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CountScale {
    /// One linear axis for all panels, from 0 to the largest peak.
    #[default]
    Shared,
    /// One base-10 log axis for all panels.
    Log,
    /// Each panel's linear axis fitted to its own peak.
    PerPanel,
}

impl CountScale {
    /// The names `--chart-scale` accepts.
    pub const NAMES: [&'static str; 3] = ["shared", "log", "per-panel"];

    /// The name of this scale.
    pub fn name(self) -> &'static str {
        match self {
            CountScale::Shared => "shared",
            CountScale::Log => "log",
            CountScale::PerPanel => "per-panel",
        }
    }
}

/// The colour role of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Retries (the palette's blue).
    Retries,
    /// Requests the server served (bluish green).
    Served,
    /// Requests the server refused (vermillion).
    Refused,
}

impl Tone {
    /// The fill colour, as RGB bytes (public so tests can find the bars in a picture).
    pub const fn rgb(self) -> (u8, u8, u8) {
        match self {
            Tone::Retries => palette::RETRIES,
            Tone::Served => palette::SERVED,
            Tone::Refused => palette::REFUSED,
        }
    }

    fn color(self) -> RGBColor {
        let (r, g, b) = self.rgb();
        RGBColor(r, g, b)
    }
}

/// One stacked series of a panel: a count per window, window 0 first.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Legend name (`retries`, `served`, `refused`).
    pub name: String,
    /// Counts per window.
    pub counts: Vec<u64>,
    /// Colour role.
    pub tone: Tone,
}

/// One panel: a caption, layers stacked bottom to top in order, and vertical markers.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Caption start, e.g. the strategy name.
    pub label: String,
    /// Rest of the caption, in grey (peak, windows, span).
    pub note: String,
    /// Stacked layers, bottom first.
    pub layers: Vec<Layer>,
    /// Times (seconds) to mark with a vertical line, e.g. a limiter's window boundaries.
    pub markers_s: Vec<f64>,
}

impl Panel {
    /// Windows this panel spans (the longest layer).
    pub fn window_count(&self) -> usize {
        self.layers
            .iter()
            .map(|l| l.counts.len())
            .max()
            .unwrap_or(0)
    }

    /// The stacked total of window `w`.
    pub fn total_at(&self, w: usize) -> u64 {
        self.layers
            .iter()
            .map(|l| l.counts.get(w).copied().unwrap_or(0))
            .sum()
    }

    /// The largest stacked total and the first window holding it; `(0, 0)` when empty.
    pub fn peak(&self) -> (u64, usize) {
        let mut best = (0, 0);
        for w in 0..self.window_count() {
            let total = self.total_at(w);
            if total > best.0 {
                best = (total, w);
            }
        }
        best
    }
}

/// A stack of histogram panels sharing a time axis. See the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramChart {
    /// First line of the title: the scenario.
    pub title: String,
    /// Second line: what is counted, the server, the scale. Each `\n` starts a further line,
    /// and the title band grows to hold it.
    pub subtitle: String,
    /// Name of the time axis.
    pub time_label: String,
    /// Window width in seconds.
    pub bin_s: f64,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
    /// How the count axes relate.
    pub scale: CountScale,
}

/// Pixel layout constants: the title band, each panel's caption band, the bottom axis band,
/// the left label band, and the smallest plot height that still reads.
const TITLE_H: u32 = 62;
/// Height of each subtitle line after the first.
const SUBTITLE_LINE_H: u32 = 18;
const CAPTION_H: u32 = 22;
const X_AXIS_H: u32 = 48;
const Y_LABELS_W: u32 = 64;
const RIGHT_MARGIN: u32 = 28;
const MIN_PLOT_H: u32 = 40;
/// Default plot height per panel, and default width.
const PANEL_PLOT_H: u32 = 130;
const DEFAULT_WIDTH: u32 = 1200;
/// The colour of the vertical markers, and their legend entry (the only markers drawn are a
/// limiter's window starts).
const MARKER_COLOR: RGBColor = RGBColor(150, 150, 150);
const MARKER_LEGEND: &str = "limiter window opens";
/// Room right of the last window, as a fraction of the time span, so the last bar stands
/// clear of the plot's right edge instead of being cut by it.
const TIME_PAD: f64 = 0.01;
/// Room above the tallest bar for its peak label, in pixels.
const PEAK_LABEL_H: f64 = 20.0;

impl HistogramChart {
    /// The histograms of `report`, one panel per run in report order: retries per window
    /// against the `down` server; against a rate limiter, every request per window split into
    /// served (bottom) and refused (top), with the limiter's window starts marked when the
    /// report has them (`window_starts_s`).
    /// A histogram whose dense counts the system refuses to hold is an error naming `--bin`.
    pub fn from_report(report: &Report, scale: CountScale) -> Result<HistogramChart, ChartError> {
        let panels = report
            .results
            .iter()
            .map(|r| {
                if r.rate_limited {
                    limited_panel(r)
                } else {
                    retries_panel(r)
                }
            })
            .collect::<Result<_, _>>()?;
        let (title, subtitle, time_label, bin_s) = match report.results.first() {
            Some(r) if r.rate_limited => (
                format!(
                    "{} client{}, {}, latency {}, retries {}, base {}, cap {}, seed {}",
                    r.clients,
                    if r.clients == 1 { "" } else { "s" },
                    r.work,
                    r.latency,
                    r.retries,
                    seconds(r.base_s),
                    seconds(r.cap_s),
                    r.seed
                ),
                format!(
                    "server {}\nrequests per {} window{} · count axis {}",
                    r.server,
                    window_width(r.bin_s),
                    match &r.over_replicates {
                        Some(spread) => format!(" · replicate 0 of {}", spread.replicates),
                        None => String::new(),
                    },
                    scale.name()
                ),
                "time since the clients started (s)",
                r.bin_s,
            ),
            Some(r) => (
                format!(
                    "{} clients, {} retries, base {}, cap {}, seed {}",
                    r.clients,
                    r.retries,
                    seconds(r.base_s),
                    seconds(r.cap_s),
                    r.seed
                ),
                format!(
                    "retries per {} window · multiplier {} · server {} · count axis {}",
                    window_width(r.bin_s),
                    r.multiplier,
                    r.server,
                    scale.name()
                ),
                "time since the herd failed (s)",
                r.bin_s,
            ),
            None => (
                "no results".into(),
                String::new(),
                "time since the herd failed (s)",
                0.1,
            ),
        };
        Ok(HistogramChart {
            title,
            subtitle,
            time_label: time_label.into(),
            bin_s,
            panels,
            scale,
        })
    }

    /// The default picture size: 1200 pixels wide, 130 pixels of plot per panel.
    pub fn default_size(&self) -> ChartSize {
        let n = self.panels.len().max(1) as u32;
        ChartSize {
            width: DEFAULT_WIDTH,
            height: self.title_height() + X_AXIS_H + n * (CAPTION_H + PANEL_PLOT_H),
        }
    }

    /// Refuses a size too short to give each of `panels` panels a readable plot under a
    /// one-line subtitle (the chart of a run against the `down` server); callers check before
    /// simulating so a bad size fails at once.
    pub fn check_size(panels: usize, size: ChartSize) -> Result<(), ChartError> {
        Self::check_height(panels, TITLE_H, size)
    }

    /// [`Self::check_size`] for the chart [`Self::from_report`] will draw of `scenario`:
    /// against a rate limiter its subtitle takes two lines.
    pub fn check_size_for(scenario: &Scenario, size: ChartSize) -> Result<(), ChartError> {
        let title_h = if scenario.server.is_limited() {
            TITLE_H + SUBTITLE_LINE_H
        } else {
            TITLE_H
        };
        Self::check_height(scenario.strategies.len(), title_h, size)
    }

    /// The height of the title band: the title and every subtitle line.
    fn title_height(&self) -> u32 {
        let lines = self.subtitle.split('\n').count() as u32;
        TITLE_H + SUBTITLE_LINE_H * (lines - 1)
    }

    fn check_height(panels: usize, title_h: u32, size: ChartSize) -> Result<(), ChartError> {
        let n = panels.max(1) as u32;
        let min_height = title_h + X_AXIS_H + n * (CAPTION_H + MIN_PLOT_H);
        if size.height < min_height {
            return Err(ChartError::Invalid {
                field: "--chart-size",
                value: size.to_string(),
                accepted: format!("{n} panels need a height of at least {min_height} pixels"),
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
        Self::check_height(self.panels.len(), self.title_height(), size)?;
        render(self, format, size)
    }

    /// Plot height of each panel at picture height `height`, and the pixels left over
    /// (given to the title band so every panel's plot is exactly the same height).
    fn plot_height(&self, height: u32) -> (u32, u32) {
        let n = self.panels.len().max(1) as u32;
        let free = height - self.title_height() - X_AXIS_H;
        let per_panel = free / n;
        (per_panel - CAPTION_H, free - per_panel * n)
    }

    /// The count axis of panel `index` given each panel's plot height.
    fn count_axis(&self, index: usize, plot_h: u32) -> Axis {
        let peak = match self.scale {
            CountScale::PerPanel => self.panels[index].peak().0,
            CountScale::Shared | CountScale::Log => {
                self.panels.iter().map(|p| p.peak().0).max().unwrap_or(0)
            }
        }
        .max(1) as f64;
        let room = PEAK_LABEL_H / (f64::from(plot_h) - PEAK_LABEL_H).max(1.0);
        if self.scale == CountScale::Log {
            let lo = 0.5f64;
            let decades = peak.log10() - lo.log10();
            Axis {
                lo,
                hi: 10f64.powf(peak.log10() + decades * room),
                log: true,
            }
        } else {
            Axis {
                lo: 0.0,
                hi: peak * (1.0 + room),
                log: false,
            }
        }
    }

    fn time_axis(&self) -> Axis {
        let windows = self
            .panels
            .iter()
            .map(Panel::window_count)
            .max()
            .unwrap_or(0);
        let markers = self
            .panels
            .iter()
            .flat_map(|p| p.markers_s.iter().copied())
            .fold(0.0, f64::max);
        let span = (windows.max(1) as f64 * self.bin_s).max(markers);
        Axis {
            lo: 0.0,
            hi: span * (1.0 + TIME_PAD),
            log: false,
        }
    }

    fn draw_title<DB: DrawingBackend>(
        &self,
        band: &DrawingArea<DB, Shift>,
    ) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let line_y = draw_title_lines(
            band,
            &self.title,
            &self.subtitle,
            Y_LABELS_W as i32,
            SUBTITLE_LINE_H as i32,
        )?;
        // A legend only when a panel stacks more than one layer.
        let mut legend: Vec<(&str, Tone)> = Vec::new();
        for layer in self.panels.iter().flat_map(|p| &p.layers) {
            if !legend.iter().any(|(n, _)| *n == layer.name) {
                legend.push((&layer.name, layer.tone));
            }
        }
        let marked = self.panels.iter().any(|p| !p.markers_s.is_empty());
        if legend.len() > 1 || marked {
            let style = (FONT_FAMILY, 14).into_font().color(&BLACK);
            let mut right = band.dim_in_pixel().0 as i32 - RIGHT_MARGIN as i32;
            if marked {
                let (w, _) = band
                    .estimate_text_size(MARKER_LEGEND, &style)
                    .map_err(draw_error)?;
                right -= w as i32;
                band.draw_text(MARKER_LEGEND, &style, (right, line_y))
                    .map_err(draw_error)?;
                band.draw(&Rectangle::new(
                    [(right - 12, line_y), (right - 11, line_y + 16)],
                    MARKER_COLOR.filled(),
                ))
                .map_err(draw_error)?;
                right -= 32;
            }
            for (name, tone) in legend.iter().rev() {
                let (w, _) = band.estimate_text_size(name, &style).map_err(draw_error)?;
                right -= w as i32;
                band.draw_text(name, &style, (right, line_y))
                    .map_err(draw_error)?;
                band.draw(&Rectangle::new(
                    [(right - 18, line_y + 2), (right - 6, line_y + 14)],
                    tone.color().filled(),
                ))
                .map_err(draw_error)?;
                right -= 32;
            }
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        index: usize,
        area: &DrawingArea<DB, Shift>,
        plot_h: u32,
        last: bool,
    ) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let panel = &self.panels[index];
        let (caption, body) = area.split_vertically(CAPTION_H);
        draw_caption(&caption, &panel.label, &panel.note, Y_LABELS_W as i32)?;

        let time = self.time_axis();
        let count = self.count_axis(index, plot_h);
        let width = area.dim_in_pixel().0;
        let mut chart = ChartBuilder::on(&body)
            .margin_right(RIGHT_MARGIN)
            .y_label_area_size(Y_LABELS_W)
            .x_label_area_size(if last { X_AXIS_H } else { 0 })
            .build_cartesian_2d(
                Ticked::new(time, ((width / 110).max(2)) as usize),
                Ticked::new(count, ((plot_h / 32).max(2)) as usize).whole_numbers(),
            )
            .map_err(draw_error)?;
        draw_mesh(&mut chart, &self.time_label, false)?;

        let base = count.range().start;
        let (x_min, x_max) = (time.range().start, time.range().end);
        let plotting = chart.plotting_area();
        plotting
            .draw(&PathElement::new(
                [(x_min, base), (time.range().end, base)],
                RGBColor(120, 120, 120),
            ))
            .map_err(draw_error)?;
        for &at in &panel.markers_s {
            plotting
                .draw(&PathElement::new(
                    [(at, base), (at, count.range().end)],
                    MARKER_COLOR.stroke_width(1),
                ))
                .map_err(draw_error)?;
        }

        // One pixel of axis space, to keep every non-empty window visible.
        let one_pixel = (count.range().end - base) / f64::from(plot_h.max(1));
        let plot_w = plotting.dim_in_pixel().0.max(1) as usize;
        let windows = panel.window_count();
        let group = windows.div_ceil(plot_w).max(1);
        // Bars narrower than two pixels would round to one or two pixels at random, making
        // equal walls look unequal; each bar is widened to two (its right neighbour, drawn
        // next, covers the overlap).
        let min_width = 2.0 * (time.range().end - x_min) / plot_w as f64;
        let mut w = 0;
        while w < windows {
            // The tallest window of the group stands for the group.
            let shown = (w..(w + group).min(windows))
                .max_by_key(|&i| (panel.total_at(i), std::cmp::Reverse(i)))
                .unwrap_or(w);
            let mut x0 = w as f64 * self.bin_s;
            let mut x1 = ((w + group).min(windows) as f64 * self.bin_s).max(x0 + min_width);
            // A bar widened past the end of the axis grows to the left instead.
            if x1 > x_max {
                x0 = (x0 - (x1 - x_max)).max(x_min);
                x1 = x_max;
            }
            let mut below = 0u64;
            let mut y_below = base;
            for layer in &panel.layers {
                let c = layer.counts.get(shown).copied().unwrap_or(0);
                if c == 0 {
                    continue;
                }
                below += c;
                let y_top = count.place(below as f64).max(y_below + one_pixel);
                plotting
                    .draw(&Rectangle::new(
                        [(x0, y_below), (x1, y_top)],
                        layer.tone.color().filled(),
                    ))
                    .map_err(draw_error)?;
                y_below = y_top;
            }
            w += group;
        }

        let (peak, peak_window) = panel.peak();
        if peak > 0 {
            let x = (peak_window as f64 + 0.5) * self.bin_s;
            let fraction = (x - x_min) / (time.range().end - x_min);
            let h = if fraction < 0.08 {
                HPos::Left
            } else if fraction > 0.92 {
                HPos::Right
            } else {
                HPos::Center
            };
            let style = (FONT_FAMILY, 13)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(h, VPos::Bottom));
            let y = count.place(peak as f64).max(base + one_pixel) + 2.0 * one_pixel;
            plotting
                .draw(&Text::new(
                    format!("peak {}", number(peak as f64)),
                    (x, y),
                    style,
                ))
                .map_err(draw_error)?;
        }
        Ok(())
    }
}

/// The window width as the command line writes it (`100ms`).
fn window_width(bin_s: f64) -> SimDuration {
    SimDuration::from_nanos((bin_s * 1e9).round() as u64)
}

/// A run against the `down` server: its retries per window.
fn retries_panel(r: &RunResult) -> Result<Panel, ChartError> {
    let s = &r.summary;
    Ok(Panel {
        label: r.strategy.name().to_string(),
        note: format!(
            "peak {} at {} · {} window{} · span {} · {} retries",
            s.peak,
            seconds(s.peak_window_s),
            s.windows,
            if s.windows == 1 { "" } else { "s" },
            seconds(s.span_s),
            s.total
        ),
        layers: vec![Layer {
            name: "retries".into(),
            counts: chart_counts(&r.histogram, r.bin_s)?,
            tone: Tone::Retries,
        }],
        markers_s: Vec::new(),
    })
}

/// A histogram's dense counts for a panel, or an error naming `--bin` when the system
/// refuses them.
fn chart_counts(h: &Histogram, bin_s: f64) -> Result<Vec<u64>, ChartError> {
    h.try_counts().ok_or_else(|| ChartError::Invalid {
        field: "--bin",
        value: window_width(bin_s).to_string(),
        accepted: format!(
            "the chart needs a bar for each of {} windows ({}), which the system refused to \
             allocate; widen --bin",
            h.len(),
            human_bytes((h.len() as u64).saturating_mul(8))
        ),
    })
}

/// Window starts listed by time in a panel's caption; beyond this many they are counted.
const MARKERS_LISTED: usize = 4;

/// A run against a rate limiter: every request per window, served below refused, and the
/// limiter's window starts as markers.
fn limited_panel(r: &RunResult) -> Result<Panel, ChartError> {
    let s = &r.summary;
    let markers_s = r.window_starts_s.clone().unwrap_or_default();
    // A few window starts are listed (the one at 0 s hides in the count axis); more are counted.
    let marked = match markers_s.len() {
        0 => String::new(),
        1..=MARKERS_LISTED => {
            let at: Vec<String> = markers_s.iter().map(|&t| seconds(t)).collect();
            format!(" · windows open at {}", at.join(", "))
        }
        n => format!(" · {n} window starts marked"),
    };
    Ok(Panel {
        label: r.strategy.name().to_string(),
        note: format!(
            "{} requests: {} served, {} refused ({:.1}% wasted) · finish {}{marked}",
            s.requests,
            s.requests - s.refused,
            s.refused,
            s.wasted_pct,
            seconds(s.finish_s)
        ),
        layers: vec![
            Layer {
                name: "served".into(),
                counts: chart_counts(&r.histogram_served, r.bin_s)?,
                tone: Tone::Served,
            },
            Layer {
                name: "refused".into(),
                counts: chart_counts(&r.histogram_refused, r.bin_s)?,
                tone: Tone::Refused,
            },
        ],
        markers_s,
    })
}

impl Drawable for HistogramChart {
    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static,
    {
        let (_, height) = root.dim_in_pixel();
        let (plot_h, spare) = self.plot_height(height);
        let (title, mut rest) = root.split_vertically(self.title_height() + spare);
        self.draw_title(&title)?;
        let n = self.panels.len();
        for index in 0..n {
            let last = index + 1 == n;
            let (area, below) = if last {
                let whole = rest.clone();
                (whole, rest)
            } else {
                rest.split_vertically(CAPTION_H + plot_h)
            };
            self.draw_panel(index, &area, plot_h, last)?;
            rest = below;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(label: &str, counts: &[u64]) -> Panel {
        Panel {
            label: label.into(),
            note: String::new(),
            layers: vec![Layer {
                name: "retries".into(),
                counts: counts.to_vec(),
                tone: Tone::Retries,
            }],
            markers_s: vec![],
        }
    }

    #[test]
    fn stacked_peak_is_the_largest_total() {
        let mut p = panel("a", &[1, 5, 2]);
        p.layers.push(Layer {
            name: "refused".into(),
            counts: vec![0, 0, 7, 1],
            tone: Tone::Refused,
        });
        assert_eq!(p.window_count(), 4);
        assert_eq!(p.peak(), (9, 2));
    }

    /// Colours found, top to bottom, in pixel column `x` of a PNG.
    fn column_colors(png_bytes: &[u8], x: usize) -> Vec<(u8, u8, u8)> {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        let width = info.width as usize;
        let mut colors: Vec<(u8, u8, u8)> = Vec::new();
        for y in 0..info.height as usize {
            let i = (y * width + x) * 3;
            let c = (rgb[i], rgb[i + 1], rgb[i + 2]);
            if colors.last() != Some(&c) {
                colors.push(c);
            }
        }
        colors
    }

    #[test]
    fn stacked_layers_sit_bottom_first_and_markers_are_drawn() {
        let mut p = panel("limited", &[10, 0]);
        p.layers[0].tone = Tone::Served;
        p.layers[0].name = "served".into();
        p.layers.push(Layer {
            name: "refused".into(),
            counts: vec![30, 0],
            tone: Tone::Refused,
        });
        p.markers_s = vec![1.5];
        let chart = HistogramChart {
            title: "t".into(),
            subtitle: String::new(),
            time_label: "time (s)".into(),
            bin_s: 1.0,
            panels: vec![p],
            scale: CountScale::Shared,
        };
        let size = ChartSize {
            width: 600,
            height: 300,
        };
        let bytes = chart.render(ImageFormat::Png, Some(size)).unwrap();
        // Window 0 spans the left half of the plot; its column reads refused over served.
        let (red, green) = (Tone::Refused.rgb(), Tone::Served.rgb());
        let bar = column_colors(&bytes, Y_LABELS_W as usize + 100);
        let order: Vec<_> = bar.iter().filter(|c| **c == red || **c == green).collect();
        assert_eq!(order, [&red, &green]);
        // The marker at 1.5 s (three quarters across) is a grey vertical line in an empty window.
        let plot_w = (600 - Y_LABELS_W - RIGHT_MARGIN) as f64;
        let marker_x = Y_LABELS_W as usize + (plot_w * 1.5 / (2.0 * (1.0 + TIME_PAD))) as usize;
        let near: Vec<_> = (marker_x - 1..=marker_x + 1)
            .flat_map(|x| column_colors(&bytes, x))
            .collect();
        assert!(near.contains(&(150, 150, 150)), "{near:?}");
        // And the legend names both layers: the SVG carries the text.
        let svg = String::from_utf8(chart.render(ImageFormat::Svg, Some(size)).unwrap()).unwrap();
        assert!(svg.contains("\nserved\n") && svg.contains("\nrefused\n"));
    }

    #[test]
    fn the_last_bar_stands_whole_inside_the_plot() {
        // The last bar of the five-client full-jitter panel was cut
        // by the plot's right edge (the axis ended where the last window did, and a bar widened
        // to two pixels reached past it).
        let mut counts = vec![0; 1000];
        counts[0] = 5;
        counts[999] = 5;
        let chart = HistogramChart {
            title: "t".into(),
            subtitle: String::new(),
            time_label: "time (s)".into(),
            bin_s: 0.1,
            panels: vec![panel("a", &counts)],
            scale: CountScale::Shared,
        };
        let size = ChartSize {
            width: 600,
            height: 300,
        };
        let bytes = chart.render(ImageFormat::Png, Some(size)).unwrap();
        let blue = Tone::Retries.rgb();
        let columns: Vec<usize> = (0..600)
            .filter(|&x| column_colors(&bytes, x).contains(&blue))
            .collect();
        let plot_end = (600 - RIGHT_MARGIN) as usize;
        let last = *columns.last().unwrap();
        assert!(
            last + 3 <= plot_end,
            "last bar at column {last}, plot ends at {plot_end}"
        );
        // And it is whole: two pixels wide, like the first.
        assert!(columns.contains(&(last - 1)), "{columns:?}");
        assert_eq!(columns.len(), 4, "{columns:?}");
    }

    #[test]
    fn every_panel_gets_the_same_plot_height() {
        let chart = HistogramChart {
            title: "t".into(),
            subtitle: String::new(),
            time_label: "time (s)".into(),
            bin_s: 0.1,
            panels: vec![panel("a", &[1]), panel("b", &[2]), panel("c", &[3])],
            scale: CountScale::Shared,
        };
        let (plot_h, spare) = chart.plot_height(700);
        assert_eq!(TITLE_H + spare + X_AXIS_H + 3 * (CAPTION_H + plot_h), 700);
        assert!(chart
            .render(
                ImageFormat::Png,
                Some(ChartSize {
                    width: 400,
                    height: 250
                })
            )
            .is_err());
    }
}
