//! Charts as PNG or SVG bytes: the per-window histograms of a run ([`histogram`]), the
//! time-series panels of a call-loop run ([`series`]), line charts of a sweep CSV
//! ([`lines`], read through [`table`]), a tune's Pareto frontier ([`frontier`], from the
//! tune's report), a policy report's figures against their bands ([`bands`]), the collapse
//! curves of a boundary search ([`boundary`]) and its phase diagram over two axes
//! ([`phase`]). Everything is
//! drawn from plain data structures built from the same report the CSV and JSON are written
//! from, so a chart can never disagree with the numbers beside it.
//!
//! Text is drawn with a font compiled into the binary (DejaVu Sans, `assets/fonts/`, licence
//! beside it): registered with plotters' `ab_glyph` feature for layout, and rasterised on the
//! baseline by the PNG backend in `chart/text.rs`. No fontconfig, no system fonts, the same pixels on
//! every machine. SVG output names the family `sans-serif` and leaves glyphs to the
//! viewer, as SVG does.
//!
//! This module renders to bytes and does no file I/O; writing happens in
//! [`crate::output`] so a chart is written whole or not at all.

mod axis;
pub mod bands;
pub mod boundary;
pub mod frontier;
#[cfg(test)]
mod fuzz;
pub mod histogram;
pub mod lines;
pub mod palette;
pub mod phase;
pub mod series;
pub mod table;
#[cfg(test)]
mod tests;
mod text;

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

pub use self::histogram::{CountScale, HistogramChart, Layer, Panel, Tone};
pub use self::lines::{LineChart, PlotSpec};
pub use self::series::{Measure, PanelKind, SeriesChart, TriggerBand, TriggerKind, BAND_ALPHA};
pub use self::table::DataTable;

/// The family name every chart's text uses; [`ensure_font`] registers the embedded font under it.
pub const FONT_FAMILY: &str = "sans-serif";

/// DejaVu Sans 2.37 (Bitstream Vera licence, see `assets/fonts/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers the embedded font with plotters, once per process. Rendering calls it; it is
/// public so a caller drawing its own plotters chart gets the same font.
pub fn ensure_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok =
        *REGISTERED.get_or_init(|| register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(ChartError::Draw("the embedded font cannot be read".into()))
    }
}

/// A failure to build or draw a chart.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// A column named on the command line is not in the file.
    #[error("invalid {field}: no column `{name}` in {source_name}{hint}; columns: {columns}")]
    UnknownColumn {
        /// The flag (`--x`, `--y`, `--by`, `--where`).
        field: &'static str,
        /// The name given.
        name: String,
        /// The file (or `the table`).
        source_name: String,
        /// ` (did you mean `peak_mean`?)` when a column is a likely intent, else empty.
        hint: String,
        /// The columns the file has, comma-separated (the first 40, then how many more).
        columns: String,
    },
    /// A value that had to be a number is not one.
    #[error("invalid {field}: column `{column}` must be numeric, but row {row} holds `{value}`")]
    NotNumeric {
        /// The flag that chose the column.
        field: &'static str,
        /// The column.
        column: String,
        /// 1-based data row (the header is row 0).
        row: usize,
        /// The value found.
        value: String,
    },
    /// Some other input value is not accepted.
    #[error("invalid {field}: {value}; {accepted}")]
    Invalid {
        /// The flag or key.
        field: &'static str,
        /// The offending value.
        value: String,
        /// What would be accepted.
        accepted: String,
    },
    /// The CSV file cannot be parsed.
    #[error("{source_name}: {message}")]
    Csv {
        /// The file.
        source_name: String,
        /// The parser's message, with the line where it gives one.
        message: String,
    },
    /// Drawing or encoding failed (a bug or an impossible size, not bad data).
    #[error("cannot draw the chart: {0}")]
    Draw(String),
}

impl ChartError {
    /// True when the user's input is at fault (the binary exits with 2), false for drawing
    /// failures.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ChartError::Draw(_))
    }
}

