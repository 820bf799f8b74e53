//! [`Plot`] → PNG (feature `png`): drawn by the same [`draw`] as every other picture, on plotters'
//! bitmap backend, with the embedded font.

use ab_glyph::{Font, FontRef, Glyph, PxScale, ScaleFont, point};
use plotters::backend::{BitMapBackend, RGBPixel};
use plotters::prelude::IntoDrawingArea;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle,
};

use super::font::{BOLD, REGULAR};
use super::plot::Plot;
use super::{ChartError, Theme, draw};

/// Largest width or height accepted, pixels (a 3-byte pixel buffer of 8000 × 8000 is 192 MB).
pub const MAX_SIDE: u32 = 8000;

/// The plot as a PNG image of `size` pixels (8-bit RGB).
pub fn png(plot: &Plot, theme: &Theme, size: (u32, u32)) -> Result<Vec<u8>, ChartError> {
    let (w, h) = size;
    if !(1..=MAX_SIDE).contains(&w) || !(1..=MAX_SIDE).contains(&h) {
        return Err(ChartError(format!(
            "{w}x{h} pixels is not a size between 1 and {MAX_SIDE} on each side"
        )));
    }
    let unreadable = |_| ChartError("the embedded font is unreadable".into());
    let mut pixels = vec![0u8; 3 * w as usize * h as usize];
    {
        let canvas = Canvas {
            inner: BitMapBackend::<RGBPixel>::with_buffer_and_format(&mut pixels, size)
                .map_err(|e| ChartError(e.to_string()))?,
            regular: FontRef::try_from_slice(REGULAR).map_err(unreadable)?,
            bold: FontRef::try_from_slice(BOLD).map_err(unreadable)?,
        };
        let root = canvas.into_drawing_area();
        draw(&root, plot, theme)?;
        root.present()?;
    }
    encode(&pixels, size).map_err(|e| ChartError(format!("PNG encoding failed: {e}")))
}

fn encode(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(out)
}

/// plotters' bitmap backend, with text set here: plotters places each glyph without its side
/// bearing and on whole pixels, which makes small letters jump about ("co n cu rre n cy").
/// Widths are the font's advances and kerning, as plotters measures them for the layout.
struct Canvas<'a> {
    inner: BitMapBackend<'a, RGBPixel>,
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

type Error = <BitMapBackend<'static, RGBPixel> as DrawingBackend>::ErrorType;
type Drawn = Result<(), DrawingErrorKind<Error>>;

impl DrawingBackend for Canvas<'_> {
    type ErrorType = Error;

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

    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, s: &S) -> Drawn {
        self.inner.draw_line(from, to, s)
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

    /// Glyphs at their exact advance, bearing and kerning, antialiased into the picture; the
    /// anchor is the line box (ascent to descent), turned as the style asks.
    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Drawn {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let font = match style.style() {
            FontStyle::Bold => &self.bold,
            _ => &self.regular,
        };
        let scale = PxScale::from(style.size() as f32);
        let scaled = font.as_scaled(scale);
        let mut glyphs: Vec<Glyph> = Vec::with_capacity(text.len());
        let mut x = 0.0f32;
        let mut previous = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = previous {
                x += scaled.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scale, point(x, 0.0)));
            x += scaled.h_advance(id);
            previous = Some(id);
        }
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -x / 2.0,
            HPos::Right => -x,
        };
        let (ascent, descent) = (scaled.ascent(), scaled.descent());
        let baseline = match anchor.v_pos {
            VPos::Top => ascent,
            VPos::Center => (ascent + descent) / 2.0,
            VPos::Bottom => descent,
        };
        let turn = style.transform();
        let (w, h) = self.inner.get_size();
        let mut coverage: Vec<(BackendCoord, f32)> = Vec::new();
        for mut g in glyphs {
            g.position.x += dx;
            g.position.y += baseline;
            let Some(outline) = font.outline_glyph(g) else {
                continue;
            };
            let b = outline.px_bounds();
            outline.draw(|gx, gy, c| {
                let (ox, oy) = (b.min.x as i32 + gx as i32, b.min.y as i32 + gy as i32);
                let (tx, ty) = turn.transform(ox, oy);
                coverage.push(((pos.0 + tx, pos.1 + ty), c));
            });
        }
        for ((px, py), c) in coverage {
            if c > 0.0 && px >= 0 && py >= 0 && (px as u32) < w && (py as u32) < h {
                let alpha = color.alpha * f64::from(c.min(1.0));
                self.inner
                    .draw_pixel((px, py), BackendColor { alpha, ..color })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::{ChartKind, ChartRun, build, run_color};
    use crate::curves::tests::bundle;

    fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info, buf)
    }

    #[test]
    fn png_has_the_size_asked_and_the_run_color() {
        let a = bundle("kpro5");
        let runs = [ChartRun {
            label: "kpro5",
            color: run_color(0),
            bundle: &a,
        }];
        let plot = build(ChartKind::OutputTokS, &runs);
        let bytes = png(&plot, &Theme::DARK, (640, 360)).unwrap();
        let (info, rgb) = decode(&bytes);
        assert_eq!((info.width, info.height), (640, 360));
        let c = run_color(0);
        assert!(rgb.chunks(3).any(|p| p == [c.0, c.1, c.2]), "no line drawn");
        let bg = Theme::DARK.background;
        assert_eq!(&rgb[..3], [bg.0, bg.1, bg.2], "the theme's background");
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        let plot = build(ChartKind::Tradeoff, &[]);
        assert!(png(&plot, &Theme::LIGHT, (0, 10)).is_err());
        assert!(png(&plot, &Theme::LIGHT, (10, MAX_SIDE + 1)).is_err());
    }
}
