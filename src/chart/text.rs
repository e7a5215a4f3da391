//! The PNG backend: plotters' bitmap backend with text drawn by this module. plotters 0.3.7's
//! `ab_glyph` path lines glyphs up by their bounding boxes instead of on a common baseline,
//! so `0.8s` prints its point at mid-height and `y`, `p`, `j` lose their descenders; here every
//! glyph sits on the baseline, with kerning, from the embedded font. Everything else is
//! forwarded to [`BitMapBackend`] unchanged. Horizontal text only (the charts draw no rotated
//! text). No I/O.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

/// A [`BitMapBackend`] whose text is drawn baseline-aligned from `font`.
pub(crate) struct GlyphBackend<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> GlyphBackend<'a> {
    /// Draws into `rgb` (3 bytes per pixel, rows top to bottom) of `size` pixels.
    pub fn new(rgb: &'a mut [u8], size: (u32, u32), font: FontRef<'static>) -> Self {
        GlyphBackend {
            inner: BitMapBackend::with_buffer(rgb, size),
            font,
        }
    }

    /// Width of `text` and the line height (ascent + descent) at `px` pixels per em.
    fn measure(&self, text: &str, px: f32) -> (f32, f32) {
        let font = self.font.as_scaled(PxScale::from(px));
        let mut width = 0.0;
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                width += font.kern(p, id);
            }
            width += font.h_advance(id);
            previous = Some(id);
        }
        (width, font.ascent() - font.descent())
    }
}

type Drawn = Result<(), DrawingErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>>;

impl DrawingBackend for GlyphBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Drawn {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Drawn {
        self.inner.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        self.inner.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn {
        self.inner.fill_polygon(vert, style)
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Drawn {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let (w, h) = self.measure(text, style.size() as f32);
        Ok((w.ceil() as u32, h.ceil() as u32))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Drawn {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let px = style.size() as f32;
        let (width, height) = self.measure(text, px);
        let left = pos.0 as f32
            - match style.anchor().h_pos {
                HPos::Left => 0.0,
                HPos::Center => width / 2.0,
                HPos::Right => width,
            };
        let top = pos.1 as f32
            - match style.anchor().v_pos {
                VPos::Top => 0.0,
                VPos::Center => height / 2.0,
                VPos::Bottom => height,
            };
        let font = self.font.as_scaled(PxScale::from(px));
        let baseline = top + font.ascent();
        let mut x = left;
        let mut previous = None;
        let mut pixels = Vec::new();
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                x += font.kern(p, id);
            }
            let glyph = id.with_scale_and_position(px, point(x, baseline));
            if let Some(outline) = self.font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                outline.draw(|gx, gy, coverage| {
                    if coverage > 0.0 {
                        pixels.push((
                            bounds.min.x as i32 + gx as i32,
                            bounds.min.y as i32 + gy as i32,
                            coverage.min(1.0),
                        ));
                    }
                });
            }
            x += font.h_advance(id);
            previous = Some(id);
        }
        for (px, py, coverage) in pixels {
            let shade = BackendColor {
                alpha: color.alpha * f64::from(coverage),
                rgb: color.rgb,
            };
            self.inner.draw_pixel((px, py), shade)?;
        }
        Ok(())
    }
}