/// The image formats a chart can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// 8-bit RGB PNG.
    Png,
    /// SVG text.
    Svg,
}

impl ImageFormat {
    /// The extension of this format's files.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Svg => "svg",
        }
    }

    /// The format of an output `path` given with `flag`, by one rule for every chart flag:
    /// the extension (any case) names the format and must be one of `accepted`; a path
    /// without an extension gets `accepted[0]`. So `--png out.svg`, `--svg out.png` and
    /// `plot --out p.jpg` are refused, naming the flag, the path and the extensions accepted.
    pub fn for_output(
        flag: &'static str,
        path: &std::path::Path,
        accepted: &[ImageFormat],
    ) -> Result<ImageFormat, ChartError> {
        let Some(&default) = accepted.first() else {
            return Err(ChartError::Draw("no image format accepted".into()));
        };
        let Some(ext) = path.extension() else {
            return Ok(default);
        };
        let ext = ext.to_string_lossy();
        if let Some(&format) = accepted
            .iter()
            .find(|f| ext.eq_ignore_ascii_case(f.extension()))
        {
            return Ok(format);
        }
        let listed: Vec<String> = accepted
            .iter()
            .map(|f| format!(".{}", f.extension()))
            .collect();
        let picks = if accepted.len() > 1 {
            " (the extension picks the format)"
        } else {
            ""
        };
        let other = [ImageFormat::Png, ImageFormat::Svg]
            .into_iter()
            .find(|f| !accepted.contains(f) && ext.eq_ignore_ascii_case(f.extension()));
        let hint = match other {
            Some(f) => format!(
                "; for {} use --{}",
                f.extension().to_uppercase(),
                f.extension()
            ),
            None => String::new(),
        };
        Err(ChartError::Invalid {
            field: flag,
            value: table::plain(&path.display().to_string()),
            accepted: format!(
                "accepted extensions: {}{picks}, or none for {}{hint}",
                listed.join(", "),
                default.extension().to_uppercase()
            ),
        })
    }
}

/// A picture size in pixels, written `WIDTHxHEIGHT` (`1200x800`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChartSize {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Smallest accepted side: below this the axes and labels cannot fit.
pub const MIN_SIDE: u32 = 200;
/// Largest accepted side (a 64-megapixel RGB buffer is already 192 MiB).
pub const MAX_SIDE: u32 = 8000;

impl FromStr for ChartSize {
    type Err = ChartError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || ChartError::Invalid {
            field: "--chart-size",
            value: text.to_string(),
            accepted: format!(
                "write WIDTHxHEIGHT in pixels, each from {MIN_SIDE} to {MAX_SIDE}, e.g. 1200x800"
            ),
        };
        let (w, h) = text.trim().split_once(['x', 'X']).ok_or_else(bad)?;
        let width: u32 = w.trim().parse().map_err(|_| bad())?;
        let height: u32 = h.trim().parse().map_err(|_| bad())?;
        let side = MIN_SIDE..=MAX_SIDE;
        if !side.contains(&width) || !side.contains(&height) {
            return Err(bad());
        }
        Ok(ChartSize { width, height })
    }
}

impl fmt::Display for ChartSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// A chart that can draw itself on any plotters backend; [`render`] picks the backend.
pub(crate) trait Drawable {
    /// Draws the whole chart on `area` (already filled white).
    fn draw_on<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), ChartError>
    where
        DB::ErrorType: 'static;
}

/// Draws `chart` at `size` and returns the encoded file. Pure: same chart, same bytes.
pub(crate) fn render(
    chart: &impl Drawable,
    format: ImageFormat,
    size: ChartSize,
) -> Result<Vec<u8>, ChartError> {
    ensure_font()?;
    let dims = (size.width, size.height);
    match format {
        ImageFormat::Png => {
            let mut rgb = vec![0u8; size.width as usize * size.height as usize * 3];
            {
                let font = ab_glyph::FontRef::try_from_slice(FONT).map_err(|e| {
                    ChartError::Draw(format!("the embedded font cannot be read: {e}"))
                })?;
                let area = text::GlyphBackend::new(&mut rgb, dims, font).into_drawing_area();
                area.fill(&WHITE).map_err(draw_error)?;
                chart.draw_on(&area)?;
                area.present().map_err(draw_error)?;
            }
            encode_png(&rgb, size)
        }
        ImageFormat::Svg => {
            let mut text = String::new();
            {
                let area = SVGBackend::with_string(&mut text, dims).into_drawing_area();
                area.fill(&WHITE).map_err(draw_error)?;
                chart.draw_on(&area)?;
                area.present().map_err(draw_error)?;
            }
            Ok(text.into_bytes())
        }
    }
}

/// Draws the grid, axes and tick labels every chart shares: light grey lines at the ticks
/// (vertical ones only when `x_grid`), grey axes, 13-pixel labels and `x_desc` under the x axis.
pub(crate) fn draw_mesh<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<axis::Ticked, axis::Ticked>>,
    x_desc: &str,
    x_grid: bool,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let mut mesh = chart.configure_mesh();
    if !x_grid {
        mesh.disable_x_mesh();
    }
    mesh.bold_line_style(RGBColor(228, 228, 228))
        .light_line_style(TRANSPARENT)
        .axis_style(RGBColor(120, 120, 120))
        .label_style((FONT_FAMILY, 13))
        .axis_desc_style((FONT_FAMILY, 14))
        .x_desc(x_desc)
        .draw()
        .map_err(draw_error)
}

/// Draws a chart's title (22 pixels, black) and its subtitle lines (14 pixels, grey, split at
/// `\n`, `line_h` apart) from column `x` of `band`; returns the top of the last subtitle line
/// (where a legend beside it goes).
pub(crate) fn draw_title_lines<DB: DrawingBackend>(
    band: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    x: i32,
    line_h: i32,
) -> Result<i32, ChartError>
where
    DB::ErrorType: 'static,
{
    band.draw_text(title, &(FONT_FAMILY, 22).into_font().color(&BLACK), (x, 10))
        .map_err(draw_error)?;
    let mut line_y = 38;
    for (i, line) in subtitle.split('\n').enumerate() {
        line_y = 38 + i as i32 * line_h;
        band.draw_text(
            line,
            &(FONT_FAMILY, 14).into_font().color(&RGBColor(90, 90, 90)),
            (x, line_y),
        )
        .map_err(draw_error)?;
    }
    Ok(line_y)
}

/// Draws a panel's caption from column `x`: `label` (15 pixels, black), then `note` after it
/// (13 pixels, grey).
pub(crate) fn draw_caption<DB: DrawingBackend>(
    caption: &DrawingArea<DB, Shift>,
    label: &str,
    note: &str,
    x: i32,
) -> Result<(), ChartError>
where
    DB::ErrorType: 'static,
{
    let label_style = (FONT_FAMILY, 15).into_font().color(&BLACK);
    caption
        .draw_text(label, &label_style, (x, 4))
        .map_err(draw_error)?;
    let (label_w, _) = caption
        .estimate_text_size(label, &label_style)
        .map_err(draw_error)?;
    caption
        .draw_text(
            note,
            &(FONT_FAMILY, 13)
                .into_font()
                .color(&RGBColor(100, 100, 100)),
            (x + label_w as i32 + 12, 6),
        )
        .map_err(draw_error)?;
    Ok(())
}

/// Maps a plotters drawing error into [`ChartError::Draw`].
pub(crate) fn draw_error<E: std::error::Error + Send + Sync>(
    error: DrawingAreaErrorKind<E>,
) -> ChartError {
    ChartError::Draw(error.to_string())
}

/// Encodes an RGB buffer as PNG bytes.
pub(crate) fn encode_png(rgb: &[u8], size: ChartSize) -> Result<Vec<u8>, ChartError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, size.width, size.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let fail = |e: png::EncodingError| ChartError::Draw(format!("cannot encode the PNG: {e}"));
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(rgb).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(bytes)
}
